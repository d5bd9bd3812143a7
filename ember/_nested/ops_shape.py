"""More nested-tensor ops: views of the non-ragged dims (``unflatten``, ``flatten``,
``view``/``reshape``, ``permute``, ``select``, ``squeeze``) and the reductions other than
``sum``/``mean`` (``amax``, ``max``, ``argmax``, ``prod``, ``any``, ``all``, ...), with
PyTorch's support per layout and its errors.
"""
from __future__ import annotations

from .._tensor import _wrap_dim as _norm_dim
from .. import _functions as F
from .handlers import handles
from .tensor import (batch_size, components, jagged, layout_of, make_strided, nested_dim,
                     nested_shape, no_nested_kernel, ragged_idx_of, strided, values_of,
                     with_values)

_NO_SIZES = "Internal error: NestedTensorImpl doesn't support sizes. Please file an issue."


def _shape_text(nt):
    return "(" + ", ".join(str(s) for s in nested_shape(nt)) + ")"


@handles("unflatten")
def _unflatten(func, nt, dim, sizes):
    if layout_of(nt) == strided:
        raise RuntimeError(_NO_SIZES)
    d, r = _norm_dim(dim, nested_dim(nt)), ragged_idx_of(nt)
    if d in (0, r):
        raise RuntimeError("unflatten(): not supported for NestedTensor on the batch or ragged "
                           "dim")
    new_r = r + len(sizes) - 1 if d < r else r
    return with_values(nt, values_of(nt).unflatten(d - 1, sizes), new_r)


@handles("flatten")
def _flatten(func, nt, start_dim=0, end_dim=-1):
    if layout_of(nt) == strided:
        raise RuntimeError(_NO_SIZES)
    n = nested_dim(nt)
    s, e, r = _norm_dim(start_dim, n), _norm_dim(end_dim, n), ragged_idx_of(nt)
    if s == e:
        return nt
    if s <= r <= e or s == 0:
        raise RuntimeError("flatten(): not supported for NestedTensor on ragged dim")
    new_r = r - (e - s) if e < r else r
    return with_values(nt, values_of(nt).flatten(s - 1, e - 1), new_r)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = tuple(shape[0])
    return list(shape)


@handles("view", "reshape")
def _view(func, nt, *shape):
    shape = _shape_args(shape)
    name = func.__name__
    if layout_of(nt) == strided:
        if not shape or shape[0] != batch_size(nt):
            raise RuntimeError(f"{name}: For now nested {name} cannot change or infer the "
                               f"implicit batch dimension")
        rest, outs = shape[1:], []
        for c in components(nt):
            try:
                outs.append(getattr(c, name)(rest))
            except RuntimeError:
                raise RuntimeError(f"shape '{[int(s) for s in shape]}' is invalid for input of "
                                   f"size {c.numel()}") from None
        return make_strided(outs)
    r, j = ragged_idx_of(nt), nested_shape(nt)[ragged_idx_of(nt)]
    if (r != 1 or len(shape) < 2 or shape[0] != batch_size(nt)
            or not (shape[1] is j or shape[1] == -1) or -1 in shape[2:]):
        raise RuntimeError(f"view(): cannot view shape {_shape_text(nt)} as "
                           f"{[str(s) for s in shape]}".replace("'", ""))
    values = values_of(nt)
    return with_values(nt, getattr(values, name)([values.shape[0]] + shape[2:]))


@handles("permute")
def _permute(func, nt, *dims):
    dims = _shape_args(dims)
    if layout_of(nt) == strided:
        raise RuntimeError(_NO_SIZES)
    n = nested_dim(nt)
    dims = [_norm_dim(d, n) for d in dims]
    if dims[0] != 0:
        raise ValueError("Permute is not supported on the batch dimension for jagged NT")
    new_r = dims.index(ragged_idx_of(nt))
    return with_values(nt, values_of(nt).permute([d - 1 for d in dims[1:]]), new_r)


