"""``ember.fx.node``: one operation of an fx Graph (``Node``) and the helpers that walk the
nested arguments a node holds (``map_arg``, ``map_aggregate``).

A node's ``args``/``kwargs`` may nest tuples, lists, dicts and slices around other nodes;
setting them keeps each input's ``users`` up to date, so the graph's use-lists are always
right.

>>> from ember.fx import Graph
>>> g = Graph()
>>> x = g.placeholder("x")
>>> y = g.call_method("relu", (x,))
>>> list(x.users), y.all_input_nodes
([relu], [x])
"""
from __future__ import annotations

import builtins
import operator
import sys
import types
from typing import Any, Callable

from .immutable_collections import immutable_dict, immutable_list

#: the kinds of node, as in torch.fx
OPCODES = ("placeholder", "call_method", "call_module", "call_function", "get_attr",
           "output", "root")

# calls that change state: dead-code elimination keeps them even when nothing uses them
_SIDE_EFFECTFUL_NAMES = frozenset({"_assert", "_assert_is_none", "print", "setitem"})


def map_aggregate(a: Any, fn: Callable[[Any], Any]) -> Any:
    """Apply ``fn`` to every leaf of ``a`` (tuples, named tuples, lists, dicts, slices);
    lists and dicts come back immutable, as a Node keeps them.

    >>> map_aggregate((1, [2, {"k": 3}]), lambda v: v * 10)
    (10, [20, {'k': 30}])
    """
    if isinstance(a, tuple):
        mapped = tuple(map_aggregate(elem, fn) for elem in a)
        return mapped if not hasattr(a, "_fields") else type(a)(*mapped)
    if isinstance(a, list):
        return immutable_list(map_aggregate(elem, fn) for elem in a)
    if isinstance(a, dict):
        return immutable_dict((key, map_aggregate(value, fn)) for key, value in a.items())
    if isinstance(a, slice):
        return slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                     map_aggregate(a.step, fn))
    return fn(a)


def map_arg(a: Any, fn: Callable[[Node], Any]) -> Any:
    """Apply ``fn`` to every Node inside ``a``, leaving other values as they are."""
    return map_aggregate(a, lambda x: fn(x) if isinstance(x, Node) else x)


def ember_namespace() -> types.ModuleType:
    """The public ``ember`` module (the package layer, above ember.fx: imported on use; it is
    always loaded by then). Generated code binds it as ``torch``."""
    import ember
    return ember


def _public_namespaces():
    ember = ember_namespace()
    found = [("torch.nn.functional", ember.nn.functional), ("torch.linalg", ember.linalg)]
    # lazily imported namespaces count once loaded (their functions can't be used before)
    found += [(f"torch.{name}", sys.modules[f"ember.{name}"]) for name in ("special", "fft")
              if f"ember.{name}" in sys.modules]
    return tuple(found) + (("torch", ember),)


_PUBLIC_NAMES: dict = {}


def _qualified_name(func: Any) -> str:
    """The dotted name torch.fx prints for a call_function target: ``operator.add``,
    ``builtins.getattr``, ``torch.relu`` (ember's public functions are printed under
    PyTorch's module names, which the generated code binds to ember)."""
    if getattr(func, "__module__", None) in ("_operator", "operator"):
        return f"operator.{func.__name__}"
    if isinstance(func, types.BuiltinFunctionType) and getattr(builtins, func.__name__,
                                                               None) is func:
        return f"builtins.{func.__name__}"
    tensor_type = ember_namespace().Tensor
    if vars(tensor_type).get(getattr(func, "__name__", "")) is func:
        return f"torch.Tensor.{func.__name__}"
    if not _PUBLIC_NAMES:
        for prefix, namespace in reversed(_public_namespaces()):
            for name, value in list(vars(namespace).items()):
                if not name.startswith("_") and callable(value) and \
                        not isinstance(value, type):
                    _PUBLIC_NAMES[id(value)] = f"{prefix}.{name}"
    # the namespaces' own dicts: getattr would import ember's lazy submodules
    for prefix, namespace in _public_namespaces():
        # an alias (cat/concat) is printed under the function's own name
        if vars(namespace).get(getattr(func, "__name__", "")) is func:
            return f"{prefix}.{func.__name__}"
    name = _PUBLIC_NAMES.get(id(func))
    if name is not None:
        return name
    module = getattr(func, "__module__", None) or "__main__"
    return f"{module}.{getattr(func, '__qualname__', getattr(func, '__name__', repr(func)))}"


def _format_arg(arg: Any) -> str:
    # the form str(graph) shows: nodes as %name, strings bare (as torch.fx prints them)
    if isinstance(arg, list):
        return "[" + ", ".join(_format_arg(a) for a in arg) + "]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for a in arg)
        return f"({items},)" if len(arg) == 1 else f"({items})"
    if isinstance(arg, dict):
        return "{" + ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items()) + "}"
    if isinstance(arg, Node):
        return "%" + arg.name
    return str(arg)


