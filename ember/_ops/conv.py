"""N-d convolution as three Primitives closed under differentiation.

* ``ConvForward(x, w)``        y = conv(x, w)                 (cross-correlation)
* ``ConvInputGrad(g, w)``      gx = conv^T(g, w)               (= transposed convolution)
* ``ConvWeightGrad(x, g)``     gw = correlation of x with g

Each is bilinear, and the derivative of each is one of the three, so conv is
differentiable any number of times. The kernels are NumPy im2col (a strided
window view, one copy) plus one (grouped) matmul; col2im loops only over the
kernel offsets, never over pixels.

Geometry (``_Geom``) is per spatial dim: stride, dilation, padding as
(before, after) pairs (asymmetric for 'same' with even kernels), and the
unpadded input size.
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from .primitive import Primitive


class _Geom:
    __slots__ = ("stride", "dilation", "pad", "in_size", "groups")

    def __init__(self, stride, dilation, pad, in_size, groups):
        self.stride = tuple(stride)
        self.dilation = tuple(dilation)
        self.pad = tuple(tuple(p) for p in pad)
        self.in_size = tuple(in_size)
        self.groups = groups

    def out_size(self, ksize):
        return tuple((n + lo + hi - d * (k - 1) - 1) // s + 1
                     for n, (lo, hi), d, k, s in zip(self.in_size, self.pad, self.dilation,
                                                     ksize, self.stride))


def _pad(x, geom):
    """Zero-pad the spatial dims of (N, C, *S)."""
    if not any(lo or hi for lo, hi in geom.pad):
        return x
    return np.pad(x, ((0, 0), (0, 0)) + geom.pad)


def _windows(xp, ksize, out, geom):
    """Strided view (N, C, *out, *k) of the padded input: no copy."""
    nd = len(ksize)
    st = xp.strides
    shape = xp.shape[:2] + tuple(out) + tuple(ksize)
    strides = (st[:2] + tuple(st[2 + i] * geom.stride[i] for i in range(nd))
               + tuple(st[2 + i] * geom.dilation[i] for i in range(nd)))
    return as_strided(xp, shape, strides, writeable=False)


def _cols(x, ksize, out, geom):
    """im2col: (G, N*prod(out), Cg*prod(k)) columns of the padded input."""
    n, c = x.shape[:2]
    g = geom.groups
    nd = len(ksize)
    win = _windows(_pad(x, geom), ksize, out, geom)  # N, C, *out, *k
    win = win.reshape((n, g, c // g) + tuple(out) + tuple(ksize))
    # -> G, N, *out, Cg, *k
    perm = (1, 0) + tuple(range(3, 3 + nd)) + (2,) + tuple(range(3 + nd, 3 + 2 * nd))
    cols = np.ascontiguousarray(win.transpose(perm))
    return cols.reshape(g, n * int(np.prod(out, dtype=np.int64)), -1)


def conv_forward(x, w, geom):
    """y = conv(x, w) on arrays: x (N, C, *S), w (O, C/G, *k) -> (N, O, *out)."""
    ksize = w.shape[2:]
    out = geom.out_size(ksize)
    n = x.shape[0]
    g = geom.groups
    o = w.shape[0]
    cols = _cols(x, ksize, out, geom)                      # G, N*P, Cg*K
    wm = w.reshape(g, o // g, -1).transpose(0, 2, 1)       # G, Cg*K, Og
    y = np.matmul(cols, wm) if g > 1 else (cols[0] @ wm[0])[None]  # G, N*P, Og
    y = y.reshape((g, n) + tuple(out) + (o // g,))
    nd = len(ksize)
    # -> N, G, Og, *out
    perm = (1, 0, 2 + nd) + tuple(range(2, 2 + nd))
    return np.ascontiguousarray(y.transpose(perm)).reshape((n, o) + tuple(out))


def conv_input_grad(gy, w, geom):
    """gx = conv^T(gy, w): the gradient of conv w.r.t. its input (col2im)."""
    ksize = w.shape[2:]
    nd = len(ksize)
    n, o = gy.shape[:2]
    out = gy.shape[2:]
    g = geom.groups
    cg = w.shape[1]
    c = cg * g
    # gy -> G, N*P, Og
    gm = gy.reshape((n, g, o // g) + tuple(out))
    gm = gm.transpose((1, 0) + tuple(range(3, 3 + nd)) + (2,)).reshape(g, -1, o // g)
    wm = w.reshape(g, o // g, -1)                          # G, Og, Cg*K
    cols = np.matmul(gm, wm) if g > 1 else (gm[0] @ wm[0])[None]  # G, N*P, Cg*K
    cols = cols.reshape((g, n) + tuple(out) + (cg,) + tuple(ksize))
    # -> N, G, Cg, *k, *out  -> N, C, *k, *out
    perm = (1, 0, 2 + nd) + tuple(range(3 + nd, 3 + 2 * nd)) + tuple(range(2, 2 + nd))
    cols = cols.transpose(perm).reshape((n, c) + tuple(ksize) + tuple(out))
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(geom.in_size, geom.pad))
    gx = np.zeros((n, c) + padded, dtype=np.result_type(gy, w))
    for kidx in np.ndindex(*ksize):
        sl = tuple(slice(k * d, k * d + s * (m - 1) + 1, s)
                   for k, d, s, m in zip(kidx, geom.dilation, geom.stride, out))
        gx[(slice(None), slice(None)) + sl] += cols[(slice(None), slice(None)) + kidx]
    crop = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(geom.in_size, geom.pad))
    return gx[(slice(None), slice(None)) + crop]


def conv_weight_grad(x, gy, ksize, geom):
    """gw: the gradient of conv w.r.t. its weight, shape (O, C/G, *k)."""
    nd = len(ksize)
    n, o = gy.shape[:2]
    out = gy.shape[2:]
    g = geom.groups
    cols = _cols(x, ksize, out, geom)                      # G, N*P, Cg*K
    gm = gy.reshape((n, g, o // g) + tuple(out))
    gm = gm.transpose((1, 2, 0) + tuple(range(3, 3 + nd))).reshape(g, o // g, -1)  # G, Og, N*P
    gw = np.matmul(gm, cols) if g > 1 else (gm[0] @ cols[0])[None]  # G, Og, Cg*K
    return gw.reshape((o, x.shape[1] // g) + tuple(ksize))


class ConvForward(Primitive):
    """Convolution (no bias): ``forward(ctx, x, w, geom)``."""
    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, geom):
        ctx.geom = geom
        ctx.save_for_backward(x, w)
        return conv_forward(x._data, w._data, geom)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        geom = ctx.geom
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = ConvInputGrad.apply(grad, w, geom)
        if ctx.needs_input_grad[1]:
            gw = ConvWeightGrad.apply(x, grad, tuple(w._data.shape[2:]), geom)
        return gx, gw, None


class ConvInputGrad(Primitive):
    """Transposed convolution ``conv^T(g, w)``; input size comes from ``geom``."""
    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, g, w, geom):
        ctx.geom = geom
        ctx.save_for_backward(g, w)
        return conv_input_grad(g._data, w._data, geom)

    @staticmethod
    def backward(ctx, grad):
        g, w = ctx.saved_tensors
        geom = ctx.geom
        gg = gw = None
        if ctx.needs_input_grad[0]:
            gg = ConvForward.apply(grad, w, geom)
        if ctx.needs_input_grad[1]:
            # <grad, conv^T_w(g)> = <conv_w(grad), g>: the weight grad of a conv on grad
            gw = ConvWeightGrad.apply(grad, g, tuple(w._data.shape[2:]), geom)
        return gg, gw, None


class ConvWeightGrad(Primitive):
    """Weight gradient of a convolution: correlation of ``x`` with ``g``."""
    _backward_name = "ConvolutionBackwardBackward0"

    @staticmethod
    def forward(ctx, x, g, ksize, geom):
        ctx.geom = geom
        ctx.save_for_backward(x, g)
        return conv_weight_grad(x._data, g._data, ksize, geom)

    @staticmethod
    def backward(ctx, grad):
        x, g = ctx.saved_tensors
        geom = ctx.geom
        gx = gg = None
        if ctx.needs_input_grad[0]:
            gx = ConvInputGrad.apply(g, grad, geom)
        if ctx.needs_input_grad[1]:
            gg = ConvForward.apply(x, grad, geom)
        return gx, gg, None, None


__all__ = ["ConvForward", "ConvInputGrad", "ConvWeightGrad", "_Geom", "conv_forward",
           "conv_input_grad", "conv_weight_grad"]
