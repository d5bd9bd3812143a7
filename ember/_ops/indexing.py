"""Indexing: ``x[...]`` (views for basic indices, copies for advanced ones),
``x[...] = v``, gather/scatter, index_select/index_add, masked_select,
take_along_dim, nonzero, sort, topk.

Gradients of gathers are scatters with ``np.add.at``, so repeated indices
accumulate (``x[[0, 0]].sum()`` gives 2 at index 0).
"""
from __future__ import annotations

import warnings

import numpy as np

from .._tensor import Tensor, _wrap_dim
from ..backend import get_array_module, broadcast_shapes, device_type_of, move_array, kernels
from ..backend.meta import is_meta
from ..backend.dtypes import is_float_np, refuse_limited_unsigned, refuse_float8, float8_e8m0fnu, \
    FLOAT8_NP
from ..backend.float8 import cast_float8
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.batching import per_sample_under_vmap, index_under_vmap
from .primitive import Primitive, unbroadcast
from .complex_ops import cj
from .. import return_types
from .._typing import Number


# ---- turning a Python index into a NumPy one ----------------------------------------------
def _index_array(t, data):
    """The array of index tensor ``t`` for indexing ``data``: CPU indices of a tensor on
    another device are copied there, as PyTorch does; indices on a device index only a
    tensor on that device."""
    d = t._data
    if is_float_np(d.dtype):
        raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    if type(d) is not type(data):
        src, dst = device_type_of(d), device_type_of(data)
        if src != dst and "meta" not in (src, dst):
            if src != "cpu":
                raise RuntimeError("indices should be either on cpu or on the same device as "
                                   f"the indexed tensor ({dst})")
            d = move_array(d, dst)
    return d.astype(bool) if d.dtype == np.uint8 else d


def normalize_index(index, shape, data):
    """(array index tuple, view class or None if advanced); PyTorch's errors for bad
    indices. The view class is named after the last op PyTorch would apply. Lists and
    NumPy arrays among the indices become arrays of ``data``'s module (``data`` is the
    array indexed)."""
    view_cls = AliasIndex
    if not isinstance(index, tuple):
        if type(index) is slice:  # PyTorch's single-slice fast path always slices
            view_cls = BasicIndex
        index = (index,)
    if range in map(type, index):  # a Python range indexes as the list of its values
        index = tuple(np.arange(i.start, i.stop, i.step) if type(i) is range else i
                      for i in index)
    out, basic, dim, adv = [], True, 0, 0
    consumed = sum(_dims_consumed(i) for i in index)
    for item in index:
        if isinstance(item, Tensor):
            item = _index_array(item, data)
            if item.dtype == np.bool_:
                _check_mask(item, shape, dim)
                dim += item.ndim
                adv += item.ndim
            else:
                _check_bounds(item, shape, dim, adv)
                dim += 1
                adv += 1
            basic = False
            out.append(item)
        elif isinstance(item, (list, np.ndarray)):
            arr = np.asarray(item)
            if is_float_np(arr.dtype):
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            if arr.dtype != np.bool_:
                _check_bounds(arr, shape, dim, adv)
            n = arr.ndim if arr.dtype == np.bool_ else 1
            dim += n
            adv += n
            basic = False
            out.append(get_array_module(data).asarray(arr))
        elif item is None:
            out.append(None)
            view_cls = UnsqueezeIndex
        elif item is Ellipsis:
            out.append(Ellipsis)
            dim += max(len(shape) - consumed, 0)
        elif isinstance(item, slice):
            if item.step is not None and int(item.step) <= 0:
                raise ValueError("step must be greater than zero")
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            out.append(item)
            if item != _FULL and item.indices(shape[dim]) != (0, shape[dim], 1):
                view_cls = BasicIndex
            dim += 1
        elif isinstance(item, bool):
            out.append(item)
            basic = False
        else:
            try:
                i = item.__index__()
            except (AttributeError, TypeError):
                raise IndexError(f"only integers, slices (`:`), ellipsis (`...`), None and long "
                                f"or byte Variables are valid indices (got "
                                f"{type(item).__name__})") from None
            if dim >= len(shape):
                raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
            size = shape[dim]
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {dim} with size "
                                 f"{size}")
            out.append(i)
            view_cls = SelectIndex
            dim += 1
    if dim > len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    return tuple(out), (view_cls if basic else None)


