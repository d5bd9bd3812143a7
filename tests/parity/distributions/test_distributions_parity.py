"""ember.distributions against torch.distributions: log_prob, cdf/icdf, entropy, moments
and their gradients w.r.t. the parameters (float32 and float64, broadcast batch shapes,
non-contiguous parameters), shapes of expand, reprs and validation errors."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]
R = np.random.default_rng(0)


def _positive(shape, dtype, low=0.5, high=3.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _real(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _same_error(make):
    """``make(lib)`` raises the same exception type and message in both libraries (the
    libraries' names of Size aside)."""
    torch_error = error_of(lambda: make(torch))
    ember_error = error_of(lambda: make(ember))
    assert torch_error is not None
    assert ember_error == (torch_error[0], torch_error[1].replace("torch.Size", "ember.Size"))


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)


# ---- Normal -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_normal(dtype):
    loc, scale = _real((3, 1), dtype), _positive((4,), dtype)
    value = _real((2, 3, 4), dtype, seed=1)
    u = np.random.default_rng(2).uniform(0.05, 0.95, (3, 4)).astype(dtype)

    def fn(lib, loc, scale, value, u):
        d = lib.distributions.Normal(loc, scale)
        return (d.log_prob(value), d.cdf(value), d.icdf(u), d.entropy(), d.mean, d.variance,
                d.stddev, d.mode)
    compare(fn, loc, scale, value, u, **_tol(dtype))


def test_normal_noncontiguous_and_numbers():
    compare(lambda lib, loc, scale: lib.distributions.Normal(loc, scale).entropy()
            + lib.distributions.Normal(loc, scale).log_prob(lib.ones(3, 3)),
            _real((3, 3), np.float64), _positive((3, 3), np.float64), noncontiguous=True)
    compare(lambda lib, v: lib.distributions.Normal(0.5, 2.0).log_prob(v),
            _real((4,), np.float64))


# ---- Uniform ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform(dtype):
    low = _real((2, 3), dtype)
    high = low + _positive((3,), dtype)
    frac = np.random.default_rng(3).uniform(0.01, 0.99, (4, 2, 3)).astype(dtype)

    def fn(lib, low, high, frac):
        d = lib.distributions.Uniform(low, high)
        value = (low + frac * (high - low)).detach()
        return (d.log_prob(value), d.cdf(value), d.icdf(frac[0]), d.entropy(), d.mean,
                d.variance, d.stddev)
    compare(fn, low, high, frac, **_tol(dtype))


def test_uniform_log_prob_outside_support_without_validation():
    def fn(lib, low, high):
        d = lib.distributions.Uniform(low, high, validate_args=False)
        return d.log_prob(lib.tensor([-5.0, 0.5, 5.0], dtype=lib.float64)), d.mode
    compare(fn, np.zeros(3), np.ones(3), grad=False)


# ---- Bernoulli ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_bernoulli(param, dtype):
    p = (np.random.default_rng(4).uniform(0.05, 0.95, (3, 4)) if param == "probs"
         else _real((3, 4), np.float64)).astype(dtype)
    value = (np.random.default_rng(5).uniform(size=(2, 3, 4)) < 0.5).astype(dtype)

    def fn(lib, p, value):
        d = lib.distributions.Bernoulli(**{param: p})
        return (d.log_prob(value), d.entropy(), d.mean, d.variance, d.probs, d.logits,
                d.mode)
    compare(fn, p, value, **_tol(dtype))


def test_bernoulli_edges():
    def fn(lib, p):
        d = lib.distributions.Bernoulli(probs=p)
        return d.log_prob(lib.tensor([1.0, 0.0, 1.0, 0.0], dtype=lib.float64)), d.entropy(), \
            d.mode, d.enumerate_support()
    compare(fn, np.array([0.0, 1.0, 0.5, 0.3]))


# ---- Categorical --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_categorical(param, dtype):
    p = (_positive((2, 3, 5), dtype) if param == "probs" else _real((2, 3, 5), dtype))
    value = np.random.default_rng(6).integers(0, 5, (4, 1, 3))

    def fn(lib, p, value):
        d = lib.distributions.Categorical(**{param: p})
        return (d.log_prob(value), d.entropy(), d.probs, d.logits, d.mode, d.mean,
                d.variance, d.enumerate_support(), d.enumerate_support(expand=False))
    compare(fn, p, value, **_tol(dtype))


