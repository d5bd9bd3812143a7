"""``TorchDispatchMode``: see every built-in op executed while the mode is active.

A mode's ``__torch_dispatch__(func, types, args=(), kwargs=None)`` is called for each
op run inside ``with mode:`` -- forward and, as backward runs through the same ops,
backward -- with ``func`` an ``ember.ops.aten`` overload and ``args`` the op's
arguments (tensors as they are). Calling ``func(*args, **kwargs)`` in it runs the op
below the mode (the next mode out, or the op itself). Modes nest: the innermost sees
an op first. The ops are ember's Primitives, which are coarser or finer than ATen's
in places (docs/extending.md).

>>> import ember
>>> from ember.utils._python_dispatch import TorchDispatchMode
>>> class Log(TorchDispatchMode):
...     def __init__(self):
...         super().__init__()
...         self.ops = []
...     def __torch_dispatch__(self, func, types, args=(), kwargs=None):
...         self.ops.append(str(func))
...         return func(*args, **(kwargs or {}))
>>> x = ember.ones(3, requires_grad=True)
>>> with Log() as log:
...     x.sin().sum().backward()
>>> log.ops  # doctest: +NORMALIZE_WHITESPACE
['aten.sin.default', 'aten.sum.default', 'aten.ones_like.default',
 'aten.expand_back.default', 'aten.cos.default', 'aten.mul.Tensor', 'aten.detach.default']
"""
import contextlib

from ..autograd import dispatch as _dispatch
from ..ops import aten as _aten  # noqa: F401  (names the ops a mode sees)


class TorchDispatchMode:
    """Base class of dispatch modes: override ``__torch_dispatch__``; use as
    ``with MyMode():`` (see the module docstring for an example)."""

    def __init__(self, _dispatch_key=None):
        if _dispatch_key is not None:
            raise NotImplementedError("TorchDispatchMode: ember has no dispatch keys")

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError()

    def __enter__(self):
        _push_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _pop_mode()

    @classmethod
    def is_infra_mode(cls):
        return False


def _push_mode(mode):
    """Make ``mode`` the innermost active dispatch mode (what ``with mode:`` does).

    >>> m = TorchDispatchMode()
    >>> _push_mode(m); _pop_mode() is m
    True
    """
    _dispatch.push_mode(mode)


def _pop_mode(k=None):
    """Deactivate the innermost dispatch mode and return it."""
    if k is not None:
        raise NotImplementedError("_pop_mode: ember has no dispatch keys")
    return _dispatch.pop_mode()


def _get_current_dispatch_mode():
    """The innermost active dispatch mode, or None.

    >>> _get_current_dispatch_mode() is None
    True
    """
    return _dispatch.mode_stack()[-1] if _dispatch.mode_stack() else None


def _get_current_dispatch_mode_stack():
    """The active dispatch modes, outermost first."""
    return list(_dispatch.mode_stack())


def _len_torch_dispatch_stack():
    return len(_dispatch.mode_stack())


@contextlib.contextmanager
def _pop_mode_temporarily():
    """Run the block with the innermost mode off; yields it."""
    mode = _pop_mode()
    try:
        yield mode
    finally:
        _push_mode(mode)


@contextlib.contextmanager
def _disable_current_modes():
    """Run the block with no dispatch mode active; yields the modes taken off.

    >>> with _disable_current_modes() as modes:
    ...     modes
    []
    """
    taken = []
    while _dispatch.mode_stack():
        taken.append(_dispatch.pop_mode())
    taken.reverse()
    try:
        yield taken
    finally:
        for mode in taken:
            _dispatch.push_mode(mode)


def is_traceable_wrapper_subclass(t):
    """Whether ``t`` is an instance of a subclass made with ``_make_wrapper_subclass``
    that can be flattened (defines ``__tensor_flatten__`` and ``__tensor_unflatten__``)."""
    return (t._wrapper_strides is not None if hasattr(t, "_wrapper_strides") else False) and \
        hasattr(t, "__tensor_flatten__") and hasattr(type(t), "__tensor_unflatten__")


__all__ = ["TorchDispatchMode", "is_traceable_wrapper_subclass"]
