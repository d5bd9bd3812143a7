"""The LU and LDL family of ``ember.linalg`` (``lu_factor``, ``lu``, ``lu_solve``,
``ldl_factor``, ``ldl_solve`` and their ``_ex`` forms) and PyTorch's older top-level forms
(``ember.lu``, ``ember.lu_solve``, ``ember.lu_unpack``, ``ember.triangular_solve``):
argument checks with PyTorch's messages around ``ember/_ops/lu_ops.py``.

``lu``, ``lu_unpack``, ``lu_solve`` and ``triangular_solve`` are compositions of
differentiable ops (``LuFactor``, ``tril``/``triu``, triangular solves, ``gather``), so
their gradients (and second derivatives) come from those ops.
"""
from __future__ import annotations

import warnings

import numpy as np

from .. import return_types as RT
from .._registry import with_out
from .._tensor import Tensor
from ..autograd.batching import per_sample_under_vmap
from .._ops import lu_ops as LO
from .._ops.decompositions import apply_saving_outputs, check_square, solve as _solve_op
from ..backend import get_array_module, to_host, float16, int32
from ..backend.meta import is_meta
from ._decompositions import _check_rhs_shape, _check_batch_broadcast, _check_square_system


def _sizes(t):
    return "[" + ", ".join(str(s) for s in t._data.shape) + "]"


def _check_lu_input(A, name, pivot):
    if A._data.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{_sizes(A)} instead")
    if A._data.dtype.kind not in "fc" or A.dtype is float16:
        raise NotImplementedError(f"\"lu_cpu\" not implemented for '{A.dtype.scalar_name}'")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")


def _raise_zero_pivot(info, name):
    flat = to_host(info._data).reshape(-1)
    k = int(np.flatnonzero(flat > 0)[0])
    prefix = f"(Batch element {k}): " if info._data.ndim else ""
    i = int(flat[k])
    raise RuntimeError(f"{name}: {prefix}U[{i},{i}] is zero and using it on lu_solve would result "
                       "in a division by zero. If you still want to perform the factorization, "
                       "consider calling linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")


