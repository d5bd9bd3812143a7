"""``ember.jit.script`` and the objects it returns: wrappers that run the code eagerly.

ember has no TorchScript compiler. A scripted function or module keeps PyTorch's wrapper
types (``ScriptFunction``, ``RecursiveScriptModule``) and their bookkeeping
(``original_name``, parameters and ``state_dict`` shared with the original module), and
calling it runs the original Python code, so the numbers and gradients are the eager ones.
What only a compiler has (``.code``, ``.graph``, ``.save``) raises NotImplementedError.
"""
from __future__ import annotations

import copy
import enum
import threading
import warnings
from typing import Any, Callable

from .._tensor import Tensor
from ..autograd import grad_mode
from ..nn import Module

_DEPRECATED = "`torch.jit.{}` is deprecated. Please switch to `torch.compile` or `torch.export`."

_NO_IR = ("ember runs {what} eagerly and keeps no TorchScript IR, so `.{attr}` is not "
          "available; read the Python source of the original instead")
_NO_ARCHIVE = ("ember cannot write or read TorchScript archives (they hold compiled "
               "TorchScript code). Save the weights with ember.save(module.state_dict(), path) "
               "and load them into the Python module with load_state_dict(ember.load(path))")


class _TracingState(threading.local):
    def __init__(self) -> None:
        self.depth = 0


tracing_state = _TracingState()


def is_scripting() -> bool:
    """False: ember never compiles code with TorchScript (PyTorch answers True inside
    compiled TorchScript code).

    >>> import ember
    >>> ember.jit.is_scripting()
    False
    """
    return False


def is_tracing() -> bool:
    """True while ``ember.jit.trace`` runs the example inputs through the traced code.

    >>> import ember
    >>> ember.jit.is_tracing()
    False
    """
    return tracing_state.depth > 0


def _no_ir(what: str, attr: str) -> NotImplementedError:
    return NotImplementedError(_NO_IR.format(what=what, attr=attr))


class ScriptFunction:
    """What ``ember.jit.script`` and ``ember.jit.trace`` make of a function: calling it
    calls the function.

    >>> import ember
    >>> def double(x):
    ...     return x * 2
    >>> f = ember.jit.script(double)
    >>> f.name, f(ember.ones(2))
    ('double', tensor([2., 2.]))
    """
    __name__ = "ScriptFunction"  # what PyTorch's instances answer (their name is ``.name``)

    def __init__(self, fn: Callable, name: str | None = None) -> None:
        self._fn = fn
        self.name = name if name is not None else getattr(fn, "__name__", type(fn).__name__)
        self.qualified_name = "__torch__." + self.name
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fn(*args, **kwargs)

    @property
    def code(self) -> str:
        raise _no_ir("scripted functions", "code")

    @property
    def graph(self) -> Any:
        raise _no_ir("scripted functions", "graph")

    @property
    def inlined_graph(self) -> Any:
        raise _no_ir("scripted functions", "inlined_graph")

    @property
    def schema(self) -> Any:
        raise _no_ir("scripted functions", "schema")

    def graph_for(self, *args: Any, **kwargs: Any) -> Any:
        raise _no_ir("scripted functions", "graph_for")

    def save(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_NO_ARCHIVE)

    save_to_buffer = save

    def __repr__(self) -> str:
        return f"<ember.jit.ScriptFunction object at {hex(id(self))}>"


