"""Parity with PyTorch for the basic ops of ``_ops/basics.py`` and friends: log10, fix,
var_mean/std_mean, fmax/fmin, broadcast_to, ravel, positive, rsub, unravel_index,
scalar_tensor, asarray, as_strided, empty_strided, unfold, index_copy; the Tensor methods
and in-place forms PyTorch has (bitwise, comparison aliases, transpose_, nbytes...); the
top-level in-place functions (``torch.exp_``...) and the top-level forms of functional ops
(``torch.conv2d``, ``torch.layer_norm``...). Values and gradients in float32 and float64,
broadcasting, non-contiguous inputs, errors by type and message."""
import warnings

import numpy as np
import pytest
import torch

import ember
from ember._functions import _INPLACE_FUNCTIONS

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]


def randn(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def same_error(fn):
    """``fn(lib)`` raises the same exception type and message in both libraries."""
    expected, got = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert expected is not None, "torch raised nothing"
    assert got == expected


# ---- which names exist ------------------------------------------------------------------------
FUNCTIONS = ["log10", "log10_", "fix", "fix_", "var_mean", "std_mean", "fmax", "fmin",
             "broadcast_to", "ravel", "positive", "rsub", "unravel_index", "scalar_tensor",
             "asarray", "as_strided", "empty_strided", "index_copy", "swapaxes", "swapdims",
             *_INPLACE_FUNCTIONS]
METHODS = ["log10", "log10_", "fix", "fix_", "fmax", "fmin", "broadcast_to", "ravel",
           "positive", "as_strided", "as_strided_", "new_empty_strided", "unfold",
           "index_copy", "index_copy_", "bitwise_and", "bitwise_or", "bitwise_xor",
           "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_not_", "greater_equal",
           "less_equal", "not_equal", "greater_", "less_", "greater_equal_", "less_equal_",
           "not_equal_", "logical_xor_", "absolute_", "negative_", "cumsum_", "cumprod_",
           "swapdims", "swapaxes", "swapaxes_", "swapdims_", "transpose_", "t_", "nbytes",
           "itemsize", "resize_as_", "conj_physical_"]


def test_names_exist_as_in_torch():
    for name in FUNCTIONS:
        assert hasattr(torch, name) and hasattr(ember, name), name
    for name in METHODS:
        assert hasattr(torch.Tensor, name) and hasattr(ember.Tensor, name), name
    for name in ("var_mean", "std_mean", "rsub", "unravel_index", "scalar_tensor"):
        assert not hasattr(ember.Tensor, name), name  # no method in PyTorch
    assert not hasattr(ember, "unfold") and not hasattr(ember, "index_copy_")


# ---- log10, fix -------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_log10(dtype):
    x = np.abs(randn((3, 4), dtype, 1)) + 0.1
    compare(lambda lib, a: lib.log10(a), x)
    compare(lambda lib, a: a.log10(), x, noncontiguous=True)
    compare(lambda lib, a: a.clone().log10_(), x)
    compare(lambda lib, a: lib.log10(a), np.array([1, 10, 1000]))  # int -> float32
    out = ember.empty(3)
    assert ember.log10(ember.tensor([1.0, 10.0, 100.0]), out=out) is out
    np.testing.assert_allclose(out.numpy(), [0, 1, 2], rtol=1e-6)


def test_log10_special_values():
    x = np.array([0.0, -1.0, np.inf, np.nan, 1e-300])
    compare(lambda lib, a: lib.log10(a), x, grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
def test_fix(dtype):
    x = randn((2, 5), dtype, 2) * 4
    compare(lambda lib, a: lib.fix(a), x)
    compare(lambda lib, a: a.fix(), x, noncontiguous=True)
    compare(lambda lib, a: lib.fix_(a.clone()), x)
    compare(lambda lib, a: a.fix(), np.array([-3, 4]))


# ---- var_mean, std_mean -----------------------------------------------------------------------
MOMENT_ARGS = [((), {}), ((1,), {}), ((0,), {"keepdim": True}), (((0, 1),), {}),
               ((1,), {"correction": 0}), ((1,), {"correction": 2, "keepdim": True}),
               ((1, False), {}), ((None,), {"unbiased": False}), ((False,), {}),
               ((-1, True, True), {})]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
@pytest.mark.parametrize("args,kwargs", MOMENT_ARGS, ids=str)
def test_var_std_mean(name, args, kwargs, dtype):
    x = randn((3, 4), dtype, 3)
    compare(lambda lib, a: getattr(lib, name)(a, *args, **kwargs), x)
    compare(lambda lib, a: getattr(lib, name)(a, *args, **kwargs), x, noncontiguous=True)


def test_var_mean_errors():
    same_error(lambda lib: lib.var_mean(lib.tensor([1, 2])))
    same_error(lambda lib: lib.std_mean(lib.tensor([1, 2])))
    same_error(lambda lib: lib.var_mean(lib.zeros(2, 2), 2))
    for lib in (torch, ember):  # (PyTorch's message lists its overloads)
        with pytest.raises(TypeError):
            lib.var_mean(lib.zeros(2), 0, True, correction=1)


# ---- fmax, fmin ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin(name, dtype):
    a = np.array([1.0, np.nan, 3.0, np.nan, 2.0, -1.0], dtype)
    b = np.array([2.0, 0.5, np.nan, np.nan, 2.0, -1.0], dtype)  # ties go to input
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b)
    compare(lambda lib, x, y: getattr(x, name)(y), randn((3, 1), dtype, 4),
            randn((1, 4), dtype, 5))
    compare(lambda lib, x, y: getattr(lib, name)(x, y), randn((3, 4), dtype, 6),
            randn((4, 3), dtype, 7).T.copy(), noncontiguous=True)


@pytest.mark.parametrize("name", ["fmax", "fmin"])
def test_fmax_fmin_dtypes_and_errors(name):
    compare(lambda lib, x, y: getattr(lib, name)(x, y), np.array([1, 5]), np.array([2.0, np.nan]),
            grad=False)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), np.array([1, 5], np.int32),
            np.array([3, 2]))
    compare(lambda lib, x, y: getattr(lib, name)(x, y), np.float32([1, 5]), np.float64([3, 2]))
    same_error(lambda lib: getattr(lib, name)(lib.tensor([1.0]), 2.0))
    same_error(lambda lib: getattr(lib, name)(lib.ones(2), lib.ones(3)))
    out = ember.empty(2)
    getattr(ember, name)(ember.tensor([1.0, 4.0]), ember.tensor([3.0, 2.0]), out=out)
    expected = getattr(torch, name)(torch.tensor([1.0, 4.0]), torch.tensor([3.0, 2.0]))
    np.testing.assert_array_equal(out.numpy(), expected.numpy())


