"""Which part of an autograd graph belongs to a transform.

Each transform call opens a ``Level``. Its differentiable inputs become fresh leaves
tagged with the level (inputs already in a graph are aliased instead, so an enclosing
transform or the user's own autograd still sees through). Results are returned attached
to their graph only where that graph reaches a leaf the level does not own (a leaf of an
enclosing transform, a parameter captured by the function): otherwise they are detached,
so no ``requires_grad`` leaks out of a transform, the way torch.func behaves.

Levels are transparent to forward-mode AD: while a dual level is open (an enclosing
``jvp``/``jacfwd``), a wrapped input keeps its tangent, and a released result keeps
the tangent it got, so forward-over-reverse (``jacfwd(jacrev(f))``) sees through.
"""
import threading

from ..autograd import forward_ad
from ..autograd.graph import AccumulateGrad, accumulator_of
from ..autograd.grad_mode import is_grad_enabled
from .batched import BatchedTensor


class _Active(threading.local):
    def __init__(self):
        self.levels = []  # the levels whose calls run in this thread, innermost last


_active = _Active()


class Level:
    """One transform call; the levels of transforms run inside it are its descendants."""

    def __init__(self):
        self.parent = _active.levels[-1] if _active.levels else None
        self._owned_nodes = []  # keeps the tagged accumulators alive while the graph is built

    def __enter__(self):
        _active.levels.append(self)
        return self

    def __exit__(self, *exc):
        _active.levels.remove(self)

    def owns(self, level):
        while level is not None:
            if level is self:
                return True
            level = level.parent
        return False

    def wrap(self, t):
        """The tensor the function sees in place of input ``t``."""
        if t.requires_grad:
            return t.view_as(t)  # a view op: it carries a tangent over itself
        leaf = t.detach().requires_grad_()
        _carry_tangent(t, leaf)
        node = accumulator_of(_physical(leaf))
        node._functorch_level = self
        self._owned_nodes.append(node)
        return leaf

    def reaches_outside(self, tensors):
        """Whether the graph of any of ``tensors`` reaches a leaf this level doesn't own."""
        stack, seen = [], set()
        for t in tensors:
            if t is None or not t.requires_grad:
                continue
            fn = t.grad_fn
            stack.append(fn if fn is not None else accumulator_of(_physical(t)))
        while stack:
            node = stack.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, AccumulateGrad):
                if not self.owns(getattr(node, "_functorch_level", None)):
                    return True
                continue
            stack.extend(fn for fn, _ in node.next_functions)
        return False

    def release(self, t):
        """``t`` as a transform returns it: detached unless it depends on outside leaves."""
        if t.requires_grad and not (is_grad_enabled() and self.reaches_outside([t])):
            detached = t.detach()
            _carry_tangent(t, detached, self.release)
            return detached
        return t


def _physical(t):
    """The tensor autograd records for ``t``: under vmap, its innermost physical tensor
    (a BatchedTensor's graph, and so its leaf's accumulator, is its physical one's)."""
    while isinstance(t, BatchedTensor):
        t = t._value
    return t


def carries_tangents(tensors):
    """Whether a dual level is open and one of ``tensors`` has a tangent at it (reverse
    passes must then record their graph, as that is what propagates the tangents)."""
    return bool(forward_ad._open) and forward_ad.has_tangent(tensors)


def _carry_tangent(src, dst, convert=None):
    """Give ``dst`` (a detached copy of ``src``) the tangent ``src`` has, if any."""
    if not forward_ad._open:
        return
    tangent = forward_ad.tangent_of(src)
    if tangent is not None:
        forward_ad.set_tangent(dst, tangent if convert is None else convert(tangent))
