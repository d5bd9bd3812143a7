"""``make_tensor``: a tensor of random values for tests, PyTorch's ranges per dtype.

The numbers come from ember's random Generator (``ember.manual_seed`` repeats them); they
are not PyTorch's numbers.

>>> import ember
>>> from ember.testing import make_tensor
>>> make_tensor(2, 3, dtype=ember.int64, device="cpu", low=0, high=1)
tensor([[0, 0, 0],
        [0, 0, 0]])
"""
from __future__ import annotations

import collections.abc
import math
import warnings

from .._creation import empty, randint
from .._functions import view_as_real
from ..backend import dtypes

__all__ = ["make_tensor"]

_INTEGRAL = frozenset(("uint8", "int8", "int16", "int32", "int64"))
_FLOATING = frozenset(("float16", "bfloat16", "float32", "float64"))
_COMPLEX = frozenset(("complex64", "complex128"))


def _bounds(low, high, dtype, lowest, highest_exclusive, default_low, default_high):
    """``low`` and ``high`` checked and clamped to what ``dtype`` holds (integers: ceiled,
    the high end being exclusive)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dtype.name in _FLOATING | _COMPLEX:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or "
                      "complex types is deprecated since 2.1 and will be removed in 2.3. "
                      "Use `torch.full(...)` instead.", FutureWarning, stacklevel=3)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest_exclusive:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), "
                         f"but {dtype} only supports [{lowest}, {highest_exclusive})")
    low = min(max(low, lowest), highest_exclusive)
    high = min(max(high, lowest), highest_exclusive)
    if dtype.name in _INTEGRAL or dtype is dtypes.bool_:
        return math.ceil(low), math.ceil(high)
    return low, high


def _uniform(t, low, high, largest):
    # uniform_ needs high - low to be finite in t's dtype: draw half the range, then double
    if high - low >= largest:
        return t.uniform_(low / 2, high / 2).mul_(2)
    return t.uniform_(low, high)


def _draw(shape, dtype, device, low, high):
    name = getattr(dtype, "name", None)
    if dtype is dtypes.bool_:
        low, high = _bounds(low, high, dtype, 0, 2, 0, 2)
        return randint(low, high, shape, device=device, dtype=dtype)
    if name in _INTEGRAL:
        info = dtypes.iinfo(dtype)
        # randint can't reach int64's largest value (its bounds are int64 themselves)
        top = info.max + (1 if dtype is not dtypes.int64 else 0)
        low, high = _bounds(low, high, dtype, info.min, top, -9, 10)
        return randint(low, high, shape, device=device, dtype=dtype)
    if name in _FLOATING | _COMPLEX:
        info = dtypes.finfo(dtype.to_real())
        low, high = _bounds(low, high, dtype, info.min, info.max, -9, 9)
        result = empty(shape, device=device, dtype=dtype)
        _uniform(view_as_real(result) if dtype.is_complex else result, low, high, info.max)
        return result
    raise TypeError(f"The requested dtype '{dtype}' is not supported by "
                    "torch.testing.make_tensor().")


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A tensor of ``shape`` (sizes, or one sequence of them) with values drawn uniformly
    from ``[low, high)``: by default ``[-9, 9)`` for floating and complex dtypes (each part),
    ``[-9, 10)`` for integers (clamped to the dtype: ``uint8`` from 0), ``False``/``True``
    for bool; bounds beyond the dtype's range are clamped, integer ones ceiled.
    ``noncontiguous=True`` returns a non-contiguous view (every other element of a tensor
    twice as long in the last dimension; tensors of fewer than two elements stay
    contiguous), ``exclude_zero=True`` replaces zeros by 1 (integers, bool) or the dtype's
    ``tiny``, ``requires_grad`` is for floating and complex dtypes only.

    >>> import ember
    >>> from ember.testing import make_tensor
    >>> t = make_tensor(3, 4, dtype=ember.float32, device="cpu", low=-1, high=1,
    ...                 noncontiguous=True)
    >>> t.shape, t.is_contiguous(), bool(((t >= -1) & (t < 1)).all())
    (ember.Size([3, 4]), False, True)
    """
    if len(shape) == 1 and isinstance(shape[0], collections.abc.Sequence):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError("The parameters `noncontiguous` and `memory_format` are mutually "
                         f"exclusive, but got noncontiguous={noncontiguous!r} and "
                         f"memory_format={memory_format!r}")
    integral = dtype is dtypes.bool_ or getattr(dtype, "name", None) in _INTEGRAL
    if requires_grad and integral:
        raise ValueError("`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dtype!r}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice as long, so that the view skips values actually drawn
        shape = (*shape[:-1], 2 * shape[-1])
    result = _draw(shape, dtype, device, low, high)
    if noncontiguous:
        result = result[..., 1::2]  # from 1: an offset view, too
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if integral else dtypes.finfo(dtype.to_real()).tiny
    if not integral:
        result.requires_grad = requires_grad
    return result
