"""batch_norm, instance_norm, layer_norm, group_norm, rms_norm (PyTorch's semantics, checks,
wording).

Written with differentiable ember ops, so every gradient (and the gradient of a
gradient) comes from autograd; running statistics are updated in place outside
the graph. layer_norm on a contiguous float CPU tensor is one op instead
(ember/_ops/norm_ops.py: compiled rows, the same formula).

A float16/bfloat16 input is normalized in float32 (PyTorch's "opmath") and the result rounded
once to the input's dtype; its parameters (weight, bias, running statistics) are of its dtype
or all float32, as PyTorch's CPU kernels allow, and its gradient comes back in its dtype,
theirs in theirs. Any other mix of dtypes raises PyTorch's error (``_opmath``).
"""
from ...autograd import grad_mode
from ...autograd.batching import hooks as _batching
from ...backend import dtypes as _dtypes
from ...autograd.dispatch import active as _dispatch_active
from ..._ops import batch_norm_ops as _bn_ops, norm_ops as _norm_ops
from ..._creation import _is_int, _type_name

__all__ = ["batch_norm", "instance_norm", "layer_norm", "group_norm", "rms_norm"]

#: dtypes computed in float32 and rounded back (PyTorch's reduced floating types)
_REDUCED = (_dtypes.float16, _dtypes.bfloat16)
_F16, _BF16, _F32 = _dtypes.float16, _dtypes.bfloat16, _dtypes.float32


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _opmath(input, *params):
    """The dtype to normalize ``input`` in when it is not its own (float32 for float16 or
    bfloat16), else None; raises PyTorch's CPU error for a mix of dtypes it refuses.

    ``params`` (None where absent) in PyTorch's order: the first one given says which rule
    applies. Of the input's dtype, all must be; otherwise ("mixed dtype") all must be float32
    and the input float16 or bfloat16.

    >>> import ember
    >>> _opmath(ember.ones(2, dtype=ember.bfloat16), ember.ones(2), None)
    ember.float32
    >>> _opmath(ember.ones(2), ember.ones(2)) is None
    True
    """
    dtype = input.dtype
    for p in params:
        if p is not None and p.dtype is not dtype:
            _check_mixed(dtype, [q for q in params if q is not None])
            break
    return _F32 if dtype is _F16 or dtype is _BF16 else None


def _check_mixed(dtype, given):
    if given[0].dtype is dtype:  # not a mixed call: the others must follow the first
        odd = next(p for p in given if p.dtype is not dtype)
        raise RuntimeError(f"expected scalar type {dtype.scalar_name} but found "
                           f"{odd.dtype.scalar_name}")
    if any(p.dtype is not _F32 for p in given):
        raise RuntimeError("mixed dtype (CPU): expect parameter to have scalar type of Float")
    if dtype not in _REDUCED:
        raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")


def _as(t, dtype):
    """``t`` (or None) in ``dtype``: itself when it already is."""
    return t if t is None or t.dtype is dtype else t.to(dtype)


def _in_opmath(compute, norm, input, weight, bias, *rest):
    """``norm(input, weight, bias, *rest)``, run in ``compute`` (``_opmath``'s answer) when
    that is not None: input and affine parameters cast up, the result rounded back once."""
    if compute is None:
        return norm(input, weight, bias, *rest)
    return norm(input.to(compute), _as(weight, compute), _as(bias, compute),
                *rest).to(input.dtype)


def _blend(running, stat, momentum):
    """running <- (1 - momentum) * running + momentum * stat, in place outside the graph."""
    if running.dtype is stat.dtype:
        running.mul_(1 - momentum).add_(stat * momentum)
    else:  # float16/bfloat16 statistics: blended in float32, rounded once, as PyTorch does
        running.copy_(running.to(stat.dtype) * (1 - momentum) + stat * momentum)


