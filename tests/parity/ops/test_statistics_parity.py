"""Parity with PyTorch for the statistics family: bincount, histc, histogram, cummax/cummin,
logcumsumexp, nansum/nanmean, median/nanmedian, quantile/nanquantile, aminmax,
count_nonzero, kthvalue, mode, msort, isin, cov, corrcoef, trapezoid/trapz,
cumulative_trapezoid and renorm. Values and gradients in float32 and float64, transposed
(non-contiguous) inputs, methods, out=, integer inputs, NaN, empty and 0-d tensors, and the
errors (type and message)."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of, DEVICE

FLOATS = [np.float32, np.float64]
NAN = float("nan")


def randn(shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def distinct(shape, dtype=np.float64, seed=0):
    """Values with no ties (selections by index are then unambiguous)."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.37 - n * 0.1).reshape(
        shape).astype(dtype)


def same_error(fn):
    e, t = error_of(lambda: fn(ember)), error_of(lambda: fn(torch))
    assert t is not None, "torch raised nothing"
    assert e == t, (e, t)


# ---- counting and histograms ----------------------------------------------------------------
def test_bincount():
    idx = np.array([1, 2, 2, 5, 0, 2])
    compare(lambda lib, i: lib.bincount(i), idx)
    compare(lambda lib, i: lib.bincount(i, minlength=9), idx)
    compare(lambda lib, i: i.bincount(), np.array([3], dtype=np.uint8))
    compare(lambda lib, i: lib.bincount(i), np.array([], dtype=np.int64))
    for dt in (np.float32, np.float64, np.int64):
        w = np.arange(6).astype(dt) * 0.5 if dt != np.int64 else np.arange(6)
        compare(lambda lib, i, w: lib.bincount(i, w, 7), idx, w, grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.bincount(lib.tensor([1, -2])),
    lambda lib: lib.bincount(lib.tensor([[1, 2]])),
    lambda lib: lib.bincount(lib.tensor(3)),
    lambda lib: lib.bincount(lib.tensor([1., 2.])),
    lambda lib: lib.bincount(lib.tensor([True])),
    lambda lib: lib.bincount(lib.tensor([1, 2]), minlength=-1),
    lambda lib: lib.bincount(lib.tensor([1, -2]), minlength=-1),
    lambda lib: lib.bincount(lib.tensor([1, 2]), lib.tensor([1., 2., 3.])),
])
def test_bincount_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("dtype", FLOATS)
def test_histc(dtype):
    x = randn((4, 5), dtype, 1)
    compare(lambda lib, x: lib.histc(x), x, grad=False)
    compare(lambda lib, x: lib.histc(x, bins=7, min=-1, max=0.5), x, grad=False)
    compare(lambda lib, x: x.histc(3, -0.5, 1), x, grad=False, noncontiguous=True)
    edges = np.array([0., 1, 2, 3, 2.9999, 1.5, 0.75, -1, 4], dtype)
    compare(lambda lib, x: lib.histc(x, bins=4, min=0, max=3), edges, grad=False)
    compare(lambda lib, x: lib.histc(x, bins=4), np.array([2., 2], dtype), grad=False)
    compare(lambda lib, x: lib.histc(x, bins=4), np.zeros(0, dtype), grad=False)
    compare(lambda lib, x: lib.histc(x, bins=4, min=0, max=3), np.array([1., NAN, 2], dtype),
            grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.histc(lib.tensor([1, 2]), bins=4),
    lambda lib: lib.histc(lib.tensor([1., 2.]), bins=0),
    lambda lib: lib.histc(lib.tensor([1., 2.]), bins=4, min=3, max=1),
    lambda lib: lib.histc(lib.tensor([1., float("inf")]), bins=4),
    lambda lib: lib.histc(lib.tensor([1., 2.]), bins=4, min=float("inf"), max=3),
])
def test_histc_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("dtype", FLOATS)
def test_histogram(dtype):
    x = randn((3, 7), dtype, 2)
    w = np.abs(randn((3, 7), dtype, 3))
    compare(lambda lib, x: lib.histogram(x, 5), x, grad=False)
    compare(lambda lib, x: x.histogram(6, range=(-1., 1.)), x, grad=False, noncontiguous=True)
    compare(lambda lib, x, w: lib.histogram(x, 4, weight=w, density=True), x, w, grad=False)
    compare(lambda lib, x, w: lib.histogram(x, 4, weight=w), x, w, grad=False)
    b = np.array([-2., -0.5, 0, 0.3, 2.5], dtype)
    compare(lambda lib, x, b: lib.histogram(x, b), x, b, grad=False)
    compare(lambda lib, x, b: lib.histogram(x, b, density=True), x, b, grad=False)
    compare(lambda lib, x: lib.histogram(x, 4), np.array([2., 2.], dtype), grad=False)
    compare(lambda lib, x: lib.histogram(x, 4), np.zeros(0, dtype), grad=False)
    compare(lambda lib, x: lib.histogram(x, 3), np.array([0., 1., 1.5, 3.], dtype),
            grad=False)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.histogram(lib.tensor([1, 2]), 4),
    lambda lib: lib.histogram(lib.tensor([1., 2.]), 0),
    lambda lib: lib.histogram(lib.tensor([1., 2.]), 4, range=(3., 1.)),
    lambda lib: lib.histogram(lib.tensor([1., float("nan")]), 4),
    lambda lib: lib.histogram(lib.tensor([1., 2.]), 4, range=(0., float("inf"))),
    lambda lib: lib.histogram(lib.tensor([1., 2.]), 4, weight=lib.tensor([1., 2., 3.])),
    lambda lib: lib.histogram(lib.tensor([1., 2.], dtype=lib.float64), 4,
                              weight=lib.tensor([1., 2.])),
    lambda lib: lib.histogram(lib.tensor([1., 2.]), lib.tensor([1., 2.], dtype=lib.float64)),
    lambda lib: lib.histogram(lib.tensor([1., 2.]), lib.tensor([[1., 2.]])),
    lambda lib: lib.histogram(lib.tensor([1., 2.]), lib.tensor([1.])),
])
def test_histogram_errors(fn):
    same_error(fn)


