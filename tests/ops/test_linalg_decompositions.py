"""ember.linalg and the diagonal ops: values against NumPy and closed forms, gradients
against float64 finite differences (first and second order), views, and error paths."""
import numpy as np
import pytest

import ember
from ember import linalg as LA

from tests.helpers import check_grad, check_second_grad


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def well_conditioned(*shape, seed=0):
    return randn(*shape, seed=seed) + shape[-1] * np.eye(shape[-1])


def sym(x):
    """Symmetric input made inside the function, so finite differences see a full matrix."""
    return (x + x.mT) / 2


def spd_np(n, seed=0):
    a = randn(n, n, seed=seed)
    return a @ a.T + n * np.eye(n)


def spd_of(x):
    return x @ x.mT + x.shape[-1] * ember.eye(x.shape[-1], dtype=x.dtype)


# ---- values ---------------------------------------------------------------------------------
def test_values_match_numpy():
    a = well_conditioned(2, 4, 4, seed=1)
    t = ember.tensor(a)
    np.testing.assert_allclose(LA.inv(t).numpy(), np.linalg.inv(a))
    np.testing.assert_allclose(LA.det(t).numpy(), np.linalg.det(a))
    sign, logabs = np.linalg.slogdet(a)
    np.testing.assert_allclose(LA.slogdet(t).logabsdet.numpy(), logabs)
    np.testing.assert_allclose(LA.slogdet(t).sign.numpy(), sign)
    b = randn(2, 4, 3, seed=2)
    np.testing.assert_allclose(LA.solve(t, ember.tensor(b)).numpy(), np.linalg.solve(a, b))
    s = a @ np.swapaxes(a, -1, -2)
    np.testing.assert_allclose(LA.cholesky(ember.tensor(s)).numpy(), np.linalg.cholesky(s))
    np.testing.assert_allclose(LA.cholesky(ember.tensor(s), upper=True).numpy(),
                               np.swapaxes(np.linalg.cholesky(s), -1, -2))
    np.testing.assert_allclose(LA.svdvals(t).numpy(), np.linalg.svd(a, compute_uv=False))
    np.testing.assert_allclose(LA.eigvalsh(ember.tensor(s)).numpy(), np.linalg.eigvalsh(s))
    np.testing.assert_allclose(LA.pinv(t).numpy(), np.linalg.pinv(a), atol=1e-12)
    q, r = LA.qr(t)
    np.testing.assert_allclose((q @ r).numpy(), a, atol=1e-12)
    np.testing.assert_allclose(LA.matrix_power(t, 3).numpy(), a @ a @ a)
    np.testing.assert_allclose(LA.matrix_power(t, -2).numpy(),
                               np.linalg.inv(a @ a), rtol=1e-10)


def test_svd_and_eigh_reconstruct():
    a = randn(5, 3, seed=3)
    u, s, vh = LA.svd(ember.tensor(a), full_matrices=True)
    assert (u.shape, s.shape, vh.shape) == ((5, 5), (3,), (3, 3))
    np.testing.assert_allclose((u[:, :3] * s) @ vh, a, atol=1e-12)
    np.testing.assert_allclose((u.mT @ u).numpy(), np.eye(5), atol=1e-12)
    old = ember.svd(ember.tensor(a))
    np.testing.assert_allclose(((old.U * old.S) @ old.V.mT).numpy(), a, atol=1e-12)
    h = randn(4, 4, seed=4)
    h = h + h.T
    w, v = LA.eigh(ember.tensor(h))
    np.testing.assert_allclose(((v * w) @ v.mT).numpy(), h, atol=1e-12)
    # UPLO='U' reads the upper triangle only
    lower_garbage = np.triu(h) + np.tril(randn(4, 4, seed=5), -1)
    np.testing.assert_allclose(LA.eigvalsh(ember.tensor(lower_garbage), UPLO="U").numpy(),
                               np.linalg.eigvalsh(h))


