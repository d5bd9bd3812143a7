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

import builtins
import collections.abc as _abc
import inspect as _inspect
import math
import warnings

import numpy as np

from ._creation import tensor, beside
from ._tensor import Tensor, Size, _wrap_dim
from ._typing import Any, Number, Sequence, dtype
from ._registry import op, alias, unary, binary, method as _method
from .autograd.batching import per_sample_under_vmap
from ._ops import elementwise as E, reduction as R, shape as S, indexing as I, linalg as L
from ._ops import activation_ops as A, nn_ops as N, special as SP
from ._ops import trig as T, sets as Z, matmul_family as MF, complex_ops as _CX
from ._ops import jvp_rules  # noqa: F401  (installs the hand-written forward-mode rules)
from ._ops import arrangement as _AR, scatter_family as _SF, basics as _BA
from ._ops import statistics as _ST, statistics_counts as _SC, statistics_moments as _SM
from ._ops import elementwise_extra as _EX, special_functions as _SPF, sampling as _SMP
from . import return_types as _RT
from ._registry import (DECLARED as _DECLARED, write_out as _write_out,
                        factory_with_out as _factory_with_out, _declare as _declare_entry)
from ._torch_function import dispatching as _dispatching
from .backend import dtypes, get_array_module, to_host


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
    return E.Lerp.apply(input, end, weight)


@op(inplace=True, out=True)
def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
    return E.Addcmul.apply(input, tensor1, tensor2, _number_arg(value, "addcmul", "value"))


@op(inplace=True, out=True)
def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Number = 1) -> Tensor:
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
    return input.shape == other.shape and bool(get_array_module(a, b).array_equal(a, b))


@op
@per_sample_under_vmap
def allclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
             equal_nan: bool = False) -> bool:
    a, b = input._data, other._data
    return bool(get_array_module(a, b).allclose(a, b, rtol, atol, equal_nan))


@op
@per_sample_under_vmap
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08,
            equal_nan: bool = False) -> Tensor:
    a, b = input._data, other._data
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
    return E.MaskedFill.apply(input, mask, value)


# ---- reductions ---------------------------------------------------------------------------
@op(out=True)
def sum(input: Tensor, dim: int | Sequence[int] | None = None, keepdim: bool = False, *,
        dtype: dtype | None = None) -> Tensor:
    if dim is None and not keepdim and dtype is None:
        return R.SumAll.apply(input)  # the plain loss.sum(): no scalar arguments to drop
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
    return R.ArgExtreme.apply(input, dim, keepdim, True)


@op(out=True)
def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
    return R.ArgExtreme.apply(input, dim, keepdim, False)


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
    return R.Cumsum.apply(input, dim, dtype)


@op(out=True)
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
t = op(S.t)
expand = op(S.expand)
sum_to_size = op(S.sum_to_size)


@op
def contiguous(input: Tensor, memory_format: Any = None) -> Tensor:
    dtypes.check_memory_format(memory_format, "contiguous")
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
    return S.Tri.apply(input, diagonal, True)


@op(inplace=True)
def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    return S.Tri.apply(input, diagonal, False)


@op
def clone(input: Tensor, *, memory_format: Any = None) -> Tensor:
    dtypes.check_memory_format(memory_format, "clone")
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
    return I.index_select(input, dim, beside(tensor(index), input))  # host-built, moved


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
from . import linalg as _linalg  # noqa: E402  (the package holds their definitions)
from .linalg import _toplevel as _LT, _norms as _LN, _matrix_functions as _LMF  # noqa: E402

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


# ---- arrangement and scatter family (ops in _ops/arrangement.py, _ops/scatter_family.py) -------

