"""Element-wise ops with NumPy broadcasting and PyTorch's type promotion.

Each op is a ``Primitive``: forward on arrays, backward on tensors (so it is
differentiable again), side by side.
"""
import cmath
import math
import numbers
import operator

import numpy as np

from .._tensor import Tensor
from .._torch_function import OperandTypeError
from ..backend import get_array_module, broadcast_shapes, is_array, numpy_function, numpy_ndarray
from ..backend import dtypes
from ..backend.dtypes import FLOAT8_NP, float8_e5m2
from ..backend.float8 import cast_float8, refuse_op as _refuse_float8
from .activation_ops import erf_array, sigmoid_array
from .primitive import Primitive, unbroadcast, sum_to
from .complex_ops import cj

_LN2 = math.log(2.0)


# ---- operand handling ---------------------------------------------------------------------
def _arrays(a, b):
    """Both operands as arrays/scalars of the promoted dtype (PyTorch's rules)."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            x, y = a._data, b._data
            if x.dtype == y.dtype:
                return x, y
        else:
            x = a._data
            dt = x.dtype
            if dt.kind == "f" and (type(b) is float or type(b) is int) and x.itemsize > 1:
                return x, b  # NumPy's weak scalars keep the tensor's float dtype (not float8's)
            # (NumPy scalars are not weak in NumPy 2: they take the general path below, and
            # so does bfloat16, kind "V": ml_dtypes takes a Python float as float32)
    _check_operand(a, 1)
    _check_operand(b, 2)
    dt = dtypes.result_type(a, b).np
    xp = _module(a, b)
    return _as(a, dt, xp), _as(b, dt, xp)


#: what an element-wise op takes besides tensors: numbers (bool, int, float, complex, NumPy
#: scalars) and arrays (ember's own code passes them)
_OPERAND_TYPES = (Tensor, numbers.Number, np.generic, np.ndarray)


def _check_operand(x, position):
    """PyTorch's TypeError for an operand that is no tensor, number or array (None, a
    string, a list: NumPy would make NaNs or object arrays of them)."""
    if not isinstance(x, _OPERAND_TYPES) and not is_array(x):
        raise OperandTypeError(f"argument '{('input', 'other')[position - 1]}' (position "
                               f"{position}) must be Tensor, not {type(x).__name__}")


def _module(*operands):
    """The array module of the tensors among ``operands``."""
    return get_array_module(*[t._data for t in operands if isinstance(t, Tensor)])


def _as(x, dt, xp):
    if isinstance(x, Tensor):
        d = x._data
        if d.dtype == dt:
            return d
        return cast_float8(d, dt) if dt.itemsize == 1 and dt in FLOAT8_NP else d.astype(dt)
    if dt.itemsize == 1 and dt in FLOAT8_NP:  # a number as float8: PyTorch's rounding
        return cast_float8(xp.asarray(x, dtype=xp.float32), dt)
    try:
        return xp.asarray(x, dtype=dt)
    except OverflowError:  # PyTorch casts an int past an integer dtype's range wrapping
        if dt.kind not in "iu" or not isinstance(x, int) or not -(1 << 63) <= x < 1 << 64:
            raise
        bits = 8 * dt.itemsize
        x %= 1 << bits
        return xp.asarray(x - (1 << bits) if dt.kind == "i" and x >> (bits - 1) else x, dt)


def _float32(x):
    return x.astype("float32") if hasattr(x, "astype") else x


def _float_arrays(a, b):
    """Like ``_arrays`` but integer results are lifted to the default float dtype (each
    operand from its own value: an int or a 0-d tensor is not wrapped into the other's
    integer dtype first)."""
    x, y = _arrays(a, b)
    if x.dtype.kind in "biu":  # complex and bfloat16 (kind "V") keep their dtype
        dt = dtypes.get_default_dtype().np
        x, y = _lifted(a, x, dt), _lifted(b, y, dt)
    return x, y


def _lifted(operand, promoted, dt):
    if isinstance(operand, Tensor):
        return operand._data.astype(dt)
    if type(operand) is int:
        return get_array_module(promoted).asarray(operand, dt)
    return promoted.astype(dt)


#: the C++ names PyTorch's overflow errors give the integer dtypes
_C_INT = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
          "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t"}


def _add_arrays(a, b):
    """``_arrays`` for add and sub, which PyTorch has no uint16/32/64 kernel of ("add_stub").
    Its own fast paths, no slower than ``_arrays``' (float tensors never reach the check)."""
    if isinstance(a, Tensor):
        x = a._data
        if isinstance(b, Tensor):
            dt = x.dtype
            if dt is b._data.dtype and dt.kind != "u" and x.itemsize > 1:
                return x, b._data
        elif x.dtype.kind == "f" and (type(b) is float or type(b) is int) and x.itemsize > 1:
            return x, b
    x, y = _arrays(a, b)
    if x.dtype.kind == "u" or x.itemsize == 1:  # uint8 computes; uint16+ and float8 not
        dtypes.refuse_limited_unsigned(x.dtype, "add_stub")
    return x, y


_REAL_NUMBERS = (bool, int, float)
_E5M2 = float8_e5m2.np  # the float8 type whose NumPy kind is "f"


def _by_number(fn, d, number):
    """``fn(d, number)`` for bfloat16 data ``d`` and a Python number, as PyTorch's CPU kernels
    multiply and divide by one: in float32 with the number unrounded, the result rounded
    once to bfloat16 (ml_dtypes' bfloat16 would take a Python float as float32)."""
    return fn(d.astype(np.float32), _weak(number)).astype(d.dtype)


