"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both follow PyTorch's math path: a boolean ``attn_mask`` of SDPA marks the positions that
*take part* (True = keep); MultiheadAttention's boolean masks mark the positions to *ignore*
(True = masked out), as in PyTorch. SDPA returns 0 for a query row that can see no key
(PyTorch's "safe softmax"); MultiheadAttention with ``need_weights=True`` gives NaN there,
as PyTorch does.

>>> import ember
>>> from ember.nn import functional as F
>>> q = k = v = ember.ones(1, 2, 3, 4)
>>> F.scaled_dot_product_attention(q, k, v, is_causal=True).shape
ember.Size([1, 2, 3, 4])
"""
import math
import warnings

from ... import _functions as _F
from ..._creation import zeros_like
from ..._ops.nn_ops import softmax
from ..attention import _check_backend as _check_sdpa_backend
from ._linear import linear as _linear

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]


def _in_projection(query, key, value, weights, biases, packed_weight, packed_bias):
    """q, k, v projected. Self-attention with the packed weight (query, key and value one
    tensor) runs one product with all three projections, as PyTorch's packed path does."""
    if packed_weight is not None and query is key and key is value:
        return _linear(query, packed_weight, packed_bias).chunk(3, dim=-1)
    return [_linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases)]


def _dropout(x, p, training=True):
    if not training or p == 0:
        return x
    if p == 1:
        return x * 0
    mask = x.new_empty(x.shape).bernoulli_(1 - p)
    return x * mask / (1 - p)


