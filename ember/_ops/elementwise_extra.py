"""More element-wise math: copysign, frac, gcd/lcm, heaviside, signbit, logaddexp2,
nextafter, frexp, the bit shifts, sinc, xlogy/xlog1py and entr.

Each is a ``Primitive`` (forward on arrays, backward with ember ops, so differentiable again)
or an op with no gradient (integer or bool results). Integer operands of the float ops
compute in the default float dtype, as PyTorch's do; ``float_power`` and ``ldexp`` are
compositions declared in ``_functions.py``.
"""
import math

from .._tensor import Tensor
from ..backend import dtypes, get_array_module
from . import elementwise as E
from .primitive import Primitive, unbroadcast


# ---- operand helpers ----------------------------------------------------------------------
def _need_tensor(x, name, arg, position):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                        f"{type(x).__name__}")


def _float_pair(a, b, kernel, name=None, number_first=True):
    """Both operands' arrays in their promoted dtype, integer results lifted to the default
    float dtype (PyTorch's float ops), after PyTorch's argument and broadcast checks."""
    need_one_tensor(a, b, name or kernel, number_first=number_first)
    E._check_broadcast(a, b)
    x, y = E._float_arrays(a, b)
    if x.dtype.kind == "c":
        raise _not_implemented(kernel, dtypes.result_type(a, b))
    if x.dtype.itemsize == 1:
        dtypes.refuse_float8(x.dtype, kernel + "_cpu")  # none of these has a float8 kernel
    if not hasattr(y, "dtype"):  # a Python number kept weak: an array of x's dtype, so
        y = get_array_module(x).asarray(y, dtype=x.dtype)  # NumPy's math keeps that dtype
    return x, y


def need_one_tensor(a, b, name, second="other", number_first=True, first=("input", "self")):
    """PyTorch's TypeError for a binary op given two numbers (its overloads each take a
    tensor; ``number_first``: whether one takes a number first; ``first``: the first
    argument's names in the tensor and the number overloads)."""
    if isinstance(a, Tensor) or (isinstance(b, Tensor) and number_first):
        return
    got = f"({type(a).__name__}, {type(b).__name__})"
    lines = [f"Tensor {first[0]}, Tensor {second}, *, Tensor out = None"]
    if number_first:
        lines.append(f"Number {first[1]}, Tensor {second}, *, Tensor out = None")
    lines.append(f"Tensor {first[0]}, Number {second}, *, Tensor out = None")
    if name.startswith("bitwise_"):  # PyTorch's parser says more about this overload
        lines[1] = (f"Number self, Tensor {second})\n      didn't match because some of the "
                    f"arguments have invalid types: (!{type(a).__name__}!, "
                    f"!{type(b).__name__}!")
    raise TypeError(f"{name}() received an invalid combination of arguments - got {got}, but "
                    f"expected one of:\n" + "".join(f" * ({line})\n" for line in lines))


def _shape_of(x):
    return x._data.shape if isinstance(x, Tensor) else ()


def _save_pair(ctx, a, b):
    """Keep the operands for backward: tensors saved (version-checked), numbers as they are."""
    ctx.numbers = (None if isinstance(a, Tensor) else a, None if isinstance(b, Tensor) else b)
    ctx.save_for_backward(*[t for t in (a, b) if isinstance(t, Tensor)])


def _saved_pair(ctx):
    saved = list(ctx.saved_tensors)
    return tuple(n if n is not None else saved.pop(0) for n in ctx.numbers)


def _pair_grads(ctx, ga, gb, a, b):
    """The two gradients (callables, run only where wanted), unbroadcast; None for numbers."""
    needs = ctx.needs_input_grad
    return (unbroadcast(ga(), _shape_of(a)) if needs[0] and isinstance(a, Tensor) else None,
            unbroadcast(gb(), _shape_of(b)) if len(needs) > 1 and needs[1]
            and isinstance(b, Tensor) else None)


def _not_implemented(kernel, dt):
    return NotImplementedError(f"\"{kernel}_cpu\" not implemented for '{dt.scalar_name}'")


