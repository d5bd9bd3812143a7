"""What nested tensors answer about themselves: metadata, autograd, printing, unbinding,
padding and copies (the ops are in ``ops.py``). ``NestedTensor.__torch_function__`` routes
each call here by name; a handler takes the public function first, then the call's
arguments as that function got them.
"""
from __future__ import annotations

from .._torch_function import registrar
from .. import _functions as F
from .._creation import full, tensor as _tensor, zeros_like
from .._tensor import Size, Tensor, _wrap_dim
from ..autograd.backprop import backward as _backward
from ..backend.dtypes import get_default_dtype, int64
from .tensor import (HANDLERS, _ScaledNestedInt, batch_size, bounds_of,
                     components, first_tensor, is_nested, jagged, layout_of, lengths_of,
                     like, make_strided, nested_dim, nested_shape,
                     no_jagged_kernel, no_nested_kernel, offsets_of, ragged_idx_of, strided,
                     values_of, with_values)

_NO_SIZES = "Internal error: NestedTensorImpl doesn't support sizes. Please file an issue."
_NO_STRIDES = "Internal error: NestedTensorImpl doesn't support strides. Please file an issue."


handles = registrar(HANDLERS)


def map_nested(nt, fn):
    """``fn`` on each component (strided) or on the values (jagged): for ops that keep
    every element where it is (elementwise, along non-ragged dims)."""
    if layout_of(nt) == jagged:
        return with_values(nt, fn(values_of(nt)))
    return make_strided([fn(c) for c in components(nt)])


# ---- metadata ----------------------------------------------------------------------------
@handles("shape")
def _shape(func, nt):
    if layout_of(nt) == strided:
        raise RuntimeError(_NO_SIZES)
    return Size(nested_shape(nt))


@handles("size")
def _size(func, nt, dim=None):
    if dim is None:
        return _shape(func, nt)
    shape = nested_shape(nt)
    dim = _wrap_dim(dim, len(shape))
    size = shape[dim]
    if size is None:
        raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
    return size


@handles("dim", "ndimension", "ndim")
def _dim(func, nt):
    return nested_dim(nt)


@handles("numel", "nelement")
def _numel(func, nt):
    return sum(c.numel() for c in components(nt))


@handles("__len__")
def _len(func, nt):
    if layout_of(nt) == strided:
        raise RuntimeError(_NO_SIZES)
    return batch_size(nt)


@handles("dtype")
def _dtype(func, nt):
    t = first_tensor(nt)
    return t.dtype if t is not None else get_default_dtype()


@handles("device")
def _device(func, nt):
    t = first_tensor(nt)
    return t.device if t is not None else full((), 0).device


@handles("is_cuda", "is_cpu", "is_floating_point", "is_complex", "element_size", "itemsize",
         "is_meta")
def _of_first(func, nt, *args, **kwargs):
    t = first_tensor(nt)
    return func(t if t is not None else full((), 0.0), *args, **kwargs)


@handles("layout")
def _layout(func, nt):
    return layout_of(nt)


@handles("is_nested")
def _is_nested(func, nt):
    return True


@handles("is_sparse")
def _is_sparse(func, nt):
    return False


@handles("is_contiguous")
def _is_contiguous(func, nt, memory_format=None):
    if layout_of(nt) == jagged:
        return lengths_of(nt) is None and values_of(nt).is_contiguous()
    return all(c.is_contiguous() for c in components(nt))


@handles("stride")
def _stride(func, nt, dim=None):
    if layout_of(nt) == strided:
        raise RuntimeError(_NO_STRIDES)
    values = values_of(nt)
    r = ragged_idx_of(nt)
    batch = _ScaledNestedInt(nested_shape(nt)[r], values.stride(r - 1))
    strides = (batch,) + tuple(values.stride())
    return strides if dim is None else strides[dim]


@handles("values")
def _values(func, nt):
    if layout_of(nt) != jagged:
        raise RuntimeError("values expected sparse tensor layout but got Strided")
    return values_of(nt)


@handles("offsets")
def _offsets(func, nt):
    return offsets_of(nt)


@handles("lengths")
def _lengths(func, nt):
    return lengths_of(nt)


@handles("_nested_tensor_size")
def _nested_tensor_size(func, nt):
    if layout_of(nt) == jagged:
        raise no_jagged_kernel("_nested_tensor_size")
    return F.stack([_tensor(list(c.shape), dtype=int64) for c in components(nt)]) \
        if components(nt) else full((0, 0), 0, dtype=int64)


