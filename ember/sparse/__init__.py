"""``ember.sparse``: functions of sparse COO tensors (``ember.sparse_coo_tensor``,
``Tensor.to_sparse``), as ``torch.sparse``'s.

>>> import ember
>>> adj = ember.tensor([[0.0, 1.0], [1.0, 0.0]]).to_sparse()
>>> ember.sparse.mm(adj, ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
tensor([[3., 4.],
        [1., 2.]])
"""
from __future__ import annotations

import functools

from .._sparse import INVARIANTS, matmul, sparse_softmax, sparse_sum
from .._sparse import compressed_products as _compressed
from .._sparse.compressed import is_compressed, layout_name
from .._sparse.tensor import is_sparse, to_dense


def mm(mat1, mat2, reduce: str = "sum"):
    """``mat1 @ mat2`` with a sparse operand: dense for sparse @ dense, sparse for
    sparse @ sparse; differentiable w.r.t. the dense operand and the sparse one's values
    (whose gradient is sparse, with its indices)."""
    if reduce != "sum":
        raise NotImplementedError(f"sparse.mm(reduce={reduce!r}): only 'sum'")
    if is_compressed(mat1) or is_compressed(mat2):
        return _compressed.matmul(mat1, mat2)
    return matmul(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """``beta * mat + alpha * (mat1 @ mat2)`` with a sparse ``mat1``."""
    if is_compressed(mat) or is_compressed(mat1) or is_compressed(mat2):
        return _compressed.addmm(mat, mat1, mat2, beta, alpha)
    product = matmul(mat1, mat2)
    if is_sparse(mat):
        mat = to_dense(mat)
    return mat * beta + product * alpha


def sum(input, dim=None, dtype=None):  # noqa: A001  (torch.sparse.sum)
    """The sum of the specified elements: a dense 0-d tensor without ``dim``; over ``dim``,
    sparse while sparse dims remain.

    >>> import ember
    >>> s = ember.tensor([[0.0, 1.0], [2.0, 3.0]]).to_sparse()
    >>> ember.sparse.sum(s), ember.sparse.sum(s, 0).to_dense()
    (tensor(6.), tensor([2., 4.]))
    """
    if is_compressed(input):  # PyTorch's sparse.sum coalesces first: COO only
        raise RuntimeError(f"coalesce expected sparse coordinate tensor layout but got "
                           f"{layout_name(input)}")
    return sparse_sum(input, dim, dtype)


def sampled_addmm(input, mat1, mat2, *, beta=1.0, alpha=1.0, out=None):
    """``beta * input + alpha * (mat1 @ mat2)`` computed only at the elements the CSR
    ``input`` specifies: a CSR tensor of ``input``'s indices.

    >>> import ember
    >>> mask = ember.eye(2).to_sparse_csr()
    >>> ember.sparse.sampled_addmm(mask, ember.ones(2, 3), ember.ones(3, 2)).values()
    tensor([4., 4.])
    """
    if out is not None:
        raise NotImplementedError("sparse.sampled_addmm(out=)")
    return _compressed.sampled_addmm(input, mat1, mat2, beta, alpha)


def softmax(input, dim, *, dtype=None):
    """Softmax along ``dim`` over the specified elements (the others count as minus
    infinity and stay unspecified)."""
    return sparse_softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """``log(softmax(input, dim))`` over the specified elements."""
    return sparse_softmax(input, dim, dtype, log=True)


class check_sparse_tensor_invariants:
    """Checks of sparse tensors' indices at construction (``sparse_coo_tensor``): on or off
    for the process (``enable``/``disable``), or within a ``with`` block.

    >>> import ember
    >>> with ember.sparse.check_sparse_tensor_invariants():
    ...     ember.sparse_coo_tensor([[0, 3]], [1.0, 2.0], (3,))
    Traceback (most recent call last):
    ...
    RuntimeError: size is inconsistent with indices: for dim 0, size is 3 but found index 3
    """

    def __init__(self, enable: bool = True):
        self.state = enable
        self.saved = None

    @staticmethod
    def is_enabled() -> bool:
        return INVARIANTS["enabled"]

    @staticmethod
    def enable() -> None:
        INVARIANTS["enabled"] = INVARIANTS["explicit"] = True

    @staticmethod
    def disable() -> None:
        INVARIANTS["enabled"] = False
        INVARIANTS["explicit"] = True

    def __enter__(self):
        self.saved = (INVARIANTS["enabled"], INVARIANTS["explicit"])
        INVARIANTS["enabled"], INVARIANTS["explicit"] = self.state, True
        return self

    def __exit__(self, *exc):
        INVARIANTS["enabled"], INVARIANTS["explicit"] = self.saved
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return fn(*args, **kwargs)
        return run


__all__ = ["mm", "addmm", "sum", "softmax", "log_softmax", "check_sparse_tensor_invariants",
           "sampled_addmm"]
