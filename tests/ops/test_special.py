"""lgamma, digamma, polygamma, erfinv: values against the standard library and finite
differences, gradients (first and second order) by float64 finite differences."""
import math

import numpy as np
import pytest

import ember
from tests.helpers import check_grad, check_second_grad

X = np.array([0.01, 0.3, 0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 25.5, 170.2, 1e5, -0.5, -2.3, -7.9])


def test_lgamma_matches_math():
    expected = np.array([math.lgamma(v) for v in X])
    got = ember.lgamma(ember.tensor(X)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13)


def test_lgamma_float32_keeps_dtype():
    out = ember.lgamma(ember.tensor([0.5, 4.0]))
    assert out.dtype == ember.float32
    np.testing.assert_allclose(out.numpy(), [math.lgamma(0.5), math.log(6.0)], rtol=1e-6)


def test_lgamma_poles_and_infinities():
    out = ember.lgamma(ember.tensor([0.0, -1.0, -3.0, math.inf, -math.inf])).numpy()
    assert np.all(out == math.inf)
    assert ember.lgamma(ember.tensor([1.0, 2.0])).numpy().tolist() == [0.0, 0.0]


def _digamma_reference(v, h=1e-5):
    return (math.lgamma(v + h) - math.lgamma(v - h)) / (2 * h)


def test_digamma_values():
    got = ember.digamma(ember.tensor(X[:-3])).numpy()
    np.testing.assert_allclose(got[3], -0.5772156649015329, rtol=1e-14)  # -Euler's gamma
    expected = [_digamma_reference(v) for v in X[:-3]]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    # reflection: psi(1 - x) - psi(x) = pi cot(pi x)
    neg = np.array([-0.5, -2.3, -7.9])
    lhs = ember.digamma(ember.tensor(1 - neg)) - ember.digamma(ember.tensor(neg))
    np.testing.assert_allclose(lhs.numpy(), np.pi / np.tan(np.pi * neg), rtol=1e-12,
                               atol=1e-13)


def test_digamma_special_points():
    out = ember.digamma(ember.tensor([0.0, -0.0, -1.0, math.inf])).numpy()
    assert out[0] == -math.inf and out[1] == math.inf and math.isnan(out[2])
    assert out[3] == math.inf


@pytest.mark.parametrize("n", [1, 2, 3])
def test_polygamma_is_the_derivative_of_the_previous_order(n):
    x = np.array([0.2, 0.9, 3.3, 12.0, 40.0, -0.4, -3.6])
    h = 1e-5
    lower = (ember.polygamma(n - 1, ember.tensor(x + h)) -
             ember.polygamma(n - 1, ember.tensor(x - h))).numpy() / (2 * h)
    np.testing.assert_allclose(ember.polygamma(n, ember.tensor(x)).numpy(), lower, rtol=1e-6)


def test_trigamma_closed_forms():
    out = ember.polygamma(1, ember.tensor([1.0, 0.5], dtype=ember.float64)).numpy()
    np.testing.assert_allclose(out, [math.pi ** 2 / 6, math.pi ** 2 / 2], rtol=1e-14)


def test_polygamma_errors_and_methods():
    with pytest.raises(RuntimeError, match="does not support negative n"):
        ember.polygamma(-1, ember.ones(2))
    x = ember.tensor([0.7, 2.0])
    np.testing.assert_array_equal(x.polygamma(0).numpy(), ember.digamma(x).numpy())


def test_erfinv_inverts_erf():
    y = np.linspace(-0.999999, 0.999999, 201)
    x = ember.erfinv(ember.tensor(y)).numpy()
    np.testing.assert_allclose([math.erf(v) for v in x], y, rtol=1e-14, atol=1e-15)
    out = ember.erfinv(ember.tensor([1.0, -1.0, 1.5, 0.0])).numpy()
    assert out[0] == math.inf and out[1] == -math.inf and math.isnan(out[2]) and out[3] == 0


@pytest.mark.parametrize("fn", [ember.lgamma, ember.digamma, lambda x: ember.polygamma(1, x),
                                lambda x: ember.polygamma(2, x)],
                         ids=["lgamma", "digamma", "trigamma", "polygamma2"])
def test_gamma_function_gradients(fn):
    x = np.array([0.4, 1.3, 2.5, 7.0, -0.6])
    check_grad(fn, x)
    check_second_grad(fn, x)


def test_erfinv_gradients():
    y = np.array([-0.9, -0.2, 0.0, 0.4, 0.95])
    check_grad(ember.erfinv, y)
    check_second_grad(ember.erfinv, y)


def test_inplace_forms_and_integer_inputs():
    x = ember.tensor([0.5, 3.0])
    x.lgamma_()
    np.testing.assert_allclose(x.numpy(), [math.lgamma(0.5), math.log(2.0)], rtol=1e-6)
    out = ember.digamma(ember.tensor([1, 2]))
    assert out.dtype == ember.get_default_dtype()


def test_igamma_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    a = np.array([0.01, 0.5, 1.0, 2.5, 30.0, 400.0, 3.0])
    x = np.array([0.02, 2.0, 0.3, 2.5, 28.0, 430.0, 40.0])
    expected = [float(mpmath.gammainc(mpmath.mpf(s), 0, mpmath.mpf(v), regularized=True))
                for s, v in zip(a, x)]
    got = ember.igamma(ember.tensor(a), ember.tensor(x)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-300)


def test_igamma_gradient_in_x():
    a = ember.tensor([0.7, 2.0, 9.0], dtype=ember.float64)
    check_grad(lambda x: ember.igamma(a, x), [0.4, 2.5, 11.0])
    with pytest.raises(NotImplementedError, match="igamma: input"):
        ember.igamma(ember.tensor([2.0], requires_grad=True), ember.tensor([1.0])).backward()
