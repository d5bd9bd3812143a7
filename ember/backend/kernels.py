"""Compiled loops for convolutions, ReLU and the max-pool gradient (``ember.backend._kernels``),
log_softmax rows, LSTM cells and layer normalization (``ember.backend._vector``), half-precision
casts (``ember.backend._casts``: ``cast``), with NumPy the fallback.

The C extension is optional (built by setup.py when a compiler is there). Callers ask
``native_for(*arrays)`` whether it applies -- NumPy arrays, C-contiguous, one dtype that the
kernel handles -- and otherwise run their NumPy code, which gives the same results
(im2col is a copy; col2im adds the same terms in the same order; ReLU is exact; an
optimizer's ``p -= lr * g`` rounds the product first, as NumPy does; an LSTM cell's gradient
is NumPy's operations in NumPy's order). The log_softmax rows and the LSTM cell's forward
use a vector exponential of their own: within a few ulp of NumPy's, not bitwise.
``set_enabled(False)`` turns the compiled path off (tests run both paths).

>>> import numpy as np
>>> from ember.backend import kernels
>>> previous = kernels.set_enabled(False)  # the NumPy code from here on
>>> kernels.native_for(np.ones(4, np.float32))
False
>>> _ = kernels.set_enabled(previous)
"""
import numpy as np

from .float8 import cast_float8, involves_float8
from .parallel import host_work, parallel_for

try:
    from . import _kernels as _native
except ImportError:  # built without a C compiler: the NumPy paths run
    _native = None

try:
    from . import _vector
except ImportError:
    _vector = None

try:
    from . import _casts
except ImportError:
    _casts = None
#: the vector functions (log_softmax rows, the LSTM cell's forward): None without AVX2/FMA
_rows = _vector if _vector is not None and _vector.available() else None

__all__ = ["available", "set_enabled", "native_for", "im2col_rows",
           "col2im", "relu", "relu_backward", "sub_scaled_", "sgd_momentum_", "maxpool2_forward",
           "maxpool2_backward", "rows_native_for", "log_softmax_rows", "log_softmax_grad_rows",
           "lstm_native_for", "lstm_cell_forward", "lstm_cell_backward",
           "layer_norm_native_for", "layer_norm_forward", "layer_norm_backward", "cast"]

_enabled = [_native is not None]
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def available():
    """Whether the compiled kernels were built (whatever ``set_enabled`` says)."""
    return _native is not None


def set_enabled(flag):
    """Use the compiled kernels (when built) or not; returns the previous setting."""
    previous = _enabled[0]
    _enabled[0] = bool(flag) and _native is not None
    return previous


def native_for(*arrays, floats_only=True):
    """Whether the compiled kernels take these arrays: NumPy ndarrays, C-contiguous, one
    dtype (float32/float64; any 2-, 4- or 8-byte dtype when ``floats_only`` is False)."""
    if not _enabled[0]:
        return False
    dt = arrays[0].dtype
    for a in arrays:
        if type(a) is not np.ndarray or a.dtype != dt or not a.flags.c_contiguous:
            return False
    if floats_only:
        return dt in _FLOATS
    return dt.itemsize in (2, 4, 8) and dt.kind in "fiuc" and dt.kind != "c"


def _dims_2d(x, ksize, out, stride, dilation, pad_lo, groups):
    """The kernels' geometry tuple; a 1-D convolution is a 2-D one of height 1."""
    n, c = x.shape[:2]
    if len(ksize) == 1:
        return (n, c, 1, x.shape[2], groups, 1, ksize[0], 1, out[0], 1, stride[0], 1,
                dilation[0], 0, pad_lo[0])
    return (n, c, x.shape[2], x.shape[3], groups, ksize[0], ksize[1], out[0], out[1],
            stride[0], stride[1], dilation[0], dilation[1], pad_lo[0], pad_lo[1])


def im2col_rows(x, ksize, out, stride, dilation, pad_lo, groups):
    """Channels-last columns (G, N*P, K*Cg) of the C-contiguous (N, C, *S) array ``x``
    (1-D or 2-D; P output positions, K kernel offsets, Cg channels per group)."""
    n, c = x.shape[:2]
    p, k, cg = int(np.prod(out)), int(np.prod(ksize)), c // groups
    dst = np.empty((groups, n * p, k * cg), dtype=x.dtype)
    strides = (n * p * k * cg, p * k * cg, k * cg, cg, 1)            # g, n, p, k, c
    _native.im2col(x, dst, x.dtype.itemsize,
                   _dims_2d(x, ksize, out, stride, dilation, pad_lo, groups), strides)
    return dst