class ScriptModule(Module):
    """Base class of the modules ``ember.jit.script`` and ``ember.jit.trace`` return.

    Such a module wraps the original: its parameters, buffers and ``state_dict`` are the
    original's (the same tensors), its submodules are wrapped in turn, ``train()``/``eval()``
    reach the original, other attributes and methods are read from the original, and
    calling it runs the original's ``forward``.

    >>> import ember
    >>> lin = ember.nn.Linear(2, 1)
    >>> s = ember.jit.script(lin)
    >>> isinstance(s, ember.jit.ScriptModule), s.weight is lin.weight, s.original_name
    (True, True, 'Linear')
    """

    def __init__(self, original: Module | None = None) -> None:
        if original is None:  # a user subclass of ScriptModule: a plain module
            super().__init__()
            return
        d = self.__dict__
        d["_ember_original"] = original
        training = original.training
        super().__init__()
        object.__setattr__(original, "training", training)
        d["_parameters"] = original._parameters
        d["_buffers"] = original._buffers
        d["_non_persistent_buffers_set"] = original._non_persistent_buffers_set
        d["_modules"] = {name: (None if child is None else type(self)._wrap_child(child))
                         for name, child in original._modules.items()}

    @classmethod
    def _wrap_child(cls, child: Module) -> Module:
        return child if isinstance(child, ScriptModule) else cls(child)

    @property
    def training(self) -> bool:  # type: ignore[override]
        original = self.__dict__.get("_ember_original")
        if original is None:
            return self.__dict__.get("_ember_training", True)
        return original.training

    @training.setter
    def training(self, mode: bool) -> None:
        original = self.__dict__.get("_ember_original")
        if original is None:
            self.__dict__["_ember_training"] = mode
        else:
            object.__setattr__(original, "training", mode)

    @property
    def original_name(self) -> str:
        original = self.__dict__.get("_ember_original")
        return type(original if original is not None else self).__name__

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        original = self.__dict__.get("_ember_original")
        if original is None:
            return super().forward(*args, **kwargs)
        return original.forward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            original = self.__dict__.get("_ember_original")
            if original is None or name.startswith("__"):
                raise
            return getattr(original, name)

    def __setattr__(self, name: str, value: Any) -> None:
        original = self.__dict__.get("_ember_original")
        if (original is None or name == "training" or name in self.__dict__
                or isinstance(value, Module) or name in self._modules):
            return super().__setattr__(name, value)
        # parameters and buffers land in the registries the original shares; plain
        # attributes belong to the original, whose forward reads them
        if name in self._parameters or name in self._buffers or isinstance(value, Tensor):
            return super().__setattr__(name, value)
        setattr(original, name, value)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        original = self.__dict__.get("_ember_original")
        if original is None:
            return super()._save_to_state_dict(destination, prefix, keep_vars)
        return original._save_to_state_dict(destination, prefix, keep_vars)

    def _load_from_state_dict(self, state_dict: Any, prefix: str, *args: Any) -> None:
        original = self.__dict__.get("_ember_original")
        if original is None:
            return super()._load_from_state_dict(state_dict, prefix, *args)
        return original._load_from_state_dict(state_dict, prefix, *args)

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"

    @property
    def code(self) -> str:
        raise _no_ir("scripted modules", "code")

    @property
    def code_with_constants(self) -> Any:
        raise _no_ir("scripted modules", "code_with_constants")

    @property
    def graph(self) -> Any:
        raise _no_ir("scripted modules", "graph")

    @property
    def inlined_graph(self) -> Any:
        raise _no_ir("scripted modules", "inlined_graph")

    def save(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(_NO_ARCHIVE)

    save_to_buffer = save


class RecursiveScriptModule(ScriptModule):
    """What ``ember.jit.script`` makes of a module (see ``ScriptModule``).

    >>> import ember
    >>> ember.jit.script(ember.nn.ReLU())
    RecursiveScriptModule(original_name=ReLU)
    """

    def _get_name(self) -> str:
        return "RecursiveScriptModule"

    # A scripted container (Sequential, ModuleList, ModuleDict) indexes, iterates and
    # measures as the original does, handing out the wrapped submodules.
    def _original_container(self, what: str) -> Module:
        original = self.__dict__.get("_ember_original")
        if original is None or not hasattr(type(original), what):
            raise TypeError(f"'{type(self).__name__}' object does not support {what}")
        return original

    def _wrapped(self, item: Any) -> Any:
        if isinstance(item, Module):
            original = self.__dict__["_ember_original"]
            for name, child in original._modules.items():
                if child is item:
                    return self._modules[name]
        return item

    def __getitem__(self, idx: Any) -> Any:
        item = self._original_container("__getitem__")[idx]
        if isinstance(item, Module) and not isinstance(idx, (int, str)):
            return type(self)(item)  # a slice: a new container of the same submodules
        return self._wrapped(item)

    def __len__(self) -> int:
        return len(self._original_container("__len__"))

    def __bool__(self) -> bool:
        original = self.__dict__.get("_ember_original")
        return original is None or not hasattr(type(original), "__len__") or len(self) > 0

    def __iter__(self) -> Any:
        return (self._wrapped(item) for item in self._original_container("__iter__"))

    def __contains__(self, key: Any) -> bool:
        return key in self._original_container("__contains__")


class _FrozenModule(RecursiveScriptModule):
    """``ember.jit.freeze``'s result: a copy of the module whose weights are constants (no
    parameters, no buffers, an empty ``state_dict``), evaluated in eval mode."""

    def __init__(self, original: Module) -> None:
        constant = copy.deepcopy(original)
        constant.requires_grad_(False)
        self.__dict__["_ember_constant"] = constant
        self.__dict__["_ember_original_name"] = type(original).__name__
        Module.__init__(self)

    @property
    def training(self) -> bool:  # type: ignore[override]
        return False

    @training.setter
    def training(self, mode: bool) -> None:
        pass  # a frozen module runs in eval mode, whatever it is told

    @property
    def original_name(self) -> str:
        return self.__dict__["_ember_original_name"]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.__dict__["_ember_constant"].forward(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["_ember_constant"], name)


def _deprecated(name: str) -> None:
    # attributed to the library, as PyTorch's (no stacklevel): Python's default filters
    # then keep it quiet outside test runners, as they do for torch.jit.script there
    warnings.warn(_DEPRECATED.format(name), DeprecationWarning)


def _check_optimize(optimize: Any) -> None:
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=3)


