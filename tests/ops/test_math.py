"""Element-wise math, reductions, linear algebra and softmax checked with ember
and NumPy only: gradients against float64 finite differences (``check_grad``),
second derivatives (``check_second_grad``), and error messages in PyTorch's
words (the strings were taken from PyTorch 2.x)."""
import math

import numpy as np
import pytest

import ember

from tests.helpers import check_grad, check_second_grad


def rnd(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def pos(*shape, seed=0, lo=0.3, hi=2.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def nonzero(*shape, seed=0, margin=0.3):
    r = rnd(*shape, seed=seed)
    return np.sign(r) * (np.abs(r) + margin)


def distinct(*shape, seed=0):
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.37 - n * 0.15).reshape(shape)


def off_integer(*shape, seed=0):
    r = np.random.default_rng(seed)
    return r.integers(-4, 4, shape) + r.choice([0.2, 0.35, 0.65, 0.8], shape)


# ---- first derivatives against finite differences -----------------------------------------
E = ember
GRAD_CASES = {
    # arithmetic, broadcasting, scalars on both sides
    "add": (lambda a, b: a + b, [rnd(3, 4), rnd(4, seed=1)]),
    "add_alpha": (lambda a, b: E.add(a, b, alpha=-2.5), [rnd(2, 1, 4), rnd(3, 1, seed=1)]),
    "sub": (lambda a, b: a - b, [rnd(3, 1), rnd(1, 4, seed=1)]),
    "sub_alpha": (lambda a, b: E.sub(a, b, alpha=3), [rnd(3, 4), rnd(4, seed=1)]),
    "mul": (lambda a, b: a * b, [rnd(2, 1, 4), rnd(3, 1, seed=1)]),
    "div": (lambda a, b: a / b, [rnd(3, 4), nonzero(4, seed=1)]),
    "rsub_scalar": (lambda a: 2 - a, [rnd(3, 4)]),
    "rdiv_scalar": (lambda a: 2 / a, [nonzero(3, 4)]),
    "rpow_scalar": (lambda a: 2 ** a, [rnd(3, 4)]),
    "rpow_fraction": (lambda a: 0.5 ** a, [rnd(3, 4)]),
    "pow_scalar": (lambda a: a ** 3, [rnd(3, 4)]),
    "pow_fraction": (lambda a: a ** 1.5, [pos(3, 4)]),
    "pow_negative": (lambda a: a ** -2, [nonzero(3, 4)]),
    "pow_tensor": (lambda a, b: a ** b, [pos(3, 4), rnd(4, seed=1)]),
    "pow_tensor_bcast_base": (lambda a, b: a ** b, [pos(4), rnd(2, 3, 1, seed=1)]),
    "remainder": (lambda a, b: a % b, [np.array([[0.3, 1.7, -2.2], [4.1, -0.4, 2.6]]),
                                       np.array([1.5, -0.9, 2.0])]),
    "neg": (lambda a: -a, [rnd(3, 4)]),
    "square": (lambda a: E.square(a), [rnd(3, 4)]),
    # unary math
    "abs": (lambda a: a.abs(), [nonzero(3, 4)]),
    "sign": (lambda a: a.sign() * a, [nonzero(3, 4)]),
    "exp": (lambda a: a.exp(), [rnd(3, 4)]),
    "exp2": (lambda a: a.exp2(), [rnd(3, 4)]),
    "log": (lambda a: a.log(), [pos(3, 4)]),
    "log2": (lambda a: a.log2(), [pos(3, 4)]),
    "log1p": (lambda a: a.log1p(), [pos(3, 4, lo=-0.7)]),
    "expm1": (lambda a: a.expm1(), [rnd(3, 4)]),
    "sqrt": (lambda a: a.sqrt(), [pos(3, 4)]),
    "rsqrt": (lambda a: a.rsqrt(), [pos(3, 4)]),
    "reciprocal": (lambda a: a.reciprocal(), [nonzero(3, 4)]),
    "sin": (lambda a: a.sin(), [rnd(3, 4)]),
    "cos": (lambda a: a.cos(), [rnd(3, 4)]),
    "tan": (lambda a: a.tan(), [pos(3, 4, lo=-1.2, hi=1.2)]),
    "tanh": (lambda a: a.tanh(), [rnd(3, 4)]),
    "sigmoid": (lambda a: a.sigmoid(), [rnd(3, 4) * 3]),
    "relu": (lambda a: a.relu(), [nonzero(3, 4)]),
    "erf": (lambda a: a.erf(), [rnd(3, 4)]),
    "floor": (lambda a: a.floor() + a, [off_integer(3, 4)]),
    "ceil": (lambda a: a.ceil() * a, [off_integer(3, 4)]),
    "round": (lambda a: a.round() * a, [off_integer(3, 4)]),
    "trunc": (lambda a: a.trunc() - a, [off_integer(3, 4)]),
    # clamp
    "clamp_min": (lambda a: a.clamp(min=-0.35), [off_integer(3, 4) / 4]),
    "clamp_max": (lambda a: a.clamp(max=0.4), [off_integer(3, 4) / 4]),
    "clamp_both": (lambda a: E.clamp(a, -0.35, 0.4), [off_integer(3, 4) / 4]),
    "clip": (lambda a: E.clip(a, -0.35, 0.4), [off_integer(3, 4) / 4]),
    "clamp_tensor": (lambda a, lo, hi: E.clamp(a, min=lo, max=hi),
                     [off_integer(3, 4) / 4, np.full(4, -0.3), np.array([0.1, 0.6, 0.9, 0.3])]),
    # binary selections and blends
    "maximum": (lambda a, b: E.maximum(a, b), [distinct(3, 4), distinct(4, seed=1) + 0.1]),
    "minimum": (lambda a, b: E.minimum(a, b), [distinct(3, 4), distinct(4, seed=1) + 0.1]),
    "lerp_scalar": (lambda a, b: E.lerp(a, b, 0.3), [rnd(3, 4), rnd(4, seed=1)]),
    "lerp_tensor": (lambda a, b, w: E.lerp(a, b, w),
                    [rnd(3, 4), rnd(4, seed=1), rnd(3, 1, seed=2)]),
    "addcmul": (lambda a, b, c: E.addcmul(a, b, c, value=0.7),
                [rnd(3, 4), rnd(4, seed=1), rnd(3, 1, seed=2)]),
    "addcdiv": (lambda a, b, c: E.addcdiv(a, b, c, value=-1.5),
                [rnd(3, 4), rnd(4, seed=1), nonzero(3, 1, seed=2)]),
    "where": (lambda a, b: E.where(a > 0, a, b), [nonzero(3, 4), rnd(4, seed=1)]),
    "where_scalar": (lambda a: E.where(a > 0, a * a, 0.5), [nonzero(3, 4)]),
    "masked_fill": (lambda a: a.masked_fill(a < 0, 2.0) * a, [nonzero(3, 4)]),
    # reductions
    "sum": (lambda a: a.sum(), [rnd(2, 3, 4)]),
    "sum_dims": (lambda a: a.sum((0, -1), keepdim=True), [rnd(2, 3, 4)]),
    "mean": (lambda a: a.mean(), [rnd(2, 3, 4)]),
    "mean_dim": (lambda a: a.mean(-2), [rnd(2, 3, 4)]),
    "prod": (lambda a: a.prod(), [pos(3, 4, lo=0.5, hi=1.5)]),
    "prod_dim": (lambda a: a.prod(1, keepdim=True), [rnd(3, 4)]),
    "prod_zeros": (lambda a: a.prod(), [np.array([[0.0, 2.0], [1.5, -1.0]])]),
    "prod_two_zeros": (lambda a: a.prod(1), [np.array([[0.0, 2.0, 0.0], [1.5, 0.0, -1.0]])]),
    "max": (lambda a: a.max(), [distinct(3, 4)]),
    "min": (lambda a: a.min(), [distinct(3, 4)]),
    "max_dim": (lambda a: a.max(1)[0], [distinct(3, 4)]),
    "min_dim": (lambda a: a.min(dim=0, keepdim=True).values, [distinct(3, 4)]),
    "amax": (lambda a: a.amax((0, 2)), [distinct(2, 3, 4)]),
    "amin": (lambda a: a.amin(-1), [distinct(2, 3, 4)]),
    "var": (lambda a: a.var(), [rnd(3, 4)]),
    "var_dim_biased": (lambda a: a.var(1, unbiased=False), [rnd(3, 4)]),
    "var_correction2": (lambda a: a.var(0, correction=2, keepdim=True), [rnd(5, 4)]),
    "std": (lambda a: a.std(), [rnd(3, 4)]),
    "std_dim": (lambda a: a.std((0, 1), correction=0), [rnd(3, 4, 2)]),
    "logsumexp": (lambda a: a.logsumexp(1), [rnd(3, 4)]),
    "logsumexp_dims": (lambda a: E.logsumexp(a, (0, 2), keepdim=True), [rnd(2, 3, 4)]),
    "norm": (lambda a: a.norm(), [rnd(3, 4)]),
    "norm_p1": (lambda a: a.norm(p=1, dim=1), [nonzero(3, 4)]),
    "norm_p3": (lambda a: E.norm(a, 3, dim=0), [nonzero(3, 4)]),
    "norm_inf": (lambda a: E.norm(a, float("inf"), dim=1), [distinct(3, 4) + 0.05]),
    "cumsum": (lambda a: a.cumsum(1), [rnd(3, 4)]),
    "cumsum_neg_dim": (lambda a: a.cumsum(-2), [rnd(3, 4)]),
    "cumprod": (lambda a: a.cumprod(1), [rnd(3, 4)]),
    "cumprod_zeros": (lambda a: a.cumprod(-1),
                      [np.array([[0.0, 2.0, -1.0, 0.5], [1.5, 0.0, 0.0, 2.0]])]),
    # linear algebra
    "mm": (lambda a, b: E.mm(a, b), [rnd(3, 4), rnd(4, 2, seed=1)]),
    "matmul_1d_1d": (lambda a, b: a @ b, [rnd(4), rnd(4, seed=1)]),
    "matmul_1d_2d": (lambda a, b: a @ b, [rnd(4), rnd(4, 3, seed=1)]),
    "matmul_2d_1d": (lambda a, b: a @ b, [rnd(3, 4), rnd(4, seed=1)]),
    "matmul_batched": (lambda a, b: a @ b, [rnd(2, 3, 4), rnd(2, 4, 2, seed=1)]),
    "matmul_broadcast": (lambda a, b: a @ b, [rnd(2, 1, 3, 4), rnd(3, 4, 2, seed=1)]),
    "matmul_3d_1d": (lambda a, b: a @ b, [rnd(2, 3, 4), rnd(4, seed=1)]),
    "bmm": (lambda a, b: E.bmm(a, b), [rnd(2, 3, 4), rnd(2, 4, 2, seed=1)]),
    "dot": (lambda a, b: E.dot(a, b), [rnd(4), rnd(4, seed=1)]),
    "mv": (lambda a, b: E.mv(a, b), [rnd(3, 4), rnd(4, seed=1)]),
    "outer": (lambda a, b: E.outer(a, b), [rnd(3), rnd(4, seed=1)]),
    "addmm": (lambda c, a, b: E.addmm(c, a, b, beta=0.5, alpha=-2),
              [rnd(3, 2), rnd(3, 4, seed=1), rnd(4, 2, seed=2)]),
    "einsum_matmul": (lambda a, b: E.einsum("ij,jk->ik", a, b), [rnd(3, 4), rnd(4, 2, seed=1)]),
    "einsum_implicit": (lambda a, b: E.einsum("bij,bjk", a, b),
                        [rnd(2, 3, 4), rnd(2, 4, 2, seed=1)]),
    "einsum_scalar": (lambda a: E.einsum("ij->", a), [rnd(3, 4)]),
    "einsum_three": (lambda a, b, c: E.einsum("ij,jk,k->i", a, b, c),
                     [rnd(2, 3), rnd(3, 4, seed=1), rnd(4, seed=2)]),
    "einsum_trace": (lambda a: E.einsum("ii->", a), [rnd(3, 3)]),
    "einsum_ellipsis": (lambda a, b: E.einsum("...ij,...jk->...ik", a, b),
                        [rnd(2, 3, 4), rnd(4, 2, seed=1)]),
    # softmax
    "softmax": (lambda a: a.softmax(1), [rnd(3, 4)]),
    "softmax_dim0": (lambda a: E.softmax(a, 0), [rnd(2, 3, 4)]),
    "log_softmax": (lambda a: a.log_softmax(-1), [rnd(3, 4)]),
    "log_softmax_dim1": (lambda a: E.log_softmax(a, 1), [rnd(2, 3, 4)]),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_gradient_matches_finite_differences(name):
    fn, arrays = GRAD_CASES[name]
    check_grad(fn, *arrays)


INPLACE_GRAD_CASES = {
    "add_": lambda a, b: (a * 1).add_(b, alpha=2),
    "sub_": lambda a, b: (a * 1).sub_(b),
    "mul_": lambda a, b: (a * 1).mul_(b),
    "div_": lambda a, b: (a * 1).div_(b),
    "iadd": lambda a, b: _iadd(a * 1, b),
    "imul_scalar": lambda a, b: _imul(a * 1, 3.0) + b,
    "exp_": lambda a, b: (a * b).exp_(),
    "clamp_": lambda a, b: (a + 0).clamp_(-0.5, 0.5) * b,
}


def _iadd(x, y):
    x += y
    return x


def _imul(x, y):
    x *= y
    return x


@pytest.mark.parametrize("name", list(INPLACE_GRAD_CASES))
def test_inplace_gradient_matches_finite_differences(name):
    a = off_integer(3, 4) / 3  # clear of the clamp bounds
    check_grad(INPLACE_GRAD_CASES[name], a, nonzero(4, seed=1))


# ---- second derivatives -------------------------------------------------------------------
SECOND_CASES = {
    "exp": (lambda a: a.exp(), [rnd(2, 3)]),
    "exp2": (lambda a: a.exp2(), [rnd(2, 3)]),
    "expm1": (lambda a: a.expm1(), [rnd(2, 3)]),
    "log": (lambda a: a.log(), [pos(2, 3)]),
    "log2": (lambda a: a.log2(), [pos(2, 3)]),
    "log1p": (lambda a: a.log1p(), [pos(2, 3)]),
    "sqrt": (lambda a: a.sqrt(), [pos(2, 3)]),
    "rsqrt": (lambda a: a.rsqrt(), [pos(2, 3)]),
    "reciprocal": (lambda a: a.reciprocal(), [pos(2, 3)]),
    "sin": (lambda a: a.sin(), [rnd(2, 3)]),
    "cos": (lambda a: a.cos(), [rnd(2, 3)]),
    "tan": (lambda a: a.tan(), [pos(2, 3, lo=-1, hi=1)]),
    "tanh": (lambda a: a.tanh(), [rnd(2, 3)]),
    "sigmoid": (lambda a: a.sigmoid(), [rnd(2, 3)]),
    "erf": (lambda a: a.erf(), [rnd(2, 3)]),
    "pow_scalar": (lambda a: a ** 3, [rnd(2, 3)]),
    "pow_fraction": (lambda a: a ** 2.5, [pos(2, 3)]),
    "pow_tensor": (lambda a, b: a ** b, [pos(2, 3), rnd(3, seed=1)]),
    "rpow": (lambda a: 3 ** a, [rnd(2, 3)]),
    "mul": (lambda a, b: a * b, [rnd(2, 3), rnd(3, seed=1)]),
    "mul_self": (lambda a: a * a * a, [rnd(2, 3)]),
    "div": (lambda a, b: a / b, [rnd(2, 3), pos(3, seed=1)]),
    "rdiv": (lambda a: 2 / a, [pos(2, 3)]),
    "matmul": (lambda a, b: a @ b, [rnd(2, 3), rnd(3, 2, seed=1)]),
    "matmul_batched": (lambda a, b: a @ b, [rnd(2, 2, 3), rnd(3, 2, seed=1)]),
    "mm_tanh": (lambda a, b: E.mm(a, b).tanh(), [rnd(2, 3), rnd(3, 2, seed=1)]),
    "softmax": (lambda a: a.softmax(-1), [rnd(2, 3)]),
    "log_softmax": (lambda a: a.log_softmax(0), [rnd(2, 3)]),
    "logsumexp": (lambda a: a.logsumexp(1), [rnd(2, 3)]),
    "norm": (lambda a: a.norm(), [rnd(2, 3)]),
    "norm_dim": (lambda a: a.norm(dim=1), [rnd(2, 3)]),
    "norm_p3": (lambda a: a.norm(p=3, dim=0), [nonzero(2, 3)]),
    "var": (lambda a: a.var(1), [rnd(2, 3)]),
    "std": (lambda a: a.std(), [rnd(2, 3)]),
    "std_dim": (lambda a: a.std(0, correction=0), [rnd(3, 2)]),
    "prod": (lambda a: a.prod(), [pos(2, 3, lo=0.5, hi=1.5)]),
    "prod_dim": (lambda a: a.prod(1), [rnd(2, 3)]),
    "cumsum": (lambda a: (a.cumsum(1) ** 2), [rnd(2, 3)]),
    "cumprod": (lambda a: a.cumprod(1), [pos(2, 3)]),
    "sum": (lambda a: a.sum(0) ** 2, [rnd(2, 3)]),
    "mean": (lambda a: a.mean(-1, keepdim=True) * a, [rnd(2, 3)]),
    "einsum": (lambda a, b: E.einsum("ij,jk->ik", a, b) ** 2, [rnd(2, 3), rnd(3, 2, seed=1)]),
    "einsum_outer": (lambda a, b: E.einsum("i,j", a, b) * a.sum(), [rnd(2), rnd(3, seed=1)]),
    "lerp_tensor": (lambda a, b, w: E.lerp(a, b, w) ** 2,
                    [rnd(2, 3), rnd(3, seed=1), rnd(2, 1, seed=2)]),
    "lerp_scalar": (lambda a, b: E.lerp(a * a, b, 0.25), [rnd(2, 3), rnd(3, seed=1)]),
    "addcmul": (lambda a, b, c: E.addcmul(a, b, c, value=2) ** 2,
                [rnd(2, 3), rnd(3, seed=1), rnd(2, 1, seed=2)]),
    "addcdiv": (lambda a, b, c: E.addcdiv(a, b, c), [rnd(2, 3), rnd(3, seed=1), pos(2, 1, seed=2)]),
    "where": (lambda a, b: E.where(a > 0, a * a, b * b * b), [nonzero(2, 3), rnd(3, seed=1)]),
    "maximum": (lambda a, b: E.maximum(a, b) ** 2, [distinct(2, 3), distinct(3, seed=1) + 0.1]),
    "amax": (lambda a: a.amax(1) ** 2, [distinct(2, 3)]),
    "max_dim": (lambda a: a.max(1).values ** 2, [distinct(2, 3)]),
    "abs": (lambda a: a.abs() * a, [nonzero(2, 3)]),
    "clamp": (lambda a: a.clamp(-0.5, 0.5) ** 2, [off_integer(2, 3) / 3]),
    "masked_fill": (lambda a: a.masked_fill(a < 0, 1.0) ** 3, [nonzero(2, 3)]),
    "outer": (lambda a, b: E.outer(a, b) ** 2, [rnd(2), rnd(3, seed=1)]),
    "addmm": (lambda c, a, b: E.addmm(c, a, b, beta=2, alpha=0.5).sin(),
              [rnd(2, 2), rnd(2, 3, seed=1), rnd(3, 2, seed=2)]),
}


@pytest.mark.parametrize("name", list(SECOND_CASES))
def test_second_derivative_matches_finite_differences(name):
    fn, arrays = SECOND_CASES[name]
    check_second_grad(fn, *arrays)


# ---- values against closed forms -----------------------------------------------------------
def test_values_against_math():
    x = ember.tensor([0.25, 1.0, 2.5], dtype=ember.float64)
    np.testing.assert_allclose(x.erf().numpy(), [math.erf(v) for v in (0.25, 1.0, 2.5)])
    np.testing.assert_allclose(x.exp2().numpy(), [2 ** v for v in (0.25, 1.0, 2.5)])
    np.testing.assert_allclose(x.rsqrt().numpy(), [v ** -0.5 for v in (0.25, 1.0, 2.5)])
    np.testing.assert_allclose(x.sigmoid().numpy(),
                               [1 / (1 + math.exp(-v)) for v in (0.25, 1.0, 2.5)])
    np.testing.assert_allclose(x.logsumexp(0).item(),
                               math.log(sum(math.exp(v) for v in (0.25, 1.0, 2.5))))
    np.testing.assert_allclose(x.norm(p=3).item(), sum(v ** 3 for v in (0.25, 1.0, 2.5)) ** (1 / 3))
    np.testing.assert_allclose(x.var(correction=2).item(),
                               np.sum((x.numpy() - x.numpy().mean()) ** 2) / 1)
    big = ember.tensor([1000.0, 1000.0])
    assert abs(big.logsumexp(0).item() - (1000 + math.log(2))) < 1e-3
    s = ember.tensor([[1000.0, 0.0]]).softmax(1)
    np.testing.assert_allclose(s.numpy(), [[1.0, 0.0]])


def test_integer_and_bool_results():
    i = ember.tensor([[1, 2], [3, 4]])
    assert (i + 1.5).dtype is ember.float32
    assert (i / i).dtype is ember.float32
    assert (i * 2).dtype is ember.int64
    assert i.sum().dtype is ember.int64 and i.sum().item() == 10
    assert ember.tensor([True, True, False]).sum().item() == 2
    assert (i > 2).dtype is ember.bool
    assert (ember.ones(2, dtype=ember.float16) + ember.tensor([1, 2])).dtype is ember.float16
    assert (ember.tensor(2.0, dtype=ember.float64) + ember.ones(2)).dtype is ember.float32
    assert (ember.tensor([1], dtype=ember.int32) + ember.tensor([1])).dtype is ember.int64
    assert (ember.tensor([True]) + ember.tensor([2])).dtype is ember.int64
    assert (ember.ones(2) * 1e-3).dtype is ember.float32


def test_comparisons_have_no_gradient():
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    for out in (x > 0, x == 1, x.ne(0), ember.logical_and(x, x), ~(x > 0), x.argmax()):
        assert not out.requires_grad and out.grad_fn is None
    y = ember.where(x > 0, x, x * 2)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1.0, 2.0])


