"""Saved-tensor hooks for built-in ops (``ember.autograd.graph.saved_tensors_hooks``).

A built-in op's node keeps its saved inputs as a bare tuple and its saved output as
an array (``primitive.py``): no per-tensor objects on the hot path. When hooks are
active at the time it saves, ``pack_node`` packs each of them instead and switches
the node to a subclass whose ``saved_tensors``/``saved_arrays`` unpack them, so
nodes made without hooks never pay for the feature.
"""
from ..autograd.graph import FREED_MESSAGE, HookedSavedTensor

_hooked_classes = {}


class _HookedNodeMixin:
    """``saved_tensors`` of a built-in node whose saved tensors went through pack hooks."""
    _packed_inputs = ()
    _packed_output = None

    def _saved_inputs(self):
        if self._saved is None:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(None if r is None else r.unpack(self) for r in self._packed_inputs)

    @property
    def saved_tensors(self):
        saved = self._saved_inputs()
        if self._packed_output is not None:
            saved += (self._packed_output.unpack(self),)
        return saved

    @property
    def saved_arrays(self):
        return [None if t is None else t._data for t in self.saved_tensors]

    def _release(self):
        super()._release()
        self._packed_inputs = ()
        self._packed_output = None


def _hooked_class(node_cls):
    cls = _hooked_classes.get(node_cls)
    if cls is None:
        cls = type(node_cls.__name__, (_HookedNodeMixin, node_cls),
                   {"__module__": node_cls.__module__, "__qualname__": node_cls.__qualname__})
        _hooked_classes[node_cls] = cls
    return cls


def pack_node(ctx, hooks, output):
    """Pack what ``ctx`` (a built-in node, graph just connected) saved through ``hooks``."""
    saved = ctx._saved or ()
    ctx._packed_inputs = tuple(None if t is None else HookedSavedTensor(t, None, hooks)
                               for t in saved)
    if ctx._out_data is not None or ctx._saved_output is not None:
        ctx._packed_output = HookedSavedTensor(output, 0, hooks)
        ctx._out_data = None
        ctx._saved_output = None
    ctx._saved = ()  # not None: None means "freed"
    ctx._versions = ()
    ctx.__class__ = _hooked_class(type(ctx))
