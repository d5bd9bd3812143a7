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

from ..autograd import grad_mode
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


def _nd_perm(nd):
    """Axes that move a channels-first (N, C, *S) array to channels-last (N, *S, C)."""
    return (0,) + tuple(range(2, 2 + nd)) + (1,)


# Two layouts, chosen per convolution by the size of one patch (C/G * prod(k)):
#
# * channels-first ("per sample"): columns (N, G, Cg*K, P); y_n = W @ cols_n is a batched
#   matmul whose result is already (N, O, *out): no transposes. Best when a patch is short
#   (the first layer of a CNN: C = 1), where the matmuls are memory-bound and the
#   transposes would cost as much as they do.
# * channels-last ("rows"): columns (G, N*P, K*Cg), one big matmul per op (a long K
#   dimension keeps BLAS efficient); the output/gradients are transposed from/to
#   channels-last once (cheap next to the matmuls).
_SHORT_PATCH = 32


def _short(cg, ksize):
    return cg * int(np.prod(ksize, dtype=np.int64)) <= _SHORT_PATCH


def _padded_channels_last(x, geom):
    """(N, C, *S) -> zero-padded channels-last copy (N, *(S + pads), C)."""
    nd = x.ndim - 2
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    xl = x.transpose(_nd_perm(nd))
    if padded == x.shape[2:]:
        return np.ascontiguousarray(xl)
    buf = np.zeros((x.shape[0],) + padded + (x.shape[1],), dtype=x.dtype)
    inner = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    buf[(slice(None),) + inner] = xl
    return buf


def _padded_channels_first(x, geom):
    """(N, C, *S) -> zero-padded (N, C, *(S + pads)) (x itself when there is no padding)."""
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    if padded == x.shape[2:]:
        return x
    buf = np.zeros(x.shape[:2] + padded, dtype=x.dtype)
    inner = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    buf[(slice(None), slice(None)) + inner] = x
    return buf


