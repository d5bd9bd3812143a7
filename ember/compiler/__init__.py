"""``ember.compile`` and ``ember.compiler``: PyTorch's compiler entry points, run eagerly.

ember has no graph compiler. ``ember.compile(model)`` gives what PyTorch's
``torch.compile(model, backend="eager")`` gives: the same function, run op by op, so the same
numbers and gradients. It is wrapped as PyTorch wraps it (a module becomes an
``OptimizedModule`` holding it as ``_orig_mod``, so its ``state_dict`` keys start with
``_orig_mod.``; a function stays a function), and its arguments are checked as PyTorch
checks them, so programs written for ``torch.compile`` run unchanged. ``mode``, ``options``,
``fullgraph`` and ``dynamic`` only tune a compiler's output: there is none to tune, and
eager execution never breaks a graph, so they change nothing. A callable ``backend`` expects
a captured FX graph, which ember cannot give: it raises NotImplementedError.

>>> import ember
>>> model = ember.nn.Linear(2, 1)
>>> fast = ember.compile(model)
>>> list(fast.state_dict())
['_orig_mod.weight', '_orig_mod.bias']
>>> x = ember.ones(3, 2)
>>> bool((fast(x) == model(x)).all())
True
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..nn import Module

__all__ = ["compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting",
           "list_backends", "reset", "OptimizedModule", "InvalidBackend"]

# Backend names PyTorch registers without extra packages, with their tags: each runs eagerly
# here (PyTorch's own "eager" backend does exactly that; the others compile the same math).
_BACKENDS = {"inductor": (), "cudagraphs": (), "eager": ("debug",), "aot_eager": ("debug",),
             "aot_eager_decomp_partition": ("debug",)}
_MODES = ("default", "lite", "reduce-overhead", "max-autotune-no-cudagraphs", "max-autotune")


class InvalidBackend(RuntimeError):
    """A ``backend`` name that no compiler is registered under."""

    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` "
                         "for available backends.")


class OptimizedModule(Module):
    """What ``ember.compile`` makes of a module: it calls the original (``_orig_mod``), and
    reads and writes attributes through to it, as PyTorch's wrapper does.

    >>> import ember
    >>> inner = ember.nn.ReLU()
    >>> ember.compile(inner)._orig_mod is inner
    True
    """
    _own_attributes = frozenset({"_orig_mod", "dynamo_ctx", "_torchdynamo_orig_callable"})

    def __init__(self, mod: Module) -> None:
        super().__init__()
        self._orig_mod = mod  # a submodule: parameters, state_dict and repr go through it
        Module.__setattr__(self, "_torchdynamo_orig_callable", mod.forward)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self._orig_mod(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            return self.__dict__["_modules"]["_orig_mod"]
        return getattr(self._orig_mod, name)

    def __setattr__(self, name: str, value: Any) -> None:
        # The wrapper's own state (its Module registries, set by Module.__init__, and class
        # attributes such as ``training``) stays on it; anything else lands on the original.
        if ("_modules" not in self.__dict__ or name in self._own_attributes
                or hasattr(type(self), name) or name in self.__dict__):
            return super().__setattr__(name, value)
        setattr(self._orig_mod, name, value)


def _check_options(mode: str | None, options: dict | None, backend: Any) -> str:
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be "
                           "specified at the same time.")
    backend = "inductor" if backend is None else backend
    if callable(backend):
        raise NotImplementedError(
            "ember.compile runs models eagerly and captures no FX graph, so a custom "
            "backend callable cannot be given one; use backend='eager' (or leave it out)")
    if not isinstance(backend, str) or backend not in _BACKENDS:
        raise InvalidBackend(backend)
    if backend == "inductor" and mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    return backend


def compile(model: Callable | None = None, *, fullgraph: bool = False,  # noqa: A001
            dynamic: bool | None = None, backend: str | Callable | None = None,
            mode: str | None = None, options: dict | None = None, name: str | None = None,
            disable: bool = False, **kwargs: Any) -> Any:
    """``model`` (a module or a function) ready to be called as PyTorch's compiled form is:
    run eagerly, wrapped as PyTorch wraps it. ``ember.compile(mode=...)`` with no model is a
    decorator.

    >>> import ember
    >>> @ember.compile(mode="max-autotune")
    ... def gelu_sum(x):
    ...     return ember.nn.functional.gelu(x).sum()
    >>> round(gelu_sum(ember.ones(2)).item(), 4)
    1.6827
    """
    unknown = sorted(set(kwargs) - {"recompile_limit", "isolate_recompiles", "shapes_spec"})
    if unknown:
        raise TypeError(f"compile() got an unexpected keyword argument '{unknown[0]}'")
    if model is None:
        def decorate(fn: Callable) -> Any:
            return compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                           mode=mode, options=options, name=name, disable=disable, **kwargs)
        return decorate
    _check_options(mode, options, backend)
    if not callable(model):
        raise AssertionError(f"A callable function is expected, but {type(model)} is "
                             "provided.")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model)

    @functools.wraps(model)
    def compiled(*args: Any, **kw: Any) -> Any:
        return model(*args, **kw)
    compiled._torchdynamo_orig_callable = model
    return compiled


def disable(fn: Callable | None = None, recursive: bool = True, *,
            reason: str | None = None) -> Any:
    """Marks ``fn`` to run eagerly under a compiler: here everything does, so ``fn`` is
    returned as it is (``ember.compiler.disable()`` with no function is a decorator).

    >>> import ember
    >>> f = lambda x: x + 1
    >>> ember.compiler.disable(f) is f
    True
    """
    if fn is None:
        return lambda f: f
    return fn


def is_compiling() -> bool:
    """False: ember never traces a program (PyTorch answers True while dynamo traces).

    >>> import ember
    >>> ember.compiler.is_compiling()
    False
    """
    return False


is_dynamo_compiling = is_compiling
is_exporting = is_compiling


def list_backends(exclude_tags: tuple[str, ...] | None = ("debug", "experimental")
                  ) -> list[str]:
    """The backend names ``ember.compile`` accepts (all run eagerly), those tagged with one of
    ``exclude_tags`` left out, sorted.

    >>> import ember
    >>> ember.compiler.list_backends()
    ['cudagraphs', 'inductor']
    """
    excluded = set(exclude_tags or ())
    return sorted(n for n, tags in _BACKENDS.items() if not excluded.intersection(tags))


def reset() -> None:
    """Forgets compiled code; ember keeps none, so there is nothing to forget.

    >>> import ember
    >>> ember.compiler.reset()
    """