def _opmath(fn, *arrays):
    """``fn(*arrays)``, a formula with Python-number coefficients: where bfloat16 is among the
    arrays, computed in float32 and the result rounded once to bfloat16 (unless a wider
    operand promotes it), as PyTorch computes it -- NumPy would give float32 (ml_dtypes'
    bfloat16 takes a Python float as float32) and round every step."""
    if not any(a.dtype.kind == "V" for a in arrays):
        return fn(*arrays)
    out_dtype = dtypes.result_type(*arrays).np
    out = fn(*(a.astype(np.float32) if a.dtype.kind == "V" else a for a in arrays))
    return out.astype(out_dtype, copy=False)


def _float_unary(x):
    """Unary float ops on integer tensors compute in the default float dtype."""
    d = x._data
    if d.dtype.kind in "biu":
        return d.astype(dtypes.get_default_dtype().np)
    return d


def _weak(scalar):
    """A NumPy scalar as the Python number PyTorch treats it as (weakly typed)."""
    return scalar.item() if isinstance(scalar, np.generic) else scalar


def _shape(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _check_broadcast(a, b):
    _check_shapes(_shape(a), _shape(b))


def _check_shapes(sa, sb):
    """PyTorch's RuntimeError (naming the sizes and the dimension) when two shapes do not
    broadcast."""
    if sa != sb:
        try:
            broadcast_shapes(sa, sb)
        except ValueError:
            for i in range(1, min(len(sa), len(sb)) + 1):
                if sa[-i] != sb[-i] and sa[-i] != 1 and sb[-i] != 1:
                    raise RuntimeError(
                        f"The size of tensor a ({sa[-i]}) must match the size of tensor b "
                        f"({sb[-i]}) at non-singleton dimension "
                        f"{max(len(sa), len(sb)) - i}") from None
            raise


def _grad_for(ctx, i, grad, operand):
    """``grad`` reduced to the shape of operand ``i`` (None when not needed)."""
    if not ctx.needs_input_grad[i]:
        return None
    return unbroadcast(grad, operand._data.shape)


# ---- arithmetic ---------------------------------------------------------------------------
class Add(Primitive):
    """``a + alpha * b``; Sub is the same node with ``-alpha``."""
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "AddBackward0"
    scalar_edges = True

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        x, y = _add_arrays(a, b)
        # operand shapes for unbroadcasting the gradient (a scalar operand has shape ())
        ctx.a_shape = x.shape if isinstance(a, Tensor) else ()
        ctx.b_shape = y.shape if isinstance(b, Tensor) else ()
        ctx.alpha = alpha
        try:
            if alpha == 1:
                return x + y
            if alpha == -1:
                return x - y
            if x.dtype.kind == "V":  # bfloat16: alpha rounded to it (as PyTorch), one rounding
                alpha_bf16 = float(x.dtype.type(alpha))
                return _opmath(lambda x, y: x + alpha_bf16 * y, x, y)
            return x + alpha * y
        except ValueError:
            _check_broadcast(a, b)
            raise

    @staticmethod
    def backward(ctx, grad):
        ga = unbroadcast(grad, ctx.a_shape) if ctx.needs_input_grad[0] else None
        gb = None
        if len(ctx.needs_input_grad) > 1 and ctx.needs_input_grad[1]:
            alpha = ctx.alpha
            gb = grad if alpha == 1 else -grad if alpha == -1 else grad * alpha
            gb = unbroadcast(gb, ctx.b_shape)
        return ga, gb, None

    @staticmethod
    def backward_arrays(ctx, grad):
        needs = ctx.needs_input_grad
        ga = sum_to(grad, ctx.a_shape) if needs[0] else None
        gb = None
        if len(needs) > 1 and needs[1]:
            alpha = ctx.alpha
            gb = sum_to(grad if alpha == 1 else -grad if alpha == -1 else
                        _by_number(operator.mul, grad, alpha) if grad.dtype.kind == "V" else
                        grad * alpha, ctx.b_shape)
        return ga, gb


class Sub(Add):
    _backward_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha=1):
        if (isinstance(a, Tensor) and a._data.dtype.kind == "b") or \
                (isinstance(b, Tensor) and b._data.dtype.kind == "b"):
            _bool_sub_error(_arrays(a, b)[0])
        return Add.forward(ctx, a, b, -alpha)


def _bool_sub_error(x):
    if x.dtype.kind == "b":
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                       "If you are trying to invert a mask, use the `~` or `logical_not()` "
                       "operator instead.")


class Mul(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "MulBackward0"
    saved_needed_for = ((1,), (0,))
    scalar_edges = True

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if isinstance(a, Tensor) else None,
                              b if isinstance(b, Tensor) else None)
        if not isinstance(b, Tensor):
            ctx.scalar = number = _weak(b)
            if type(number) in _REAL_NUMBERS and isinstance(a, Tensor) and \
                    a._data.dtype.kind == "V":
                dtypes.refuse_float8(a._data.dtype, "mul_cpu_reduced_float")  # float8 * number
                return _by_number(operator.mul, a._data, number)  # bfloat16 times a number
        x, y = _arrays(a, b)
        if x.itemsize == 1 and x.dtype in FLOAT8_NP:
            if not isinstance(a, Tensor) or not isinstance(b, Tensor) or not b._data.ndim:
                # PyTorch's kernel takes a 0-d second operand as a number: none for float8
                dtypes.refuse_float8(x.dtype, "mul_cpu_reduced_float")
            return cast_float8(_float32(x) * _float32(y), x.dtype)  # rounded as PyTorch's
        try:
            return x * y
        except ValueError:
            _check_broadcast(a, b)
            raise

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if b is None:
            return grad * cj(ctx.scalar), None
        ga = unbroadcast(grad * cj(b), a._data.shape) if ctx.needs_input_grad[0] else None
        gb = unbroadcast(grad * cj(a), b._data.shape) if ctx.needs_input_grad[1] else None
        return ga, gb

    @staticmethod
    def backward_arrays(ctx, grad):
        a, b = ctx.saved_arrays
        if b is None:
            if grad.dtype.kind == "V":
                return _by_number(operator.mul, grad, ctx.scalar), None
            s = ctx.scalar
            return grad * (s if type(s) is not complex else s.conjugate()), None
        needs = ctx.needs_input_grad
        ga = sum_to(grad * (b if b.dtype.kind != "c" else b.conj()), a.shape) \
            if needs[0] else None
        gb = sum_to(grad * (a if a.dtype.kind != "c" else a.conj()), b.shape) \
            if needs[1] else None
        return ga, gb


