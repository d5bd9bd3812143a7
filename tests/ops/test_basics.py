"""The basic ops of ``_ops/basics.py`` and friends with ember and NumPy only: values against
NumPy or math, gradients by ``gradcheck``/``gradgradcheck`` in float64, views sharing
memory, in-place forms, the top-level in-place functions, the top-level forms of functional
ops (``ember.nn._toplevel``) and error paths in PyTorch's words (texts from PyTorch 2.x)."""
import inspect
import math

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.nn import _toplevel as T
from ember._functions import _INPLACE_FUNCTIONS, fill_, zero_, resize_as_


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(a, grad=False):
    return ember.tensor(a, requires_grad=grad)


# ---- log10, fix -------------------------------------------------------------------------------
def test_log10_values_gradients_and_forms():
    a = np.abs(randn(3, 4, seed=1)) + 0.5
    np.testing.assert_allclose(ember.log10(t(a)).numpy(), np.log10(a))
    assert gradcheck(ember.log10, (t(a, True),))
    assert gradgradcheck(ember.log10, (t(a, True),))
    assert ember.log10(ember.tensor([1, 100])).dtype is ember.float32
    x = t(a.copy())
    assert x.log10_() is x
    np.testing.assert_allclose(x.numpy(), np.log10(a))
    assert type(ember.log10(t(a, True)).grad_fn).__name__ == "Log10Backward0"


def test_log10_forward_mode():
    import ember.autograd.forward_ad as fwAD
    a, v = np.array([2.0, 5.0]), np.array([1.0, -2.0])
    with fwAD.dual_level():
        out = ember.log10(fwAD.make_dual(t(a), t(v)))
        tangent = fwAD.unpack_dual(out).tangent
    np.testing.assert_allclose(tangent.numpy(), v / (a * math.log(10)))


def test_fix_is_trunc():
    a = np.array([-2.5, -0.5, 0.5, 2.7])
    np.testing.assert_array_equal(ember.fix(t(a)).numpy(), np.trunc(a))
    x = t(a.copy())
    assert ember.fix_(x) is x and x.tolist() == [-2.0, -0.0, 0.0, 2.0]


# ---- var_mean, std_mean -----------------------------------------------------------------------
def test_var_std_mean_values():
    a = randn(3, 5, seed=2)
    var, mean = ember.var_mean(t(a), 1, keepdim=True)
    np.testing.assert_allclose(var.numpy(), a.var(1, ddof=1, keepdims=True))
    np.testing.assert_allclose(mean.numpy(), a.mean(1, keepdims=True))
    std, mean = ember.std_mean(t(a), correction=0)
    np.testing.assert_allclose(std.numpy(), a.std())
    np.testing.assert_allclose(mean.numpy(), a.mean())
    std, _ = ember.std_mean(t(a), (0, 1), False)  # positional unbiased
    np.testing.assert_allclose(std.numpy(), a.std())
    assert isinstance(ember.var_mean(t(a)), tuple)
    assert gradcheck(lambda x: ember.var_mean(x, 0), (t(a, True),))
    assert gradcheck(lambda x: ember.std_mean(x, -1, correction=2), (t(a, True),))


def test_var_mean_errors():
    with pytest.raises(RuntimeError, match="var_mean only support floating point and complex"):
        ember.var_mean(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="std_mean only support floating point and complex"):
        ember.std_mean(ember.tensor([1, 2]))


# ---- fmax, fmin ---------------------------------------------------------------------------------
def test_fmax_fmin_nan_rules():
    a = np.array([1.0, np.nan, 3.0, np.nan, -0.5])
    b = np.array([2.0, 0.5, np.nan, np.nan, -1.0])
    np.testing.assert_array_equal(ember.fmax(t(a), t(b)).numpy(), np.fmax(a, b))
    np.testing.assert_array_equal(ember.fmin(t(a), t(b)).numpy(), np.fmin(a, b))
    x, y = t(randn(3, 1, seed=3), True), t(randn(1, 4, seed=4), True)
    assert gradcheck(ember.fmax, (x, y)) and gradcheck(ember.fmin, (x, y))


