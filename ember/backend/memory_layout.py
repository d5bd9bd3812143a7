"""Channels-last memory layouts as array strides.

A ``channels_last`` tensor is an (N, C, H, W) array whose memory is laid out (N, H, W, C):
an (N, H, W, C) C-contiguous array transposed back to (N, C, H, W), so ``stride()`` is
PyTorch's ``(H*W*C, 1, W*C, C)`` (``channels_last_3d``: (N, C, D, H, W) over
(N, D, H, W, C)). NumPy reads any strides, so every op computes the same values whatever
the layout; this module only says which layout an array has and makes arrays in one.

Everything here is shape arithmetic, PyTorch's rules for telling layouts apart
(``is_channels_last_contiguous``, ``suggest_format``), and allocation through the array's
own module. Nothing runs for a C-contiguous array beyond one flag test.

>>> import numpy as np
>>> from ember.backend import dtypes, memory_layout
>>> a = memory_layout.empty_in_format(np, (2, 3, 4, 5), np.float32, dtypes.channels_last)
>>> memory_layout.element_strides(a)
(60, 1, 15, 3)
"""
from . import get_array_module, strided_view
from .dtypes import (channels_last, channels_last_3d, contiguous_format, memory_format,
                     preserve_format)

__all__ = ["check_rank", "element_strides", "is_format_contiguous", "suggest_format",
           "empty_in_format", "copy_in_format", "like_format", "channels_last_order",
           "checked_format", "relayout_like", "row_major",
           "copy_in_layout_of", "any_channels_last", "channels_last_memory"]

#: the rank each channels-last format needs
_RANKS = {channels_last: 4, channels_last_3d: 5}


def check_rank(fmt, ndim):
    """PyTorch's error when ``fmt`` is a channels-last format that does not fit ``ndim``.

    >>> from ember.backend import dtypes
    >>> check_rank(dtypes.channels_last, 3)
    Traceback (most recent call last):
    RuntimeError: required rank 4 tensor to use channels_last format
    """
    rank = _RANKS.get(fmt)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")


def channels_last_order(ndim):
    """Axes from (N, C, *S) to the memory order (N, *S, C).

    >>> channels_last_order(4)
    (0, 2, 3, 1)
    """
    return (0,) + tuple(range(2, ndim)) + (1,)