# ---- running extremes and logcumsumexp ------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin(name, dtype):
    x = randn((4, 6), dtype, 4)
    for dim in (0, 1, -1):
        compare(lambda lib, x: getattr(lib, name)(x, dim), x)
        compare(lambda lib, x: getattr(x, name)(dim=dim), x, noncontiguous=True)
    ties = np.array([[1., 3, 3, 2, 3, 5, NAN, 1, NAN], [0, 0, -1, -1, 2, 2, 2, 0, -5]], dtype)
    compare(lambda lib, x: getattr(lib, name)(x, 1), ties)
    compare(lambda lib, x: getattr(lib, name)(x, 0), np.array(2.5, dtype))
    compare(lambda lib, x: getattr(lib, name)(x, 0), np.zeros((0, 3), dtype))


@pytest.mark.parametrize("name", ["cummax", "cummin"])
def test_cummax_cummin_integers_and_errors(name):
    compare(lambda lib, x: getattr(lib, name)(x, 0), np.array([1, 3, 3, 2, -1, 5]))
    compare(lambda lib, x: getattr(lib, name)(x, 0), np.array([True, False, True]))
    same_error(lambda lib: getattr(lib, name)(lib.tensor([[1., 2.]]), 2))


@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp(dtype):
    x = randn((3, 5), dtype, 5) * 3
    for dim in (0, 1, -1):
        compare(lambda lib, x: lib.logcumsumexp(x, dim), x)
    compare(lambda lib, x: x.logcumsumexp(0), x, noncontiguous=True)
    compare(lambda lib, x: lib.logcumsumexp(x, 0), np.array([-1000., 0, 1000., 999.], dtype))
    compare(lambda lib, x: lib.logcumsumexp(x, 0), np.array([-np.inf, -np.inf, 1.], dtype),
            grad=False)
    compare(lambda lib, x: lib.logcumsumexp(x, 0), np.array([np.inf, 1.], dtype), grad=False)
    compare(lambda lib, x: lib.logcumsumexp(x, 0), np.array(2., dtype))


def test_logcumsumexp_errors():
    same_error(lambda lib: lib.logcumsumexp(lib.tensor([1, 2]), 0))
    same_error(lambda lib: lib.logcumsumexp(lib.tensor([1., 2.]), 1))


