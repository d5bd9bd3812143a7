"""Binds the functional API onto ``Tensor`` as methods, operators and in-place
variants (``x.add_(y)``, ``x += y``), plus dtype conversion and the ``new_*``
constructors. Imported once by ``ember/__init__.py``.
"""
import numpy as np

from .backend import get_array_module, broadcast_shapes
from . import _functions as F
from ._tensor import Tensor
from ._ops import shape as S, indexing as I
from ._ops.primitive import Primitive
from ._ops.elementwise import Add as _AddOp, Sub as _SubOp, Mul as _MulOp
from .backend import dtypes
from .device import check_device, device as _device_cls


# ---- dtype conversion ---------------------------------------------------------------------
class ToDtype(Primitive):
    """Cast; the gradient is cast back to the input's dtype by the node."""
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype):
        return x._data.astype(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


_Add, _Sub, _Mul = _AddOp.apply, _SubOp.apply, _MulOp.apply

_LEGACY = {"FloatTensor": dtypes.float32, "DoubleTensor": dtypes.float64,
           "HalfTensor": dtypes.float16, "LongTensor": dtypes.int64, "IntTensor": dtypes.int32,
           "ShortTensor": dtypes.int16, "CharTensor": dtypes.int8, "ByteTensor": dtypes.uint8,
           "BoolTensor": dtypes.bool_}
_LEGACY_NAME = {v.name: k for k, v in _LEGACY.items()}


def _parse_dtype(d):
    if isinstance(d, dtypes.dtype):
        return d
    if isinstance(d, str):
        name = d.split(".")[-1]
        if name in _LEGACY:
            return _LEGACY[name]
        raise ValueError(f"invalid type: '{d}'")
    if isinstance(d, type) and getattr(d, "_legacy_dtype", None) is not None:
        return d._legacy_dtype
    return dtypes.from_numpy_dtype(d)


def to(self, *args, **kwargs):
    """``to(dtype)``, ``to(device)``, ``to(other_tensor)``, ``to(device, dtype)``."""
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, _device_cls)):
            device = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    check_device(device)
    if dtype is None or dtype is self.dtype:
        return F.clone(self) if copy else self
    return ToDtype.apply(self, dtype)


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """No argument: the legacy type name ('torch.FloatTensor'); else convert."""
    if dtype is None:
        return "torch." + _LEGACY_NAME[self.dtype.name]
    return to(self, _parse_dtype(dtype))


def _caster(dt):
    def cast(self, memory_format=None):
        return to(self, dt)
    return cast


# ---- new_* constructors -------------------------------------------------------------------
def new(self, *args):
    from ._creation import legacy_tensor_data
    data = legacy_tensor_data(args, self.dtype, like=self)
    return Tensor._make(data.astype(self._data.dtype, copy=False))


def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from ._creation import tensor, beside
    if isinstance(data, Tensor):
        data = data._data
    return beside(tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad), self)


def _new_filled(fill):
    def make(self, *size, dtype=None, device=None, requires_grad=False):
        from ._creation import _filled
        return _filled(fill, size, dtype or self.dtype, requires_grad, device, like=self)
    return make


def new_empty(self, *size, dtype=None, device=None, requires_grad=False):
    from ._creation import _empty
    return _empty(size, dtype or self.dtype, requires_grad, None, like=self)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    from ._creation import _filled
    return _filled(fill_value, (size,), dtype or self.dtype, requires_grad, None, name="full",
                   like=self)


# ---- in-place helpers ---------------------------------------------------------------------
class Overwrite(Primitive):
    """New values that do not depend on the old ones (fill_, zero_, normal_, copy_)."""
    _backward_name = "FillBackward0"

    @staticmethod
    def forward(ctx, x, value):
        ctx.value_shape = value._data.shape if isinstance(value, Tensor) else None
        v = value._data if isinstance(value, Tensor) else value
        xp = get_array_module(x._data)
        return xp.broadcast_to(xp.asarray(v).astype(x._data.dtype, copy=False),
                               x._data.shape).copy()

    @staticmethod
    def backward(ctx, grad):
        gv = None
        if ctx.value_shape is not None and ctx.needs_input_grad[1]:
            gv = grad.sum_to_size(ctx.value_shape)
        return grad * 0, gv  # the old values get a zero gradient, as in PyTorch


