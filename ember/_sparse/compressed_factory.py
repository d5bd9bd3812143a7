"""Making compressed sparse tensors: ``ember.sparse_compressed_tensor`` and its four
layout-named forms (``sparse_csr_tensor``, ...), PyTorch's invariant checks, the
conversions between layouts (``convert``), and the methods dense tensors answer
(``to_sparse_csr``, ``crow_indices``, ...; on a compressed tensor the same calls go to
``compressed_handlers.py``).

>>> import ember
>>> c = ember.sparse_csr_tensor([0, 1, 3], [1, 0, 2], [1.0, 2.0, 3.0], (2, 3),
...                             check_invariants=True)
>>> c.to_dense()
tensor([[0., 1., 0.],
        [2., 0., 3.]])
"""
from __future__ import annotations

import warnings

from .. import _functions as F
from .._creation import tensor as _tensor
from .._registry import method
from .._tensor import Tensor
from .._torch_function import dispatching
from ..backend.dtypes import int64
from . import compressed as C
from . import tensor as _coo
from .compressed import (BLOCK_LAYOUTS, COMPRESSED_LAYOUTS, LAYOUT_NAMES, ROW_LAYOUTS,
                         is_compressed, layout_of)

#: set by ember._sparse (the COO module's invariant-check state, shared by both kinds)
INVARIANTS = {"enabled": False, "explicit": False, "warned": False}
_BETA_WARNED = [False]


def _names(layout):
    """(compressed, plain, compressed dim, plain dim) as PyTorch's messages name them."""
    if layout in ROW_LAYOUTS:
        return "crow", "col", "rows", "cols"
    return "ccol", "row", "cols", "rows"


def _as_index(x, device):
    if isinstance(x, Tensor):
        return x if device is None else x.to(device)
    return _tensor(x, dtype=int64, device=device)


def type_name(dtype):
    """PyTorch's scalar-type name of ``dtype`` in messages (Float, Double, Long, ...)."""
    return {"float32": "Float", "float64": "Double", "int32": "Int", "int64": "Long",
            "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
            "float16": "Half", "bfloat16": "BFloat16", "complex64": "ComplexFloat",
            "complex128": "ComplexDouble"}.get(dtype.name, dtype.name)


def new_compressed(compressed_indices, plain_indices, values, size=None, *, dtype=None,
                   layout=None, device=None, requires_grad=False, check_invariants=None,
                   caller="sparse_compressed_tensor"):
    """``ember.sparse_compressed_tensor``'s work (see ``sparse_compressed_tensor``)."""
    if layout not in COMPRESSED_LAYOUTS:
        got = "none" if layout is None else LAYOUT_NAMES.get(layout, str(layout))
        raise RuntimeError(f"{caller} expected sparse compressed tensor layout but got {got}")
    if check_invariants is None and not INVARIANTS["explicit"] and not INVARIANTS["warned"]:
        INVARIANTS["warned"] = True
        warnings.warn("Sparse invariant checks are implicitly disabled. Memory errors (e.g. "
                      "SEGFAULT) will occur when operating on a sparse tensor which violates "
                      "the invariants, but checks incur performance overhead. To silence "
                      "this warning, explicitly opt in or out. See "
                      "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.",
                      UserWarning, stacklevel=3)
    comp = _as_index(compressed_indices, device)
    plain = _as_index(plain_indices, device)
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype, device=device)
    elif device is not None:
        values = values.to(device)
    if dtype is not None and values.dtype != dtype:
        values = values.to(dtype)
    checking = check_invariants or (check_invariants is None and INVARIANTS["enabled"])
    if checking or comp.dim() != plain.dim():
        _check_dims(layout, comp, plain)
    nb = comp.dim() - 1
    if size is None:
        shape = _inferred_size(layout, comp, plain, values, nb)
    else:
        shape = tuple(int(n) for n in size)
    if requires_grad:
        values = values.detach().requires_grad_(True)
    t = C.make_compressed(layout, comp, plain, values, shape)
    if checking:
        check_compressed(t)
    if not _BETA_WARNED[0]:
        _BETA_WARNED[0] = True
        warnings.warn("Sparse CSR tensor support is in beta state. If you miss a "
                      "functionality in the sparse tensor support, please submit a feature "
                      "request to https://github.com/pytorch/pytorch/issues.", UserWarning,
                      stacklevel=3)
    return t


