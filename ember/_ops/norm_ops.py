"""Layer normalization as one op: ``NativeLayerNorm`` (PyTorch's NativeLayerNormBackward0).

``F.layer_norm`` composes it from ~8 differentiable ops (mean, centre, variance, rsqrt,
scale, shift), each a NumPy pass with a temporary and a graph node, ~15 more in backward.
Where the compiled rows (``ember.backend._vector``) take the input -- a C-contiguous
float32/float64 NumPy array, weight and bias of its dtype or None -- this op runs the
forward in one pass per row (mean and variance in double) and the array backward in two:

    xhat = (x - mean) * rstd;   gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))

with ``gw = g * weight``; the weight and bias gradients are sums over the rows (in double).
The tensor backward (``create_graph=True``, dispatch) recomputes the composite formula under
grad mode and differentiates it, so higher derivatives hold.
"""
import math

import numpy as np

from ..autograd.backprop import plain_grad
from ..autograd.grad_mode import enable_grad, _state as _grad_state
from ..backend import kernels
from .._tensor import Tensor
from .primitive import Primitive

__all__ = ["NativeLayerNorm", "fusable"]

_make = Tensor._make


def fusable(x, weight, bias):
    """Whether ``NativeLayerNorm`` takes these tensors (see the module docstring)."""
    return kernels.layer_norm_native_for(x._data, None if weight is None else weight._data,
                                         None if bias is None else bias._data)


def _composite(x, weight, bias, dims, eps):
    """The formula as ember ops (the tensor backward's recomputation)."""
    mean = x.mean(dims, keepdim=True)
    centered = x - mean
    var = (centered * centered).mean(dims, keepdim=True)
    out = centered * (var + eps).rsqrt()
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


class NativeLayerNorm(Primitive):
    """Layer normalization over the last ``ndim`` dims of ``x``.

    >>> import ember
    >>> x = ember.tensor([[1.0, 3.0], [2.0, 2.0]])
    >>> NativeLayerNorm.apply(x, None, None, 1, 0.0)
    tensor([[-1.,  1.],
            [ 0.,  0.]])
    """
    _backward_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, ndim, eps):
        d = x._data
        size = math.prod(d.shape[d.ndim - ndim:])
        rows = d.size // size if size else 0
        out = np.empty_like(d)
        mean, rstd = np.empty(rows), np.empty(rows)
        kernels.layer_norm_forward(d, None if weight is None else weight._data,
                                   None if bias is None else bias._data, out, mean, rstd,
                                   size, eps)
        ctx.ndim, ctx.eps = ndim, eps
        # the row statistics are saved tensors too: freed with the graph, seen by hooks
        ctx.save_for_backward(x, weight, bias, _make(mean), _make(rstd))
        return out

    @staticmethod
    def backward_arrays(ctx, grad):
        x, weight, _, mean, rstd = ctx.saved_arrays
        needs = ctx.needs_input_grad
        size = math.prod(x.shape[x.ndim - ctx.ndim:])
        grad = np.ascontiguousarray(grad, dtype=x.dtype)
        gx = np.empty_like(x) if needs[0] else None
        gw = np.zeros(size) if needs[1] and weight is not None else None
        gb = np.zeros(size) if needs[2] else None
        kernels.layer_norm_backward(grad, x, weight, mean, rstd, gx, gw, gb, size)
        shape = x.shape[x.ndim - ctx.ndim:]
        return (gx,
                None if gw is None else gw.astype(x.dtype).reshape(shape),
                None if gb is None else gb.astype(x.dtype).reshape(shape), None, None)

    @staticmethod
    def backward(ctx, grad):
        """Recompute the composite formula and differentiate it: the gradients are then
        themselves differentiable (``create_graph=True``)."""
        x, weight, bias = ctx.saved_tensors[:3]
        inputs = (x, weight, bias)
        dims = tuple(range(x.dim() - ctx.ndim, x.dim()))
        wanted = [k for k, (t, need) in enumerate(zip(inputs, ctx.needs_input_grad))
                  if need and t is not None]
        with enable_grad():
            out = _composite(x, weight, bias, dims, ctx.eps)
        found = plain_grad((out,), [inputs[k] for k in wanted], (grad,),
                           create_graph=_grad_state.enabled, allow_unused=True)
        grads = [None] * 5
        for k, g in zip(wanted, found):
            grads[k] = g if g is not None else inputs[k].new_zeros(inputs[k].shape)
        return tuple(grads)
