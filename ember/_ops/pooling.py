"""Pooling kernels: max (fixed and adaptive windows, with PyTorch's flat indices),
window sums for average pooling, adaptive averaging as one small matmul per dim.

All inputs are batched channels-first arrays (N, C, *S); geometry is per spatial
dim. Max pooling finds indices with a strided window view and one argmax; the
gradient scatters into those indices with ``scatter_add`` (its own gradient is a
gather), so max pooling is twice differentiable. ``AvgPool`` and ``AvgPoolT`` (and the
adaptive pair) are each other's adjoints. Each op has one class per spatial rank
only so that its graph node carries PyTorch's name (``MaxPool3DWithIndicesBackward0``).
"""
import itertools
import math

import numpy as np

from ..backend import get_array_module, kernels, strided_view
from ..backend.dtypes import is_float_np
from ..backend.meta import is_meta
from ..backend.memory_layout import relayout_like

from .._tensor import Tensor
from ..autograd.batching import fold_batch_under_vmap
from .primitive import Primitive
from .indexing import Gather
from .grad_link import link_class, link_zero_grad_to_input
from ..backend.parallel import host_work, parallel_for


def pool_out_size(size, k, s, p, d, ceil_mode):
    """PyTorch's pooling_output_shape."""
    num = size + 2 * p - d * (k - 1) - 1
    out = (-(-num // s) if ceil_mode else num // s) + 1
    if ceil_mode and (out - 1) * s >= size + p:
        out -= 1
    return out


def _pad_value(dtype):
    if is_float_np(dtype):
        return -math.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _window_view(padded, out, ksize, stride, dilation):
    nd = len(ksize)
    st = padded.strides
    shape = padded.shape[:2] + tuple(out) + tuple(ksize)
    strides = (st[:2] + tuple(st[2 + i] * stride[i] for i in range(nd))
               + tuple(st[2 + i] * dilation[i] for i in range(nd)))
    return strided_view(padded, shape, strides, writeable=False)


def _padded(x, out, ksize, stride, padding, dilation, value):
    """Pad (N, C, *S) by ``padding`` before and enough after for every window."""
    pads = []
    for n, o, k, s, p, d in zip(x.shape[2:], out, ksize, stride, padding, dilation):
        need = (o - 1) * s + d * (k - 1) + 1
        pads.append((p, max(0, need - n - p)))
    if not any(lo or hi for lo, hi in pads):
        return x
    return get_array_module(x).pad(x, ((0, 0), (0, 0)) + tuple(pads), constant_values=value)


def _flat_indices(arg, out, ksize, stride, padding, dilation, in_size):
    """Window-local argmax (N, C, *out) -> flat input index per channel."""
    nd = len(ksize)
    xp = get_array_module(arg)
    kpos = xp.unravel_index(arg, ksize)
    flat = 0
    for i in range(nd):
        o = xp.arange(out[i]).reshape((out[i],) + (1,) * (nd - 1 - i))
        pos = o * stride[i] + kpos[i] * dilation[i] - padding[i]
        flat = flat * in_size[i] + pos
    return flat.astype(xp.int64)


def max_pool_indices(x, ksize, stride, padding, dilation, ceil_mode):
    """(values, flat indices) of max pooling on an array (N, C, *S)."""
    out = tuple(pool_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                zip(x.shape[2:], ksize, stride, padding, dilation))
    padded = _padded(x, out, ksize, stride, padding, dilation, _pad_value(x.dtype))
    win = _window_view(padded, out, ksize, stride, dilation)
    # the window size spelled out, not -1: an empty batch has no size to infer it from
    win = win.reshape(win.shape[:2 + len(out)] + (math.prod(ksize),))
    arg = win.argmax(axis=-1)
    vals = get_array_module(x).take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    return vals, _flat_indices(arg, out, ksize, stride, padding, dilation, x.shape[2:])


def _adaptive_bounds(xp, size, out):
    i = xp.arange(out)
    start = (i * size) // out
    end = -((-(i + 1) * size) // out)
    return start, end


def adaptive_max_pool_indices(x, out):
    """(values, flat indices) of adaptive max pooling on an array (N, C, *S)."""
    nd = len(out)
    sizes = x.shape[2:]
    xp = get_array_module(x)
    idx = []
    for n, o in zip(sizes, out):
        start, end = _adaptive_bounds(np, n, o)  # from sizes only: on the host, then moved
        kmax = int((end - start).max())
        start, end = xp.asarray(start), xp.asarray(end)
        pos = start[:, None] + xp.arange(kmax)[None, :]
        idx.append(xp.minimum(pos, end[:, None] - 1))  # repeat the last: argmax keeps the first
    # gather (N, C, *out, *k) with broadcast fancy indices
    grids = []
    for i in range(nd):
        shape = [1] * (2 * nd)
        shape[i] = out[i]
        shape[nd + i] = idx[i].shape[1]
        grids.append(idx[i].reshape(shape))
    win = x[(slice(None), slice(None)) + tuple(grids)]
    win = win.reshape(win.shape[:2 + nd] + (math.prod(win.shape[2 + nd:]),))
    arg = win.argmax(axis=-1)
    vals = xp.take_along_axis(win, arg[..., None], axis=-1)[..., 0]
    kshape = tuple(g.shape[1] for g in idx)
    kpos = xp.unravel_index(arg, kshape)
    flat = 0
    for i in range(nd):
        o = xp.arange(out[i]).reshape((out[i],) + (1,) * (nd - 1 - i))
        flat = flat * sizes[i] + idx[i][o, kpos[i]]
    return vals, flat.astype(xp.int64)


class MaxPoolGather(Primitive):
    """Max-pooled values from precomputed flat indices; gradient scattered back."""
    _backward_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, indices, values):
        # an unbatched input (C, *S) is pooled as a batch of one, and stays unbatched
        ctx.unbatched = x._data.ndim < values.ndim
        ctx.in_shape = (1,) * ctx.unbatched + x._data.shape
        ctx.indices = indices
        return values[0] if ctx.unbatched else values

    @staticmethod
    def backward(ctx, grad):
        scatter = ctx._forward_cls._scatter
        out = _unbatched_grad(ctx, scatter.apply(_batched_grad(ctx, grad), ctx.indices,
                                                 ctx.in_shape))
        # recorded, it reaches the input with a zero gradient, as PyTorch's backward op does
        return link_zero_grad_to_input(out, ctx, scatter._link), None, None


def _batched_grad(ctx, grad):
    return grad.unsqueeze(0) if ctx.unbatched else grad


def _unbatched_grad(ctx, grad):
    return grad.squeeze(0) if ctx.unbatched else grad


class MaxPoolScatter(Primitive):
    """Gradient of max pooling: each output's gradient added at its input index
    (one ``bincount``); its own gradient gathers at the same indices."""
    _backward_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, indices, in_shape):
        ctx.indices = indices
        ctx.out_shape = grad._data.shape
        n, c = in_shape[:2]
        size = math.prod(in_shape[2:])
        per = math.prod(indices._data.shape[2:])  # not -1: n may be 0
        g = grad._data
        xp = get_array_module(g)
        idx = indices._data.reshape(n * c, per) + (xp.arange(n * c) * size)[:, None]
        summed = xp.bincount(idx.ravel(), weights=g.ravel(), minlength=n * c * size)
        # a channels-last network's gradients stay channels-last (mixed layouts run slowly)
        return relayout_like(summed.astype(g.dtype, copy=False).reshape(in_shape), g)

    @staticmethod
    def backward(ctx, gg):
        n, c = gg._data.shape[:2]
        idx = ctx.indices.reshape(n, c, math.prod(ctx.indices.shape[2:]))
        flat = gg.reshape(n, c, math.prod(gg._data.shape[2:]))
        return Gather.apply(flat, 2, idx).reshape(ctx.out_shape), None, None


# ---- non-overlapping windows (kernel == stride, no padding/dilation): by reshape ----------
class _TileGeom:
    """Tiling of (N, C, *S) into (N, C, o1, k1, o2, k2, ...) windows; ``code`` holds each
    output's window-local argmax (row-major offset in the window, first maximum wins)."""
    __slots__ = ("ksize", "out", "in_shape", "code")

    def __init__(self, ksize, out, in_shape):
        self.ksize, self.out, self.in_shape = tuple(ksize), tuple(out), tuple(in_shape)
        self.code = None

    def tiles(self, a):
        """(N, C, *S) -> its (N, C, o1, k1, ...) window view (crops the uncovered tail)."""
        crop = tuple(slice(0, o * k) for o, k in zip(self.out, self.ksize))
        shape = a.shape[:2]
        for o, k in zip(self.out, self.ksize):
            shape += (o, k)
        return a[(slice(None), slice(None)) + crop].reshape(shape)

    def offsets(self):
        """(code value, index into the window view) for every window offset."""
        nd = len(self.ksize)
        lead = (slice(None), slice(None))
        for j, kidx in enumerate(itertools.product(*map(range, self.ksize))):
            sel = lead
            for i in range(nd):
                sel += (slice(None), kidx[i])
            yield j, sel


def _tiled_ok(x, ksize, stride, padding, dilation, ceil_mode):
    if tuple(ksize) != tuple(stride) or any(padding) or any(d != 1 for d in dilation):
        return False
    return not ceil_mode or all(n % k == 0 for n, k in zip(x.shape[2:], ksize))


def _by_samples(a, fn, work):
    """``fn(lo, hi)`` over ranges of ``a``'s samples, on the thread pool when ``work`` (bytes
    touched) is large enough and ``a`` is host memory (see ``host_work``). Every kernel below
    is element-wise across samples, so the split never changes a result."""
    parallel_for(a.shape[0], fn, host_work(a, work))


def tiled_max(x, geom):
    """Max over non-overlapping windows: values, the window-local argmax code, and whether
    x holds a NaN (None: not looked at).

    One transposed copy puts each window offset in its own contiguous slab (strided
    NumPy loops are several times slower than contiguous ones); then a running maximum
    over the slabs. Offsets come in increasing order, so the code is updated with
    ``maximum(code, j * (v > max))`` (no masked writes: those are slow). Samples are split
    over the thread pool."""
    nd = len(geom.ksize)
    perm = tuple(3 + 2 * i for i in range(nd)) + (0, 1) + tuple(2 + 2 * i for i in range(nd))
    nk = math.prod(geom.ksize)
    xp = get_array_module(x)
    ctype = xp.uint8 if nk <= 256 else xp.int64
    shape = x.shape[:2] + geom.out
    vals = xp.empty(shape, dtype=x.dtype)
    code = xp.empty(shape, dtype=ctype)
    if geom.ksize == (2, 2) and kernels.native_for(x):
        nan = []

        def compiled(lo, hi):  # one pass, the same values and codes
            nan.append(kernels.maxpool2_forward(x[lo:hi], vals[lo:hi], code[lo:hi]))
        _by_samples(x, compiled, x.nbytes)
        return vals, code, any(nan)

    def chunk(lo, hi):
        xs = x[lo:hi]
        win = geom.tiles(xs)                                  # n, C, o1, k1, o2, k2, ...
        slabs = xp.ascontiguousarray(win.transpose(perm)).reshape((nk,) + xs.shape[:2]
                                                                  + geom.out)
        v, c = vals[lo:hi], code[lo:hi]
        xp.copyto(v, slabs[0])
        c.fill(0)
        gt = xp.empty(v.shape, dtype=bool)
        for j in range(1, nk):
            s = slabs[j]
            xp.greater(s, v, out=gt)
            xp.maximum(c, gt.view(xp.uint8) * ctype(j) if ctype is xp.uint8 else gt * j, out=c)
            xp.maximum(v, s, out=v)
    _by_samples(x, chunk, 2 * x.nbytes)
    return vals, code, None


def tiled_scatter(grad, geom):
    """Gradient of ``tiled_max``: each output's gradient at its window's argmax."""
    g = grad
    full = all(o * k == n for o, k, n in zip(geom.out, geom.ksize, geom.in_shape[2:]))
    xp = get_array_module(g)
    gx = (xp.empty if full else xp.zeros)(geom.in_shape, dtype=g.dtype)
    code = geom.code
    if g.shape != code.shape:  # a broadcast gradient (e.g. of a sum)
        g = xp.broadcast_to(g, code.shape)
    if geom.ksize == (2, 2) and code.dtype == xp.uint8 and kernels.native_for(gx):
        g = xp.ascontiguousarray(g, dtype=gx.dtype)

        def chunk(lo, hi):  # compiled: one pass, the same products
            kernels.maxpool2_backward(g[lo:hi], code[lo:hi], gx[lo:hi], geom.out)
        _by_samples(gx, chunk, 2 * gx.nbytes)
        return gx

    def chunk(lo, hi):
        win = geom.tiles(gx[lo:hi])
        gs, cs = g[lo:hi], code[lo:hi]
        for j, sel in geom.offsets():
            xp.multiply(gs, cs == j, out=win[sel])
    _by_samples(gx, chunk, 2 * gx.nbytes)
    return gx


def tiled_gather(a, geom):
    """Adjoint of ``tiled_scatter``: each window's value at its argmax."""
    code = geom.code
    xp = get_array_module(a)
    out = xp.empty(code.shape, dtype=a.dtype)

    def chunk(lo, hi):
        win = geom.tiles(a[lo:hi])
        cs, o = code[lo:hi], out[lo:hi]
        it = geom.offsets()
        _, sel = next(it)
        xp.copyto(o, win[sel])
        for j, sel in it:
            xp.copyto(o, win[sel], where=cs == j)
    _by_samples(code, chunk, 2 * a.nbytes)
    return out


def tiled_indices(geom):
    """PyTorch's flat per-channel indices from the window-local codes."""
    nd = len(geom.ksize)
    xp = get_array_module(geom.code)
    kpos = xp.unravel_index(geom.code, geom.ksize)
    in_size = geom.in_shape[2:]
    flat = 0
    for i in range(nd):
        o = xp.arange(geom.out[i]).reshape((geom.out[i],) + (1,) * (nd - 1 - i))
        flat = flat * in_size[i] + (o * geom.ksize[i] + kpos[i])
    return flat.astype(xp.int64)


class TiledMax(Primitive):
    """Max over non-overlapping windows (``forward(ctx, x, geom, values)``: the values
    and ``geom.code`` are computed beforehand)."""
    _backward_name = "MaxPool2DWithIndicesBackward0"

    @staticmethod
    def forward(ctx, x, geom, values):
        ctx.geom = geom
        ctx.unbatched = x._data.ndim < values.ndim
        return values[0] if ctx.unbatched else values

    @staticmethod
    def backward(ctx, grad):
        scatter = ctx._forward_cls._scatter
        out = _unbatched_grad(ctx, scatter.apply(_batched_grad(ctx, grad), ctx.geom))
        return link_zero_grad_to_input(out, ctx, scatter._link), None, None


class TiledScatter(Primitive):
    """Gradient of ``TiledMax``; its own gradient gathers at the same argmaxes."""
    _backward_name = "MaxPool2DWithIndicesBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, geom):
        ctx.geom = geom
        return relayout_like(tiled_scatter(grad._data, geom), grad._data)  # (as above)

    @staticmethod
    def backward(ctx, gg):
        return TiledGather.apply(gg, ctx.geom), None


class TiledGather(Primitive):
    """Window values at the stored argmaxes (the adjoint of ``TiledScatter``)."""
    _backward_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, geom):
        ctx.geom = geom
        return tiled_gather(a._data, geom)

    @staticmethod
    def backward(ctx, grad):
        return TiledScatter.apply(grad, ctx.geom), None