def test_categorical_zero_probability():
    def fn(lib, p):
        d = lib.distributions.Categorical(probs=p)
        return d.entropy(), d.log_prob(lib.tensor([0, 1]))
    compare(fn, np.array([[0.0, 0.3, 0.7], [0.5, 0.5, 0.0]]))


# ---- Gamma, Beta, Dirichlet ---------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_gamma(dtype):
    conc, rate = _positive((3, 1), dtype, 0.3, 4.0), _positive((4,), dtype, seed=1)
    value = _positive((2, 3, 4), dtype, 0.05, 5.0, seed=2)

    def fn(lib, conc, rate, value):
        d = lib.distributions.Gamma(conc, rate)
        return d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode, d.stddev
    compare(fn, conc, rate, value, **_tol(dtype))


def test_gamma_log_prob_at_zero():
    def fn(lib, conc):
        return lib.distributions.Gamma(conc, lib.ones(3, dtype=lib.float64)).log_prob(
            lib.zeros(3, dtype=lib.float64))
    compare(fn, np.array([1.0, 2.0, 3.5]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_beta(dtype):
    c1, c0 = _positive((3, 1), dtype, 0.4, 4.0), _positive((4,), dtype, 0.4, 4.0, seed=1)
    value = np.random.default_rng(7).uniform(0.02, 0.98, (2, 3, 4)).astype(dtype)

    def fn(lib, c1, c0, value):
        d = lib.distributions.Beta(c1, c0)
        return (d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode,
                d.concentration1, d.concentration0)
    compare(fn, c1, c0, value, **_tol(dtype))


def test_beta_numbers():
    compare(lambda lib, v: lib.distributions.Beta(2.0, 3.0).log_prob(v),
            np.array([0.2, 0.7], np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
def test_dirichlet(dtype):
    conc = _positive((2, 3, 4), dtype, 0.3, 4.0)
    raw = np.random.default_rng(8).uniform(0.1, 1.0, (5, 1, 3, 4))
    value = (raw / raw.sum(-1, keepdims=True)).astype(dtype)

    def fn(lib, conc, value):
        d = lib.distributions.Dirichlet(conc)
        return d.log_prob(value), d.entropy(), d.mean, d.variance
    compare(fn, conc, value, **_tol(dtype))


def test_dirichlet_mode():
    conc = np.array([[0.5, 0.7, 0.2], [2.0, 3.0, 1.5], [0.5, 2.0, 0.9]])
    compare(lambda lib, c: lib.distributions.Dirichlet(c).mode, conc)


# ---- MultivariateNormal -------------------------------------------------------------------
def _spd(batch, n, dtype, seed=0):
    m = np.random.default_rng(seed).standard_normal(batch + (n, n))
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_multivariate_normal(param, dtype):
    loc = _real((2, 1, 3), dtype)
    matrix = _spd((4,), 3, dtype, seed=1)
    if param == "scale_tril":
        matrix = np.linalg.cholesky(matrix.astype(np.float64)).astype(dtype)
    value = _real((5, 2, 4, 3), dtype, seed=2)

    def fn(lib, loc, matrix, value):
        d = lib.distributions.MultivariateNormal(loc, **{param: matrix})
        return (d.log_prob(value), d.entropy(), d.mean, d.variance, d.covariance_matrix,
                d.precision_matrix, d.scale_tril, d.mode, d.stddev)
    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-9)
    compare(fn, loc, matrix, value, **tol)


# ---- KL divergences -----------------------------------------------------------------------
def _normal(lib, a, b):
    return lib.distributions.Normal(a, b.abs() + 0.5)


def _gamma(lib, a, b):
    return lib.distributions.Gamma(a.abs() + 0.5, b.abs() + 0.5)


def _beta(lib, a, b):
    return lib.distributions.Beta(a.abs() + 0.5, b.abs() + 0.5)


def _uniform(lib, a, b):
    return lib.distributions.Uniform(a.sigmoid() * 0.4, 0.6 + b.sigmoid() * 0.3)


def _wide_uniform(lib, a, b):
    return lib.distributions.Uniform(a - 3.0, b + 3.0)


def _bernoulli(lib, a, b):
    return lib.distributions.Bernoulli(logits=a * b)


def _categorical(lib, a, b):
    return lib.distributions.Categorical(logits=(a.unsqueeze(-1) * b.unsqueeze(-2)))


def _dirichlet(lib, a, b):
    return lib.distributions.Dirichlet((a.unsqueeze(-1) * b.unsqueeze(-2)).abs() + 0.3)


def _mvn(lib, a, b):
    n = a.shape[-1]
    tril = lib.tril(a.unsqueeze(-1) * b.unsqueeze(-2), diagonal=-1) \
        + lib.eye(n, dtype=a.dtype) * (b.abs() + 0.5).unsqueeze(-1)
    return lib.distributions.MultivariateNormal(a, scale_tril=tril)


def _mvn_cov(lib, a, b):
    n = a.shape[-1]
    m = a.unsqueeze(-1) * b.unsqueeze(-2)
    return lib.distributions.MultivariateNormal(
        b, covariance_matrix=m @ m.transpose(-1, -2) + n * lib.eye(n, dtype=a.dtype))


KL_PAIRS = [(_normal, _normal), (_gamma, _gamma), (_beta, _beta), (_uniform, _uniform),
            (_uniform, _wide_uniform), (_bernoulli, _bernoulli), (_categorical, _categorical),
            (_dirichlet, _dirichlet), (_mvn, _mvn), (_mvn, _mvn_cov), (_mvn_cov, _mvn),
            (_beta, _gamma), (_beta, _normal), (_beta, _uniform), (_gamma, _normal),
            (_uniform, _beta), (_uniform, _gamma), (_uniform, _normal), (_normal, _gamma),
            (_gamma, _uniform), (_normal, _uniform), (_gamma, _beta), (_normal, _beta)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("make_p,make_q", KL_PAIRS,
                         ids=[f"{p.__name__[1:]}-{q.__name__[1:]}" for p, q in KL_PAIRS])
@pytest.mark.parametrize("q_shape", [(3, 4), (4,)])
def test_kl_divergence(make_p, make_q, dtype, q_shape):
    if q_shape == (4,) and (make_p, make_q) in [(_bernoulli, _bernoulli), (_beta, _uniform)]:
        pytest.skip("torch fails to broadcast its masks for these pairs (IndexError)")
    a, b = _real((3, 4), dtype, seed=10), _real((3, 4), dtype, seed=11)
    c, d = _real(q_shape, dtype, seed=12), _real(q_shape, dtype, seed=13)

    def fn(lib, a, b, c, d):
        return lib.distributions.kl_divergence(make_p(lib, a, b), make_q(lib, c, d))
    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-9)
    compare(fn, a, b, c, d, **tol)


def test_kl_infinite_cases():
    def fn(lib, p):
        q = p.detach() * lib.tensor([0.0, 1.0, 1.0], dtype=lib.float64) \
            + lib.tensor([0.0, 0.0, 0.1], dtype=lib.float64)
        bern = lib.distributions.kl_divergence(lib.distributions.Bernoulli(probs=p),
                                               lib.distributions.Bernoulli(probs=q))
        cat = lib.distributions.kl_divergence(lib.distributions.Categorical(probs=p),
                                              lib.distributions.Categorical(probs=q))
        return bern, cat
    compare(fn, np.array([0.3, 0.2, 0.5]))


def test_kl_errors():
    _same_error(lambda lib: lib.distributions.kl_divergence(
        lib.distributions.Normal(0.0, 1.0), lib.distributions.Bernoulli(0.5)))
    _same_error(lambda lib: lib.distributions.kl_divergence(
        lib.distributions.Normal(0.0, 1.0),
        lib.distributions.Categorical(probs=lib.tensor([0.5, 0.5]))))
    _same_error(lambda lib: lib.distributions.kl_divergence(
        lib.distributions.MultivariateNormal(lib.zeros(2), lib.eye(2)),
        lib.distributions.MultivariateNormal(lib.zeros(3), lib.eye(3))))


# ---- the standard gamma gradient ----------------------------------------------------------
def test_standard_gamma_grad_close_to_torch():
    """torch's _standard_gamma_grad is itself an approximation (about 1e-3 relative, see
    the behaviour tests for the exact reference), so the tolerance is loose."""
    from ember._ops.special import standard_gamma_grad_array
    rng = np.random.default_rng(0)
    alpha = np.exp(rng.uniform(np.log(0.05), np.log(500.0), 400))
    x = rng.standard_gamma(alpha)
    expected = torch._standard_gamma_grad(torch.tensor(alpha), torch.tensor(x)).numpy()
    np.testing.assert_allclose(standard_gamma_grad_array(alpha, x), expected, rtol=2e-2)


# ---- shapes, reprs, errors ----------------------------------------------------------------
def _all_kinds(lib, dtype=None):
    ones = lib.ones(2, 3)
    return [lib.distributions.Normal(lib.zeros(2, 3), ones),
            lib.distributions.Uniform(lib.zeros(2, 3), ones),
            lib.distributions.Bernoulli(probs=ones * 0.3),
            lib.distributions.Categorical(logits=ones),
            lib.distributions.Gamma(ones, ones),
            lib.distributions.Beta(ones, ones),
            lib.distributions.Dirichlet(ones),
            lib.distributions.MultivariateNormal(lib.zeros(2, 3), lib.eye(3))]


def test_shapes_and_expand():
    for t, e in zip(_all_kinds(torch), _all_kinds(ember)):
        assert tuple(e.batch_shape) == tuple(t.batch_shape), type(e).__name__
        assert tuple(e.event_shape) == tuple(t.event_shape), type(e).__name__
        assert e.has_rsample == t.has_rsample, type(e).__name__
        assert e.has_enumerate_support == t.has_enumerate_support, type(e).__name__
        assert tuple(e.sample((4,)).shape) == tuple(t.sample((4,)).shape), type(e).__name__
        assert e.sample().dtype.name == str(t.sample().dtype).split(".")[-1]
        batch = (5,) + tuple(t.batch_shape)
        te, ee = t.expand(batch), e.expand(batch)
        assert tuple(ee.batch_shape) == tuple(te.batch_shape)
        assert tuple(ee.sample().shape) == tuple(te.sample().shape), type(e).__name__
        value = te.sample()
        np.testing.assert_allclose(ee.log_prob(ember.tensor(value.numpy())).numpy(),
                                   te.log_prob(value).numpy(), rtol=1e-5, atol=1e-6)
        assert repr(e) == repr(t).replace("torch.Size", "ember.Size")


def test_reprs_of_constraints():
    from ember.distributions import constraints as ec
    from torch.distributions import constraints as tc
    names = ["real", "positive", "nonnegative", "unit_interval", "simplex", "boolean",
             "real_vector", "lower_cholesky", "positive_definite", "lower_triangular",
             "nonnegative_integer", "positive_integer"]
    for name in names:
        assert repr(getattr(ec, name)) == repr(getattr(tc, name)), name
    assert repr(ec.interval(0, 2.5)) == repr(tc.interval(0, 2.5))
    assert repr(ec.integer_interval(0, 3)) == repr(tc.integer_interval(0, 3))
    assert repr(ec.greater_than(1.5)) == repr(tc.greater_than(1.5))
    assert repr(ec.half_open_interval(0, 1)) == repr(tc.half_open_interval(0, 1))


def test_constraint_checks():
    from ember.distributions import constraints as ec
    from torch.distributions import constraints as tc
    values = np.array([[0.2, 0.8, 0.0], [-0.1, 0.5, 0.6], [np.nan, 1.0, 2.0]])
    for name in ["real", "positive", "nonnegative", "unit_interval", "simplex", "boolean",
                 "real_vector", "nonnegative_integer"]:
        expected = getattr(tc, name).check(torch.tensor(values)).numpy()
        got = getattr(ec, name).check(ember.tensor(values)).numpy()
        np.testing.assert_array_equal(got, expected, err_msg=name)
    mats = np.stack([np.eye(3), -np.eye(3), np.tril(np.ones((3, 3))), np.ones((3, 3))])
    for name in ["lower_cholesky", "positive_definite", "lower_triangular"]:
        expected = getattr(tc, name).check(torch.tensor(mats)).numpy()
        got = getattr(ec, name).check(ember.tensor(mats)).numpy()
        np.testing.assert_array_equal(got, expected, err_msg=name)


INVALID = [
    lambda lib: lib.distributions.Normal(lib.zeros(2), -lib.ones(2)),
    lambda lib: lib.distributions.Normal(lib.tensor([0.0, float("nan")]), 1.0),
    lambda lib: lib.distributions.Normal(0.0, 1.0).log_prob(lib.zeros(3)).sum()
    if False else lib.distributions.Normal(lib.zeros(2), lib.ones(2)).log_prob(lib.zeros(3)),
    lambda lib: lib.distributions.Normal(lib.zeros(2), lib.ones(2)).log_prob([0.0, 1.0]),
    lambda lib: lib.distributions.Uniform(1.0, 0.0),
    lambda lib: lib.distributions.Uniform(0.0, 1.0).log_prob(lib.tensor(2.0)),
    lambda lib: lib.distributions.Bernoulli(probs=lib.tensor([0.3, 1.5])),
    lambda lib: lib.distributions.Bernoulli(probs=0.3, logits=0.1),
    lambda lib: lib.distributions.Bernoulli(0.3).log_prob(lib.tensor(0.5)),
    lambda lib: lib.distributions.Categorical(probs=lib.tensor([0.3, -0.2])),
    lambda lib: lib.distributions.Categorical(probs=lib.tensor(0.5)),
    lambda lib: lib.distributions.Categorical(logits=lib.tensor(0.5)),
    lambda lib: lib.distributions.Categorical(probs=lib.ones(3)).log_prob(lib.tensor(3)),
    lambda lib: lib.distributions.Gamma(lib.ones(2), lib.zeros(2)),
    lambda lib: lib.distributions.Gamma(1.0, 1.0).log_prob(lib.tensor(-1.0)),
    lambda lib: lib.distributions.Beta(lib.ones(2), -lib.ones(2)),
    lambda lib: lib.distributions.Beta(2.0, 2.0).log_prob(lib.tensor(1.5)),
    lambda lib: lib.distributions.Dirichlet(lib.tensor(1.0)),
    lambda lib: lib.distributions.Dirichlet(lib.ones(3)).log_prob(lib.ones(3)),
    lambda lib: lib.distributions.Dirichlet(lib.ones(3)).log_prob(lib.ones(2) / 2),
    lambda lib: lib.distributions.MultivariateNormal(lib.tensor(0.0), lib.eye(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), lib.eye(2),
                                                     scale_tril=lib.eye(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), lib.ones(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), -lib.eye(2)),
    lambda lib: lib.distributions.MultivariateNormal(lib.zeros(2), scale_tril=lib.ones(2, 2)),
    lambda lib: lib.distributions.Distribution.set_default_validate_args(3),
]


@pytest.mark.parametrize("make", INVALID, ids=[str(i) for i in range(len(INVALID))])
def test_validation_errors(make):
    _same_error(make)


def test_validation_can_be_turned_off():
    for lib in (torch, ember):
        d = lib.distributions.Normal(lib.zeros(2), -lib.ones(2), validate_args=False)
        assert bool(lib.isnan(d.entropy()).all())
        lib.distributions.Distribution.set_default_validate_args(False)
        try:
            d = lib.distributions.Normal(lib.zeros(2), -lib.ones(2))
            assert not d._validate_args
        finally:
            lib.distributions.Distribution.set_default_validate_args(True)
        assert lib.distributions.Normal(0.0, 1.0)._validate_args


NOT_POSITIVE_DEFINITE = [[1.0, 2.0], [2.0, 1.0]]


@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix"])
@pytest.mark.parametrize("validate", [True, False])
def test_multivariate_normal_not_positive_definite(param, validate):
    """Validated: the constraint's ValueError; unvalidated: linalg.cholesky's LinAlgError."""
    def make(lib):
        bad = lib.tensor(NOT_POSITIVE_DEFINITE).expand(3, 2, 2)
        return lib.distributions.MultivariateNormal(lib.zeros(2), validate_args=validate,
                                                    **{param: bad})
    _same_error(make)
    if not validate:
        with pytest.raises(ember.linalg.LinAlgError):
            make(ember)


def test_multivariate_normal_matrices_gradients():
    """Gradients through the Cholesky factor, its inverse and the triangular solves."""
    rng = np.random.default_rng(5)
    m = rng.standard_normal((3, 3))
    cov, x = m @ m.T + 3 * np.eye(3), rng.standard_normal((4, 3))
    grads = []
    for lib in (torch, ember):
        c = lib.tensor(cov, requires_grad=True)
        d = lib.distributions.MultivariateNormal(lib.zeros(3, dtype=c.dtype), covariance_matrix=c)
        total = d.log_prob(lib.tensor(x)).sum() + d.precision_matrix.sum() + d.entropy()
        grads.append(lib.autograd.grad(total, c)[0].numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-9, atol=1e-11)


def test_register_kl_and_dispatch():
    for lib in (torch, ember):
        D = lib.distributions

        class MyNormal(D.Normal):
            pass

        @D.register_kl(MyNormal, D.Normal)
        def _mine(p, q):
            return lib.tensor(42.0)
        p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 1.0)
        assert float(D.kl_divergence(p, q)) == 42.0
        assert float(D.kl_divergence(q, p)) == pytest.approx(0.5)
        with pytest.raises(TypeError):
            D.register_kl("Normal", D.Normal)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gamma_cdf(dtype):
    conc, rate = _positive((3, 1), dtype, 0.3, 4.0), _positive((4,), dtype, seed=1)
    value = _positive((2, 3, 4), dtype, 0.05, 5.0, seed=2)

    def fn(lib, conc, rate, value):
        return lib.distributions.Gamma(conc.detach(), rate).cdf(value)
    compare(fn, conc, rate, value, **_tol(dtype))


# ---- Independent --------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_independent(dtype):
    loc, scale = _real((3, 4, 2), dtype), _positive((4, 2), dtype)
    value = _real((5, 3, 4, 2), dtype, seed=1)

    def fn(lib, loc, scale, value):
        D = lib.distributions
        d = D.Independent(D.Normal(loc, scale), 2)
        q = D.Independent(D.Normal(loc.detach() * 0.5, scale.detach() + 1), 2)
        return d.log_prob(value), d.entropy(), d.mean, d.variance, D.kl_divergence(d, q)
    compare(fn, loc, scale, value, **_tol(dtype))


def test_independent_shapes_repr_and_errors():
    for lib in (torch, ember):
        D = lib.distributions
        d = D.Independent(D.Normal(lib.zeros(3, 2), lib.ones(3, 2)), 1)
        assert tuple(d.batch_shape) == (3,) and tuple(d.event_shape) == (2,)
        assert tuple(d.rsample((4,)).shape) == (4, 3, 2) and d.has_rsample
        assert tuple(d.expand((5, 3)).sample().shape) == (5, 3, 2)
        assert repr(d.support) == "IndependentConstraint(Real(), 1)"
        assert not D.Independent(D.Bernoulli(lib.ones(3) * 0.5), 1).has_enumerate_support
    assert repr(ember.distributions.Independent(
        ember.distributions.Normal(ember.zeros(3, 2), ember.ones(3, 2)), 1)) == repr(
        torch.distributions.Independent(torch.distributions.Normal(
            torch.zeros(3, 2), torch.ones(3, 2)), 1)).replace("torch.Size", "ember.Size")
    _same_error(lambda lib: lib.distributions.Independent(
        lib.distributions.Normal(lib.zeros(3, 2), lib.ones(3, 2)), 3))
    _same_error(lambda lib: lib.distributions.Independent(
        lib.distributions.Normal(lib.zeros(3, 2), lib.ones(3, 2)), 1).log_prob(lib.zeros(3)))
