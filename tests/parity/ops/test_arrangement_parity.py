"""Parity with PyTorch for the arrangement ops: tensor_split, hsplit/vsplit/dsplit,
atleast_1d/2d/3d, hstack/vstack/row_stack/dstack/column_stack, block_diag, cartesian_prod,
combinations, rot90, flipud/fliplr, diagflat, argwhere, vander, tril_indices/triu_indices.
Values and gradients in float32 and float64, transposed (non-contiguous) inputs, integer
dtypes, empty and 0-d tensors, out=, and the errors of bad arguments."""
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


# ---- splitting ------------------------------------------------------------------------------
SPLITS = [7, 3, 1, [1, 5], [5, 1], [-2, 9], [], (0,), [0, 0, 7]]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("how", SPLITS, ids=str)
def test_tensor_split(how, dtype):
    compare(lambda lib, x: lib.tensor_split(x, how, dim=1), randn((2, 7), dtype))
    compare(lambda lib, x: x.tensor_split(how, -1), randn((3, 7), dtype), noncontiguous=True)


def test_tensor_split_tensor_forms():
    x = randn((7, 2), np.float64)
    compare(lambda lib, x: lib.tensor_split(x, lib.tensor(3)), x)
    compare(lambda lib, x: lib.tensor_split(x, lib.tensor([1, 5])), x)


@pytest.mark.parametrize("name,shape,how", [
    ("hsplit", (6,), 3), ("hsplit", (2, 6), 2), ("hsplit", (2, 6), [1, 4]),
    ("vsplit", (4, 3), 2), ("vsplit", (4, 3), [3]), ("dsplit", (1, 2, 4), 2),
    ("dsplit", (1, 2, 4), [1, 2, 10]),
])
def test_directional_splits(name, shape, how):
    compare(lambda lib, x: getattr(lib, name)(x, how), randn(shape, np.float32))
    compare(lambda lib, x: getattr(x, name)(how), randn(shape, np.float64))


@pytest.mark.parametrize("call", [
    lambda lib: lib.tensor_split(lib.arange(7.), lib.tensor([1.0, 5.0])),
    lambda lib: lib.tensor_split(lib.arange(7.), lib.tensor([[1, 5]])),
    lambda lib: lib.tensor_split(lib.arange(7.), 0),
    lambda lib: lib.tensor_split(lib.tensor(1.), 2),
    lambda lib: lib.tensor_split(lib.arange(7.), 3, dim=1),
    lambda lib: lib.hsplit(lib.arange(7.), 2),
    lambda lib: lib.hsplit(lib.tensor(1.), 7),
    lambda lib: lib.vsplit(lib.arange(7.), 7),
    lambda lib: lib.dsplit(lib.zeros(2, 2), 7),
    lambda lib: lib.hsplit(lib.zeros(4, 2), 0),
])
def test_split_errors(call):
    same_error(call)


# ---- rank and stacking ------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["atleast_1d", "atleast_2d", "atleast_3d"])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 2)], ids=str)
def test_atleast(name, shape):
    compare(lambda lib, x: getattr(lib, name)(x), randn(shape, np.float64))
    compare(lambda lib, x, y: getattr(lib, name)(x, y), randn(shape, np.float32),
            randn((2,), np.float32))
    compare(lambda lib, x, y: getattr(lib, name)([x, y]), randn(shape, np.float32),
            randn((), np.float32))


def test_atleast_errors():
    same_error(lambda lib: lib.atleast_1d(3))
    assert ember.atleast_2d() == torch.atleast_2d() == ()