def _named(cls_name, base, backward_name, **attrs):
    """A subclass of ``base`` whose graph node is called ``backward_name`` (PyTorch names
    the node after the op and its spatial rank; the kernel is the same)."""
    return type(cls_name, (base,),
                {"_backward_name": backward_name, "__module__": __name__, **attrs})


MaxPoolGather._scatter = MaxPoolScatter
TiledMax._scatter = TiledScatter
# (spatial dims, adaptive) -> the gather class; spatial dims -> the tiled class
_GATHERS = {(2, False): MaxPoolGather}
_TILED = {2: TiledMax, 3: _named("TiledMax3D", TiledMax, "MaxPool3DWithIndicesBackward0",
                                 _scatter=_named("TiledScatter3D", TiledScatter,
                                                 "MaxPool3DWithIndicesBackwardBackward0"))}
for _nd, _adaptive in ((3, False), (2, True), (3, True)):
    _stem = f"AdaptiveMaxPool{_nd}D" if _adaptive else f"MaxPool{_nd}D"
    _node = _stem if _adaptive else _stem + "WithIndices"
    _GATHERS[_nd, _adaptive] = _named(
        _stem + "Gather", MaxPoolGather, _node + "Backward0",
        _scatter=_named(_stem + "Scatter", MaxPoolScatter, _node + "BackwardBackward0"))