class Div(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "DivBackward0"
    saved_needed_for = ((1,), (0, 1))
    scalar_edges = True

    @staticmethod
    def forward(ctx, a, b, rounding_mode=None):
        if rounding_mode is not None:
            ctx.rounding = True
            x, y = _arrays(a, b)
            if x.itemsize == 1 and rounding_mode in ("floor", "trunc"):
                dtypes.refuse_float8(x.dtype, f"div_{rounding_mode}_cpu" + (
                    "" if isinstance(b, Tensor) else "_reduced_float"))
            if x.dtype.kind == "u" and rounding_mode in ("floor", "trunc"):
                dtypes.refuse_limited_unsigned(x.dtype, f"div_{rounding_mode}_cpu")
            if rounding_mode == "floor":
                return _floor_divide(x, y)
            if rounding_mode == "trunc":
                xp = get_array_module(x, y)
                dt = xp.result_type(x, y)
                if dt.kind in "iu":
                    return _trunc_divide_integers(xp, xp.asarray(x, dt), xp.asarray(y, dt))
                q = xp.true_divide(x, y)
                return xp.trunc(q).astype(dt) if q.dtype != dt else xp.trunc(q)
            raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                               f"'floor' but found '{rounding_mode}'")
        ctx.save_for_backward(a if isinstance(a, Tensor) else None,
                              b if isinstance(b, Tensor) else None)
        if not isinstance(b, Tensor):
            ctx.scalar = number = _weak(b)
            if type(number) in _REAL_NUMBERS and isinstance(a, Tensor) and \
                    a._data.dtype.kind == "V":
                dtypes.refuse_float8(a._data.dtype, "div_cpu_reduced_float")
                return _by_number(operator.truediv, a._data, number)  # bfloat16 by a number
        x, y = _float_arrays(a, b)
        if x.itemsize == 1:
            dtypes.refuse_float8(x.dtype, "div_cpu" if isinstance(b, Tensor) else
                                 "div_cpu_reduced_float")
        try:  # (NumPy's divide-by-zero warnings are filtered: see ember/backend/process.py)
            return x / y
        except ValueError:
            _check_broadcast(a, b)
            raise

    @staticmethod
    def backward(ctx, grad):
        if getattr(ctx, "rounding", False):
            return grad * 0, None, None
        a, b = ctx.saved_tensors
        if b is None:
            return grad / cj(ctx.scalar), None, None
        ga = unbroadcast(grad / cj(b), a._data.shape) if ctx.needs_input_grad[0] else None
        gb = None
        if ctx.needs_input_grad[1]:
            gb = unbroadcast(-grad * cj(a / b / b), b._data.shape)  # PyTorch's order
        return ga, gb, None

    @staticmethod
    def backward_arrays(ctx, grad):
        if getattr(ctx, "rounding", False):
            return grad * 0, None, None
        a, b = ctx.saved_arrays
        if b is None:
            if grad.dtype.kind == "V":
                return _by_number(operator.truediv, grad, ctx.scalar), None, None
            return grad / cj(ctx.scalar), None, None
        needs = ctx.needs_input_grad
        ga = sum_to(grad / cj(b), a.shape) if needs[0] else None
        gb = sum_to(-grad * cj(a / b / b), b.shape) if needs[1] else None
        return ga, gb, None


def _trunc_divide_integers(xp, x, y):
    """Integer division rounding toward zero, exactly (a float quotient loses the low bits
    of large int64 values); by zero it raises as PyTorch's integer kernels do."""
    if xp.any(y == 0):
        raise RuntimeError("ZeroDivisionError")
    q = x // y  # rounds down: one up where the true quotient is negative and inexact
    return q + ((q < 0) & (q * y != x)).astype(q.dtype)


def _floor_divide(x, y):
    xp = get_array_module(x, y)
    with xp.errstate(divide="ignore", invalid="ignore"):
        if xp.asarray(x).dtype.kind in "iub" and xp.asarray(y).dtype.kind in "iub":
            if xp.any(xp.asarray(y) == 0):
                raise RuntimeError("ZeroDivisionError")
        return xp.floor_divide(x, y)


class FloorDivide(Primitive):
    _backward_name = "FloorDivideBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = _arrays(a, b)
        if x.itemsize == 1 and not isinstance(b, Tensor):
            dtypes.refuse_float8(x.dtype, "div_floor_cpu_reduced_float")  # float8 // number
        dtypes.refuse_limited_unsigned(x.dtype, "div_floor_cpu")
        return _floor_divide(x, y)

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, (grad * 0 if ctx.needs_input_grad[1] else None)