def _check_dims(layout, comp, plain):
    c, p, _, _ = _names(layout)
    if comp.dtype != plain.dtype:
        raise RuntimeError(f"{c}_indices and {p}_indices must have the same dtype, bot got "
                           f"{type_name(comp.dtype)} and {type_name(plain.dtype)}, "
                           f"respectively")
    if comp.dim() != plain.dim():
        raise RuntimeError(f"{c}_indices and {p}_indices dimensionalities must be equal but "
                           f"got {comp.dim()} and {plain.dim()}, respectively")
    if comp.dim() < 1:
        raise RuntimeError(f"{c}_indices must have dimensionality >= 1 but got 0")


def _inferred_size(layout, comp, plain, values, nb):
    """PyTorch's size from the indices: the compressed count, the largest plain index + 1
    (times the block size), the batch dims and the values' dense dims."""
    blocked = layout in BLOCK_LAYOUTS
    block = tuple(values.shape[nb + 1:nb + 3]) if blocked else (1, 1)
    n_comp = comp.shape[-1] - 1
    n_plain = int(plain.max()) + 1 if plain.numel() else 0
    if layout in ROW_LAYOUTS:
        sparse = (n_comp * block[0], n_plain * block[1])
    else:
        sparse = (n_plain * block[0], n_comp * block[1])
    dense = tuple(values.shape[nb + 1 + (2 if blocked else 0):])
    return tuple(comp.shape[:-1]) + sparse + dense