# ---- NaN-skipping reductions ----------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["nansum", "nanmean"])
def test_nansum_nanmean(name, dtype):
    x = randn((3, 4), dtype, 6)
    x[0, 1] = x[2, 2] = NAN
    x[1, :] = NAN
    fn = getattr(torch, name)
    del fn
    compare(lambda lib, x: getattr(lib, name)(x), x)
    compare(lambda lib, x: getattr(lib, name)(x, 1), x)
    compare(lambda lib, x: getattr(lib, name)(x, (0, 1), keepdim=True), x)
    compare(lambda lib, x: getattr(x, name)(0, True), x, noncontiguous=True)
    compare(lambda lib, x: getattr(lib, name)(x, dtype=lib.float64), x)
    compare(lambda lib, x: getattr(lib, name)(x), np.zeros(0, dtype))


def test_nansum_nanmean_dtypes_and_errors():
    compare(lambda lib, x: lib.nansum(x), np.array([1, 2, 3]))
    compare(lambda lib, x: lib.nansum(x), np.array([True, True]))
    compare(lambda lib, x: lib.nansum(x, dtype=lib.float32), np.array([1, 2]))
    same_error(lambda lib: lib.nanmean(lib.tensor([1, 2])))
    same_error(lambda lib: lib.nanmean(lib.tensor([1., 2.]), dtype=lib.int64))


# ---- medians --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_medians(name, dtype):
    x = distinct((4, 5), dtype, 7)
    compare(lambda lib, x: getattr(lib, name)(x), x)
    compare(lambda lib, x: getattr(lib, name)(x), x[:, :4])
    for dim in (0, 1, -1):
        compare(lambda lib, x: getattr(lib, name)(x, dim), x)
        compare(lambda lib, x: getattr(x, name)(dim, True), x, noncontiguous=True)
    ties = np.array([1., 2, 2, 5, 2, 0], dtype)  # the whole-tensor gradient is shared
    compare(lambda lib, x: getattr(lib, name)(x), ties)
    nans = np.array([[1., NAN, 3, 2], [NAN, 4, 0, 5], [7, 8, -1, 0]], dtype)
    compare(lambda lib, x: getattr(lib, name)(x), nans)
    compare(lambda lib, x: getattr(lib, name)(x, 1), nans)
    compare(lambda lib, x: getattr(lib, name)(x), np.array([NAN, NAN], dtype))
    compare(lambda lib, x: getattr(lib, name)(x), np.zeros(0, dtype))
    compare(lambda lib, x: getattr(lib, name)(x, 0), np.array(2., dtype))
    compare(lambda lib, x: getattr(lib, name)(x, 0), np.zeros((3, 0), dtype))


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_medians_integers_and_errors(name):
    compare(lambda lib, x: getattr(lib, name)(x), np.array([3, 1, 2, 7]))
    compare(lambda lib, x: getattr(lib, name)(x, 0), np.array([3, 1, 2, 7, 5]))
    same_error(lambda lib: getattr(lib, name)(lib.tensor([True, False])))
    same_error(lambda lib: getattr(lib, name)(lib.zeros(0, 3), 0))
    same_error(lambda lib: getattr(lib, name)(lib.zeros(2, 0), 1))
    same_error(lambda lib: getattr(lib, name)(lib.zeros(2, 3), 2))


# ---- quantiles ------------------------------------------------------------------------------
MODES = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_quantiles(name, mode, dtype):
    x = distinct((4, 5), dtype, 8)
    q = np.array([0., 0.1, 0.125, 0.5, 0.625, 0.875, 1.], dtype)
    fn = lambda lib, *a, **k: getattr(lib, name)(*a, interpolation=mode, **k)  # noqa: E731
    compare(lambda lib, x: fn(lib, x, 0.3), x)
    compare(lambda lib, x, q: fn(lib, x, q), x, q, grad=False)
    for dim in (0, 1, -1):
        compare(lambda lib, x: fn(lib, x, lib.tensor(q, device=x.device), dim), x)
        compare(lambda lib, x: fn(lib, x, 0.375, dim, True), x, noncontiguous=True)
    compare(lambda lib, x: fn(lib, x, lib.tensor(q, device=x.device), keepdim=True), x)
    compare(lambda lib, x: getattr(x, name)(0.625, 1, interpolation=mode), x)
    nans = np.array([[1., NAN, 3, 2, 6], [NAN, NAN, NAN, NAN, NAN], [7, 8, -1, 0, 5]], dtype)
    compare(lambda lib, x: fn(lib, x, lib.tensor(q, device=x.device), 1), nans)
    compare(lambda lib, x: fn(lib, x, 0.5), np.array(3., dtype))
    compare(lambda lib, x: fn(lib, x, 0.5, 0), np.array(3., dtype))


