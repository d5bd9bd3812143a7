"""``ember.jit.trace`` and ``trace_module``: PyTorch's argument and output checks, then a
wrapper that runs the code eagerly.

PyTorch records the ops of one run and replays that graph afterwards; ember runs the code
itself every time. The numbers are the same as long as the code takes the same path for
every input (what tracing assumes anyway); code whose control flow depends on the input's
values follows the new input here, where PyTorch replays the recorded path.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

from .._tensor import Tensor
from ..nn import Module
from ..testing import assert_close
from ._script import ScriptFunction, ScriptModule, _check_optimize, _deprecated
from ._script import no_grad_call, tracing_state


class TracerWarning(Warning):
    """Warns about a trace that may not generalize (containers at the output, a check run
    whose values differ from the traced run)."""


class TracingCheckError(Exception):
    """A trace check failed (``check_trace``)."""

    def __init__(self, graph_diff_error: Any, tensor_compare_error: Any,
                 extra_msg: str | None = None) -> None:
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across "
                             "invocations. This often indicates that the tracer has "
                             "encountered untraceable code.\n" + tensor_compare_error)
        super().__init__(self.message)


class TracedModule(ScriptModule):
    """A submodule of a traced module (see ``ScriptModule``): printed under its original
    class name."""

    def _get_name(self) -> str:
        return self.original_name


class TopLevelTracedModule(TracedModule):
    """What ``ember.jit.trace`` makes of a module.

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> ember.jit.trace(ember.nn.Linear(2, 1), ember.ones(3, 2))
    Linear(original_name=Linear)
    """

    @classmethod
    def _wrap_child(cls, child: Module) -> Module:
        return child if isinstance(child, ScriptModule) else TracedModule(child)


_CONTAINER_WARNING = (
    "Encountering a {} at the output of the tracer might cause the trace to be incorrect, "
    "this is only valid if the container structure does not change based on the module's "
    "inputs. Consider using a constant container instead (e.g. for `list`, use a `tuple` "
    "instead. for `dict`, use a `NamedTuple` instead). If you absolutely need this and know "
    "the side effects, pass strict=False to trace() to allow this behavior.")
_BAD_OUTPUT = ("Only tensors, lists, tuples of tensors, or dictionary of tensors can be "
               "output from traced functions")


def _type_name(value: Any) -> str:
    """TorchScript's spelling of a value's type, for the error about untraceable inputs."""
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, tuple):
        return "Tuple[" + ", ".join(_type_name(v) for v in value) + "]"
    if isinstance(value, list):
        return "List[" + (_type_name(value[0]) if value else "Tensor") + "]"
    if isinstance(value, dict):
        k, v = next(iter(value.items())) if value else ("", None)
        return f"Dict[{_type_name(k)}, {_type_name(v) if value else 'Tensor'}]"
    return {bool: "bool", int: "int", float: "float", str: "str", complex: "complex",
            type(None): "NoneType"}.get(type(value), type(value).__name__)


def _traceable(value: Any) -> bool:
    if isinstance(value, Tensor):
        return True
    if isinstance(value, (tuple, list)):
        return all(_traceable(v) for v in value)
    if isinstance(value, dict):
        return all(_traceable(v) for v in value.values())
    return False


def _check_inputs(args: tuple) -> None:
    if not _traceable(args):
        raise RuntimeError(f"Type '{_type_name(args)}' cannot be traced. Only Tensors and "
                           "(possibly nested) Lists, Dicts, and Tuples of Tensors can be "
                           "traced")


def _check_output(out: Any, strict: bool, top: bool = True) -> None:
    if out is None and top:
        raise RuntimeError("The traced function didn't return any values! Side-effects are "
                           "not captured in traces, so it would be a no-op.")
    if isinstance(out, Tensor):
        return
    if isinstance(out, tuple):
        for v in out:
            _check_output(v, strict, False)
        return
    if isinstance(out, (list, dict)):
        kind = "list" if isinstance(out, list) else "dict"
        if strict:
            if kind == "dict":
                raise RuntimeError(_CONTAINER_WARNING.format(kind))
            warnings.warn(_CONTAINER_WARNING.format(kind), TracerWarning, stacklevel=4)
        for v in (out if kind == "list" else out.values()):
            _check_output(v, strict, False)
        return
    raise RuntimeError(_BAD_OUTPUT)


def _as_args(example_inputs: Any) -> tuple:
    if isinstance(example_inputs, Tensor):
        return (example_inputs,)
    return tuple(example_inputs)


def _flat_tensors(out: Any) -> list:
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, dict):
        out = list(out.values())
    return [t for v in out for t in _flat_tensors(v)] if isinstance(out, (tuple, list)) else []


def _run_traced(fn: Callable, args: tuple, kwargs: dict, strict: bool) -> Any:
    tracing_state.depth += 1
    try:
        out = fn(*args, **kwargs)
    finally:
        tracing_state.depth -= 1
    _check_output(out, strict)
    return out


def _check_trace(fn: Callable, check_inputs: list, tolerance: float,
                 kwargs_mode: bool, runs: int = 2) -> None:
    """Runs each check input as often as PyTorch's check does (a function twice: a new
    trace and Python; a module 4 times, so its buffers, such as batch norm's running
    statistics, end as PyTorch leaves them) and warns, as PyTorch does, where the outputs
    differ (nondeterministic code)."""
    for inputs in check_inputs:
        args, kwargs = ((), dict(inputs)) if kwargs_mode else (_as_args(inputs), {})
        outs = [_flat_tensors(no_grad_call(fn, *args, **kwargs)) for _ in range(runs)]
        first, second = outs[-2], outs[-1]
        for i, (a, b) in enumerate(zip(first, second)):
            try:
                assert_close(a, b, rtol=tolerance, atol=1e-5, equal_nan=True)
            except AssertionError as error:
                warnings.warn(f"Output nr {i + 1}. of the traced function does not match the "
                              f"corresponding output of the Python function. Detailed "
                              f"error:\n{error}", TracerWarning, stacklevel=4)


def trace(func: Any, example_inputs: Any = None, optimize: Any = None,
          check_trace: bool = True, check_inputs: list | None = None,
          check_tolerance: float = 1e-5, strict: bool = True, _force_outplace: bool = False,
          _module_class: Any = None, _compilation_unit: Any = None,
          example_kwarg_inputs: dict | None = None, _store_inputs: bool = True) -> Any:
    """Runs ``func`` once on ``example_inputs`` (``ember.jit.is_tracing()`` is True meanwhile)
    with PyTorch's checks of inputs and outputs, and returns what PyTorch returns: a
    ``ScriptFunction`` for a function, a ``TopLevelTracedModule`` for a module. The result
    runs ``func`` eagerly. ``check_trace`` runs ``check_inputs`` (or the example) twice and
    warns with ``TracerWarning`` where the outputs differ by more than ``check_tolerance``.

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> def f(x, y):
    ...     return x * y + 1
    >>> traced = ember.jit.trace(f, (ember.ones(2), ember.full((2,), 3.0)))
    >>> traced(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0]))
    tensor([4., 9.])
    """
    _deprecated("trace")
    _check_optimize(optimize)
    if example_inputs is None and not isinstance(example_kwarg_inputs, dict):
        raise RuntimeError("example_kwarg_inputs should be a dict")
    if isinstance(func, Module):
        if example_inputs is None:
            inputs, kw = {"forward": example_kwarg_inputs}, True
        else:
            inputs, kw = {"forward": example_inputs}, False
        return _trace_module(func, inputs, check_trace, check_inputs, check_tolerance,
                             strict, kw)
    owner = getattr(func, "__self__", None)
    if isinstance(owner, Module) and not isinstance(owner, ScriptModule):
        traced = _trace_module(owner, {func.__name__: example_inputs}, check_trace,
                               check_inputs, check_tolerance, strict, False)
        return getattr(traced, func.__name__)
    if not callable(func):
        raise RuntimeError("Could not get name of python class object")
    if example_inputs is None:
        args, kwargs = (), example_kwarg_inputs
    else:
        args, kwargs = _as_args(example_inputs), {}
    _check_inputs(args)
    _run_traced(func, args, kwargs, strict)
    if check_trace:
        checks = check_inputs if check_inputs is not None else [kwargs if not args else args]
        _check_trace(func, checks, check_tolerance, not args)
    name = getattr(func, "__name__", type(func).__name__)
    return ScriptFunction(func, "_lambda" if name == "<lambda>" else name)


def _trace_module(mod: Module, inputs: dict, check_trace: bool, check_inputs: Any,
                  tolerance: float, strict: bool, kwargs_mode: bool) -> Any:
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    traced = mod if isinstance(mod, ScriptModule) else TopLevelTracedModule(mod)
    for method_name, example in inputs.items():
        method = mod if method_name == "forward" else getattr(mod, method_name)
        if kwargs_mode:
            args, kwargs = (), example
        else:
            args, kwargs = _as_args(example), {}
        _check_inputs(args)
        _run_traced(method, args, kwargs, strict)
        if check_trace:
            checks = check_inputs if check_inputs is not None else [example]
            _check_trace(method, checks, tolerance, kwargs_mode, runs=4)
    return traced


def trace_module(mod: Module, inputs: dict, optimize: Any = None, check_trace: bool = True,
                 check_inputs: list | None = None, check_tolerance: float = 1e-5,
                 strict: bool = True, _force_outplace: bool = False, _module_class: Any = None,
                 _compilation_unit: Any = None, example_inputs_is_kwarg: bool = False,
                 _store_inputs: bool = True) -> Any:
    """Traces the methods named in ``inputs`` (``{method_name: example_inputs}``) of
    ``mod``, with ``trace``'s checks, and returns the module wrapped as PyTorch wraps it
    (a ``TopLevelTracedModule`` running the original's methods eagerly).

    >>> import ember, warnings
    >>> warnings.simplefilter("ignore", DeprecationWarning)
    >>> lin = ember.nn.Linear(2, 2)
    >>> traced = ember.jit.trace_module(lin, {"forward": ember.ones(1, 2)})
    >>> traced.weight is lin.weight
    True
    """
    warnings.warn(
        "`torch.jit.trace_method` is deprecated. Please switch to `torch.compile` or "
        "`torch.export`.", DeprecationWarning)  # PyTorch's: no stacklevel
    _check_optimize(optimize)
    return _trace_module(mod, inputs, check_trace, check_inputs, check_tolerance, strict,
                         example_inputs_is_kwarg)