def test_norms_closed_forms():
    x = ember.tensor([[3.0, -4.0], [0.0, 0.0]])
    assert LA.vector_norm(x).item() == 5.0
    assert LA.vector_norm(x, 1).item() == 7.0
    assert LA.vector_norm(x, float("inf")).item() == 4.0
    assert LA.vector_norm(x, 0).item() == 2.0
    assert LA.matrix_norm(x, 1).item() == 4.0          # max column sum
    assert LA.matrix_norm(x, float("inf")).item() == 7.0  # max row sum
    assert LA.matrix_norm(x, 2).item() == pytest.approx(5.0)
    assert LA.matrix_norm(x, "nuc").item() == pytest.approx(5.0)
    assert LA.norm(x).item() == 5.0
    assert LA.norm(x, dim=1).tolist() == [5.0, 0.0]


def test_lstsq_named_tuple():
    a = ember.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    b = ember.tensor([[1.0], [2.0], [3.0]])
    out = LA.lstsq(a, b, driver="gelsd")
    assert out.solution.tolist() == [[1.0], [2.0]]
    assert out.residuals.tolist() == [9.0]
    assert out.rank.item() == 2
    assert out.singular_values.tolist() == [1.0, 1.0]
    assert LA.lstsq(a, b).residuals.shape == (0,)  # gelsy (the default) computes none


def test_matrix_rank_and_pinv_tolerances():
    a = ember.tensor(np.diag([3.0, 1.0, 1e-3]))
    assert LA.matrix_rank(a).item() == 3
    assert LA.matrix_rank(a, atol=0.01).item() == 2
    assert LA.matrix_rank(a, rtol=0.5).item() == 1
    assert LA.matrix_rank(a, hermitian=True).item() == 3
    np.testing.assert_allclose(LA.pinv(a, atol=0.01).numpy(), np.diag([1 / 3, 1.0, 0.0]))


