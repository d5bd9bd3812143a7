"""Activation functions as single nodes with numerically stable forward kernels.

Each forward is NumPy math on the input's own dtype (as PyTorch computes
float32 in float32); each backward is written with differentiable ember ops,
following PyTorch's ``*_backward`` formulas (including its choice of
gradient at the kinks), so every activation is twice differentiable.
"""
import math

import numpy as np  # host-side erf fallback only

from .primitive import Primitive
from .grad_link import link_zero_grad, LEAKY_RELU_BACKWARD, HARDTANH_BACKWARD
from ..backend import get_array_module, kernels, to_host
from ..backend.memory_layout import channels_last_memory
from ..backend.meta import is_meta
from ..backend.dtypes import is_float_np, refuse_limited_unsigned, refuse_float8
from ..backend.parallel import host_work, parallel_for

_SQRT1_2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_GELU_BETA = math.sqrt(2 / math.pi)
_GELU_KAPPA = 0.044715


def _float_data(x, name):
    """x's array to compute an activation on: bfloat16 data as float32 (PyTorch computes it
    in float32 and rounds once; ``_rounded`` gives the result back in x's dtype)."""
    d = x._data
    if d.itemsize == 1:
        refuse_float8(d.dtype, name)  # float8: none of PyTorch's activation kernels
    if d.dtype.kind != "f":
        if not is_float_np(d.dtype):
            raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype.scalar_name}'")
        return d.astype(np.float32)
    return d


def _rounded(out, x):
    """An activation's result ``out`` in x's dtype (bfloat16 rounded once, from float32)."""
    return out.astype(x._data.dtype, copy=False)


def float32_formula(formula, grad, *tensors):
    """A backward ``formula(grad, *tensors)`` written with tensor ops: where the gradient is
    bfloat16, run on float32 copies and rounded once (PyTorch's backward kernels of
    activations and softmax compute in float32); differentiable again either way."""
    if grad._data.dtype.kind != "V":
        return formula(grad, *tensors)
    return formula(grad.float(), *(t.float() for t in tensors)).to(grad.dtype)


def _scalar(v, d):
    return get_array_module(d).asarray(v, dtype=d.dtype)


def sigmoid_array(d):
    """``1 / (1 + exp(-d))`` in ``d``'s dtype, computing exp of non-positive numbers only:
    no overflow warnings for large ``|d|``; bfloat16 computed in float32, rounded once."""
    if d.dtype.kind == "V":
        return sigmoid_array(d.astype(np.float32)).astype(d.dtype)
    xp = get_array_module(d)
    if d.dtype.kind == "c":  # no overflow-free split for complex: the plain formula
        return 1 / (1 + xp.exp(-d))
    e = xp.exp(-xp.abs(d))
    return xp.where(d >= 0, 1 / (1 + e), e / (1 + e)).astype(d.dtype, copy=False)


def erf_array(d):
    """The error function in ``d``'s dtype (SciPy's when installed). NumPy has none, so it
    runs on a host copy whose result goes back to ``d``'s array module (a meta array has
    no values to copy: its result is one of the same shape)."""
    if is_meta(d):
        return get_array_module(d).empty_like(d)
    host = to_host(d)
    try:
        from scipy.special import erf  # optional dependency, and slow to import
        out = erf(host).astype(d.dtype, copy=False)
    except ImportError:
        out = np.vectorize(math.erf, otypes=[d.dtype])(host) if d.size else host.copy()
    return out if type(d) is np.ndarray else get_array_module(d).asarray(out)


# Large ReLUs run in rows of _ROW elements against a row of zeros: NumPy's maximum takes
# its SIMD loop only when both operands are contiguous (a scalar 0 takes a loop ~2x slower),
# and the rows are split over the thread pool.
_ROW = 4096
_ZERO_ROWS = {}


