"""Transforms: inverses undo the forward maps, log-dets equal log |det J| of finite-difference
Jacobians, gradients against finite differences, caching, equality, shapes, the new
constraints and biject_to/transform_to landing inside their constraints; error texts."""
import math

import numpy as np
import pytest

import ember
from ember.distributions import biject_to, constraints, transform_to
from ember.distributions import transforms as T
from ember.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
from tests.helpers import check_grad


def _t(values, grad=False):
    return ember.tensor(values, dtype=ember.float64, requires_grad=grad)


X = np.array([[0.3, -1.2, 0.7], [1.5, 0.1, -0.4]])

ELEMENTWISE = {
    "exp": (T.ExpTransform(), X),
    "power": (T.PowerTransform(_t([0.5, 2.0, -1.5])), np.abs(X) + 0.5),
    "sigmoid": (T.SigmoidTransform(), X),
    "softplus": (T.SoftplusTransform(), X),
    "tanh": (T.TanhTransform(), X),
    "affine": (T.AffineTransform(_t([1.0, -2.0, 0.5]), _t([2.0, -0.5, 3.0])), X),
    "compose": (T.ComposeTransform([T.AffineTransform(0.5, -2.0), T.ExpTransform()]), X),
    "inverse_sigmoid": (T.SigmoidTransform().inv, 1 / (1 + np.exp(-X))),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_elementwise_log_det_is_log_of_the_derivative(name):
    t, x = ELEMENTWISE[name]
    eps = 1e-6
    numeric = (t(_t(x + eps)).numpy() - t(_t(x - eps)).numpy()) / (2 * eps)
    got = t.log_abs_det_jacobian(_t(x), t(_t(x))).numpy()
    np.testing.assert_allclose(got, np.log(np.abs(numeric)), rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(t.inv(t(_t(x))).numpy(), x, rtol=1e-10, atol=1e-12)


def _numeric_log_det(fn, x, eps=1e-6):
    """log |det| of the finite-difference Jacobian of ``fn`` (vector to vector) at ``x``."""
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        columns.append((fn(x + step) - fn(x - step)) / (2 * eps))
    return np.linalg.slogdet(np.stack(columns, -1))[1]


def test_stick_breaking_log_det_and_inverse():
    t = T.StickBreakingTransform()
    x = np.array([0.3, -1.2, 0.7])
    y = t(_t(x))
    assert abs(y.sum().item() - 1) < 1e-12 and bool((y > 0).all())
    # the first K-1 coordinates determine the point of the simplex
    expected = _numeric_log_det(lambda v: t(_t(v)).numpy()[:-1], x)
    assert t.log_abs_det_jacobian(_t(x), y).item() == pytest.approx(expected, rel=1e-7)
    np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-10)
    # zeros map to the uniform point
    np.testing.assert_allclose(t(_t([0.0, 0.0, 0.0])).numpy(), [0.25] * 4, rtol=1e-12)


def test_corr_cholesky_log_det_and_inverse():
    t = T.CorrCholeskyTransform()
    x = np.array([0.3, -1.2, 0.7, 0.2, -0.5, 1.1])
    y = t(_t(x))
    assert y.shape == (4, 4)
    np.testing.assert_allclose((y ** 2).sum(-1).numpy(), np.ones(4), rtol=1e-12)
    assert bool(constraints.corr_cholesky.check(y))
    expected = _numeric_log_det(lambda v: tril_matrix_to_vec(t(_t(v)), diag=-1).numpy(), x)
    assert t.log_abs_det_jacobian(_t(x), y).item() == pytest.approx(expected, rel=1e-6)
    np.testing.assert_allclose(t.inv(y).numpy(), x, rtol=1e-9)


def test_matrix_transforms_land_in_their_codomains():
    x = _t([[0.3, 2.0, -1.0], [1.5, 0.1, 4.0], [-0.4, 0.9, -2.0]])
    low = T.LowerCholeskyTransform()(x)
    np.testing.assert_allclose(low.numpy(), np.tril(x.numpy(), -1) + np.diag(np.exp(
        np.diag(x.numpy()))))
    pd = T.PositiveDefiniteTransform()(x)
    np.testing.assert_allclose(pd.numpy(), low.numpy() @ low.numpy().T, rtol=1e-12)
    assert bool(constraints.positive_definite.check(pd))
    np.testing.assert_allclose(T.PositiveDefiniteTransform().inv(pd).numpy(),
                               np.tril(x.numpy()), rtol=1e-10, atol=1e-12)
    soft = T.SoftmaxTransform()(x)
    e = np.exp(x.numpy())
    np.testing.assert_allclose(soft.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-12)


def test_tril_vector_round_trip():
    vec = _t(np.arange(1.0, 7.0))
    mat = vec_to_tril_matrix(vec)
    np.testing.assert_array_equal(mat.numpy(), [[1, 0, 0], [2, 3, 0], [4, 5, 6]])
    np.testing.assert_array_equal(tril_matrix_to_vec(mat).numpy(), np.arange(1.0, 7.0))
    np.testing.assert_array_equal(vec_to_tril_matrix(vec[:3], diag=-1).numpy(),
                                  [[0, 0, 0], [1, 0, 0], [2, 3, 0]])
    with pytest.raises(ValueError, match="cannot be expressed as the lower triangular"):
        vec_to_tril_matrix(_t([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"diag \(3\) provided is outside \[-3, 2\]"):
        tril_matrix_to_vec(mat, diag=3)


@pytest.mark.parametrize("make", [
    lambda: T.StickBreakingTransform(), lambda: T.CorrCholeskyTransform(),
    lambda: T.TanhTransform(), lambda: T.SoftplusTransform(),
    lambda: T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=-1, lengths=[2, 1]),
    lambda: T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.SigmoidTransform()], -1),
])
def test_gradients_by_finite_differences(make):
    x = [0.3, -1.2, 0.7]
    check_grad(lambda v: make()(v), x)
    check_grad(lambda v: make().log_abs_det_jacobian(v, make()(v)), x)