def test_max_dim_result_fields():
    x = ember.tensor([[1.0, 5.0, 3.0], [7.0, 0.0, 2.0]], requires_grad=True)
    res = x.max(1)
    np.testing.assert_array_equal(res.values.detach().numpy(), [5.0, 7.0])
    np.testing.assert_array_equal(res.indices.numpy(), [1, 0])
    assert res.indices.dtype is ember.int64
    values, indices = res
    assert values is res.values
    values.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 1, 0], [1, 0, 0]])


# ---- errors in PyTorch's words --------------------------------------------------------------
def test_mm_shape_mismatch_names_both_shapes():
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 4x5\)"):
        ember.mm(ember.ones(2, 3), ember.ones(4, 5))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied "
                                           r"\(2x3 and 4x5\)"):
        ember.ones(2, 3) @ ember.ones(4, 5)


def test_broadcast_mismatch():
    msg = (r"The size of tensor a \(3\) must match the size of tensor b \(4\) at "
           r"non-singleton dimension 1")
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, 3) + ember.ones(2, 4)
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, 3) * ember.ones(2, 4)
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, 3) - ember.ones(4)
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, 3) / ember.ones(4)
    with pytest.raises(RuntimeError, match=msg):
        ember.ones(2, 3) < ember.ones(4)


