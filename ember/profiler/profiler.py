"""``ember.profiler.profile``: PyTorch's profiler API over ember's recorder.

Every built-in op run in the profiling thread (forward and backward) is recorded as an
``aten::<op>`` event, with ``record_function`` ranges around them; a ``schedule`` decides
per ``step()`` whether to record, and ``on_trace_ready`` receives the profiler at the end of
each recorded cycle. ember records the host side only: no device kernels, so asking for
CUDA activity alone records nothing (PyTorch's CPU build says the same).
"""
from __future__ import annotations

import enum
import os
import socket
import time
import warnings
from typing import Any, Callable, Iterable

from ._events import EventList, write_chrome_trace
from ._record import Collector, record_function


class ProfilerActivity(enum.Enum):
    """What a profiler records: ``CPU`` (host ops) or a device's kernels."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self) -> str:
        return f"<ProfilerActivity.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"ProfilerActivity.{self.name}"


class ProfilerAction(enum.Enum):
    """What the profiler does during one step (the value of a ``schedule``)."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4

    def __repr__(self) -> str:
        return f"<ProfilerAction.{self.name}: {self.value}>"


def supported_activities() -> set:
    """The activities this build records: the CPU only.

    >>> import ember
    >>> ember.profiler.supported_activities()
    {<ProfilerActivity.CPU: 0>}
    """
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """False: ember has no Kineto library (its own recorder stands in).

    >>> import ember
    >>> ember.profiler.kineto_available()
    False
    """
    return False


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0) -> Callable[[int], ProfilerAction]:
    """A step -> ``ProfilerAction`` function: skip ``skip_first`` steps, then cycles of
    ``wait`` idle steps, ``warmup`` steps and ``active`` recorded steps (the last one
    ``RECORD_AND_SAVE``), ``repeat`` times (0: for ever).

    >>> import ember
    >>> s = ember.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    >>> [s(i).name for i in range(5)]
    ['NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE']
    """
    if not (wait >= 0 and warmup >= 0 and active > 0 and repeat >= 0 and skip_first >= 0):
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), "
            f"warmup={warmup} (need >= 0), active={active} (need > 0), repeat={repeat} "
            f"(need >= 0), skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait:  # the first cycle starts at its warmup
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        phase = step % cycle
        if phase < wait:
            return ProfilerAction.NONE
        if phase < wait + warmup:
            return ProfilerAction.WARMUP
        return (ProfilerAction.RECORD if phase < cycle - 1
                else ProfilerAction.RECORD_AND_SAVE)
    return schedule_fn


def _always_record(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False
                              ) -> Callable[[Any], None]:
    """An ``on_trace_ready`` handler writing each cycle's Chrome trace to ``dir_name`` as
    ``{worker_name}.{time in ns}.pt.trace.json`` (``.gz`` with ``use_gzip``), the files
    TensorBoard's profiler plugin reads.

    >>> import ember, os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> with ember.profiler.profile(on_trace_ready=ember.profiler.tensorboard_trace_handler(
    ...         d, worker_name="w0")):
    ...     y = ember.ones(2) + 1
    >>> [f.split(".")[0] for f in os.listdir(d)]
    ['w0']
    """
    def handler(prof: Any) -> None:
        os.makedirs(dir_name, exist_ok=True)
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


class _ProfileBase:
    """What both profilers share: options checked, one Collector per recorded cycle."""

    def _init_options(self, record_shapes: bool, profile_memory: bool, with_stack: bool,
                      with_flops: bool, with_modules: bool, experimental_config: Any,
                      acc_events: bool) -> None:
        if with_flops:
            raise NotImplementedError("ember's profiler does not count FLOPs (with_flops=True)")
        if with_modules:
            raise NotImplementedError("ember's profiler does not record module hierarchies "
                                      "(with_modules=True)")
        if experimental_config is not None:
            raise NotImplementedError("ember's profiler has no experimental_config (it has "
                                      "no Kineto library)")
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.acc_events = acc_events
        self._collector: Collector | None = None
        self._finished: list = []
        self._base_ns = time.time_ns()

    def _start_collecting(self) -> None:
        self._collector = Collector(self.record_shapes, self.profile_memory, self.with_stack)
        self._base_ns = time.time_ns()
        self._collector.start()

    def _stop_collecting(self, keep: bool) -> None:
        collector, self._collector = self._collector, None
        if collector is None:
            return
        collector.stop()
        if keep:
            self._finished = (self._finished if self.acc_events else []) + collector.events

    def _event_list(self) -> EventList:
        return EventList(self._finished, profile_memory=self.profile_memory,
                         with_stack=self.with_stack)