def test_fmax_tie_gives_the_gradient_to_input():
    x, y = t([1.0, 2.0], True), t([1.0, 3.0], True)
    ember.fmax(x, y).sum().backward()
    assert x.grad.tolist() == [1.0, 0.0] and y.grad.tolist() == [0.0, 1.0]


def test_fmax_fmin_dtypes_and_errors():
    assert ember.fmax(ember.tensor([1, 5]), ember.tensor([3, 2])).tolist() == [3, 5]
    assert ember.fmin(ember.tensor([1, 5]), ember.tensor([2.0, 1.0])).dtype is ember.float32
    with pytest.raises(TypeError, match=r"fmax\(\): argument 'other' \(position 2\) must be "
                                        r"Tensor, not float"):
        ember.fmax(ember.tensor([1.0]), 2.0)


# ---- broadcast_to, ravel, positive, rsub --------------------------------------------------------
def test_broadcast_to_ravel_positive_rsub():
    x = ember.tensor([1.0, 2.0])
    b = ember.broadcast_to(x, (3, 2))
    assert b.shape == (3, 2) and b._base is x and b.stride() == (0, 1)
    m = ember.arange(6).reshape(2, 3)
    assert ember.ravel(m.t()).tolist() == [0, 3, 1, 4, 2, 5]
    assert m.ravel().data_ptr() == m.data_ptr()
    assert ember.positive(x) is x
    with pytest.raises(RuntimeError, match="The `\\+` operator, on a bool tensor is not"):
        ember.positive(ember.tensor([True]))
    assert ember.rsub(ember.tensor([1, 2]), 3, alpha=2).tolist() == [1, -1]
    assert ember.rsub(ember.tensor([1.0]), ember.tensor([4.0])).tolist() == [3.0]


# ---- unravel_index ------------------------------------------------------------------------------
def test_unravel_index_values():
    flat = np.array([0, 5, 11, 7])
    got = ember.unravel_index(ember.tensor(flat), (3, 4))
    for g, e in zip(got, np.unravel_index(flat, (3, 4))):
        np.testing.assert_array_equal(g.numpy(), e)
    # out of range and negative indices wrap around (floor modulo), as in PyTorch
    assert [c.tolist() for c in ember.unravel_index(ember.tensor([-1, 12]), (3, 4))] == \
        [[2, 0], [3, 0]]
    assert ember.unravel_index(ember.tensor(5), 4)[0].shape == ()
    assert ember.unravel_index(ember.tensor([1]), ()) == ()


def test_unravel_index_errors():
    with pytest.raises(TypeError, match="expected 'indices' to be integer dtype, but got "
                                        "torch.float32"):
        ember.unravel_index(ember.tensor([1.0]), (2, 3))
    with pytest.raises(ValueError, match="'shape' cannot have negative values"):
        ember.unravel_index(ember.tensor([1]), (2, -3))


# ---- scalar_tensor, asarray, empty_strided ------------------------------------------------------
def test_scalar_tensor_and_empty_strided():
    assert ember.scalar_tensor(3).dtype is ember.float32 and ember.scalar_tensor(3).item() == 3
    assert ember.scalar_tensor(2, dtype=ember.int64).dtype is ember.int64
    e = ember.empty_strided((2, 3), (1, 2), dtype=ember.float64)
    assert e.shape == (2, 3) and e.stride() == (1, 2) and e.dtype is ember.float64
    assert ember.empty_strided((2, 3), (1, 2), device="meta").is_meta
    assert ember.zeros(1, dtype=ember.int32).new_empty_strided((3,), (2,)).stride() == (2,)
    with pytest.raises(RuntimeError, match="dimensionality of sizes"):
        ember.empty_strided((2,), (1, 1))


