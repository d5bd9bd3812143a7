"""``ember.fx.proxy``: Proxy, the stand-in value symbolic tracing passes through a program.

Every operation on a Proxy records a Node instead of computing: ember's functions reach
``Proxy.__torch_function__`` (call_function, or call_method for Tensor methods), operators
record ``operator.add`` & co., attribute reads record ``getattr`` and method calls
``call_method``. Using a Proxy's value (``bool``, ``len``, iteration) is impossible while
tracing and raises torch.fx's errors.

>>> import ember
>>> from ember.fx import Graph, Proxy, TracerBase
>>> g = Graph()
>>> tracer = TracerBase()
>>> tracer.graph = g
>>> x = Proxy(g.placeholder("x"), tracer)
>>> (ember.relu(x) + 1).node.format_node()
'%add : [num_users=0] = call_function[target=operator.add](args = (%relu, 1), kwargs = {})'
"""
from __future__ import annotations

import dis
import inspect
import operator
from typing import Any, Callable

from .. import overrides
from .._tensor import Tensor
from .node import MAGIC_METHODS, REFLECTABLE_MAGIC_METHODS, Node, map_aggregate


class TraceError(ValueError):
    """A traced program used a Proxy's value (control flow, iteration)."""


_BASE_TYPES = (str, int, float, bool, complex, type(None), type(Ellipsis))


class TracerBase:
    """What a Proxy records into: ``graph`` and ``create_proxy``/``create_node``/
    ``create_arg``. ``Tracer`` adds module tracing on top."""

    graph: Any = None

    def create_node(self, kind: str, target: Any, args: tuple, kwargs: dict,
                    name: str | None = None, type_expr: Any = None) -> Node:
        """Insert a node into ``self.graph``."""
        return self.graph.create_node(kind, target, args, kwargs, name, type_expr)

    def proxy(self, node: Node) -> Proxy:
        """Wrap ``node`` in a Proxy of this tracer."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Any, args: tuple, kwargs: dict,
                     name: str | None = None, type_expr: Any = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """Record an operation (its arguments through ``create_arg``) and return its Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple):
            raise AssertionError(f"Expected args_ to be tuple, got {type(args_)}")
        if not isinstance(kwargs_, dict):
            raise AssertionError(f"Expected kwargs_ to be dict, got {type(kwargs_)}")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return self.proxy(node) if proxy_factory_fn is None else proxy_factory_fn(node)

    def create_arg(self, a: Any) -> Any:
        """An argument as a node may hold it: Proxies become their nodes, structures are
        mapped, plain values (numbers, strings, dtypes, devices, ...) kept."""
        if isinstance(a, Proxy):
            return a.node
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            return type(a)(*(self.create_arg(elem) for elem in a))
        if isinstance(a, (tuple, list)):
            return type(a)(self.create_arg(elem) for elem in a)
        if isinstance(a, dict):
            result = {}
            for key, value in a.items():
                key = self.create_arg(key)
                if isinstance(key, Node):
                    raise RuntimeError("Keys for dictionaries used as an argument cannot "
                                       f"contain a Node. Got key: {key}")
                result[key] = self.create_arg(value)
            return result
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, (Node,) + _BASE_TYPES) or _is_plain_value(a):
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def to_bool(self, obj: Proxy) -> bool:
        """``bool(proxy)``: a traced value steering control flow cannot be traced."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control "
                         "flow")

    def iter(self, obj: Proxy) -> Any:
        """``iter(proxy)``: a traced value of unknown length cannot be iterated."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the "
                         "Proxy is used in a loop or as a *args or **kwargs function argument. "
                         "See the torch.fx docs on pytorch.org for a more detailed explanation "
                         "of what types of control flow can be traced, and check out the Proxy "
                         "docstring for help troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy) -> Proxy:
        """``**proxy``: recorded as a call of ``keys``."""
        return Attribute(obj, "keys")()


def _is_plain_value(a: Any) -> bool:
    # dtypes, devices, layouts, memory formats, Size: values ember prints in a form the
    # generated code can evaluate again
    module = type(a).__module__ or ""
    return module.startswith("ember") and not isinstance(a, Tensor) and \
        not hasattr(a, "_parameters") and type(a).__name__ in (
            "dtype", "device", "layout", "memory_format", "Size", "_DType", "DType",
            "Device", "MemoryFormat", "Layout")


class Proxy:
    """A value being traced: the Node that will compute it, and the tracer recording it."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = _GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        # reading any attribute records it (lazily: only once it is used)
        if k.startswith("__") and k.endswith("__"):
            raise AttributeError(k)
        return Attribute(self, k)

    def __getstate__(self) -> dict:
        return self.__dict__

    def __setstate__(self, d: dict) -> None:
        self.__dict__ = d

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self,) + args, kwargs)

    def __iter__(self) -> Any:
        # ``a, b = proxy`` unpacks a known number of values: recorded as getitems
        frame = inspect.currentframe()
        caller = frame.f_back if frame is not None else None
        if caller is not None:
            for inst in dis.get_instructions(caller.f_code):
                if inst.offset == caller.f_lasti:
                    if inst.opname == "UNPACK_SEQUENCE":
                        return (self[i] for i in range(inst.argval))
                    break
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you "
                           "want this call to be recorded, please call torch.fx.wrap('len') "
                           "at module scope")

    def keys(self) -> Proxy:
        """Recorded ``keys()`` (for ``**proxy``)."""
        return self.tracer.keys(self)

    @classmethod
    def __torch_function__(cls, orig_method: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Proxy:
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict = {}

        def find_tracer(a: Any) -> Any:
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a
        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers)} while "
                               f"trying to trace operations {orig_method}")
        tracer = next(iter(tracers))
        if overrides.is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs)


class _GraphAppendingTracer(TracerBase):
    def __init__(self, graph: Any) -> None:
        self.graph = graph


class Attribute(Proxy):
    """``proxy.name``: becomes a ``getattr`` node when used as a value, or a
    ``call_method`` node when called."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        """The ``getattr`` node, made on first use (a method call needs none)."""
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root,) + args, kwargs)


def _binary(name: str, reflected: bool) -> Callable:
    target = getattr(operator, name)

    def method(self: Proxy, rhs: Any = None, *more: Any) -> Proxy:
        args = (rhs, self) if reflected else (self, rhs)
        return self.tracer.create_proxy("call_function", target, args, {})
    return method


def _unary(name: str) -> Callable:
    target = getattr(operator, name)

    def method(self: Proxy) -> Proxy:
        return self.tracer.create_proxy("call_function", target, (self,), {})
    return method


for _name, _form in MAGIC_METHODS.items():
    if not hasattr(operator, _name):
        continue  # "div": Python 3 has no __div__
    _dunder = f"__{_name.strip('_')}__"
    setattr(Proxy, _dunder, _unary(_name) if _form.count("{}") == 1 else _binary(_name, False))
for _name in REFLECTABLE_MAGIC_METHODS:
    if _name != "getitem" and hasattr(operator, _name):
        setattr(Proxy, f"__r{_name.strip('_')}__", _binary(_name, True))
# Proxy defines __eq__, so it needs its hash back (nodes and proxies live in dicts)
Proxy.__hash__ = object.__hash__  # type: ignore[method-assign]
