"""What a MaskedTensor answers: the calls ``MaskedTensor.__torch_function__`` routes here by
name (any other raises PyTorch's "not implemented in __torch_dispatch__ for MaskedTensor"
warning and its ``TypeError``).

The rules are PyTorch's: metadata comes from the data; unary elementwise ops run on the data
and keep the mask; binary ones need equal masks when both operands are MaskedTensors (a plain
tensor or number combines with any); reductions run the ``ember.masked`` function over the
data with the mask and give a MaskedTensor whose mask says which outputs saw any element;
views (``__getitem__``, ``view``, ``transpose``, ...) apply to data and mask alike. Each
handler takes ``func`` (the public call) and the call's arguments, the MaskedTensor among
them.
"""
from __future__ import annotations

from .._torch_function import registrar
from .. import _functions as F
from .._creation import ones_like
from .._tensor import Tensor
from ..backend import dtypes
from . import _ops as masked_ops
from ._core import HANDLERS, MaskedTensor, not_implemented, wrap


handles = registrar(HANDLERS)


def _data(a):
    return a.__dict__["_masked_data"] if isinstance(a, MaskedTensor) else a


def _mask(a):
    return a.__dict__["_masked_mask"] if isinstance(a, MaskedTensor) else a


def _map(args, fn):
    """``args`` with each MaskedTensor (also inside lists and tuples) replaced by ``fn`` of it."""
    out = []
    for a in args:
        if isinstance(a, MaskedTensor):
            out.append(fn(a))
        elif isinstance(a, (list, tuple)):
            out.append(type(a)(_map(a, fn)) if isinstance(a, list) else tuple(_map(a, fn)))
        else:
            out.append(a)
    return out


def _wrap_result(data, mask):
    if isinstance(data, (list, tuple)):
        return type(data)(_wrap_result(d, m) for d, m in zip(data, mask))
    return wrap(data, mask)


# ---- metadata and autograd -----------------------------------------------------------------
@handles("shape", "dtype", "device", "layout", "ndim", "dim", "ndimension", "size", "numel",
         "nelement", "is_floating_point", "is_complex", "element_size", "itemsize", "is_cuda",
         "is_cpu", "is_meta", "is_leaf", "grad_fn", "__len__",
         "is_contiguous", "item", "output_nr", "_version")
def _on_data(func, *args, **kwargs):
    return func(*_map(args, _data), **kwargs)


@handles("__bool__", "__float__", "__int__", "__index__", "__complex__")
def _scalar(func, mt, *args):
    return func(_data(mt), *args)  # the data's element, masked out or not (as PyTorch)


@handles("__format__")
def _format(func, mt, format_spec=""):
    if format_spec:  # a subclass formats as an object does
        raise TypeError("unsupported format string passed to MaskedTensor.__format__")
    return _repr(func, mt)


@handles("tolist")
def _tolist(func, mt):
    raise RuntimeError(".tolist() is not supported for tensor subclasses, got MaskedTensor")


@handles("numpy")
def _numpy(func, mt, *args, **kwargs):
    raise RuntimeError(".numpy() is not supported for tensor subclasses.")


@handles("to_dense")
def _to_dense(func, mt, *args, **kwargs):
    return mt  # strided already


@handles("requires_grad_")
def _requires_grad_(func, mt, requires_grad=True):
    _data(mt).requires_grad_(requires_grad)
    return mt


