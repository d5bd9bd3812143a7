"""``ember.fx``'s tracer: ``Tracer``, ``symbolic_trace`` and ``wrap``.

Tracing calls the module's ``forward`` with Proxies for its inputs. While it runs,
``nn.Module.__call__`` and ``nn.Module.__getattr__`` are patched on the class (and put back
afterwards, so untraced programs pay nothing): a leaf module's call becomes one
``call_module`` node, other modules are traced through; a parameter read becomes a
``get_attr`` node. A function-mode routes ember calls that receive a Proxy to
``Proxy.__torch_function__`` before ember's own code would look at the argument.

>>> import ember
>>> from ember import nn
>>> from ember.fx import symbolic_trace
>>> class Net(nn.Module):
...     def __init__(self):
...         super().__init__()
...         self.linear = nn.Linear(4, 2)
...     def forward(self, x):
...         return ember.relu(self.linear(x)) + 1
>>> [n.name for n in symbolic_trace(Net()).graph.nodes]
['x', 'linear', 'relu', 'add', 'output']
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import importlib
import inspect
import math
import operator
import types
from typing import Any, Callable, Iterator

from .. import nn
from .._tensor import Tensor
from ..overrides import TorchFunctionMode
from . import graph_module
from .graph import Graph, base_globals
from .graph_module import GraphModule, _CodeOnlyModule, _forward_from_src
from .node import map_aggregate
from .proxy import Proxy, TracerBase

# (globals dict, name) of the functions ``wrap`` registered: patched while tracing
_WRAPPED: dict = {}


def _assert(condition: Any, message: str) -> None:
    """The check a specialized ``concrete_args`` value records (``torch._assert``)."""
    if not condition:
        raise AssertionError(message)


def _assert_is_none(value: Any, msg: str) -> None:
    """The check a ``concrete_args`` value of None records."""
    if value is not None:
        raise AssertionError(msg)


def wrap(fn_or_name: str | Callable) -> Any:
    """Keep a module-level function as one ``call_function`` node when it receives a
    Proxy, instead of tracing into it. Call it at module scope, with the function or its
    name (``ember.fx.wrap("my_fn")``), or use it as a decorator.

    >>> import ember.fx
    >>> def clamp_len(x, n):
    ...     return x[:n]
    >>> clamp_len is ember.fx.wrap(clamp_len)
    True
    """
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable "
                           "or string name")
    if callable(fn_or_name):
        if isinstance(fn_or_name, str):
            raise AssertionError("Expected fn_or_name to not be a string")
        fn_name = fn_or_name.__name__
    else:
        fn_name = fn_or_name
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None
    if caller is None or caller.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _WRAPPED[(id(caller.f_globals), fn_name)] = caller.f_globals
    return fn_or_name


def _has_proxy(args: tuple, kwargs: dict) -> Proxy | None:
    found = []

    def look(a: Any) -> Any:
        if isinstance(a, Proxy) and not found:
            found.append(a)
        return a
    map_aggregate(args, look)
    map_aggregate(kwargs, look)
    return found[0] if found else None


class _ProxyMode(TorchFunctionMode):
    """Sends every ember call with a Proxy among its arguments to Proxy's handler."""

    def __torch_function__(self, func: Callable, types: tuple, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        if _has_proxy(args, kwargs) is not None:
            return Proxy.__torch_function__(func, types, args, kwargs)
        return func(*args, **kwargs)


class Tracer(TracerBase):
    """Turns a module (or function) into a Graph. Subclass it to change what is a leaf
    (``is_leaf_module``) or how values become arguments (``create_arg``).

    >>> import ember
    >>> from ember.fx import Tracer
    >>> class NoLeaves(Tracer):
    ...     def is_leaf_module(self, m, module_qualified_name):
    ...         return False
    >>> graph = NoLeaves().trace(ember.nn.Sequential(ember.nn.ReLU()))
    >>> [n.op for n in graph.nodes]
    ['placeholder', 'call_function', 'output']
    """

    def __init__(self, autowrap_modules: tuple = (math,), autowrap_functions: tuple = (),
                 param_shapes_constant: bool = False) -> None:
        if param_shapes_constant:
            raise NotImplementedError("ember.fx.Tracer: param_shapes_constant is not "
                                      "supported")
        # functions kept as call_function leaves wherever a traced forward's globals name
        # them (math.sqrt(x.size(1)) is recorded, not evaluated)
        self._autowrap_function_ids = {
            id(value) for module in autowrap_modules for name, value in module.__dict__.items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_modules = tuple(autowrap_modules)
        self._autowrap_patches: list = []
        self.root: Any = None
        self.graph: Any = None
        self.submodule_paths: dict | None = None
        self.tensor_attrs: dict = {}

    # ---- rules a subclass may change ----------------------------------------------------
    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        """ember's own layers (``ember.nn``'s modules, except Sequential) are leaves; user
        modules are traced through."""
        module = type(m).__module__ or ""
        return (module.startswith("ember.nn") and not isinstance(m, nn.Sequential))

    def path_of_module(self, mod: Any) -> str:
        """The qualified name of submodule ``mod`` in the root."""
        if self.submodule_paths is not None:
            path = self.submodule_paths.get(id(mod))
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for name, candidate in self.root.named_modules():
            if candidate is mod:
                return name
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Any, forward: Callable, args: tuple, kwargs: dict) -> Any:
        """A module call: a ``call_module`` node for a leaf, else its forward traced."""
        module_qualified_name = self.path_of_module(m)
        if not self.is_leaf_module(m, module_qualified_name):
            return forward(*args, **kwargs)
        return self.create_proxy("call_module", module_qualified_name, args, kwargs)

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict) -> Any:
        """A module attribute read: a parameter becomes (one) ``get_attr`` Proxy."""
        if isinstance(attr_val, nn.Parameter):
            for name, param in self.root.named_parameters():
                if attr_val is param:
                    if name not in parameter_proxy_cache:
                        parameter_proxy_cache[name] = self.create_proxy("get_attr", name,
                                                                        (), {})
                    return parameter_proxy_cache[name]
        return attr_val

    def create_arg(self, a: Any) -> Any:
        """Parameters, buffers and tensor attributes of the root become ``get_attr`` nodes;
        other tensors are stored on the root as ``_tensor_constant<i>``."""
        if isinstance(a, nn.Parameter):
            for name, param in self.root.named_parameters():
                if a is param:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, nn.Module):
            for name, module in self.root.named_modules():
                if a is module:
                    return self.create_node("get_attr", name, (), {})
            raise NameError("module is not installed as a submodule")
        if isinstance(a, Tensor):
            for name, buffer in self.root.named_buffers():
                if a is buffer:
                    return self.create_node("get_attr", name, (), {})
            name = self.tensor_attrs.get(id(a))
            if name is None:
                name = self._fresh_constant_name()
                setattr(self.root, name, a)
                self.tensor_attrs[id(a)] = name
            return self.create_node("get_attr", name, (), {})
        return super().create_arg(a)

    def _fresh_constant_name(self) -> str:
        i = 0
        while hasattr(self.root, f"_tensor_constant{i}"):
            i += 1
        return f"_tensor_constant{i}"

    # ---- tracing -----------------------------------------------------------------------
    def create_args_for_root(self, root_fn: Callable, is_module: bool,
                             concrete_args: dict | None = None) -> tuple:
        """The function to call and its arguments: one placeholder (as a Proxy) or
        concrete value per parameter. As torch.fx does, a function with ``*args``,
        ``**kwargs`` or keyword-only parameters is called through a copy whose parameters
        are all positional, so ``args`` and ``kwargs`` are Proxies too."""
        code = root_fn.__code__
        signature = inspect.signature(root_fn)
        concrete_args = dict(concrete_args or {})
        unknown = set(concrete_args) - set(signature.parameters)
        if unknown:
            raise NotImplementedError(f"concrete_args names no parameter of the traced "
                                      f"function: {sorted(unknown)}")
        has_varargs = bool(code.co_flags & inspect.CO_VARARGS)
        has_varkw = bool(code.co_flags & inspect.CO_VARKEYWORDS)
        total = code.co_argcount + code.co_kwonlyargcount
        names = list(code.co_varnames[:total + has_varargs + has_varkw])
        args = []
        for index, name in enumerate(names[1 if is_module else 0:]):
            index += 1 if is_module else 0
            if index >= total:  # the variadic ones
                prefix = "*" if has_varargs and index == total else "**"
                args.append(self.proxy(self.graph.placeholder(prefix + name)))
            elif name in concrete_args:
                args.append(self._concrete(name, signature.parameters[name],
                                           concrete_args[name]))
            else:
                default = signature.parameters[name].default
                args.append(self.proxy(self.graph.placeholder(name, default_value=default)))
        fn = root_fn
        if has_varargs or has_varkw or code.co_kwonlyargcount:
            flat = code.replace(co_flags=code.co_flags & ~(inspect.CO_VARARGS
                                                           | inspect.CO_VARKEYWORDS),
                                co_argcount=len(names), co_kwonlyargcount=0)
            fn = types.FunctionType(flat, root_fn.__globals__, root_fn.__name__, None,
                                    root_fn.__closure__)
        return fn, tuple(args)

    def _concrete(self, name: str, param: inspect.Parameter, value: Any) -> Any:
        # torch.fx keeps a placeholder for a specialized input and checks its value
        if isinstance(value, (Tensor, Proxy)) or isinstance(value, (list, tuple, dict)):
            raise NotImplementedError("ember.fx: concrete_args holding tensors or "
                                      "structures")
        node = self.graph.placeholder(f"{name}_1", default_value=param.default)
        message = f"{name} has been specialized to have value {value} but got another value"
        if value is None:
            self.graph.call_function(_assert_is_none, (node, message))
        else:
            equal = self.graph.call_function(operator.eq, (node, value))
            self.graph.call_function(_assert, (equal, message))
        return value

    def trace(self, root: Any, concrete_args: dict | None = None) -> Graph:
        """Trace ``root`` (a Module or a function) into a new Graph."""
        if isinstance(root, nn.Module):
            self.root = root
            fn = type(root).forward
            is_module = True
        else:
            self.root = nn.Module()
            fn = root
            is_module = False
        self.graph = Graph(owning_module=self.root if is_module else None)
        self.submodule_paths = {id(m): name for name, m in self.root.named_modules()}
        self.tensor_attrs = {}
        self._collect_tensor_attrs(self.root, [])
        fn, args = self.create_args_for_root(fn, is_module, concrete_args)
        if is_module:
            args = (root,) + args
        self._autowrap_patches = []
        try:
            with self._patched_modules(), _patched_wrapped_functions(self), _ProxyMode():
                self._autowrap(getattr(fn, "__globals__", {}))
                for module in self._autowrap_modules:  # math.sqrt(...) as well as sqrt(...)
                    self._autowrap(module.__dict__)
                result = fn(*args)
        finally:
            for fn_globals, name, value in reversed(self._autowrap_patches):
                fn_globals[name] = value
            self._autowrap_patches = []
        self.graph.output(self.create_arg(result))
        self.submodule_paths = None
        return self.graph

    def _autowrap(self, fn_globals: dict) -> None:
        # patched until the trace ends (each globals dict once: a patched value is no
        # longer one of the autowrap ids)
        if not self._autowrap_function_ids:
            return
        for name, value in list(fn_globals.items()):
            if not name.startswith("_") and id(value) in self._autowrap_function_ids:
                self._autowrap_patches.append((fn_globals, name, value))
                fn_globals[name] = _wrapper(value)

    def _collect_tensor_attrs(self, module: Any, prefix: list) -> None:
        for key, value in module.__dict__.items():
            if isinstance(value, Tensor):
                self.tensor_attrs[id(value)] = ".".join(prefix + [key])
        for key, child in module.named_children():
            self._collect_tensor_attrs(child, prefix + [key])

    @contextlib.contextmanager
    def _patched_modules(self) -> Iterator[None]:
        tracer = self
        module_cls = nn.Module
        original_call = module_cls.__call__
        original_getattr = module_cls.__getattr__
        parameter_proxy_cache: dict = {}

        @functools.wraps(original_call)
        def traced_call(mod: Any, *args: Any, **kwargs: Any) -> Any:
            tracer._autowrap(getattr(type(mod).forward, "__globals__", {}))

            def forward(*a: Any, **k: Any) -> Any:
                return original_call(mod, *a, **k)
            return tracer.call_module(mod, forward, args, kwargs)

        @functools.wraps(original_getattr)
        def traced_getattr(mod: Any, attr: str) -> Any:
            value = original_getattr(mod, attr)
            return tracer.getattr(attr, value, parameter_proxy_cache)

        module_cls.__call__ = traced_call
        module_cls.__getattr__ = traced_getattr
        try:
            yield
        finally:
            module_cls.__call__ = original_call
            module_cls.__getattr__ = original_getattr