_FULL = slice(None)


def _dims_consumed(item):
    if item is None or item is Ellipsis or isinstance(item, bool):
        return 0
    if isinstance(item, (Tensor, list, np.ndarray)):
        arr = item._data if isinstance(item, Tensor) else np.asarray(item)
        return arr.ndim if arr.dtype in (np.bool_, np.uint8) and isinstance(item, Tensor) \
            or arr.dtype == np.bool_ else 1
    return 1


def _check_bounds(arr, shape, dim, adv):
    """``adv``: the position among the advanced indices, which PyTorch's message names."""
    if dim >= len(shape):
        raise IndexError(f"too many indices for tensor of dimension {len(shape)}")
    size = shape[dim]
    if arr.size and not is_meta(arr) and (arr.max() >= size or arr.min() < -size):
        bad = arr.max() if arr.max() >= size else arr.min()
        raise IndexError(f"index {bad} is out of bounds for dimension {adv} with size {size}")


def _check_mask(mask, shape, dim):
    for i, s in enumerate(mask.shape):
        if dim + i >= len(shape) or shape[dim + i] != s:
            raise IndexError(f"The shape of the mask [{', '.join(map(str, mask.shape))}] at "
                             f"index {i} does not match the shape of the indexed tensor "
                             f"[{', '.join(map(str, shape))}] at index {dim + i}")


# ---- x[index] ----------------------------------------------------------------------------
class BasicIndex(Primitive):
    """Ints, slices, None and Ellipsis: a view."""
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "SliceBackward0"
    is_view = True

    @staticmethod
    def forward(ctx, x, index):
        ctx.in_shape, ctx.index = x._data.shape, index
        if Ellipsis not in index:
            index = index + (Ellipsis,)  # always a view, even for all-int indices
        return x._data[index]

    @staticmethod
    def backward(ctx, grad):
        return IndexGrad.apply(grad, ctx.in_shape, ctx.index, False), None


class SelectIndex(BasicIndex):
    _backward_name = "SelectBackward0"


class UnsqueezeIndex(BasicIndex):
    _backward_name = "UnsqueezeBackward0"


class AliasIndex(BasicIndex):
    _backward_name = "AliasBackward0"


class AdvancedIndex(Primitive):
    """Index with integer arrays or masks: a copy."""
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, x, index):
        ctx.in_shape, ctx.index = x._data.shape, index
        return x._data[index]

    @staticmethod
    def backward(ctx, grad):
        return IndexGrad.apply(grad, ctx.in_shape, ctx.index, True), None


class IndexGrad(Primitive):
    """Zeros of ``shape`` with ``grad`` added at ``index`` (accumulating repeats)."""
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, grad, shape, index, accumulate):
        ctx.index = index
        ctx.advanced = accumulate
        xp = get_array_module(grad._data)
        out = xp.zeros(shape, grad._data.dtype)
        if accumulate:
            rows = _row_index(index)
            if rows is not None and out.ndim > 1:  # a gather of rows: add_rows, same bits
                add_rows(out, rows.reshape(-1), grad._data.reshape((-1,) + out.shape[1:]))
            else:
                xp.add.at(out, index, grad._data)
        else:
            out[index] = grad._data
        return out

    @staticmethod
    def backward(ctx, gg):
        cls = AdvancedIndex if ctx.advanced else BasicIndex
        return cls.apply(gg, ctx.index), None, None, None


def _row_index(index):
    """The integer array of an index that picks whole rows (``x[ids]``, ``x[ids, ...]``),
    else None."""
    if isinstance(index, tuple):
        if len(index) == 2 and index[1] is Ellipsis:
            index = index[0]
        elif len(index) == 1:
            index = index[0]
        else:
            return None
    kind = getattr(getattr(index, "dtype", None), "kind", None)
    return index if kind in ("i", "u") and getattr(index, "ndim", 0) >= 1 else None


@index_under_vmap
def getitem(x, index):
    np_index, view_cls = normalize_index(index, x._data.shape, x._data)
    if view_cls is not None:
        return view_cls.apply(x, np_index)
    return AdvancedIndex.apply(x, np_index)