def _zero_row(xp, dtype):
    z = _ZERO_ROWS.get((xp, dtype))
    if z is None:
        z = _ZERO_ROWS[xp, dtype] = xp.zeros(_ROW, dtype=dtype)
    return z


def _rows(n):
    """(rows, tail): a contiguous array of ``n`` elements as ``rows`` rows of ``_ROW``."""
    return n // _ROW, n % _ROW


def relu_array(d):
    """``max(0, d)`` in ``d``'s dtype, element for element what ``np.maximum(0, d)`` gives
    (zero first: on equal operands np.maximum returns the second, so relu(-0.0) is -0.0, as
    PyTorch keeps x unless x < 0)."""
    xp = get_array_module(d)
    if d.size < 2 * _ROW or d.dtype.kind not in "fiu" or not d.flags.c_contiguous:
        if d.size >= 2 * _ROW and not d.flags.c_contiguous:  # channels-last: memory order
            laid_out = channels_last_memory(d)
            if laid_out is not None:
                return relu_array(laid_out[0]).transpose(laid_out[1])
        return xp.maximum(0, d, dtype=d.dtype)
    out = xp.empty(d.shape, dtype=d.dtype)
    if kernels.native_for(d):  # one compiled pass (x < 0 ? 0 : x), split over the pool
        df, of = d.reshape(-1), out.reshape(-1)
        return _split_flat(d.size, lambda a, b: kernels.relu(df[a:b], of[a:b]),
                           d.nbytes + out.nbytes, out)
    rows, tail = _rows(d.size)
    flat, oflat = d.reshape(-1), out.reshape(-1)
    main, omain = flat[:rows * _ROW].reshape(rows, _ROW), oflat[:rows * _ROW].reshape(rows, _ROW)
    zero = _zero_row(xp, d.dtype)

    def chunk(lo, hi):
        xp.maximum(zero, main[lo:hi], out=omain[lo:hi])
    parallel_for(rows, chunk, host_work(d, 2 * d.nbytes))
    if tail:
        xp.maximum(0, flat[rows * _ROW:], out=oflat[rows * _ROW:], dtype=d.dtype)
    return out


