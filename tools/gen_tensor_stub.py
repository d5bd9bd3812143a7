"""Write the type stub of ember's Tensor module (``<module>.pyi`` next to the module that
defines ``Tensor``) so that editors and type checkers see Tensor's methods, which ember binds
at import time.

    python tools/gen_tensor_stub.py           # (re)write the stub
    python tools/gen_tensor_stub.py --check   # exit 1 when the committed stub is out of date

Where the types come from:

* declared ops (``ember._registry.DECLARED``): the annotations of the function each
  declaration names as its signature, first parameter (``input``/``self``) dropped; an
  in-place form ``x.op_`` has the method's parameters and returns Tensor;
* the operators, ``T``/``mT``/``H``/``mH``: ``OPERATORS`` below, by kind;
* the class's own members (``size``, ``backward``, ``grad``, ...), which the class leaves
  unannotated: ``MEMBERS`` below, each checked against the member's real signature, so a
  changed signature fails here instead of going stale.

Names that are also Tensor members (``int``, ``float``, ``bool``, ``type``, ``dtype``,
``device``) would resolve to those members inside the class body, so the stub imports them
as ``_int``, ``_dtype``, ... as PyTorch's stubs do.
"""
import argparse
import ast
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import ember  # noqa: E402
from ember import _tensor_methods  # noqa: E402
from ember._registry import DECLARED  # noqa: E402

Tensor, Size = ember.Tensor, ember.Size

#: where each name an annotation may use comes from ({name: (module, attribute)});
#: builtins need no import unless a Tensor member shadows them
IMPORTS = {
    "Any": ("typing", "Any"), "Callable": ("typing", "Callable"),
    "Iterator": ("typing", "Iterator"), "Sequence": ("typing", "Sequence"),
    "Number": ("ember._typing", "Number"), "dtype": ("ember.backend.dtypes", "dtype"),
    "device": ("ember.device", "device"), "np": ("numpy", None),
    "Node": ("ember.autograd.graph", "Node"),
    "RemovableHandle": ("ember.autograd.graph", "RemovableHandle"),
    "UntypedStorage": ("ember._ops.storage", "UntypedStorage"),
    "TypedStorage": ("ember._ops.storage", "TypedStorage"),
}
BUILTINS = {"int", "float", "bool", "complex", "str", "tuple", "list", "dict", "type", "object",
            "None"}

