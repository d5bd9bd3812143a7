"""``Library``: define operators in a namespace and register their kernels, as
``torch.library.Library`` (the Python face of ``TORCH_LIBRARY``) does.

>>> import ember
>>> from ember.library import Library
>>> lib = Library("librarydoc", "DEF")
>>> lib.define("muladd(Tensor a, Tensor b, float c) -> Tensor")
'muladd'
>>> lib.impl("muladd", lambda a, b, c: a * b + c, "CPU")
>>> ember.ops.librarydoc.muladd(ember.tensor([2.]), ember.tensor([3.]), 1.0)
tensor([7.])
"""
import contextlib
import inspect
import os
import threading
import warnings

from . import _dispatch
from ._schema import parse_schema

_KINDS = ("IMPL", "DEF", "FRAGMENT")
# Namespaces ember itself defines (PyTorch's DEF of them is its generated schema file).
_RESERVED = {"aten": "ember/ops/aten.py:1", "prim": "ember/ops/prim.py:1",
             "prims": "ember/ops/prims.py:1"}
_def_sites = dict(_RESERVED)  # ns -> where its DEF library was made
_lock = threading.Lock()
_override_warned = [False]

# torch.device's list of device types (the error for a bad one names them)
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")


def caller_site(depth=2):
    """'file:line' of the user code that called into ember.library."""
    frame = inspect.currentframe()
    try:
        here = os.path.dirname(__file__)
        while frame is not None and os.path.dirname(frame.f_code.co_filename) == here:
            frame = frame.f_back
        if frame is None:
            return "<unknown>"
        return f"{frame.f_code.co_filename}:{frame.f_lineno}"
    finally:
        del frame