def test_asarray():
    n = np.arange(3.0)
    shared = ember.asarray(n)
    n[0] = 9.0
    assert shared[0].item() == 9.0 and shared.dtype is ember.float64
    assert ember.asarray(n, copy=True).data_ptr() != n.ctypes.data
    x = ember.ones(2)
    assert ember.asarray(x) is x and ember.asarray(x, dtype=ember.float64).dtype is ember.float64
    with pytest.raises(ValueError, match="can't alias tensor with dtype 'Float' into dtype "
                                         "'Double'"):
        ember.asarray(x, dtype=ember.float64, copy=False)
    with pytest.raises(ValueError, match="can't alias arbitrary sequence into a tensor"):
        ember.asarray([1, 2], copy=False)
    assert ember.asarray([[1, 2]]).dtype is ember.int64
    with pytest.warns(UserWarning, match="unspecified requires_grad"):
        import ember._ops.basics as B
        B._ASARRAY_WARNED[0] = False
        ember.asarray(ember.ones(1, requires_grad=True))


# ---- as_strided, unfold -------------------------------------------------------------------------
def test_as_strided_values_and_view():
    x = ember.arange(12.0)
    y = ember.as_strided(x, (3, 3), (1, 1), 2)
    expected = np.lib.stride_tricks.as_strided(np.arange(12.0)[2:], (3, 3), (8, 8))
    np.testing.assert_array_equal(y.numpy(), expected)
    assert y._base is x and y.storage_offset() == 2 and y.stride() == (1, 1)
    x[3] = -1.0
    assert y[0, 1].item() == -1.0 and y[1, 0].item() == -1.0
    view = x[4:]  # offsets count from the storage, not from the view
    assert ember.as_strided(view, (2,), (1,), 0).tolist() == [0.0, 1.0]
    assert ember.as_strided(view, (2,), (1,)).tolist() == [4.0, 5.0]


def test_as_strided_gradients():
    x = t(randn(10, seed=5), True)
    assert gradcheck(lambda a: ember.as_strided(a, (3, 2), (2, 1), 1), (x,))
    assert gradgradcheck(lambda a: ember.as_strided(a, (3, 3), (1, 1)), (x,))
    base = t(randn(3, seed=6), True)  # an overlapping input: its gradient is shared evenly
    assert gradcheck(lambda a: a.expand(2, 3).as_strided((2, 2), (1, 1), 0), (base,))


def test_as_strided_inplace_form_and_errors():
    z = ember.zeros(2, 3)
    assert z.as_strided_((3,), (2,), 0) is z and z.shape == (3,) and z.stride() == (2,)
    with pytest.raises(RuntimeError, match="setStorage: sizes \\[3, 3\\], strides \\[4, 4\\], "
                                           "storage offset 2, and itemsize 4 requiring a "
                                           "storage size of 76 are out of bounds for storage "
                                           "of size 48"):
        ember.as_strided(ember.arange(12.0), (3, 3), (4, 4), 2)
    with pytest.raises(RuntimeError, match="Negative strides are not supported"):
        ember.as_strided(ember.arange(12.0), (3,), (-1,))
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        ember.as_strided(ember.arange(12.0), (3,), (1, 1))


def test_as_strided_and_unfold_on_meta():
    m = ember.empty(12, device="meta")
    assert ember.as_strided(m, (3, 2), (2, 1)).shape == (3, 2)
    assert m.unfold(0, 4, 2).shape == (5, 4)


def test_unfold_values_and_gradients():
    a = randn(3, 7, seed=7)
    got = t(a).unfold(1, 3, 2)
    expected = np.lib.stride_tricks.sliding_window_view(a, 3, axis=1)[:, ::2]
    np.testing.assert_array_equal(got.numpy(), expected)
    x = ember.arange(5.0)
    y = x.unfold(0, 2, 1)
    assert y._base is x and y.stride() == (1, 1)
    assert gradcheck(lambda v: v.unfold(1, 3, 2), (t(a, True),))
    assert gradcheck(lambda v: v.unfold(0, 2, 1).unfold(1, 2, 2), (t(a, True),))
    assert gradgradcheck(lambda v: v.unfold(-1, 2, 3), (t(a, True),))
    assert ember.tensor(4.0).unfold(0, 1, 1).tolist() == [4.0]


