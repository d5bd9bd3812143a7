"""Matrix products spread over ember's thread pool.

ember runs NumPy's OpenBLAS on one thread (``parallel.adopt_blas``) and threads the work
itself, so that its convolutions, pooling and ReLUs can use the cores too (OpenBLAS's idle
threads would spin on them). A large 2-D product is therefore cut into a few bands of columns (or
rows) per thread, each band one single-threaded BLAS call writing its part of the result:
NumPy releases the GIL inside BLAS, so the bands run in parallel; results equal the unsplit
product up to rounding in the last bit (see ``ALIGN``). When the pool's workers are spinning
anyway, a product of ``NATIVE_MIN_FMAS`` or more is cut into bands in C instead
(``_native_bands``): the workers take them from inside their wait, with no Python pass.

>>> import numpy as np
>>> from ember.backend.gemm import matmul
>>> a, b = np.ones((300, 200), np.float32), np.ones((200, 100), np.float32)
>>> bool((matmul(a, b) == 200).all())
True
"""
import math

import numpy as _numpy

from . import dtypes, get_array_module, parallel
from .kernels import cast as _cast
from .parallel import MIN_CHUNK_BYTES, num_chunks, parallel_for

__all__ = ["matmul", "matmul_add", "matmul_pair", "native_for_extension", "widened_on_host"]

#: multiply-adds per thread below which a product is not split: waking a worker costs
#: 20-100 us, a single-threaded sgemm does ~0.1 GFMA/ms here (4 Mi FMA ~ 40 us)
MIN_CHUNK_FMAS = 1 << 22

#: multiply-adds from which a product is shared with pool threads that are spinning anyway,
#: through the native helper (no Python pass: ~2 us instead of ~30); below, one thread
NATIVE_MIN_FMAS = 1 << 19

#: bands are at least this many rows (or columns) wide and their edges fall on multiples of
#: it (a multiple of BLAS micro-kernel tile widths), wide enough to pay for packing the other
#: operand once more. Aligned bands are tiled as the whole product, so most results are
#: bitwise np.matmul's; not all: OpenBLAS 0.3.31 rounds some tail columns differently (~1 ulp;
#: float64 when n % 8 != 0, float32 for some n), as a threaded MKL GEMM may too
ALIGN = 64

#: bands per thread, claimed dynamically: a thread on a busier core does fewer (measured on
#: the MLP step: 3-8% faster than one band each)
BANDS_PER_THREAD = 2

_BLAS_TYPES = frozenset("fdFD")

#: half-precision dtypes (NumPy's float16, ml_dtypes' bfloat16 where installed) whose products
#: on the host are computed in float32: NumPy has no BLAS for them (its float16 matmul is a
#: plain loop, ~250x slower than sgemm), and PyTorch's CPU kernels accumulate them in float32
#: and round the result once, so the float32 product rounded once is also PyTorch's value
_HALF_TYPES = frozenset(d.np for d in dtypes.ALL if d.name in ("float16", "bfloat16"))


def widened_on_host(*arrays):
    """Whether ``arrays`` are NumPy arrays of one half-precision dtype (float16 or bfloat16),
    whose products ember computes in float32 and rounds once (see ``_HALF_TYPES``). Device
    arrays answer False: their libraries (cuBLAS, cuDNN) take half precision themselves."""
    first = arrays[0]
    if first.itemsize != 2 or first.dtype not in _HALF_TYPES:
        return False
    return all(type(a) is _numpy.ndarray and a.dtype == first.dtype for a in arrays)


