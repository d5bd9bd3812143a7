"""``custom_op``: a Python function made into an operator, its schema inferred from the
type hints (``infer_schema``), as ``torch.library.custom_op``.

>>> import ember, numpy as np
>>> from ember import Tensor
>>> @ember.library.custom_op("customdoc::numpy_sin", mutates_args=())
... def numpy_sin(x: Tensor) -> Tensor:
...     return ember.from_numpy(np.sin(x.numpy()))
>>> numpy_sin(ember.tensor([0.0]))
tensor([0.])
>>> ember.ops.customdoc.numpy_sin.default._schema
customdoc::numpy_sin(Tensor x) -> Tensor
"""
from __future__ import annotations

import collections.abc
import contextlib
import inspect
import threading
import typing

from .._tensor import Tensor
from ..backend.dtypes import dtype as _dtype
from ..device import device as _device
from . import _dispatch
from ._library import Library, device_key
from ._schema import parse_schema

_NONE = type(None)


def _type_table():
    """Python hint -> schema type, for arguments (PyTorch's accepted set, with ember's
    Tensor, dtype and device)."""
    table = {}

    def sequences(of):
        return [typing.Sequence[of], typing.List[of], collections.abc.Sequence[of], list[of]]

    table[Tensor] = "Tensor"
    table[typing.Optional[Tensor]] = "Tensor?"
    for hint in sequences(Tensor):
        table[hint] = "Tensor[]"
    for hint in sequences(typing.Optional[Tensor]):
        table[hint] = "Tensor?[]"
    scalar = typing.Union[int, float, bool]
    for py, name in ((int, "SymInt"), (float, "float"), (bool, "bool")):
        table[py] = name
        table[typing.Optional[py]] = name + "?"
        for hint in sequences(py):
            table[hint] = name + "[]"
            table[typing.Optional[hint]] = name + "[]?"
    table[str] = "str"
    table[typing.Optional[str]] = "str?"
    table[scalar] = "Scalar"
    table[typing.Optional[scalar]] = "Scalar?"
    for hint in sequences(scalar):
        table[hint] = "Scalar[]"
    table[_dtype] = "ScalarType"
    table[typing.Optional[_dtype]] = "ScalarType?"
    table[_device] = "Device"
    table[typing.Optional[_device]] = "Device?"
    return table


ARGUMENT_TYPES = _type_table()
RETURN_TYPES = {Tensor: "Tensor", typing.List[Tensor]: "Tensor[]", list[Tensor]: "Tensor[]",
                int: "SymInt", float: "float", bool: "bool",
                typing.Union[int, float, bool]: "Scalar"}


def _lookup(table, hint):
    try:
        return table.get(hint)
    except TypeError:  # an unhashable hint
        return None


def _resolve_hints(func):
    """The function's hints with strings evaluated in its module (``"Tensor"``)."""
    try:
        return typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - an unresolvable hint is reported per parameter below
        return dict(getattr(func, "__annotations__", {}))


def infer_schema(prototype_function, /, *, mutates_args, op_name=None) -> str:
    """The schema of a type-hinted function, as ``torch.library.infer_schema``:
    ``mutates_args`` names the arguments the function writes to (or ``"unknown"``).

    >>> import ember
    >>> from ember import Tensor
    >>> def f(x: Tensor, n: int = 2, *, out: Tensor) -> None: ...
    >>> ember.library.infer_schema(f, mutates_args={"out"})
    '(Tensor x, SymInt n=2, *, Tensor(a2!) out) -> ()'
    """
    sig = inspect.signature(prototype_function)
    hints = _resolve_hints(prototype_function)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    mutated = _mutated_names(mutates_args, sig, error_fn)
    params, seen_kwarg_only = [], False
    for index, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        hint = hints.get(name, param.annotation)
        schema_type = _lookup(ARGUMENT_TYPES, hint)
        if schema_type is None:
            error_fn(f"Parameter {name} has unsupported type {_hint_name(hint)}. The valid "
                     f"types are: {_valid_names(ARGUMENT_TYPES)}.")
        if param.kind == param.KEYWORD_ONLY and not seen_kwarg_only:
            params.append("*")
            seen_kwarg_only = True
        if (mutates_args == "unknown" and schema_type.startswith("Tensor")) or name in mutated:
            if not schema_type.startswith("Tensor"):
                error_fn(f"Parameter {name} is in mutable_args but only Tensors or collections "
                         "of Tensors can be mutated")
            # the alias set is named after the parameter's position
            schema_type = schema_type.replace("Tensor", f"Tensor(a{index}!)", 1)
        text = f"{schema_type} {name}"
        if param.default is not inspect.Parameter.empty:
            text += "=" + _default_text(name, param.default, error_fn)
        params.append(text)
    if sig.return_annotation is inspect.Signature.empty:
        error_fn("No return type annotation was provided. Please add one.")
    returns = _returns_text(hints.get("return", sig.return_annotation), error_fn)
    name = op_name or ""
    return f"{name}({', '.join(params)}) -> {returns}"