tensor_split = op(_AR.tensor_split)
hsplit = op(_AR.hsplit)
vsplit = op(_AR.vsplit)
dsplit = op(_AR.dsplit)
atleast_1d = op(_AR.atleast_1d, method=False)
atleast_2d = op(_AR.atleast_2d, method=False)
atleast_3d = op(_AR.atleast_3d, method=False)
hstack = op(_AR.hstack, method=False, out=True)
vstack = op(_AR.vstack, method=False, out=True)
row_stack = op(_AR.row_stack, method=False, out=True)
dstack = op(_AR.dstack, method=False, out=True)
column_stack = op(_AR.column_stack, method=False, out=True)
block_diag = op(_AR.block_diag, method=False)
cartesian_prod = op(_AR.cartesian_prod, method=False)
combinations = op(_AR.combinations, method=False)
rot90 = op(_AR.rot90)
flipud = op(_AR.flipud)
fliplr = op(_AR.fliplr)
diagflat = op(_AR.diagflat)
argwhere = op(_AR.argwhere)
vander = op(_AR.vander, method=False)
tril_indices = op(_AR.tril_indices, method=False)
triu_indices = op(_AR.triu_indices, method=False)

select_scatter = op(_SF.select_scatter)
slice_scatter = op(_SF.slice_scatter, out=True)
diagonal_scatter = op(_SF.diagonal_scatter)
index_put = op(_SF.index_put, inplace=True)
put = op(_SF.put, inplace=True)
masked_scatter = op(_SF.masked_scatter)
_method(_SF.masked_scatter_)
index_fill = op(_SF.index_fill, inplace=True)
_method(_SF.fill_diagonal_)
scatter_reduce = op(_SF.scatter_reduce, inplace=True, out=True)
index_reduce = op(_SF.index_reduce, inplace=True, out=True)

__all__ += ["tensor_split", "hsplit", "vsplit", "dsplit", "atleast_1d", "atleast_2d",
            "atleast_3d", "hstack", "vstack", "row_stack", "dstack", "column_stack",
            "block_diag", "cartesian_prod", "combinations", "rot90", "flipud", "fliplr",
            "diagflat", "argwhere", "vander", "tril_indices", "triu_indices", "select_scatter",
            "slice_scatter", "diagonal_scatter", "index_put", "put", "masked_scatter",
            "index_fill", "scatter_reduce", "index_reduce"]


# ---- statistics, counting, histograms (ops in _ops/statistics*.py) --------------------------

bincount = op(_SC.bincount)
histc = op(_SC.histc, out=True)
histogram = op(_SC.histogram, out=True)
cummax = op(_ST.cummax, out=True)
cummin = op(_ST.cummin, out=True)
logcumsumexp = op(_ST.logcumsumexp, out=True)
nansum = op(_ST.nansum, out=True)
nanmean = op(_ST.nanmean, out=True)
median = op(_ST.median, out=True)
nanmedian = op(_ST.nanmedian, out=True)
quantile = op(_ST.quantile, out=True)
nanquantile = op(_ST.nanquantile, out=True)
aminmax = op(_ST.aminmax, out=True)
count_nonzero = op(_SC.count_nonzero)
kthvalue = op(_ST.kthvalue, out=True)
mode = op(_ST.mode, out=True)
msort = op(_ST.msort, out=True)
isin = op(_SC.isin, method=False, out=True)
cov = op(_SM.cov)
corrcoef = op(_SM.corrcoef)
trapezoid = op(_SM.trapezoid, method=False)
trapz = op(_SM.trapz, method=False)
cumulative_trapezoid = op(_SM.cumulative_trapezoid, method=False)
renorm = op(_SM.renorm, out=True, inplace=True)

__all__ += ["bincount", "histc", "histogram", "cummax", "cummin", "logcumsumexp", "nansum",
            "nanmean", "median", "nanmedian", "quantile", "nanquantile", "aminmax",
            "count_nonzero", "kthvalue", "mode", "msort", "isin", "cov", "corrcoef",
            "trapezoid", "trapz", "cumulative_trapezoid", "renorm"]


# ---- basics: log10, fmax/fmin, var_mean, strided views, index_copy, ... (_ops/basics.py) ----