def test_unfold_errors():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 4 but "
                                           "size is 5"):
        x.unfold(1, 5, 1)
    with pytest.raises(RuntimeError, match="step is 0 but must be > 0"):
        x.unfold(1, 2, 0)
    with pytest.raises(RuntimeError, match="size is -1 but must be >= 0"):
        x.unfold(1, -1, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unfold(2, 1, 1)


# ---- index_copy -------------------------------------------------------------------------------
def test_index_copy_values_and_gradients():
    a, s = randn(4, 3, seed=8), randn(2, 3, seed=9)
    got = ember.index_copy(t(a), 0, ember.tensor([3, 1]), t(s))
    expected = a.copy()
    expected[[3, 1]] = s
    np.testing.assert_array_equal(got.numpy(), expected)
    fn = lambda x, y: ember.index_copy(x, 1, ember.tensor([2, 0]), y)  # noqa: E731
    assert gradcheck(fn, (t(a, True), t(randn(4, 2, seed=10), True)))
    x = t(a.copy())
    assert x.index_copy_(0, ember.tensor([0]), t(s[:1])) is x
    np.testing.assert_array_equal(x.numpy()[0], s[0])


def test_index_copy_repeated_index_keeps_the_last():
    got = ember.index_copy(ember.zeros(2, 2), 0, ember.tensor([1, 1]),
                           ember.tensor([[1.0, 1.0], [2.0, 2.0]]))
    assert got.tolist() == [[0.0, 0.0], [2.0, 2.0]]


def test_index_copy_errors():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Int"):
        ember.index_copy(x, 0, ember.tensor([0], dtype=ember.int32), ember.ones(1, 4))
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        ember.index_copy(x, 0, ember.tensor([5]), ember.ones(1, 4))
    with pytest.raises(IndexError, match=r"Number of indices \(2\) should be equal to "
                                         r"source.size\(dim\) \(1\)"):
        ember.index_copy(x, 0, ember.tensor([0, 1]), ember.ones(1, 4))
    with pytest.raises(RuntimeError, match="self and source expected to have the same dtype"):
        ember.index_copy(x, 0, ember.tensor([0]), ember.ones(1, 4, dtype=ember.float64))


# ---- methods and in-place forms -----------------------------------------------------------------
def test_bitwise_and_comparison_methods():
    a = ember.tensor([12, 10])
    assert a.bitwise_and(6).tolist() == [4, 2] and a.bitwise_or(1).tolist() == [13, 11]
    b = a.clone()
    assert b.bitwise_xor_(ember.tensor([1, 2])) is b and b.tolist() == [13, 8]
    assert b.bitwise_not_().tolist() == [-14, -9]
    f = ember.tensor([1.0, 2.0, 3.0])
    assert f.greater_equal(2.0).tolist() == [False, True, True]
    g = f.clone()
    assert g.less_equal_(2.0) is g and g.tolist() == [1.0, 1.0, 0.0]
    assert f.clone().not_equal_(2.0).tolist() == [1.0, 0.0, 1.0]
    assert f.clone().greater_(1.5).dtype is ember.float32
    assert ember.tensor([True, False]).logical_xor_(ember.tensor([True, True])).tolist() == \
        [False, True]


def test_inplace_math_methods():
    x = ember.tensor([-1.0, 2.0])
    assert x.absolute_() is x and x.tolist() == [1.0, 2.0]
    assert x.negative_().tolist() == [-1.0, -2.0]
    c = ember.tensor([1.0, 2.0, 3.0])
    assert c.cumsum_(0) is c and c.tolist() == [1.0, 3.0, 6.0]
    assert c.cumprod_(0).tolist() == [1.0, 3.0, 18.0]
    with pytest.raises(RuntimeError, match="Bad in-place call: input tensor dtype float and "
                                           "output tensor dtype double should match"):
        c.cumsum_(0, dtype=ember.float64)


def test_inplace_transposes_record_the_graph():
    leaf = t(randn(2, 3, seed=11), True)
    y = leaf * 1
    assert y.t_() is y and y.shape == (3, 2)
    (y * ember.arange(6.0).reshape(3, 2)).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), np.arange(6.0).reshape(3, 2).T)
    z = ember.zeros(2, 3, 4)
    assert z.swapaxes_(0, 2).shape == (4, 3, 2) and z.swapdims_(0, 1).shape == (3, 4, 2)
    assert z.transpose_(1, 2).shape == (3, 2, 4)
    assert ember.swapaxes(z, 0, 1).shape == ember.swapdims(z, 0, 1).shape == (2, 3, 4)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.t_()
    with pytest.raises(RuntimeError, match="t_\\(\\) expects a tensor with <= 2 dimensions"):
        z.t_()