def _unary_jvp(grad_formula):
    def jvp(ctx, args, tangents, out):  # elementwise: the backward formula on the tangent
        t = tangents[0]
        if t._data.dtype.kind == "c" or args[0]._data.dtype.kind == "c":
            # backward is grad * conj(f'(z)) (complex_grad ops): conjugated, f'(z) t
            return E.cj(grad_formula(E.cj(t), args[0], out))
        return grad_formula(t, args[0], out)
    jvp.complex_ok = True  # only ops with complex_grad get complex tangents
    return staticmethod(jvp)


# ---- unary --------------------------------------------------------------------------------
def _frac_grad(g, x, out):
    return g * 1


class Frac(Primitive):
    """``x - trunc(x)`` with x's sign; float dtypes only, as PyTorch."""
    _backward_name = "FracBackward0"
    _grad_formula = staticmethod(_frac_grad)
    jvp = _unary_jvp(_frac_grad)

    @staticmethod
    def forward(ctx, x):
        d = x._data
        dtypes.refuse_float8(d.dtype, "frac_cpu")
        if not dtypes.is_float_np(d.dtype):
            raise _not_implemented("frac", x.dtype)
        return d - get_array_module(d).trunc(d)

    @staticmethod
    def backward(ctx, grad):
        return grad * 1


def _sinc_grad(g, x, out):
    px = x * math.pi
    slope = (px.cos() * px - px.sin()) / (px * x)
    return g * E.cj(slope.masked_fill(x == 0, 0))


