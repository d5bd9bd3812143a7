"""The type hints of ember's public API resolve, and no public signature is left without them.

Hints are strings (``from __future__ import annotations``) and names imported only for type
checkers (``if TYPE_CHECKING:``) do not exist at run time, so a misspelt hint would go
unnoticed until someone calls ``typing.get_type_hints``. This test calls it on every public
function, method and property of the modules below, with the module's ``TYPE_CHECKING``
imports run first.
"""
import ast
import functools
import importlib
import inspect
import typing

import pytest

ANNOTATED_MODULES = [
    "ember.nn.parameter",
    "ember.nn.modules.module",
    "ember.nn.modules.container",
    "ember.optim.optimizer",
    "ember.optim.sgd",
    "ember.optim.adam",
    "ember.optim.adagrad",
    "ember.optim.rmsprop",
    "ember.optim.lr_scheduler",
    "ember.utils.data.dataset",
    "ember.utils.data.sampler",
    "ember.utils.data.dataloader",
    "ember.utils.data._collate",
    "ember.utils.data._worker",
    "ember.utils.cpp_extension",
    "ember.utils.cpp_extension._setuptools",
    "ember.utils.ffi",
]

#: public classes a module leaves out of ``__all__`` (returned to users, not imported by them)
EXTRA_PUBLIC = {"ember.utils.ffi": ["FFIExtension"]}


@functools.lru_cache(maxsize=None)
def _type_checking_namespace(module):
    """The module's globals plus what its ``if TYPE_CHECKING:`` blocks import."""
    namespace = dict(vars(module))
    tree = ast.parse(inspect.getsource(module))
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING",
                                                                   "typing.TYPE_CHECKING"):
            block = ast.Module(body=node.body, type_ignores=[])
            exec(compile(block, module.__file__, "exec"), namespace)
    return namespace


def _public_names(module):
    names = getattr(module, "__all__", None)
    if names is None:
        names = [n for n in vars(module) if not n.startswith("_")]
    return list(names) + EXTRA_PUBLIC.get(module.__name__, [])


def _is_public(name):
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _functions(module, seen):
    """``(qualified name, function)`` for the module's public functions and the public
    methods and properties of its public classes (inherited ones from the modules above),
    skipping those in ``seen`` (ids)."""
    for name in _public_names(module):
        obj = getattr(module, name)
        if getattr(obj, "__module__", None) != module.__name__:
            continue  # re-exported from elsewhere
        if inspect.isfunction(obj):
            if id(obj) not in seen:
                seen.add(id(obj))
                yield name, obj
            continue
        if not inspect.isclass(obj):
            continue
        for klass in obj.__mro__:
            if klass.__module__ not in ANNOTATED_MODULES:
                continue
            for attr, value in vars(klass).items():
                if not _is_public(attr):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                if isinstance(value, property):
                    candidates = [(attr, value.fget), (attr + ".setter", value.fset)]
                else:
                    candidates = [(attr, value)]
                for label, fn in candidates:
                    if inspect.isfunction(fn) and id(fn) not in seen:
                        seen.add(id(fn))
                        yield f"{klass.__name__}.{label}", fn


def _cases():
    seen = set()
    for module_name in ANNOTATED_MODULES:
        module = importlib.import_module(module_name)
        for qualname, fn in _functions(module, seen):
            yield pytest.param(fn, id=f"{fn.__module__}:{qualname}")


CASES = list(_cases())


@pytest.mark.parametrize("fn", CASES)
def test_hints_resolve(fn):
    # the namespace of the module that defines fn (a class may inherit from another module)
    namespace = _type_checking_namespace(importlib.import_module(fn.__module__))
    typing.get_type_hints(fn, globalns=namespace)  # raises NameError/TypeError on a bad hint


@pytest.mark.parametrize("fn", CASES)
def test_every_parameter_and_return_annotated(fn):
    signature = inspect.signature(fn)
    params = list(signature.parameters.values())
    if params and params[0].name in ("self", "cls"):
        params = params[1:]
    missing = [p.name for p in params if p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    assert not missing, f"{fn.__qualname__}: no hint for {', '.join(missing)}"


def test_class_attribute_hints_resolve():
    for module_name in ANNOTATED_MODULES:
        module = importlib.import_module(module_name)
        namespace = _type_checking_namespace(module)
        for name in _public_names(module):
            obj = getattr(module, name)
            if inspect.isclass(obj) and obj.__module__ == module_name:
                own = vars(obj).get("__annotations__", {})
                holder = type("Holder", (), {"__annotations__": dict(own)})
                typing.get_type_hints(holder, globalns=namespace)


def test_cases_cover_the_api():
    """The walk above finds what it should (a broken walk would make the tests vacuous)."""
    names = {case.id for case in CASES}
    for expected in ["ember.nn.modules.module:Module.parameters",
                     "ember.nn.modules.container:_NumberedModules.append",
                     "ember.optim.optimizer:Optimizer.state_dict",
                     "ember.optim.lr_scheduler:ReduceLROnPlateau.step",
                     "ember.utils.data.dataloader:DataLoader.multiprocessing_context.setter",
                     "ember.utils.data.dataset:random_split",
                     "ember.utils.cpp_extension:load_inline",
                     "ember.utils.cpp_extension._setuptools:BuildExtension.with_options",
                     "ember.utils.ffi:create_extension",
                     "ember.utils.ffi:FFIExtension.__init__"]:
        assert expected in names