log10 = unary(_BA.Log10, "log10", inplace=True)
fix = alias(trunc, "fix", inplace=True)
var_mean = op(_BA.var_mean, method=False)
std_mean = op(_BA.std_mean, method=False)
fmax = op(_BA.fmax, out=True)
fmin = op(_BA.fmin, out=True)
unravel_index = op(_BA.unravel_index, method=False)
index_copy = op(_BA.index_copy, inplace=True, out=True)
as_strided = op(_BA.as_strided)
_method(_BA.unfold)
scalar_tensor = op(_BA.scalar_tensor, method=False)
empty_strided = op(_BA.empty_strided, method=False)
asarray = op(_BA.asarray, method=False)


@op
def broadcast_to(input: Tensor, size: Sequence[int]) -> Tensor:
    """``input`` expanded to ``size`` (a view; -1 keeps a dimension's size).

    >>> import ember
    >>> ember.broadcast_to(ember.tensor([1, 2]), (2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return S.expand(input, size)


@op
def ravel(input: Tensor) -> Tensor:
    """``input`` flattened to 1-D (a view when the layout allows).

    >>> import ember
    >>> ember.ravel(ember.tensor([[1, 2], [3, 4]]).t())
    tensor([1, 3, 2, 4])
    """
    return S.reshape(input, -1)


@op
def positive(input: Tensor) -> Tensor:
    """``input`` itself (``+input``); refused for bool tensors, as in PyTorch.

    >>> import ember
    >>> ember.positive(ember.tensor([-1, 2]))
    tensor([-1,  2])
    """
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


@op(method=False)
def rsub(input: Tensor, other: Tensor | Number, *, alpha: Number = 1) -> Tensor:
    """``other - alpha * input`` (``sub`` with the operands swapped).

    >>> import ember
    >>> ember.rsub(ember.tensor([1, 2]), 3, alpha=2)
    tensor([ 1, -1])
    """
    if not isinstance(other, Tensor):
        other = _as_tensor_like(other, input)
    return sub(other, input, alpha=alpha)


def _cumulative_(name, fn):
    """``x.cumsum_(dim)``: PyTorch refuses a ``dtype`` other than x's before running."""
    def inplace(self: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
        if dtype is not None and dtype is not self.dtype:
            raise RuntimeError(f"Bad in-place call: input tensor dtype {self.dtype.cpp_name} and "
                               f"output tensor dtype {dtype.cpp_name} should match")
        return self._inplace(lambda x: fn(x, dim))
    inplace.__name__ = inplace.__qualname__ = name
    return _method(inplace)


_cumulative_("cumsum_", cumsum)
_cumulative_("cumprod_", cumprod)


@_method
def conj_physical_(self: Tensor) -> Tensor:
    """The complex conjugate written into self (a real tensor is left as it is).

    >>> import ember
    >>> ember.tensor([1 + 2j]).conj_physical_()
    tensor([1.-2.j])
    """
    return self._inplace(conj) if self.is_complex() else self


@op
def swapaxes(input: Tensor, axis0: int, axis1: int) -> Tensor:
    """``transpose`` under NumPy's name.

    >>> import ember
    >>> ember.swapaxes(ember.zeros(2, 3), 0, 1).shape
    ember.Size([3, 2])
    """
    return S.transpose(input, axis0, axis1)


@op
def swapdims(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``transpose`` under another name.

    >>> import ember
    >>> ember.swapdims(ember.zeros(2, 3), 0, 1).shape
    ember.Size([3, 2])
    """
    return S.transpose(input, dim0, dim1)


__all__ += ["log10", "fix", "var_mean", "std_mean", "fmax", "fmin", "unravel_index",
            "index_copy", "as_strided", "scalar_tensor", "empty_strided", "asarray",
            "broadcast_to", "ravel", "positive", "rsub", "swapaxes", "swapdims"]


# ---- top-level in-place forms: ember.abs_(x) is x.abs_() (PyTorch's torch.abs_ & co.) ------


#: PyTorch's torch.<op>_ functions whose Tensor.<op>_ ember has (torch.addmv_ and
#: torch.as_strided_ are left out: their out-of-place ops declare no in-place form)
_INPLACE_FUNCTIONS = (
    "abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_",
    "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_",
    "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "erf_", "exp2_", "exp_", "expm1_",
    "fix_", "floor_", "log10_", "log1p_", "log2_", "log_", "nan_to_num_", "neg_", "negative_",
    "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinh_",
    "sqrt_", "square_", "tan_", "tanh_", "trunc_", "detach_")
_INPLACE_EXAMPLE_ARGS = {"clamp_": ", 0, 1", "clip_": ", 0, 1", "clamp_max_": ", 1",
                         "clamp_min_": ", 0"}


def _inplace_function(name, signature):
    """``ember.<name>(input, ...)``: ``input.<name>(...)``, with the method's signature
    (``input`` first, no ``out=``)."""
    def function(input, *args, **kwargs):
        method = getattr(Tensor, name)
        return getattr(method, "__ember_impl__", method)(input, *args, **kwargs)
    params = [p for p in signature.parameters.values() if p.name != "out"]
    params[0] = params[0].replace(name="input")
    function.__signature__ = signature.replace(parameters=params)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``input.{name}(...)``: the in-place form as a function (input "
                        f"changed and returned).\n\n    >>> import ember\n    >>> x = "
                        f"ember.tensor([0.5])\n    >>> ember.{name}(x"
                        f"{_INPLACE_EXAMPLE_ARGS.get(name, '')}) is x\n    True\n    ")
    return function


for _name in _INPLACE_FUNCTIONS:
    _base = _DECLARED[_name[:-1]]
    globals()[_name] = op(_inplace_function(_name, _inspect.signature(
        _base.signature or _base.function)), name=_name, method=False)
del _name, _base

__all__ += list(_INPLACE_FUNCTIONS)


# Tensor-only in-place methods (declared with ``method`` in _tensor_methods, which runs
# after this module) that PyTorch also has as functions: plain entry points, imported by
# ember/__init__ by name (a declaration cannot hold them: the method's name is taken).
def fill_(input: Tensor, value: Tensor | Number) -> Tensor:
    """``input.fill_(value)`` as a function.

    >>> import ember
    >>> ember.fill_(ember.zeros(2), 3)
    tensor([3., 3.])
    """
    return input.fill_(value)


def zero_(input: Tensor) -> Tensor:
    """``input.zero_()`` as a function.

    >>> import ember
    >>> ember.zero_(ember.ones(2))
    tensor([0., 0.])
    """
    return input.zero_()


def resize_as_(input: Tensor, the_template: Tensor, *, memory_format: Any = None) -> Tensor:
    """``input.resize_as_(the_template)`` as a function.

    >>> import ember
    >>> ember.resize_as_(ember.zeros(2), ember.zeros(3)).shape
    ember.Size([3])
    """
    return input.resize_as_(the_template, memory_format=memory_format)


fill_, zero_, resize_as_ = (_dispatching(_fn, name=_fn.__name__, module="ember")
                            for _fn in (fill_, zero_, resize_as_))
for _fn in (fill_, zero_, resize_as_):
    _fn._public_module = "ember"
del _fn


# ---- elementwise extras, samplers, logspace and windows (_ops/elementwise_extra.py, ---------
# special_functions.py, sampling.py)

copysign = binary(_EX.Copysign, "copysign", inplace=True)
frac = unary(_EX.Frac, "frac", inplace=True)
sinc = unary(_EX.Sinc, "sinc", inplace=True)
i0 = unary(_SPF.I0, "i0", inplace=True)
signbit = unary(_EX.Signbit, "signbit")
gcd = binary(_EX.Gcd, "gcd", inplace=True)
lcm = binary(_EX.Lcm, "lcm", inplace=True)
logaddexp2 = binary(_EX.LogAddExp2, "logaddexp2")
nextafter = binary(_EX.Nextafter, "nextafter", inplace=True)
xlogy = binary(_EX.Xlogy, "xlogy", inplace=True)
bitwise_left_shift = binary(_EX.LeftShift, "bitwise_left_shift", inplace=True)
bitwise_right_shift = binary(_EX.RightShift, "bitwise_right_shift", inplace=True)

_EXTRA_DOCS = {  # (what it computes, an example call, what the example prints)
    "copysign": ("|input| with the sign of other (integers give the default float dtype)",
                 "ember.copysign(ember.tensor([1.5, -2.0]), -1.0)", "tensor([-1.5000, -2.0000])"),
    "frac": ("The fractional part, ``input - trunc(input)`` (float dtypes only)",
             "ember.frac(ember.tensor([1.5, -2.25]))", "tensor([ 0.5000, -0.2500])"),
    "sinc": ("The normalized sinc, ``sin(pi x) / (pi x)`` (1 at 0)",
             "ember.sinc(ember.tensor([0.0, 0.5]))", "tensor([1.0000, 0.6366])"),
    "i0": ("The modified Bessel function of the first kind of order 0",
           "ember.i0(ember.tensor([0.0, 1.0]))", "tensor([1.0000, 1.2661])"),
    "signbit": ("True where the sign bit is set (-0.0 included)",
                "ember.signbit(ember.tensor([-0.0, 1.0]))", "tensor([ True, False])"),
    "gcd": ("The greatest common divisor of integer tensors",
            "ember.gcd(ember.tensor([12, 18]), ember.tensor([8, 4]))", "tensor([4, 2])"),
    "lcm": ("The least common multiple of integer tensors",
            "ember.lcm(ember.tensor([4, 6]), ember.tensor([6, 4]))", "tensor([12, 12])"),
    "logaddexp2": ("``log2(2 ** input + 2 ** other)`` without overflow",
                   "ember.logaddexp2(ember.tensor([1.0]), ember.tensor([1.0]))",
                   "tensor([2.])"),
    "nextafter": ("The next float after input towards other",
                  "ember.nextafter(ember.tensor([1.0]), ember.tensor([2.0])) - 1",
                  "tensor([1.1921e-07])"),
    "xlogy": ("``input * log(other)``, 0 where input is 0 (unless other is NaN)",
              "ember.xlogy(ember.tensor([0.0, 2.0]), ember.tensor([0.0, 4.0]))",
              "tensor([0.0000, 2.7726])"),
    "bitwise_left_shift": ("Integers shifted left by other bits (0 past the width)",
                           "ember.bitwise_left_shift(ember.tensor([1, 3]), 2)",
                           "tensor([ 4, 12])"),
    "bitwise_right_shift": ("Integers shifted right by other bits, sign-filled",
                            "ember.bitwise_right_shift(ember.tensor([-8, 8]), 2)",
                            "tensor([-2,  2])"),
}
for _name, (_what, _call, _shown) in _EXTRA_DOCS.items():
    globals()[_name].__doc__ = f"{_what}.\n\n>>> import ember\n>>> {_call}\n{_shown}\n"
del _name, _what, _call, _shown


@op(inplace=True, out=True)
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where input < 0, 1 where input > 0 and ``values`` where input is 0.

    >>> import ember
    >>> ember.heaviside(ember.tensor([-1.0, 0.0, 2.0]), ember.tensor(0.5))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _EX.Heaviside.apply(input, values)


@op(inplace=True, out=True)
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other`` (integer inputs give the default float dtype).

    >>> import ember
    >>> ember.ldexp(ember.tensor([1.0, 3.0]), ember.tensor([2, -1]))
    tensor([4.0000, 1.5000])
    """
    return _EX.Ldexp.apply(input, other)


def _float_power_dtype(*operands):
    complex_ = builtins.any(x.is_complex() if isinstance(x, Tensor)
                            else isinstance(x, builtins.complex) for x in operands)
    return dtypes.complex128 if complex_ else dtypes.float64


@op(out=True)
def float_power(input: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    """``input ** exponent`` computed in float64 (complex128 for complex operands).

    >>> import ember
    >>> ember.float_power(ember.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=ember.float64)
    """
    _EX.need_one_tensor(input, exponent, "float_power", "exponent")
    dt = _float_power_dtype(input, exponent)
    input, exponent = (x.to(dt) if isinstance(x, Tensor) else x for x in (input, exponent))
    return pow(input, exponent)


@_method
def float_power_(self: Tensor, exponent: Tensor | Number) -> Tensor:
    """``self ** exponent`` in place; self must be float64 (complex128 for complex operands).

    >>> import ember
    >>> ember.tensor([2.0, 3.0], dtype=ember.float64).float_power_(2)
    tensor([4., 9.], dtype=ember.float64)
    """
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.scalar_name} "
                           f"but the operation's result requires dtype {dt.scalar_name}")
    return self.pow_(exponent.to(dt) if isinstance(exponent, Tensor) else exponent)


def frexp(input: Tensor, *, out: tuple[Tensor, Tensor] | None = None
          ) -> tuple[Tensor, Tensor]:
    """Mantissas in [0.5, 1) (in magnitude) and int32 exponents: ``input = m * 2 ** e``.

    >>> import ember
    >>> m, e = ember.frexp(ember.tensor([8.0, -0.75]))
    >>> m, e
    (tensor([ 0.5000, -0.7500]), tensor([4, 0], dtype=ember.int32))
    """
    _EX.check_frexp(input)
    if out is not None and isinstance(out, (tuple, list)) and len(out) == 2 and \
            builtins.all(isinstance(o, Tensor) for o in out):
        if out[0].dtype is not input.dtype:  # PyTorch checks out's dtypes (no cast)
            raise RuntimeError(f"torch.frexp() expects mantissa to have dtype "
                               f"{input.dtype.cpp_name} but got {out[0].dtype.cpp_name}")
        if out[1].dtype is not dtypes.int32:
            raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                               f"{out[1].dtype.cpp_name}")
    result = _RT.frexp(_EX.FrexpMantissa.apply(input), _EX.FrexpExponent.apply(input))
    return result if out is None else _write_out(result, out, "frexp")


