"""``F.dropout`` and the channel-wise ``F.dropout1d/2d/3d``: zero entries (or whole channels)
with probability ``p`` in training and scale the rest by ``1 / (1 - p)``; ``F.alpha_dropout``
and ``F.feature_alpha_dropout``, which keep a SELU network's mean and variance."""
import math
import warnings

from ...autograd.grad_mode import no_grad


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _apply_mask(input, p, mask_shape, inplace):
    with no_grad():
        if p == 1.0:
            mask = input.new_zeros(mask_shape)
        else:
            mask = input.new_empty(mask_shape).bernoulli_(1 - p)
            mask.div_(1 - p)
    if inplace:
        return input.mul_(mask)
    return input * mask


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` (training only); scale the rest by 1/(1-p)."""
    _check_p(p)
    if not training or p == 0.0:
        return input
    return _apply_mask(input, p, tuple(input.shape), inplace)


def _feature_dropout(input, p, training, inplace):
    if not training or p == 0.0:
        return input
    if input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape)
    return _apply_mask(input, p, shape[:2] + (1,) * (len(shape) - 2), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, L) or (C, L) input with probability ``p``."""
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    if input.dim() == 2:
        return _feature_dropout(input.unsqueeze(0), p, training, inplace).squeeze(0)
    return _feature_dropout(input, p, training, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, H, W) input with probability ``p``."""
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {inp_dim}-D input to dropout2d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout2d "
            "exists to provide channel-wise dropout on inputs with 2 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).",
            stacklevel=2)
    if inp_dim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise "
            "1D dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of (N, C, D, H, W) or (C, D, H, W) input with probability ``p``.

    >>> import ember, ember.nn.functional as F
    >>> F.dropout3d(ember.ones(1, 2, 1, 1, 1), 0.5, training=False).flatten()
    tensor([1., 1.])
    """
    _check_p(p)
    inp_dim = input.dim()
    if inp_dim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {inp_dim}-D input to dropout3d, which is deprecated "
            "and will result in an error in a future release. To retain the behavior "
            "and silence this warning, please use dropout instead. Note that dropout3d "
            "exists to provide channel-wise dropout on inputs with 3 spatial dimensions, "
            "a channel dimension, and an optional batch dimension (i.e. 4D or 5D inputs).",
            stacklevel=2)
    if inp_dim == 5:
        return _feature_dropout(input, p, training, inplace)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if inp_dim + 1 < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    # an unbatched input: the noise of its batch of one, (C, 1, ...), without unsqueezing, so
    # an in-place call returns the input itself as PyTorch's does
    shape = tuple(input.shape)
    return _apply_mask(input, p, shape[:1] + (1,) * (len(shape) - 1), inplace)


# SELU's negative saturation value -scale * alpha: dropped units are set to it
_SELU_SAT = 1.7580993408473766


def _alpha_dropout(input, p, training, inplace, mask_shape):
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:  # PyTorch zeroes everything then
        return input.mul_(0) if inplace else input * input.new_zeros(())
    a = 1.0 / math.sqrt((_SELU_SAT * _SELU_SAT * p + 1) * (1 - p))
    with no_grad():
        keep = input.new_empty(mask_shape).bernoulli_(1 - p)
        shift = (keep - 1) * (_SELU_SAT * a) + _SELU_SAT * a * p
        keep.mul_(a)
    if inplace:
        return input.mul_(keep).add_(shift)
    return input * keep + shift


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout: each element is set to SELU's saturation value with probability ``p``,
    then all are scaled and shifted so the mean and variance are kept (training only).

    >>> import ember, ember.nn.functional as F
    >>> F.alpha_dropout(ember.ones(3), 0.2, training=False)
    tensor([1., 1., 1.])
    """
    _check_p(p)
    return _alpha_dropout(input, p, training, inplace, tuple(input.shape))


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (dim 1) of input with at least 2 dims.

    >>> import ember, ember.nn.functional as F
    >>> F.feature_alpha_dropout(ember.ones(1, 2), 0.2, training=False)
    tensor([[1., 1.]])
    """
    _check_p(p)
    if training and p != 0.0 and input.numel() != 0 and input.dim() < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = tuple(input.shape)
    return _alpha_dropout(input, p, training, inplace, shape[:2] + (1,) * (len(shape) - 2))


__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]
