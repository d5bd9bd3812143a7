"""ATen-level functional forms with no op of their own: ``segment_reduce`` (composed of
``searchsorted`` and ``scatter_reduce``, so its gradients are theirs: ties of a max share the
gradient, a product's zeros get the product of the others) and the control-flow operators
``cond`` and ``while_loop``, run eagerly (PyTorch compiles them; eager code sees the same
results)."""
from __future__ import annotations

from typing import Any, Callable

from .._creation import arange, beside, full
from .._tensor import Tensor, _wrap_dim
from .sets import searchsorted
from .shape import cat
from ..backend import dtypes as _dtypes
from ..backend.meta import is_meta

__all__ = ["segment_reduce", "cond", "while_loop"]

_REDUCES = {"sum": "sum", "mean": "mean", "prod": "prod", "max": "amax", "amax": "amax",
            "min": "amin", "amin": "amin"}
_INDEX_DTYPES = (_dtypes.int32, _dtypes.int64)


def _offsets_of(data, lengths, offsets, axis, unsafe):
    """The (*batch, segments + 1) offsets of the segments, from ``lengths`` or ``offsets``
    (checked as PyTorch does, except on meta tensors, whose values are unknown)."""
    given, kernel = (lengths, "lengths") if lengths is not None else (offsets, "offsets")
    if given.dtype not in _INDEX_DTYPES:
        raise NotImplementedError(f'"_segment_reduce_{kernel}_cpu_kernel1" not implemented '
                                  f"for '{given.dtype.scalar_name}'")
    if given.numel() == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == "
                           "0. Specify the reduction dim with the 'dim' argument.")
    if axis != given.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of "
                           f"{kernel} but got {axis}.")
    if tuple(given.shape[:-1]) != tuple(data.shape[:axis]):
        raise RuntimeError(f"segment_reduce(): Expected the leading dims of {kernel} "
                           f"{list(given.shape)} to be those of data {list(data.shape)}")
    given = given.long()
    check = not is_meta(given._data)
    if lengths is not None:
        if check and bool((given < 0).any()):
            raise RuntimeError("lengths contains negative value!")
        if check and not unsafe and bool((given.sum(-1) != data.shape[axis]).any()):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to "
                               "sum to data.size(lengths.dim()-1) when !unsafe.")
        zero = given.new_zeros(tuple(given.shape[:-1]) + (1,))
        return cat([zero, given.cumsum(-1)], -1)
    if check and bool((given[..., 1:] < given[..., :-1]).any()):
        raise RuntimeError("Expected segment_length >= 0 to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    return given


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None,
                   axis: int = 0, unsafe: bool = False, initial: Any = None) -> Tensor:
    """Reduce ``data`` along ``axis`` in consecutive segments given by ``lengths`` (or by
    ``offsets``: segment i is ``[offsets[i], offsets[i + 1])``); ``reduce`` 'sum', 'mean',
    'prod', 'max' or 'min' ('amax'/'amin'). An empty segment gives ``initial`` if given,
    else 0, nan, 1, -inf or inf; ``initial`` also joins every other segment's reduction.

    >>> import ember
    >>> ember.segment_reduce(ember.tensor([1., 2., 3., 4.]), "sum", lengths=ember.tensor([1, 0, 3]))
    tensor([1., 0., 9.])
    """
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if reduce not in _REDUCES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if not data.dtype.is_floating_point:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{data.dtype.scalar_name}'")
    axis = _wrap_dim(axis, data.dim())
    bounds = _offsets_of(data, lengths, offsets, axis, unsafe)  # (*batch, segments + 1)
    segments = bounds.shape[-1] - 1
    size = data.shape[axis]
    batch = tuple(data.shape[:axis])
    positions = beside(arange(size), bounds).expand(batch + (size,)).contiguous()
    ids = searchsorted(bounds[..., 1:].contiguous(), positions, right=True)
    # positions before the first offset, or past the last, land in one extra slot, dropped
    outside = (positions < bounds[..., :1]) | (ids >= segments)
    ids = ids.masked_fill(outside, segments)
    trailing = data.dim() - axis - 1
    index = ids.reshape(ids.shape + (1,) * trailing).expand(data.shape)
    out_shape = batch + (segments + 1,) + tuple(data.shape[axis + 1:])
    kind = _REDUCES[reduce]
    if kind in ("sum", "mean"):
        out = data.new_zeros(out_shape).scatter_add(axis, index, data)
    elif kind == "prod":
        out = data.new_ones(out_shape).scatter_reduce(axis, index, data, "prod")
    else:
        empty = float("-inf") if kind == "amax" else float("inf")
        out = full(out_shape, empty, dtype=data.dtype, device=data.device).scatter_reduce(
            axis, index, data, kind, include_self=False)
    out = out.narrow(axis, 0, segments)
    if kind == "mean":
        counts = (bounds[..., 1:] - bounds[..., :-1]).clamp(max=size).to(data.dtype)
        counts = counts.reshape(counts.shape + (1,) * trailing)
        if initial is None:
            return out / counts
        return ((out + initial) / counts).where(counts > 0, out.new_full((), initial))
    if initial is None:
        return out
    if kind == "sum":
        return out + initial
    if kind == "prod":
        return out * initial
    # the initial value takes no gradient, a tie with it included (PyTorch's rule)
    keep = out >= initial if kind == "amax" else out <= initial
    return out.where(keep, out.new_full((), initial))