#: the class's own members: a property's type, or a method's signature as a stub writes it
MEMBERS = {
    "Size": {
        "__repr__": "(self) -> str",
        "numel": "(self) -> int",
    },
    "Tensor": {
        "__init__": "(self, *args: Any, dtype: dtype | None = None, "
                    "device: device | str | None = None) -> None",
        "dtype": "dtype",
        "shape": "Size",
        "size": "(self, dim: int | None = None) -> Size | int",
        "dim": "(self) -> int",
        "ndim": "int",
        "ndimension": "(self) -> int",
        "nelement": "(self) -> int",
        "numel": "(self) -> int",
        "element_size": "(self) -> int",
        "stride": "(self, dim: int | None = None) -> tuple[int, ...] | int",
        "storage_offset": "(self) -> int",
        "data_ptr": "(self) -> int",
        "is_contiguous": "(self, memory_format: Any = None) -> bool",
        "is_floating_point": "(self) -> bool",
        "is_complex": "(self) -> bool",
        "device": "device",
        "is_cuda": "bool",
        "is_meta": "bool",
        "is_cpu": "bool",
        "layout": "str",
        "is_leaf": "bool",
        "is_sparse": "bool",
        "is_sparse_csr": "bool",
        # quantized tensors' accessors (a dense tensor refuses all but dequantize)
        **dict.fromkeys(("int_repr", "dequantize", "q_per_channel_scales",
                         "q_per_channel_zero_points"), "(self) -> Tensor"),
        "q_scale": "(self) -> float",
        **dict.fromkeys(("q_zero_point", "q_per_channel_axis"), "(self) -> int"),
        "qscheme": "(self) -> Any",
        **dict.fromkeys(("is_xpu", "is_mps", "is_ipu", "is_xla", "is_mtia", "is_maia",
                         "is_vulkan", "is_mkldnn", "is_quantized", "is_nested"), "bool"),
        "volatile": "bool",
        "requires_grad": "bool",
        "requires_grad_": "(self, requires_grad: bool = True) -> Tensor",
        "grad_fn": "Node | None",
        "output_nr": "int",
        "grad": "Tensor | None",
        "retains_grad": "bool",
        "data": "Tensor",
        "detach": "(self) -> Tensor",
        "detach_": "(self) -> Tensor",
        "retain_grad": "(self) -> None",
        "register_hook": "(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle",
        "register_post_accumulate_grad_hook": "(self, hook: Callable[[Tensor], None]) -> "
                                              "RemovableHandle",
        "backward": "(self, gradient: Tensor | None = None, retain_graph: bool | None = None, "
                    "create_graph: bool = False, "
                    "inputs: Tensor | Sequence[Tensor] | None = None) -> None",
        "numpy": "(self, *, force: bool = False) -> np.ndarray",
        "__array__": "(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray",
        "__dlpack__": "(self, *, stream: Any = None, max_version: tuple[int, int] | None = "
                      "None, dl_device: tuple[int, int] | None = None, copy: bool | None = "
                      "None) -> Any",
        "__dlpack_device__": "(self) -> tuple[int, int]",
        "tolist": "(self) -> Any",
        "item": "(self) -> Number",
        "__len__": "(self) -> int",
        "__iter__": "(self) -> Iterator[Tensor]",
        "__bool__": "(self) -> bool",
        "__float__": "(self) -> float",
        "__int__": "(self) -> int",
        "__index__": "(self) -> int",
        "__hash__": "(self) -> int",
        "__repr__": "(self, *, tensor_contents: Any = None) -> str",
        "__format__": "(self, format_spec: str) -> str",
        "__complex__": "(self) -> complex",
        "__deepcopy__": "(self, memo: dict) -> Tensor",
        "__torch_dispatch__": "(cls, func: Any, types: tuple, args: tuple = (), "
                              "kwargs: dict | None = None) -> Any",
        "as_subclass": "(self, cls: type) -> Tensor",
        "__torch_function__": "(cls, func: Any, types: Any, args: Any = (), "
                              "kwargs: Any = None) -> Any",
    },
}
#: class attributes that are no API (Python's machinery, pickling, NumPy interop flags)
SKIPPED = {"__module__", "__doc__", "__slots__", "__dict__", "__weakref__",
           "__array_priority__", "__reduce_ex__", "__init_subclass__", "_repr_as_tensor"}

_BINARY = "(self, other: Tensor | Number) -> Tensor"
OPERATORS = {  # signature by kind; every operator _tensor_methods binds must be here
    "__eq__": "(self, other: Any) -> Tensor",  # type: ignore[override] is added below
    "__ne__": "(self, other: Any) -> Tensor",
    "__matmul__": "(self, other: Tensor) -> Tensor",
    "__rmatmul__": "(self, other: Tensor) -> Tensor",
    "__neg__": "(self) -> Tensor", "__pos__": "(self) -> Tensor",
    "__abs__": "(self) -> Tensor", "__invert__": "(self) -> Tensor",
    "__getitem__": "(self, index: Any) -> Tensor",
    "__setitem__": "(self, index: Any, value: Tensor | Number) -> None",
}
for _dunder in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
                "lshift", "rshift"):
    for _form in ("__{}__", "__r{}__", "__i{}__"):
        OPERATORS.setdefault(_form.format(_dunder), _BINARY)
for _dunder in ("lt", "le", "gt", "ge"):
    OPERATORS[f"__{_dunder}__"] = _BINARY
OVERRIDES_OBJECT = {"__eq__", "__ne__"}  # return Tensor, not bool, as in PyTorch's stubs


class StubError(Exception):
    """The stub cannot be written: a declaration or member lacks types, or a type is stale."""


# ---- signatures -----------------------------------------------------------------------------
def _literal(value):
    """A default as the stub writes it: literals as such, anything else as ``...``."""
    simple = (type(None), bool, int, float, str)
    if isinstance(value, simple) or (isinstance(value, tuple) and
                                     all(isinstance(v, simple) for v in value)):
        return repr(value)
    return "..."


