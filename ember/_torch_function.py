"""The ``__torch_function__`` protocol: how a public call reaches an override.

Every public entry point (the functions of ``ember``, ``ember.linalg`` and
``ember.nn.functional``, Tensor's methods, operators and properties) runs
``dispatch`` before its own code when ``ACTIVE[0]`` is set, and ``dispatch_failed``
when its own code raised. ``ACTIVE[0]`` is True while a ``TorchFunctionMode`` is on
the stack or once a Tensor subclass that dispatches has been defined, so a program
that uses neither pays one test of a list item per call. Duck types (objects that
are no Tensor but whose type has ``__torch_function__``) make the op's own code fail
(they have no array), and the entry point dispatches them then; the one argument
scan happens only on that error path.

``dispatch`` follows PyTorch's rules: the top mode first (popped while it runs),
then the overloaded arguments -- each type once, subclasses before their
superclasses, otherwise left to right, looking one level into lists and tuples --
until one returns something other than ``NotImplemented``.

>>> import ember
>>> class Duck:
...     @classmethod
...     def __torch_function__(cls, func, types, args=(), kwargs=None):
...         return f"{func.__name__} of {len(args)} argument(s)"
>>> ember.mean(Duck())
'mean of 1 argument(s)'
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from ._tensor import Tensor

#: True while a mode is on the stack or a dispatching Tensor subclass exists: the one
#: test the fast path of every entry point makes.
ACTIVE = [False]
#: sentinel: ``dispatch`` found nothing to call; the entry point runs its own code
PASS = object()
#: ``call(func, impl, args, kwargs)`` of ``ember._autocast`` while a thread has an autocast
#: region on (None otherwise): entry points hand it their calls after the overrides
AUTOCAST = [None]
#: True while overrides may take a call (a mode, a dispatching subclass): ACTIVE without it
#: means autocast alone, which needs no ``dispatch``
DISPATCHING = [False]


class OperandTypeError(TypeError):
    """An operand of a type no op takes (None, a string, a list, ...), raised by the ops'
    operand handling with PyTorch's function-call wording. A binary operator whose call
    fails with it -- and that no override takes -- returns NotImplemented instead, so
    Python raises its own ``unsupported operand type(s)`` error, as PyTorch's operators do.

    >>> import ember
    >>> ember.ones(2) + None
    Traceback (most recent call last):
    ...
    TypeError: unsupported operand type(s) for +: 'Tensor' and 'NoneType'
    """


def _disabled_torch_function_impl(func: Callable, types: tuple, args: tuple = (),
                                  kwargs: dict | None = None) -> Any:
    """What a Tensor subclass that takes no part in the protocol sets as its
    ``__torch_function__`` (``Parameter``, ``Buffer``): its instances are plain tensors
    to dispatch, and ops return plain tensors.

    >>> import ember
    >>> class Plain(ember.Tensor):
    ...     __torch_function__ = ember._C._disabled_torch_function_impl
    >>> type(ember.ones(2).as_subclass(Plain) + 1).__name__
    'Tensor'
    """
    if kwargs is None:
        kwargs = {}
    with DisableTorchFunctionSubclass():
        return func(*args, **kwargs)


class _State:
    modes = []            # the TorchFunctionMode stack, innermost last
    subclass_seen = False  # a Tensor subclass that dispatches has been defined
    held = 0              # live instances of types that dispatch only while alive (hold_dispatch)
    subclasses_off = 0    # depth of DisableTorchFunctionSubclass
    all_off = 0           # depth of DisableTorchFunction
    on_activate = []      # called once, when ACTIVE first turns on (patches Tensor's members)


def _refresh():
    dispatching = bool(_State.modes) or _State.subclass_seen or _State.held > 0
    if dispatching:
        make_members_entry_points()
    DISPATCHING[0] = dispatching
    # autocast's ops are all entry points already: Tensor's own members stay plain
    ACTIVE[0] = dispatching or AUTOCAST[0] is not None


def make_members_entry_points():
    """Make Tensor's own members entry points now (once; ``ember.overrides`` lists them)."""
    hooks, _State.on_activate = _State.on_activate, []
    for hook in hooks:
        hook()