def fill_(self, value):
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    return self._inplace(Overwrite.apply, value)


def zero_(self):
    return self._inplace(Overwrite.apply, 0)


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    try:
        get_array_module(src._data).broadcast_to(src._data, self._data.shape)
    except ValueError:
        from ._ops.elementwise import _check_broadcast
        _check_broadcast(self, src)  # PyTorch's message for the first mismatched dim
        # broadcastable together, but to a larger shape than self's
        dims = lambda shape: "[" + ", ".join(map(str, shape)) + "]"  # noqa: E731
        raise RuntimeError(
            f"output with shape {dims(self._data.shape)} doesn't match the broadcast shape "
            f"{dims(broadcast_shapes(self._data.shape, src._data.shape))}") from None
    return self._inplace(Overwrite.apply, src)


def _random_fill(self, draw):
    if self._data.dtype.kind != "f":
        raise NotImplementedError("random fills are only for floating point tensors")
    values = draw(self._data.shape).astype(self._data.dtype)  # drawn on the host
    return self._inplace(Overwrite.apply, get_array_module(self._data).asarray(values))


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    from .random import rng
    return _random_fill(self, lambda s: rng(generator).uniform(a, b, s))


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    from .random import rng
    return _random_fill(self, lambda s: rng(generator).normal(mean, std, s))


def random_(self, from_=0, to=None, *, generator=None):
    from .random import rng
    if to is None:
        from_, to = 0, (from_ if from_ else 2 ** 24 if self._data.dtype.kind == "f" else
                        int(np.iinfo(self._data.dtype).max) + 1)
    vals = rng(generator).integers(from_, to, self._data.shape).astype(self._data.dtype)
    return self._inplace(Overwrite.apply, get_array_module(self._data).asarray(vals))


def bernoulli_(self, p=0.5, *, generator=None):
    from .random import rng
    xp = get_array_module(self._data)
    prob = p._data if isinstance(p, Tensor) else p
    vals = xp.asarray(rng(generator).random(self._data.shape)) < prob  # drawn on the host
    return self._inplace(Overwrite.apply, vals.astype(self._data.dtype))


def bernoulli(self, p=None, *, generator=None):
    from .random import rng
    xp = get_array_module(self._data)
    prob = self._data if p is None else p
    return Tensor._make((xp.asarray(rng(generator).random(self._data.shape)) < prob)
                        .astype(self._data.dtype))


