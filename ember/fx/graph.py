"""``ember.fx.graph``: the Graph (a doubly linked list of Nodes) and its Python codegen.

``str(graph)`` and ``graph.python_code('self').src`` have torch.fx's formats. Calls of
ember's public functions are written under PyTorch's names (``torch.relu``,
``torch.nn.functional.relu``); the generated code runs with ``torch`` (and ``ember``) bound
to ember, so the text matches what torch.fx prints for the same program.

>>> import operator
>>> from ember.fx import Graph
>>> g = Graph()
>>> x = g.placeholder("x")
>>> g.output(g.call_function(operator.add, (x, 1)))
output
>>> print(g.python_code("self").src.strip())
def forward(self, x):
    add = x + 1;  x = None
    return add
"""
from __future__ import annotations

import builtins
import contextlib
import copy
import inspect
import keyword
import operator
import re
from typing import Any, Callable, Iterator, NamedTuple

from .node import (MAGIC_METHODS, OPERATOR_FUNCTIONS, Node, _qualified_name, ember_namespace,
                   map_arg)

_ILLEGAL_NAMES = set(keyword.kwlist) | set(dir(builtins))
_ILLEGAL_CHARS = re.compile(r"[^0-9a-zA-Z_]+")
_NAME_SUFFIX = re.compile(r"(.*)_(\d+)$")


def _snake_case(name: str) -> str:
    """``BatchNorm2d`` -> ``batch_norm2d`` (torch.fx's node names)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


class _Namespace:
    """Unique, legal Python names: ``add``, ``add_1``, ``sum_1`` (a builtin is renamed)."""

    def __init__(self) -> None:
        self._used: set = set()
        self._base_count: dict = {}
        self._obj_to_name: dict = {}

    def create_name(self, candidate: str, obj: Any) -> str:
        if obj is not None and id(obj) in self._obj_to_name:
            return self._obj_to_name[id(obj)]
        candidate = _ILLEGAL_CHARS.sub("_", candidate) or "_unnamed"
        if candidate[0].isdigit():
            candidate = f"_{candidate}"
        match = _NAME_SUFFIX.match(candidate)
        if match is None:
            base, num = candidate, None
        else:
            base, num = match.group(1), int(match.group(2))
        candidate = base if num is None else f"{base}_{num}"
        if not num:
            num = self._base_count.get(base, 0)
        while candidate in self._used or candidate in _ILLEGAL_NAMES:
            num += 1
            candidate = f"{base}_{num}"
        self._used.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[id(obj)] = candidate
        return candidate


class PythonCode(NamedTuple):
    """Generated source (``src``) and the globals it runs with (``globals``)."""
    src: str
    globals: dict


class _NodeList:
    """The graph's nodes in order: iterable, reversible, sized (``graph.nodes``)."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self._graph = graph
        self._direction = direction

    def __len__(self) -> int:
        return self._graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self._graph._root
        cur = getattr(root, self._direction)
        while cur is not root:
            following = getattr(cur, self._direction)  # safe against erasing cur
            if not cur._erased:
                yield cur
            cur = following

    def __reversed__(self) -> Iterator[Node]:
        return iter(_NodeList(self._graph, "_prev" if self._direction == "_next" else "_next"))


