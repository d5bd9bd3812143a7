"""TransformedDistribution and the families of part 1: densities and CDFs against SciPy's,
moments of 20000 draws, pathwise gradients of rsample, KL against Monte Carlo, shapes and
validation."""
import math

import numpy as np
import pytest
from scipy import stats

import ember
from ember.distributions import (Cauchy, Exponential, Gamma, Gumbel, HalfCauchy, HalfNormal,
                                 InverseGamma, Kumaraswamy, Laplace, LogisticNormal, LogNormal,
                                 Normal, Pareto, RelaxedBernoulli, RelaxedOneHotCategorical,
                                 TransformedDistribution, Uniform, Weibull, constraints,
                                 kl_divergence)
from ember.distributions import transforms as T
from tests.helpers import check_grad

N = 20000


def _t(values, grad=False):
    return ember.tensor(values, dtype=ember.float64, requires_grad=grad)


def _kumaraswamy_logpdf(x, a, b):
    return math.log(a * b) + (a - 1) * np.log(x) + (b - 1) * np.log1p(-x ** a)


# name -> (distribution, scipy frozen distribution or None, points)
def _cases():
    return {
        "exponential": (Exponential(_t(2.0)), stats.expon(scale=0.5), [0.1, 1.0, 3.0]),
        "laplace": (Laplace(_t(0.5), _t(2.0)), stats.laplace(0.5, 2.0), [-1.0, 0.5, 3.0]),
        "cauchy": (Cauchy(_t(0.5), _t(2.0)), stats.cauchy(0.5, 2.0), [-1.0, 0.5, 3.0]),
        "log_normal": (LogNormal(_t(0.3), _t(0.6)), stats.lognorm(0.6, scale=math.exp(0.3)),
                       [0.5, 1.3, 4.0]),
        "gumbel": (Gumbel(_t(0.5), _t(2.0)), stats.gumbel_r(0.5, 2.0), [-1.0, 0.5, 3.0]),
        "weibull": (Weibull(_t(1.5), _t(2.5)), stats.weibull_min(2.5, scale=1.5),
                    [0.2, 1.0, 2.5]),
        "half_normal": (HalfNormal(_t(2.0)), stats.halfnorm(scale=2.0), [0.1, 1.0, 3.0]),
        "half_cauchy": (HalfCauchy(_t(2.0)), stats.halfcauchy(scale=2.0), [0.1, 1.0, 3.0]),
        "pareto": (Pareto(_t(1.5), _t(3.0)), stats.pareto(3.0, scale=1.5), [1.6, 2.0, 5.0]),
        "inverse_gamma": (InverseGamma(_t(3.0), _t(2.0)), stats.invgamma(3.0, scale=2.0),
                          [0.3, 1.0, 2.5]),
        "kumaraswamy": (Kumaraswamy(_t(2.0), _t(3.0)), None, [0.1, 0.5, 0.9]),
    }


@pytest.mark.parametrize("name", list(_cases()))
def test_density_cdf_and_moments_against_scipy(name):
    d, ref, points = _cases()[name]
    x = np.array(points)
    if ref is None:
        np.testing.assert_allclose(d.log_prob(_t(x)).numpy(), _kumaraswamy_logpdf(x, 2.0, 3.0),
                                   rtol=1e-12)
        # E[X] = b B(1 + 1/a, b)
        mean = 3.0 * math.exp(math.lgamma(1.5) + math.lgamma(3.0) - math.lgamma(4.5))
        assert d.mean.item() == pytest.approx(mean, rel=1e-12)
        return
    np.testing.assert_allclose(d.log_prob(_t(x)).numpy(), ref.logpdf(x), rtol=1e-10)
    if name != "inverse_gamma":  # Gamma's cdf is w.r.t. the base; inverse gamma has none
        np.testing.assert_allclose(d.cdf(_t(x)).numpy(), ref.cdf(x), rtol=1e-10)
        q = np.array([0.1, 0.5, 0.8])
        np.testing.assert_allclose(d.icdf(_t(q)).numpy(), ref.ppf(q), rtol=1e-9)
    np.testing.assert_allclose(d.entropy().numpy(), ref.entropy(), rtol=1e-10)
    if np.isfinite(ref.mean()):
        assert d.mean.item() == pytest.approx(ref.mean(), rel=1e-10)
        assert d.variance.item() == pytest.approx(ref.var(), rel=1e-10)


