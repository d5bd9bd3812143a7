"""The helpers ``ember.utils.checkpoint`` exports beside ``checkpoint`` itself: the global
switches (``set_checkpoint_early_stop``, ``set_checkpoint_debug_enabled``), the argument
helpers of the reentrant form (``detach_variable``, ``check_backward_validity``), the
random states of non-CPU devices (``get_device_states``/``set_device_states``,
``DefaultDeviceType``) and ``GraphExecGroup``.

>>> import ember
>>> a, b = detach_variable((ember.ones(2, requires_grad=True), 3))
>>> a.requires_grad, a.grad_fn is None, b
(True, True, 3)
"""
import contextlib
import threading
import warnings

from .. import accelerator as _accelerator
from .. import cuda as _cuda
from .._tensor import Tensor
from .._functorch.pytree import tree_leaves

# None: each checkpoint call's own argument decides; read when checkpoint() runs
_switches = {"early_stop": None, "debug": None}


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Within the block, non-reentrant checkpoints made stop (True) or do not stop (False)
    their recomputation once they have every tensor backward needs, whatever their
    ``early_stop`` argument. It matters when the forward runs, not the backward.

    >>> import ember
    >>> from ember.utils.checkpoint import checkpoint
    >>> x = ember.ones(2, requires_grad=True)
    >>> with set_checkpoint_early_stop(False):
    ...     y = checkpoint(lambda t: t.sin().cos().sum(), x, use_reentrant=False)
    >>> y.backward()
    """
    previous = _switches["early_stop"]
    _switches["early_stop"] = enable
    try:
        yield
    finally:
        _switches["early_stop"] = previous


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Within the block, checkpoint's ``debug`` is ``enabled`` (None: each call's own
    argument). ember has no debug mode (operator traces): a checkpoint run with it on
    raises NotImplementedError."""
    previous = _switches["debug"]
    _switches["debug"] = enabled
    try:
        yield
    finally:
        _switches["debug"] = previous


def detach_variable(inputs):
    """``inputs`` (a tuple) with each tensor detached, keeping its ``requires_grad``."""
    if not isinstance(inputs, tuple):
        raise RuntimeError("Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for inp in inputs:
        if isinstance(inp, Tensor):
            x = inp.detach()
            x.requires_grad = inp.requires_grad
            inp = x
        out.append(inp)
    return tuple(out)


def check_backward_validity(inputs):
    """Warn when no tensor among ``inputs`` requires grad (a checkpoint then gives no
    gradients)."""
    if not any(inp.requires_grad for inp in inputs if isinstance(inp, Tensor)):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=2)


class DefaultDeviceType:
    """The device type whose random state checkpoints save when no input is on a non-CPU
    device: the current accelerator's type, or ``"cpu"`` without one."""

    _default_device_type = None

    @staticmethod
    def set_device_type(device="cuda"):
        """Make ``device`` the default device type."""
        DefaultDeviceType._default_device_type = device

    @staticmethod
    def get_device_type():
        """The default device type."""
        if not DefaultDeviceType._default_device_type:
            acc = _accelerator.current_accelerator(True)
            DefaultDeviceType._default_device_type = acc.type if acc is not None else "cpu"
        return DefaultDeviceType._default_device_type


def _device_module(device_type):
    if device_type == "cuda":
        return _cuda
    raise NotImplementedError(f"ember.utils.checkpoint: random states of {device_type} "
                              "devices are not supported")


def get_device_states(*args):
    """``(device indices, random states)`` of the non-CPU devices the tensors among
    ``args`` (any pytree) are on; ``([], [])`` for CPU tensors.

    >>> import ember
    >>> get_device_states(ember.ones(2), [ember.zeros(1)])
    ([], [])
    """
    indices = [t.get_device() for t in tree_leaves(args)
               if isinstance(t, Tensor) and t.device.type not in ("cpu", "meta")]
    if not indices:
        return [], []
    types = [t.device.type for t in tree_leaves(args)
             if isinstance(t, Tensor) and t.device.type not in ("cpu", "meta")]
    module = _device_module("cuda" if "cuda" in types else types[0])
    states = []
    for index in indices:
        with module.device(index):
            states.append(module.get_rng_state())
    return indices, states


def set_device_states(devices, states, *, device_type=None):
    """Set the random state of each device index in ``devices`` to the matching one of
    ``states`` (the inverse of ``get_device_states``)."""
    if device_type is None:
        device_type = DefaultDeviceType.get_device_type()
    if device_type == "meta" or not devices:
        return
    module = _device_module(device_type)
    for index, state in zip(devices, states):
        with module.device(index):
            module.set_rng_state(state)


_group = threading.local()


class GraphExecGroup:
    """Backward calls under one instance recompute each checkpointed region (of
    ``use_reentrant=False``) at most once, even over several ``backward`` calls; they must
    then not use the same saved activations twice. Groups do not nest.

    >>> import ember
    >>> from ember.utils.checkpoint import checkpoint
    >>> x = ember.ones(2, requires_grad=True)
    >>> a, b = checkpoint(lambda t: (t.sin(), t.cos()), x, use_reentrant=False)
    >>> with GraphExecGroup():
    ...     a.sum().backward(); b.sum().backward()
    """

    def __enter__(self):
        current = getattr(_group, "current", None)
        if current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{current}")
        _group.current = self
        return self

    def __exit__(self, *args):
        _group.current = None

    @classmethod
    def _get_current_group(cls):
        """The group now entered in this thread, or None."""
        return getattr(_group, "current", None)
