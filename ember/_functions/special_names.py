"""erfc, igammac, logit, mvlgamma: ``ember.special``'s ops under their top-level names."""
from __future__ import annotations

import builtins
import math

from .._creation import beside, tensor
from .._ops import special_functions as _SPF
from .._registry import binary, op, unary
from .._tensor import Tensor
from ..backend import dtypes
from .core import where

erfc = unary(_SPF.Erfc, "erfc", inplace=True)
igammac = binary(_SPF.Igammac, "igammac", inplace=True)


@op(inplace=True, out=True)
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, p clamped to [eps, 1 - eps] when ``eps`` is given (integers give
    the default float dtype; the gradient is NaN outside [0, 1] when no eps clamps).

    >>> import ember
    >>> ember.logit(ember.tensor([0.5, 0.0]))
    tensor([0., -inf])
    """
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"logit_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    x = input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    result = x.log() - (-x).log1p()
    if eps is None and result.requires_grad:  # PyTorch's gradient is NaN outside [0, 1]
        outside = ((x < 0) | (x > 1)).detach()
        nan = beside(tensor(float("nan"), dtype=result.dtype), result)
        result = result + x * where(outside, nan, 0.0)
    return result


def _mvlgamma_method(self: Tensor, p: int) -> Tensor:
    return mvlgamma(self, p)


@op(method=_mvlgamma_method, inplace=True, out=True)
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p`` (``special.multigammaln``).

    >>> import ember
    >>> ember.mvlgamma(ember.tensor([2.0]), 1)
    tensor([0.])
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if input.dtype.is_complex:  # (PyTorch's kernel fails where it makes the offsets)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    x = input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())
    offsets = beside(tensor([-0.5 * k for k in builtins.range(p)], dtype=x.dtype), x)
    return (x.unsqueeze(-1) + offsets).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


__all__ = ["erfc", "igammac", "logit", "mvlgamma"]