@pytest.mark.parametrize("name", list(_cases()))
def test_moments_of_samples(name):
    d, ref, _ = _cases()[name]
    ember.manual_seed(0)
    x = d.sample((N,))
    assert x.shape == (N,) and not x.requires_grad and x.dtype == ember.float64
    assert bool(d.support.check(x).all())
    x = x.numpy()
    if name in ("cauchy", "half_cauchy"):  # no moments: compare quartiles
        np.testing.assert_allclose(np.quantile(x, [0.25, 0.5, 0.75]),
                                   ref.ppf([0.25, 0.5, 0.75]), rtol=0.06, atol=0.05)
        return
    mean, std = d.mean.item(), d.stddev.item()
    assert abs(x.mean() - mean) < 5 * std / math.sqrt(N)
    assert x.std() == pytest.approx(std, rel=0.06)


@pytest.mark.parametrize("make,loc_name,scale_name", [
    (lambda a, b: Laplace(a, b), 0, 1), (lambda a, b: Cauchy(a, b), 0, 1),
    (lambda a, b: Gumbel(a, b), 0, 1), (lambda a, b: Normal(a, b), 0, 1),
    (lambda a, b: Weibull(b, a.exp()), None, 1), (lambda a, b: Pareto(b, a.exp()), None, 1),
    (lambda a, b: HalfNormal(b), None, 1), (lambda a, b: HalfCauchy(b), None, 1),
])
def test_rsample_pathwise_gradients(make, loc_name, scale_name):
    """For location-scale families x = loc + scale * z: dx/dloc = 1, dx/dscale = (x-loc)/scale
    (here the scale parameter multiplies the whole sample)."""
    loc, scale = _t([0.3, -0.5], grad=True), _t([1.5, 0.7], grad=True)
    ember.manual_seed(1)
    x = make(loc, scale).rsample((50,))
    assert x.requires_grad
    x.sum().backward()
    base = x.detach() - (loc.detach() if loc_name is not None else 0)
    np.testing.assert_allclose(scale.grad.numpy(), (base / scale.detach()).sum(0).numpy(),
                               rtol=1e-9)
    if loc_name is not None:
        np.testing.assert_allclose(loc.grad.numpy(), [50.0, 50.0])


def test_rsample_gradients_of_rate_and_shape_parameters():
    rate = _t([0.5, 2.0], grad=True)
    ember.manual_seed(2)
    x = Exponential(rate).rsample((30,))
    x.sum().backward()
    np.testing.assert_allclose(rate.grad.numpy(), (-x.detach() / rate.detach()).sum(0).numpy())
    # x = (1 - U^(1/b))^(1/a): its gradient exists, finite, for both shapes
    for make in (lambda a, b: Kumaraswamy(a, b), lambda a, b: InverseGamma(a, b),
                 lambda a, b: LogNormal(a, b), lambda a, b: LogisticNormal(a, b)):
        a, b = _t([0.8, 2.0], grad=True), _t([1.5, 3.0], grad=True)
        make(a, b).rsample((20,)).sum().backward()
        assert np.isfinite(a.grad.numpy()).all() and np.isfinite(b.grad.numpy()).all()
        assert np.abs(b.grad.numpy()).sum() > 0


def test_relaxed_distributions_keep_the_discrete_probabilities():
    """P(RelaxedBernoulli > 1/2) = probs and the argmax of a RelaxedOneHotCategorical is
    Categorical(probs), whatever the temperature."""
    ember.manual_seed(3)
    probs = _t([0.2, 0.7])
    x = RelaxedBernoulli(_t(0.5), probs=probs).sample((N,))
    assert bool(((x > 0) & (x < 1)).all())
    np.testing.assert_allclose((x.numpy() > 0.5).mean(0), probs.numpy(), atol=0.015)
    p = _t([0.1, 0.3, 0.6])
    y = RelaxedOneHotCategorical(_t(2.0), probs=p).sample((N,))
    np.testing.assert_allclose(y.sum(-1).numpy(), np.ones(N), rtol=1e-12)
    counts = np.bincount(y.numpy().argmax(-1), minlength=3) / N
    np.testing.assert_allclose(counts, p.numpy(), atol=0.015)
    temperature, logits = _t(0.7, grad=True), _t([0.3, -0.2, 1.0], grad=True)
    RelaxedOneHotCategorical(temperature, logits=logits).rsample((5,)).pow(2).sum().backward()
    assert temperature.grad is not None and logits.grad is not None