def col2im(cols, strides, dst, ksize, out, stride, dilation, pad_lo, groups):
    """The adjoint of im2col into the C-contiguous (N, C, *S) array ``dst`` (overwritten):
    ``cols`` holds term (g, n, p, k, c) at element ``g*sg + n*sn + p*sp + k*sk + c*sc``
    with ``strides = (sg, sn, sp, sk, sc)``; each kernel offset's terms are added in turn."""
    _native.col2im(cols, dst, cols.dtype == np.float64,
                   _dims_2d(dst, ksize, out, stride, dilation, pad_lo, groups), strides)
    return dst


def relu(x, out):
    """``out[...] = x < 0 ? 0 : x`` (float32/float64, C-contiguous, same shape)."""
    _native.relu(x, out, x.dtype == np.float64)
    return out


def relu_backward(grad, out, res):
    """``res[...] = out <= 0 ? 0 : grad`` (float32/float64, C-contiguous, same shape)."""
    _native.relu_backward(grad, out, res, grad.dtype == np.float64)
    return res


#: elements below which an optimizer update stays on the calling thread: these loops are
#: memory-bound, and a pool pass costs more than it saves on smaller arrays (measured, SGD
#: with momentum, 2 threads: 401k floats 50 us alone vs 73 us split; 2.56M floats 566 vs 339)
FLAT_SPLIT_MIN = 1 << 20


def _flat_pieces(arrays, fn, passes):
    """``fn(*pieces)`` over matching slices of the flattened C-contiguous ``arrays``, on the
    thread pool when they are large (``passes``: how many of them each element touches)."""
    if arrays[0].size < FLAT_SPLIT_MIN:
        fn(*arrays)
        return
    flat = [a.reshape(-1) for a in arrays]
    parallel_for(flat[0].size, lambda lo, hi: fn(*(f[lo:hi] for f in flat)),
                 host_work(arrays[0], passes * arrays[0].nbytes))


def sub_scaled_(dst, alpha, src):
    """``dst -= alpha * src`` in place in one pass, no temporary (float32/float64,
    C-contiguous, same shape; ``alpha`` a Python float): NumPy's bits. Large arrays are split
    over the thread pool (element-wise: the same bits)."""
    is_double = dst.dtype == np.float64
    _flat_pieces((dst, src), lambda d, s: _native.sub_scaled(d, s, alpha, is_double), 3)
    return dst


def sgd_momentum_(p, g, buf, lr, momentum):
    """SGD's step with momentum (no dampening, not Nesterov) in place, one pass:
    ``buf = buf * momentum + g; p -= lr * buf`` with NumPy's bits (float32/float64,
    C-contiguous, one shape; ``lr``, ``momentum`` Python floats)."""
    is_double = p.dtype == np.float64
    _flat_pieces((p, g, buf), lambda a, b, c: _native.sgd_momentum(a, b, c, lr, momentum,
                                                                    is_double), 5)
    return p


def _pool2_dims(shape, out):
    n, c, h, w = shape
    return (n * c, h, w, out[0], out[1])


def maxpool2_forward(x, vals, code):
    """2x2 stride-2 max pooling of ``x`` (N, C, H, W) into ``vals`` (N, C, H//2, W//2) and the
    uint8 ``code`` of each window's first maximum (2 * ky + kx), as the NumPy path's running
    maximum; returns True when ``x`` holds a NaN (then vals and code are not to be used)."""
    return _native.maxpool2_forward(x, vals, code, x.dtype == np.float64,
                                    _pool2_dims(x.shape, vals.shape[2:]))


def maxpool2_backward(grad, code, gx, out):
    """Each 2x2 window of ``gx`` (N, C, H, W) = grad * (offset == code), as the NumPy path's
    multiply by the comparison; gx's uncovered tail is left as it is."""
    _native.maxpool2_backward(grad, code, gx, grad.dtype == np.float64,
                              _pool2_dims(gx.shape, out))


def rows_native_for(*arrays):
    """Whether the compiled log_softmax rows take these arrays: the extension built and the
    CPU with AVX2/FMA, float32, C-contiguous NumPy arrays of one shape (``set_enabled``
    applies too)."""
    if _rows is None or not _enabled[0]:
        return False
    shape = arrays[0].shape
    return all(type(a) is np.ndarray and a.dtype == np.float32 and a.flags.c_contiguous
               and a.shape == shape for a in arrays)


def log_softmax_rows(x, out):
    """``out[i] = log_softmax(x[i])`` for each row of the 2-D float32 arrays (C-contiguous,
    one shape). Returns None, or the indices of the rows left to the caller: those holding a
    NaN or an infinity, not written."""
    skipped = np.empty(x.shape[0], np.uint8)
    if _rows.log_softmax(x, out, x.shape[1], skipped):
        return np.flatnonzero(skipped)
    return None


