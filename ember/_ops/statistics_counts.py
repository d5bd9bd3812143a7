"""Counting and histograms: ``bincount``, ``histc``, ``histogram``, ``count_nonzero`` and
``isin``. None is differentiable; ``histc``/``histogram`` place elements as PyTorch's kernels
do (a linear position, the bin edges from its linspace; the last edge in the last bin).

>>> import ember
>>> ember.histc(ember.tensor([0., 1., 1., 2.]), bins=2)
tensor([1., 3.])
"""
from __future__ import annotations

import math

from .._tensor import Tensor
from .._typing import Number, Sequence
from ..backend import dtypes, get_array_module
from ..backend.meta import is_meta
from ..backend.ranges import linspace_array
from ..autograd.batching import per_sample_under_vmap
from .statistics import _cpp_number, _is_float, _not_implemented
from .. import return_types


# ---- counting and histograms ----------------------------------------------------------------
@per_sample_under_vmap  # the result's length depends on the values
def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each non-negative integer occurs in a 1-D integer tensor (the sum of
    ``weights`` at its positions when given).

    >>> import ember
    >>> ember.bincount(ember.tensor([1, 2, 2, 5]))
    tensor([0, 1, 2, 0, 0, 1])
    """
    d = input._data
    if input.dtype.is_floating_point or input.dtype.is_complex or d.dtype.kind == "b":
        raise _not_implemented("bincount_cpu", input)
    dtypes.refuse_limited_unsigned(d.dtype, "bincount_cpu")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if is_meta(d):  # the length depends on the values
        raise NotImplementedError("aten::bincount: attempted to run this operator with Meta "
                                  "tensors, but there was no fake impl or Meta kernel "
                                  "registered.")
    if d.ndim != 1 or (d.size and not is_meta(d) and int(d.min()) < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    xp = get_array_module(d)
    if weights is None:
        return Tensor._make(xp.bincount(d.astype(xp.int64), minlength=minlength).astype(xp.int64))
    w = weights._data
    if w.ndim != 1 or w.shape[0] != d.shape[0]:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    out = dtypes.float32 if weights.dtype is dtypes.float32 else dtypes.float64
    counts = xp.bincount(d.astype(xp.int64), weights=w.astype(xp.float64), minlength=minlength)
    return Tensor._make(counts.astype(out.np))


def _check_bins(bins):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")


def _data_range(d):
    """(min, max) of the data as Python floats; (0, 0) when there is none."""
    if d.size == 0 or is_meta(d):
        return 0.0, 0.0
    return float(d.min()), float(d.max())


@per_sample_under_vmap
def histc(input: Tensor, bins: int = 100, min: Number = 0, max: Number = 0) -> Tensor:
    """Counts of ``input``'s elements in ``bins`` equal-width bins over ``[min, max]``
    (the data's own range when both are equal); elements outside are not counted.

    >>> import ember
    >>> ember.histc(ember.tensor([1., 2., 1., 4.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    d = input._data
    if d.dtype.kind == "u" or d.dtype.itemsize == 1:  # PyTorch finds the range (aminmax)
        # or the edges (linspace) first
        dtypes.refuse_limited_unsigned(d.dtype, "aminmax_cpu" if float(min) == float(max)
                                       else "linspace_cpu")
    if not _is_float(input):
        raise _not_implemented("linspace_cpu" if d.dtype.kind == "b" else "histogram_cpu", input)
    _check_bins(bins)
    lo, hi = float(min), float(max)
    if lo == hi:
        lo, hi = _data_range(d)
    if lo == hi:  # a range of one value is widened by one on each side
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_cpp_number(lo)}, {_cpp_number(hi)}] is "
                           f"not finite")
    if lo > hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    xp = get_array_module(d)
    flat = d.reshape(-1)
    low, high = xp.asarray(lo, d.dtype), xp.asarray(hi, d.dtype)
    inside = (flat >= low) & (flat <= high)  # NaN is outside
    values = flat[inside] if not is_meta(d) else flat
    # PyTorch's position: (x - min) * bins / (max - min), truncated, computed in the data's dtype
    pos = ((values - low) * xp.asarray(bins, d.dtype) / (high - low)).astype(xp.int64)
    pos = xp.minimum(pos, bins - 1)
    return Tensor._make(xp.bincount(pos, minlength=bins).astype(d.dtype))


def _histogram_edges(input, bins, range):
    """The bin edges: ``bins`` itself when a tensor, else ``bins + 1`` evenly spaced over
    ``range`` (the data's range when None)."""
    d = input._data
    xp = get_array_module(d)
    if isinstance(bins, Tensor):
        if bins.dim() != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.dim()} dimensions in the bins tensor for dimension 0")
        if bins.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype {input.dtype.cpp_name}"
                               f" and bins for dimension 0 with dtype {bins.dtype.cpp_name}")
        _check_bins(bins.shape[0] - 1)
        return bins._data.copy()
    _check_bins(bins)
    if range is not None:
        lo, hi = (float(v) for v in range)
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_cpp_number(lo)} max {_cpp_number(hi)} for dimension 0")
    elif d.size:
        lo, hi = _data_range(d)
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        shown = ["nan" if math.isnan(v) else _cpp_number(v) for v in (lo, hi)]
        raise RuntimeError(f"torch.histogramdd: dimension 0's range [{shown[0]}, {shown[1]}] "
                           f"is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _linspace(xp, lo, hi, bins + 1, d.dtype)


def _linspace(xp, start, end, steps, np_dtype):
    """PyTorch's linspace in ``np_dtype``: the first half stepped up from ``start``, the
    second down from ``end`` (so both ends are exact), each point one fused multiply-add
    (for float32 done in float64, where the product is exact, and rounded once; float64's
    fused multiply-add emulated): ``ember.linspace``'s values."""
    return linspace_array(xp, float(start), float(end), steps, np_dtype)


@per_sample_under_vmap
def histogram(input: Tensor, bins: int | Tensor, *, range: Sequence[float] | None = None,
              weight: Tensor | None = None, density: bool = False) -> tuple[Tensor, Tensor]:
    """Histogram of ``input``'s elements: ``bins`` equal bins over ``range`` (the data's
    range by default) or the given bin edges; (hist, bin_edges). An element equal to the
    last edge falls in the last bin.

    >>> import ember
    >>> ember.histogram(ember.tensor([1., 2., 1.]), bins=2, range=(0., 2.)).hist
    tensor([0., 3.])
    """
    d = input._data
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise _not_implemented("histogramdd", input)
    edges = _histogram_edges(input, bins, range)
    xp = get_array_module(d)
    flat = d.reshape(-1)
    if weight is not None:
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor "
                               f"and weight tensor should have the same dtype, but got "
                               f"input({input.dtype.cpp_name}), and weight("
                               f"{weight.dtype.cpp_name})")
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have "
                               f"the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {[flat.size, 1]} and "
                               f"weight with shape {list(weight.shape)}")
    n = edges.shape[0] - 1
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    values = flat[inside] if not is_meta(d) else flat
    pos = xp.minimum(xp.searchsorted(edges, values, side="right") - 1, n - 1)
    w = None if weight is None else weight._data.reshape(-1)[inside].astype(xp.float64)
    hist = xp.bincount(pos.astype(xp.int64), weights=w, minlength=n).astype(d.dtype)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    return return_types.histogram(Tensor._make(hist), Tensor._make(edges))


