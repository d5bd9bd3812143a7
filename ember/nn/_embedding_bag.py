"""``torch.embedding_bag``: ATen's form of ``F.embedding_bag`` (``ember.nn._toplevel``
re-exports it). It takes ``mode`` as an int (0 sum, 1 mean, 2 max) and returns ATen's four
tensors: the output, then the bookkeeping its backward uses, reproduced as PyTorch's CPU
kernel fills it (``offset2bag``: each index's bag, empty where the sum kernel's fast path
runs; ``bag_size``: each bag's count of non-padding indices, zeros in sum mode;
``max_indices``: in max mode the weight row giving each maximum, else ``bag_size``'s
values)."""
from __future__ import annotations

from .. import _creation
from .._tensor import Tensor
from ..autograd.batching import hooks as _batching
from ..autograd.grad_mode import no_grad
from ..backend import dtypes
from .functional import _sparse
from . import functional as F

_MODES = ("sum", "mean", "max")
_FAST_DTYPES = (dtypes.float32, dtypes.float16, dtypes.bfloat16)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """ATen's ``embedding_bag``: ``(output, offset2bag, bag_size, max_indices)``, the
    output being ``F.embedding_bag(indices, weight, offsets, mode=...)``'s.

    >>> import ember
    >>> w = ember.arange(6.0).reshape(3, 2)
    >>> out, offset2bag, bag_size, max_indices = ember.embedding_bag(
    ...     w, ember.tensor([0, 2, 1]), ember.tensor([0, 1]), False, 1)
    >>> out, offset2bag, bag_size
    (tensor([[0., 1.],
            [3., 4.]]), tensor([0, 1, 1]), tensor([1, 2]))
    """
    if not isinstance(mode, int) or isinstance(mode, bool):
        raise TypeError(f"embedding_bag(): argument 'mode' (position 5) must be int, not "
                        f"{type(mode).__name__}")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    if not isinstance(offsets, Tensor):
        raise TypeError(f"embedding_bag(): argument 'offsets' (position 3) must be Tensor, not "
                        f"{type(offsets).__name__}")
    if indices.dim() != 1:
        raise NotImplementedError("ember's torch.embedding_bag takes 1-D indices with offsets "
                                  "(use F.embedding_bag for bags as rows of a 2-D input)")
    if per_sample_weights is not None and mode != 0:
        raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
    if scale_grad_by_freq:
        raise NotImplementedError("ember does not implement scale_grad_by_freq for "
                                  "embedding_bag")
    output = F.embedding_bag(indices, weight, offsets, mode=_MODES[mode], sparse=sparse,
                             per_sample_weights=per_sample_weights,
                             include_last_offset=include_last_offset, padding_idx=padding_idx)
    with no_grad():
        aux = _bookkeeping(weight, indices, offsets, mode, per_sample_weights,
                           include_last_offset, padding_idx)
    return (output,) + tuple(t.to(indices.dtype) for t in aux)  # (int32 indices: int32)


def _bookkeeping(weight, indices, offsets, mode, per_sample_weights, include_last_offset,
                 padding_idx):
    """offset2bag, bag_size, max_indices as PyTorch's CPU kernel returns them."""
    num_bags, bag_of, inside = _sparse._bag_of_each_entry(indices, offsets, include_last_offset)
    padding = _sparse._bag_padding_idx(padding_idx, weight.size(0))
    kept = inside if padding is None else inside & (indices != padding)
    # PyTorch's sum kernel for row-major float32/float16/bfloat16 weights with no padding
    # index (its fast path) fills no offset2bag
    fast = weight.dtype in _FAST_DTYPES and weight.stride(1) == 1 and padding_idx is None
    offset2bag = indices.new_zeros(0, dtype=bag_of.dtype) if mode == 0 and fast else bag_of
    if mode == 0:
        # one zero per offset, or per bag when a gradient is wanted (PyTorch's two kernels)
        wanted = weight.requires_grad or (per_sample_weights is not None
                                          and per_sample_weights.requires_grad)
        zeros = offsets.new_zeros(num_bags if wanted else offsets.numel(), dtype=bag_of.dtype)
        return offset2bag, zeros, zeros.clone()
    kept_at = kept.nonzero().reshape(-1)
    bag_size = bag_of.index_select(0, kept_at).bincount(minlength=num_bags)
    if mode == 1:
        return offset2bag, bag_size, bag_size.clone()
    return offset2bag, bag_size, _max_rows(weight, indices.index_select(0, kept_at).long(),
                                           bag_of.index_select(0, kept_at), num_bags)


def _max_rows(weight, rows, bags, num_bags):
    """Per bag and column, the weight row of the first maximum (0 for an empty bag)."""
    dim = weight.size(1)
    if rows.numel() == 0:
        return rows.new_zeros(num_bags, dim)
    if _batching[0] is None:
        found = _sparse._first_max_rows(weight._data[rows._data], rows._data, bags._data,
                                       num_bags)
        if found is not None:
            return Tensor._make(found[0] * found[1])
    values = weight.detach().index_select(0, rows)
    spread = bags.unsqueeze(1).expand(-1, dim)
    best = values.new_zeros(num_bags, dim).scatter_reduce(0, spread, values, "amax",
                                                          include_self=False)
    order = _creation.beside(_creation.arange(rows.numel()), rows).unsqueeze(1).expand(-1, dim)
    # the first position holding each bag's maximum (ATen keeps the first of equal values)
    candidate = order.masked_fill(values != best.index_select(0, bags), rows.numel())
    first = candidate.new_full((num_bags, dim), rows.numel()).scatter_reduce(
        0, spread, candidate, "amin")
    found = first < rows.numel()
    picked = rows.index_select(0, first.clamp(max=rows.numel() - 1).reshape(-1))
    return picked.reshape(num_bags, dim) * found


__all__ = ["embedding_bag"]
