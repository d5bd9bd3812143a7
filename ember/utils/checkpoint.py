"""Activation checkpointing: trade compute for memory.

``checkpoint(function, *args)`` runs ``function`` without keeping the tensors its ops
save for backward, and runs it again during backward to get them back. Two forms, as
in PyTorch:

* ``use_reentrant=False`` (recommended): the forward runs under saved-tensor hooks that
  keep only a position per saved tensor; the first backward read of one of them reruns
  ``function`` under hooks that collect every saved tensor, and hands them out.
* ``use_reentrant=True``: an ``autograd.Function`` whose backward reruns ``function``
  with grad enabled and calls ``backward`` on its outputs (a backward inside a
  backward); it does not work with ``autograd.grad`` or ``backward(inputs=...)``.

The random state is saved before the forward and restored for the rerun
(``preserve_rng_state=True``), so dropout drops the same elements twice.

>>> import ember
>>> from ember.utils.checkpoint import checkpoint
>>> x = ember.ones(3, requires_grad=True)
>>> y = checkpoint(lambda t: (t.sin() * 2).sum(), x, use_reentrant=False)
>>> y.backward(); bool(ember.allclose(x.grad, 2 * x.cos()))
True
"""
import contextlib
import warnings
import weakref

from .. import nn
from .._tensor import Tensor
from .. import _autocast
from ..autograd import backward as _autograd_backward, enable_grad, Function
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.graph import current_graph_task, saved_tensors_hooks
from ..random import get_rng_state, set_rng_state
from ._checkpoint_extras import (
    _switches, DefaultDeviceType, GraphExecGroup, check_backward_validity, detach_variable,
    get_device_states, set_checkpoint_debug_enabled, set_checkpoint_early_stop,
    set_device_states)

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "get_device_states",
           "set_device_states", "noop_context_fn", "set_checkpoint_early_stop",
           "DefaultDeviceType", "set_checkpoint_debug_enabled", "GraphExecGroup"]


_SELECTIVE = ("CheckpointPolicy", "SelectiveCheckpointContext",
              "create_selective_checkpoint_contexts", "SAC_IGNORED_OPS")
__all__ += _SELECTIVE


def __getattr__(name):
    # Selective checkpointing names ember.ops.aten's overloads, and ember.ops imports
    # ember.utils (whose __init__ imports this module): its names load on first use.
    if name in _SELECTIVE:
        from . import _selective_checkpoint
        return getattr(_selective_checkpoint, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class CheckpointError(RuntimeError):
    """A recomputation that saved different tensors than the original forward."""


def noop_context_fn():
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


# PyTorch ends these errors with a tip on its debug mode and torch.compile; ember has neither.
_DEBUG_TIP = ""


def _default_metadata(x):
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


_METADATA_FNS = {"default": _default_metadata, "none": lambda _: None}


def _warn_use_reentrant(name, also):
    warnings.warn(
        f"ember.utils.checkpoint{name}: the use_reentrant parameter should be passed "
        f"explicitly. {also}use_reentrant=False is recommended, but if you need to preserve "
        "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
        "more details on the differences between the two variants.", stacklevel=3)


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, early_stop=True, **kwargs):
    """Run ``function(*args, **kwargs)``, recomputing it in backward instead of keeping
    what it saves for backward. See the module docstring.

    >>> import ember
    >>> from ember.utils.checkpoint import checkpoint
    >>> lin = ember.nn.Linear(2, 2)
    >>> out = checkpoint(lin, ember.ones(1, 2, requires_grad=True), use_reentrant=True)
    >>> out.sum().backward(); lin.weight.grad.shape
    ember.Size([2, 2])
    """
    if use_reentrant is None:
        _warn_use_reentrant("", "Starting in PyTorch 2.9, calling checkpoint without "
                            "use_reentrant will raise an exception. ")
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         debug, early_stop, args, kwargs)


# ---- reentrant ---------------------------------------------------------------------------
def _check_backward_validity(inputs):
    if not any(inp._requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=4)


def _detached(inputs):
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp._requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


