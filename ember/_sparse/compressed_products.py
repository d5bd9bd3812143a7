"""Products with a compressed sparse operand: compressed @ dense (``spmm``), dense @
compressed (``dense_spmm``), ``matmul``, ``mv``, ``addmm`` and ``sampled_addmm``, answered
for the calls in ``compressed_handlers.py`` and ``ember.sparse``.

Each product expands the compressed rows to one (row, column) pair per specified element
(``compressed.element_entries``: blocks element by element) and runs the compiled
``SpMM`` op of ``_ops/sparse_ops.py`` on them, differentiable w.r.t. the values and the dense
operand; dense @ compressed is ``(t^T @ d^T)^T`` with the pairs swapped.

>>> import ember
>>> c = ember.tensor([[0.0, 2.0], [1.0, 0.0]]).to_sparse_csr()
>>> matmul(c, ember.tensor([[1.0], [3.0]]))
tensor([[6.],
        [1.]])
"""
from __future__ import annotations

from .._ops.sparse_ops import SpMM
from ..backend.sparse_data import no_sparse_kernel
from . import compressed as C
from . import tensor as _coo
from .compressed import is_compressed, layout_name, layout_of, shape_of, with_values
from .compressed_factory import type_name as _type_name


def _same_dtype(a, b):
    """PyTorch's products of a compressed operand take one floating dtype."""
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(a.dtype)} but found "
                           f"{_type_name(b.dtype)}")
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise NotImplementedError(f'"addmm_out_sparse_csr_impl_mkl" not implemented for '
                                  f"'{_type_name(a.dtype)}'")


def _mm_layout_check(t, other_layout="Strided", reversed_order=False, other=None):
    if other is not None and other.dim() > 2:
        raise RuntimeError(f"expand is unsupported for {layout_name(t)} tensors")
    if C.batch_dims(t) or C.dense_dims(t):  # PyTorch's batched products fail on strides
        raise RuntimeError(f"Sparse {layout_of(t)[7:].upper()} tensors do not have strides")
    if layout_of(t) == C.sparse_bsc and not reversed_order:
        raise RuntimeError(f"addmm: computation on CPU is not implemented for Strided + "
                           f"SparseBsc @ {other_layout}")
    if layout_of(t) == C.sparse_bsr and reversed_order:
        raise RuntimeError("addmm: computation on CPU is not implemented for Strided + "
                           "Strided @ SparseBsr")


def spmm(t, d):
    """compressed (m, k) @ dense (k, n) -> dense (m, n), differentiable w.r.t. both."""
    _mm_layout_check(t, other=d)
    m, k = shape_of(t)
    if d.dim() != 2:
        raise RuntimeError(f"mm: expected 2D dense tensor, got {d.dim()}D tensor")
    if d.shape[0] != k:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and "
                           f"{d.shape[0]}x{d.shape[1]})")
    _, rows, cols, vals = C.element_entries(t)
    _same_dtype(vals, d)
    return SpMM.apply(vals, d, rows, cols, m)


def dense_spmm(d, t):
    """dense (m, k) @ compressed (k, n) -> dense: ``(t^T @ d^T)^T``."""
    _mm_layout_check(t, reversed_order=True)
    k, n = shape_of(t)
    if d.dim() != 2 or d.shape[1] != k:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({d.shape[0]}x"
                           f"{d.shape[-1]} and {k}x{n})")
    _, rows, cols, vals = C.element_entries(t)
    _same_dtype(d, vals)
    return SpMM.apply(vals, d.t(), cols, rows, n).t()


def matmul(a, b):
    """Products with a compressed operand: compressed @ dense and dense @ compressed are
    dense; CSR @ CSR is CSR (of the product's nonzero elements)."""
    if is_compressed(a) and is_compressed(b):
        product = C.to_dense(a) @ C.to_dense(b)
        return C.dense_to_compressed(product, layout_of(a) if layout_of(a) in
                                     (C.sparse_csr, C.sparse_csc) else C.sparse_csr)
    if _coo.is_sparse(a) or _coo.is_sparse(b):
        raise RuntimeError(f"addmm: computation on CPU is not implemented for "
                           f"{layout_name(a)} + {layout_name(a)} @ {layout_name(b)}")
    if is_compressed(a):
        if b.dim() == 1:
            return mv(a, b)
        return spmm(a, b)
    if a.dim() == 1:
        return dense_spmm(a[None, :], b)[0]
    return dense_spmm(a, b)


def mv(t, v):
    """compressed (m, k) @ vector (k,) -> dense (m,)."""
    m, k = shape_of(t)[-2:] if len(shape_of(t)) >= 2 else (shape_of(t) + (0,))[:2]
    if v.dim() != 1 or v.shape[0] != k:
        raise RuntimeError(f"size mismatch, got input ({m}), mat ({m}x{k}), vec "
                           f"({v.shape[0] if v.dim() else 1})")
    return spmm(t, v[:, None])[:, 0]


def addmm(input, mat1, mat2, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)`` with a compressed ``mat1`` or ``mat2``."""
    if is_compressed(input):
        raise RuntimeError(f"addmm: computation on CPU is not implemented for "
                           f"{layout_name(input)} + {layout_name(mat1)} @ {layout_name(mat2)}")
    product = matmul(mat1, mat2)
    if beta == 0:
        return product * alpha if alpha != 1 else product
    return input * beta + (product * alpha if alpha != 1 else product)


def sampled_addmm(input, mat1, mat2, beta=1.0, alpha=1.0):
    """``beta * input + alpha * (mat1 @ mat2)`` at ``input``'s specified elements only
    (``ember.sparse.sampled_addmm``): a CSR tensor of ``input``'s indices."""
    if not is_compressed(input):
        raise no_sparse_kernel("sparse_sampled_addmm", "CPU")
    if layout_of(input) != C.sparse_csr:
        raise RuntimeError(f"sampled_addmm: Expected result to have sparse csr layout, but got "
                           f"{layout_name(input)}")
    if C.batch_dims(input) or C.dense_dims(input):
        raise NotImplementedError("sampled_addmm of a batched or hybrid CSR tensor")
    _, rows, cols, vals = C.entries(input)
    picked = (mat1[rows] * mat2.t()[cols]).sum(-1)
    return with_values(input, vals * beta + picked * alpha)
