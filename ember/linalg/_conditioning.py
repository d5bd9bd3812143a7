"""``ember.linalg.cond``, ``tensorinv``, ``tensorsolve``, ``vander``, ``eig``, ``eigvals``
and the randomized ``ember.svd_lowrank`` / ``ember.pca_lowrank``: compositions of
differentiable ops (inverses, solves, singular values, norms, QR), so their gradients come
from those; ``eig``/``eigvals`` (complex results) run ``lu_ops.Eig`` for a gradient.
"""
from __future__ import annotations

import math

import numpy as np  # the finiteness check of eig, on a host copy

from .. import return_types as RT
from .._creation import randn
from .._registry import with_out
from .._tensor import Tensor, _wrap_dim
from .._typing import Number, Sequence
from .._ops import decompositions as D
from .._ops import lu_ops as LO
from .._ops.decompositions import check_square
from ..autograd.batching import per_sample_under_vmap
from ..autograd.grad_mode import is_grad_enabled
from ..autograd import forward_ad
from .._ops.shape import cat
from ..backend import dtypes, float16, to_host
from ..backend.meta import is_meta
from ._decompositions import inv_ex, svdvals, solve, qr, svd
from ._norms import matrix_norm

_INF = float("inf")


def _cond_ord_text(p):
    if isinstance(p, str):
        return p
    if isinstance(p, bool) or isinstance(p, int):
        return str(int(p))
    return f"{p:f}"


def _invalid_ord(p):
    text = p if isinstance(p, str) else (str(int(p)) if float(p).is_integer() else f"{p:g}")
    return RuntimeError(f"linalg.cond got an invalid norm type: {text}")


@per_sample_under_vmap  # inv_ex's info is read from the arrays
def _cond_fn(A: Tensor, p: Number | str | None = None) -> Tensor:
    """The condition number of each matrix for the norm ``p``: None/2 the ratio of the
    largest to the smallest singular value (-2 its inverse, both for any shape); 'fro',
    'nuc', inf, -inf, 1, -1 ``norm(A) * norm(A^-1)`` of square matrices, inf where ``A`` is
    singular.

    >>> import ember
    >>> ember.linalg.cond(ember.tensor([[2., 0.], [0., 0.5]]))
    tensor(4.)
    """
    if isinstance(p, str):
        check_square(A, f"linalg.cond(ord={p})")
        if p not in ("fro", "nuc"):
            raise _invalid_ord(p)
        if A._data.size == 0:
            return _cond_of_empty(A)
    else:
        if A._data.ndim < 2:
            raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
        p = 2 if p is None else p
        if p not in (2, -2, 1, -1, _INF, -_INF):
            raise _invalid_ord(p)
        if A._data.size == 0:
            return _cond_of_empty(A)
        if abs(p) == 2:
            s = svdvals(A)
            big, small = s[..., 0], s[..., -1]
            return small / big if p == -2 else big / small
        check_square(A, f"linalg.cond(ord={_cond_ord_text(p)})")
    if p == "nuc":  # the definition directly: the norm of an infinite inverse is NaN
        s = svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    inverse, info = inv_ex(A)
    singular = (info > 0).unsqueeze(-1).unsqueeze(-1)
    inverse = inverse.masked_fill(singular, _INF)
    result = matrix_norm(A, p) * matrix_norm(inverse, p)
    return result.nan_to_num(_INF, _INF, -_INF)  # 0 * inf of a zero matrix: inf, as PyTorch


def _cond_of_empty(A):
    """NumPy leaves the condition number of 0 x 0 matrices undefined; PyTorch gives 0."""
    return A.new_zeros(A._data.shape[:-2])


