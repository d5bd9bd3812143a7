"""Writes into a copy of a tensor: ``select_scatter``, ``slice_scatter``,
``diagonal_scatter`` (a region replaced by ``src``), ``index_put`` (advanced indices,
``accumulate`` adding repeats), ``put`` (flat indices), ``masked_scatter``, ``index_fill``,
``fill_diagonal_``, and the reductions ``scatter_reduce`` / ``index_reduce`` ('sum',
'prod', 'mean', 'amax', 'amin', with or without the old values).

Where an existing op does the write (``IndexPut`` for ``x[index] = v``) it is reused; the
region writes, the accumulating put and the scatter reductions are Primitives here, with
gradients as PyTorch defines them (a max/min gradient split evenly among ties; a product's
gradient exact when elements are zero).

>>> import ember
>>> ember.select_scatter(ember.zeros(2, 2), ember.ones(2), 0, 1)
tensor([[0., 0.],
        [1., 1.]])
"""
from __future__ import annotations

import warnings

import numpy as np

from .._creation import tensor, beside
from .._tensor import Tensor, _wrap_dim
from .._typing import Number, Sequence
from ..backend import dtypes, get_array_module
from ..backend.meta import is_meta
from ..autograd.batching import per_sample_under_vmap
from .primitive import Primitive, unbroadcast
from . import shape as S
from .indexing import (BasicIndex, AdvancedIndex, IndexPut, Gather, ScatterAdd, IndexGrad,
                       add_rows, _row_index,
                       normalize_index, first_out_of_range, _check_gather, _grid, _nonempty,
                       _src_block, _broadcast_shape, _sizes_str,
                       _check_scatter_gather_range)
from .diagonals import Diagonal, _writable_diagonal, diagonal_dims


