"""Parity with PyTorch for torch.linalg and the matrix/diagonal ops at the top level:
values and gradients in float32 and float64, batched and transposed (non-contiguous)
inputs, broadcasting of batch dims, and errors. Eigenvectors and singular vectors are
compared through functions that do not depend on their signs."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]
TOL32 = dict(rtol=2e-3, atol=2e-4)  # float32 LAPACK results differ by more than one ulp


def tol(dtype):
    return TOL32 if dtype == np.float32 else {}


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def well_conditioned(shape, dtype, seed=0):
    """Random square matrices plus n*I: far from singular."""
    n = shape[-1]
    return (randn(shape, np.float64, seed) + n * np.eye(n)).astype(dtype)


def spd(shape, dtype, seed=0):
    a = randn(shape, np.float64, seed)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def symmetric_distinct(shape, dtype, seed=0):
    """Symmetric matrices with well separated eigenvalues."""
    n = shape[-1]
    q, _ = np.linalg.qr(randn(shape, np.float64, seed))
    vals = np.arange(1, n + 1, dtype=np.float64) * 1.5 - n / 2
    return (q @ (vals[:, None] * np.swapaxes(q, -1, -2))).astype(dtype)


BATCHES = [(), (2,), (2, 3)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("noncontiguous", [False, True])
def test_inv_det_slogdet(dtype, batch, noncontiguous):
    a = well_conditioned(batch + (4, 4), dtype, 1)
    kw = dict(noncontiguous=noncontiguous, **tol(dtype))
    compare(lambda lib, x: lib.linalg.inv(x), a, **kw)
    compare(lambda lib, x: lib.linalg.inv_ex(x).inverse, a, **kw)
    compare(lambda lib, x: lib.linalg.det(x), a, **kw)
    compare(lambda lib, x: lib.linalg.slogdet(x), a, **kw)
    compare(lambda lib, x: lib.inverse(x), a, **kw)
    compare(lambda lib, x: x.det(), a, **kw)
    compare(lambda lib, x: x.logdet(), a, **kw)
    compare(lambda lib, x: lib.slogdet(x).logabsdet, a, **kw)


@pytest.mark.parametrize("dtype", FLOATS)
def test_det_of_singular_and_negative(dtype):
    sing = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]], dtype)
    compare(lambda lib, x: lib.linalg.det(x), sing, grad=False)

    def det_grad(lib, x):  # the adjugate; torch's graph-free backward gives 0 here instead
        return lib.autograd.grad(lib.linalg.det(x), x, create_graph=True)[0]
    compare(det_grad, sing, atol=1e-4 if dtype == np.float32 else 1e-12)
    neg = np.array([[0., 1.], [1., 0.]], dtype)
    compare(lambda lib, x: lib.logdet(x), neg, grad=False)
    compare(lambda lib, x: lib.linalg.slogdet(x), neg)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [
    ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3)), ((2, 3, 3), (3, 4)),
    ((3, 3), (2, 3, 1)), ((2, 1, 3, 3), (4, 3, 2)), ((2, 3, 3), (3,))], ids=str)
def test_solve(dtype, shapes):
    sa, sb = shapes
    a, b = well_conditioned(sa, dtype, 2), randn(sb, dtype, 3)
    compare(lambda lib, x, y: lib.linalg.solve(x, y), a, b, **tol(dtype))
    compare(lambda lib, x, y: lib.linalg.solve(x, y), a, b, noncontiguous=True, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_solve_left_false(dtype):
    a, b = well_conditioned((2, 3, 3), dtype, 4), randn((2, 4, 3), dtype, 5)
    compare(lambda lib, x, y: lib.linalg.solve(x, y, left=False), a, b, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular(dtype, upper, left, unit):
    a = well_conditioned((2, 3, 3), dtype, 60)
    b = randn((3, 4) if left else (4, 3), dtype, 61)
    kw = dict(upper=upper, left=left, unitriangular=unit)
    compare(lambda lib, x, y: lib.linalg.solve_triangular(x, y, **kw), a, b, **tol(dtype))
    compare(lambda lib, x, y: lib.linalg.solve_triangular(x, y, **kw), a, b, noncontiguous=True,
            **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_solve_ex(dtype):
    a, b = well_conditioned((2, 3, 3), dtype, 62), randn((2, 3), dtype, 63)
    compare(lambda lib, x, y: lib.linalg.solve_ex(x, y), a, b, **tol(dtype))
    compare(lambda lib, x, y: lib.linalg.solve_ex(x, y, left=False).result, a, b[:, None],
            **tol(dtype))
    for lib in (torch, ember):
        sing = lib.tensor(np.stack([np.eye(3), SING, np.zeros((3, 3))]))
        assert lib.linalg.solve_ex(sing, lib.ones(3, dtype=sing.dtype)).info.tolist() == [0, 2, 1]


@pytest.mark.parametrize("a_shape,b_shape", [((3, 3), (2, 3, 2)), ((1, 3, 3), (2, 3, 2)),
                                             ((2, 1, 3, 3), (4, 3, 1))], ids=str)
def test_solve_ex_info_has_the_batch_of_A(a_shape, b_shape):
    # the info is that of A's factorization: B's batch dims do not broadcast into it
    compare(lambda lib, x, y: lib.linalg.solve_ex(x, y), well_conditioned(a_shape, np.float64),
            randn(b_shape, np.float64), grad=False)


@pytest.mark.parametrize("name", ["inv_ex", "cholesky_ex"])
@pytest.mark.parametrize("shape", [(2, 0, 0), (0, 3, 3), (0, 0)], ids=str)
def test_ex_of_empty_matrices(name, shape):
    compare(lambda lib, x: getattr(lib.linalg, name)(x), np.zeros(shape), grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, batch, upper):
    a = spd(batch + (4, 4), dtype, 6)
    # symmetric input built inside, so the gradient is that of a full matrix
    compare(lambda lib, x: lib.linalg.cholesky(x @ x.mT, upper=upper), a, **tol(dtype))
    compare(lambda lib, x: lib.linalg.cholesky_ex(x, upper=upper).L, a, noncontiguous=True,
            **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_and_inverse(dtype, upper):
    factor = np.linalg.cholesky(spd((2, 3, 3), np.float64, 64)).astype(dtype)
    if upper:
        factor = np.swapaxes(factor, -1, -2).copy()
    b = randn((3, 2), dtype, 65)
    compare(lambda lib, x, y: lib.cholesky_solve(x, y, upper), b, factor, **tol(dtype))
    compare(lambda lib, x, y: x.cholesky_solve(y, upper=upper), b, factor, noncontiguous=True,
            **tol(dtype))
    compare(lambda lib, y: lib.cholesky_inverse(y, upper), factor, **tol(dtype))
    compare(lambda lib, y: y.cholesky_inverse(upper=upper), factor, noncontiguous=True,
            **tol(dtype))


def test_cholesky_toplevel():
    a = spd((3, 3), np.float64, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, x: lib.cholesky(x @ x.mT), a)
        compare(lambda lib, x: x.cholesky(upper=True), a)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3), (2, 3, 5)], ids=str)
def test_qr(dtype, shape):
    a = randn(shape, dtype, 8)
    compare(lambda lib, x: lib.linalg.qr(x), a, **tol(dtype))
    compare(lambda lib, x: lib.linalg.qr(x), a, noncontiguous=True, **tol(dtype))
    compare(lambda lib, x: lib.linalg.qr(x, mode="r").R, a, grad=False, **tol(dtype))
    compare(lambda lib, x: lib.linalg.qr(x, mode="complete"), a, grad=shape[-2] <= shape[-1],
            **tol(dtype))


def test_qr_toplevel():
    a = randn((5, 3), np.float64, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, x: lib.qr(x), a)
        compare(lambda lib, x: x.qr(some=False), a, grad=False)


def _svd_invariants(lib, u, s, vh):
    """Sign-independent functions of the singular vectors: |U|, |Vh| and U diag(f(S)) Vh
    (the columns past min(m, n) of full matrices are any basis: left out)."""
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    return s, u.abs(), vh.abs(), (u * (s ** 2).unsqueeze(-2)) @ vh


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3), (2, 3, 4)], ids=str)
@pytest.mark.parametrize("full", [False, True])
def test_svd(dtype, shape, full):
    a = randn(shape, dtype, 10)
    compare(lambda lib, x: _svd_invariants(lib, *lib.linalg.svd(x, full_matrices=full)), a,
            **tol(dtype))
    compare(lambda lib, x: lib.linalg.svdvals(x), a, noncontiguous=True, **tol(dtype))


def test_svd_toplevel():
    a = randn((5, 3), np.float64, 11)

    def old(lib, x, **kw):
        u, s, v = lib.svd(x, **kw)
        return _svd_invariants(lib, u, s, v.mT)
    compare(old, a)
    compare(lambda lib, x: old(lib, x, some=False), a)
    compare(lambda lib, x: lib.svd(x, compute_uv=False), a, grad=False)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("batch", BATCHES, ids=str)
@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh(dtype, batch, uplo):
    a = symmetric_distinct(batch + (4, 4), dtype, 12)

    def fn(lib, x):
        w, v = lib.linalg.eigh(x, UPLO=uplo)
        return w, v.abs(), (v * w.exp().unsqueeze(-2)) @ v.mT
    compare(fn, a, **tol(dtype))
    compare(lambda lib, x: lib.linalg.eigvalsh(x, UPLO=uplo), a, noncontiguous=True,
            **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 4), (5, 3), (3, 5), (2, 5, 3)], ids=str)
def test_pinv(dtype, shape):
    a = randn(shape, dtype, 13)
    compare(lambda lib, x: lib.linalg.pinv(x), a, **tol(dtype))
    compare(lambda lib, x: lib.pinverse(x), a, noncontiguous=True, **tol(dtype))
    sym = symmetric_distinct((4, 4), dtype, 14)
    compare(lambda lib, x: lib.linalg.pinv(x, hermitian=True), sym, grad=False, **tol(dtype))


def test_pinv_tolerances_and_rank():
    # singular values 3, 1, 1e-3: the cut decides the rank
    u, _ = np.linalg.qr(randn((4, 3), np.float64, 15))
    v, _ = np.linalg.qr(randn((3, 3), np.float64, 16))
    a = (u * np.array([3.0, 1.0, 1e-3])) @ v.T
    for kw in [{}, dict(atol=0.01), dict(rtol=0.1), dict(atol=0.5, rtol=0.1), dict(rtol=0.5)]:
        compare(lambda lib, x: lib.linalg.pinv(x, **kw), a, grad=False)
        compare(lambda lib, x: lib.linalg.matrix_rank(x, **kw), a)
    compare(lambda lib, x: lib.linalg.matrix_rank(x), randn((2, 3, 4), np.float32, 17))
    compare(lambda lib, x: lib.linalg.matrix_rank(x @ x.mT, hermitian=True),
            randn((4, 2), np.float64, 18))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("driver", [None, "gels", "gelsy", "gelsd", "gelss"])
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((2, 5, 3), (2, 5)), ((5, 3), (5,))],
                         ids=str)
def test_lstsq(dtype, driver, shapes):
    a, b = randn(shapes[0], dtype, 19), randn(shapes[1], dtype, 20)
    compare(lambda lib, x, y: lib.linalg.lstsq(x, y, driver=driver), a, b, **tol(dtype))


def test_lstsq_wide_and_rank_deficient():
    a, b = randn((3, 5), np.float64, 21), randn((3, 2), np.float64, 22)
    compare(lambda lib, x, y: lib.linalg.lstsq(x, y), a, b)
    deficient = np.array([[1., 2.], [2., 4.], [3., 6.]])
    compare(lambda lib, x, y: lib.linalg.lstsq(x, y, driver="gelsd"), deficient,
            randn((3, 1), np.float64, 23), grad=False)


VECTOR_ORDS = [2, 1, 3.5, float("inf"), -float("inf"), 0, -1]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", VECTOR_ORDS, ids=str)
def test_vector_norm(dtype, ord):
    x = randn((3, 4, 5), dtype, 24)
    compare(lambda lib, t: lib.linalg.vector_norm(t, ord), x, **tol(dtype))
    compare(lambda lib, t: lib.linalg.vector_norm(t, ord, dim=(0, 2), keepdim=True), x,
            **tol(dtype))
    compare(lambda lib, t: lib.linalg.vector_norm(t, ord, dim=-1), x, noncontiguous=True,
            **tol(dtype))


MATRIX_ORDS = ["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", MATRIX_ORDS, ids=str)
def test_matrix_norm(dtype, ord):
    x = randn((2, 4, 3), dtype, 25)
    compare(lambda lib, t: lib.linalg.matrix_norm(t, ord), x, **tol(dtype))
    compare(lambda lib, t: lib.linalg.matrix_norm(t, ord, dim=(0, 2), keepdim=True), x,
            **tol(dtype))
    compare(lambda lib, t: lib.linalg.norm(t, ord, dim=(-1, -2)), x, noncontiguous=True,
            **tol(dtype))
    compare(lambda lib, t: lib.linalg.norm(t[0], ord), x, **tol(dtype))


def test_norm_defaults():
    x = randn((2, 3, 4), np.float64, 26)
    compare(lambda lib, t: lib.linalg.norm(t), x)
    compare(lambda lib, t: lib.linalg.norm(t, dim=1, keepdim=True), x)
    compare(lambda lib, t: lib.linalg.norm(t, dim=(0, 1)), x)
    compare(lambda lib, t: lib.linalg.norm(t[0, 0], 3), x)
    compare(lambda lib, t: lib.linalg.vector_norm(t.float(), dtype=lib.float64), x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_cross_vecdot_multi_dot_matrix_power(dtype):
    a, b = randn((4, 3), dtype, 27), randn((1, 3), dtype, 28)
    compare(lambda lib, x, y: lib.linalg.cross(x, y), a, b)
    compare(lambda lib, x, y: lib.linalg.cross(x.mT, y.mT.expand(3, 4), dim=-2), a, b)
    compare(lambda lib, x, y: lib.cross(x, y, dim=1), a, b)
    compare(lambda lib, x, y: lib.linalg.vecdot(x, y), a, randn((2, 1, 3), dtype, 29))
    m = [randn(s, dtype, 30 + i) for i, s in enumerate([(3,), (3, 4), (4, 2), (2,)])]
    compare(lambda lib, *ts: lib.linalg.multi_dot(ts), *m, **tol(dtype))
    compare(lambda lib, *ts: lib.linalg.multi_dot(list(ts[1:3])), *m, **tol(dtype))
    sq = well_conditioned((2, 3, 3), dtype, 34) / 3
    for n in [0, 1, 2, 5, -1, -3]:
        compare(lambda lib, x: lib.linalg.matrix_power(x, n), sq, **tol(dtype))
    compare(lambda lib, x: x.matrix_power(3), sq, noncontiguous=True, **tol(dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_diag_diagonal_trace(dtype):
    m = randn((3, 4), dtype, 40)
    v = randn((3,), dtype, 41)
    t3 = randn((2, 3, 4), dtype, 42)
    for k in [0, 1, -2, 5]:
        compare(lambda lib, x: lib.diag(x, k), m, noncontiguous=True)
        compare(lambda lib, x: lib.diag(x, k), v)
        compare(lambda lib, x: x.diagonal(k), m)
    compare(lambda lib, x: lib.diagonal(x, 1, 0, 2), t3)
    compare(lambda lib, x: lib.diagonal(x, -1, 2, 1), t3, noncontiguous=True)
    compare(lambda lib, x: lib.linalg.diagonal(x, offset=1), t3)
    compare(lambda lib, x: lib.diag_embed(x), t3)
    compare(lambda lib, x: lib.diag_embed(x, 1, 0, 2), t3)
    compare(lambda lib, x: x.diag_embed(-2, 3, 1), t3)
    compare(lambda lib, x: lib.trace(x), m, noncontiguous=True)
    compare(lambda lib, x: x.trace(), np.arange(6).reshape(2, 3))


def test_diagonal_is_a_view():
    for lib in (torch, ember):
        base = lib.zeros(3, 3)
        base.diagonal().add_(1)
        base.diagonal(1).fill_(2)
        assert base.tolist() == [[1, 2, 0], [0, 1, 2], [0, 0, 1]]
    a = randn((3, 3), np.float64, 43)
    grads = []
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        y = x * 2
        y.diagonal().mul_(3)
        (y * lib.tensor(a)).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_values_only_gradients_with_repeated_values():
    """Only eigen/singular values used: no division by their (zero) gaps."""
    a = np.stack([np.eye(3) * 2, np.diag([1.0, 1.0, 3.0])])
    compare(lambda lib, x: lib.linalg.eigvalsh(x), a)
    compare(lambda lib, x: lib.linalg.eigh(x).eigenvalues, a)
    compare(lambda lib, x: lib.linalg.svdvals(x), a)
    compare(lambda lib, x: lib.linalg.svd(x).S, a)
    compare(lambda lib, x: lib.linalg.matrix_norm(x, "nuc"), a)
    compare(lambda lib, x: lib.linalg.slogdet(x).sign, a)


def test_second_derivatives():
    """Gradients of gradients (create_graph) through the decompositions."""
    a = well_conditioned((3, 3), np.float64, 44)
    sym = symmetric_distinct((3, 3), np.float64, 45)

    def grad_of(fn):
        def run(lib, x):
            (g,) = lib.autograd.grad(fn(lib, x), x, create_graph=True)
            return g
        return run
    compare(grad_of(lambda lib, x: lib.linalg.det(x)), a)
    compare(grad_of(lambda lib, x: lib.linalg.inv(x).sin().sum()), a)
    compare(grad_of(lambda lib, x: lib.linalg.slogdet(x).logabsdet), a)
    compare(grad_of(lambda lib, x: lib.linalg.svdvals(x).pow(3).sum()), a)
    compare(grad_of(lambda lib, x: lib.linalg.eigvalsh(x).pow(3).sum()), sym)
    compare(grad_of(lambda lib, x: lib.linalg.cholesky(x @ x.mT).sum()), a)
    compare(grad_of(lambda lib, x: lib.linalg.qr(x).R.pow(2).sum()), a)


# ---- errors ---------------------------------------------------------------------------------
O = np.ones  # noqa: E741  (short: the error table below reads as data)
SING = np.ones((3, 3))
NOT_PD = np.array([[1., 2.], [2., 1.]])
ERRORS = [
    ("inv_rect", lambda lib, a: lib.linalg.inv(a), [O((3, 2))]),
    ("inv_1d", lambda lib, a: lib.linalg.inv(a), [O(3)]),
    ("inv_int", lambda lib, a: lib.linalg.inv(a), [O((2, 2), np.int64)]),
    ("inv_singular", lambda lib, a: lib.linalg.inv(a), [SING]),
    ("inv_singular_zero", lambda lib, a: lib.linalg.inv(a), [np.zeros((3, 3))]),
    ("inv_singular_batch", lambda lib, a: lib.linalg.inv(a), [np.stack([np.eye(3), SING])]),
    ("inverse_singular", lambda lib, a: lib.inverse(a), [SING]),
    ("det_rect", lambda lib, a: lib.linalg.det(a), [O((3, 2))]),
    ("det_int", lambda lib, a: lib.det(a), [O((2, 2), np.int64)]),
    ("slogdet_rect", lambda lib, a: lib.linalg.slogdet(a), [O((3, 2))]),
    ("logdet_rect", lambda lib, a: lib.logdet(a), [O((3, 2))]),
    ("solve_singular", lambda lib, a, b: lib.linalg.solve(a, b), [SING, O(3)]),
    ("solve_singular_batch", lambda lib, a, b: lib.linalg.solve(a, b),
     [np.stack([np.eye(3), SING]), O((2, 3))]),
    ("solve_vector_size", lambda lib, a, b: lib.linalg.solve(a, b), [np.eye(3), O(2)]),
    ("solve_matrix_size", lambda lib, a, b: lib.linalg.solve(a, b), [np.eye(3), O((2, 3))]),
    ("solve_right_size", lambda lib, a, b: lib.linalg.solve(a, b, left=False),
     [np.eye(3), O((3, 2))]),
    ("solve_batch", lambda lib, a, b: lib.linalg.solve(a, b),
     [np.broadcast_to(np.eye(3), (2, 3, 3)).copy(), O((3, 3, 2))]),
    ("solve_dtype", lambda lib, a, b: lib.linalg.solve(a, b), [np.eye(3, dtype=np.float32), O(3)]),
    ("solve_rect", lambda lib, a, b: lib.linalg.solve(a, b), [O((3, 2)), O(3)]),
    ("cholesky_neg", lambda lib, a: lib.linalg.cholesky(a), [-np.eye(3)]),
    ("cholesky_not_pd", lambda lib, a: lib.linalg.cholesky(a), [NOT_PD]),
    ("cholesky_batch", lambda lib, a: lib.linalg.cholesky(a), [np.stack([np.eye(2), NOT_PD])]),
    ("cholesky_rect", lambda lib, a: lib.linalg.cholesky(a), [O((3, 2))]),
    ("qr_1d", lambda lib, a: lib.linalg.qr(a), [O(3)]),
    ("qr_mode", lambda lib, a: lib.linalg.qr(a, mode="bad"), [O((3, 3))]),
    ("svd_1d", lambda lib, a: lib.linalg.svd(a), [O(3)]),
    ("svd_driver", lambda lib, a: lib.linalg.svd(a, driver="gesvd"), [O((3, 3))]),
    ("svd_old_1d", lambda lib, a: lib.svd(a), [O(3)]),
    ("svdvals_1d", lambda lib, a: lib.linalg.svdvals(a), [O(3)]),
    ("eigh_rect", lambda lib, a: lib.linalg.eigh(a), [O((3, 2))]),
    ("eigh_uplo", lambda lib, a: lib.linalg.eigh(a, UPLO="X"), [O((3, 3))]),
    ("eigvalsh_rect", lambda lib, a: lib.linalg.eigvalsh(a), [O((3, 2))]),
    ("lstsq_rows", lambda lib, a, b: lib.linalg.lstsq(a, b), [O((3, 2)), O((4, 2))]),
    ("lstsq_driver", lambda lib, a, b: lib.linalg.lstsq(a, b, driver="foo"), [O((3, 2)), O(3)]),
    ("lstsq_dims", lambda lib, a, b: lib.linalg.lstsq(a, b), [O((2, 5, 3)), O(5)]),
    ("pinv_1d", lambda lib, a: lib.linalg.pinv(a), [O(3)]),
    ("matrix_rank_1d", lambda lib, a: lib.linalg.matrix_rank(a), [O(3)]),
    ("norm_3d_ord", lambda lib, a: lib.linalg.norm(a, ord=2), [O((2, 2, 2))]),
    ("norm_dims", lambda lib, a: lib.linalg.norm(a, dim=(0, 1, 1)), [O((2, 3))]),
    ("matrix_norm_ord", lambda lib, a: lib.linalg.matrix_norm(a, ord=3), [O((2, 2))]),
    ("matrix_norm_1d", lambda lib, a: lib.linalg.matrix_norm(a), [O(2)]),
    ("matrix_norm_dim", lambda lib, a: lib.linalg.matrix_norm(a, dim=(0,)), [O((2, 2))]),
    ("matrix_norm_same_dims", lambda lib, a: lib.linalg.matrix_norm(a, dim=(0, 0)), [O((2, 2))]),
    ("vector_norm_str", lambda lib, a: lib.linalg.vector_norm(a, ord="fro"), [O(2)]),
    ("vector_norm_int", lambda lib, a: lib.linalg.vector_norm(a), [O(2, np.int64)]),
    # min/max-like norms have no identity over an empty tensor or an empty reduced dim
    ("vector_norm_empty_inf", lambda lib, a: lib.linalg.vector_norm(a, float("inf")),
     [O((0, 3))]),
    ("vector_norm_empty_neg", lambda lib, a: lib.linalg.vector_norm(a, -1), [O((0, 3))]),
    ("vector_norm_empty_dim", lambda lib, a: lib.linalg.vector_norm(a, -0.5, dim=(-2, 1)),
     [O((2, 0, 3))]),
    ("cross_len", lambda lib, a, b: lib.linalg.cross(a, b), [O(2), O(2)]),
    ("cross_broadcast", lambda lib, a, b: lib.linalg.cross(a, b), [O((2, 3)), O((3, 3))]),
    ("multi_dot_one", lambda lib, a: lib.linalg.multi_dot([a]), [O(3)]),
    ("multi_dot_shapes", lambda lib, a, b: lib.linalg.multi_dot([a, b]), [O((3, 2)), O((3, 2))]),
    ("multi_dot_first", lambda lib, a, b: lib.linalg.multi_dot([a, b]), [O((3, 2, 2)), O((2, 2))]),
    ("multi_dot_middle", lambda lib, a, b: lib.linalg.multi_dot([a, b, b]), [O((2, 2)), O(2)]),
    ("matrix_power_rect", lambda lib, a: lib.linalg.matrix_power(a, 2), [O((3, 2))]),
    ("matrix_power_singular", lambda lib, a: lib.linalg.matrix_power(a, -1), [SING]),
    ("diag_3d", lambda lib, a: lib.diag(a), [O((2, 2, 2))]),
    ("diag_0d", lambda lib, a: lib.diag(a), [np.array(1.0)]),
    ("trace_3d", lambda lib, a: lib.trace(a), [O((2, 2, 2))]),
    ("diagonal_same", lambda lib, a: lib.diagonal(a, 0, 0, 0), [O((2, 2))]),
    ("diagonal_range", lambda lib, a: lib.diagonal(a, 0, 0, 3), [O((2, 2))]),
    ("eigh_int", lambda lib, a: lib.linalg.eigh(a), [O((2, 2), np.int64)]),
    ("lstsq_int", lambda lib, a, b: lib.linalg.lstsq(a, b), [O((2, 2), np.int64)] * 2),
    ("matrix_rank_int", lambda lib, a: lib.linalg.matrix_rank(a), [O((2, 2), np.int64)]),
    ("inv_ex_int", lambda lib, a: lib.linalg.inv_ex(a), [O((2, 2), np.int64)]),
    ("inv_ex_check", lambda lib, a: lib.linalg.inv_ex(a, check_errors=True), [SING]),
    ("cholesky_ex_check", lambda lib, a: lib.linalg.cholesky_ex(a, check_errors=True),
     [-np.eye(2)]),
    ("vecdot_int", lambda lib, a: lib.linalg.vecdot(a, a), [O(3, np.int64)]),
    ("lstsq_dtype", lambda lib, a, b: lib.linalg.lstsq(a, b), [O((3, 2)), O((3, 1), np.float32)]),
    ("vector_norm_narrowing", lambda lib, a: lib.linalg.vector_norm(a, dtype=lib.float32),
     [O(3)]),
    ("vector_norm_int_dtype", lambda lib, a: lib.linalg.vector_norm(a, dtype=lib.int64), [O(3)]),
    ("matrix_norm_int", lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), [O((2, 2), np.int64)]),
    ("cross_ndim", lambda lib, a, b: lib.linalg.cross(a, b), [O((2, 3)), O(3)]),
    ("cross_no_size_3", lambda lib, a, b: lib.cross(a, b), [O((2, 4)), O((2, 4))]),
    ("solve_triangular_1d", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
     [O((3, 3)), O(3)]),
    ("solve_triangular_size", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
     [O((3, 3)), O((2, 2))]),
    ("solve_triangular_rect", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
     [O((3, 2)), O((3, 2))]),
    ("solve_triangular_int", lambda lib, a, b: lib.linalg.solve_triangular(a, b, upper=True),
     [O((2, 2), np.int64), O((2, 1), np.int64)]),
    ("solve_ex_check", lambda lib, a, b: lib.linalg.solve_ex(a, b, check_errors=True),
     [SING, O(3)]),
    ("cholesky_solve_1d", lambda lib, b, a: lib.cholesky_solve(b, a), [O(3), np.eye(3)]),
    ("cholesky_solve_rect", lambda lib, b, a: lib.cholesky_solve(b, a), [O((3, 2)), O((3, 2))]),
    ("cholesky_solve_size", lambda lib, b, a: lib.cholesky_solve(b, a), [O((2, 2)), np.eye(3)]),
    ("cholesky_solve_dtype", lambda lib, b, a: lib.cholesky_solve(b, a),
     [O((3, 2), np.float32), np.eye(3)]),
    ("cholesky_solve_int", lambda lib, b, a: lib.cholesky_solve(b, a),
     [O((3, 2), np.int64), np.eye(3, dtype=np.int64)]),
    ("cholesky_inverse_1d", lambda lib, a: lib.cholesky_inverse(a), [O(3)]),
    ("cholesky_inverse_rect", lambda lib, a: lib.cholesky_inverse(a), [O((3, 2))]),
    ("cholesky_inverse_int", lambda lib, a: lib.cholesky_inverse(a), [O((2, 2), np.int64)]),
    ("diag_embed_same", lambda lib, a: lib.diag_embed(a, 0, 0, 0), [O((2, 3))]),
]


@pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim")
@pytest.mark.parametrize("name,fn,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, arrays):
    got = [error_of(lambda: fn(lib, *[lib.tensor(a) for a in arrays])) for lib in (torch, ember)]
    assert got[0] is not None
    assert got[1] == got[0]


def test_linalg_error_is_a_runtime_error():
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    with pytest.raises(ember.linalg.LinAlgError):
        ember.linalg.inv(ember.ones(2, 2))


def test_ex_variants_report_info():
    for lib in (torch, ember):
        a = lib.tensor(np.stack([np.eye(3), SING, np.zeros((3, 3))]))
        assert lib.linalg.inv_ex(a).info.tolist() == [0, 2, 1]
        assert lib.linalg.cholesky_ex(lib.tensor(np.stack([np.eye(2), NOT_PD]))).info.tolist() \
            == [0, 2]
        assert str(lib.linalg.inv_ex(a).info.dtype).endswith("int32")


@pytest.mark.parametrize("name,backward", [
    ("qr_r", lambda lib, x: lib.linalg.qr(x, mode="r").R.sum().backward()),
    ("qr_complete", lambda lib, x: lib.linalg.qr(x, mode="complete").Q.sum().backward()),
])
def test_backward_errors(name, backward):
    a = randn((4, 3), np.float64, 50)
    got = [error_of(lambda: backward(lib, lib.tensor(a, requires_grad=True)))
           for lib in (torch, ember)]
    assert got[0] is not None
    assert got[1] == got[0]
