"""Copies into a memory layout (``memory_format=``): what ``clone``, ``contiguous``, ``to``
and the ``*_like`` factories do with ``channels_last``/``channels_last_3d``.

The layouts themselves are strides (``ember.backend.memory_layout``); a copy into one is a
Primitive whose gradient is the output gradient unchanged (a copy's Jacobian is the
identity, whatever the strides). The ops then keep the layout the way NumPy does: an
elementwise op's result follows its operands' memory order, and the ops PyTorch's CPU
kernels return channels-last from (convolution, pooling, batch norm) lay their result out
with ``memory_layout.relayout_like``.

>>> import ember
>>> x = ember.ones(2, 3, 4, 5).contiguous(memory_format=ember.channels_last)
>>> x.stride(), x.is_contiguous(memory_format=ember.channels_last)
((60, 1, 15, 3), True)
"""
from ..backend import get_array_module, memory_layout
from ..backend.dtypes import contiguous_format, preserve_format
from .primitive import Primitive

__all__ = ["CloneInFormat", "ToCopyInFormat", "clone", "contiguous", "is_contiguous",
           "to_format"]


class CloneInFormat(Primitive):
    """A copy of ``x`` laid out as ``fmt`` (a memory format, not preserve_format)."""
    complex_grad = True  # the identity's gradient is right for complex tensors
    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x, fmt):
        d = x._data
        return memory_layout.copy_in_format(d, get_array_module(d), fmt)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ToCopyInFormat(CloneInFormat):
    """``x.to(memory_format=fmt)``: the same copy under PyTorch's ``_to_copy`` node name."""
    _backward_name = "ToCopyBackward0"


def clone(x, fmt):
    """``x.clone(memory_format=fmt)``: ``fmt`` None or preserve_format keeps a channels-last
    layout (PyTorch's ``suggest_memory_format``); None when the plain row-major clone is
    the answer (the caller's own Clone runs then)."""
    if fmt is None or fmt is preserve_format:
        fmt = memory_layout.suggest_format(x._data)
    if fmt is contiguous_format:
        return None
    memory_layout.check_rank(fmt, x._data.ndim)
    return CloneInFormat.apply(x, fmt)


def contiguous(x, fmt):
    """``x.contiguous(memory_format=fmt)`` for a channels-last ``fmt``: ``x`` itself when it
    is laid out so already, else a copy. ``preserve_format`` has no layout to copy into:
    PyTorch refuses it unless ``x`` is row-major already."""
    if fmt is preserve_format:
        if x.is_contiguous():
            return x
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    memory_layout.check_rank(fmt, x._data.ndim)
    if is_contiguous(x, fmt):
        return x
    return CloneInFormat.apply(x, fmt)


def is_contiguous(x, fmt):
    """``x.is_contiguous(memory_format=fmt)`` for a channels-last ``fmt``."""
    return memory_layout.is_format_contiguous(x.shape, x.stride(), fmt)


def to_format(x, fmt, name="to"):
    """``x.to(memory_format=fmt)``: ``x`` itself when its layout is ``fmt`` already (as
    PyTorch tells it: ``suggest_memory_format``; preserve_format: always), else a copy
    (``ToCopyBackward0``); ``name`` is the method named in a TypeError."""
    fmt = memory_layout.checked_format(fmt, name)
    if fmt is None or fmt is preserve_format:
        return x
    memory_layout.check_rank(fmt, x._data.ndim)
    if memory_layout.suggest_format(x._data) is fmt:
        return x
    return ToCopyInFormat.apply(x, fmt)