def count_nonzero(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """How many elements are not zero (NaN counts), over ``dim`` (all when None).

    >>> import ember
    >>> ember.count_nonzero(ember.tensor([[1., 0.], [2., 0.]]), dim=0)
    tensor([2, 0])
    """
    if dim is None or dim == () or dim == []:  # (PyTorch's kernel over all elements)
        dtypes.refuse_limited_unsigned(input._data.dtype, "nonzero_count_cpu")
    return input.ne(0).sum(() if dim is None else dim, dtype=dtypes.int64)


# ---- membership -----------------------------------------------------------------------------
def _refuse_unsigned_isin(elements, test_elements):
    """PyTorch compares every pair when ``test_elements`` is small next to ``elements`` (its
    threshold): that kernel has no uint16/32/64 form (sorting, the other way, has)."""
    n, m = elements._data.size, test_elements._data.size
    if n and m < int(10.0 * n ** 0.145):
        dtypes.refuse_limited_unsigned(dtypes.result_type(elements, test_elements).np,
                                       "isin_default_cpu")


def _isin_kind(x):
    if isinstance(x, Tensor) and (x.dtype is dtypes.bool_ or x.dtype.is_complex):
        raise RuntimeError(f"Unsupported input type encountered for isin(): "
                           f"{x.dtype.scalar_name}")


@per_sample_under_vmap
def isin(elements: Tensor | Number, test_elements: Tensor | Number, *,
         assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` occurs in ``test_elements`` (``invert``: does
    not); either may be a number. ``assume_unique`` changes nothing in the result.

    >>> import ember
    >>> ember.isin(ember.tensor([1, 2, 3]), ember.tensor([2, 5]))
    tensor([False,  True, False])
    """
    if isinstance(elements, Tensor):
        dtypes.refuse_float8(elements._data.dtype, "isin_default_cpu")
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(
            f"isin() received an invalid combination of arguments - got "
            f"({type(elements).__name__}, {type(test_elements).__name__}), but expected one "
            f"of:\n * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, "
            f"bool invert = False, Tensor out = None)\n * (Number element, Tensor test_elements,"
            f" *, bool assume_unique = False, bool invert = False, Tensor out = None)\n * "
            f"(Tensor elements, Number test_element, *, bool assume_unique = False, bool invert "
            f"= False, Tensor out = None)\n")
    _isin_kind(elements)
    _isin_kind(test_elements)
    if isinstance(elements, Tensor) and isinstance(test_elements, Tensor) and \
            elements._data.dtype.kind == "u":
        _refuse_unsigned_isin(elements, test_elements)
    like = elements if isinstance(elements, Tensor) else test_elements
    xp = get_array_module(like._data)
    e = elements._data if isinstance(elements, Tensor) else xp.asarray(elements)
    t = test_elements._data if isinstance(test_elements, Tensor) else xp.asarray(test_elements)
    if e.dtype.kind == "V" or t.dtype.kind == "V":  # bfloat16: compared as float32 holds it
        e, t = e.astype(xp.float32), t.astype(xp.float32)
    return Tensor._make(xp.isin(e, t, invert=invert))
