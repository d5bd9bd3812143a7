"""``ember.jit``: PyTorch's TorchScript entry points, run eagerly.

ember has no TorchScript compiler. ``ember.jit.script`` and ``ember.jit.trace`` return the
wrapper objects PyTorch returns (``ScriptFunction``, ``RecursiveScriptModule``,
``TopLevelTracedModule``) with their argument checks and bookkeeping, and calling them runs
the original Python code, so programs written for TorchScript run unchanged with the eager
numbers and gradients. The decorators (``ignore``, ``unused``, ``export``, ``interface``,
``_overload``) and type helpers (``Final``, ``annotate``, ``Attribute``) only guide the
compiler: they return what they are given. ``fork`` runs its function at once (as PyTorch
does outside TorchScript) and returns a finished ``Future``. What only compiled code has
(``.code``, ``.graph``, TorchScript archives for ``save``/``load``) raises
NotImplementedError.

>>> import ember, warnings
>>> warnings.simplefilter("ignore", DeprecationWarning)
>>> @ember.jit.script
... def scaled_tanh(x, scale: float = 2.0):
...     return ember.tanh(x) * scale
>>> scaled_tanh(ember.zeros(2))
tensor([0., 0.])
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, Final  # noqa: F401  (Final: ember.jit.Final)

from ..nn import Module
from ._script import (ScriptFunction, ScriptModule, RecursiveScriptModule,  # noqa: F401
                      script, freeze, optimize_for_inference, save, load, is_scripting,
                      is_tracing)
from ._trace import (trace, trace_module, TracedModule, TopLevelTracedModule,  # noqa: F401
                     TracerWarning, TracingCheckError)

__all__ = ["script", "trace", "trace_module", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "Final", "annotate", "fork", "wait", "freeze",
           "optimize_for_inference", "save", "load", "interface", "Future", "Attribute",
           "ScriptModule", "ScriptFunction", "RecursiveScriptModule", "TracedModule",
           "TopLevelTracedModule", "TracerWarning", "TracingCheckError", "ScriptWarning",
           "Error", "script_method", "script_if_tracing", "optimized_execution",
           "isinstance"]

_builtin_isinstance = isinstance


class ScriptWarning(Warning):
    """A warning TorchScript's compiler gives; ember compiles nothing, so it never does."""


class Error(Exception):
    """The exception TorchScript code raises at run time (ember's eager code raises the
    Python exception itself)."""


class Future:
    """The result of ``ember.jit.fork``: a value (or an exception) that is ready.

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> fut = ember.jit.fork(ember.add, ember.ones(1), 2)
    >>> fut.done(), fut.wait()
    (True, tensor([3.]))
    """

    def __init__(self) -> None:
        self._done = False
        self._value: Any = None
        self._error: BaseException | None = None
        self._callbacks: list[Callable] = []

    def done(self) -> bool:
        return self._done

    def wait(self) -> Any:
        if not self._done:
            raise RuntimeError("ember.jit.Future.wait: the result was never set, and ember "
                               "runs no other thread that could set it")
        if self._error is not None:
            raise self._error
        return self._value

    value = wait

    def set_result(self, result: Any) -> None:
        if self._done:
            raise RuntimeError("Future can only be marked completed once.")
        self._value, self._done = result, True
        self._run_callbacks()

    def set_exception(self, result: BaseException) -> None:
        if not _builtin_isinstance(result, BaseException):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._error, self._done = result, True
        self._run_callbacks()

    def then(self, callback: Callable) -> "Future":
        """A Future of ``callback(self)``, run once this one is done."""
        chained = Future()

        def run(fut: "Future") -> None:
            try:
                chained.set_result(callback(fut))
            except Exception as error:
                chained.set_exception(error)
        self.add_done_callback(run)
        return chained

    def add_done_callback(self, callback: Callable) -> None:
        self._callbacks.append(callback)
        if self._done:
            self._run_callbacks()

    def _run_callbacks(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback(self)

    def __repr__(self) -> str:
        return f"<ember.jit.Future object at {hex(id(self))}>"


def fork(func: Callable, *args: Any, **kwargs: Any) -> Future:
    """Runs ``func(*args, **kwargs)`` now and returns a finished ``Future`` holding the
    result (PyTorch's ``fork`` does the same outside TorchScript; an exception escapes at
    once, as there).

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> ember.jit.wait(ember.jit.fork(lambda x: x * 2, ember.ones(2)))
    tensor([2., 2.])
    """
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning)  # PyTorch's: no stacklevel
    if not callable(func):
        raise TypeError(f"Object of type '{type(func).__name__}' is not an instance of "
                        "'function'")
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future: Future) -> Any:
    """The value of a ``Future`` made by ``fork``.

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> ember.jit.wait(ember.jit.fork(lambda: 3))
    3
    """
    if not _builtin_isinstance(future, Future):
        raise TypeError("wait(): incompatible function arguments. The following argument "
                        "types are supported:\n    1. (arg0: torch._C.Future) -> object\n\n"
                        f"Invoked with: {future!r}")
    return future.wait()


