"""Behaviour of the LU / LDL family (linalg.lu_factor, lu, lu_solve, ldl_factor, ldl_solve),
cond, tensorinv, tensorsolve, vander, eig/eigvals, the older top-level forms and the
randomized low-rank SVD: reconstructions, LAPACK's pivots, gradients by finite differences
in float64, errors (no torch needed)."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def rand(*shape, seed=0, grad=True):
    data = np.random.default_rng(seed).standard_normal(shape)
    return ember.tensor(data, dtype=ember.float64, requires_grad=grad)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (2, 3, 3)], ids=str)
def test_lu_reconstructs_and_pivots_are_lapacks(shape):
    A = rand(*shape, grad=False)
    P, L, U = ember.linalg.lu(A)
    np.testing.assert_allclose((P @ L @ U).numpy(), A.numpy(), atol=1e-12)
    LU, pivots = ember.linalg.lu_factor(A)
    assert pivots.dtype is ember.int32 and pivots.shape == shape[:-2] + (min(shape[-2:]),)
    assert int(pivots.min()) >= 1 and int(pivots.max()) <= shape[-2]
    # partial pivoting: every multiplier of L has magnitude at most 1
    assert float(L.abs().max()) <= 1 + 1e-12
    np.testing.assert_array_equal(ember.lu_unpack(LU, pivots).P.numpy(), P.numpy())


def test_lu_pivots_by_hand():
    A = ember.tensor([[1., 2.], [3., 4.]])
    LU, pivots = ember.linalg.lu_factor(A)
    assert pivots.tolist() == [2, 2]  # row 1 swapped with row 2, then row 2 stays
    np.testing.assert_allclose(LU.numpy(), [[3., 4.], [1 / 3, 2 - 4 / 3]], rtol=1e-6)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4), (4, 2), (2, 3, 3)], ids=str)
def test_lu_gradients(shape):
    A = rand(*shape, seed=1)
    assert gradcheck(lambda a: ember.linalg.lu_factor(a).LU, (A,))
    assert gradcheck(lambda a: ember.linalg.lu(a)[1:], (A,))


def test_lu_second_derivative():
    assert gradgradcheck(lambda a: ember.linalg.lu_factor(a).LU, (rand(3, 3, seed=2),))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_solves_and_gradients(left, adjoint):
    A = rand(2, 3, 3, seed=3, grad=False)
    B = rand(2, 3, 2, seed=4) if left else rand(2, 2, 3, seed=4)
    LU, pivots = ember.linalg.lu_factor(A)
    X = ember.linalg.lu_solve(LU, pivots, B, left=left, adjoint=adjoint)
    M = A.mT if adjoint else A
    np.testing.assert_allclose((M @ X if left else X @ M).detach().numpy(), B.detach().numpy(),
                               atol=1e-12)
    LU.requires_grad_()
    assert gradcheck(lambda lu, b: ember.linalg.lu_solve(lu, pivots, b, left=left,
                                                         adjoint=adjoint), (LU, B))


def test_lu_solve_broadcasts_b():
    A = rand(3, 3, grad=False)
    B = rand(4, 3, 2, seed=5, grad=False)
    X = ember.linalg.lu_solve(*ember.linalg.lu_factor(A), B)
    assert X.shape == (4, 3, 2)
    np.testing.assert_allclose((A @ X).numpy(), B.numpy(), atol=1e-12)


def test_singular_matrices():
    Z = ember.zeros(2, 2)
    LU, pivots, info = ember.linalg.lu_factor_ex(Z)
    assert info.item() == 1 and pivots.tolist() == [1, 2]
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        ember.linalg.lu_factor(Z)
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): U\[1,1\]"):
        ember.linalg.lu_factor(ember.stack([ember.eye(2), Z]))
    assert ember.lu(Z, get_infos=True).info.item() == 1  # the older form never raises
    with pytest.raises(ember.linalg.LinAlgError, match="^inv: The diagonal element 1"):
        ember.linalg.tensorinv(ember.zeros(2, 2, 4), ind=2)


def test_argument_errors():
    with pytest.raises(RuntimeError, match="Expected tensor with 2 or more dimensions"):
        ember.linalg.lu_factor(ember.ones(3))
    with pytest.raises(NotImplementedError, match="\"lu_cpu\" not implemented for 'Long'"):
        ember.linalg.lu(ember.ones(2, 2, dtype=ember.int64))
    with pytest.raises(RuntimeError, match="without pivoting"):
        ember.linalg.lu_factor(ember.eye(2), pivot=False)
    LU, pivots = ember.linalg.lu_factor(ember.eye(3))
    with pytest.raises(RuntimeError, match="pivots should be a Tensor of scalar type"):
        ember.linalg.lu_solve(LU, pivots.long(), ember.ones(3, 1))
    with pytest.raises(RuntimeError, match="greater or equal to 1"):
        ember.linalg.lu_solve(LU, ember.zeros(3, dtype=ember.int32), ember.ones(3, 1))
    with pytest.raises(RuntimeError, match="Incompatible shapes"):
        ember.linalg.lu_solve(LU, pivots, ember.ones(2, 1))


def test_out_and_named_results():
    A = ember.tensor([[1., 2.], [3., 4.]])
    LU, piv = ember.empty(0), ember.empty(0, dtype=ember.int32)
    res = ember.linalg.lu_factor(A, out=(LU, piv))
    assert res.LU is LU and res.pivots is piv and piv.tolist() == [2, 2]
    out = ember.empty(0)
    assert ember.linalg.cond(ember.eye(2) * 2, out=out) is out and out.item() == 1
    P, L, U = ember.linalg.lu(A)
    assert ember.linalg.lu(A)._fields == ("P", "L", "U")


def test_triangular_solve_and_deprecations():
    A = rand(3, 3, seed=6)
    b = rand(2, 3, 2, seed=7)
    with pytest.warns(UserWarning, match="torch.triangular_solve is deprecated"):
        X, cloned = ember.triangular_solve(b, A, upper=False)
    assert cloned.shape == (2, 3, 3)
    np.testing.assert_allclose((A.tril() @ X).detach().numpy(), b.detach().numpy(), atol=1e-12)
    assert gradcheck(lambda y, a: ember.triangular_solve(y, a, True, True, True), (b, A))
    with pytest.warns(UserWarning, match="torch.lu is deprecated"):
        ember.lu(A.detach())
    with pytest.warns(UserWarning, match="torch.lu_solve is deprecated"):
        ember.lu_solve(b.detach(), *ember.linalg.lu_factor(A.detach()))


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", math.inf, -math.inf, 1, -1])
def test_cond_values_and_gradients(p):
    A = ember.tensor([[2., 0.], [0., 0.5]], dtype=ember.float64)
    expected = {None: 4, 2: 4, -2: 0.25, "fro": 4.25, "nuc": 6.25, -1: 0.25,
                -math.inf: 0.25}.get(p, 4)
    assert math.isclose(ember.linalg.cond(A, p).item(), expected, rel_tol=1e-12)
    assert gradcheck(lambda a: ember.linalg.cond(a, p), (rand(2, 3, 3, seed=8),))
    assert ember.linalg.cond(ember.zeros(2, 2), p).item() != 0  # inf or NaN, never a raise


def test_cond_errors():
    with pytest.raises(RuntimeError, match="linalg.cond got an invalid norm type: 3"):
        ember.linalg.cond(ember.eye(2), 3)
    with pytest.raises(RuntimeError, match=r"linalg.cond\(ord=fro\): A must be batches"):
        ember.linalg.cond(ember.ones(2, 3), "fro")


def test_tensorinv_tensorsolve():
    A = rand(4, 2, 2, seed=9)
    inv = ember.linalg.tensorinv(A, ind=1)
    assert inv.shape == (2, 2, 4)
    np.testing.assert_allclose(ember.tensordot(inv, A, 1).detach().numpy(), np.eye(2 * 2)
                               .reshape(2, 2, 2, 2), atol=1e-12)
    assert gradcheck(lambda a: ember.linalg.tensorinv(a, ind=1), (A,))
    A, B = rand(2, 3, 6, seed=10), rand(2, 3, seed=11)
    X = ember.linalg.tensorsolve(A, B)
    np.testing.assert_allclose(ember.tensordot(A, X, 1).detach().numpy(), B.detach().numpy(),
                               atol=1e-12)
    assert gradcheck(lambda a, b: ember.linalg.tensorsolve(a, b), (A, B))
    with pytest.raises(RuntimeError, match="strictly positive integer for 'ind'"):
        ember.linalg.tensorinv(A, ind=0)


def test_vander():
    x = ember.tensor([1, 2, 3])
    assert ember.linalg.vander(x).tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    assert ember.linalg.vander(x.int()).dtype is ember.int64
    assert gradcheck(lambda v: ember.linalg.vander(v, N=4), (rand(2, 3, seed=12),))
    with pytest.raises(RuntimeError, match="N must be greater than 1"):
        ember.linalg.vander(x, N=1)


def test_eig_forward():
    A = ember.tensor([[0., -1.], [1., 0.]])
    w, v = ember.linalg.eig(A)
    assert w.dtype is ember.complex64 and v.dtype is ember.complex64
    np.testing.assert_allclose(np.sort_complex(w.numpy()), [-1j, 1j], atol=1e-6)
    np.testing.assert_allclose((A.to(v.dtype) @ v - v * w).abs().numpy(), 0, atol=1e-6)
    assert ember.linalg.eigvals(A.double()).dtype is ember.complex128
    # differentiable (tests/autograd/test_complex_round3.py): a real input, a real gradient
    w = ember.linalg.eigvals(A.requires_grad_())
    w.abs().sum().backward()
    assert A.grad.dtype is ember.float32


def test_ldl_and_no_derivative():
    A = ember.tensor([[1., 2., 3.], [2., 1., 0.], [3., 0., -1.]], dtype=ember.float64)
    LD, pivots = ember.linalg.ldl_factor(A)
    assert pivots.tolist() == [-3, -3, 3]  # a 2x2 block, then a 1x1 one (LAPACK's marks)
    assert float(LD.triu(1).abs().max()) == 0
    B = rand(3, 2, seed=13, grad=False)
    np.testing.assert_allclose((A @ ember.linalg.ldl_solve(LD, pivots, B)).numpy(), B.numpy(),
                               atol=1e-12)
    assert ember.linalg.ldl_factor_ex(ember.zeros(2, 2)).info.item() == 1
    LD, _ = ember.linalg.ldl_factor(A.requires_grad_())
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not"):
        LD.sum().backward()


def test_lowrank():
    ember.manual_seed(1)
    A = rand(10, 3, grad=False) @ rand(3, 7, seed=1, grad=False)
    U, S, V = ember.svd_lowrank(A, q=5)
    assert U.shape == (10, 5) and S.shape == (5,) and V.shape == (7, 5)
    np.testing.assert_allclose((U @ ember.diag(S) @ V.mT).numpy(), A.numpy(), atol=1e-10)
    U, S, V = ember.pca_lowrank(A + 4, q=3)
    np.testing.assert_allclose(S.numpy(), ember.linalg.svdvals(A - A.mean(0))[:3].numpy(),
                               rtol=1e-8)
    with pytest.raises(ValueError, match=r"q\(=9\) must be non-negative integer"):
        ember.pca_lowrank(A, q=9)
