"""Samples: shapes, dtypes, support, reproducibility after manual_seed, moments (fixed seed,
generous tolerances), and reparameterized gradients against their closed forms."""
import numpy as np
import pytest

import ember
from ember.distributions import (Bernoulli, Beta, Categorical, Dirichlet, Gamma,
                                 MultivariateNormal, Normal, Uniform)

N = 40000


def _t(values, dtype=ember.float64, grad=False):
    return ember.tensor(values, dtype=dtype, requires_grad=grad)


def _kinds(dtype):
    cov = _t([[2.0, 0.6], [0.6, 1.0]], dtype)
    return {
        "normal": Normal(_t([0.5, -2.0], dtype), _t([1.0, 3.0], dtype)),
        "uniform": Uniform(_t([0.0, -1.0], dtype), _t([1.0, 4.0], dtype)),
        "bernoulli": Bernoulli(probs=_t([0.2, 0.7], dtype)),
        "categorical": Categorical(probs=_t([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]], dtype)),
        "gamma": Gamma(_t([0.3, 4.0], dtype), _t([2.0, 0.5], dtype)),
        "beta": Beta(_t([0.5, 3.0], dtype), _t([2.0, 0.7], dtype)),
        "dirichlet": Dirichlet(_t([0.4, 1.0, 3.0], dtype)),
        "mvn": MultivariateNormal(_t([1.0, -1.0], dtype), cov),
    }


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("name", list(_kinds(ember.float64)))
def test_shape_dtype_support(name, dtype):
    d = _kinds(dtype)[name]
    x = d.sample((3, 2))
    assert x.shape == d._extended_shape((3, 2))
    expected_dtype = ember.int64 if name == "categorical" else dtype
    assert x.dtype == expected_dtype
    assert bool(d.support.check(x).all())
    assert not x.requires_grad
    assert d.sample().shape == d.batch_shape + d.event_shape


@pytest.mark.parametrize("name", list(_kinds(ember.float64)))
def test_reproducible_after_manual_seed(name):
    d = _kinds(ember.float64)[name]
    ember.manual_seed(7)
    a = d.sample((5,))
    ember.manual_seed(7)
    b = d.sample((5,))
    np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("name", ["normal", "uniform", "bernoulli", "gamma", "beta",
                                  "dirichlet", "mvn"])
def test_moments(name):
    ember.manual_seed(0)
    d = _kinds(ember.float64)[name]
    x = d.sample((N,)).numpy()
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    np.testing.assert_allclose(x.mean(0), mean, atol=4 * np.sqrt(var.max() / N) + 1e-3)
    np.testing.assert_allclose(x.var(0), var, rtol=0.08)


def test_categorical_frequencies_and_zero_probability():
    ember.manual_seed(1)
    d = _kinds(ember.float64)["categorical"]
    x = d.sample((N,)).numpy()
    freq = np.stack([(x == k).mean(0) for k in range(3)], -1)
    np.testing.assert_allclose(freq, d.probs.numpy(), atol=0.01)
    assert not (x[:, 1] == 1).any()  # probability 0 is never drawn


def test_mvn_sample_covariance():
    ember.manual_seed(2)
    d = _kinds(ember.float64)["mvn"]
    x = d.sample((N,)).numpy()
    np.testing.assert_allclose(np.cov(x.T), d.covariance_matrix.numpy(), atol=0.06)


def test_normal_rsample_gradients_are_closed_forms():
    loc, scale = _t([0.5, -1.0], grad=True), _t([2.0, 0.3], grad=True)
    ember.manual_seed(3)
    x = Normal(loc, scale).rsample((10,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [10.0, 10.0])  # d x / d loc = 1
    eps = (x.detach().numpy() - [0.5, -1.0]) / [2.0, 0.3]
    np.testing.assert_allclose(scale.grad.numpy(), eps.sum(0), rtol=1e-12)


def test_uniform_rsample_gradients():
    low, high = _t([0.0], grad=True), _t([2.0], grad=True)
    ember.manual_seed(4)
    x = Uniform(low, high).rsample((100,))
    x.sum().backward()
    u = x.detach().numpy() / 2.0
    np.testing.assert_allclose(high.grad.numpy(), u.sum(0), rtol=1e-12)
    np.testing.assert_allclose(low.grad.numpy(), (1 - u).sum(0), rtol=1e-12)


def test_mvn_rsample_gradients():
    loc = _t([1.0, 2.0], grad=True)
    tril = _t([[1.5, 0.0], [0.3, 0.8]], grad=True)
    ember.manual_seed(5)
    x = MultivariateNormal(loc, scale_tril=tril).rsample((50,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [50.0, 50.0])
    eps = np.linalg.solve(tril.detach().numpy(), (x.detach().numpy() - [1.0, 2.0]).T).T
    # x = loc + L eps: d sum(x) / d L_ij = sum of eps_j (the upper triangle too, as
    # PyTorch's matmul gives it)
    np.testing.assert_allclose(tril.grad.numpy(), np.ones((2, 1)) * eps.sum(0), rtol=1e-10)


def test_mvn_rsample_reaches_the_covariance():
    cov = _t([[2.0, 0.5], [0.5, 1.0]], grad=True)
    ember.manual_seed(6)
    x = MultivariateNormal(_t([0.0, 0.0]), covariance_matrix=cov).rsample((N,))
    # E[x x^T] = cov: the gradient of the mean of x_0^2 w.r.t. cov is about e_00
    (x[:, 0] ** 2).mean().backward()
    np.testing.assert_allclose(cov.grad.numpy(), [[1.0, 0.0], [0.0, 0.0]], atol=0.03)


@pytest.mark.parametrize("make,mean_grads", [
    # d E[x] / d parameters: Gamma(a, b): E = a / b; Beta(a, b): E = a / (a + b)
    (lambda a, b: Gamma(a, b), lambda a, b: (1 / b, -a / b ** 2)),
    (lambda a, b: Beta(a, b), lambda a, b: (b / (a + b) ** 2, -a / (a + b) ** 2)),
])
def test_implicit_reparameterization_has_unbiased_gradients(make, mean_grads):
    a0, b0 = np.array([0.4, 2.5]), np.array([1.5, 0.8])
    a, b = _t(a0, grad=True), _t(b0, grad=True)
    ember.manual_seed(8)
    make(a, b).rsample((N,)).mean(0).sum().backward()
    ga, gb = mean_grads(a0, b0)
    np.testing.assert_allclose(a.grad.numpy(), ga, rtol=0.05)
    np.testing.assert_allclose(b.grad.numpy(), gb, rtol=0.05)


def test_dirichlet_rsample_gradient_of_the_mean():
    conc0 = np.array([0.5, 1.0, 2.5])
    conc = _t(conc0, grad=True)
    ember.manual_seed(9)
    Dirichlet(conc).rsample((N,))[:, 0].mean().backward()
    total = conc0.sum()
    expected = -conc0[0] / total ** 2 + np.array([1.0, 0.0, 0.0]) / total
    np.testing.assert_allclose(conc.grad.numpy(), expected, atol=0.01)


def test_sample_records_no_graph_and_rsample_flags():
    loc = _t([0.0], grad=True)
    assert not Normal(loc, 1.0).sample().requires_grad
    assert Normal(loc, 1.0).rsample().requires_grad
    for d in _kinds(ember.float64).values():
        if not d.has_rsample:
            with pytest.raises(NotImplementedError):
                d.rsample()