class Signature:
    """Parameters as (name, kind, annotation, default text or None) plus the return type."""

    def __init__(self, params, returns):
        self.params, self.returns = params, returns

    @classmethod
    def of(cls, fn, where):
        """From a function's own annotations; ``where`` names it in errors."""
        params = []
        sig = inspect.signature(fn)
        for p in list(sig.parameters.values())[1:]:  # the first is self (or input)
            if p.name.startswith("_") and p.default is not p.empty:
                continue  # private knobs (softmax's _stacklevel) are no API
            if p.annotation is p.empty:
                raise StubError(f"{where}: parameter {p.name!r} has no annotation")
            default = None if p.default is p.empty else _literal(p.default)
            params.append((p.name, p.kind, p.annotation, default))
        if sig.return_annotation is sig.empty:
            raise StubError(f"{where}: no return annotation")
        return cls(params, sig.return_annotation)

    @classmethod
    def parse(cls, text, real=None, where=""):
        """From stub text ``(self, ...) -> T``, checked against the callable ``real``
        (parameter names, kinds and defaults) when given."""
        tree = ast.parse(f"def _{text}: ...").body[0]
        a = tree.args
        kinds = ([(x, inspect.Parameter.POSITIONAL_OR_KEYWORD) for x in a.args]
                 + ([(a.vararg, inspect.Parameter.VAR_POSITIONAL)] if a.vararg else [])
                 + [(x, inspect.Parameter.KEYWORD_ONLY) for x in a.kwonlyargs]
                 + ([(a.kwarg, inspect.Parameter.VAR_KEYWORD)] if a.kwarg else []))
        defaults = dict(zip([x.arg for x in a.args][len(a.args) - len(a.defaults):],
                            a.defaults))
        defaults.update({x.arg: d for x, d in zip(a.kwonlyargs, a.kw_defaults) if d})
        parsed = [(x.arg, kind, ast.unparse(x.annotation) if x.annotation else None,
                   ast.unparse(defaults[x.arg]) if x.arg in defaults else None)
                  for x, kind in kinds]
        if real is not None and [(n, k, d) for n, k, _, d in parsed] != [
                (p.name, p.kind, None if p.default is p.empty else _literal(p.default))
                for p in inspect.signature(real).parameters.values()]:
            raise StubError(f"{where} is now {inspect.signature(real)}: update its types in "
                            f"tools/gen_tensor_stub.py")
        if any(ann is None for _, _, ann, _ in parsed[1:]) or tree.returns is None:
            raise StubError(f"{where}: every parameter and the return need a type")
        return cls(parsed[1:], ast.unparse(tree.returns))

    def render(self, name, rename, returns=None):
        out, star_done = ["self"], False
        for pname, kind, ann, default in self.params:
            if kind is inspect.Parameter.KEYWORD_ONLY and not star_done:
                out.append("*")
                star_done = True
            prefix = {inspect.Parameter.VAR_POSITIONAL: "*",
                      inspect.Parameter.VAR_KEYWORD: "**"}.get(kind, "")
            star_done = star_done or kind is inspect.Parameter.VAR_POSITIONAL
            text = f"{prefix}{pname}: {rename(ann)}"
            out.append(text + (f" = {default}" if default is not None else ""))
        return f"def {name}({', '.join(out)}) -> {rename(returns or self.returns)}: ..."


# ---- names in annotations -------------------------------------------------------------------
class Names:
    """Rewrites annotations so every name resolves in the stub; collects the imports."""

    def __init__(self, shadowed):
        self.shadowed = shadowed  # Tensor members that hide a type's name in the class body
        self.used = set()

    def __call__(self, annotation):
        tree = ast.parse(annotation, mode="eval")
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                node.id = self._resolve(node.id, annotation)
        return ast.unparse(tree)

    def _resolve(self, name, annotation):
        if name in ("Tensor", "Size"):
            return name
        if name not in IMPORTS and name not in BUILTINS:
            raise StubError(f"annotation {annotation!r}: add {name!r} to IMPORTS in "
                            "tools/gen_tensor_stub.py")
        if name in self.shadowed:
            self.used.add(name)
            return "_" + name
        if name in IMPORTS:
            self.used.add(name)
        return name

    def imports(self):
        """The stub's import lines, one per module."""
        by_module, plain = {}, set()
        for name in self.used:
            module, attr = IMPORTS.get(name, ("builtins", name))
            alias = f" as _{name}" if name in self.shadowed else ""
            if attr is None:
                plain.add(f"import {module} as {name}")
            else:
                by_module.setdefault(module, []).append(attr + alias)
        return sorted(plain) + [f"from {module} import {', '.join(sorted(attrs))}"
                                for module, attrs in sorted(by_module.items())]