def _tensor_arg(value, name, arg, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


# ---- region writes: select_scatter, slice_scatter, diagonal_scatter ------------------------------
def _region(d, where):
    """The part of array ``d`` that ``where`` names: ("select" or "slice", a basic index
    tuple) or ("diagonal", offset, dim1, dim2)."""
    if where[0] == "diagonal":
        return _writable_diagonal(d, *where[1:])
    return d[where[1] + (Ellipsis,)]


def _take_region(t, where):
    if where[0] == "diagonal":
        return Diagonal.apply(t, *where[1:])
    return BasicIndex.apply(t, where[1])


class _RegionScatter(Primitive):
    """A copy of ``x`` with the region ``where`` holding ``src`` (cast to x's dtype)."""

    @staticmethod
    def forward(ctx, x, src, where):
        ctx.where, ctx.src_dtype = where, src.dtype
        out = x._data.copy()
        _region(out, where)[...] = src._data
        return out

    @staticmethod
    def backward(ctx, grad):
        gx = gs = None
        if ctx.needs_input_grad[0]:
            blank = Tensor._make(get_array_module(grad._data).zeros(
                _region(grad._data, ctx.where).shape, grad._data.dtype))
            gx = _REGION_OPS[ctx.where[0]].apply(grad, blank, ctx.where)
        if ctx.needs_input_grad[1]:
            gs = _take_region(grad, ctx.where)
            if gs.dtype is not ctx.src_dtype:
                gs = gs.to(ctx.src_dtype)
        return gx, gs, None


class SelectScatter(_RegionScatter):
    _backward_name = "SelectScatterBackward0"


class SliceScatter(_RegionScatter):
    _backward_name = "SliceScatterBackward0"


class DiagonalScatterInto(_RegionScatter):
    _backward_name = "DiagonalScatterBackward0"


_REGION_OPS = {"select": SelectScatter, "slice": SliceScatter, "diagonal": DiagonalScatterInto}


def _check_region(src, target_shape):
    if tuple(src.shape) != tuple(target_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_sizes_str(src.shape)}, slice size = {_sizes_str(target_shape)}")


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``.

    >>> import ember
    >>> ember.select_scatter(ember.zeros(2, 2), ember.ones(2), 1, 0)
    tensor([[1., 0.],
            [1., 0.]])
    """
    _tensor_arg(src, "select_scatter", "src", 2)
    target = S.select(input, dim, index)  # PyTorch's checks of dim and index
    _check_region(src, target.shape)
    dim = _wrap_dim(dim, input.dim())
    index = index + input.shape[dim] if index < 0 else index
    where = ("select", (slice(None),) * dim + (index,))
    return SelectScatter.apply(input, src, where)


def slice_index(input: Tensor, dim: int, start: int | None, end: int | None,
                step: int | None) -> tuple:
    """The index of ``aten::slice(input, dim, start, end, step)``: PyTorch's checks, and
    its clamping of out-of-range and negative bounds."""
    if input.dim() == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, input.dim())
    if step is None:
        step = 1
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = input.shape[dim]
    lo = 0 if start is None else start
    hi = size if end is None else end
    lo, hi = (lo + size if lo < 0 else lo), (hi + size if hi < 0 else hi)
    lo, hi = min(max(lo, 0), size), min(max(hi, lo, 0), size)
    return (slice(None),) * dim + (slice(lo, hi, step),)


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,
                  end: int | None = None, step: int = 1) -> Tensor:
    """A copy of ``input`` with ``input[start:end:step]`` along ``dim`` replaced by ``src``.

    >>> import ember
    >>> ember.slice_scatter(ember.zeros(4), ember.ones(2), start=1, end=3)
    tensor([0., 1., 1., 0.])
    """
    _tensor_arg(src, "slice_scatter", "src", 2)
    index = slice_index(input, dim, start, end, step)
    where = ("slice", index)
    target = list(input.shape)
    target[len(index) - 1] = len(range(index[-1].start, index[-1].stop, index[-1].step))
    _check_region(src, target)
    return SliceScatter.apply(input, src, where)


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    """A copy of ``input`` with its ``offset`` diagonal in dims ``dim1``, ``dim2`` replaced
    by ``src`` (shaped as ``input.diagonal(offset, dim1, dim2)``).

    >>> import ember
    >>> ember.diagonal_scatter(ember.zeros(2, 2), ember.tensor([1., 2.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    _tensor_arg(src, "diagonal_scatter", "src", 2)
    n = input.dim()
    d1, d2 = diagonal_dims(n, offset, dim1, dim2)
    target = input._data.diagonal(offset, d1, d2).shape
    _check_region(src, target)
    return DiagonalScatterInto.apply(input, src, ("diagonal", offset, d1, d2))


# ---- index_put, put ------------------------------------------------------------------------------
class IndexPutAccumulate(Primitive):
    """A copy of ``x`` with ``values`` added at the advanced index (repeats accumulate)."""
    _backward_name = "IndexPutBackward0"
    complex_grad = True  # linear: the gradient is indexed

    @staticmethod
    def forward(ctx, x, values, index):
        ctx.index, ctx.v_shape = index, values._data.shape
        out = x._data.copy()
        xp = get_array_module(out)
        target = out[index].shape
        try:
            v = xp.broadcast_to(values._data, target)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape "
                               f"{_sizes_str(values._data.shape)} cannot be broadcast to "
                               f"indexing result of shape {_sizes_str(target)}") from None
        rows = _row_index(index)
        if rows is not None and out.ndim > 1:  # whole rows: the compiled add_rows, same bits
            add_rows(out, rows.reshape(-1), v.reshape((-1,) + out.shape[1:]))
        else:
            xp.add.at(out, index, v)
        return out

    @staticmethod
    def backward(ctx, grad):
        gv = None
        if ctx.needs_input_grad[1]:
            gv = unbroadcast(AdvancedIndex.apply(grad, ctx.index), ctx.v_shape)
        return grad, gv, None


def _as_integer_index(np_index, data):
    """Masks in an index tuple as their nonzero coordinates (``ufunc.at`` takes integers)."""
    xp = get_array_module(data)
    out = []
    for item in np_index:
        if hasattr(item, "dtype") and item.dtype == np.bool_:
            out.extend(xp.nonzero(item))
        else:
            out.append(item)
    return tuple(out)


@per_sample_under_vmap
def index_put(input: Tensor, indices: Sequence[Tensor], values: Tensor,
              accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with ``input[indices] = values`` (``+=`` when ``accumulate``, where
    repeated indices add up); ``indices`` is a tuple of index tensors (long or bool).

    >>> import ember
    >>> ember.index_put(ember.zeros(3), (ember.tensor([0, 0, 2]),), ember.tensor(1.),
    ...                 accumulate=True)
    tensor([2., 0., 1.])
    """
    if not isinstance(indices, (list, tuple)):
        raise TypeError(f"index_put(): argument 'indices' (position 2) must be tuple of "
                        f"Tensors, not {type(indices).__name__}")
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(t).__name__}")
    _tensor_arg(values, "index_put", "values", 3)
    if not indices:
        raise RuntimeError("index_put(): at least one index tensor is needed")
    used = sum(t.dim() if t.dtype in (dtypes.bool_, dtypes.uint8) else 1 for t in indices)
    if used > input.dim():
        raise IndexError(f"too many indices for tensor of dimension {input.dim()} (got {used})")
    if values.dtype is not input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype.scalar_name} for the destination and "
                           f"{values.dtype.scalar_name} for the source.")
    dtypes.refuse_limited_unsigned(input._data.dtype, "index_put")
    if len(indices) == 1 and indices[0].dtype is dtypes.uint8 and values.numel() == 1 \
            and not accumulate:  # PyTorch takes its masked_fill_ path, which refuses bytes
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")
    np_index, _ = normalize_index(tuple(indices), input._data.shape, input._data)
    if accumulate:
        return IndexPutAccumulate.apply(input, values, _as_integer_index(np_index, input._data))
    return IndexPut.apply(input, values, np_index)


@per_sample_under_vmap
def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """A copy of ``input`` with its elements at the flat ``index`` (as if ``input`` were 1-D;
    negative counts from the end) set to ``source`` (added when ``accumulate``).

    >>> import ember
    >>> ember.put(ember.zeros(2, 2), ember.tensor([0, -1]), ember.tensor([1., 2.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    _tensor_arg(index, "put", "index", 2)
    _tensor_arg(source, "put", "source", 3)
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {input.dtype.scalar_name} and source.dtype = "
                           f"{source.dtype.scalar_name}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")
    dtypes.refuse_limited_unsigned(input._data.dtype, "take_put_cpu")
    numel = input.numel()
    if numel == 0 and index.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    idx = index._data.reshape(-1)
    if not is_meta(idx) and idx.size:
        bad = (idx >= numel) | (idx < -numel)
        if bad.any():
            raise IndexError(f"out of range: tried to access index {int(idx[bad][0])} on a "
                             f"tensor of {numel} elements.")
    flat_index = (idx % numel if numel else idx,)
    flat, values = S.reshape(input, (-1,)), S.reshape(source, (-1,))
    if accumulate:
        flat = IndexPutAccumulate.apply(flat, values, flat_index)
    else:
        flat = IndexPut.apply(flat, values, flat_index)
    return S.reshape(flat, tuple(input.shape))


# ---- masked_scatter, index_fill, fill_diagonal_ --------------------------------------------------
@per_sample_under_vmap
def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """A copy of ``input`` (broadcast with ``mask``) whose elements where ``mask`` is True
    take ``source``'s elements in order (row-major).

    >>> import ember
    >>> ember.masked_scatter(ember.zeros(4), ember.tensor([True, False, True, False]),
    ...                      ember.tensor([1., 2., 3.]))
    tensor([1., 0., 2., 0.])
    """
    _tensor_arg(mask, "masked_scatter", "mask", 2)
    _tensor_arg(source, "masked_scatter", "source", 3)
    dtypes.refuse_limited_unsigned(input._data.dtype, "masked_scatter")
    if mask.dtype is not dtypes.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype.scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{input.dtype.scalar_name} and {source.dtype.scalar_name}")
    shape = _broadcast_shape(mask.shape, input.shape)
    if tuple(input.shape) != tuple(shape):
        input = S.expand(input, shape)
    m = mask._data
    xp = get_array_module(m)
    if tuple(m.shape) != tuple(shape):
        m = xp.broadcast_to(m, shape)
    count = int(m.sum()) if not is_meta(m) else 0
    if source.numel() < count:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    values = S.narrow(S.reshape(source, (-1,)), 0, 0, count)
    return IndexPut.apply(input, values, (m,))


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """``masked_scatter`` in place: the mask broadcasts to ``self``, which keeps its shape.

    >>> import ember
    >>> ember.zeros(2, 2).masked_scatter_(ember.tensor([True, False]), ember.tensor([1., 2.]))
    tensor([[1., 0.],
            [2., 0.]])
    """
    _tensor_arg(mask, "masked_scatter_", "mask", 1)
    dtypes.refuse_limited_unsigned(self._data.dtype, "masked_scatter")
    if tuple(mask.shape) != tuple(self.shape):
        S.expand(mask, tuple(self.shape))  # PyTorch's error for a mask that does not fit
    return self._inplace(masked_scatter, mask, source)


def _fill_value(value, dt, name):
    """A Scalar fill value as the kernel of dtype ``dt`` reads it."""
    if isinstance(value, complex) and not dt.is_complex:
        raise RuntimeError(f"{name}(): Converting complex Scalar to non-complex type is not "
                           f"supported")
    if dt is dtypes.bool_:
        return bool(value)
    if not (dt.is_floating_point or dt.is_complex):
        return int(value)
    return value


@per_sample_under_vmap
def index_fill(input: Tensor, dim: int, index: Tensor, value: Tensor | Number) -> Tensor:
    """A copy of ``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a
    number or a 0-d tensor, whose gradient sums those slices').

    >>> import ember
    >>> ember.index_fill(ember.zeros(2, 3), 1, ember.tensor([0, 2]), 5.)
    tensor([[5., 0., 5.],
            [5., 0., 5.]])
    """
    _tensor_arg(index, "index_fill", "index", 3)
    if index.dtype is not dtypes.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    dtypes.refuse_limited_unsigned(input._data.dtype, "index_fill_cpu")
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
        value = value if value.dtype is input.dtype else value.to(input.dtype)
    else:
        value = _fill_value(value, input.dtype, "index_fill_")
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    dim = _wrap_dim(dim, input.dim())
    work = S.reshape(input, (1,)) if input.dim() == 0 else input
    size = work.shape[dim]
    idx = index._data.reshape(-1)
    if not is_meta(idx) and idx.size:
        bad = (idx >= size) | (idx < -size)
        if bad.any():
            raise IndexError(f"index {int(idx[bad][0])} is out of bounds for dimension {dim} "
                             f"with size {size}")
    if not is_meta(idx) and idx.size:
        # each slice once: a 0-d value's gradient sums the filled slices, not the indices
        idx = get_array_module(idx).unique(idx % size)
    out = IndexPut.apply(work, value, (slice(None),) * dim + (idx,))
    return S.reshape(out, ()) if input.dim() == 0 else out


class _FillAt(IndexPut):
    _backward_name = "FillBackward1"


def fill_diagonal_(self: Tensor, fill_value: Number, wrap: bool = False) -> Tensor:
    """Fill the main diagonal in place (all dims equal when more than two; a tall matrix
    with ``wrap`` starts again every ``cols + 1`` rows).

    >>> import ember
    >>> ember.zeros(2, 3).fill_diagonal_(1.)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    shape = tuple(self.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    value = _fill_value(fill_value, self.dtype, "fill_diagonal_")
    numel = self.numel()
    if len(shape) == 2:
        step = shape[1] + 1
        stop = numel if wrap else min(shape) * shape[1]
    else:
        step = sum(shape[0] ** k for k in range(len(shape)))
        stop = numel
    # positions in row-major order from sizes alone: host arithmetic, then moved
    flat = np.arange(0, stop, step, dtype=np.int64) if numel else np.zeros(0, np.int64)
    coords = tuple(beside(tensor(c), self)._data for c in np.unravel_index(flat, shape))
    return self._inplace(lambda s: _FillAt.apply(s, value, coords))


# ---- scatter_reduce, index_reduce ----------------------------------------------------------------
_REDUCES = ("sum", "prod", "mean", "amax", "amin")


def _identity(reduce, np_dtype):
    """The value a position starts from when its old value is left out."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    highest = reduce == "amin"
    if np_dtype == np.bool_:
        return highest
    if np_dtype.kind in "iu":
        info = np.iinfo(np_dtype)
        return info.max if highest else info.min
    return np.inf if highest else -np.inf


_ALIASES = {"max": "amax", "min": "amin"}
_UFUNCS = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum",
           "amin": "minimum"}


def _reduce_at(ufunc_name, out, grid, values):
    """``ufunc.at(out, grid, values)`` on the flattened (contiguous) ``out``: NumPy's
    unbuffered ufuncs have fast paths for one flat integer index, not for index tuples
    (maximum.at ~5x faster on a (20000, 64) scatter)."""
    xp = get_array_module(out)
    grid = xp.broadcast_arrays(*grid)
    flat = xp.ravel_multi_index(tuple(grid), out.shape).reshape(-1)
    values = xp.broadcast_to(values, grid[0].shape).reshape(-1)
    getattr(xp, ufunc_name).at(out.reshape(-1), flat, values)


class ScatterReduce(Primitive):
    """A copy of ``x`` with ``src`` reduced into the positions ``index`` names along ``dim``
    (``scatter_reduce``); ``include_self=False`` leaves the old values at those positions
    out."""
    _backward_name = "ScatterReduceBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, x, dim, index, src, reduce, include_self):
        _check_scatter_gather_range(index._data, x._data.shape, dim)
        d = x._data
        xp = get_array_module(d)
        out = d.copy()
        grid = _grid(_nonempty(index._data), dim)
        block = _src_block(src._data, index._data)
        ctx.dim, ctx.include_self, ctx.given = dim, include_self, reduce
        reduce = ctx.reduce = _ALIASES.get(reduce, reduce)
        ctx.src_shape = src._data.shape
        touched = None
        if not include_self or reduce == "mean":
            counts = xp.zeros(_nonempty(d).shape, xp.int64)
            _reduce_at("add", counts, grid, xp.ones((), xp.int64))
            touched = counts > 0
        if not include_self:
            _nonempty(out)[grid] = _identity(reduce, d.dtype)
        _reduce_at(_UFUNCS[reduce], _nonempty(out), grid, block)
        if reduce == "mean":
            counts = counts + 1 if include_self else xp.maximum(counts, 1)
            o = _nonempty(out)
            if d.dtype.kind in "fc" or d.dtype.kind == "V":
                o[...] = o / counts.astype(d.dtype)
            else:
                o[...] = xp.floor_divide(o, counts)
            ctx.counts = counts.reshape(d.shape)
        ctx.touched = touched.reshape(d.shape) if touched is not None else None
        ctx.save_for_backward(x, index, src)
        return out

    @staticmethod
    def backward(ctx, grad):
        if ctx.given != ctx.reduce:  # PyTorch computes 'max'/'min' but has no gradient for them
            raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               f"'amin' but got {ctx.given}.")
        x, index, src, result = ctx.saved_tensors
        gx, gs = _scatter_reduce_grads(ctx, grad, x, index, src, result)
        if gs is not None and tuple(gs.shape) != tuple(ctx.src_shape):
            gs = IndexGrad.apply(gs, ctx.src_shape, tuple(slice(0, s) for s in gs.shape), False)
        return (gx if ctx.needs_input_grad[0] else None), None, None, \
            (gs if ctx.needs_input_grad[3] else None), None, None


def _scatter_reduce_grads(ctx, grad, x, index, src, result):
    """PyTorch's gradients of ``scatter_reduce`` for (x, src): sum and mean pass the gradient
    through (mean divided by the counts), amax/amin split it evenly among the elements equal
    to the result, prod divides the result by the element, with zeros handled exactly."""
    dim, reduce, include_self = ctx.dim, ctx.reduce, ctx.include_self
    if tuple(src.shape) != tuple(index.shape):
        src = BasicIndex.apply(src, tuple(slice(0, s) for s in _nonempty(index._data).shape))

    def gather(t):
        return Gather.apply(t, dim, index)
    if reduce == "sum":
        gx, gs = grad, gather(grad)
    elif reduce == "mean":
        counts = Tensor._make(ctx.counts.astype(grad._data.dtype))
        gx = grad / counts
        gs = gather(gx)
    elif reduce == "prod":
        masked_self = x.masked_fill(x == 0, 1)
        others = ScatterReduce.apply(masked_self, dim, index, src, "prod", include_self)
        gx = grad * others / masked_self
        src_zero = src == 0
        zeros_at = gather(ScatterAdd.apply(x.new_zeros(x.shape), dim, index,
                                           src_zero.to(x.dtype)))
        single_zero = src_zero & (zeros_at == 1)
        without_zero = ScatterReduce.apply(x, dim, index, src.masked_fill(single_zero, 1),
                                           "prod", include_self)
        gs = gather(grad * without_zero).where(
            single_zero, gather(grad * result) / src.masked_fill(src_zero, 1))
    else:
        self_is = (x == result).to(grad.dtype)
        src_is = (src == gather(result)).to(grad.dtype)
        shared = grad / ScatterAdd.apply(self_is, dim, index, src_is)
        gx = self_is * shared
        gs = src_is * gather(shared)
    if not include_self:
        gx = gx.masked_fill(Tensor._make(ctx.touched), 0)
    return gx, gs


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    """A copy of ``input`` with each element of ``src`` reduced ('sum', 'prod', 'mean',
    'amax', 'amin') into the position ``index`` names along ``dim`` (as ``scatter``);
    ``include_self=False`` leaves out the old values at the positions written to.

    >>> import ember
    >>> ember.scatter_reduce(ember.ones(3), 0, ember.tensor([0, 0, 2]),
    ...                      ember.tensor([2., 3., 4.]), "amax", include_self=False)
    tensor([3., 1., 4.])
    """
    _tensor_arg(index, "scatter_reduce", "index", 3)
    _tensor_arg(src, "scatter_reduce", "src", 4)
    if reduce not in _REDUCES and reduce not in ("max", "min"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    dim = _check_gather(input, dim, index, "scatter_reduce", src)
    if index._data.size:
        dtypes.refuse_limited_unsigned(input._data.dtype, "scatter_gather_tensor_cpu" + (
            f"_reduce_{reduce}" if reduce in ("mean", "amax", "amin") else ""))
    if reduce == "mean" and input.dtype is dtypes.bool_:
        raise NotImplementedError("\"scatter_gather_tensor_cpu_reduce_mean\" not implemented "
                                  "for 'Bool'")
    return ScatterReduce.apply(input, dim, index, src, reduce, bool(include_self))


class IndexReduce(ScatterReduce):
    _backward_name = "IndexReduceBackward0"


_INDEX_REDUCE_WARNED = []


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True) -> Tensor:
    """A copy of ``input`` with each slice of ``source`` along ``dim`` reduced ('prod',
    'mean', 'amax', 'amin') into the slice ``index`` names (as ``index_add``);
    ``include_self=False`` leaves out the old values of the slices written to.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.index_reduce(ember.ones(2), 0, ember.tensor([0, 0]), ember.tensor([2., 3.]),
    ...                        "prod")
    tensor([6., 1.])
    """
    _tensor_arg(index, "index_reduce", "index", 3)
    _tensor_arg(source, "index_reduce", "source", 4)
    if not _INDEX_REDUCE_WARNED:  # PyTorch warns once per process
        _INDEX_REDUCE_WARNED.append(True)
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=3)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    dim = _check_index_reduce(input, dim, index, source)
    dtypes.refuse_limited_unsigned(input._data.dtype, "index_func_")
    x, src = input, source
    if x.dim() == 0:
        x, src = S.reshape(x, (1,)), S.reshape(src, (1,))
    view = [1] * src.dim()
    view[dim] = -1
    spread = S.expand(S.reshape(index, view), tuple(src.shape))
    out = IndexReduce.apply(x, dim, Tensor._make(spread._data), src, reduce, bool(include_self))
    return S.reshape(out, ()) if input.dim() == 0 else out


def _check_index_reduce(x, dim, index, source):
    """PyTorch's checks of index_reduce, in its order; returns the wrapped dim."""
    dim = _wrap_dim(dim, x.dim())
    if index.dim() > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {index.dtype.scalar_name} and size: "
                         f"{_sizes_str(index.shape)}")
    if index._data.dtype.kind not in "iu" or index._data.dtype == np.uint8:
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype.scalar_name}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_reduce_(): self ({x.dtype.scalar_name}) and source "
                           f"({source.dtype.scalar_name}) must have the same scalar type")
    xs, ss = tuple(x.shape), tuple(source.shape)
    same_rest = len(xs) == len(ss) and all(a == b for i, (a, b) in enumerate(zip(xs, ss))
                                           if i != dim)
    if not same_rest:
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_sizes_str(xs)} "
                           f"source.shape = {_sizes_str(ss)}")
    count = ss[dim] if ss else 1
    if count != index.numel():
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be "
                           f"equal to source.size(dim): ({count}), for dim: {dim}")
    if first_out_of_range(index._data, xs[dim] if xs else 1) is not None:
        raise IndexError("index out of range in self")
    return dim


__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "index_put", "put",
           "masked_scatter", "masked_scatter_", "index_fill", "fill_diagonal_", "scatter_reduce",
           "index_reduce"]
