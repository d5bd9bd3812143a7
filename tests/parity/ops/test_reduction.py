"""Parity with PyTorch for reductions (sum, mean, prod, max/min, amax/amin,
argmax/argmin, var/std, logsumexp, norm, all/any, cumsum/cumprod) and for
softmax/log_softmax: values, dtypes, index outputs and gradients."""

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def distinct(shape, dtype, seed=0):
    """Random values with no ties (a shuffled, spread-out arange)."""
    n = int(np.prod(shape))
    vals = np.random.default_rng(seed).permutation(n) * 0.37 - n * 0.15
    return vals.reshape(shape).astype(dtype)


# dims to reduce over for a (2, 3, 4) input
DIMS = [None, 0, 1, -1, 2, -3, (0, 2), (-1, 0), (0, 1, 2), ()]
DIM_IDS = [str(d) for d in DIMS]


def _call(lib, name, x, dim, keepdim, **kw):
    fn = getattr(lib, name)
    if dim is None:
        return fn(x, **kw)
    return fn(x, dim, keepdim=keepdim, **kw)


# ---- sum / mean / prod --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", DIMS, ids=DIM_IDS)
@pytest.mark.parametrize("name", ["sum", "mean"])
def test_sum_mean(name, dim, keepdim, dtype):
    x = randn((2, 3, 4), dtype, seed=1)
    compare(lambda lib, t: _call(lib, name, t, dim, keepdim), x)
    compare(lambda lib, t: _call(lib, name, t, dim, keepdim), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_mean_methods_and_scalar_input(dtype):
    x = randn((3, 4), dtype, seed=2)
    compare(lambda lib, t: t.sum() * t.mean(), x)
    compare(lambda lib, t: t.sum(dim=1, keepdim=True) + t.mean(0), x)
    compare(lambda lib, t: t.sum(), np.array(2.5, dtype))
    compare(lambda lib, t: t.mean(0), np.array(2.5, dtype))
    compare(lambda lib, t: t.sum(-1, keepdim=True), np.array(2.5, dtype))


def test_sum_dtypes():
    compare(lambda lib, t: t.sum(), np.array([1, 2, 3], np.int32))
    compare(lambda lib, t: t.sum(0), np.array([[True, False], [True, True]]))
    compare(lambda lib, t: t.sum(dtype=lib.float64), np.array([1.5, 2.5], np.float32))
    compare(lambda lib, t: t.sum(dtype=lib.float32), np.array([1, 2], np.int64))
    compare(lambda lib, t: t.mean(dtype=lib.float64), np.array([1, 2], np.int64))
    compare(lambda lib, t: t.sum(1), np.zeros((2, 0), np.float32))
    compare(lambda lib, t: t.prod(), np.array([2, 3, 4], np.int32))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
def test_prod(dim, keepdim, dtype):
    x = np.random.default_rng(3).uniform(0.5, 1.5, (3, 4)).astype(dtype)
    x *= np.random.default_rng(4).choice([-1, 1], (3, 4))
    compare(lambda lib, t: _call(lib, "prod", t, dim, keepdim), x)
    compare(lambda lib, t: _call(lib, "prod", t, dim, keepdim), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
def test_prod_with_zeros(dim, dtype):
    # one zero, two zeros in the same row, and a zero-free row: gradient through each case
    x = np.array([[0.0, 2.0, -1.5, 0.5],
                  [1.5, 0.0, 0.0, 2.0],
                  [0.5, -2.0, 1.5, 3.0]], dtype)
    compare(lambda lib, t: _call(lib, "prod", t, dim, False), x)
    compare(lambda lib, t: _call(lib, "prod", t, dim, True) * 2, x)


# ---- max / min ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_all(name, dtype):
    x = distinct((3, 4), dtype, seed=5)
    compare(lambda lib, t: getattr(lib, name)(t), x)
    compare(lambda lib, t: getattr(t, name)(), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_all_ties_share_gradient(name, dtype):
    # torch: the full reduction spreads the gradient evenly over tied extremes
    x = np.array([[1.0, 3.0, 3.0], [-2.0, 3.0, -2.0]], dtype)
    compare(lambda lib, t: getattr(lib, name)(t), x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2], ids=str)
@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim(name, dim, keepdim, dtype):
    x = distinct((2, 3, 4), dtype, seed=6)
    compare(lambda lib, t: tuple(getattr(lib, name)(t, dim, keepdim=keepdim)), x)
    compare(lambda lib, t: tuple(getattr(t, name)(dim=dim, keepdim=keepdim)), x,
            noncontiguous=True)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_values_indices_attributes(name):
    x = distinct((3, 4), np.float64, seed=7)
    compare(lambda lib, t: getattr(lib, name)(t, 1).values, x)
    compare(lambda lib, t: getattr(lib, name)(t, 1).indices, x)
    compare(lambda lib, t: getattr(lib, name)(t, 0, True)[0], x)
    compare(lambda lib, t: getattr(lib, name)(t, 0, True)[1], x)
    for lib in (torch, ember):
        res = getattr(lib, name)(lib.tensor(x), dim=1)
        values, indices = res  # unpacks as a pair
        assert len(res) == 2
        assert res.values is res[0] or np.array_equal(res.values.numpy(), values.numpy())
        assert str(indices.dtype).endswith("int64")


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_dim_ties_pick_first_index(name):
    # torch (CPU) returns the first occurrence; the gradient goes to that index only
    x = np.array([[1.0, 5.0, 5.0, -1.0], [-2.0, -2.0, 0.0, -2.0]])
    x = x if name == "max" else -x
    compare(lambda lib, t: tuple(getattr(lib, name)(t, 1)), x)


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_int(name):
    x = np.array([[3, 1, 4], [1, 5, 9]], np.int64)
    compare(lambda lib, t: getattr(lib, name)(t), x)
    compare(lambda lib, t: tuple(getattr(lib, name)(t, 0)), x)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [(), 0, -1, (0, 2), (1, -1), None], ids=str)
@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin(name, dim, keepdim, dtype):
    x = distinct((2, 3, 4), dtype, seed=8)
    if dim is None:
        compare(lambda lib, t: getattr(lib, name)(t), x)
        return
    compare(lambda lib, t: getattr(lib, name)(t, dim, keepdim), x)
    compare(lambda lib, t: getattr(t, name)(dim=dim, keepdim=keepdim), x, noncontiguous=True)


@pytest.mark.parametrize("name", ["amax", "amin"])
def test_amax_amin_ties_share_gradient(name):
    x = np.array([[2.0, 2.0, 1.0], [-1.0, -1.0, -1.0]])
    x = x if name == "amax" else -x
    compare(lambda lib, t: getattr(lib, name)(t, 1), x)
    compare(lambda lib, t: getattr(lib, name)(t), x)


@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_argmax_argmin(name, dim, keepdim):
    x = distinct((3, 4), np.float32, seed=9)
    compare(lambda lib, t: getattr(lib, name)(t, dim, keepdim), x)
    compare(lambda lib, t: getattr(t, name)(dim=dim, keepdim=keepdim), x, noncontiguous=True)
    ties = np.array([[1.0, 7.0, 7.0, 0.0], [3.0, 3.0, -3.0, -3.0], [0.0, 0.0, 0.0, 0.0]])
    compare(lambda lib, t: getattr(lib, name)(t, dim, keepdim), ties)
    compare(lambda lib, t: getattr(lib, name)(t, dim, keepdim), np.array([[3, 1], [4, 1]]))


# ---- var / std ----------------------------------------------------------------------------
VAR_KW = [dict(), dict(unbiased=True), dict(unbiased=False), dict(correction=0),
          dict(correction=1), dict(correction=2)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kw", VAR_KW, ids=str)
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 2)], ids=str)
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_std(name, dim, kw, dtype):
    x = randn((3, 4, 5), dtype, seed=10)

    def fn(lib, t):
        f = getattr(lib, name)
        return f(t, **kw) if dim is None else f(t, dim, **kw)
    compare(fn, x)
    compare(lambda lib, t: getattr(t, name)(dim=dim, keepdim=True, **kw), x, noncontiguous=True)


