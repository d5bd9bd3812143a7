"""ember's modules import each other in one direction: the layers of docs/architecture.md.

Every module under ember/ is parsed (not imported); its imports of ember modules, relative
or absolute, are the edges of a graph. The test fails, naming the import, when a module
imports one of a higher layer or when the graph has a cycle, and when a function imports an
ember module unless ALLOWED_IN_FUNCTIONS lists it.

Importing ``ember.a.b`` also runs ``ember/a/__init__.py``, so such an import counts as an
edge to the package ``ember.a`` too (unless the importer is inside that package, which is
then already being imported).
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "ember"  # read, not imported: a cycle
# that breaks ``import ember`` is still reported here by name

# Lowest first: a module may import its own layer and the ones before it. An entry is a
# module, or a package and everything in it ("ember" itself: only ember/__init__.py); the
# longest entry that matches a module decides its layer.
LAYERS = [
    ("backend", ["ember.backend", "ember.device", "ember._typing", "ember.accelerator",
                 "ember.backends", "ember._runtime_switches", "ember._layouts"]),
    ("tensor", ["ember._tensor", "ember._tensor_repr", "ember.random", "ember._creation",
                "ember.return_types", "ember._checks", "ember._torch_function",
                "ember._autocast", "ember._C"]),
    ("autograd", ["ember.autograd"]),
    ("ops", ["ember._ops"]),
    ("functional API and methods", ["ember._registry", "ember._functions", "ember._tensor_methods",
                                    "ember._sparse", "ember._nested", "ember._quantized",
                                    "ember.linalg", "ember.ops.aten"]),
    # collectives on tensors and DDP's gradient reducer (hooks on the autograd engine),
    # beneath nn.parallel.DistributedDataParallel
    ("distributed", ["ember.distributed"]),
    ("nn", ["ember.nn"]),
    ("libraries", ["ember.optim", "ember.utils", "ember.serialization", "ember.amp",
                   "ember.cuda", "ember.cpu",
                   "ember.distributions", "ember.onnx", "ember._functorch",
                   "ember.func", "ember.autograd.functional", "ember.library",
                   "ember.ops", "ember.overrides", "ember.special", "ember.testing", "ember.fft",
                   "ember.compiler", "ember.multiprocessing", "ember.hub",
                   "ember.jit", "ember.profiler", "ember.autograd.profiler",
                   "ember.sparse", "ember.quasirandom", "ember.signal", "ember.masked",
                   "ember.fx", "ember.ao", "ember.quantization", "ember.nested"]),
    ("package", ["ember"]),  # ember/__init__.py: the public namespace, made of all the above
    ("examples", ["ember.examples"]),
    ("entry points", ["ember.as_torch"]),  # resolves `import torch` to the package's modules
]

# Imports of ember modules inside functions, each with why it can't be at the top.
ALLOWED_IN_FUNCTIONS = {
    # collect_env must report even when cpp_extension (compilers, pybind11) can't be imported
    ("ember.utils.collect_env", "ember.utils.cpp_extension"),
    # ember.__version__: the package imports utils, so utils reads it when called
    ("ember.utils.collect_env", "ember"),
    ("ember.utils.cpp_extension", "ember"),
    # get_overridable_functions lists the public namespace, which imports ember.overrides
    ("ember.overrides", "ember"),
    # scatter(reduce='multiply') is scatter_reduce's product, whose op builds on indexing
    ("ember._ops.indexing", "ember._ops.scatter_family"),
    # nn.utils.stateless.functional_call (deprecated) delegates to ember.func's, a later layer
    ("ember.nn.utils.stateless", "ember._functorch.functional_call"),
    # fx names ember's public functions (torch.relu) and binds the namespace in generated code
    ("ember.fx.node", "ember"),
    # selective checkpointing names ember.ops.aten overloads; ember.ops imports ember.utils,
    # whose __init__ imports checkpoint: its names load on first use (a module __getattr__)
    ("ember.utils.checkpoint", "ember.utils._selective_checkpoint"),
}


def _module_name(path):
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules():
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


MODULES = _modules()
#: C extension modules (ember/**/_name.c): leaves that import no ember module
COMPILED = {_module_name(p) for p in ROOT.rglob("*.c")}


def _targets(module, is_package, node):
    """The ember modules an import statement names (``from a import b``: the module
    ``a.b`` where there is one, else ``a``)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".")
            base = base[:len(base) - node.level + (1 if is_package else 0)]
            base = ".".join(base + ([node.module] if node.module else []))
        else:
            base = node.module
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES.keys() | COMPILED else base
                 for a in node.names]
    found = []
    for name in names:
        if name in COMPILED:
            continue
        while name not in MODULES and "." in name:
            name = name.rsplit(".", 1)[0]
        if name in MODULES:
            found.append(name)
    return found