def matmul(a, b):
    """``np.matmul(a, b)``; a 2-D floating product large enough is computed in bands of
    columns (or, for a narrow result, of rows) on ember's threads. Half-precision host arrays
    (``widened_on_host``) are multiplied as float32 and the product rounded once."""
    xp = get_array_module(a, b)
    if a.size == 0 or b.size == 0:  # an empty stack or product: the library's own shapes
        out = xp.matmul(a, b)      # (zeros where the summed dimension is empty)
        return out.astype(a.dtype) if out.dtype != a.dtype and a.dtype == b.dtype else out
    if xp is not _numpy:  # device arrays: one library call (the pool splits host work)
        if a.ndim > 2 and b.ndim >= 2 and _one_matrix(b) and a.dtype == b.dtype:
            out = _folded(a, b)  # one large product beats a stack of small ones there too
        else:
            out = xp.matmul(a, b)
        if out.dtype != a.dtype and a.dtype == b.dtype:  # bfloat16 products come back
            out = out.astype(a.dtype)                    # float32: PyTorch rounds them
        return out
    if a.itemsize == 2 and widened_on_host(a, b):
        # one float32 product (BLAS, threaded), rounded once to the operands' dtype (the
        # casts compiled: kernels.cast, NumPy's bits)
        f32 = _numpy.float32
        return _cast(matmul(_cast(a, f32), _cast(b, f32)), a.dtype)
    if min(a.ndim, b.ndim) >= 2 and max(a.ndim, b.ndim) > 2 and a.shape[-1] == 1 \
            and b.shape[-2] == 1:
        return _outer(xp, a, b)
    if a.ndim > 2 and b.ndim >= 2 and _one_matrix(b) and a.dtype == b.dtype:
        return _folded(a, b)
    if a.ndim > 2 and a.ndim == b.ndim and a.shape[:-2] == b.shape[:-2]:
        out = _stacked(xp, a, b)
        if out is not None:
            return out
    fmas = _fmas(a, b)
    if not fmas:  # not a 2-D floating product of one dtype (or an empty one): NumPy's own
        out = xp.matmul(a, b)
        if out.dtype != a.dtype and a.dtype == b.dtype:
            # ml_dtypes' bfloat16 products come back float32 (NumPy subclasses, which the
            # float32 path above leaves alone): PyTorch rounds them to bfloat16
            out = out.astype(a.dtype)
        return out
    m, n = a.shape[0], b.shape[1]
    by_rows = n < 2 * ALIGN  # columns by default: measured a little faster than rows
    width = m if by_rows else n
    # the pool measures work in bytes (MIN_CHUNK_BYTES per thread): scale the FMAs to that
    work = fmas * MIN_CHUNK_BYTES // MIN_CHUNK_FMAS
    threads = num_chunks(width // ALIGN, work)
    if fmas >= NATIVE_MIN_FMAS:
        out = _native_bands(xp, a, b, by_rows, width, threads)
        if out is not None:
            return out
    if threads == 1:
        return xp.matmul(a, b)
    out = xp.empty((m, n), dtype=a.dtype)
    if by_rows:
        def band(lo, hi):
            xp.matmul(a[lo:hi], b, out=out[lo:hi])
    else:
        def band(lo, hi):
            xp.matmul(a, b[:, lo:hi], out=out[:, lo:hi])
    pieces = min(threads * BANDS_PER_THREAD, width // ALIGN)
    bounds = [min(width, (width * i // pieces + ALIGN - 1) // ALIGN * ALIGN)
              for i in range(pieces)] + [width]
    parallel_for(pieces, lambda i, j: band(bounds[i], bounds[j]), work,
                 pieces_per_thread=BANDS_PER_THREAD)
    return out


def _native_bands(xp, a, b, by_rows, width, threads):
    """The product in bands shared with the pool's spinning threads without Python
    (``_pool.gemm``), or None where that path does not apply: no native helpers or OpenBLAS
    entry points, one thread, inside a pass, a layout BLAS cannot take as is, or a product
    the Python pass would spread over more threads than are spinning now (it wakes them)."""
    if xp is not _numpy or a.dtype.char not in "fd" or not a.flags.aligned or \
            not b.flags.aligned:
        return None
    native, spinning = _spinning_helpers()
    if spinning == 0 or (threads > 1 and spinning < threads - 1):
        return None  # NumPy's matmul alone, or the Python pass that wakes them
    (m, k), n = a.shape, b.shape[1]
    layout_a, layout_b = _blas_layout(a, m, k), _blas_layout(b, k, n)
    if layout_a is None or layout_b is None:
        return None
    out = xp.empty((m, n), dtype=a.dtype)
    pieces = min(parallel.get_num_threads() * BANDS_PER_THREAD, width // ALIGN)
    if not native.gemm(a.dtype.char == "d", layout_a[0], layout_b[0], m, n, k,
                       a.ctypes.data, layout_a[1], b.ctypes.data, layout_b[1], out.ctypes.data,
                       n, by_rows, ALIGN, pieces):
        return None
    return out


def native_for_extension():
    """``_pool`` when a C++ extension's product (``ember/include/ember/fast_ops.h``) may go
    to native bands now -- a pool thread spins, two threads or more, NumPy's single-threaded
    OpenBLAS -- else None. A C++ extension makes no pool pass of its own: the first call
    starts the pool, and later calls wake its workers when they have fallen asleep (for the
    products that follow: the caller runs this one alone)."""
    if not _pool_started and parallel.get_num_threads() > 1:
        _pool_started.append(True)
        parallel_for(2, _nothing, 1 << 30)  # starts the workers (they then spin)
    native, spinning = _spinning_helpers()
    return native if spinning else None


_pool_started = []


def _nothing(lo, hi):
    pass


def _spinning_helpers():
    """``(_pool, pool threads spinning now)`` where native bands may run on this thread --
    two threads or more, not inside a pass, NumPy's OpenBLAS single-threaded -- else
    ``(None, 0)``. Fewer spinning than the pool's workers: the idle ones are woken for the
    products that follow."""
    native = _native_gemm()
    wanted = parallel.get_num_threads() - 1
    if native is None or wanted < 1 or getattr(parallel._local, "inside", False) or \
            (parallel._CHECK_BLAS and parallel.blas_threads() != 1):
        return None, 0
    spinning = native.helpers()
    if spinning < wanted:
        parallel.wake_idle_workers(wanted - spinning)
    return native, spinning


def _blas_layout(x, rows, cols):
    """(transposed, leading dimension) under which BLAS reads the 2-D array ``x`` in place
    (rows, then transposed columns, contiguous), or None."""
    item = x.itemsize
    s0, s1 = x.strides
    if rows < 2 or cols < 2:
        return None  # a size-1 axis may carry any stride: leave such products to NumPy
    if s1 == item and s0 > 0 and s0 % item == 0 and s0 // item >= cols:
        return False, s0 // item
    if s0 == item and s1 > 0 and s1 % item == 0 and s1 // item >= rows:
        return True, s1 // item
    return None


_native_ready = []  # [] not set up yet; [module or None]


def _native_gemm():
    """``_pool`` with NumPy's OpenBLAS cblas_sgemm/cblas_dgemm handed to it, or None."""
    if not _native_ready:
        native = parallel._native
        if native is not None and not hasattr(native, "gemm"):
            native = None  # an older build of the helpers
        if native is not None:
            import ctypes
            sgemm = parallel.openblas_function("cblas_sgemm")
            dgemm = parallel.openblas_function("cblas_dgemm")
            if sgemm is None or dgemm is None:
                native = None
            else:
                native.set_gemm(ctypes.cast(sgemm, ctypes.c_void_p).value,
                                ctypes.cast(dgemm, ctypes.c_void_p).value,
                                parallel.openblas_ilp64())
        _native_ready.append(native)
    return _native_ready[0]


def _one_matrix(b):
    """Whether every matrix of the stack ``b`` is the same one (2-D, or batch dims of size 1
    or stride 0, as vmap's expansion of a shared weight makes them)."""
    return all(n == 1 or st == 0 for n, st in zip(b.shape[:-2], b.strides[:-2]))


def _folded(a, b):
    """A stack ``a`` (..., m, k) times one matrix ``b``: the stack's rows as one 2-D product
    (..., m, k) -> (rows, k) @ (k, n), where NumPy would run a small product per matrix."""
    mat = b[(0,) * (b.ndim - 2)]
    batch = get_array_module(a).broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != batch or a.shape[-1] != mat.shape[0]:  # b widens the batch: NumPy's
        return get_array_module(a, b).matmul(a, b)
    out = matmul(a.reshape(-1, a.shape[-1]), mat)
    return out.reshape(batch + (a.shape[-2], mat.shape[1]))


def _stacked(xp, a, b):
    """A stack of products of one batch shape (attention's ``q @ k^T``: one small product per
    head and sample) split along the stack over the pool, each slice the same NumPy matmul of
    the same matrices (the same bits); None when it is too small to split or not a floating
    product of one dtype."""
    if a.dtype != b.dtype or a.dtype.char not in _BLAS_TYPES or a.shape[-1] != b.shape[-2]:
        return None
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    count = math.prod(a.shape[:-2])
    work = count * m * k * n * MIN_CHUNK_BYTES // MIN_CHUNK_FMAS
    if num_chunks(count, work) == 1:
        return None
    a3, b3 = a.reshape(count, m, k), b.reshape(count, k, n)
    out = xp.empty(a.shape[:-2] + (m, n), dtype=a.dtype)
    out3 = out.reshape(count, m, n)

    def part(lo, hi):
        xp.matmul(a3[lo:hi], b3[lo:hi], out=out3[lo:hi])
    parallel_for(count, part, work)
    return out


def _outer(xp, a, b):
    """A stack of products with one term each (a (..., m, 1) @ b (..., 1, n)): one broadcast
    multiply, equal to matmul's (a sum of one product is that product) but ~20x faster than
    NumPy's matmul, which takes such stacks (per-sample weight gradients of a linear layer
    under vmap) through a slow loop. Computed as (b^T * a^T)^T so that the multiply's inner
    loop runs along the longer of m and n. A large stack of floats is split along its first
    axis over the thread pool (each slice the same multiply: the same bits)."""
    swap = a.shape[-2] > b.shape[-1]
    if swap:
        a, b = b.swapaxes(-1, -2), a.swapaxes(-1, -2)
    shape = xp.broadcast_shapes(a.shape, b.shape)
    itemsize = a.dtype.itemsize
    if (len(shape) < 3 or a.dtype != b.dtype or a.dtype.char not in _BLAS_TYPES
            or num_chunks(shape[0], 2 * math.prod(shape) * itemsize) == 1):
        out = xp.multiply(a, b)
        return out.swapaxes(-1, -2) if swap else out
    out = xp.empty(shape, dtype=a.dtype)
    a = xp.broadcast_to(a, shape[:-2] + a.shape[-2:])
    b = xp.broadcast_to(b, shape[:-2] + b.shape[-2:])

    def rows(lo, hi):
        xp.multiply(a[lo:hi], b[lo:hi], out=out[lo:hi])
    parallel_for(shape[0], rows, 2 * out.nbytes)
    return out.swapaxes(-1, -2) if swap else out


def matmul_pair(a1, b1, a2, b2):
    """``(np.matmul(a1, b1), np.matmul(a2, b2))``: two large 2-D products (a linear layer's
    input and weight gradients) run side by side, one whole product per thread, which beats
    splitting each (no operand packed twice, one pass instead of two). Otherwise each goes
    through ``matmul``.

    >>> import numpy as np
    >>> g, w, x = np.ones((4, 3)), np.ones((3, 5)), np.ones((4, 5))
    >>> gx, gw = matmul_pair(g, w, g.T, x)
    >>> gx.shape, gw.shape
    ((4, 5), (3, 5))
    """
    if get_array_module(a1) is not _numpy:  # device arrays: one library call each
        return matmul(a1, b1), matmul(a2, b2)
    if a1.itemsize == 2 and widened_on_host(a1, b1, a2, b2):  # float32 products, see matmul
        f32 = _numpy.float32
        out1, out2 = matmul_pair(_cast(a1, f32), _cast(b1, f32), _cast(a2, f32), _cast(b2, f32))
        return _cast(out1, a1.dtype), _cast(out2, a2.dtype)
    f1 = _fmas(a1, b1)
    f2 = _fmas(a2, b2)
    small = min(f1, f2)
    # side by side only when both products are worth a thread and neither dwarfs the other
    if small * 3 < max(f1, f2) or num_chunks(2, small * MIN_CHUNK_BYTES // MIN_CHUNK_FMAS) < 2:
        return matmul(a1, b1), matmul(a2, b2)
    out = [None, None]
    xp = get_array_module(a1, b1)

    def product(lo, hi):
        for i in range(lo, hi):
            out[i] = xp.matmul(a1, b1) if i == 0 else xp.matmul(a2, b2)
    parallel_for(2, product, 2 * small * MIN_CHUNK_BYTES // MIN_CHUNK_FMAS, pieces_per_thread=1)
    return out[0], out[1]


def matmul_add(a, b, c):
    """``matmul(a, b) + c`` (``c`` broadcast to the product, a linear layer's bias) in a new
    array. Half-precision operands on the host are summed in float32 before the one rounding
    to their dtype, as PyTorch's addmm does (adding ``c`` to the rounded product would round
    twice: ~1/4 of the elements then differ from PyTorch's by one unit in the last place)."""
    if a.itemsize == 2 and widened_on_host(a, b, c):
        f32 = _numpy.float32
        out = matmul(_cast(a, f32), _cast(b, f32))
        out += _cast(c, f32)
        return _cast(out, a.dtype)
    out = matmul(a, b)
    out += c
    return out


def _fmas(a, b):
    """Multiply-adds of a 2-D floating product of one dtype (0 for anything else)."""
    if a.ndim != 2 or b.ndim != 2 or a.dtype != b.dtype or a.dtype.char not in _BLAS_TYPES:
        return 0
    if a.shape[1] != b.shape[0]:
        return 0
    return a.shape[0] * a.shape[1] * b.shape[1]