# ---- broadcast_to, ravel, positive, rsub ------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_broadcast_to_ravel_positive(dtype):
    x = randn((3, 1), dtype, 8)
    compare(lambda lib, a: lib.broadcast_to(a, (2, 3, 4)), x)
    compare(lambda lib, a: a.broadcast_to((-1, 5)), x)
    compare(lambda lib, a: lib.ravel(a), randn((3, 4), dtype, 9), noncontiguous=True)
    compare(lambda lib, a: a.ravel(), randn((3, 4), dtype, 9))
    compare(lambda lib, a: lib.positive(a) * 2, x)
    same_error(lambda lib: lib.broadcast_to(lib.ones(3), (2, 4)))
    same_error(lambda lib: lib.positive(lib.tensor([True])))
    t = ember.ones(2)
    assert ember.positive(t) is t is t.positive()


def test_ravel_views_when_contiguous():
    for lib in (torch, ember):
        x = lib.zeros(2, 3)
        assert lib.ravel(x).data_ptr() == x.data_ptr()
        assert lib.ravel(x.t()).is_contiguous()


@pytest.mark.parametrize("dtype", FLOATS)
def test_rsub(dtype):
    a, b = randn((2, 3), dtype, 10), randn((3,), dtype, 11)
    compare(lambda lib, x, y: lib.rsub(x, y), a, b)
    compare(lambda lib, x, y: lib.rsub(x, y, alpha=2.5), a, b, noncontiguous=True)
    compare(lambda lib, x: lib.rsub(x, 3.5), a)
    compare(lambda lib, x: lib.rsub(x, 3, alpha=2), np.array([1, 2]))
    compare(lambda lib, x: lib.rsub(x, 3.5), np.array([1, 2]))
    same_error(lambda lib: lib.rsub(lib.tensor([1.0]), lib.tensor([2.0]), alpha=True))


# ---- unravel_index -----------------------------------------------------------------------------
@pytest.mark.parametrize("indices,shape", [([4, 5], (2, 3)), (4, (2, 3)), ([[7]], 4),
                                           ([6, -1, -7], (2, 3)), ([2 ** 40], (2 ** 30, 2 ** 30)),
                                           ([0, 3], [4]), ([], (2, 0)), ([1], ())], ids=str)
def test_unravel_index(indices, shape):
    expected = torch.unravel_index(torch.tensor(indices, dtype=torch.int64), shape)
    got = ember.unravel_index(ember.tensor(indices, dtype=ember.int64), shape)
    assert len(got) == len(expected)
    for e, t in zip(got, expected):
        assert e.dtype.name == "int64" and tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_unravel_index_errors():
    same_error(lambda lib: lib.unravel_index(lib.tensor([1.0]), (2, 3)))
    same_error(lambda lib: lib.unravel_index(lib.tensor([True]), (2, 3)))
    same_error(lambda lib: lib.unravel_index(lib.tensor([1]), (2, -3)))
    same_error(lambda lib: lib.unravel_index(lib.tensor([1]), (2.0, 3)))
    same_error(lambda lib: lib.unravel_index(lib.tensor([1]), (0, 3)))
    out = ember.unravel_index(ember.tensor([1], dtype=ember.int32), (2, 3))
    assert out[0].dtype is ember.int64  # as PyTorch: int64 coordinates