def _mutated_names(mutates_args, sig, error_fn):
    if mutates_args == "unknown":
        return set()
    if isinstance(mutates_args, str) or not isinstance(mutates_args, collections.abc.Iterable):
        raise ValueError("mutates_args must either be a sequence of the names of the arguments "
                         "that are mutated or the string 'unknown'. ")
    names = set(mutates_args)
    missing = names - set(sig.parameters)
    if missing:
        error_fn(f"{missing} in mutates_args were not found in the custom op's signature. "
                 "mutates_args should contain the names of all args that the custom op "
                 "mutates, or just the string 'unknown' if you don't know.")
    return names


def _default_text(name, value, error_fn):
    if value is None or isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, _dtype):
        return str(value).split(".")[-1]
    if isinstance(value, _device):
        return f'"{value}"'
    error_fn(f"Parameter {name} has an unsupported default value type {type(value)}. Please "
             "file an issue on GitHub so we can prioritize this.")
    return ""


def _returns_text(hint, error_fn):
    if hint is None or hint is _NONE:
        return "()"
    origin = typing.get_origin(hint)
    if origin is tuple:
        items = typing.get_args(hint)
        if items in ((), ((),)):
            return "()"
        return "(" + ", ".join(_one_return(h, error_fn) for h in items) + ")"
    return _one_return(hint, error_fn)


def _one_return(hint, error_fn):
    found = _lookup(RETURN_TYPES, hint)
    if found is None:
        error_fn(f"Return has unsupported type {_hint_name(hint)}. The valid types are: "
                 f"{_valid_names(RETURN_TYPES, mapping=True)}.")
    return found


def _hint_name(hint):
    return repr(hint) if not isinstance(hint, type) else str(hint)


def _valid_names(table, mapping=False):
    if mapping:
        return "{" + ", ".join(f"{_hint_name(k)}: '{v}'" for k, v in table.items()) + "}"
    return "dict_keys([" + ", ".join(_hint_name(k) for k in table) + "])"


# ---- CustomOpDef ---------------------------------------------------------------------------
_libraries = {}  # "ns::name" -> the Library a custom_op defined it with
_libraries_lock = threading.Lock()


def _library_for(qualname):
    """A fresh library for ``qualname``: a second custom_op of the same name replaces the
    first, as in PyTorch."""
    ns = qualname.split("::", 1)[0]
    with _libraries_lock:
        old = _libraries.pop(qualname, None)
        if old is not None:
            old._destroy()
        lib = _libraries[qualname] = Library(ns, "FRAGMENT")
        return lib


