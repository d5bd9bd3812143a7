"""``F.embedding``: look rows of ``weight`` up by index."""
from ...autograd.grad_mode import no_grad
from ..._ops import embedding_ops as _emb


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
    if sparse:
        raise NotImplementedError("ember has no sparse tensors: use sparse=False")
    if max_norm is not None:
        input = input.contiguous()
        with no_grad():
            _emb.embedding_renorm_(weight, input, max_norm, norm_type)
    return _emb.Embedding.apply(weight, input, padding_idx, scale_grad_by_freq)


__all__ = ["embedding"]