@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
@pytest.mark.parametrize("fn", [
    lambda lib, f: f(lib.tensor([1., 2.]), 1.5),
    lambda lib, f: f(lib.tensor([1., 2.]), -0.1),
    lambda lib, f: f(lib.tensor([1., 2.]), lib.tensor([0.5, 1.5])),
    lambda lib, f: f(lib.tensor([1., 2.]), lib.tensor([[0.5]])),
    lambda lib, f: f(lib.tensor([1., 2.]), lib.tensor([0.5], dtype=lib.float64)),
    lambda lib, f: f(lib.tensor([1, 2]), 0.5),
    lambda lib, f: f(lib.tensor([1, 2]), 2.0),
    lambda lib, f: f(lib.zeros(0), 0.5),
    lambda lib, f: f(lib.zeros(0, 3), 0.5, dim=1),
    lambda lib, f: f(lib.zeros(0), 0.5, interpolation="foo"),
    lambda lib, f: f(lib.tensor([1., 2.]), 0.5, interpolation="foo"),
    lambda lib, f: f(lib.tensor([1., 2.]), 0.5, dim=3),
])
def test_quantile_errors(name, fn):
    same_error(lambda lib: fn(lib, getattr(lib, name)))


# ---- extremes, counts, selections -----------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_aminmax(dtype):
    x = randn((3, 4), dtype, 9)
    compare(lambda lib, x: lib.aminmax(x), x)
    compare(lambda lib, x: lib.aminmax(x, keepdim=True), x)
    compare(lambda lib, x: x.aminmax(dim=0), x, noncontiguous=True)
    compare(lambda lib, x: lib.aminmax(x, dim=-1, keepdim=True), x)
    compare(lambda lib, x: lib.aminmax(x), np.array([[1., 1, 0], [0, 1, 0.5]], dtype))
    compare(lambda lib, x: lib.aminmax(x, dim=0), np.array([[1., 5], [0, NAN]], dtype),
            grad=False)
    compare(lambda lib, x: lib.aminmax(x, dim=0), np.array(2., dtype))
    compare(lambda lib, x: lib.aminmax(x, dim=0, keepdim=True), np.array(2., dtype))
    compare(lambda lib, x: lib.aminmax(x, dim=1), np.zeros((0, 3), dtype))


def test_aminmax_integers_and_errors():
    compare(lambda lib, x: lib.aminmax(x), np.array([3, -1, 2]))
    compare(lambda lib, x: lib.aminmax(x), np.array([True, False]))
    same_error(lambda lib: lib.aminmax(lib.zeros(0)))
    same_error(lambda lib: lib.aminmax(lib.zeros(0, 3), dim=0))


def test_count_nonzero():
    x = np.array([[1., 0, NAN], [0, 0, -2]])
    compare(lambda lib, x: lib.count_nonzero(x), x)
    compare(lambda lib, x: lib.count_nonzero(x, 0), x)
    compare(lambda lib, x: x.count_nonzero(dim=(0, 1)), x, noncontiguous=True)
    compare(lambda lib, x: lib.count_nonzero(x, []), x)
    compare(lambda lib, x: lib.count_nonzero(x), np.array([True, False, True]))
    compare(lambda lib, x: lib.count_nonzero(x, 0), np.array(3))
    same_error(lambda lib: lib.count_nonzero(lib.ones(2, 2), (0, 0)))
    same_error(lambda lib: lib.count_nonzero(lib.ones(2, 2), 2))