# another layer (autograd/dispatch.py) may install its own hook too: each calls the one before
_previous_init_subclass = Tensor.__dict__.get("__init_subclass__")


def _on_tensor_subclass(cls, **kwargs):
    """``Tensor.__init_subclass__``: a subclass that keeps Tensor's ``__torch_function__``
    (or brings its own) turns dispatch on -- unless its class sets ``_dispatch_while_alive``:
    then its instances hold dispatch on while they live (``hold_dispatch``)."""
    if _previous_init_subclass is not None:
        _previous_init_subclass.__func__(cls, **kwargs)
    else:
        super(Tensor, cls).__init_subclass__(**kwargs)
    if getattr(cls, "__torch_function__", None) is not _disabled_torch_function_impl \
            and not getattr(cls, "_dispatch_while_alive", False):
        _State.subclass_seen = True
        _refresh()


def hold_dispatch(count):
    """Add ``count`` (+1 or -1) to the live instances that need dispatch on (nn's
    uninitialized parameters, which refuse ops): a type that only exists for a while costs
    the programs that never make one nothing, and the others nothing once its last goes.

    >>> from ember._torch_function import hold_dispatch, DISPATCHING
    >>> hold_dispatch(1)
    >>> DISPATCHING[0]
    True
    >>> hold_dispatch(-1)
    """
    _State.held += count
    _refresh()


Tensor.__init_subclass__ = classmethod(_on_tensor_subclass)


# ---- switches --------------------------------------------------------------------------------
class DisableTorchFunctionSubclass:
    """Within it, overloaded arguments (Tensor subclasses and duck types) do not dispatch;
    modes still do. ``Tensor.__torch_function__`` runs the op under it.

    >>> import ember
    >>> class Logged(ember.Tensor):
    ...     pass
    >>> x = ember.ones(2).as_subclass(Logged)
    >>> with ember._C.DisableTorchFunctionSubclass():
    ...     type(x + 1).__name__
    'Tensor'
    """

    def __enter__(self):
        _State.subclasses_off += 1
        return self

    def __exit__(self, *exc):
        _State.subclasses_off -= 1
        return False


class DisableTorchFunction:
    """Within it, nothing dispatches: neither overloaded arguments nor modes.

    >>> import ember
    >>> with ember._C.DisableTorchFunction():
    ...     ember._C._is_torch_function_enabled()
    False
    """

    def __enter__(self):
        _State.all_off += 1
        return self

    def __exit__(self, *exc):
        _State.all_off -= 1
        return False


def _is_torch_function_enabled():
    """False under ``DisableTorchFunction`` or ``DisableTorchFunctionSubclass``."""
    return not (_State.all_off or _State.subclasses_off)


def _is_torch_function_mode_enabled():
    """Whether a ``TorchFunctionMode`` is active (and not disabled)."""
    return bool(_State.modes) and not _State.all_off


def set_autocast_hook(hook):
    """Install (or, with None, remove) autocast's hook; entry points take the slow path
    while it is set."""
    AUTOCAST[0] = hook
    _refresh()


# ---- modes ----------------------------------------------------------------------------------
def push_mode(mode):
    _State.modes.append(mode)
    _refresh()


def pop_mode():
    if not _State.modes:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _State.modes.pop()
    _refresh()
    return mode


def mode_stack():
    """The active modes, outermost first (a copy)."""
    return list(_State.modes)


# ---- overloaded arguments -------------------------------------------------------------------
def _overrides(t):
    """Whether objects of type ``t`` take part in dispatch (plain Tensor does not: its
    ``__torch_function__`` is the default every op already is)."""
    if t is Tensor:
        return False
    method = getattr(t, "__torch_function__", None)
    return method is not None and method is not _disabled_torch_function_impl