class Remainder(Primitive):
    _backward_name = "RemainderBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a if isinstance(a, Tensor) else None,
                              b if isinstance(b, Tensor) else None)
        x, y = _arrays(a, b)
        dtypes.refuse_limited_unsigned(x.dtype, "remainder_cpu")
        xp = get_array_module(x, y)
        if xp.asarray(x).dtype.kind in "iu" and xp.any(xp.asarray(y) == 0):
            raise RuntimeError("ZeroDivisionError")
        with xp.errstate(divide="ignore", invalid="ignore"):
            return xp.remainder(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ga = unbroadcast(grad, a._data.shape) if a is not None and ctx.needs_input_grad[0] \
            else None
        gb = None
        if b is not None and ctx.needs_input_grad[1]:
            gb = unbroadcast(-grad * a.div(b, rounding_mode="floor"), b._data.shape)
        return ga, gb


class Pow(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b if isinstance(b, Tensor) else None)
        if not isinstance(b, Tensor):
            ctx.exponent = b
        x, y = _arrays(a, b)
        if x.itemsize == 1:
            dtypes.refuse_float8(x.dtype, "pow")
        xp = get_array_module(x)
        if x.dtype.kind in "iu":
            if not isinstance(b, Tensor):  # the exponent as given (``y`` wrapped into x's dtype)
                if _weak(b) < 0:
                    raise RuntimeError("Integers to negative integer powers are not allowed.")
                if y != _weak(b):
                    raise RuntimeError(f"value cannot be converted to type "
                                       f"{_C_INT[x.dtype.name]} without overflow")
            if isinstance(b, Tensor) or y not in (0, 1):  # (PyTorch's ones, or a copy)
                dtypes.refuse_limited_unsigned(x.dtype, "pow")
            if isinstance(b, Tensor):
                return _int_power(x, y)
        with xp.errstate(divide="ignore", invalid="ignore"):
            return xp.power(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        if b is None:
            p = ctx.exponent
            if p == 0:
                return grad * 0, None
            if a._data.dtype.kind == "c" or isinstance(p, complex):
                return grad * cj(p * a ** (p - 1)), None
            return grad * p * a ** (p - 1), None
        if a._data.dtype.kind == "c" or b._data.dtype.kind == "c":
            return _complex_pow_grads(ctx, grad, a, b)
        ga = gb = None
        if ctx.needs_input_grad[0]:
            # taken as 0 where the exponent is 0 (PyTorch), even at a == 0
            ga = unbroadcast((grad * b * a ** (b - 1)).masked_fill(b == 0, 0.0),
                             a._data.shape)
        if ctx.needs_input_grad[1]:
            # d/db a**b = a**b log a, taken as 0 where a == 0 and b >= 0 (PyTorch's choice)
            shape = grad._data.shape
            ab = a if a._data.shape == shape else a.expand(shape)
            safe = ((ab == 0) & (b >= 0))
            gb = grad * (ab ** b) * ab.masked_fill(safe, 1.0).log()
            gb = unbroadcast(gb.masked_fill(safe, 0.0), b._data.shape)
        return ga, gb


def _complex_pow_grads(ctx, grad, a, b):
    """``a ** b`` with a complex operand: ``grad * conj(b a**(b-1))`` (0 where b == 0) and
    ``grad * conj(a**b log a)`` (0 where a == 0 and b is real and >= 0, PyTorch's choice),
    ``a`` taken in the complex result dtype so a negative real base has its complex log."""
    ga = gb = None
    ac = a if a._data.dtype == grad._data.dtype else a.to(grad.dtype)
    if ctx.needs_input_grad[0]:
        ga = (grad * cj(b * ac ** (b - 1))).masked_fill(b == 0, 0.0)
        ga = unbroadcast(ga, a._data.shape)
    if ctx.needs_input_grad[1]:
        shape = grad._data.shape
        ab = ac if ac._data.shape == shape else ac.expand(shape)
        b_real = b.real if b.is_complex() else b
        real_exponent = b_real >= 0
        if b.is_complex():
            real_exponent = real_exponent & (b.imag == 0)
        safe = (ab == 0) & real_exponent
        gb = grad * cj((ab ** b) * ab.masked_fill(safe, 1.0).log())
        gb = unbroadcast(gb.masked_fill(safe, 0.0), b._data.shape)
    return ga, gb


def _int_power(x, y):
    """Integer ``x ** y`` with an integer tensor exponent, as C integer math (PyTorch):
    negative exponents give 0 except for bases 1 and -1."""
    xp = get_array_module(x, y)
    y = xp.asarray(y)
    neg = y < 0
    if not neg.any():
        return xp.power(x, y)
    x = xp.asarray(x)
    out = xp.power(x, xp.where(neg, 0, y))
    odd = (xp.abs(y) % 2).astype(bool)
    small = xp.where(x == 1, 1, xp.where(x == -1, xp.where(odd, -1, 1), 0)).astype(out.dtype)
    return xp.where(neg, small, out)


class RPow(Primitive):
    """``scalar ** tensor``."""
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "PowBackward1"
    saves_output = True

    @staticmethod
    def forward(ctx, b, base):
        ctx.base = base
        x, y = _arrays(base, b)
        if y.itemsize == 1:
            dtypes.refuse_float8(y.dtype, "pow")
        if y.dtype.kind in "iu":
            dtypes.refuse_limited_unsigned(y.dtype, "pow")
            return _int_power(x, y)
        xp = get_array_module(x, y)
        with xp.errstate(divide="ignore", invalid="ignore"):
            return xp.power(x, y)

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        if ctx.base == 0:
            return grad * 0, None
        if out._data.dtype.kind == "c":  # grad * conj(out log(base)), the complex log
            return grad * cj(out * cmath.log(ctx.base)), None
        return grad * out * math.log(ctx.base), None


class Neg(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "NegBackward0"

    @staticmethod
    def forward(ctx, x):
        if x._data.dtype.kind == "b":
            raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                               "If you are trying to invert a mask, use the `~` or "
                               "`logical_not()` operator instead.")
        dt = x._data.dtype
        if dt.kind == "u" or dt.itemsize == 1:
            dtypes.refuse_limited_unsigned(dt, "neg_cpu")
        return -x._data

    @staticmethod
    def backward(ctx, grad):
        return -grad

    @staticmethod
    def backward_arrays(ctx, grad):
        return -grad


# ---- unary math ---------------------------------------------------------------------------
def _unary(name, fn, grad_fn, saves="input", float_only=True, array_grad=None, refuse=None):
    """Define a unary Primitive: ``fn`` the name of the array module's function (``"exp"``)
    or a function of the array that finds its module itself; ``grad_fn(grad, x, out)`` on
    tensors.

    ``array_grad(grad, x, out)`` is the gradient on arrays (``backward_arrays``);
    ``array_grad=True`` says ``grad_fn`` is plain arithmetic that works on arrays too.
    ``refuse``: PyTorch's kernel name, where it has none for uint16/32/64 (refused by it).
    (NumPy's overflow/domain warnings are filtered, not np.errstate'd: ember/backend/process.py.)
    """

    if isinstance(fn, str):  # the module's own function: no wrapper to call
        fn_name, numpy_fn = fn, numpy_function(fn)

        def forward(ctx, x):
            if saves == "input":
                ctx.save_for_backward(x)
            d = x._data
            dt = d.dtype
            kind = dt.kind
            if kind in "biuV" or dt is _E5M2:  # (floats pay one test)
                if d.itemsize == 1 and dt in FLOAT8_NP:
                    _refuse_float8(dt, name)
                if float_only and kind in "biu":
                    d = _float_unary(x)
            if type(d) is numpy_ndarray:  # the fast path: get_array_module's own first test
                return numpy_fn(d)
            return getattr(get_array_module(d), fn_name)(d)
    else:
        def forward(ctx, x):
            if saves == "input":
                ctx.save_for_backward(x)
            d = x._data
            if d.itemsize == 1 and d.dtype in FLOAT8_NP:
                _refuse_float8(d.dtype, name)
            if float_only and d.dtype.kind in "biu":
                d = _float_unary(x)
            return fn(d)

    if refuse is not None:  # only these ops pay for the dtype test
        plain_forward = forward

        def forward(ctx, x):
            if x._data.dtype.kind == "u":
                dtypes.refuse_limited_unsigned(x._data.dtype, refuse)
            elif x._data.itemsize == 1:
                _refuse_float8(x._data.dtype, name)
            return plain_forward(ctx, x)

    def backward(ctx, grad):
        saved = ctx.saved_tensors
        x = saved[0] if saves == "input" else None
        out = saved[-1] if saves == "output" else None
        return grad_fn(grad, x, out)

    on_arrays = grad_fn if array_grad is True else array_grad

    def backward_arrays(ctx, grad):
        saved = ctx.saved_arrays
        x = saved[0] if saves == "input" else None
        out = saved[-1] if saves == "output" else None
        return on_arrays(grad, x, out)

    return type(name, (Primitive,), {
        "forward": staticmethod(forward), "backward": staticmethod(backward),
        "backward_arrays": staticmethod(backward_arrays) if on_arrays else None,
        "saves_output": saves == "output",
        "_grad_formula": staticmethod(grad_fn),  # elementwise: also the JVP (jvp_rules.py)
        "_backward_name": name + "Backward0", "__module__": __name__})


def _zero_grad(grad, x, out):
    return grad * 0


Abs = _unary("Abs", "abs", lambda g, x, o: g * (x.sgn() if x.is_complex() else x.sign()),
             float_only=False, refuse="abs_cpu")
Sign = _unary("Sign", "sign", _zero_grad, saves=None, float_only=False, refuse="sign_cpu")
Exp = _unary("Exp", "exp", lambda g, x, o: g * cj(o), saves="output",
             array_grad=lambda g, x, o: g * (o if o.dtype.kind != "c" else o.conj()))
Exp2 = _unary("Exp2", "exp2", lambda g, x, o: g * cj(o) * _LN2, saves="output",
              array_grad=True)
Log = _unary("Log", "log", lambda g, x, o: g / cj(x), array_grad=True)
Log2 = _unary("Log2", "log2", lambda g, x, o: g / cj(x * _LN2), array_grad=True)
Log1p = _unary("Log1p", "log1p", lambda g, x, o: g / cj(x + 1), array_grad=True)
Expm1 = _unary("Expm1", "expm1", lambda g, x, o: g * cj(o + 1), saves="output",
              array_grad=True)
Sqrt = _unary("Sqrt", "sqrt", lambda g, x, o: g / (2 * cj(o)), saves="output",
              array_grad=True)
Rsqrt = _unary("Rsqrt", lambda d: 1 / get_array_module(d).sqrt(d),
               lambda g, x, o: g * -0.5 * cj(o * o * o), saves="output")
Reciprocal = _unary("Reciprocal", lambda d: 1 / d, lambda g, x, o: -g * cj(o * o),
                    saves="output", array_grad=True)
Sin = _unary("Sin", "sin", lambda g, x, o: g * cj(x.cos()))
Cos = _unary("Cos", "cos", lambda g, x, o: -g * cj(x.sin()))
Tan = _unary("Tan", "tan", lambda g, x, o: g * cj(1 + o * o), saves="output")
# holomorphic (Abs: grad * sgn(x)) with conjugated derivatives: right for complex tensors
Abs.complex_grad = Exp.complex_grad = Log.complex_grad = Sqrt.complex_grad = True
Reciprocal.complex_grad = True
for _op in (Log2, Log1p, Expm1, Rsqrt, Sin, Cos, Tan, Exp2):
    _op.complex_grad = True


def _tanh_grad(g, o):
    return g * (1 - o * o)


def _sigmoid_grad(g, o):
    return g * (o * (1 - o))


class TanhGrad(Primitive):
    """``grad * (1 - out**2)`` as one node (PyTorch's tanh_backward): a hot path."""
    _backward_name = "TanhBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return _opmath(_tanh_grad, grad._data, out._data)

    @staticmethod
    def backward(ctx, gg):
        grad, out = ctx.saved_tensors
        return gg * cj(1 - out * out), -2 * gg * cj(grad) * cj(out)


class SigmoidGrad(Primitive):
    """``grad * out * (1 - out)`` as one node (PyTorch's sigmoid_backward)."""
    _backward_name = "SigmoidBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(grad, out)
        return _opmath(_sigmoid_grad, grad._data, out._data)

    @staticmethod
    def backward(ctx, gg):
        grad, out = ctx.saved_tensors
        return gg * cj(out) * cj(1 - out), gg * cj(grad) * cj(1 - 2 * out)


def _tanh_array_grad(g, x, o):
    if o.dtype.kind == "f" and g.dtype.kind == "f":  # the hot path: no generic checks
        return g * (1 - o * o)
    return _opmath(_tanh_grad, g, o if o.dtype.kind != "c" else o.conj())


def _sigmoid_array_grad(g, x, o):
    if o.dtype.kind == "f" and g.dtype.kind == "f":
        return g * (o * (1 - o))
    return _opmath(_sigmoid_grad, g, o if o.dtype.kind != "c" else o.conj())


Tanh = _unary("Tanh", "tanh", lambda g, x, o: TanhGrad.apply(g, cj(o)), saves="output",
              array_grad=_tanh_array_grad)
Floor = _unary("Floor", "floor", _zero_grad, saves=None, float_only=False)
Ceil = _unary("Ceil", "ceil", _zero_grad, saves=None, float_only=False)
Trunc = _unary("Trunc", "trunc", _zero_grad, saves=None, float_only=False)
Sigmoid = _unary("Sigmoid", sigmoid_array, lambda g, x, o: SigmoidGrad.apply(g, cj(o)),
                 saves="output", array_grad=_sigmoid_array_grad)
# grad * conj(f'(z)): the grad nodes take conj(out), their own backward conjugates too
Tanh.complex_grad = Sigmoid.complex_grad = TanhGrad.complex_grad = True
SigmoidGrad.complex_grad = True
Erf = _unary("Erf", erf_array, lambda g, x, o: g * (2 / math.sqrt(math.pi)) * (-(x * x)).exp())


class Round(Primitive):
    _backward_name = "RoundBackward0"

    @staticmethod
    def forward(ctx, x, decimals=0):
        d = x._data
        if d.itemsize == 1:
            dtypes.refuse_float8(d.dtype, "round_vml_cpu" if decimals == 0 else "round_cpu")
        return get_array_module(d).round(d, decimals)  # half to even, like PyTorch

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


class Clamp(Primitive):
    _backward_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, x, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
        ctx.save_for_backward(x)
        ctx.min, ctx.max = min, max
        d = x._data
        dtypes.refuse_limited_unsigned(d.dtype, "clamp_scalar_cpu" if min is not None and
                                       max is not None else "clamp_min_scalar_cpu"
                                       if max is None else "clamp_max_scalar_cpu")
        floating = dtypes.is_float_np(d.dtype)
        if not floating and (isinstance(min, float) or isinstance(max, float)):
            d = d.astype(dtypes.result_type(x, min, max).np)  # int tensor, float bound
            floating = dtypes.is_float_np(d.dtype)
        xp = get_array_module(d)
        # float data: the bounds in its dtype (PyTorch converts them to the scalar type)
        if min is not None:
            d = xp.maximum(d, xp.asarray(min).astype(d.dtype) if floating else min)
        if max is not None:
            d = xp.minimum(d, xp.asarray(max).astype(d.dtype) if floating else max)
        if min is not None and max is not None and min > max:
            d = xp.full_like(d, max)
        return d

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        keep = None
        if ctx.min is not None:
            keep = x >= ctx.min
        if ctx.max is not None:
            below = x <= ctx.max
            keep = below if keep is None else keep & below
        # masked, not multiplied: an inf or NaN gradient at a clamped element gives 0
        return grad.masked_fill(~keep, 0.0), None, None


class ClampTensor(Primitive):
    """``clamp`` with tensor bounds (either may be None); PyTorch's gradient rule: at a
    bound, the gradient goes to the input, not to the bound."""
    _backward_name = "ClampBackward0"

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x, lo, hi)
        dt = dtypes.result_type(x, lo, hi).np
        dtypes.refuse_limited_unsigned(dt, "clamp_cpu" if lo is not None and hi is not None
                                       else "maximum_cpu" if hi is None else "minimum_cpu")
        d = x._data.astype(dt, copy=False)
        xp = get_array_module(d)
        if lo is not None:
            _check_broadcast(x, lo)
            d = xp.maximum(d, lo._data.astype(dt, copy=False))
        if hi is not None:
            _check_broadcast(x, hi)
            d = xp.minimum(d, hi._data.astype(dt, copy=False))
        return d

    @staticmethod
    def backward(ctx, grad):
        x, lo, hi = ctx.saved_tensors
        below = (x < lo) if lo is not None else None
        above = (x > hi) if hi is not None else None
        if below is None:
            out = above
        elif above is None:
            out = below
        else:
            out = below | above
        gx = gl = gh = None
        if ctx.needs_input_grad[0]:
            gx = unbroadcast(grad.masked_fill(out, 0.0), x._data.shape)
        if lo is not None and ctx.needs_input_grad[1]:
            take = below if hi is None else below & (lo < hi)
            gl = unbroadcast(grad.masked_fill(~take, 0.0), lo._data.shape)
        if hi is not None and ctx.needs_input_grad[2]:
            take = above if lo is None else above | (hi < lo)
            gh = unbroadcast(grad.masked_fill(~take, 0.0), hi._data.shape)
        return gx, gl, gh


class Maximum(Primitive):
    _backward_name = "MaximumBackward0"
    pick = "maximum"  # the array module's function
    numpy_pick = numpy_function(pick)

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        x, y = _arrays(a, b)
        if x.dtype.kind == "u" or x.itemsize == 1:
            dtypes.refuse_limited_unsigned(x.dtype, type(ctx)._forward_cls.pick + "_cpu")
        cls = type(ctx)._forward_cls
        if type(x) is numpy_ndarray:  # the fast path (see _unary)
            return cls.numpy_pick(x, y)
        return getattr(get_array_module(x, y), cls.pick)(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        # PyTorch: ties split the gradient; where either side is nan both get all of it
        a_loses = (a < b) if type(ctx)._forward_cls is Maximum else (a > b)
        b_loses = (a > b) if type(ctx)._forward_cls is Maximum else (a < b)
        half = Where.apply(a == b, grad * 0.5, grad)
        ga = unbroadcast(half.masked_fill(a_loses, 0.0), a._data.shape) \
            if ctx.needs_input_grad[0] else None
        gb = unbroadcast(half.masked_fill(b_loses, 0.0), b._data.shape) \
            if ctx.needs_input_grad[1] else None
        return ga, gb


class Minimum(Maximum):
    _backward_name = "MinimumBackward0"
    pick = "minimum"
    numpy_pick = numpy_function(pick)


def _lerp_dtype_error(start, end, weight):
    name, other = ("end", end) if end._data.dtype != start._data.dtype else ("weight", weight)
    raise RuntimeError(f"expected dtype {start.dtype.cpp_name} for `{name}` but got dtype "
                       f"{other.dtype.cpp_name}")


def _lerp_arrays(s, e, w):
    """PyTorch's lerp: from ``s`` where ``|w| < 0.5``, from ``e`` elsewhere (each side keeps
    its end exact), ``1 - w`` in the computing dtype. PyTorch fuses each multiply-add; NumPy
    rounds the product first, so a result can differ from PyTorch's in the last bit."""
    diff = e - s
    if isinstance(w, (int, float, complex)):  # a scalar weight: one formula for all
        return s + w * diff if abs(w) < 0.5 else e - diff * (1 - w)
    return get_array_module(s).where(abs(w) < 0.5, s + w * diff, e - diff * (1 - w))


class Lerp(Primitive):
    _backward_name = "LerpBackward0"
    complex_grad = True  # conjugated slopes: right for complex tensors

    @staticmethod
    def forward(ctx, start, end, weight):
        if end._data.dtype != start._data.dtype or (
                isinstance(weight, Tensor) and weight._data.dtype != start._data.dtype):
            _lerp_dtype_error(start, end, weight)
        ctx.save_for_backward(start, end, weight if isinstance(weight, Tensor) else None)
        ctx.weight = weight
        if isinstance(weight, Tensor):
            return _opmath(_lerp_arrays, start._data, end._data, weight._data)
        # the weight rounded to the computing dtype first, as PyTorch converts it (then a
        # Python number again, weakly typed for the arrays' module)
        return _opmath(lambda s, e: _lerp_arrays(s, e, s.dtype.type(weight).item()),
                       start._data, end._data)

    @staticmethod
    def backward(ctx, grad):
        start, end, w_t = ctx.saved_tensors
        w = w_t if w_t is not None else ctx.weight
        g_start = unbroadcast(grad * cj(1 - w), start._data.shape) \
            if ctx.needs_input_grad[0] else None
        g_end = unbroadcast(grad * cj(w), end._data.shape) if ctx.needs_input_grad[1] else None
        g_w = None
        if w_t is not None and ctx.needs_input_grad[2]:
            g_w = unbroadcast(grad * cj(end - start), w_t._data.shape)
        return g_start, g_end, g_w


# ---- comparisons and logic (no gradient) -------------------------------------------------
def _compare(name, fn, kernel=None):
    """A comparison or logic op: ``fn`` names the array module's function; ``kernel``, for
    the orderings and logic ops, PyTorch's kernel, which has no uint16/32/64 form."""
    numpy_fn = numpy_function(fn)

    def forward(ctx, a, b):
        _check_broadcast(a, b)
        x, y = _arrays(a, b)
        if kernel is not None:
            dt = x.dtype
            if dt.kind == "u" or dt.itemsize == 1:
                dtypes.refuse_limited_unsigned(dt, kernel)
        if type(x) is numpy_ndarray:  # the fast path (see _unary)
            return numpy_fn(x, y)
        return getattr(get_array_module(x, y), fn)(x, y)
    return type(name, (Primitive,), {"forward": staticmethod(forward), "differentiable": False,
                                     "__module__": __name__})


Eq = _compare("Eq", "equal")
Ne = _compare("Ne", "not_equal")
Lt = _compare("Lt", "less", "lt_cpu")
Le = _compare("Le", "less_equal", "le_cpu")
Gt = _compare("Gt", "greater", "gt_cpu")
Ge = _compare("Ge", "greater_equal", "ge_cpu")
LogicalAnd = _compare("LogicalAnd", "logical_and", "logical_and_cpu")
LogicalOr = _compare("LogicalOr", "logical_or", "logical_or_cpu")
LogicalXor = _compare("LogicalXor", "logical_xor", "logical_xor_cpu")


def _bitwise(name, fn):
    """A bitwise op: ``fn`` names the array module's function."""
    def forward(ctx, a, b):
        x, y = _arrays(a, b)
        dt = x.dtype
        if dtypes.is_float_np(dt):
            raise NotImplementedError(f"\"{name.lower()}_cpu\" not implemented for "
                                      f"'{dtypes._BY_NUMPY[dt].scalar_name}'")
        return getattr(get_array_module(x, y), fn)(x, y)
    return type(name, (Primitive,), {"forward": staticmethod(forward), "differentiable": False,
                                     "__module__": __name__})


BitwiseAnd = _bitwise("bitwise_and", "bitwise_and")
BitwiseOr = _bitwise("bitwise_or", "bitwise_or")
BitwiseXor = _bitwise("bitwise_xor", "bitwise_xor")


class LogicalNot(Primitive):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        d = x._data
        dtypes.refuse_float8(d.dtype, "logical_not_cpu")
        if d.dtype.kind == "u" and d.dtype.itemsize > 1:  # PyTorch's limited unsigned types
            raise NotImplementedError(f"\"logical_not_cpu\" not implemented for "
                                      f"'{x.dtype.scalar_name}'")
        return get_array_module(d).logical_not(d)


class BitwiseNot(Primitive):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        dt = x._data.dtype
        if dtypes.is_float_np(dt) or dt.kind == "u" and dt.itemsize > 1:
            raise NotImplementedError("\"bitwise_not_cpu\" not implemented for "
                                      f"'{x.dtype.scalar_name}'")
        d = x._data
        return get_array_module(d).invert(d)


class IsNan(Primitive):
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        d = x._data
        return get_array_module(d).isnan(d)


class Where(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, cond, a, b):
        if cond._data.dtype.kind != "b":
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {cond.dtype.scalar_name}")
        ctx.save_for_backward(cond)
        ctx.a_shape, ctx.b_shape = _shape(a), _shape(b)
        x, y = _arrays(a, b)
        c = cond._data
        xp = get_array_module(c)
        if not isinstance(a, Tensor) and not isinstance(b, Tensor):
            x, y = xp.asarray(x), xp.asarray(y)  # two scalars: made in the default module
        try:
            return xp.where(c, x, y)
        except ValueError:
            # PyTorch names the first clash as it broadcasts condition, input, other in turn
            shape = c.shape
            for operand in (a, b):
                _check_shapes(shape, _shape(operand))
                shape = broadcast_shapes(shape, _shape(operand))
            raise

    @staticmethod
    def backward(ctx, grad):
        cond, = ctx.saved_tensors
        # masked_fill selects, so an inf or NaN gradient leaves exact zeros behind, as
        # PyTorch's (grad * 0 would make them NaN)
        ga = unbroadcast(grad.masked_fill(~cond, 0.0), ctx.a_shape) \
            if ctx.needs_input_grad[1] else None
        gb = unbroadcast(grad.masked_fill(cond, 0.0), ctx.b_shape) \
            if ctx.needs_input_grad[2] else None
        return None, ga, gb


class MaskedFill(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, x, mask, value):
        if mask._data.dtype.kind != "b":
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                               f"dtype {mask.dtype.cpp_name}")
        if isinstance(value, Tensor) and value.dim() != 0:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.dim()} dimension(s).")
        ctx.save_for_backward(mask)
        v = value._data if isinstance(value, Tensor) else value
        d = x._data
        ctx.x_shape = d.shape
        if mask._data.shape != d.shape:
            _check_broadcast(mask, x)  # the out-of-place form broadcasts both ways
        xp = get_array_module(d)
        return xp.where(mask._data, xp.asarray(v).astype(d.dtype), d)

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        gx = unbroadcast(grad.masked_fill(mask, 0.0), ctx.x_shape)
        gv = None
        if len(ctx.needs_input_grad) > 2 and ctx.needs_input_grad[2]:
            gv = grad.masked_fill(~mask, 0.0).sum()
        return gx, None, gv


