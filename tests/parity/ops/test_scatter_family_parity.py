"""Parity with PyTorch for the scatter family: select_scatter, slice_scatter,
diagonal_scatter, index_put(_), put(_), masked_scatter(_), index_fill(_), fill_diagonal_,
scatter_reduce(_) and index_reduce(_). Values and gradients of both inputs in float32 and
float64, repeated indices, ties and zeros (amax/amin/prod gradients), include_self,
broadcasting, transposed inputs, integer dtypes, in-place forms, out= and errors."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def same_error(fn):
    t, e = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert t is not None and e == t, (e, t)


# ---- select_scatter, slice_scatter, diagonal_scatter ---------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim,index", [(0, 0), (1, -1), (-1, 2), (2, 1)])
def test_select_scatter(dim, index, dtype):
    x = randn((2, 3, 4), dtype)
    src = randn(tuple(s for i, s in enumerate(x.shape) if i != dim % 3), dtype, 1)
    compare(lambda lib, x, s: lib.select_scatter(x, s, dim, index), x, src)
    compare(lambda lib, x, s: x.select_scatter(s, dim, index), x, src, noncontiguous=True)


SLICES = [(0, None, None, 1), (1, 1, None, 1), (1, 0, 3, 2), (1, -1, None, 1),
          (-1, None, -2, 1), (0, 5, 10, 1), (1, -10, 10, 3)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim,start,end,step", SLICES, ids=str)
def test_slice_scatter(dim, start, end, step, dtype):
    x = randn((3, 4), dtype)
    shape = list(x.shape)
    shape[dim] = len(range(*slice(start, end, step).indices(shape[dim])))
    src = randn(tuple(shape), dtype, 1)
    compare(lambda lib, x, s: lib.slice_scatter(x, s, dim, start, end, step), x, src)
    compare(lambda lib, x, s: x.slice_scatter(s, dim=dim, start=start, end=end, step=step),
            x, src, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("offset,dim1,dim2", [(0, 0, 1), (1, 0, 1), (-1, 1, 0), (0, -1, 0),
                                              (2, 1, 2), (-5, 0, 1)])
def test_diagonal_scatter(offset, dim1, dim2, dtype):
    x = randn((3, 4, 2), dtype)
    src = randn(np.diagonal(x, offset, dim1 % 3, dim2 % 3).shape, dtype, 1)
    compare(lambda lib, x, s: lib.diagonal_scatter(x, s, offset, dim1, dim2), x, src)
    compare(lambda lib, x, s: x.diagonal_scatter(s, offset, dim1, dim2), x, src,
            noncontiguous=True)


def test_region_scatters_cast_and_double_backward():
    compare(lambda lib, x, s: lib.select_scatter(x, s, 0, 0), randn((2, 3), np.float32),
            randn((3,), np.float64, 1))
    compare(lambda lib, x, s: lib.slice_scatter(x, s, 0, 1), np.zeros((2, 3), np.int64),
            np.ones((1, 3), np.int64))
    for lib in (torch, ember):
        x = lib.tensor(randn((3, 3), np.float64), requires_grad=True)
        s = lib.tensor(randn((3,), np.float64, 1), requires_grad=True)
        y = (lib.diagonal_scatter(x, s) ** 2).sum()
        gx, gs = lib.autograd.grad(y, (x, s), create_graph=True)
        (gx.sum() + (gs * 3).sum()).backward()
        if lib is torch:
            expected = (x.grad.numpy(), s.grad.numpy())
    np.testing.assert_allclose(x.grad.numpy(), expected[0])
    np.testing.assert_allclose(s.grad.numpy(), expected[1])


def test_slice_scatter_out():
    def into_out(lib, x, s):
        out = lib.empty(0)
        assert lib.slice_scatter(x, s, 1, 1, out=out) is out
        return out
    compare(into_out, np.zeros((2, 3), np.float32), np.ones((2, 2), np.float32), grad=False)


@pytest.mark.parametrize("call", [
    lambda lib: lib.select_scatter(lib.zeros(2, 3), lib.ones(1), 0, 0),
    lambda lib: lib.select_scatter(lib.zeros(2, 3), lib.ones(3), 0, 5),
    lambda lib: lib.select_scatter(lib.zeros(2, 3), lib.ones(3), 2, 0),
    lambda lib: lib.select_scatter(lib.zeros(2, 3), 1.0, 0, 0),
    lambda lib: lib.select_scatter(lib.tensor(1.0), lib.tensor(2.0), 0, 0),
    lambda lib: lib.slice_scatter(lib.zeros(2, 3), lib.ones(2, 2), 1, 0, 1),
    lambda lib: lib.slice_scatter(lib.zeros(2, 3), lib.ones(2, 3), step=0),
    lambda lib: lib.diagonal_scatter(lib.zeros(2, 3), lib.ones(3)),
    lambda lib: lib.diagonal_scatter(lib.zeros(2, 3), lib.ones(1), 0, 0, 0),
    lambda lib: lib.diagonal_scatter(lib.zeros(3), lib.ones(1)),
])
def test_region_scatter_errors(call):
    same_error(call)


# ---- index_put, put ------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put(accumulate, dtype):
    x = randn((3, 4), dtype)
    rows, cols = np.array([0, 2, 0]), np.array([1, 1, 3])
    compare(lambda lib, x, v: lib.index_put(x, (lib.tensor(rows),), v, accumulate), x,
            randn((4,), dtype, 1))
    compare(lambda lib, x, v: lib.index_put(x, [lib.tensor(rows), lib.tensor(cols)], v,
                                            accumulate=accumulate), x, randn((3,), dtype, 1))
    compare(lambda lib, x, v: x.index_put((lib.tensor([[-1], [1]]), lib.tensor(cols)), v,
                                          accumulate), x, randn((), dtype, 1),
            noncontiguous=True)
    mask = np.array([True, False, True])
    compare(lambda lib, x, v: lib.index_put(x, (lib.tensor(mask),), v, accumulate), x,
            randn((1, 4), dtype, 1))
    compare(lambda lib, x, v: lib.index_put(x, (lib.tensor(mask), lib.tensor([0, 3])), v,
                                            accumulate), x, randn((2,), dtype, 1))


def test_index_put_inplace_and_integers():
    def inplace(lib, x, v):
        y = x * 1
        assert y.index_put_((lib.tensor([0, 0, 2]),), v, True) is y
        return y
    compare(inplace, randn((3, 2), np.float64), randn((2,), np.float64, 1))
    compare(lambda lib, x, v: lib.index_put(x, (lib.tensor([0, 0]),), v, True),
            np.arange(3), np.array([4, 5]))


@pytest.mark.parametrize("call", [
    lambda lib: lib.index_put(lib.zeros(3, 4), (lib.tensor([0]),), lib.tensor(1.0).double()),
    lambda lib: lib.index_put(lib.zeros(3, 4), (lib.tensor([0]),), 1.0),
    lambda lib: lib.index_put(lib.zeros(3, 4), lib.tensor([0]), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.zeros(3, 4), (None, lib.tensor([0])), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.zeros(3, 4), (lib.tensor([5]),), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.zeros(3, 4), (lib.tensor([0.0]),), lib.tensor(1.0)),
    lambda lib: lib.index_put(lib.zeros(3, 4), (lib.tensor([0]),), lib.ones(2)),
    lambda lib: lib.index_put(lib.zeros(3, 4), (lib.tensor([0]),), lib.ones(2), True),
    lambda lib: lib.index_put(lib.zeros(3, 4), (lib.tensor([0]),) * 3, lib.ones(1)),
    lambda lib: lib.index_put(lib.zeros(3), (lib.tensor([True, False]),), lib.ones(1)),
])
def test_index_put_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("accumulate", [False, True])
def test_put(accumulate, dtype):
    x = randn((2, 3), dtype)
    compare(lambda lib, x, s: lib.put(x, lib.tensor([0, -1, 4]), s, accumulate), x,
            randn((3,), dtype, 1))
    compare(lambda lib, x, s: x.put(lib.tensor([[1], [1]]), s, accumulate), x,
            randn((2,), dtype, 1), noncontiguous=True)
    compare(lambda lib, x, s: lib.put(x, lib.tensor([], dtype=lib.int64), s, accumulate), x,
            randn((0,), dtype, 1))

    def inplace(lib, x, s):
        y = x * 1
        assert y.put_(lib.tensor([5, 0]), s, accumulate=accumulate) is y
        return y
    compare(inplace, x, randn((2, 1), dtype, 1))


@pytest.mark.parametrize("call", [
    lambda lib: lib.put(lib.zeros(2, 3), lib.tensor([6]), lib.tensor([9.0])),
    lambda lib: lib.put(lib.zeros(2, 3), lib.tensor([-7]), lib.tensor([9.0])),
    lambda lib: lib.put(lib.zeros(2, 3), lib.tensor([0]), lib.tensor([9.0, 8.0])),
    lambda lib: lib.put(lib.zeros(2, 3), lib.tensor([0]), lib.tensor([9.0]).double()),
    lambda lib: lib.put(lib.zeros(2, 3), lib.tensor([0]).int(), lib.tensor([9.0])),
    lambda lib: lib.put(lib.zeros(2, 3), lib.tensor([0]), 9.0),
    lambda lib: lib.put(lib.zeros(0), lib.tensor([0]), lib.tensor([9.0])),
])
def test_put_errors(call):
    same_error(call)


# ---- masked_scatter, index_fill, fill_diagonal_ --------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_masked_scatter(dtype):
    mask = np.array([[True, False, True], [False, True, True]])
    compare(lambda lib, x, s: lib.masked_scatter(x, lib.tensor(mask), s), randn((2, 3), dtype),
            randn((2, 4), dtype, 1))
    compare(lambda lib, x, s: x.masked_scatter(lib.tensor(mask[0]), s), randn((2, 3), dtype),
            randn((3, 2), dtype, 1), noncontiguous=True)
    compare(lambda lib, x, s: lib.masked_scatter(x, lib.tensor(mask), s), randn((3,), dtype),
            randn((5,), dtype, 1))

    def inplace(lib, x, s):
        y = x * 1
        assert y.masked_scatter_(lib.tensor(mask[1]), s) is y
        return y
    compare(inplace, randn((2, 3), dtype), randn((6,), dtype, 1))


@pytest.mark.parametrize("call", [
    lambda lib: lib.zeros(3).masked_scatter_(lib.ones(2, 3, dtype=lib.bool), lib.ones(6)),
    lambda lib: lib.masked_scatter(lib.zeros(2, 3), lib.ones(2, 3, dtype=lib.bool), lib.ones(2)),
    lambda lib: lib.masked_scatter(lib.zeros(2, 3), lib.ones(2, 3), lib.ones(6)),
    lambda lib: lib.masked_scatter(lib.zeros(2, 3), lib.ones(2, 3, dtype=lib.bool),
                                   lib.ones(6).double()),
    lambda lib: lib.masked_scatter(lib.zeros(2, 3), lib.ones(2, 3, dtype=lib.bool), 1.0),
    lambda lib: lib.masked_scatter(lib.zeros(2, 3), lib.ones(2, 4, dtype=lib.bool), lib.ones(8)),
])
def test_masked_scatter_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", FLOATS)
def test_index_fill(dtype):
    x = randn((2, 3), dtype)
    compare(lambda lib, x: lib.index_fill(x, 1, lib.tensor([0, -1]), 5.0), x)
    compare(lambda lib, x: x.index_fill(0, lib.tensor(1), -2), x, noncontiguous=True)
    compare(lambda lib, x, v: lib.index_fill(x, 1, lib.tensor([2, 2, 0]), v), x,
            randn((), dtype, 1))
    compare(lambda lib, x: lib.index_fill(x, 0, lib.tensor([0]), 3.0), randn((), dtype))

    def inplace(lib, x, v):
        y = x * 1
        assert y.index_fill_(-1, lib.tensor([1]), v) is y
        return y
    compare(inplace, x, randn((), np.float64, 1))


def test_index_fill_integers_and_bools():
    compare(lambda lib, x: lib.index_fill(x, 1, lib.tensor([0]), 2.7), np.zeros((2, 3), np.int64))
    compare(lambda lib, x: lib.index_fill(x, 1, lib.tensor([0]), lib.tensor(-2.7)),
            np.zeros((2, 3), np.int32))
    compare(lambda lib, x: lib.index_fill(x, 0, lib.tensor([1]), True), np.array([True, False]))


@pytest.mark.parametrize("call", [
    lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([3]), 5),
    lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([-4]), 5),
    lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([0]).int(), 5),
    lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([[0]]), 5),
    lambda lib: lib.index_fill(lib.zeros(2, 3), 1, lib.tensor([0]), lib.tensor([5.0])),
    lambda lib: lib.index_fill(lib.zeros(2, 3), 2, lib.tensor([0]), 1),
    lambda lib: lib.index_fill(lib.tensor(1.0), 0, lib.tensor([1]), 3),
    lambda lib: lib.index_fill(lib.zeros(2, 3), 0, lib.tensor([0]), 1 + 2j),
])
def test_index_fill_errors(call):
    same_error(call)


@pytest.mark.parametrize("shape,wrap", [((5, 3), False), ((7, 3), True), ((3, 5), True),
                                        ((2, 2, 2), False), ((0, 3), False), ((4, 4), True)])
def test_fill_diagonal(shape, wrap):
    def fill(lib, x):
        y = x * 1
        assert y.fill_diagonal_(1.5, wrap=wrap) is y
        return y
    compare(fill, randn(shape, np.float64))
    compare(lambda lib, x: x.t().clone().t().fill_diagonal_(2, wrap) if x.dim() == 2 else x,
            np.zeros(shape, np.int64))


def test_fill_diagonal_transposed_and_errors():
    def fill(lib, x):
        y = x * 1
        y.t().fill_diagonal_(-1.0, True)
        return y
    compare(fill, randn((3, 6), np.float32))
    same_error(lambda lib: lib.zeros(2, 3, 2).fill_diagonal_(1))
    same_error(lambda lib: lib.zeros(3).fill_diagonal_(1))


# ---- scatter_reduce, index_reduce ----------------------------------------------------------------
REDUCES = ["sum", "prod", "mean", "amax", "amin"]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce(reduce, include_self, dtype):
    x, src = randn((3, 4), dtype), randn((3, 4), dtype, 1)
    index = np.array([[0, 1, 0, 1], [2, 1, 0, 1], [2, 2, 0, 0]])
    compare(lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor(index), s, reduce,
                                                 include_self=include_self), x, src)
    compare(lambda lib, x, s: x.scatter_reduce(1, lib.tensor(index[:, :3]), s[:, :3], reduce,
                                               include_self=include_self), x, src,
            noncontiguous=True)


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "amax", "amin"])
def test_scatter_reduce_ties_and_zeros(reduce, include_self):
    x = np.array([1.0, 0.0, 3.0, 2.0, 5.0])
    src = np.array([3.0, 0.0, 3.0, 0.0, 0.0, 2.0, 5.0])
    index = np.array([0, 0, 0, 1, 1, 2, 4])
    compare(lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor(index), s, reduce,
                                                 include_self=include_self), x, src)


@pytest.mark.parametrize("reduce", REDUCES)
def test_scatter_reduce_integers_inplace_out(reduce):
    x, src = np.array([1, -2, 3, 4]), np.array([5, -6, 7, 8, -9])
    index = np.array([0, 1, 0, 1, 2])
    for include_self in (True, False):
        compare(lambda lib, x, s: lib.scatter_reduce(x, 0, lib.tensor(index), s, reduce,
                                                     include_self=include_self), x, src)

    def inplace(lib, x, s):
        y = x * 1
        assert y.scatter_reduce_(0, lib.tensor(index), s, reduce) is y
        return y
    compare(inplace, x.astype(np.float64), src.astype(np.float64))

    def into_out(lib, x, s):
        out = lib.empty(0, dtype=lib.int64)
        assert lib.scatter_reduce(x, 0, lib.tensor(index), s, reduce, out=out) is out
        return out
    compare(into_out, x, src)


def test_scatter_reduce_double_backward():
    for reduce in REDUCES:
        for lib in (torch, ember):
            x = lib.tensor(randn((4,), np.float64), requires_grad=True)
            s = lib.tensor(randn((5,), np.float64, 1), requires_grad=True)
            y = lib.scatter_reduce(x, 0, lib.tensor([0, 1, 0, 1, 2]), s, reduce)
            gx, gs = lib.autograd.grad((y * y).sum(), (x, s), create_graph=True)
            (gx.sum() + (gs ** 2).sum()).backward()
            if lib is torch:
                expected = (x.grad.numpy(), s.grad.numpy())
        np.testing.assert_allclose(x.grad.numpy(), expected[0], rtol=1e-7, err_msg=reduce)
        np.testing.assert_allclose(s.grad.numpy(), expected[1], rtol=1e-7, err_msg=reduce)


@pytest.mark.parametrize("call", [
    lambda lib: lib.scatter_reduce(lib.zeros(4), 0, lib.tensor([0]), lib.ones(1), "add"),
    lambda lib: lib.scatter_reduce(lib.zeros(4), 0, lib.tensor([0]), lib.ones(1).double(),
                                   "sum"),
    lambda lib: lib.scatter_reduce(lib.zeros(4), 0, lib.tensor([7]), lib.ones(1), "sum"),
    lambda lib: lib.scatter_reduce(lib.zeros(4), 0, lib.tensor([0, 1, 2]), lib.ones(2), "sum"),
    lambda lib: lib.scatter_reduce(lib.zeros(2, 3), 1, lib.tensor([0]), lib.ones(2, 3), "sum"),
    lambda lib: lib.scatter_reduce(lib.tensor([True, False]), 0, lib.tensor([0]),
                                   lib.tensor([True]), "mean"),
])
def test_scatter_reduce_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
def test_index_reduce(reduce, include_self, dtype):
    x, src = randn((3, 2), dtype), randn((4, 2), dtype, 1)
    index = np.array([0, 2, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        compare(lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor(index), s, reduce,
                                                   include_self=include_self), x, src)
        compare(lambda lib, x, s: x.index_reduce(-1, lib.tensor([1, 1, 0]), s.t()[:, :3].t(),
                                                 reduce, include_self=include_self),
                randn((2, 3), dtype), randn((3, 2), dtype, 1).T.copy(), noncontiguous=True)


def test_index_reduce_integers_inplace_out():
    x, src, index = np.ones((3, 2), np.int64), -np.arange(6).reshape(3, 2), np.array([0, 2, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for reduce in ("prod", "mean", "amax", "amin"):
            compare(lambda lib, x, s: lib.index_reduce(x, 0, lib.tensor(index), s, reduce), x,
                    src)

        def inplace(lib, x, s):
            y = x * 1
            assert y.index_reduce_(0, lib.tensor(index), s, "amax", include_self=False) is y
            return y
        compare(inplace, randn((3, 2), np.float64), randn((3, 2), np.float64, 1))

        def into_out(lib, x, s):
            out = lib.empty(0, dtype=lib.int64)
            assert lib.index_reduce(x, 0, lib.tensor(index), s, "mean", out=out) is out
            return out
        compare(into_out, x, src)


@pytest.mark.parametrize("call", [
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0]), lib.ones(1, 2), "sum"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0.0]), lib.ones(1, 2), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([5]), lib.ones(1, 2), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([-1]), lib.ones(1, 2), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0, 1]), lib.ones(1, 2), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0]), lib.ones(1, 2).double(),
                                 "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([0]), lib.ones(1, 3), "prod"),
    lambda lib: lib.index_reduce(lib.ones(3, 2), 0, lib.tensor([[0]]), lib.ones(1, 2), "prod"),
])
def test_index_reduce_errors(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_error(call)