STACKS = {
    "hstack": [[(3,), (2,)], [(2, 3), (2, 1)], [(), (2,)]],
    "vstack": [[(3,), (3,)], [(2, 3), (3,)], [(1, 2), (4, 2)]],
    "row_stack": [[(3,), (3,)], [(2, 3), (1, 3)]],
    "dstack": [[(3,), (3,)], [(2, 3), (2, 3, 2)], [(), ()]],
    "column_stack": [[(3,), (3,)], [(2,), (2, 3)], [(), (1,), (1, 2)]],
}
STACK_CASES = [(name, shapes) for name, cases in STACKS.items() for shapes in cases]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,shapes", STACK_CASES, ids=str)
def test_stacks(name, shapes, dtype):
    arrays = [randn(s, dtype, i) for i, s in enumerate(shapes)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # row_stack's deprecation, if any
        compare(lambda lib, *ts: getattr(lib, name)(ts), *arrays)
        compare(lambda lib, *ts: getattr(lib, name)(list(ts)), *arrays, noncontiguous=True)


@pytest.mark.parametrize("name", list(STACKS))
def test_stacks_promote_and_out(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        compare(lambda lib, a, b: getattr(lib, name)([a, b]), np.arange(3),
                np.ones(3, np.float32))

        def into_out(lib, a, b):
            out = lib.empty(0, dtype=lib.float64)
            result = getattr(lib, name)((a, b), out=out)
            assert result is out
            return out
        compare(into_out, np.arange(2.0), np.ones(2), grad=False)


@pytest.mark.parametrize("name", list(STACKS))
def test_stack_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_error(lambda lib: getattr(lib, name)([]))
        same_error(lambda lib: getattr(lib, name)(lib.ones(2)))


# ---- block_diag, cartesian_prod, combinations ----------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_block_diag(dtype):
    compare(lambda lib, a, b, c: lib.block_diag(a, b, c), randn((), dtype),
            randn((3,), dtype, 1), randn((2, 2), dtype, 2))
    compare(lambda lib, a, b: lib.block_diag(a, b), randn((2, 3), dtype),
            randn((3, 2), dtype, 1), noncontiguous=True)
    compare(lambda lib, a, b, c: lib.block_diag(a, b, c), randn((0, 2), dtype),
            randn((1, 0), dtype, 1), randn((1, 1), dtype, 2))


def test_block_diag_dtypes_and_errors():
    compare(lambda lib, a, b, c: lib.block_diag(a, b, c), np.array([True]), np.array([3]),
            np.ones((1, 2), np.float64))
    compare(lambda lib: lib.block_diag())
    same_error(lambda lib: lib.block_diag(lib.zeros(2, 2, 2)))
    same_error(lambda lib: lib.block_diag([lib.ones(1)]))


@pytest.mark.parametrize("dtype", FLOATS)
def test_cartesian_prod(dtype):
    compare(lambda lib, a, b, c: lib.cartesian_prod(a, b, c), randn((2,), dtype),
            randn((3,), dtype, 1), randn((2,), dtype, 2))
    compare(lambda lib, a: lib.cartesian_prod(a), randn((3,), dtype))
    compare(lambda lib, a, b: lib.cartesian_prod(a, b), np.arange(2), np.zeros(0, np.int64))


@pytest.mark.parametrize("call", [
    lambda lib: lib.cartesian_prod(lib.tensor([1, 2]), lib.tensor([3.0, 4.0])),
    lambda lib: lib.cartesian_prod(lib.tensor([[1, 2]])),
    lambda lib: lib.cartesian_prod(),
    lambda lib: lib.cartesian_prod(lib.tensor(1), lib.tensor([1])),
    lambda lib: lib.combinations(lib.tensor([[1, 2]])),
    lambda lib: lib.combinations(lib.tensor(1)),
    lambda lib: lib.combinations(lib.tensor([1, 2, 3]), r=-1),
])
def test_product_errors(call):
    same_error(call)


@pytest.mark.parametrize("r", [0, 1, 2, 3, 5])
@pytest.mark.parametrize("with_replacement", [False, True])
def test_combinations(r, with_replacement):
    compare(lambda lib, x: lib.combinations(x, r, with_replacement), randn((4,), np.float64))
    compare(lambda lib, x: lib.combinations(x, r=r, with_replacement=with_replacement),
            np.arange(3))
    compare(lambda lib, x: lib.combinations(x, r), np.zeros(0, np.float32))


# ---- rotations and flips -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("k", [-1, 0, 1, 2, 3, 5])
@pytest.mark.parametrize("dims", [(0, 1), (1, 0), (-1, 0), (0, 2)], ids=str)
def test_rot90(k, dims, dtype):
    compare(lambda lib, x: lib.rot90(x, k, dims), randn((2, 3, 4), dtype))
    compare(lambda lib, x: x.rot90(k, list(dims)), randn((2, 3, 4), dtype),
            noncontiguous=True)


@pytest.mark.parametrize("call", [
    lambda lib: lib.rot90(lib.zeros(2, 3), 1, [0]),
    lambda lib: lib.rot90(lib.zeros(2, 3), 1, [0, 0]),
    lambda lib: lib.rot90(lib.zeros(2, 3), 1, [0, 2]),
    lambda lib: lib.rot90(lib.zeros(2, 3), 1, [0, -2]),
    lambda lib: lib.rot90(lib.zeros(2, 3), 1, [5, 5]),
    lambda lib: lib.rot90(lib.zeros(3), 1),
    lambda lib: lib.flipud(lib.tensor(1)),
    lambda lib: lib.fliplr(lib.tensor([1])),
])
def test_rotation_errors(call):
    same_error(call)


@pytest.mark.parametrize("dtype", FLOATS)
def test_flips(dtype):
    for shape in [(3,), (2, 3), (2, 3, 2)]:
        compare(lambda lib, x: lib.flipud(x), randn(shape, dtype))
        if len(shape) > 1:
            compare(lambda lib, x: x.fliplr(), randn(shape, dtype), noncontiguous=True)


# ---- diagflat, argwhere, vander ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("offset", [0, 1, -2])
@pytest.mark.parametrize("shape", [(), (3,), (2, 2), (0,)], ids=str)
def test_diagflat(shape, offset, dtype):
    compare(lambda lib, x: lib.diagflat(x, offset), randn(shape, dtype))
    compare(lambda lib, x: x.diagflat(offset), randn(shape, dtype), noncontiguous=True)


@pytest.mark.parametrize("array", [np.array(1.0), np.array(0.0), np.array([0, 3, 0, 5]),
                                   np.array([[0, 1, 2], [3, 0, 0]]), np.zeros((2, 0)),
                                   np.array([[True, False], [False, True]])], ids=str)
def test_argwhere(array):
    compare(lambda lib, x: lib.argwhere(x), array, grad=False)
    compare(lambda lib, x: x.argwhere(), array, grad=False, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("N", [None, 0, 1, 2, 4])
@pytest.mark.parametrize("increasing", [False, True])
def test_vander(N, increasing, dtype):
    # values only: PyTorch 2.x's own vander backward fails (its cumprod is saved, then
    # written in place); tests/ops/test_arrangement.py checks ember's gradient numerically
    compare(lambda lib, x: lib.vander(x, N, increasing), randn((3,), dtype), grad=False)
    compare(lambda lib, x: lib.vander(x, N=N, increasing=increasing),
            np.array([0.0, 1.5, -2.0], dtype), grad=False)


@pytest.mark.parametrize("array", [np.array([1, 2, 3]), np.array([True, False]),
                                   np.array([1, 2], np.int8), np.array([1, 2], np.float16),
                                   np.zeros(0, np.float32)], ids=str)
def test_vander_dtypes(array):
    compare(lambda lib, x: lib.vander(x), array, grad=False)
    compare(lambda lib, x: lib.vander(x, 3, True), array, grad=False)


@pytest.mark.parametrize("call", [
    lambda lib: lib.vander(lib.tensor([[1, 2]])), lambda lib: lib.vander(lib.tensor(1.0)),
    lambda lib: lib.vander(lib.tensor([1.0, 2.0]), N=-1),
])
def test_vander_errors(call):
    same_error(call)


# ---- tril_indices, triu_indices ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
@pytest.mark.parametrize("row,col,offset", [(3, 3, 0), (3, 4, 1), (4, 3, -1), (0, 4, 0),
                                            (3, 3, -10), (3, 3, 10), (1, 5, 2)])
def test_triangle_indices(name, row, col, offset):
    compare(lambda lib: getattr(lib, name)(row, col, offset))
    compare(lambda lib: getattr(lib, name)(row, col, offset=offset, dtype=lib.int32))


@pytest.mark.parametrize("name", ["tril_indices", "triu_indices"])
def test_triangle_index_errors(name):
    same_error(lambda lib: getattr(lib, name)(-1, 4))
    same_error(lambda lib: getattr(lib, name)(3, -2))
    same_error(lambda lib: getattr(lib, name)(3, 3, dtype=lib.float32))
    same_error(lambda lib: getattr(lib, name)(3, 3, dtype=lib.int8))