def test_matmul_of_0d():
    with pytest.raises(RuntimeError, match="both arguments to matmul need to be at least 1D, "
                                           "but they are 0D and 1D"):
        ember.matmul(ember.tensor(2.0), ember.ones(3))
    with pytest.raises(RuntimeError, match="but they are 1D and 0D"):
        ember.ones(3) @ ember.tensor(2.0)


def test_bmm_wrong_dims():
    with pytest.raises(RuntimeError, match="batch1 must be a 3D tensor"):
        ember.bmm(ember.ones(2, 3), ember.ones(2, 3, 4))
    with pytest.raises(RuntimeError, match="batch2 must be a 3D tensor"):
        ember.bmm(ember.ones(2, 3, 4), ember.ones(3, 4))


@pytest.mark.parametrize("call,bad", [
    (lambda x: x.sum(2), 2), (lambda x: x.sum(-3), -3), (lambda x: x.mean(2), 2),
    (lambda x: x.softmax(2), 2), (lambda x: x.log_softmax(-3), -3), (lambda x: x.max(5), 5),
    (lambda x: x.cumsum(-4), -4), (lambda x: x.cumprod(2), 2), (lambda x: x.argmax(2), 2),
    (lambda x: x.var(2), 2), (lambda x: x.logsumexp(2), 2), (lambda x: x.amax(2), 2),
    (lambda x: x.norm(dim=2), 2), (lambda x: x.prod(2), 2), (lambda x: x.all(2), 2),
])
def test_dim_out_of_range(call, bad):
    msg = (r"Dimension out of range \(expected to be in range of \[-2, 1\], but got "
           + str(bad).replace("-", r"\-") + r"\)")
    with pytest.raises(IndexError, match=msg):
        call(ember.ones(2, 3))


