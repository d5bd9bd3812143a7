"""Index and weight tables for ``F.interpolate`` (PyTorch's source-coordinate rules).

Nearest neighbour becomes one ``index_select`` per spatial dim; (bi)linear
becomes one small interpolation matrix per spatial dim, applied with matmul.
Both are differentiable (twice) through those ops.
"""
import numpy as np

from .._tensor import Tensor


def _scale(in_size, out_size, scale_factor, align_corners):
    """PyTorch's area_pixel_compute_scale (align_corners) / compute_scales_value."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return in_size / out_size


def nearest_index(in_size, out_size, scale_factor):
    """int64 tensor of the source index of each output position (mode='nearest')."""
    scale = np.float32(_scale(in_size, out_size, scale_factor, False))
    dst = np.arange(out_size, dtype=np.float32)
    src = np.floor(dst * scale).astype(np.int64)
    return Tensor._make(np.minimum(src, in_size - 1))


def linear_matrix(in_size, out_size, scale_factor, align_corners, dtype):
    """(out, in) interpolation matrix of mode='linear'/'bilinear' along one dim."""
    ft = np.float32 if dtype == np.float32 else np.float64
    scale = ft(_scale(in_size, out_size, scale_factor, align_corners))
    dst = np.arange(out_size, dtype=ft)
    if align_corners:
        src = dst * scale
    else:
        src = np.maximum((dst + ft(0.5)) * scale - ft(0.5), ft(0))
    i0 = np.minimum(src.astype(np.int64), in_size - 1)
    i1 = i0 + (i0 < in_size - 1)
    l1 = (src - i0.astype(ft)).astype(ft)
    l0 = (ft(1) - l1).astype(ft)
    m = np.zeros((out_size, in_size), dtype=dtype)
    rows = np.arange(out_size)
    np.add.at(m, (rows, i0), l0)
    np.add.at(m, (rows, i1), l1)
    return Tensor._make(m)


__all__ = ["nearest_index", "linear_matrix"]