class Library:
    """A handle to register operators of namespace ``ns``.

    ``kind`` is ``"DEF"`` (the one library that defines the namespace's operators),
    ``"FRAGMENT"`` (more definitions for a namespace) or ``"IMPL"`` (kernels only, for
    ``dispatch_key`` when given). ``_destroy()`` removes everything it registered.

    >>> import ember
    >>> lib = ember.library.Library("librarydoc2", "FRAGMENT")
    >>> lib.define("square(Tensor x) -> Tensor")
    'square'
    >>> lib.impl("square", lambda x: x * x, "CompositeImplicitAutograd")
    >>> ember.ops.librarydoc2.square(ember.tensor([3.]))
    tensor([9.])
    >>> lib._destroy()
    """

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in _KINDS:
            raise ValueError(f"Unsupported kind: {kind}")
        if dispatch_key and dispatch_key not in _dispatch.KNOWN_KEYS:
            raise RuntimeError(f"could not parse dispatch key: {dispatch_key}")
        site = caller_site()
        if kind == "DEF":
            with _lock:
                if ns in _def_sites:
                    raise RuntimeError(
                        f"Only a single TORCH_LIBRARY can be used to register the namespace "
                        f"{ns}; please put all of your definitions in a single TORCH_LIBRARY "
                        "block.  If you were trying to specify implementations, consider using "
                        "TORCH_LIBRARY_IMPL (which can be duplicated).  If you really intended "
                        "to define operators for a single namespace in a distributed way, you "
                        "can use TORCH_LIBRARY_FRAGMENT to explicitly indicate this.  Previous "
                        f"registration of TORCH_LIBRARY was registered at {_def_sites[ns]}; "
                        f"latest registration was registered at {site}")
                _def_sites[ns] = site
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._site = site
        self._op_defs = []        # entries this library defined
        self._registrations = []  # (entry, attribute, key, previous value)
        self._destroyed = False

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def _check_alive(self):
        if self._destroyed:
            raise AssertionError("Library object has been destroyed")

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define an operator from its schema string; returns its name.

        >>> import ember
        >>> lib = ember.library.Library("librarydoc3", "FRAGMENT")
        >>> lib.define("scale(Tensor x, float s=2.) -> Tensor")
        'scale'
        """
        self._check_alive()
        if alias_analysis not in ("", "FROM_SCHEMA", "CONSERVATIVE"):
            raise RuntimeError(f"Invalid alias_analysis type {alias_analysis}")
        parsed = parse_schema(schema)
        name = parsed.name
        if self.kind == "IMPL":
            raise RuntimeError(
                f'def("{name}"): Cannot define an operator inside of a TORCH_LIBRARY_IMPL '
                "block.  All def()s should be placed in the (unique) TORCH_LIBRARY block for "
                "their namespace.  (Error occurred while processing TORCH_LIBRARY_IMPL block "
                f"at {self._site})")
        if "::" in name:
            given = name.split("::", 1)[0]
            if given != self.ns:
                block = "TORCH_LIBRARY_FRAGMENT" if self.kind == "FRAGMENT" else "TORCH_LIBRARY"
                raise RuntimeError(
                    f"Explicitly provided namespace ({given}) in schema string does not match "
                    f"namespace of enclosing {block} block ({self.ns}).  Move this "
                    "definition to the (unique) TORCH_LIBRARY block corresponding to this "
                    "namespace (and consider deleting the namespace from your schema string.)"
                    f"  (Error occurred while processing {block} block at {self._site})")
            name = name.split("::", 1)[1]
        parsed.name = f"{self.ns}::{name}"
        e = _dispatch.define(parsed, caller_site())
        e.tags = (tags,) if not isinstance(tags, (tuple, list)) else tuple(tags)
        self._op_defs.append(e)
        return name

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False,
             allow_override: bool = False) -> None:
        """Register ``fn`` as the kernel of ``op_name`` ("name", "name.overload", or an
        OpOverload) for ``dispatch_key`` (default: the library's, else
        CompositeImplicitAutograd).

        >>> import ember
        >>> lib = ember.library.Library("librarydoc4", "FRAGMENT")
        >>> lib.define("inc(Tensor x) -> Tensor")
        'inc'
        >>> lib.impl("inc", lambda x: x + 1, "CPU")
        >>> ember.ops.librarydoc4.inc(ember.zeros(2))
        tensor([1., 1.])
        """
        self._check_alive()
        if not callable(fn):
            raise TypeError(f"Input function is required to be a callable but found type "
                            f"{type(fn)}")
        if with_keyset:
            raise NotImplementedError("Library.impl(with_keyset=True): ember has no "
                                      "DispatchKeySet to pass to the kernel")
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if key not in _dispatch.KNOWN_KEYS:
            raise RuntimeError(f"could not parse dispatch key: {key}")
        if isinstance(op_name, str):
            qualname, _, overload = op_name.partition(".")
            if "::" in qualname:
                ns, qualname = qualname.split("::", 1)
                if ns != self.ns:
                    raise ValueError(f"This is not allowed since there's already a kernel "
                                     f"registered from python overriding {op_name}'s behavior "
                                     f"for {key} dispatch key and {ns} namespace.")
            e = _dispatch.entry(f"{self.ns}::{qualname}", overload, create=True)
        else:
            e = _dispatch.find_entry(op_name)
        self._register_kernel(e, key, fn, allow_override)

    def _register_kernel(self, e, key, fn, allow_override=False):
        previous = e.kernels.get(key)
        if previous is not None and not _override_warned[0]:
            _override_warned[0] = True
            warnings.warn(
                "Warning only once for all operators,  other operators may also be overridden.\n"
                "  Overriding a previously registered kernel for the same operator and the same "
                f"dispatch key\n  operator: {e.schema}\n    registered at {e.define_site}\n"
                f"  dispatch key: {key}\n  previous kernel: no debug info\n"
                f"       new kernel: registered at {caller_site()}", UserWarning, stacklevel=3)
        e.kernels[key] = fn
        e._function = None
        self._registrations.append((e, "kernels", key, previous))

    def _register_attribute(self, e, attribute, value):
        previous = getattr(e, attribute)
        setattr(e, attribute, value)
        e._function = None
        self._registrations.append((e, attribute, None, previous))

    def fallback(self, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        raise NotImplementedError("Library.fallback: ember has no boxed fallback kernels")

    def _destroy(self):
        """Undo every definition and registration this library made."""
        for e, attribute, key, previous in reversed(self._registrations):
            if attribute == "kernels":
                if previous is None:
                    e.kernels.pop(key, None)
                else:
                    e.kernels[key] = previous
            else:
                setattr(e, attribute, previous)
            e._function = None
        self._registrations.clear()
        for e in self._op_defs:
            _dispatch.undefine(e)
        self._op_defs.clear()
        if self.kind == "DEF":
            with _lock:
                if _def_sites.get(self.ns) == self._site:
                    del _def_sites[self.ns]
        self._destroyed = True


# Libraries the functional forms register through when no lib= is given (kept for the
# life of the process, as PyTorch keeps its own).
_keep_alive = []


def _fragment(ns):
    lib = Library(ns, "FRAGMENT")
    _keep_alive.append(lib)
    return lib


def define(qualname: str, schema: str, *, lib=None, tags=()) -> None:
    """Define ``"ns::name"`` with a schema that leaves the name out.

    >>> import ember
    >>> ember.library.define("librarydoc5::neg", "(Tensor x) -> Tensor")
    >>> ember.library.impl("librarydoc5::neg", "cpu", lambda x: -x)
    >>> ember.ops.librarydoc5.neg(ember.ones(1))
    tensor([-1.])
    """
    if not isinstance(qualname, str):
        raise ValueError(f"define(qualname, schema): expected qualname to be a str, got "
                         f"{type(qualname)}")
    ns, name = _parse_qualname(qualname)
    if not schema.lstrip().startswith("("):
        raise ValueError(f'define(qualname, schema, ...): expected schema to look like e.g. '
                         f'"(Tensor x) -> Tensor" but got "{schema}"')
    if lib is None:
        lib = _fragment(ns)
    lib.define(name + schema, tags=tags)


def _parse_qualname(qualname):
    if "::" not in qualname:
        raise ValueError(f"Expected there to be a namespace in {qualname}, i.e. The "
                         "operator name should look something like ns::foo")
    ns, name = qualname.split("::", 1)
    return ns, name


def device_key(device_type):
    """The dispatch key of a device type name ("cpu" -> "CPU"; None -> the default)."""
    if device_type is None or device_type == "default":
        return "CompositeExplicitAutograd"
    if device_type in _dispatch.KNOWN_KEYS:
        return device_type
    if device_type not in DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start of "
                           f"device string: {device_type}")
    return {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "xpu": "XPU",
            "mps": "MPS"}.get(device_type, device_type.upper())


def impl(qualname, types, func=None, *, lib=None):
    """Register a kernel of ``"ns::name"`` for device types (``"cpu"``, a tuple of them,
    ``"default"``) or dispatch keys; a decorator without ``func``.

    >>> import ember
    >>> ember.library.define("librarydoc6::double", "(Tensor x) -> Tensor")
    >>> @ember.library.impl("librarydoc6::double", "cpu")
    ... def _(x):
    ...     return x * 2
    >>> ember.ops.librarydoc6.double(ember.ones(1))
    tensor([2.])
    """
    if isinstance(qualname, Library):  # the older impl(lib, name, dispatch_key) form
        return _legacy_impl(qualname, types, func)
    keys = [device_key(t) for t in ((types,) if isinstance(types, str) else types)]

    def register(fn):
        ns, name = _parse_qualname(qualname)
        target = lib if lib is not None else _fragment(ns)
        for key in keys:
            target.impl(name, fn, key)
        return fn
    if func is None:
        return register
    register(func)
    return None


def _legacy_impl(lib, name, dispatch_key):
    def register(fn):
        lib.impl(name, fn, dispatch_key or "")
        return fn
    return register


@contextlib.contextmanager
def _scoped_library(ns, kind, dispatch_key=""):
    """A Library destroyed when the block ends (PyTorch's test helper).

    >>> import ember
    >>> with ember.library._scoped_library("scopeddoc", "FRAGMENT") as lib:
    ...     _ = lib.define("f(Tensor x) -> Tensor")
    >>> hasattr(ember.ops.scopeddoc, "f")
    False
    """
    lib = Library(ns, kind, dispatch_key)
    try:
        yield lib
    finally:
        lib._destroy()
