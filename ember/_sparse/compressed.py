"""Sparse compressed tensors (PyTorch's CSR, CSC, BSR and BSC layouts): the type, its
construction and its conversions to and from dense and COO tensors.

A compressed tensor of shape ``(*B, M, N, *D)`` keeps three dense tensors:
``compressed_indices`` of shape ``(*B, n + 1)`` (``crow_indices`` for the row layouts, CSR
and BSR, ``ccol_indices`` for the column ones, CSC and BSC), ``plain_indices`` of shape
``(*B, nnz)`` (``col_indices`` / ``row_indices``) and ``values`` of shape
``(*B, nnz, *blocksize, *D)``; the entries of compressed row ``i`` are
``plain_indices[compressed_indices[i]:compressed_indices[i + 1]]``. Block layouts count
rows and columns in blocks; every batch holds the same number of entries.

Every computation is an ordinary dense op on those tensors (the entries are expanded to
(batch, row, column) triples, ``entries``), so autograd runs through the values, as for COO
tensors (``tensor.py``); calls reach ``compressed_handlers.py`` through
``__torch_function__``, held on only while a compressed tensor lives.

>>> import ember
>>> c = ember.tensor([[0.0, 1.0], [2.0, 3.0]]).to_sparse_csr()
>>> c.crow_indices(), c.col_indices(), c.values()
(tensor([0, 1, 3]), tensor([1, 0, 1]), tensor([1., 2., 3.]))
"""
from __future__ import annotations

import math
import weakref

from .. import _layouts
from .. import _functions as F
from .._creation import arange, zeros
from .._tensor import Tensor
from .._torch_function import called_name, hold_dispatch
from ..backend.dtypes import bool_, get_default_dtype, int64
from ..backend.sparse_data import SparseCOOData, no_sparse_kernel
from .tensor import is_sparse

sparse_csr = _layouts.sparse_csr
sparse_csc = _layouts.sparse_csc
sparse_bsr = _layouts.sparse_bsr
sparse_bsc = _layouts.sparse_bsc
COMPRESSED_LAYOUTS = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
ROW_LAYOUTS = (sparse_csr, sparse_bsr)
BLOCK_LAYOUTS = (sparse_bsr, sparse_bsc)
#: PyTorch's names of the layouts in its messages
LAYOUT_NAMES = {sparse_csr: "SparseCsr", sparse_csc: "SparseCsc", sparse_bsr: "SparseBsr",
                sparse_bsc: "SparseBsc", "strided": "Strided", "sparse_coo": "Sparse"}
BACKEND = "SparseCsrCPU"  # PyTorch's dispatch key of all four layouts

#: call name -> the code a compressed tensor runs for it (filled by compressed_handlers.py)
COMPRESSED_HANDLERS = {}


class SparseCompressedData(SparseCOOData):
    """The ``_data`` of a compressed tensor: its shape and dtype; anything else raises
    PyTorch's error for an op without a SparseCsrCPU kernel."""
    __slots__ = ()

    @staticmethod
    def no_kernel(name):
        return no_sparse_kernel(name, BACKEND)

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert SparseCsr layout tensor to numpy. Use "
                        "Tensor.to_dense() first.")


class SparseCompressedTensor(Tensor):
    """A CSR, CSC, BSR or BSC tensor (see the module); ``type(c)`` is this class where
    PyTorch's is ``Tensor``."""
    _dispatch_while_alive = True
    _repr_as_tensor = True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = called_name(func)
        handler = COMPRESSED_HANDLERS.get(name)
        if handler is None:  # a dunder by its op's name; ATen's own names keep their "_"
            raise no_sparse_kernel(name.strip("_") if name.startswith("__") else name,
                                   BACKEND)
        return handler(*args, **(kwargs or {}))



def make_compressed(layout: str, compressed: Tensor, plain: Tensor, values: Tensor,
                    shape) -> SparseCompressedTensor:
    """A compressed tensor of ``layout`` and ``shape`` holding the three tensors as they are."""
    t = object.__new__(SparseCompressedTensor)
    t._data = SparseCompressedData(shape, values._data.dtype)
    t._requires_grad = False  # its values carry autograd
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    state = t.__dict__
    state["_cs_layout"] = layout
    state["_cs_compressed"] = compressed
    state["_cs_plain"] = plain
    state["_cs_values"] = values
    hold_dispatch(1)
    weakref.finalize(t, hold_dispatch, -1)
    return t


def is_compressed(t) -> bool:
    return type(t) is SparseCompressedTensor


def layout_of(t) -> str:
    return t.__dict__["_cs_layout"]


def compressed_of(t) -> Tensor:
    return t.__dict__["_cs_compressed"]


def plain_of(t) -> Tensor:
    return t.__dict__["_cs_plain"]


def values_of(t) -> Tensor:
    return t.__dict__["_cs_values"]


def shape_of(t) -> tuple:
    return t._data.shape


def batch_dims(t) -> int:
    return plain_of(t).dim() - 1


