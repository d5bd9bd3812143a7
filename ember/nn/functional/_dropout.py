"""``F.dropout`` and the channel-wise ``F.dropout1d/2d``: zero entries (or whole channels)
with probability ``p`` in training and scale the rest by ``1 / (1 - p)``."""
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


__all__ = ["dropout", "dropout1d", "dropout2d"]
