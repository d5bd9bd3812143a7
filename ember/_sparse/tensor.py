"""Sparse COO tensors: the type, its construction, ``coalesce`` and ``to_dense``.

A sparse COO tensor of shape ``(*S, *D)`` keeps two dense tensors: ``indices``, int64 of
shape ``(len(S), nnz)`` (one column per specified element of the sparse dims ``S``), and
``values`` of shape ``(nnz, *D)`` (the dense dims ``D``). An element listed twice counts
as the sum of its values until ``coalesce()`` sums them (it also sorts the columns).

Every computation is an ordinary dense op on ``indices`` and ``values``, so autograd
runs through the values: ``to_dense``, ``coalesce`` and the products are differentiable
with respect to them, and the gradient of a sparse leaf is the sparse tensor of its
indices and its values' gradient. Calls reach the sparse code through
``__torch_function__`` (``handlers.py``); dispatch is held on only while a sparse tensor
lives, so dense programs pay nothing for the type existing.

>>> import ember
>>> s = ember.sparse_coo_tensor([[0, 1, 1], [2, 0, 2]], [3.0, 4.0, 5.0], (2, 3))
>>> s.to_dense()
tensor([[0., 0., 3.],
        [4., 0., 5.]])
"""
from __future__ import annotations

import math
import weakref

from .. import _layouts
from .. import _functions as F
from .._creation import zeros, tensor as _tensor
from .._tensor import Tensor
from .._ops.indexing import add_rows
from ..autograd.grad_mode import is_grad_enabled
from .._torch_function import called_name, hold_dispatch
from ..backend.dtypes import bool_, int64
from ..backend.sparse_data import SparseCOOData, no_sparse_kernel

sparse_coo = _layouts.sparse_coo  # the layout object (ember.sparse_coo)


#: call name -> the code a sparse tensor runs for it (filled by handlers.py)
HANDLERS = {}


class SparseTensor(Tensor):
    """A sparse COO tensor (see the module). Made by ``ember.sparse_coo_tensor`` and
    ``Tensor.to_sparse()``; ``type(s)`` is this class where PyTorch's is ``Tensor``."""
    _dispatch_while_alive = True
    _repr_as_tensor = True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = called_name(func)
        handler = HANDLERS.get(name)
        if handler is None:
            raise no_sparse_kernel(name.strip("_"))
        return handler(*args, **(kwargs or {}))



def make_sparse(indices: Tensor, values: Tensor, shape, coalesced: bool = False) -> SparseTensor:
    """A sparse tensor of ``shape`` holding ``indices`` and ``values`` as they are."""
    t = object.__new__(SparseTensor)
    t._data = SparseCOOData(shape, values._data.dtype)
    t._requires_grad = False  # its values carry autograd (the engine reads this slot)
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    state = t.__dict__
    state["_sp_indices"] = indices
    state["_sp_values"] = values
    state["_sp_coalesced"] = bool(coalesced)
    hold_dispatch(1)
    weakref.finalize(t, hold_dispatch, -1)
    return t


def is_sparse(t) -> bool:
    return type(t) is SparseTensor


def indices_of(s: SparseTensor) -> Tensor:
    return s.__dict__["_sp_indices"]


def values_of(s: SparseTensor) -> Tensor:
    return s.__dict__["_sp_values"]


def is_coalesced(s: SparseTensor) -> bool:
    return s.__dict__["_sp_coalesced"]


def shape_of(s: SparseTensor) -> tuple:
    return s._data.shape


def sparse_dim(s: SparseTensor) -> int:
    return indices_of(s).shape[0]


def with_values(s: SparseTensor, values: Tensor, coalesced=None) -> SparseTensor:
    """``s``'s indices (and shape) with other values."""
    return make_sparse(indices_of(s), values, shape_of(s),
                       is_coalesced(s) if coalesced is None else coalesced)


def linear_index(indices: Tensor, sizes) -> Tensor:
    """Each column of ``indices`` as one row-major position in ``sizes``."""
    lin = None
    for d, size in enumerate(sizes):
        row = indices[d]
        lin = row if lin is None else lin * size + row
    return lin if lin is not None else zeros(indices.shape[1], dtype=int64,
                                             device=indices.device)


def unravel(lin: Tensor, sizes) -> Tensor:
    """Row-major positions back to index columns (``linear_index``'s inverse)."""
    rows = []
    for size in reversed(sizes):
        rows.append(F.remainder(lin, size))
        lin = F.div(lin, size, rounding_mode="floor")
    return F.stack(rows[::-1]) if rows else lin.new_zeros((0, lin.shape[0]))


def coalesce(s: SparseTensor) -> SparseTensor:
    """Columns sorted and duplicates summed (differentiable w.r.t. the values)."""
    if is_coalesced(s):
        return s
    idx, vals = indices_of(s), values_of(s)
    sizes = shape_of(s)[:idx.shape[0]]
    if idx.shape[1] == 0:
        return make_sparse(idx, vals, shape_of(s), True)
    lin = linear_index(idx, sizes)
    unique, inverse = F.unique(lin, sorted=True, return_inverse=True)
    summed = zeros((unique.shape[0],) + tuple(vals.shape[1:]), dtype=vals.dtype,
                   device=vals.device).index_add(0, inverse, vals)
    return make_sparse(unravel(unique, sizes), summed, shape_of(s), True)


