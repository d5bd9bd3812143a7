"""Basic ops PyTorch code reaches for often: ``log10``, ``var_mean``, ``fmax``/``fmin``,
``unravel_index``, ``index_copy``, and the strided views ``as_strided`` and ``unfold``.

Most are compositions of differentiable ops; ``log10`` is an elementwise Primitive and
the two strided views are Primitives returning views of the input's memory. Declared in
``_functions.py`` (the "basics" section).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._creation import beside, tensor, from_numpy, _module, _check_layout, _check_pin_memory
from .._tensor import Tensor, _wrap_dim, _address, storage_array
from ..backend import dtypes, get_array_module, is_writeable, strided_view
from ..backend.meta import is_meta
from ..device import check_device
from .elementwise import _unary, Where
from .jvp_rules import _unary_from_backward
from .primitive import Primitive
from .complex_ops import cj
from .._typing import Number, Sequence

_LN10 = math.log(10.0)

Log10 = _unary("Log10", "log10", lambda g, x, o: g / cj(x * _LN10))
Log10.complex_grad = True  # grad * conj(f'(z))
Log10.jvp = _unary_from_backward(Log10)


# ---- variance / deviation with the mean --------------------------------------------------------
def _moments(name, input, dim, unbiased, keepdim, correction):
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    if isinstance(dim, bool):  # var_mean(x, False): the old positional 'unbiased'
        dim, unbiased = None, dim
    kwargs = {"correction": correction} if correction is not None else {}
    if unbiased is not None:
        if correction is not None:
            raise TypeError(f"{name}() received an invalid combination of arguments - "
                            f"'unbiased' and 'correction' cannot be given together")
        kwargs = {"unbiased": unbiased}
    spread = (input.std if name == "std_mean" else input.var)(dim, keepdim=keepdim, **kwargs)
    mean = input.mean(dim, keepdim=keepdim) if dim is not None else \
        input.mean(list(range(input.dim())), keepdim=keepdim)
    return spread, mean


def var_mean(input: Tensor, dim: int | Sequence[int] | bool | None = None,
             unbiased: bool | None = None, keepdim: bool = False, *,
             correction: Number | None = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` of ``input`` over ``dim`` (all dimensions when None).

    >>> import ember
    >>> ember.var_mean(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    (tensor(1.6667), tensor(2.5000))
    """
    return _moments("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input: Tensor, dim: int | Sequence[int] | bool | None = None,
             unbiased: bool | None = None, keepdim: bool = False, *,
             correction: Number | None = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` of ``input`` over ``dim`` (all dimensions when None).

    >>> import ember
    >>> ember.std_mean(ember.tensor([1.0, 3.0]), correction=0)
    (tensor(1.), tensor(2.))
    """
    return _moments("std_mean", input, dim, unbiased, keepdim, correction)


# ---- fmax / fmin ----------------------------------------------------------------------------
def _nan_ignoring(name, input, other, larger):
    if not isinstance(other, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    for t in (input, other):
        if t.is_complex():
            raise RuntimeError(f"{name} not implemented for complex tensors.")
    if input._data.dtype.kind == "u" or input._data.dtype.itemsize == 1:  # maximum's kernels
        dtypes.refuse_limited_unsigned(dtypes.result_type(input, other).np,
                                       "maximum_cpu" if larger else "minimum_cpu")
    # input where it wins (ties included) or other is NaN, as PyTorch's gradient splits it
    keep = (input >= other) if larger else (input <= other)
    if other.is_floating_point():
        keep = keep | other.isnan()
    return Where.apply(keep, input, other)


def fmax(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise maximum, a NaN losing to a number (NaN only where both are).

    >>> import ember
    >>> ember.fmax(ember.tensor([1.0, float("nan"), 3.0]), ember.tensor([2.0, 0.5, float("nan")]))
    tensor([2.0000, 0.5000, 3.0000])
    """
    return _nan_ignoring("fmax", input, other, True)


def fmin(input: Tensor, other: Tensor) -> Tensor:
    """The elementwise minimum, a NaN losing to a number (NaN only where both are).

    >>> import ember
    >>> ember.fmin(ember.tensor([1.0, float("nan")]), ember.tensor([2.0, 0.5]))
    tensor([1.0000, 0.5000])
    """
    return _nan_ignoring("fmin", input, other, False)


# ---- unravel_index --------------------------------------------------------------------------
def unravel_index(indices: Tensor, shape: int | Sequence[int]) -> tuple[Tensor, ...]:
    """The coordinates in a tensor of ``shape`` of flat ``indices`` (one tensor per
    dimension, each shaped as ``indices``; negative indices count from the end).

    >>> import ember
    >>> ember.unravel_index(ember.tensor([4, 5]), (2, 3))
    (tensor([1, 1]), tensor([1, 2]))
    """
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"{type(indices).__name__}")
    if indices.is_floating_point() or indices.is_complex() or indices.dtype is dtypes.bool_:
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"torch.{indices.dtype.name}")  # PyTorch's dtype repr
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = (shape,)
    shape = tuple(shape)
    for s in shape:
        if not isinstance(s, int) or isinstance(s, bool):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(s)}")
    if any(s < 0 for s in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape and indices.numel():
        raise RuntimeError("ZeroDivisionError")  # sic: PyTorch's whole message
    # no range check, as in PyTorch: out-of-range indices wrap around (floor modulo)
    coords, rest = [], indices._data.astype(np.int64)
    for size in reversed(shape):
        coords.append(Tensor._make(rest % size if size else rest))
        rest = rest // size if size else rest
    return tuple(reversed(coords))


# ---- index_copy -----------------------------------------------------------------------------
def _check_index_copy(x, dim, index, source):
    name = "index_copy_()"
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{name}: Expected a long tensor for index, but got "
                           f"{index.dtype.scalar_name}")
    if index.dim() > 1:
        raise IndexError(f"{name}: Index should have dimension 1 or 0 (got {index.dim()})")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"{name}: self and source expected to have the same dtype, but got "
                           f"(self) {x.dtype.scalar_name} and (source) "
                           f"{source.dtype.scalar_name}")
    n = x.dim()
    dim = _wrap_dim(dim, n)
    count = index.numel()
    if source.dim() != n and source.dim() != 0 and n != 0:
        raise IndexError(f"{name}: When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.dim()}), "
                         f"destination dimensionality ({n})")
    source_count = source.shape[dim] if source.dim() else 1
    if count != source_count:
        raise IndexError(f"{name}: Number of indices ({count}) should be equal to "
                         f"source.size(dim) ({source_count})")
    if source.dim():
        dest_slice = [s for i, s in enumerate(x.shape) if i != dim]
        source_slice = [s for i, s in enumerate(source.shape) if i != dim]
        if dest_slice != source_slice:  # (PyTorch's message names dimension 0 for source)
            raise RuntimeError(f"{name}: Source/destination tensor must have same slice shapes. "
                               f"Destination slice shape: {' '.join(map(str, dest_slice))} at "
                               f"dimension {dim} and source slice shape: "
                               f"{' '.join(map(str, source_slice))} at dimension 0.")
    size = x.shape[dim] if n else 1
    idx = index._data.reshape(-1)
    if idx.size and not is_meta(idx):
        bad = (idx < 0) | (idx >= size)
        if bool(bad.any()):
            raise IndexError(f"{name}: index {int(idx[bad][0])} is out of bounds for dimension "
                             f"{dim} with size {size}")
    return dim


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """``input`` with the slices ``index`` along ``dim`` replaced by ``source``'s, in
    order (of repeated indices the last one's slice stays, as on PyTorch's CPU).

    >>> import ember
    >>> ember.index_copy(ember.zeros(3, 2), 0, ember.tensor([2, 0]),
    ...                  ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[3., 4.],
            [0., 0.],
            [1., 2.]])
    """
    dim = _check_index_copy(input, dim, index, source)
    dtypes.refuse_limited_unsigned(input._data.dtype, "index_copy_cpu")
    if input.dim() == 0:
        input, source = input.reshape(1), source.reshape(1)
        return index_copy(input, 0, index.reshape(1), source).reshape(())
    if source.dim() == 0:
        source = source.reshape(1)
    host = np.asarray(index._data.reshape(-1).tolist() if not is_meta(index._data) else [],
                      np.int64)
    # of repeated indices the last occurrence's slice wins
    _, last = np.unique(host[::-1], return_index=True)
    keep = np.sort(host.size - 1 - last)
    if keep.size != host.size:
        source = source.index_select(dim, beside(tensor(keep), source))
        host = host[keep]
    where = np.zeros(input.shape[dim], bool)
    where[host] = True
    shape = [1] * input.dim()
    shape[dim] = input.shape[dim]
    mask = beside(tensor(where.reshape(shape)), input)
    placed = input.new_zeros(input.shape).index_add(dim, beside(tensor(host), input), source)
    return Where.apply(mask, placed, input)


# ---- strided views --------------------------------------------------------------------------
def storage_geometry(x):
    """(owner array, x's offset in it in elements, the owner's size in x's elements)."""
    d = x._data
    owner = storage_array(d)
    if isinstance(owner, np.ndarray) and owner.dtype.kind == "O":
        owner = d
    offset = (_address(d) - _address(owner)) // d.itemsize
    return owner, offset, owner.nbytes // d.itemsize


def _positions(size, stride, offset):
    """The flat storage position of every element of a (size, stride, offset) view."""
    pos = np.full((), offset, np.int64)
    for n, s in zip(size, stride):
        pos = pos[..., None] + np.arange(n, dtype=np.int64) * s
    return pos


def _check_strided(size, stride, offset, itemsize, storage_size):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    for s in stride:
        if s < 0:
            raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                               f"got strides: {list(stride)}")
    for n in size:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(size)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > storage_size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed * itemsize} are out of bounds for storage of size "
                           f"{storage_size * itemsize}")


class AsStrided(Primitive):
    """A view of the input's storage with the given sizes, strides (elements) and offset.
    Backward adds the gradient into a buffer shaped as the storage and reads the input's
    elements back from it (shared evenly where the input's own elements overlap)."""
    _backward_name = "AsStridedBackward0"
    is_view = True
    complex_grad = True  # linear: the gradient only moves and adds

    @staticmethod
    def forward(ctx, x, size, stride, offset):
        d = x._data
        ctx.size, ctx.stride, ctx.offset = size, stride, offset
        ctx.in_geometry = (d.shape, x.stride(), x.storage_offset())
        if is_meta(d):
            return get_array_module(d).empty(size, d.dtype)
        owner, _, storage_size = storage_geometry(x)
        _check_strided(size, stride, offset, d.itemsize, storage_size)
        flat = strided_view(owner, (storage_size,), (d.itemsize,)) if owner.dtype == d.dtype \
            else strided_view(owner.view(d.dtype).reshape(-1), (storage_size,), (d.itemsize,))
        start = flat[offset:] if storage_size > offset else flat[:0]
        return strided_view(start, size, tuple(s * d.itemsize for s in stride),
                            writeable=is_writeable(d))

    @staticmethod
    def backward(ctx, grad):
        shape, in_stride, in_offset = ctx.in_geometry
        out_pos = _positions(ctx.size, ctx.stride, ctx.offset).reshape(-1)
        in_pos = _positions(shape, in_stride, in_offset).reshape(-1)
        extent = int(max(out_pos.max(initial=-1), in_pos.max(initial=-1))) + 1
        storage = grad.new_zeros(extent).index_add(
            0, beside(tensor(out_pos), grad), grad.reshape(-1))
        result = storage.index_select(0, beside(tensor(in_pos), grad))
        counts = np.bincount(in_pos, minlength=extent)[in_pos]
        if counts.size and counts.max() > 1:  # the input's elements share memory
            result = result / beside(tensor(counts.astype(grad.dtype.np)), grad)
        return result.reshape(shape), None, None, None


def as_strided(input: Tensor, size: Sequence[int], stride: Sequence[int],
               storage_offset: int | None = None) -> Tensor:
    """A view of ``input``'s storage with ``size``, ``stride`` (in elements) and
    ``storage_offset`` (the input's own offset when None).

    >>> import ember
    >>> ember.as_strided(ember.arange(6.0), (2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    return AsStrided.apply(input, size, stride, offset)


class Unfold(Primitive):
    """``x.unfold(dim, size, step)``: the windows along ``dim`` as a new last dimension (a
    view). Backward adds each window's gradient back into the positions it covers."""
    _backward_name = "UnfoldBackward0"
    is_view = True
    complex_grad = True  # linear: the gradient only moves and adds

    @staticmethod
    def forward(ctx, x, dim, size, step):
        d = x._data
        ctx.in_shape, ctx.dim, ctx.size, ctx.step = d.shape, dim, size, step
        if d.ndim == 0:
            return d.reshape(1)
        count = (d.shape[dim] - size) // step + 1
        shape = d.shape[:dim] + (count,) + d.shape[dim + 1:] + (size,)
        strides = d.strides[:dim] + (d.strides[dim] * step,) + d.strides[dim + 1:] + \
            (d.strides[dim],)
        if is_meta(d):
            return get_array_module(d).empty(shape, d.dtype)
        return strided_view(d, shape, strides, writeable=is_writeable(d) and step >= size)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.in_shape:
            return grad.reshape(()), None, None, None
        dim, size, step = ctx.dim, ctx.size, ctx.step
        count = grad.shape[dim]
        where = (np.arange(count)[:, None] * step + np.arange(size)).reshape(-1)
        windows = grad.movedim(-1, dim + 1).flatten(dim, dim + 1)
        out = grad.new_zeros(ctx.in_shape)
        return out.index_add(dim, beside(tensor(where), grad), windows), None, None, None


def unfold(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` elements along ``dimension``, ``step`` apart, as a new last
    dimension (a view of the input).

    >>> import ember
    >>> ember.arange(5.0).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    d = input._data
    dim = _wrap_dim(dimension, d.ndim)
    length = d.shape[dim] if d.ndim else 1
    if size > length:
        raise RuntimeError(f"maximum size for tensor at dimension {dim} is {length} but size "
                           f"is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return Unfold.apply(input, dim, int(size), int(step))


def empty_strided(size: Sequence[int], stride: Sequence[int], *, dtype=None, layout=None,
                  device=None, requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor with ``size`` and ``stride`` (in elements) over a storage just
    large enough for them.

    >>> import ember
    >>> ember.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    _check_layout(layout, "empty_strided")
    _check_pin_memory(pin_memory)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(size)}: {list(size)}")
    dtype = dtype or dtypes.get_default_dtype()
    xp = _module(None, device)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride))
    buffer = xp.empty((extent,), dtype.np)
    if is_meta(buffer):
        array = xp.empty(size, dtype.np)
    else:
        array = strided_view(buffer, size, tuple(s * buffer.itemsize for s in stride))
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return Tensor._make(array, requires_grad)


