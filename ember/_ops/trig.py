"""Inverse trigonometric and hyperbolic functions, atan2, hypot, logaddexp, the
infinity tests and nan_to_num.

Each differentiable op is a ``Primitive`` whose backward is written with ember ops, so it
is twice differentiable. Integer inputs compute in the default float dtype, as PyTorch's
float ops do.
"""
import math

import numpy as np  # dtype metadata only (finfo)

from .._tensor import Tensor
from ..backend import dtypes, get_array_module, broadcast_shapes
from .primitive import Primitive, unbroadcast
from . import complex_ops


def _float_data(x):
    """x's array, integer and bool ones as the default float dtype."""
    d = x._data
    if d.dtype.kind in "biu":  # bfloat16's NumPy kind is "V": it stays
        return d.astype(dtypes.get_default_dtype().np)
    return d


#: PyTorch's kernel names where they are not "<name>_cpu" (what refuses float8)
_FLOAT8_KERNELS = {"Asin": "asin_vml_cpu", "Acos": "acos_vml_cpu", "Atan": "atan_vml_cpu",
                   "Deg2Rad": "mul_cpu_reduced_float", "Rad2Deg": "mul_cpu_reduced_float"}


def _unary_op(name, compute, gradient, saves="input"):
    """A unary Primitive: ``compute(xp, array)`` forward, ``gradient(grad, x, out)`` (tensors)
    backward; ``saves``: "input" or "output" (what the gradient reads)."""

    kernel = _FLOAT8_KERNELS.get(name, name.lower() + "_cpu")

    def forward(ctx, x):
        if saves == "input":
            ctx.save_for_backward(x)
        d = _float_data(x)
        if d.dtype.itemsize == 1:
            dtypes.refuse_float8(d.dtype, kernel)  # PyTorch has none of these for float8
        return compute(get_array_module(d), d)

    def backward(ctx, grad):
        saved = ctx.saved_tensors
        return gradient(grad, saved[0] if saves == "input" else None,
                        saved[-1] if saves == "output" else None)

    return type(name, (Primitive,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward),
        "saves_output": saves == "output", "_backward_name": name + "Backward0",
        "_grad_formula": staticmethod(gradient),  # elementwise: also the JVP (jvp_rules.py)
        "__module__": __name__})


Asin = _unary_op("Asin", lambda xp, d: xp.arcsin(d),
                 lambda g, x, o: g * complex_ops.cj((1 - x * x).rsqrt()))
Acos = _unary_op("Acos", lambda xp, d: xp.arccos(d),
                 lambda g, x, o: -g * complex_ops.cj((1 - x * x).rsqrt()))
Atan = _unary_op("Atan", lambda xp, d: xp.arctan(d),
                 lambda g, x, o: g / complex_ops.cj(1 + x * x))
Sinh = _unary_op("Sinh", lambda xp, d: xp.sinh(d), lambda g, x, o: g * complex_ops.cj(x.cosh()))
Cosh = _unary_op("Cosh", lambda xp, d: xp.cosh(d), lambda g, x, o: g * complex_ops.cj(x.sinh()))
Asinh = _unary_op("Asinh", lambda xp, d: xp.arcsinh(d),
                  lambda g, x, o: g * complex_ops.cj((x * x + 1).rsqrt()))
# sqrt(z - 1) * sqrt(z + 1), not sqrt(z * z - 1): the derivative of arccosh's principal
# branch for complex z too (they differ in sign where Re z < 0)
Acosh = _unary_op("Acosh", lambda xp, d: xp.arccosh(d),
                  lambda g, x, o: g * complex_ops.cj((x - 1).rsqrt() * (x + 1).rsqrt()))
Atanh = _unary_op("Atanh", lambda xp, d: xp.arctanh(d),
                  lambda g, x, o: g / complex_ops.cj(1 - x * x))
# grad * conj(f'(z)): right for complex tensors
for _op in (Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh):
    _op.complex_grad = True
_DEG = math.pi / 180.0
Deg2Rad = _unary_op("Deg2Rad", lambda xp, d: d * d.dtype.type(_DEG), lambda g, x, o: g * _DEG,
                    saves=None)
Rad2Deg = _unary_op("Rad2Deg", lambda xp, d: d * d.dtype.type(1 / _DEG),
                    lambda g, x, o: g * (1 / _DEG), saves=None)


# ---- binary -------------------------------------------------------------------------------
def _binary_arrays(a, b, name, ints_allowed, complex_ok=False):
    """Both operands' arrays in their promoted float dtype (PyTorch's rules; integer
    operands compute in the default float dtype where ``ints_allowed``; complex ones only
    where ``complex_ok``)."""
    if not isinstance(b, Tensor):
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(b).__name__}")
    dt = dtypes.result_type(a, b)
    if dt.is_complex and not complex_ok or dt in dtypes.FLOAT8:
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dt.scalar_name}'")
    if not dt.is_floating_point and not dt.is_complex:
        if not ints_allowed:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dt.scalar_name}'")
        dt = dtypes.get_default_dtype()
    x, y = a._data, b._data
    x = x if x.dtype == dt.np else x.astype(dt.np)
    y = y if y.dtype == dt.np else y.astype(dt.np)
    try:
        broadcast_shapes(x.shape, y.shape)
    except ValueError:
        sa, sb = x.shape, y.shape
        raise RuntimeError(_size_mismatch(sa, sb)) from None
    return get_array_module(x, y), x, y


