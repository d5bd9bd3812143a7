"""The later distributions against torch.distributions: log_prob, cdf/icdf, entropy,
moments, enumerate_support and their gradients w.r.t. the parameters (float32 and float64,
broadcast batch shapes, non-contiguous parameters), KL divergences, expand, reprs and the
validation errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import DEVICE, _on_device, compare, error_of

DTYPES = [np.float32, np.float64]


def _positive(shape, dtype, low=0.5, high=3.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _real(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _unit(shape, dtype, low=0.05, high=0.95, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _counts(shape, high, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).integers(0, high + 1, shape).astype(dtype)


def _tol(dtype):
    return dict(rtol=2e-4, atol=2e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-10)


def _same_error(make):
    """``make(lib)`` raises the same exception type and message in both libraries."""
    torch_error = error_of(lambda: make(torch))
    ember_error = error_of(lambda: make(ember))
    assert torch_error is not None
    assert ember_error == (torch_error[0], torch_error[1].replace("torch.Size", "ember.Size"))


def _spd(batch, n, dtype, seed=0):
    m = np.random.default_rng(seed).standard_normal(batch + (n, n))
    return (m @ np.swapaxes(m, -1, -2) + n * np.eye(n)).astype(dtype)


D = lambda lib: lib.distributions  # noqa: E731


# ---- discrete counts ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_poisson(dtype):
    rate, value = _positive((3, 1), dtype, 0.2, 5.0), _counts((2, 3, 4), 6, dtype=dtype)

    def fn(lib, rate, value):
        d = D(lib).Poisson(rate)
        return d.log_prob(value), d.mean, d.mode, d.variance, d.stddev
    compare(fn, rate, value, **_tol(dtype))


def test_poisson_zero_rate_and_number():
    compare(lambda lib, r: D(lib).Poisson(r).log_prob(lib.tensor([0.0, 1.0, 0.0],
                                                                 dtype=lib.float64)),
            np.array([0.0, 0.0, 2.0]))
    compare(lambda lib, v: D(lib).Poisson(2.0).log_prob(v), np.array([0.0, 3.0], np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_geometric(param, dtype):
    p = _unit((3, 4), dtype) if param == "probs" else _real((3, 4), dtype)
    value = _counts((2, 3, 4), 5, seed=1, dtype=dtype)

    def fn(lib, p, value):
        d = D(lib).Geometric(**{param: p})
        return (d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode, d.probs,
                d.logits)
    compare(fn, p, value, **_tol(dtype))


def test_geometric_probs_one():
    def fn(lib, p):
        return D(lib).Geometric(probs=p).log_prob(lib.tensor([0.0, 0.0, 2.0],
                                                              dtype=lib.float64))
    compare(fn, np.array([1.0, 0.5, 0.5]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_binomial(param, dtype):
    p = _unit((3, 4), dtype) if param == "probs" else _real((3, 4), dtype)
    value = _counts((2, 3, 4), 6, seed=1, dtype=dtype)

    def fn(lib, p, value):
        d = D(lib).Binomial(6, **{param: p})
        return (d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode, d.probs,
                d.logits, d.enumerate_support(), d.enumerate_support(False))
    compare(fn, p, value, **_tol(dtype))


def test_binomial_tensor_counts():
    def fn(lib, n, p, value):
        d = D(lib).Binomial(n.detach(), probs=p)
        return d.log_prob(value), d.mean, d.mode, d.variance
    compare(fn, np.array([[3.0], [7.0]]), _unit((4,), np.float64), _counts((2, 4), 3, seed=2))


def test_binomial_inhomogeneous_counts_and_integer_counts():
    def make(lib):
        return D(lib).Binomial(lib.tensor([2.0, 3.0]), probs=lib.tensor([0.5, 0.5])).entropy()
    _same_error(make)
    compare(lambda lib, p: D(lib).Binomial(lib.tensor([4, 5]), probs=p).log_prob(
        lib.tensor([1.0, 2.0])), np.array([0.3, 0.6], np.float32))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_negative_binomial(param, dtype):
    n = _positive((3, 1), dtype, 0.5, 5.0)
    p = _unit((4,), dtype) if param == "probs" else _real((4,), dtype)
    value = _counts((2, 3, 4), 6, seed=1, dtype=dtype)

    def fn(lib, n, p, value):
        d = D(lib).NegativeBinomial(n, **{param: p})
        return d.log_prob(value), d.mean, d.variance, d.mode, d.probs, d.logits
    compare(fn, n, p, value, **_tol(dtype))


def test_negative_binomial_zero_count():
    def fn(lib, n, p):
        return D(lib).NegativeBinomial(n.detach(), probs=p).log_prob(
            lib.tensor([0.0, 1.0], dtype=lib.float64))
    compare(fn, np.array([0.0, 2.0]), np.array([0.3, 0.6]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_multinomial(param, dtype):
    p = _positive((3, 4), dtype) if param == "probs" else _real((3, 4), dtype)
    value = np.array([[1, 2, 0, 2], [0, 0, 5, 0], [1, 1, 1, 2]], dtype)

    def fn(lib, p, value):
        d = D(lib).Multinomial(5, **{param: p})
        return d.log_prob(value), d.entropy(), d.mean, d.variance, d.probs, d.logits
    compare(fn, p, value, **_tol(dtype))


def test_multinomial_zero_probability():
    def fn(lib, p):
        d = D(lib).Multinomial(3, probs=p)
        return d.log_prob(lib.tensor([[1.0, 2.0, 0.0], [3.0, 0.0, 0.0]], dtype=lib.float64))
    compare(fn, np.array([[0.2, 0.8, 0.0], [1.0, 0.0, 0.0]]))


# ---- one-hot ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_one_hot_categorical(param, dtype):
    p = _positive((2, 3, 4), dtype) if param == "probs" else _real((2, 3, 4), dtype)
    value = np.eye(4, dtype=dtype)[np.random.default_rng(3).integers(0, 4, (5, 1, 3))]

    def fn(lib, p, value):
        d = D(lib).OneHotCategorical(**{param: p})
        return (d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode, d.probs,
                d.logits, d.enumerate_support(), d.enumerate_support(False))
    compare(fn, p, value, **_tol(dtype))


def test_straight_through_gradient():
    def fn(lib, p):
        lib.manual_seed(0)
        sample = D(lib).OneHotCategoricalStraightThrough(probs=p).rsample((6,))
        return sample - sample.detach()  # the straight-through part only: no draws compared
    compare(fn, _positive((2, 3), np.float64))


# ---- continuous ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_chi2(dtype):
    df, value = _positive((3, 1), dtype, 0.5, 6.0), _positive((2, 3, 4), dtype, 0.1, 5.0, 1)

    def fn(lib, df, value):
        d = D(lib).Chi2(df)
        return d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode, d.df
    compare(fn, df, value, **_tol(dtype))
    # torch has no derivative of igamma in its first argument: values only
    compare(lambda lib, df, value: D(lib).Chi2(df).cdf(value), df, value, grad=False,
            **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_student_t(dtype):
    df = np.array([[0.7], [1.5], [2.0], [4.0]], dtype)
    loc, scale = _real((3,), dtype), _positive((3,), dtype, seed=1)
    value = _real((2, 4, 3), dtype, seed=2)

    def fn(lib, df, loc, scale, value):
        d = D(lib).StudentT(df, loc, scale)
        return d.log_prob(value), d.entropy(), d.mean, d.variance, d.mode
    compare(fn, df, loc, scale, value, **_tol(dtype))


def test_student_t_numbers_and_noncontiguous():
    compare(lambda lib, v: D(lib).StudentT(3.0).log_prob(v), np.array([0.5, -1.0], np.float32))
    compare(lambda lib, df, loc: D(lib).StudentT(df, loc).entropy() + D(lib).StudentT(
        df, loc).log_prob(lib.zeros(3, 3)), _positive((3, 3), np.float32, 1.0, 4.0),
        _real((3, 3), np.float32), noncontiguous=True, rtol=2e-4, atol=2e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_fisher_snedecor(dtype):
    df1 = np.array([[1.5], [3.0], [6.0]], dtype)
    df2 = np.array([1.5, 3.0, 4.5, 8.0], dtype)
    value = _positive((2, 3, 4), dtype, 0.1, 4.0)

    def fn(lib, df1, df2, value):
        d = D(lib).FisherSnedecor(df1, df2)
        return d.log_prob(value), d.mean, d.mode, d.variance
    compare(fn, df1, df2, value, **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["probs", "logits"])
def test_continuous_bernoulli(param, dtype):
    # values in, near and at the edges of the Taylor region around 0.5
    p = np.array([[0.1], [0.4995], [0.5], [0.5008], [0.9]], dtype)
    if param == "logits":
        p = np.log(p / (1 - p)).astype(dtype)
    value = _unit((3,), dtype, 0.02, 0.98)
    u = _unit((5, 3), dtype, seed=1)

    def fn(lib, p, value, u):
        d = D(lib).ContinuousBernoulli(**{param: p})
        return (d.log_prob(value), d.cdf(value), d.icdf(u), d.entropy(), d.mean,
                d.variance, d.stddev, d.probs, d.logits)
    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-9)
    compare(fn, p, value, u, **tol)


def test_continuous_bernoulli_cdf_at_ends():
    def fn(lib, p):
        d = D(lib).ContinuousBernoulli(probs=p)
        return d.cdf(lib.tensor([0.0, 1.0, 0.3], dtype=lib.float64))
    compare(fn, np.array([0.2, 0.7, 0.5]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_von_mises(dtype):
    loc = _real((3, 1), dtype)
    conc = np.array([0.05, 1.0, 3.0, 3.75, 8.0], dtype)
    value = _real((2, 3, 5), dtype, seed=1) * 3

    def fn(lib, loc, conc, value):
        d = D(lib).VonMises(loc, conc)
        return d.log_prob(value), d.mean, d.mode, d.variance
    compare(fn, loc, conc, value, **_tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES)
def test_generalized_pareto(dtype, monkeypatch):
    # torch 2.13 compares a float64 concentration with a float32 zero and raises "Double did
    # not match Float"; ember works in float64: compare with torch's zero in the right dtype
    isclose = torch.isclose
    monkeypatch.setattr(torch, "isclose", lambda a, b, **k: isclose(a, b.to(a.dtype), **k))
    loc = _real((3, 1), dtype)
    scale = _positive((4,), dtype, seed=1)
    conc = np.array([-0.4, 0.0, 0.3, 0.7], dtype)
    u = _unit((2, 3, 4), dtype, 0.05, 0.9, seed=2)

    def fn(lib, loc, scale, conc, u):
        d = D(lib).GeneralizedPareto(loc, scale, conc)
        value = d.icdf(u)
        return (value, d.log_prob(value.detach()), d.cdf(value.detach()),
                d.log_survival_function(value.detach()), d.entropy(), d.mean, d.variance,
                d.mode)
    compare(fn, loc, scale, conc, u, **_tol(dtype))


def test_generalized_pareto_numbers():
    compare(lambda lib, v: D(lib).GeneralizedPareto(0.0, 2.0, 0.5).log_prob(v),
            np.array([0.5, 3.0], np.float32))


# ---- multivariate -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
def test_lowrank_multivariate_normal(dtype):
    loc = _real((2, 1, 4), dtype)
    factor = _real((3, 4, 2), dtype, seed=1)
    diag = _positive((4,), dtype, seed=2)
    value = _real((5, 2, 3, 4), dtype, seed=3)

    def fn(lib, loc, factor, diag, value):
        d = D(lib).LowRankMultivariateNormal(loc, factor, diag)
        return (d.log_prob(value), d.entropy(), d.mean, d.mode, d.variance, d.stddev,
                d.covariance_matrix, d.precision_matrix, d.scale_tril)
    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-9)
    compare(fn, loc, factor, diag, value, **tol)


def test_noncontiguous_matrices():
    def fn(lib, loc, factor, diag, cov, value):
        lowrank = D(lib).LowRankMultivariateNormal(loc, factor, diag)
        wishart = D(lib).Wishart(lib.tensor(4.5, dtype=lib.float64), covariance_matrix=cov)
        return lowrank.log_prob(loc.detach() * 2), wishart.log_prob(value.detach())
    compare(fn, _real((2, 3), np.float64), _real((2, 3, 2), np.float64, seed=1),
            _positive((2, 3), np.float64, seed=2), _spd((2,), 3, np.float64, seed=3),
            _spd((2,), 3, np.float64, seed=4), noncontiguous=True)


def test_lowrank_errors():
    _same_error(lambda lib: D(lib).LowRankMultivariateNormal(
        lib.zeros(3), lib.ones(2, 1), lib.ones(3)))
    _same_error(lambda lib: D(lib).LowRankMultivariateNormal(
        lib.zeros(3), lib.ones(3, 1), lib.ones(2)))
    _same_error(lambda lib: D(lib).LowRankMultivariateNormal(
        lib.zeros(2, 3), lib.ones(4, 3, 1), lib.ones(3)))
    _same_error(lambda lib: D(lib).LowRankMultivariateNormal(
        lib.zeros(3), lib.ones(3), lib.ones(3)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_mixture_same_family(dtype):
    logits = _real((3, 2), dtype)
    loc, scale = _real((3, 2), dtype, seed=1), _positive((3, 2), dtype, seed=2)
    value = _real((4, 3), dtype, seed=3)

    def fn(lib, logits, loc, scale, value):
        d = D(lib).MixtureSameFamily(D(lib).Categorical(logits=logits),
                                     D(lib).Normal(loc, scale))
        return d.log_prob(value), d.cdf(value), d.mean, d.variance
    compare(fn, logits, loc, scale, value, **_tol(dtype))


def test_mixture_of_multivariate_components():
    def fn(lib, probs, loc, diag, value):
        comp = D(lib).Independent(D(lib).Normal(loc, diag), 1)
        d = D(lib).MixtureSameFamily(D(lib).Categorical(probs=probs), comp)
        return d.log_prob(value), d.mean, d.variance
    compare(fn, _positive((3,), np.float64), _real((2, 3, 4), np.float64),
            _positive((2, 3, 4), np.float64, seed=1), _real((5, 2, 4), np.float64, seed=2))


def test_mixture_errors_and_repr():
    _same_error(lambda lib: D(lib).MixtureSameFamily(
        D(lib).Normal(0.0, 1.0), D(lib).Normal(lib.zeros(2), lib.ones(2))))
    _same_error(lambda lib: D(lib).MixtureSameFamily(
        D(lib).Categorical(probs=lib.ones(3)), D(lib).Normal(lib.zeros(2), lib.ones(2))))
    _same_error(lambda lib: D(lib).MixtureSameFamily(
        D(lib).Categorical(probs=lib.ones(3, 2)), D(lib).Normal(lib.zeros(4, 2),
                                                                lib.ones(4, 2))))

    def text(lib):
        return repr(D(lib).MixtureSameFamily(D(lib).Categorical(probs=lib.ones(2)),
                                             D(lib).Normal(lib.zeros(2), lib.ones(2))))
    assert text(ember) == text(torch).replace("torch.Size", "ember.Size")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("param", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart(param, dtype):
    df = np.array([3.5, 5.0], dtype)
    matrix = _spd((2,), 3, dtype, seed=1)
    if param == "scale_tril":
        matrix = np.linalg.cholesky(matrix.astype(np.float64)).astype(dtype)
    value = _spd((4, 1), 3, dtype, seed=2)

    def fn(lib, df, matrix, value):
        d = D(lib).Wishart(df, **{param: matrix})
        return (d.log_prob(value), d.entropy(), d.mean, d.mode, d.variance,
                d.covariance_matrix, d.precision_matrix, d.scale_tril)
    tol = dict(rtol=2e-3, atol=2e-4) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-9)
    compare(fn, df, matrix, value, **tol)


def test_wishart_errors_and_warnings():
    _same_error(lambda lib: D(lib).Wishart(0.5, covariance_matrix=lib.eye(2)))
    _same_error(lambda lib: D(lib).Wishart(lib.tensor(0.5), covariance_matrix=lib.eye(2)))
    _same_error(lambda lib: D(lib).Wishart(3.0))
    _same_error(lambda lib: D(lib).Wishart(3.0, scale_tril=lib.ones(2)))
    for lib in (torch, ember):
        with pytest.warns(UserWarning, match="Low df values detected"):
            D(lib).Wishart(lib.tensor(1.5), covariance_matrix=lib.eye(2))


@pytest.mark.parametrize("dtype", DTYPES)
def test_lkj_cholesky(dtype):
    conc = np.array([0.5, 1.0, 2.5], dtype)
    rows = _real((4, 1, 3, 3), dtype, seed=1)
    value = np.linalg.cholesky(np.corrcoef(rows.reshape(-1, 3).T)[None].repeat(1, 0))
    value = np.broadcast_to(value, (4, 3, 3, 3)).astype(dtype)

    def fn(lib, conc, value):
        return D(lib).LKJCholesky(3, conc).log_prob(value.detach())
    compare(fn, conc, value, **_tol(dtype))


def test_lkj_errors():
    _same_error(lambda lib: D(lib).LKJCholesky(1, 1.0))
    # the first lines only: the Beta that reports it has other first concentrations in
    # ember (whose draws follow LKJ, see lkj_cholesky.py)
    t_error = error_of(lambda: D(torch).LKJCholesky(3, -1.0))
    e_error = error_of(lambda: D(ember).LKJCholesky(3, -1.0))
    assert e_error[0] == t_error[0]
    assert e_error[1].split("\n")[0] == t_error[1].split("\n")[0].replace("torch.", "ember.")


# ---- KL divergences -----------------------------------------------------------------------
def _pairs(lib, a, b):
    """Pairs (p, q) of every KL this part registers, parameters from arrays ``a``, ``b`` of
    probabilities in (0, 1) (shape (3,))."""
    d = D(lib)
    ra, rb = a * 4 + 0.2, b * 4 + 0.3
    loc, factor, diag = a.unsqueeze(-1) * lib.ones(3), lib.stack([a, b], -1), b + 0.5
    cov = factor @ factor.mT + lib.diag_embed(a + 1)
    return [
        (d.Binomial(5, probs=a), d.Binomial(5, probs=b)),
        (d.Geometric(probs=a), d.Geometric(probs=b)),
        (d.Poisson(ra), d.Poisson(rb)),
        (d.OneHotCategorical(probs=a), d.OneHotCategorical(probs=b)),
        (d.ContinuousBernoulli(probs=a), d.ContinuousBernoulli(probs=b)),
        (d.LowRankMultivariateNormal(loc, factor, diag),
         d.LowRankMultivariateNormal(loc * 0.5, factor * 2, diag + 1)),
        (d.MultivariateNormal(loc, covariance_matrix=cov),
         d.LowRankMultivariateNormal(loc * 0.5, factor, diag)),
        (d.LowRankMultivariateNormal(loc, factor, diag),
         d.MultivariateNormal(loc * 0.5, covariance_matrix=cov)),
        (d.Bernoulli(probs=a), d.Poisson(rb)),
        (d.Beta(ra, rb), d.ContinuousBernoulli(probs=b)),
        (d.ContinuousBernoulli(probs=a), d.Normal(b, ra)),
        (d.ContinuousBernoulli(probs=a), d.Uniform(b - 2, b + 2)),
        (d.ContinuousBernoulli(probs=a), d.Uniform(b - 2, b)),
        (d.Uniform(a * 0.5, a * 0.5 + 0.4), d.ContinuousBernoulli(probs=b)),
        (d.Gamma(ra, rb), d.ContinuousBernoulli(probs=b)),
        (d.Normal(a, rb), d.ContinuousBernoulli(probs=b)),
        (d.Poisson(ra), d.Bernoulli(probs=b)),
        (d.Poisson(ra), d.Binomial(3, probs=b)),
        (d.Chi2(ra), d.Chi2(rb)),
    ]


@pytest.mark.parametrize("index", range(19))
def test_kl(index):
    def fn(lib, a, b):
        p, q = _pairs(lib, a, b)[index]
        return lib.distributions.kl_divergence(p, q)
    compare(fn, _unit((3,), np.float64), _unit((3,), np.float64, 0.1, 0.9, seed=1))


@pytest.mark.parametrize("dtype", DTYPES)
def test_kl_wishart_wishart(dtype):
    def fn(lib, df_p, df_q, cov_p, tril_q):
        # torch's Bregman KL detaches p's parameters (no gradient reaches them); ember's
        # closed form differentiates in both: compare the gradients of q's
        p = D(lib).Wishart(df_p.detach(), covariance_matrix=cov_p.detach())
        q = D(lib).Wishart(df_q, scale_tril=tril_q)
        return D(lib).kl_divergence(p, q)
    tril = np.linalg.cholesky(_spd((), 3, np.float64, seed=2)).astype(dtype)
    compare(fn, np.array(3.5, dtype), np.array(5.5, dtype), _spd((), 3, dtype, seed=1), tril,
            **_tol(dtype))


def test_kl_wishart_batches_are_elementwise():
    # torch 2.13's Bregman KL sums the df term over the batch dimensions (its batched values
    # are wrong, even negative): compare ember's batch with torch's one pair at a time
    df_p, df_q = np.array([3.5, 6.0]), np.array([4.0, 5.5])
    cov_p, cov_q = _spd((2,), 3, np.float64, seed=1), _spd((2,), 3, np.float64, seed=2)
    W = ember.distributions.Wishart
    batched = ember.distributions.kl_divergence(
        W(ember.tensor(df_p), covariance_matrix=ember.tensor(cov_p)),
        W(ember.tensor(df_q), covariance_matrix=ember.tensor(cov_q))).numpy()
    each = [float(torch.distributions.kl_divergence(
        torch.distributions.Wishart(torch.tensor(df_p[i]), torch.tensor(cov_p[i])),
        torch.distributions.Wishart(torch.tensor(df_q[i]), torch.tensor(cov_q[i]))).detach())
        for i in range(2)]
    np.testing.assert_allclose(batched, each, rtol=1e-10)


@pytest.mark.parametrize("other", ["Exponential", "Gumbel", "Laplace", "Pareto"])
def test_kl_continuous_bernoulli_and_the_first_part(other):
    if not hasattr(ember.distributions, other):
        pytest.skip(f"ember.distributions has no {other}")

    both_ways = other in ("Exponential", "Pareto")  # torch has only KL(other || CB) else

    def make(lib, probs, a, b):
        family = getattr(D(lib), other)
        return (D(lib).ContinuousBernoulli(probs=probs),
                family(a) if other == "Exponential" else family(a, b))

    def fn(lib, probs, a, b):
        cb, d = make(lib, probs, a, b)
        kl = D(lib).kl_divergence
        return (kl(cb, d), kl(d, cb)) if both_ways else kl(d, cb)
    arrays = (_unit((3,), np.float64), _positive((3,), np.float64, seed=1),
              _positive((3,), np.float64, seed=2))
    compare(fn, *arrays)
    if not both_ways:
        _same_error(lambda lib: D(lib).kl_divergence(
            *make(lib, *(lib.tensor(a) for a in arrays))))


def test_kl_errors():
    _same_error(lambda lib: D(lib).kl_divergence(
        D(lib).Binomial(3, probs=lib.tensor(0.5)), D(lib).Binomial(4, probs=lib.tensor(0.5))))
    _same_error(lambda lib: D(lib).kl_divergence(
        D(lib).LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), lib.ones(2)),
        D(lib).LowRankMultivariateNormal(lib.zeros(3), lib.ones(3, 1), lib.ones(3))))
    compare(lambda lib, a: D(lib).kl_divergence(
        D(lib).Binomial(lib.tensor([5.0, 3.0]), probs=a),
        D(lib).Binomial(lib.tensor([3.0, 3.0]), probs=a * 0.5)), np.array([0.3, 0.6]))


# ---- shapes, expand, validation ---------------------------------------------------------
def _all_kinds(lib):
    d = D(lib)
    p = lib.tensor([[0.2, 0.8], [0.6, 0.4]])
    return {
        "poisson": d.Poisson(lib.tensor([1.0, 2.0])),
        "geometric": d.Geometric(logits=lib.tensor([0.1, -1.0])),
        "binomial": d.Binomial(4, probs=lib.tensor([0.1, 0.5])),
        "negbin": d.NegativeBinomial(lib.tensor([2.0, 3.0]), probs=lib.tensor([0.1, 0.5])),
        "multinomial": d.Multinomial(3, probs=p),
        "onehot": d.OneHotCategorical(probs=p),
        "onehot_st": d.OneHotCategoricalStraightThrough(logits=p),
        "chi2": d.Chi2(lib.tensor([1.0, 2.0])),
        "student": d.StudentT(lib.tensor([1.0, 2.0]), 0.5, 2.0),
        "fisher": d.FisherSnedecor(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])),
        "cb": d.ContinuousBernoulli(probs=lib.tensor([0.2, 0.7])),
        "vonmises": d.VonMises(lib.tensor([0.0, 1.0]), lib.tensor([1.0, 2.0])),
        "gpd": d.GeneralizedPareto(lib.tensor([0.0, 1.0]), 1.0, lib.tensor([-0.2, 0.2])),
        "lowrank": d.LowRankMultivariateNormal(lib.zeros(2, 3), lib.ones(3, 1), lib.ones(3)),
        "mixture": d.MixtureSameFamily(d.Categorical(probs=p), d.Normal(p, p)),
        "wishart": d.Wishart(lib.tensor([3.0, 4.0]), covariance_matrix=lib.eye(2)),
        "lkj": d.LKJCholesky(3, lib.tensor([1.0, 2.0])),
    }


@pytest.mark.parametrize("name", list(_all_kinds(ember)))
def test_shapes_expand_repr_flags(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t, e = _all_kinds(torch)[name], _all_kinds(ember)[name]
        assert tuple(t.batch_shape) == tuple(e.batch_shape)
        assert tuple(t.event_shape) == tuple(e.event_shape)
        assert (t.has_rsample, t.has_enumerate_support) == (e.has_rsample,
                                                            e.has_enumerate_support)
        te, ee = t.expand((3, 2)), e.expand((3, 2))
        assert type(ee).__name__ == type(te).__name__
        assert tuple(te.batch_shape) == tuple(ee.batch_shape)
        assert tuple(te.sample((4,)).shape) == tuple(ee.sample((4,)).shape)
        assert tuple(t.sample().shape) == tuple(e.sample().shape)
        assert repr(e) == repr(t).replace("torch.Size", "ember.Size")
        assert repr(e.support) == repr(t.support).replace("torch.", "ember.")
        assert sorted(e.arg_constraints) == sorted(t.arg_constraints)


@pytest.mark.parametrize("name", list(_all_kinds(ember)))
def test_sampling_stays_on_the_device(name):
    """Samples, rsamples and log_prob of them where ember's tensors live (EMBER_PARITY_DEVICE;
    the host otherwise)."""
    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = _all_kinds(ember)[name]
            x = d.sample((3,))
            out = [x, d.log_prob(x)]
            if d.has_rsample:
                out.append(d.rsample((2,)))
            return out
    for t in _on_device(run):
        assert t.device.type == (DEVICE or "cpu")


@pytest.mark.parametrize("make", [
    lambda lib: D(lib).Poisson(lib.tensor([-1.0])),
    lambda lib: D(lib).Geometric(probs=lib.tensor([0.0, 0.5])),
    lambda lib: D(lib).Geometric(probs=lib.tensor([1.5])),
    lambda lib: D(lib).Binomial(lib.tensor([3.5]), probs=lib.tensor([0.3])),
    lambda lib: D(lib).Binomial(3, probs=lib.tensor([1.3])),
    lambda lib: D(lib).Binomial(3),
    lambda lib: D(lib).NegativeBinomial(2.0, probs=lib.tensor([1.0])),
    lambda lib: D(lib).Multinomial(lib.tensor(3), probs=lib.tensor([0.5, 0.5])),
    lambda lib: D(lib).Multinomial(3, probs=lib.tensor([0.5, -0.5])),
    lambda lib: D(lib).OneHotCategorical(),
    lambda lib: D(lib).Chi2(lib.tensor([-1.0])),
    lambda lib: D(lib).StudentT(lib.tensor([1.0]), scale=lib.tensor([0.0])),
    lambda lib: D(lib).FisherSnedecor(lib.tensor([1.0]), lib.tensor([-2.0])),
    lambda lib: D(lib).ContinuousBernoulli(probs=lib.tensor([1.5]), validate_args=True),
    lambda lib: D(lib).ContinuousBernoulli(logits=lib.tensor([float("nan")])),
    lambda lib: D(lib).VonMises(lib.tensor([0.0]), lib.tensor([-1.0])),
    lambda lib: D(lib).GeneralizedPareto(0.0, -1.0, 0.5),
    lambda lib: D(lib).LowRankMultivariateNormal(lib.zeros(2), lib.ones(2, 1), -lib.ones(2)),
    lambda lib: D(lib).LKJCholesky(2, lib.tensor([0.0])),
    lambda lib: D(lib).Poisson(lib.tensor([1.0])).log_prob(lib.tensor([0.5])),
    lambda lib: D(lib).Binomial(3, probs=lib.tensor([0.5])).log_prob(lib.tensor([4.0])),
    lambda lib: D(lib).Multinomial(3, probs=lib.tensor([0.5, 0.5])).log_prob(
        lib.tensor([3.0, 1.0])),
    lambda lib: D(lib).OneHotCategorical(probs=lib.tensor([0.5, 0.5])).log_prob(
        lib.tensor([1.0, 1.0])),
    lambda lib: D(lib).FisherSnedecor(1.0, 2.0).log_prob(lib.tensor(-1.0)),
    lambda lib: D(lib).ContinuousBernoulli(probs=lib.tensor(0.3)).log_prob(lib.tensor(2.0)),
    lambda lib: D(lib).GeneralizedPareto(0.0, 1.0, -0.5).log_prob(lib.tensor(3.0)),
    lambda lib: D(lib).LKJCholesky(2, 1.0).log_prob(lib.tensor([[1.0, 0.0], [1.0, 1.0]])),
    lambda lib: D(lib).Wishart(3.0, covariance_matrix=lib.eye(2)).log_prob(
        -lib.eye(2)),
])
def test_validation_errors(make):
    _same_error(make)
