"""``F.embedding(..., sparse=True)``: the lookup whose weight gradient is a sparse tensor
with one entry per looked-up index (PyTorch's layout: indices ``(1, n)``, values
``(n, embedding_dim)``, uncoalesced; the ``padding_idx`` lookups are left out)."""
from __future__ import annotations

from ..autograd.function import Function
from .tensor import make_sparse


class SparseEmbedding(Function):
    """``weight[input]`` forward; backward: the weight's gradient as a sparse tensor."""

    @staticmethod
    def forward(ctx, weight, input, padding_idx, scale_grad_by_freq):
        ctx.save_for_backward(input)
        ctx.weight_shape = tuple(weight.shape)
        ctx.padding_idx = padding_idx
        ctx.scale_grad_by_freq = scale_grad_by_freq
        return weight[input]

    @staticmethod
    def backward(ctx, grad):
        if ctx.scale_grad_by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                               "sparse gradients")
        (input,) = ctx.saved_tensors
        flat = input.reshape(-1)
        rows = grad.reshape(-1, ctx.weight_shape[1])
        if ctx.padding_idx >= 0:
            keep = (flat != ctx.padding_idx).nonzero().flatten()
            flat, rows = flat[keep], rows[keep]
        return make_sparse(flat.reshape(1, -1), rows, ctx.weight_shape, False), None, None, None
