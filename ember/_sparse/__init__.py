"""Sparse COO tensors (``tensor.py``: the type; ``handlers.py``: what they answer) and the
public calls that make and read them: ``ember.sparse_coo_tensor``, ``Tensor.to_sparse``,
``to_dense``, ``coalesce``, ``indices``/``values``, ``sparse_dim``/``dense_dim``,
``sparse_mask``, ``ember.smm``/``spmm``. On a dense tensor the sparse-only methods raise
PyTorch's errors; on a sparse one every call goes to ``handlers.py``.
"""
from __future__ import annotations

import warnings

from .._registry import method
from .._torch_function import dispatching
from .._tensor import Tensor
from ..backend.dtypes import dtype
from ..backend.sparse_data import no_sparse_kernel
from . import tensor as _T
from .handlers import HANDLERS, matmul, sparse_softmax, sparse_sum  # noqa: F401
from .tensor import SparseTensor, is_sparse, make_sparse, sparse_coo  # noqa: F401

#: ``ember.sparse.check_sparse_tensor_invariants``' state: checks on by default? (PyTorch's
#: default is off, and its factory then warns once that they are implicitly disabled);
#: compressed_factory's dict, shared by both kinds
from .compressed_factory import INVARIANTS  # noqa: E402
from . import compressed_handlers as _compressed_handlers  # noqa: E402,F401  (registers)
from .compressed import (is_compressed, sparse_bsc, sparse_bsr, sparse_csc,  # noqa: E402,F401
                         sparse_csr)
from .compressed_factory import (convert as _convert_compressed,  # noqa: E402,F401
                                 sparse_bsc_tensor, sparse_bsr_tensor,
                                 sparse_compressed_tensor, sparse_csc_tensor,
                                 sparse_csr_tensor)


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      pin_memory=False, requires_grad=False, check_invariants=None,
                      is_coalesced=None) -> Tensor:
    """A sparse COO tensor with ``values[j]`` at the index column ``indices[:, j]``
    (duplicates add up); ``size`` defaults to the smallest that holds the indices.

    >>> import ember
    >>> s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> s.to_dense()
    tensor([[0., 2.],
            [3., 0.]])
    >>> s._nnz(), s.is_coalesced()
    (2, False)
    """
    if pin_memory:
        raise NotImplementedError("pin_memory=True: ember has no pinned host memory")
    if check_invariants is None and not INVARIANTS["explicit"] and not INVARIANTS["warned"]:
        INVARIANTS["warned"] = True
        warnings.warn("Sparse invariant checks are implicitly disabled. Memory errors (e.g. "
                      "SEGFAULT) will occur when operating on a sparse tensor which violates "
                      "the invariants, but checks incur performance overhead. To silence "
                      "this warning, explicitly opt in or out. See "
                      "`torch.sparse.check_sparse_tensor_invariants.__doc__` for guidance.",
                      UserWarning, stacklevel=2)
    s = _T.new_sparse(indices, values, size, dtype, device, requires_grad, is_coalesced)
    if check_invariants or (check_invariants is None and INVARIANTS["enabled"]):
        _T.sparse_sizes_check(s)
    return s


def _layout_error(name):
    return RuntimeError(f"{name} expected sparse coordinate tensor layout but got Strided")


@method
def coalesce(self) -> Tensor:
    """The sparse tensor with its index columns sorted and duplicates summed (a dense
    tensor raises PyTorch's layout error)."""
    raise _layout_error("coalesce")


@method
def is_coalesced(self) -> bool:
    """Whether a sparse tensor is known to have sorted, distinct index columns."""
    raise _layout_error("is_coalesced")


@method
def indices(self) -> Tensor:
    """The index columns of a coalesced sparse tensor."""
    raise _layout_error("indices")


@method
def values(self) -> Tensor:
    """The values of a coalesced sparse tensor."""
    raise RuntimeError("values expected sparse tensor layout but got Strided")


@method
def _indices(self) -> Tensor:
    """The index columns of a sparse tensor, coalesced or not."""
    raise no_sparse_kernel("_indices", "CPU")