def overloaded_args(relevant, include_plain=False):
    """The arguments of ``relevant`` (an iterable) whose types override, one per type,
    subclasses before superclasses, otherwise in order (PyTorch's rule). ``include_plain``:
    plain tensors count too (PyTorch's Python-level functions list Tensor in ``types``)."""
    found, types = [], set()
    for arg in relevant:
        t = type(arg)
        if t in types or not (_overrides(t) or (include_plain and t is Tensor)):
            continue
        types.add(t)
        index = len(found)
        for i, old in enumerate(found):
            if issubclass(t, type(old)):
                index = i
                break
        found.insert(index, arg)
    return found


_NEVER_OVERLOADED = {int, float, bool, complex, str, type(None), slice, type(Ellipsis)}


def _plain(args):
    """Whether no argument (nor item of a list or tuple argument) can override."""
    for a in args:
        t = type(a)
        if t is Tensor or t in _NEVER_OVERLOADED:
            continue
        if t is list or t is tuple:
            for item in a:
                if type(item) is not Tensor and type(item) not in _NEVER_OVERLOADED:
                    return False
            continue
        return False
    return True


def _flatten(args, kwargs):
    """The arguments, with lists and tuples opened one level (tensor lists)."""
    for a in args:
        yield a
        if type(a) is list or type(a) is tuple:
            yield from a
    if kwargs:
        for a in kwargs.values():
            yield a
            if type(a) is list or type(a) is tuple:
                yield from a


def _torch_name(func):
    """PyTorch's spelling of a public function's name for error messages."""
    name = getattr(func, "_error_name", None) or _resolve(func)
    return "torch" + name[len("ember"):] if name.startswith("ember") else name


def _resolve(func):
    getter = getattr(func, "__self__", None)
    if isinstance(getter, property):  # a property's __get__
        for klass in Tensor.__mro__:
            for key, value in vars(klass).items():
                if value is getter:
                    return f"ember.Tensor.{key}.__get__"
    qualname = getattr(func, "__qualname__", None) or getattr(func, "__name__", repr(func))
    if qualname.startswith("Tensor."):
        return "ember." + qualname
    module = getattr(func, "__module__", None) or "ember"
    public = getattr(func, "_public_module", None) or module
    return f"{public}.{qualname}"


def _call_overloads(func, found, args, kwargs, python_level):
    types = tuple(type(a) for a in found)
    for arg in found:
        result = arg.__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    raise TypeError(_no_implementation(func, types, python_level))


def _no_implementation(func, types, python_level, mode=None):
    if python_level:
        return (f"no implementation found for '{_torch_name(func)}' on types that implement "
                f"__torch_function__: {list(types)}"
                + (f" nor in mode {mode!r}" if mode is not None else ""))
    lines = ([f"  - mode object {mode!r}"] if mode is not None else []) + \
        [f"  - tensor subclass {t}" for t in types]
    return (f"Multiple dispatch failed for '{_torch_name(func)}'; all __torch_function__ "
            f"handlers returned NotImplemented:\n\n" + "\n".join(lines) +
            "\n\nFor more information, try re-running with TORCH_LOGS=not_implemented")


def _as_python_function_passes(func, args, kwargs):
    """The arguments as PyTorch's Python-level functions hand them to overrides: the
    leading tensor-like ones by position, every other parameter by keyword, defaults
    included (``F.relu(x)`` is ``(x,), {'inplace': False}``)."""
    impl = getattr(func, "__ember_impl__", None)
    try:
        signature = inspect.signature(impl)
        bound = signature.bind(*args, **(kwargs or {}))
    except (TypeError, ValueError):
        return args, kwargs or {}
    bound.apply_defaults()
    positional, keywords, leading = [], {}, True
    for name, value in bound.arguments.items():
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_POSITIONAL:
            positional.extend(value)
        elif kind is inspect.Parameter.VAR_KEYWORD:
            keywords.update(value)
        elif leading and kind is not inspect.Parameter.KEYWORD_ONLY and (
                isinstance(value, Tensor) or hasattr(type(value), "__torch_function__")):
            positional.append(value)
        else:
            leading = False
            keywords[name] = value
    return tuple(positional), keywords


