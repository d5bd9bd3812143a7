"""The implicit reparameterization gradient of standard gamma samples, d x / d alpha at
fixed CDF value, against a high-precision reference: -(dP/dalpha) / (dP/dx) with the
regularized incomplete gamma P of mpmath, its alpha-derivative by finite differences."""
import numpy as np
import pytest

import ember
from ember._ops.special import standard_gamma_grad_array

mpmath = pytest.importorskip("mpmath")


def _reference(alpha, x):
    with mpmath.workdps(40):
        a, x = mpmath.mpf(alpha), mpmath.mpf(x)
        h = mpmath.mpf(10) ** -12 * max(a, 1)
        cdf = lambda s: mpmath.gammainc(s, 0, x, regularized=True)  # noqa: E731
        d_alpha = (cdf(a + h) - cdf(a - h)) / (2 * h)
        density = mpmath.exp((a - 1) * mpmath.log(x) - x - mpmath.loggamma(a))
        return float(-d_alpha / density)


@pytest.mark.parametrize("alpha", [0.002, 0.1, 0.7, 1.0, 3.3, 25.0, 400.0, 20000.0])
def test_matches_the_reference(alpha):
    rng = np.random.default_rng(int(alpha * 1000) % 2 ** 32)
    x = np.maximum(rng.standard_gamma(alpha, 6), 1e-300)
    x = np.append(x, [alpha, alpha + 1.0])  # around the series / continued fraction switch
    got = standard_gamma_grad_array(np.full(x.shape, alpha), x)
    expected = [_reference(alpha, v) for v in x]
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_large_alpha_uses_an_accurate_approximation():
    """Beyond alpha = 1e6 an approximation replaces the series (mpmath's series give up
    there too); the exact series, checked against mpmath above, are the reference."""
    from ember._ops.special import _fraction_grad, _series_grad, digamma_array
    alpha = np.full(3, 2e6)
    x = alpha + np.array([-3.0, -0.5, 2.0]) * np.sqrt(alpha)
    psi = digamma_array(alpha)
    exact = np.concatenate([_series_grad(np, alpha[:2], x[:2], psi[:2]),
                            _fraction_grad(np, alpha[2:], x[2:], psi[2:])])
    np.testing.assert_allclose(standard_gamma_grad_array(alpha, x), exact, rtol=1e-6)


def test_rsample_gradient_is_the_sample_derivative():
    """Through Gamma.rsample, d sample / d concentration is the implicit derivative and
    d sample / d rate is -sample / rate."""
    ember.manual_seed(3)
    conc = ember.tensor([0.4, 2.0, 9.0], dtype=ember.float64, requires_grad=True)
    rate = ember.tensor([1.0, 0.5, 3.0], dtype=ember.float64, requires_grad=True)
    x = ember.distributions.Gamma(conc, rate).rsample()
    x.sum().backward()
    standard = (x * rate).detach().numpy()
    expected = [_reference(a, s) for a, s in zip([0.4, 2.0, 9.0], standard)]
    np.testing.assert_allclose(conc.grad.numpy(), np.array(expected) / rate.detach().numpy(),
                               rtol=1e-9)
    np.testing.assert_allclose(rate.grad.numpy(), -x.detach().numpy() / rate.detach().numpy(),
                               rtol=1e-12)


def test_second_derivative_through_the_sample_raises():
    conc = ember.tensor([2.0], requires_grad=True)
    x = ember.distributions.Gamma(conc, 1.0).rsample()
    grad, = ember.autograd.grad(x.sum(), conc, create_graph=True)
    with pytest.raises(NotImplementedError, match="derivative for '_standard_gamma_grad'"):
        grad.backward()