class CustomOpDef:
    """The operator ``custom_op`` makes: call it like the function; register its fake
    implementation, autograd formula, device kernels and vmap rule on it."""

    _is_custom_op_def = True

    def __init__(self, namespace, name, schema, fn):
        self._namespace, self._name, self._init_fn = namespace, name, fn
        self._qualname = f"{namespace}::{name}"
        self._lib = _library_for(self._qualname)
        self._lib.define(f"{name}{schema}")
        self._entry = _dispatch.entry(self._qualname)
        self._entry.custom_op = self
        self._opoverload = _dispatch.lookup_packet(namespace, name).default
        self._disabled_kernels = set()
        self.__name__ = getattr(fn, "__name__", name)
        self.__doc__ = getattr(fn, "__doc__", None)

    def __repr__(self):
        return f"<CustomOpDef({self._qualname})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def _register_device_kernel(self, device_types, fn):
        types = (device_types,) if device_types is None or isinstance(device_types, str) \
            else tuple(device_types)
        for device_type in types:
            self._lib._register_kernel(self._entry, device_key(device_type), fn)

    def register_kernel(self, device_types, fn=None, /):
        """Register a kernel for ``device_types`` ("cpu", ...), used instead of the
        function the op was made from on those devices. A decorator without ``fn``."""
        def register(func):
            self._register_device_kernel(device_types, func)
            return func
        if fn is None:
            return register
        return register(fn)

    def register_fake(self, fn, /, *, _stacklevel=1):
        """Register the fake implementation (shapes, dtypes and devices of the outputs
        from those of the inputs, no data read); ``opcheck`` compares it with the kernel."""
        self._lib._register_attribute(self._entry, "fake", fn)
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        """Register the gradient formula: ``setup_context(ctx, inputs, output)`` saves for
        ``backward(ctx, *grads)``, which returns one gradient per input."""
        if self._entry.schema.is_mutable():
            raise RuntimeError(
                f"Cannot register autograd formula for non-functional operator {self} with "
                f"schema {self._entry.schema}. Please create a functional operator and register "
                "an autograd formula for that.")
        self._lib._register_attribute(self._entry, "backward", backward)
        self._lib._register_attribute(self._entry, "setup_context", setup_context)

    def register_vmap(self, func=None, /):
        """Register the vmap rule ``func(info, in_dims, *args, **kwargs) -> (out, out_dims)``."""
        def register(fn):
            self._lib._register_attribute(self._entry, "vmap", fn)
            return fn
        if func is None:
            return register
        return register(func)

    def register_torch_dispatch(self, torch_dispatch_class, fn=None, /):
        raise NotImplementedError("register_torch_dispatch: ember has no __torch_dispatch__ "
                                  "modes")

    @contextlib.contextmanager
    def set_kernel_enabled(self, device_type, enabled=True):
        """Within the block, the kernel registered for ``device_type`` is (not) used."""
        key = device_key(device_type)
        kernels = self._entry.kernels
        stashed = None
        if not enabled and key in kernels and key != "CompositeExplicitAutograd":
            stashed = kernels.pop(key)
        try:
            yield
        finally:
            if stashed is not None:
                kernels[key] = stashed


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None):
    """Make ``fn`` an operator ``"ns::name"`` (a decorator without ``fn``). Its schema
    comes from the type hints unless ``schema`` is given; ``mutates_args`` names the
    arguments it writes to (``()`` for none, ``"unknown"``); ``device_types`` limits the
    devices ``fn`` serves. Without ``register_autograd``, backward through it raises.

    >>> import ember
    >>> from ember import Tensor
    >>> @ember.library.custom_op("customdoc::add", mutates_args=())
    ... def add(x: Tensor, y: Tensor) -> Tensor:
    ...     return x + y
    >>> add(ember.ones(2), ember.ones(2))
    tensor([2., 2.])
    """
    def inner(func):
        if schema is None:
            schema_str = infer_schema(func, mutates_args=mutates_args)
        else:
            schema_str = schema
        ns, opname = name.split("::")
        parsed = parse_schema(f"{opname}{schema_str}")
        del parsed
        result = CustomOpDef(ns, opname, schema_str, func)
        if schema is not None:
            # a given schema must still agree with mutates_args
            expected = {a.name for a in result._entry.schema.arguments if a.is_write}
            if mutates_args != "unknown" and expected != set(mutates_args):
                result._lib._destroy()
                raise ValueError(
                    f"Attempted to create a custom op with `mutates_args={mutates_args}` and "
                    f"`schema={schema}. The schema suggests that the op mutates {expected}"
                    f"which is different from what was provided to us in `mutates_args` "
                    f"({set(mutates_args)}). Please make these consistent.")
        result._register_device_kernel(device_types, func)
        return result
    if fn is None:
        return inner
    return inner(fn)


# ---- fake implementations -----------------------------------------------------------------
class FakeImplCtx:
    """What ``get_ctx()`` returns inside a fake implementation.

    ember runs fake implementations on real tensors (it has no FakeTensor), so a
    data-dependent size is a plain int; ``opcheck`` then compares only the ranks of the
    dimensions it could not know."""

    def __init__(self, op_name=None):
        self._op_name = op_name
        self.dynamic_sizes = 0

    def new_dynamic_size(self, *, min=0, max=None):  # noqa: A002 - PyTorch's names
        """A size known only when the real kernel runs (``nonzero``'s length)."""
        if min < 0:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, ...): expected min to be "
                             "greater than or equal to 0: this API can only create "
                             "non-negative sizes.")
        self.dynamic_sizes += 1
        return min

    new_dynamic_size.__doc__ = new_dynamic_size.__doc__


_fake_ctx = threading.local()


def get_ctx():
    """The context of the fake implementation that is running (``new_dynamic_size``).

    >>> import ember
    >>> ember.library.get_ctx().new_dynamic_size()
    0
    """
    ctx = getattr(_fake_ctx, "ctx", None)
    return ctx if ctx is not None else FakeImplCtx()


@contextlib.contextmanager
def fake_ctx(op_name):
    previous = getattr(_fake_ctx, "ctx", None)
    ctx = _fake_ctx.ctx = FakeImplCtx(op_name)
    try:
        yield ctx
    finally:
        _fake_ctx.ctx = previous