class IndexPut(Primitive):
    """Out-of-place ``x[index] = value`` (``__setitem__`` runs it in place)."""
    _backward_name = "IndexPutBackward0"
    complex_grad = True  # linear: the gradient is masked and indexed

    @staticmethod
    def forward(ctx, x, value, index):
        ctx.index = index
        ctx.v_shape = value._data.shape if isinstance(value, Tensor) else None
        out = x._data.copy()
        v = value._data if isinstance(value, Tensor) else value
        if out.dtype.itemsize == 1 and out.dtype in FLOAT8_NP and \
                getattr(v, "dtype", None) != out.dtype:  # PyTorch's rounding, not NumPy's
            v = cast_float8(get_array_module(out).asarray(v, dtype="float32"), out.dtype)
        try:
            out[index] = v
        except ValueError:
            target = x._data[index].shape
            if _is_basic(index if isinstance(index, tuple) else (index,)):
                # PyTorch copies into the view: expand's message
                Tensor._make(get_array_module(out).asarray(v)).expand(target)
            shape = get_array_module(out).shape(v)
            raise RuntimeError(f"shape mismatch: value tensor of shape "
                               f"[{', '.join(map(str, shape))}] cannot be broadcast to "
                               f"indexing result of shape [{', '.join(map(str, target))}]") \
                from None
        return out

    @staticmethod
    def backward(ctx, grad):
        keep = get_array_module(grad._data).ones(grad._data.shape, grad._data.dtype)
        keep[ctx.index] = 0
        gx = grad * Tensor._make(keep)
        gv = None
        if ctx.v_shape is not None and ctx.needs_input_grad[1]:
            taken = grad[ctx.index] if not isinstance(ctx.index, tuple) else \
                (BasicIndex if _is_basic(ctx.index) else AdvancedIndex).apply(grad, ctx.index)
            gv = unbroadcast(taken, ctx.v_shape)
        return gx, gv, None


def _is_basic(index):
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice)) for i in index)


@index_under_vmap
def setitem(x, index, value):
    np_index, view_cls = normalize_index(index, x._data.shape, x._data)
    if view_cls is not None and _grad_state.enabled and (
            x._requires_grad or (isinstance(value, Tensor) and value._requires_grad)):
        # PyTorch writes through the view for a basic index: copy_/fill_ on x[index], so the
        # graph gets CopySlices (and a leaf its "view of a leaf" error), not IndexPut
        view = view_cls.apply(x, np_index)
        if isinstance(value, Tensor):
            while value.dim() > view.dim() and value.shape[0] == 1:
                value = value[0]  # PyTorch drops the value's leading 1-dims first
            view.copy_(value.expand(view.shape))  # expand: PyTorch's error for a bad shape
        else:
            view.fill_(value)
        return
    if view_cls is None and (x._data.dtype.kind == "u" or x._data.dtype.itemsize == 1):
        kernel = _setitem_kernel(index, value)
        refuse_limited_unsigned(x._data.dtype, kernel)
        if kernel == "index_put" and x._data.dtype == float8_e8m0fnu.np:
            refuse_float8(x._data.dtype, kernel)  # the one float8 type without index_put
    if not isinstance(value, Tensor):
        value = float(value) if isinstance(value, float) else value
    x._inplace(lambda s, v: IndexPut.apply(s, v, np_index), value)


def _setitem_kernel(index, value):
    """The kernel PyTorch runs for ``x[index] = value`` with an advanced index: a fill for a
    bool mask given one value, an index_put otherwise."""
    if isinstance(index, tuple) and len(index) == 1:
        index = index[0]
    one_value = not isinstance(value, Tensor) or value._data.size == 1
    if isinstance(index, Tensor) and index._data.dtype.kind == "b" and one_value:
        return "masked_fill"
    return "index_put"


# ---- range checks shared by every op that takes an index tensor ---------------------------
# NumPy wraps negative indices (and np.add.at/np.take/fancy indexing accept them), PyTorch
# does not: every primitive below checks its index array in its own forward, so the gradient
# ops built from them (gather <-> scatter_add, index_select <-> index_add) are covered too.
_AS_UNSIGNED = {np.dtype(t): np.dtype(u) for t, u in
                ((np.int64, np.uint64), (np.int32, np.uint32), (np.int16, np.uint16),
                 (np.int8, np.uint8))}


