"""The ops nested tensors answer: elementwise maps, binary ops, products, softmax,
reductions, layer norm, dropout, transposes, chunks and attention, each written with the
public dense op (the ``func`` the call came through) on the components or the values.

The strided layout answers what PyTorch's strided nested tensors answer (a short list:
``relu`` but not ``exp``); the jagged layout answers more. Anything else raises the
layout's own PyTorch error (``tensor.unsupported``).
"""
from __future__ import annotations

import numbers

from .._tensor import _wrap_dim as _norm_dim
from .. import _functions as F
from .._tensor import Size, Tensor
from .handlers import handles, map_nested
from .tensor import (components, is_nested, jagged, layout_of, like,
                     make_strided, nested_dim, nested_shape, no_jagged_kernel,
                     no_nested_kernel, offsets_of, ragged_idx_of, strided, values_of,
                     with_values, lengths_of)

# elementwise ops of one tensor that PyTorch's strided nested tensors have kernels for
_STRIDED_UNARY = {"relu", "relu_", "tanh", "tanh_", "neg", "negative", "abs", "abs_", "sin",
                  "sin_", "cos", "cos_", "sqrt", "sqrt_", "sgn", "logical_not", "isnan",
                  "isinf", "positive", "silu", "gelu", "__neg__", "__abs__", "dropout",
                  "alpha_dropout", "feature_alpha_dropout"}
# ... and the jagged layout's (every pointwise op of one tensor)
_JAGGED_UNARY = _STRIDED_UNARY | {
    "sigmoid", "sigmoid_", "exp", "exp_", "log", "log_", "rsqrt", "expm1", "log1p", "sign",
    "floor", "ceil", "round", "trunc", "reciprocal", "square", "erf", "erfinv", "nan_to_num",
    "exp2", "log2", "log10", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "atanh",
    "frac", "relu6", "hardtanh", "hardsigmoid", "mish", "elu", "selu", "celu", "softplus",
    "leaky_relu", "clamp", "clip", "clamp_min", "clamp_max", "bitwise_not", "neg_", "sign_",
    "tanhshrink", "softsign", "hardshrink", "softshrink", "logit", "deg2rad", "rad2deg",
    "sinc", "i0", "digamma", "lgamma", "erfc"}
_INPLACE_SUFFIX = "_"
_NO_SIZES = "Internal error: NestedTensorImpl doesn't support sizes. Please file an issue."


def _elementwise(func, nt, *args, **kwargs):
    name = func.__name__
    allowed = _JAGGED_UNARY if layout_of(nt) == jagged else _STRIDED_UNARY
    if name not in allowed:
        raise (no_jagged_kernel(name) if layout_of(nt) == jagged else no_nested_kernel(
            "hardtanh" if name == "relu6" else name))
    if kwargs.get("inplace") or (name.endswith(_INPLACE_SUFFIX) and
                                 not name.endswith("__")):
        for t in ([values_of(nt)] if layout_of(nt) == jagged else components(nt)):
            func(t, *args, **kwargs)
        return nt
    return map_nested(nt, lambda t: func(t, *args, **kwargs))


for _name in _JAGGED_UNARY:
    handles(_name)(_elementwise)


