"""The fused weight normalization ``w = v * (g / ||v||)`` (PyTorch's
``_weight_norm_interface``), the norm over every dim but the first or the last."""
from __future__ import annotations

from ..backend import get_array_module
from .primitive import Primitive


def _other_axes(ndim, dim):
    return tuple(d for d in range(ndim) if d != dim)


class WeightNormInterface(Primitive):
    """Forward on arrays; backward ``gg = sum(G v) / n``, ``gv = (g / n) (G - v gg / n)``
    (sums over the normed dims), written with ember ops."""
    _backward_name = "WeightNormInterfaceBackward0"

    @staticmethod
    def forward(ctx, v, g, dim):
        d = v._data
        xp = get_array_module(d)
        axes = _other_axes(d.ndim, dim)
        ctx.axes = axes
        ctx.save_for_backward(v, g)
        norm = xp.sqrt((d * d).sum(axis=axes, keepdims=True))
        return d * (g._data / norm)

    @staticmethod
    def backward(ctx, grad):
        v, g = ctx.saved_tensors
        axes = list(ctx.axes)
        norm = (v * v).sum(axes, keepdim=True).sqrt()
        projection = (grad * v).sum(axes, keepdim=True) / norm
        grad_g = projection.reshape(g.shape) if ctx.needs_input_grad[1] else None
        grad_v = (g / norm) * (grad - v * (projection / norm)) if ctx.needs_input_grad[0] else None
        return grad_v, grad_g, None