def first_out_of_range(idx, size):
    """The first entry (in C order) of integer array ``idx`` outside ``[0, size)``, or None.

    One reduction on the fast path: seen as unsigned, negative entries become huge, so the
    maximum alone tells whether every entry is in range."""
    if idx.size == 0 or is_meta(idx):  # meta indices have no values to check
        return None
    unsigned = idx.view(_AS_UNSIGNED[idx.dtype]) if idx.dtype in _AS_UNSIGNED else idx
    if unsigned.max() < size:
        return None
    flat = idx.reshape(-1)
    return int(flat[get_array_module(flat).argmax((flat < 0) | (flat >= size))])


def _check_scatter_gather_range(idx, shape, dim):
    size = shape[dim] if shape else 1
    bad = first_out_of_range(idx, size)
    if bad is not None:
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _check_index_select_range(idx, shape, dim):
    """PyTorch's CPU kernel has two paths with two messages: a batched copy for dim 1 of an
    n-d tensor (and for an empty one), a slice loop otherwise."""
    size = shape[dim] if shape else 1
    if len(shape) > 1:
        if idx.size == 0:
            return
        if size == 0:
            raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = first_out_of_range(idx, size)
    if bad is None:
        return
    if len(shape) > 1 and (dim == 1 or 0 in shape):
        raise RuntimeError(f"INDICES element is out of DATA bounds, id={bad} axis_dim={size}")
    raise IndexError("index out of range in self")


def _check_index_add_range(idx, shape, dim, alpha):
    """PyTorch's CPU kernel adds along the first or last dim of an n-d tensor as a scatter_add
    (int64 index, alpha 1), with scatter's message; other cases loop with IndexError. An empty
    n-d tensor is returned before any index is looked at."""
    if len(shape) > 1 and 0 in shape:
        return
    size = shape[dim] if shape else 1
    bad = first_out_of_range(idx, size)
    if bad is None:
        return
    if len(shape) > 1 and alpha == 1 and idx.dtype == np.int64 and dim in (0, len(shape) - 1):
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")
    raise IndexError("index out of range in self")


# ---- gather / scatter --------------------------------------------------------------------
def _grid(index, dim):
    """An index tuple addressing ``index``'s positions, with ``index`` along ``dim``."""
    xp = get_array_module(index)
    grids = list(xp.ix_(*[xp.arange(s) for s in index.shape]))
    grids[dim] = index
    return tuple(grids)


def _nonempty(a):
    """A 0-d array as a 1-element 1-d view: PyTorch's gather/scatter see 0-d as size 1."""
    return a.reshape(1) if a.ndim == 0 else a


def _src_block(src, index):
    """The leading ``index.shape`` block of ``src`` (which may be larger)."""
    return _nonempty(src)[tuple(slice(0, s) for s in _nonempty(index).shape)]


def _sizes_str(shape):
    return f"[{', '.join(map(str, shape))}]"


def _check_gather(x, dim, index, name, src=None):
    """dtype and shape checks of gather/scatter/scatter_add, in PyTorch's order (the index
    values are checked by the ops themselves)."""
    if index._data.dtype.kind not in "iu" or index._data.dtype == np.uint8:
        raise RuntimeError(f"{name.split('_')[0]}(): Expected dtype int32/int64 for index")
    src = src if isinstance(src, Tensor) else None
    if src is not None and src.dtype is not x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    dim = _wrap_dim(dim, x._data.ndim)
    if index._data.size == 0:
        return dim
    xs, ids = x._data.shape or (1,), index._data.shape or (1,)
    if len(ids) != len(xs):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as "
                           f"{'input' if name == 'gather' else 'self'} tensor")
    too_big = next((d for d, (i, s) in enumerate(zip(ids, xs)) if d != dim and i > s), None)
    if name == "gather":
        if too_big is not None:
            raise RuntimeError(f"Size does not match at dimension {too_big} expected index "
                               f"{_sizes_str(index.shape)} to be no larger than self "
                               f"{_sizes_str(x.shape)} apart from dimension {dim}")
        return dim
    tail = ""
    if src is not None:
        ss = src._data.shape
        if too_big is None:
            for d, i in enumerate(ids):
                if ss and d >= len(ss):
                    _wrap_dim(d, len(ss))  # PyTorch reads src.size(d): its IndexError
                if i > (ss[d] if ss else 1):
                    too_big = d
                    break
        if len(ss or (1,)) != len(ids):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        tail = f" and to be no larger size than src {_sizes_str(src.shape)}"
    if too_big is not None:
        raise RuntimeError(f"Expected index {_sizes_str(index.shape)} to be no larger than self "
                           f"{_sizes_str(x.shape)} apart from dimension {dim}{tail}")
    return dim


