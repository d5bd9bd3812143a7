"""The public functional API (``ember.add``, ``ember.exp``, ...): thin wrappers
that pick the Primitive and check arguments. ``_tensor_methods`` binds the
same functions as Tensor methods.

>>> import ember
>>> ember.add(ember.ones(2), 1, alpha=2)
tensor([3., 3.])
"""
from .backend import get_array_module, broadcast_shapes as _broadcast_shapes

from ._tensor import Tensor
from ._ops import elementwise as E, reduction as R, shape as S
from ._ops.nn_ops import softmax, log_softmax  # noqa: F401
from ._ops.shape import (view, reshape, flatten, unflatten, squeeze, unsqueeze, permute,  # noqa
                         transpose, t, expand, sum_to_size, contiguous, cat, stack, flip, roll,
                         repeat, tile, narrow, select, unbind, split, chunk)
from ._ops.indexing import (gather, scatter, scatter_add, index_select, index_add,  # noqa: F401
                            masked_select, take_along_dim, nonzero, sort, argsort, topk)
from ._ops.linalg import mm, bmm, matmul, dot, mv, outer, addmm, einsum  # noqa: F401
from .backend import dtypes


def _tensor_arg(x, name="other"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


# ---- arithmetic ---------------------------------------------------------------------------
def add(input, other, *, alpha=1, out=None):
    return E.Add.apply(input, other, alpha) if alpha != 1 else E.Add.apply(input, other)


def sub(input, other, *, alpha=1, out=None):
    return E.Sub.apply(input, other, alpha) if alpha != 1 else E.Sub.apply(input, other)


subtract = sub


def mul(input, other, *, out=None):
    if not isinstance(input, Tensor):
        input, other = other, input
    return E.Mul.apply(input, other)


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    if not isinstance(input, Tensor):
        if rounding_mode is None:
            return E.RDiv.apply(other, input)
        input = _as_tensor_like(input, other)
    if rounding_mode is None:
        return E.Div.apply(input, other)
    return E.Div.apply(input, other, rounding_mode)


divide = true_divide = div


def floor_divide(input, other):
    return E.FloorDivide.apply(input, other)


def remainder(input, other):
    if not isinstance(input, Tensor):
        input = _as_tensor_like(input, other)
    return E.Remainder.apply(input, other)


def fmod(input, other):
    return input - (input / other).trunc() * other if input.is_floating_point() else \
        E.Sub.apply(input, div(input, other, rounding_mode="trunc") * other)


def pow(input, exponent):
    if not isinstance(input, Tensor):
        return E.RPow.apply(exponent, input)
    return E.Pow.apply(input, exponent)


def _as_tensor_like(scalar, like):
    """``scalar`` as a tensor of its own dtype, in the array module of ``like`` (a tensor)."""
    from ._creation import tensor, beside
    t = tensor(scalar)
    return beside(t, like) if isinstance(like, Tensor) else t


def neg(input):
    return E.Neg.apply(input)


negative = neg


def _unary(cls):
    def fn(input):
        return cls.apply(input)
    fn.__name__ = cls.__name__.lower()
    fn._op_apply = cls.apply  # what the Tensor method binds (see _tensor_methods._bind)
    return fn


abs = _unary(E.Abs)
absolute = abs
sign = _unary(E.Sign)
exp = _unary(E.Exp)
exp2 = _unary(E.Exp2)
log = _unary(E.Log)
log2 = _unary(E.Log2)
log1p = _unary(E.Log1p)
expm1 = _unary(E.Expm1)
sqrt = _unary(E.Sqrt)
rsqrt = _unary(E.Rsqrt)
reciprocal = _unary(E.Reciprocal)
sin = _unary(E.Sin)
cos = _unary(E.Cos)
tan = _unary(E.Tan)
tanh = _unary(E.Tanh)
sigmoid = _unary(E.Sigmoid)
relu = _unary(E.Relu)
erf = _unary(E.Erf)
floor = _unary(E.Floor)
ceil = _unary(E.Ceil)
trunc = _unary(E.Trunc)
isnan = _unary(E.IsNan)


def square(input):
    return E.Mul.apply(input, input)


def round(input, *, decimals=0):
    return E.Round.apply(input, decimals) if decimals else E.Round.apply(input)


def clamp(input, min=None, max=None):
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        if min is not None and not isinstance(min, Tensor):
            min = input.new_tensor(min)
        if max is not None and not isinstance(max, Tensor):
            max = input.new_tensor(max)
        return E.ClampTensor.apply(input, min, max)
    return E.Clamp.apply(input, min, max)


clip = clamp


def clamp_min(input, min):
    return clamp(input, min=min)


def clamp_max(input, max):
    return clamp(input, max=max)


def maximum(input, other):
    return E.Maximum.apply(input, _tensor_arg(other, "maximum"))


def minimum(input, other):
    return E.Minimum.apply(input, _tensor_arg(other, "minimum"))


def lerp(input, end, weight):
    return E.Lerp.apply(input, end, weight)


def addcmul(input, tensor1, tensor2, *, value=1):
    return E.Addcmul.apply(input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    return E.Addcdiv.apply(input, tensor1, tensor2, value)


# ---- comparisons and logic ----------------------------------------------------------------
def _binary(cls, name):
    def fn(input, other):
        return cls.apply(input, other)
    fn.__name__ = name
    return fn


eq = _binary(E.Eq, "eq")
ne = _binary(E.Ne, "ne")
lt = _binary(E.Lt, "lt")
le = _binary(E.Le, "le")
gt = _binary(E.Gt, "gt")
ge = _binary(E.Ge, "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
logical_and = _binary(E.LogicalAnd, "logical_and")
logical_or = _binary(E.LogicalOr, "logical_or")
logical_xor = _binary(E.LogicalXor, "logical_xor")
logical_not = _unary(E.LogicalNot)
bitwise_and = _binary(E.BitwiseAnd, "bitwise_and")
bitwise_or = _binary(E.BitwiseOr, "bitwise_or")
bitwise_xor = _binary(E.BitwiseXor, "bitwise_xor")
bitwise_not = _unary(E.BitwiseNot)


def equal(input, other):
    a, b = input._data, other._data
    return input.shape == other.shape and bool(get_array_module(a, b).array_equal(a, b))


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = input._data, other._data
    return bool(get_array_module(a, b).allclose(a, b, rtol, atol, equal_nan))


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = input._data, other._data
    return Tensor._make(get_array_module(a, b).isclose(a, b, rtol, atol, equal_nan))


def where(condition, input=None, other=None):
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        input = _as_tensor_like(input, condition)
    return E.Where.apply(condition, input, other)


def masked_fill(input, mask, value):
    return E.MaskedFill.apply(input, mask, value)


# ---- reductions ---------------------------------------------------------------------------
def sum(input, dim=None, keepdim=False, *, dtype=None):
    return (R.SumAll if dim is None else R.Sum).apply(input, dim, keepdim, dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return (R.MeanAll if dim is None else R.Mean).apply(input, dim, keepdim, dtype)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    return R.Prod.apply(input, dim, keepdim, dtype)


def max(input, dim=None, keepdim=False, *, out=None):
    return R.max_min(input, dim, keepdim, largest=True)


def min(input, dim=None, keepdim=False, *, out=None):
    return R.max_min(input, dim, keepdim, largest=False)


def amax(input, dim=(), keepdim=False):
    return R.Amax.apply(input, dim, keepdim, True)


def amin(input, dim=(), keepdim=False):
    return R.Amax.apply(input, dim, keepdim, False)


def argmax(input, dim=None, keepdim=False):
    return R.ArgExtreme.apply(input, dim, keepdim, True)


def argmin(input, dim=None, keepdim=False):
    return R.ArgExtreme.apply(input, dim, keepdim, False)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased in (None, True) else 0


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var(x, False): the old positional 'unbiased'
        dim, unbiased = None, dim
    return R.Var.apply(input, dim, _correction(unbiased, correction), keepdim, False)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    return R.Var.apply(input, dim, _correction(unbiased, correction), keepdim, True)


def logsumexp(input, dim, keepdim=False):
    return R.LogSumExp.apply(input, dim, keepdim)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    if p in ("fro", None):
        p = 2
    if p == "nuc":
        raise NotImplementedError("nuclear norm is not supported yet")
    return R.Norm.apply(input, float(p), dim, keepdim)


def all(input, dim=None, keepdim=False):
    return R.AllAny.apply(input, dim, keepdim, True)


def any(input, dim=None, keepdim=False):
    return R.AllAny.apply(input, dim, keepdim, False)


def cumsum(input, dim, *, dtype=None):
    return R.Cumsum.apply(input, dim, dtype)


def cumprod(input, dim, *, dtype=None):
    return R.Cumprod.apply(input, dim, dtype)


def tril(input, diagonal=0):
    return S.Tri.apply(input, diagonal, True)


def triu(input, diagonal=0):
    return S.Tri.apply(input, diagonal, False)


def clone(input, *, memory_format=None):
    return S.Clone.apply(input)


def numel(input):
    return input.numel()


def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_floating_point(input):
    return input.is_floating_point()


def promote_types(type1, type2):
    return dtypes.promote_types(type1, type2)


def result_type(tensor1, tensor2):
    return dtypes.result_type(tensor1, tensor2)


def can_cast(from_, to):
    return from_.category <= to.category


def detach(input):
    return input.detach()


def broadcast_shapes(*shapes):
    from ._tensor import Size
    try:
        return Size(_broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"shape mismatch: objects cannot be broadcast to a single shape") \
            from None


def broadcast_tensors(*tensors):
    shape = broadcast_shapes(*[t.shape for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


__all__ = [n for n in dir() if not n.startswith("_") and len(n) > 1 and
           n not in ("np", "Tensor", "dtypes")] + ["t"]
