"""More of PyTorch's everyday surface: ``frombuffer`` and ``empty_permuted`` (creation) and
``hash_tensor`` (an xor reduction of the elements' 64-bit patterns)."""
from __future__ import annotations

import warnings

import numpy as np

from .._creation import _check_layout, _check_pin_memory, from_numpy
from .._tensor import Tensor, _wrap_dim
from .._typing import Sequence
from ..backend import dtypes, get_array_module
from .basics import empty_strided

_NOT_WRITABLE_WARNED = [False]


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over the memory of an object with the buffer protocol: ``count``
    elements of ``dtype`` (-1: all) from byte ``offset``; writes go through to the buffer.

    >>> import array, ember
    >>> a = array.array("i", [1, 2, 3, 4])
    >>> ember.frombuffer(a, dtype=ember.int32, count=2, offset=4)
    tensor([2, 3], dtype=ember.int32)
    """
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length = view.nbytes
    size = dtype.itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if offset < 0 or offset >= length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    array = np.frombuffer(view.cast("B"), dtype=np.uint8, count=count * size, offset=offset)
    if view.readonly:
        # NumPy cannot write through a read-only buffer (PyTorch's tensor would), so the
        # tensor gets a copy; warned once per process, as PyTorch's warning is
        if not _NOT_WRITABLE_WARNED[0]:
            _NOT_WRITABLE_WARNED[0] = True
            warnings.warn("The given buffer is not writable, and ember does not support "
                          "non-writable tensors: the tensor holds a copy of the buffer's "
                          "bytes, so writes to it do not reach the buffer. This type of "
                          "warning will be suppressed for the rest of this program.",
                          UserWarning, stacklevel=2)
        array = array.copy()
    array = array.view(dtype.np)
    tensor = from_numpy(array)
    if requires_grad:
        tensor.requires_grad_(True)
    return tensor


def empty_permuted(size: Sequence[int], physical_layout: Sequence[int], *, dtype=None,
                   layout=None, device=None, requires_grad: bool = False,
                   pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of ``size`` whose dimensions lie in memory in the order
    ``physical_layout`` (outermost first).

    >>> import ember
    >>> ember.empty_permuted((2, 3, 5, 7), (0, 2, 3, 1)).stride()
    (105, 1, 21, 3)
    """
    _check_layout(layout, "empty_permuted")
    _check_pin_memory(pin_memory)
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if len(size) != len(order):
        raise RuntimeError(
            "Number of dimensions in size does not match the length of the physical_layout; "
            f"i.e. len(size) = {len(size)} is not equal to len(physical_layout) = "
            f"{len(order)}")
    seen = set()
    for i, d in enumerate(order):
        if d < 0 or d >= len(size):
            raise RuntimeError(
                f"Dimension out of range (expected to be between 0 and {len(size) - 1}, but "
                f"got {d} at index {i}).  NB: negative dims not currently supported; file an "
                "issue if you want it.")
        if d in seen:
            raise RuntimeError("Duplicate dim not allowed")
        seen.add(d)
    # contiguous strides of the physical order, a size-0 dimension counting as 1 (PyTorch's)
    strides, step = [0] * len(size), 1
    for d in reversed(order):
        strides[d] = step
        step *= max(size[d], 1)
    return empty_strided(size, strides, dtype=dtype, device=device,
                         requires_grad=requires_grad)


def hash_tensor(input: Tensor, dim: int | Sequence[int] | None = None, *, keepdim: bool = False,
                mode: int = 0) -> Tensor:
    """The xor of the elements' bit patterns after widening each to 64 bits (float64 or
    int64), over ``dim`` (all dims when None), as a uint64 tensor.

    >>> import ember
    >>> ember.hash_tensor(ember.tensor([1, 2, 3]))
    tensor(0, dtype=ember.uint64)
    """
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    dt = input.dtype
    if dt.is_complex or dt == dtypes.uint64:
        raise NotImplementedError(f"\"xor_sum_cpu\" not implemented for '{dt.scalar_name}'")
    d = input._data
    ndim = d.ndim
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        if d.size == 0:
            raise RuntimeError(
                "hash_tensor: Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument.")
        axes = tuple(range(ndim))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        axes = tuple(sorted({_wrap_dim(a, ndim) for a in dims})) if ndim else ()
        for a in axes:
            if d.shape[a] == 0:
                raise IndexError(f"hash_tensor: Expected reduction dim {a} to have non-zero "
                                 "size.")
    xp = get_array_module(d)
    wide = d.astype(np.float64 if dt.is_floating_point else np.int64).view(np.uint64)
    out = xp.bitwise_xor.reduce(wide, axis=axes, keepdims=keepdim) if axes else wide.copy()
    if keepdim and not axes and ndim == 0:
        out = wide.copy()
    return Tensor._make(xp.asarray(out, dtype=np.uint64), False)
