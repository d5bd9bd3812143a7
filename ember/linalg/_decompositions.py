"""Inverse, determinants, solves and the decompositions of ``ember.linalg``: argument
checks with PyTorch's messages around the ops of ``ember/_ops/decompositions.py``."""
from __future__ import annotations

import numpy as np

from .. import return_types as RT
from .._tensor import Tensor
from .._typing import Number
from .._ops import decompositions as D
from .._ops.decompositions import (check_float, check_matrix, check_square,
                                   check_square_float, apply_saving_outputs)
from ..autograd.batching import per_sample_under_vmap
from ..autograd.grad_mode import is_grad_enabled
from ..autograd import forward_ad
from ..backend import get_array_module, float16, promote_types

LinAlgError = D._LinAlgError


def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix of ``A`` (``LinAlgError`` if one is singular).

    >>> import ember
    >>> ember.linalg.inv(ember.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    check_square_float(A, "linalg.inv")
    return apply_saving_outputs(D.Inv, A)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> tuple[Tensor, Tensor]:
    """``(inverse, info)``: ``info`` (int32) is LAPACK's, nonzero for a singular matrix,
    whose inverse is then NaN instead of an error (unless ``check_errors``).

    >>> import ember
    >>> ember.linalg.inv_ex(ember.ones(2, 2)).info
    tensor(2, dtype=ember.int32)
    """
    check_square_float(A, "linalg.inv")
    if check_errors:
        return RT.linalg_inv_ex(apply_saving_outputs(D.Inv, A, True, "linalg.inv_ex"),
                                _zeros_info(A))
    out = apply_saving_outputs(D.Inv, A, False)
    info = Tensor._make(get_array_module(A._data).asarray(D.singular_infos(A._data)))
    return RT.linalg_inv_ex(out, info)


def _zeros_info(A):
    xp = get_array_module(A._data)
    return Tensor._make(xp.zeros(A._data.shape[:-2], dtype=np.int32))


def det(A: Tensor) -> Tensor:
    """The determinant of each square matrix of ``A``.

    >>> import ember
    >>> ember.linalg.det(ember.tensor([[2., 1.], [0., 3.]]))
    tensor(6.)
    """
    check_square_float(A, "linalg.det")
    return apply_saving_outputs(D.Det, A)


def slogdet(A: Tensor) -> tuple[Tensor, Tensor]:
    """``(sign, logabsdet)`` of the determinant of each square matrix of ``A``.

    >>> import ember
    >>> ember.linalg.slogdet(ember.tensor([[-2., 0.], [0., 1.]])).sign
    tensor(-1.)
    """
    check_square_float(A, "linalg.slogdet")
    return RT.linalg_slogdet(*D.Slogdet.apply(A))


def _is_vector_rhs(A, B):
    """PyTorch's rule: B is a (batch of) vector(s) when 1-D or when it is A's shape minus
    the last dim."""
    sb = B._data.shape
    return len(sb) == 1 or (len(sb) == A._data.ndim - 1 and sb == A._data.shape[:-1])


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``); batch dims broadcast and a
    vector ``B`` gives a vector ``X``.

    >>> import ember
    >>> ember.linalg.solve(ember.tensor([[2., 0.], [0., 4.]]), ember.tensor([2., 2.]))
    tensor([1.0000, 0.5000])
    """
    return _solve(A, B, left, True)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True,
             check_errors: bool = False) -> tuple[Tensor, Tensor]:
    """``(result, info)``: ``solve`` whose singular systems give NaN and a nonzero
    ``info`` (int32, LAPACK's) instead of an error, unless ``check_errors``.

    >>> import ember
    >>> ember.linalg.solve_ex(ember.ones(2, 2), ember.ones(2)).info
    tensor(2, dtype=ember.int32)
    """
    result = _solve(A, B, left, check_errors, "torch.linalg.solve_ex")
    # the info is of A's own factorization: B's batch dims do not broadcast into it
    infos = D.singular_infos(A._data)
    return RT.linalg_solve_ex(result, Tensor._make(get_array_module(A._data).asarray(infos)))


def _vector_result(A, B, left):
    return left and _is_vector_rhs(A, B)


def _solve(A, B, left, check, singular_name="torch.linalg.solve"):
    name = "linalg.solve"
    check_square(A, name)
    check_float(A, name)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"{name}: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    vector = _vector_result(A, B, left)
    b = B.unsqueeze(-1) if vector else B
    _check_rhs_shape(A, b, left, name)
    if not left:
        return D.solve(A.mT, b.mT, check, singular_name).mT
    x = D.solve(A, b, check, singular_name)
    return x.squeeze(-1) if vector else x


def _check_rhs_shape(A, b, left, name):
    n = A._data.shape[-1]
    sb = b._data.shape
    if len(sb) < 2 or (sb[-2] if left else sb[-1]) != n:
        shown = f"{sb[0]}x1" if len(sb) == 1 else f"{sb[-2]}x{sb[-1]}"
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {shown})")
    _check_batch_broadcast(sb[:-2], A._data.shape[:-2])


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """``X`` with ``A X = B`` (``left=False``: ``X A = B``) reading only A's upper or lower
    triangle (``unitriangular``: its diagonal taken as ones); a zero on the diagonal gives
    non-finite values, not an error.

    >>> import ember
    >>> A = ember.tensor([[2., 1.], [0., 4.]])
    >>> ember.linalg.solve_triangular(A, ember.tensor([[3.], [4.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    name = "linalg.solve_triangular"
    check_matrix(B, name, "B")
    check_square(A, name)
    _check_rhs_shape(A, B, left, name)
    for t in (A, B):
        if t._data.dtype.kind not in "fc" or t.dtype is float16:
            raise NotImplementedError(f'"triangular_solve_cpu" not implemented for '
                                      f"'{t.dtype.scalar_name}'")
    if A.dtype is not B.dtype:
        common = promote_types(A.dtype, B.dtype)
        A, B = A.to(common), B.to(common)
    tri = A.triu() if upper else A.tril()
    if unitriangular:
        n = A._data.shape[-1]
        eye = Tensor._make(get_array_module(A._data).eye(n, dtype=A._data.dtype))
        tri = (tri.triu(1) if upper else tri.tril(-1)) + eye
    if not left:
        return D.solve(tri.mT, B.mT, False).mT
    return D.solve(tri, B, False)


def _check_batch_broadcast(sa, sb):
    try:
        np.broadcast_shapes(sa, sb)
    except ValueError:
        for i in range(1, min(len(sa), len(sb)) + 1):
            if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
                raise RuntimeError(
                    f"The size of tensor a ({sa[-i]}) must match the size of tensor b "
                    f"({sb[-i]}) at non-singleton dimension {max(len(sa), len(sb)) - i}") \
                    from None
        raise


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor ``L`` (``A = L L^T``) of each symmetric positive-definite
    matrix, read from A's lower triangle; ``upper=True`` gives ``U = L^T``.

    >>> import ember
    >>> ember.linalg.cholesky(ember.tensor([[4., 2.], [2., 2.]]))
    tensor([[2., 0.],
            [1., 1.]])
    """
    return _cholesky(A, upper, "linalg.cholesky")


def _cholesky(A, upper, name):
    check_square_float(A, name)
    return apply_saving_outputs(D.Cholesky, A, upper, name, True)


def cholesky_ex(A: Tensor, *, upper: bool = False,
                check_errors: bool = False) -> tuple[Tensor, Tensor]:
    """``(L, info)``: ``info`` (int32) is the order of the first leading minor that is not
    positive-definite (0: none); such a matrix's factor is NaN rather than an error.

    >>> import ember
    >>> ember.linalg.cholesky_ex(-ember.eye(2)).info
    tensor(1, dtype=ember.int32)
    """
    check_square_float(A, "linalg.cholesky")
    factor = apply_saving_outputs(D.Cholesky, A, upper, "linalg.cholesky_ex", check_errors)
    info = Tensor._make(get_array_module(A._data).asarray(D.cholesky_infos(A._data)))
    return RT.linalg_cholesky_ex(factor, info)


def qr(A: Tensor, mode: str = "reduced") -> tuple[Tensor, Tensor]:
    """``(Q, R)`` with ``A = QR``; ``mode``: 'reduced', 'complete' or 'r' (Q empty).

    >>> import ember
    >>> q, r = ember.linalg.qr(ember.tensor([[3., 1.], [4., 2.]]))
    >>> (q @ r).round(decimals=4)
    tensor([[3., 1.],
            [4., 2.]])
    """
    check_matrix(A, "linalg.qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    check_float(A, "linalg.qr")
    return RT.linalg_qr(*apply_saving_outputs(D.Qr, A, mode))


def _check_driver(driver):
    if driver is not None:
        raise RuntimeError("torch.linalg.svd: keyword argument `driver=` is only supported on "
                           "CUDA inputs with cuSOLVER backend.")


def svd(A: Tensor, full_matrices: bool = True, *,
        driver: str | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, singular values descending.

    >>> import ember
    >>> ember.linalg.svd(ember.tensor([[3., 0.], [0., -4.]])).S
    tensor([4., 3.])
    """
    check_matrix(A, "linalg.svd")
    check_float(A, "linalg.svd")
    _check_driver(driver)
    return RT.linalg_svd(*D.svd(A, full_matrices))


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of each matrix, descending.

    >>> import ember
    >>> ember.linalg.svdvals(ember.tensor([[3., 0.], [0., -4.]]))
    tensor([4., 3.])
    """
    check_matrix(A, "linalg.svd")
    check_float(A, "linalg.svd")
    _check_driver(driver)
    if _wants_grad(A):
        return D.svd(A, False)[1]
    xp = get_array_module(A._data)
    return Tensor._make(xp.linalg.svd(A._data, compute_uv=False))


def _wants_grad(A):
    """Whether the op must run as its Primitive: for a gradient, or under vmap (the
    shortcut on ``A``'s array would see one sample only), or for a forward-mode tangent."""
    return (A.requires_grad and is_grad_enabled()) or A._vmap_level is not None or (
        bool(forward_ad.active) and forward_ad.tangent_of(A) is not None)


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def _check_eigh(A, UPLO):
    check_square(A, "linalg.eigh")
    if A._data.dtype.kind not in "fc" or A.dtype is float16:
        raise NotImplementedError(f'"linalg_eigh_cpu" not implemented for '
                                  f"'{A.dtype.scalar_name}'")
    _check_uplo(UPLO)


def eigh(A: Tensor, UPLO: str = "L") -> tuple[Tensor, Tensor]:
    """``(eigenvalues, eigenvectors)`` of each symmetric matrix (ascending), read from the
    triangle ``UPLO`` names.

    >>> import ember
    >>> ember.linalg.eigh(ember.tensor([[2., 1.], [1., 2.]])).eigenvalues
    tensor([1., 3.])
    """
    _check_eigh(A, UPLO)
    return RT.linalg_eigh(*apply_saving_outputs(D.Eigh, A, UPLO))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues (ascending) of each symmetric matrix.

    >>> import ember
    >>> ember.linalg.eigvalsh(ember.tensor([[2., 1.], [1., 2.]]))
    tensor([1., 3.])
    """
    _check_eigh(A, UPLO)
    if _wants_grad(A):
        return apply_saving_outputs(D.Eigh, A, UPLO)[0]
    return Tensor._make(get_array_module(A._data).linalg.eigvalsh(A._data, UPLO=UPLO))


def _tolerance(value):
    if value is None or isinstance(value, (int, float, np.floating)):
        return value
    if isinstance(value, Tensor):
        return value._data
    raise TypeError(f"expected a number or a Tensor, got {type(value).__name__}")


def pinv(A: Tensor, rcond: Number | Tensor | None = None, hermitian: bool = False, *,
         atol: Number | Tensor | None = None, rtol: Number | Tensor | None = None) -> Tensor:
    """The Moore-Penrose pseudo-inverse; singular values at or below
    ``max(atol, rtol * largest)`` count as zero (``rcond``: the older name of ``rtol``).

    >>> import ember
    >>> ember.linalg.pinv(ember.tensor([[2., 0.], [0., 0.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    if A._data.ndim < 2 or A._data.dtype.kind not in "fc":
        dims = ", ".join(str(s) for s in A._data.shape)
        raise RuntimeError(f"linalg.pinv({A.dtype.scalar_name}{{[{dims}]}}): expected a tensor "
                           "with 2 or more dimensions of float, double, cfloat or cdouble types")
    if rcond is not None:
        rtol = rcond
    return D.pinv(A, _tolerance(atol), _tolerance(rtol), hermitian)


@per_sample_under_vmap  # counted on the arrays, outside a Primitive
def matrix_rank(A: Tensor, tol: Number | Tensor | None = None, hermitian: bool = False, *,
                atol: Number | Tensor | None = None,
                rtol: Number | Tensor | None = None) -> Tensor:
    """The number of singular values above ``max(atol, rtol * largest)`` (int64); ``tol``
    is the older name of ``atol``, with ``rtol = 0``.

    >>> import ember
    >>> ember.linalg.matrix_rank(ember.ones(3, 3))
    tensor(1)
    """
    check_matrix(A, "torch.linalg.matrix_rank", "input")
    _check_float_or_double(A)
    if tol is not None:
        atol, rtol = tol, 0.0
    d = A._data
    xp = get_array_module(d)
    s = xp.abs(xp.linalg.eigvalsh(d)) if hermitian else xp.linalg.svd(d, compute_uv=False)
    cut = D.tolerance_array(d, s, _tolerance(atol), _tolerance(rtol))
    return Tensor._make((s > cut[..., None]).sum(axis=-1).astype(np.int64))


def _check_float_or_double(A):
    if A._data.dtype.kind not in "fc" or A.dtype is float16:
        raise RuntimeError("This function doesn't handle types other than float and double")


_LSTSQ_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@per_sample_under_vmap  # the solution is computed on the arrays, outside a Primitive
def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *,
          driver: str | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """The least-squares solution of ``A X = B``: ``(solution, residuals, rank,
    singular_values)`` as PyTorch fills them for each ``driver`` (default 'gelsy');
    rank-deficient systems get the minimum-norm solution.

    >>> import ember
    >>> A = ember.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> ember.linalg.lstsq(A, ember.tensor([[1.], [2.], [3.]])).solution
    tensor([[1.],
            [2.]])
    """
    if driver is not None and driver not in _LSTSQ_DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of "
                           "(gels, gelsy, gelsd, gelss)")
    driver = driver or "gelsy"
    check_matrix(A, "torch.linalg.lstsq", "input")
    nd, bd = A._data.ndim, B._data.ndim
    if bd < 1 or not (nd >= bd and nd - bd <= 1):
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    vector = bd == nd - 1
    b = B.unsqueeze(-1) if vector else B
    if b._data.shape[-2] != A._data.shape[-2]:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    _check_float_or_double(A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype.scalar_name} and other's "
                           f"dtype {B.dtype.scalar_name}")
    _check_batch_broadcast(b._data.shape[:-2], A._data.shape[:-2])
    d = A._data
    xp = get_array_module(d)
    m, n = d.shape[-2:]
    u, s, vh = xp.linalg.svd(d, full_matrices=False)
    cut = D.tolerance_array(d, s, None, rcond if rcond is not None else None)
    keep = s > cut[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0).astype(d.dtype)
    solution = vh.swapaxes(-1, -2).conj() @ (
        inv_s[..., :, None] * (u.swapaxes(-1, -2).conj() @ b._data))
    rank = keep.sum(axis=-1).astype(np.int64)
    residuals = xp.zeros((0,), dtype=d.dtype)
    if driver != "gelsy" and m > n and bool((rank == min(m, n)).all()):
        residuals = (xp.abs(d @ solution - b._data) ** 2).sum(axis=-2)
    x, residuals = apply_saving_outputs(D.LstsqSolution, A, b, solution, residuals)
    rank_out = xp.zeros((0,), dtype=np.int64) if driver == "gels" else rank
    values = s if driver in ("gelsd", "gelss") else xp.zeros((0,), dtype=d.dtype)
    if vector:
        x = x.squeeze(-1)
    return RT.linalg_lstsq(x, residuals, Tensor._make(xp.asarray(rank_out)),
                           Tensor._make(values))


__all__ = ["LinAlgError", "inv", "inv_ex", "det", "slogdet", "solve", "solve_ex",
           "solve_triangular", "cholesky",
           "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "pinv", "matrix_rank",
           "lstsq"]


def _check_square_system(b, A, op):
    """PyTorch's checks, in its order, for ``op`` solving ``A X = b`` with a given square
    ``A`` (cholesky_solve, triangular_solve): same dtype, square A, b's rows A's size, a
    float dtype the CPU kernel has."""
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b.dtype.scalar_name} and A of type {A.dtype.scalar_name} instead.")
    m, n = A._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"A must be batches of square matrices, but they are {m} by {n} "
                           "matrices")
    if b._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is {n} by {n} "
                           f"but each b matrix is {b._data.shape[-2]} by {b._data.shape[-1]}")
    if A._data.dtype.kind not in "fc" or A.dtype is float16:
        raise NotImplementedError(f"\"{op}_cpu\" not implemented for '{A.dtype.scalar_name}'")