def _size_mismatch(sa, sb):
    n = max(len(sa), len(sb))
    for i in range(1, min(len(sa), len(sb)) + 1):
        if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
            return (f"The size of tensor a ({sa[-i]}) must match the size of tensor b "
                    f"({sb[-i]}) at non-singleton dimension {n - i}")
    return "shape mismatch"


def _grads(ctx, grad, ga, gb, a, b):
    needs = ctx.needs_input_grad
    return (unbroadcast(ga(), a.shape) if needs[0] else None,
            unbroadcast(gb(), b.shape) if needs[1] else None)


class Atan2(Primitive):
    _backward_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        xp, x, y = _binary_arrays(a, b, "atan2", True)
        return xp.arctan2(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        scale = grad / (a * a + b * b)
        return _grads(ctx, grad, lambda: scale * b, lambda: -scale * a, a, b)


class Hypot(Primitive):
    _backward_name = "HypotBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        xp, x, y = _binary_arrays(a, b, "hypot", False)
        return xp.hypot(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        scale = grad / out
        return _grads(ctx, grad, lambda: scale * a, lambda: scale * b, a, b)


class LogAddExp(Primitive):
    _backward_name = "LogaddexpBackward0"
    complex_grad = True  # grad * conj(sigmoid(a - b)): right for complex tensors

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        xp, x, y = _binary_arrays(a, b, "logaddexp", False, complex_ok=True)
        if x.dtype.kind == "c":  # the larger real part first: exp(low - high) cannot overflow
            first = x.real >= y.real
            high, low = xp.where(first, x, y), xp.where(first, y, x)
            return high + xp.log1p(xp.exp(low - high))
        return xp.logaddexp(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _grads(ctx, grad, lambda: grad * complex_ops.cj((a - b).sigmoid()),
                      lambda: grad * complex_ops.cj((b - a).sigmoid()), a, b)


# ---- tests for infinities and NaN ---------------------------------------------------------
#: PyTorch's kernels of the tests, and the float8 types each has a kernel for
_TEST_KERNELS = {"IsInf": ("isinf", ("float8_e5m2",)),
                 "IsFinite": ("isfinite", ("float8_e5m2", "float8_e8m0fnu")),
                 "IsPosInf": ("isposinf_cpu", ()), "IsNegInf": ("isneginf_cpu", ())}


def _test(name, check):
    kernel, float8_kernels = _TEST_KERNELS[name]

    def forward(ctx, x):
        d = x._data
        if d.dtype.itemsize == 1 and x.dtype.name not in float8_kernels:
            dtypes.refuse_float8(d.dtype, kernel)
        xp = get_array_module(d)
        if not dtypes.is_float_np(d.dtype) and d.dtype.kind != "c":
            return xp.zeros(d.shape, bool) if check is not _finite else xp.ones(d.shape, bool)
        return check(xp, d)
    return type(name, (Primitive,), {"forward": staticmethod(forward), "differentiable": False,
                                     "__module__": __name__})


def _finite(xp, d):
    return xp.isfinite(d)


IsInf = _test("IsInf", lambda xp, d: xp.isinf(d))
IsFinite = _test("IsFinite", _finite)
IsPosInf = _test("IsPosInf", lambda xp, d: xp.isposinf(d))
IsNegInf = _test("IsNegInf", lambda xp, d: xp.isneginf(d))


class NanToNum(Primitive):
    """NaN, +inf and -inf replaced by ``nan`` and ``posinf``/``neginf`` (default: the
    dtype's largest and lowest finite values); the gradient flows where x was finite."""
    _backward_name = "NanToNumBackward0"

    @staticmethod
    def forward(ctx, x, nan, posinf, neginf):
        dtypes.refuse_float8(x._data.dtype, "nan_to_num")
        ctx.save_for_backward(x)
        d = x._data
        if not dtypes.is_float_np(d.dtype) and d.dtype.kind != "c":
            return d.copy()
        # complex: the real and imaginary parts each (NumPy's rule, and PyTorch's)
        info = dtypes._np_finfo(d.dtype) if d.dtype.kind != "c" else np.finfo(d.dtype)
        xp = get_array_module(d)
        native = d.dtype.kind in "fc"  # bfloat16: NumPy's nan_to_num leaves it unchanged
        out = xp.nan_to_num(d if native else d.astype(np.float32), nan=nan,
                            posinf=float(info.max) if posinf is None else posinf,
                            neginf=float(info.min) if neginf is None else neginf)
        return out if native else out.astype(d.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * IsFinite.apply(x), None, None, None


# ---- complex numbers: the angle -----------------------------------------------------------
class Angle(Primitive):
    """The argument of each element (0 or pi for real ones, NaN kept); real dtype."""
    _backward_name = "AngleBackward0"
    complex_grad = True  # backward right for complex tensors (complex_ops.py)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        d = _float_data(x)
        xp = get_array_module(d)
        if d.dtype.kind == "c":
            return xp.angle(d)
        out = xp.where(d < 0, d.dtype.type(math.pi), d.dtype.type(0))
        return xp.where(xp.isnan(d), d, out)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if not x.is_complex():
            return grad * 0  # a real input's angle is piecewise constant
        # d angle = (x dy - y dx) / |z|^2: the gradient i z / |z|^2, 0 at z == 0 (PyTorch)
        scale = (grad / (x.abs() ** 2)).masked_fill(x == 0, 0.0)
        return complex_ops.Complex.apply(-x.imag * scale, x.real * scale)


Conj = complex_ops.Conj  # differentiable: complex_ops has complex numbers' autograd