# ---- scalar_tensor, asarray, empty_strided ----------------------------------------------------
@pytest.mark.parametrize("value,dtype", [(3, None), (2.5, None), (True, None), (3, "int64"),
                                         (1.5, "float64"), (7, "int32")], ids=str)
def test_scalar_tensor(value, dtype):
    kw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    ekw = {} if dtype is None else {"dtype": getattr(ember, dtype)}
    t, e = torch.scalar_tensor(value, **kw), ember.scalar_tensor(value, **ekw)
    assert e.dtype.name == str(t.dtype).split(".")[-1] and e.shape == ()
    assert e.item() == t.item()
    assert ember.scalar_tensor(2.0, requires_grad=True).requires_grad


def test_asarray_shares_memory_as_torch():
    for lib in (torch, ember):
        n = np.arange(3.0)
        shared, copied = lib.asarray(n), lib.asarray(n, copy=True)
        cast = lib.asarray(n, dtype=lib.float32)
        n[0] = 7.0
        assert shared[0].item() == 7.0 and copied[0].item() == 0.0 and cast[0].item() == 0.0
        t = lib.arange(3.0)
        assert lib.asarray(t) is t
        assert lib.asarray(t, copy=True).data_ptr() != t.data_ptr()
        assert lib.asarray(t, dtype=lib.float64).dtype == lib.float64
        strided = lib.asarray(n[::2])
        n[2] = 9.0
        assert strided[1].item() == 9.0  # a strided array is shared too
        assert lib.asarray([1, 2]).dtype == lib.int64 and lib.asarray([1.0, 2]).dtype == lib.float32
        assert lib.asarray(np.float64(2.0)).dtype == lib.float64
        assert lib.asarray([[1, 2]], dtype=lib.float64).shape == (1, 2)
        assert lib.asarray([1.0, 2], requires_grad=True).requires_grad


def test_asarray_autograd_state():
    for lib in (torch, ember):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            leaf = lib.arange(3.0, requires_grad=True)
            assert lib.asarray(leaf) is leaf
            copied = lib.asarray(leaf, copy=True)
            assert copied.requires_grad and not copied.is_leaf
            assert not lib.asarray(leaf, copy=True, requires_grad=False).requires_grad
            plain = lib.arange(3.0)
            assert lib.asarray(plain, requires_grad=True) is plain and plain.requires_grad
            assert lib.asarray(plain, requires_grad=False) is plain
            assert not plain.requires_grad  # switched off in place, as PyTorch does
            made = lib.arange(3.0, requires_grad=True) * 2
            detached = lib.asarray(made, requires_grad=False)
            assert detached is not made and detached.grad_fn is None
            assert lib.asarray(made, requires_grad=True) is made
            cast = lib.asarray(leaf, dtype=lib.float64, requires_grad=False)
            assert not cast.requires_grad and cast.is_leaf
            assert lib.asarray(leaf, requires_grad=False) is leaf and not leaf.requires_grad


def test_asarray_errors():
    n = np.arange(3.0)
    same_error(lambda lib: lib.asarray(lib.arange(3.0), dtype=lib.float64, copy=False))
    same_error(lambda lib: lib.asarray(n, dtype=lib.float32, copy=False))
    same_error(lambda lib: lib.asarray([1, 2], copy=False))
    same_error(lambda lib: lib.asarray(n[::-1]))
    same_error(lambda lib: lib.asarray(n[::-1], copy=True))
    same_error(lambda lib: lib.asarray([1], requires_grad=True))


@pytest.mark.parametrize("size,stride", [((2, 3), (1, 2)), ((2, 3), (3, 1)), ((4,), (2,)),
                                         ((2, 0), (1, 1)), ((), ())], ids=str)
def test_empty_strided(size, stride):
    t, e = torch.empty_strided(size, stride), ember.empty_strided(size, stride)
    assert e.shape == t.shape and e.stride() == t.stride() and e.dtype is ember.float32
    assert ember.empty_strided(size, stride, dtype=ember.int64).dtype is ember.int64
    base = ember.zeros(1, dtype=ember.float64)
    made = base.new_empty_strided(size, stride)
    assert made.stride() == t.stride() and made.dtype is ember.float64


def test_empty_strided_errors():
    same_error(lambda lib: lib.empty_strided((2,), (1, 2)))
    same_error(lambda lib: lib.empty_strided((2,), (-1,)))


