"""``F.embedding`` and ``F.embedding_bag``: look rows of ``weight`` up by index (and
reduce them per bag)."""
from ... import _creation, _functions as _fn
from ...autograd.grad_mode import no_grad
from ..._ops import embedding_ops as _emb
from ...autograd.batching import hooks as _batching
from ...backend import get_array_module
from ...backend.meta import is_meta
from ..._tensor import Tensor
from ..._sparse.embedding import SparseEmbedding


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """``weight[input]``; the row ``padding_idx`` gets no gradient; with ``max_norm`` the
    referenced rows are renormalized in place first (as PyTorch does)."""
    if padding_idx is not None:
        num = weight.size(0)
        if padding_idx > 0:
            assert padding_idx < num, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num, "Padding_idx must be within num_embeddings"
            padding_idx = num + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        with no_grad():
            _emb.embedding_renorm_(weight, input, max_norm, norm_type)
    if sparse:  # the weight's gradient: a sparse tensor of the rows looked up
        return SparseEmbedding.apply(weight, input, padding_idx, scale_grad_by_freq)
    return _emb.Embedding.apply(weight, input, padding_idx, scale_grad_by_freq)


def _bag_checks(input, weight, offsets, mode, per_sample_weights, scale_grad_by_freq,
                sparse):
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(
            f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {type(offsets)}")
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if scale_grad_by_freq:
        # PyTorch's CPU kernel scales each row's gradient by a count that is not always
        # that row's frequency; ember does not imitate it.
        raise NotImplementedError("ember does not implement scale_grad_by_freq for "
                                  "embedding_bag")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")


def _bag_of_each_entry(input, offsets, include_last_offset):
    """(number of bags, the bag of each entry of the flattened input (int64 tensor), whether
    each entry lies inside a bag), with PyTorch's checks of the offsets."""
    total = input.numel()
    positions = _creation.beside(_creation.arange(total), input)
    if input.dim() == 2:
        rows, width = input.shape
        if not width:
            return rows, positions, positions >= 0
        return rows, positions // width, positions >= 0
    starts = offsets.long()
    if starts.numel():
        first, last = int(starts[0]), int(starts[-1])
        if first != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               "mini-batch has to start from position 0. However, got "
                               f"{first}")
        if last > total:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {total} "
                               f"but got offsets[-1] of {last}")
        if bool((starts[1:] < starts[:-1]).any()):
            raise RuntimeError("offsets has to be a non-decreasing sequence")
    bags = starts.numel() - 1 if include_last_offset else starts.numel()
    bag_of = _fn.searchsorted(starts, positions, right=True) - 1
    inside = (bag_of >= 0) & (bag_of < bags)
    if include_last_offset and starts.numel():
        inside = inside & (positions < int(starts[-1]))
    return max(bags, 0), bag_of, inside


def _bag_padding_idx(padding_idx, num):
    if padding_idx is None:
        return None
    if not -num <= padding_idx < num:
        raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                           f"through {num - 1}, but got {padding_idx}")
    return padding_idx % num


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """Sum, mean or max of the embedding rows of each bag, without the intermediate
    ``(N, D)`` result surviving. Bags are the rows of a 2-D ``input``, or the slices of a
    1-D ``input`` that start at ``offsets``; entries equal to ``padding_idx`` are left out
    (an empty bag gives zeros); ``per_sample_weights`` scales each entry (mode ``'sum'``).

    >>> import ember, ember.nn.functional as F
    >>> w = ember.arange(8.0).reshape(4, 2)
    >>> F.embedding_bag(ember.tensor([0, 1, 3]), w, ember.tensor([0, 2]), mode="sum")
    tensor([[2., 4.],
            [6., 7.]])
    """
    _bag_checks(input, weight, offsets, mode, per_sample_weights, scale_grad_by_freq, sparse)
    num, dim = weight.shape
    padding_idx = _bag_padding_idx(padding_idx, num)
    flat = input.reshape(-1)
    if input.dtype.name not in ("int64", "int32"):
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {input.type()} "
                           "instead (while checking arguments for embedding_bag)")
    bad = (flat < 0) | (flat >= num)
    if bool(bad.any()):
        position = int(bad.nonzero()[0, 0])
        raise RuntimeError(f"Index {position} of input takes value {int(flat[position])} which "
                           f"is not in the valid range [0, {num})")
    num_bags, bag_of, kept = _bag_of_each_entry(input, offsets, include_last_offset)
    if max_norm is not None:
        with no_grad():
            _emb.embedding_renorm_(weight, flat.contiguous(), max_norm, norm_type)
    if padding_idx is not None:  # the entries that count: inside a bag and not padding
        kept = kept & (flat != padding_idx)
    kept_index = kept.nonzero().reshape(-1).to(flat.dtype)
    bag_of = bag_of.index_select(0, kept_index.long())
    if mode == "max":
        fast = _bag_max_by_rows(weight, flat.index_select(0, kept_index), bag_of, num_bags)
        if fast is not None:
            return fast
    lookup = SparseEmbedding if sparse else _emb.Embedding  # sparse: a sparse weight gradient
    rows = lookup.apply(weight, flat.index_select(0, kept_index),
                        -1 if padding_idx is None else padding_idx, scale_grad_by_freq)
    if mode == "max":
        return _bag_max(rows, bag_of, num_bags, weight)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1).index_select(0, kept_index).unsqueeze(1)
    out = weight.new_zeros(num_bags, dim).index_add(0, bag_of, rows)
    if mode == "mean":
        counts = _fn.bincount(bag_of, minlength=num_bags).clamp(min=1)
        out = out / counts.to(out.dtype).unsqueeze(1)
    return out