def test_cat_and_stack_slice_by_slice():
    x = _t(X)
    cat = T.CatTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=1, lengths=[1, 2])
    expected = np.concatenate([np.exp(X[:, :1]), 1 + 2 * X[:, 1:]], 1)
    np.testing.assert_allclose(cat(x).numpy(), expected)
    np.testing.assert_allclose(cat.log_abs_det_jacobian(x, cat(x)).numpy(),
                               np.concatenate([X[:, :1], np.full((2, 2), math.log(2))], 1))
    stack = T.StackTransform([T.ExpTransform(), T.AffineTransform(1.0, 2.0)], dim=0)
    np.testing.assert_allclose(stack(x).numpy(), np.stack([np.exp(X[0]), 1 + 2 * X[1]]))
    assert cat.domain.event_dim == 0 and cat.bijective
    with pytest.raises(AssertionError, match=r"x.size\(1\) = 3 must equal length 4"):
        T.CatTransform([T.ExpTransform()] * 2, dim=1, lengths=[2, 2])(x)
    with pytest.raises(AssertionError, match="All elements of tseq must be Transform"):
        T.StackTransform([1])


def test_caching_and_identity():
    t = T.ExpTransform(cache_size=1)
    x = _t([0.5])
    y = t(x)
    assert t(x) is y and t.inv(y) is x
    assert T.ExpTransform()(x) is not T.ExpTransform()(x)
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    assert T.ComposeTransform([T.ExpTransform()], cache_size=1).parts[0]._cache_size == 1
    assert T.identity_transform(x) is x and T.identity_transform.bijective
    assert T.identity_transform.log_abs_det_jacobian(x, x).numpy().tolist() == [0.0]
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=3)
    with pytest.raises(NotImplementedError, match="with_cache is not implemented"):
        _NoCache(2).with_cache(1)


class _NoCache(T.Transform):
    def __init__(self, k):
        super().__init__()
        self.k = k


def test_equality_signs_and_shapes():
    assert T.ExpTransform() == T.ExpTransform()
    assert T.ExpTransform().inv == T.ExpTransform().inv
    assert T.PowerTransform(2.0) == T.PowerTransform(2.0)
    assert T.PowerTransform(2.0) != T.PowerTransform(3.0)
    assert T.AffineTransform(0.0, _t([1.0, 2.0])) == T.AffineTransform(0.0, _t([1.0, 2.0]))
    assert T.AffineTransform(0.0, -2.0).sign == -1 and T.AffineTransform(0.0, 0.0).sign == 0
    assert T.ComposeTransform([T.AffineTransform(0.0, -1.0), T.ExpTransform()]).sign == -1
    assert T.ExpTransform().inv.sign == 1
    with pytest.raises(NotImplementedError):
        T.SoftmaxTransform().sign
    assert T.StickBreakingTransform().forward_shape((2, 3)) == (2, 4)
    assert T.CorrCholeskyTransform().forward_shape((5, 6)) == (5, 4, 4)
    assert T.CorrCholeskyTransform().inverse_shape((5, 4, 4)) == (5, 6)
    assert T.PowerTransform(_t([1.0, 2.0])).forward_shape((3, 1)) == (3, 2)
    assert T.ReshapeTransform((6,), (2, 3)).inv.forward_shape((4, 2, 3)) == (4, 6)
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers"):
        T.ReshapeTransform((6,), (4,))
    with pytest.raises(ValueError, match="Input is not a flattened lower-diagonal number"):
        T.CorrCholeskyTransform().forward_shape((4,))
    with pytest.raises(ValueError, match="Please use either .domain.event_dim"):
        T.ReshapeTransform((4,), (2, 2)).event_dim


