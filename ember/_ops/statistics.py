"""Running extremes and order statistics: ``cummax``/``cummin``, ``logcumsumexp``,
``nansum``/``nanmean``, ``median``/``nanmedian``, ``quantile``/``nanquantile``, ``aminmax``,
``kthvalue``, ``mode`` and ``msort`` (counting and histograms: ``statistics_counts``).

Values chosen from the input (running extremes, medians, k-th values, modes, quantiles) are
gathered from it by indices computed on the arrays, so their gradient is the gather's own
(it reaches the chosen element); the whole-tensor medians share it between equal elements,
as PyTorch does.

>>> import ember
>>> ember.quantile(ember.tensor([0., 1., 2., 3.]), 0.5)
tensor(1.5000)
"""
from __future__ import annotations

import math

import numpy as np

from .._tensor import Tensor, _wrap_dim
from .._creation import tensor as _tensor, beside
from .._typing import Sequence, dtype
from ..backend import dtypes, get_array_module
from ..backend.meta import is_meta
from ..autograd.batching import per_sample_under_vmap
from .primitive import Primitive
from .indexing import sort as _sort
from .. import return_types


def _not_implemented(kernel, t):
    return NotImplementedError(f'"{kernel}" not implemented for \'{t.dtype.scalar_name}\'')


def _is_float(t):
    return t.dtype.is_floating_point


def _cpp_number(v):
    """A double as C++ streams print it (``1``, ``2.5``, ``inf``, ``-nan``)."""
    if math.isnan(v):
        return "-nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


# ---- running extremes and log-sum-exp -------------------------------------------------------
def _running(input, dim, largest):
    d = input._data
    xp = get_array_module(d)
    if d.ndim == 0:
        return input.clone(), Tensor._make(xp.zeros((), xp.int64))
    dim = _wrap_dim(dim, d.ndim)
    if d.size == 0:
        return input.clone(), Tensor._make(xp.zeros(d.shape, xp.int64))
    dtypes.refuse_limited_unsigned(d.dtype, "cummax_cpu" if largest else "cummin_cpu")
    a = d.astype(xp.float32) if d.dtype.kind == "V" else d
    best = (xp.maximum if largest else xp.minimum).accumulate(a, axis=dim)
    hit = a == best  # ties pick the later element, as PyTorch; a NaN is "equal" to itself
    if a.dtype.kind in "fc":
        hit = hit | (xp.isnan(a) & xp.isnan(best))
    shape = [1] * d.ndim
    shape[dim] = d.shape[dim]
    positions = xp.arange(d.shape[dim], dtype=xp.int64).reshape(shape)
    idx = xp.maximum.accumulate(xp.where(hit, positions, 0), axis=dim)
    return input.gather(dim, Tensor._make(idx)), Tensor._make(idx)