def resize_(self, *sizes, memory_format=None):
    """Change the shape in place, keeping the leading elements (no autograd)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    sizes = S.parse_sizes(sizes)
    new = get_array_module(self._data).zeros(sizes, self._data.dtype)
    flat_old, flat_new = self._data.reshape(-1), new.reshape(-1)
    n = min(flat_old.size, flat_new.size)
    flat_new[:n] = flat_old[:n]
    self._data = new
    self._vc[0] += 1
    return self


def resize_as_(self, other, memory_format=None):
    return resize_(self, other.shape)


def _inplace_of(fn):
    def method(self, *args, **kwargs):
        if kwargs:
            return self._inplace(lambda s, *a: fn(s, *a, **kwargs), *args)
        return self._inplace(fn, *args)
    method.__name__ = fn.__name__ + "_"
    return method


def _reflected(fn):
    def method(self, other):
        return fn(other, self)
    return method


def _scalar_as_tensor(fn):
    def method(self, other):
        return fn(F._as_tensor_like(other, self) if not isinstance(other, Tensor) else other,
                  self)
    return method


def unsqueeze_(self, dim):
    new = F.unsqueeze(self, dim)
    self._data = new._data
    return self


def squeeze_(self, dim=None):
    new = F.squeeze(self, dim)
    self._data = new._data
    return self


# Operators are the ops' apply functions themselves (self is the first argument): no
# wrapper frame and none of the keyword handling of ember.add/sub/mul on the hot path.
_add, _sub, _mul = _Add, _Sub, _Mul


def _invert(self):
    if self._data.dtype.kind == "f":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return F.logical_not(self) if self.dtype is dtypes.bool_ else F.bitwise_not(self)


def _T(self):
    return F.permute(self, tuple(reversed(range(self.dim()))))


def _not_implemented_op(self, other):
    return NotImplemented


def _eq(self, other):
    if not isinstance(other, (Tensor, int, float, bool, np.ndarray, np.generic)):
        return NotImplemented
    return F.eq(self, other)


def _ne(self, other):
    if not isinstance(other, (Tensor, int, float, bool, np.ndarray, np.generic)):
        return NotImplemented
    return F.ne(self, other)


_METHODS = {
    # arithmetic and math
    "add": F.add, "sub": F.sub, "subtract": F.sub, "mul": F.mul, "multiply": F.mul,
    "div": F.div, "divide": F.div, "true_divide": F.div, "floor_divide": F.floor_divide,
    "remainder": F.remainder, "fmod": F.fmod, "pow": F.pow, "neg": F.neg, "negative": F.neg,
    "abs": F.abs, "absolute": F.abs, "sign": F.sign, "exp": F.exp, "exp2": F.exp2, "log": F.log,
    "log2": F.log2, "log1p": F.log1p, "expm1": F.expm1, "sqrt": F.sqrt, "rsqrt": F.rsqrt,
    "reciprocal": F.reciprocal, "sin": F.sin, "cos": F.cos, "tan": F.tan, "tanh": F.tanh,
    "sigmoid": F.sigmoid, "relu": F.relu, "erf": F.erf, "floor": F.floor, "ceil": F.ceil,
    "round": F.round, "trunc": F.trunc, "clamp": F.clamp, "clip": F.clamp,
    "clamp_min": F.clamp_min, "clamp_max": F.clamp_max, "maximum": F.maximum,
    "minimum": F.minimum, "lerp": F.lerp, "addcmul": F.addcmul, "addcdiv": F.addcdiv,
    "square": F.square, "isnan": F.isnan,
    # comparison and logic
    "eq": F.eq, "ne": F.ne, "lt": F.lt, "le": F.le, "gt": F.gt, "ge": F.ge,
    "greater": F.gt, "less": F.lt, "logical_and": F.logical_and, "logical_or": F.logical_or,
    "logical_xor": F.logical_xor, "logical_not": F.logical_not, "bitwise_not": F.bitwise_not,
    "where": lambda self, condition, other: F.where(condition, self, other),
    "masked_fill": F.masked_fill, "equal": F.equal, "allclose": F.allclose,
    "isclose": F.isclose,
    # reductions
    "sum": F.sum, "mean": F.mean, "prod": F.prod, "max": F.max, "min": F.min, "amax": F.amax,
    "amin": F.amin, "argmax": F.argmax, "argmin": F.argmin, "var": F.var, "std": F.std,
    "logsumexp": F.logsumexp, "norm": F.norm, "all": F.all, "any": F.any, "cumsum": F.cumsum,
    "cumprod": F.cumprod, "softmax": F.softmax, "log_softmax": F.log_softmax,
    # shape
    "view": F.view, "reshape": F.reshape, "flatten": F.flatten, "unflatten": F.unflatten,
    "squeeze": F.squeeze, "unsqueeze": F.unsqueeze, "permute": F.permute,
    "transpose": F.transpose, "swapaxes": F.transpose, "t": F.t, "expand": F.expand,
    "sum_to_size": F.sum_to_size, "contiguous": F.contiguous, "flip": F.flip, "roll": F.roll,
    "repeat": F.repeat, "tile": F.tile, "narrow": F.narrow, "select": F.select,
    "unbind": F.unbind, "split": F.split, "chunk": F.chunk, "tril": F.tril, "triu": F.triu,
    "clone": F.clone,
    "view_as": lambda self, other: F.view(self, other.shape),
    "reshape_as": lambda self, other: F.reshape(self, other.shape),
    "expand_as": lambda self, other: F.expand(self, other.shape),
    # indexing
    "gather": F.gather, "scatter": F.scatter, "scatter_add": F.scatter_add,
    "index_select": F.index_select, "index_add": F.index_add,
    "masked_select": F.masked_select, "take_along_dim": F.take_along_dim,
    "nonzero": F.nonzero, "sort": F.sort, "argsort": F.argsort, "topk": F.topk,
    # linear algebra
    "mm": F.mm, "bmm": F.bmm, "matmul": F.matmul, "dot": F.dot, "mv": F.mv, "outer": F.outer,
    "addmm": F.addmm,
    # conversion and construction
    "to": to, "type": type_, "type_as": lambda self, other: to(self, other.dtype),
    "double": _caster(dtypes.float64), "float": _caster(dtypes.float32),
    "half": _caster(dtypes.float16), "long": _caster(dtypes.int64),
    "int": _caster(dtypes.int32), "short": _caster(dtypes.int16),
    "char": _caster(dtypes.int8), "byte": _caster(dtypes.uint8), "bool": _caster(dtypes.bool_),
    "cpu": lambda self, memory_format=None: self,
    "new": new, "new_tensor": new_tensor, "new_zeros": _new_filled(0),
    "new_ones": _new_filled(1), "new_empty": new_empty, "new_full": new_full,
    # in-place specials
    "fill_": fill_, "zero_": zero_, "copy_": copy_, "uniform_": uniform_, "normal_": normal_,
    "random_": random_, "bernoulli_": bernoulli_, "bernoulli": bernoulli, "resize_": resize_,
    "resize_as_": resize_as_, "unsqueeze_": unsqueeze_, "squeeze_": squeeze_,
    # operators
    "__add__": _add, "__radd__": _add, "__sub__": _sub,
    "__rsub__": _reflected(F.sub), "__mul__": _mul, "__rmul__": _mul,
    "__truediv__": F.div, "__rtruediv__": _reflected(F.div),
    "__floordiv__": F.floor_divide, "__rfloordiv__": _scalar_as_tensor(F.floor_divide),
    "__mod__": F.remainder, "__rmod__": _scalar_as_tensor(F.remainder),
    "__pow__": F.pow, "__rpow__": _reflected(F.pow), "__matmul__": F.matmul,
    "__rmatmul__": _reflected(F.matmul), "__neg__": F.neg, "__pos__": lambda self: self,
    "__abs__": F.abs, "__invert__": _invert,
    "__eq__": _eq, "__ne__": _ne, "__lt__": F.lt, "__le__": F.le, "__gt__": F.gt,
    "__ge__": F.ge, "__and__": F.bitwise_and, "__or__": F.bitwise_or,
    "__xor__": F.bitwise_xor, "__rand__": F.bitwise_and, "__ror__": F.bitwise_or,
    "__rxor__": F.bitwise_xor,
    "__getitem__": I.getitem, "__setitem__": I.setitem,
}

# x.op_(...) for every op whose result has the input's shape
_INPLACE = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow", "neg",
            "abs", "sign", "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt",
            "reciprocal", "sin", "cos", "tan", "tanh", "sigmoid", "relu", "erf", "floor", "ceil",
            "round", "trunc", "clamp", "clip", "clamp_min", "clamp_max", "lerp", "addcmul",
            "addcdiv", "masked_fill", "scatter", "scatter_add", "index_add", "tril", "triu",
            "square", "eq", "ne", "lt", "le", "gt", "ge", "logical_not", "logical_and",
            "logical_or", "subtract", "multiply", "true_divide", "divide"]
_OPERATORS_INPLACE = {"__iadd__": "add", "__isub__": "sub", "__imul__": "mul",
                      "__itruediv__": "div", "__ifloordiv__": "floor_divide",
                      "__imod__": "remainder", "__ipow__": "pow",
                      "__iand__": "bitwise_and", "__ior__": "bitwise_or",
                      "__ixor__": "bitwise_xor"}


def _bind():
    for name, fn in _METHODS.items():
        # A one-op function (ember.tanh) binds as its op's apply: one call per x.tanh()
        setattr(Tensor, name, getattr(fn, "_op_apply", fn))
    for name in _INPLACE:
        setattr(Tensor, name + "_", _inplace_of(_METHODS[name]))
    for dunder, name in _OPERATORS_INPLACE.items():
        fn = _METHODS.get(name) or getattr(F, name)
        setattr(Tensor, dunder, _inplace_of(fn))
    Tensor.T = property(_T)
    Tensor.mT = property(S.mT)
    Tensor.H = property(_T)
    Tensor.mH = property(S.mT)


_bind()


class _LegacyTensorType(type):
    """``ember.FloatTensor(2, 3)`` builds; ``isinstance(x, ember.FloatTensor)`` checks dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._legacy_dtype

    def __call__(cls, *args):
        return Tensor(*args, dtype=cls._legacy_dtype)


def _legacy_types():
    return {name: _LegacyTensorType(name, (), {"_legacy_dtype": dt})
            for name, dt in _LEGACY.items()}


LEGACY_TYPES = _legacy_types()