def test_relaxed_log_probs_by_change_of_variables():
    """RelaxedBernoulli's density: the logistic density of the logit at temperature t."""
    t, p, x = 0.5, 0.3, np.array([0.2, 0.6])
    logit = np.log(x / (1 - x))
    logits = math.log(p / (1 - p))
    z = logits - t * logit
    expected = math.log(t) + z - 2 * np.log1p(np.exp(z)) - np.log(x * (1 - x))
    got = RelaxedBernoulli(_t(t), probs=_t(p)).log_prob(_t(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_logistic_normal_inverts_to_its_normal():
    ember.manual_seed(4)
    loc, scale = _t([0.5, -1.0]), _t([1.0, 0.3])
    d = LogisticNormal(loc, scale)
    y = d.sample((N,))
    assert y.shape == (N, 3) and bool(d.support.check(y).all())
    x = T.StickBreakingTransform().inv(y).numpy()
    np.testing.assert_allclose(x.mean(0), loc.numpy(), atol=0.03)
    np.testing.assert_allclose(x.std(0), scale.numpy(), rtol=0.03)


def test_transformed_distribution_change_of_variables():
    base = Normal(_t([0.0, 1.0]), _t([1.0, 2.0]))
    d = TransformedDistribution(base, [T.AffineTransform(1.0, -3.0), T.ExpTransform()])
    y = _t([0.5, 2.0])
    x = (np.log([0.5, 2.0]) - 1.0) / -3.0
    expected = stats.norm([0.0, 1.0], [1.0, 2.0]).logpdf(x) - np.log(3.0) - np.log([0.5, 2.0])
    np.testing.assert_allclose(d.log_prob(y).numpy(), expected, rtol=1e-12)
    # a decreasing map flips the CDF
    expected_cdf = 1 - stats.norm([0.0, 1.0], [1.0, 2.0]).cdf(x)
    np.testing.assert_allclose(d.cdf(y).numpy(), expected_cdf, rtol=1e-12)
    np.testing.assert_allclose(d.icdf(d.cdf(y)).numpy(), y.numpy(), rtol=1e-10)
    check_grad(lambda m, s: TransformedDistribution(Normal(m, s), [T.ExpTransform()])
               .log_prob(_t([0.5, 2.0])), [0.1, 0.2], [1.0, 0.5])


def test_transformed_shapes_and_errors():
    d = TransformedDistribution(Normal(_t(np.zeros((2, 3))), 1.0), T.StickBreakingTransform())
    assert d.batch_shape == (2,) and d.event_shape == (4,)
    assert d.expand((5, 2)).sample().shape == (5, 2, 4)
    assert d.base_dist.event_shape == (3,)
    assert TransformedDistribution(Normal(0.0, 1.0), []).support is constraints.real
    with pytest.raises(ValueError, match="transforms must be a Transform or a list"):
        TransformedDistribution(Normal(0.0, 1.0), [1])
    with pytest.raises(ValueError, match="base_distribution needs to have shape"):
        TransformedDistribution(Normal(0.0, 1.0), T.StickBreakingTransform())
    with pytest.raises(ValueError, match="Expected parameter scale"):
        Weibull(_t([-1.0]), 1.0)
    with pytest.raises(ValueError, match="to be within the support"):
        Pareto(_t(2.0), _t(1.0)).log_prob(_t(1.0))
    assert Exponential(_t([-1.0]), validate_args=False).mean.item() == -1.0


@pytest.mark.parametrize("make_p,make_q", [
    (lambda: Exponential(_t(1.5)), lambda: Gamma(_t(2.0), _t(1.0))),
    (lambda: Laplace(_t(0.3), _t(1.2)), lambda: Normal(_t(-0.5), _t(1.5))),
    (lambda: Gumbel(_t(0.3), _t(1.2)), lambda: Normal(_t(0.5), _t(2.0))),
    (lambda: Normal(_t(0.3), _t(0.8)), lambda: Laplace(_t(-0.2), _t(1.0))),
    (lambda: Pareto(_t(1.0), _t(4.0)), lambda: Exponential(_t(0.8))),
    (lambda: Gumbel(_t(0.3), _t(1.2)), lambda: Gumbel(_t(-0.5), _t(0.8))),
    (lambda: Cauchy(_t(0.3), _t(1.2)), lambda: Cauchy(_t(-0.5), _t(0.8))),
    (lambda: LogNormal(_t(0.3), _t(0.5)), lambda: LogNormal(_t(0.0), _t(0.8))),
    (lambda: Uniform(_t(0.5), _t(2.0)), lambda: Gumbel(_t(1.0), _t(1.5))),
])
def test_kl_against_monte_carlo(make_p, make_q):
    p, q = make_p(), make_q()
    ember.manual_seed(0)
    x = p.sample((N,))
    estimate = (p.log_prob(x) - q.log_prob(x)).mean(0).item()
    assert kl_divergence(p, q).item() == pytest.approx(estimate, abs=0.05, rel=0.05)
