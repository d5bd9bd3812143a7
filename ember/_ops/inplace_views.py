"""In-place ops on views: the base's graph learns about the change.

When ``v = base[...]`` is modified in place, the new base equals the old base
with the region ``v`` covers replaced by the op's result. ``CopySlices`` is the
node for exactly that: the old base gets the gradient outside the region, the
result gets the gradient inside it. The view's own grad_fn is then re-derived
from the new base by replaying its view ops (``Tensor._view_fn``).
"""
from ..backend import get_array_module

from ..autograd.function import gradient_edge, _refresh_view_grad_fn
from ..autograd.graph import Node, _sequence


class CopySlices(Node):
    def __init__(self, base, view_fn, result_edge):
        self.next_functions = (gradient_edge(base), result_edge)
        self._view_fn = view_fn
        self._output_meta = ((base._data.shape, base.dtype),)
        self._sequence_nr = next(_sequence)

    def name(self):
        return "torch::autograd::CopySlices"  # PyTorch's (C++) node name, verbatim

    def _apply(self, grads, create_graph=False):
        from .._tensor import Tensor
        grad = grads[0]
        if grad is None:
            return (None, None)
        outside = get_array_module(grad._data).ones(grad._data.shape, grad._data.dtype)
        self._view_fn(Tensor._make(outside))._data[...] = 0
        return (grad * Tensor._make(outside), self._view_fn(grad))


def rebase_view(view, result):
    """Point ``view``'s base at a CopySlices node holding ``result`` (a tensor, or
    the ``(node, output_nr)`` edge of a custom Function that modified the view)."""
    base = view._base
    edge = result if isinstance(result, tuple) else gradient_edge(result)
    node = CopySlices(base, view._view_fn, edge)
    base._grad_fn, base._output_nr, base._requires_grad = node, 0, True
    view._view_version = -1
    _refresh_view_grad_fn(view)