class Sinc(Primitive):
    """``sin(pi x) / (pi x)``, 1 at 0; integer and bool inputs give the default float dtype."""
    _backward_name = "SincBackward0"
    complex_grad = True  # grad * conj(sinc'(z)): right for complex tensors
    _grad_formula = staticmethod(_sinc_grad)
    jvp = _unary_jvp(_sinc_grad)

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        d = E._float_unary(x)
        xp = get_array_module(d)
        px = d * d.dtype.type(math.pi)
        zero = d == 0
        return xp.where(zero, d.dtype.type(1), xp.sin(px) / xp.where(zero, 1, px)).astype(
            d.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return _sinc_grad(grad, x, None)


class Signbit(Primitive):
    """True where the sign bit is set (-0.0 included); False for unsigned and bool."""
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        d = x._data
        dtypes.refuse_float8(d.dtype, "signbit_cpu")
        xp = get_array_module(d)
        if d.dtype.kind in "bu":
            return xp.zeros(d.shape, bool)
        if d.dtype.kind == "i":
            return d < 0
        if d.dtype.kind == "c":
            raise NotImplementedError("signbit is not implemented for complex tensors.")
        if d.dtype.kind == "V":  # bfloat16: NumPy's signbit has no loop for it
            d = d.astype("float32")
        return xp.signbit(d)


class FrexpExponent(Primitive):
    """The int32 exponents of ``frexp`` (0 for zeros, infinities and NaN)."""
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        d = x._data
        return get_array_module(d).frexp(d)[1].astype("int32")


class FrexpMantissa(Primitive):
    """The mantissas of ``frexp``, in [0.5, 1) in magnitude; the gradient is
    ``grad / 2**exponent``."""
    _backward_name = "FrexpBackward0"

    @staticmethod
    def forward(ctx, x):
        d = x._data
        mantissa, exponent = get_array_module(d).frexp(d)
        ctx.exponent = Tensor._make(exponent.astype(d.dtype))
        return mantissa

    @staticmethod
    def backward(ctx, grad):
        return grad / ctx.exponent.exp2()


def check_frexp(x):
    if not x.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")


# ---- binary: float results ------------------------------------------------------------------
class Copysign(Primitive):
    """``|a|`` with ``b``'s sign; the gradient flows to a only (zero at a == 0)."""
    _backward_name = "CopysignBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, "copysign", number_first=False)
        _save_pair(ctx, a, b)
        return get_array_module(x, y).copysign(x, y)

    @staticmethod
    def backward(ctx, grad):
        saved = list(ctx.saved_tensors)
        out = saved.pop()
        a = ctx.numbers[0] if ctx.numbers[0] is not None else saved.pop(0)
        b = ctx.numbers[1] if ctx.numbers[1] is not None else saved.pop(0)
        return _pair_grads(ctx, lambda: grad * (out / a).masked_fill(a == 0, 0),
                           lambda: grad * 0, a, b)


class Xlogy(Primitive):
    """``x * log(y)``, 0 where x == 0 unless y is NaN."""
    _backward_name = "XlogyBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, "xlogy")
        _save_pair(ctx, a, b)
        xp = get_array_module(x, y)
        out = x * xp.log(y)
        return xp.where((x == 0) & ~xp.isnan(y), out.dtype.type(0), out)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_pair(ctx)
        return _pair_grads(
            ctx, lambda: _zero_where(Xlogy.apply(grad, b), a == 0, b <= 0),
            lambda: grad * a / b, a, b)


class Xlog1py(Primitive):
    """``x * log1p(y)``, 0 where x == 0 unless y is NaN."""
    _backward_name = "SpecialXlog1pyBackward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = _float_pair(a, b, "xlog1py", "special_xlog1py")
        _save_pair(ctx, a, b)
        xp = get_array_module(x, y)
        out = x * xp.log1p(y)
        return xp.where((x == 0) & ~xp.isnan(y), out.dtype.type(0), out)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_pair(ctx)
        return _pair_grads(
            ctx, lambda: _zero_where(Xlog1py.apply(grad, b), a == 0, b <= -1),
            lambda: grad * a / (b + 1), a, b)


def _zero_where(t, p, q):
    """``t`` with zeros where both conditions hold (each a bool tensor, or a Python bool where
    its operand was a number)."""
    if not isinstance(p, Tensor):
        p, q = q, p
    if not isinstance(q, Tensor):
        return t.masked_fill(p, 0) if q else t
    return t.masked_fill(p & q, 0)


class Entr(Primitive):
    """``-x log x`` for x > 0, 0 at 0, -inf for x < 0 (NaN kept)."""
    _backward_name = "SpecialEntrBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        if x.dtype.is_complex:
            raise _not_implemented("entr", x.dtype)
        d = E._float_unary(x)
        xp = get_array_module(d)
        positive = d > 0
        out = -d * xp.log(xp.where(positive, d, 1))
        out = xp.where(d == 0, 0, xp.where(d < 0, -math.inf, out))
        return xp.where(xp.isnan(d), d, out).astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * -(x.log() + 1)


class LogAddExp2(Primitive):
    """``log2(2**a + 2**b)``; float operands only, as PyTorch."""
    _backward_name = "Logaddexp2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        xp, x, y = _float_only_pair(a, b, "logaddexp2")
        ctx.save_for_backward(a, b)
        return xp.logaddexp2(x, y)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        ln2 = math.log(2.0)
        return _pair_grads(ctx, lambda: grad * ((a - b) * ln2).sigmoid(),
                           lambda: grad * ((b - a) * ln2).sigmoid(), a, b)


class Nextafter(Primitive):
    """The next representable value after a towards b; PyTorch's gradient: grad for a, zero
    for b."""
    _backward_name = "NextafterBackward0"

    @staticmethod
    def forward(ctx, a, b):
        xp, x, y = _float_only_pair(a, b, "nextafter")
        ctx.shapes = (x.shape, y.shape)
        return xp.nextafter(x, y)

    @staticmethod
    def backward(ctx, grad):
        needs = ctx.needs_input_grad
        return (unbroadcast(grad * 1, ctx.shapes[0]) if needs[0] else None,
                unbroadcast(grad * 0, ctx.shapes[1]) if needs[1] else None)


def _float_only_pair(a, b, name):
    _need_tensor(b, name, "other", 2)
    E._check_broadcast(a, b)
    dt = dtypes.result_type(a, b)
    if not dt.is_floating_point:
        raise _not_implemented(name, dt)
    x, y = a._data, b._data
    x = x if x.dtype == dt.np else x.astype(dt.np)
    y = y if y.dtype == dt.np else y.astype(dt.np)
    return get_array_module(x, y), x, y


class Ldexp(Primitive):
    """``a * 2 ** b``, 2 ** b in b's float dtype (the default one for integer b). As
    PyTorch's, the gradient for a with integer exponents multiplies by 2 ** b computed in
    integers: 0 for negative exponents and past the width."""
    _backward_name = "LdexpBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _need_tensor(a, "ldexp", "input", 1)
        _need_tensor(b, "ldexp", "other", 2)
        E._check_broadcast(a, b)
        power_dt = b.dtype if b.dtype.is_floating_point or b.dtype.is_complex else \
            dtypes.get_default_dtype()
        xp = get_array_module(a._data, b._data)
        power = xp.exp2(b._data.astype(power_dt.np, copy=False))
        out_dt = dtypes.result_type(a, Tensor._make(power)).np
        ctx.save_for_backward(a, b)
        return a._data.astype(out_dt, copy=False) * power.astype(out_dt, copy=False)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        integer = not (b.dtype.is_floating_point or b.dtype.is_complex)
        power = LeftShift.apply(1, b) if integer else b.exp2()
        return _pair_grads(ctx, lambda: grad * power,
                           lambda: grad * a * power * math.log(2.0), a, b)


class Heaviside(Primitive):
    """0 where input < 0, 1 where > 0, ``values`` where 0 (the same dtype for both); PyTorch
    defines no derivative: backward raises."""
    _backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, x, values):
        _need_tensor(values, "heaviside", "values", 2)
        if x.dtype.is_complex or values.dtype.is_complex:
            raise RuntimeError("heaviside is not yet implemented for complex tensors.")
        if x.dtype is not values.dtype:
            raise RuntimeError("heaviside is not yet implemented for tensors with different "
                               "dtypes.")
        dtypes.refuse_limited_unsigned(x._data.dtype, "heaviside_cpu")
        E._check_broadcast(x, values)
        d, v = x._data, values._data
        xp = get_array_module(d, v)
        return xp.where(d == 0, v, (d > 0).astype(d.dtype))

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