def test_dim_out_of_range_0d():
    with pytest.raises(IndexError, match=r"expected to be in range of \[-1, 0\], but got 1"):
        ember.tensor(1.0).sum(1)


def test_duplicate_dims():
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        ember.ones(2, 3).sum((0, 0))
    with pytest.raises(RuntimeError, match="dim 1 appears multiple times in the list of dims"):
        ember.ones(2, 3).sum((1, -1))


def test_mean_of_int_tensor():
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input "
                                           r"dtype must be either a floating point or complex "
                                           r"dtype. Got: Long"):
        ember.tensor([1, 2]).mean()


def test_var_norm_of_int_tensor():
    with pytest.raises(RuntimeError, match="std and var only support floating point and "
                                           "complex dtypes"):
        ember.tensor([1, 2]).var()
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or "
                                           "complex tensor as input. Got Long"):
        ember.tensor([1, 2]).norm()


def test_inplace_int_with_float_result():
    msg = "result type Float can't be cast to the desired output type Long"
    x = ember.tensor([1, 2])
    with pytest.raises(RuntimeError, match=msg):
        x += 1.5
    with pytest.raises(RuntimeError, match=msg):
        x.mul_(ember.tensor([1.5, 2.0]))
    with pytest.raises(RuntimeError, match=msg):
        x /= 2
    np.testing.assert_array_equal(x.numpy(), [1, 2])  # unchanged by the failed ops


