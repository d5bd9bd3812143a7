"""Layer normalization as one op: ``NativeLayerNorm`` (PyTorch's NativeLayerNormBackward0).

``F.layer_norm`` composes it from ~8 differentiable ops (mean, centre, variance, rsqrt,
scale, shift), each a NumPy pass with a temporary and a graph node, ~15 more in backward.
Where the compiled rows (``ember.backend._vector``) take the input -- a C-contiguous
float32/float64 NumPy array, weight and bias of its dtype or None -- this op runs the
forward in one pass per row (mean and variance in double) and the array backward in two:

    xhat = (x - mean) * rstd;   gx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))

with ``gw = g * weight`` (element-wise in the input's dtype, the row sums in double); the
weight and bias gradients are sums over the rows (in double).
Large inputs are split by rows over the thread pool; the backward's blocks of rows depend on
the shapes alone and their weight and bias sums are added in block order, so every result is
the same bits whatever the thread count.
The tensor backward (``create_graph=True``, dispatch) recomputes the composite formula under
grad mode and differentiates it, so higher derivatives hold.
"""
import math

import numpy as np

from ..autograd.backprop import plain_grad
from ..autograd.grad_mode import enable_grad, _state as _grad_state
from ..backend import kernels
from ..backend.parallel import parallel_for, run_blocks, sample_blocks, sum_parts
from .._tensor import Tensor
from .primitive import Primitive

__all__ = ["NativeLayerNorm", "fusable"]

_make = Tensor._make

#: rows per block of the backward: about this many bytes of its four row arrays
_BLOCK_BYTES = 1 << 18


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
    >>> x = ember.tensor([[1.0, 3.0], [2.0, 6.0]])
    >>> NativeLayerNorm.apply(x, None, None, 1, 0.0)  # each row: (x - mean) / std
    tensor([[-1.,  1.],
            [-1.,  1.]])
    """
    _backward_name = "NativeLayerNormBackward0"

    @staticmethod
    def forward(ctx, x, weight, bias, ndim, eps):
        d = x._data
        size = math.prod(d.shape[d.ndim - ndim:])
        rows = d.size // size if size else 0
        out = np.empty_like(d)
        mean, rstd = np.empty(rows), np.empty(rows)
        w = None if weight is None else weight._data
        b = None if bias is None else bias._data
        flat, flat_out = d.reshape(rows, size), out.reshape(rows, size)

        def block(lo, hi):  # rows are independent: the same bits for any split
            kernels.layer_norm_forward(flat[lo:hi], w, b, flat_out[lo:hi], mean[lo:hi],
                                       rstd[lo:hi], size, eps)
        parallel_for(rows, block, 2 * d.nbytes)
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
        rows = x.size // size
        gx = np.empty_like(x) if needs[0] else None
        want_w, want_b = needs[1] and weight is not None, needs[2]
        flat_g, flat_x = grad.reshape(rows, size), x.reshape(rows, size)
        flat_gx = None if gx is None else gx.reshape(rows, size)
        # blocks of rows set by the shapes alone, their weight and bias sums added in block
        # order: the same bits whatever the thread count
        blocks = sample_blocks(rows, 4 * size * x.itemsize, _BLOCK_BYTES)
        w_parts = [np.zeros(size) if want_w else None for _ in blocks]
        b_parts = [np.zeros(size) if want_b else None for _ in blocks]

        def block(i, lo, hi):
            kernels.layer_norm_backward(flat_g[lo:hi], flat_x[lo:hi], weight, mean[lo:hi],
                                        rstd[lo:hi], None if gx is None else flat_gx[lo:hi],
                                        w_parts[i], b_parts[i], size)
        run_blocks(blocks, block, 4 * x.nbytes)
        gw = sum_parts(w_parts) if want_w else None
        gb = sum_parts(b_parts) if want_b else None
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
