"""Declarations of more everyday surface (ops in ``_ops/surface_extra.py``): ``frombuffer``,
``empty_permuted``, ``hash_tensor``, ``Tensor.module_load``, and LAPACK's ``orgqr`` and
``ormqr``, composed here of ``linalg.householder_product`` (so differentiable, as PyTorch's
are)."""
from __future__ import annotations

from .._creation import zeros
from .._ops import surface_extra as _SX
from .._ops.shape import cat
from .._registry import op, method as _method
from .._tensor import Tensor
from ..linalg._matrix_functions import householder_product

frombuffer = op(_SX.frombuffer, method=False)
empty_permuted = op(_SX.empty_permuted, method=False)
hash_tensor = op(_SX.hash_tensor)


@op(out=True)
def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    """LAPACK's name for ``linalg.householder_product``: the first ``n`` columns of the
    product of the Householder reflectors in ``(input, tau)`` (as ``geqrf`` returns them).

    >>> import ember
    >>> a, tau = ember.geqrf(ember.tensor([[1., 2.], [3., 4.], [5., 6.]]))
    >>> ember.orgqr(a, tau).shape
    ember.Size([3, 2])
    """
    return householder_product(input, tau)


def _ormqr_checks(input, tau, other, left):
    name = "torch.ormqr"
    if input.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if other.ndim < 2:
        raise RuntimeError(f"{name}: other must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{name}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.ndim < 1 or tau.shape[-1] != min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{name}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    if tau.ndim != input.ndim - 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{input.ndim}")
    if other.ndim != input.ndim:
        raise RuntimeError(f"{name}: Expected other to have the same number of dimensions as "
                           f"input, but got other.ndim equal to {other.ndim} and input.ndim "
                           f"is equal to {input.ndim}")
    batch = tuple(input.shape[:-2])
    if tuple(tau.shape[:-1]) != batch:
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tuple(other.shape[:-2]) != batch:
        raise RuntimeError(f"{name}: Expected batch dimensions of other to be equal to "
                           f"input.shape[:-2], but got {list(other.shape[:-2])}")
    for label, t in (("tau", tau), ("other", other)):
        if t.dtype != input.dtype:
            raise RuntimeError(f"{name}: Expected input and {label} to have the same dtype, "
                               f"but input has dtype{input.dtype.scalar_name} and {label} "
                               f"has dtype {t.dtype.scalar_name}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(
            f"\"ormqr_cpu\" not implemented for '{input.dtype.scalar_name}'")


@op(out=True)
def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,
          transpose: bool = False) -> Tensor:
    """``other`` multiplied by the full ``m x m`` orthogonal matrix ``Q`` of the Householder
    reflectors in ``(input, tau)``: ``Q @ other`` (``left``) or ``other @ Q``, with ``Q``'s
    conjugate transpose when ``transpose``.

    >>> import ember
    >>> a, tau = ember.geqrf(ember.tensor([[1., 2.], [3., 4.], [5., 6.]]))
    >>> ember.ormqr(a, tau, ember.eye(3)).shape
    ember.Size([3, 3])
    """
    _ormqr_checks(input, tau, other, left)
    m, k = input.shape[-2], tau.shape[-1]
    reflectors = input[..., :k]
    if k < m:  # zero columns (and no reflector) make Q square: H_1 ... H_k is m x m
        pad = zeros(tuple(input.shape[:-2]) + (m, m - k), dtype=input.dtype,
                    device=input.device)
        reflectors = cat([reflectors, pad], -1)
    q = householder_product(reflectors, tau)
    if transpose:
        q = q.mH
    return q @ other if left else other @ q


@_method
def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """What ``Module.load_state_dict`` stores for this parameter or buffer when modules swap
    their tensors on load: ``other`` detached (``assign``) or ``self`` with ``other``'s values
    copied in, detached. Subclasses override it to control loading.

    >>> import ember
    >>> ember.zeros(2).module_load(ember.ones(2))
    tensor([1., 1.])
    """
    return other.detach() if assign else self.copy_(other).detach()


__all__ = ["frombuffer", "empty_permuted", "hash_tensor", "orgqr", "ormqr"]
