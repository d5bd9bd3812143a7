"""``LinearCrossEntropyLoss``: a ``Linear`` layer and cross entropy in one module (its
``linear`` submodule holds the weight), over ``F.linear_cross_entropy``."""
import math

from .. import functional as F
from ..functional._linear_cross_entropy import LinearCrossEntropyOptions
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``Linear(in_features, num_classes * prod(out_features))``'s logits.

    >>> import ember
    >>> loss = LinearCrossEntropyLoss(3, 5)
    >>> loss(ember.randn(4, 3), ember.tensor([0, 4, 2, 1])).shape
    ember.Size([])
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and weight.shape != (num_classes,):
            raise RuntimeError(
                f"expected weight shape to be {(num_classes,)}, got {tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(
                f"expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        super().__init__(weight=weight, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        weight = self.linear.weight.reshape(
            (self.num_classes, *self.out_features, self.linear.in_features))
        bias = self.linear.bias
        if bias is not None:
            bias = bias.reshape((self.num_classes, *self.out_features))
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