def test_inplace_broadcast_to_bigger_shape():
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        ember.ones(3).add_(ember.ones(2, 3))


def test_misc_errors():
    with pytest.raises(RuntimeError, match="torch.clamp: At least one of 'min' or 'max' must "
                                           "not be None"):
        ember.clamp(ember.ones(2))
    with pytest.raises(RuntimeError, match="Integers to negative integer powers are not "
                                           "allowed."):
        ember.tensor([2]) ** -1
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified "
                                           r"for input.numel\(\) == 0"):
        ember.ones(0).max()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation."):
        ember.ones(2, requires_grad=True).add_(1)
    with pytest.raises(NotImplementedError, match="\"softmax_lastdim_kernel_impl\" not "
                                                  "implemented for 'Long'"):
        ember.tensor([1, 2]).softmax(0)


def test_stack_times_matrix_gradients_of_first_and_second_order():
    """A stack times one matrix: the matrix's gradient folds the stack's rows into one
    product (a seq-first view of a batch-first array, as attention's projections see it)."""
    from ember.autograd import gradcheck, gradgradcheck
    rng = np.random.default_rng(3)
    a = ember.tensor(rng.standard_normal((4, 3, 5)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((5, 2)), requires_grad=True)

    def f(x, w):
        return x.transpose(0, 1) @ w
    assert gradcheck(f, (a, b))
    assert gradgradcheck(f, (a, b))
    g = rng.standard_normal((3, 4, 2))
    f(a, b).backward(ember.tensor(g))
    expected = np.einsum("bsk,sbn->kn", a.detach().numpy(), g)
    np.testing.assert_allclose(b.grad.numpy(), expected, rtol=1e-12)