class Gather(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        _check_scatter_gather_range(index._data, x._data.shape, dim)
        ctx.in_shape, ctx.dim = x._data.shape, dim
        ctx.save_for_backward(index)  # an in-place change before backward is an error
        out = _nonempty(x._data)[_grid(_nonempty(index._data), dim)]
        return out.reshape(index._data.shape) if index._data.ndim == 0 else out

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        zeros = grad.new_zeros(ctx.in_shape)
        return ScatterAdd.apply(zeros, ctx.dim, index, grad), None, None


def gather(x: Tensor, dim: int, index: Tensor, sparse_grad: bool = False) -> Tensor:
    if sparse_grad:
        raise NotImplementedError("gather(): sparse_grad=True is not supported: ember has no "
                                  "sparse gradients")
    dim = _check_gather(x, dim, index, "gather")
    if index._data.size:
        if x._data.dtype.itemsize == 1:  # float8: a 1-d index takes PyTorch's other kernel
            refuse_float8(x._data.dtype, "gather_expanded_index" if index._data.ndim == 1
                          else "scatter_gather_tensor_cpu")
        refuse_limited_unsigned(x._data.dtype, "scatter_gather_tensor_cpu")
    return Gather.apply(x, dim, index)


class Scatter(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src):
        _check_scatter_gather_range(index._data, x._data.shape, dim)
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = x._data.copy()
        grid = _grid(_nonempty(index._data), dim)
        _nonempty(out)[grid] = _src_block(src._data, index._data) if isinstance(src, Tensor) \
            else src
        return out

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        gx = Scatter.apply(grad, ctx.dim, index, 0.0)
        gs = None
        if len(ctx.needs_input_grad) > 3 and ctx.needs_input_grad[3]:
            gs = Gather.apply(grad, ctx.dim, index)
        return gx, None, None, gs


class ScatterAdd(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, src):
        _check_scatter_gather_range(index._data, x._data.shape, dim)
        ctx.dim = dim
        ctx.src_shape = src._data.shape
        if src._requires_grad:  # only src's gradient reads the index (as PyTorch saves it)
            ctx.save_for_backward(index)
        out = x._data.copy()
        get_array_module(out).add.at(_nonempty(out), _grid(_nonempty(index._data), dim),
                                     _src_block(src._data, index._data))
        return out

    @staticmethod
    def backward(ctx, grad):
        gs = None
        if ctx.needs_input_grad[3]:
            index, = ctx.saved_tensors
            gs = Gather.apply(grad, ctx.dim, index)
            if gs._data.shape != ctx.src_shape:
                gs = IndexGrad.apply(gs, ctx.src_shape,
                                     tuple(slice(0, s) for s in gs._data.shape), False)
        return grad, None, None, gs


def scatter(x: Tensor, dim: int, index: Tensor, src: Tensor | Number | None = None,
            value: Number | None = None, reduce: str | None = None) -> Tensor:
    if src is None:
        src = value
    dim = _check_gather(x, dim, index, "scatter", src)
    if index._data.size:
        refuse_limited_unsigned(x._data.dtype, "scatter_gather_tensor_cpu" if isinstance(
            src, Tensor) else "scatter_gather_scalar_cpu")
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply, got {reduce}")
        if isinstance(src, Tensor) and not _SCATTER_REDUCE_WARNED:  # once, as PyTorch
            _SCATTER_REDUCE_WARNED.append(True)
            warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated "
                          "and will be removed in a future PyTorch release. Use "
                          "torch.scatter_reduce instead for more reduction options.",
                          UserWarning, stacklevel=3)
        if not isinstance(src, Tensor):
            src = x.new_full(index.shape, src)
        if reduce == "add":
            return ScatterAdd.apply(x, dim, index, src)
        from .scatter_family import ScatterReduce  # (it builds on this module)
        return ScatterReduce.apply(x, dim, index, src, "prod", True)
    return Scatter.apply(x, dim, index, src)