def test_diag_ops():
    m = ember.arange(12.0).reshape(3, 4)
    assert ember.diag(m).tolist() == [0.0, 5.0, 10.0]
    assert ember.diag(m, 1).tolist() == [1.0, 6.0, 11.0]
    assert ember.diag(m, -2).tolist() == [8.0]
    assert ember.diag(ember.tensor([1.0, 2.0]), 1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert ember.trace(m).item() == 15.0
    assert ember.trace(ember.arange(4).reshape(2, 2)).dtype is ember.int64
    e = ember.diag_embed(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert e.tolist() == [[[1, 0], [0, 2]], [[3, 0], [0, 4]]]
    assert ember.diag_embed(ember.ones(2, 3), 1, 0, 2).shape == (4, 2, 4)
    t = ember.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(t.diagonal(1, 0, 2).numpy(),
                                  np.arange(24.0).reshape(2, 3, 4).diagonal(1, 0, 2))


def test_diagonal_is_a_view_that_writes_through():
    base = ember.zeros(3, 3)
    d = base.diagonal()
    d.fill_(2.0)
    assert base.tolist() == [[2, 0, 0], [0, 2, 0], [0, 0, 2]]
    assert d._base is base
    base.add_(1)
    assert d.tolist() == [3.0, 3.0, 3.0]
    # in-place on the view of a non-leaf: the gradient goes through CopySlices
    x = ember.tensor(randn(3, 3, seed=6), requires_grad=True)
    y = x * 1.0
    y.diagonal().mul_(3.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((3, 3)) + 2 * np.eye(3))


# ---- gradients (float64 finite differences) ------------------------------------------------
GRAD_CASES = [
    ("inv", lambda a: LA.inv(a), [well_conditioned(2, 3, 3, seed=10)]),
    ("inv_ex", lambda a: LA.inv_ex(a).inverse, [well_conditioned(3, 3, seed=11)]),
    ("det", lambda a: LA.det(a), [well_conditioned(2, 3, 3, seed=12)]),
    ("det_singular", lambda a: LA.det(a), [np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])]),
    ("slogdet", lambda a: LA.slogdet(a).logabsdet, [well_conditioned(2, 3, 3, seed=13)]),
    ("logdet", lambda a: ember.logdet(a), [well_conditioned(3, 3, seed=14)]),
    ("solve", lambda a, b: LA.solve(a, b),
     [well_conditioned(2, 3, 3, seed=15), randn(3, 2, seed=16)]),
    ("solve_vector", lambda a, b: LA.solve(a, b), [well_conditioned(3, 3, seed=17), randn(3)]),
    ("solve_right", lambda a, b: LA.solve(a, b, left=False),
     [well_conditioned(3, 3, seed=18), randn(2, 3, seed=19)]),
    ("solve_triangular", lambda a, b: LA.solve_triangular(a, b, upper=True),
     [well_conditioned(2, 3, 3, seed=51), randn(3, 2, seed=52)]),
    ("solve_triangular_unit_right",
     lambda a, b: LA.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
     [randn(3, 3, seed=53), randn(2, 3, seed=54)]),
    ("solve_ex", lambda a, b: LA.solve_ex(a, b).result,
     [well_conditioned(3, 3, seed=55), randn(3, seed=56)]),
    # the factor's gradient is PyTorch's full-matrix one; the forward reads one triangle,
    # so finite differences see the gradient through tril/triu
    ("cholesky_solve", lambda b, f: ember.cholesky_solve(b, f.tril()),
     [randn(2, 3, 2, seed=57), np.linalg.cholesky(spd_np(3, seed=58))]),
    ("cholesky_inverse_upper", lambda f: ember.cholesky_inverse(f.triu(), upper=True),
     [np.ascontiguousarray(np.linalg.cholesky(spd_np(3, seed=59)).T)]),
    ("cholesky", lambda a: LA.cholesky(spd_of(a)), [randn(2, 3, 3, seed=20)]),
    ("cholesky_upper", lambda a: LA.cholesky(spd_of(a), upper=True), [randn(3, 3, seed=21)]),
    ("qr_square", lambda a: LA.qr(a).Q * 2 + LA.qr(a).R, [randn(3, 3, seed=22)]),
    ("qr_tall", lambda a: ember.cat([LA.qr(a).Q.flatten(), LA.qr(a).R.flatten()]),
     [randn(5, 3, seed=23)]),
    ("qr_wide", lambda a: ember.cat([LA.qr(a).Q.flatten(), LA.qr(a).R.flatten()]),
     [randn(3, 5, seed=24)]),
    ("svdvals", lambda a: LA.svdvals(a), [randn(2, 4, 3, seed=25)]),
    ("svd_tall", lambda a: _svd_invariant(a, False), [randn(5, 3, seed=26)]),
    ("svd_wide", lambda a: _svd_invariant(a, False), [randn(3, 5, seed=27)]),
    ("svd_full", lambda a: _svd_invariant(a, True), [randn(4, 3, seed=28)]),
    ("eigh", lambda a: _eigh_invariant(sym(a)), [randn(2, 4, 4, seed=29)]),
    ("eigvalsh", lambda a: LA.eigvalsh(sym(a)), [randn(4, 4, seed=30)]),
    ("pinv_tall", lambda a: LA.pinv(a), [randn(4, 3, seed=31)]),
    ("pinv_wide", lambda a: LA.pinv(a), [randn(2, 3, 4, seed=32)]),
    ("lstsq", lambda a, b: LA.lstsq(a, b).solution, [randn(5, 3, seed=33), randn(5, 2, seed=34)]),
    ("lstsq_residuals", lambda a, b: LA.lstsq(a, b, driver="gelsd").residuals,
     [randn(5, 3, seed=35), randn(5, 2, seed=36)]),
    ("matrix_norm_nuc", lambda a: LA.matrix_norm(a, "nuc"), [randn(2, 3, 4, seed=37)]),
    ("matrix_norm_2", lambda a: LA.matrix_norm(a, 2), [randn(3, 4, seed=38)]),
    ("matrix_norm_1", lambda a: LA.matrix_norm(a, -1, dim=(0, 2)), [randn(3, 4, 2, seed=39)]),
    ("vector_norm_3", lambda a: LA.vector_norm(a, 3, dim=-1), [randn(3, 4, seed=40)]),
    ("cross", lambda a, b: LA.cross(a, b), [randn(4, 3, seed=41), randn(1, 3, seed=42)]),
    ("multi_dot", lambda a, b, c: LA.multi_dot([a, b, c]),
     [randn(3, seed=43), randn(3, 4, seed=44), randn(4, 2, seed=45)]),
    ("matrix_power", lambda a: LA.matrix_power(a, -3), [well_conditioned(3, 3, seed=46) / 3]),
    ("diagonal", lambda a: ember.diagonal(a, 1, 2, 0), [randn(3, 2, 4, seed=47)]),
    ("diag_embed", lambda a: ember.diag_embed(a, -1, 0, 2), [randn(2, 3, seed=48)]),
    ("diag", lambda a: ember.diag(a, 1), [randn(3, 4, seed=49)]),
    ("trace", lambda a: ember.trace(a), [randn(3, 4, seed=50)]),
]