_ASARRAY_WARNED = [False]
_REQUIRES_GRAD_UNSET = object()


def asarray(obj, *, dtype=None, device=None, copy: bool | None = None,
            requires_grad=_REQUIRES_GRAD_UNSET) -> Tensor:
    """``obj`` (a tensor, a NumPy array, a number or a nested sequence) as a tensor, sharing
    its memory where dtype and device allow unless ``copy=True``; ``copy=False`` refuses to
    copy. A tensor given keeps its autograd state (and is returned itself when unchanged).

    >>> import numpy, ember
    >>> a = numpy.zeros(2); t = ember.asarray(a); a[0] = 5; t
    tensor([5., 0.], dtype=ember.float64)
    """
    explicit = requires_grad is not _REQUIRES_GRAD_UNSET
    if isinstance(obj, Tensor):
        result = _asarray_tensor(obj, dtype, device, copy)
        if not explicit and obj.requires_grad and not _ASARRAY_WARNED[0]:
            _ASARRAY_WARNED[0] = True
            warnings.warn("torch.asarray: unspecified requires_grad now defaults to "
                          "obj.requires_grad instead of False. Pass requires_grad=False "
                          "explicitly to get the old behavior and silence this warning.",
                          UserWarning, stacklevel=3)
    elif isinstance(obj, np.ndarray):
        result = _asarray_numpy(obj, dtype, device, copy)
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor.")
        result = tensor(obj, dtype=dtype, device=device)
    if not explicit or bool(requires_grad) == result.requires_grad:
        return result
    if requires_grad:
        if not (result.is_floating_point() or result.is_complex()):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        return result.requires_grad_(True)
    # as PyTorch: a leaf (obj itself, too) is switched off in place, a result of ops detached
    return result.requires_grad_(False) if result.grad_fn is None else result.detach()