@method
def _values(self) -> Tensor:
    """The values of a sparse tensor, coalesced or not."""
    raise no_sparse_kernel("_values", "CPU")


@method
def _nnz(self) -> int:
    """How many elements a sparse tensor specifies (duplicates included)."""
    raise no_sparse_kernel("_nnz", "CPU")


@method
def sparse_dim(self) -> int:
    """The number of sparse dims: 0 for a dense tensor.

    >>> import ember
    >>> ember.ones(2, 3).sparse_dim(), ember.ones(2, 3).to_sparse(1).sparse_dim()
    (0, 1)
    """
    return 0


@method
def dense_dim(self) -> int:
    """The number of dense dims: all of them for a dense tensor.

    >>> import ember
    >>> ember.ones(2, 3).dense_dim(), ember.ones(2, 3).to_sparse(1).dense_dim()
    (2, 1)
    """
    return self.dim()


@method
def to_dense(self, dtype: dtype | None = None, *, masked_grad: bool | None = None) -> Tensor:
    """The dense form: ``self`` for a dense tensor (of ``dtype`` if given).

    >>> import ember
    >>> ember.eye(2).to_sparse().to_dense()
    tensor([[1., 0.],
            [0., 1.]])
    """
    return self if dtype is None else self.to(dtype)


@method
def to_sparse(self, sparse_dim: int | None = None, *, layout: str | None = None,
              blocksize: tuple | None = None, dense_dim: int | None = None) -> Tensor:
    """The sparse COO form of a dense tensor: its nonzero elements (over its first
    ``sparse_dim`` dims, slices with any nonzero element), coalesced.

    >>> import ember
    >>> s = ember.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse()
    >>> s.indices(), s.values()
    (tensor([[0, 1],
            [1, 0]]), tensor([1., 2.]))
    """
    if layout not in (None, sparse_coo):
        return _convert_compressed(self, layout, blocksize, dense_dim)
    if blocksize is not None or dense_dim is not None:
        raise NotImplementedError("to_sparse(blocksize=, dense_dim=) of the COO layout")
    return _T.dense_to_sparse(self, sparse_dim)


@method
def to_sparse_coo(self) -> Tensor:
    """``to_sparse()``."""
    return _T.dense_to_sparse(self)


@method
def sparse_mask(self, mask: Tensor) -> Tensor:
    """The elements of ``self`` where the sparse ``mask`` specifies one, as a sparse tensor
    with ``mask``'s indices.

    >>> import ember
    >>> m = ember.tensor([[0.0, 1.0], [1.0, 0.0]]).to_sparse()
    >>> ember.tensor([[5.0, 6.0], [7.0, 8.0]]).sparse_mask(m).values()
    tensor([6., 7.])
    """
    return HANDLERS["sparse_mask"](self, mask)


def smm(input, mat2) -> Tensor:
    """sparse @ dense, as a sparse tensor.

    >>> import ember
    >>> ember.smm(ember.eye(2).to_sparse(), ember.ones(2, 2)).to_dense()
    tensor([[1., 1.],
            [1., 1.]])
    """
    if not is_sparse(input):
        raise no_sparse_kernel("_sparse_mm", "CPU")
    return HANDLERS["smm"](input, mat2)


def spmm(input, mat2) -> Tensor:
    """sparse @ dense, dense (``ember.mm`` with a sparse first operand).

    >>> import ember
    >>> ember.spmm(ember.eye(2).to_sparse(), ember.ones(2, 2))
    tensor([[1., 1.],
            [1., 1.]])
    """
    return input.mm(mat2)


# public functions that are not declared ops (those all live in ember._functions): plain
# entry points, so that overrides and sparse arguments reach them
sparse_coo_tensor = dispatching(sparse_coo_tensor)
smm = dispatching(smm)
spmm = dispatching(spmm)

__all__ = ["sparse_coo_tensor", "smm", "spmm", "sparse_coo", "sparse_csr", "sparse_csc",
           "sparse_bsr", "sparse_bsc", "sparse_compressed_tensor", "sparse_csr_tensor",
           "sparse_csc_tensor", "sparse_bsr_tensor", "sparse_bsc_tensor"]