# ---- as_strided ---------------------------------------------------------------------------------
AS_STRIDED = [((3, 3), (1, 1), 2), ((2, 2), (1, 2), 0), ((4,), (2,), 1), ((2, 3), (0, 1), 3),
              ((2, 2), (4, 1), None), ((0, 2), (1, 1), 0)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("size,stride,offset", AS_STRIDED, ids=str)
def test_as_strided(size, stride, offset, dtype):
    x = randn((12,), dtype, 12)
    args = (size, stride) if offset is None else (size, stride, offset)
    compare(lambda lib, a: lib.as_strided(a, *args), x)
    compare(lambda lib, a: a.as_strided(*args), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_as_strided_of_views(dtype):
    x = randn((4, 5), dtype, 13)
    # relative to the storage: a view's own offset does not count
    compare(lambda lib, a: a[1:].as_strided((3,), (2,), 1), x)
    compare(lambda lib, a: a[1:].as_strided((3,), (2,)), x)  # the view's offset kept
    compare(lambda lib, a: a.t().as_strided((2, 2), (1, 5)), x)
    compare(lambda lib, a: a[:2].expand(3, 2, 5).as_strided((2, 2), (1, 1), 1), x)  # overlap
    compare(lambda lib, a: (a * 2).as_strided((2, 3), (3, 1), 4), x, noncontiguous=True)


def test_as_strided_is_a_view():
    for lib in (torch, ember):
        x = lib.arange(6.0)
        y = lib.as_strided(x, (2, 2), (1, 2), 1)
        assert y._base is x and y.storage_offset() == 1
        assert x[2:].unfold(0, 2, 1).storage_offset() == 2
        assert lib.as_strided(y, (2,), (2,), 3).storage_offset() == 3
        x[1] = 100.0
        assert y[0, 0].item() == 100.0
        z = lib.zeros(2, 3)
        assert z.as_strided_((3,), (2,)) is z and z.shape == (3,) and z.stride() == (2,)


def test_storage_offset_of_strided_views():
    for lib in (torch, ember):  # views made with as_strided count from the storage too
        x = lib.tensor([1 + 1j, 2 + 2j, 3 + 3j])
        assert lib.view_as_real(x[1:]).storage_offset() == 2


def test_as_strided_errors():
    same_error(lambda lib: lib.as_strided(lib.arange(12.0), (3, 3), (4, 4), 2))
    same_error(lambda lib: lib.as_strided(lib.arange(12.0), (3, 3), (4, -1), 2))
    same_error(lambda lib: lib.as_strided(lib.arange(12.0), (3,), (4, 4), 2))


# ---- unfold -------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim,size,step", [(1, 2, 1), (0, 2, 2), (-1, 3, 2), (1, 5, 1),
                                           (1, 0, 1), (0, 1, 3)], ids=str)
def test_unfold(dim, size, step, dtype):
    x = randn((3, 5), dtype, 14)
    compare(lambda lib, a: a.unfold(dim, size, step), x)
    compare(lambda lib, a: a.unfold(dim, size, step), x, noncontiguous=True)
    compare(lambda lib, a: a.unfold(dim, size, step).unfold(0, 1, 1), x)


def test_unfold_of_0d_and_views():
    compare(lambda lib, a: a.unfold(0, 1, 1), np.array(3.0))
    for lib in (torch, ember):
        x = lib.arange(5.0)
        y = x.unfold(0, 2, 1)
        assert y._base is x and y.stride() == (1, 1)


def test_unfold_errors():
    x = lambda lib: lib.zeros(3, 4)  # noqa: E731
    same_error(lambda lib: x(lib).unfold(1, 5, 1))
    same_error(lambda lib: x(lib).unfold(1, 2, 0))
    same_error(lambda lib: x(lib).unfold(2, 2, 1))
    same_error(lambda lib: x(lib).unfold(1, -1, 1))
    same_error(lambda lib: lib.tensor(3.0).unfold(0, 2, 1))


# ---- index_copy ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim,index,src_shape", [(0, [2, 0], (2, 4)), (1, [3, 1, 0], (3, 3)),
                                                 (-1, [1], (3, 1)), (0, [], (0, 4))], ids=str)
def test_index_copy(dim, index, src_shape, dtype):
    x, src = randn((3, 4), dtype, 15), randn(src_shape, dtype, 16)
    idx = lambda lib: lib.tensor(index, dtype=lib.int64)  # noqa: E731
    compare(lambda lib, a, s: lib.index_copy(a, dim, idx(lib), s), x, src)
    compare(lambda lib, a, s: a.index_copy(dim, idx(lib), s), x, src, noncontiguous=True)
    compare(lambda lib, a, s: a.clone().index_copy_(dim, idx(lib), s), x, src)


def test_index_copy_scalars_and_ints():
    compare(lambda lib, a, s: lib.index_copy(a, 0, lib.tensor([0]), s), np.array(1.0),
            np.array(5.0))
    compare(lambda lib, a, s: lib.index_copy(a, 0, lib.tensor(1), s), np.zeros((3, 2)),
            np.ones((1, 2)))
    compare(lambda lib, a, s: lib.index_copy(a, 1, lib.tensor([2, 0]), s),
            np.arange(6).reshape(2, 3), np.array([[7, 8], [9, 10]]))