def to_dense(s: SparseTensor, dtype=None, masked_grad=None) -> Tensor:
    """The dense tensor (duplicates summed), differentiable w.r.t. the values."""
    idx, vals = indices_of(s), values_of(s)
    if dtype is not None:
        vals = vals.to(dtype)
    out = zeros(shape_of(s), dtype=vals.dtype, device=vals.device)
    return out.index_put(tuple(idx[d] for d in range(idx.shape[0])), vals, accumulate=True)


def dense_to_sparse(t: Tensor, sparse_dims: int | None = None) -> SparseTensor:
    """The coalesced sparse tensor of ``t``'s nonzero elements (over its first
    ``sparse_dims`` dims: a slice is kept when any of its elements is nonzero)."""
    nd = t.dim()
    k = nd if sparse_dims is None else sparse_dims
    if not 0 <= k <= nd:
        raise RuntimeError(f"sparse_dim argument must be in [0,{nd}] but got {k}")
    if k == 0:
        return make_sparse(_tensor([], dtype=int64, device=t.device).reshape(0, 1),
                           t.unsqueeze(0), tuple(t.shape), True)
    flags = t != 0
    if k < nd:
        flags = flags.reshape(tuple(t.shape[:k]) + (-1,)).any(-1)
    idx = F.nonzero(flags).t().contiguous()  # row-major order: already coalesced
    values = t[tuple(idx[d] for d in range(k))]
    return make_sparse(idx, values, tuple(t.shape), True)


def accumulate_(t: Tensor, indices: Tensor, values: Tensor) -> Tensor:
    """``t[indices columns] += values`` in place, duplicates adding up, recording nothing
    (optimizer steps, gradient accumulation): one compiled pass over the rows named
    (``add_rows``), no copy of ``t``; ``index_put_`` where it must record or where ``t``'s
    memory is not one C-ordered block."""
    k = indices.shape[0]
    data = t._data
    recording = is_grad_enabled() and (t.requires_grad or values.requires_grad)
    if recording or not getattr(data, "flags", None) or not data.flags.c_contiguous:
        return t.index_put_(tuple(indices[d] for d in range(k)), values.to(t.dtype),
                            accumulate=True)
    rows = data.reshape((-1,) + data.shape[k:])
    if rows.ndim == 1:
        rows = rows.reshape(-1, 1)
    lin = linear_index(indices, data.shape[:k])._data
    add = values._data.astype(data.dtype, copy=False).reshape((lin.shape[0],) + rows.shape[1:])
    add_rows(rows, lin, add)
    t._vc[0] += 1
    return t


def new_sparse(indices, values, size=None, dtype=None, device=None, requires_grad=False,
               is_coalesced=None) -> SparseTensor:
    """``ember.sparse_coo_tensor``'s work (arguments already checked for types)."""
    if not isinstance(indices, Tensor):
        indices = _tensor(indices, dtype=int64, device=device)
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype, device=device)
    if indices.dim() != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: "
                           f"{list(indices.shape)}")
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == bool_:
        raise RuntimeError("indices must be an int64 tensor")
    indices = indices.to(int64)
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    if device is not None:
        indices, values = indices.to(device), values.to(device)
    if values.dim() == 0:
        raise RuntimeError("values must have at least one dimension")
    nnz = indices.shape[1]
    if values.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from "
                           f"indices: {nnz}, nnz from values: {values.shape[0]}")
    k = indices.shape[0]
    if size is None:
        if nnz == 0 and k:
            sparse_sizes = (0,) * k
        else:
            sparse_sizes = tuple(int(m) + 1 for m in indices.max(1).values.tolist()) if k \
                else ()
        shape = sparse_sizes + tuple(values.shape[1:])
    else:
        shape = tuple(int(n) for n in size)
        if len(shape) != k + values.dim() - 1:
            raise RuntimeError(f"number of dimensions must be sparse_dim ({k}) + dense_dim "
                               f"({values.dim() - 1}), but got {len(shape)}")
        if tuple(values.shape[1:]) != shape[k:]:
            raise RuntimeError(f"values has incorrect size, expected "
                               f"{list((nnz,) + shape[k:])}, got {list(values.shape)}")
    if requires_grad:
        values = values.detach().requires_grad_(True)
    return make_sparse(indices, values, shape, bool(is_coalesced))


def sparse_sizes_check(s: SparseTensor) -> None:
    """PyTorch's invariant checks (``check_invariants=True``): indices in bounds."""
    idx = indices_of(s)
    if idx.numel() == 0:
        return
    shape = shape_of(s)
    if bool((idx < 0).any()):
        raise RuntimeError(f"found negative index {int(idx.min())} for dim "
                           f"{int((idx < 0).any(1).nonzero()[0])}")
    for d in range(idx.shape[0]):
        m = int(idx[d].max())
        if m >= shape[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{shape[d]} but found index {m}")


def numel(s) -> int:
    return math.prod(shape_of(s))