class Addcmul(Primitive):
    _backward_name = "AddcmulBackward0"
    complex_grad = True  # conjugated slopes: right for complex tensors
    saved_needed_for = ((2,), (1,))

    @staticmethod
    def forward(ctx, x, t1, t2, value=1):
        ctx.save_for_backward(t1, t2)
        ctx.value = value
        ctx.x_shape = x._data.shape
        return _opmath(lambda x, t1, t2: x + value * (t1 * t2), x._data, t1._data, t2._data)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        return (unbroadcast(grad, ctx.x_shape),
                unbroadcast(grad * cj(t2 * v), t1._data.shape)
                if ctx.needs_input_grad[1] else None,
                unbroadcast(grad * cj(t1 * v), t2._data.shape)
                if ctx.needs_input_grad[2] else None,
                None)


class Addcdiv(Primitive):
    _backward_name = "AddcdivBackward0"
    complex_grad = True  # conjugated slopes: right for complex tensors
    # PyTorch keeps tensor2 whatever gradient is wanted (changing it in place then fails
    # backward even for the gradient of input alone, as in Adamax's differentiable step)
    saved_needed_for = ((2,), (0, 1, 2))

    @staticmethod
    def forward(ctx, x, t1, t2, value=1):
        if isinstance(x, Tensor):
            dtypes.refuse_float8(x._data.dtype, "addcdiv_cpu_out")
        ctx.save_for_backward(t1, t2)
        ctx.value = value
        ctx.x_shape = x._data.shape
        return _opmath(lambda x, t1, t2: x + value * (t1 / t2), x._data, t1._data, t2._data)

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        v = ctx.value
        return (unbroadcast(grad, ctx.x_shape),
                unbroadcast(grad * cj(v / t2), t1._data.shape)
                if ctx.needs_input_grad[1] else None,
                unbroadcast(-grad * cj(v * t1 / (t2 * t2)), t2._data.shape)
                if ctx.needs_input_grad[2] else None,
                None)