# ---- autograd: the components (strided) or the values (jagged) carry it -------------------
def _carriers(nt):
    return [values_of(nt)] if layout_of(nt) == jagged else components(nt)


@handles("requires_grad")
def _requires_grad(func, nt):
    return any(c.requires_grad for c in _carriers(nt))


@handles("is_leaf")
def _is_leaf(func, nt):
    return all(c.is_leaf for c in _carriers(nt))


@handles("grad_fn")
def _grad_fn(func, nt):
    return next((c.grad_fn for c in _carriers(nt) if c.grad_fn is not None), None)


@handles("grad")
def _grad(func, nt):
    if layout_of(nt) == jagged:
        g = values_of(nt).grad
        return None if g is None else with_values(nt, g)
    grads = [c.grad for c in components(nt)]
    if all(g is None for g in grads):
        return None
    return make_strided([zeros_like(c) if g is None else g
                         for c, g in zip(components(nt), grads)])


@handles("requires_grad_")
def _requires_grad_(func, nt, requires_grad=True):
    for c in _carriers(nt):
        c.requires_grad_(requires_grad)
    return nt


@handles("retain_grad")
def _retain_grad(func, nt):
    for c in _carriers(nt):
        c.retain_grad()


@handles("backward")
def _backward_handler(func, nt, gradient=None, retain_graph=None, create_graph=False,
                      inputs=None):
    if gradient is None:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if not is_nested(gradient):
        raise RuntimeError("Expected both self and other to be nested, but got a nested self "
                           "and non-nested other")
    outs, grads = _carriers(nt), _carriers(gradient)
    if layout_of(nt) != layout_of(gradient):
        outs, grads = components(nt), components(gradient)
    _backward(outs, grads, retain_graph=retain_graph, create_graph=create_graph,
              inputs=inputs)


@handles("detach")
def _detach(func, nt):
    return map_nested(nt, lambda t: t.detach())


@handles("data")
def _data(func, nt):
    return _detach(func, nt)


# ---- printing ------------------------------------------------------------------------------
@handles("__repr__", "__str__")
def _repr(func, nt, *args, **kwargs):
    grad_fn = _grad_fn(None, nt)
    if layout_of(nt) == jagged:
        shape = ", ".join(str(s) for s in nested_shape(nt))
        text = f"NestedTensor(size=({shape}), offsets={offsets_of(nt)!r}"
        if grad_fn is not None:
            text += f", grad_fn=<{type(grad_fn).__name__} object at {hex(id(grad_fn))}>"
        elif _requires_grad(None, nt):
            text += ", requires_grad=True"
        return text + f", contiguous={_is_contiguous(None, nt)})"
    requires_grad = _requires_grad(None, nt)
    parts = []
    for c in components(nt):
        shown = c.detach()  # printed as PyTorch's, which marks each one requires_grad
        body = repr(shown.requires_grad_(True) if requires_grad else shown)
        parts.append("  " + body.replace("\n", "\n  "))
    inner = ",\n".join(parts) if parts else ""
    tail = ""
    if grad_fn is not None:
        tail = f", grad_fn=<{type(grad_fn).__name__}>"
    elif requires_grad:
        tail = ", requires_grad=True"
    return f"nested_tensor([\n{inner}\n]{tail})"


@handles("__format__")
def _format(func, nt, spec):
    return format(_repr(func, nt), spec)


# ---- structure -----------------------------------------------------------------------------
@handles("unbind")
def _unbind(func, nt, dim=0):
    if dim != 0:
        if layout_of(nt) == jagged:
            raise RuntimeError("unbind(): only supported for NestedTensor on dim=0")
        raise RuntimeError(f"NestedTensor can only be unbound along dimension 0 got "
                           f"dimension {dim} instead.")
    comps = components(nt)
    if layout_of(nt) == strided:  # views, as PyTorch's (never the leaves themselves)
        comps = [c.view(c.shape) for c in comps]
    return tuple(comps)


@handles("__getitem__")
def _getitem(func, nt, index):
    if isinstance(index, int):
        comps = components(nt)
        return _unbind(func, nt)[index] if -len(comps) <= index < len(comps) else comps[index]
    if layout_of(nt) == strided:
        if isinstance(index, tuple) and any(isinstance(i, int) for i in index):
            raise RuntimeError(_NO_SIZES)  # PyTorch wraps the int with sizes it lacks
        raise no_nested_kernel("slice.Tensor")
    first = index[0] if isinstance(index, tuple) and index else index
    if isinstance(first, slice):
        raise RuntimeError("slice(): not supported for NestedTensor on dim=0")
    raise NotImplementedError("nested tensor indexing other than by one integer")


