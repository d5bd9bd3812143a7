"""``ember.fx.Interpreter`` and ``Transformer``: running a GraphModule node by node.

The Interpreter evaluates each node with the method named by its ``op`` (``placeholder``,
``get_attr``, ``call_function``, ``call_method``, ``call_module``, ``output``); a subclass
overrides them to change what a kind of node does. The Transformer runs the same methods on
Proxies, so the result is a new GraphModule with the changed graph.

>>> import ember
>>> from ember.fx import Interpreter, symbolic_trace
>>> class NegateSin(Interpreter):
...     def call_function(self, target, args, kwargs):
...         result = super().call_function(target, args, kwargs)
...         return -result if target is ember.sin else result
>>> gm = symbolic_trace(lambda x: ember.sin(x))
>>> NegateSin(gm).run(ember.zeros(1) + 1.0) < 0
tensor([True])
"""
from __future__ import annotations

import inspect
from typing import Any, Iterator

from .graph import Graph
from .graph_module import GraphModule
from .node import Node, map_aggregate, map_arg
from .proxy import Proxy
from ._symbolic_trace import Tracer, _ProxyMode


class Interpreter:
    """Runs ``module``'s graph (or ``graph``) on concrete values; ``run(*args)``."""

    def __init__(self, module: Any, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        self.submodules = dict(module.named_modules())
        self.graph = graph if graph is not None else module.graph
        self.env: dict = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.user_to_last_uses: dict = {}
        if garbage_collect_values:
            seen: set = set()
            for node in reversed(self.graph.nodes):
                for used in node._input_nodes:
                    if used not in seen:
                        seen.add(used)
                        self.user_to_last_uses.setdefault(node, []).append(used)

    def run(self, *args: Any, initial_env: dict | None = None,
            enable_io_processing: bool = True) -> Any:
        """Evaluate the graph on ``args``; the output node's value."""
        self.env = initial_env if initial_env is not None else {}
        self.args_iter: Iterator[Any] = iter(args)
        for node in self.graph.nodes:
            if node in self.env:
                continue
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                if self.extra_traceback:
                    # torch.fx's note of the failing node (ember records no stack traces)
                    msg = f"While executing {node.format_node()}"
                    msg = f"{e.args[0]}\n\n{msg}" if e.args else str(msg)
                    msg += f"\nOriginal traceback:\n{node.meta.get('stack_trace')}"
                    e.args = (msg,) + e.args[1:]
                    if isinstance(e, KeyError):
                        raise RuntimeError(*e.args) from e
                raise
            if self.garbage_collect_values:
                for to_delete in self.user_to_last_uses.get(node, []):
                    del self.env[to_delete]
            if node.op == "output":
                return self.env[node]
        return None

    def run_node(self, n: Node) -> Any:
        """Evaluate one node from the values in ``self.env``."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # ---- one method per kind of node ---------------------------------------------------
    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The next input (all the rest for ``*args``; the default when none is left)."""
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as stop:
            if args:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from stop

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The module attribute ``target``."""
        return self.fetch_attr(target)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Any:
        """``target(*args, **kwargs)``."""
        return target(*args, **kwargs)

    def call_method(self, target: str, args: tuple, kwargs: dict) -> Any:
        """``args[0].target(*args[1:], **kwargs)``."""
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        """Call the submodule ``target``."""
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: str, args: tuple, kwargs: dict) -> Any:
        """The graph's result."""
        return args[0]

    # ---- helpers -----------------------------------------------------------------------
    def fetch_attr(self, target: str) -> Any:
        """Follow the dotted path ``target`` from the module."""
        target_atoms = target.split(".")
        attr_itr = self.module
        for i, atom in enumerate(target_atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError("Node referenced nonexistent target "
                                   f"{'.'.join(target_atoms[:i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple:
        """``n``'s arguments with each node replaced by its value."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        return args, kwargs

    def map_nodes_to_values(self, args: Any, n: Node) -> Any:
        """``args`` with each node replaced by its value in ``self.env``."""
        def load_arg(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


class _TransformerTracer(Tracer):
    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph

    def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
        return True


class Transformer(Interpreter):
    """Rebuilds a GraphModule node by node on Proxies: override the node methods to
    emit other nodes; ``transform()`` returns the new GraphModule.

    >>> import ember
    >>> from ember.fx import Transformer, symbolic_trace
    >>> class SinToCos(Transformer):
    ...     def call_function(self, target, args, kwargs):
    ...         target = ember.cos if target is ember.sin else target
    ...         return super().call_function(target, args, kwargs)
    >>> gm = SinToCos(symbolic_trace(lambda x: ember.sin(x))).transform()
    >>> [n.name for n in gm.graph.nodes]
    ['x', 'cos', 'output']
    """

    def __init__(self, module: GraphModule) -> None:
        super().__init__(module)
        self.new_graph = Graph()
        self.tracer = _TransformerTracer(self.new_graph)
        self.tracer.root = module

    def placeholder(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A placeholder of the new graph (keeping its default)."""
        default = args[0] if args else inspect.Signature.empty
        node = self.new_graph.placeholder(target, default_value=default)
        return Proxy(node, self.tracer)

    def get_attr(self, target: str, args: tuple, kwargs: dict) -> Proxy:
        """A get_attr node of the new graph."""
        return self.tracer.create_proxy("get_attr", target, args, kwargs)

    def call_module(self, target: str, args: tuple, kwargs: dict) -> Any:
        """A call_module node of the new graph."""
        submod = self.fetch_attr(target)
        return self.tracer.call_module(submod, submod.forward, args, kwargs)

    def call_function(self, target: Any, args: tuple, kwargs: dict) -> Proxy:
        """A call_function node of the new graph."""
        return self.tracer.create_proxy("call_function", target, args, kwargs)

    def transform(self) -> GraphModule:
        """Run the transformation; the new GraphModule."""
        with _ProxyMode():  # ember calls a subclass makes on Proxies are recorded
            result = super().run(enable_io_processing=False)
        if result is not None:
            def strip_proxy(a: Any) -> Any:
                return a.node if isinstance(a, Proxy) else a
            self.new_graph.output(map_aggregate(result, strip_proxy))
        return GraphModule(self.module, self.new_graph)
