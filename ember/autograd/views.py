"""In-place ops, and in-place ops on views: the graph learns about the change.

``x.op_(...)`` runs the out-of-place op on a snapshot of x and writes the result
into x's memory (``inplace``); x then takes over the result's graph node.

When ``v = base[...]`` is modified in place, the new base equals the old base
with the region ``v`` covers replaced by the op's result. ``CopySlices`` is the
node for exactly that: the old base gets the gradient outside the region, the
result gets the gradient inside it. The view's own grad_fn is then re-derived
from the new base by replaying its view ops (``Tensor._view_fn``,
``graph.refresh_view_grad_fn``).
"""
from .._tensor import Tensor
from ..backend import get_array_module
from . import grad_mode, forward_ad
from .graph import Node, _sequence, gradient_edge, refresh_view_grad_fn
from .batching import hooks as _batching

_state = grad_mode._state
_fw_active = forward_ad.active


def inplace(self, fn, *args):
    """Run out-of-place op ``fn(self, *args)`` and write the result into self
    (``Tensor._inplace``, which every ``x.op_`` calls).

    Autograd sees the result as the new value of self: self takes over the
    result's graph node, and when self is a view its base is re-pointed at a
    node that splices the new values into the old base (``CopySlices``).
    """
    if self._wrapper_strides is not None:
        raise NotImplementedError(
            f"ember: in-place ops on a _make_wrapper_subclass tensor ({type(self).__name__}) "
            f"are not dispatched: its values live in the subclass, not in its array")
    record = _state.enabled and (self._requires_grad or any(
        isinstance(a, Tensor) and a._requires_grad for a in args))
    if not record:
        with grad_mode.no_grad():
            out = fn(self, *args)
        if _batching[0] is not None:
            _batching[0].check_inplace(self, out)
        self._write(out._data)
        if _fw_active:
            forward_ad.inplace_result(self, out)
        return self
    _check_inplace_allowed(self)
    src = Tensor._make(self._data.copy(), self._requires_grad)  # saved values stay intact
    src._grad_fn, src._output_nr = gradient_edge(self)  # same place in the graph as self
    if _fw_active:
        forward_ad.set_tangent(src, forward_ad.tangent_of(self))
    out = fn(src, *args)
    if _batching[0] is not None:
        _batching[0].check_inplace(self, out)
    if out.dtype is not self.dtype:
        out = out.to(self.dtype)
    self._write(out._data)
    if self._base is None:
        self._grad_fn, self._output_nr, self._requires_grad = out._grad_fn, out._output_nr, True
    else:
        rebase_view(self, out)
    if _fw_active:
        forward_ad.inplace_result(self, out)
    return self


def _check_inplace_allowed(t):
    if t._grad_fn is None and t._requires_grad and t._base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = t._base
    # a view of a leaf: the leaf requires grad, or the view itself was made to require grad
    # (``x.reshape(2, 2).requires_grad_()``), as PyTorch's check
    if base is not None and base._grad_fn is None and (
            base._requires_grad or (t._requires_grad and t._grad_fn is None)):
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


class CopySlices(Node):
    def __init__(self, base, view_fn, result_edge):
        self.next_functions = (gradient_edge(base), result_edge)
        self._view_fn = view_fn
        self._output_meta = ((base._data.shape, base.dtype),)
        self._sequence_nr = next(_sequence)

    def name(self):
        return "torch::autograd::CopySlices"  # PyTorch's (C++) node name, verbatim

    def _apply(self, grads, create_graph=False):
        grad = grads[0]
        if grad is None:
            return (None, None)
        d = grad._data
        # complex: a mask per part (1 + 1j kept), as a view may hold parts (.real, .imag)
        outside = get_array_module(d).full(d.shape, 1 + 1j if d.dtype.kind == "c" else 1,
                                           d.dtype)
        self._view_fn(Tensor._make(outside))._data[...] = 0
        mask = Tensor._make(outside)
        if d.dtype.kind == "c":
            return (grad.real * mask.real + (grad.imag * mask.imag) * 1j, self._view_fn(grad))
        return (grad * mask, self._view_fn(grad))


def rebase_view(view, result):
    """Point ``view``'s base at a CopySlices node holding ``result`` (a tensor, or
    the ``(node, output_nr)`` edge of a custom Function that modified the view)."""
    base = view._base
    edge = result if isinstance(result, tuple) else gradient_edge(result)
    node = CopySlices(base, view._view_fn, edge)
    base._grad_fn, base._output_nr, base._requires_grad = node, 0, True
    view._view_version = -1
    refresh_view_grad_fn(view)
