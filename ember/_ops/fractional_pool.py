"""Fractional max pooling's window choice: ``fractional_max_indices`` gives, for every output
cell, the flat position (within its plane) of the maximum of its pseudo-random window.

The values are then a ``gather`` of the flattened input at those positions (in
``nn.functional``), so the gradient is gather's.  Window starts follow PyTorch's rule,
``int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (in - k) / (out - 1)``, computed in
the samples' dtype (float32 arithmetic for float32 input, as PyTorch's kernel does), the
last window ending at the input's edge.
"""
import math

import numpy as np

from ..backend import get_array_module
from ..backend.meta import is_meta


def _starts(xp, u, size_in, size_out, k):
    """Window starts (..., size_out) for samples ``u`` (...) of one spatial dim."""
    dtype = u.dtype
    out = xp.zeros(u.shape + (size_out,), dtype=np.int64)
    if size_out > 1:
        alpha = (xp.asarray(size_in - k, dtype=dtype) / xp.asarray(size_out - 1, dtype=dtype))
        i = xp.asarray(np.arange(size_out), dtype=dtype)
        pos = ((i + u[..., None]) * alpha).astype(np.int64)
        out = pos - (u * alpha).astype(np.int64)[..., None]
    if size_out > 0:
        out[..., size_out - 1] = size_in - k
    return out


def fractional_max_indices(x, samples, kernel, output):
    """int64 array (N, C, *output): the flat in-plane index of each window's maximum of
    ``x`` (N, C, *spatial), windows placed by ``samples`` (N', C, nd), sample d of a plane
    placing the windows of spatial dim d counted from the last (PyTorch's order).

    >>> import ember
    >>> x = ember.arange(16.).reshape(1, 1, 4, 4)
    >>> fractional_max_indices(x, ember.full((1, 1, 2), 0.5), (2, 2), (2, 2)).tolist()
    [[[[5, 7], [13, 15]]]]
    """
    d, u = x._data, samples._data
    xp = get_array_module(d)
    n, c = d.shape[:2]
    spatial = d.shape[2:]
    nd = len(spatial)
    if is_meta(d) or d.size == 0 or 0 in output:
        return xp.zeros((n, c) + tuple(output), dtype=np.int64)
    u = u[:n]
    strides = [int(np.prod(spatial[i + 1:])) for i in range(nd)]
    flat = xp.zeros((n, c) + (1,) * (2 * nd), dtype=np.int64)
    for dim in range(nd):
        # PyTorch reads the samples backwards over the dims for 2-d (W first) and forwards
        # for 3-d (T first)
        which = nd - 1 - dim if nd == 2 else dim
        starts = _starts(xp, u[:, :, which], spatial[dim], output[dim], kernel[dim])
        cells = starts[..., None] + xp.asarray(np.arange(kernel[dim]))
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + dim], shape[2 + nd + dim] = output[dim], kernel[dim]
        flat = flat + cells.reshape(shape) * strides[dim]
    windows = math.prod(kernel)
    flat = xp.broadcast_to(flat, (n, c) + tuple(output) + tuple(kernel)).reshape(
        n, c, -1, windows)
    values = xp.take_along_axis(d.reshape(n, c, -1, 1), flat.reshape(n, c, -1, 1), axis=2)
    values = values.reshape(n, c, -1, windows)
    # the first maximum in window order wins, and the last NaN over any number
    nan = xp.isnan(values)
    last_nan = windows - 1 - xp.argmax(nan[..., ::-1], axis=-1)
    best = xp.where(nan.any(axis=-1), last_nan, xp.argmax(values, axis=-1))
    chosen = xp.take_along_axis(flat, best[..., None], axis=-1)
    return chosen.reshape((n, c) + tuple(output))


__all__ = ["fractional_max_indices"]
