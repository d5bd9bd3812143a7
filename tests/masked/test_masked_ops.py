"""ember.masked's reductions and normalizations: values worked out by hand (fully masked-out
slices included), dtypes, finite-difference gradients in float64, masked-out elements
getting no gradient, and the errors."""
import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck

X = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
M = [[True, False, True], [False, False, False]]  # row 1: nothing in


def data(dtype=ember.float32):
    return ember.tensor(X, dtype=dtype), ember.tensor(M)


def values(t):
    return np.asarray(t.tolist(), dtype=np.float64)


@pytest.mark.parametrize("name,expected", [
    ("sum", [4.0, 0.0]),
    ("prod", [3.0, 1.0]),
    ("amax", [3.0, -math.inf]),
    ("amin", [1.0, math.inf]),
    ("mean", [2.0, math.nan]),
    ("median", [1.0, math.nan]),
    ("logsumexp", [math.log(math.e + math.e ** 3), -math.inf]),
    ("norm", [math.sqrt(10.0), 0.0]),
    ("var", [2.0, math.nan]),
    ("std", [math.sqrt(2.0), math.nan]),
    ("argmax", [2.0, 0.0]),
    ("argmin", [0.0, 0.0]),
])
def test_reduction_values_with_a_fully_masked_row(name, expected):
    x, m = data()
    out = getattr(ember.masked, name)(x, dim=1, mask=m)
    assert out.dtype == ember.float32 and tuple(out.shape) == (2,)
    np.testing.assert_allclose(values(out), expected, rtol=1e-6)


def test_normalization_values():
    x, m = data()
    e1, e3 = math.e, math.e ** 3
    np.testing.assert_allclose(values(ember.masked.softmax(x, 1, mask=m)),
                               [[e1 / (e1 + e3), 0.0, e3 / (e1 + e3)], [math.nan] * 3],
                               rtol=1e-6)
    np.testing.assert_allclose(values(ember.masked.log_softmax(x, 1, mask=m))[0],
                               [math.log(e1 / (e1 + e3)), -math.inf, math.log(e3 / (e1 + e3))],
                               rtol=1e-6)
    np.testing.assert_allclose(values(ember.masked.softmin(x, 1, mask=m))[0],
                               [e3 / (e1 + e3), 0.0, e1 / (e1 + e3)], rtol=1e-6)
    np.testing.assert_allclose(values(ember.masked.normalize(x, 2.0, 1, mask=m)),
                               [[1 / math.sqrt(10), 0, 3 / math.sqrt(10)], [0, 0, 0]],
                               rtol=1e-6)
    np.testing.assert_allclose(values(ember.masked.cumsum(x, 1, mask=m)),
                               [[1, 1, 4], [0, 0, 0]])
    np.testing.assert_allclose(values(ember.masked.cumprod(x, 1, mask=m)),
                               [[1, 1, 3], [1, 1, 1]])
    np.testing.assert_allclose(
        values(ember.masked.logaddexp(x, x * 2, input_mask=m, other_mask=ember.tensor(True))),
        [[math.log(math.e + math.e ** 2), 4.0, math.log(math.e ** 3 + math.e ** 6)],
         [8.0, 10.0, 12.0]], rtol=1e-6)


def test_dims_keepdim_broadcast_masks_and_defaults():
    x, m = data()
    assert ember.masked.sum(x, mask=m).item() == 4.0
    assert tuple(ember.masked.sum(x, (0, 1), keepdim=True, mask=m).shape) == (1, 1)
    assert tuple(ember.masked.amax(x, 0, keepdim=True, mask=m).shape) == (1, 3)
    # a mask of fewer dims broadcasts; None takes every element
    np.testing.assert_allclose(values(ember.masked.sum(x, 1, mask=ember.tensor([True, False,
                                                                             True]))), [4, 10])
    np.testing.assert_allclose(values(ember.masked.mean(x, 0)), [2.5, 3.5, 4.5])
    assert ember.masked.var(x, None, mask=m, correction=0).item() == 1.0
    assert ember.masked.sum(ember.tensor(3.0), mask=ember.tensor(False)).item() == 0.0