def log_softmax_grad_rows(out, grad, res):
    """``res[i] = grad[i] - exp(out[i]) * grad[i].sum()`` for each row (log_softmax's
    gradient; 2-D float32, C-contiguous, one shape). Returns None, or the indices of the rows
    left to the caller: those where ``out`` holds a NaN or an infinity, not written."""
    skipped = np.empty(out.shape[0], np.uint8)
    if _rows.log_softmax_backward(out, grad, res, out.shape[1], skipped):
        return np.flatnonzero(skipped)
    return None


def lstm_native_for(*arrays, forward=True):
    """Whether the compiled LSTM cell takes these arrays: NumPy, C-contiguous, one float dtype
    -- float32 with AVX2/FMA for the forward (its exponential is a vector one); float32 or
    float64 for the backward (plain arithmetic)."""
    if not _enabled[0] or _vector is None or (forward and _rows is None):
        return False
    dt = arrays[0].dtype
    if dt != np.float32 and (forward or dt != np.float64):
        return False
    return all(type(a) is np.ndarray and a.dtype == dt and a.flags.c_contiguous
               for a in arrays)


def lstm_cell_forward(gate, c_prev, cell, tanh_cell, h):
    """One LSTM step after its products, float32 (B, 4H) / (B, H) C-contiguous arrays:
    ``gate`` (i, f, g, o pre-activations) becomes the activated gates in place;
    ``cell = f * c_prev + i * g``, ``tanh_cell = tanh(cell)``, ``h = o * tanh_cell``."""
    _vector.lstm_cell_forward(gate, c_prev, cell, tanh_cell, h, cell.shape[-1])


def lstm_cell_backward(gate, c_prev, tanh_cell, grad_h, dh, dc, dgates):
    """One step of the LSTM's backpropagation through time (NumPy's bits): ``dgates``
    (B, 4H) from ``dh`` (+ ``grad_h``, the step's output gradient, or None) and the cell
    gradient ``dc``, which is updated in place to the previous step's."""
    _vector.lstm_cell_backward(gate, c_prev, tanh_cell, grad_h, dh, dc, dgates,
                               dc.shape[-1], dc.dtype == np.float64)


def layer_norm_native_for(x, weight=None, bias=None):
    """Whether the compiled layer normalization takes these arrays: ``x`` a non-empty
    C-contiguous float32/float64 NumPy array; ``weight``/``bias`` None or C-contiguous arrays
    of its dtype."""
    if not _enabled[0] or _vector is None or type(x) is not np.ndarray or x.size == 0:
        return False
    if x.dtype not in _FLOATS or not x.flags.c_contiguous:
        return False
    return all(a is None or (type(a) is np.ndarray and a.dtype == x.dtype
                             and a.flags.c_contiguous) for a in (weight, bias))


def layer_norm_forward(x, weight, bias, out, mean, rstd, size, eps):
    """``out`` = layer normalization of each row of ``size`` of ``x`` (times ``weight``, plus
    ``bias``, each None or ``size`` values); ``mean``, ``rstd``: float64, one per row."""
    _vector.layer_norm_forward(x, weight, bias, out, mean, rstd, size, float(eps),
                               x.dtype == np.float64)


def layer_norm_backward(grad, x, weight, mean, rstd, gx, gw, gb, size):
    """Layer normalization's gradients: ``gx`` (or None) written; ``gw``, ``gb`` (float64
    accumulators of ``size``, or None) added to."""
    _vector.layer_norm_backward(grad, x, weight, mean, rstd, gx, gw, gb, size,
                                x.dtype == np.float64)


# ---- half-precision casts -----------------------------------------------------------------
_F32, _F16 = np.dtype(np.float32), np.dtype(np.float16)
try:
    import ml_dtypes as _ml_dtypes
    _BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - ml_dtypes is a declared dependency
    _BF16 = None

#: (source dtype, target dtype) -> (the ``kind`` of ``_casts.convert``, the fewest elements
#: it takes): below, astype is as fast -- the call costs ~0.75 us more than astype's, which
#: spends ~1.45 / 1.2 / 0.32 / 0.05 ns an element where the compiled loops spend ~0.1 /
#: 0.05 / 0.07 / 0.03 (AVX-512; measured break-even ~400 / 600 / 1200 / 15000 elements)
_CAST_KINDS = {(_F32, _F16): (0, 512), (_F16, _F32): (1, 512)}
if _BF16 is not None:
    _CAST_KINDS.update({(_F32, _BF16): (2, 1024), (_BF16, _F32): (3, 16384)})

#: path of ``_casts.convert`` (-1: the fastest this CPU runs; tests set each of
#: ``_casts.paths()``)
_cast_path = [-1]

#: NumPy's error-state names of the flags ``_casts.convert`` returns
_CAST_FLAGS = ((1, "over"), (2, "under"), (4, "invalid"))


def _astype(array, dt):
    """astype, but PyTorch's rounding where either end is a float8 type (backend.float8)."""
    if involves_float8(array.dtype, dt):
        return cast_float8(array, dt)
    return array.astype(dt)