def test_var_std_positional_unbiased():
    x = randn((6,), np.float64, seed=11)
    compare(lambda lib, t: lib.var(t, False), x)
    compare(lambda lib, t: lib.std(t, True), x)
    compare(lambda lib, t: t.var(0, False), x)


# ---- logsumexp ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("dim", [0, -1, (0, 2), 1], ids=str)
def test_logsumexp(dim, keepdim, dtype):
    x = randn((2, 3, 4), dtype, seed=12) * 3
    compare(lambda lib, t: lib.logsumexp(t, dim, keepdim=keepdim), x)
    compare(lambda lib, t: t.logsumexp(dim, keepdim), x, noncontiguous=True)


def test_logsumexp_large_and_infinite():
    x = np.array([[1000.0, 1000.0, -5.0], [-np.inf, 0.0, 1.0]])
    compare(lambda lib, t: lib.logsumexp(t, 1), x)
    compare(lambda lib, t: lib.logsumexp(t, 1), x.astype(np.float32))
    compare(lambda lib, t: lib.logsumexp(t, 0), np.array([[1, 2], [3, 4]], np.int64))


# ---- norm ---------------------------------------------------------------------------------
NORM_P = [None, "fro", 2, 1, 3, 0.5, float("inf"), float("-inf"), 0]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [None, 0, -1, (0, 1)], ids=str)
@pytest.mark.parametrize("p", NORM_P, ids=str)
def test_norm(p, dim, dtype):
    x = distinct((3, 4), dtype, seed=13) + 0.05  # no zeros, no ties in |x|

    def fn(lib, t):
        if p is None:
            return t.norm() if dim is None else t.norm(dim=dim)
        return lib.norm(t, p, dim)
    compare(fn, x)
    if p == 0:
        return  # through a view: see test_norm_p0_through_view_has_no_grad
    compare(lambda lib, t: t.norm(p=2 if p is None else p, dim=dim, keepdim=True), x,
            noncontiguous=True)