def test_compose_domains_widen_to_the_events():
    t = T.ComposeTransform([T.ExpTransform(), T.StickBreakingTransform()])
    assert t.domain.event_dim == 1 and t.codomain.event_dim == 1
    assert repr(t.domain) == "IndependentConstraint(Real(), 1)"
    x = _t([[0.3, -1.2], [0.5, 0.1]])
    y = t(x)
    # the exp's log-det is summed over the event before adding stick breaking's
    expected = x.sum(-1) + T.StickBreakingTransform().log_abs_det_jacobian(x.exp(), y)
    np.testing.assert_allclose(t.log_abs_det_jacobian(x, y).numpy(), expected.numpy())
    assert repr(t) == "ComposeTransform(\n    ExpTransform(),\n    StickBreakingTransform()\n)"


def test_new_constraints():
    assert constraints.one_hot.check(_t([[0.0, 1.0], [1.0, 1.0]])).tolist() == [True, False]
    assert constraints.multinomial(3).check(_t([[1.0, 2.0], [2.0, 2.0]])).tolist() == \
        [True, False]
    assert constraints.square.check(ember.zeros(2, 3, 3)).tolist() == [True, True]
    assert constraints.square.check(ember.zeros(3, 2)).tolist() is False
    assert constraints.integer_less_than(2).check(_t([1.0, 2.5, 3.0])).tolist() == \
        [True, False, False]
    assert constraints.corr_cholesky.check(ember.eye(3)).item()
    assert not constraints.corr_cholesky.check(2 * ember.eye(3)).item()
    cat = constraints.cat([constraints.positive, constraints.real], dim=0, lengths=[1, 2])
    assert cat.check(_t([1.0, -1.0, -2.0])).tolist() == [True, True, True]
    assert cat.check(_t([-1.0, -1.0, -2.0])).tolist() == [False, True, True]
    stack = constraints.stack([constraints.positive, constraints.unit_interval], dim=-1)
    assert stack.check(_t([[1.0, 0.5], [1.0, 2.0]])).tolist() == [[True, True], [True, False]]
    mixture = constraints.MixtureSameFamilyConstraint(constraints.positive)
    assert mixture.check(_t([1.0, -1.0])).tolist() == [True, False]


@pytest.mark.parametrize("constraint", [
    constraints.real, constraints.positive, constraints.greater_than(2.0),
    constraints.less_than(-1.0), constraints.interval(-2.0, 5.0), constraints.unit_interval,
    constraints.simplex, constraints.corr_cholesky,
    constraints.independent(constraints.positive, 1),
    constraints.cat([constraints.positive, constraints.unit_interval], dim=-1, lengths=[1, 2]),
    constraints.stack([constraints.positive, constraints.real, constraints.less_than(0.0)], -1),
], ids=lambda c: repr(c)[:30])
def test_biject_to_lands_inside_and_inverts(constraint):
    t = biject_to(constraint)
    assert t.bijective
    x = _t(np.random.default_rng(0).standard_normal((4, 3)))
    y = t(x)
    assert bool(constraint.check(y).all())
    np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), rtol=1e-8, atol=1e-10)
    assert bool(constraint.check(transform_to(constraint)(x)).all())


def test_transform_to_matrices_and_unknown_constraints():
    x = _t(np.random.default_rng(1).standard_normal((2, 3, 3)))
    assert bool(constraints.positive_definite.check(transform_to(constraints.positive_definite)(x))
                .all())
    assert bool(constraints.lower_cholesky.check(transform_to(constraints.lower_cholesky)(x))
                .all())
    with pytest.raises(NotImplementedError, match="Cannot transform _LowerCholesky constraints"):
        biject_to(constraints.lower_cholesky)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint"):
        biject_to.register(int, lambda c: None)