# ---- binary ops ----------------------------------------------------------------------------
# comparisons the strided layout answers with a number only
_STRIDED_SCALAR_ONLY = {"gt", "ge", "eq", "__gt__", "__ge__", "__eq__"}
_STRIDED_BINARY = _STRIDED_SCALAR_ONLY | {
                   "add", "sub", "mul", "div", "true_divide", "add_", "sub_", "mul_", "div_",
                   "__radd__", "__rmul__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                   "multiply", "subtract", "divide"}
_JAGGED_BINARY = _STRIDED_BINARY | {
    "__rsub__", "__rtruediv__", "__rdiv__", "pow", "__rpow__", "maximum", "minimum", "eq",
    "ne", "lt", "le", "gt", "ge", "atan2", "remainder", "fmod", "floor_divide",
    "__floordiv__", "__rfloordiv__", "__mod__", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "__and__", "__or__", "__xor__", "pow_",
    "copysign", "hypot", "fmax", "fmin", "xlogy"}
_SCALAR_FORMS = {"pow": "pow.Tensor_Scalar", "__rsub__": "rsub.Scalar", "__rpow__":
                 "pow.Scalar"}


_NO_OVERLOADS = {"maximum", "minimum", "atan2", "fmax", "fmin", "hypot", "copysign"}


def _aten_name(name, other):
    if name == "pow" and isinstance(other, Tensor):
        return "pow.Tensor_Tensor"
    if name in _SCALAR_FORMS:
        return _SCALAR_FORMS[name]
    plain = name.strip("_")
    if plain in _NO_OVERLOADS:
        return plain
    return plain + (".Scalar" if isinstance(other, numbers.Number) else ".Tensor")


def _binary(func, a, b, *args, **kwargs):
    name = func.__name__
    nt, other = (a, b) if is_nested(a) else (b, a)
    if name.endswith("_") and not name.endswith("__") or name.startswith("__i"):
        return _binary_inplace(func, a, b, *args, **kwargs)
    if layout_of(nt) == strided and (name not in _STRIDED_BINARY or (
            name in _STRIDED_SCALAR_ONLY and isinstance(other, Tensor))):
        if name.strip("_") == "eq" and is_nested(other):
            raise RuntimeError("eq does not support nested tensor as other value.")
        raise no_nested_kernel(_aten_name(name, other))
    if layout_of(nt) == jagged and name not in _JAGGED_BINARY:
        raise no_jagged_kernel(name.strip("_"))

    def call(x, y):
        return func(x, y, *args, **kwargs) if nt is a else func(y, x, *args, **kwargs)

    if is_nested(other):
        return _both_nested(func, a, b, call)
    if isinstance(other, numbers.Number) or (isinstance(other, Tensor) and other.dim() == 0):
        return map_nested(nt, lambda t: call(t, other))
    if not isinstance(other, Tensor):
        return map_nested(nt, lambda t: call(t, other))
    if layout_of(nt) == strided:
        raise RuntimeError("Expected both self and other to be nested, but got a nested self "
                           "and non-nested other")
    r = ragged_idx_of(nt)
    if other.dim() <= nested_dim(nt) - 1 - r:  # only the dims after the ragged one
        return with_values(nt, call(values_of(nt), other))
    comps = components(nt)
    if other.dim() == nested_dim(nt):
        rows = [other[i if other.shape[0] != 1 else 0] for i in range(len(comps))]
        return like(nt, [call(c, row) for c, row in zip(comps, rows)])
    return like(nt, [call(c, other) for c in comps])


def _same_structure(x, y) -> bool:
    if layout_of(x) != layout_of(y):
        return False
    if layout_of(x) == jagged:
        return offsets_of(x) is offsets_of(y) and ragged_idx_of(x) == ragged_idx_of(y) \
            and tuple(values_of(x).shape) == tuple(values_of(y).shape)
    cx, cy = components(x), components(y)
    return len(cx) == len(cy) and all(tuple(p.shape) == tuple(q.shape) for p, q in zip(cx, cy))


def _shape_text(nt):
    return "(" + ", ".join(str(s) for s in nested_shape(nt)) + ")"


def _both_nested(func, a, b, call):
    nt = a if is_nested(a) else b
    if not _same_structure(a, b):
        if layout_of(nt) == jagged:
            raise RuntimeError(f"cannot call binary pointwise function "
                               f"{_aten_name(func.__name__, b)} with inputs of shapes "
                               f"{_shape_text(a)} and {_shape_text(b)}")
        raise RuntimeError(f"{func.__name__.strip('_')} does not support broadcasting when "
                           f"given a NestedTensor")
    if layout_of(nt) == jagged:
        return with_values(nt, func(values_of(a), values_of(b)))
    return make_strided([func(x, y) for x, y in zip(components(a), components(b))])


def _binary_inplace(func, a, b, *args, **kwargs):
    if not is_nested(a):
        raise RuntimeError("Expected both self and other to be nested, but got a non-nested "
                           "self and nested other")
    if is_nested(b) and not _same_structure(a, b):
        raise RuntimeError(f"{func.__name__.strip('_')} does not support broadcasting when "
                           f"given a NestedTensor")
    if layout_of(a) == jagged:
        func(values_of(a), values_of(b) if is_nested(b) else b, *args, **kwargs)
    else:
        others = components(b) if is_nested(b) else [b] * len(components(a))
        for t, o in zip(components(a), others):
            func(t, o, *args, **kwargs)
    return a


for _name in _JAGGED_BINARY:
    handles(_name)(_binary)


@handles("masked_fill", "masked_fill_")
def _masked_fill(func, nt, mask, value):
    if not is_nested(mask):
        raise RuntimeError("Expected both self and other to be nested, but got a nested self "
                           "and non-nested other")
    if layout_of(nt) == jagged:
        out = func(values_of(nt), values_of(mask), value)
        return nt if func.__name__.endswith("_") else with_values(nt, out)
    outs = [func(t, m, value) for t, m in zip(components(nt), components(mask))]
    return nt if func.__name__.endswith("_") else make_strided(outs)


@handles("where")
def _where(func, condition, input=None, other=None):
    nt = next(x for x in (condition, input, other) if is_nested(x))
    if layout_of(nt) == strided:  # PyTorch's strided kernel refuses every combination
        raise RuntimeError("self must not be nested" if is_nested(other) else
                           "other must be nested")
    if layout_of(nt) == jagged:
        pick = [values_of(x) if is_nested(x) else x for x in (condition, input, other)]
        return with_values(nt, func(*pick))
    parts = [components(x) if is_nested(x) else [x] * len(components(nt))
             for x in (condition, input, other)]
    return make_strided([func(c, x, y) for c, x, y in zip(*parts)])


# ---- products ------------------------------------------------------------------------------
@handles("linear")
def _linear(func, input, weight, bias=None):
    if is_nested(weight) or is_nested(bias):
        raise no_nested_kernel("linear") if layout_of(input) == strided else \
            no_jagged_kernel("linear")
    if layout_of(input) == strided:
        last = components(input)[0].shape[-1] if components(input) else weight.shape[-1]
        if weight.dim() == 2 and last != weight.shape[1]:
            raise RuntimeError(f"Shape mismatch for NestedTensor Linear: Expected input's (a "
                               f"nested tensor) 'last_dim' to equal 'weight.size(1), but got: "
                               f"last_dim = {last}, and weight.size(1) = {weight.shape[1]}")
    return map_nested(input, lambda t: func(t, weight, bias))


@handles("matmul", "__matmul__", "bmm", "__rmatmul__")
def _matmul(func, a, b):
    if func.__name__ == "__rmatmul__":
        a, b = b, a
    nt = a if is_nested(a) else b
    if layout_of(nt) == strided:
        if not (is_nested(a) and is_nested(b)):
            raise RuntimeError("Expected both to be nested, but got a nested self and "
                               "non-nested other" if is_nested(a) else
                               "Expected both to be nested, but got a non-nested self and "
                               "nested other")
        ca, cb = components(a), components(b)
        if len(ca) != len(cb):
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to "
                               f"be: [{len(ca)}, *] but got: [{len(cb)}, *].")
        return make_strided([F.matmul(x, y) for x, y in zip(ca, cb)])
    if func.__name__ == "bmm" or is_nested(b) or not is_nested(a):
        other = b if is_nested(a) else a
        other_shape = _shape_text(other) if is_nested(other) else str(Size(other.shape)
                                                                       ).replace("ember", "torch")
        raise RuntimeError(f"matmul(): not supported between inputs of shapes "
                           f"{_shape_text(a) if is_nested(a) else tuple(a.shape)} and "
                           f"{other_shape}")
    r = ragged_idx_of(a)
    if r < nested_dim(a) - 1 and b.dim() <= 2:
        return with_values(a, F.matmul(values_of(a), b))
    return like(a, [F.matmul(c, b) for c in components(a)])