@pytest.mark.parametrize("dtype", FLOATS)
def test_kthvalue(dtype):
    x = distinct((4, 5), dtype, 10)
    for k, dim in [(1, 0), (3, 1), (5, -1), (4, 0)]:
        compare(lambda lib, x: lib.kthvalue(x, k, dim), x)
        compare(lambda lib, x: x.kthvalue(k, dim, True), x, noncontiguous=True)
    compare(lambda lib, x: lib.kthvalue(x, 4), np.array([3., 1, NAN, 2], dtype))
    compare(lambda lib, x: lib.kthvalue(x, 1), np.array(3., dtype))
    compare(lambda lib, x: lib.kthvalue(x, 1, 1), np.zeros((0, 3), dtype))
    compare(lambda lib, x: lib.kthvalue(x, 2), np.array([3, 1, 2]))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.kthvalue(lib.tensor([3., 1.]), 3),
    lambda lib: lib.kthvalue(lib.tensor([3., 1.]), 0),
    lambda lib: lib.kthvalue(lib.tensor([[3., 1.]]), 3, -1),
    lambda lib: lib.kthvalue(lib.tensor(3.), 2),
    lambda lib: lib.kthvalue(lib.zeros(0), 1),
    lambda lib: lib.kthvalue(lib.tensor([True]), 1),
])
def test_kthvalue_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("dtype", FLOATS)
def test_mode(dtype):
    x = np.array([[3., 1, 2, 1, 3, 0], [5, 5, 4, 4, 4, 6], [1, 2, 3, 4, 5, 6]], dtype)
    compare(lambda lib, x: lib.mode(x), x)
    compare(lambda lib, x: lib.mode(x, 0), x)
    compare(lambda lib, x: x.mode(-1, True), x)
    compare(lambda lib, x: x.mode(0), x[:, :3], noncontiguous=True)
    compare(lambda lib, x: lib.mode(x), np.array(2., dtype))
    compare(lambda lib, x: lib.mode(x, 1), np.zeros((0, 2), dtype))


def test_mode_integers_and_errors():
    compare(lambda lib, x: lib.mode(x, 0), np.array([[1, 1, 2], [2, 3, 3]]))
    compare(lambda lib, x: lib.mode(x, 1, True), np.array([[1, 1, 2], [2, 3, 3]]))
    compare(lambda lib, x: lib.mode(x), np.array([True, False, True]))
    same_error(lambda lib: lib.mode(lib.zeros(0)))
    same_error(lambda lib: lib.mode(lib.zeros(2, 0), 1))


@pytest.mark.parametrize("dtype", FLOATS)
def test_msort(dtype):
    x = distinct((4, 3), dtype, 11)
    compare(lambda lib, x: lib.msort(x), x)
    compare(lambda lib, x: x.msort(), x, noncontiguous=True)
    compare(lambda lib, x: lib.msort(x), np.array(3., dtype))
    compare(lambda lib, x: lib.msort(x), np.array([3, 1, 2]))


def test_isin():
    e, t = np.array([[1, 2, 3], [4, 5, 6]]), np.array([2, 5, 9])
    compare(lambda lib, e, t: lib.isin(e, t), e, t)
    compare(lambda lib, e, t: lib.isin(e, t, invert=True), e, t, noncontiguous=True)
    compare(lambda lib, e, t: lib.isin(e, t, assume_unique=True), e, t)
    compare(lambda lib, e: lib.isin(e, 2), e)
    compare(lambda lib, t: lib.isin(2, t), t)
    compare(lambda lib, t: lib.isin(2.5, t), t)
    compare(lambda lib, e: lib.isin(e, 2.5), e)
    compare(lambda lib, e, t: lib.isin(e, t), e, t.astype(np.float64))
    compare(lambda lib, e, t: lib.isin(e, t), np.array([1.5, 2, NAN]), np.array([2., NAN]))
    compare(lambda lib, e, t: lib.isin(e, t), np.zeros(0), np.array([1.]))
    compare(lambda lib, e, t: lib.isin(e, t), np.array([1.]), np.zeros(0))
    compare(lambda lib, e, t: lib.isin(e, t), e.astype(np.uint8), t.astype(np.int8))


@pytest.mark.parametrize("fn", [
    lambda lib: lib.isin(2, 3),
    lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([True])),
    lambda lib: lib.isin(lib.tensor([True]), lib.tensor([1])),
    lambda lib: lib.isin(lib.tensor([1, 2]), lib.tensor([1 + 1j])),
])
def test_isin_errors(fn):
    same_error(fn)