def _normalize(x, dims, eps):
    """(x - mean) / sqrt(biased var + eps) over ``dims``; also returns mean and biased var."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    return centered * (var + eps).rsqrt(), mean, var


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Batch normalization over dim 1 of (N, C, *); in training the batch statistics are used
    and the running ones updated (unbiased variance), otherwise the running ones are used.

    >>> import ember
    >>> x = ember.tensor([[1.0], [3.0]], dtype=ember.bfloat16)
    >>> ember.nn.functional.batch_norm(x, None, None, ember.ones(1), training=True)
    tensor([[-1.],
            [ 1.]], dtype=ember.bfloat16)
    """
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
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")
    return _in_opmath(_opmath(input, weight, bias, running_mean, running_var), _batch_norm,
                      input, weight, bias, running_mean, running_var, training, momentum, eps)


def _batch_norm(x, weight, bias, running_mean, running_var, training, momentum, eps):
    c, dim = x.shape[1], x.dim()
    shape = (1, c) + (1,) * (dim - 2)
    dims = (0,) + tuple(range(2, dim))
    if training:
        count = x.numel() // c
        fused = _batching[0] is None and not _dispatch_active[0] and \
            _bn_ops.batch_norm_fusable(x, weight, bias)
        if fused:  # one node; the affine included
            out, mean, var = _bn_ops.FusedBatchNorm.apply(x, weight, bias, eps)
        else:
            out, mean, var = _normalize(x, dims, eps)
        if running_mean is not None or running_var is not None:
            with grad_mode.no_grad():
                if running_mean is not None:
                    _blend(running_mean, mean.detach().reshape(c), momentum)
                if running_var is not None:
                    _blend(running_var, var.detach().reshape(c) * (count / (count - 1)),
                           momentum)
        if fused:
            return out
    else:
        mean, var = _as(running_mean, x.dtype), _as(running_var, x.dtype)
        out = (x - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias, shape)


def _affine(out, weight, bias, shape=None):
    """``out * weight + bias`` (either may be None), each reshaped to ``shape`` if given."""
    if weight is not None:
        out = out * (weight if shape is None else weight.reshape(shape))
    if bias is not None:
        out = out + (bias if shape is None else bias.reshape(shape))
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
    if not use_input_stats and running_mean is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    # the affine parameters and the running statistics each follow the dtype rule on their
    # own: PyTorch repeats the statistics over the batch before its kernel checks them
    _opmath(input, running_mean, running_var)
    return _in_opmath(_opmath(input, weight, bias), _instance_norm, input, weight, bias,
                      running_mean, running_var, use_input_stats, momentum, eps)


def _instance_norm(x, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps):
    n, c = x.shape[:2]
    shape = (1, c) + (1,) * (x.dim() - 2)
    if use_input_stats:
        dims = tuple(range(2, x.dim()))
        out, mean, var = _normalize(x, dims, eps)
        if running_mean is not None:
            count = x.numel() // max(n * c, 1)
            with grad_mode.no_grad():
                batch_mean = mean.detach().reshape(n, c).mean(0)
                unbiased = var.detach().reshape(n, c).mean(0) * (count / (count - 1))
                _blend(running_mean, batch_mean, momentum)
                _blend(running_var, unbiased, momentum)
    else:
        mean, var = _as(running_mean, x.dtype), _as(running_var, x.dtype)
        out = (x - mean.reshape(shape)) * (var.reshape(shape) + eps).rsqrt()
    return _affine(out, weight, bias, shape)


def _check_normalized_shape(input, normalized_shape):
    k = len(normalized_shape)
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with "
                           f"shape [*, {', '.join(map(str, normalized_shape))}], but got input of "
                           f"size{_sizes(input.shape)}")


def _normalized_shape(value, name):
    """``normalized_shape`` parsed as PyTorch's argument parser reads an int list: a tuple
    or list of ints (no bare int; a bool only after the first element, which PyTorch checks
    more strictly), with its TypeErrors; then at least one dim."""
    arg = f"{name}(): argument 'normalized_shape'"
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{arg} (position 2) must be tuple of ints, not {_type_name(value)}")
    for pos, s in enumerate(value):
        if (pos == 0 and isinstance(s, bool)) or not _is_int(s):
            if pos == 0:
                raise TypeError(f"{arg} (position 2) must be tuple of ints, but found element "
                                f"of type {_type_name(s)} at pos 0")
            raise TypeError(f"{arg} failed to unpack the object at pos {pos + 1} with error "
                            f"\"type must be tuple of ints,but got {_type_name(s)}\"")
    if not value:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    return tuple(int(s) for s in value)