# ---- the stub -------------------------------------------------------------------------------
def _bound_names():
    """What ``_tensor_methods`` binds onto Tensor (the rest of its members are its own)."""
    bound = set(_tensor_methods.OPERATORS) | set(_tensor_methods.INPLACE_OPERATORS)
    bound |= set(_tensor_methods.PROPERTIES)
    for d in DECLARED.values():
        if d.method is not None:
            bound.add(d.name)
        if d.inplace:
            bound.add(d.name + "_")
    return bound


def _member_lines(cls, bound, names, members):
    """The stub lines of a class's own public members (not ``bound`` onto it), from
    ``members``."""
    lines = []
    own = [n for n in vars(cls) if n not in bound and n not in SKIPPED
           and not (n.startswith("_") and not n.endswith("__"))]
    missing = [n for n in own if n not in members]
    stale = [n for n in members if n not in own]
    if missing or stale:
        raise StubError(f"{cls.__name__}: give types in tools/gen_tensor_stub.py MEMBERS to "
                        f"{missing}; drop {stale}")
    for name in own:
        value, where = vars(cls)[name], f"{cls.__name__}.{name}"
        if isinstance(value, property):
            lines += ["@property", f"def {name}(self) -> {names(members[name])}: ..."]
            if value.fset is not None:
                lines += [f"@{name}.setter",
                          f"def {name}(self, value: {names(members[name])}) -> None: ..."]
        elif isinstance(value, classmethod):  # first parameter rendered as self: still cls
            lines += ["@classmethod",
                      Signature.parse(members[name], value.__func__, where).render(name, names)]
        else:
            lines.append(Signature.parse(members[name], value, where).render(name, names))
    return lines


def _declared_lines(names):
    lines = []
    for d in DECLARED.values():
        if d.method is None:
            continue
        sig = Signature.of(d.signature, f"declaration of {d.name!r}")
        lines.append(sig.render(d.name, names))
        if d.inplace:
            lines.append(sig.render(d.name + "_", names, returns="Tensor"))
    return lines


def _operator_lines(names):
    lines = []
    bound = list(_tensor_methods.OPERATORS) + list(_tensor_methods.INPLACE_OPERATORS)
    missing = [n for n in bound if n not in OPERATORS]
    if missing:
        raise StubError(f"add the operators {missing} to OPERATORS in tools/gen_tensor_stub.py")
    for name in bound:
        line = Signature.parse(OPERATORS[name]).render(name, names)
        lines.append(line + ("  # type: ignore[override]" if name in OVERRIDES_OBJECT else ""))
    for name in _tensor_methods.PROPERTIES:
        lines += ["@property", f"def {name}(self) -> Tensor: ..."]
    return lines


def render():
    """The stub's text."""
    names = Names(shadowed={n for n in dir(Tensor) if n in IMPORTS or n in BUILTINS})
    names("Any")  # the module's __getattr__ below
    bound = _bound_names()
    size_lines = _member_lines(Size, bound, names, MEMBERS["Size"])
    tensor_lines = (_member_lines(Tensor, bound, names, MEMBERS["Tensor"])
                    + _declared_lines(names) + _operator_lines(names))
    indent = lambda lines: ["    " + line for line in lines]  # noqa: E731
    module = Tensor.__module__
    out = ([f"# Type stub of {module}, written by tools/gen_tensor_stub.py from ember's op",
            "# declarations (ember/_registry.py) and the Tensor class. Do not edit: rerun it.",
            f'"""Types of {module}: Tensor and Size."""']
           + names.imports()
           + ["", "", "def __getattr__(name: str) -> Any: ...  # the module's private helpers",
              "", "", "class Size(tuple[int, ...]):"] + indent(size_lines)
           + ["", "", "class Tensor:"] + indent(tensor_lines))
    return "\n".join(out) + "\n"


def stub_path():
    return Path(inspect.getfile(Tensor)).with_suffix(".pyi")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if the stub on disk differs from a fresh one")
    args = parser.parse_args(argv)
    text, path = render(), stub_path()
    if args.check:
        if not path.exists() or path.read_text() != text:
            print(f"{path.relative_to(ROOT)} is out of date: run python tools/gen_tensor_stub.py")
            return 1
        return 0
    path.write_text(text)
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