class Graph:
    """A program as a list of Nodes: placeholders (the inputs), calls, and one output.

    Build one with ``placeholder``/``call_function``/``call_module``/``call_method``/
    ``get_attr``/``output`` (inserted at the insertion point: the end, or where
    ``inserting_before``/``inserting_after`` put it), or get one from ``symbolic_trace``.
    """

    def __init__(self, owning_module: Any = None) -> None:
        self._root = Node(self, "", "root", "", (), {})
        self._len = 0
        self._namespace = _Namespace()
        self._insert: Callable[[Node], None] = self._root.prepend
        self.owning_module = owning_module

    @property
    def nodes(self) -> _NodeList:
        """The nodes in program order."""
        return _NodeList(self)

    # ---- building ----------------------------------------------------------------------------
    def create_node(self, op: str, target: Any, args: tuple | None = None,
                    kwargs: dict | None = None, name: str | None = None,
                    type_expr: Any = None) -> Node:
        """Make a node of kind ``op`` and insert it at the insertion point."""
        candidate = name if name is not None else self._target_to_str(target)
        name = self._namespace.create_name(candidate, None)
        node = Node(self, name, op, target, tuple(args or ()), dict(kwargs or {}), type_expr)
        self._insert(node)
        self._len += 1
        return node

    @staticmethod
    def _target_to_str(target: Any) -> str:
        if callable(target):
            op = target.__name__
        else:
            op = str(target)
        if op.startswith("__") and op.endswith("__") and len(op) > 4:
            op = op[2:-2]
        return _snake_case(op)

    def placeholder(self, name: str, type_expr: Any = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """An input named ``name`` (``*args`` for the variadic one), with
        ``default_value`` when one is given."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any = None) -> Node:
        """Read an attribute of the owning module (``"layer.weight"``)."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call the submodule ``module_name`` of the owning module."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple | None = None,
                    kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call method ``method_name`` of ``args[0]``."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable, args: tuple | None = None,
                      kwargs: dict | None = None, type_expr: Any = None) -> Node:
        """Call the free function ``the_function``."""
        return self.create_node("call_function", the_function, args, kwargs,
                                type_expr=type_expr)

    def output(self, result: Any, type_expr: Any = None) -> Node:
        """The graph's result (one value, or a structure of them)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    @contextlib.contextmanager
    def inserting_before(self, n: Node | None = None) -> Iterator[None]:
        """New nodes go just before ``n`` (in order); with None, at the start of the graph
        (each before the previous one, as ``inserting_after``)."""
        if n is None:
            with self.inserting_after(self._root):
                yield
            return
        previous, self._insert = self._insert, n.prepend
        try:
            yield
        finally:
            self._insert = previous

    @contextlib.contextmanager
    def inserting_after(self, n: Node | None = None) -> Iterator[None]:
        """New nodes go just after ``n`` (each right after it, so several come out in
        reverse order, as in torch.fx); with None, at the end of the graph."""
        if n is None:
            with self.inserting_before(self._root):
                yield
            return
        previous, self._insert = self._insert, n.append
        try:
            yield
        finally:
            self._insert = previous

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node nothing uses."""
        if to_erase.users:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: "
                               f"{to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase._update_args_kwargs((), {})

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None
                            ) -> bool:
        """Erase the nodes whose values nothing uses and that have no side effect (by
        ``Node.is_impure``, or ``is_impure_node`` when given); returns whether anything
        changed."""
        is_impure = is_impure_node if is_impure_node is not None else Node.is_impure
        changed = False
        for node in reversed(self.nodes):
            if not node.users and not is_impure(node):
                self.erase_node(node)
                changed = True
        return changed

    def node_copy(self, node: Node, arg_transform: Callable[[Node], Any] = lambda x: x
                  ) -> Node:
        """Copy ``node`` (of another graph) here, its inputs mapped by ``arg_transform``."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        copied = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        copied.meta = copy.copy(node.meta)
        return copied

    def graph_copy(self, g: Graph, val_map: dict, return_output_node: bool = False) -> Any:
        """Copy ``g``'s nodes (but its output) here; ``val_map`` maps old to new nodes.
        Returns the value the output would return."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                result = map_arg(node.args[0], lambda n: val_map[n])
                return (result, node) if return_output_node else result
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict) -> Graph:
        copied = Graph()
        memo[id(self)] = copied
        output_vals = copied.graph_copy(self, {}, return_output_node=True)
        if output_vals is not None:
            result, old_output = output_vals
            copied.output(result, type_expr=old_output.type)
        return copied

    def find_nodes(self, *, op: str, target: Any = None) -> list:
        """The nodes of kind ``op`` (and ``target``, when given)."""
        return [n for n in self.nodes if n.op == op and (target is None or n.target == target)]

    # ---- checks and printing -----------------------------------------------------------
    def lint(self) -> None:
        """Check the graph is well formed: nodes belong to it, each input is defined before
        it is used, and names are unique."""
        seen: set = set()
        names: set = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this Graph!")
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Arg {arg} of Node {node} does not belong to this "
                                       "Graph, but was used as an argument! If you are "
                                       "copying nodes from another graph, make sure to use "
                                       "``arg_transform`` on node_copy() to remap values")
                if arg not in seen:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the "
                                       "graph are topologically ordered")
            if node.name in names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            names.add(node.name)
            seen.add(node)
        if self.owning_module is not None:
            for node in self.nodes:
                if node.op in ("get_attr", "call_module"):
                    _check_target(self.owning_module, node)

    def __str__(self) -> str:
        lines = ["graph():"]
        lines += ["    " + node.format_node() for node in self.nodes]
        return "\n".join(lines)

    def print_tabular(self) -> None:
        """Print the nodes as a table (needs the ``tabulate`` package, as torch.fx does)."""
        try:
            from tabulate import tabulate
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found "
                  "on this machine. Run `pip install tabulate` to install the library.")
            raise
        rows = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(rows, headers=["opcode", "name", "target", "args", "kwargs"]))

    # ---- codegen -------------------------------------------------------------------------
    def python_code(self, root_module: str, *, verbose: bool = False) -> PythonCode:
        """The ``forward`` this graph stands for, as source and globals (``verbose``: with
        the comments ``print_readable`` shows)."""
        return _CodeGen(self, root_module, verbose).generate()