def check_compressed(t) -> None:
    """PyTorch's invariants of a compressed tensor (``check_invariants=True``), checked in
    its order, with its messages."""
    layout = layout_of(t)
    c, p, cdim, pdim = _names(layout)
    comp, plain, values = C.compressed_of(t), C.plain_of(t), C.values_of(t)
    _check_dims(layout, comp, plain)
    nb = comp.dim() - 1
    shape = C.shape_of(t)
    block = tuple(values.shape[nb + 1:nb + 3]) if layout in BLOCK_LAYOUTS else (1, 1)
    n_comp, n_plain = C.sparse_extent(shape, layout, nb, block)
    if comp.shape[-1] != n_comp + 1:
        raise RuntimeError(f"{c}_indices.shape[-1] must be equal to the number of {cdim} + 1 "
                           f"(={n_comp + 1}), but got {comp.shape[-1]}")
    nnz = values.shape[nb] if values.dim() > nb else 0
    if plain.shape[-1] != nnz:
        raise RuntimeError(f"{p}_indices.shape[-1] must be equal to nnz (={nnz}) as defined "
                           f"by values.shape[{nb}], but got {plain.shape[-1]}")
    comp, plain = comp.to(int64), plain.to(int64)
    if bool((comp[..., 0] != 0).any()):
        raise RuntimeError(f"`{c}_indices[..., 0] == 0` is not satisfied.")
    if bool((comp[..., -1] != nnz).any()):
        raise RuntimeError(f"`{c}_indices[..., -1] == nnz` is not satisfied.")
    if bool(((plain < 0) | (plain >= n_plain)).any()):
        raise RuntimeError(f"`0 <= {p}_indices < n{pdim}` is not satisfied.")
    # then row by row (PyTorch's kernel walks the compressed dim): the step of the compressed
    # index, and the plain indices of the row's segment sorted and distinct
    comp = comp.reshape(-1, n_comp + 1)
    plain = plain.reshape(comp.shape[0], -1)
    lo, hi = comp[:, :-1], comp[:, 1:]
    step_bad = ((hi - lo) < 0) | ((hi - lo) > n_plain)
    if nnz > 1:
        pair_bad = (plain[:, 1:] <= plain[:, :-1]).to(int64)
        seen = F.cat([pair_bad.new_zeros((pair_bad.shape[0], 1)), pair_bad.cumsum(1)], 1)
        last = (hi - 1).clamp(0, nnz - 1)
        first = lo.clamp(0, nnz - 1)
        order_bad = ((hi - lo) >= 2) & ((seen.gather(1, last) - seen.gather(1, first)) > 0)
    else:
        order_bad = step_bad & False
    failing = (step_bad | order_bad).reshape(-1).nonzero()
    if failing.numel():
        first_failure = int(failing[0, 0])
        if bool(step_bad.reshape(-1)[first_failure]):
            raise RuntimeError(f"`0 <= {c}_indices[..., 1:] - {c}_indices[..., :-1] <= "
                               f"n{pdim}` is not satisfied.")
        raise RuntimeError(f"`{p}_indices[..., {c}_indices[..., i - 1]:{c}_indices[..., i]] "
                           f"for all i = 1, ..., n{cdim} are sorted and distinct along the "
                           f"last dimension values` is not satisfied.")


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None) -> Tensor:
    """A sparse tensor of a compressed ``layout`` (``ember.sparse_csr``, ``sparse_csc``,
    ``sparse_bsr``, ``sparse_bsc``) from its compressed indices, plain indices and values;
    ``size`` defaults to the smallest that holds the indices.

    >>> import ember
    >>> ember.sparse_compressed_tensor([0, 2], [0, 1], [1.0, 2.0], (2, 1),
    ...                                layout=ember.sparse_csc).to_dense()
    tensor([[1.],
            [2.]])
    """
    if pin_memory:
        raise NotImplementedError("pin_memory=True: ember has no pinned host memory")
    return new_compressed(compressed_indices, plain_indices, values, size, dtype=dtype,
                          layout=layout, device=device, requires_grad=requires_grad,
                          check_invariants=check_invariants)


def _factory(layout, compressed_name, plain_name):
    def make(compressed_indices, plain_indices, values, size=None, *, dtype=None,
             device=None, pin_memory=False, requires_grad=False, check_invariants=None):
        if pin_memory:
            raise NotImplementedError("pin_memory=True: ember has no pinned host memory")
        return new_compressed(compressed_indices, plain_indices, values, size, dtype=dtype,
                              layout=layout, device=device, requires_grad=requires_grad,
                              check_invariants=check_invariants,
                              caller=f"{layout}_tensor")
    make.__name__ = make.__qualname__ = f"{layout}_tensor"
    make.__doc__ = (f"A {layout[7:].upper()} tensor from ``{compressed_name}``, "
                    f"``{plain_name}`` and ``values`` (``sparse_compressed_tensor`` with "
                    f"``layout=ember.{layout}``).")
    return make


sparse_csr_tensor = _factory(C.sparse_csr, "crow_indices", "col_indices")
sparse_csc_tensor = _factory(C.sparse_csc, "ccol_indices", "row_indices")
sparse_bsr_tensor = _factory(C.sparse_bsr, "crow_indices", "col_indices")
sparse_bsc_tensor = _factory(C.sparse_bsc, "ccol_indices", "row_indices")


# ---- conversions ------------------------------------------------------------------------
def _conversion_name(t):
    if is_compressed(t):
        return "sparse_compressed_to_sparse"
    return "sparse_coo_to_sparse" if _coo.is_sparse(t) else "dense_to_sparse"


def _layout_name(t):
    if is_compressed(t):
        return LAYOUT_NAMES[layout_of(t)]
    return "Sparse" if _coo.is_sparse(t) else "Strided"