# ---- eager control flow -----------------------------------------------------------------------
def _leaves(tree, out):
    """The leaves of nested tuples, lists and dicts (dict values in key order), in order."""
    if isinstance(tree, (tuple, list)):
        for item in tree:
            _leaves(item, out)
    elif isinstance(tree, dict):
        for key in tree:
            _leaves(tree[key], out)
    else:
        out.append(tree)
    return out


def _check_pred(pred):
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        return bool(pred)
    if not isinstance(pred, (bool, int, float)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return bool(pred)


def cond(pred: bool | int | float | Tensor, true_fn: Callable, false_fn: Callable,
         operands: tuple | list = ()) -> Any:
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; ``pred`` a Python
    bool/number or a one-element tensor. With a tensor ``pred`` the operands must be a
    tuple or list of tensors (nested tuples, lists, dicts of them) and so must the result.

    >>> import ember
    >>> ember.cond(ember.tensor(True), lambda x: x + 1, lambda x: x - 1, (ember.ones(2),))
    tensor([2., 2.])
    """
    if isinstance(pred, (bool, int, float)):  # a constant: PyTorch just runs one branch
        return true_fn(*operands) if pred else false_fn(*operands)
    taken = _check_pred(pred)
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or \
            not all(isinstance(t, Tensor) for t in _leaves(operands, [])):
        raise RuntimeError(f"Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    result = true_fn(*operands) if taken else false_fn(*operands)
    if not all(isinstance(t, Tensor) for t in _leaves(result, [])):
        raise RuntimeError(f"Expected the branches of cond to return tensors (possibly nested "
                           f"in tuples, lists or dicts), but got {result}.")
    return result


def _rebuild(tree, leaves):
    """``tree``'s structure with ``leaves`` (an iterator) in place of its leaves."""
    if isinstance(tree, (tuple, list)):
        return type(tree)(_rebuild(item, leaves) for item in tree)
    if isinstance(tree, dict):
        return {key: _rebuild(tree[key], leaves) for key in tree}
    return next(leaves)


def _same_meta(new, old, k):
    if isinstance(old, Tensor):
        if not isinstance(new, Tensor) or new.dtype != old.dtype or new.shape != old.shape \
                or new.device != old.device:
            raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same "
                               f"metadata but found: pair[{k}] differ: {_meta(new)} vs "
                               f"{_meta(old)}")
    elif isinstance(new, Tensor) and (new.dim() != 0 or new.dtype.is_floating_point):
        raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same metadata "
                           f"but found: pair[{k}] differ: {_meta(new)} vs int")


def _meta(t):
    if isinstance(t, Tensor):
        return f"Tensor(size={list(t.shape)}, dtype={t.dtype})"
    return type(t).__name__


def while_loop(cond_fn: Callable, body_fn: Callable, carried_inputs: tuple | list) -> Any:
    """Run ``carried = body_fn(*carried)`` while ``cond_fn(*carried)`` holds and return the
    last body result (``carried_inputs`` if the body never ran). The carried values are
    tensors or ints (nested tuples, lists, dicts of them); each body result must have the
    same number of them, each tensor of the same shape, dtype and device.

    >>> import ember
    >>> ember.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
    ...                  (ember.tensor(0), ember.ones(2)))
    (tensor(3), tensor([8., 8.]))
    """
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    flat = _leaves(carried_inputs, [])
    if not all(isinstance(t, (Tensor, int)) for t in flat):
        raise RuntimeError(f"Expect carried_inputs to be a tuple of possibly nested "
                           f"dict/list/tuple that onlyconsists of tensor or int leaves, but "
                           f"got {carried_inputs}.")
    carried, result = carried_inputs, carried_inputs
    while _check_pred(cond_fn(*carried)):
        result = body_fn(*carried)
        new = _leaves(result, [])
        if len(new) != len(flat):
            raise RuntimeError(f"Expected body_fn_output and carried_inputs to have same "
                               f"number of outputs but got lhs:{len(new)} and "
                               f"rhs:{len(flat)} outputs")
        for k, (a, b) in enumerate(zip(new, flat)):
            _same_meta(a, b, k)
        carried = _rebuild(carried_inputs, iter(new))
    return result
