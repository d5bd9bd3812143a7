"""``ember.overrides``: helpers of the ``__torch_function__`` protocol (PyTorch's
``torch.overrides``): which functions can be overridden, how a Python function of one's
own takes part (``has_torch_function`` + ``handle_torch_function``, or
``wrap_torch_function``), and ``TorchFunctionMode``, which sees every public call made
while it is active.

>>> import ember
>>> from ember.overrides import TorchFunctionMode, resolve_name
>>> class Log(TorchFunctionMode):
...     def __torch_function__(self, func, types, args=(), kwargs=None):
...         print(resolve_name(func))
...         return func(*args, **(kwargs or {}))
>>> with Log():
...     y = ember.ones(2).exp().sum()
ember.ones
ember.Tensor.exp
ember.Tensor.sum
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, Callable, Iterable

from ._tensor import Tensor
from ._torch_function import (_State, _overrides, _resolve, overloaded_args, pop_mode,
                              push_mode, mode_stack, make_members_entry_points)
from ._torch_function import (_is_torch_function_mode_enabled,  # noqa: F401  (torch's names)
                              _disabled_torch_function_impl, DisableTorchFunction,
                              DisableTorchFunctionSubclass)


# ---- checking and handling ------------------------------------------------------------------
def has_torch_function(relevant_args: Iterable[Any]) -> bool:
    """Whether an element of ``relevant_args`` overrides ``__torch_function__`` (plain
    tensors do not) or a mode is active -- unless dispatch is disabled.

    >>> import ember
    >>> from ember.overrides import has_torch_function
    >>> has_torch_function((ember.ones(1), 2))
    False
    """
    if _State.all_off:
        return False
    if _State.modes:
        return True
    if _State.subclasses_off:
        return False
    return any(_overrides(type(a)) for a in relevant_args)


def has_torch_function_unary(arg: Any) -> bool:
    """``has_torch_function((arg,))``."""
    return has_torch_function((arg,))


def has_torch_function_variadic(*args: Any) -> bool:
    """``has_torch_function(args)``."""
    return has_torch_function(args)


def handle_torch_function(public_api: Callable, relevant_args: Iterable[Any], *args: Any,
                          **kwargs: Any) -> Any:
    """Call the overrides of ``public_api(*args, **kwargs)``: the active mode, then the
    ``__torch_function__`` of each overloaded argument of ``relevant_args`` (tensors
    included, subclasses first), until one returns something other than NotImplemented.

    >>> import ember
    >>> from ember.overrides import has_torch_function, handle_torch_function
    >>> def double(x):
    ...     if has_torch_function((x,)):
    ...         return handle_torch_function(double, (x,), x)
    ...     return x * 2
    >>> class Duck:
    ...     @classmethod
    ...     def __torch_function__(cls, func, types, args=(), kwargs=None):
    ...         return f"{func.__name__} handled by {cls.__name__}"
    >>> double(Duck())
    'double handled by Duck'
    """
    relevant = list(relevant_args)
    found = [] if _State.subclasses_off or _State.all_off else \
        overloaded_args(relevant, include_plain=True)
    types = tuple(type(a) for a in found)
    mode = None
    if _State.modes and not _State.all_off:
        mode = pop_mode()
        try:
            result = mode.__torch_function__(public_api, types, args, kwargs)
        finally:
            push_mode(mode)
        if result is not NotImplemented:
            return result
    for arg in found:
        result = arg.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    message = (f"no implementation found for '{name}' on types that implement "
               f"__torch_function__: {list(types)}")
    if mode is not None:
        message += f" nor in mode {mode!r}"
    raise TypeError(message)


def wrap_torch_function(dispatcher: Callable) -> Callable:
    """Decorator: the function takes part in ``__torch_function__``; ``dispatcher`` takes
    the function's arguments and returns the ones to check.

    >>> import ember
    >>> from ember.overrides import wrap_torch_function
    >>> @wrap_torch_function(lambda x: (x,))
    ... def halve(x):
    ...     return x / 2
    >>> halve(ember.tensor([2.0]))
    tensor([1.])
    """
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant_args = dispatcher(*args, **kwargs)
            if has_torch_function(relevant_args):
                return handle_torch_function(wrapped, relevant_args, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp: Any) -> bool:
    """A plain Tensor, or anything whose type has ``__torch_function__`` (also a class).

    >>> import ember
    >>> from ember.overrides import is_tensor_like
    >>> is_tensor_like(ember.ones(1)), is_tensor_like(1.0)
    (True, False)
    """
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


# ---- modes ----------------------------------------------------------------------------------
class TorchFunctionMode:
    """A context manager that sees every public call made inside it: its
    ``__torch_function__(func, types, args=(), kwargs=None)`` runs instead of the call, with
    the mode itself popped, so calling ``func(*args, **kwargs)`` there runs the op (or the
    next mode out). Modes nest; the innermost sees a call first.

    >>> import ember
    >>> from ember.overrides import TorchFunctionMode
    >>> class Zeros(TorchFunctionMode):
    ...     def __torch_function__(self, func, types, args=(), kwargs=None):
    ...         return ember.zeros(2) if func is ember.add else func(*args, **(kwargs or {}))
    >>> with Zeros():
    ...     ember.add(ember.ones(2), 1)
    tensor([0., 0.])
    """

    def __init__(self) -> None:
        pass

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        raise NotImplementedError

    def __enter__(self) -> TorchFunctionMode:
        push_mode(self)
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        pop_mode()

    @classmethod
    def push(cls, *args: Any, **kwargs: Any) -> TorchFunctionMode:
        warnings.warn("`Mode.push()` is no longer necessary and can be replaced with just "
                      "`with Mode()`", stacklevel=2)
        return cls(*args, **kwargs)


def _get_current_function_mode() -> TorchFunctionMode | None:
    stack = mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack() -> list:
    return mode_stack()


def _len_torch_function_stack() -> int:
    return len(mode_stack())


def _push_mode(mode: TorchFunctionMode) -> None:
    push_mode(mode)


def _pop_mode() -> TorchFunctionMode:
    return pop_mode()


# ---- the lists ------------------------------------------------------------------------------
def _ember():
    import ember  # the public namespace, which imports this module
    return ember


#: Tensor members that take no part in dispatch (the protocol's own machinery, Python's)
_TENSOR_IGNORED = ("__torch_function__", "as_subclass", "__init_subclass__", "__new__",
                   "__init__", "__subclasshook__", "__hash__", "__class__", "__getattribute__",
                   "__setattr__", "__delattr__", "__dir__", "__sizeof__", "__reduce__",
                   "__getstate__", "__setstate__", "__weakref__", "__dict__", "__slots__",
                   "__module__", "__doc__", "__qualname__", "__annotations__", "__init__",
                   "__array_priority__")


def _namespaces():
    ember = _ember()
    return {ember: vars(ember), ember.nn.functional: vars(ember.nn.functional),
            ember.linalg: vars(ember.linalg)}


def _is_overridable_function(fn):
    return getattr(fn, "__ember_impl__", None) is not None \
        and not getattr(fn, "_tf_modes_only", False)


def _tensor_members():
    """(name, overridable function) of Tensor: methods, and each property's ``__get__``."""
    out = []
    for name in sorted(dir(Tensor)):
        if name in _TENSOR_IGNORED or (name.startswith("_") and not name.startswith("__")):
            continue
        value = inspect.getattr_static(Tensor, name)
        if isinstance(value, property):
            out.append((name, value.__get__))
        elif callable(value) and not isinstance(value, (type, classmethod, staticmethod)) \
                and (not name.startswith("__") or getattr(value, "__module__", "")
                     .startswith("ember")):
            out.append((name, getattr(Tensor, name)))
    return out


