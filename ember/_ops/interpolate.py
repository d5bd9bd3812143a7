"""Index and weight tables for ``F.interpolate`` (PyTorch's source-coordinate rules).

Nearest neighbour becomes one ``index_select`` per spatial dim; (bi)linear
becomes one small interpolation matrix per spatial dim, applied with matmul.
Both are differentiable (twice) through those ops.
"""
from ..backend import get_array_module

from .._tensor import Tensor


def _scale(in_size, out_size, scale_factor, align_corners):
    """PyTorch's area_pixel_compute_scale (align_corners) / compute_scales_value."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return in_size / out_size


def nearest_index(in_size, out_size, scale_factor, like):
    """int64 tensor of the source index of each output position (mode='nearest'), in the
    array module of the tensor ``like``."""
    xp = get_array_module(like._data)
    scale = xp.asarray(_scale(in_size, out_size, scale_factor, False), dtype=xp.float32)
    dst = xp.arange(out_size, dtype=xp.float32)
    src = xp.floor(dst * scale).astype(xp.int64)
    return Tensor._make(xp.minimum(src, in_size - 1))


def linear_matrix(in_size, out_size, scale_factor, align_corners, dtype, like):
    """(out, in) interpolation matrix of mode='linear'/'bilinear' along one dim, in the
    array module of the tensor ``like``."""
    xp = get_array_module(like._data)
    ft = xp.float32 if dtype == xp.float32 else xp.float64

    def const(v):  # a 0-d array of ft: keeps the arithmetic in ft, as ft scalars would
        return xp.asarray(v, dtype=ft)
    scale = const(_scale(in_size, out_size, scale_factor, align_corners))
    dst = xp.arange(out_size, dtype=ft)
    if align_corners:
        src = dst * scale
    else:
        src = xp.maximum((dst + const(0.5)) * scale - const(0.5), const(0))
    i0 = xp.minimum(src.astype(xp.int64), in_size - 1)
    i1 = i0 + (i0 < in_size - 1)
    l1 = (src - i0.astype(ft)).astype(ft)
    l0 = (const(1) - l1).astype(ft)
    m = xp.zeros((out_size, in_size), dtype=dtype)
    rows = xp.arange(out_size)
    xp.add.at(m, (rows, i0), l0)
    xp.add.at(m, (rows, i1), l1)
    return Tensor._make(m)


__all__ = ["nearest_index", "linear_matrix"]