def test_result_dtypes():
    x, m = data()
    ints = x.to(ember.int32)
    assert ember.masked.sum(ints, 1, mask=m).dtype == ember.int64
    assert ember.masked.prod(ints.to(ember.int16), 1, mask=m).dtype == ember.int64
    assert ember.masked.sum(ints > 2, 1, mask=m).dtype == ember.int64
    assert ember.masked.amax(ints, 1, mask=m).tolist() == [3, -2 ** 31]
    assert ember.masked.amin(ints, 1, mask=m).tolist() == [1, 2 ** 31 - 1]
    assert ember.masked.var(ints, 1, mask=m).dtype == ember.float32
    assert ember.masked.argmax(x, 1, mask=m).dtype == ember.float32  # the input's, as torch
    assert ember.masked.argmax(x, 1, mask=m, dtype=ember.int64).tolist() == [2, 0]
    assert ember.masked.sum(x, 1, mask=m, dtype=ember.float64).dtype == ember.float64
    assert ember.masked.median(ints, 1, mask=ember.tensor(True)).tolist() == [2, 5]


def gradient_mask():
    rng = np.random.default_rng(0)
    mask = rng.random((3, 4)) < 0.6
    mask[:, :2] = True  # every row and column has two elements in (var's correction)
    mask[:2, :] = True
    return ember.tensor(mask)


@pytest.mark.parametrize("name,args", [
    ("sum", (1,)), ("prod", (0,)), ("amax", (1,)), ("amin", (0,)), ("mean", (1,)),
    ("median", (1,)), ("logsumexp", (0,)), ("norm", (2.0, 1)), ("var", (1,)), ("std", (0,)),
    ("softmax", (1,)), ("log_softmax", (0,)), ("softmin", (1,)), ("normalize", (2.0, 1)),
    ("cumsum", (1,)), ("cumprod", (0,)),
])
def test_gradcheck(name, args):
    rng = np.random.default_rng(1)
    x = ember.tensor(rng.standard_normal((3, 4)) + 0.5, dtype=ember.float64,
                     requires_grad=True)
    mask = gradient_mask()
    fn = getattr(ember.masked, name)
    # log_softmax is -inf where masked out, where finite differences cannot look
    assert gradcheck(lambda t: fn(t, *args, mask=mask).masked_fill(~mask, 0.0)
                     if name == "log_softmax" else fn(t, *args, mask=mask), (x,))
    # masked-out elements get exactly no gradient
    out = fn(x, *args, mask=mask)
    out.backward(ember.ones_like(out))
    assert (x.grad.masked_select(~mask) == 0).all()


def test_gradients_of_fully_masked_slices_are_zero():
    x = ember.tensor(X, dtype=ember.float64, requires_grad=True)
    m = ember.tensor(M)
    for name in ("mean", "softmax", "log_softmax", "logsumexp", "amax", "median"):
        x.grad = None
        out = getattr(ember.masked, name)(x, 1, mask=m)
        out.backward(ember.ones_like(out))
        assert x.grad[1].tolist() == [0.0, 0.0, 0.0], name


def test_logaddexp_gradcheck():
    rng = np.random.default_rng(2)
    a = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = ember.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    mask = gradient_mask()
    assert gradcheck(lambda p, q: ember.masked.logaddexp(p, q, input_mask=mask,
                                                         other_mask=~mask), (a, b))


def test_errors():
    x, m = data()
    with pytest.raises(RuntimeError, match=r"dim=1 appears multiple times in the list of dims"):
        ember.masked.sum(x, (1, 1), mask=m)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)"):
        ember.masked.amax(x, 2, mask=m)
    with pytest.raises(IndexError, match="_input_mask expected broadcastable mask"):
        ember.masked.sum(x, 1, mask=m[None])
    with pytest.raises(RuntimeError, match="The expanded size of the tensor"):
        ember.masked.sum(x, 1, mask=m[:, :2])
    with pytest.raises(ValueError, match=r"mean\(\): Could not infer output dtype. Input dtype "
                                         r"must be either a floating point or complex dtype"):
        ember.masked.mean(x.long(), 1, mask=m)
    with pytest.raises(ValueError, match="Optional dtype must be"):
        ember.masked.mean(x, 1, dtype=ember.int32, mask=m)
    with pytest.raises(ValueError, match="masked median expects no fully masked out rows"):
        ember.masked.median(x.long(), 1, mask=m)
    with pytest.raises(AssertionError, match="Only one of unbiased and correction"):
        ember.masked.var(x, 1, True, correction=1, mask=m)


def test_sparse_inputs_are_not_implemented():
    s = ember.sparse_coo_tensor([[0, 1]], [1.0, 2.0], (3,))
    for name in ("sum", "mean", "amax", "var", "softmax"):
        args = (0,) if name == "softmax" else ()
        with pytest.raises(NotImplementedError, match="sparse inputs and masks"):
            getattr(ember.masked, name)(s, *args, mask=ember.tensor([True, False, True]))
