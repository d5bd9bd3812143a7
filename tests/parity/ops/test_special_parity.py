"""lgamma, digamma, polygamma and erfinv against PyTorch: values, first and second
gradients, float32 and float64, integer inputs, special points and errors."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]


def _points(dtype, low=-6.0, high=12.0, shape=(5, 7), seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, shape)
    x[np.abs(x - np.round(x)) < 0.05] += 0.1  # keep away from the poles
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_gamma_functions_values_and_grads(name, dtype):
    compare(lambda lib, x: getattr(lib, name)(x), _points(dtype), rtol=1e-4 if dtype == np.float32
            else 1e-9)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma_values_and_grads(n, dtype):
    x = _points(dtype, low=0.05, high=20.0)
    compare(lambda lib, x: lib.polygamma(n, x), x, rtol=1e-4 if dtype == np.float32 else 1e-9)
    compare(lambda lib, x: x.polygamma(n), x, rtol=1e-4 if dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("n", [1, 2])
def test_polygamma_negative_arguments(n):
    compare(lambda lib, x: lib.polygamma(n, x), _points(np.float64, low=-5.0, high=-0.1),
            rtol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES)
def test_erfinv_values_and_grads(dtype):
    x = np.random.default_rng(1).uniform(-0.999, 0.999, (4, 6)).astype(dtype)
    compare(lambda lib, x: lib.erfinv(x), x, rtol=1e-4 if dtype == np.float32 else 1e-9)


@pytest.mark.parametrize("name", ["lgamma", "digamma", "erfinv"])
def test_noncontiguous(name):
    x = np.random.default_rng(2).uniform(0.1, 0.9, (3, 4))
    compare(lambda lib, x: getattr(lib, name)(x), x, noncontiguous=True)


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_second_derivatives(name):
    x = _points(np.float64, low=0.2, high=9.0, shape=(6,))
    grads = []
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        g, = lib.autograd.grad(getattr(lib, name)(t).sum(), t, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), t)
        grads.append(gg.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-8)


def test_special_points():
    cases = {"lgamma": [0.0, -1.0, -2.5, 0.5, 1.0, 2.0, np.inf, -np.inf, np.nan, 1e30],
             "digamma": [0.0, -0.0, -1.0, -2.5, 0.5, 1.0, np.inf, np.nan, 1e30],
             "erfinv": [1.0, -1.0, 0.0, 2.0, -1.5, np.nan]}
    for name, values in cases.items():
        x = np.array(values)
        expected = getattr(torch, name)(torch.tensor(x)).numpy()
        got = getattr(ember, name)(ember.tensor(x)).numpy()
        np.testing.assert_allclose(got, expected, rtol=1e-12, err_msg=name)


def test_integer_inputs_become_default_float():
    for name in ["lgamma", "digamma", "erfinv"]:
        compare(lambda lib, x: getattr(lib, name)(x), np.array([0, 1, 3]), grad=False)
    compare(lambda lib, x: lib.polygamma(1, x), np.array([1, 3]), grad=False)


def test_inplace_forms():
    x = _points(np.float64, low=0.5, high=5.0, shape=(4,))
    for name in ["lgamma_", "digamma_"]:
        t, e = torch.tensor(x), ember.tensor(x)
        getattr(t, name)()
        getattr(e, name)()
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)
    t, e = torch.tensor(x), ember.tensor(x)
    t.polygamma_(2)
    e.polygamma_(2)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


def test_grad_fn_names():
    for name in ["lgamma", "digamma", "erfinv"]:
        x, t = ember.tensor([0.5], requires_grad=True), torch.tensor([0.5], requires_grad=True)
        assert type(getattr(ember, name)(x).grad_fn).__name__ == \
            type(getattr(torch, name)(t).grad_fn).__name__
    assert type(ember.polygamma(1, ember.tensor([0.5], requires_grad=True)).grad_fn).__name__ \
        == "PolygammaBackward0"


def test_negative_order_error():
    assert error_of(lambda: ember.polygamma(-1, ember.ones(2))) == \
        error_of(lambda: torch.polygamma(-1, torch.ones(2)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_igamma_values_and_grad_in_x(dtype):
    rng = np.random.default_rng(3)
    a = np.exp(rng.uniform(-3, 4, (4, 5))).astype(dtype)
    x = (a * np.exp(rng.normal(0, 0.7, (3, 4, 5)))).astype(dtype)
    compare(lambda lib, a, x: lib.igamma(a.detach(), x), a, x,
            rtol=1e-4 if dtype == np.float32 else 1e-8)
    compare(lambda lib, a, x: a.detach().igamma(x), a, x[0],
            rtol=1e-4 if dtype == np.float32 else 1e-8)


def test_igamma_special_points_and_errors():
    a = np.array([0.0, 1.0, -1.0, 2.0, 3.0, 0.5])
    x = np.array([1.0, 0.0, 1.0, np.inf, 1e-300, -1.0])
    np.testing.assert_allclose(ember.igamma(ember.tensor(a), ember.tensor(x)).numpy(),
                               torch.igamma(torch.tensor(a), torch.tensor(x)).numpy())

    def backward_in_a(lib):
        a = lib.tensor([2.0], requires_grad=True)
        lib.igamma(a, lib.tensor([1.0])).backward()
    assert error_of(lambda: backward_in_a(ember)) == error_of(lambda: backward_in_a(torch))