def dense_dims(t) -> int:
    blocked = 2 if layout_of(t) in BLOCK_LAYOUTS else 0
    return values_of(t).dim() - batch_dims(t) - 1 - blocked


def blocksize_of(t) -> tuple:
    if layout_of(t) not in BLOCK_LAYOUTS:
        return (1, 1)
    nb = batch_dims(t)
    return tuple(values_of(t).shape[nb + 1:nb + 3])


def nnz_of(t) -> int:
    return plain_of(t).shape[-1]


def with_values(t, values: Tensor) -> SparseCompressedTensor:
    """``t``'s indices (and shape) with other values."""
    out = make_compressed(layout_of(t), compressed_of(t), plain_of(t), values, shape_of(t))
    cached = t.__dict__.get("_cs_expanded")
    if cached is not None:  # the same index tensors: their expansion holds
        out.__dict__["_cs_expanded"] = cached
    return out


def layout_error(name: str, kind: str, layout: str) -> RuntimeError:
    """PyTorch's "<name> expected sparse <kind> tensor layout but got <Layout>"."""
    return RuntimeError(f"{name} expected sparse {kind} tensor layout but got "
                        f"{LAYOUT_NAMES[layout]}")


def layout_name(t) -> str:
    """PyTorch's name of ``t``'s layout in messages: SparseCsr, ..., Sparse, Strided."""
    if is_compressed(t):
        return LAYOUT_NAMES[layout_of(t)]
    return "Sparse" if is_sparse(t) else "Strided"


# ---- entries: the (batch, compressed, plain) triple of every specified element (block) ---
def entries(t):
    """``(batch, compressed, plain, values)``: int64 tensors of length ``P * nnz`` (``P``
    batches, flattened) and the values as ``(P * nnz, *blocksize, *D)``; compressed and
    plain count blocks in the block layouts."""
    nb = batch_dims(t)
    bidx, cidx, pidx = _index_entries(t, nb)
    vals = values_of(t)
    vals = vals.reshape((pidx.shape[0],) + tuple(vals.shape[nb + 1:]))
    return bidx, cidx, pidx, vals


def _index_entries(t, nb):
    """``entries``' three index tensors, kept on ``t`` while its index tensors are the same
    objects at the same versions (products expand them once, not once per call)."""
    comp, plain = compressed_of(t), plain_of(t)
    versions = (comp._version, plain._version)
    cached = t.__dict__.get("_cs_expanded")
    if cached is not None and cached[0] is comp and cached[1] is plain and \
            cached[2] == versions:
        return cached[3]
    comp64, plain64 = comp.to(int64), plain.to(int64)
    n_batches = math.prod(plain64.shape[:nb])
    nnz = plain64.shape[-1]
    comp64 = comp64.reshape(n_batches, -1)
    counts = (comp64[:, 1:] - comp64[:, :-1]).reshape(-1)
    n_compressed = comp64.shape[1] - 1
    device = plain64.device
    cidx = arange(n_compressed, device=device).repeat(n_batches).repeat_interleave(counts)
    bidx = arange(n_batches, device=device).repeat_interleave(nnz)
    expanded = (bidx, cidx, plain64.reshape(-1))
    t.__dict__["_cs_expanded"] = (comp, plain, versions, expanded)
    return expanded


def sparse_extent(shape, layout, nb, blocksize):
    """(compressed, plain) sizes, in blocks, of a compressed tensor of ``shape``."""
    rows, cols = shape[nb] // blocksize[0], shape[nb + 1] // blocksize[1]
    return (rows, cols) if layout in ROW_LAYOUTS else (cols, rows)


def from_entries(layout, bidx, cidx, pidx, values, shape, nb, index_dtype=int64,
                 sort=True):
    """The compressed tensor of ``layout`` holding the given entries (each once; sorted
    here unless ``sort`` is False), as laid out by ``entries``."""
    n_batches = math.prod(shape[:nb])
    blocksize = tuple(values.shape[1:3]) if layout in BLOCK_LAYOUTS else (1, 1)
    n_comp, n_plain = sparse_extent(shape, layout, nb, blocksize)
    group = bidx * n_comp + cidx
    if sort and group.numel():
        order = F.argsort(group * n_plain + pidx, stable=True)
        group, pidx, values = group[order], pidx[order], values[order]
    counts = F.bincount(group, minlength=n_batches * n_comp).reshape(n_batches, n_comp)
    per_batch = counts.sum(1)
    nnz = int(per_batch[0]) if n_batches else 0
    if n_batches and bool((per_batch != nnz).any()):
        raise RuntimeError("Expect the same number of specified elements per batch.")
    comp = F.cat([counts.new_zeros((n_batches, 1)), counts.cumsum(1)], 1)
    batch = tuple(shape[:nb])
    comp = comp.reshape(batch + (n_comp + 1,)).to(index_dtype)
    plain = pidx.reshape(batch + (nnz,)).to(index_dtype)
    values = values.reshape(batch + (nnz,) + tuple(values.shape[1:]))
    return make_compressed(layout, comp, plain, values, tuple(shape))