@functools.lru_cache(None)
def _overridable():
    make_members_entry_points()  # what is listed is what Tensor holds from now on
    by_namespace = {}
    for namespace, names in _namespaces().items():
        by_namespace[namespace] = [fn for name, fn in sorted(names.items())
                                   if not name.startswith("_") and _is_overridable_function(fn)]
    by_namespace[Tensor] = [fn for _, fn in _tensor_members()]
    return by_namespace


def get_overridable_functions() -> dict[Any, list[Callable]]:
    """The functions that take part in ``__torch_function__``, by namespace: ``ember``,
    ``ember.nn.functional``, ``ember.linalg`` and ``ember.Tensor`` (methods, and each
    property's ``__get__``). Tensor's own members (``size``, ``shape``...) dispatch once
    dispatch is first needed (a mode entered, a subclass defined).

    >>> import ember
    >>> from ember.overrides import get_overridable_functions
    >>> ember.add in get_overridable_functions()[ember]
    True
    """
    return {k: list(v) for k, v in _overridable().items()}


def get_ignored_functions() -> set[Callable]:
    """Public functions that take no tensor-like argument to dispatch on (factories such
    as ``ember.zeros`` -- which modes still see -- and switches such as
    ``ember.manual_seed``), and Tensor's protocol members.

    >>> import ember
    >>> from ember.overrides import get_ignored_functions
    >>> ember.zeros in get_ignored_functions(), ember.add in get_ignored_functions()
    (True, False)
    """
    ember = _ember()
    ignored = set()
    for namespace, names in _namespaces().items():
        for name, fn in names.items():
            if name.startswith("_") or isinstance(fn, type) or not callable(fn) \
                    or inspect.ismodule(fn):
                continue
            if not _is_overridable_function(fn):
                try:
                    ignored.add(fn)
                except TypeError:  # unhashable
                    pass
    ignored.update((Tensor.as_subclass, Tensor.__torch_function__, Tensor._make,
                    ember.Tensor.__init_subclass__))
    return ignored