# ---- softmax, reductions, norms ------------------------------------------------------------
@handles("softmax", "log_softmax")
def _softmax(func, nt, dim=None, *args, **kwargs):
    name = func.__name__
    if dim is None:
        raise NotImplementedError(f"{name}(dim=None) on a nested tensor")
    d = _norm_dim(dim, nested_dim(nt))
    if layout_of(nt) == strided:
        if name == "log_softmax":
            raise no_nested_kernel("_log_softmax")
        if d == 0:
            raise RuntimeError("Cannot apply softmax across nested dimension 0")
        return make_strided([func(c, d - 1, *args, **kwargs) for c in components(nt)])
    if d == 0:
        raise RuntimeError(f"{name}(): not supported when reducing across the batch dimension "
                           f"for NestedTensor")
    if d != ragged_idx_of(nt):
        return with_values(nt, func(values_of(nt), d - 1, *args, **kwargs))
    return like(nt, [func(c, d - 1, *args, **kwargs) for c in components(nt)])


@handles("sum", "mean")
def _reduce(func, nt, dim=None, keepdim=False, *, dtype=None):
    name = func.__name__
    n = nested_dim(nt)
    extra = {} if dtype is None else {"dtype": dtype}
    if layout_of(nt) == strided:
        if name == "mean":
            raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. "
                               "Please file an issue.")
        if dim is None:
            raise no_nested_kernel("sum")
        dims = [_norm_dim(d, n) for d in ([dim] if isinstance(dim, int) else dim)]
        if len(dims) > 1:
            raise RuntimeError("NestedTensor only allows reduction of a single dimension for "
                               "now.")
        for d in dims:
            if d != n - 1:
                raise RuntimeError(f"NestedTensor can only be reduced across the last dimension "
                                   f"for now got dimension {d} instead.")
        if not keepdim:
            raise RuntimeError("NestedTensor always requires keepdim=True for now.")
        return make_strided([func(c, -1, keepdim=True, **extra) for c in components(nt)])
    values, r = values_of(nt), ragged_idx_of(nt)
    if dim is None:
        if lengths_of(nt) is not None:
            return func(F.cat(components(nt), r - 1), **extra)
        return func(values, **extra)
    dims = sorted({_norm_dim(d, n) for d in ([dim] if isinstance(dim, int) else dim)})
    if 0 in dims and r not in dims:
        raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged "
                           f"dimension is not supported for nested tensors")
    inner = [d - 1 for d in dims if d != 0]
    if 0 in dims:  # batch and ragged together: over the packed values
        packed = values if lengths_of(nt) is None else F.cat(components(nt), r - 1)
        out = func(packed, inner, keepdim=keepdim, **extra)
        return out.unsqueeze(0) if keepdim else out
    if r in dims:  # ragged without batch: one dense row per component
        return F.stack([func(c, inner, keepdim=keepdim, **extra) for c in components(nt)])
    out = func(values, inner, keepdim=keepdim, **extra)
    new_r = r if keepdim else r - sum(1 for d in dims if d < r)
    return with_values(nt, out, new_r)


