"""``ember.fx.GraphModule``: an nn.Module whose ``forward`` is generated from a Graph.

It holds the submodules, parameters and buffers its graph's ``call_module``/``get_attr``
nodes name (the same objects as the root's, under the same dotted paths), and rewrites
``forward`` from the graph on ``recompile()`` (setting ``gm.graph`` recompiles too). Each
GraphModule has a class of its own, so generated methods of one do not leak to another.

>>> import ember
>>> from ember.fx import symbolic_trace
>>> gm = symbolic_trace(ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU()))
>>> print(gm.code.strip())
def forward(self, input):
    input_1 = input
    _0 = getattr(self, "0")(input_1);  input_1 = None
    _1 = getattr(self, "1")(_0);  _0 = None
    return _1
"""
from __future__ import annotations

import builtins
import copy
import itertools
import linecache
from typing import Any

from .. import nn
from .._tensor import Tensor
from .graph import Graph, PythonCode, base_globals

_SOURCE_IDS = itertools.count()
#: how a pickled GraphModule is rebuilt (re-traced): set by ember.fx's tracer module, which
#: imports this one
_REBUILD: list = [None]


def _forward_from_src(src: str, globals_: dict) -> Any:
    # registered with linecache: tracebacks and inspect.getsource show the generated code
    key = f"<eval_with_key>.{next(_SOURCE_IDS)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    namespace = dict(globals_)
    exec(compile(src, key, "exec"), namespace)
    return namespace["forward"]


def _copy_attr(from_module: Any, to_module: Any, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        source = getattr(from_module, item)
        dest = getattr(to_module, item, None)
        if source is dest:
            return  # the whole submodule is already installed
        if dest is None:
            dest = nn.Module()
            setattr(to_module, item, dest)
        from_module, to_module = source, dest
    original = getattr(from_module, field)
    if isinstance(original, Tensor) and not isinstance(original, nn.Parameter):
        to_module.register_buffer(field, original)
    else:
        setattr(to_module, field, original)


def _assign_attr(value: Any, to_module: Any, target: str) -> None:
    *prefix, field = target.split(".")
    for item in prefix:
        dest = getattr(to_module, item, None)
        if dest is None:
            dest = nn.Module()
            setattr(to_module, item, dest)
        to_module = dest
    if isinstance(value, Tensor) and not isinstance(value, nn.Parameter):
        to_module.register_buffer(field, value)
    else:
        setattr(to_module, field, value)


class _CodeOnlyModule(nn.Module):
    # a Module around a copied __dict__ (GraphModule's deepcopy rebuilds from it)
    def __init__(self, body: dict) -> None:
        super().__init__()
        self.__dict__ = body


class GraphModule(nn.Module):
    """A Module made of ``root``'s attributes that the graph uses and a ``forward``
    generated from ``graph``. ``root`` is a Module or a dict from qualified names to
    modules/tensors."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # a class per instance: recompile() sets forward on it
        base = next(t for t in cls.__mro__ if t.__name__ != "GraphModuleImpl")
        impl = type("GraphModuleImpl", (base,), {})
        return super().__new__(impl)

    def __init__(self, root: Any, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        type(self).__name__ = class_name
        if isinstance(root, nn.Module):
            if hasattr(root, "training"):
                self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.graph = graph
        self.meta: dict = {}

    @property
    def graph(self) -> Graph:
        """The graph; assigning one recompiles ``forward``."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The generated ``forward``'s source."""
        if not hasattr(self, "_code"):
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate ``forward`` from ``self.graph`` (after editing the graph)."""
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        type(self).forward = _forward_from_src(self._code, python_code.globals)
        return python_code

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The generated code as a class definition (printed, and returned)."""
        if include_stride or include_device or colored:
            raise NotImplementedError("print_readable: include_stride, include_device and "
                                      "colored are not supported by ember.fx")
        src = self._graph.python_code(root_module="self", verbose=True).src
        body = src.strip("\n").rstrip()
        indented = "\n".join(("    " + line) if line else line for line in body.splitlines())
        text = f"class {type(self).__name__}(torch.nn.Module):\n{indented}\n"
        if print_output:
            print(text)
        return text

    def __str__(self) -> str:
        return "\n".join([super().__str__(), self._code,
                          "# To see more debug info, please use "
                          "`graph_module.print_readable()`"])

    def __deepcopy__(self, memo: dict) -> GraphModule:
        body = copy.deepcopy(self.__dict__, memo)
        fake = _CodeOnlyModule(body)
        result = GraphModule(fake, fake.__dict__["_graph"])  # named GraphModule, as torch's
        memo[id(self)] = result
        result.meta = copy.deepcopy(getattr(self, "meta", {}), memo)
        return result

    def __reduce__(self) -> tuple:
        # pickled as its attributes and its code (as torch.fx does): unpickling runs the
        # code and traces it again, its submodules kept as leaves (named GraphModule)
        body = dict(self.__dict__)
        body.pop("_graph", None)
        python_code = self._graph.python_code(root_module="self")
        imports = []
        standard = base_globals()
        for name, obj in python_code.globals.items():
            if name in standard or getattr(builtins, name, None) is obj:
                continue
            imports.append((name, obj.__module__, obj.__qualname__))
        if _REBUILD[0] is None:
            raise RuntimeError("ember.fx's tracer is not loaded")
        return (_REBUILD[0], (body, imports))

    def __copy__(self) -> GraphModule:
        result = GraphModule(self, self.graph)
        result.meta = getattr(self, "meta", {})
        return result

    # ---- submodule edits ----------------------------------------------------------------
    def add_submodule(self, target: str, m: Any) -> bool:
        """Install ``m`` at the dotted path ``target`` (making empty Modules on the way);
        False when something that is no Module is in the way."""
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = nn.Module()
                setattr(mod, item, submod)
            if not isinstance(submod, nn.Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at ``target``; False when there is none."""
        atoms = target.split(".")
        path, target_submod = atoms[:-1], atoms[-1]
        mod = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, nn.Module):
                return False
        if not hasattr(mod, target_submod):
            return False
        if not isinstance(getattr(mod, target_submod), nn.Module):
            return False
        delattr(mod, target_submod)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Remove the submodules no ``call_module`` or ``get_attr`` node uses."""
        used: set = set()
        for node in self.graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = node.target.split(".")
                used.update(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
                if node.op == "call_module":
                    module = self.get_submodule(node.target)
                    used.update(f"{node.target}.{name}" for name, _ in module.named_modules()
                                if name)
        for name, _ in list(self.named_modules()):
            if name and name not in used:
                self.delete_submodule(name)
