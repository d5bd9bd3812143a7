"""``linalg.matrix_exp``, ``linalg.householder_product`` and ``geqrf`` (the Householder
form of QR that ``householder_product`` turns back into Q)."""
from __future__ import annotations

from .. import return_types as RT
from .._tensor import Tensor
from .._ops import matrix_exp as ME
from .._ops.decompositions import check_square
from ..backend import get_array_module


def _check_float_or_complex(x, name):
    if x._data.dtype.kind not in "fc":
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {x.dtype.scalar_name}")


def matrix_exp(A: Tensor) -> Tensor:
    """The exponential ``sum_k A^k / k!`` of each square matrix of ``A`` (batched).

    >>> import ember
    >>> ember.linalg.matrix_exp(ember.tensor([[0., 1.], [-1., 0.]])).round(decimals=4)
    tensor([[ 0.5403,  0.8415],
            [-0.8415,  0.5403]])
    """
    check_square(A, "linalg.matrix_exp")
    _check_float_or_complex(A, "linalg.matrix_exp")
    return ME.MatrixExp.apply(A)


def householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k``, ``H_i = I - tau_i v_i v_i^H``, where
    ``v_i`` is column ``i`` of ``A`` below the diagonal with a 1 on it (LAPACK's orgqr;
    ``A, tau`` as ``geqrf`` returns them). Differentiable in both arguments.

    >>> import ember
    >>> A = ember.tensor([[1., 2.], [3., 4.], [5., 6.]])
    >>> a, tau = ember.geqrf(A)
    >>> Q = ember.linalg.householder_product(a, tau)
    >>> ember.allclose(Q.mT @ Q, ember.eye(2), atol=1e-6)
    True
    """
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau.ndim < 1 or n < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype.scalar_name} does not match input "
                           f"dtype {A.dtype.scalar_name}")
    _check_float_or_complex(A, name)
    xp = get_array_module(A._data)
    # unit lower-trapezoidal reflector vectors, one per column
    vectors = A.tril(-1) + Tensor._make(xp.eye(m, n, dtype=A._data.dtype))
    q = Tensor._make(xp.broadcast_to(xp.eye(m, dtype=A._data.dtype),
                                     tuple(A.shape[:-2]) + (m, m)).copy())
    for i in range(tau.shape[-1]):
        v = vectors[..., :, i:i + 1]
        q = q - (q @ v) * tau[..., i, None, None] @ v.mH
    return q[..., :, :n]


def geqrf(input: Tensor) -> tuple[Tensor, Tensor]:
    """``(a, tau)``: LAPACK's geqrf, the QR decomposition in Householder form (R on and
    above the diagonal of ``a``, the reflectors below it). Not differentiable.

    >>> import ember
    >>> a, tau = ember.geqrf(ember.tensor([[3., 1.], [4., 2.]]))
    >>> a.diagonal().abs()
    tensor([5.0000, 0.4000])
    """
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if input._data.dtype.kind not in "fc":
        raise NotImplementedError(f'"geqrf_cpu" not implemented for '
                                  f"'{input.dtype.scalar_name}'")
    return RT.geqrf(*ME.Geqrf.apply(input))
