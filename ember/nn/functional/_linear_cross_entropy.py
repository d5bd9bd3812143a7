"""``linear_cross_entropy``: cross entropy of a linear layer's logits in one call.

This is PyTorch's reference path (``options=None``): the logits are ``linear(input, weight,
bias)`` reshaped to ``(N, C, d_1, ..., d_K)`` for a K-dimensional weight, then
``cross_entropy``. PyTorch's chunked path (``options=LinearCrossEntropyOptions(...)``) computes
the same loss without materializing the logits and with its own autograd restrictions; ember
does not have it and says so.
"""
import dataclasses
import math

from ._linear import linear
from ._loss import cross_entropy

__all__ = ["linear_cross_entropy"]


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """The chunking options of PyTorch's chunked ``linear_cross_entropy`` (same fields and
    defaults). ember has only the reference path, so passing one raises NotImplementedError.

    >>> LinearCrossEntropyOptions().acc_policy
    'auto'
    """
    allow_retain_graph: bool = False
    batch_chunk_size: "int | None" = None
    chunking_method: "str | None" = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target, ...)``; a weight of
    shape ``(C, d_1, ..., d_K, in_features)`` gives a K-dimensional loss.

    >>> import ember
    >>> x, w = ember.randn(4, 3), ember.randn(5, 3)
    >>> t = ember.tensor([0, 4, 2, 1])
    >>> loss = linear_cross_entropy(x, w, t)
    >>> bool(ember.isclose(loss, ember.nn.functional.cross_entropy(x @ w.T, t)))
    True
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError("expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch_shape = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(
            "expected equal input and linear_weight last dimensions (in_features), "
            f"got {input.shape[-1]} and {linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, "
                           f"got {tuple(linear_bias.shape)}")
    if out_features and not batch_shape:
        raise RuntimeError(
            f"K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
            f"requires batched input, (N, {in_features}), got unbatched input with shape "
            f"{tuple(input.shape)}")
    logits_shape = (*batch_shape, num_classes, *out_features)
    # cross_entropy tells class probabilities from indices by the target's shape
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    if options is not None:
        raise NotImplementedError(
            "linear_cross_entropy: the chunked path (options=LinearCrossEntropyOptions(...)) "
            "is not implemented in ember; options=None computes the same loss")
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)