class Node:
    """One operation in a Graph: ``op`` (its kind), ``target`` (what it calls or names),
    ``args``/``kwargs`` (its inputs, other nodes among them), ``name`` (its value's name in
    the generated code), ``users`` (the nodes that read it) and ``meta`` (free-form data
    passes attach, such as ShapeProp's ``tensor_meta``). Made by Graph's methods."""

    def __init__(self, graph: Any, name: str, op: str, target: Any, args: tuple,
                 kwargs: dict, return_type: Any = None) -> None:
        if op not in OPCODES:
            raise AssertionError(f"Unknown op {op}")
        if op == "call_function" and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op in ("placeholder", "call_method", "call_module", "get_attr") and \
                not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self._input_nodes: dict = {}
        self.users: dict = {}
        self.type = return_type
        self._prev = self
        self._next = self
        self._erased = False
        self.meta: dict = {}
        self._args: tuple = ()
        self._kwargs: dict = {}
        self._update_args_kwargs(args, kwargs)

    # ---- position in the graph's list ----------------------------------------------------
    @property
    def next(self) -> Node:
        """The node after this one (the graph's root sentinel after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The node before this one."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move ``x`` to just before this node."""
        if x is self:
            raise AssertionError("Cannot prepend self")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move ``x`` to just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        p, n = self._prev, self._next
        p._next, n._prev = n, p
        self._prev = self._next = self

    # ---- inputs ---------------------------------------------------------------------------
    @property
    def args(self) -> tuple:
        """The positional inputs; setting them updates the use-lists."""
        return self._args

    @args.setter
    def args(self, a: tuple) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict:
        """The keyword inputs; setting them updates the use-lists."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list:
        """The distinct nodes this one reads, in the order its arguments name them."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Any) -> None:
        """Set positional argument ``idx`` to ``arg``."""
        args = list(self.args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Any) -> None:
        """Set keyword argument ``key`` to ``arg``."""
        self.kwargs = {**self.kwargs, key: arg}

    def _update_args_kwargs(self, new_args: tuple, new_kwargs: dict) -> None:
        for old_use in self._input_nodes:
            old_use.users.pop(self, None)
        self._input_nodes = {}
        self._args = map_arg(tuple(new_args), self._note_input)
        self._kwargs = map_arg(new_kwargs, self._note_input)
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)

    def _note_input(self, n: Node) -> Node:
        self._input_nodes.setdefault(n)
        return n

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] | None = None,
                              *, propagate_meta: bool = False) -> list:
        """Make every user of this node read ``replace_with`` instead (those for which
        ``delete_user_cb`` is true); returns the users changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     ".meta keys")
            replace_with.meta.update(self.meta)
        to_process = [user for user in self.users
                      if delete_user_cb is None or delete_user_cb(user)]
        for user in to_process:
            user._replace_input(self, replace_with)
        return to_process

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Read ``new_input`` wherever this node reads ``old_input``."""
        self._replace_input(old_input, new_input)

    def _replace_input(self, old: Node, new: Node) -> None:
        def swap(n: Node) -> Node:
            return new if n is old else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # ---- properties -----------------------------------------------------------------------
    def is_impure(self) -> bool:
        """Whether dead-code elimination must keep this node although nothing uses it."""
        if self.op in ("placeholder", "output"):
            return True
        if self.op == "call_function":
            return getattr(self.target, "__name__", "") in _SIDE_EFFECTFUL_NAMES
        if self.op == "call_module":
            root = getattr(self.graph, "owning_module", None)
            if root is None:
                return False
            try:
                module = root.get_submodule(self.target)
            except AttributeError:
                return False
            return bool(getattr(module, "_is_impure", False))
        return False

    def format_node(self) -> str:
        """The node's line in ``str(graph)``."""
        if self.op == "placeholder":
            default = f"(default={self.args[0]})" if self.args else ""
            return f"%{self.name} : [num_users={len(self.users)}] = " \
                   f"placeholder[target={self.target}]{default}"
        if self.op == "get_attr":
            return f"%{self.name} : [num_users={len(self.users)}] = " \
                   f"get_attr[target={self.target}]"
        if self.op == "output":
            return f"return {self.args[0]}"
        target = _qualified_name(self.target) if self.op == "call_function" else self.target
        return (f"%{self.name} : [num_users={len(self.users)}] = {self.op}[target={target}]"
                f"(args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name

    # nodes are looked up by identity in use-lists and environments
    __hash__ = object.__hash__

    def __eq__(self, other: Any) -> bool:
        return self is other


#: Python's binary and unary operators as torch.fx records them (operator.<name>) and writes
#: them back in the generated code
REFLECTABLE_MAGIC_METHODS = {
    "add": "{} + {}", "sub": "{} - {}", "mul": "{} * {}", "floordiv": "{} // {}",
    "truediv": "{} / {}", "div": "{} / {}", "mod": "{} % {}", "pow": "{} ** {}",
    "lshift": "{} << {}", "rshift": "{} >> {}", "and_": "{} & {}", "or_": "{} | {}",
    "xor": "{} ^ {}", "getitem": "{}[{}]", "matmul": "{} @ {}",
}
MAGIC_METHODS = {
    "eq": "{} == {}", "ne": "{} != {}", "lt": "{} < {}", "gt": "{} > {}", "le": "{} <= {}",
    "ge": "{} >= {}", "pos": "+{}", "neg": "-{}", "invert": "~{}",
    **REFLECTABLE_MAGIC_METHODS,
}
# the operator functions whose calls codegen writes as expressions
OPERATOR_FUNCTIONS = {getattr(operator, name): name for name in MAGIC_METHODS
                      if hasattr(operator, name)}
