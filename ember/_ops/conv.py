"""N-d convolution as three Primitives closed under differentiation.

* ``ConvForward(x, w)``        y = conv(x, w)                 (cross-correlation)
* ``ConvInputGrad(g, w)``      gx = conv^T(g, w)               (= transposed convolution)
* ``ConvWeightGrad(x, g)``     gw = correlation of x with g

Each is bilinear, and the derivative of each is one of the three, so conv is
differentiable any number of times. The kernels are im2col plus one (grouped)
matmul per block of samples. im2col and col2im of 1-D and 2-D convolutions run as
compiled loops (ember.backend.kernels) on NumPy float arrays; otherwise im2col is
one copy out of a strided window view and col2im loops over the kernel offsets,
never over pixels (the same results). Blocks run on ember's
thread pool (ember.backend.parallel). With no graph to record, ConvForward's
backward computes the input, weight and bias gradients in one pass
(``conv_backward``).

``PerSampleConv(x, w)`` runs B convolutions side by side, each with its own weight (vmap's
convolution when the weight is batched, e.g. per-sample gradients); see its docstring.

Geometry (``_Geom``) is per spatial dim: stride, dilation, padding as
(before, after) pairs (asymmetric for 'same' with even kernels), and the
unpadded input size.
"""
import itertools
import math

from ..backend import get_array_module, kernels, winograd, strided_view, reshaped_view
from ..backend.dtypes import contiguous_format
from ..backend.memory_layout import (any_channels_last, empty_in_format, relayout_like,
                                     row_major, suggest_format)

from ..autograd.grad_mode import _state as _grad_state
from ..autograd.dispatch import active as _dispatch_active
from ..backend.gemm import widened_on_host as _widened_on_host
from ..backend.parallel import (run_blocks as _run_blocks, sample_blocks, sum_parts as _sum_parts,
                                host_work)
from .primitive import Primitive
from .._tensor import Tensor


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
# * channels-last ("rows"): columns (G, N*P, K*Cg), one matmul per block of samples (a long
#   K dimension keeps BLAS efficient); the output/gradients are transposed from/to
#   channels-last once (cheap next to the matmuls).
_SHORT_PATCH = 32


def _short(cg, ksize):
    return cg * math.prod(ksize) <= _SHORT_PATCH


# Every kernel works on blocks of samples: a block's padding, im2col, matmul, col2im and
# layout copies run back to back while its data is in cache, and blocks are the unit of work
# of the thread pool (ember.backend.parallel). The blocks depend on the shapes only, never on
# the thread count, and partial weight/bias gradients are summed in block order, so results
# are bitwise identical whatever ``ember.get_num_threads()`` is.
_BLOCK_BYTES = 1 << 20  # about this many bytes of im2col columns per block


def _blocks(n, per_sample, like):
    """Sample blocks of about ``_BLOCK_BYTES`` of columns each (see ``sample_blocks``); one
    block for device arrays (``like``), whose passes are kernel launches (``host_work``)."""
    if not host_work(like, 1):
        return [(0, n)] if n else []
    return sample_blocks(n, per_sample, _BLOCK_BYTES)


def _padded_channels_last(x, geom):
    """(N, C, *S) -> zero-padded channels-last copy (N, *(S + pads), C)."""
    nd = x.ndim - 2
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    xl = x.transpose(_nd_perm(nd))
    xp = get_array_module(x)
    if padded == x.shape[2:]:
        return xp.ascontiguousarray(xl)
    buf = xp.zeros((x.shape[0],) + padded + (x.shape[1],), dtype=x.dtype)
    inner = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    buf[(slice(None),) + inner] = xl
    return buf


def _padded_channels_first(x, geom):
    """(N, C, *S) -> zero-padded (N, C, *(S + pads)) (x itself when there is no padding)."""
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    if padded == x.shape[2:]:
        return x
    buf = get_array_module(x).zeros(x.shape[:2] + padded, dtype=x.dtype)
    inner = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(x.shape[2:], geom.pad))
    buf[(slice(None), slice(None)) + inner] = x
    return buf


def _window_first(x, ksize, out, geom):
    """Strided window view (N, C, *k, *out) of the zero-padded channels-first input."""
    nd = len(ksize)
    padded = _padded_channels_first(x, geom)
    st = padded.strides
    shape = padded.shape[:2] + tuple(ksize) + tuple(out)
    strides = (st[:2] + tuple(st[2 + i] * geom.dilation[i] for i in range(nd))
               + tuple(st[2 + i] * geom.stride[i] for i in range(nd)))
    return _as_strided(padded, shape, strides)


