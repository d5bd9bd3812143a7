"""Training-mode batch normalization as one op: ``FusedBatchNorm`` (PyTorch's
``native_batch_norm``, NativeBatchNormBackward0).

``F.batch_norm`` in training composes ~11 differentiable ops (mean, centre, square, mean,
add, rsqrt, scale, two reshapes, weight, bias), each a node and a temporary, and ~20 more in
backward: on the small activations of a CNN step that bookkeeping costs more than the
arithmetic. This op computes each channel's mean and biased variance in double (returned,
rounded, for the running statistics) and the output as ATen's CPU kernel does. Its
array backward is ATen's closed form, per channel over the ``m`` reduced positions (the
channel sums in double):

    dot = sum(g * (x - mean));   gx = (g - sum(g) / m - (x - mean) * dot * invstd^2 / m)
                                      * invstd * weight

``gw = dot * invstd``, ``gb = sum(g)``. The tensor backward
(``create_graph=True``, dispatch) recomputes the composite formula under grad mode and
differentiates it, so higher derivatives hold.
"""
from ..autograd.backprop import plain_grad
from ..autograd.grad_mode import enable_grad, _state as _grad_state
from ..backend import get_array_module
from ..backend.dtypes import float32, float64
from ..backend.meta import is_meta
from .._tensor import Tensor
from .primitive import Primitive
from .rnn_ops import _LSTMLayerNode

__all__ = ["FusedBatchNorm", "batch_norm_fusable", "batch_norm_composite"]

_make = Tensor._make


def batch_norm_fusable(x, weight, bias):
    """Whether ``FusedBatchNorm`` takes these tensors: a float32/float64 input of at least
    2 dims with elements, weight and bias None or of its dtype, not meta."""
    dtype = x.dtype
    return (dtype in (float32, float64) and x.dim() >= 2 and x.numel() > 0
            and not is_meta(x._data)
            and all(t is None or t.dtype is dtype for t in (weight, bias)))


def _layout(ndim, c):
    return (0,) + tuple(range(2, ndim)), (1, c) + (1,) * (ndim - 2)


def batch_norm_composite(x, weight, bias, eps):
    """The formula as ember ops: ``(out, mean, biased var)``, mean and var kept as (1, C, 1..).

    >>> import ember
    >>> out, mean, var = batch_norm_composite(ember.tensor([[1.0], [3.0]]), None, None, 0.0)
    >>> out, mean, var
    (tensor([[-1.],
            [ 1.]]), tensor([[2.]]), tensor([[1.]]))
    """
    dims, shape = _layout(x.dim(), x.shape[1])
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    out = centered * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean, var


class FusedBatchNorm(Primitive):
    """``forward(x, weight, bias, eps)``: the normalized ``x`` (N, C, *) with the batch
    statistics of each channel, and those statistics (mean, biased variance).

    >>> import ember
    >>> out, mean, var = FusedBatchNorm.apply(ember.tensor([[1.0], [3.0]]), ember.ones(1),
    ...                                       None, 0.0)
    >>> out
    tensor([[-1.],
            [ 1.]])
    """
    _backward_name = "NativeBatchNormBackward0"
    _node_base = _LSTMLayerNode  # several outputs, arrays in and out

    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        d = x._data
        xp = get_array_module(d)
        dims, shape = _layout(d.ndim, d.shape[1])
        # the statistics in double, rounded once, and the output as ATen's CPU kernel
        # forms it: x * alpha + beta, alpha = invstd * weight, beta = bias - mean * alpha
        mean64 = d.mean(axis=dims, keepdims=True, dtype=xp.float64)
        deviation = d - mean64
        var64 = (deviation * deviation).mean(axis=dims, keepdims=True)
        mean, var = mean64.astype(d.dtype), var64.astype(d.dtype)
        invstd = (1 / xp.sqrt(var64 + eps)).astype(d.dtype)
        alpha = invstd if weight is None else invstd * weight._data.reshape(shape)
        beta = -mean * alpha
        if bias is not None:
            beta = beta + bias._data.reshape(shape)
        out = d * alpha
        out += beta
        centered = d - mean
        ctx.eps = eps
        ctx.save_for_backward(x, weight, bias, _make(centered), _make(invstd))
        return out, mean, var

    @staticmethod
    def backward_arrays(ctx, grad, grad_mean, grad_var):
        _, weight, _, centered, invstd = ctx.saved_arrays
        dims, shape = _layout(centered.ndim, centered.shape[1])
        count = centered.size // centered.shape[1]
        needs = ctx.needs_input_grad
        gx = gw = gb = None
        if grad is not None:
            xp = get_array_module(grad)
            acc = xp.float64  # per-channel sums in double, as ATen's CPU kernel accumulates
            sum_g = grad.sum(axis=dims, keepdims=True, dtype=acc)
            dot = (grad * centered).sum(axis=dims, keepdims=True, dtype=acc)
            if needs[1]:
                gw = (dot * invstd).reshape(-1).astype(grad.dtype)
            if needs[2]:
                gb = sum_g.reshape(-1).astype(grad.dtype)
            if needs[0]:
                k = (dot * (invstd * invstd) / count).astype(grad.dtype)
                scale = invstd if weight is None else invstd * weight.reshape(shape)
                gx = (grad - (sum_g / count).astype(grad.dtype) - centered * k) * scale
        if needs[0] and (grad_mean is not None or grad_var is not None):
            extra = 0
            if grad_mean is not None:
                extra = extra + grad_mean / count
            if grad_var is not None:
                extra = extra + grad_var * (2 / count) * centered
            gx = extra + (0 if gx is None else gx)
            gx = gx if gx.shape == centered.shape else \
                get_array_module(centered).broadcast_to(gx, centered.shape).copy()
        return gx, gw, gb, None

    @staticmethod
    def backward(ctx, grad, grad_mean, grad_var):
        inputs = ctx.saved_tensors[:3]
        wanted = [k for k, (t, need) in enumerate(zip(inputs, ctx.needs_input_grad))
                  if need and t is not None]
        with enable_grad():
            outs = batch_norm_composite(*inputs, ctx.eps)
        found = plain_grad(outs, [inputs[k] for k in wanted], (grad, grad_mean, grad_var),
                           create_graph=_grad_state.enabled, allow_unused=True)
        grads = [None] * 4
        for k, g in zip(wanted, found):
            grads[k] = g if g is not None else inputs[k].new_zeros(inputs[k].shape)
        return tuple(grads)