def _check_target(root: Any, node: Node) -> None:
    obj = root
    for atom in node.target.split("."):
        if not hasattr(obj, atom):
            raise RuntimeError(f"Node {node} target {node.target} references nonexistent "
                               f"attribute {atom} of {obj}")
        obj = getattr(obj, atom)


def _format_target(base: str, target: str) -> str:
    expr = base
    for atom in target.split("."):
        if atom.isidentifier() and not keyword.iskeyword(atom):
            expr = f"{expr}.{atom}"
        else:
            expr = f'getattr({expr}, "{atom}")'
    return expr


def base_globals() -> dict:
    """The names every generated ``forward`` runs with: ``torch`` (and ``ember``) bound to
    ember, ``operator``, ``builtins``, and what values print as (``inf``, ``device(...)``)."""
    ember = ember_namespace()
    return {"torch": ember, "ember": ember, "operator": operator, "builtins": builtins,
            "inf": float("inf"), "nan": float("nan"), "NoneType": type(None),
            "device": ember.device}


class _CodeGen:
    """Writes a graph as ``def forward(self, ...)`` source, freeing each value after its
    last use (``;  x = None``) as torch.fx's generated code does."""

    def __init__(self, graph: Graph, root_module: str, verbose: bool = False) -> None:
        self.graph = graph
        self.verbose = verbose
        self.root_module = root_module
        self.globals: dict = base_globals()
        self.namespace = _Namespace()
        self.wrapped: dict = {}  # global names of wrap()'s functions, re-wrapped by the code
        for name in self.globals:
            self.namespace._used.add(name)

    def _global_for(self, obj: Any) -> str:
        qualified = _qualified_name(obj)
        root = qualified.split(".")[0]
        if root == "torch":
            return qualified
        if root == "builtins":
            self.globals[obj.__name__] = obj
            return obj.__name__
        if root == "operator":  # torch.fx names these by their C module: _operator_abs
            qualified = "_" + qualified
        name = self.namespace.create_name(qualified, obj)
        self.globals[name] = obj
        return name

    def _repr(self, arg: Any) -> str:
        if isinstance(arg, Node):
            return arg.name
        if isinstance(arg, tuple) and hasattr(arg, "_fields"):
            qualified = self._global_for(type(arg))
            return f"{qualified}({', '.join(self._repr(a) for a in arg)})"
        if isinstance(arg, tuple):
            items = ", ".join(self._repr(a) for a in arg)
            return f"({items},)" if len(arg) == 1 else f"({items})"
        if isinstance(arg, list):
            return "[" + ", ".join(self._repr(a) for a in arg) + "]"
        if isinstance(arg, dict):
            return "{" + ", ".join(f"{self._repr(k)}: {self._repr(v)}"
                                   for k, v in arg.items()) + "}"
        if isinstance(arg, slice):
            return f"slice({self._repr(arg.start)}, {self._repr(arg.stop)}, " \
                   f"{self._repr(arg.step)})"
        if isinstance(arg, type) or callable(arg) and not hasattr(arg, "dtype"):
            return self._global_for(arg)
        return repr(arg)

    def _args(self, args: tuple, kwargs: dict) -> str:
        parts = [self._repr(a) for a in args]
        parts += [f"{k} = {self._repr(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def _line(self, node: Node) -> str:
        root = self.root_module
        if node.op == "call_method":
            return f"{node.name} = {_format_target(self._repr(node.args[0]), node.target)}(" \
                   f"{self._args(node.args[1:], node.kwargs)})"
        if node.op == "call_function":
            name = OPERATOR_FUNCTIONS.get(node.target)
            if name is not None and not node.kwargs and \
                    len(node.args) == MAGIC_METHODS[name].count("{}"):
                return f"{node.name} = " + MAGIC_METHODS[name].format(
                    *(self._repr(a) for a in node.args))
            if node.target is builtins.getattr and len(node.args) == 2 and \
                    isinstance(node.args[1], str) and node.args[1].isidentifier():
                return f"{node.name} = {_format_target(self._repr(node.args[0]), node.args[1])}"
            global_name = self._global_for(node.target)
            if node.meta.get("is_wrapped", False):
                self.wrapped.setdefault(global_name)
            return f"{node.name} = {global_name}({self._args(node.args, node.kwargs)})"
        if node.op == "call_module":
            return f"{node.name} = {_format_target(root, node.target)}(" \
                   f"{self._args(node.args, node.kwargs)})"
        if node.op == "get_attr":
            return f"{node.name} = {_format_target(root, node.target)}"
        if node.op == "output":
            return f"return {self._repr(node.args[0])}"
        raise NotImplementedError(f"node: {node.op} {node.target}")

    def generate(self) -> PythonCode:
        nodes = list(self.graph.nodes)
        for node in nodes:
            self.namespace._used.add(node.name)
        last_use: dict = {}
        for node in reversed(nodes):
            for used in node._input_nodes:
                last_use.setdefault(used, node)
        frees: dict = {}
        for used, user in last_use.items():
            frees.setdefault(user, []).append(used)
        params, body, emitted = [], [], []
        for node in nodes:
            if node.op == "placeholder":
                target = node.target
                plain = target.lstrip("*")
                params.append(target + (f" = {self._repr(node.args[0])}" if node.args else ""))
                if plain != node.name:
                    body.append(f"{node.name} = {plain}")
                continue
            line = self._line(node)
            if self.verbose and node.op != "output" and not any(
                    n.op not in ("placeholder", "output") for n in emitted):
                # ember.fx records no stack traces: torch.fx says so once
                body.append("# No stacktrace found for following nodes")
            emitted.append(node)
            if node.op != "output":
                freed = list(frees.get(node, []))
                if not node.users:
                    freed.append(node)
                if freed:
                    line += ";  " + " = ".join(n.name for n in freed) + " = None"
            body.append(line)
        if not any(n.op == "output" for n in nodes):
            body.append("pass")
        params_src = ", ".join([self.root_module] + params)
        # as torch.fx's code: the wrapped functions are registered again when it runs
        wrap_stmts = "\n".join(f'torch.fx._symbolic_trace.wrap("{name}")'
                                for name in self.wrapped)
        src = f"\n{wrap_stmts}\n\ndef forward({params_src}):\n" + "".join(
            f"    {line}\n" for line in body) + "    "
        return PythonCode(src, self.globals)
