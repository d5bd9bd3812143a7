"""PyTorch's top-level forms of the matrix functions (``ember.det``, ``ember.svd`` with
its V, ``ember.qr(some)``, ...) and the diagonal ops (``ember.diag``, ``ember.diagonal``,
``ember.diag_embed``, ``ember.trace``): declared as ``ember.<name>`` and ``Tensor.<name>`` in
``_functions.py``."""
from __future__ import annotations

import warnings

from .. import return_types as RT
from .._tensor import Tensor, _wrap_dim
from .._ops import decompositions as D, diagonals as DG
from .._ops.decompositions import check_float, check_matrix, check_square_float, \
    apply_saving_outputs
from ..backend import dtypes, get_array_module, float16
from . import _norms
from ._decompositions import svdvals, pinv, _cholesky, _check_square_system


def logdet(input: Tensor) -> Tensor:
    """``log(det(input))``: NaN for a negative determinant, -inf for a singular matrix.

    >>> import ember
    >>> ember.logdet(ember.tensor([[1., 0.], [0., 1.]]))
    tensor(0.)
    """
    check_square_float(input, "logdet")
    sign, logabs = D.Slogdet.apply(input)
    if input.is_complex():  # log of the complex determinant: the sign's phase is its angle
        return logabs + sign.log()
    return logabs.masked_fill(sign < 0, float("nan"))


def slogdet(input: Tensor) -> tuple[Tensor, Tensor]:
    """``ember.slogdet``: ``linalg.slogdet`` under PyTorch's older result name.

    >>> import ember
    >>> ember.slogdet(ember.eye(2)).logabsdet
    tensor(0.)
    """
    check_square_float(input, "linalg.slogdet")
    return RT.slogdet(*D.Slogdet.apply(input))


def cholesky(input: Tensor, upper: bool = False) -> Tensor:
    """``ember.cholesky`` (deprecated in PyTorch for ``linalg.cholesky``).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.cholesky(ember.tensor([[4.]]))
    tensor([[2.]])
    """
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be "
                  "removed in a future PyTorch release.", UserWarning, stacklevel=2)
    return _cholesky(input, upper, "cholesky")


def qr(input: Tensor, some: bool = True) -> tuple[Tensor, Tensor]:
    """``ember.qr(input, some)``: reduced (``some``) or complete QR.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.qr(ember.ones(3, 2)).Q.shape
    ember.Size([3, 2])
    """
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a "
                  "future PyTorch release.", UserWarning, stacklevel=2)
    check_matrix(input, "linalg.qr")
    check_float(input, "linalg.qr")
    return RT.qr(*apply_saving_outputs(D.Qr, input, "reduced" if some else "complete"))


def svd(input: Tensor, some: bool = True,
               compute_uv: bool = True) -> tuple[Tensor, Tensor, Tensor]:
    """``ember.svd``: ``(U, S, V)`` with ``A = U diag(S) V^T`` (V, not Vh); ``some=False``
    gives square U and V; ``compute_uv=False`` gives zero U and V.

    >>> import ember
    >>> ember.svd(ember.tensor([[3., 0.], [0., -4.]])).S
    tensor([4., 3.])
    """
    if input._data.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input._data.ndim} dimensions instead")
    check_float(input, "linalg.svd")
    if not compute_uv:
        s = svdvals(input)
        xp = get_array_module(input._data)
        m, n = input._data.shape[-2:]
        batch = input._data.shape[:-2]
        u = xp.zeros(batch + (m, m), input._data.dtype)  # PyTorch: square, whatever `some`
        v = xp.zeros(batch + (n, n), input._data.dtype)
        return RT.svd(Tensor._make(u), s, Tensor._make(v))
    u, s, vh = D.svd(input, not some)
    return RT.svd(u, s, vh.mT)

def cross(input: Tensor, other: Tensor, dim: int | None = None) -> Tensor:
    """``ember.cross``: without ``dim``, the first dim of size 3 (deprecated in PyTorch).

    >>> import ember
    >>> ember.cross(ember.tensor([1., 0., 0.]), ember.tensor([0., 1., 0.]), dim=0)
    tensor([0., 0., 1.])
    """
    if dim is None:
        warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                      "Please either pass the dim explicitly or simply use torch.linalg.cross.",
                      UserWarning, stacklevel=2)
        shape = _norms._check_shapes_broadcast(input._data.shape, other._data.shape)
        found = [i for i, s in enumerate(shape) if s == 3]
        if not found:
            raise RuntimeError("no dimension of size 3 in input")
        dim = found[0]
    return _norms.cross(input, other, dim=dim)