def element_strides(array):
    """The array's strides in elements (PyTorch's ``stride()``)."""
    size = array.itemsize
    return tuple(s // size for s in array.strides)


def is_format_contiguous(shape, strides, fmt):
    """Whether (shape, element strides) are dense in ``fmt``'s memory order: PyTorch's
    ``is_contiguous(memory_format=...)`` for the channels-last formats (size-1 dimensions'
    strides do not count; unlike the default format an empty tensor has no exemption).

    >>> from ember.backend import dtypes
    >>> is_format_contiguous((2, 3, 4, 5), (60, 1, 15, 3), dtypes.channels_last)
    True
    """
    rank = _RANKS.get(fmt)
    if rank is None or len(shape) != rank:
        return False
    expected = 1
    for d in reversed(channels_last_order(rank)):
        size = shape[d]
        if size != 1:
            if strides[d] != expected:
                return False
            expected *= size
    return True


def _strides_like_channels_last(shape, strides):
    """PyTorch's guess that strides are a channels-last layout (its
    ``is_channels_last_strides_2d/3d``): the strides grow along C, W, H(, D), N, and
    ambiguous cases (a size-1 C, N111 tensors) stay with the default format."""
    if strides[1] == 0:
        return False
    smallest = 0
    for d in reversed(channels_last_order(len(shape))):
        if shape[d] == 0 or strides[d] < smallest:
            return False
        if d == 0 and smallest == strides[1]:
            return False
        smallest = strides[d]
        if shape[d] > 1:
            smallest *= shape[d]
    return True


def suggest_format(array):
    """The layout PyTorch's ``suggest_memory_format`` names for ``array``: channels_last
    (4-D) or channels_last_3d (5-D) for strides that look it, else contiguous_format. A
    C-contiguous array costs one flag test."""
    if array.flags.c_contiguous:
        return contiguous_format
    ndim = array.ndim
    if ndim == 4 or ndim == 5:
        if _strides_like_channels_last(array.shape, element_strides(array)):
            return channels_last if ndim == 4 else channels_last_3d
    return contiguous_format


def like_format(array, fmt):
    """The layout a copy of ``array`` made with ``memory_format=fmt`` gets: ``fmt`` itself,
    or for ``preserve_format`` (and None) the channels-last layout ``array`` has, else
    contiguous_format (other permutations are laid out row-major)."""
    if fmt is None or fmt is preserve_format:
        return suggest_format(array)
    return fmt


def empty_in_format(xp, shape, dtype, fmt):
    """An uninitialized array of ``shape`` laid out as ``fmt`` (rank checked), in ``xp``."""
    rank = _RANKS.get(fmt)
    if rank is None:
        return xp.empty(shape, dtype)
    check_rank(fmt, len(shape))
    order = channels_last_order(rank)
    inverse = (0, rank - 1) + tuple(range(1, rank - 1))
    out = xp.empty(tuple(shape[d] for d in order), dtype).transpose(inverse)
    if out.size == 0:  # NumPy zeroes an empty array's strides; PyTorch reports the layout's
        strides, step = [0] * rank, out.itemsize
        for d in reversed(order):
            strides[d] = step
            step *= max(shape[d], 1)
        out = strided_view(out, tuple(shape), tuple(strides))
    return out


def copy_in_format(array, xp, fmt):
    """A copy of ``array`` laid out as ``fmt`` (in ``xp``, the array's module)."""
    out = empty_in_format(xp, array.shape, array.dtype, fmt)
    out[...] = array
    return out


def checked_format(fmt, name):
    """``memory_format=fmt`` as function ``name`` takes it: None or a memory format, else
    PyTorch's TypeError."""
    if fmt is None or isinstance(fmt, memory_format):
        return fmt
    raise TypeError(f"{name}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(fmt).__name__}")


def relayout_like(result, *sources):
    """``result`` (a fresh row-major array) copied into a channels-last layout when one of
    the ``sources`` (arrays of its rank) has one, as PyTorch's kernels choose their output's
    layout from their inputs'; ``result`` itself otherwise. Row-major sources cost one flag
    test each.

    >>> import numpy as np
    >>> from ember.backend import dtypes
    >>> x = empty_in_format(np, (1, 2, 3, 3), np.float32, dtypes.channels_last)
    >>> element_strides(relayout_like(np.zeros((1, 2, 3, 3), np.float32), x))
    (18, 1, 6, 2)
    """
    for source in sources:
        if not source.flags.c_contiguous and result.ndim == source.ndim:
            fmt = suggest_format(source)
            if fmt is not contiguous_format:
                return copy_in_format(result, get_array_module(result), fmt)
    return result


def row_major(array):
    """``array`` itself when it is C-contiguous, else a C-contiguous copy: the layout
    compiled kernels take (a channels-last operand is copied once rather than read
    through a slow strided path).

    >>> import numpy as np
    >>> row_major(np.zeros((2, 3)).T).flags.c_contiguous
    True
    """
    if array.flags.c_contiguous:
        return array
    return get_array_module(array).ascontiguousarray(array)


def copy_in_layout_of(array, like):
    """A copy of ``array`` in the layout of ``like`` (same shape): channels-last when
    ``like`` is, else row-major (PyTorch's gradient layout contract for ``.grad``)."""
    return copy_in_format(array, get_array_module(array), suggest_format(like))


def any_channels_last(*arrays):
    """Whether one of ``arrays`` has a channels-last layout (``suggest_format``); one flag
    test for each row-major one. Broadcast arrays (zero strides) are not channels-last."""
    for array in arrays:
        if not array.flags.c_contiguous and suggest_format(array) is not contiguous_format:
            return True
    return False


def channels_last_memory(array):
    """A channels-last ``array``'s memory as a C-contiguous (N, *S, C) view, and the axes
    that turn an (N, *S, C) result back to (N, C, *S); None for any other layout. Elementwise
    kernels that need C-contiguous operands run on the view.

    >>> import numpy as np
    >>> from ember.backend import dtypes
    >>> a = empty_in_format(np, (2, 3, 4, 5), np.float32, dtypes.channels_last)
    >>> view, back = channels_last_memory(a)
    >>> view.shape, view.flags.c_contiguous, back
    ((2, 4, 5, 3), True, (0, 3, 1, 2))
    """
    ndim = array.ndim
    if (ndim != 4 and ndim != 5) or array.flags.c_contiguous:
        return None
    view = array.transpose(channels_last_order(ndim))
    if not view.flags.c_contiguous:
        return None
    return view, (0, ndim - 1) + tuple(range(1, ndim - 1))