# ---- covariance and correlation -------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_cov(dtype):
    x = randn((3, 5), dtype, 12)
    f = np.array([1, 2, 0, 3, 1])
    a = np.abs(randn(5, dtype, 13))
    compare(lambda lib, x: lib.cov(x), x)
    compare(lambda lib, x: x.cov(correction=0), x, noncontiguous=True)
    compare(lambda lib, x: lib.cov(x, correction=2), x)
    compare(lambda lib, x: lib.cov(x), x[0])
    compare(lambda lib, x, f: lib.cov(x, fweights=f), x, f)
    compare(lambda lib, x, a: lib.cov(x, aweights=a), x, a)
    compare(lambda lib, x, f, a: lib.cov(x, correction=3, fweights=f, aweights=a), x, f, a)
    compare(lambda lib, x, f, a: lib.cov(x, correction=0, fweights=f, aweights=a), x, f, a)
    compare(lambda lib, x: lib.cov(x), np.array([1, 2, 4]))
    compare(lambda lib, x: lib.cov(x), np.array([[1, 2, 4], [0, -1, 5]]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, x: lib.cov(x, correction=5), x, grad=False)
        compare(lambda lib, x: lib.cov(x), np.array(3., dtype), grad=False)
        compare(lambda lib, x: lib.cov(x), np.zeros((2, 0), dtype), grad=False)
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        ember.cov(ember.tensor([[1., 2.]]), correction=2)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.cov(lib.zeros(2, 2, 2)),
    lambda lib: lib.cov(lib.tensor([[True, False]])),
    lambda lib: lib.cov(lib.ones(2, 3), correction=1.5),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1., 2., 1.])),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1, -2, 1])),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([1, 2])),
    lambda lib: lib.cov(lib.ones(2, 3), fweights=lib.tensor([[1, 2, 1]])),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.tensor([1, 2, 1])),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.tensor([1., -2., 1.])),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.tensor([[1., 2., 1.]])),
    lambda lib: lib.cov(lib.ones(2, 3), aweights=lib.tensor([1., 2.])),
])
def test_cov_errors(fn):
    same_error(fn)


@pytest.mark.parametrize("dtype", FLOATS)
def test_corrcoef(dtype):
    x = randn((3, 6), dtype, 14)
    compare(lambda lib, x: lib.corrcoef(x), x)
    compare(lambda lib, x: x.corrcoef(), x, noncontiguous=True)
    compare(lambda lib, x: lib.corrcoef(x), x[0])
    compare(lambda lib, x: lib.corrcoef(x), np.array([[1, 2, 4], [1, 1, 1]]), grad=False)
    compare(lambda lib, x: lib.corrcoef(x), np.array([[0., 1, 2], [2, 1, 0]], dtype),
            grad=False)


# ---- trapezoidal rule -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
def test_trapezoid_family(name, dtype):
    y = randn((3, 4), dtype, 15)
    x1 = np.sort(randn(4, dtype, 16))
    x2 = np.sort(randn((3, 4), dtype, 17), axis=1)
    xcol = np.sort(randn(3, dtype, 18))
    fn = lambda lib, *a, **k: getattr(lib, name)(*a, **k)  # noqa: E731
    compare(lambda lib, y: fn(lib, y), y)
    compare(lambda lib, y: fn(lib, y, dx=0.5, dim=0), y, noncontiguous=True)
    compare(lambda lib, y, x: fn(lib, y, x), y, x1)
    compare(lambda lib, y, x: fn(lib, y, x), y, x2, noncontiguous=True)
    compare(lambda lib, y, x: fn(lib, y, x, dim=0), y, xcol)
    compare(lambda lib, y, x: fn(lib, y, x, dim=0), y, x2[:1, :3].T)
    compare(lambda lib, y: fn(lib, y), np.array([1, 2, 4]))
    compare(lambda lib, y, x: fn(lib, y, x), np.array([1, 2, 4]), np.array([0, 1, 3]))
    compare(lambda lib, y: fn(lib, y), np.zeros((2, 0), dtype))
    compare(lambda lib, y: fn(lib, y, dx=2), np.array([1.], dtype))
    compare(lambda lib, y, x: fn(lib, y, x), np.array([1., 2.], np.float32),
            np.array([0., 1.]))