@handles("layer_norm")
def _layer_norm(func, input, normalized_shape, weight=None, bias=None, eps=1e-5):
    if layout_of(input) == strided:
        if weight is None or bias is None:
            raise ValueError("NestedTensor layer_norm requires weight and bias")
        return make_strided([func(c, normalized_shape, weight, bias, eps)
                             for c in components(input)])
    k = len(normalized_shape) if not isinstance(normalized_shape, int) else 1
    if ragged_idx_of(input) >= nested_dim(input) - k:
        raise RuntimeError("layer_norm(): not supported for NestedTensor objects with "
                           "normalized_shape including the ragged dim")
    return with_values(input, func(values_of(input), normalized_shape, weight, bias, eps))


# ---- shape ---------------------------------------------------------------------------------
@handles("transpose", "swapaxes", "swapdims")
def _transpose(func, nt, dim0, dim1):
    n = nested_dim(nt)
    d0, d1 = _norm_dim(dim0, n), _norm_dim(dim1, n)
    if layout_of(nt) == strided:
        if 0 in (d0, d1):
            raise RuntimeError("Nested tensor dimension 0 cannot be transposed")
        return make_strided([c.transpose(d0 - 1, d1 - 1) for c in components(nt)])
    if 0 in (d0, d1):
        raise ValueError("Transpose is not supported on the batch dimension for jagged NT")
    r = ragged_idx_of(nt)
    new_r = d1 if r == d0 else d0 if r == d1 else r
    return with_values(nt, values_of(nt).transpose(d0 - 1, d1 - 1), new_r)