def _window_last(x, ksize, out, geom):
    """Strided window view (N, *out, *k, C) of the zero-padded channels-last input."""
    nd = len(ksize)
    xl = _padded_channels_last(x, geom)
    st = xl.strides
    shape = (xl.shape[0],) + tuple(out) + tuple(ksize) + (xl.shape[-1],)
    strides = ((st[0],) + tuple(st[1 + i] * geom.stride[i] for i in range(nd))
               + tuple(st[1 + i] * geom.dilation[i] for i in range(nd)) + (st[-1],))
    return _as_strided(xl, shape, strides)


def _as_strided(a, shape, strides):
    """A read-only strided view of ``a`` (the array module's ``as_strided``)."""
    return strided_view(a, shape, strides, writeable=False)


def _as_shape(a, shape):
    """A view of ``a`` with ``shape`` (raises rather than copy: used to write through)."""
    v = reshaped_view(a, shape)
    if v is None:
        raise ValueError(f"no view of shape {shape} of an array of shape {a.shape}")
    return v


def _fill_cols(dst, x, ksize, out, geom):
    """im2col of the samples ``x`` into ``dst`` (a fresh array when None): (n, G, Cg*K, P)
    for short patches, else channels-last rows (G, n*P, K*Cg). One copy out of a strided
    window view."""
    n, c = x.shape[:2]
    g = geom.groups
    kk = math.prod(ksize)
    # compiled: the channels-last rows only (NumPy's copy of a channels-first window runs
    # along whole rows and was measured as fast as the loop)
    if (dst is None and not _short(c // g, ksize) and _native_geometry(ksize)
            and kernels.native_for(x, floats_only=False)):
        return kernels.im2col_rows(x, *_kernel_geometry(ksize, out, geom))
    if _short(c // g, ksize):
        win = _window_first(x, ksize, out, geom)                  # n, C, *k, *out
        if dst is None:
            return win.reshape(n, g, (c // g) * kk, -1)          # the one copy
        _as_shape(dst, win.shape)[...] = win
        return dst
    nd = len(ksize)
    win = _window_last(x, ksize, out, geom)                       # n, *out, *k, C
    rows = n * math.prod(out)
    if g == 1:
        if dst is None:
            return win.reshape(1, rows, -1)                       # the one copy
        _as_shape(dst[0], win.shape)[...] = win
        return dst
    win = win.reshape(win.shape[:-1] + (g, c // g))
    perm = (1 + 2 * nd, 0) + tuple(range(1, 1 + 2 * nd)) + (2 + 2 * nd,)
    win = win.transpose(perm)                                     # G, n, *out, *k, Cg
    if dst is None:
        return win.reshape(g, rows, -1)
    _as_shape(dst, win.shape)[...] = win
    return dst


def _native_geometry(ksize):
    """Whether the compiled kernels handle a convolution of this many spatial dims."""
    return len(ksize) <= 2


def _kernel_geometry(ksize, out, geom):
    """The arguments after the array of ``kernels.im2col_*`` / ``kernels.col2im``."""
    return (tuple(ksize), tuple(out), tuple(geom.stride), tuple(geom.dilation),
            tuple(lo for lo, _ in geom.pad), geom.groups)


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
    return get_array_module(gl).ascontiguousarray(gl.reshape(g, -1, o // g))


def _mm(a, b):
    if a.shape[0] == 1:
        return (a[0] @ b[0])[None]
    return get_array_module(a, b).matmul(a, b)


def _dtype(a, b):
    return get_array_module(a, b).result_type(a.dtype, b.dtype)


# Half precision (float16, bfloat16) on the host: each kernel below runs on float32 copies of
# its operands and rounds its results once (``gemm.widened_on_host``): NumPy's float16 matmul
# has no BLAS (a conv step ~60x slower than float32's) and the compiled im2col/col2im and
# Winograd kernels take float32 only, while PyTorch's CPU convolutions accumulate half
# precision in float32 and round once too. The casts are ``kernels.cast`` (compiled, NumPy's
# bits).
def _widened(a):
    """A float32 copy of ``a``; a broadcast along the first axis (vmap's expanded weight, read
    by ``_shared``) stays one: only its first entry is copied."""
    f32 = get_array_module(a).float32
    if a.ndim and a.shape[0] > 1 and a.strides[0] == 0:
        return get_array_module(a).broadcast_to(kernels.cast(a[:1], f32), a.shape)
    return kernels.cast(a, f32)


def _shape_only(a):
    """Zeros of ``a``'s shape in float32 as one broadcast element: an operand the kernel reads
    the shape of only (the input of an input gradient, the weight of a weight gradient)."""
    xp = get_array_module(a)
    return xp.broadcast_to(xp.zeros((), xp.float32), a.shape)


def _rounded(arrays, dtype):
    """Each of ``arrays`` (None stays None) rounded once to ``dtype``."""
    return tuple(None if a is None else kernels.cast(a, dtype) for a in arrays)


class _Conv:
    """Shapes of one convolution: x (N, C, *S), w (O, C/G, *k), output (N, O, *out)."""
    __slots__ = ("n", "c", "o", "g", "cg", "og", "nd", "ksize", "kk", "out", "p", "short",
                 "padded", "crop", "isz")

    def __init__(self, n, c, w_shape, geom, out=None):
        self.n, self.c, self.o, self.g = n, c, w_shape[0], geom.groups
        self.cg, self.og = c // self.g, self.o // self.g
        self.ksize = tuple(w_shape[2:])
        self.nd = len(self.ksize)
        self.kk = math.prod(self.ksize)
        self.out = tuple(geom.out_size(self.ksize) if out is None else out)
        self.p = math.prod(self.out)
        self.short = _short(self.cg, self.ksize)
        self.padded = tuple(s + lo + hi for s, (lo, hi) in zip(geom.in_size, geom.pad))
        self.crop = tuple(slice(lo, lo + s) for s, (lo, hi) in zip(geom.in_size, geom.pad))

    def col_bytes(self, itemsize):
        """Bytes of one sample's im2col columns."""
        return self.c * self.kk * self.p * itemsize


def conv_forward(x, w, geom, bias=None, out_format=None):
    """y = conv(x, w) (+ bias) on arrays: x (N, C, *S), w (O, C/G, *k) -> (N, O, *out);
    ``out_format``: the result's memory layout (``rows_take_layout`` says when it may be
    channels-last: the rows path writes it without a transpose).

    The im2col columns live one block at a time (in cache) and are not kept for the weight
    gradient, which rebuilds them block by block: writing all of them out and reading them
    back costs more than the copy (measured on the CNN benchmark: a full step ~25% slower,
    mostly page faults of the ~16 MB of fresh memory per step)."""
    if _widened_on_host(x, w, *(() if bias is None else (bias,))):
        return kernels.cast(conv_forward(_widened(x), _widened(w), geom,
                                         None if bias is None else _widened(bias)), x.dtype)
    if winograd.applies(x, w, geom.stride, geom.dilation, geom.pad, geom.groups):
        return winograd.forward(x, w, geom.pad, bias)  # 3x3, stride 1: 2.25x fewer products
    s = _Conv(x.shape[0], x.shape[1], w.shape, geom)
    n, o, g, og, nd, out = s.n, s.o, s.g, s.og, s.nd, s.out
    dt = _dtype(x, w)
    xp = get_array_module(x, w)
    res = xp.empty((n, o) + out, dtype=dt) if out_format is None else \
        empty_in_format(xp, (n, o) + out, dt, out_format)
    if s.short:                                                    # n, G, Cg*K, P
        wm = w.reshape(g, og, -1)
        bb = None if bias is None else bias[:, None]

        def block(i, lo, hi):
            cb = _fill_cols(None, x[lo:hi], s.ksize, out, geom)
            yb = _as_shape(res[lo:hi], (hi - lo, g, og, s.p))
            xp.matmul(wm, cb, out=yb)                              # n, G, Og, P
            if bb is not None:
                yv = yb.reshape(hi - lo, o, s.p)
                xp.add(yv, bb, out=yv)
    else:                                                          # G, n*P, K*Cg
        wmat = _weight_matrix(w, g).transpose(0, 2, 1)             # G, K*Cg, Og
        perm = (1, 0, 2 + nd) + tuple(range(2, 2 + nd))            # n, G, Og, *out
        bb = None if bias is None else bias.reshape((g, og) + (1,) * nd)

        def block(i, lo, hi):
            cb = _fill_cols(None, x[lo:hi], s.ksize, out, geom)
            y = _mm(cb, wmat).reshape((g, hi - lo) + out + (og,)).transpose(perm)
            dst = _as_shape(res[lo:hi], y.shape)
            if bb is None:
                dst[...] = y
            else:  # the bias rides along the one transposing copy
                xp.add(y, bb, out=dst)
    col = s.col_bytes(x.itemsize)
    _run_blocks(_blocks(n, col, x), block, x.nbytes + res.nbytes + n * col)
    return res


def _col2im_first(cols, s, geom, dst):
    """Adjoint of the channels-first im2col: cols (n, C, *k, *out) added into the padded
    input gradient, cropped into ``dst`` (n, C, *S)."""
    if _native_geometry(s.ksize) and kernels.native_for(cols, dst):
        k, p = s.kk, s.p
        strides = (s.cg * k * p, s.c * k * p, 1, p, k * p)           # g, n, p, k, c
        kernels.col2im(cols, strides, dst, *_kernel_geometry(s.ksize, s.out, geom))
        return
    gx = get_array_module(cols).zeros((cols.shape[0], s.c) + s.padded, dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for kidx in itertools.product(*map(range, s.ksize)):
        sl = tuple(slice(k * d, k * d + st * (m - 1) + 1, st)
                   for k, d, st, m in zip(kidx, geom.dilation, geom.stride, s.out))
        gx[lead + sl] += cols[lead + kidx]
    dst[...] = gx[lead + s.crop]


def _col2im_rows(gm, wk, s, geom, dst):
    """Input gradient of a block from its output-gradient rows gm (G, n*P, Og): one matmul
    per kernel offset (G, K, n*P, Cg), so that each offset's slab is contiguous and col2im adds
    long runs (rows of W*C), then the crop and the transpose back to (n, C, *S) into dst."""
    nb = dst.shape[0]
    nd, g, cg = s.nd, s.g, s.cg
    xp = get_array_module(gm, wk)
    cols = xp.matmul(gm[:, None], wk)                               # G, K, n*P, Cg
    cols = cols.reshape((g, s.kk, nb) + s.out + (cg,))
    # view as K, n, *out, G, Cg (no copy)
    cols = cols.transpose((1, 2) + tuple(range(3, 3 + nd)) + (0, 3 + nd))
    if any(st > 1 for st in geom.stride):
        _col2im_phases(cols, s, geom, dst)
        return
    gx = xp.zeros((nb,) + s.padded + (g, cg), dtype=cols.dtype)
    lead = (slice(None),)
    for j, kidx in enumerate(itertools.product(*map(range, s.ksize))):
        sl = tuple(slice(k * d, k * d + st * (m - 1) + 1, st)
                   for k, d, st, m in zip(kidx, geom.dilation, geom.stride, s.out))
        gx[lead + sl] += cols[j]
    gx = gx.reshape((nb,) + s.padded + (s.c,))[lead + s.crop]
    dst[...] = gx.transpose((0, 1 + nd) + tuple(range(1, 1 + nd)))


def _col2im_phases(cols, s, geom, dst):
    """``_col2im_rows``'s adds for a strided convolution. Strided slabs of the channels-last
    gradient would be added in runs of C elements only; here the padded gradient is held
    phase by phase (position p = h * stride + r at [r, ..., h]), where each kernel offset's
    slab is a contiguous block of rows (runs of out*C). Offsets are added in the same order
    into zeros, so the sums are the same. Then each phase of the cropped result is written
    to ``dst`` (n, C, *S) in one transposing copy."""
    nb, nd, st = dst.shape[0], s.nd, tuple(geom.stride)
    xp = get_array_module(cols)
    lens = tuple(-(-p // t) for p, t in zip(s.padded, st))
    buf = xp.zeros(st + (nb,) + lens + (s.g, s.cg), dtype=cols.dtype)
    every = (slice(None),)
    for j, kidx in enumerate(itertools.product(*map(range, s.ksize))):
        offs = [k * d for k, d in zip(kidx, geom.dilation)]
        phase = tuple(e % t for e, t in zip(offs, st))
        sl = tuple(slice(e // t, e // t + m) for e, t, m in zip(offs, st, s.out))
        buf[phase + every + sl] += cols[j]
    buf = buf.reshape(st + (nb,) + lens + (s.c,))
    to_first = (0, 1 + nd) + tuple(range(1, 1 + nd))
    for phase in itertools.product(*map(range, st)):
        out_sl, buf_sl = [], []
        for r, t, (lo, _), size in zip(phase, st, geom.pad, geom.in_size):
            i0 = (r - lo) % t  # the first unpadded position of this phase
            h0 = (lo + i0) // t
            out_sl.append(slice(i0, size, t))
            buf_sl.append(slice(h0, h0 + len(range(i0, size, t))))
        dst[every * 2 + tuple(out_sl)] = buf[phase + every + tuple(buf_sl)].transpose(to_first)


def _col2im_native(gm, wk, s, geom, dst):
    """``_col2im_rows`` with the compiled col2im: one matmul (G, n*P, Og) @ (G, Og, K*Cg)
    gives every kernel offset's terms side by side, then col2im adds them into ``dst``."""
    cols = get_array_module(gm, wk).matmul(gm, wk)                   # G, n*P, K*Cg
    rows, width = cols.shape[1:]
    strides = (rows * width, s.p * width, width, s.cg, 1)           # g, n, p, k, c
    kernels.col2im(cols, strides, dst, *_kernel_geometry(s.ksize, s.out, geom))


def _wk_rows(w, s):
    """(O, Cg, *k) -> (G, Og, K*Cg) contiguous: all kernel offsets' weights side by side."""
    return get_array_module(w).ascontiguousarray(
        w.reshape((s.g, s.og, s.cg, s.kk)).transpose(0, 1, 3, 2)).reshape(s.g, s.og, -1)


def _wk(w, s):
    """(O, Cg, *k) -> (G, K, Og, Cg) contiguous: one weight matrix per kernel offset."""
    return get_array_module(w).ascontiguousarray(
        w.reshape((s.g, s.og, s.cg, s.kk)).transpose(0, 3, 1, 2))


def rows_take_layout(x, w, geom):
    """Whether ``conv_forward`` runs the channels-last rows path on these arrays (no widening,
    no Winograd, a long patch, one group), which reads a channels-last ``x`` as it is and
    writes a channels-last result directly."""
    return (geom.groups == 1 and not _short(x.shape[1], w.shape[2:])
            and not _widened_on_host(x, w)
            and not winograd.applies(x, w, geom.stride, geom.dilation, geom.pad, 1))


def conv_backward(x, w, gy, geom, need=(True, True, False)):
    """Gradients (gx, gw, gb) of ``conv(x, w) + b`` for the output gradient ``gy`` in one pass
    over blocks of samples (each block's output gradient is laid out once for all three);
    ``need`` says which to compute (the others are None)."""
    need_x, need_w, need_b = need
    if _widened_on_host(gy, w, x):
        x32 = _widened(x) if need_w else _shape_only(x)
        w32 = _widened(w) if need_x else _shape_only(w)
        return _rounded(conv_backward(x32, w32, _widened(gy), geom, need), gy.dtype)
    if winograd.applies(x, w, geom.stride, geom.dilation, geom.pad, geom.groups):
        return winograd.backward(x, w, gy, geom.pad, need)
    s = _Conv(x.shape[0], x.shape[1], w.shape, geom, gy.shape[2:])
    g, og, nd = s.g, s.og, s.nd
    dt = _dtype(gy, w)
    xp = get_array_module(gy, w)
    gx = xp.empty((s.n, s.c) + tuple(geom.in_size), dtype=dt) if need_x else None
    blocks = _blocks(s.n, s.col_bytes(x.itemsize), gy)
    wparts = [None] * len(blocks) if need_w else None
    bparts = [None] * len(blocks) if need_b else None
    if s.short:
        wt = w.reshape(g, og, -1).transpose(0, 2, 1) if need_x else None  # G, Cg*K, Og

        def block(i, lo, hi):
            gl = xp.ascontiguousarray(gy[lo:hi]).reshape(hi - lo, g, og, -1)
            if need_x:
                cb = xp.matmul(wt, gl)                              # n, G, Cg*K, P
                _col2im_first(cb.reshape((hi - lo, s.c) + s.ksize + s.out), s, geom,
                              gx[lo:hi])
            if need_w:
                cb = _fill_cols(None, x[lo:hi], s.ksize, s.out, geom)
                wparts[i] = xp.matmul(gl, cb.transpose(0, 1, 3, 2)).sum(axis=0)  # G,Og,CgK
            if need_b:
                bparts[i] = gl.sum(axis=(0, 3))                     # G, Og
    else:
        native = need_x and _native_geometry(s.ksize) and kernels.native_for(gy, gx)
        wk = None if not need_x else _wk_rows(w, s) if native else _wk(w, s)

        def block(i, lo, hi):
            gm = _grad_matrix(gy[lo:hi], g)                         # G, n*P, Og
            if native:
                _col2im_native(gm, wk, s, geom, gx[lo:hi])
            elif need_x:
                _col2im_rows(gm, wk, s, geom, gx[lo:hi])
            if need_w:
                cb = _fill_cols(None, x[lo:hi], s.ksize, s.out, geom)
                # cols^T @ gy, not gy^T @ cols: OpenBLAS threads the latter (small M, N, long
                # K) pathologically; the (K*Cg, Og) result is small to transpose
                wparts[i] = _mm(cb.transpose(0, 2, 1), gm)          # G, K*Cg, Og
            if need_b:
                bparts[i] = gm.sum(axis=1)                          # G, Og
    work = s.n * s.col_bytes(x.itemsize) * (int(need_x) + int(need_w)) + gy.nbytes
    _run_blocks(blocks, block, work)
    gw = gb = None
    if not blocks:  # an empty batch: zero weight and bias gradients
        wparts = None if wparts is None else [xp.zeros(
            (g, og, s.cg * s.kk) if s.short else (g, s.kk * s.cg, og), dtype=dt)]
        bparts = None if bparts is None else [xp.zeros((g, og), dtype=dt)]
    if need_w:
        gw = _sum_parts(wparts)
        if s.short:
            gw = gw.reshape((s.o, s.cg) + s.ksize)
        else:
            gw = gw.transpose(0, 2, 1).reshape((s.o,) + s.ksize + (s.cg,))
            gw = xp.ascontiguousarray(gw.transpose((0, 1 + nd) + tuple(range(1, 1 + nd))))
    if need_b:
        gb = _sum_parts(bparts).reshape(s.o)
    return gx, gw, gb


def conv_input_grad(gy, w, geom):
    """gx = conv^T(gy, w): the gradient of conv w.r.t. its input (col2im)."""
    n = gy.shape[0]
    xp = get_array_module(gy)
    x = xp.broadcast_to(xp.zeros((), gy.dtype), (n, w.shape[1] * geom.groups) + geom.in_size)
    return conv_backward(x, w, gy, geom, need=(True, False, False))[0]


def conv_weight_grad(x, gy, ksize, geom):
    """gw: the gradient of conv w.r.t. its weight, shape (O, C/G, *k)."""
    n, o = gy.shape[:2]
    xp = get_array_module(gy)
    w = xp.broadcast_to(xp.zeros((), gy.dtype), (o, x.shape[1] // geom.groups) + tuple(ksize))
    return conv_backward(x, w, gy, geom, need=(False, True, False))[1]


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
        xd, wd, bd = x._data, w._data, None if bias is None else bias._data
        if not any_channels_last(xd, wd):
            return conv_forward(xd, wd, geom, bd)
        if rows_take_layout(xd, wd, geom):
            fmt = suggest_format(xd)
            return conv_forward(xd, row_major(wd), geom, bd,
                                suggest_format(wd) if fmt is contiguous_format else fmt)
        # the kernels run on row-major operands (channels-last ones copied once), and the
        # result is channels-last when the input or weight is, as PyTorch's
        return relayout_like(conv_forward(row_major(xd), row_major(wd), geom, bd), xd, wd)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        geom = ctx.geom
        needs = ctx.needs_input_grad
        # no graph to record: all gradients in one NumPy pass; under dispatch its ops must be seen
        if not _grad_state.enabled and not _dispatch_active[0]:
            need_b = ctx.has_bias and needs[3]
            xd, wd, gd = x._data, w._data, grad._data
            if not any_channels_last(xd, wd):
                gx, gw, gb = conv_backward(xd, wd, gd, geom, (needs[0], needs[1], need_b))
            else:  # (as in forward) gradients laid out as their tensors, as PyTorch's
                if rows_take_layout(xd, wd, geom):  # the rows path reads them as they are
                    xd_, gd_ = xd, gd
                else:
                    xd_, gd_ = row_major(xd), row_major(gd)
                gx, gw, gb = conv_backward(xd_, row_major(wd), gd_, geom,
                                           (needs[0], needs[1], need_b))
                gx = gx if gx is None else relayout_like(gx, xd)
                gw = gw if gw is None else relayout_like(gw, wd)
            gx, gw, gb = (None if a is None else Tensor._make(a) for a in (gx, gw, gb))
            return (gx, gw, None, gb) if ctx.has_bias else (gx, gw, None)
        gx = gw = None
        if ctx.needs_input_grad[0]:
            gx = ConvInputGrad.apply(grad, w, geom)
        if ctx.needs_input_grad[1]:
            gw = ConvWeightGrad.apply(x, grad, tuple(w._data.shape[2:]), geom)
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
        gd, wd = g._data, w._data
        if not any_channels_last(gd, wd):
            return conv_input_grad(gd, wd, geom)
        # (layouts as in ConvForward: conv_transpose's result too)
        return relayout_like(conv_input_grad(row_major(gd), row_major(wd), geom), gd, wd)

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
        xd, gd = x._data, g._data
        if any_channels_last(xd, gd):  # (row-major operands for the kernels)
            xd, gd = row_major(xd), row_major(gd)
        return conv_weight_grad(xd, gd, ksize, geom)

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


# ---- B convolutions side by side, each with its own weight -----------------------------------
def conv_weight_grad_per_sample(x, gy, ksize, geom):
    """Each sample's own weight gradient, (N, O, C/G, *k): per block of samples, the
    channels-first columns (n, G, Cg*K, P) against the output gradient (n, G, Og, P) in one
    batched matmul (no sum over the samples, unlike ``conv_weight_grad``)."""
    n, c = x.shape[:2]
    o = gy.shape[1]
    s = _Conv(n, c, (o, c // geom.groups) + tuple(ksize), geom, gy.shape[2:])
    xp = get_array_module(x, gy)
    res = xp.empty((n, o, s.cg) + s.ksize, dtype=_dtype(x, gy))

    def block(i, lo, hi):
        cb = _window_first(x[lo:hi], s.ksize, s.out, geom).reshape(hi - lo, s.g, -1, s.p)
        gl = xp.ascontiguousarray(gy[lo:hi]).reshape(hi - lo, s.g, s.og, s.p)
        xp.matmul(gl, cb.transpose(0, 1, 3, 2),
                  out=_as_shape(res[lo:hi], (hi - lo, s.g, s.og, s.cg * s.kk)))
    col = s.col_bytes(x.itemsize)
    _run_blocks(_blocks(n, col, x), block, x.nbytes + gy.nbytes + n * col)
    return res


def _shared(a):
    """Whether a stack ``a`` (B, ...) holds one array B times (B = 1, or a broadcast along
    B: every sample's weight is then the same, as vmap's expansion of a weight makes it)."""
    return a.shape[0] == 1 or (a.shape[0] > 1 and a.strides[0] == 0)


def _fold(a):
    """(B, N, ...) -> (B*N, ...)."""
    return a.reshape((a.shape[0] * a.shape[1],) + a.shape[2:])


def _join_groups(a):
    """(B, N, C, *S) -> (N, B*C, *S): the B problems as groups of one convolution."""
    b, n = a.shape[:2]
    return a.swapaxes(0, 1).reshape((n, b * a.shape[2]) + a.shape[3:])


def _split_groups(a, b):
    """(N, B*C, *S) -> (B, N, C, *S)."""
    return a.reshape((a.shape[0], b, a.shape[1] // b) + a.shape[2:]).swapaxes(0, 1)


def _grouped_geom(geom, b):
    return _Geom(geom.stride, geom.dilation, geom.pad, geom.in_size, geom.groups * b)


def per_sample_conv_forward(x, w, geom, bias=None):
    """B convolutions on arrays: x (B, N, C, *S), w (B, O, C/G, *k), bias (B, O) ->
    (B, N, O, *out). A weight shared by all B (``_shared``) runs as one convolution of the
    B*N samples; otherwise the B problems are the groups of one grouped convolution."""
    if _widened_on_host(x, w, *(() if bias is None else (bias,))):
        return kernels.cast(per_sample_conv_forward(_widened(x), _widened(w), geom, None
                                                    if bias is None else _widened(bias)),
                            x.dtype)
    b, n = x.shape[:2]
    nd = x.ndim - 3
    if b and _shared(w):
        shared_bias = bias is None or _shared(bias)
        y = conv_forward(_fold(x), w[0], geom, None if bias is None or not shared_bias
                         else bias[0])
        y = y.reshape((b, n) + y.shape[1:])
        if not shared_bias:
            y += bias.reshape((b, 1, -1) + (1,) * nd)
        return y
    if not b:
        o = w.shape[1]
        out = geom.out_size(w.shape[3:])
        return get_array_module(x, w).empty((0, n, o) + out, dtype=_dtype(x, w))
    y = conv_forward(_join_groups(x), _fold(w), _grouped_geom(geom, b),
                     None if bias is None else bias.reshape(-1))
    return _split_groups(y, b)


def per_sample_conv_backward(x, w, gy, geom, need):
    """Gradients (gx, gw, gb) of ``per_sample_conv_forward`` on arrays; ``need`` says which.
    gw and gb are per sample of B: (B, O, C/G, *k) and (B, O)."""
    need_x, need_w, need_b = need
    if _widened_on_host(gy, w, x):
        x32 = _widened(x) if need_w else _shape_only(x)
        w32 = _widened(w) if need_x else _shape_only(w)
        return _rounded(per_sample_conv_backward(x32, w32, _widened(gy), geom, need), gy.dtype)
    b, n = x.shape[:2]
    gx = gw = gb = None
    if need_x:
        if b and _shared(w):
            gx = conv_input_grad(_fold(gy), w[0], geom)
            gx = gx.reshape((b, n) + gx.shape[1:])
        elif b:
            gx = _split_groups(conv_input_grad(_join_groups(gy), _fold(w),
                                               _grouped_geom(geom, b)), b)
        else:
            gx = get_array_module(gy).zeros(x.shape, dtype=_dtype(gy, w))
    if need_w:
        gw = conv_weight_grad_per_sample(_fold(x), _fold(gy), w.shape[3:], geom)
        gw = gw.reshape((b, n) + gw.shape[1:])
        gw = gw[:, 0] if n == 1 else gw.sum(axis=1)
    if need_b:
        gb = gy.sum(axis=(1,) + tuple(range(3, gy.ndim)))
    return gx, gw, gb


class PerSampleConv(Primitive):
    """B convolutions side by side, each with its own weight: ``forward(ctx, x, w, geom,
    bias=None)`` with x (B, N, C, *S), w (B, O, C/G, *k), bias (B, O) -> (B, N, O, *out).

    vmap's convolution with a batched weight: the weights of a plain layer are expanded
    along the batch (a broadcast, stride 0) so that their gradients arrive per sample.
    Such a shared weight runs as one convolution of all B*N samples (the batch folded into
    N, no groups), and each sample's weight gradient is one batched matmul, where a grouped
    convolution (B groups) would pay for the groups. With a graph to record (double
    backward), the gradients are the grouped convolution's, made of the ops above."""
    _backward_name = "ConvolutionBackward0"

    @staticmethod
    def forward(ctx, x, w, geom, bias=None):
        ctx.geom = geom
        ctx.has_bias = bias is not None
        ctx.save_for_backward(x, w)
        return per_sample_conv_forward(x._data, w._data, geom,
                                       None if bias is None else bias._data)

    @staticmethod
    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        geom = ctx.geom
        needs = ctx.needs_input_grad
        need_b = ctx.has_bias and needs[3]
        # no graph to record: NumPy; under dispatch its ops must be seen
        if not _grad_state.enabled and not _dispatch_active[0]:
            grads = per_sample_conv_backward(x._data, w._data, grad._data, geom,
                                             (needs[0], needs[1], need_b))
            gx, gw, gb = (None if a is None else Tensor._make(a) for a in grads)
        else:
            gx, gw, gb = _per_sample_conv_grads(x, w, grad, geom, (needs[0], needs[1], need_b))
        return (gx, gw, None, gb) if ctx.has_bias else (gx, gw, None)


def _per_sample_conv_grads(x, w, grad, geom, need):
    """``PerSampleConv``'s gradients as differentiable ops: those of the grouped
    convolution (the B problems as groups)."""
    b = x.shape[0]
    nd = x.dim() - 3
    ggeom = _grouped_geom(geom, b)
    gx = gw = gb = None
    if need[0] or need[1]:
        gg = _join_groups_t(grad)
    if need[0]:
        wg = w.reshape((b * w.shape[1],) + tuple(w.shape[2:]))
        gx = ConvInputGrad.apply(gg, wg, ggeom)
        gx = gx.reshape((gx.shape[0], b, x.shape[2]) + tuple(gx.shape[2:])).transpose(0, 1)
    if need[1]:
        gw = ConvWeightGrad.apply(_join_groups_t(x), gg, tuple(w.shape[3:]), ggeom)
        gw = gw.reshape(tuple(w.shape))
    if need[2]:
        gb = grad.sum((1,) + tuple(range(3, 3 + nd)))
    return gx, gw, gb


def _join_groups_t(t):
    """``_join_groups`` on a tensor (differentiable)."""
    b, n = t.shape[:2]
    return t.transpose(0, 1).reshape((n, b * t.shape[2]) + tuple(t.shape[3:]))


__all__ = ["ConvForward", "ConvInputGrad", "ConvWeightGrad", "PerSampleConv", "_Geom",
           "conv_forward", "conv_backward", "conv_input_grad", "conv_weight_grad",
           "conv_weight_grad_per_sample", "per_sample_conv_forward",
           "per_sample_conv_backward"]
