"""Kernels of the vision layers that are not compositions of other ops.

* interpolation tables: bicubic weights (PyTorch's cubic convolution, A = -0.75, clamped
  border taps) and 'nearest-exact' source indices, one small table per spatial dim, applied
  by the caller with matmul / index_select (so they are differentiable through those ops);
* ``Im2Col`` / ``Col2Im``: ``F.unfold`` / ``F.fold`` on (N, C, *S) arrays. They are each
  other's adjoints, so each one's gradient is the other and both are twice differentiable.
  Both loop over the kernel offsets (never over pixels), copying one strided slab per offset.

The tables are built in the input's array module (mixing two modules' arrays fails).
"""
import numpy as np

from ..backend import get_array_module
from .._tensor import Tensor
from .primitive import Primitive

_CUBIC_A = -0.75


def _source_scale(in_size, out_size, scale_factor, align_corners):
    """PyTorch's area_pixel_compute_scale."""
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return in_size / out_size


def cubic_matrix(like, in_size, out_size, scale_factor, align_corners):
    """(out, in) bicubic interpolation matrix along one dim, in ``like``'s dtype and module.

    The source coordinate is not clamped at 0 (unlike linear); each output row holds the
    four cubic-convolution weights at floor(src) - 1 .. floor(src) + 2, indices clamped to
    the input, so border taps add up on the edge element as PyTorch's kernel reads them."""
    dtype = like._data.dtype
    xp = get_array_module(like._data)
    ft = xp.float32 if dtype == xp.float32 else xp.float64

    def const(v):  # a 0-d array of ft: keeps the arithmetic in ft, as ft scalars would
        return xp.asarray(v, dtype=ft)

    scale = const(_source_scale(in_size, out_size, scale_factor, align_corners))
    dst = xp.arange(out_size, dtype=ft)
    src = dst * scale if align_corners else (dst + const(0.5)) * scale - const(0.5)
    base = xp.floor(src)
    t = (src - base).astype(ft)
    a = const(_CUBIC_A)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    weights = (far(t + 1), near(t), near(1 - t), far(2 - t))
    m = xp.zeros((out_size, in_size), dtype=dtype)
    rows = xp.arange(out_size)
    start = base.astype(xp.int64) - 1
    for k, w in enumerate(weights):
        xp.add.at(m, (rows, xp.clip(start + k, 0, in_size - 1)), w.astype(dtype))
    return Tensor._make(m)