@contextlib.contextmanager
def _patched_wrapped_functions(tracer: Tracer) -> Iterator[None]:
    saved = []
    for (_, name), fn_globals in _WRAPPED.items():
        if name in fn_globals:
            original = fn_globals[name]
        elif hasattr(builtins, name):
            original = getattr(builtins, name)
        else:
            continue
        saved.append((fn_globals, name, fn_globals.get(name, _MISSING)))
        fn_globals[name] = _wrapper(original)
    try:
        yield
    finally:
        for fn_globals, name, value in reversed(saved):
            if value is _MISSING:
                del fn_globals[name]
            else:
                fn_globals[name] = value


_MISSING = object()


def _wrapper(original: Callable) -> Callable:
    @functools.wraps(original)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        proxy = _has_proxy(args, kwargs)
        if proxy is not None:
            result = proxy.tracer.create_proxy("call_function", original, args, kwargs)
            result.node.meta["is_wrapped"] = True
            return result
        return original(*args, **kwargs)
    return wrapped


class _KeepModules(Tracer):
    # re-tracing a GraphModule's code: every submodule call it makes stays one node
    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        return True


def _rebuild_graph_module(body: dict, imports: list) -> GraphModule:
    """Unpickle a GraphModule: run its code and trace it again."""
    fn_globals = base_globals()
    for name, module_name, qualname in imports:
        obj = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
        fn_globals[name] = obj
    forward = _forward_from_src(body["_code"], fn_globals)
    code_only = type("CodeOnlyModule", (_CodeOnlyModule,), {"forward": forward})(body)
    graph = _KeepModules().trace(code_only)
    return GraphModule(code_only, graph)


graph_module._REBUILD[0] = _rebuild_graph_module


def symbolic_trace(root: Any, concrete_args: dict | None = None) -> Any:
    """Trace ``root`` (a Module or function) and return a GraphModule running its graph.

    >>> import ember
    >>> from ember.fx import symbolic_trace
    >>> gm = symbolic_trace(lambda x: ember.sin(x) * 2)
    >>> bool((gm(ember.ones(2)) == ember.sin(ember.ones(2)) * 2).all())
    True
    """
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = type(root).__name__ if isinstance(root, nn.Module) else root.__name__
    return GraphModule(tracer.root, graph, name)
