"""Recording ops and ``record_function`` ranges while a profiler is active.

Ops are seen through a dispatch mode (``ember.utils._python_dispatch``): each built-in op
run in the profiling thread (the one that started the profiler; modes are per thread),
forward and backward, becomes an ``aten::<op>`` event timed around the call. The mode is
pushed only while a profiler collects, so ops pay nothing otherwise; ``record_function``
tests one list when no profiler is active.
"""
from __future__ import annotations

import functools
import os
import time
import traceback
from typing import Any, Callable

from .._tensor import Tensor
from ..utils._python_dispatch import TorchDispatchMode
from ._events import FunctionEvent, current_thread_id

#: the collectors now recording (innermost last); empty when no profiler is active
active: list = []

_EMBER_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_USER_FACING = os.path.join(_EMBER_DIR, "nn", "modules")


def _stack() -> list[str]:
    """The Python frames of the caller, innermost first, ember's internals left out (its
    nn modules stay: they are where a model's ops come from)."""
    frames = []
    for frame in reversed(traceback.extract_stack()):
        path = os.path.abspath(frame.filename)
        if path.startswith(_EMBER_DIR) and not path.startswith(_USER_FACING):
            continue
        frames.append(f"{frame.filename}({frame.lineno}): {frame.name}")
    return frames


def _shape_of(value: Any) -> list:
    return list(value.shape) if isinstance(value, Tensor) else []


def _type_of(value: Any) -> str:
    if isinstance(value, Tensor):
        return str(value.dtype).rsplit(".", 1)[-1]
    return "Scalar" if isinstance(value, (int, float, bool, complex)) else ""


def _new_bytes(out: Any, args: tuple) -> int:
    """Bytes of the op's outputs that own new memory (views and inputs handed back
    allocate nothing)."""
    outs = out if isinstance(out, (tuple, list)) else (out,)
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    total = 0
    for t in outs:
        if isinstance(t, Tensor) and t._base is None and id(t) not in inputs:
            total += t.numel() * t.element_size()
    return total


class Collector:
    """The events of one profiling run: a stack of open ranges per thread, the finished
    events in start order."""

    def __init__(self, record_shapes: bool, profile_memory: bool, with_stack: bool) -> None:
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.origin_ns = time.perf_counter_ns()
        self.events: list[FunctionEvent] = []
        self.open: list[FunctionEvent] = []
        self.next_id = 0
        self.mode: _ProfilerMode | None = None
        self.thread = current_thread_id()

    def begin(self, name: str, args: tuple = (), user: bool = False) -> FunctionEvent:
        self.next_id += 1
        shapes = [_shape_of(a) for a in args] if self.record_shapes else []
        types = [_type_of(a) for a in args] if self.record_shapes else []
        event = FunctionEvent(self.next_id, name, current_thread_id(), 0.0, 0.0,
                              input_shapes=shapes, input_types=types,
                              stack=_stack() if self.with_stack else [],
                              is_user_annotation=user)
        if self.open:
            event.set_cpu_parent(self.open[-1])
            self.open[-1].append_cpu_child(event)
        self.events.append(event)
        self.open.append(event)
        event.start_us = (time.perf_counter_ns() - self.origin_ns) / 1000.0
        return event

    def end(self, event: FunctionEvent) -> None:
        event.end_us = (time.perf_counter_ns() - self.origin_ns) / 1000.0
        # a range left open by an exception inside it is closed with it
        while self.open:
            if self.open.pop() is event:
                break

    def start(self) -> None:
        self.mode = _ProfilerMode(self)
        self.mode.__enter__()
        active.append(self)

    def stop(self) -> None:
        if self in active:
            active.remove(self)
        if self.mode is not None:
            from_stack = self.mode
            self.mode = None
            from_stack.__exit__(None, None, None)
        now = (time.perf_counter_ns() - self.origin_ns) / 1000.0
        for event in self.open:  # ranges still open end with the profiler
            event.end_us = now
        self.open.clear()


class _ProfilerMode(TorchDispatchMode):
    def __init__(self, collector: Collector) -> None:
        super().__init__()
        self.collector = collector

    def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        collector = self.collector
        event = collector.begin(func.name().split(".")[0], args)
        try:
            out = func(*args, **(kwargs or {}))
        finally:
            collector.end(event)
        if collector.profile_memory:
            event.own_memory_usage = _new_bytes(out, args)
        return out


class record_function:
    """Labels a block (``with record_function("name"):``) or a function
    (``@record_function("name")``) so that profilers show it as one event, with the ops it
    runs beneath it. Costs one test when no profiler is active.

    >>> import ember
    >>> from ember.profiler import profile, record_function
    >>> with profile() as prof:
    ...     with record_function("scale"):
    ...         y = ember.ones(3) * 2
    >>> [e.name for e in prof.events()]
    ['scale', 'aten::mul']
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self._events: list = []

    def __enter__(self) -> "record_function":
        if active:  # only the profiling thread's ranges: its ops are the ones recorded
            thread = current_thread_id()
            self._events = [(c, c.begin(self.name, user=True)) for c in active
                            if c.thread == thread]
        return self

    def __exit__(self, *exc: Any) -> None:
        events, self._events = self._events, []
        for collector, event in events:
            collector.end(event)

    def __call__(self, fn: Callable) -> Callable:
        @functools.wraps(fn)
        def labelled(*args: Any, **kwargs: Any) -> Any:
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return labelled