def _with_packages(module, target):
    """``target`` and the packages above it that importing it runs, bar those holding
    ``module`` (already running when ``module`` is)."""
    parts = target.split(".")
    parents = [".".join(parts[:i]) for i in range(1, len(parts))]
    implied = [p for p in parents if p != module and not module.startswith(p + ".")]
    return implied + ([target] if target != module else [])


def _imports():
    """(module -> {imported module: line}) at module level, and [(module, target, line)]
    of imports inside functions."""
    top, in_functions = {}, []
    for module, path in MODULES.items():
        is_package = path.name == "__init__.py"
        edges = top.setdefault(module, {})

        def visit(node, in_function):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.Import, ast.ImportFrom)):
                    for target in _targets(module, is_package, child):
                        if in_function:
                            in_functions.append((module, target, child.lineno))
                        else:
                            for name in _with_packages(module, target):
                                edges.setdefault(name, child.lineno)
                visit(child, in_function or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
        visit(ast.parse(path.read_text(), str(path)), False)
    return top, in_functions


TOP, IN_FUNCTIONS = _imports()


def _layer(module):
    best = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or (prefix != "ember" and module.startswith(prefix + ".")):
                if best is None or len(prefix) > best[0]:
                    best = (len(prefix), index)
    assert best is not None, f"{module} is in no layer: add it to LAYERS"
    return best[1]


def test_every_module_has_a_layer():
    for module in MODULES:
        _layer(module)


def test_no_module_imports_a_higher_layer():
    wrong = []
    for module, edges in TOP.items():
        for target, line in edges.items():
            if _layer(target) > _layer(module):
                wrong.append(f"{MODULES[module].relative_to(ROOT.parent)}:{line} ({module}, "
                             f"{LAYERS[_layer(module)][0]}) imports {target} "
                             f"({LAYERS[_layer(target)][0]})")
    assert not wrong, "imports of a higher layer:\n" + "\n".join(wrong)


def _find_cycle(graph):
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if start in state:
            continue
        path, stack = [start], [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_imports_between_modules_have_no_cycle():
    cycle = _find_cycle({m: set(edges) for m, edges in TOP.items()})
    assert cycle is None, "import cycle:\n" + "\n".join(
        f"{MODULES[a].relative_to(ROOT.parent)}:{TOP[a][b]} {a} imports {b}"
        for a, b in zip(cycle, cycle[1:]))


def test_imports_inside_functions_are_listed():
    unlisted = [f"{MODULES[m].relative_to(ROOT.parent)}:{line} imports {t}"
                for m, t, line in IN_FUNCTIONS if (m, t) not in ALLOWED_IN_FUNCTIONS]
    assert not unlisted, ("ember modules imported inside functions (import them at the top, "
                          "or list them in ALLOWED_IN_FUNCTIONS with the reason):\n"
                          + "\n".join(unlisted))


def test_allow_list_has_no_stale_entries():
    used = {(m, t) for m, t, _ in IN_FUNCTIONS}
    assert ALLOWED_IN_FUNCTIONS <= used, f"no longer needed: {ALLOWED_IN_FUNCTIONS - used}"


def test_the_checks_see_a_cycle_and_a_higher_layer():
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None
    assert _layer("ember._tensor") < _layer("ember.autograd.graph") < _layer("ember._ops.shape")
    assert _layer("ember.nn") < _layer("ember") < _layer("ember.examples.digits")
    assert _targets("ember.autograd.function", False,
                    ast.parse("from .._tensor import Tensor").body[0]) == ["ember._tensor"]
    assert _with_packages("ember._ops.shape", "ember.autograd.function") == [
        "ember.autograd", "ember.autograd.function"]