def _lu_factor(A, pivot, check, name, checked_name):
    _check_lu_input(A, name, pivot)
    lu, pivots, info = apply_saving_outputs(LO.LuFactor, A)
    if check and not is_meta(info._data) and bool((info._data > 0).any()):
        _raise_zero_pivot(info, checked_name)
    return lu, pivots, info


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def _lu_factor_fn(A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor]:
    """``(LU, pivots)``: ``A = P L U`` with partial pivoting, L (unit diagonal, strictly
    below) and U packed in one matrix; ``pivots`` are LAPACK's 1-based int32 row
    interchanges. A singular matrix (a zero on U's diagonal) raises.

    >>> import ember
    >>> ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=ember.int32)
    """
    lu, pivots, _ = _lu_factor(A, pivot, True, "torch.lu_factor", "torch.linalg.lu_factor")
    return RT.linalg_lu_factor(lu, pivots)


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def _lu_factor_ex_fn(A: Tensor, *, pivot: bool = True,
                     check_errors: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """``(LU, pivots, info)``: ``lu_factor`` with getrf's ``info`` (int32: ``i > 0`` when
    ``U[i-1, i-1]`` is zero) instead of an error, unless ``check_errors``.

    >>> import ember
    >>> ember.linalg.lu_factor_ex(ember.zeros(2, 2)).info
    tensor(1, dtype=ember.int32)
    """
    return RT.linalg_lu_factor_ex(*_lu_factor(A, pivot, check_errors, "torch.lu_factor",
                                              "torch.linalg.lu_factor_ex"))


def _unpack(lu, pivots, dtype_of):
    m, n = lu._data.shape[-2:]
    k = min(m, n)
    return (Tensor._make(LO.permutation_matrix(pivots._data, m, dtype_of._data)),
            LO.unit_lower(lu, k), LO.upper(lu, k))


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def _lu_fn(A: Tensor, *, pivot: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """``(P, L, U)`` with ``A = P L U``: P a permutation matrix, L unit lower triangular
    (``m x k``), U upper triangular (``k x n``), ``k = min(m, n)``.

    >>> import ember
    >>> P, L, U = ember.linalg.lu(ember.tensor([[1., 2.], [3., 4.]]))
    >>> U
    tensor([[3.0000, 4.0000],
            [0.0000, 0.6667]])
    """
    lu, pivots, _ = _lu_factor(A, pivot, False, "linalg.lu", None)
    return RT.linalg_lu(*_unpack(lu, pivots, A))


def _check_pivot_values(pivots, m, what):
    if is_meta(pivots._data) or not pivots._data.size:
        return
    p = to_host(pivots._data)
    if what == "lu_solve":
        if (p < 1).any():
            raise RuntimeError("Pivots given to lu_solve must all be greater or equal to 1. Did "
                               "you properly pass the result of lu_factor?")
        if (p > m).any():
            raise RuntimeError("Pivots given to lu_solve must all be smaller or equal to "
                               "LU.size(-2). Did you properly pass the result of lu_factor?")
    elif ((p < 1) | (p > m)).any():
        raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                           "inclusive.Did you properly pass the result of lu_factor?")


def _check_lu_solve(LU, pivots, B, left):
    if LU._data.dtype.kind not in "fc":
        raise RuntimeError(f"torch.linalg.lu_solve: Expected a floating point or complex tensor "
                           f"as input. Got {LU.dtype.scalar_name}")
    if LU.dtype is not B.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {LU.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    if pivots.dtype is not int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    check_square(LU, "torch.linalg.lu_solve")
    if B._data.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    _check_rhs_shape(LU, B, left, "linalg.lu_solve")
    if pivots._data.ndim == 0 or pivots._data.shape[-1] != LU._data.shape[-1]:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if pivots._data.shape != LU._data.shape[:-1]:
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be the "
                           f"same, but got pivots with shape {_sizes(pivots)} instead")
    if LU.dtype is float16 or LU._data.dtype.kind == "V":
        raise NotImplementedError(f"\"linalg.lu_solve_cpu\" not implemented for "
                                  f"'{LU.dtype.scalar_name}'")
    _check_pivot_values(pivots, LU._data.shape[-1], "lu_solve")


def _permute_rows(B, pivots, batch, inverse):
    """``P^T B`` (``inverse``: ``P B``) for the ``P`` of ``pivots``, by a gather (exact,
    unlike a product with P: ``0 * inf`` would make NaNs)."""
    n, k = B._data.shape[-2:]
    xp = get_array_module(B._data)
    if is_meta(pivots._data):
        perm = np.zeros(pivots._data.shape, np.int64)
    else:
        perm = LO.permutation(pivots._data, n)
    if inverse:
        perm = np.argsort(perm, axis=-1)
    index = np.broadcast_to(perm[..., None], batch + (n, k))
    full = B.expand(batch + (n, k))
    return full.gather(-2, Tensor._make(xp.asarray(np.ascontiguousarray(index))))


def _lu_solve(LU, pivots, B, left, adjoint):
    n = LU._data.shape[-1]
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _lu_solve(LU, pivots, B.mH, True, not adjoint).mH
    batch = tuple(np.broadcast_shapes(LU._data.shape[:-2], B._data.shape[:-2]))
    low, up = LO.unit_lower(LU, n), LO.upper(LU, n)
    if not adjoint:  # X = U^-1 L^-1 P^T B
        y = _solve_op(low, _permute_rows(B, pivots, batch, False), False)
        return _solve_op(up, y, False)
    y = _solve_op(low.mH, _solve_op(up.mH, B, False), False)  # X = P L^-H U^-H B
    return _permute_rows(y, pivots, batch, True)


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def _lu_solve_fn(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True,
                 adjoint: bool = False) -> Tensor:
    """``X`` with ``A X = B`` from ``A``'s ``lu_factor`` (``adjoint``: ``A^H X = B``;
    ``left=False``: ``X A = B``); batch dims of ``B`` broadcast with ``LU``'s.

    >>> import ember
    >>> A = ember.tensor([[1., 2.], [3., 4.]])
    >>> LU, pivots = ember.linalg.lu_factor(A)
    >>> ember.linalg.lu_solve(LU, pivots, A @ ember.tensor([[1.], [2.]]))
    tensor([[1.],
            [2.]])
    """
    _check_lu_solve(LU, pivots, B, left)
    return _lu_solve(LU, pivots, B, left, adjoint)


# ---- LDL ----------------------------------------------------------------------------------------
def _ldl_factor(A, check_errors, name):
    check_square(A, "torch.linalg.ldl_factor_ex")
    if A._data.dtype.kind not in "fc":
        raise RuntimeError(f"torch.linalg.ldl_factor_ex: Expected a floating point or complex "
                           f"tensor as input. Got {A.dtype.scalar_name}")
    if A.dtype is float16 or A._data.dtype.kind == "V":
        raise NotImplementedError(f"\"ldl_factor_kernel_cpu\" not implemented for "
                                  f"'{A.dtype.scalar_name}'")
    ld, pivots, info = LO.LdlFactor.apply(A)
    if check_errors and not is_meta(info._data) and bool((info._data > 0).any()):
        # PyTorch reports sytrf's "D is singular" as an unknown code (an internal assert)
        code = int(to_host(info._data).reshape(-1)[np.flatnonzero(to_host(info._data))[0]])
        raise RuntimeError(f"{name}: Unknown error code: {code}.")
    return ld, pivots, info


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def _ldl_factor_fn(A: Tensor, *, hermitian: bool = False) -> tuple[Tensor, Tensor]:
    """``(LD, pivots)``: LAPACK sytrf's compact ``A = L D L^T`` of each symmetric matrix
    (read from its lower triangle; D has 1x1 and 2x2 blocks, negative pivots mark the
    latter). ``hermitian`` matters only for complex inputs.

    >>> import ember
    >>> ember.linalg.ldl_factor(ember.tensor([[4., 2.], [2., 3.]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    ld, pivots, _ = _ldl_factor(A, True, "torch.linalg.ldl_factor")
    return RT.linalg_ldl_factor(ld, pivots)


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def _ldl_factor_ex_fn(A: Tensor, *, hermitian: bool = False,
                      check_errors: bool = False) -> tuple[Tensor, Tensor, Tensor]:
    """``(LD, pivots, info)``: ``ldl_factor`` with sytrf's ``info`` (``i > 0``: D's
    ``i``-th diagonal element is exactly zero).

    >>> import ember
    >>> ember.linalg.ldl_factor_ex(ember.zeros(2, 2)).info
    tensor(1, dtype=ember.int32)
    """
    return RT.linalg_ldl_factor_ex(*_ldl_factor(A, check_errors, "torch.linalg.ldl_factor_ex"))


def _check_ldl_solve(LD, pivots, B):
    name = "torch.linalg.ldl_solve"
    check_square(LD, name)
    if LD._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{LD.dtype.scalar_name}")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.scalar_name} and A of type {LD.dtype.scalar_name} instead.")
    if B._data.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(B._data.ndim, 1)}, {max(B._data.ndim, 1) - 1}], but got -2)")
    n = LD._data.shape[-1]
    if B._data.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B._data.shape[-2]} by {B._data.shape[-1]}")
    if pivots._data.shape != LD._data.shape[:-1]:
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {_sizes(pivots)} instead")
    if pivots._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{pivots.dtype.scalar_name}")
    _check_batch_broadcast(B._data.shape[:-2], LD._data.shape[:-2])
    if not is_meta(pivots._data) and pivots._data.size and bool((pivots._data == 0).any()):
        raise RuntimeError("Pivots given to ldl_solve must all satisfy |pivot| >= 1. Did you "
                           "properly pass the result of ldl_factor?")


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def _ldl_solve_fn(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False) -> Tensor:
    """``X`` with ``A X = B`` from ``A``'s ``ldl_factor``; batch dims of ``B`` broadcast.

    >>> import ember
    >>> A = ember.tensor([[4., 2.], [2., 3.]])
    >>> LD, pivots = ember.linalg.ldl_factor(A)
    >>> ember.linalg.ldl_solve(LD, pivots, A @ ember.tensor([[1.], [2.]]))
    tensor([[1.],
            [2.]])
    """
    _check_ldl_solve(LD, pivots, B)
    return LO.LdlSolve.apply(LD, pivots, B)


# ---- PyTorch's older top-level forms -----------------------------------------------------------
_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")
_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")
_TRIANGULAR_SOLVE_DEPRECATED = (
    "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
    "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
    "reversed and does not return a copy of one of the inputs.\n"
    "X = torch.triangular_solve(B, A).solution\nshould be replaced with\n"
    "X = torch.linalg.solve_triangular(A, B).")


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def lu(A: Tensor, pivot: bool = True, get_infos: bool = False) -> tuple:
    """``ember.lu`` (deprecated in PyTorch): ``(LU, pivots)`` of ``linalg.lu_factor``, or
    ``(LU, pivots, info)`` with ``get_infos``; a singular matrix never raises here.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.lu(ember.tensor([[1., 2.], [3., 4.]]))[1]
    tensor([2, 2], dtype=ember.int32)
    """
    warnings.warn(_LU_DEPRECATED, UserWarning, stacklevel=2)
    lu_, pivots, info = _lu_factor(A, pivot, False, "torch.lu_factor", None)
    return RT._lu_with_info(lu_, pivots, info) if get_infos else (lu_, pivots)


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def lu_solve(input: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    """``ember.lu_solve(b, LU, pivots)`` (deprecated in PyTorch): ``linalg.lu_solve`` with
    its arguments in the older order.

    >>> import ember, warnings
    >>> LU, pivots = ember.linalg.lu_factor(ember.tensor([[2., 0.], [0., 4.]]))
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.lu_solve(ember.tensor([[2.], [2.]]), LU, pivots)
    tensor([[1.0000],
            [0.5000]])
    """
    warnings.warn(_LU_SOLVE_DEPRECATED, UserWarning, stacklevel=2)
    return _lu_solve_fn(LU_data, LU_pivots, input)


@per_sample_under_vmap  # reads the pivots' arrays outside a Primitive
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """``(P, L, U)`` from ``lu_factor``'s packed result; a part not unpacked is an empty
    tensor.

    >>> import ember
    >>> LU, pivots = ember.linalg.lu_factor(ember.tensor([[1., 2.], [3., 4.]]))
    >>> ember.lu_unpack(LU, pivots).P
    tensor([[0., 1.],
            [1., 0.]])
    """
    if LU_data._data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {_sizes(LU_data)} instead")
    if LU_pivots.dtype is not int32:
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    m, n = LU_data._data.shape[-2:]
    xp = get_array_module(LU_data._data)
    empty = Tensor._make(xp.zeros((0,), LU_data._data.dtype))
    k = min(m, n)
    if unpack_data:
        low, up = LO.unit_lower(LU_data, k), LO.upper(LU_data, k)
    else:  # empty, yet part of LU's graph as PyTorch's are
        low = up = LU_data.reshape(-1)[:0]
    perm = empty
    if unpack_pivots:
        _check_pivot_values(LU_pivots, m, "lu_unpack")
        pivots = LU_pivots._data
        batch = LU_data._data.shape[:-2]
        if pivots.shape[:-1] != batch:
            pivots = xp.broadcast_to(pivots, batch + pivots.shape[-1:])
        perm = Tensor._make(LO.permutation_matrix(pivots, m, LU_data._data))
    return RT.lu_unpack(perm, low, up)


def _check_triangular_solve(b, A):
    for t, what in ((b, "b"), (A, "A")):
        if t._data.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {what} to have at least 2 "
                               f"dimensions, but it has {t._data.ndim} dimensions instead")
    _check_square_system(b, A, "triangular_solve")
    _check_batch_broadcast(b._data.shape[:-2], A._data.shape[:-2])


def triangular_solve(input: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> tuple[Tensor, Tensor]:
    """``ember.triangular_solve(b, A)`` (deprecated in PyTorch): ``(solution,
    cloned_coefficient)`` with ``op(A) X = b`` for the upper (or lower) triangle of ``A``,
    ``op`` the transpose when ``transpose``; the coefficient is a copy of ``A`` broadcast
    to the batch.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.triangular_solve(ember.tensor([[3.], [4.]]),
    ...                            ember.tensor([[2., 1.], [0., 4.]])).solution
    tensor([[1.],
            [1.]])
    """
    warnings.warn(_TRIANGULAR_SOLVE_DEPRECATED, UserWarning, stacklevel=2)
    _check_triangular_solve(input, A)
    n = A._data.shape[-1]
    batch = tuple(np.broadcast_shapes(input._data.shape[:-2], A._data.shape[:-2]))
    tri = A.triu() if upper else A.tril()
    if unitriangular:
        eye = Tensor._make(get_array_module(A._data).eye(n, dtype=A._data.dtype))
        tri = (tri.triu(1) if upper else tri.tril(-1)) + eye
    solution = _solve_op(tri.mT if transpose else tri, input, False)
    return RT.triangular_solve(solution, A.expand(batch + (n, n)).clone())


lu_factor = with_out(_lu_factor_fn, "linalg.lu_factor")
lu_factor_ex = with_out(_lu_factor_ex_fn, "linalg.lu_factor_ex")
lu_ = with_out(_lu_fn, "linalg.lu")
lu_solve_ = with_out(_lu_solve_fn, "linalg.lu_solve")
ldl_factor = with_out(_ldl_factor_fn, "linalg.ldl_factor")
ldl_factor_ex = with_out(_ldl_factor_ex_fn, "linalg.ldl_factor_ex")
ldl_solve = with_out(_ldl_solve_fn, "linalg.ldl_solve")
for _fn, _name in ((lu_factor, "lu_factor"), (lu_factor_ex, "lu_factor_ex"), (lu_, "lu"),
                   (lu_solve_, "lu_solve"), (ldl_factor, "ldl_factor"),
                   (ldl_factor_ex, "ldl_factor_ex"), (ldl_solve, "ldl_solve")):
    _fn.__name__ = _fn.__qualname__ = _name

__all__ = ["lu_factor", "lu_factor_ex", "lu_", "lu_solve_", "ldl_factor", "ldl_factor_ex",
           "ldl_solve", "lu", "lu_solve", "lu_unpack", "triangular_solve"]
