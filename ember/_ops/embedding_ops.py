"""Embedding lookup as one node: ``weight[indices]``; its backward accumulates rows
(repeated indices add up), skips ``padding_idx`` and can scale by inverse frequency."""
import numpy as np

from .primitive import Primitive, devices_differ
from .._tensor import Tensor
from ..backend import get_array_module, kernels
from ..backend.meta import is_meta
from ..backend.dtypes import _BY_NUMPY
from .indexing import add_rows


def _check_indices(indices, num):
    if not isinstance(indices, Tensor):
        raise TypeError(f"embedding(): argument 'indices' (position 1) must be Tensor, not "
                        f"{type(indices).__name__}")
    d = indices._data
    if d.dtype not in (np.int64, np.int32):
        name = _BY_NUMPY[d.dtype].scalar_name
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got torch.{name}Tensor "
                           "instead (while checking arguments for embedding)")
    if d.size and not is_meta(d) and (d.min() < 0 or d.max() >= num):
        raise IndexError("index out of range in self")
    return d


class Embedding(Primitive):
    _backward_name = "EmbeddingBackward0"

    @staticmethod
    def forward(ctx, weight, indices, padding_idx=None, scale_grad_by_freq=False):
        if weight._data.ndim != 2:
            raise RuntimeError("'weight' must be 2-D")
        if type(indices._data) is not type(weight._data) and \
                indices.device != weight.device and "meta" not in (indices.device.type,
                                                                   weight.device.type):
            raise devices_differ(weight.device, indices.device)
        idx = _check_indices(indices, weight._data.shape[0])
        ctx.indices = indices
        ctx.num = weight._data.shape[0]
        ctx.padding_idx = padding_idx
        ctx.scale = scale_grad_by_freq
        return weight._data[idx]

    @staticmethod
    def backward(ctx, grad):
        dim = grad.shape[-1]
        idx = ctx.indices.reshape(-1).long()
        g = grad.reshape(-1, dim)
        keep = None
        if ctx.padding_idx is not None and ctx.padding_idx >= 0:
            keep = idx != ctx.padding_idx
        if ctx.scale:
            counts = get_array_module(idx._data).bincount(idx._data, minlength=ctx.num)[idx._data]
            factor = Tensor._make((1.0 / counts).astype(grad._data.dtype)).unsqueeze(1)
            g = g * factor
        if keep is not None:
            g = g * keep.unsqueeze(1)
        out = grad.new_zeros(ctx.num, dim)
        return out.index_add(0, idx, g), None, None, None

    @staticmethod
    def backward_arrays(ctx, grad):
        if ctx.scale or (ctx.padding_idx is not None and ctx.padding_idx >= 0):
            return (Embedding.backward(ctx, Tensor._make(grad))[0]._data,) + (None,) * 3
        xp = get_array_module(grad)
        out = xp.zeros((ctx.num, grad.shape[-1]), dtype=grad.dtype)
        add_rows(out, ctx.indices._data.reshape(-1), grad.reshape(-1, grad.shape[-1]))
        return out, None, None, None


def embedding_renorm_(weight, indices, max_norm, norm_type):
    """Rescale (in place, no autograd) the rows of ``weight`` that ``indices`` reference
    so that their ``norm_type``-norm is at most ``max_norm``."""
    xp = get_array_module(weight._data)
    idx = xp.unique(_check_indices(indices, weight._data.shape[0]))
    rows = weight._data[idx]
    norms = xp.linalg.norm(rows.astype(xp.float64), ord=norm_type, axis=1) \
        if norm_type != 2 else xp.sqrt((rows.astype(xp.float64) ** 2).sum(axis=1))
    over = norms > max_norm
    scale = (max_norm / (norms + 1e-7)).astype(rows.dtype)
    rows[over] = rows[over] * scale[over, None]
    weight._data[idx] = rows
    weight._vc[0] += 1
    return weight


__all__ = ["Embedding", "embedding_renorm_"]


def bag_max_rows(weight, entries, bag_of, num_bags):
    """For ``embedding_bag(mode='max')``: per bag and column, the row of ``weight`` holding
    the bag's first maximum and whether the bag has one (``bag_of``: each entry's bag,
    non-decreasing), in one compiled pass over the entries (no (N, D) gather); None where
    the kernel does not take the arrays (the caller's array form then runs).

    >>> import numpy as np
    >>> w = np.array([[1.0, 5.0], [3.0, 2.0]], dtype=np.float32)
    >>> rows, filled = bag_max_rows(w, np.array([0, 1]), np.array([0, 0]), 2)
    >>> rows.tolist(), filled[:, 0].tolist()
    ([[1, 0], [0, 0]], [True, False])
    """
    if not kernels.native_for(weight) or weight.ndim != 2 or not weight.shape[1]:
        return None
    counts = np.bincount(bag_of, minlength=num_bags)
    rows = kernels.bag_max_rows(weight, entries, np.cumsum(counts) - counts, counts)
    return rows.astype(entries.dtype, copy=False), \
        np.broadcast_to((counts > 0)[:, None], rows.shape)