def dispatch(func, args, kwargs, python_level=False, modes_only=False):
    """Run the overrides of a call of ``func``: the result, or ``PASS`` when none applies
    (the caller then runs its own code)."""
    if _State.all_off:
        return PASS
    if not _State.modes:
        if modes_only or _State.subclasses_off or (_plain(args) and (
                not kwargs or _plain(kwargs.values()))):
            return PASS  # the common case under an active subclass: nothing to dispatch
    found = () if modes_only or _State.subclasses_off else overloaded_args(_flatten(args,
                                                                                    kwargs))
    if python_level and (found or _State.modes):
        if not modes_only and not _State.subclasses_off:
            found = overloaded_args(_flatten(args, kwargs), include_plain=True)
        args, kwargs = _as_python_function_passes(func, args, kwargs)
    if _State.modes:
        mode = pop_mode()
        try:
            types = tuple(type(a) for a in found)
            result = mode.__torch_function__(func, types, args, kwargs)
        finally:
            push_mode(mode)
        if result is not NotImplemented:
            return result
        if not found:
            raise TypeError(_no_implementation(func, (), python_level, mode))
    if not found:
        return PASS
    return _call_overloads(func, found, args, kwargs, python_level)


def dispatch_failed(func, args, kwargs, python_level=False):
    """After an entry point's own code raised: the overloads' result if a duck type is
    among the arguments (it failed there for having no array), else ``PASS``."""
    if _State.all_off or _State.subclasses_off:
        return PASS
    found = overloaded_args(_flatten(args, kwargs))
    if not found:
        return PASS
    if python_level:
        found = overloaded_args(_flatten(args, kwargs), include_plain=True)
        args, kwargs = _as_python_function_passes(func, args, kwargs)
    return _call_overloads(func, found, args, kwargs, python_level)


# ---- entry points ---------------------------------------------------------------------------
def dispatching(impl, *, name=None, qualname=None, module=None, public=None,
                python_level=False, modes_only=False, operator=False):
    """``impl`` as a public entry point: overrides first (``dispatch``) when
    ``ACTIVE[0]``, duck types after a failure. ``public``: the function reported to the
    overrides (the wrapper itself when None). ``modes_only``: overloaded arguments are not
    consulted (factories with no tensor argument). ``operator``: a binary operator, which
    returns NotImplemented for an operand of a type no op takes (``OperandTypeError``).
    The wrapper's ``__ember_impl__`` is ``impl``."""
    impl = getattr(impl, "__ember_impl__", impl)
    report = [public]
    if modes_only:
        made = _factory_entry(impl, report, python_level)
    else:
        made = _entry(impl, report, python_level, operator)
    entry = functools.wraps(impl)(made)
    if name is not None:
        entry.__name__ = name
    if qualname is not None or name is not None:
        entry.__qualname__ = qualname or name
    if module is not None:
        entry.__module__ = module
    entry.__ember_impl__ = impl
    if public is None:
        report[0] = entry
    entry._tf_report = report  # what overrides are given; settable (operators report methods)
    return entry


