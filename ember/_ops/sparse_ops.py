"""``SpMM``: a sparse (COO) matrix times a dense one, the product under ``sparse.mm``.

``out[r] = sum over the entries (r, c, v) of v * dense[c]``: one compiled pass over the
entries (``kernels.spmm_rows``) on NumPy float arrays, without the ``(nnz, F)`` products a
composition of gather, multiply and ``index_add`` lays out; other arrays (devices) take
that composition's array form. The gradients are a product of the same kind (the
transposed matrix times the output gradient) and one value per entry, both written with
differentiable ops, so the op is differentiable any number of times.
"""
from ..backend import get_array_module, kernels
from .primitive import Primitive


class SpMM(Primitive):
    """``forward(ctx, values, dense, rows, cols, m)``: values (nnz,), dense (K, F), rows and
    cols int64 (nnz,) tensors, ``m`` the output's rows -> (m, F)."""
    _backward_name = "SparseAddmmBackward0"

    @staticmethod
    def forward(ctx, values, dense, rows, cols, m):
        ctx.save_for_backward(values, dense, rows, cols)
        ctx.k = dense._data.shape[0]
        d, v = dense._data, values._data
        xp = get_array_module(d, v)
        out = xp.zeros((m,) + d.shape[1:], dtype=d.dtype)
        r, c = rows._data, cols._data
        if kernels.native_for(out, v) and d.dtype == out.dtype:
            kernels.spmm_rows(out, r, c, v, xp.ascontiguousarray(d))
        elif r.shape[0]:
            xp.add.at(out, r, v.reshape((-1,) + (1,) * (d.ndim - 1)) * d[c])
        return out

    @staticmethod
    def backward(ctx, grad):
        values, dense, rows, cols = ctx.saved_tensors
        g_values = g_dense = None
        if ctx.needs_input_grad[0]:
            g_values = (grad[rows] * dense[cols]).sum(1)
        if ctx.needs_input_grad[1]:
            g_dense = SpMM.apply(values, grad, cols, rows, ctx.k)
        return g_values, g_dense, None, None, None