def test_nbytes_and_itemsize():
    assert ember.zeros(2, 3).nbytes == 24 and ember.zeros(2, 3).itemsize == 4
    assert ember.zeros(4, 4, dtype=ember.float64)[:, :1].nbytes == 32
    assert ember.tensor([True]).itemsize == 1


# ---- top-level in-place functions ---------------------------------------------------------------
def test_toplevel_inplace_functions_mutate_and_return_their_argument():
    args = {"clamp_": (0.0, 1.0), "clip_": (0.0, 1.0), "clamp_max_": (1.0,),
            "clamp_min_": (0.0,)}
    for name in _INPLACE_FUNCTIONS:
        x = ember.tensor([0.5, 0.25])
        expected = getattr(x.clone(), name)(*args.get(name, ()))
        assert getattr(ember, name)(x, *args.get(name, ())) is x, name
        np.testing.assert_array_equal(x.numpy(), expected.numpy(), err_msg=name)
        params = list(inspect.signature(getattr(ember, name)).parameters)
        assert params[0] == "input" and "out" not in params, name
    x = ember.ones(2)
    assert fill_(x, 4) is x and x.tolist() == [4.0, 4.0]
    assert zero_(x) is x and x.tolist() == [0.0, 0.0]
    assert resize_as_(x, ember.zeros(2, 2)) is x and x.shape == (2, 2)


# ---- top-level forms of functional ops --------------------------------------------------------
def test_toplevel_forms_call_the_functional_ops():
    x = t(randn(2, 3, 8, seed=12))
    w = t(randn(4, 3, 3, seed=13))
    np.testing.assert_array_equal(T.conv1d(x, w, None, 2, 1).numpy(),
                                  F.conv1d(x, w, None, 2, 1).numpy())
    np.testing.assert_array_equal(T.max_pool1d(x, 2, ()).numpy(), F.max_pool1d(x, 2).numpy())
    values, indices = T.adaptive_max_pool1d(x, 3)
    assert values.shape == indices.shape == (2, 3, 3)
    weight, bias = t(randn(3, seed=14)), t(randn(3, seed=15))
    np.testing.assert_allclose(
        T.batch_norm(x, weight, bias, None, None, True, 0.1, 1e-5, True).numpy(),
        F.batch_norm(x, None, None, weight, bias, True).numpy())
    np.testing.assert_array_equal(T.dropout(x, 0.5, False).numpy(), x.numpy())


def test_toplevel_losses_take_int_reductions():
    a, b = t(randn(4, 3, seed=16)), t(np.abs(randn(4, 3, seed=17)))
    for code, name in ((0, "none"), (1, "mean"), (2, "sum")):
        np.testing.assert_allclose(T.kl_div(a, b, code).numpy(),
                                   F.kl_div(a, b, reduction=name).numpy())
    assert T.kl_div(a, b).shape == (4, 3)  # PyTorch's top-level default: no reduction
    with pytest.raises(TypeError, match="kl_div\\(\\): argument 'reduction' \\(position 3\\) "
                                        "must be int, not str"):
        T.kl_div(a, b, "mean")


def test_toplevel_embedding_padding_idx():
    weight = t(randn(4, 2, seed=18), True)
    T.embedding(weight, ember.tensor([0, 2, 2]), 2).sum().backward()
    assert weight.grad[2].tolist() == [0.0, 0.0] and weight.grad[0].tolist() == [1.0, 1.0]
    weight.grad = None
    T.embedding(weight, ember.tensor([3]), -1).sum().backward()  # negative: no padding row
    assert weight.grad[3].tolist() == [1.0, 1.0]


def test_toplevel_rrelu_refuses_a_generator():
    with pytest.raises(NotImplementedError, match="generator"):
        T.rrelu(ember.zeros(2), generator=ember.Generator())