def _frexp_method(self: Tensor) -> tuple[Tensor, Tensor]:
    return frexp(self)


frexp = _declare_entry("frexp", frexp, _frexp_method, _frexp_method, False).function


@_method
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with exponential draws of rate ``lambd``.

    >>> import ember
    >>> bool((ember.empty(3).exponential_(2.0) > 0).all())
    True
    """
    return _SMP.exponential_(self, lambd, generator=generator)


@_method
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill with the trials to the first success of Bernoulli(p) draws (1, 2, ...).

    >>> import ember
    >>> bool((ember.empty(3, dtype=ember.int64).geometric_(0.5) >= 1).all())
    True
    """
    return _SMP.geometric_(self, p, generator=generator)


@_method
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Any = None) -> Tensor:
    """Fill with Cauchy draws of location ``median`` and scale ``sigma``.

    >>> import ember
    >>> ember.empty(2, 3).cauchy_().shape
    ember.Size([2, 3])
    """
    return _SMP.cauchy_(self, median, sigma, generator=generator)


@_method
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Any = None) -> Tensor:
    """Fill with ``exp(N(mean, std))`` draws.

    >>> import ember
    >>> bool((ember.empty(3).log_normal_() > 0).all())
    True
    """
    return _SMP.log_normal_(self, mean, std, generator=generator)


