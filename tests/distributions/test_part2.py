"""The later distributions without torch: sample moments over 20000 draws against closed
forms, supports and dtypes of samples, reparameterized gradients, log_prob gradients by
finite differences, enumerate_support, and the error paths."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.distributions import (Binomial, Categorical, Chi2, ContinuousBernoulli,
                                 FisherSnedecor, GeneralizedPareto, Geometric, LKJCholesky,
                                 LowRankMultivariateNormal, MixtureSameFamily, Multinomial,
                                 NegativeBinomial, Normal, OneHotCategorical,
                                 OneHotCategoricalStraightThrough, Poisson, StudentT,
                                 VonMises, Wishart, constraints, kl_divergence)

N = 20000


def _t(values, dtype=ember.float64, grad=False):
    return ember.tensor(values, dtype=dtype, requires_grad=grad)


def _kinds(dtype):
    probs = _t([[0.1, 0.6, 0.3], [0.5, 0.2, 0.3]], dtype)
    return {
        "poisson": Poisson(_t([0.5, 4.0], dtype)),
        "geometric": Geometric(probs=_t([0.3, 0.8], dtype)),
        "binomial": Binomial(_t([5.0, 12.0], dtype), probs=_t([0.3, 0.8], dtype)),
        "negbin": NegativeBinomial(_t([2.5, 6.0], dtype), probs=_t([0.3, 0.6], dtype)),
        "multinomial": Multinomial(6, probs=probs),
        "onehot": OneHotCategorical(probs=probs),
        "chi2": Chi2(_t([1.5, 6.0], dtype)),
        "student": StudentT(_t([5.0, 9.0], dtype), _t([1.0, -2.0], dtype),
                            _t([0.5, 2.0], dtype)),
        "fisher": FisherSnedecor(_t([4.0, 10.0], dtype), _t([20.0, 30.0], dtype)),
        "cb": ContinuousBernoulli(probs=_t([0.2, 0.5, 0.9], dtype)),
        "gpd": GeneralizedPareto(_t([0.0, 1.0], dtype), _t([1.0, 0.5], dtype),
                                 _t([-0.3, 0.15], dtype)),
        "lowrank": LowRankMultivariateNormal(_t([1.0, -1.0, 0.0], dtype),
                                             _t([[1.0], [0.5], [-0.5]], dtype),
                                             _t([0.5, 1.0, 2.0], dtype)),
        "mixture": MixtureSameFamily(Categorical(probs=_t([0.3, 0.7], dtype)),
                                     Normal(_t([-2.0, 1.0], dtype), _t([0.5, 1.0], dtype))),
        "wishart": Wishart(_t(6.0, dtype), covariance_matrix=_t([[1.0, 0.3], [0.3, 0.5]],
                                                                dtype)),
    }


def _sample(d, shape):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Wishart's "Singular sample detected."
        return d.sample(shape)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("name", list(_kinds(ember.float64)) + ["vonmises", "lkj"])
def test_shape_dtype_support(name, dtype):
    kinds = dict(_kinds(dtype), vonmises=VonMises(_t([0.0, 2.0], dtype), _t([0.5, 4.0], dtype)),
                 lkj=LKJCholesky(3, _t([0.5, 2.0], dtype)))
    d = kinds[name]
    x = _sample(d, (3, 2))
    assert x.shape == d._extended_shape((3, 2))
    assert x.dtype == dtype
    if name != "vonmises":  # von Mises samples are angles in [-pi, pi)
        assert bool(d.support.check(x).all())
    else:
        assert bool(((x >= -math.pi) & (x < math.pi)).all())
    assert not x.requires_grad


def test_scalar_parameters_sample_zero_dimensional_values():
    # (ember.poisson / ember.binomial of a 0-d tensor: NumPy's generator returns a scalar)
    for d in (Poisson(3.0), Binomial(5, probs=_t(0.3)), NegativeBinomial(2.0, probs=_t(0.3)),
              Geometric(probs=0.4), Chi2(2.0), StudentT(3.0), FisherSnedecor(2.0, 3.0),
              ContinuousBernoulli(probs=0.3), GeneralizedPareto(0.0, 1.0, 0.2),
              VonMises(_t(0.0), _t(1.0))):
        x = d.sample()
        assert x.shape == ()
        if not isinstance(d, VonMises):  # (its support, the real line, says nothing here)
            assert bool(d.support.check(x))
    assert ember.poisson(_t(3.0)).shape == () and ember.binomial(_t(3.0), _t(0.5)).shape == ()


@pytest.mark.parametrize("name", ["poisson", "geometric", "binomial", "negbin", "multinomial",
                                  "onehot", "chi2", "student", "fisher", "cb", "gpd",
                                  "lowrank", "mixture", "wishart"])
def test_moments(name):
    ember.manual_seed(0)
    d = _kinds(ember.float64)[name]
    x = _sample(d, (N,)).numpy()
    mean, var = d.mean.detach().numpy(), d.variance.detach().numpy()
    np.testing.assert_allclose(x.mean(0), mean, atol=5 * np.sqrt(var.max() / N) + 1e-3)
    np.testing.assert_allclose(x.var(0), var, rtol=0.1, atol=1e-3)


def test_closed_form_moments():
    # Student t: var = scale^2 df / (df - 2); F: mean = df2 / (df2 - 2)
    d = StudentT(_t([5.0]), _t([1.0]), _t([2.0]))
    np.testing.assert_allclose(d.variance.numpy(), [4 * 5 / 3])
    np.testing.assert_allclose(FisherSnedecor(_t([4.0]), _t([6.0])).mean.numpy(), [1.5])
    assert math.isnan(float(StudentT(_t([0.5])).mean))
    assert math.isinf(float(StudentT(_t([1.5])).variance))
    np.testing.assert_allclose(Binomial(10, probs=_t([0.3])).variance.numpy(), [2.1])
    np.testing.assert_allclose(Geometric(probs=_t([0.25])).mean.numpy(), [3.0])
    np.testing.assert_allclose(NegativeBinomial(_t([4.0]), probs=_t([0.5])).mean.numpy(),
                               [4.0])


def test_lowrank_sample_covariance_and_matrices():
    ember.manual_seed(1)
    d = _kinds(ember.float64)["lowrank"]
    cov = d.covariance_matrix.numpy()
    np.testing.assert_allclose(cov, [[1.5, 0.5, -0.5], [0.5, 1.25, -0.25],
                                     [-0.5, -0.25, 2.25]])
    np.testing.assert_allclose(np.cov(d.sample((N,)).numpy().T), cov, atol=0.08)
    np.testing.assert_allclose(d.precision_matrix.numpy(), np.linalg.inv(cov), rtol=1e-10)
    tril = d.scale_tril.numpy()
    np.testing.assert_allclose(tril @ tril.T, cov, rtol=1e-10)


def test_multinomial_counts_sum_to_total():
    ember.manual_seed(2)
    x = Multinomial(7, logits=_t([[0.0, 1.0, -1.0]])).sample((50,))
    np.testing.assert_array_equal(x.sum(-1).numpy(), np.full((50, 1), 7.0))


def test_von_mises_circular_moments():
    ember.manual_seed(3)
    loc, kappa = 1.0, 2.0
    x = VonMises(_t([loc]), _t([kappa])).sample((N,)).numpy()
    # E[cos(x - loc)] = I1(kappa) / I0(kappa); E[sin(x - loc)] = 0
    ratio = 0.697774657964  # I1(2) / I0(2)
    np.testing.assert_allclose(np.cos(x - loc).mean(), ratio, atol=0.01)
    np.testing.assert_allclose(np.sin(x - loc).mean(), 0.0, atol=0.01)
    np.testing.assert_allclose(float(VonMises(_t([loc]), _t([kappa])).variance), 1 - ratio,
                               atol=1e-6)


def test_von_mises_small_concentration_sample_finishes():
    ember.manual_seed(4)
    x = VonMises(_t([0.0], ember.float32), _t([1e-6], ember.float32)).sample((200,))
    assert x.dtype == ember.float32 and float(x.abs().max()) <= math.pi


@pytest.mark.parametrize("eta", [1.0, 2.0])
def test_lkj_cholesky_correlations(eta):
    # (PyTorch 2.13's draws fail this for the correlations with the third variable)
    ember.manual_seed(5)
    dim = 3
    L = LKJCholesky(dim, _t(eta)).sample((N,)).numpy()
    corr = L @ np.swapaxes(L, -1, -2)
    np.testing.assert_allclose(np.diagonal(corr, axis1=-2, axis2=-1), 1.0, atol=1e-10)
    # each off-diagonal correlation is 2 Beta(b, b) - 1, b = eta - 1 + dim / 2
    b = eta - 1 + dim / 2
    off = corr[:, [1, 2, 2], [0, 0, 1]]
    np.testing.assert_allclose(off.mean(0), 0.0, atol=0.02)
    np.testing.assert_allclose(off.var(0), 1 / (2 * b + 1), rtol=0.08)


def test_lkj_log_prob_integrates_to_one_in_two_dimensions():
    # in two dimensions L = [[1, 0], [r, sqrt(1 - r^2)]] has one free entry, r: the density
    # over it must integrate to 1
    eta = 1.7
    r = np.linspace(-0.999, 0.999, 4001)
    L = np.zeros((r.size, 2, 2))
    L[:, 0, 0], L[:, 1, 0], L[:, 1, 1] = 1.0, r, np.sqrt(1 - r ** 2)
    dens = LKJCholesky(2, _t(eta)).log_prob(_t(L)).exp().numpy()
    np.testing.assert_allclose(np.trapezoid(dens, r), 1.0, atol=2e-3)


def test_wishart_sample_mean_and_warning():
    ember.manual_seed(6)
    d = _kinds(ember.float64)["wishart"]
    with pytest.warns(UserWarning, match="Singular sample detected"):
        x = d.rsample((N,))
    np.testing.assert_allclose(x.mean(0).numpy(), d.mean.numpy(), rtol=0.05, atol=0.03)


def test_mixture_sample_picks_components():
    ember.manual_seed(7)
    comp = Normal(_t([[-100.0, 100.0]]), _t([[1e-3, 1e-3]]))
    d = MixtureSameFamily(Categorical(probs=_t([[0.25, 0.75]])), comp)
    x = d.sample((4000,)).numpy()
    assert x.shape == (4000, 1)
    np.testing.assert_allclose((x > 0).mean(), 0.75, atol=0.03)


# ---- reparameterized samples --------------------------------------------------------------
@pytest.mark.parametrize("make,n_params", [
    (lambda a, b: StudentT(a + 3.0, b, a), 2),
    (lambda a, b: Chi2(a * 3.0), 1),
    (lambda a, b: FisherSnedecor(a * 4.0, b * 6.0), 2),
    (lambda a, b: ContinuousBernoulli(probs=a / 2), 1),
    (lambda a, b: GeneralizedPareto(b, a, b - 1.5), 2),
    (lambda a, b: LowRankMultivariateNormal(b.expand(2), a.expand(2, 1), a.expand(2)), 2),
    (lambda a, b: Wishart(a + 3.0, covariance_matrix=ember.eye(2, dtype=ember.float64) * b),
     2),
])
def test_rsample_reaches_the_parameters(make, n_params):
    a, b = _t(0.8, grad=True), _t(1.3, grad=True)
    ember.manual_seed(8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = make(a, b).rsample((5,))
    assert x.requires_grad
    x.sum().backward()
    grads = [g for g in (a.grad, b.grad) if g is not None]
    assert len(grads) == n_params
    assert all(np.isfinite(g.numpy()).all() for g in grads)


def test_student_t_rsample_gradient_in_loc_and_scale():
    loc, scale = _t([1.0], grad=True), _t([2.0], grad=True)
    ember.manual_seed(9)
    x = StudentT(_t([4.0]), loc, scale).rsample((10,))
    x.sum().backward()
    np.testing.assert_allclose(loc.grad.numpy(), [10.0])
    np.testing.assert_allclose(scale.grad.numpy(), ((x.detach() - 1.0) / 2.0).sum(0).numpy(),
                               rtol=1e-12)


def test_chi2_rsample_gradient_of_the_mean():
    df = _t([3.0], grad=True)
    ember.manual_seed(10)
    Chi2(df).rsample((N,)).mean().backward()
    np.testing.assert_allclose(df.grad.numpy(), [1.0], rtol=0.05)  # d E[x] / d df = 1


def test_straight_through_gradient_is_that_of_probs():
    probs = _t([0.2, 0.3, 0.5], grad=True)
    ember.manual_seed(11)
    x = OneHotCategoricalStraightThrough(probs=probs).rsample((4,))
    assert bool(constraints.one_hot.check(x.detach()).all())
    (x * _t([1.0, 2.0, 3.0])).sum().backward()
    # probs are normalized by their sum (1): d/dp of sum_k c_k p_k / sum(p)
    c = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(probs.grad.numpy(), 4 * (c - (c * [0.2, 0.3, 0.5]).sum()),
                               rtol=1e-10)


def test_no_rsample_where_torch_has_none():
    for d in (Poisson(_t([1.0])), Binomial(3, probs=_t([0.5])), VonMises(_t(0.0), _t(1.0)),
              LKJCholesky(2), OneHotCategorical(probs=_t([0.5, 0.5])),
              _kinds(ember.float64)["mixture"]):
        assert not d.has_rsample
        with pytest.raises(NotImplementedError):
            d.rsample()


# ---- log_prob gradients by finite differences ----------------------------------------
@pytest.mark.parametrize("fn,args", [
    (lambda r, v: Poisson(r).log_prob(v.detach().round()), ([0.7, 2.0], [1.0, 3.0])),
    (lambda p, v: Geometric(probs=p).log_prob(v.detach().round()), ([0.3, 0.6], [1.0, 4.0])),
    (lambda p, v: Binomial(5, logits=p).log_prob(v.detach().round()), ([0.3, -1.0],
                                                                      [1.0, 4.0])),
    (lambda n, p: NegativeBinomial(n, logits=p).log_prob(ember.tensor(
        [2.0, 0.0], dtype=ember.float64)), ([1.5, 3.0], [0.2, -0.4])),
    (lambda df, v: StudentT(df, v * 0.5, df).log_prob(v), ([2.5, 4.0], [0.3, -1.2])),
    (lambda a, b: FisherSnedecor(a, b).log_prob(a / b), ([2.5, 4.0], [3.0, 1.2])),
    (lambda p, v: ContinuousBernoulli(probs=p).log_prob(v), ([0.2, 0.4999], [0.3, 0.7])),
    (lambda p, v: ContinuousBernoulli(logits=p).entropy() + ContinuousBernoulli(
        logits=p).mean, ([1.5, 0.001], [0.3, 0.7])),
    (lambda loc, k: VonMises(loc, k).log_prob(loc * 2), ([0.3, -1.0], [0.7, 5.0])),
    (lambda s, c: GeneralizedPareto(0.0, s, c).log_prob(s), ([1.5, 0.8], [0.3, -0.2])),
    (lambda w, d: LowRankMultivariateNormal(w * 0.1, w.unsqueeze(-1), d).log_prob(w),
     ([0.3, -1.0], [0.7, 2.0])),
    (lambda c, v: LKJCholesky(2, c.sum()).log_prob(ember.tensor(
        [[1.0, 0.0], [0.6, 0.8]], dtype=ember.float64)), ([0.7, 1.2], [0.0, 0.0])),
])
def test_gradcheck(fn, args):
    inputs = [_t(a, grad=True) for a in args]
    assert ember.autograd.gradcheck(fn, inputs)


def test_wishart_kl_gradcheck_in_both_distributions():
    def fn(df_p, a, df_q):
        cov = a @ a.mT + ember.eye(2, dtype=ember.float64)
        p = Wishart(df_p, covariance_matrix=cov)
        q = Wishart(df_q, covariance_matrix=ember.eye(2, dtype=ember.float64) * 2)
        return kl_divergence(p, q)
    assert ember.autograd.gradcheck(fn, [_t(3.5, grad=True), _t([[0.3, 0.1], [-0.2, 0.5]],
                                                                 grad=True), _t(4.5, grad=True)])


def test_wishart_log_prob_gradcheck():
    def fn(df, a):
        cov = a @ a.mT + ember.eye(2, dtype=ember.float64)
        value = ember.tensor([[2.0, 0.5], [0.5, 1.0]], dtype=ember.float64)
        return Wishart(df, covariance_matrix=cov).log_prob(value)
    assert ember.autograd.gradcheck(fn, [_t(3.5, grad=True),
                                         _t([[0.3, 0.1], [-0.2, 0.5]], grad=True)])


# ---- exact values from the mathematics ------------------------------------------------
def test_enumerate_support_sums_to_one():
    d = Binomial(_t([4.0, 4.0]), probs=_t([0.3, 0.9]))
    total = d.log_prob(d.enumerate_support()).exp().sum(0)
    np.testing.assert_allclose(total.numpy(), [1.0, 1.0], rtol=1e-12)
    d = OneHotCategorical(probs=_t([[0.2, 0.8], [0.5, 0.5]]))
    values = d.enumerate_support()
    assert values.shape == (2, 2, 2)
    np.testing.assert_allclose(d.log_prob(values).exp().sum(0).numpy(), [1.0, 1.0])


def test_values_from_the_formulas():
    # Poisson(2) at 3: e^-2 2^3 / 3!
    np.testing.assert_allclose(float(Poisson(_t(2.0)).log_prob(_t(3.0))),
                               math.log(math.exp(-2) * 8 / 6), rtol=1e-12)
    # Geometric(0.25) at 2: 0.75^2 0.25
    np.testing.assert_allclose(float(Geometric(probs=_t(0.25)).log_prob(_t(2.0))),
                               math.log(0.75 ** 2 * 0.25), rtol=1e-12)
    # Chi2(2) is Exponential(1/2)
    np.testing.assert_allclose(float(Chi2(_t(2.0)).log_prob(_t(3.0))),
                               math.log(0.5) - 1.5, rtol=1e-12)
    # StudentT(1) is Cauchy
    np.testing.assert_allclose(float(StudentT(_t(1.0)).log_prob(_t(2.0))),
                               -math.log(math.pi * 5), rtol=1e-12)
    # GeneralizedPareto(0, s, 0) is Exponential(1 / s)
    np.testing.assert_allclose(float(GeneralizedPareto(_t(0.0), _t(2.0), _t(0.0)).log_prob(
        _t(1.0))), math.log(0.5) - 0.5, rtol=1e-12)
    # ContinuousBernoulli(0.5) is Uniform(0, 1)
    np.testing.assert_allclose(float(ContinuousBernoulli(probs=_t(0.5)).log_prob(_t(0.3))),
                               0.0, atol=1e-12)
    # KL(Poisson(a) || Poisson(b)) = a log(a / b) - a + b
    np.testing.assert_allclose(float(kl_divergence(Poisson(_t(2.0)), Poisson(_t(1.0)))),
                               2 * math.log(2) - 1, rtol=1e-12)


def test_lowrank_kl_matches_full_covariance_kl():
    from ember.distributions import MultivariateNormal
    p = LowRankMultivariateNormal(_t([0.0, 1.0]), _t([[1.0], [0.5]]), _t([1.0, 2.0]))
    q = LowRankMultivariateNormal(_t([1.0, 0.0]), _t([[0.2], [-0.5]]), _t([0.5, 1.5]))
    p_full = MultivariateNormal(p.loc, covariance_matrix=p.covariance_matrix)
    q_full = MultivariateNormal(q.loc, covariance_matrix=q.covariance_matrix)
    expected = float(kl_divergence(p_full, q_full))
    for a, b in ((p, q), (p_full, q), (p, q_full)):
        np.testing.assert_allclose(float(kl_divergence(a, b)), expected, rtol=1e-10)


# ---- errors -------------------------------------------------------------------------
@pytest.mark.parametrize("make,error,message", [
    (lambda: Binomial(3), ValueError, "Either `probs` or `logits` must be specified"),
    (lambda: Geometric(probs=_t([0.0])), ValueError, "to be positive but found invalid"),
    (lambda: Multinomial(_t(3), probs=_t([0.5, 0.5])), NotImplementedError,
     "inhomogeneous total_count is not supported"),
    (lambda: Binomial(_t([2.0, 3.0]), probs=_t([0.5, 0.5])).enumerate_support(),
     NotImplementedError, "Inhomogeneous total count not supported by `enumerate_support`."),
    (lambda: Poisson(_t([-1.0])), ValueError, "to satisfy the constraint"),
    (lambda: ContinuousBernoulli(probs=_t([1.5]), validate_args=True), ValueError,
     "The parameter probs has invalid values"),
    (lambda: LKJCholesky(1), ValueError, "Expected dim to be an integer greater than or "
                                         "equal to 2. Found dim=1."),
    (lambda: Wishart(_t(0.5), covariance_matrix=ember.eye(2)), ValueError,
     "Value of df=0.5 expected to be greater than ndim - 1 = 1."),
    (lambda: Wishart(3.0), AssertionError, "Exactly one of covariance_matrix"),
    (lambda: LowRankMultivariateNormal(ember.zeros(3), ember.ones(2, 1), ember.ones(3)),
     ValueError, "cov_factor must be a batch of matrices with shape 3 x m"),
    (lambda: MixtureSameFamily(Normal(0.0, 1.0), Normal(ember.zeros(2), ember.ones(2))),
     ValueError, "needs to be an  instance of torch.distributions.Categorical"),
    (lambda: kl_divergence(Binomial(3, probs=_t(0.5)), Binomial(4, probs=_t(0.5))),
     NotImplementedError, "KL between Binomials where q.total_count > p.total_count"),
    (lambda: Poisson(_t([1.0])).log_prob(_t([0.5])), ValueError, "to be within the support"),
    (lambda: Poisson(_t([1.0])).entropy(), NotImplementedError, ""),
])
def test_errors(make, error, message):
    with pytest.raises(error) as info:
        make()
    assert message in str(info.value)


def test_validation_can_be_turned_off():
    assert float(Poisson(_t([1.0]), validate_args=False).log_prob(_t([0.5]))) < 0
    # beyond the upper end 1 / 0.5 = 2 of the support: log1p(-1.5) is NaN, as in PyTorch
    d = GeneralizedPareto(0.0, 1.0, -0.5, validate_args=False)
    assert math.isnan(float(d.log_prob(_t(3.0))))