@handles("select")
def _select(func, nt, dim, index):
    n = nested_dim(nt)
    d = _norm_dim(dim, n)
    if d == 0:
        return nt.unbind()[index]
    if layout_of(nt) == strided:
        return make_strided([c.select(d - 1, index) for c in components(nt)])
    r = ragged_idx_of(nt)
    if d == r:
        raise RuntimeError("select(): not supported for NestedTensor on the ragged dim")
    return with_values(nt, values_of(nt).select(d - 1, index), r - 1 if d < r else r)


@handles("squeeze")
def _squeeze(func, nt, dim=None):
    if dim is None:
        if layout_of(nt) == jagged:
            raise NotImplementedError("aten.squeeze.default")
        raise RuntimeError(_NO_SIZES)
    d = _norm_dim(dim, nested_dim(nt))
    if d == 0:
        raise RuntimeError("squeeze(): For nested tensors, squeezing dimension 0 is not "
                           "supported at the moment if you need this feature, please open an "
                           "issue on github describing your use case.")
    if layout_of(nt) == strided:
        return make_strided([c.squeeze(d - 1) for c in components(nt)])
    r = ragged_idx_of(nt)
    if d == r:
        raise RuntimeError("squeeze(): not supported for NestedTensor on the ragged dim")
    values = values_of(nt)
    if values.shape[d - 1] != 1:
        return nt
    return with_values(nt, values.squeeze(d - 1), r - 1 if d < r else r)


# the reductions over one dim other than sum/mean: jagged only (bar all), by torch's names
_STRIDED_NAMES = {"amax": "amax", "amin": "amin", "max": "max.dim", "min": "min.dim",
                  "argmax": "argmax", "argmin": "argmin", "prod": "prod.dim_int",
                  "any": "any.dim", "logsumexp": "logsumexp"}


def _wrap(nt, out, new_r):
    if isinstance(out, tuple):  # max/min: a (values, indices) pair, both nested
        return type(out)(with_values(nt, out.values, new_r), with_values(nt, out.indices, new_r))
    return with_values(nt, out, new_r)


@handles("amax", "amin", "max", "min", "argmax", "argmin", "prod", "any", "all", "logsumexp")
def _reduce_one(func, nt, dim=None, keepdim=False, **kwargs):
    name = func.__name__
    if layout_of(nt) == strided:
        if name in ("max", "min") and isinstance(dim, int) and dim < 0:
            raise RuntimeError(_NO_SIZES)  # PyTorch wraps the dim with sizes it lacks
        if name != "all" or dim is None:
            raise no_nested_kernel(_STRIDED_NAMES.get(name, name) if dim is not None
                                   else name)
        d = _norm_dim(dim, nested_dim(nt))
        return make_strided([c.all(d - 1, keepdim) for c in components(nt)])
    if dim is None:  # over every element: dense
        return func(F.cat(components(nt), ragged_idx_of(nt) - 1), **kwargs)
    if isinstance(dim, (list, tuple)):
        if len(dim) != 1:
            raise NotImplementedError(f"{name}() of a jagged nested tensor over several dims")
        dim = dim[0]
    d, r = _norm_dim(dim, nested_dim(nt)), ragged_idx_of(nt)
    if d == 0:
        raise RuntimeError(f"{name}(): reducing along the batch dimension but not the ragged "
                           f"dimension is not supported for nested tensors")
    if d == r:  # over the ragged dim: one dense row per component
        outs = [func(c, d - 1, keepdim, **kwargs) for c in components(nt)]
        if isinstance(outs[0], tuple):
            return type(outs[0])(F.stack([o.values for o in outs]),
                                 F.stack([o.indices for o in outs]))
        return F.stack(outs)
    out = func(values_of(nt), d - 1, keepdim, **kwargs)
    return _wrap(nt, out, r if keepdim or d > r else r - 1)

