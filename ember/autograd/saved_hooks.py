"""Default hooks for saved tensors: ``saved_tensors_hooks`` and friends.

While a ``saved_tensors_hooks(pack, unpack)`` block is active, every tensor an op
saves for backward -- built-in ops and ``ctx.save_for_backward`` alike -- is passed
to ``pack`` and the graph keeps what ``pack`` returned instead; backward calls
``unpack`` on it to get the tensor back. Only the innermost pair applies.

The state is thread-local and read once per saving op (``_state.hooks``): with no
hooks active, saving costs that one check.

>>> import ember
>>> from ember.autograd.graph import saved_tensors_hooks
>>> x = ember.ones(2, requires_grad=True)
>>> with saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t):
...     y = (x * x).sum()
>>> y.backward(); x.grad
tensor([2., 2.])
"""
import contextlib
import threading


class _HooksState(threading.local):
    hooks = None            # the innermost (pack, unpack) pair, or None
    stack = ()              # outer pairs, restored on exit
    disabled_message = None  # set by disable_saved_tensors_hooks


_state = _HooksState()


def current_hooks():
    """The innermost (pack_hook, unpack_hook) pair, or None."""
    return _state.hooks


def _push(pack_hook, unpack_hook):
    if _state.disabled_message is not None:
        raise RuntimeError(_state.disabled_message)
    _state.stack = _state.stack + (_state.hooks,)
    _state.hooks = (pack_hook, unpack_hook)


def _pop():
    _state.hooks = _state.stack[-1]
    _state.stack = _state.stack[:-1]


class saved_tensors_hooks:
    """Context manager: tensors saved for backward inside it go through
    ``pack_hook(tensor) -> packed`` and come back through ``unpack_hook(packed) -> tensor``.

    Nested blocks: only the innermost pair applies.

    >>> import ember
    >>> from ember.autograd.graph import saved_tensors_hooks
    >>> seen = []
    >>> a = ember.ones(3, requires_grad=True)
    >>> with saved_tensors_hooks(lambda t: seen.append(t.shape) or t.detach(), lambda t: t):
    ...     y = (a * a).sum()
    >>> seen
    [ember.Size([3]), ember.Size([3])]
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *exc):
        _pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors are kept on the CPU and moved back to their device for backward.

    ember computes on the CPU, so tensors are kept as they are. ``pin_memory=True``
    asks for page-locked copies, which need an accelerator; without one (as PyTorch
    without CUDA) the tensor is copied into ordinary memory.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.autograd.graph.save_on_cpu(pin_memory=True):
    ...     y = (x * x).sum()
    >>> y.backward(); x.grad
    tensor([2., 2.])
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            if not pin_memory:
                return (tensor.device, tensor.cpu())
            return (tensor.device, tensor.detach().clone())  # nothing is pinnable here

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Inside it, using saved-tensor hooks raises ``RuntimeError(error_message)``
    (as does entering it while hooks are active).

    >>> import ember
    >>> from ember.autograd.graph import disable_saved_tensors_hooks, save_on_cpu
    >>> with disable_saved_tensors_hooks("no hooks here"):
    ...     try:
    ...         with save_on_cpu():
    ...             pass
    ...     except RuntimeError as e:
    ...         print(e)
    no hooks here
    """
    previous = _state.disabled_message
    try:
        _state.disabled_message = error_message
        if _state.hooks is not None:
            raise RuntimeError(error_message)
        yield
    finally:
        _state.disabled_message = previous