def cast(array, dtype):
    """``array.astype(dtype)``: the same array, bit for bit (NaN payloads, subnormals,
    overflow to inf included), the same floating-point warnings or errors under
    ``np.errstate``. float32 <-> float16 and float32 <-> bfloat16 (ml_dtypes) of an aligned
    NumPy array whose elements fill one block of memory (C or Fortran order, or any
    transposition of such an array) run compiled (``_casts``: AVX-512, F16C or AVX2, as
    the CPU has them; 5-30x NumPy's float16 casts, 2-4x ml_dtypes' float32 -> bfloat16);
    anything else (other dtypes, other layouts, device arrays, arrays small enough that
    astype is as fast, no compiled extension, ``set_enabled(False)``) is ``astype``.

    >>> import numpy as np
    >>> cast(np.arange(1000, dtype=np.float32) / 3, np.float16)[:3]
    array([0.    , 0.3333, 0.6665], dtype=float16)
    """
    if type(array) is not np.ndarray or not _enabled[0] or _casts is None:
        return _astype(array, np.dtype(dtype))
    dt = np.dtype(dtype)
    kind = _CAST_KINDS.get((array.dtype, dt))
    if kind is None:
        return _astype(array, dt)
    kind, least = kind
    n = array.size
    if n < least:
        return array.astype(dt)
    flags = array.flags
    if not flags.aligned:
        return array.astype(dt)
    if flags.c_contiguous:
        out = np.empty(array.shape, dt)
        src, dst = array, out
    else:  # Fortran order, or another transposition of a whole block (attention's
        # k.transpose(-2, -1)): converted in memory order into astype's layout (order "K",
        # which empty_like's is), or astype when the elements do not fill one block
        order = sorted(range(array.ndim), key=lambda i: -array.strides[i])
        src = array.transpose(order)
        if not src.flags.c_contiguous:
            return array.astype(dt)
        out = np.empty_like(array, dt)
        dst = out.transpose(order)
        if not dst.flags.c_contiguous:  # pragma: no cover - empty_like keeps the order
            return array.astype(dt)
    # one thread: ~0.1 ns an element is memory-bound from ~1M elements, where a pass over
    # the pool measured no faster (docs/performance.md)
    status = _casts.convert(src, dst, kind, 0, n, _cast_path[0])
    if status and _cast_reports(status):
        return array.astype(dt)  # NumPy's own warning (or error, or call) and result
    return out


def _cast_reports(status):
    """Whether NumPy would report the floating-point events in ``status`` (``_casts``'
    flags): an overflow, underflow or invalid whose ``np.geterr()`` mode is not 'ignore'."""
    modes = np.geterr()
    return any(status & bit and modes[name] != "ignore" for bit, name in _CAST_FLAGS)


def add_rows(out, index, rows):
    """``out[index[i]] += rows[i]`` for every i in order -- np.add.at's additions in its
    order, so its bits -- on C-contiguous float ``out`` (T, ...) and ``rows`` (N, ...) of one
    dtype and an int64 ``index`` (N,) within [0, T)."""
    _native.add_rows(out, np.ascontiguousarray(index, dtype=np.int64), rows,
                     out.dtype == np.float64)


def spmm_rows(out, rows, cols, vals, dense):
    """``out[rows[i]] += vals[i] * dense[cols[i]]`` for every i in order: a sparse COO
    matrix times a dense one, on C-contiguous float ``out`` (M, F), ``dense`` (K, F) and
    ``vals`` (nnz,) of one dtype, int64 ``rows``/``cols`` (bounds checked: IndexError)."""
    _native.spmm_rows(out, np.ascontiguousarray(rows, dtype=np.int64),
                      np.ascontiguousarray(cols, dtype=np.int64), vals, dense,
                      out.shape[1] if out.ndim > 1 else 1, out.dtype == np.float64)


def bag_max_rows(weight, entries, starts, counts):
    """Per bag (``counts[b]`` entries from ``starts[b]`` of ``entries``, rows of the
    C-contiguous float ``weight`` (T, D)) and column, the weight row of the bag's first
    maximum, as ATen's running maximum finds it (a NaN later in a bag passed over, one
    opening it kept): (rows (bags, D) int64, zeros for empty bags)."""
    bags, width = starts.shape[0], weight.shape[1]
    best = np.empty((bags, width), dtype=weight.dtype)
    rows = np.zeros((bags, width), dtype=np.int64)
    _native.bag_max_rows(weight, np.ascontiguousarray(entries, dtype=np.int64),
                         np.ascontiguousarray(starts, dtype=np.int64),
                         np.ascontiguousarray(counts, dtype=np.int64), best, rows, width,
                         weight.dtype == np.float64)
    return rows
