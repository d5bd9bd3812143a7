"""The public functional API (``ember.add``, ``ember.exp``, ...): one declaration per public
name (``_registry``) makes the function, the Tensor method and the in-place ``x.op_`` form.

One-op functions are generated (``unary``/``binary``); the others pick the Primitive and
parse arguments as PyTorch does. Functions defined with their ops in ``_ops/`` (shape,
indexing, linear algebra) are declared here too. ``_tensor_methods`` binds the methods.

>>> import ember
>>> ember.add(ember.ones(2), 1, alpha=2)
tensor([3., 3.])
"""
from __future__ import annotations

from ._creation import tensor, beside
from ._tensor import Tensor, Size
from ._typing import Any, Number, Sequence, dtype
from ._registry import op, alias, unary, binary
from ._ops import elementwise as E, reduction as R, shape as S, indexing as I, linalg as L
from ._ops import activation_ops as A, nn_ops as N
from .backend import dtypes, get_array_module, broadcast_shapes as _broadcast_shapes


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
@op(inplace=True)
def add(input: Tensor, other: Tensor | Number, *, alpha: Number = 1,
        out: Tensor | None = None) -> Tensor:
    return E.Add.apply(input, other, alpha) if alpha != 1 else E.Add.apply(input, other)


@op(inplace=True)
def sub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1,
        out: Tensor | None = None) -> Tensor:
    return E.Sub.apply(input, other, alpha) if alpha != 1 else E.Sub.apply(input, other)


subtract = alias(sub, "subtract", inplace=True)


@op(inplace=True)
def mul(input: Tensor | Number, other: Tensor | Number, *,
        out: Tensor | None = None) -> Tensor:
    if not isinstance(input, Tensor):
        input, other = other, input
    return E.Mul.apply(input, other)


multiply = alias(mul, "multiply", inplace=True)


@op(inplace=True)
def div(input: Tensor | Number, other: Tensor | Number, *, rounding_mode: str | None = None,
        out: Tensor | None = None) -> Tensor:
    if not isinstance(input, Tensor):
        input = _as_tensor_like(input, other)
    if rounding_mode is None:
        return E.Div.apply(input, other)
    return E.Div.apply(input, other, rounding_mode)


divide = alias(div, "divide", inplace=True)
true_divide = alias(div, "true_divide", inplace=True)


@op(inplace=True)
def floor_divide(input: Tensor, other: Tensor | Number) -> Tensor:
    return E.FloorDivide.apply(input, other)


@op(inplace=True)
def remainder(input: Tensor | Number, other: Tensor | Number) -> Tensor:
    if not isinstance(input, Tensor):
        input = _as_tensor_like(input, other)
    return E.Remainder.apply(input, other)


@op(inplace=True)
def fmod(input: Tensor, other: Tensor | Number) -> Tensor:
    return input - (input / other).trunc() * other if input.is_floating_point() else \
        E.Sub.apply(input, div(input, other, rounding_mode="trunc") * other)