def convert(t, layout, blocksize=None, dense_dim=None, caller=None):
    """``t`` (dense, COO or compressed) in the compressed ``layout``, as
    ``to_sparse(layout=, blocksize=, dense_dim=)`` and ``to_sparse_csr()`` & co."""
    if layout == "strided":  # PyTorch's to_sparse(layout=torch.strided): the dense tensor
        if is_compressed(t):
            return C.to_dense(t)
        return _coo.to_dense(t) if _coo.is_sparse(t) else t
    if layout not in COMPRESSED_LAYOUTS:
        raise NotImplementedError(f"ember has no {layout} layout")
    if blocksize is not None:
        blocksize = (blocksize, blocksize) if isinstance(blocksize, int) else tuple(blocksize)
        if len(blocksize) != 2:
            raise RuntimeError(f"blocksize needs to be a tuple of size 2, but got "
                               f"{len(blocksize)}")
    name = caller or _conversion_name(t)
    if layout in BLOCK_LAYOUTS and blocksize is None:
        raise RuntimeError(f"{name}: conversion from {_layout_name(t)} to "
                           f"{LAYOUT_NAMES[layout]} without blocksize argument given is not "
                           f"supported")
    if layout not in BLOCK_LAYOUTS and blocksize is not None:
        raise RuntimeError(f"{name}: conversion from {_layout_name(t)} to "
                           f"{LAYOUT_NAMES[layout]} with blocksize argument given is not "
                           f"supported")
    if is_compressed(t):
        return _compressed_to_compressed(t, layout, blocksize, dense_dim)
    if _coo.is_sparse(t):
        return _coo_to_compressed(t, layout, blocksize, dense_dim)
    short = layout[7:]
    return C.dense_to_compressed(t, layout, blocksize, dense_dim,
                                 caller=f"dense_to_sparse_{short}")


def _compressed_to_compressed(t, layout, blocksize, dense_dim):
    source = layout_of(t)
    if dense_dim is not None and dense_dim != C.dense_dims(t):
        raise RuntimeError(f"to_sparse: conversion from {LAYOUT_NAMES[source]} to "
                           f"{LAYOUT_NAMES[layout]} with dense_dim argument != "
                           f"self.dense_dim() is not supported")
    if source == layout and (layout not in BLOCK_LAYOUTS or blocksize == C.blocksize_of(t)):
        return t
    if source == layout:
        raise RuntimeError(f"to_sparse_{layout[7:]}: conversion from {LAYOUT_NAMES[source]} "
                           f"to {LAYOUT_NAMES[layout]} with blocksize changed from "
                           f"{list(C.blocksize_of(t))} to {list(blocksize)} is not supported")
    if source in BLOCK_LAYOUTS and layout not in BLOCK_LAYOUTS:
        short = layout[7:]
        raise RuntimeError(f"sparse_compressed_to_sparse_{short}: expected SparseCsr or "
                           f"SparseCsc layout but got {LAYOUT_NAMES[source]}")
    if layout in BLOCK_LAYOUTS and source not in BLOCK_LAYOUTS and C.batch_dims(t):
        raise RuntimeError(f"sparse_compressed_to_sparse_{layout[7:]}: conversion from "
                           f"{LAYOUT_NAMES[source]} to {LAYOUT_NAMES[layout]} for batched "
                           f"inputs is not supported")
    if layout in BLOCK_LAYOUTS or source in BLOCK_LAYOUTS:
        return C.dense_to_compressed(C.to_dense(t), layout, blocksize, C.dense_dims(t))
    bidx, cidx, pidx, vals = C.entries(t)
    return C.from_entries(layout, bidx, pidx, cidx, vals, C.shape_of(t), C.batch_dims(t),
                          C.compressed_of(t).dtype)