class CheckpointFunction(Function):
    """The reentrant checkpoint: backward reruns the function and backpropagates through it."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        _check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.autocast_state = _autocast.snapshot()  # the recomputation runs as forward did
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        return run_function(*args)  # Function.apply runs forward with grad off

    @staticmethod
    def backward(ctx, *grad_outputs):
        task = current_graph_task()
        if task is not None and task.captures:
            raise RuntimeError(
                "When use_reentrant=True, ember.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with _rng_restored(ctx.fwd_cpu_state if ctx.preserve_rng_state else None):
            detached = _detached(inputs)
            with enable_grad(), _autocast.restored(ctx.autocast_state):
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grad_outputs)
                     if isinstance(o, Tensor) and o._requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _autograd_backward([o for o, _ in with_grad], [g for _, g in with_grad])
        grads = tuple(inp._grad if isinstance(inp, Tensor) else None for inp in detached)
        return (None, None) + grads


@contextlib.contextmanager
def _rng_restored(state):
    """Run the block with the random state ``state`` (None: untouched), then put the
    state from before the block back."""
    if state is None:
        yield
        return
    outer = get_rng_state()
    set_rng_state(state)
    try:
        yield
    finally:
        set_rng_state(outer)


# ---- non-reentrant -----------------------------------------------------------------------
class _StopRecomputation(Exception):
    pass


class _Holder:
    """What the graph keeps for one tensor saved inside a checkpointed forward."""
    __slots__ = ("frame", "index")

    def __init__(self, frame, index):
        self.frame, self.index = frame, index


class _Frame:
    """One checkpointed call: how many tensors its forward saved (and their metadata),
    how to rerun it, and the tensors the latest backward pass recomputed."""

    def __init__(self, recompute, metadata_fn, early_stop):
        self.recompute = recompute
        self.metadata_fn = metadata_fn
        self.early_stop = early_stop
        self.metadata = []
        self.task = None      # weakref to the backward pass the recomputed values are for
        self.values = None

    def pack(self, x):
        self.metadata.append(self.metadata_fn(x))
        return _Holder(self, len(self.metadata) - 1)

    def unpack(self, holder):
        # under a GraphExecGroup, one recomputation serves all its backward calls
        task = GraphExecGroup._get_current_group() or current_graph_task()
        if self.values is None or self.task is None or self.task() is not task:
            self.values = self._recomputed()
            self.task = weakref.ref(task) if task is not None else None
        return self.values[holder.index]

    def _recomputed(self):
        expected = len(self.metadata)
        values = []

        def pack(x):
            if len(values) >= expected:
                raise CheckpointError("ember.utils.checkpoint: trying to save more tensors "
                                      "during recomputation than during the original forward "
                                      f"pass.\n{_DEBUG_TIP}")
            values.append(x.detach())
            if self.early_stop and len(values) == expected:
                raise _StopRecomputation
            return None

        def unpack(_):
            raise CheckpointError("ember.utils.checkpoint: a recomputed graph was "
                                  "differentiated; only the original one can be.")
        try:
            with saved_tensors_hooks(pack, unpack):
                self.recompute()
        except _StopRecomputation:
            pass
        self._check(values)
        return values

    def _check(self, values):
        if len(values) != len(self.metadata):
            raise CheckpointError(
                "ember.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.metadata)}\n"
                f"Number of tensors saved during recomputation: {len(values)}.\n{_DEBUG_TIP}")
        mismatched = ""
        for i, (meta, x) in enumerate(zip(self.metadata, values)):
            now = self.metadata_fn(x)
            if meta != now:
                mismatched += (f"tensor at position {i}:\nsaved metadata: {meta}\n"
                               f"recomputed metadata: {now}\n")
        if mismatched:
            raise CheckpointError(
                "ember.utils.checkpoint: Recomputed values for the following tensors have "
                f"different metadata than during the forward pass.\n{mismatched}.\n"
                f"{_DEBUG_TIP}")


def _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check, debug,
                                  early_stop, args, kwargs):
    if determinism_check not in _METADATA_FNS:
        raise ValueError(f"determinism_check should be one of {list(_METADATA_FNS)}, but got "
                         f"{determinism_check}")
    if debug if _switches["debug"] is None else _switches["debug"]:
        if context_fn is not noop_context_fn:
            raise ValueError("debug=True is incompatible with non-default context_fn")
        raise NotImplementedError("ember.utils.checkpoint: debug=True (operator traces of the "
                                  "forward and the recomputation) is not supported")
    forward_context, recompute_context = context_fn()
    rng_state = get_rng_state() if preserve else None
    autocast_state = _autocast.snapshot()  # the recomputation runs as forward did

    def recompute():
        with _rng_restored(rng_state), enable_grad(), _autocast.restored(autocast_state), \
                recompute_context:
            function(*args, **kwargs)

    if _switches["early_stop"] is not None:
        early_stop = _switches["early_stop"]
    frame = _Frame(recompute, _METADATA_FNS[determinism_check], early_stop)
    if not is_grad_enabled():  # nothing is saved: no hooks, and no forward context
        return function(*args, **kwargs)
    failed = False
    with saved_tensors_hooks(frame.pack, _unpack_holder), forward_context:
        try:
            out = function(*args, **kwargs)
        except BaseException:
            failed = True
            raise
    if failed:  # forward_context swallowed the exception: there is no output to return
        raise RuntimeError(
            "ember.utils.checkpoint: the forward context provided by context_fn suppressed an "
            "exception raised during the checkpointed forward. This is not supported because "
            "checkpoint cannot return a value for a failed forward.")
    return out


def _unpack_holder(holder):
    return holder.frame.unpack(holder)


# ---- sequential --------------------------------------------------------------------------
def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list or an ``nn.Sequential``) one after another, in
    ``segments`` chunks of which all but the last are checkpointed.

    >>> import ember
    >>> from ember.utils.checkpoint import checkpoint_sequential
    >>> model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU(), ember.nn.Linear(2, 1))
    >>> out = checkpoint_sequential(model, 2, ember.ones(3, 2), use_reentrant=False)
    >>> out.sum().backward(); model[0].weight.grad.shape
    ember.Size([2, 2])
    """
    if use_reentrant is None:
        warnings.warn(
            "ember.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should "
            "be passed explicitly. In version 2.9 we will raise an exception if use_reentrant "
            "is not passed. use_reentrant=False is recommended, but if you need to preserve "
            "the current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if isinstance(functions, nn.Sequential):
        functions = list(functions.children())

    def run_segment(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_segment(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_segment(end + 1, len(functions) - 1)(input)
