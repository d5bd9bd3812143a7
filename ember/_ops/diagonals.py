"""The diagonal views and writes: ``Diagonal`` (a view of a diagonal), ``DiagonalScatter``
(its gradient: a zero tensor holding a diagonal) and ``DiagEmbed`` (vectors as the
diagonals of new matrices), each the other's gradient, so twice differentiable.
"""
from __future__ import annotations

from .._tensor import _wrap_dim
from ..backend import get_array_module
from .primitive import Primitive


def diagonal_dims(ndim, offset, dim1, dim2):
    d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return d1, d2


def _writable_diagonal(d, offset, dim1, dim2):
    view = d.diagonal(offset, dim1, dim2)
    try:
        view.flags.writeable = d.flags.writeable  # NumPy hands out read-only diagonals
    except (AttributeError, ValueError):
        pass
    return view


class Diagonal(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    """A view of the diagonal (offset, dim1, dim2) as the last dim (the array module's
    strided diagonal, made writable so in-place ops on it reach the input)."""
    _backward_name = "DiagonalBackward0"
    is_view = True

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        ctx.in_shape = x._data.shape
        ctx.args = (offset, dim1, dim2)
        return _writable_diagonal(x._data, offset, dim1, dim2)

    @staticmethod
    def backward(ctx, grad):
        return DiagonalScatter.apply(grad, ctx.in_shape, *ctx.args), None, None, None


class DiagonalScatter(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    """Zeros of ``shape`` with ``src`` on the diagonal (offset, dim1, dim2): the adjoint
    of ``Diagonal``."""
    _backward_name = "DiagonalBackwardBackward0"

    @staticmethod
    def forward(ctx, src, shape, offset, dim1, dim2):
        ctx.args = (offset, dim1, dim2)
        d = src._data
        out = get_array_module(d).zeros(shape, dtype=d.dtype)
        _writable_diagonal(out, offset, dim1, dim2)[...] = d
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None, None


class DiagEmbed(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    """Matrices (dims dim1, dim2 of the result) with the input's last dim on their
    ``offset`` diagonal."""
    _backward_name = "DiagEmbedBackward0"

    @staticmethod
    def forward(ctx, x, offset, dim1, dim2):
        d = x._data
        ndim = d.ndim + 1
        d1, d2 = _wrap_dim(dim1, ndim), _wrap_dim(dim2, ndim)
        ctx.args = (offset, d1, d2)
        size = d.shape[-1] + abs(offset) if d.ndim else 1 + abs(offset)
        rest = list(d.shape[:-1])
        shape = []
        for i in range(ndim):
            shape.append(size if i in (d1, d2) else rest.pop(0))
        out = get_array_module(d).zeros(tuple(shape), dtype=d.dtype)
        _writable_diagonal(out, offset, d1, d2)[...] = d
        return out

    @staticmethod
    def backward(ctx, grad):
        return Diagonal.apply(grad, *ctx.args), None, None, None


__all__ = ["Diagonal", "DiagonalScatter", "DiagEmbed", "diagonal_dims"]