def _coo_to_compressed(s, layout, blocksize, dense_dim):
    k = _coo.sparse_dim(s)
    if k != 2:
        raise RuntimeError(f"coo_to_sparse_{layout[7:]}: conversion from Sparse to "
                           f"{LAYOUT_NAMES[layout]} for input tensors with sparse_dim()!=2 is "
                           f"not supported")
    if layout in BLOCK_LAYOUTS:
        return C.dense_to_compressed(_coo.to_dense(s), layout, blocksize,
                                     _coo.values_of(s).dim() - 1)
    c = _coo.coalesce(s)
    idx, vals = _coo.indices_of(c), _coo.values_of(c)
    rows, cols = idx[0], idx[1]
    cidx, pidx = (rows, cols) if layout in ROW_LAYOUTS else (cols, rows)
    return C.from_entries(layout, rows.new_zeros(rows.shape), cidx, pidx, vals,
                          _coo.shape_of(s), 0)


def to_coo(t):
    """A compressed tensor as a COO one: batch dims become sparse dims; a block's elements
    are entries of their own (uncoalesced, as PyTorch's)."""
    bidx, rows, cols, vals = C.element_entries(t)
    nb = C.batch_dims(t)
    shape = C.shape_of(t)
    index_rows = [rows, cols]
    if nb:
        index_rows = list(_coo.unravel(bidx, shape[:nb])) + index_rows
    sorted_entries = layout_of(t) == C.sparse_csr  # CSR's order is row-major: coalesced
    return _coo.make_sparse(F.stack(index_rows), vals, shape, sorted_entries)


# ---- methods of dense tensors (compressed tensors answer them in compressed_handlers) -----
@method
def to_sparse_csr(self, dense_dim: int | None = None) -> Tensor:
    """The CSR form: nonzero elements of the last two (sparse) dims, leading dims as
    batches; ``dense_dim`` trailing dims kept dense.

    >>> import ember
    >>> ember.tensor([[0.0, 5.0], [0.0, 0.0]]).to_sparse_csr().crow_indices()
    tensor([0, 1, 1])
    """
    return convert(self, C.sparse_csr, None, dense_dim)


@method
def to_sparse_csc(self, dense_dim: int | None = None) -> Tensor:
    """The CSC form (``to_sparse_csr``'s, compressed by columns)."""
    return convert(self, C.sparse_csc, None, dense_dim)


@method
def to_sparse_bsr(self, blocksize: tuple | int, dense_dim: int | None = None) -> Tensor:
    """The BSR form: blocks of ``blocksize`` with any nonzero element, by rows.

    >>> import ember
    >>> ember.eye(4).to_sparse_bsr((2, 2)).col_indices()
    tensor([0, 1])
    """
    return convert(self, C.sparse_bsr, blocksize, dense_dim)


@method
def to_sparse_bsc(self, blocksize: tuple | int, dense_dim: int | None = None) -> Tensor:
    """The BSC form: blocks of ``blocksize`` with any nonzero element, by columns."""
    return convert(self, C.sparse_bsc, blocksize, dense_dim)


def _row_error(name):
    return C.layout_error(name, "row compressed", "strided")


def _column_error(name):
    return C.layout_error(name, "column compressed", "strided")


@method
def crow_indices(self) -> Tensor:
    """The compressed row indices of a CSR or BSR tensor."""
    raise _row_error("crow_indices")


@method
def col_indices(self) -> Tensor:
    """The column indices of a CSR or BSR tensor."""
    raise _row_error("col_indices")


@method
def ccol_indices(self) -> Tensor:
    """The compressed column indices of a CSC or BSC tensor."""
    raise _column_error("ccol_indices")


@method
def row_indices(self) -> Tensor:
    """The row indices of a CSC or BSC tensor."""
    raise _column_error("row_indices")


sparse_compressed_tensor = dispatching(sparse_compressed_tensor)
sparse_csr_tensor = dispatching(sparse_csr_tensor)
sparse_csc_tensor = dispatching(sparse_csc_tensor)
sparse_bsr_tensor = dispatching(sparse_bsr_tensor)
sparse_bsc_tensor = dispatching(sparse_bsc_tensor)