def _safe_softmax(scores, dim=-1):
    """softmax that gives 0 (and a zero gradient) for slices that are all -inf."""
    masked_rows = (scores == float("-inf")).all(dim, keepdim=True)
    # vmap and meta tensors: no data-dependent test
    no_test = getattr(scores, "_vmap_level", None) is not None or scores.is_meta
    if not no_test and not bool(masked_rows.any()):
        return softmax(scores, dim)
    finite = _F.where(masked_rows, zeros_like(scores), scores)
    return _F.where(masked_rows, zeros_like(scores), softmax(finite, dim))


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over the last two dims, as ``torch.nn.functional``'s.

    ``attn_mask``: bool (True = take part) or float (added to the scores), broadcastable to
    (..., L, S); ``is_causal``: top-left lower-triangular mask (no attn_mask allowed);
    ``scale`` defaults to 1/sqrt(E); ``dropout_p`` is applied to the attention weights;
    ``enable_gqa``: key/value may have fewer heads (dim -3) than query.
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if attn_mask is not None and attn_mask.dtype.name != "bool" \
            and attn_mask.dtype != query.dtype and not attn_mask.is_floating_point():
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {attn_mask.dtype} and  query.dtype: {query.dtype} instead.")
    _check_sdpa_backend(query, key, value, dropout_p, enable_gqa)  # sdpa_kernel's choice
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        rep = query.size(-3) // key.size(-3)

        def _repeat(t):
            shape = tuple(t.shape)
            t = t.unsqueeze(-3).expand(*shape[:-2], rep, *shape[-2:])
            return t.reshape(*shape[:-3], shape[-3] * rep, *shape[-2:])
        key, value = _repeat(key), _repeat(value)
    scores = query.matmul(key.transpose(-2, -1)) * scale_factor
    if is_causal:
        above = _F.triu(scores.new_ones(L, S), 1) > 0
        scores = scores.masked_fill(above, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores, -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    return weights.matmul(value)


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """bool mask -> float mask with -inf where True; float masks pass through."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if not is_float:
        mask = mask.new_zeros(tuple(mask.shape), dtype=target_type).masked_fill(
            mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _pad_last(mask):
    """Append one zero column (PyTorch's pad(mask, (0, 1)))."""
    return _F.cat([mask, mask.new_zeros(*mask.shape[:-1], 1)], -1)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """The computation of ``nn.MultiheadAttention`` (sequence-first layout), as PyTorch's."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask, attn_mask, is_causal = _mha_float_masks(
        key_padding_mask, attn_mask, is_causal, need_weights, query.dtype)
    head_dim = _mha_check_dims(key, value, embed_dim, embed_dim_to_check, num_heads,
                               use_separate_proj_weight)
    if use_separate_proj_weight:
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        weights = in_proj_weight.chunk(3)
    biases = (None,) * 3 if in_proj_bias is None else in_proj_bias.chunk(3)
    q, k, v = _in_projection(query, key, value, weights, biases,
                             None if use_separate_proj_weight else in_proj_weight, in_proj_bias)
    if attn_mask is not None:
        attn_mask = _mha_attn_mask_3d(attn_mask, (bsz * num_heads, tgt_len, key.shape[0]))
    k, v, attn_mask, key_padding_mask = _mha_add_bias_kv(
        k, v, bias_k, bias_v, static_k, static_v, attn_mask, key_padding_mask, bsz)

    heads = bsz * num_heads
    q = q.reshape(tgt_len, heads, head_dim).transpose(0, 1)
    k = k.reshape(k.shape[0], heads, head_dim).transpose(0, 1) if static_k is None else static_k
    v = v.reshape(v.shape[0], heads, head_dim).transpose(0, 1) if static_v is None else static_v
    if add_zero_attn:
        k = _F.cat([k, k.new_zeros(heads, 1, head_dim)], 1)
        v = _F.cat([v, v.new_zeros(heads, 1, head_dim)], 1)
        attn_mask = None if attn_mask is None else _pad_last(attn_mask)
        key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    if key_padding_mask is not None:
        attn_mask = _mha_merge_padding_mask(key_padding_mask, attn_mask, bsz, num_heads,
                                            k.size(1))
    if not training:
        dropout_p = 0.0

    shape = (tgt_len, bsz, num_heads, embed_dim)
    if need_weights:
        out, weights = _mha_with_weights(q, k, v, attn_mask, dropout_p, shape,
                                         average_attn_weights)
    else:
        out, weights = _mha_fused(q, k, v, attn_mask, dropout_p, is_causal, shape), None
    out = _linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return out, weights


def _mha_float_masks(key_padding_mask, attn_mask, is_causal, need_weights, dtype):
    """Both masks as float masks (-inf = ignore), and the is_causal hint kept only where
    PyTorch keeps it."""
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype,
                                       "attn_mask", dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        return key_padding_mask, None, is_causal
    attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", dtype, check_other=False)
    return key_padding_mask, attn_mask, is_causal and key_padding_mask is None


def _mha_check_dims(key, value, embed_dim, embed_dim_to_check, num_heads, separate):
    """The head size, after PyTorch's checks of the embedding and key/value shapes."""
    if embed_dim != embed_dim_to_check:
        raise AssertionError(
            f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if separate:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
    return head_dim


def _mha_attn_mask_3d(attn_mask, shape_3d):
    """A 2-D (L, S) or 3-D (N*heads, L, S) attention mask as 3-D, shapes checked."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != shape_3d[1:]:
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                               f"should be {shape_3d[1:]}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != shape_3d:
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                               f"should be {shape_3d}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _mha_add_bias_kv(k, v, bias_k, bias_v, static_k, static_v, attn_mask, key_padding_mask,
                     bsz):
    """Append the learned key/value bias as one more source position (both or neither)."""
    if bias_k is None and bias_v is None:
        return k, v, attn_mask, key_padding_mask
    if bias_k is None:
        raise AssertionError("bias_v is set but bias_k is None")
    if bias_v is None:
        raise AssertionError("bias_k is set but bias_v is None")
    if static_k is not None:
        raise AssertionError("bias cannot be added to static key.")
    if static_v is not None:
        raise AssertionError("bias cannot be added to static value.")
    k = _F.cat([k, bias_k.repeat(1, bsz, 1)])
    v = _F.cat([v, bias_v.repeat(1, bsz, 1)])
    attn_mask = None if attn_mask is None else _pad_last(attn_mask)
    key_padding_mask = None if key_padding_mask is None else _pad_last(key_padding_mask)
    return k, v, attn_mask, key_padding_mask


def _mha_merge_padding_mask(key_padding_mask, attn_mask, bsz, num_heads, src_len):
    """The (N, S) padding mask spread over heads, (N*heads, 1, S), added to attn_mask."""
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len)
                        .expand(-1, num_heads, -1, -1)
                        .reshape(bsz * num_heads, 1, src_len))
    return key_padding_mask if attn_mask is None else attn_mask + key_padding_mask


def _mha_with_weights(q, k, v, attn_mask, dropout_p, shape, average_attn_weights):
    """Attention computed step by step, keeping the weights: (out before the output
    projection as (L*N, E), weights (N, heads, L, S) or their mean over heads)."""
    tgt_len, bsz, num_heads, embed_dim = shape
    q_scaled = q * math.sqrt(1.0 / float(q.size(-1)))
    scores = q_scaled.matmul(k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = _dropout(weights, dropout_p)
    out = weights.matmul(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    weights = weights.reshape(bsz, num_heads, tgt_len, k.size(1))
    return out, weights.mean(1) if average_attn_weights else weights


def _mha_fused(q, k, v, attn_mask, dropout_p, is_causal, shape):
    """Attention through scaled_dot_product_attention (no weights): out as (L*N, E)."""
    tgt_len, bsz, num_heads, embed_dim = shape
    src_len = k.size(1)
    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, -1)
    k = k.reshape(bsz, num_heads, src_len, -1)
    v = v.reshape(bsz, num_heads, src_len, -1)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    return out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