for _gather in list(_GATHERS.values()) + list(_TILED.values()):
    # the zero-gradient link of each max pool's gradient (grad_link.py), under its node's name
    _gather._scatter._link = link_class(_gather._scatter._backward_name)


@fold_batch_under_vmap
def max_pool(x, ksize, stride, padding, dilation, ceil_mode, need_indices=True):
    """Max pooling of a batched tensor (N, C, *S) or an unbatched one (C, *S): (values,
    int64 indices) tensors (indices None unless ``need_indices``)."""
    unbatched = x._data.ndim == len(ksize) + 1
    a = x._data[None] if unbatched else x._data
    if _tiled_ok(a, ksize, stride, padding, dilation, ceil_mode):
        out = tuple(n // k for n, k in zip(a.shape[2:], ksize))
        geom = _TileGeom(ksize, out, a.shape)
        vals, geom.code, nan = tiled_max(a, geom)
        # NaN: the running maximum propagates it but the code keeps an earlier position;
        # the general path below picks the NaN's own index
        if nan is None:
            nan = not is_meta(vals) and is_float_np(a.dtype) and bool(
                get_array_module(vals).isnan(vals).any())
        if not nan:
            indices = tiled_indices(geom) if need_indices else None
            indices = None if indices is None else Tensor._make(indices[0] if unbatched
                                                                else indices)
            vals = relayout_like(vals, a)  # a channels-last input's layout, as PyTorch
            indices = indices if indices is None else Tensor._make(
                relayout_like(indices._data, a))
            return _TILED.get(len(ksize), TiledMax).apply(x, geom, vals), indices
    vals, idx = max_pool_indices(a, ksize, stride, padding, dilation, ceil_mode)
    vals, idx = relayout_like(vals, a), relayout_like(idx, a)
    indices = Tensor._make(idx)
    gather = _GATHERS.get((len(ksize), False), MaxPoolGather)
    return gather.apply(x, indices, vals), indices[0] if unbatched else indices


@fold_batch_under_vmap
def adaptive_max_pool(x, out):
    """Adaptive max pooling of a batched (N, C, *S) or unbatched (C, *S) tensor:
    (values, indices)."""
    unbatched = x._data.ndim == len(out) + 1
    a = x._data[None] if unbatched else x._data
    vals, idx = adaptive_max_pool_indices(a, out)
    vals, idx = relayout_like(vals, a), relayout_like(idx, a)  # as max_pool
    indices = Tensor._make(idx)
    gather = _GATHERS.get((len(out), True), MaxPoolGather)
    return gather.apply(x, indices, vals), indices[0] if unbatched else indices


# ---- window sums (average pooling) -----------------------------------------------------------
class _SumGeom:
    __slots__ = ("ksize", "stride", "padding", "in_size", "out")

    def __init__(self, ksize, stride, padding, in_size, out):
        self.ksize, self.stride, self.padding = tuple(ksize), tuple(stride), tuple(padding)
        self.in_size, self.out = tuple(in_size), tuple(out)


def window_sum(x, geom):
    ones = (1,) * len(geom.ksize)
    padded = _padded(x, geom.out, geom.ksize, geom.stride, geom.padding, ones, 0)
    win = _window_view(padded, geom.out, geom.ksize, geom.stride, ones)
    nd = len(geom.ksize)
    return win.sum(axis=tuple(range(2 + nd, 2 + 2 * nd)))


def window_sum_t(g, geom):
    padded = tuple((o - 1) * s + k for o, s, k in zip(geom.out, geom.stride, geom.ksize))
    padded = tuple(max(pd, n + p) for pd, n, p in zip(padded, geom.in_size, geom.padding))
    xp = get_array_module(g)
    gx = xp.zeros(g.shape[:2] + padded, dtype=g.dtype)
    lead = (slice(None), slice(None))
    for kidx in itertools.product(*map(range, geom.ksize)):
        sl = tuple(slice(k, k + s * (o - 1) + 1, s)
                   for k, s, o in zip(kidx, geom.stride, geom.out))
        gx[lead + sl] += g
    crop = tuple(slice(p, p + n) for p, n in zip(geom.padding, geom.in_size))
    return xp.ascontiguousarray(gx[lead + crop])


def _divisor(xp, in_size, out, ksize, stride, padding, count_include_pad):
    """Per-output-position divisor of average pooling, as PyTorch computes it."""
    div = 1
    nd = len(ksize)
    for i, (n, o, k, s, p) in enumerate(zip(in_size, out, ksize, stride, padding)):
        start = xp.arange(o) * s - p
        end = xp.minimum(start + k, n + p)
        size = end - start
        if not count_include_pad:
            size = xp.minimum(end, n) - xp.maximum(start, 0)
        div = div * size.reshape((o,) + (1,) * (nd - 1 - i))
    return div


class AvgPool(Primitive):
    """Window sums divided by the per-position divisor ``div`` (an array or a number)."""
    _backward_name = "AvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, geom, div):
        ctx.geom, ctx.div = geom, div
        a = x._data
        ctx.unbatched = a.ndim == len(geom.ksize) + 1  # (C, *S): pooled as a batch of one
        low = a.dtype if a.dtype.kind == "V" else None  # bfloat16: summed in float32, as
        if low is not None:                             # PyTorch, and rounded once
            a = a.astype(np.float32)
        summed = window_sum(a[None] if ctx.unbatched else a, geom)
        out = (summed / div).astype(low or summed.dtype, copy=False)
        return out[0] if ctx.unbatched else out

    @staticmethod
    def backward(ctx, grad):
        adjoint = ctx._forward_cls._adjoint
        return _unbatched_grad(ctx, adjoint.apply(_batched_grad(ctx, grad), ctx.geom,
                                                  ctx.div)), None, None


class AvgPoolT(Primitive):
    """Adjoint of ``AvgPool``: each output's share spread back over its window."""
    _backward_name = "AvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, g, geom, div):
        ctx.geom, ctx.div = geom, div
        a = g._data
        if a.dtype.kind == "V":  # bfloat16: the shares added up in float32, rounded once
            return window_sum_t((a.astype(np.float32) / div).astype(np.float32, copy=False),
                                geom).astype(a.dtype)
        return window_sum_t((a / div).astype(a.dtype, copy=False), geom)

    @staticmethod
    def backward(ctx, grad):
        return ctx._forward_cls._adjoint.apply(grad, ctx.geom, ctx.div), None, None


AvgPool._adjoint, AvgPoolT._adjoint = AvgPoolT, AvgPool
_AVG = {2: AvgPool}
_AVG[3] = _named("AvgPool3D", AvgPool, "AvgPool3DBackward0")
_AVG[3]._adjoint = _named("AvgPool3DT", AvgPoolT, "AvgPool3DBackwardBackward0",
                          _adjoint=_AVG[3])


def avg_pool(x, ksize, stride, padding, ceil_mode, count_include_pad, divisor_override):
    """Average pooling of a batched (N, C, *S) or unbatched (C, *S) tensor."""
    in_size = x._data.shape[-len(ksize):]
    ones = (1,) * len(ksize)
    out = tuple(pool_out_size(n, k, s, p, 1, ceil_mode) for n, k, s, p, _ in
                zip(in_size, ksize, stride, padding, ones))
    if divisor_override:
        div = divisor_override
    else:
        div = _divisor(get_array_module(x._data), in_size, out, ksize, stride, padding,
                       count_include_pad)
    geom = _SumGeom(ksize, stride, padding, in_size, out)
    return _AVG.get(len(ksize), AvgPool).apply(x, geom, div)


def adaptive_avg_matrices(in_size, out, dtype, like):
    """One averaging matrix (out_i, in_i) per spatial dim, as arrays of ``dtype`` in the
    array module of the tensor ``like``."""
    xp = get_array_module(like._data)
    mats = []
    for n, o in zip(in_size, out):
        start, end = _adaptive_bounds(xp, n, o)
        pos = xp.arange(n)
        m = ((pos[None, :] >= start[:, None]) & (pos[None, :] < end[:, None]))
        mats.append((m / (end - start)[:, None]).astype(dtype))
    return mats


def _apply_matrices(a, mats):
    """``a`` with the last ``len(mats)`` dims each multiplied by its matrix (out_i, in_i);
    bfloat16 data (whose matrices are float32) computed in float32 and rounded once."""
    xp = get_array_module(a)
    low = a.dtype if a.dtype.kind == "V" else None
    if low is not None:
        a = a.astype(np.float32)
    nd = len(mats)
    for i, m in enumerate(mats):
        axis = a.ndim - nd + i
        a = xp.moveaxis(xp.tensordot(a, m, axes=([axis], [1])), -1, axis)
    return xp.ascontiguousarray(a) if low is None else a.astype(low)


class AdaptiveAvgPool(Primitive):
    """Adaptive average pooling as one averaging matrix per spatial dim."""
    _backward_name = "AdaptiveAvgPool2DBackward0"

    @staticmethod
    def forward(ctx, x, mats):
        ctx.mats = mats
        return relayout_like(_apply_matrices(x._data, mats), x._data)  # as PyTorch's layout

    @staticmethod
    def backward(ctx, grad):
        return ctx._forward_cls._adjoint.apply(grad, [m.T for m in ctx.mats]), None


class AdaptiveAvgPoolT(Primitive):
    """Adjoint of ``AdaptiveAvgPool`` (the transposed matrices)."""
    _backward_name = "AdaptiveAvgPool2DBackwardBackward0"

    @staticmethod
    def forward(ctx, g, mats):
        ctx.mats = mats
        return _apply_matrices(g._data, mats)

    @staticmethod
    def backward(ctx, grad):
        return ctx._forward_cls._adjoint.apply(grad, [m.T for m in ctx.mats]), None


AdaptiveAvgPool._adjoint, AdaptiveAvgPoolT._adjoint = AdaptiveAvgPoolT, AdaptiveAvgPool
_ADAPTIVE_AVG = {2: AdaptiveAvgPool}
_ADAPTIVE_AVG[3] = _named("AdaptiveAvgPool3D", AdaptiveAvgPool, "AdaptiveAvgPool3DBackward0")
_ADAPTIVE_AVG[3]._adjoint = _named("AdaptiveAvgPool3DT", AdaptiveAvgPoolT,
                                   "AdaptiveAvgPool3DBackwardBackward0",
                                   _adjoint=_ADAPTIVE_AVG[3])


def adaptive_avg_pool(x, out):
    """Adaptive average pooling of the last ``len(out)`` dims of ``x`` (any leading dims)."""
    dtype = x._data.dtype if x._data.dtype.kind != "V" else np.float32  # bfloat16: float32
    mats = adaptive_avg_matrices(x._data.shape[-len(out):], out, dtype, x)
    return _ADAPTIVE_AVG.get(len(out), AdaptiveAvgPool).apply(x, mats)


__all__ = ["max_pool", "adaptive_max_pool", "avg_pool", "adaptive_avg_pool",
           "adaptive_avg_matrices",
           "pool_out_size"]
