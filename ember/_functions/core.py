"""The first families of the functional API: arithmetic, comparisons and logic, reductions,
shape, indexing, linear algebra, tensors and dtypes, special functions, trigonometry, sets,
grids, complex numbers, matrix functions.

One-op functions are generated (``unary``/``binary``); the others pick the Primitive and
parse arguments as PyTorch does. Functions defined with their ops in ``_ops/`` (shape,
indexing, linear algebra) are declared here too.

>>> import ember
>>> ember.add(ember.ones(2), 1, alpha=2)
tensor([3., 3.])
"""
from __future__ import annotations

import builtins
import collections.abc as _abc
import warnings

import numpy as np

from .._creation import tensor, beside
from .._tensor import Tensor, Size, _wrap_dim
from .._typing import Any, Number, Sequence, dtype
from .._registry import op, alias, unary, binary, method as _method
from ..autograd.batching import per_sample_under_vmap
from .._ops import elementwise as E, reduction as R, shape as S, indexing as I, linalg as L
from .._ops import activation_ops as A, nn_ops as N, special as SP
from .._ops import trig as T, sets as Z, matmul_family as MF, complex_ops as _CX
from .._ops import jvp_rules  # noqa: F401  (installs the hand-written forward-mode rules)
from .._ops import memory_format as _MF
from ..backend.memory_layout import checked_format as _checked_format
from ..backend import dtypes, get_array_module, to_host