def _split_flat(n, fn, work, result):
    """``fn(lo, hi)`` over ``range(n)`` in 64 slices (each a few contiguous pieces of a
    thread's share) spread over the thread pool (host arrays only: ``host_work``); returns
    ``result``."""
    step = -(-n // 64)
    parallel_for(-(-n // step), lambda lo, hi: fn(lo * step, min(n, hi * step)),
                 host_work(result, work))
    return result


def _pass_where(xp, g, keep, out=None):
    """``g`` where ``keep``, +0 elsewhere, as a select: the bits of ``g`` times 0 or 1 (an
    integer multiply), so an inf or NaN gradient where ``keep`` is False gives 0, not NaN --
    PyTorch's ``keep ? g : 0`` -- at the cost of the float multiply ``g * keep``."""
    bits = xp.dtype(f"u{g.dtype.itemsize}")
    res = xp.multiply(g.view(bits), keep, dtype=bits, out=None if out is None else out.view(bits))
    return res.view(g.dtype)


def relu_keep(xp, out):
    """Where ReLU passes its gradient, from its output: not ``out <= 0`` (PyTorch's
    threshold_backward), so a NaN output passes it."""
    keep = xp.less_equal(out, 0)
    if type(keep) is xp.ndarray:
        return xp.logical_not(keep, out=keep)
    return xp.logical_not(keep)  # a 0-d output gives a NumPy bool


def relu_grad_array(g, out):
    """ReLU's gradient from its output, ``out <= 0 ? 0 : g`` as PyTorch computes it, split
    over the thread pool."""
    if not is_float_np(g.dtype):
        return g * (out > 0)
    xp = get_array_module(g)
    if (g.shape != out.shape or g.size < 2 * _ROW or not g.flags.c_contiguous
            or not out.flags.c_contiguous):
        if g.size >= 2 * _ROW and g.shape == out.shape:  # both channels-last: memory order
            g_mem, o_mem = channels_last_memory(g), channels_last_memory(out)
            if g_mem is not None and o_mem is not None:
                return relu_grad_array(g_mem[0], o_mem[0]).transpose(g_mem[1])
        return _pass_where(xp, g, relu_keep(xp, out))
    res = xp.empty(g.shape, dtype=g.dtype)
    gf, of, rf = g.reshape(-1), out.reshape(-1), res.reshape(-1)
    n = g.size
    work = g.nbytes + out.nbytes + res.nbytes
    if kernels.native_for(g, out):  # one compiled pass instead of three
        return _split_flat(n, lambda a, b: kernels.relu_backward(gf[a:b], of[a:b], rf[a:b]),
                           work, res)
    return _split_flat(n, lambda a, b: _pass_where(xp, gf[a:b], relu_keep(xp, of[a:b]),
                                                   out=rf[a:b]), work, res)


class Relu(Primitive):
    """``max(x, 0)``; backward ``grad * (out > 0)``, in NumPy when no graph is recorded
    (the common case: one multiply by the mask, no wrappers)."""
    _backward_name = "ReluBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, x):
        dt = x._data.dtype
        if dt.kind == "u" or dt.itemsize == 1:  # relu is a clamp: PyTorch has none for
            refuse_limited_unsigned(dt, "clamp_min_scalar_cpu")  # uint16/32/64 and float8
        return relu_array(x._data)

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        # PyTorch's threshold_backward: out <= 0 ? 0 : grad (a NaN output passes the
        # gradient, an inf gradient where out <= 0 gives 0) -- as backward_arrays does;
        # recorded, it reaches ``out`` with a zero gradient, as threshold_backward's does
        return link_zero_grad(grad.masked_fill(out <= 0, 0.0), out)

    @staticmethod
    def backward_arrays(ctx, grad):
        out, = ctx.saved_arrays
        return relu_grad_array(grad, out)


class Hardtanh(Primitive):
    """``clamp(x, min_val, max_val)``; gradient only strictly inside the bounds."""
    _backward_name = "HardtanhBackward0"

    @staticmethod
    def forward(ctx, x, min_val, max_val):
        d = x._data
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = min_val, max_val
        xp = get_array_module(d)
        if is_float_np(d.dtype):
            return xp.minimum(xp.maximum(d, _scalar(min_val, d)), _scalar(max_val, d))
        return xp.minimum(xp.maximum(d, min_val), max_val).astype(d.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return link_zero_grad(grad * ((x > ctx.lo) & (x < ctx.hi)), x,
                              HARDTANH_BACKWARD), None, None


class LeakyRelu(Primitive):
    _backward_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, x, slope):
        d = _float_data(x, "leaky_relu_cpu")
        ctx.save_for_backward(x)
        ctx.slope = slope
        return _rounded(get_array_module(d).where(d > 0, d, d * _scalar(slope, d)), x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        pos = x > 0
        return link_zero_grad(grad * pos + (grad * ctx.slope) * (~pos), x,
                              LEAKY_RELU_BACKWARD), None


class Elu(Primitive):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""
    _backward_name = "EluBackward0"

    @staticmethod
    def forward(ctx, x, alpha):
        d = _float_data(x, "elu_cpu")
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        xp = get_array_module(d)
        with xp.errstate(over="ignore", invalid="ignore"):
            neg = xp.expm1(xp.minimum(d, 0)) * _scalar(alpha, d)
        return _rounded(xp.where(d > 0, d, neg), x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors

        def formula(grad, x):
            pos = x > 0
            # exp of min(x, 0): never overflows, and its gradient is 0 where x > 0
            neg = x.clamp(max=0).exp() * ctx.alpha
            return grad * pos + grad * neg * (~pos)
        return float32_formula(formula, grad, x), None


def _gelu_grad(grad, x):
    cdf = 0.5 * (1 + (x * _SQRT1_2).erf())
    pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
    return grad * (cdf + x * pdf)


def _gelu_grad_tanh(grad, x):
    x2 = x * x
    t = ((x + x2 * x * _GELU_KAPPA) * _GELU_BETA).tanh()
    left = 0.5 * (1 + t)
    right = 0.5 * x * (1 - t * t) * (_GELU_BETA * (1 + 3 * _GELU_KAPPA * x2))
    return grad * (left + right)


def _silu_grad(grad, x):
    s = x.sigmoid()
    return grad * s * (1 + x * (1 - s))


def _mish_grad(grad, x):
    t = Softplus.apply(x, 1.0, 20.0).tanh()
    s = x.sigmoid()
    return grad * (t + x * s * (1 - t * t))


class Gelu(Primitive):
    _backward_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x, approximate="none"):
        d = _float_data(x, "GeluKernelImpl")
        if approximate not in ("none", "tanh"):
            raise RuntimeError("approximate argument must be either none or tanh.")
        ctx.save_for_backward(x)
        ctx.approximate = approximate
        xp = get_array_module(d)
        if approximate == "tanh":
            inner = _scalar(_GELU_BETA, d) * (d + _scalar(_GELU_KAPPA, d) * d * d * d)
            return _rounded(_scalar(0.5, d) * d * (1 + xp.tanh(inner)), x)
        return _rounded(d * _scalar(0.5, d) * (1 + erf_array(d * _scalar(_SQRT1_2, d))), x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return float32_formula(_gelu_grad_tanh if ctx.approximate == "tanh" else _gelu_grad,
                               grad, x), None


class Silu(Primitive):
    _backward_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, x):
        d = _float_data(x, "silu_cpu")
        ctx.save_for_backward(x)
        return _rounded(d * sigmoid_array(d), x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return float32_formula(_silu_grad, grad, x)


class Softplus(Primitive):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""
    _backward_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, x, beta=1.0, threshold=20.0):
        d = _float_data(x, "softplus_cpu")
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        bx = d * _scalar(beta, d)
        xp = get_array_module(d)
        with xp.errstate(over="ignore"):
            soft = xp.log1p(xp.exp(bx)) / _scalar(beta, d)
        return _rounded(xp.where(bx > threshold, d, soft), x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors

        def formula(grad, x):
            bx = x * ctx.beta
            lin = bx > ctx.threshold
            return grad * lin + grad * bx.sigmoid() * (~lin)
        return float32_formula(formula, grad, x), None, None


class Mish(Primitive):
    """``x * tanh(softplus(x))``."""
    _backward_name = "MishBackward0"

    @staticmethod
    def forward(ctx, x):
        d = _float_data(x, "mish_cpu")
        ctx.save_for_backward(x)
        xp = get_array_module(d)
        with xp.errstate(over="ignore"):
            return _rounded(d * xp.tanh(xp.log1p(xp.exp(d))), x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return float32_formula(_mish_grad, grad, x)


def hardtanh(x, min_val=-1.0, max_val=1.0):
    refuse_limited_unsigned(x._data.dtype, "clamp_scalar_cpu")  # PyTorch's is a clamp
    return Hardtanh.apply(x, min_val, max_val)


def leaky_relu(x, negative_slope=0.01):
    return LeakyRelu.apply(x, negative_slope)


def elu(x, alpha=1.0):
    return Elu.apply(x, alpha)


def gelu(x, approximate="none"):
    return Gelu.apply(x, approximate)


def silu(x):
    return Silu.apply(x)


def softplus(x, beta=1.0, threshold=20.0):
    return Softplus.apply(x, beta, threshold)


def mish(x):
    return Mish.apply(x)


__all__ = ["hardtanh", "leaky_relu", "elu", "gelu", "silu", "softplus", "mish"]