def test_index_copy_errors():
    x = lambda lib: lib.zeros(3, 4)  # noqa: E731
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([0]), lib.ones(1, 3)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([0.0]), lib.ones(1, 4)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([0, 1]), lib.ones(1, 4)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([5]), lib.ones(1, 4)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([-1]), lib.ones(1, 4)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([[0]]), lib.ones(1, 4)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([0], dtype=lib.int32),
                                          lib.ones(1, 4)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor([0]),
                                          lib.ones(1, 4, dtype=lib.float64)))
    same_error(lambda lib: lib.index_copy(x(lib), 3, lib.tensor([0]), lib.ones(1, 4)))
    same_error(lambda lib: lib.index_copy(x(lib), 1, lib.tensor([0]), lib.ones(2, 1)))
    same_error(lambda lib: lib.index_copy(lib.zeros(3, 4, 5), 2, lib.tensor([0]),
                                          lib.ones(3, 3, 1)))
    same_error(lambda lib: lib.index_copy(x(lib), 0, lib.tensor(1), lib.ones(4)))


# ---- methods and their in-place forms ---------------------------------------------------------
INTS = (np.array([[5, 3, -2], [0, 7, 12]]), np.array([6, 1, 3]))
BOOLS = (np.array([[True, False, True], [False, False, True]]), np.array([True, False, False]))


@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor"])
def test_bitwise_methods(name):
    for a, b in (INTS, BOOLS):
        compare(lambda lib, x, y: getattr(x, name)(y), a, b)
        compare(lambda lib, x, y: getattr(x.clone(), name + "_")(y), a, b)
        compare(lambda lib, x: getattr(x.clone(), name + "_")(1 if x.dtype != lib.bool
                                                              else True), a)
    compare(lambda lib, x: x.clone().bitwise_not_(), INTS[0])
    compare(lambda lib, x: x.clone().bitwise_not_(), BOOLS[0])


@pytest.mark.parametrize("name", ["greater", "less", "greater_equal", "less_equal",
                                  "not_equal"])
def test_comparison_aliases(name, dtype=np.float64):
    a, b = randn((2, 3), dtype, 17), randn((3,), dtype, 18)
    b[1] = a[0, 1]
    compare(lambda lib, x, y: getattr(x, name)(y), a, b, grad=False)
    compare(lambda lib, x, y: getattr(x.detach().clone(), name + "_")(y), a, b, grad=False)
    compare(lambda lib, x: getattr(x.detach().clone(), name + "_")(0.0), a, grad=False)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b, grad=False)


def test_conj_physical_inplace():
    for values in ([1 + 2j, -3 - 1j], [1.5, -2.0]):
        t, e = torch.tensor(values), ember.tensor(values)
        assert t.conj_physical_() is t and e.conj_physical_() is e
        np.testing.assert_array_equal(e.numpy(), t.numpy())