def _signature_of(fn):
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return inspect.Signature([inspect.Parameter("args", inspect.Parameter.VAR_POSITIONAL),
                                  inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD)])


def _dummy(signature):
    def dummy(*args, **kwargs):
        signature.bind(*args, **kwargs)  # the right arguments, or TypeError as a call would
        return -1
    dummy.__signature__ = signature
    return dummy


def get_testing_overrides() -> dict[Callable, Callable]:
    """Every overridable function mapped to a dummy with the same signature that
    returns -1 (for testing an override of all of them).

    >>> import inspect, ember
    >>> from ember.overrides import get_testing_overrides
    >>> dummy = get_testing_overrides()[ember.add]
    >>> list(inspect.signature(dummy).parameters), dummy(ember.ones(1), 2)
    (['input', 'other', 'alpha', 'out'], -1)
    """
    overrides = {}
    for functions in _overridable().values():
        for fn in functions:
            overrides[fn] = _dummy(_signature_of(getattr(fn, "__ember_impl__", fn)
                                                 if getattr(fn, "__self__", None) is None
                                                 else fn.__self__.fget))
    return overrides


@functools.lru_cache(None)
def _names():
    ember = _ember()
    names = {}
    for namespace, functions in _overridable().items():
        prefix = "ember.Tensor" if namespace is Tensor else namespace.__name__
        for fn in functions:
            names[fn] = _resolve(fn) if namespace is Tensor else f"{prefix}.{fn.__name__}"
    names[ember.Tensor.as_subclass] = "ember.Tensor.as_subclass"
    return names


def resolve_name(f: Callable) -> str | None:
    """The public name of an overridable function (``ember.add``, ``ember.Tensor.add``,
    ``ember.Tensor.shape.__get__``), None for anything else.

    >>> import ember
    >>> from ember.overrides import resolve_name
    >>> resolve_name(ember.add), resolve_name(ember.Tensor.add), resolve_name(len)
    ('ember.add', 'ember.Tensor.add', None)
    """
    name = _names().get(f)
    if name is None and getattr(f, "__ember_impl__", None) is not None:
        name = _resolve(f)
    if name is None and isinstance(getattr(f, "__self__", None), property):
        name = _resolve(f)
    return name


def is_tensor_method_or_property(func: Callable) -> bool:
    """Whether ``func`` is a method of Tensor or a property's ``__get__`` (which an
    override receives with the tensor as its first argument).

    >>> import ember
    >>> from ember.overrides import is_tensor_method_or_property
    >>> is_tensor_method_or_property(ember.Tensor.add), is_tensor_method_or_property(ember.add)
    (True, False)
    """
    return func in set(_overridable()[Tensor]) or getattr(func, "__name__", None) == "__get__"


__all__ = ["has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
           "handle_torch_function", "wrap_torch_function", "is_tensor_like",
           "is_tensor_method_or_property", "TorchFunctionMode", "get_overridable_functions",
           "get_ignored_functions", "get_testing_overrides", "resolve_name",
           "DisableTorchFunction", "DisableTorchFunctionSubclass"]