# ---- dense <-> compressed ---------------------------------------------------------------
def _blocked(d: Tensor, nb: int, blocksize, column_major: bool) -> Tensor:
    """``d`` (``(*B, M, N, *D)``) as ``(P, n_compressed, n_plain, R, C, *D)``."""
    shape = tuple(d.shape)
    R, C = blocksize
    M, N = shape[nb], shape[nb + 1]
    dense = shape[nb + 2:]
    x = d.reshape((-1, M // R, R, N // C, C) + dense)
    x = x.permute((0, 1, 3, 2, 4) + tuple(range(5, x.dim())))
    return x.transpose(1, 2) if column_major else x


def dense_to_compressed(d: Tensor, layout: str, blocksize=None, dense_dim=None,
                        caller: str | None = None) -> SparseCompressedTensor:
    """The compressed tensor of ``layout`` of ``d``'s nonzero elements (blocks, or slices
    of the dense dims, count when any of their elements is nonzero), differentiable w.r.t.
    ``d``."""
    name = caller or f"dense_to_{layout}"
    nd = d.dim()
    dd = 0 if dense_dim is None else dense_dim
    if not 0 <= dd <= nd - 2:
        raise RuntimeError(f"{name}: dense_dim argument must be in [0,{max(nd - 2, 0)}] "
                           f"range, but {dd} is given")
    nb = nd - 2 - dd
    shape = tuple(d.shape)
    if nb and not math.prod(shape[:nb]):
        raise RuntimeError(f"to_{layout}: Expected product of batch dimensions to be "
                           f"non-zero.")
    if layout in BLOCK_LAYOUTS:
        blocksize = tuple(blocksize)
        if shape[nb] % blocksize[0] or shape[nb + 1] % blocksize[1]:
            raise RuntimeError(f"{name}: tensor sparse size ({shape[nb]},{shape[nb + 1]}) "
                               f"must be divisible by given blocksize "
                               f"({blocksize[0]},{blocksize[1]})")
    else:
        blocksize = (1, 1)
    x = _blocked(d, nb, blocksize, layout not in ROW_LAYOUTS)
    flags = x != 0
    if flags.dim() > 3:
        flags = flags.reshape(tuple(flags.shape[:3]) + (-1,)).any(-1)
    idx = F.nonzero(flags)  # row-major: sorted by (batch, compressed, plain)
    bidx, cidx, pidx = idx[:, 0], idx[:, 1], idx[:, 2]
    values = x[bidx, cidx, pidx]
    if layout not in BLOCK_LAYOUTS:
        values = values.reshape((values.shape[0],) + tuple(values.shape[3:]))
    return from_entries(layout, bidx, cidx, pidx, values, shape, nb, sort=False)


def to_dense(t, dtype=None) -> Tensor:
    """The dense tensor of a compressed one, differentiable w.r.t. its values."""
    layout = layout_of(t)
    shape = shape_of(t)
    nb = batch_dims(t)
    bidx, cidx, pidx, vals = entries(t)
    if dtype is not None:
        vals = vals.to(dtype)
    blocksize = blocksize_of(t)
    if layout not in BLOCK_LAYOUTS:
        vals = vals.reshape((vals.shape[0], 1, 1) + tuple(vals.shape[1:]))
    n_comp, n_plain = sparse_extent(shape, layout, nb, blocksize)
    dense = tuple(shape[nb + 2:])
    grid = zeros((max(math.prod(shape[:nb]), 1), n_comp, n_plain) + blocksize + dense,
                 dtype=vals.dtype, device=vals.device)
    grid = grid.index_put((bidx, cidx, pidx), vals, accumulate=True)
    if layout not in ROW_LAYOUTS:
        grid = grid.transpose(1, 2)
    grid = grid.permute((0, 1, 3, 2, 4) + tuple(range(5, grid.dim())))
    return grid.reshape(shape)


def element_entries(t):
    """(batch, row, column, values) of every element a compressed tensor specifies (a
    block's elements one by one, in row-major order within the block)."""
    bidx, cidx, pidx, vals = entries(t)
    rows, cols = (cidx, pidx) if layout_of(t) in ROW_LAYOUTS else (pidx, cidx)
    if layout_of(t) not in BLOCK_LAYOUTS:
        return bidx, rows, cols, vals
    R, C = blocksize_of(t)
    n = rows.shape[0]
    inner_r = arange(R, device=rows.device).repeat_interleave(C).repeat(n)
    inner_c = arange(C, device=rows.device).repeat(R * n)
    rows = rows.repeat_interleave(R * C) * R + inner_r
    cols = cols.repeat_interleave(R * C) * C + inner_c
    vals = vals.reshape((n * R * C,) + tuple(vals.shape[3:]))
    return bidx.repeat_interleave(R * C), rows, cols, vals


def numel(t) -> int:
    return math.prod(shape_of(t))


def values_dtype_default(dtype) -> bool:
    """Whether a repr leaves ``dtype`` unnamed (PyTorch's: the default dtype, int64, bool)."""
    return dtype in (get_default_dtype(), int64, bool_)