def test_norm_p0_through_view_has_no_grad():
    x = distinct((3, 4), np.float64, seed=13) + 0.05
    compare(lambda lib, t: t.norm(p=0, dim=1), x, noncontiguous=True)


def test_norm_zero_vector_gradient():
    # torch: the 2-norm's gradient at 0 is 0 (not nan)
    compare(lambda lib, t: t.norm(), np.zeros(3))
    compare(lambda lib, t: t.norm(dim=1), np.array([[0.0, 0.0], [3.0, 4.0]]))


# ---- all / any ----------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [None, 0, 1, -1], ids=str)
@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any(name, dim):
    b = np.array([[True, False, True], [True, True, True]])
    f = np.array([[0.0, 1.5, 2.0], [1.0, 3.0, -1.0]], np.float32)
    i = np.array([[0, 0, 0], [1, 2, 0]], np.int64)
    for arr in (b, f, i):
        compare(lambda lib, t: _call(lib, name, t, dim, False), arr)
        compare(lambda lib, t: _call(lib, name, t, dim, True), arr)
    compare(lambda lib, t: getattr(t, name)(), b)


# ---- cumsum / cumprod ---------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1, -2], ids=str)
def test_cumsum(dim, dtype):
    x = randn((3, 4), dtype, seed=14)
    compare(lambda lib, t: lib.cumsum(t, dim), x)
    compare(lambda lib, t: t.cumsum(dim=dim), x, noncontiguous=True)


def test_cumsum_dtypes_and_scalar():
    compare(lambda lib, t: t.cumsum(0), np.array([1, 2, 3], np.int32))
    compare(lambda lib, t: t.cumsum(0), np.array([True, False, True]))
    compare(lambda lib, t: t.cumsum(0, dtype=lib.float64), np.array([1.5, 2.5], np.float32))
    compare(lambda lib, t: t.cumsum(0), np.array(1.5))
    compare(lambda lib, t: t.cumprod(0), np.array([1, 2, 3], np.int32))
    compare(lambda lib, t: t.cumprod(0), np.array(1.5))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1], ids=str)
def test_cumprod(dim, dtype):
    x = np.random.default_rng(15).uniform(0.5, 1.5, (3, 4)).astype(dtype)
    x *= np.random.default_rng(16).choice([-1, 1], (3, 4))
    compare(lambda lib, t: lib.cumprod(t, dim), x)
    compare(lambda lib, t: t.cumprod(dim), x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1], ids=str)
def test_cumprod_with_zeros(dim, dtype):
    x = np.array([[0.0, 2.0, -1.5, 0.5],
                  [1.5, 0.0, 0.0, 2.0],
                  [0.5, -2.0, 1.5, 0.0]], dtype)
    compare(lambda lib, t: lib.cumprod(t, dim), x)