@handles("unsqueeze")
def _unsqueeze(func, nt, dim):
    n = nested_dim(nt) + 1
    d = _norm_dim(dim, n)
    if d == 0:
        raise RuntimeError("unsqueeze(): not supported for NestedTensor on dim=0")
    if layout_of(nt) == strided:
        return make_strided([c.unsqueeze(d - 1) for c in components(nt)])
    r = ragged_idx_of(nt)
    return with_values(nt, values_of(nt).unsqueeze(d - 1), r + 1 if d <= r else r)


def _pieces(func, nt, size, dim, name):
    n = nested_dim(nt)
    d = _norm_dim(dim, n)
    if layout_of(nt) == strided:
        if name == "split":  # torch wraps a negative dim first, which needs sizes
            if dim < 0:
                raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. "
                                   "Please file an issue.")
            raise no_nested_kernel("split.Tensor")
        if d != n - 1:
            raise RuntimeError("Chunk for nested tensors is currently only supported for the "
                               "last dimension.")
        parts = [func(c, size, d - 1) for c in components(nt)]
        return tuple(make_strided(list(p)) for p in zip(*parts))
    if d in (0, ragged_idx_of(nt)):
        raise NotImplementedError(f"{name}() of a jagged nested tensor along its batch or "
                                  f"ragged dim")
    return tuple(with_values(nt, v) for v in func(values_of(nt), size, d - 1))


@handles("chunk")
def _chunk(func, nt, chunks, dim=0):
    return _pieces(func, nt, chunks, dim, "chunk")


@handles("split")
def _split(func, nt, split_size_or_sections, dim=0):
    return _pieces(func, nt, split_size_or_sections, dim, "split")


@handles("narrow")
def _narrow(func, nt, dim, start, length):
    d = _norm_dim(dim, nested_dim(nt))
    if layout_of(nt) == strided or d in (0, ragged_idx_of(nt)):
        if layout_of(nt) == strided and d != 0:
            raise RuntimeError(f"narrow(): only dim=0 supported for nested tensors, but got: "
                               f"{dim}")
        raise NotImplementedError("narrow() of a nested tensor along its batch or ragged dim")
    return with_values(nt, values_of(nt).narrow(d - 1, start, length))


@handles("stack")
def _stack(func, tensors, dim=0):
    first = next(t for t in tensors if is_nested(t))
    if layout_of(first) == strided:
        raise no_nested_kernel("stack")
    if dim == 0:
        raise RuntimeError("stack(): not supported for NestedTensor on dim=0")
    raise NotImplementedError("stack() of jagged nested tensors")


@handles("cat", "concat", "concatenate")
def _cat(func, tensors, dim=0):
    first = tensors[0]
    if not all(is_nested(t) for t in tensors):
        raise RuntimeError("expected each tensor in given list to be nested")
    if layout_of(first) == strided and dim < 0:  # PyTorch wraps it with sizes it lacks
        raise RuntimeError(_NO_SIZES)
    d = _norm_dim(dim, nested_dim(first))
    if d == 0 or (layout_of(first) == jagged and d == ragged_idx_of(first)):
        raise NotImplementedError("cat() of nested tensors along the batch or ragged dim")
    if layout_of(first) == jagged:
        return with_values(first, F.cat([values_of(t) for t in tensors], d - 1))
    parts = zip(*[components(t) for t in tensors])
    return make_strided([F.cat(list(p), d - 1) for p in parts])


# ---- attention -----------------------------------------------------------------------------
@handles("scaled_dot_product_attention")
def _sdpa(func, query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
          scale=None, enable_gqa=False):
    if attn_mask is not None:
        raise NotImplementedError("scaled_dot_product_attention(attn_mask=) on nested "
                                  "tensors")
    if not all(is_nested(t) for t in (query, key, value)):
        raise ValueError("scaled_dot_product_attention(): If one of query, key, or value is "
                         "a NestedTensor, they must all be NestedTensors")
    outs = [func(q, k, v, dropout_p=dropout_p, is_causal=is_causal, scale=scale,
                 enable_gqa=enable_gqa)
            for q, k, v in zip(components(query), components(key), components(value))]
    if layout_of(query) == strided:
        return make_strided(outs)
    return like(query, outs)