def _check_same_shape(name, t, normalized_shape):
    if t is not None and tuple(t.shape) != normalized_shape:
        raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                           f"{name} of shape {_sizes(t.shape)} and normalized_shape = "
                           f"{_sizes(normalized_shape)}")


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalization over the last ``len(normalized_shape)`` dims.

    >>> import ember
    >>> x = ember.tensor([[1.0, 3.0]], dtype=ember.float16)
    >>> ember.nn.functional.layer_norm(x, (2,), ember.ones(2), ember.zeros(2))
    tensor([[-1.,  1.]], dtype=ember.float16)
    """
    if input.dtype in _dtypes.FLOAT8:  # PyTorch has no float8 kernel
        raise NotImplementedError(f"\"LayerNormKernelImpl\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    normalized_shape = _normalized_shape(normalized_shape, "layer_norm")
    _check_same_shape("weight", weight, normalized_shape)  # PyTorch's order
    _check_same_shape("bias", bias, normalized_shape)
    _check_normalized_shape(input, normalized_shape)
    return _in_opmath(_opmath(input, weight, bias), _layer_norm, input, weight, bias,
                      len(normalized_shape), eps)


def _layer_norm(x, weight, bias, k, eps):
    if not x.is_meta and _batching[0] is None and _norm_ops.fusable(x, weight, bias):
        return _norm_ops.NativeLayerNorm.apply(x, weight, bias, k, eps)
    out, _, _ = _normalize(x, tuple(range(x.dim() - k, x.dim())), eps)
    return _affine(out, weight, bias)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalization: channels split into ``num_groups`` groups, each normalized over
    its channels and all spatial positions; then a per-channel affine.

    >>> import ember
    >>> x = ember.tensor([[1.0, 3.0]], dtype=ember.bfloat16)
    >>> ember.nn.functional.group_norm(x, 1, ember.ones(2), ember.zeros(2))
    tensor([[-1.,  1.]], dtype=ember.bfloat16)
    """
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
    return _in_opmath(_opmath(input, weight, bias), _group_norm, input, weight, bias,
                      num_groups, eps)


def _group_norm(x, weight, bias, num_groups, eps):
    n, c = x.shape[:2]
    out, _, _ = _normalize(x.reshape(n, num_groups, -1), (2,), eps)
    return _affine(out.reshape(x.shape), weight, bias, (1, c) + (1,) * (x.dim() - 2))


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """Root-mean-square normalization over the last ``len(normalized_shape)`` dims:
    ``x / sqrt(mean(x ** 2) + eps) * weight``. ``eps`` defaults to the machine epsilon of the
    dtype computed in (float32 for float16/bfloat16/float32 input, float64 for float64). A
    float16/bfloat16 input is computed in float32; the result has the input's dtype whatever
    the weight's.

    >>> import ember
    >>> ember.nn.functional.rms_norm(ember.tensor([[3.0, -3.0]]), [2])
    tensor([[ 1., -1.]])
    """
    if isinstance(normalized_shape, int):  # PyTorch's argument parser takes no bare int here
        raise TypeError(f"rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    _check_same_shape("weight", weight, normalized_shape)
    if input.dim() < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got "
                         f"{input.dim()}")
    if tuple(input.shape[input.dim() - k:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={list(normalized_shape)}, expected input with "
                           f"shape [*{', '.join(map(str, normalized_shape))}], but got input of "
                           f"size{_sizes(input.shape)}")
    dtype = input.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise NotImplementedError(f'"rms_norm" not implemented for \'{dtype.scalar_name}\'')
    compute = _dtypes.float32 if dtype in _REDUCED else dtype
    if eps is None:
        eps = _dtypes.finfo(compute.to_real()).eps  # complex: that of its parts
    x = _as(input, compute)
    dims = tuple(range(input.dim() - k, input.dim()))
    out = x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is not None:  # in the promoted dtype of the two (float64 weight: float64 here)
        out = out * weight
    return _as(out, dtype)