# ---- softmax / log_softmax ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, 2, -1, -2], ids=str)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name, dim, dtype):
    x = randn((2, 3, 4), dtype, seed=17) * 2
    compare(lambda lib, t: getattr(lib, name)(t, dim), x)
    compare(lambda lib, t: getattr(t, name)(dim=dim), x, noncontiguous=True)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_stability_and_dtype(name):
    x = np.array([[1000.0, 0.0, -1000.0], [5.0, 5.0, 5.0]], np.float32)
    compare(lambda lib, t: getattr(lib, name)(t, 1), x)
    compare(lambda lib, t: getattr(lib, name)(t, -1, dtype=lib.float64),
            randn((2, 3), np.float32, 18), rtol=1e-6, atol=1e-7)
    compare(lambda lib, t: getattr(lib, name)(t, 0), np.array(1.5))
    compare(lambda lib, t: getattr(lib, name)(t, 0),
            np.array([[1.0, -np.inf], [0.0, -np.inf]]))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape,dim", [((0, 4), 0), ((0, 4), 1), ((3, 0), 1), ((3, 0), 0)],
                         ids=str)
def test_softmax_of_empty(name, shape, dim):
    compare(lambda lib, t: getattr(lib, name)(t, dim), np.zeros(shape))
    compare(lambda lib, t: lib.nn.functional.softmin(t, dim), np.zeros(shape))


def test_softmax_1d_and_composite():
    x = randn((5,), np.float64, seed=19)
    compare(lambda lib, t: (lib.softmax(t, 0) * lib.log_softmax(t, 0)).sum(), x)
    compare(lambda lib, t: lib.softmax(t * t, dim=0), x)


# ---- edge points where PyTorch picks a convention -----------------------------------------
EDGES = [
    ("max_with_nan", lambda lib, x: x.max(), [np.array([1.0, np.nan, 2.0])]),
    ("min_with_nan", lambda lib, x: x.min(), [np.array([1.0, np.nan, 2.0])]),
    ("max_dim_with_nan", lambda lib, x: tuple(x.max(1)), [np.array([[1.0, np.nan, 2.0]])]),
    ("std_of_constant", lambda lib, x: x.std(), [np.array([1.0, 1.0])]),
    ("std_dim_constant_row", lambda lib, x: x.std(1), [np.array([[1.0, 1.0], [1.0, 2.0]])]),
    ("norm_inf_ties", lambda lib, x: x.norm(float("inf")), [np.array([3.0, -3.0, 1.0])]),
    ("norm_p1_at_zero", lambda lib, x: x.norm(1), [np.array([0.0, -3.0, 1.0])]),
    ("norm3_of_zero", lambda lib, x: x.norm(3), [np.array([0.0, 0.0])]),
    ("logsumexp_all_neg_inf", lambda lib, x: x.logsumexp(0), [np.array([-np.inf, -np.inf])]),
    ("prod_0d_dim", lambda lib, x: x.prod(0), [np.array(3.0)]),
    ("max_0d", lambda lib, x: x.max(), [np.array(3.0)]),
    ("max_dim_0d", lambda lib, x: tuple(x.max(0)), [np.array(3.0)]),
    ("norm_0d", lambda lib, x: x.norm(), [np.array(-3.0)]),
    ("logsumexp_0d", lambda lib, x: x.logsumexp(0), [np.array(-3.0)]),
    ("amax_0d", lambda lib, x: x.amax(), [np.array(-3.0)]),
    ("argmax_0d", lambda lib, x: x.argmax(), [np.array(-3.0)]),
    ("cumprod_single_zero", lambda lib, x: x.cumprod(0), [np.array([0.0])]),
    ("sum_mean_list_dims", lambda lib, x: x.sum([0, 1]) + x.mean([0, -2]),
     [np.ones((2, 3, 4))]),
    ("sum_f16", lambda lib, x: x.sum(), [np.array([1.5, 2.5], np.float16)]),
    ("any_dim_tuple", lambda lib, x: x.any((0, 1)), [np.zeros((2, 2))]),
    ("all_float", lambda lib, x: x.all(), [np.array([1.0, 0.5])]),
    ("prod_bool", lambda lib, x: x.prod(), [np.array([True, False])]),
]


@pytest.mark.parametrize("name,fn,arrays", EDGES, ids=[e[0] for e in EDGES])
def test_edge_conventions(name, fn, arrays):
    with np.errstate(all="ignore"):
        compare(fn, *arrays)