def _pad_to(t: Tensor, sizes, padding) -> Tensor:
    """``t`` grown to ``sizes`` by ``padding`` after its end on each dim (a chain of cats,
    so differentiable)."""
    for d, size in enumerate(sizes):
        short = size - t.shape[d]
        if short > 0:
            fill_shape = list(t.shape)
            fill_shape[d] = short
            t = F.cat([t, full(fill_shape, padding, dtype=t.dtype, device=t.device)], d)
    return t


@handles("to_padded_tensor")
def to_padded_tensor(func, nt, padding, output_size=None):
    """The dense ``(B, *max sizes)`` tensor of ``nt``, shorter components padded."""
    if layout_of(nt) == jagged and lengths_of(nt) is not None:
        raise RuntimeError("to_padded_tensor(): not supported for nested tensors with holes")
    comps = components(nt)
    if layout_of(nt) == jagged:
        r = ragged_idx_of(nt)
        sizes = list(values_of(nt).shape)
        sizes[r - 1] = max((n for _, n in bounds_of(nt)), default=0)
        if output_size is not None:
            sizes[r - 1] = max(sizes[r - 1], int(output_size[r]))
        return F.stack([_pad_to(c, sizes, padding) for c in comps]) if comps else \
            full([0] + sizes, padding, dtype=values_of(nt).dtype)
    if not comps:
        return full((0,), padding)
    sizes = [max(c.shape[d] for c in comps) for d in range(comps[0].dim())]
    if output_size is not None:
        out = [int(s) for s in output_size]
        if len(out) != len(sizes) + 1:
            raise RuntimeError("Length of output_size does not match NestedTensor dims. "
                               "Broadcasting is not supported.")
        if out[0] < len(comps) or any(o < s for o, s in zip(out[1:], sizes)):
            raise RuntimeError("Value in output_size is less than NestedTensor padded size. "
                               "Truncation is not supported.")
        sizes = out[1:]
        stacked = F.stack([_pad_to(c, sizes, padding) for c in comps])
        return _pad_to(stacked, [out[0]] + sizes, padding)
    return F.stack([_pad_to(c, sizes, padding) for c in comps])


@handles("clone")
def _clone(func, nt, *, memory_format=None):
    if layout_of(nt) == jagged and lengths_of(nt) is not None:
        return like(nt, [c.clone() for c in components(nt)])
    return map_nested(nt, lambda t: t.clone())


@handles("contiguous")
def _contiguous(func, nt, memory_format=None):
    if _is_contiguous(func, nt):
        return nt
    return like(nt, [c.contiguous() for c in components(nt)]) if layout_of(nt) == jagged \
        else map_nested(nt, lambda t: t.contiguous())


@handles("to", "double", "float", "half", "bfloat16", "long", "int", "bool", "cpu", "cuda",
         "type_as")
def _to(func, nt, *args, **kwargs):
    if args and is_nested(args[0]):  # to(other) / type_as(other)
        other = first_tensor(args[0])
        args = (other,) + args[1:]
    return map_nested(nt, lambda t: func(t, *args, **kwargs))


@handles("zeros_like", "ones_like", "empty_like", "rand_like", "randn_like", "full_like")
def _like(func, nt, *args, **kwargs):
    if func.__name__ == "empty_like" and layout_of(nt) == strided:
        raise RuntimeError(_NO_SIZES)
    return map_nested(nt, lambda t: func(t, *args, **kwargs))


@handles("__deepcopy__")
def _deepcopy(func, nt, memo):
    if id(nt) not in memo:
        copy = map_nested(nt, lambda t: t.detach().clone())
        memo[id(nt)] = copy.requires_grad_(_requires_grad(func, nt))
    return memo[id(nt)]


@handles("item")
def _item(func, nt):
    n = _numel(func, nt)
    if n != 1:
        raise RuntimeError(f"a Tensor with {n} elements cannot be converted to Scalar")
    return components(nt)[0].item()


@handles("tolist")
def _tolist(func, nt):
    if layout_of(nt) == jagged:
        raise RuntimeError(".tolist() is not supported for tensor subclasses, got NestedTensor")
    raise RuntimeError(_NO_STRIDES)


@handles("numpy")
def _numpy(func, nt, *, force=False):
    if layout_of(nt) == jagged:
        raise RuntimeError(".numpy() is not supported for tensor subclasses.")
    raise RuntimeError(_NO_SIZES)


@handles("__hash__")
def _hash(func, nt):
    return id(nt)