@per_sample_under_vmap  # reads its arrays outside a Primitive
def _tensorinv_fn(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` as a linear map from its first ``ind`` dims to the rest:
    ``tensordot(tensorinv(A, ind), A, ind)`` is the identity (shape ``A.shape[ind:] +
    A.shape[:ind]``).

    >>> import ember
    >>> ember.linalg.tensorinv(ember.eye(4).reshape(4, 2, 2) * 2, ind=1).shape
    ember.Size([2, 2, 4])
    """
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(A._data.shape)
    if ind > len(shape):
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {len(shape)}")
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    inverse, info = inv_ex(A.reshape(rows, cols))
    if bool((info._data > 0).any()):
        D.raise_singular_inverse(A._data.reshape(rows, cols), "inv")
    return inverse.reshape(shape[ind:] + shape[:ind])


def _tensorsolve_fn(A: Tensor, B: Tensor, dims: Sequence[int] | None = None) -> Tensor:
    """``X`` with ``tensordot(A, X, X.ndim) = B``; ``dims``: dims of ``A`` moved to its end
    first (they become X's).

    >>> import ember
    >>> A = ember.eye(6).reshape(2, 3, 6) * 2
    >>> ember.linalg.tensorsolve(A, ember.ones(2, 3))
    tensor([0.5000, 0.5000, 0.5000, 0.5000, 0.5000, 0.5000])
    """
    ndim = A._data.ndim
    if dims is not None:
        dims = [_wrap_dim(d, ndim) for d in dims]
        A = A.movedim(dims, list(range(ndim - len(dims), ndim)))
    k = B._data.ndim
    if k > ndim:
        raise RuntimeError(f"ArrayRef: invalid slice, N = {k}; size = {ndim}")
    result_shape = tuple(A._data.shape[k:])
    size, other = math.prod(result_shape), math.prod(B._data.shape)
    if size != other:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {size} != {other}")
    return solve(A.reshape(size, size), B.flatten()).reshape(result_shape)


def vander(x: Tensor, N: int | None = None) -> Tensor:
    """The Vandermonde matrices of the last dim of ``x``: ``[..., i, j] = x[..., i] ** j``
    for ``j < N`` (default: ``x.shape[-1]``), increasing powers; integers give int64.

    >>> import ember
    >>> ember.linalg.vander(ember.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [1, 2, 4],
            [1, 3, 9]])
    """
    kind = x._data.dtype.kind
    if kind == "b" or x.dtype is float16 or kind == "V":
        raise RuntimeError(f"linalg.vander supports floating point, complex, and integer "
                           f"tensors, but got {x.dtype.scalar_name}")
    if N is not None and (isinstance(N, bool) or not isinstance(N, int)):
        raise TypeError(f"linalg_vander(): argument 'N' must be int, not {type(N).__name__}")
    x1 = x.unsqueeze(-1) if x._data.ndim == 0 else x
    shape = tuple(x1._data.shape)
    n = shape[-1] if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    powers = x1.unsqueeze(-1).expand(shape + (n - 1,)).cumprod(-1)
    return cat([powers.new_ones(shape + (1,)), powers], -1)


# ---- general eigenvalues ----------------------------------------------------------------------
def _check_eig(A, name):
    check_square(A, name)
    kind = A._data.dtype.kind
    if kind in "biu":
        raise RuntimeError(f"Unknown Complex ScalarType for {A.dtype.scalar_name}")
    if A.dtype is float16 or kind == "V":
        raise NotImplementedError(f"\"linalg_eig_out_cpu\" not implemented for "
                                  f"'{A.dtype.scalar_name}'")


@per_sample_under_vmap  # reads its arrays outside a Primitive
def _eig_fn(A: Tensor) -> tuple[Tensor, Tensor]:
    """``(eigenvalues, eigenvectors)`` (complex) of each square matrix: ``A V = V diag(w)``,
    eigenvectors of unit norm (LAPACK geev's); a loss must not depend on their phases.

    >>> import ember
    >>> ember.linalg.eig(ember.tensor([[2., 0.], [0., 3.]])).eigenvalues
    tensor([2.+0.j, 3.+0.j])
    """
    _check_eig(A, "linalg.eig")
    d = A._data
    if not is_meta(d) and d.size and not bool(np.isfinite(to_host(d)).all()):
        raise RuntimeError("torch.linalg.eig: input tensor should not contain infs or NaNs.")
    if _eig_wants_grad(A):
        return RT.linalg_eig(*D.apply_saving_outputs(LO.Eig, A))
    w, v = LO.eig_arrays(d, True)
    return RT.linalg_eig(Tensor._make(w), Tensor._make(v))


def _eig_wants_grad(A):
    return (A.requires_grad and is_grad_enabled()) or (
        bool(forward_ad.active) and forward_ad.tangent_of(A) is not None)


@per_sample_under_vmap  # reads its arrays outside a Primitive
def _eigvals_fn(A: Tensor) -> Tensor:
    """The eigenvalues (complex) of each square matrix.

    >>> import ember
    >>> ember.linalg.eigvals(ember.tensor([[0., -1.], [1., 0.]]))
    tensor([0.+1.j, 0.-1.j])
    """
    _check_eig(A, "linalg.eigvals")
    if _eig_wants_grad(A):
        return D.apply_saving_outputs(LO.Eig, A)[0]
    return Tensor._make(LO.eig_arrays(A._data, False)[0])


# ---- randomized low-rank SVD and PCA -------------------------------------------------------------
def _range_basis(A, q, niter, M):
    """An orthonormal basis (``m x q``) approximately spanning the range of ``A - M``: a
    random projection refined by ``niter`` power iterations, re-orthonormalized at each
    step (Halko, Martinsson and Tropp 2009, algorithm 4.4)."""
    def apply(X, adjoint=False):
        Y = (A.mT if adjoint else A) @ X
        return Y if M is None else Y - (M.mT if adjoint else M) @ X
    sketch = randn(A._data.shape[-1], q, dtype=A.dtype, device=A.device)
    Q = qr(apply(sketch)).Q
    for _ in range(niter):
        Q = qr(apply(qr(apply(Q, adjoint=True)).Q)).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    m, n = A._data.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # work on the tall transpose: the basis is then the smaller one
        A, M = A.mT, (None if M is None else M.mT)
    Q = _range_basis(A, q, niter, M)
    small = Q.mT @ A if M is None else Q.mT @ A - Q.mT @ M
    U, S, Vh = svd(small, full_matrices=False)
    U, V = Q @ U, Vh.mT
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2,
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """A randomized approximate SVD ``(U, S, V)`` of ``A - M`` (``M`` broadcast to ``A``;
    none by default) of rank at most ``q``: ``A - M ~ U diag(S) V^T``. Random: seed
    ``ember.manual_seed`` for repeatable results.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> U, S, V = ember.svd_lowrank(ember.ones(4, 3), q=2)
    >>> S.round(decimals=4)
    tensor([3.4641, 0.0000])
    """
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        A = A.to(dtypes.get_default_dtype())
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """Principal components of the rows of ``A`` (samples x features) by ``svd_lowrank``
    of ``A`` less its column means (``center``): ``(U, S, V)``, V's columns the principal
    directions, ``S**2 / (m - 1)`` the variances along them. ``q`` defaults to
    ``min(6, m, n)``.

    >>> import ember
    >>> _ = ember.manual_seed(0)
    >>> A = ember.tensor([[1., 0.], [-1., 0.], [0., 0.]])
    >>> ember.pca_lowrank(A, q=1)[1].round(decimals=4)
    tensor([1.4142])
    """
    m, n = A._data.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (0 <= q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        A = A.to(dtypes.get_default_dtype())
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A, q, niter, None)


cond = with_out(_cond_fn, "linalg.cond")
tensorinv = with_out(_tensorinv_fn, "linalg.tensorinv")
tensorsolve = with_out(_tensorsolve_fn, "linalg.tensorsolve")
eig = with_out(_eig_fn, "linalg.eig")
eigvals = with_out(_eigvals_fn, "linalg.eigvals")
for _fn, _name in ((cond, "cond"), (tensorinv, "tensorinv"), (tensorsolve, "tensorsolve"),
                   (eig, "eig"), (eigvals, "eigvals")):
    _fn.__name__ = _fn.__qualname__ = _name

__all__ = ["cond", "tensorinv", "tensorsolve", "vander", "eig", "eigvals", "svd_lowrank",
           "pca_lowrank"]