def test_logical_xor_inplace():
    compare(lambda lib, x, y: x.clone().logical_xor_(y), *BOOLS)
    compare(lambda lib, x, y: x.clone().logical_xor_(y), randn((2, 3), seed=19),
            np.array([0.0, 1.0, 0.0]), grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
def test_inplace_math_methods(dtype):
    x = randn((3, 4), dtype, 20)
    compare(lambda lib, a: a.clone().absolute_(), x)
    compare(lambda lib, a: a.clone().negative_(), x)
    compare(lambda lib, a: a.clone().cumsum_(1), x)
    compare(lambda lib, a: a.clone().cumprod_(0), x)
    same_error(lambda lib: lib.zeros(3).cumsum_(0, dtype=lib.float64))
    same_error(lambda lib: lib.zeros(3, dtype=lib.int64).cumprod_(0, dtype=lib.float32))
    compare(lambda lib, a: a.clone().cumsum_(-1), np.array([1, 2, 3]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_swaps_and_transposes(dtype):
    x = randn((2, 3, 4), dtype, 21)
    compare(lambda lib, a: lib.swapaxes(a, 0, 2), x)
    compare(lambda lib, a: lib.swapdims(a, -1, 1), x)
    compare(lambda lib, a: a.swapdims(0, 1), x)
    compare(lambda lib, a: a.swapaxes(0, 1), x)
    compare(lambda lib, a: (a * 1).swapaxes_(0, 2), x)
    compare(lambda lib, a: (a * 1).swapdims_(1, 2), x)
    compare(lambda lib, a: (a * 1).transpose_(0, 1) * 3, x)
    compare(lambda lib, a: (a * 1).t_(), randn((2, 3), dtype, 22))
    compare(lambda lib, a: (a * 1).t_(), randn((3,), dtype, 23))


def test_inplace_transpose_of_a_view_then_written():
    def fn(lib, a):
        b = a * 1
        v = b[:4].view(2, 2)
        v.t_()
        v.mul_(lib.tensor([[1.0, 10.0], [100.0, 1000.0]], dtype=a.dtype))
        return b
    compare(fn, randn((6,), np.float64, 25))


def test_inplace_transposes_keep_identity():
    for lib in (torch, ember):
        x = lib.zeros(2, 3)
        assert x.t_() is x and x.shape == (3, 2) and x.stride() == (1, 3)
        assert x.transpose_(0, 1) is x and x.shape == (2, 3)
        assert x.swapaxes_(0, 1) is x and x.swapdims_(0, 1) is x and x.shape == (2, 3)
    same_error(lambda lib: lib.zeros(2, 2, 2).t_())
    same_error(lambda lib: lib.zeros(2, 3, requires_grad=True).t_())


def test_nbytes_itemsize_resize_as():
    for make in (lambda lib: lib.zeros(2, 3), lambda lib: lib.tensor([1, 2]),
                 lambda lib: lib.zeros(4, 4, dtype=lib.float64)[:, :2],
                 lambda lib: lib.tensor(True)):
        t, e = make(torch), make(ember)
        assert (e.nbytes, e.itemsize) == (t.nbytes, t.itemsize)
    for lib in (torch, ember):
        x = lib.zeros(2)
        assert x.resize_as_(lib.zeros(2, 3)) is x and x.shape == (2, 3)


# ---- top-level in-place functions -------------------------------------------------------------
INPLACE_ARGS = {"clamp_": (-0.5, 0.5), "clip_": (-0.5, 0.5), "clamp_max_": (0.25,),
                "clamp_min_": (-0.25,), "nan_to_num_": (0.0,), "round_": ()}
POSITIVE = {"acosh_", "arccosh_"}
UNIT = {"acos_", "arccos_", "asin_", "arcsin_", "atanh_", "arctanh_"}


@pytest.mark.parametrize("name", _INPLACE_FUNCTIONS)
def test_toplevel_inplace_functions(name):
    x = randn((2, 3), np.float64, 24)
    if name in POSITIVE:
        x = np.abs(x) + 1.5
    elif name in UNIT or name.startswith("log") or name in ("sqrt_", "rsqrt_"):
        x = np.abs(x) / (np.abs(x).max() + 1) + 0.01
    args = INPLACE_ARGS.get(name, ())
    for lib in (torch, ember):
        t = lib.tensor(x)
        assert getattr(lib, name)(t, *args) is t, name
    # PyTorch has no derivative for these in-place forms; ember's are those of the ops
    no_grad = {"detach_", "acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}
    compare(lambda lib, a: getattr(lib, name)(a.clone(), *args), x, grad=name not in no_grad)


def test_toplevel_fill_zero_resize_as():
    from ember._functions import fill_, zero_, resize_as_
    for lib, (fill, zero, resize) in ((torch, (torch.fill_, torch.zero_, torch.resize_as_)),
                                      (ember, (fill_, zero_, resize_as_))):
        t = lib.ones(2)
        assert fill(t, 3) is t and t.tolist() == [3.0, 3.0]
        assert zero(t) is t and t.tolist() == [0.0, 0.0]
        assert resize(t, lib.zeros(3, 1)) is t and t.shape == (3, 1)
        assert fill(t, lib.tensor(2.0)) is t and t.sum().item() == 6.0


# ---- top-level forms of functional ops --------------------------------------------------------
def _conv_case(lib, name, x, w, b, **kw):
    return getattr(lib, name)(x, w, b, **kw)


CONV = [("conv1d", (2, 4, 7), (6, 2, 3), dict(stride=2, padding=1, groups=2)),
        ("conv1d", (2, 4, 7), (6, 4, 3), dict(padding="same", dilation=2)),
        ("conv2d", (1, 3, 6, 5), (4, 3, 3, 2), dict(stride=(2, 1), padding=1)),
        ("conv3d", (1, 2, 4, 4, 3), (3, 2, 2, 2, 2), dict(dilation=1)),
        ("conv_transpose1d", (2, 4, 5), (4, 3, 3), dict(stride=2, output_padding=1)),
        ("conv_transpose2d", (1, 2, 3, 4), (2, 3, 2, 3), dict(padding=1, dilation=2)),
        ("conv_transpose3d", (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), dict(stride=2))]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,xs,ws,kw", CONV, ids=[c[0] for c in CONV])
def test_toplevel_convolutions(name, xs, ws, kw, dtype):
    x, w = randn(xs, dtype, 30), randn(ws, dtype, 31)
    channels = ws[1] * kw.get("groups", 1) if "transpose" in name else ws[0]
    b = randn((channels,), dtype, 32)
    compare(lambda lib, a, c, d: _conv_case(lib, name, a, c, d, **kw), x, w, b)
    if "groups" not in kw:
        compare(lambda lib, a, c: getattr(lib, name)(a, c), x, w)


POOLS = [("avg_pool1d", (2, 3, 8), (3,), dict(stride=2, padding=1, ceil_mode=True)),
         ("avg_pool1d", (2, 3, 8), (2,), {}),
         ("max_pool1d", (2, 3, 8), (3,), dict(stride=2, dilation=2)),
         ("max_pool1d", (2, 3, 8), (2,), {}),
         ("max_pool2d", (1, 2, 6, 5), ((2, 3),), dict(padding=1)),
         ("max_pool2d", (1, 2, 6, 5), (2,), {}),
         ("max_pool3d", (1, 1, 4, 4, 4), (2,), dict(stride=(1, 2, 2))),
         ("max_pool1d_with_indices", (2, 3, 8), (3,), dict(stride=2)),
         ("adaptive_avg_pool1d", (2, 3, 8), (3,), {}),
         ("adaptive_max_pool1d", (2, 3, 8), (3,), {})]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,xs,args,kw", POOLS, ids=[p[0] for p in POOLS])
def test_toplevel_pooling(name, xs, args, kw, dtype):
    x = randn(xs, dtype, 33)
    compare(lambda lib, a: getattr(lib, name)(a, *args, **kw), x)


def test_toplevel_pooling_empty_stride_is_kernel():
    compare(lambda lib, a: lib.max_pool2d(a, 2, ()), randn((1, 4, 4), seed=34))
    compare(lambda lib, a: lib.avg_pool1d(a, 2, []), randn((1, 6), seed=35))


@pytest.mark.parametrize("dtype", FLOATS)
def test_toplevel_normalization(dtype):
    x = randn((4, 6, 3), dtype, 36)
    w, b = randn((6,), dtype, 37), randn((6,), dtype, 38)
    compare(lambda lib, a, c, d: lib.layer_norm(a, [3], c[:3], d[:3], 1e-3, True), x, w, b)
    compare(lambda lib, a: lib.layer_norm(a, (6, 3)), x)
    compare(lambda lib, a, c, d: lib.group_norm(a, 2, c, d, 1e-4, False), x, w, b)
    compare(lambda lib, a: lib.group_norm(a, 3), x)
    compare(lambda lib, a, c, d: lib.batch_norm(a, c, d, None, None, True, 0.1, 1e-5, False),
            x, w, b)
    compare(lambda lib, a, c, d: lib.instance_norm(a, c, d, None, None, True, 0.1, 1e-5, False),
            x, w, b)


def test_toplevel_norms_update_running_stats():
    x = randn((4, 3, 2), seed=39)
    for use in (True, False):
        stats = []
        for lib in (torch, ember):
            mean, var = lib.zeros(3, dtype=lib.float64), lib.ones(3, dtype=lib.float64)
            out = lib.batch_norm(lib.tensor(x), None, None, mean, var, use, 0.2, 1e-5, False)
            stats.append((out.numpy(), mean.numpy(), var.numpy()))
        for t, e in zip(*stats):
            np.testing.assert_allclose(e, t, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("dtype", FLOATS)
def test_toplevel_embedding_and_shuffles(dtype):
    weight = randn((5, 3), dtype, 40)
    idx = lambda lib: lib.tensor([[1, 4], [0, 1]])  # noqa: E731
    compare(lambda lib, w: lib.embedding(w, idx(lib)), weight)
    compare(lambda lib, w: lib.embedding(w, idx(lib), 1), weight)  # no gradient to row 1
    compare(lambda lib, w: lib.embedding(w, idx(lib), -1, True), weight)
    compare(lambda lib, a: lib.pixel_shuffle(a, 2), randn((1, 8, 2, 3), dtype, 41))
    compare(lambda lib, a: lib.pixel_unshuffle(a, 2), randn((1, 2, 4, 6), dtype, 42))
    compare(lambda lib, a: lib.channel_shuffle(a, 3), randn((2, 6, 2), dtype, 43))
    compare(lambda lib, a: lib.constant_pad_nd(a, [1, 2, 0, 1], 0.5), randn((2, 3), dtype, 44))


ACTIVATIONS = [("prelu", lambda lib, a, w: lib.prelu(a, w)),
               ("celu", lambda lib, a, w: lib.celu(a, 0.7)),
               ("celu_", lambda lib, a, w: lib.celu_(a * 1)),
               ("selu", lambda lib, a, w: lib.selu(a)),
               ("selu_", lambda lib, a, w: lib.selu_(a * 1)),
               ("rrelu", lambda lib, a, w: lib.rrelu(a, 0.2, 0.2)),
               ("rrelu_", lambda lib, a, w: lib.rrelu_(a * 1, 0.1, 0.1, False)),
               ("threshold", lambda lib, a, w: lib.threshold(a, 0.1, -2.0)),
               ("threshold_", lambda lib, a, w: lib.threshold_(a * 1, 0.1, -2.0)),
               ("hardshrink", lambda lib, a, w: lib.hardshrink(a, 0.3)),
               ("hardshrink-default", lambda lib, a, w: lib.hardshrink(a))]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_toplevel_activations(name, fn, dtype):
    compare(fn, randn((2, 3, 4), dtype, 45), randn((3,), dtype, 46) * 0.1)


def test_toplevel_dropout():
    x = randn((3, 4), seed=47)
    for name in ("dropout", "alpha_dropout", "feature_alpha_dropout"):
        compare(lambda lib, a: getattr(lib, name)(a, 0.5, False), x)
        compare(lambda lib, a: getattr(lib, name + "_")(a * 1, 0.3, False), x)
        for lib in (torch, ember):
            t = lib.tensor(x)
            assert getattr(lib, name + "_")(t, 0.5, False) is t
    for lib in (torch, ember):
        kept = lib.dropout(lib.ones(1000, dtype=lib.float64), 0.5, True)
        values = set(np.unique(kept.numpy()).tolist())
        assert values <= {0.0, 2.0} and len(values) == 2
        assert lib.dropout(lib.ones(5), 0.0, True).tolist() == [1.0] * 5


@pytest.mark.parametrize("dtype", FLOATS)
def test_toplevel_products_and_distances(dtype):
    a, b = randn((4, 3), dtype, 48), randn((4, 3), dtype, 49)
    w, bias = randn((2, 3, 3), dtype, 50), randn((2,), dtype, 51)
    compare(lambda lib, x, y, z, c: lib.bilinear(x, y, z, c), a, b, w, bias)
    compare(lambda lib, x, y, z: lib.bilinear(x, y, z), a, b, w)
    compare(lambda lib, x, y: lib.cosine_similarity(x, y), a, b)
    compare(lambda lib, x, y: lib.cosine_similarity(x, y, 0, 1e-6), a, b)
    compare(lambda lib, x, y: lib.pairwise_distance(x, y), a, b)
    compare(lambda lib, x, y: lib.pairwise_distance(x, y, 1.5, 1e-3, True), a, b)
    compare(lambda lib, x: lib.pdist(x), a)
    compare(lambda lib, x: lib.pdist(x, 3.0), a)


REDUCTIONS = [0, 1, 2]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_toplevel_losses(reduction, dtype):
    x, y = randn((4, 3), dtype, 52), randn((4, 3), dtype, 53)
    prob = 1 / (1 + np.exp(-randn((4, 3), dtype, 54)))
    sign = np.array([1.0, -1.0, 1.0, -1.0], dtype)
    compare(lambda lib, a, t: lib.kl_div(a, t, reduction), x, prob)
    compare(lambda lib, a, t: lib.kl_div(a, t, reduction, log_target=True), x, y)
    compare(lambda lib, a, t: lib.binary_cross_entropy_with_logits(a, t, None, None, reduction),
            x, prob)
    weights = lambda lib: (lib.tensor(np.abs(y)), lib.tensor(np.abs(y[0])))  # noqa: E731
    compare(lambda lib, a, t: lib.binary_cross_entropy_with_logits(a, t, *weights(lib),
                                                                   reduction), x, prob)
    compare(lambda lib, a, b, s: lib.cosine_embedding_loss(a, b, s, 0.2, reduction), x, y, sign)
    compare(lambda lib, a, s: lib.hinge_embedding_loss(a, s, 0.5, reduction), x,
            np.sign(y).astype(dtype))
    compare(lambda lib, a, b, s: lib.margin_ranking_loss(a, b, s, 0.1, reduction), x[:, 0],
            y[:, 0], sign)
    compare(lambda lib, a, t: lib.poisson_nll_loss(a, t, True, True, 1e-8, reduction), x,
            np.abs(y))
    compare(lambda lib, a, b, c: lib.triplet_margin_loss(a, b, c, 1.0, 2.0, 1e-6, True,
                                                         reduction), x, y, prob)


def test_toplevel_loss_defaults_and_errors():
    x, y = randn((4, 3), seed=55), np.abs(randn((4, 3), seed=56))
    compare(lambda lib, a, t: lib.kl_div(a, t), x, y)
    compare(lambda lib, a, t: lib.binary_cross_entropy_with_logits(a, t), x, y / y.max())
    compare(lambda lib, a, b, c: lib.triplet_margin_loss(a, b, c), x, y, x * 2)
    compare(lambda lib, a, b, s: lib.cosine_embedding_loss(a, b, s), x, y, np.ones(4))
    compare(lambda lib, a, s: lib.hinge_embedding_loss(a, s), x, np.sign(y - 0.5))
    compare(lambda lib, a, b, s: lib.margin_ranking_loss(a, b, s), x[:, 0], y[:, 0], -np.ones(4))
    compare(lambda lib, a: lib.celu(a), x)
    compare(lambda lib, a: lib.rrelu(a - 0.5), x)
    same_error(lambda lib: lib.kl_div(lib.zeros(2), lib.zeros(2), "mean"))
    same_error(lambda lib: lib.layer_norm(lib.zeros(2, 3), [2]))
    same_error(lambda lib: lib.conv2d(lib.zeros(1, 3, 4, 4), lib.zeros(2, 2, 3, 3)))