@pytest.mark.parametrize("name", ["trapezoid", "trapz", "cumulative_trapezoid"])
@pytest.mark.parametrize("fn", [
    lambda lib, f: f(lib.ones(2, 3), lib.tensor([0., 1.])),
    lambda lib, f: f(lib.ones(2, 3), lib.tensor([0., 1., 2.]), dx=2),
    lambda lib, f: f(lib.ones(2, 3), 2.),
    lambda lib, f: f(lib.ones(2, 2), lib.ones(3, 2)),
])
def test_trapezoid_errors(name, fn):
    same_error(lambda lib: fn(lib, getattr(lib, name)))


def test_trapezoid_of_0d():
    same_error(lambda lib: lib.trapezoid(lib.tensor(3.)))


# ---- renorm ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_renorm(dtype):
    x = randn((4, 3, 2), dtype, 19) * 2
    for p, dim, maxnorm in [(2, 0, 1.), (1, 1, 3), (float("inf"), 2, 1.5), (3.5, -1, 0.5),
                            (2, 0, 100.)]:
        compare(lambda lib, x: lib.renorm(x, p, dim, maxnorm), x)
    compare(lambda lib, x: x.renorm(2, 1, 0.7), x[0], noncontiguous=True)

    def inplace(lib, x):
        y = x * 1
        return y.renorm_(1, 0, 1.)
    compare(inplace, x)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.renorm(lib.ones(2, 2), 0, 0, 2),
    lambda lib: lib.renorm(lib.ones(2, 2), -1, 0, 2),
    lambda lib: lib.renorm(lib.ones(2, 2), 2, 0, -2),
    lambda lib: lib.renorm(lib.ones(2, 2), 2, 0, -2.5),
    lambda lib: lib.renorm(lib.ones(2, 2), 2, 2, 2),
    lambda lib: lib.renorm(lib.ones(2), 2, 0, 2),
    lambda lib: lib.renorm(lib.ones(2), 2, 5, -2),
    lambda lib: lib.renorm(lib.ones(2, 2, dtype=lib.int64), 2, 0, 2),
])
def test_renorm_errors(fn):
    same_error(fn)


# ---- out= and the API -----------------------------------------------------------------------
def _out_pair(lib, dt):
    return lib.empty(0, dtype=dt), lib.empty(0, dtype=lib.int64)


