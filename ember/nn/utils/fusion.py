"""Folding an eval-mode BatchNorm into the convolution or linear layer before it.

BatchNorm in eval mode is the affine map ``y = (x - mean) * w / sqrt(var + eps) + b``, so
``bn(conv(x))`` equals one convolution whose output channels are rescaled by
``w / sqrt(var + eps)`` and whose bias absorbs the shift.

>>> import ember
>>> conv, bn = ember.nn.Conv2d(2, 3, 3).eval(), ember.nn.BatchNorm2d(3).eval()
>>> fused = ember.nn.utils.fuse_conv_bn_eval(conv, bn)
>>> x = ember.randn(1, 2, 5, 5)
>>> ember.allclose(fused(x), bn(conv(x)), atol=1e-6)
True
"""
import copy

from ... import _creation, _functions as _F
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def _check_eval(layer, bn):
    if layer.training or bn.training:
        raise AssertionError("Fusion only for eval!")


def _check_stats(bn):
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` (eval mode) with ``bn`` (eval mode) folded into its weight and
    bias; ``transpose``: ``conv`` is a transposed convolution (channels on dim 1).

    >>> import ember
    >>> conv, bn = ember.nn.Conv1d(1, 2, 1).eval(), ember.nn.BatchNorm1d(2).eval()
    >>> ember.nn.utils.fuse_conv_bn_eval(conv, bn).weight.shape
    ember.Size([2, 1, 1])
    """
    _check_eval(conv, bn)
    fused = copy.deepcopy(conv)
    _check_stats(bn)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias,
        transpose)
    return fused


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The (weight, bias) Parameters of a convolution followed by an eval-mode BatchNorm
    with running mean ``bn_rm``, variance ``bn_rv`` and affine ``bn_w``, ``bn_b`` (None:
    1 and 0). ``conv_b`` None: no bias. The results keep the convolution's dtypes.

    >>> import ember
    >>> w, b = ember.nn.utils.fuse_conv_bn_weights(ember.ones(2, 1, 1), None, ember.zeros(2),
    ...                                            ember.full((2,), 3.0), 1.0, None, None)
    >>> w.flatten().tolist(), b.tolist()
    ([0.5, 0.5], [0.0, 0.0])
    """
    w_dtype = conv_w.dtype
    b_dtype = conv_b.dtype if conv_b is not None else w_dtype
    if conv_b is None:
        conv_b = _creation.zeros_like(bn_rm)
    if bn_w is None:
        bn_w = _creation.ones_like(bn_rm)
    if bn_b is None:
        bn_b = _creation.zeros_like(bn_rm)
    inv_std = _F.rsqrt(bn_rv + bn_eps)
    trailing = [1] * (conv_w.dim() - 2)
    shape = [1, -1] + trailing if transpose else [-1, 1] + trailing
    fused_w = (conv_w * (bn_w * inv_std).reshape(shape)).to(dtype=w_dtype)
    fused_b = ((conv_b - bn_rm) * inv_std * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(fused_w, conv_w.requires_grad), Parameter(fused_b, conv_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` (eval mode) with ``bn`` (eval mode, BatchNorm1d over its
    outputs) folded into its weight and bias.

    >>> import ember
    >>> lin, bn = ember.nn.Linear(3, 2).eval(), ember.nn.BatchNorm1d(2).eval()
    >>> x = ember.randn(4, 3)
    >>> ember.allclose(ember.nn.utils.fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)), atol=1e-6)
    True
    """
    _check_eval(linear, bn)
    fused = copy.deepcopy(linear)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError(
            "To fuse, linear.out_features == bn.num_features or bn.num_features == 1, got "
            f"linear.out_features={linear.out_features} and bn.num_features={bn.num_features}")
    _check_stats(bn)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The (weight, bias) Parameters of a linear layer followed by an eval-mode BatchNorm
    (running mean ``bn_rm``, variance ``bn_rv``, affine ``bn_w``, ``bn_b``); ``linear_b``
    None: no bias. The results keep the linear layer's dtypes.

    >>> import ember
    >>> w, b = ember.nn.utils.fuse_linear_bn_weights(ember.ones(2, 3), None, ember.ones(2),
    ...     ember.full((2,), 3.0), 1.0, ember.ones(2), ember.zeros(2))
    >>> b.tolist()
    [-0.5, -0.5]
    """
    w_dtype = linear_w.dtype
    b_dtype = linear_b.dtype if linear_b is not None else w_dtype
    if linear_b is None:
        linear_b = _creation.zeros_like(bn_rm)
    scale = bn_w * _F.rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * scale.unsqueeze(-1).to(dtype=w_dtype)
    fused_b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
