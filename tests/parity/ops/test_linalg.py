"""Parity with PyTorch for matrix products: mm, matmul in all its shape
cases, bmm, dot, mv, outer, addmm and einsum; values and gradients."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_mm(dtype, noncontiguous):
    a, b = randn((3, 4), dtype, 1), randn((4, 5), dtype, 2)
    compare(lambda lib, x, y: lib.mm(x, y), a, b, noncontiguous=noncontiguous)
    compare(lambda lib, x, y: x.mm(y), a, b, noncontiguous=noncontiguous)
    compare(lambda lib, x, y: x @ y, a, b, noncontiguous=noncontiguous)


MATMUL_SHAPES = [
    ((4,), (4,)),             # 1-D . 1-D -> scalar
    ((4,), (4, 3)),           # 1-D . 2-D
    ((3, 4), (4,)),           # 2-D . 1-D
    ((3, 4), (4, 2)),         # 2-D . 2-D
    ((2, 3, 4), (2, 4, 5)),   # batched
    ((2, 1, 3, 4), (5, 4, 2)),  # broadcasting batch dims
    ((2, 3, 4), (4,)),        # 3-D . 1-D
    ((4,), (2, 4, 3)),        # 1-D . 3-D
    ((2, 3, 4), (4, 5)),      # batched . matrix (batch broadcast)
    ((3, 2, 3, 4), (4, 5)),   # a 4-D stack . matrix: the matrix's gradient is one product
    ((3, 4), (2, 4, 5)),      # matrix . batched
    ((1, 3, 4), (2, 4, 5)),   # size-1 batch broadcast
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul(shapes, dtype):
    sa, sb = shapes
    a, b = randn(sa, dtype, 3), randn(sb, dtype, 4)
    compare(lambda lib, x, y: lib.matmul(x, y), a, b)
    compare(lambda lib, x, y: x @ y, a, b, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_bmm(dtype):
    a, b = randn((3, 2, 4), dtype, 5), randn((3, 4, 5), dtype, 6)
    compare(lambda lib, x, y: lib.bmm(x, y), a, b)
    compare(lambda lib, x, y: x.bmm(y), a, b, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_dot_mv_outer(dtype):
    v, w = randn((5,), dtype, 7), randn((5,), dtype, 8)
    m = randn((3, 5), dtype, 9)
    u = randn((3,), dtype, 10)
    compare(lambda lib, x, y: lib.dot(x, y), v, w)
    compare(lambda lib, x, y: x.dot(y), v, w)
    compare(lambda lib, x, y: lib.mv(x, y), m, v)
    compare(lambda lib, x, y: x.mv(y), m, v, noncontiguous=True)
    compare(lambda lib, x, y: lib.outer(x, y), u, v)
    compare(lambda lib, x, y: x.outer(y), v, u)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5), (2, 0)], ids=str)
def test_addmm(beta, alpha, dtype):
    inp = randn((3, 5), dtype, 11)
    bias = randn((5,), dtype, 12)
    m1, m2 = randn((3, 4), dtype, 13), randn((4, 5), dtype, 14)
    compare(lambda lib, i, x, y: lib.addmm(i, x, y, beta=beta, alpha=alpha), inp, m1, m2)
    compare(lambda lib, i, x, y: lib.addmm(i, x, y, beta=beta, alpha=alpha), bias, m1, m2)
    compare(lambda lib, i, x, y: i.addmm(x, y, beta=beta, alpha=alpha), inp, m1, m2,
            noncontiguous=True)


EINSUM = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),            # implicit output
    ("ij->ji", [(3, 4)]),
    ("ij->", [(3, 4)]),                     # sum to scalar
    ("i,i->", [(4,), (4,)]),                # dot
    ("i,j->ij", [(3,), (4,)]),              # outer
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),  # batch matmul
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]),    # implicit batch: output 'bik'
    ("ij,ij->i", [(3, 4), (3, 4)]),
    ("ijk->kj", [(2, 3, 4)]),
    ("ij,j->i", [(3, 4), (4,)]),
    ("ba,ca->bc", [(3, 4), (2, 4)]),        # implicit letters sorted in output
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),  # three operands
    ("ij,kl->ijkl", [(2, 3), (2, 2)]),
    ("ij,jk->", [(3, 4), (4, 5)]),
    ("i j , j k -> i k", [(3, 4), (4, 5)]),  # spaces
    ("bi,bj->b", [(3, 4), (3, 2)]),          # letters private to one operand
    ("ii->", [(3, 3)]),                      # trace
    ("ii->i", [(3, 3)]),                     # diagonal
    ("ii", [(3, 3)]),                        # implicit trace
    ("bii->b", [(2, 3, 3)]),
    ("ij,jj->i", [(2, 3), (3, 3)]),
    ("ij,ij->ij", [(1, 3), (2, 3)]),         # size-1 dim broadcasts
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("...ij,...jk", [(2, 1, 3, 4), (5, 4, 2)]),  # ellipsis broadcasting, implicit output
    ("i...->...", [(2, 3, 4)]),
    ("...i,...i->...", [(3, 4), (4,)]),
    ("b...,b...->b", [(2, 3), (2, 3)]),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("spec,shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(spec, shapes, dtype):
    arrays = [randn(s, dtype, 15 + i) for i, s in enumerate(shapes)]
    compare(lambda lib, *ts: lib.einsum(spec, *ts), *arrays)
    compare(lambda lib, *ts: lib.einsum(spec, list(ts)), *arrays, noncontiguous=True)


def test_einsum_mixed_dtypes_do_not_promote():
    same_error(lambda lib, x, y: lib.einsum("ij,jk->ik", x, y),
               randn((2, 3), np.float64, 20), randn((3, 2), np.float32, 21))
    same_error(lambda lib, x, y, z: lib.einsum("ij,jk,k->i", x, y, z),
               randn((2, 3), np.float32, 20), randn((3, 2), np.float32, 21),
               np.array([1, 2], np.int64))


@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_chain_and_reuse(dtype):
    # a weight used twice and a matmul feeding a reduction
    w = randn((4, 4), dtype, 22)
    x = randn((3, 4), dtype, 23)
    compare(lambda lib, a, b: ((b @ a) @ a.t()).tanh().sum(-1), w, x)


def test_int_matmul():
    a = np.arange(6, dtype=np.int64).reshape(2, 3)
    b = np.arange(12, dtype=np.int64).reshape(3, 4)
    compare(lambda lib, x, y: x @ y, a, b)
    compare(lambda lib, x, y: lib.mm(x, y), a, b)


# ---- errors: same exception type and message as torch -------------------------------------
def same_error(fn, *arrays):
    errors = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(lib, *[lib.tensor(a) for a in arrays])
        errors.append((type(info.value).__name__, str(info.value)))
    assert errors[1] == errors[0]


ONES = np.ones
ERRORS = [
    ("mm_shapes", lambda lib, a, b: lib.mm(a, b), [ONES((2, 3)), ONES((4, 5))]),
    ("mm_1d", lambda lib, a, b: lib.mm(a, b), [ONES((3,)), ONES((3, 5))]),
    ("mm_dtype", lambda lib, a, b: lib.mm(a, b),
     [ONES((2, 3), np.float32), ONES((3, 2), np.float64)]),
    ("matmul_0d", lambda lib, a, b: lib.matmul(a, b), [np.array(2.0), ONES((3,))]),
    ("matmul_2d", lambda lib, a, b: a @ b, [ONES((2, 3)), ONES((4, 5))]),
    ("matmul_1d_1d", lambda lib, a, b: a @ b, [ONES((3,)), ONES((4,))]),
    ("matmul_2d_1d", lambda lib, a, b: a @ b, [ONES((2, 3)), ONES((4,))]),
    ("matmul_1d_2d", lambda lib, a, b: a @ b, [ONES((3,)), ONES((4, 2))]),
    ("matmul_batch", lambda lib, a, b: a @ b, [ONES((2, 3, 4)), ONES((2, 5, 6))]),
    ("bmm_dims", lambda lib, a, b: lib.bmm(a, b), [ONES((2, 3)), ONES((2, 3, 4))]),
    ("bmm_dims2", lambda lib, a, b: lib.bmm(a, b), [ONES((2, 3, 4)), ONES((4, 5))]),
    ("bmm_batch", lambda lib, a, b: lib.bmm(a, b), [ONES((2, 3, 4)), ONES((3, 4, 5))]),
    ("dot_2d", lambda lib, a, b: lib.dot(a, b), [ONES((2, 3)), ONES((3,))]),
    ("dot_size", lambda lib, a, b: lib.dot(a, b), [ONES((3,)), ONES((4,))]),
    ("einsum_operands", lambda lib, a: lib.einsum("ij,jk->ik", a), [ONES((2, 3))]),
    ("einsum_dims", lambda lib, a: lib.einsum("ijk->i", a), [ONES((2, 3))]),
    ("dtype_1d_1d", lambda lib, a, b: a @ b, [ONES(2, np.float32), ONES(2)]),
    ("dtype_dot", lambda lib, a, b: lib.dot(a, b), [ONES(2, np.float32), ONES(2)]),
    ("dtype_2d_1d", lambda lib, a, b: a @ b, [ONES((2, 2), np.float32), ONES(2)]),
    ("dtype_mv", lambda lib, a, b: lib.mv(a, b), [ONES((2, 2)), ONES(2, np.float32)]),
    ("dtype_3d_1d", lambda lib, a, b: a @ b, [ONES((2, 2, 2), np.float32), ONES(2)]),
    ("dtype_1d_2d", lambda lib, a, b: a @ b, [ONES(2, np.float32), ONES((2, 2))]),
    ("dtype_2d_2d", lambda lib, a, b: a @ b, [ONES((2, 2), np.float32), ONES((2, 2))]),
    ("dtype_3d_2d", lambda lib, a, b: a @ b, [ONES((2, 2, 2), np.float32), ONES((2, 2))]),
    ("dtype_2d_3d", lambda lib, a, b: a @ b, [ONES((2, 2), np.float32), ONES((2, 2, 2))]),
    ("dtype_3d_3d", lambda lib, a, b: a @ b, [ONES((2, 2, 2), np.float32), ONES((2, 2, 2))]),
    ("dtype_bmm", lambda lib, a, b: lib.bmm(a, b), [ONES((2, 2, 2)), ONES((2, 2, 2), np.float32)]),
    ("dtype_int_float", lambda lib, a, b: a @ b,
     [ONES((2, 2), np.int64), ONES((2, 2), np.float32)]),
    ("dtype_addmm_mats", lambda lib, i, a, b: lib.addmm(i, a, b),
     [ONES((2, 2)), ONES((2, 2)), ONES((2, 2), np.float32)]),
    ("dtype_addmm_self", lambda lib, i, a, b: lib.addmm(i, a, b),
     [ONES((2, 2), np.float32), ONES((2, 2)), ONES((2, 2))]),
]


@pytest.mark.parametrize("name,fn,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, arrays):
    same_error(fn, *arrays)


@pytest.mark.parametrize("dtype", FLOATS)
def test_addmm_beta_zero_ignores_nan_input(dtype):
    inp = np.array([[np.nan, np.inf], [1.0, -np.inf]], dtype)
    m1, m2 = randn((2, 3), dtype, 30), randn((3, 2), dtype, 31)
    compare(lambda lib, i, x, y: lib.addmm(i, x, y, beta=0, alpha=2), inp, m1, m2)