_SCATTER_REDUCE_WARNED = []


def scatter_add(x: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    dim = _check_gather(x, dim, index, "scatter_add", src)
    if index._data.size:
        refuse_limited_unsigned(x._data.dtype, "scatter_gather_tensor_cpu")
    return ScatterAdd.apply(x, dim, index, src)


class IndexSelect(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, x, dim, index):
        _check_index_select_range(index._data, x._data.shape, dim)
        ctx.in_shape, ctx.dim = x._data.shape, dim
        ctx.save_for_backward(index)
        d = x._data
        return get_array_module(d).take(d, index._data, axis=dim) if d.ndim else d.copy()

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        return IndexAdd.apply(grad.new_zeros(ctx.in_shape), ctx.dim, index, grad, 1), \
            None, None


def _check_index_vector(x, dim, index, name):
    if index._data.dtype.kind not in "iu" or index._data.dtype == np.uint8:
        if name == "index_select":
            raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
        raise RuntimeError(f"{name}_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype.scalar_name}")
    if index._data.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    return _wrap_dim(dim, x._data.ndim)


def index_select(x: Tensor, dim: int, index: Tensor) -> Tensor:
    dim = _check_index_vector(x, dim, index, "index_select")
    refuse_limited_unsigned(x._data.dtype, "index_select")
    return IndexSelect.apply(x, dim, index.reshape(-1) if index.dim() == 0 else index)


def index_select_any(x: Tensor, dim: int, index: Tensor) -> Tensor:
    """``index_select`` for ops built on it that PyTorch runs on every dtype (its kernel
    lacks uint16/32/64, their own do not: repeat_interleave)."""
    dim = _check_index_vector(x, dim, index, "index_select")
    return IndexSelect.apply(x, dim, index.reshape(-1) if index.dim() == 0 else index)


#: (arrays the compiled kernel cannot take) rows added to one target at most this many times
#: go through ``add_rows``' rounds; more repeats take np.add.at (one round per repeat would
#: cost more than its slow loop)
_ADD_ROWS_MAX_REPEATS = 8


def add_rows(out, index, rows):
    """``out[index[i]] += rows[i]`` for every i, in order: ``np.add.at(out, index, rows)``
    along the first axis, the same bits, ~10x faster for rows of many elements.

    np.add.at runs an element-by-element loop. Here the k-th occurrences of the indices form
    round k: within a round no target repeats, so one fancy-indexed ``+=`` adds its rows,
    and each target still receives its rows in their order.

    >>> import numpy as np
    >>> out = np.zeros((3, 2))
    >>> add_rows(out, np.array([2, 0, 2]), np.ones((3, 2)))
    >>> out[:, 0].tolist()
    [1.0, 0.0, 2.0]
    """
    xp = get_array_module(out)
    n = index.shape[0]
    if xp is not np or n == 0 or rows.ndim < 2:
        xp.add.at(out, index, rows)
        return
    if out.shape[1:] == rows.shape[1:] and kernels.native_for(out) and rows.dtype == out.dtype:
        # np.add.at's loop, compiled: ~10x faster than the rounds below (measured 50000
        # rows of 64 floats: 1.7 vs 16 ms); it takes indices in [0, T) only
        if int(index.min()) < 0:
            index = np.where(index < 0, index + out.shape[0], index)
        kernels.add_rows(out, index, np.ascontiguousarray(rows))
        return
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    first = np.empty(n, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    rank = np.arange(n) - starts[np.cumsum(first) - 1]  # occurrence number, in order
    repeats = int(rank.max())
    if repeats >= _ADD_ROWS_MAX_REPEATS:
        np.add.at(out, index, rows)
        return
    if repeats == 0:
        out[index] += rows
        return
    for k in range(repeats + 1):
        sel = order[rank == k]
        out[index[sel]] += rows[sel]


class IndexAdd(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, x, dim, index, source, alpha=1):
        _check_index_add_range(index._data, x._data.shape, dim, alpha)
        ctx.dim, ctx.alpha = dim, alpha
        if source._requires_grad:  # only source's gradient reads the index
            ctx.save_for_backward(index)
        out = x._data.copy()
        if out.size == 0:
            return out
        xp = get_array_module(out)
        moved = xp.moveaxis(out, dim, 0) if out.ndim else out.reshape(1)
        src = source._data if source._data.ndim else source._data.reshape(1)
        add_rows(moved, index._data.reshape(-1),
                 xp.moveaxis(src * alpha, dim, 0).astype(out.dtype, copy=False))
        return out

    @staticmethod
    def backward(ctx, grad):
        gs = None
        if ctx.needs_input_grad[3]:
            index, = ctx.saved_tensors
            gs = IndexSelect.apply(grad, ctx.dim, index)
            if ctx.alpha != 1:
                gs = gs * cj(ctx.alpha)
        return grad, None, None, gs, None


def index_add(x: Tensor, dim: int, index: Tensor, source: Tensor, *,
              alpha: Number = 1) -> Tensor:
    dim = _check_index_vector(x, dim, index, "index_add")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_add_(): self ({x.dtype.scalar_name}) and source "
                           f"({source.dtype.scalar_name}) must have the same scalar type")
    refuse_limited_unsigned(x._data.dtype, "index_add_")
    xs, ss = x._data.shape, source._data.shape
    if len(xs) != len(ss) or any(a != b for i, (a, b) in enumerate(zip(xs, ss)) if i != dim) \
            or (ss[dim] if ss else 1) != index._data.size:
        if len(xs) == len(ss) and all(a == b for i, (a, b) in enumerate(zip(xs, ss)) if i != dim):
            raise RuntimeError(f"index_add_(): Number of indices ({index._data.size}) should be "
                               f"equal to source.size(dim): ({ss[dim] if ss else 1}), "
                               f"for dim: {dim}")
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = [{', '.join(map(str, xs))}] "
                           f"source.shape = [{', '.join(map(str, ss))}]")
    return IndexAdd.apply(x, dim, index, source, alpha)