def _mark(fn: Any, kind: str) -> Any:
    """Notes on ``fn`` what the decorator said (as PyTorch does), where it takes attributes."""
    try:
        fn._torchscript_modifier = kind
    except (AttributeError, TypeError):
        pass
    return fn


def ignore(drop: Any = False, **kwargs: Any) -> Any:
    """Marks a function for TorchScript to leave as Python; it runs as Python here anyway,
    so the function is returned unchanged (``@ignore`` and ``@ignore(drop=True)`` both).

    >>> import ember
    >>> @ember.jit.ignore
    ... def debug(x):
    ...     return x + 1
    >>> debug(1)
    2
    """
    if callable(drop):
        return _mark(drop, "ignore")
    if not _builtin_isinstance(drop, bool):
        raise RuntimeError("Argument to @torch.jit.ignore must be a bool or a function but "
                           f"got {drop}")

    return lambda fn: _mark(fn, "unused" if drop else "ignore")


def unused(fn: Any) -> Any:
    """Marks a method for TorchScript to skip compiling; returned unchanged (it stays
    callable here, as eager code).

    >>> import ember
    >>> ember.jit.unused(abs)(-2)
    2
    """
    return fn if _builtin_isinstance(fn, property) else _mark(fn, "unused")


def export(fn: Callable) -> Callable:
    """Marks a method to be compiled as an entry point; returned unchanged (callable on the
    scripted module, which reads it from the original).

    >>> import ember
    >>> ember.jit.export(len)([1, 2])
    2
    """
    return _mark(fn, "export")


def interface(obj: type) -> type:
    """Declares a TorchScript interface type; the class is returned unchanged.

    >>> import ember
    >>> @ember.jit.interface
    ... class Encoder(ember.nn.Module):
    ...     def forward(self, x: ember.Tensor) -> ember.Tensor:
    ...         pass
    >>> Encoder.__name__
    'Encoder'
    """
    if not _builtin_isinstance(obj, type):
        raise RuntimeError("interface must be applied to a class")
    module_interface = issubclass(obj, Module) and len(obj.mro()) == 3
    if not module_interface and len(obj.mro()) > 2:
        raise RuntimeError("TorchScript interface does not support inheritance yet. Please "
                           "directly inherit from 'object' or 'nn.Module'.")
    obj.__torch_script_interface__ = True
    return obj


def _overload(func: Callable) -> Callable:
    """Declares one typed signature of an overloaded function for TorchScript; the
    definition that follows (without ``_overload``) is the one Python calls.

    >>> import ember
    >>> @ember.jit._overload
    ... def half(x: int) -> int: ...
    >>> def half(x):
    ...     return x / 2
    >>> half(3)
    1.5
    """
    return func


_overload_method = _overload


def annotate(the_type: Any, the_value: Any) -> Any:
    """Gives TorchScript a value's type; returns the value.

    >>> import ember
    >>> from typing import List
    >>> ember.jit.annotate(List[int], [])
    []
    """
    return the_value


class Attribute:
    """``Attribute(value, type)``: a module attribute with a type for TorchScript. It is
    the value itself here.

    >>> import ember
    >>> ember.jit.Attribute(3, int)
    3
    """

    def __new__(cls, value: Any, type: Any) -> Any:  # noqa: A002
        return value


def script_method(fn: Callable) -> Callable:
    """A method of a ``ScriptModule`` subclass to compile; returned unchanged.

    >>> import ember
    >>> ember.jit.script_method(len)([1])
    1
    """
    return fn


def script_if_tracing(fn: Callable) -> Callable:
    """Compiles ``fn`` when it is first called while tracing; returned unchanged here.

    >>> import ember
    >>> ember.jit.script_if_tracing(abs)(-1)
    1
    """
    return fn


def isinstance(obj: Any, target_type: Any) -> bool:  # noqa: A001
    """TorchScript's ``isinstance``, which also takes ``List[int]``-style types; eagerly,
    the container's own type is checked (PyTorch does the same in Python).

    >>> import ember
    >>> from typing import List
    >>> ember.jit.isinstance([1, 2], List[int])
    True
    """
    origin = getattr(target_type, "__origin__", None)
    if origin is None:
        return _builtin_isinstance(obj, target_type)
    if not _builtin_isinstance(obj, origin):
        return False
    args = getattr(target_type, "__args__", ())
    if origin in (list, set) and args:
        return all(isinstance(v, args[0]) for v in obj)
    if origin is dict and len(args) == 2:
        return all(isinstance(k, args[0]) and isinstance(v, args[1]) for k, v in obj.items())
    if origin is tuple and args:
        return len(obj) == len(args) and all(isinstance(v, t) for v, t in zip(obj, args))
    return True


@contextlib.contextmanager
def optimized_execution(should_optimize: bool):
    """Switches TorchScript's graph optimizations; there are none to switch here.

    >>> import ember
    >>> with ember.jit.optimized_execution(False):
    ...     pass
    """
    yield