# ---- integer ops ----------------------------------------------------------------------------
def _int_pair(a, b, name, kernel):
    """Integer operands' arrays in their promoted dtype (PyTorch's rules); others refused."""
    E._check_operand(a, 1)
    E._check_operand(b, 2)
    need_one_tensor(a, b, name)
    E._check_broadcast(a, b)
    x, y = E._arrays(a, b)
    if x.dtype.kind not in "iu":
        raise _not_implemented(kernel, dtypes.result_type(a, b))
    dtypes.refuse_limited_unsigned(x.dtype, kernel + "_cpu")
    return get_array_module(x, y), x, y


def _gcd_like(name, fn):
    def forward(ctx, a, b):
        _need_tensor(b, name, "other", 2)
        xp, x, y = _int_pair(a, b, name, name)
        return getattr(xp, fn)(x, y)
    return type(name.capitalize(), (Primitive,), {
        "forward": staticmethod(forward), "differentiable": False, "__module__": __name__})


Gcd = _gcd_like("gcd", "gcd")
Lcm = _gcd_like("lcm", "lcm")


def _shift(cls_name, name, left):
    """A bit shift as PyTorch's: a shift by a negative count or by the width or more gives 0
    (left) or the sign fill (right), where NumPy's is undefined."""
    def forward(ctx, a, b):
        xp, x, y = _int_pair(a, b, name, "lshift" if left else "rshift")
        bits = x.dtype.itemsize * 8
        out_of_range = (y < 0) | (y >= bits)
        count = xp.where(out_of_range, 0, y).astype(x.dtype, copy=False)
        if left:
            return xp.where(out_of_range, x.dtype.type(0), xp.left_shift(x, count))
        fill = xp.where(x < 0, x.dtype.type(-1) if x.dtype.kind == "i" else 0, x.dtype.type(0))
        return xp.where(out_of_range, fill, xp.right_shift(x, count))
    return type(cls_name, (Primitive,), {"forward": staticmethod(forward),
                                         "differentiable": False, "__module__": __name__})


LeftShift = _shift("LeftShift", "bitwise_left_shift", True)
RightShift = _shift("RightShift", "bitwise_right_shift", False)


__all__ = ["Frac", "Sinc", "Signbit", "FrexpExponent", "FrexpMantissa", "check_frexp",
           "Copysign", "Xlogy", "Xlog1py", "Entr", "LogAddExp2", "Nextafter", "Heaviside",
           "Gcd", "Lcm", "LeftShift", "RightShift", "Ldexp",
           "need_one_tensor"]