@per_sample_under_vmap
def masked_select(x: Tensor, mask: Tensor) -> Tensor:
    if mask._data.dtype.kind != "b":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if x._data.size and mask._data.size:
        refuse_limited_unsigned(x._data.dtype, "masked_select")
    shape = broadcast_shapes(x._data.shape, mask._data.shape)
    xb = x.expand(shape) if x._data.shape != shape else x
    m = mask._data
    mb = m if m.shape == shape else get_array_module(m).broadcast_to(m, shape)
    return AdvancedIndex.apply(xb, (mb,))


@per_sample_under_vmap
def take_along_dim(x: Tensor, indices: Tensor, dim: int | None = None) -> Tensor:
    """PyTorch's composition: a gather on the flattened tensor (no wrapping: out-of-range
    indices raise) or, along ``dim``, on both broadcast together with the indices taken
    modulo the dim's size (so negative and too-large ones wrap)."""
    if indices._data.size:
        refuse_limited_unsigned(x._data.dtype, "scatter_gather_tensor_cpu")
    if dim is None:
        return gather(x.view(-1), 0, indices.view(-1))
    if x._data.ndim != indices._data.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x._data.ndim} dimensions for "
                           f"input, and {indices._data.ndim} dimensions for indices")
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype.scalar_name}")
    if x._data.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, x._data.ndim)
    x_sizes, idx_sizes = list(x._data.shape), list(indices._data.shape)
    x_sizes[dim], idx_sizes[dim] = idx_sizes[dim], x_sizes[dim]
    idx = indices.expand(_broadcast_shape(x_sizes, indices._data.shape))
    xb = x.expand(_broadcast_shape(idx_sizes, x._data.shape))
    size = xb._data.shape[dim]
    if size == 0 and idx._data.size:
        raise RuntimeError("ZeroDivisionError")  # PyTorch's integer modulo by zero
    # PyTorch gathers with a fresh tensor (indices % size); the modulo is slow, so it is
    # only taken where some index needs it
    wrap = first_out_of_range(idx._data, size) is not None
    return Gather.apply(xb, dim, Tensor._make(idx._data % size if wrap else idx._data.copy()))


def _broadcast_shape(a, b):
    """PyTorch's infer_size: the broadcast of two shapes, or its error."""
    try:
        return broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        n = max(len(a), len(b))
        for i in range(1, min(len(a), len(b)) + 1):
            if a[-i] != b[-i] and a[-i] != 1 and b[-i] != 1:
                raise RuntimeError(f"The size of tensor a ({a[-i]}) must match the size of "
                                   f"tensor b ({b[-i]}) at non-singleton dimension {n - i}") \
                    from None
        raise


