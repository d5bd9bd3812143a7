"""Thread-local switches for recording the autograd graph.

Each switch works as a context manager and as a decorator::

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> with ember.no_grad():
    ...     (x * 2).requires_grad
    False
    >>> @ember.no_grad()
    ... def f(x): return x * 2
    >>> f(x).requires_grad
    False
"""
import functools
import threading


class _GradState(threading.local):
    enabled = True
    inference = False


_state = _GradState()


def is_grad_enabled():
    """True when ops record the graph (not inside ``no_grad``)."""
    return _state.enabled


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """Base for the switches: usable as ``with`` and as ``@decorator``."""

    def __call__(self, func):
        if isinstance(func, type):
            raise TypeError(f"{type(self).__name__} cannot decorate a class")

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class set_grad_enabled(_DecoratorContextManager):
    """Turn graph recording on or off; takes effect at once, like PyTorch's."""

    def __init__(self, mode):
        self.prev = _state.enabled
        self.mode = bool(mode)
        _state.enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.enabled = self.prev

    def clone(self):
        return set_grad_enabled(self.mode)


class no_grad(_DecoratorContextManager):
    """Disable graph recording inside the block."""

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = False

    def __exit__(self, *exc):
        _state.enabled = self.prev


class enable_grad(_DecoratorContextManager):
    """Re-enable graph recording inside a ``no_grad`` block."""

    def __enter__(self):
        self.prev = _state.enabled
        _state.enabled = True

    def __exit__(self, *exc):
        _state.enabled = self.prev


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad``; ``inference_mode(False)`` is a no-op block."""

    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __enter__(self):
        self.prev = (_state.enabled, _state.inference)
        if self.mode:
            _state.enabled = False
            _state.inference = True

    def __exit__(self, *exc):
        _state.enabled, _state.inference = self.prev

    def clone(self):
        return inference_mode(self.mode)


class _ThreadingState:
    enabled = True


_threading = _ThreadingState()


def is_multithreading_enabled():
    """Whether backward may run on per-device worker threads (the default, True).

    >>> import ember
    >>> ember.autograd.is_multithreading_enabled()
    True
    """
    return _threading.enabled


class set_multithreading_enabled(_DecoratorContextManager):
    """Allow or forbid per-device backward threads; takes effect at once, restored on exit.
    ember runs backward on the calling thread (its one device is the CPU), so the switch
    changes nothing but what ``is_multithreading_enabled`` reports.

    >>> import ember
    >>> with ember.autograd.set_multithreading_enabled(False):
    ...     ember.autograd.is_multithreading_enabled()
    False
    """

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError("set_multithreading_enabled(): argument 'enabled' (position 1) "
                            f"must be bool, not {type(mode).__name__}")
        self.prev = _threading.enabled
        self.mode = mode
        _threading.enabled = mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _threading.enabled = self.prev

    def clone(self):
        return set_multithreading_enabled(self.mode)
