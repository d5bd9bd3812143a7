"""The rest of ``torch.autograd.graph``'s public API: ``allow_mutation_on_saved_tensors``
and the switches that only matter to compilers and CUDA streams (re-exported by
``ember.autograd.graph``).

Under ``allow_mutation_on_saved_tensors()``, a tensor saved for backward that is then
modified in place is first cloned, and backward uses the clone, as PyTorch does. The
tensors saved in the block are tracked by saved-tensor hooks; in-place writes are seen
where ember makes them (``Tensor._write``, which every ``x.op_(...)``, ``x[...] = v``,
``copy_``, ``fill_`` and ``zero_`` goes through), wrapped only while a block is open. As
in PyTorch, a tensor counts as saved by its identity, its ``data_ptr()`` and its version:
a write through a view that starts elsewhere in memory is not seen.

>>> import ember
>>> with allow_mutation_on_saved_tensors():
...     a = ember.ones(2, requires_grad=True)
...     b = a.clone()
...     out = (b ** 2).sum()
...     _ = b.sin_()
...     out.backward()
>>> a.grad
tensor([2., 2.])
"""
import collections
import contextlib
import weakref

from .._tensor import Tensor
from .saved_hooks import saved_tensors_hooks

# (no new check on ember's write path: the block swaps Tensor._write while it is open)
_enabled = [False]
_switches = {"warn_on_accumulate_grad_stream_mismatch": True,
             "override_stale_capture_stream": False}


class _Handle:
    """What the graph keeps for a saved tensor: the key to its original or its clone."""
    __slots__ = ("__weakref__",)


class _AllowMutationOnSavedContext:
    """The state of one ``allow_mutation_on_saved_tensors`` block (cleared on exit):
    the saved tensors by handle, the clones made of them, and which saved tensors sit at
    each (data pointer, version)."""

    def __init__(self):
        self.cloned = weakref.WeakKeyDictionary()
        self.original = weakref.WeakKeyDictionary()
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid = collections.defaultdict(set)

    def clear(self):
        """Forget every tensor."""
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()


def _tensor_id(t):
    return id(t), t.data_ptr(), t._vc[0]


def _memory_id(t):
    return t.data_ptr(), t._vc[0]


def _hooks(ctx):
    def pack(tensor):
        tid = _tensor_id(tensor)
        ctx.sid_to_tid[_memory_id(tensor)].add(tid)
        handle = ctx.tid_to_weakhandle.get(tid)
        if handle is None:  # the same tensor at the same version saved again shares one
            handle = _Handle()
            ctx.tid_to_weakhandle[tid] = handle
            ctx.original[handle] = tensor
        return handle

    def unpack(handle):
        message = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                   "contextin which the graph was originally recorded.")
        if not _enabled[0]:
            raise AssertionError(message)
        if handle in ctx.cloned:
            return ctx.cloned[handle]
        if handle not in ctx.original:
            raise AssertionError(message)
        return ctx.original[handle]
    return saved_tensors_hooks(pack, unpack)


def _cloning_write(ctx, plain_write):
    def write(self, array):
        tids = ctx.sid_to_tid.get(_memory_id(self))
        for tid in tids or ():
            handle = ctx.tid_to_weakhandle.get(tid)
            if handle is None or handle in ctx.cloned:  # freed by backward, or cloned
                continue
            original = ctx.original.pop(handle)
            ctx.cloned[handle] = Tensor._make(original._data.copy(), False)
        plain_write(self, array)
    return write


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """A block in which tensors saved for backward may be modified in place: they are
    cloned first and backward uses the clones. Run the forward and the backward in the
    same block; it yields its state object and clears it on exit. Blocks do not nest.
    See the module docstring for an example."""
    if _enabled[0]:  # (PyTorch then also switches the outer block off; ember leaves it)
        raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
    ctx = _AllowMutationOnSavedContext()
    plain_write = Tensor._write
    with _hooks(ctx):
        try:
            _enabled[0] = True
            Tensor._write = _cloning_write(ctx, plain_write)
            yield ctx
        finally:
            ctx.clear()
            _enabled[0] = False
            Tensor._write = plain_write


def region_activation_memory_budget(budget):
    """The activation memory budget of a region compiled by ``torch.compile``'s
    partitioner. ``ember.compile`` runs eagerly, so (as PyTorch outside a compiled
    region) this checks ``budget`` and raises RuntimeError."""
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError("ember.autograd.graph.region_activation_memory_budget: expects a "
                        f"float, got {type(budget).__name__}")
    if not 0.0 <= budget <= 1.0:
        raise ValueError("ember.autograd.graph.region_activation_memory_budget: must be in "
                         f"[0, 1], got {budget}")
    raise RuntimeError("ember.autograd.graph.region_activation_memory_budget can only be used "
                       "inside a ember.compile region; it has no effect in eager mode.")


def _set_switch(name, enabled):
    if not isinstance(enabled, bool):
        raise RuntimeError(f"enabled must be a bool, but got {type(enabled).__name__}")
    _switches[name] = enabled


def set_warn_on_accumulate_grad_stream_mismatch(enabled):
    """Whether to warn when a gradient reaches a leaf's accumulator on another CUDA stream.
    ember's engine runs on one stream, so the switch is recorded and has no effect.

    >>> set_warn_on_accumulate_grad_stream_mismatch(True)
    """
    _set_switch("warn_on_accumulate_grad_stream_mismatch", enabled)


def set_override_stale_capture_stream(enabled):
    """Whether CUDA graph capture replaces a stale stream with the capturing one. ember
    has no CUDA graph capture, so the switch is recorded and has no effect.

    >>> set_override_stale_capture_stream(False)
    """
    _set_switch("override_stale_capture_stream", enabled)