def script(obj: Any, optimize: None = None, _frames_up: int = 0, _rcb: Any = None,
           example_inputs: Any = None) -> Any:
    """``obj`` (a function, a module or a class) as PyTorch's ``torch.jit.script`` returns
    it, running eagerly: a function becomes a ``ScriptFunction``, a module a
    ``RecursiveScriptModule`` sharing its parameters, a class stays the class.
    ``example_inputs`` only guides TorchScript's type inference, which ember needs none of.

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> net = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU())
    >>> scripted = ember.jit.script(net)
    >>> scripted
    RecursiveScriptModule(
      original_name=Sequential
      (0): RecursiveScriptModule(original_name=Linear)
      (1): RecursiveScriptModule(original_name=ReLU)
    )
    >>> bool((scripted(ember.ones(1, 2)) == net(ember.ones(1, 2))).all())
    True
    """
    _deprecated("script")
    _check_optimize(optimize)
    if isinstance(obj, (ScriptModule, ScriptFunction)):
        return obj
    if isinstance(obj, Module):
        return RecursiveScriptModule(obj)
    if isinstance(obj, type):
        return _script_class(obj)
    if isinstance(obj, (dict, list)):
        raise NotImplementedError("ember.jit.script: ember has no ScriptDict/ScriptList; use "
                                  "the Python dict or list itself")
    if not callable(obj):
        raise TypeError(f"{type(obj)} is a built-in class" if type(obj).__module__ ==
                        "builtins" else f"ember.jit.script cannot script {obj!r}")
    if getattr(obj, "__name__", "") == "<lambda>":
        code = obj.__code__
        raise RuntimeError(f"Expected a single top-level function: "
                           f"{code.co_filename}:{code.co_firstlineno}")
    return ScriptFunction(obj)


def _script_class(cls: type) -> type:
    """A class as TorchScript takes it (PyTorch's checks); the class itself runs as Python."""
    if issubclass(cls, Module):
        raise RuntimeError(f"Type '{cls}' cannot be compiled since it inherits from nn.Module,"
                           " pass an instance instead")
    if issubclass(cls, enum.Enum):
        return cls
    if not ("__dict__" in dir(cls) or hasattr(cls, "__slots__")):
        raise RuntimeError("TorchScript classes must be new-style classes. Please inherit "
                           "from 'object'.")
    if len(cls.mro()) > 2:
        raise RuntimeError("TorchScript classes does not support inheritance yet. Please "
                           "directly inherit from 'object'.")
    return cls


def freeze(mod: Any, preserved_attrs: list[str] | None = None,
           optimize_numerics: bool = True) -> Any:
    """A copy of a scripted module in eval mode with its weights made constants (PyTorch
    inlines them into the graph): no parameters, an empty ``state_dict``, outputs that need
    no gradient for the weights. ``preserved_attrs`` and ``optimize_numerics`` only steer
    graph rewrites, which ember does not make.

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> frozen = ember.jit.freeze(ember.jit.script(ember.nn.Linear(2, 2)).eval())
    >>> list(frozen.state_dict()), frozen(ember.ones(1, 2)).requires_grad
    ([], False)
    """
    warnings.warn("`torch.jit.freeze` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning)  # PyTorch's: no stacklevel
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use "
                           "torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. "
                           "Please call .eval() on your module before freezing.")
    if isinstance(mod, _FrozenModule):
        return mod
    return _FrozenModule(mod.__dict__.get("_ember_original", mod))


def optimize_for_inference(mod: Any, other_methods: list[str] | None = None) -> Any:
    """``freeze`` of a scripted module (put in eval mode first), as PyTorch does before its
    graph rewrites; ember makes none, so the numbers are the module's.

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> fast = ember.jit.optimize_for_inference(ember.jit.script(ember.nn.ReLU()))
    >>> fast(ember.tensor([-1.0, 2.0]))
    tensor([0., 2.])
    """
    warnings.warn("`torch.jit.optimize_for_inference` is deprecated. Please use "
                  "`torch.compile` instead.", DeprecationWarning)  # PyTorch's: no stacklevel
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. Please "
                           "use torch.jit.script or torch.jit.trace to script your "
                           "'nn.Module'.")
    if isinstance(mod, _FrozenModule):
        return mod
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return freeze(mod.eval())


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Refuses: a TorchScript archive holds compiled code, which ember does not make (save
    the ``state_dict`` with ``ember.save`` instead).

    >>> import ember
    >>> ember.jit.save(ember.jit.script(ember.nn.ReLU()), "relu.pt")
    Traceback (most recent call last):
    ...
    NotImplementedError: ember cannot write or read TorchScript archives ...
    """
    raise NotImplementedError(_NO_ARCHIVE)


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    """Refuses: ember cannot run a TorchScript archive's compiled code (load a
    ``state_dict`` saved with ``ember.save``/``torch.save`` into the Python module instead).

    >>> import ember
    >>> ember.jit.load("model.pt")
    Traceback (most recent call last):
    ...
    NotImplementedError: ember cannot write or read TorchScript archives ...
    """
    raise NotImplementedError(_NO_ARCHIVE)


def no_grad_call(fn: Callable, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` with gradients off (trace checks compare values only)."""
    with grad_mode.no_grad():
        return fn(*args, **kwargs)