def _svd_invariant(a, full):
    u, s, vh = LA.svd(a, full_matrices=full)
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]
    return ember.cat([((u * s.exp()) @ vh).flatten(), u.abs().flatten(), vh.abs().flatten()])


def _eigh_invariant(a):
    w, v = LA.eigh(a)
    return ember.cat([w.flatten(), ((v * w.sin().unsqueeze(-2)) @ v.mT).flatten(),
                      v.abs().flatten()])


@pytest.mark.parametrize("name,fn,arrays", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients(name, fn, arrays):
    check_grad(fn, *arrays)


SECOND_ORDER = ["inv", "det", "slogdet", "solve", "solve_triangular", "cholesky_solve", "cholesky",
                "qr_tall", "svdvals", "eigvalsh",
                "pinv_tall", "lstsq", "matrix_norm_nuc", "eigh", "svd_tall"]


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_second_gradients(name):
    _, fn, arrays = next(c for c in GRAD_CASES if c[0] == name)
    check_second_grad(fn, *arrays)


def test_grad_fn_names():
    a = ember.tensor(well_conditioned(3, 3), requires_grad=True)
    assert type(LA.inv(a).grad_fn).__name__ == "LinalgInvExBackward0"
    assert type(LA.det(a).grad_fn).__name__ == "LinalgDetBackward0"
    assert type(LA.svd(a).U.grad_fn).__name__ == "LinalgSvdBackward0"
    assert type(a.diagonal().grad_fn).__name__ == "DiagonalBackward0"


def test_saved_outputs_are_checked_and_freed():
    a = ember.tensor(well_conditioned(3, 3), requires_grad=True)
    out = LA.inv(a)
    out.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    y = LA.inv(a).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


# ---- errors ---------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(RuntimeError, match="linalg.inv: A must be batches of square matrices, "
                                           "but they are 3 by 2 matrices"):
        LA.inv(ember.ones(3, 2))
    with pytest.raises(LA.LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal "
                                             "element 2 is zero"):
        LA.inv(ember.stack([ember.eye(3), ember.ones(3, 3)]))
    with pytest.raises(LA.LinAlgError, match="leading minor of order 2 is not positive"):
        LA.cholesky(ember.tensor([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(LA.LinAlgError, match="The solver failed because the input matrix is "
                                             "singular"):
        LA.solve(ember.ones(2, 2), ember.ones(2))
    with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                           "input. Got Long"):
        LA.det(ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order 3 not supported."):
        LA.matrix_norm(ember.ones(2, 2), 3)
    with pytest.raises(RuntimeError, match="diag\\(\\): Supports 1D or 2D tensors. Got 3D"):
        ember.diag(ember.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="diagonal dimensions cannot be identical 1, 1"):
        ember.diagonal(ember.ones(2, 2), 0, 1, 1)
    x = ember.tensor(randn(4, 3), requires_grad=True)
    with pytest.raises(RuntimeError, match="not differentiable when mode='complete'"):
        LA.qr(x, mode="complete").Q.sum().backward()
    assert LA.inv_ex(ember.ones(2, 2)).info.item() == 2
    singular = LA.solve_ex(ember.ones(2, 2), ember.ones(2))
    assert singular.info.item() == 2 and bool(singular.result.isnan().all())
    # a zero on a triangular diagonal: non-finite values, no error (as LAPACK's trtrs)
    out = LA.solve_triangular(ember.zeros(2, 2), ember.ones(2, 1), upper=True)
    assert not np.isfinite(out.numpy()).all()
    assert LA.cholesky_ex(-ember.eye(2)).info.item() == 1