@handles("backward")
def _backward(func, mt, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    if inputs is not None:
        inputs = _map([inputs] if isinstance(inputs, Tensor) else list(inputs), _data)
    if isinstance(gradient, MaskedTensor):  # its masked-out entries carry no gradient
        gradient = gradient.to_tensor(0)
    _data(mt).backward(gradient, retain_graph, create_graph, inputs)


@handles("__repr__", "__str__")
def _repr(func, mt, *args, **kwargs):
    data, mask = _data(mt), _mask(mt)
    if data.dim() == 0:
        value = data.item()
        text = f"{value:8.4f}" if isinstance(value, float) else str(value)
        if not mask.item():
            text = "--"
        return f"MaskedTensor({text}, {mask.item()})"
    body = "\n".join("  " + line for line in _masked_str(data, mask).split("\n"))
    return "MaskedTensor(\n" + body + "\n)"


def _masked_str(data, mask) -> str:
    if data.dim() == 1:
        values = data.tolist()
        shown = [f"{v:8.4f}" if isinstance(v, float) else str(v) for v in values]
        valid = mask.tolist()
        width = max((len(s) if ok else 8) for s, ok in zip(shown, valid)) if shown else 0
        return "[" + ", ".join(s if ok else "--".rjust(width)
                               for s, ok in zip(shown, valid)) + "]"
    rows = [_masked_str(d, m) for d, m in zip(data.unbind(0), mask.unbind(0))]
    rows = ["\n".join("  " + line for line in r.split("\n")) for r in rows]
    return "[\n" + ",\n".join(rows) + "\n]"


# ---- elementwise ---------------------------------------------------------------------------
_UNARY = ("abs absolute acos arccos acosh arccosh angle asin arcsin asinh arcsinh atan arctan "
          "atanh arctanh bitwise_not ceil clamp clip conj_physical cos cosh deg2rad digamma erf "
          "erfc erfinv exp exp2 expm1 fix floor frac lgamma log log10 log1p log2 logit i0 isnan "
          "nan_to_num neg negative positive pow rad2deg reciprocal round rsqrt sigmoid sign sgn "
          "signbit sin sinc sinh sqrt square tan tanh trunc").split()
_UNARY_NOT_INPLACE = {"angle", "positive", "signbit", "isnan"}


def _unary(func, *args, **kwargs):
    if not isinstance(args[0], MaskedTensor):  # pow(2, mt): the exponent is the tensor
        raise not_implemented(func.__name__)
    for a in args[1:]:
        if isinstance(a, Tensor):
            raise TypeError("MaskedTensor unary ops do not support additional Tensor arguments")
    return wrap(func(_data(args[0]), *args[1:], **kwargs), _mask(args[0]))


def _unary_inplace(func, mt, *args, **kwargs):
    for a in args:
        if isinstance(a, Tensor):
            raise TypeError("MaskedTensor unary ops do not support additional Tensor arguments")
    func(_data(mt), *args, **kwargs)
    return mt


for _name in _UNARY:
    HANDLERS[_name] = _unary
    if _name not in _UNARY_NOT_INPLACE:
        HANDLERS[_name + "_"] = _unary_inplace

_BINARY = ("add atan2 arctan2 bitwise_and bitwise_or bitwise_xor bitwise_left_shift "
           "bitwise_right_shift div divide floor_divide fmod logaddexp logaddexp2 mul multiply "
           "nextafter remainder sub subtract true_divide eq ne le ge greater greater_equal gt "
           "less_equal lt less maximum minimum fmax fmin not_equal").split()
_BINARY_NOT_INPLACE = {"logaddexp", "logaddexp2", "fmin", "minimum", "maximum", "fmax"}
_OPERATOR_ALIASES = {"__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor",
                     "__lshift__": "bitwise_left_shift", "__rshift__": "bitwise_right_shift",
                     "__floordiv__": "floor_divide", "__mod__": "remainder",
                     "__truediv__": "div", "__eq__": "eq", "__ne__": "ne", "__lt__": "lt",
                     "__le__": "le", "__gt__": "gt", "__ge__": "ge"}


def _binary_operands(args, kwargs):
    if kwargs:
        raise ValueError("len(kwargs) must equal 0")
    for a in args[2:]:
        if isinstance(a, Tensor):
            raise TypeError("MaskedTensor binary ops do not support Tensor arguments aside "
                            "from the lhs and rhs")
    a, b = args[0], args[1]
    if isinstance(a, MaskedTensor) and isinstance(b, MaskedTensor) \
            and not _masks_equal(_mask(a), _mask(b)):
        raise ValueError("Input masks must match. If you need support for this, please open "
                         "an issue on Github.")
    return a, b


def _masks_equal(x, y) -> bool:
    return x.dim() == y.dim() and bool(F.eq(x, y).all())


def _binary(func, *args, **kwargs):
    a, b = _binary_operands(args, kwargs)
    data = func(*_map(args, _data))
    mask = _mask(a) if isinstance(a, MaskedTensor) else _mask(b)
    return wrap(data, mask.expand_as(data))


def _binary_inplace(func, *args, **kwargs):
    a, _ = _binary_operands(args, kwargs)
    if not isinstance(a, MaskedTensor):
        raise not_implemented(func.__name__)
    func(*_map(args, _data))
    return a


for _name in _BINARY:
    HANDLERS[_name] = _binary
    if _name not in _BINARY_NOT_INPLACE:
        HANDLERS[_name + "_"] = _binary_inplace
for _name in _OPERATOR_ALIASES:
    HANDLERS[_name] = _binary
for _name in ("__iadd__", "__isub__", "__imul__", "__itruediv__"):
    HANDLERS[_name] = _binary_inplace
HANDLERS["__radd__"] = HANDLERS["__rmul__"] = _binary


@handles("__rsub__", "__rpow__", "__rtruediv__", "__rfloordiv__", "__rmod__", "rsub")
def _reflected(func, mt, other, *args, **kwargs):
    # PyTorch's MaskedTensor has no rule for these: Python then finds no operator
    symbol = {"__rsub__": "-", "rsub": "-", "__rpow__": "** or pow()", "__rtruediv__": "/",
              "__rfloordiv__": "//", "__rmod__": "%"}[func.__name__]
    raise TypeError(f"unsupported operand type(s) for {symbol}: '{type(other).__name__}' and "
                    f"'MaskedTensor'")


# ---- reductions ----------------------------------------------------------------------------
def _reduce_dim_args(input, dim, keepdim=False, dtype=None):
    return input, dim, keepdim, dtype


_PROD_DIMS = ("prod() received an invalid combination of arguments - got (tuple), but expected "
              "one of:\n * (*, torch.dtype dtype = None)\n * (int dim, bool keepdim = False, "
              "*, torch.dtype dtype = None)\n")


def _any_over(mask, dim, keepdim):
    for d in sorted([dim] if isinstance(dim, int) else dim, reverse=True):
        mask = mask.any(dim=d, keepdim=keepdim)
    return mask


def _reduction(name):
    def reduce(func, *args, **kwargs):
        if name == "norm":
            # PyTorch's Tensor.norm and torch.norm always pass p on, which its rule refuses
            raise TypeError("_reduce_dim_args() got an unexpected keyword argument 'p'")
        if len(args) == 1 and not kwargs:
            mt = args[0]
            data, mask = _data(mt), _mask(mt)
            if name == "all":
                result = data.masked_fill(~mask, True).all()
            else:
                result = getattr(masked_ops, name)(data, mask=mask)
            return wrap(result, mask.any())
        mt, dim, keepdim, dtype = _reduce_dim_args(*args, **kwargs)
        if name in ("prod", "argmax", "argmin") and not isinstance(dim, int):
            raise TypeError(_PROD_DIMS if name == "prod" else f"{name}(): argument 'dim' "
                            f"(position 1) must be int, not {type(dim).__name__}")
        data, mask = _data(mt), _mask(mt)
        if name == "all":
            result = F.all(data.masked_fill(~mask, True), dim=dim, keepdim=keepdim)
        else:
            result = getattr(masked_ops, name)(data, dim=dim, keepdim=keepdim, dtype=dtype,
                                               mask=mask)
        return wrap(result, _any_over(mask, dim, keepdim))
    return reduce


for _name in ("sum", "mean", "amin", "amax", "argmin", "argmax", "prod", "all", "norm", "var",
              "std"):
    HANDLERS[_name] = _reduction(_name)


@handles("softmax", "softmin")
def _softmax(func, mt, dim=None, *args, dtype=None, **kwargs):
    # softmin is softmax(-x) in PyTorch, which its MaskedTensor answers
    if dim is None:
        raise NotImplementedError(f"ember.masked: {func.__name__} of a MaskedTensor without dim")
    if args and args[0] != 3:  # nn.functional's _stacklevel; any other argument is refused
        raise ValueError(f"__torch_dispatch__, {func.__name__}: len(args) must equal 3")
    if set(kwargs) - {"_stacklevel"}:
        raise ValueError(f"__torch_dispatch__, {func.__name__}: len(kwargs) must equal 0")
    data, mask = _data(mt), _mask(mt)
    fn = masked_ops.softmax if func.__name__ == "softmax" else masked_ops.softmin
    return wrap(fn(data, dim, dtype=dtype, mask=mask), mask)


@handles("where")
def _where(func, *args, **kwargs):
    if func is Tensor.__dict__.get("where"):  # x.where(condition, y)
        args = (args[1], args[0]) + tuple(args[2:])
    condition, x, y = (list(args) + [kwargs.get("input"), kwargs.get("other")])[:3]
    if isinstance(condition, MaskedTensor):
        raise not_implemented("where")
    operands = []
    for t in (x, y):
        if not isinstance(t, Tensor):
            raise NotImplementedError("ember.masked: where with a number operand")
        operands.append(t if isinstance(t, MaskedTensor)
                        else (t, ones_like(t, dtype=dtypes.bool_)))
    (xd, xm), (yd, ym) = [(_data(t), _mask(t)) if isinstance(t, MaskedTensor) else t
                          for t in operands]
    return wrap(F.where(condition, xd, yd), F.where(condition, xm, ym))


# ---- views, copies, conversions ------------------------------------------------------------
@handles("select", "transpose", "swapaxes", "swapdims", "t", "__getitem__", "view", "reshape",
         "flatten", "expand", "unsqueeze", "split", "cat", "concat", "concatenate", "stack",
         "unfold")
def _passthrough(func, *args, **kwargs):
    data = func(*_map(args, _data), **kwargs)
    mask = func(*_map(args, _mask), **kwargs)
    return _wrap_result(data, mask)


@handles("clone", "detach")
def _on_data_only(func, mt, *args, **kwargs):
    return wrap(func(_data(mt), *args, **kwargs), _mask(mt))


@handles("contiguous")
def _contiguous(func, mt, *args, **kwargs):
    return wrap(_data(mt).contiguous(*args, **kwargs), _mask(mt).contiguous())


@handles("to", "float", "double", "half", "int", "long", "short", "bool", "char", "type")
def _to(func, mt, *args, **kwargs):
    if func.__name__ == "type" and not args and not kwargs:
        return func(_data(mt))  # the type's name
    data = func(_data(mt), *args, **kwargs)
    mask = _mask(mt)
    return wrap(data, mask if mask.device == data.device else mask.to(data.device))
