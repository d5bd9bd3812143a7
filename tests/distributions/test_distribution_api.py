"""The Distribution interface: densities against closed forms, KL against Monte Carlo,
validation errors (PyTorch's wording), expand, lazy parameters, KL registration."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.distributions import (Bernoulli, Beta, Categorical, Dirichlet, Distribution, Gamma,
                                 MultivariateNormal, Normal, Uniform, constraints,
                                 kl_divergence, register_kl)
from tests.helpers import check_grad


def _t(values, grad=False):
    return ember.tensor(values, dtype=ember.float64, requires_grad=grad)


def test_log_probs_against_closed_forms():
    x = np.array([0.3, 1.7])
    got = Normal(_t([0.0, 1.0]), _t([1.0, 2.0])).log_prob(_t(x)).numpy()
    expected = -0.5 * ((x - [0.0, 1.0]) / [1.0, 2.0]) ** 2 - np.log([1.0, 2.0]) \
        - 0.5 * math.log(2 * math.pi)
    np.testing.assert_allclose(got, expected, rtol=1e-14)
    a, b = 2.5, 1.5
    got = Gamma(_t(a), _t(b)).log_prob(_t(x)).numpy()
    expected = a * math.log(b) + (a - 1) * np.log(x) - b * x - math.lgamma(a)
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    got = Beta(_t(a), _t(b)).log_prob(_t([0.3])).numpy()
    expected = (a - 1) * math.log(0.3) + (b - 1) * math.log(0.7) + math.lgamma(a + b) \
        - math.lgamma(a) - math.lgamma(b)
    np.testing.assert_allclose(got, [expected], rtol=1e-13)
    cov = np.array([[2.0, 0.3], [0.3, 0.5]])
    got = MultivariateNormal(_t([0.0, 0.0]), _t(cov)).log_prob(_t([0.4, -0.2])).numpy()
    v = np.array([0.4, -0.2])
    expected = -0.5 * (v @ np.linalg.solve(cov, v) + np.log(np.linalg.det(cov))
                       + 2 * math.log(2 * math.pi))
    np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_log_prob_gradients_by_finite_differences():
    v = np.array([0.2, 0.9])
    check_grad(lambda a, b: Gamma(a, b).log_prob(_t(v)), [0.7, 2.0], [1.3, 0.4])
    check_grad(lambda a, b: Beta(a, b).entropy(), [0.7, 2.0], [1.3, 0.4])
    check_grad(lambda c: Dirichlet(c).log_prob(_t([0.2, 0.3, 0.5])), [0.5, 1.5, 3.0])
    check_grad(lambda m: MultivariateNormal(_t([0.1, 0.2]), precision_matrix=m @ m.mT
                                            + ember.eye(2, dtype=ember.float64))
               .log_prob(_t([0.5, -1.0])), [[1.0, 0.2], [0.3, 0.8]])


@pytest.mark.parametrize("make_p,make_q", [
    (lambda: Normal(_t(0.3), _t(1.2)), lambda: Normal(_t(-0.5), _t(0.7))),
    (lambda: Gamma(_t(2.0), _t(1.5)), lambda: Gamma(_t(3.0), _t(0.8))),
    (lambda: Beta(_t(2.0), _t(1.5)), lambda: Beta(_t(0.9), _t(2.8))),
    (lambda: Dirichlet(_t([1.0, 2.0, 0.7])), lambda: Dirichlet(_t([2.0, 0.5, 1.0]))),
    (lambda: Uniform(_t(0.2), _t(0.8)), lambda: Uniform(_t(0.0), _t(1.5))),
    (lambda: Beta(_t(2.0), _t(3.0)), lambda: Normal(_t(0.3), _t(0.5))),
    (lambda: Uniform(_t(0.5), _t(2.0)), lambda: Gamma(_t(2.0), _t(1.0))),
    (lambda: MultivariateNormal(_t([0.0, 1.0]), _t([[1.0, 0.2], [0.2, 0.5]])),
     lambda: MultivariateNormal(_t([0.5, 0.5]), scale_tril=_t([[1.2, 0.0], [0.4, 0.9]]))),
])
def test_kl_against_monte_carlo(make_p, make_q):
    p, q = make_p(), make_q()
    ember.manual_seed(0)
    x = p.sample((100000,))
    estimate = (p.log_prob(x) - q.log_prob(x)).mean(0).numpy()
    np.testing.assert_allclose(kl_divergence(p, q).numpy(), estimate, atol=0.02, rtol=0.02)


def test_discrete_kl_against_sums():
    p, q = Categorical(probs=_t([0.2, 0.5, 0.3])), Categorical(logits=_t([0.1, -1.0, 2.0]))
    qp = np.exp([0.1, -1.0, 2.0]) / np.exp([0.1, -1.0, 2.0]).sum()
    expected = np.sum([0.2, 0.5, 0.3] * np.log(np.array([0.2, 0.5, 0.3]) / qp))
    np.testing.assert_allclose(kl_divergence(p, q).numpy(), expected, rtol=1e-12)
    b = kl_divergence(Bernoulli(probs=_t(0.3)), Bernoulli(probs=_t(0.6))).numpy()
    np.testing.assert_allclose(b, 0.3 * math.log(0.5) + 0.7 * math.log(0.7 / 0.4), rtol=1e-12)
    assert kl_divergence(Bernoulli(_t(0.3)), Bernoulli(_t(0.0))).item() == math.inf


def test_validation_errors():
    with pytest.raises(ValueError, match=r"^Expected parameter scale \(Tensor of shape \(2,\)\)"
                                         r" of distribution Normal\(loc: ember.Size\(\[2\]\), "
                                         r"scale: ember.Size\(\[2\]\)\) to satisfy the "
                                         r"constraint GreaterThan\(lower_bound=0.0\), but found "
                                         r"invalid values:\ntensor\(\[ 1., -1.\]\)$"):
        Normal(ember.zeros(2), ember.tensor([1.0, -1.0]))
    with pytest.raises(ValueError, match="to be within the support"):
        Gamma(1.0, 1.0).log_prob(ember.tensor(-1.0))
    with pytest.raises(ValueError, match="Value is not broadcastable"):
        Normal(ember.zeros(2), 1.0).log_prob(ember.zeros(3))
    with pytest.raises(ValueError, match="The right-most size of value must match"):
        Dirichlet(ember.ones(3)).log_prob(ember.ones(2) / 2)
    with pytest.raises(ValueError, match="must be a Tensor"):
        Normal(0.0, 1.0).log_prob(0.5)
    with pytest.raises(ValueError, match="Either `probs` or `logits`"):
        Categorical()
    with pytest.raises(ValueError, match="Exactly one of covariance_matrix"):
        MultivariateNormal(ember.zeros(2))


def test_default_validation_switch():
    Distribution.set_default_validate_args(False)
    try:
        d = Normal(ember.zeros(1), -ember.ones(1))
        assert math.isnan(d.log_prob(ember.zeros(1)).item())
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        Normal(ember.zeros(1), -ember.ones(1))
    with pytest.raises(ValueError):
        Distribution.set_default_validate_args("yes")


def test_lazy_parameters():
    d = Bernoulli(logits=_t([0.0, 2.0]))
    assert "probs" not in d.__dict__
    np.testing.assert_allclose(d.probs.numpy(), 1 / (1 + np.exp([-0.0, -2.0])))
    assert "probs" in d.__dict__
    assert isinstance(Bernoulli.probs, property)
    logits = _t([1.0], grad=True)
    d = Bernoulli(logits=logits)
    with ember.no_grad():  # computed with gradients even under no_grad, as PyTorch
        assert d.probs.requires_grad
        assert Bernoulli(logits=logits).probs.requires_grad


def test_expand():
    d = Normal(_t([0.0, 1.0]), _t([1.0, 2.0]))
    e = d.expand((3, 2))
    assert e.batch_shape == (3, 2) and e.sample().shape == (3, 2)
    np.testing.assert_allclose(e.log_prob(_t(0.5)).numpy(), np.tile(
        d.log_prob(_t(0.5)).numpy(), (3, 1)))
    c = Categorical(probs=_t([0.3, 0.7])).expand((4,))
    assert c.batch_shape == (4,) and c.probs.shape == (4, 2)
    m = MultivariateNormal(_t([0.0, 0.0]), scale_tril=_t([[1.0, 0.0], [0.5, 1.0]])).expand((5,))
    assert m.sample().shape == (5, 2) and m.scale_tril.shape == (5, 2, 2)

    class Custom(Normal):
        def __init__(self, loc):
            super().__init__(loc, 1.0)
    with pytest.raises(NotImplementedError, match="must also define a custom .expand"):
        Custom(_t([0.0])).expand((2,))


def test_enumerate_support_and_simple_members():
    assert Bernoulli(_t([0.3, 0.4])).enumerate_support().shape == (2, 2)
    assert Categorical(logits=ember.zeros(2, 3)).enumerate_support(expand=False).shape == (3, 1)
    d = Normal(_t(0.0), _t(2.0))
    np.testing.assert_allclose(d.perplexity().numpy(), math.exp(d.entropy().item()))
    with pytest.warns(UserWarning, match="sample_n will be deprecated"):
        assert d.sample_n(4).shape == (4,)
    with pytest.raises(NotImplementedError, match="does not implement mode"):
        Distribution().mode
    assert repr(constraints.independent(constraints.positive, 1)) == \
        "IndependentConstraint(GreaterThan(lower_bound=0.0), 1)"


def test_icdf_inverts_cdf():
    d = Normal(_t([0.5]), _t([2.0]))
    u = _t([0.01, 0.3, 0.5, 0.97])
    np.testing.assert_allclose(d.cdf(d.icdf(u)).numpy(), u.numpy(), rtol=1e-12)
    d = Uniform(_t(1.0), _t(3.0))
    np.testing.assert_allclose(d.cdf(d.icdf(u)).numpy(), u.numpy(), rtol=1e-12)


def test_register_kl_dispatch_and_errors():
    class Sub(Normal):
        pass

    class SubSub(Sub):
        pass
    calls = []

    @register_kl(Sub, Normal)
    def _kl_sub_normal(p, q):
        calls.append("sub")
        return ember.tensor(1.0)
    assert kl_divergence(SubSub(0.0, 1.0), Normal(0.0, 1.0)).item() == 1.0
    assert kl_divergence(Normal(0.0, 1.0), SubSub(0.0, 1.0)).item() == 0.0
    assert calls == ["sub"]

    @register_kl(Normal, Sub)
    def _kl_normal_sub(p, q):
        return ember.tensor(2.0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kl_divergence(Sub(0.0, 1.0), Sub(0.0, 1.0))
    assert any("Ambiguous kl_divergence(Sub, Sub)" in str(w.message) for w in caught)
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for "
                                                  "p type Normal and q type Categorical"):
        kl_divergence(Normal(0.0, 1.0), Categorical(logits=ember.zeros(2)))
    with pytest.raises(NotImplementedError, match="different exponential families"):
        kl_divergence(Normal(0.0, 1.0), Bernoulli(0.5))


def test_categorical_refuses_an_empty_sample_shape():
    """PyTorch draws ``sample_shape.numel()`` categories with multinomial, which refuses 0."""
    import pytest
    import ember
    dist = ember.distributions.Categorical(ember.ones(2, 3))
    with pytest.raises(RuntimeError, match="cannot sample n_sample <= 0 samples"):
        dist.sample((0,))
    assert dist.sample((4,)).shape == (4, 2)