def _first_max_rows(values, entries, bag_of, num_bags):
    """Per bag and column, the weight row (``entries``: each entry's row) of the bag's first
    maximum among ``values`` (each entry's row, (N, D)), and whether the bag has one (False
    for an empty bag); arrays. A NaN is passed over, unless it opens the bag (ATen's
    running maximum compares with ``>``). ``bag_of`` must be non-decreasing (bags
    of consecutive entries): each bag is one segment of ``reduceat``, far cheaper than a
    scatter of every element. None where the array module has no ``reduceat``."""
    xp = get_array_module(values)
    reduceat = getattr(xp.maximum, "reduceat", None)
    if reduceat is None or is_meta(values):
        return None
    n, dim = values.shape
    counts = xp.bincount(bag_of, minlength=num_bags)
    nonempty = xp.flatnonzero(counts)
    starts = (xp.cumsum(counts) - counts)[nonempty]
    nan = values != values
    lead_nan = None
    if nan.any():  # ATen's running maximum skips a NaN, unless the bag starts with one
        values = xp.where(nan, -xp.inf, values)
        lead_nan = nan[starts]
    best = reduceat(values, starts, axis=0)
    at_best = values == xp.repeat(best, counts[nonempty], axis=0)
    candidate = xp.where(at_best, xp.arange(n)[:, None], n)
    first = xp.minimum.reduceat(candidate, starts, axis=0)  # ATen keeps the first of equals
    if lead_nan is not None:
        first = xp.where(lead_nan, starts[:, None], first)
    rows = xp.zeros((num_bags, dim), dtype=entries.dtype)
    filled = xp.zeros((num_bags, dim), dtype=bool)
    rows[nonempty] = entries[xp.minimum(first, n - 1)]
    filled[nonempty] = first < n
    return rows, filled


def _bag_max_by_rows(weight, entries, bag_of, num_bags):
    """``_bag_max`` as one gather from ``weight`` at each maximum's row: its gradient goes
    straight to those rows (no (N, D) gradient of the looked-up rows), or None where
    ``_first_max_rows`` does not apply (vmap too: the rows come from the bare arrays)."""
    if _batching[0] is not None or entries.numel() == 0:
        return None
    w, ent = weight._data, entries._data
    found = _emb.bag_max_rows(w, ent, bag_of._data, num_bags)  # compiled, where it applies
    if found is None:
        found = _first_max_rows(w[ent], ent, bag_of._data, num_bags)
    if found is None:
        return None
    rows, filled = (Tensor._make(a) for a in found)
    return weight.gather(0, rows).masked_fill(~filled, 0.0)  # not a product: -0.0 would show


def _bag_max(rows, bag_of, num_bags, weight):
    """Per bag, the element-wise max of its rows; the gradient goes to the first row holding
    it (as PyTorch's kernel, which keeps the first of equal values); empty bags give 0."""
    dim = weight.size(1)
    if rows.size(0) == 0:
        return weight.new_zeros(num_bags, dim)
    with no_grad():
        plain = rows.detach()
        spread = bag_of.unsqueeze(1).expand(-1, dim)
        best = plain.new_zeros(num_bags, dim).scatter_reduce(0, spread, plain, "amax",
                                                               include_self=False)
        positions = _creation.beside(_creation.arange(rows.size(0)), bag_of)
        positions = positions.unsqueeze(1).expand(-1, dim)
        candidate = _fn.where(plain == best.index_select(0, bag_of), positions, rows.size(0))
        first = candidate.new_full((num_bags, dim), rows.size(0)).scatter_reduce(
            0, spread, candidate, "amin")
        filled = first < rows.size(0)
    picked = rows.gather(0, first.clamp(max=rows.size(0) - 1))
    return picked.masked_fill(~filled, 0.0)  # not a product: -0.0 would show


__all__ = ["embedding", "embedding_bag"]