def _tensor_arg(x, name="other"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _as_tensor_like(scalar, like):
    """A scalar operand as a 0-d tensor of the op's dtype (a float64 tensor keeps a float
    scalar in float64, as PyTorch's wrapped numbers do), in ``like``'s array module."""
    t = tensor(scalar, dtype=dtypes.result_type(scalar, like))
    return beside(t, like) if isinstance(like, Tensor) else t


# ---- arithmetic ---------------------------------------------------------------------------
def _number_arg(value, fn, arg):
    """``alpha``/``value`` as a Python number: PyTorch reads a 0-d tensor that requires no
    gradient, or a NumPy scalar, as its value; anything else is a TypeError."""
    if isinstance(value, Tensor):
        if value.dim() == 0 and not value.requires_grad:
            return value.item()
    elif isinstance(value, np.generic):
        return value.item()  # first: np.float64 is a float, but would promote as float64
    if isinstance(value, (builtins.int, builtins.float, builtins.complex)):
        return value
    raise TypeError(f"{fn}(): argument '{arg}' must be Number, not {type(value).__name__}")


_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def _check_alpha(input, other, alpha):
    """PyTorch's checks of ``alpha`` against the kind of the result (bool < int < float <
    complex, from the operands)."""
    kinds = [input._data.dtype.kind if isinstance(input, Tensor) else "f"]
    if isinstance(other, Tensor):
        kinds.append(other._data.dtype.kind)
    else:
        kinds.append("b" if isinstance(other, builtins.bool) else
                     "i" if isinstance(other, builtins.int) else
                     "c" if isinstance(other, builtins.complex) else "f")
    rank = builtins.max(_KIND_RANK.get(k, 2) for k in kinds)
    if isinstance(alpha, builtins.bool) and rank != 0:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if rank <= 1 and isinstance(alpha, builtins.float):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if rank < 3 and isinstance(alpha, builtins.complex):
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")


@op(inplace=True, out=True)
def add(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    if type(alpha) is builtins.int and alpha == 1:  # the common case: no checks
        return E.Add.apply(input, other)
    alpha = _number_arg(alpha, "add", "alpha")
    _check_alpha(input, other, alpha)
    return E.Add.apply(input, other, alpha)


@op(inplace=True, out=True)
def sub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    if type(alpha) is builtins.int and alpha == 1:
        return E.Sub.apply(input, other)
    alpha = _number_arg(alpha, "sub", "alpha")
    _check_alpha(input, other, alpha)
    return E.Sub.apply(input, other, alpha)


subtract = alias(sub, "subtract", inplace=True)


@op(inplace=True, out=True)
def mul(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    if not isinstance(input, Tensor):
        input, other = other, input
    return E.Mul.apply(input, other)


multiply = alias(mul, "multiply", inplace=True)


@op(inplace=True, out=True)
def div(input: Tensor | Number, other: Tensor | Number, *,
        rounding_mode: str | None = None) -> Tensor:
    if not isinstance(input, Tensor):
        input = _as_tensor_like(input, other)
    if rounding_mode is None:
        return E.Div.apply(input, other)
    return E.Div.apply(input, other, rounding_mode)


divide = alias(div, "divide", inplace=True)
true_divide = alias(div, "true_divide", inplace=True)


@op(inplace=True, out=True)
def floor_divide(input: Tensor, other: Tensor | Number) -> Tensor:
    return E.FloorDivide.apply(input, other)


@op(inplace=True, out=True)
def remainder(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    if not isinstance(input, Tensor):
        input = _as_tensor_like(input, other)
    return E.Remainder.apply(input, other)


@op(inplace=True, out=True)
def fmod(input: Tensor, other: Tensor | Number) -> Tensor:
    if isinstance(input, Tensor) and (input._data.dtype.kind == "u" or
                                      input._data.dtype.itemsize == 1):  # and float8
        dtypes.refuse_limited_unsigned(dtypes.result_type(input, other).np, "fmod_cpu")
    return input - (input / other).trunc() * other if input.is_floating_point() else \
        E.Sub.apply(input, div(input, other, rounding_mode="trunc") * other)


@op(inplace=True, out=True)
def pow(input: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    if not isinstance(input, Tensor):
        return E.RPow.apply(exponent, input)
    return E.Pow.apply(input, exponent)


neg = unary(E.Neg, "neg", inplace=True)
negative = alias(neg, "negative", inplace=True)
abs = unary(E.Abs, "abs", inplace=True)
absolute = alias(abs, "absolute", inplace=True)
sign = unary(E.Sign, "sign", inplace=True)


@op(inplace=True, out=True)
def sgn(input: Tensor) -> Tensor:
    """``sign`` of a real tensor; ``x / |x|`` (0 at 0) of a complex one.

    >>> import ember
    >>> ember.sgn(ember.tensor([-2., 0., 3.]))
    tensor([-1.,  0.,  1.])
    """
    if not input.is_complex():
        return E.Sign.apply(input)
    magnitude = input.abs()
    zero = magnitude == 0
    return where(zero, input.new_zeros(()), input / magnitude.masked_fill(zero, 1.0))


exp = unary(E.Exp, "exp", inplace=True)
exp2 = unary(E.Exp2, "exp2", inplace=True)
log = unary(E.Log, "log", inplace=True)
log2 = unary(E.Log2, "log2", inplace=True)
log1p = unary(E.Log1p, "log1p", inplace=True)
expm1 = unary(E.Expm1, "expm1", inplace=True)
sqrt = unary(E.Sqrt, "sqrt", inplace=True)
rsqrt = unary(E.Rsqrt, "rsqrt", inplace=True)
reciprocal = unary(E.Reciprocal, "reciprocal", inplace=True)
sin = unary(E.Sin, "sin", inplace=True)
cos = unary(E.Cos, "cos", inplace=True)
tan = unary(E.Tan, "tan", inplace=True)
tanh = unary(E.Tanh, "tanh", inplace=True)
sigmoid = unary(E.Sigmoid, "sigmoid", inplace=True)
relu = unary(A.Relu, "relu", inplace=True, out=False)  # no out= in PyTorch
erf = unary(E.Erf, "erf", inplace=True)
floor = unary(E.Floor, "floor", inplace=True)
ceil = unary(E.Ceil, "ceil", inplace=True)
trunc = unary(E.Trunc, "trunc", inplace=True)
isnan = unary(E.IsNan, "isnan", out=False)


@op(inplace=True, out=True)
def square(input: Tensor) -> Tensor:
    dtypes.refuse_limited_unsigned(input._data.dtype, "pow")
    return E.Mul.apply(input, input)


@op(inplace=True, out=True)
def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    return E.Round.apply(input, decimals) if decimals else E.Round.apply(input)


@op(inplace=True, out=True)
def clamp(input: Tensor, min: Tensor | Number | None = None,
          max: Tensor | Number | None = None) -> Tensor:
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is not None and not isinstance(min, Tensor):
            min = input.new_tensor(min)
        if max is not None and not isinstance(max, Tensor):
            max = input.new_tensor(max)
        return E.ClampTensor.apply(input, min, max)
    return E.Clamp.apply(input, min, max)


clip = alias(clamp, "clip", inplace=True)


@op(inplace=True, out=True)
def clamp_min(input: Tensor, min: Tensor | Number) -> Tensor:
    return clamp(input, min=min)


@op(inplace=True, out=True)
def clamp_max(input: Tensor, max: Tensor | Number) -> Tensor:
    return clamp(input, max=max)


@op(out=True)
def maximum(input: Tensor, other: Tensor) -> Tensor:
    return E.Maximum.apply(input, _tensor_arg(other, "maximum"))


@op(out=True)
def minimum(input: Tensor, other: Tensor) -> Tensor:
    return E.Minimum.apply(input, _tensor_arg(other, "minimum"))


@op(inplace=True, out=True)
def lerp(input: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    dtypes.refuse_limited_unsigned(input._data.dtype, "lerp_kernel_tensor" if isinstance(
        weight, Tensor) else "lerp_kernel_scalar")
    return E.Lerp.apply(input, end, weight)


@op(inplace=True, out=True)
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    dtypes.refuse_limited_unsigned(dtypes.result_type(input, tensor1, tensor2).np,
                                   "addcmul_cpu_out")
    return E.Addcmul.apply(input, tensor1, tensor2, _number_arg(value, "addcmul", "value"))


_ADDCDIV_INTEGERS = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes.")


@op(inplace=True, out=True)
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    if isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor) and \
            tensor1._data.dtype.kind in "biu" and tensor2._data.dtype.kind in "biu":
        raise RuntimeError(_ADDCDIV_INTEGERS)
    return E.Addcdiv.apply(input, tensor1, tensor2, _number_arg(value, "addcdiv", "value"))


# ---- comparisons and logic ----------------------------------------------------------------
eq = binary(E.Eq, "eq", inplace=True)
ne = binary(E.Ne, "ne", inplace=True)
lt = binary(E.Lt, "lt", inplace=True)
le = binary(E.Le, "le", inplace=True)
gt = binary(E.Gt, "gt", inplace=True)
ge = binary(E.Ge, "ge", inplace=True)
greater = alias(gt, "greater", inplace=True)
greater_equal = alias(ge, "greater_equal", inplace=True)
less = alias(lt, "less", inplace=True)
less_equal = alias(le, "less_equal", inplace=True)
not_equal = alias(ne, "not_equal", inplace=True)
logical_and = binary(E.LogicalAnd, "logical_and", inplace=True)
logical_or = binary(E.LogicalOr, "logical_or", inplace=True)
logical_xor = binary(E.LogicalXor, "logical_xor", inplace=True)
logical_not = unary(E.LogicalNot, "logical_not", inplace=True)
bitwise_and = binary(E.BitwiseAnd, "bitwise_and", inplace=True)
bitwise_or = binary(E.BitwiseOr, "bitwise_or", inplace=True)
bitwise_xor = binary(E.BitwiseXor, "bitwise_xor", inplace=True)
bitwise_not = unary(E.BitwiseNot, "bitwise_not", inplace=True)


@op
@per_sample_under_vmap
def equal(input: Tensor, other: Tensor) -> bool:
    a, b = input._data, other._data
    if a.dtype.itemsize == 1 and (a is b or a.__array_interface__ == b.__array_interface__
                                  if type(a) is type(b) is np.ndarray else a is b):
        # the same memory: PyTorch then only looks for NaN, with no float8 kernel for it
        dtypes.refuse_float8(a.dtype, "equal_notnan_cpu")
    return input.shape == other.shape and bool(get_array_module(a, b).array_equal(a, b))


@op
@per_sample_under_vmap
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    a, b = input._data, other._data
    dtypes.refuse_float8(a.dtype, "mul_cpu_reduced_float")  # PyTorch's isclose scales atol
    return bool(get_array_module(a, b).allclose(a, b, rtol, atol, equal_nan))


@op
@per_sample_under_vmap
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    a, b = input._data, other._data
    dtypes.refuse_float8(a.dtype, "mul_cpu_reduced_float")  # PyTorch's isclose scales atol
    return Tensor._make(get_array_module(a, b).isclose(a, b, rtol, atol, equal_nan))


def _where_method(self: Tensor, condition: Tensor, other: Tensor | Number) -> Tensor:
    return where(condition, self, other)


@op(method=_where_method, out=True)  # x.where(condition, other): x is the input, not the condition
def where(condition: Tensor, input: Tensor | Number | None = None,
          other: Tensor | Number | None = None) -> Tensor | tuple[Tensor, ...]:
    if input is None and other is None:
        return I.nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = beside(tensor(input), condition)  # in the condition's array module
    return E.Where.apply(condition, input, other)


@op(inplace=True)
def masked_fill(input: Tensor, mask: Tensor, value: Tensor | Number) -> Tensor:
    dtypes.refuse_limited_unsigned(input._data.dtype, "masked_fill")
    return E.MaskedFill.apply(input, mask, value)


# ---- reductions ---------------------------------------------------------------------------
def _refuse_unsigned_result(input, dtype, kernel):
    """PyTorch's error for a reduction asked for a uint16/32/64 result (``dtype=``): its
    kernels have none (a reduction of no elements runs none)."""
    if dtype is not None and dtype in dtypes.LIMITED_UNSIGNED and input._data.size:
        dtypes.refuse_limited_unsigned(dtype.np, kernel)


@op(out=True)
def sum(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
        dtype: dtype | None = None) -> Tensor:
    if dim is None and not keepdim and dtype is None:
        return R.SumAll.apply(input)  # the plain loss.sum(): no scalar arguments to drop
    _refuse_unsigned_result(input, dtype, "sum_cpu")
    return (R.SumAll if dim is None else R.Sum).apply(input, dim, keepdim, dtype)


@op(out=True)
def mean(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    if dim is None and not keepdim and dtype is None:
        return R.MeanAll.apply(input)  # the plain loss.mean(): no scalar arguments to drop
    return (R.MeanAll if dim is None else R.Mean).apply(input, dim, keepdim, dtype)


@op(out=True)
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    _refuse_unsigned_result(input, dtype, "prod_out_cpu")
    if dim is not None and not hasattr(dim, "__index__"):
        _dim_must_be_int("prod", dim)
    return R.Prod.apply(input, dim, keepdim, dtype)


@op(out=True)
def max(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False
        ) -> Tensor | tuple[Tensor, Tensor]:
    return R.max_min(input, dim, keepdim, largest=True)


@op(out=True)
def min(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False
        ) -> Tensor | tuple[Tensor, Tensor]:
    return R.max_min(input, dim, keepdim, largest=False)


@op(out=True)
def amax(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return R.Amax.apply(input, dim, keepdim, True)


@op(out=True)
def amin(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return R.Amax.apply(input, dim, keepdim, False)


@op(out=True)
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is not None and not hasattr(dim, "__index__"):
        _dim_must_be_int("argmax", dim)
    return R.ArgExtreme.apply(input, dim, keepdim, True)


@op(out=True)
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    if dim is not None and not hasattr(dim, "__index__"):
        _dim_must_be_int("argmin", dim)
    return R.ArgExtreme.apply(input, dim, keepdim, False)


def _dim_must_be_int(name, dim):
    """PyTorch's TypeError for a reduction that takes one dim given several (a tuple)."""
    raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not "
                    f"{type(dim).__name__}")


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


@op(out=True)
def var(input: Tensor, dim: int | Sequence[int] | bool | None = None,
        unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Number | None = None) -> Tensor:
    if isinstance(dim, bool):  # var(x, False): the old positional 'unbiased'
        dim, unbiased = None, dim
    return R.Var.apply(input, dim, _correction(unbiased, correction), keepdim, False)


@op(out=True)
def std(input: Tensor, dim: int | Sequence[int] | bool | None = None,
        unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Number | None = None) -> Tensor:
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return R.Var.apply(input, dim, _correction(unbiased, correction), keepdim, True)


@op(out=True)
def logsumexp(input: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    return R.LogSumExp.apply(input, dim, keepdim)


@op(out=True)
def norm(input: Tensor, p: float | str | None = "fro", dim: int | Sequence[int] | None = None,
         keepdim: bool = False, dtype: dtype | None = None) -> Tensor:
    # PyTorch's dispatch: 'fro' over at most two dims and every number are vector norms,
    # other strings ('nuc') matrix norms over ``dim`` (all dims when None)
    dims = [dim] if isinstance(dim, int) else dim
    if isinstance(p, str):
        if p == "fro" and (dims is None or len(dims) <= 2):
            return _LN.vector_norm(input, 2, dims, keepdim, dtype=dtype)
        dims = list(range(input.dim())) if dims is None else dims
        return _LN.matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return _LN.vector_norm(input, 2.0 if p is None else p, dims, keepdim, dtype=dtype)


@op
def dist(input: Tensor, other: Tensor, p: float = 2) -> Tensor:
    """The ``p``-norm of ``input - other`` (broadcast), as one number.

    >>> import ember
    >>> ember.dist(ember.tensor([3., 0.]), ember.tensor([0., 4.]))
    tensor(5.)
    """
    if input._data.dtype.kind == "u" or input._data.dtype.itemsize == 1:  # PyTorch subtracts
        # first: no uint16/32/64 or float8 kernel
        dtypes.refuse_limited_unsigned(result_type(input, other).np, "add_stub")
    if not (input.is_floating_point() or input.is_complex()):
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {input.dtype.scalar_name} instead.")
    _LN._check_shapes_broadcast(input.shape, other.shape)
    common = result_type(input, other)  # PyTorch's promotion (0-d operands weigh less)
    input, other = input.to(common), other.to(common)
    return R.Dist.apply(input, other, float(p))


@op(out=True)
def all(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return R.AllAny.apply(input, dim, keepdim, True)


@op(out=True)
def any(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return R.AllAny.apply(input, dim, keepdim, False)


@op(out=True)
def cumsum(input: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    _refuse_unsigned_result(input, dtype, "cumsum_out_cpu")
    return R.Cumsum.apply(input, dim, dtype)


@op(out=True)
def cumprod(input: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    _refuse_unsigned_result(input, dtype, "cumprod_out_cpu")
    return R.Cumprod.apply(input, dim, dtype)


softmax = op(N.softmax)
log_softmax = op(N.log_softmax)

# ---- shape --------------------------------------------------------------------------------
view = op(S.view)
reshape = op(S.reshape)
flatten = op(S.flatten)
unflatten = op(S.unflatten)
squeeze = op(S.squeeze)
unsqueeze = op(S.unsqueeze)
permute = op(S.permute)
transpose = op(S.transpose)
t = op(S.t)
expand = op(S.expand)
sum_to_size = op(S.sum_to_size)


@op
def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    if memory_format is not None and memory_format is not dtypes.contiguous_format:
        return _MF.contiguous(input, _checked_format(memory_format, "contiguous"))
    return S.contiguous(input)


cat = op(S.cat, method=False, out=True)
stack = op(S.stack, method=False, out=True)
flip = op(S.flip)
roll = op(S.roll)
repeat = op(S.repeat)
tile = op(S.tile)
narrow = op(S.narrow)
select = op(S.select)
unbind = op(S.unbind)
split = op(S.split)
chunk = op(S.chunk)


@op(inplace=True)
def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    if input._data.ndim >= 2 and input._data.size:  # (PyTorch's kernel skips no elements)
        dtypes.refuse_limited_unsigned(input._data.dtype, "tril")
    return S.Tri.apply(input, diagonal, True)


@op(inplace=True)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    if input._data.ndim >= 2 and input._data.size:
        dtypes.refuse_limited_unsigned(input._data.dtype, "triu")
    return S.Tri.apply(input, diagonal, False)


@op
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    if memory_format is not None or not input._data.flags.c_contiguous:
        # a layout asked for, or one to preserve (channels-last)
        out = _MF.clone(input, _checked_format(memory_format, "clone"))
        if out is not None:
            return out
    return S.Clone.apply(input)


# ---- indexing -----------------------------------------------------------------------------
gather = op(I.gather, out=True)
scatter = op(I.scatter, inplace=True)
scatter_add = op(I.scatter_add, inplace=True)
index_select = op(I.index_select, out=True)
index_add = op(I.index_add, inplace=True)
masked_select = op(I.masked_select, out=True)
take_along_dim = op(I.take_along_dim, out=True)
nonzero = op(I.nonzero, out=True)
sort = op(I.sort, out=True)
argsort = op(I.argsort)
topk = op(I.topk, out=True)

# ---- linear algebra -----------------------------------------------------------------------
mm = op(L.mm, out=True)
bmm = op(L.bmm, out=True)
matmul = op(L.matmul, out=True)
dot = op(L.dot, out=True)


@op(out=True)
def vdot(input: Tensor, other: Tensor) -> Tensor:
    """``sum(conj(input) * other)`` of two 1-D tensors (``dot`` for real ones).

    >>> import ember
    >>> ember.vdot(ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor(11.)
    """
    return L.dot(input.conj(), other)


mv = op(L.mv, out=True)


def _outer_method(self: Tensor, vec2: Tensor) -> Tensor:
    return L.outer(self, vec2, "outer", method=True)


@op(method=_outer_method, out=True)
def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two 1-D tensors.

    >>> import ember
    >>> ember.outer(ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor([[3., 4.],
            [6., 8.]])
    """
    return L.outer(input, vec2)


def _ger_method(self: Tensor, vec2: Tensor) -> Tensor:
    return L.outer(self, vec2, "ger", method=True)


@op(method=_ger_method, out=True)
def ger(input: Tensor, vec2: Tensor) -> Tensor:
    """``outer`` under its deprecated name (PyTorch warns only when it is given ``out=``).

    >>> import ember
    >>> ember.ger(ember.tensor([1., 2.]), ember.tensor([3.]))
    tensor([[3.],
            [6.]])
    """
    return L.outer(input, vec2, "ger")


# the matmul family (_ops/matmul_family.py: compositions of the products above). The in-place
# forms PyTorch has are methods of their own: its "Bad in-place call" checks come before the
# op runs; x.addbmm_ is the declared (generic) one
addmm = op(MF.addmm, out=True)
baddbmm = op(MF.baddbmm, out=True)
addbmm = op(MF.addbmm, out=True, inplace=True)
addmv = op(MF.addmv, out=True)
addr = op(MF.addr, out=True)
for _inplace_form in (MF.addmm_, MF.baddbmm_, MF.addmv_, MF.addr_):
    _method(_inplace_form)
chain_matmul = op(MF.chain_matmul, method=False, out=True)
tensordot = op(MF.tensordot, method=False, out=True)
inner = op(MF.inner, out=True)
kron = op(MF.kron, out=True)
einsum = op(L.einsum, method=False)


# ---- tensors and dtypes (Tensor has these methods itself, or none) --------------------------
@op(method=False)
def numel(input: Tensor) -> int:
    return input.numel()


@op(method=False)
def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


@op(method=False)
def is_floating_point(input: Tensor) -> bool:
    return input.is_floating_point()


@op(method=False)
def promote_types(type1: dtype, type2: dtype) -> dtype:
    return dtypes.promote_types(type1, type2)


@op(method=False)
def result_type(tensor1: Tensor | Number, tensor2: Tensor | Number) -> dtype:
    return dtypes.result_type(tensor1, tensor2)


@op(method=False)
def can_cast(from_: dtype, to: dtype) -> bool:
    return from_.category <= to.category


@op(method=False)
def detach(input: Tensor) -> Tensor:
    return input.detach()


@op(method=False)
def broadcast_shapes(*shapes: Sequence[int]) -> Size:
    # PyTorch's rules and messages: an int is a 1-D shape, None is skipped, and each shape
    # in turn must broadcast to the common shape of those before it
    shapes = [(s,) if isinstance(s, int) else s for s in shapes if s is not None]
    if not shapes:
        return Size([])
    for shape in shapes:
        if not isinstance(shape, _abc.Sequence):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list "
                               f"of ints, got {shape}")
    common = [1] * builtins.max(len(shape) for shape in shapes)
    for index, shape in enumerate(shapes):
        for i in range(-1, -1 - len(shape), -1):
            size = shape[i]
            if size == common[i]:
                continue
            if common[i] == 1:
                if size < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[i] = size
            if size != 1 and size != common[i]:
                raise RuntimeError(
                    f"Attempting to broadcast a dimension of length {size} at {i}! Mismatching "
                    f"argument at index {index} had {shape}; but expected shape should be "
                    f"broadcastable to {common}")
    return Size(common)


def _broadcast_pair(a, b):
    """The broadcast of two shapes, with PyTorch's error naming the first mismatch from the
    right (``a``: the shape so far, ``b``: the next tensor's)."""
    n = builtins.max(len(a), len(b))
    out = [1] * n
    for i in range(n - 1, -1, -1):
        size_a = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        size_b = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if size_a != size_b and size_a != 1 and size_b != 1:
            raise RuntimeError(f"The size of tensor a ({size_a}) must match the size of tensor b "
                               f"({size_b}) at non-singleton dimension {i}")
        out[i] = size_b if size_a == 1 else size_a
    return tuple(out)


@op(method=False)
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    shape = ()
    for t in tensors:
        shape = _broadcast_pair(shape, tuple(t.shape))
    return tuple(t.expand(shape) for t in tensors)


__all__ = [
    # arithmetic and math
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "neg", "negative", "abs", "absolute", "sign", "sgn",
    "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "sin",
    "cos", "tan", "tanh", "sigmoid", "relu", "erf", "floor", "ceil", "trunc", "isnan",
    "square", "round", "clamp", "clip", "clamp_min", "clamp_max", "maximum", "minimum",
    "lerp", "addcmul", "addcdiv",
    # comparisons and logic
    "eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
    "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_not", "equal", "allclose", "isclose", "where",
    "masked_fill",
    # reductions
    "sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "var", "std",
    "logsumexp", "norm", "dist", "all", "any", "cumsum", "cumprod", "softmax", "log_softmax",
    # shape
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose",
    "t", "expand", "sum_to_size", "contiguous", "cat", "stack", "flip", "roll", "repeat",
    "tile", "narrow", "select", "unbind", "split", "chunk", "tril", "triu", "clone",
    # indexing
    "gather", "scatter", "scatter_add", "index_select", "index_add", "masked_select",
    "take_along_dim", "nonzero", "sort", "argsort", "topk",
    # linear algebra
    "mm", "bmm", "matmul", "dot", "vdot", "mv", "outer", "ger", "addmm", "baddbmm", "addbmm",
    "addmv", "addr", "chain_matmul", "tensordot", "inner", "kron", "einsum",
    # tensors and dtypes
    "numel", "is_tensor", "is_floating_point", "promote_types", "result_type", "can_cast",
    "detach", "broadcast_shapes", "broadcast_tensors",
]


# ---- special functions (_ops/special.py) -------------------------------------------------
lgamma = unary(SP.Lgamma, "lgamma", inplace=True)
digamma = unary(SP.Digamma, "digamma", inplace=True)
erfinv = unary(SP.Erfinv, "erfinv", inplace=True)
igamma = binary(SP.Igamma, "igamma", inplace=True)


def _polygamma_method(self: Tensor, n: int) -> Tensor:
    return polygamma(n, self)


@op(method=_polygamma_method, inplace=True)  # x.polygamma(n): x is the input, not n
def polygamma(n: int, input: Tensor) -> Tensor:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return SP.Polygamma.apply(int(n), input)


__all__ += ["lgamma", "digamma", "erfinv", "igamma", "polygamma"]


# ---- trigonometric, hyperbolic, infinities (ops in _ops/trig.py) ----------------------------
asin = unary(T.Asin, "asin", inplace=True)
arcsin = alias(asin, "arcsin", inplace=True)
acos = unary(T.Acos, "acos", inplace=True)
arccos = alias(acos, "arccos", inplace=True)
atan = unary(T.Atan, "atan", inplace=True)
arctan = alias(atan, "arctan", inplace=True)
sinh = unary(T.Sinh, "sinh", inplace=True)
cosh = unary(T.Cosh, "cosh", inplace=True)
asinh = unary(T.Asinh, "asinh", inplace=True)
arcsinh = alias(asinh, "arcsinh", inplace=True)
acosh = unary(T.Acosh, "acosh", inplace=True)
arccosh = alias(acosh, "arccosh", inplace=True)
atanh = unary(T.Atanh, "atanh", inplace=True)
arctanh = alias(atanh, "arctanh", inplace=True)
deg2rad = unary(T.Deg2Rad, "deg2rad", inplace=True)
rad2deg = unary(T.Rad2Deg, "rad2deg", inplace=True)
atan2 = binary(T.Atan2, "atan2", inplace=True)
arctan2 = alias(atan2, "arctan2", inplace=True)
hypot = binary(T.Hypot, "hypot", inplace=True)
logaddexp = binary(T.LogAddExp, "logaddexp")
isinf = unary(T.IsInf, "isinf", out=False)
isfinite = unary(T.IsFinite, "isfinite", out=False)
isposinf = unary(T.IsPosInf, "isposinf")
isneginf = unary(T.IsNegInf, "isneginf")


@op
def isreal(input: Tensor) -> Tensor:
    """True where the element has no imaginary part (everywhere for real dtypes).

    >>> import ember
    >>> ember.isreal(ember.tensor([1.0, 2.0]))
    tensor([True, True])
    """
    if input.is_complex():
        return input.imag == 0
    return Tensor._make(get_array_module(input._data).ones(input._data.shape, bool))


@op(inplace=True, out=True)
def nan_to_num(input: Tensor, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Tensor:
    """NaN, +inf and -inf replaced by ``nan``, ``posinf`` and ``neginf`` (default: the
    dtype's largest and lowest finite values).

    >>> import ember
    >>> ember.nan_to_num(ember.tensor([float("nan"), 1.0, float("-inf")]), neginf=-9.0)
    tensor([ 0.,  1., -9.])
    """
    return T.NanToNum.apply(input, nan, posinf, neginf)


__all__ += [
    "asin", "arcsin", "acos", "arccos", "atan", "arctan", "sinh", "cosh", "asinh", "arcsinh",
    "acosh", "arccosh", "atanh", "arctanh", "deg2rad", "rad2deg", "atan2", "arctan2", "hypot",
    "logaddexp", "isinf", "isfinite", "isposinf", "isneginf", "isreal", "nan_to_num",
]


# ---- sets, sampling, sorted search (ops in _ops/sets.py) ----------------------------------
unique = op(Z.unique)
unique_consecutive = op(Z.unique_consecutive)
multinomial = op(Z.multinomial, out=True)
bernoulli = op(Z.bernoulli, out=True)
searchsorted = op(Z.searchsorted, method=False, out=True)
bucketize = op(Z.bucketize, method=False, out=True)


# ---- grids, repeats, moved dimensions, differences, take (composites) ----------------------
_MESHGRID_WARNING = ("torch.meshgrid: in an upcoming release, it will be required to pass the "
                     "indexing argument.")


@op(method=False)
def meshgrid(*tensors: Tensor | Sequence[Tensor], indexing: str | None = None
             ) -> tuple[Tensor, ...]:
    """Coordinate grids of 1-D tensors: views (``expand``), "ij" (matrix) or "xy"
    (Cartesian: the first two inputs' dimensions swapped) indexing; warns when not given.

    >>> import ember
    >>> ember.meshgrid(ember.tensor([1, 2]), ember.tensor([3, 4, 5]), indexing="ij")[1]
    tensor([[3, 4, 5],
            [3, 4, 5]])
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn(_MESHGRID_WARNING, UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    if not tensors:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    for t in tensors:
        if t.dim() > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    order = list(tensors)
    if swap:
        order[0], order[1] = order[1], order[0]
    shape = [t.numel() for t in order]
    grids = []
    for i, t in enumerate(order):
        view = [1] * len(order)
        view[i] = -1
        grids.append(t.reshape(view).expand(shape))
    if swap:  # computed as "ij" on (y, x, ...): swapping the results back is "xy"
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


def _repeat_interleave_method(self: Tensor, repeats: Tensor | int, dim: int | None = None, *,
                              output_size: int | None = None) -> Tensor:
    return repeat_interleave(self, repeats, dim, output_size=output_size)


@op(method=_repeat_interleave_method)
def repeat_interleave(input: Tensor, repeats: Tensor | int | None = None,
                      dim: int | None = None, *, output_size: int | None = None) -> Tensor:
    """Each element (slice along ``dim``; flattened input when None) repeated ``repeats``
    times (an int, or one count per element). ``repeat_interleave(counts)``: indices, each
    repeated its count.

    >>> import ember
    >>> ember.repeat_interleave(ember.tensor([1, 2]), ember.tensor([2, 1]))
    tensor([1, 1, 2])
    """
    if repeats is None:  # repeat_interleave(repeats): the indices 0..n-1, repeated
        counts = _repeat_counts(input, input.numel() if input.dim() else 1, "input")
        index = np.repeat(np.arange(counts.size), counts)
        _check_output_size(output_size, index.size)
        return beside(tensor(index, dtype=input.dtype), input)
    if dim is None:
        input, dim = input.reshape(-1), 0
    dim = _wrap_dim(dim, input.dim())
    size = input.shape[dim] if input.dim() else 1
    if isinstance(repeats, Tensor):
        counts = _repeat_counts(repeats, size, "input")
    else:
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        counts = np.full(size, repeats, np.int64)
    index = np.repeat(np.arange(size), counts)
    _check_output_size(output_size, index.size)
    if input.dim() == 0:
        input = input.reshape(1)
    # (PyTorch selects by index_select for counts given as a tensor: refused for uint16/32/64)
    select = I.index_select if isinstance(repeats, Tensor) else I.index_select_any
    return select(input, dim, beside(tensor(index), input))  # host-built, moved


def _repeat_counts(repeats, size, name):
    if repeats.dim() > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    counts = to_host(repeats._data).reshape(-1).astype(np.int64)  # index arithmetic: host
    if counts.size == 1 and size != 1:
        counts = np.full(size, counts[0], np.int64)
    if counts.size != size:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.size} and {name}.size(0) = {size}")
    if np.any(counts < 0):
        raise RuntimeError("repeats can not be negative")
    return counts


def _check_output_size(output_size, total):
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")


@op
def movedim(input: Tensor, source: int | Sequence[int], destination: int | Sequence[int]
            ) -> Tensor:
    """A view with the dimensions ``source`` moved to ``destination``, the others kept in
    order.

    >>> import ember
    >>> ember.movedim(ember.zeros(2, 3, 4), 0, -1).shape
    ember.Size([3, 4, 2])
    """
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    n = input.dim()
    src = [_wrap_dim(d, n) for d in src]
    dst = [_wrap_dim(d, n) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    rest = iter([d for d in range(n) if d not in src])
    placed = dict(zip(dst, src))
    return S.permute(input, [placed[i] if i in placed else next(rest) for i in range(n)])


moveaxis = alias(movedim, "moveaxis")


@op
def diff(input: Tensor, n: int = 1, dim: int = -1, prepend: Tensor | None = None,
         append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``x[i+1] - x[i]``; bool: ``!=``),
    after ``prepend``/``append`` are joined on.

    >>> import ember
    >>> ember.diff(ember.tensor([1, 4, 9, 16]), n=2)
    tensor([2, 2])
    """
    if input.dim() == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    dim = _wrap_dim(dim, input.dim())
    parts = [t for t in (prepend, input, append) if t is not None]
    if len(parts) > 1:
        input = S.cat(parts, dim)
    for _ in range(n):
        size = input.shape[dim]
        if size == 0:
            break
        later, earlier = input.narrow(dim, 1, size - 1), input.narrow(dim, 0, size - 1)
        input = later != earlier if input.dtype is dtypes.bool_ else later - earlier
    return input


@op
@per_sample_under_vmap
def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of the flattened input at ``index`` (shaped as ``index``).

    >>> import ember
    >>> ember.take(ember.tensor([[1, 2], [3, 4]]), ember.tensor([0, 3]))
    tensor([1, 4])
    """
    if index._data.size:
        dtypes.refuse_limited_unsigned(input._data.dtype, "take_cpu")
    numel = input.numel()
    idx = index._data
    bad = (idx >= numel) | (idx < -numel)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {int(idx[bad].reshape(-1)[0])} "
                         f"on a tensor of {numel} elements.")
    return input.reshape(-1)[index]


__all__ += [
    "unique", "unique_consecutive", "multinomial", "bernoulli", "searchsorted", "bucketize",
    "meshgrid", "repeat_interleave", "movedim", "moveaxis", "diff", "take",
]


# ---- complex numbers ----------------------------------------------------------------------
@op(method=False)
@per_sample_under_vmap  # built on the parts' arrays
def complex(real: Tensor, imag: Tensor) -> Tensor:
    """The complex tensor ``real + imag * 1j`` (float32 parts: complex64; broadcast).

    >>> import ember
    >>> ember.complex(ember.tensor([1.0]), ember.tensor([2.0]))
    tensor([1.+2.j])
    """
    if not (real.is_floating_point() and imag.is_floating_point()):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype.scalar_name} and {imag.dtype.scalar_name}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype.scalar_name} but got "
                           f"scalar type {imag.dtype.scalar_name} for second argument")
    return _CX.Complex.apply(real, imag)


@op(method=False)
def polar(abs: Tensor, angle: Tensor) -> Tensor:
    """The complex tensor ``abs * (cos(angle) + sin(angle) * 1j)``.

    >>> import ember
    >>> ember.polar(ember.tensor([2.0]), ember.tensor([0.0]))
    tensor([2.+0.j])
    """
    return complex(abs * angle.cos(), abs * angle.sin())


@op(method=False)
@per_sample_under_vmap  # a view made on the array: per sample under vmap
def view_as_real(input: Tensor) -> Tensor:
    """A real view of a complex tensor: a last dimension of 2 holds (real, imaginary).

    >>> import ember
    >>> ember.view_as_real(ember.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return _CX.ViewAsReal.apply(input)


@op(method=False)
@per_sample_under_vmap  # a view made on the array: per sample under vmap
def view_as_complex(input: Tensor) -> Tensor:
    """A complex view of a real tensor whose last dimension (size 2, stride 1) holds
    (real, imaginary).

    >>> import ember
    >>> ember.view_as_complex(ember.tensor([[1.0, 2.0]]))
    tensor([1.+2.j])
    """
    d = input._data
    if input.dtype.name not in ("float32", "float64"):
        raise RuntimeError(f"view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {input.dtype.scalar_name}")
    if d.ndim == 0 or d.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if d.strides[-1] != d.itemsize:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if builtins.any(s % (2 * d.itemsize) for s in d.strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return _CX.ViewAsComplex.apply(input)


@op(method=False)  # Tensor.real and .imag are properties (_tensor_methods)
def real(input: Tensor) -> Tensor:
    """The real part: a view for complex tensors, the tensor itself for real ones."""
    return _real_part(input) if input.is_complex() else input


@per_sample_under_vmap  # a view made on the array: per sample under vmap
def _real_part(input):
    return _CX.RealPart.apply(input)


@op(method=False)
@per_sample_under_vmap  # a view made on the array: per sample under vmap
def imag(input: Tensor) -> Tensor:
    """The imaginary part of a complex tensor (a view)."""
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _CX.ImagPart.apply(input)


angle = unary(T.Angle, "angle")


@op
def conj(input: Tensor) -> Tensor:
    """The complex conjugate (real tensors: the tensor itself)."""
    return T.Conj.apply(input) if input.is_complex() else input


conj_physical = alias(conj, "conj_physical")


@op
def resolve_conj(input: Tensor) -> Tensor:
    """The tensor itself: ember's conjugates are never lazy."""
    return input


@op
def is_conj(input: Tensor) -> bool:
    """False: ember's conjugates are never lazy."""
    return False


@op(method=False)
def is_complex(input: Tensor) -> bool:
    return input.is_complex()


__all__ += ["complex", "polar", "view_as_real", "view_as_complex", "real", "imag", "angle",
            "conj", "conj_physical", "resolve_conj", "is_conj", "is_complex"]


# ---- matrix functions: ember.linalg's ops under PyTorch's top-level names ---------------------
from .. import linalg as _linalg  # noqa: E402  (the package holds their definitions)
from ..linalg import _toplevel as _LT, _norms as _LN, _matrix_functions as _LMF  # noqa: E402

det = op(_linalg.det, name="det")
inverse = op(_linalg.inv, name="inverse")
logdet = op(_LT.logdet)
slogdet = op(_LT.slogdet)
cholesky = op(_LT.cholesky)
cholesky_solve = op(_LT.cholesky_solve)
cholesky_inverse = op(_LT.cholesky_inverse)
qr = op(_LT.qr)
svd = op(_LT.svd)
pinverse = op(_LT.pinverse)
matrix_power = op(_LN.matrix_power)
cross = op(_LT.cross)
diag = op(_LT.diag)
diagonal = op(_LT.diagonal)
diag_embed = op(_LT.diag_embed)
trace = op(_LT.trace)
matrix_exp = op(_linalg.matrix_exp, name="matrix_exp")
geqrf = op(_LMF.geqrf)

__all__ += ["det", "inverse", "logdet", "slogdet", "cholesky", "cholesky_solve",
            "cholesky_inverse", "qr", "svd", "pinverse", "matrix_power", "cross", "diag",
            "diagonal", "diag_embed", "trace", "matrix_exp", "geqrf"]