def _alias_error(have, want):
    return ValueError(f"can't alias tensor with dtype '{have.scalar_name}' into dtype "
                      f"'{want.scalar_name}'.")


def _asarray_tensor(obj, dtype, device, copy):
    target = None if device is None else check_device(device)
    moves = target is not None and target != obj.device
    casts = dtype is not None and dtype is not obj.dtype
    if copy is False and (moves or casts):
        if casts:
            raise _alias_error(obj.dtype, dtype)
        raise ValueError(f"can't alias tensor from device '{obj.device}' to '{target}'.")
    if moves or casts:
        return obj.to(device=target, dtype=dtype)
    return obj.clone() if copy else obj


def _asarray_numpy(array, dtype, device, copy):
    want = None if dtype is None else dtype.np
    if any(s < 0 for s in array.strides):  # refused even when a copy is asked for
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if want is not None and array.dtype != want:
        if copy is False:
            raise _alias_error(dtypes.from_numpy_dtype(array.dtype), dtype)
        return tensor(array, dtype=dtype, device=device)
    if copy or (device is not None and check_device(device).type != "cpu"):
        return tensor(array, dtype=dtype, device=device)
    return from_numpy(array)


def scalar_tensor(s: Number, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """The 0-d tensor holding ``s``, of the default float dtype unless ``dtype`` is given.

    >>> import ember
    >>> ember.scalar_tensor(3)
    tensor(3.)
    """
    _check_layout(layout, "scalar_tensor")
    _check_pin_memory(pin_memory)
    if isinstance(s, Tensor):
        s = s.item()
    return tensor(s, dtype=dtype or dtypes.get_default_dtype(), device=device,
                  requires_grad=requires_grad)