@op(inplace=True)
def pow(input: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    if not isinstance(input, Tensor):
        return E.RPow.apply(exponent, input)
    return E.Pow.apply(input, exponent)


neg = unary(E.Neg, "neg", inplace=True)
negative = alias(neg, "negative")
abs = unary(E.Abs, "abs", inplace=True)
absolute = alias(abs, "absolute")
sign = unary(E.Sign, "sign", inplace=True)
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
relu = unary(A.Relu, "relu", inplace=True)
erf = unary(E.Erf, "erf", inplace=True)
floor = unary(E.Floor, "floor", inplace=True)
ceil = unary(E.Ceil, "ceil", inplace=True)
trunc = unary(E.Trunc, "trunc", inplace=True)
isnan = unary(E.IsNan, "isnan")


@op(inplace=True)
def square(input: Tensor) -> Tensor:
    return E.Mul.apply(input, input)


@op(inplace=True)
def round(input: Tensor, *, decimals: int = 0) -> Tensor:
    return E.Round.apply(input, decimals) if decimals else E.Round.apply(input)


@op(inplace=True)
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


@op(inplace=True)
def clamp_min(input: Tensor, min: Tensor | Number) -> Tensor:
    return clamp(input, min=min)


@op(inplace=True)
def clamp_max(input: Tensor, max: Tensor | Number) -> Tensor:
    return clamp(input, max=max)


@op
def maximum(input: Tensor, other: Tensor) -> Tensor:
    return E.Maximum.apply(input, _tensor_arg(other, "maximum"))


@op
def minimum(input: Tensor, other: Tensor) -> Tensor:
    return E.Minimum.apply(input, _tensor_arg(other, "minimum"))


@op(inplace=True)
def lerp(input: Tensor, end: Tensor, weight: Tensor | Number) -> Tensor:
    return E.Lerp.apply(input, end, weight)


@op(inplace=True)
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    return E.Addcmul.apply(input, tensor1, tensor2, value)


@op(inplace=True)
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    return E.Addcdiv.apply(input, tensor1, tensor2, value)


# ---- comparisons and logic ----------------------------------------------------------------
eq = binary(E.Eq, "eq", inplace=True)
ne = binary(E.Ne, "ne", inplace=True)
lt = binary(E.Lt, "lt", inplace=True)
le = binary(E.Le, "le", inplace=True)
gt = binary(E.Gt, "gt", inplace=True)
ge = binary(E.Ge, "ge", inplace=True)
greater = alias(gt, "greater")
greater_equal = alias(ge, "greater_equal", method=False)
less = alias(lt, "less")
less_equal = alias(le, "less_equal", method=False)
not_equal = alias(ne, "not_equal", method=False)
logical_and = binary(E.LogicalAnd, "logical_and", inplace=True)
logical_or = binary(E.LogicalOr, "logical_or", inplace=True)
logical_xor = binary(E.LogicalXor, "logical_xor")
logical_not = unary(E.LogicalNot, "logical_not", inplace=True)
bitwise_and = binary(E.BitwiseAnd, "bitwise_and", method=False)
bitwise_or = binary(E.BitwiseOr, "bitwise_or", method=False)
bitwise_xor = binary(E.BitwiseXor, "bitwise_xor", method=False)
bitwise_not = unary(E.BitwiseNot, "bitwise_not")


@op
def equal(input: Tensor, other: Tensor) -> bool:
    a, b = input._data, other._data
    return input.shape == other.shape and bool(get_array_module(a, b).array_equal(a, b))


@op
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    a, b = input._data, other._data
    return bool(get_array_module(a, b).allclose(a, b, rtol, atol, equal_nan))


@op
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    a, b = input._data, other._data
    return Tensor._make(get_array_module(a, b).isclose(a, b, rtol, atol, equal_nan))


def _where_method(self: Tensor, condition: Tensor, other: Tensor | Number) -> Tensor:
    return where(condition, self, other)


@op(method=_where_method)  # x.where(condition, other): x is the input, not the condition
def where(condition: Tensor, input: Tensor | Number | None = None,
          other: Tensor | Number | None = None) -> Tensor | tuple[Tensor, ...]:
    if input is None and other is None:
        return I.nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = beside(tensor(input), condition)  # in the condition's array module
    return E.Where.apply(condition, input, other)


@op(inplace=True)
def masked_fill(input: Tensor, mask: Tensor, value: Tensor | Number) -> Tensor:
    return E.MaskedFill.apply(input, mask, value)


# ---- reductions ---------------------------------------------------------------------------
@op
def sum(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
        dtype: dtype | None = None) -> Tensor:
    return (R.SumAll if dim is None else R.Sum).apply(input, dim, keepdim, dtype)


@op
def mean(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    return (R.MeanAll if dim is None else R.Mean).apply(input, dim, keepdim, dtype)


@op
def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *,
         dtype: dtype | None = None) -> Tensor:
    return R.Prod.apply(input, dim, keepdim, dtype)


@op
def max(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    return R.max_min(input, dim, keepdim, largest=True)


@op
def min(input: Tensor, dim: int | Tensor | None = None, keepdim: bool = False, *,
        out: Tensor | None = None) -> Tensor | tuple[Tensor, Tensor]:
    return R.max_min(input, dim, keepdim, largest=False)


@op
def amax(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return R.Amax.apply(input, dim, keepdim, True)


@op
def amin(input: Tensor, dim: int | Sequence[int] = (), keepdim: bool = False) -> Tensor:
    return R.Amax.apply(input, dim, keepdim, False)


@op
def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return R.ArgExtreme.apply(input, dim, keepdim, True)


@op
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return R.ArgExtreme.apply(input, dim, keepdim, False)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


@op
def var(input: Tensor, dim: int | Sequence[int] | bool | None = None,
        unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Number | None = None) -> Tensor:
    if isinstance(dim, bool):  # var(x, False): the old positional 'unbiased'
        dim, unbiased = None, dim
    return R.Var.apply(input, dim, _correction(unbiased, correction), keepdim, False)


@op
def std(input: Tensor, dim: int | Sequence[int] | bool | None = None,
        unbiased: bool | None = None, keepdim: bool = False, *,
        correction: Number | None = None) -> Tensor:
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return R.Var.apply(input, dim, _correction(unbiased, correction), keepdim, True)


@op
def logsumexp(input: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    return R.LogSumExp.apply(input, dim, keepdim)


@op
def norm(input: Tensor, p: float | str | None = "fro", dim: int | Sequence[int] | None = None,
         keepdim: bool = False, dtype: dtype | None = None) -> Tensor:
    if p in ("fro", None):
        p = 2
    if p == "nuc":
        raise NotImplementedError("nuclear norm is not supported yet")
    return R.Norm.apply(input, float(p), dim, keepdim)


@op
def all(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return R.AllAny.apply(input, dim, keepdim, True)


@op
def any(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return R.AllAny.apply(input, dim, keepdim, False)


@op
def cumsum(input: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    return R.Cumsum.apply(input, dim, dtype)


@op
def cumprod(input: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
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
alias(transpose, "swapaxes", function=False)
t = op(S.t)
expand = op(S.expand)
sum_to_size = op(S.sum_to_size)
contiguous = op(S.contiguous)
cat = op(S.cat, method=False)
stack = op(S.stack, method=False)
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
    return S.Tri.apply(input, diagonal, True)


@op(inplace=True)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    return S.Tri.apply(input, diagonal, False)


@op
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    return S.Clone.apply(input)


# ---- indexing -----------------------------------------------------------------------------
gather = op(I.gather)
scatter = op(I.scatter, inplace=True)
scatter_add = op(I.scatter_add, inplace=True)
index_select = op(I.index_select)
index_add = op(I.index_add, inplace=True)
masked_select = op(I.masked_select)
take_along_dim = op(I.take_along_dim)
nonzero = op(I.nonzero)
sort = op(I.sort)
argsort = op(I.argsort)
topk = op(I.topk)

# ---- linear algebra -----------------------------------------------------------------------
mm = op(L.mm)
bmm = op(L.bmm)
matmul = op(L.matmul)
dot = op(L.dot)
mv = op(L.mv)
outer = op(L.outer)
addmm = op(L.addmm)
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
    try:
        return Size(_broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError("shape mismatch: objects cannot be broadcast to a single shape") \
            from None


@op(method=False)
def broadcast_tensors(*tensors: Tensor) -> tuple[Tensor, ...]:
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


__all__ = [
    # arithmetic and math
    "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
    "floor_divide", "remainder", "fmod", "pow", "neg", "negative", "abs", "absolute", "sign",
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
    "logsumexp", "norm", "all", "any", "cumsum", "cumprod", "softmax", "log_softmax",
    # shape
    "view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "permute", "transpose",
    "t", "expand", "sum_to_size", "contiguous", "cat", "stack", "flip", "roll", "repeat",
    "tile", "narrow", "select", "unbind", "split", "chunk", "tril", "triu", "clone",
    # indexing
    "gather", "scatter", "scatter_add", "index_select", "index_add", "masked_select",
    "take_along_dim", "nonzero", "sort", "argsort", "topk",
    # linear algebra
    "mm", "bmm", "matmul", "dot", "mv", "outer", "addmm", "einsum",
    # tensors and dtypes
    "numel", "is_tensor", "is_floating_point", "promote_types", "result_type", "can_cast",
    "detach", "broadcast_shapes", "broadcast_tensors",
]