def _cols(x, ksize, out, geom):
    """im2col of the padded input: (N, G, Cg*K, P) for short patches, else channels-last
    (G, N*P, K*Cg). One copy out of a strided window view."""
    n, c = x.shape[:2]
    g = geom.groups
    nd = len(ksize)
    if _short(c // g, ksize):
        xp = _padded_channels_first(x, geom)
        st = xp.strides
        shape = (n, c) + tuple(ksize) + tuple(out)
        strides = (st[:2] + tuple(st[2 + i] * geom.dilation[i] for i in range(nd))
                   + tuple(st[2 + i] * geom.stride[i] for i in range(nd)))
        win = as_strided(xp, shape, strides, writeable=False)   # N, C, *k, *out: no copy
        return win.reshape(n, g, (c // g) * int(np.prod(ksize)), -1)
    xl = _padded_channels_last(x, geom)
    st = xl.strides
    shape = (n,) + tuple(out) + tuple(ksize) + (c,)
    strides = ((st[0],) + tuple(st[1 + i] * geom.stride[i] for i in range(nd))
               + tuple(st[1 + i] * geom.dilation[i] for i in range(nd)) + (st[-1],))
    win = as_strided(xl, shape, strides, writeable=False)  # N, *out, *k, C: no copy
    rows = n * int(np.prod(out, dtype=np.int64))
    if g == 1:
        return win.reshape(1, rows, -1)  # the one copy
    win = win.reshape(shape[:-1] + (g, c // g))
    perm = (1 + 2 * nd, 0) + tuple(range(1, 1 + 2 * nd)) + (2 + 2 * nd,)
    return win.transpose(perm).reshape(g, rows, -1)


def _weight_matrix(w, g):
    """(O, Cg, *k) -> (G, Og, prod(k)*Cg), matching the channels-last columns' order."""
    nd = w.ndim - 2
    o = w.shape[0]
    wl = w.transpose((0,) + tuple(range(2, 2 + nd)) + (1,))
    return wl.reshape(g, o // g, -1)


def _grad_matrix(gy, g):
    """(N, O, *out) -> (G, N*P, Og)."""
    n, o = gy.shape[:2]
    nd = gy.ndim - 2
    gl = gy.reshape((n, g, o // g) + gy.shape[2:])
    gl = gl.transpose((1, 0) + tuple(range(3, 3 + nd)) + (2,))
    # contiguous even when gy is a broadcast (e.g. the gradient of a sum): a zero-stride
    # reshape stays a view, and matmul on it leaves BLAS for a slow generic loop
    return np.ascontiguousarray(gl.reshape(g, -1, o // g))


def _mm(a, b):
    if a.shape[0] == 1:
        return (a[0] @ b[0])[None]
    return np.matmul(a, b)


def conv_forward(x, w, geom, keep=None, bias=None):
    """y = conv(x, w) (+ bias) on arrays: x (N, C, *S), w (O, C/G, *k) -> (N, O, *out).
    ``keep`` (a list) receives the im2col columns for reuse by the weight gradient."""
    ksize = w.shape[2:]
    out = geom.out_size(ksize)
    n, o, g = x.shape[0], w.shape[0], geom.groups
    nd = len(ksize)
    cols = _cols(x, ksize, out, geom)
    if keep is not None:
        keep.append(cols)
    if _short(w.shape[1], ksize):                                  # N, G, Cg*K, P
        y = np.matmul(w.reshape(g, o // g, -1), cols)              # N, G, Og, P
        y = y.reshape((n, o, -1))
        if bias is not None:
            np.add(y, bias[:, None], out=y)
        return y.reshape((n, o) + tuple(out))
    y = _mm(cols, _weight_matrix(w, g).transpose(0, 2, 1))         # G, N*P, Og
    y = y.reshape((g, n) + tuple(out) + (o // g,))
    perm = (1, 0, 2 + nd) + tuple(range(2, 2 + nd))                # N, G, Og, *out
    y = y.transpose(perm)
    res = np.empty((n, o) + tuple(out), dtype=y.dtype)
    if bias is None:
        res.reshape(y.shape)[...] = y
    else:  # the bias rides along the one transposing copy
        np.add(y, bias.reshape((g, o // g) + (1,) * nd), out=res.reshape(y.shape))
    return res


def _input_grad_short(gy, w, geom):
    """conv^T for short patches: (N, G, Cg*K, P) columns by one batched matmul, then a
    col2im of K strided adds into the padded channels-first gradient."""
    ksize = w.shape[2:]
    nd = len(ksize)
    n, o = gy.shape[:2]
    out = gy.shape[2:]
    g = geom.groups
    cg = w.shape[1]
    wt = w.reshape(g, o // g, -1).transpose(0, 2, 1)                # G, Cg*K, Og
    gy = np.ascontiguousarray(gy)  # a broadcast gradient would keep matmul off BLAS
    cols = np.matmul(wt, gy.reshape(n, g, o // g, -1))              # N, G, Cg*K, P
    cols = cols.reshape((n, g * cg) + tuple(ksize) + tuple(out))
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(geom.in_size, geom.pad))
    gx = np.zeros((n, g * cg) + padded, dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for kidx in np.ndindex(*ksize):
        sl = tuple(slice(k * d, k * d + s * (m - 1) + 1, s)
                   for k, d, s, m in zip(kidx, geom.dilation, geom.stride, out))
        gx[lead + sl] += cols[lead + kidx]
    if padded == tuple(geom.in_size):
        return gx
    crop = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(geom.in_size, geom.pad))
    return np.ascontiguousarray(gx[lead + crop])


def conv_input_grad(gy, w, geom):
    """gx = conv^T(gy, w): the gradient of conv w.r.t. its input (col2im)."""
    ksize = w.shape[2:]
    if _short(w.shape[1], ksize):
        return _input_grad_short(gy, w, geom)
    nd = len(ksize)
    n = gy.shape[0]
    out = gy.shape[2:]
    g = geom.groups
    cg = w.shape[1]
    c = cg * g
    og = w.shape[0] // g
    kk = int(np.prod(ksize, dtype=np.int64))
    # one matmul per kernel offset: (G, K, N*P, Cg), so that each offset's slab is
    # contiguous and col2im adds long runs (rows of W*C) instead of C-long pieces
    wk = np.ascontiguousarray(w.reshape((g, og, cg, kk)).transpose(0, 3, 1, 2))  # G,K,Og,Cg
    cols = np.matmul(_grad_matrix(gy, g)[:, None], wk)              # G, K, N*P, Cg
    cols = cols.reshape((g, kk, n) + tuple(out) + (cg,))
    # view as K, N, *out, G, Cg (no copy)
    cols = cols.transpose((1, 2) + tuple(range(3, 3 + nd)) + (0, 3 + nd))
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(geom.in_size, geom.pad))
    gx = np.zeros((n,) + padded + (g, cg), dtype=cols.dtype)
    lead = (slice(None),)
    for j, kidx in enumerate(np.ndindex(*ksize)):
        sl = tuple(slice(k * d, k * d + s * (m - 1) + 1, s)
                   for k, d, s, m in zip(kidx, geom.dilation, geom.stride, out))
        gx[lead + sl] += cols[j]
    crop = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(geom.in_size, geom.pad))
    gx = gx.reshape((n,) + padded + (c,))[lead + crop]
    return np.ascontiguousarray(gx.transpose((0, 1 + nd) + tuple(range(1, 1 + nd))))


def conv_weight_grad(x, gy, ksize, geom, cols=None):
    """gw: the gradient of conv w.r.t. its weight, shape (O, C/G, *k); ``cols`` are the
    forward's im2col columns when still at hand."""
    nd = len(ksize)
    n, o = gy.shape[:2]
    g = geom.groups
    cg = x.shape[1] // g
    if cols is None:
        cols = _cols(x, ksize, gy.shape[2:], geom)
    if _short(cg, ksize):                                            # N, G, Cg*K, P
        gl = np.ascontiguousarray(gy).reshape(n, g, o // g, -1)
        gw = np.matmul(gl, cols.transpose(0, 1, 3, 2)).sum(axis=0)   # G, Og, Cg*K
        return gw.reshape((o, cg) + tuple(ksize))
    # cols^T @ gy, not gy^T @ cols: OpenBLAS threads the latter (small M, N, long K)
    # pathologically (20x slower on 2 threads); the (K*Cg, Og) result is small to transpose
    gw = _mm(cols.transpose(0, 2, 1), _grad_matrix(gy, g)).transpose(0, 2, 1)  # G, Og, K*Cg
    gw = gw.reshape((o,) + tuple(ksize) + (cg,))
    return np.ascontiguousarray(gw.transpose((0, 1 + nd) + tuple(range(1, 1 + nd))))


class ConvForward(Primitive):
    """Convolution: ``forward(ctx, x, w, geom, bias=None)``; the bias is added while the
    result is laid out (no separate pass), and its gradient is the output gradient summed
    over batch and space."""
    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, geom, bias=None):
        ctx.geom = geom
        ctx.has_bias = bias is not None
        ctx.save_for_backward(x, w)
        # keep the columns for the weight gradient (only when the weight will need one)
        keep = [] if w._requires_grad and grad_mode.is_grad_enabled() else None
        y = conv_forward(x._data, w._data, geom, keep,
                         None if bias is None else bias._data)
        ctx.cols = keep[0] if keep else None
        return y

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        geom = ctx.geom
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = ConvInputGrad.apply(grad, w, geom)
        if ctx.needs_input_grad[1]:
            gw = ConvWeightGrad.apply(x, grad, tuple(w._data.shape[2:]), geom, ctx.cols)
        ctx.cols = None  # freed with the graph, like the saved tensors
        if not ctx.has_bias:
            return gx, gw, None
        gb = None
        if ctx.needs_input_grad[3]:
            gb = grad.sum((0,) + tuple(range(2, grad.dim())))
        return gx, gw, None, gb


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
    def forward(ctx, x, g, ksize, geom, cols=None):
        ctx.geom = geom
        ctx.save_for_backward(x, g)
        return conv_weight_grad(x._data, g._data, ksize, geom, cols)

    @staticmethod
    def backward(ctx, grad):
        x, g = ctx.saved_tensors
        geom = ctx.geom
        gx = gg = None
        if ctx.needs_input_grad[0]:
            gx = ConvInputGrad.apply(g, grad, geom)
        if ctx.needs_input_grad[1]:
            gg = ConvForward.apply(x, grad, geom)
        return gx, gg, None, None, None


__all__ = ["ConvForward", "ConvInputGrad", "ConvWeightGrad", "_Geom", "conv_forward",
           "conv_input_grad", "conv_weight_grad"]