@pytest.mark.parametrize("fn", [
    lambda lib, x: lib.histc(x, 4, out=lib.empty(4)),
    lambda lib, x: lib.logcumsumexp(x, 0, out=lib.empty(6)),
    lambda lib, x: lib.nansum(x, out=lib.empty(())),
    lambda lib, x: lib.nanmean(x, out=lib.empty(())),
    lambda lib, x: lib.quantile(x, 0.3, out=lib.empty(())),
    lambda lib, x: lib.nanquantile(x, 0.3, out=lib.empty(())),
    lambda lib, x: lib.msort(x, out=lib.empty(6)),
    lambda lib, x: lib.renorm(x.reshape(2, 3), 2, 0, 1., out=lib.empty(2, 3)),
    lambda lib, x: lib.isin(x, x[:2], out=lib.empty(6, dtype=lib.bool)),
    lambda lib, x: lib.cummax(x, 0, out=_out_pair(lib, lib.float32)),
    lambda lib, x: lib.cummin(x, 0, out=_out_pair(lib, lib.float32)),
    lambda lib, x: lib.kthvalue(x, 2, out=_out_pair(lib, lib.float32)),
    lambda lib, x: lib.mode(x, out=_out_pair(lib, lib.float32)),
    lambda lib, x: lib.median(x, 0, out=_out_pair(lib, lib.float32)),
    lambda lib, x: lib.nanmedian(x, 0, out=_out_pair(lib, lib.float32)),
    lambda lib, x: lib.aminmax(x, out=(lib.empty(0), lib.empty(0))),
    lambda lib, x: lib.histogram(x, 3, out=(lib.empty(0), lib.empty(0))),
])
def test_out(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(fn, distinct(6, np.float32, 20), grad=False)


def test_methods_and_functions_are_those_of_torch():
    names = ["bincount", "histc", "histogram", "cummax", "cummin", "logcumsumexp", "nansum",
             "nanmean", "median", "nanmedian", "quantile", "nanquantile", "aminmax",
             "count_nonzero", "kthvalue", "mode", "msort", "isin", "cov", "corrcoef",
             "trapezoid", "trapz", "cumulative_trapezoid", "renorm"]
    for name in names:
        assert hasattr(ember, name) == hasattr(torch, name), name
        for attr in (name, name + "_"):
            assert hasattr(ember.Tensor, attr) == hasattr(torch.Tensor, attr), attr


def test_out_with_grad_is_refused():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ember.nansum(x, out=ember.empty(()))


@pytest.mark.skipif(DEVICE is not None, reason="double backward on the host only")
def test_double_backward():
    x = randn((3, 4), np.float64, 21)
    for fn in [lambda lib, x: lib.logcumsumexp(x, 1),
               lambda lib, x: lib.quantile(x, 0.3, 1),
               lambda lib, x: lib.cov(x),
               lambda lib, x: lib.renorm(x, 2, 0, 1.),
               lambda lib, x: lib.cummax(x, 1).values]:
        grads = []
        for lib in (torch, ember):
            t = lib.tensor(x, requires_grad=True)
            g, = lib.autograd.grad(fn(lib, t).pow(2).sum(), t, create_graph=True)
            gg, = lib.autograd.grad(g.sin().sum(), t)
            grads.append(gg.detach().numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("fn", [
    lambda lib: lib.trapezoid(lib.tensor([True, False])),
    lambda lib: lib.trapezoid(lib.ones(2), lib.tensor([True, False])),
    lambda lib: lib.cumulative_trapezoid(lib.tensor([True, False])),
    lambda lib: lib.trapz(lib.tensor([True, False]), lib.ones(2)),
    lambda lib: lib.histc(lib.tensor([True, False])),
    lambda lib: lib.histogram(lib.ones(2, dtype=lib.float16), 3),
    lambda lib: lib.nansum(lib.tensor([1 + 1j])),
    lambda lib: lib.nanmean(lib.tensor([1 + 1j])),
])
def test_dtype_errors(fn):
    same_error(fn)


def test_half_precision():
    x = np.array([[1.5, -2, 3.25], [0.5, 7, -1]])
    for dt in ("float16", "bfloat16"):
        for fn in [lambda lib, x: lib.renorm(x, 2, 0, 1.), lambda lib, x: lib.quantile(
                   x.float(), 0.3, 1), lambda lib, x: lib.logcumsumexp(x, 1),
                   lambda lib, x: lib.cummax(x, 1).values, lambda lib, x: lib.histc(x, 4, 0, 1),
                   lambda lib, x: lib.nanmedian(x, 1).values, lambda lib, x: lib.cov(x)]:
            t = fn(torch, torch.tensor(x, dtype=getattr(torch, dt)))
            e = fn(ember, ember.tensor(x, dtype=getattr(ember, dt)))
            assert str(t.dtype).split(".")[-1] == e.dtype.name
            np.testing.assert_array_equal(e.float().numpy(), t.float().numpy())


@pytest.mark.skipif(DEVICE is not None, reason="meta tensors against the host's torch")
def test_meta_shapes():
    for fn in [lambda lib, x: lib.cummax(x, 1), lambda lib, x: lib.logcumsumexp(x, 0),
               lambda lib, x: lib.nanmean(x, 1), lambda lib, x: lib.median(x),
               lambda lib, x: lib.nanmedian(x, 0, True), lambda lib, x: lib.quantile(
                   x, lib.tensor([0.2, 0.4], device="meta"), 1), lambda lib, x: lib.aminmax(x),
               lambda lib, x: lib.kthvalue(x, 2), lambda lib, x: lib.mode(x, 0),
               lambda lib, x: lib.isin(x, x), lambda lib, x: lib.trapezoid(x),
               lambda lib, x: lib.cumulative_trapezoid(x, dim=0),
               lambda lib, x: lib.renorm(x, 2, 0, 1.), lambda lib, x: lib.histc(x, 4, 0, 1)]:
        t = fn(torch, torch.zeros(3, 4, device="meta"))
        e = fn(ember, ember.zeros(3, 4, device="meta"))
        t, e = (t, e) if isinstance(t, tuple) else ((t,), (e,))
        assert [(tuple(a.shape), str(a.dtype).split(".")[-1], a.device.type) for a in t] == \
            [(tuple(a.shape), a.dtype.name, a.device.type) for a in e]
    with pytest.raises(NotImplementedError, match="aten::bincount: attempted to run this "
                       "operator with Meta tensors"):
        ember.bincount(ember.zeros(3, dtype=ember.int64, device="meta"))