class Nonzero(Primitive):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        d = x._data
        refuse_float8(d.dtype, "nonzero_count_cpu")
        if d.dtype.kind == "u" and d.dtype.itemsize > 1:  # PyTorch's limited unsigned types
            raise NotImplementedError(f"\"nonzero_count_cpu\" not implemented for "
                                      f"'{x.dtype.scalar_name}'")
        xp = get_array_module(d)
        return xp.argwhere(d).astype(xp.int64)


@per_sample_under_vmap
def nonzero(x: Tensor, *, as_tuple: bool = False) -> Tensor | tuple[Tensor, ...]:
    if as_tuple:
        d = x._data
        refuse_float8(d.dtype, "nonzero_count_cpu")
        xp = get_array_module(d)
        if d.ndim == 0:
            return (Tensor._make(xp.nonzero(d.reshape(1))[0].astype(xp.int64)),)
        return tuple(Tensor._make(i.astype(xp.int64)) for i in xp.nonzero(d))
    return Nonzero.apply(x)


# ---- sort / topk -------------------------------------------------------------------------
class SortLike(Primitive):
    """Values chosen by ``indices`` along ``dim``; gradient scattered back."""
    _backward_name = "SortBackward0"

    @staticmethod
    def forward(ctx, x, dim, indices):
        ctx.in_shape, ctx.dim, ctx.indices = x._data.shape, dim, indices
        d = x._data
        if d.ndim == 0:
            return d.copy()
        return get_array_module(d).take_along_axis(d, indices, dim)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.in_shape:
            return grad, None, None
        zeros = grad.new_zeros(ctx.in_shape)
        return ScatterAdd.apply(zeros, ctx.dim, Tensor._make(ctx.indices), grad), None, None


@per_sample_under_vmap
def sort(x: Tensor, dim: int = -1, descending: bool = False,
         stable: bool = False) -> tuple[Tensor, Tensor]:
    d = x._data
    xp = get_array_module(d)
    if d.ndim == 0:
        return return_types.sort(SortLike.apply(x, 0, None), Tensor._make(xp.zeros((), xp.int64)))
    dim = _wrap_dim(dim, d.ndim)
    if d.dtype.itemsize == 1:
        refuse_float8(d.dtype, "sorting_kernel_method_name")
    if d.dtype.kind == "V":  # bfloat16: NumPy's sort misplaces its NaN; float32 holds it exactly
        d = d.astype(xp.float32)
    key = -d if descending and d.dtype.kind in "fi" else d
    idx = xp.argsort(key, axis=dim, kind="stable")
    if descending and d.dtype.kind not in "fi":
        idx = xp.flip(xp.argsort(d, axis=dim, kind="stable"), dim)
    if descending and d.dtype.kind == "f":
        # NaN sorts first when descending, like PyTorch
        idx = xp.argsort(xp.where(xp.isnan(d), -xp.inf, -d), axis=dim, kind="stable")
        nan_first = xp.argsort(~xp.isnan(xp.take_along_axis(d, idx, dim)), axis=dim,
                               kind="stable")
        idx = xp.take_along_axis(idx, nan_first, dim)
    idx = idx.astype(xp.int64)
    return return_types.sort(SortLike.apply(x, dim, idx), Tensor._make(idx))


@per_sample_under_vmap
def argsort(x: Tensor, dim: int = -1, descending: bool = False,
            stable: bool = False) -> Tensor:
    return sort(x, dim, descending, stable).indices


@per_sample_under_vmap
def topk(x: Tensor, k: int, dim: int = -1, largest: bool = True,
         sorted: bool = True) -> tuple[Tensor, Tensor]:
    d = x._data
    refuse_limited_unsigned(d.dtype, "topk_cpu")
    dim = _wrap_dim(dim, d.ndim) if d.ndim else 0
    size = d.shape[dim] if d.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")
    order = sort(x.detach(), dim, descending=largest).indices._data
    xp = get_array_module(order)
    idx = xp.ascontiguousarray(xp.take(order, xp.arange(k), axis=dim)) if d.ndim else order
    return return_types.topk(SortLike.apply(x, dim, idx), Tensor._make(idx))
