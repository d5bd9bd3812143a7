"""``ember.autograd.profiler``: PyTorch's legacy profiler API over ember's recorder.

``with profile() as prof:`` records the ops run in the block, as ``ember.profiler.profile``
does; ``prof.key_averages()``, ``prof.table()`` (every event, one row each) and
``prof.function_events`` give the results. ``use_cuda``/``use_device="cuda"`` warn that no
device is profiled (ember records host time only), as PyTorch's CPU build does.

>>> import ember
>>> from ember.autograd import profiler
>>> with profiler.profile(record_shapes=True) as prof:
...     y = ember.ones(2, 3).exp().sum()
>>> [(e.key, e.count) for e in prof.key_averages()]
[('aten::exp', 1), ('aten::sum', 1)]
"""
from __future__ import annotations

import contextlib
import warnings
from typing import Any

from ..profiler._events import EventList, FunctionEvent, FunctionEventAvg  # noqa: F401
from ..profiler._record import record_function  # noqa: F401
from ..profiler.profiler import ProfilerActivity, _ProfileBase, kineto_available  # noqa: F401

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList",
           "FunctionEvent", "FunctionEventAvg", "kineto_available"]


class profile(_ProfileBase):
    """The legacy profiler: records the ops run in its block (see the module docstring).
    ``enabled=False`` records nothing and, as in PyTorch, ``with ... as prof`` then binds
    None. ``with_flops``/``with_modules``/``experimental_config`` raise NotImplementedError.

    >>> import ember
    >>> from ember.autograd.profiler import profile
    >>> with profile() as prof:
    ...     y = ember.ones(3) + 1
    >>> [e.name for e in prof.function_events]
    ['aten::add']
    """

    def __init__(self, enabled: bool = True, *, use_cuda: bool = False,
                 use_device: str | None = None, record_shapes: bool = False,
                 with_flops: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_modules: bool = False,
                 use_kineto: bool = False, use_cpu: bool = True,
                 experimental_config: Any = None, acc_events: bool = False,
                 custom_trace_id_callback: Any = None,
                 post_processing_timeout_s: float | None = None,
                 activity_filters: Any = None) -> None:
        self.enabled = enabled
        if not enabled:
            self.function_events = None
            return
        if not use_cpu:
            raise NotImplementedError("ember's profiler records CPU activity only "
                                      "(use_cpu=False leaves nothing to record)")
        self._init_options(record_shapes, profile_memory, with_stack, with_flops,
                           with_modules, experimental_config, acc_events)
        if use_cuda:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            use_device = "cuda"
        if use_device in ("cuda", "xpu", "mps", "mtia", "hpu"):
            warnings.warn(f"{use_device.upper()} is not available, disabling "
                          f"{use_device.upper()} profiling", stacklevel=2)
        elif use_device is not None:
            warnings.warn(f"The {use_device} is not a valid device option.", stacklevel=2)
        self.use_device = None
        self.entered = False
        self.function_events: EventList | None = None

    def __enter__(self) -> "profile | None":
        if not self.enabled:
            return None
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._start_collecting()
        return self

    def __exit__(self, *exc: Any) -> None:
        if not self.enabled:
            return
        self._stop_collecting(keep=True)
        self.function_events = self._event_list()

    def _check_finish(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """Every recorded event as a table row (``key_averages().table()`` adds them up)."""
        return self._check_finish().table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only, time_unit=time_unit)

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events added up by name (and input shapes / the first stack frames)."""
        return self._check_finish().key_averages(group_by_input_shape, group_by_stack_n,
                                                 group_by_overload_name)

    def total_average(self) -> FunctionEventAvg:
        """All events added up under the key ``Total``."""
        return self._check_finish().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of every event's self CPU time, in microseconds."""
        return self._check_finish().self_cpu_time_total

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events as Chrome trace JSON (gzipped for ``.gz``)."""
        from_events = self._check_finish()
        from_events.export_chrome_trace(path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes the stacks recorded with ``with_stack=True``, one line per event."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._check_finish().export_stacks(path, metric)


class emit_nvtx(contextlib.ContextDecorator):
    """NVTX ranges for NVIDIA's profilers: this build has no CUDA, so entering raises
    PyTorch's CPU-build error.

    >>> import ember
    >>> with ember.autograd.profiler.emit_nvtx():
    ...     pass
    Traceback (most recent call last):
    ...
    AssertionError: Torch not compiled with CUDA enabled
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self) -> "emit_nvtx":
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self

    def __exit__(self, *exc: Any) -> None:
        return None


class emit_itt(contextlib.ContextDecorator):
    """Intel ITT ranges for VTune: a build without ITT (PyTorch's CPU wheels run it as a
    no-op too) emits nothing.

    >>> import ember
    >>> with ember.autograd.profiler.emit_itt():
    ...     y = ember.ones(2) * 2
    """

    def __init__(self, enabled: bool = True, record_shapes: bool = False) -> None:
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self) -> "emit_itt":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None