def _entry(impl, report, python_level, operator=False):
    def entry(*args, **kwargs):
        # a first argument that is no plain Tensor (a subclass, a duck, a list of tensors,
        # a scalar) is checked before the code runs; a duck further on makes the code fail
        if ACTIVE[0] or (args and type(args[0]) is not Tensor):
            if DISPATCHING[0] or (args and type(args[0]) is not Tensor):
                result = dispatch(report[0], args, kwargs or None, python_level)
                if result is not PASS:
                    return result
            if AUTOCAST[0] is not None:
                result = AUTOCAST[0](report[0], impl, args, kwargs)
                if result is not PASS:
                    return result
        try:
            return impl(*args, **kwargs)
        except Exception as error:
            result = dispatch_failed(report[0], args, kwargs or None, python_level)
            if result is PASS:
                if operator and isinstance(error, OperandTypeError):
                    return NotImplemented
                raise
            return result
    return entry


def _factory_entry(impl, report, python_level):
    def factory(*args, **kwargs):  # no tensor argument: only modes are asked
        if ACTIVE[0]:
            result = dispatch(report[0], args, kwargs or None, python_level, True)
            if result is not PASS:
                return result
        return impl(*args, **kwargs)
    return factory


def dispatching_property(prop):
    """A property whose getter dispatches, reported as ``prop.__get__`` (PyTorch's
    ``Tensor.shape.__get__``)."""
    getter = getattr(prop.fget, "__ember_impl__", prop.fget)
    holder = []

    def fget(self):
        if ACTIVE[0]:
            result = dispatch(holder[0].__get__, (self,), None, True)
            if result is not PASS:
                return result
        return getter(self)
    fget.__ember_impl__ = getter
    fget.__name__ = fget.__qualname__ = getattr(getter, "__name__", "fget")
    fget.__doc__ = getattr(getter, "__doc__", None)
    wrapped = property(fget, prop.fset, prop.fdel, prop.__doc__)
    holder.append(wrapped)
    return wrapped


def wrap_namespace(namespace, names, module, *, python_level=False, modes_only=()):
    """Make each function ``names`` lists in ``namespace`` (a module's globals) a public
    entry point of its own, reported as ``<module>.<name>`` (``F.relu`` is not
    ``ember.relu``, as in PyTorch). ``modes_only``: names only modes see (factories)."""
    for name in names:
        fn = namespace[name]
        if not callable(fn) or isinstance(fn, type):
            continue
        entry = dispatching(fn, name=name, python_level=python_level,
                            modes_only=name in modes_only)
        entry._public_module = module
        entry._tf_modes_only = name in modes_only
        entry.__module__ = module  # pickled by reference under its public name, as torch's
        namespace[name] = entry


_PROPERTY_NAMES: dict = {}


def called_name(func) -> str:
    """The name a tensor subclass's handler table knows ``func`` by, in its
    ``__torch_function__``: a function's ``__name__``, or, for a property's getter (which
    arrives as the property's ``__get__`` method-wrapper), the property's attribute name on
    Tensor (getters may be lambdas)."""
    if type(func).__name__ != "method-wrapper":
        return func.__name__
    prop = func.__self__
    if not _PROPERTY_NAMES:
        for klass in reversed(Tensor.__mro__):
            for attr, value in vars(klass).items():
                if isinstance(value, property):
                    _PROPERTY_NAMES[value] = attr
    return _PROPERTY_NAMES.get(prop) or prop.fget.__name__


def registrar(table: dict):
    """The ``@handles("add", "__add__")`` decorator that files a function in ``table`` (a
    tensor subclass's calls by name, answered in its ``__torch_function__``)."""
    def handles(*names):
        def register(fn):
            for name in names:
                table[name] = fn
            return fn
        return register
    return handles


def is_entry(fn):
    return getattr(fn, "__ember_impl__", None) is not None


__all__ = ["ACTIVE", "PASS", "AUTOCAST", "DISPATCHING", "set_autocast_hook", "dispatch",
           "dispatch_failed", "dispatching", "wrap_namespace", "dispatching_property",
           "overloaded_args", "called_name", "registrar", "DisableTorchFunction",
           "DisableTorchFunctionSubclass", "push_mode", "pop_mode", "mode_stack",
           "hold_dispatch"]