@op(method=False)
def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson counts with ``input`` as the rates (input's float dtype).

    >>> import ember
    >>> ember.poisson(ember.zeros(3))
    tensor([0., 0., 0.])
    """
    return _SMP.Poisson.apply(input, generator)


@op(method=False)
def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Successes in ``count`` trials of probability ``prob`` (count's float dtype).

    >>> import ember
    >>> ember.binomial(ember.tensor([5.0, 3.0]), ember.tensor([1.0, 0.0]))
    tensor([5., 0.])
    """
    return _SMP.Binomial.apply(count, prob, generator)


def _declare_factory(fn):
    """Declare a function PyTorch lists among its ignored functions (factories, ``normal``):
    only modes see it, its ``out=`` is its own."""
    entry = _dispatching(fn, name=fn.__name__, module="ember", modes_only=True)
    entry._public_module, entry._tf_modes_only = "ember", True
    return _declare_entry(fn.__name__, entry, None, None, False).function


def normal(mean: Tensor | float, std: Tensor | float = 1.0, size: Sequence[int] | None = None,
           *, generator: Any = None, out: Tensor | None = None, dtype: dtype | None = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """Normal draws: ``normal(mean, std)`` with a tensor for either (or both, broadcast), or
    ``normal(mean, std, size)`` with numbers; the gradient to mean and std is zero, as
    PyTorch's.

    >>> import ember
    >>> ember.normal(ember.tensor([1.0, 2.0]), 0.0)
    tensor([1., 2.])
    """
    if out is not None and size is not None and dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    result = _SMP.normal(mean, std, size, generator=generator, dtype=dtype, layout=layout,
                         device=device, pin_memory=pin_memory, requires_grad=requires_grad)
    return result if out is None else _write_out(result, out, "normal")


def logspace(start: float | Tensor, end: float | Tensor, steps: int, base: float = 10.0, *,
             dtype: dtype | None = None, layout: Any = None, device: Any = None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** e``, e evenly spaced from ``start`` to ``end``.

    >>> import ember
    >>> ember.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    return _SMP.logspace(start, end, steps, base, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory, requires_grad=requires_grad)


logspace = _factory_with_out(logspace, "logspace")


def hann_window(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                layout: Any = None, device: Any = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi k / N)`` (N: the length, or length - 1 when
    not ``periodic``).

    >>> import ember
    >>> ember.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _SMP.hann(window_length, periodic, dtype, device, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: dtype | None = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi k / N)``.

    >>> import ember
    >>> ember.hamming_window(3, periodic=False, dtype=ember.float64)
    tensor([0.0800, 1.0000, 0.0800], dtype=ember.float64)
    """
    return _SMP.hamming(window_length, periodic, alpha, beta, dtype, device, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N)``.

    >>> import ember
    >>> ember.blackman_window(3, periodic=False, dtype=ember.float64)
    tensor([0., 1., 0.], dtype=ember.float64)
    """
    return _SMP.blackman(window_length, periodic, dtype, device, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """The triangular window ``1 - |2k / N - 1|``.

    >>> import ember
    >>> ember.bartlett_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _SMP.bartlett(window_length, periodic, dtype, device, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: dtype | None = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2k / N - 1)^2)) / I0(beta)``.

    >>> import ember
    >>> ember.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    return _SMP.kaiser(window_length, periodic, beta, dtype, device, requires_grad)


#: PyTorch's torch.<op>_ functions of this section's ops (``_inplace_function`` above)
_EXTRA_INPLACE_FUNCTIONS = ("frac_", "sinc_", "i0_", "ldexp_", "xlogy_", "gcd_", "lcm_")
for _name in _EXTRA_INPLACE_FUNCTIONS:
    _base = _DECLARED[_name[:-1]]
    globals()[_name] = op(_inplace_function(_name, _inspect.signature(
        _base.signature or _base.function)), name=_name, method=False)
for _name, _call in (("ldexp_", "ember.tensor([0.5]), ember.tensor([2])"),
                     ("xlogy_", "ember.tensor([0.5]), 1.0"),
                     ("gcd_", "ember.tensor([4]), ember.tensor([6])"),
                     ("lcm_", "ember.tensor([4]), ember.tensor([6])")):
    globals()[_name].__doc__ = (
        f"``input.{_name}(other)``: the in-place form as a function (input changed and "
        f"returned).\n\n    >>> import ember\n    >>> ember.{_name}({_call}).shape\n"
        f"    ember.Size([1])\n    ")
del _name, _base, _call

normal, logspace, hann_window, hamming_window, blackman_window, bartlett_window, \
    kaiser_window = (_declare_factory(_fn) for _fn in (
        normal, logspace, hann_window, hamming_window, blackman_window, bartlett_window,
        kaiser_window))

__all__ += [
    "copysign", "frac", "sinc", "i0", "signbit", "gcd", "lcm", "logaddexp2", "nextafter",
    "xlogy", "bitwise_left_shift", "bitwise_right_shift", "heaviside", "ldexp", "float_power",
    "frexp", "poisson", "binomial", "normal", "logspace", "hann_window", "hamming_window",
    "blackman_window", "bartlett_window", "kaiser_window", *_EXTRA_INPLACE_FUNCTIONS,
]


# ---- erfc, igammac, logit, mvlgamma: ember.special's ops under their top-level names -------
erfc = unary(_SPF.Erfc, "erfc", inplace=True)
igammac = binary(_SPF.Igammac, "igammac", inplace=True)


@op(inplace=True, out=True)
def logit(input: Tensor, eps: float | None = None) -> Tensor:
    """``log(p / (1 - p))``, p clamped to [eps, 1 - eps] when ``eps`` is given (integers give
    the default float dtype; the gradient is NaN outside [0, 1] when no eps clamps).

    >>> import ember
    >>> ember.logit(ember.tensor([0.5, 0.0]))
    tensor([0., -inf])
    """
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"logit_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    x = input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())
    if eps is not None:
        x = x.clamp(eps, 1 - eps)
    result = x.log() - (-x).log1p()
    if eps is None and result.requires_grad:  # PyTorch's gradient is NaN outside [0, 1]
        outside = ((x < 0) | (x > 1)).detach()
        nan = beside(tensor(float("nan"), dtype=result.dtype), result)
        result = result + x * where(outside, nan, 0.0)
    return result


def _mvlgamma_method(self: Tensor, p: int) -> Tensor:
    return mvlgamma(self, p)


@op(method=_mvlgamma_method, inplace=True, out=True)
def mvlgamma(input: Tensor, p: int) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p`` (``special.multigammaln``).

    >>> import ember
    >>> ember.mvlgamma(ember.tensor([2.0]), 1)
    tensor([0.])
    """
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if input.dtype.is_complex:  # (PyTorch's kernel fails where it makes the offsets)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    x = input if input.dtype.is_floating_point else input.to(dtypes.get_default_dtype())
    offsets = beside(tensor([-0.5 * k for k in builtins.range(p)], dtype=x.dtype), x)
    return (x.unsqueeze(-1) + offsets).lgamma().sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


__all__ += ["erfc", "igammac", "logit", "mvlgamma"]


# ---- shared memory (nn leftovers): Tensor.is_shared / share_memory_, methods only ----


@_method
def is_shared(self: Tensor) -> bool:
    """Whether the tensor's memory is shared between processes: CUDA memory is (as in
    PyTorch), ember's CPU tensors never are (``share_memory_`` is not supported there).

    >>> import ember
    >>> ember.ones(2).is_shared()
    False
    """
    return self.device.type == "cuda"


@_method
def share_memory_(self: Tensor) -> Tensor:
    """Moves the tensor's memory into memory shared between processes. A no-op on CUDA, as
    in PyTorch; on the CPU ember cannot move the memory of a tensor and of every view of it
    in place, so it raises NotImplementedError rather than sharing only this tensor.

    >>> import ember
    >>> ember.ones(2).share_memory_()
    Traceback (most recent call last):
        ...
    NotImplementedError: ember cannot move a CPU tensor and its views into shared memory
    """
    kind = self.device.type
    if kind == "cuda":
        return self
    if kind != "cpu":
        raise RuntimeError("_share_fd_: only available on CPU")
    raise NotImplementedError("ember cannot move a CPU tensor and its views into shared memory")


# ---- linalg LU family: PyTorch's older top-level forms (ember/linalg/_lu.py, _conditioning.py) --
from .linalg import _lu as _LLU, _conditioning as _LCOND  # noqa: E402

lu = op(_LLU.lu, out=True)
lu_solve = op(_LLU.lu_solve, out=True)
lu_unpack = op(_LLU.lu_unpack, method=False, out=True)
triangular_solve = op(_LLU.triangular_solve, out=True)
svd_lowrank = op(_LCOND.svd_lowrank, method=False)
pca_lowrank = op(_LCOND.pca_lowrank, method=False)

__all__ += ["lu", "lu_solve", "lu_unpack", "triangular_solve", "svd_lowrank", "pca_lowrank"]