@per_sample_under_vmap
def cummax(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """Running maximum along ``dim`` and where it was found (the later of equal elements;
    NaN, once met, stays).

    >>> import ember
    >>> ember.cummax(ember.tensor([1., 3., 2., 3.]), 0).indices
    tensor([0, 1, 1, 3])
    """
    return return_types.cummax(*_running(input, dim, True))


@per_sample_under_vmap
def cummin(input: Tensor, dim: int) -> tuple[Tensor, Tensor]:
    """Running minimum along ``dim`` and where it was found (the later of equal elements;
    NaN, once met, stays).

    >>> import ember
    >>> ember.cummin(ember.tensor([3., 1., 2., 1.]), 0).values
    tensor([3., 1., 1., 1.])
    """
    return return_types.cummin(*_running(input, dim, False))


class LogCumSumExp(Primitive):
    """``log(cumsum(exp(x)))`` along a dim, accumulated pairwise with ``logaddexp`` so no
    intermediate overflows. Gradient: ``sum_{j >= i} g_j exp(x_i - y_j)``, computed from the
    positive and negative parts of ``g`` in log space (the op itself, reversed). Complex
    inputs: the sums of ``conj(g_j) exp(x_i - y_j)`` in log space as they are, conjugated."""
    _backward_name = "LogcumsumexpBackward0"
    saves_output = True
    complex_grad = True

    @staticmethod
    def forward(ctx, x, dim):
        dtypes.refuse_float8(x._data.dtype, "logcumsumexp_out_cpu")
        d = x._data
        ctx.save_for_backward(x)
        ctx.dim = dim
        if d.ndim == 0:
            return d.copy()
        xp = get_array_module(d)
        if d.dtype.kind == "c":
            return _complex_logcumsumexp(xp, d.astype(xp.complex128), dim).astype(d.dtype)
        # accumulated in float64 (PyTorch's accumulation type on the CPU), rounded once
        return xp.logaddexp.accumulate(d.astype(xp.float64), axis=dim).astype(d.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if x.dim() == 0:
            return grad, None
        dim = ctx.dim
        # log|g| where g has the sign wanted, else the lowest finite number (not -inf: then
        # -inf - -inf would make NaN of a zero term, also in double backward)
        lowest = float(np.finfo(x._data.dtype).min) if x._data.dtype.kind in "fc" else -3e38
        if x._data.dtype.kind == "c":  # log conj(g) needs no sign split
            log_g = grad.conj().log().where(grad != 0, lowest)
            tail = LogCumSumExp.apply((log_g - out).flip(dim), dim).flip(dim)
            return (x + tail).exp().conj(), None
        log_abs = grad.abs().log()

        def part(log_g):  # exp(x_i + log sum_{j >= i} exp(log g_j - y_j))
            tail = LogCumSumExp.apply((log_g - out).flip(dim), dim).flip(dim)
            return (x + tail).exp()
        return (part(log_abs.where(grad > 0, lowest))
                - part(log_abs.where(grad < 0, lowest))), None

    @staticmethod
    def jvp(ctx, args, tangents, out):
        # dy_j = sum_{i <= j} exp(x_i - y_j) dx_i, by parts of dx's sign in log space (the
        # rule from backward would differentiate log|g| at the zero it is given)
        x, dim = args[0], ctx.dim
        tx = tangents[0]
        if tx is None or x.dim() == 0:
            return tx
        lowest = float(np.finfo(x._data.dtype).min) if x._data.dtype.kind in "fc" else -3e38
        if x._data.dtype.kind == "c":  # holomorphic: log t as it is
            log_t = tx.to(x.dtype).log().where(tx != 0, lowest)
            return (LogCumSumExp.apply(x + log_t, dim) - out).exp()
        log_abs = tx.abs().log()

        def part(log_t):
            return (LogCumSumExp.apply(x + log_t, dim) - out).exp()
        return part(log_abs.where(tx > 0, lowest)) - part(log_abs.where(tx < 0, lowest))


LogCumSumExp.jvp.complex_ok = True  # its complex branch (forward_ad)


def _complex_logcumsumexp(xp, d, dim):
    """Complex ``log(cumsum(exp(d)))`` along ``dim``: ``logaddexp`` step by step, the term
    with the larger real part first (as ``trig.LogAddExp``; imaginary parts not wrapped)."""
    moved = xp.moveaxis(d, dim, 0)
    out = xp.empty_like(moved)
    if moved.shape[0]:
        acc = out[0] = moved[0]
        for k in range(1, moved.shape[0]):
            first = acc.real >= moved[k].real
            high, low = xp.where(first, acc, moved[k]), xp.where(first, moved[k], acc)
            acc = out[k] = high + xp.log1p(xp.exp(low - high))
    return xp.moveaxis(out, 0, dim)


def logcumsumexp(input: Tensor, dim: int) -> Tensor:
    """``log(cumsum(exp(input), dim))`` computed without overflow.

    >>> import ember
    >>> ember.logcumsumexp(ember.tensor([-1000., 0., 1000.]), 0)
    tensor([-1000.,     0.,  1000.])
    """
    if not _is_float(input) and not input.dtype.is_complex:
        raise _not_implemented("logcumsumexp_out_cpu", input)
    dim = _wrap_dim(dim, input.dim()) if input.dim() else _wrap_dim(dim, 1)
    return LogCumSumExp.apply(input, dim)


# ---- reductions that skip NaN ---------------------------------------------------------------
class NanToZero(Primitive):
    """NaN replaced by 0; the gradient is multiplied by "not NaN" (so an infinite gradient
    at a NaN gives NaN, as in PyTorch's nansum and nanmean)."""
    _backward_name = "NansumBackward0"

    @staticmethod
    def forward(ctx, x):
        d = x._data
        xp = get_array_module(d)
        ctx.keep = ~xp.isnan(d)
        return xp.where(ctx.keep, d, xp.zeros((), d.dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad * Tensor._make(ctx.keep).to(grad.dtype)


def nansum(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
           dtype: dtype | None = None) -> Tensor:
    """``sum`` with NaN counted as zero (whose gradient is zero).

    >>> import ember
    >>> ember.nansum(ember.tensor([1., float('nan'), 3.]))
    tensor(4.)
    """
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x = NanToZero.apply(input) if _is_float(input) else input
    if dim is None:
        dim = ()
    return x.sum(dim, keepdim, dtype=dtype)


def nanmean(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
            dtype: dtype | None = None) -> Tensor:
    """``mean`` of the elements that are not NaN (NaN where all are).

    >>> import ember
    >>> ember.nanmean(ember.tensor([1., float('nan'), 3.]))
    tensor(2.)
    """
    if not (_is_float(input) or input.dtype.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype.scalar_name}")
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"nanmean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {dtype.scalar_name}")
    count = input.isnan().logical_not().sum(() if dim is None else dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


# ---- order statistics -----------------------------------------------------------------------
class _Evenly(Primitive):
    """A value chosen from ``x`` (given as an array) whose gradient is shared evenly by the
    elements equal to it (the NaNs, when it is NaN): the whole-tensor median's."""
    _backward_name = "MedianBackward0"

    @staticmethod
    def forward(ctx, x, value):
        ctx.save_for_backward(x)
        ctx.value = value
        return value

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        value = Tensor._make(ctx.value)
        hit = x.isnan() if value.isnan().item() else x == value
        hit = hit.to(grad.dtype)
        return grad * hit / hit.sum(), None


def _check_sortable(input, kernel):
    if input.dtype is dtypes.bool_ or input.dtype.is_complex:
        raise _not_implemented(kernel, input)


def _median_all(input, ignore_nan):
    _check_sortable(input, "median_cpu")
    d = input._data
    xp = get_array_module(d)
    if d.size:
        dtypes.refuse_limited_unsigned(d.dtype, "median_cpu")
    if d.size == 0:  # NaN, still part of the graph
        value = xp.asarray(math.nan if input.dtype.is_floating_point else 0, d.dtype)
        return _Evenly.apply(input, value)
    if is_meta(d):
        return _Evenly.apply(input, xp.empty((), d.dtype))
    flat = xp.sort(d.reshape(-1).astype(xp.float32) if d.dtype.kind == "V" else d.reshape(-1))
    n = flat.shape[0]
    nan_count = int(xp.isnan(flat).sum()) if flat.dtype.kind == "f" else 0
    if ignore_nan:
        k = max((n - nan_count - 1) // 2, 0)
    else:
        k = n - nan_count if nan_count else (n - 1) // 2
    return _Evenly.apply(input, flat[k].astype(d.dtype))


def _selection_dim(input, dim, name):
    """``dim`` wrapped, with PyTorch's error for an empty reduced dim."""
    d = input._data
    if d.ndim == 0:
        return _wrap_dim(dim, 1)
    dim = _wrap_dim(dim, d.ndim)
    if d.shape[dim] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")
    return dim


def _stable_order(d, dim):
    """Indices sorting ``d`` along ``dim``, NaN last, equal elements in their order."""
    xp = get_array_module(d)
    a = d.astype(xp.float32) if d.dtype.kind == "V" else d
    return xp.argsort(a, axis=dim, kind="stable"), a


def _pick(input, dim, keepdim, position, cls):
    """The element at ``position`` (an array broadcast over the reduced dim, kept size 1)
    of each slice's stable ascending order, as (values, indices)."""
    d = input._data
    xp = get_array_module(d)
    if d.ndim == 0:
        return cls(input.clone(), Tensor._make(xp.zeros((), xp.int64)))
    order, _ = _stable_order(d, dim)
    idx = xp.take_along_axis(order, position, dim).astype(xp.int64)
    index = Tensor._make(idx)
    values = input.gather(dim, index)
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return cls(values, index)


def _median_dim(input, dim, keepdim, ignore_nan, cls):
    _check_sortable(input, "median_out")
    dim = _selection_dim(input, dim, "median")
    d = input._data
    dtypes.refuse_limited_unsigned(d.dtype, "median_out")
    if d.ndim == 0 or d.size == 0:
        return _pick(input, dim, keepdim, None, cls) if d.ndim == 0 else \
            cls(*_empty_pair(input, dim, keepdim))
    xp = get_array_module(d)
    n = d.shape[dim]
    a = d.astype(xp.float32) if d.dtype.kind == "V" else d
    nan_count = xp.isnan(a).sum(axis=dim, keepdims=True) if a.dtype.kind == "f" else \
        xp.zeros(_kept(d.shape, dim), xp.int64)
    if ignore_nan:
        position = xp.maximum((n - nan_count - 1) // 2, 0)
    else:
        position = xp.where(nan_count > 0, n - nan_count, (n - 1) // 2)
    return _pick(input, dim, keepdim, position.astype(xp.int64), cls)


def _kept(shape, dim):
    return tuple(1 if i == dim else s for i, s in enumerate(shape))


def _empty_pair(input, dim, keepdim):
    """(values, indices) of a selection over a non-empty dim of an empty tensor: empty, the
    values still part of the graph."""
    values = input.narrow(dim, 0, 1)
    xp = get_array_module(input._data)
    index = Tensor._make(xp.zeros(values.shape, xp.int64))
    if not keepdim:
        values, index = values.squeeze(dim), index.squeeze(dim)
    return values, index


@per_sample_under_vmap
def median(input: Tensor, dim: int | None = None, keepdim: bool = False
           ) -> Tensor | tuple[Tensor, Tensor]:
    """The lower of the two middle values (NaN if there is one); with ``dim``,
    (values, indices) along it.

    >>> import ember
    >>> ember.median(ember.tensor([4., 1., 3., 2.]))
    tensor(2.)
    """
    if dim is None:
        return _median_all(input, False)
    return _median_dim(input, dim, keepdim, False, return_types.median)


@per_sample_under_vmap
def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False
              ) -> Tensor | tuple[Tensor, Tensor]:
    """``median`` of the elements that are not NaN (NaN where all are).

    >>> import ember
    >>> ember.nanmedian(ember.tensor([1., float('nan'), 3., 2.]))
    tensor(2.)
    """
    if dim is None:
        return _median_all(input, True)
    return _median_dim(input, dim, keepdim, True, return_types.nanmedian)


@per_sample_under_vmap
def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False
             ) -> tuple[Tensor, Tensor]:
    """The ``k``-th smallest element along ``dim`` (NaN counts as the largest) and its index.

    >>> import ember
    >>> ember.kthvalue(ember.tensor([3., 1., 2.]), 2)
    ember.return_types.kthvalue(
    values=tensor(2.),
    indices=tensor(2))
    """
    _check_sortable(input, "kthvalue_cpu")
    dim = _selection_dim(input, dim, "kthvalue")
    d = input._data
    size = d.shape[dim] if d.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    if d.ndim:
        dtypes.refuse_limited_unsigned(d.dtype, "kthvalue_cpu")
    if d.size == 0:
        return return_types.kthvalue(*_empty_pair(input, dim, keepdim))
    xp = get_array_module(d)
    position = xp.full(_kept(d.shape, dim), k - 1, xp.int64) if d.ndim else None
    return _pick(input, dim, keepdim, position, return_types.kthvalue)


@per_sample_under_vmap
def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> tuple[Tensor, Tensor]:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and the
    index of its last occurrence.

    >>> import ember
    >>> ember.mode(ember.tensor([3., 1., 2., 1., 3.]))
    ember.return_types.mode(
    values=tensor(1.),
    indices=tensor(3))
    """
    if input.dtype.is_complex:
        raise _not_implemented("mode", input)
    dim = _selection_dim(input, dim, "mode")
    d = input._data
    if d.ndim == 0:
        return _pick(input, dim, keepdim, None, return_types.mode)
    if d.size == 0:
        return return_types.mode(*_empty_pair(input, dim, keepdim))
    dtypes.refuse_limited_unsigned(d.dtype, "mode_cpu")
    xp = get_array_module(d)
    order, a = _stable_order(d, dim)
    s = xp.take_along_axis(a, order, dim)
    n = d.shape[dim]
    shape = [1] * d.ndim
    shape[dim] = n
    pos = xp.broadcast_to(xp.arange(n, dtype=xp.int64).reshape(shape), d.shape)
    first = xp.take(s, xp.arange(1), axis=dim)
    starts = xp.concatenate([xp.ones_like(first, dtype=bool),
                             xp.take(s, xp.arange(1, n), axis=dim)
                             != xp.take(s, xp.arange(n - 1), axis=dim)], axis=dim)
    ends = xp.concatenate([xp.take(starts, xp.arange(1, n), axis=dim),
                           xp.ones_like(first, dtype=bool)], axis=dim)
    run_start = xp.maximum.accumulate(xp.where(starts, pos, 0), axis=dim)
    length = xp.where(ends, pos - run_start + 1, 0)
    best = xp.argmax(length, axis=dim)  # the first longest run: the smallest value
    position = xp.expand_dims(best, dim).astype(xp.int64)
    return _pick(input, dim, keepdim, position, return_types.mode)


def msort(input: Tensor) -> Tensor:
    """``input`` sorted along its first dimension.

    >>> import ember
    >>> ember.msort(ember.tensor([[3., 1.], [2., 0.]]))
    tensor([[2., 0.],
            [3., 1.]])
    """
    return _sort(input, 0).values


# ---- quantiles ------------------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_q(input, q):
    """``q`` checked as PyTorch does, as a tensor of input's dtype (0-d or 1-D)."""
    if isinstance(q, Tensor):
        if q.dim() > 1:
            raise RuntimeError("quantile() q must be a scalar or 1D tensor")
        if q.dtype is not input.dtype:
            raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        qd = q._data
        if qd.size and not is_meta(qd) and not bool(((qd >= 0) & (qd <= 1)).all()):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
        return q.detach()
    if isinstance(q, bool) or not isinstance(q, (int, float)):
        raise TypeError(f"quantile(): argument 'q' must be Tensor or float, not "
                        f"{type(q).__name__}")
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_cpp_number(q)}")
    return beside(_tensor(float(q), dtype=input.dtype), input)


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    if not isinstance(q, Tensor) and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {_cpp_number(q)}")
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    q = _quantile_q(input, q)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"quantile(): argument 'dim' must be int, not {type(dim).__name__}")
    ndim = input.dim()
    if dim is None:
        x = input.reshape(-1)
    else:
        dim = _wrap_dim(dim, ndim) if ndim else _wrap_dim(dim, 1)
        x = input.movedim(dim, -1) if ndim else input.reshape(1)
    values = _sort(x, -1).values
    n = values.shape[-1]
    if ignore_nan:
        count = values.isnan().logical_not().sum(-1, keepdim=True)
        ranks = (q.reshape(-1) * (count - 1)).clamp_min(0)  # all NaN: rank 0, a NaN
    else:
        ranks = q.reshape(-1) * (n - 1)
        has_nan = values.isnan().any(-1, keepdim=True)
        ranks = ranks.masked_fill(has_nan, n - 1)  # a NaN makes the quantile NaN
    ranks = ranks.expand(*values.shape[:-1], ranks.shape[-1])
    if interpolation in ("lower", "higher", "nearest"):
        ranks = {"lower": ranks.floor, "higher": ranks.ceil, "nearest": ranks.round}[
            interpolation]()
        result = values.gather(-1, ranks.long())
    else:
        below = ranks.long()
        weights = ranks.new_full((), 0.5) if interpolation == "midpoint" else ranks - below
        above = ranks.ceil().long()
        result = _lerp(values.gather(-1, below), values.gather(-1, above), weights)
    result = result.movedim(-1, 0)  # the q dim first, the slices' dims after it
    if dim is None:
        shape = (1,) * ndim if keepdim else ()
    else:
        shape = tuple(1 if i == dim else s for i, s in enumerate(input.shape) if keepdim
                      or i != dim)
    return result.reshape(tuple(q.shape) + shape)


def _lerp(start, end, weight):
    """PyTorch's lerp, rounding as its kernel does: from ``start`` for weights below 0.5,
    from ``end`` above, each a fused multiply-add (float32 ones in float64, where the
    product is exact, rounded once)."""
    diff, rest = end - start, 1 - weight
    wide = start.dtype is dtypes.float32
    if wide:
        start, end, diff, weight, rest = (v.double() for v in (start, end, diff, weight, rest))
    out = (start + weight * diff).where(weight.abs() < 0.5, end - diff * rest)
    return out.float() if wide else out


def quantile(input: Tensor, q: float | Tensor, dim: int | None = None, keepdim: bool = False,
             *, interpolation: str = "linear") -> Tensor:
    """The ``q``-th quantiles of ``input`` (flattened, or along ``dim``); a 1-D ``q`` adds a
    first dimension. NaN in a slice makes its quantiles NaN.

    >>> import ember
    >>> ember.quantile(ember.tensor([0., 1., 2., 3.]), ember.tensor([0.25, 0.5]))
    tensor([0.7500, 1.5000])
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input: Tensor, q: float | Tensor, dim: int | None = None,
                keepdim: bool = False, *, interpolation: str = "linear") -> Tensor:
    """``quantile`` of the elements that are not NaN (NaN where all are).

    >>> import ember
    >>> ember.nanquantile(ember.tensor([0., float('nan'), 2.]), 0.5)
    tensor(1.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True)


# ---- extremes ----------------------------------------------------------------------------
def aminmax(input: Tensor, *, dim: int | None = None, keepdim: bool = False
            ) -> tuple[Tensor, Tensor]:
    """``(amin, amax)`` over ``dim`` (all elements when None).

    >>> import ember
    >>> ember.aminmax(ember.tensor([[1., 5.], [0., 2.]]))
    ember.return_types.aminmax(
    min=tensor(0.),
    max=tensor(5.))
    """
    if input.dtype.is_complex:
        raise _not_implemented("aminmax_cpu", input)
    dtypes.refuse_limited_unsigned(input._data.dtype, "aminmax_cpu")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dims = ()
    else:
        dims = _wrap_dim(dim, input.dim()) if input.dim() else _wrap_dim(dim, 1)
        if input.dim() and input.shape[dims] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {dims} to have non-zero size.")
    return return_types.aminmax(input.amin(dims, keepdim), input.amax(dims, keepdim))
