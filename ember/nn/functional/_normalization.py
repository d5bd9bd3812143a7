"""batch_norm, instance_norm, layer_norm, group_norm (PyTorch's semantics, checks, wording).

Written with differentiable ember ops, so every gradient (and the gradient of a
gradient) comes from autograd; running statistics are updated in place outside
the graph. layer_norm on a contiguous float CPU tensor is one op instead
(ember/_ops/norm_ops.py: compiled rows, the same formula).
"""
from ...autograd import grad_mode
from ...autograd.batching import hooks as _batching
from ..._ops import norm_ops as _norm_ops

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm"]


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _normalize(x, dims, eps):
    """(x - mean) / sqrt(biased var + eps) over ``dims``; also returns mean and biased var."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    return centered * (var + eps).rsqrt(), mean, var


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization over dim 1 of (N, C, *); in training the batch statistics are used
    and the running ones updated (unbiased variance), otherwise the running ones are used."""
    dim = input.dim()
    c = input.shape[1] if dim >= 2 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if training and input.numel() // max(c, 1) <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input "
                         f"size {input.shape}")
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    elif eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    shape = (1, c) + (1,) * (dim - 2)
    dims = (0,) + tuple(range(2, dim))
    if training:
        count = input.numel() // c
        out, mean, var = _normalize(input, dims, eps)
        if running_mean is not None or running_var is not None:
            with grad_mode.no_grad():
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(
                        mean.detach().reshape(c).to(running_mean.dtype) * momentum)
                if running_var is not None:
                    unbiased = var.detach().reshape(c) * (count / (count - 1))
                    running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    else:
        if running_mean is None or running_var is None:
            which = "running_mean" if running_mean is None else "running_var"
            raise RuntimeError(f"{which} must be defined in evaluation mode")
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalize each (sample, channel) of (N, C, *S) over its spatial positions, then a
    per-channel affine. With ``use_input_stats`` the running statistics (if given) move by
    ``momentum`` towards the batch average of the instance mean and unbiased variance;
    without it they are used instead of the instance statistics.

    >>> import ember
    >>> ember.nn.functional.instance_norm(ember.tensor([[[1., 3.]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    if use_input_stats:
        spatial = 1
        for n in input.shape[2:]:
            spatial *= n
        if spatial == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size {input.shape}")
    if (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be "
                         "None")
    n, c = input.shape[:2]
    # PyTorch checks the per-channel tensors repeated over the batch (as (1, N*C) batch norm)
    for name, t in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if t is not None and t.numel() * n != n * c:
            raise RuntimeError(f"{name} should contain {n * c} elements not {t.numel() * n}")
    shape = (1, c) + (1,) * (input.dim() - 2)
    if use_input_stats:
        dims = tuple(range(2, input.dim()))
        out, mean, var = _normalize(input, dims, eps)
        if running_mean is not None:
            count = input.numel() // max(n * c, 1)
            with grad_mode.no_grad():
                batch_mean = mean.detach().reshape(n, c).mean(0)
                unbiased = var.detach().reshape(n, c).mean(0) * (count / (count - 1))
                running_mean.mul_(1 - momentum).add_(batch_mean.to(running_mean.dtype)
                                                     * momentum)
                running_var.mul_(1 - momentum).add_(unbiased.to(running_var.dtype) * momentum)
    else:
        if running_mean is None:
            raise RuntimeError("Expected running_mean and running_var to be defined when "
                               "use_input_stats is false")
        out = (input - running_mean.reshape(shape)) * (running_var.reshape(shape) + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last ``len(normalized_shape)`` dims."""
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with "
                           f"shape [*, {', '.join(map(str, normalized_shape))}], but got input of "
                           f"size{_sizes(input.shape)}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and tuple(t.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {_sizes(t.shape)} and normalized_shape = "
                               f"{_sizes(normalized_shape)}")
    if not input.is_meta and _batching[0] is None and _norm_ops.fusable(input, weight, bias):
        return _norm_ops.NativeLayerNorm.apply(input, weight, bias, k, eps)
    out, _, _ = _normalize(input, tuple(range(input.dim() - k, input.dim())), eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization: channels split into ``num_groups`` groups, each normalized over
    its channels and all spatial positions; then a per-channel affine."""
    dim = input.dim()
    if dim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {dim}")
    n, c = input.shape[:2]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {_sizes(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {_sizes(t.shape)} "
                               f"and input of shape {_sizes(input.shape)}")
    grouped = input.reshape(n, num_groups, -1)
    out, _, _ = _normalize(grouped, (2,), eps)
    out = out.reshape(input.shape)
    shape = (1, c) + (1,) * (dim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out