def antialias_matrix(like, in_size, out_size, scale_factor, align_corners, kind):
    """(out, in) matrix of ``interpolate(..., antialias=True)`` along one dim, in ``like``'s
    dtype and module: PyTorch's separable anti-aliasing filter (as PIL's resampling).

    Output i reads the inputs within ``support`` of its centre ``scale * (i + 0.5)``; the
    filter (``kind``: 'bilinear' a triangle, 'bicubic' cubic convolution with A = -0.5,
    'lanczos' the 3-lobe Lanczos window) is stretched by the scale when
    downsampling, so every input pixel contributes, and each row's weights are normalised
    to sum to 1 (no clamped border taps)."""
    dtype = like._data.dtype
    xp = get_array_module(like._data)
    ft = xp.float32 if dtype == xp.float32 else xp.float64
    scale = _source_scale(in_size, out_size, scale_factor, align_corners)
    half_width = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[kind]
    support = half_width * scale if scale >= 1.0 else half_width
    stretch = 1.0 / scale if scale >= 1.0 else 1.0
    centre = scale * (xp.arange(out_size, dtype=xp.float64) + 0.5)
    first = xp.maximum(xp.trunc(centre - support + 0.5), 0).astype(xp.int64)
    last = xp.minimum(xp.trunc(centre + support + 0.5).astype(xp.int64), in_size)
    taps = xp.arange(in_size, dtype=xp.int64)[None, :]
    inside = (taps >= first[:, None]) & (taps < last[:, None])
    x = xp.abs((taps - centre[:, None] + 0.5) * stretch)
    if kind == "bicubic":
        a = -0.5
        w = xp.where(x < 1.0, ((a + 2) * x - (a + 3)) * x * x + 1,
                     xp.where(x < 2.0, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
    elif kind == "lanczos":
        w = xp.where(x < 3.0, xp.sinc(x) * xp.sinc(x / 3.0), 0.0)
    else:
        w = xp.maximum(1.0 - x, 0.0)
    w = xp.where(inside, w, 0.0).astype(ft)
    total = w.sum(axis=1, keepdims=True)
    w = w / xp.where(total == 0, 1, total)
    return Tensor._make(w.astype(dtype))


def nearest_exact_index(like, in_size, out_size, scale_factor):
    """int64 source index of each output position for mode='nearest-exact'
    (floor((dst + 0.5) * scale), clamped), in ``like``'s module."""
    xp = get_array_module(like._data)
    scale = xp.asarray(_source_scale(in_size, out_size, scale_factor, False), dtype=xp.float32)
    dst = xp.arange(out_size, dtype=xp.float32)
    src = xp.floor((dst + xp.asarray(0.5, dtype=xp.float32)) * scale).astype(xp.int64)
    return Tensor._make(xp.minimum(src, in_size - 1))


# ---- im2col / col2im -------------------------------------------------------------------------
class FoldGeom:
    """Geometry of one unfold/fold: per spatial dim kernel size, dilation, padding, stride,
    the (unpadded) image size and the number of blocks."""
    __slots__ = ("ksize", "dilation", "padding", "stride", "image", "blocks")

    def __init__(self, ksize, dilation, padding, stride, image):
        self.ksize, self.dilation = tuple(ksize), tuple(dilation)
        self.padding, self.stride, self.image = tuple(padding), tuple(stride), tuple(image)
        self.blocks = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1 for n, k, d, p, s in
                            zip(image, ksize, dilation, padding, stride))

    def offsets(self):
        """(kernel offset number, slices of the padded image read at that offset)."""
        for j, kidx in enumerate(np.ndindex(*self.ksize)):
            yield j, tuple(slice(k * d, k * d + s * (b - 1) + 1, s) for k, d, s, b in
                           zip(kidx, self.dilation, self.stride, self.blocks))

    def padded(self):
        return tuple(n + 2 * p for n, p in zip(self.image, self.padding))

    def crop(self):
        return tuple(slice(p, p + n) for p, n in zip(self.padding, self.image))


def im2col(x, geom):
    """(N, C, *image) -> (N, C * prod(k), prod(blocks)) columns, channel-major as PyTorch."""
    xp = get_array_module(x)
    n, c = x.shape[:2]
    kk = int(np.prod(geom.ksize))
    lead = (slice(None), slice(None))
    if any(geom.padding):
        buf = xp.zeros((n, c) + geom.padded(), dtype=x.dtype)
        buf[lead + geom.crop()] = x
        x = buf
    cols = xp.empty((n, c, kk) + geom.blocks, dtype=x.dtype)
    for j, sl in geom.offsets():
        cols[:, :, j] = x[lead + sl]
    return cols.reshape(n, c * kk, int(np.prod(geom.blocks)))


def col2im(cols, geom):
    """Adjoint of ``im2col``: (N, C * prod(k), L) columns summed into (N, C, *image)."""
    xp = get_array_module(cols)
    n = cols.shape[0]
    kk = int(np.prod(geom.ksize))
    c = cols.shape[1] // kk
    cols = cols.reshape((n, c, kk) + geom.blocks)
    out = xp.zeros((n, c) + geom.padded(), dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for j, sl in geom.offsets():
        out[lead + sl] += cols[:, :, j]
    if any(geom.padding):
        out = xp.ascontiguousarray(out[lead + geom.crop()])
    return out


class Im2Col(Primitive):
    """``F.unfold`` of a batched (N, C, *S) tensor; its gradient folds (``Col2Im``)."""
    _backward_name = "Im2ColBackward0"

    @staticmethod
    def forward(ctx, x, geom):
        ctx.geom = geom
        return im2col(x._data, geom)

    @staticmethod
    def backward(ctx, grad):
        return Col2Im.apply(grad, ctx.geom), None


class Col2Im(Primitive):
    """``F.fold`` of batched (N, C * prod(k), L) columns; its gradient unfolds (``Im2Col``)."""
    _backward_name = "Col2ImBackward0"

    @staticmethod
    def forward(ctx, cols, geom):
        ctx.geom = geom
        return col2im(cols._data, geom)

    @staticmethod
    def backward(ctx, grad):
        return Im2Col.apply(grad, ctx.geom), None


__all__ = ["cubic_matrix", "nearest_exact_index", "FoldGeom", "Im2Col", "Col2Im"]