class profile(_ProfileBase):
    """Records the ops run inside ``with profile(...) as prof:`` (or between ``start()``
    and ``stop()``); ``prof.key_averages().table(...)`` summarizes them.

    ``activities`` (``ProfilerActivity.CPU``; ``CUDA`` warns and is dropped, as on
    PyTorch's CPU build), ``record_shapes`` (input shapes per event), ``profile_memory``
    (bytes each op allocates for new outputs), ``with_stack`` (Python source lines),
    ``schedule``/``on_trace_ready``/``step()`` and ``acc_events`` as in PyTorch.
    ``with_flops``, ``with_modules`` and ``experimental_config`` raise NotImplementedError.

    >>> import ember
    >>> from ember.profiler import profile, ProfilerActivity
    >>> model = ember.nn.Sequential(ember.nn.Linear(4, 3), ember.nn.ReLU())
    >>> with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
    ...     out = model(ember.ones(2, 4)).sum()
    >>> [e.key for e in prof.key_averages()]
    ['aten::linear', 'aten::relu', 'aten::sum']
    """

    def __init__(self, *, activities: Iterable | None = None,
                 schedule: Callable[[int], ProfilerAction] | None = None,
                 on_trace_ready: Callable[..., Any] | None = None, record_shapes: bool = False,
                 profile_memory: bool = False, with_stack: bool = False,
                 with_flops: bool = False, with_modules: bool = False,
                 experimental_config: Any = None, execution_trace_observer: Any = None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback: Callable[[], str] | None = None,
                 post_processing_timeout_s: float | None = None) -> None:
        if execution_trace_observer is not None:
            raise NotImplementedError("ember's profiler has no execution trace observer")
        self._init_options(record_shapes, profile_memory, with_stack, with_flops,
                           with_modules, experimental_config, acc_events)
        chosen = set(activities) if activities is not None else supported_activities()
        if use_cuda is not None:
            warnings.warn("The attribute `use_cuda` will be deprecated soon, please use "
                          "``use_device = 'cuda'`` instead.", FutureWarning, stacklevel=2)
            if use_cuda:
                chosen.add(ProfilerActivity.CUDA)
        if ProfilerActivity.CUDA in chosen:
            warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=2)
            chosen.discard(ProfilerActivity.CUDA)
        unsupported = chosen - supported_activities()
        if unsupported:
            raise NotImplementedError(f"ember's profiler records CPU activity only, not "
                                      f"{sorted(str(a) for a in unsupported)}")
        if not chosen:
            raise AssertionError("No activities specified for the profiler")
        self.activities = chosen
        self.record_steps = schedule is not None
        self.schedule = schedule if schedule is not None else _always_record
        self.on_trace_ready = on_trace_ready
        self.custom_trace_id_callback = custom_trace_id_callback
        self.step_num = 0
        self.current_action = ProfilerAction.NONE
        self._started = False
        self._step_range: record_function | None = None
        self._metadata: dict = {}

    def __enter__(self) -> "profile":
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def start(self) -> None:
        """Starts recording (as the ``with`` block does), following the schedule."""
        self._started = True
        self.step_num = 0
        self.current_action = self.schedule(0)
        if self.current_action != ProfilerAction.NONE:
            self._start_collecting()
        self._open_step()

    def stop(self) -> None:
        """Stops recording; hands a recorded cycle still open to ``on_trace_ready``."""
        self._close_step()
        recording = self.current_action in (ProfilerAction.RECORD,
                                            ProfilerAction.RECORD_AND_SAVE)
        self._stop_collecting(keep=recording)
        if recording and self.on_trace_ready is not None:
            self.on_trace_ready(self)
        self.current_action = ProfilerAction.NONE

    def step(self) -> None:
        """Marks the end of a training step: the schedule decides what the next one does."""
        if not self._started:
            return
        self._close_step()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._open_step()

    def _transit(self, previous: ProfilerAction, current: ProfilerAction) -> None:
        A = ProfilerAction
        if previous == A.RECORD_AND_SAVE or (previous == A.RECORD and current == A.NONE):
            self._stop_collecting(keep=True)
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        elif previous == A.WARMUP and current in (A.RECORD, A.RECORD_AND_SAVE):
            if self._collector is not None:  # warmup events are dropped
                del self._collector.events[:]
                self._collector.next_id = 0
            return
        elif previous == A.WARMUP and current == A.NONE:
            warnings.warn("Incorrect schedule: WARMUP followed by NONE", stacklevel=3)
            self._stop_collecting(keep=False)
        if current != A.NONE and self._collector is None:
            self._start_collecting()

    def _open_step(self) -> None:
        if self.record_steps and self._collector is not None:
            self._step_range = record_function(f"ProfilerStep#{self.step_num}")
            self._step_range.__enter__()

    def _close_step(self) -> None:
        if self._step_range is not None:
            self._step_range.__exit__(None, None, None)
            self._step_range = None

    def _check_results(self) -> None:
        if not self._started:
            raise AssertionError("Profiler must be initialized before getting key averages")

    def events(self) -> EventList:
        """The events of the last recorded cycle (all cycles with ``acc_events=True``)."""
        self._check_results()
        return self._event_list()

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> EventList:
        """The events added up by name (and input shapes / the first stack frames)."""
        self._check_results()
        return self._event_list().key_averages(group_by_input_shape, group_by_stack_n,
                                               group_by_overload_name)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Writes the recorded events as Chrome trace JSON (gzipped for ``.gz``)."""
        self._check_results()
        write_chrome_trace(self._event_list(), path, self._base_ns)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes the stacks recorded with ``with_stack=True``, one line per event."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._event_list().export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        self._metadata[key] = value