def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The ``offset`` diagonal of the matrices in dims ``dim1``, ``dim2``, as the last dim
    of a view (writes to it reach ``input``).

    >>> import ember
    >>> ember.diagonal(ember.tensor([[1., 2.], [3., 4.]]), 1)
    tensor([2.])
    """
    n = input._data.ndim
    DG.diagonal_dims(n, offset, dim1, dim2)
    return DG.Diagonal.apply(input, offset, _wrap_dim(dim1, n), _wrap_dim(dim2, n))



def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """Matrices (in dims ``dim1``, ``dim2`` of the result) with ``input``'s last dim on
    their ``offset`` diagonal.

    >>> import ember
    >>> ember.diag_embed(ember.tensor([1., 2.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    DG.diagonal_dims(input._data.ndim + 1, offset, dim1, dim2)
    return DG.DiagEmbed.apply(input, offset, dim1, dim2)



def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """1-D: a square matrix with ``input`` on its ``diagonal``-th diagonal; 2-D: that
    diagonal as a new 1-D tensor.

    >>> import ember
    >>> ember.diag(ember.tensor([1., 2.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    n = input._data.ndim
    if n == 1:
        return DG.DiagEmbed.apply(input, diagonal, 0, 1)
    if n == 2:
        return DG.Diagonal.apply(input, diagonal, 0, 1).clone()
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {n}D")



def trace(input: Tensor) -> Tensor:
    """The sum of the main diagonal of a matrix (integers sum to int64).

    >>> import ember
    >>> ember.trace(ember.tensor([[1., 2.], [3., 4.]]))
    tensor(5.)
    """
    if input._data.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim "
                           f"{input._data.ndim}")
    dtypes.refuse_limited_unsigned(input._data.dtype, "trace")
    return DG.Diagonal.apply(input, 0, 0, 1).sum()


def _check_cholesky_solve_args(b, factor):
    for t, what in ((b, "b"), (factor, "A")):
        if t._data.ndim < 2:
            raise RuntimeError(f"{what} should have at least 2 dimensions, but has "
                               f"{t._data.ndim} dimensions instead")
    _check_square_system(b, factor, "cholesky_solve")


def cholesky_solve(input: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """``X`` with ``A X = input`` given A's Cholesky factor ``input2`` (lower, or upper with
    ``upper=True``; only its triangle is read); batch dims broadcast.

    >>> import ember
    >>> L = ember.tensor([[2., 0.], [1., 1.]])
    >>> ember.cholesky_solve(L @ L.mT @ ember.tensor([[1.], [2.]]), L)
    tensor([[1.],
            [2.]])
    """
    _check_cholesky_solve_args(input, input2)
    return D.cholesky_solve(input, input2, upper)


def cholesky_inverse(input: Tensor, upper: bool = False) -> Tensor:
    """``(L L^T)^-1`` from a Cholesky factor ``L`` (``upper``: ``(U^T U)^-1``).

    >>> import ember
    >>> ember.cholesky_inverse(ember.tensor([[2., 0.], [0., 1.]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 1.0000]])
    """
    check_matrix(input, "cholesky_inverse")
    m, n = input._data.shape[-2:]
    if m != n:
        raise RuntimeError(f"cholesky_inverse: A must be batches of square matrices, but they "
                           f"are {m} by {n} matrices")
    if input._data.dtype.kind != "f" or input.dtype is float16:
        raise NotImplementedError(f'"cholesky_inverse_out_cpu" not implemented for '
                                  f"'{input.dtype.scalar_name}'")
    eye = Tensor._make(get_array_module(input._data).eye(n, dtype=input._data.dtype))
    return D.cholesky_solve(eye, input, upper)


def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    """``linalg.pinv`` with singular values at or below ``rcond`` times the largest dropped.

    >>> import ember
    >>> ember.pinverse(ember.tensor([[2., 0.], [0., 0.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.0000]])
    """
    return pinv(input, rtol=rcond)


__all__ = ["logdet", "slogdet", "cholesky", "cholesky_solve", "cholesky_inverse", "qr", "svd",
           "pinverse", "cross", "diagonal",
           "diag_embed", "diag", "trace"]
