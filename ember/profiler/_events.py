"""The profiler's results: ``FunctionEvent`` (one recorded op or ``record_function`` range),
``FunctionEventAvg`` (events of one name added up), ``EventList`` (with ``table``,
``key_averages``, ``export_chrome_trace``), laid out as PyTorch lays them out.

Times are microseconds (floats) from the profiler's start.
"""
from __future__ import annotations

import enum
import gzip
import json
import os
import socket
import threading
import time
from collections import OrderedDict
from typing import Any


class DeviceType(enum.Enum):
    """Where an event ran (ember records the host side only)."""
    CPU = 0
    CUDA = 1

    def __repr__(self) -> str:
        return f"DeviceType.{self.name}"

    __str__ = __repr__


def format_time(time_us: float) -> str:
    """``1.234ms``-style text of a time in microseconds, the unit chosen by size.

    >>> format_time(1500.0), format_time(12.5), format_time(2.5e6)
    ('1.500ms', '12.500us', '2.500s')
    """
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def format_memory(nbytes: int) -> str:
    """``1.50 KB``-style text of a byte count (binary units).

    >>> format_memory(1536), format_memory(24), format_memory(-2 * 1024 ** 2)
    ('1.50 KB', '24 B', '-2.00 MB')
    """
    for scale, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if abs(nbytes) >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes} B"


def _share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


class _Formatted:
    """The ``*_str`` forms of an event's times."""

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def cpu_time_str(self) -> str:
        return format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return format_time(self.self_cpu_time_total)

    # ember records no device kernels: the device columns are zero
    device_time = device_time_total = self_device_time_total = 0.0
    cuda_time = cuda_time_total = self_cuda_time_total = 0.0
    device_memory_usage = self_device_memory_usage = 0
    cuda_memory_usage = self_cuda_memory_usage = 0
    flops = 0
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    use_device = None


class FunctionEvent(_Formatted):
    """One recorded op (``aten::...``) or ``record_function`` range.

    >>> e = FunctionEvent(1, "aten::add", 0, 10.0, 15.5)
    >>> e.cpu_time_total, e.self_cpu_time_total, e.key
    (5.5, 5.5, 'aten::add')
    """

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 input_shapes: list | None = None, stack: list | None = None,
                 is_user_annotation: bool = False, cpu_memory_usage: int = 0,
                 sequence_nr: int = -1, input_types: list | None = None) -> None:
        self.id, self.name, self.thread = id, name, thread
        self.start_us, self.end_us = start_us, end_us
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_types = input_types if input_types is not None else []
        self.stack = stack if stack is not None else []
        self.is_user_annotation = is_user_annotation
        self.own_memory_usage = cpu_memory_usage
        self.sequence_nr = sequence_nr
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.overload_name = ""
        self.device_type = DeviceType.CPU
        self.count = 1
        self.scope = 0

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range(self) -> tuple[float, float]:
        return (self.start_us, self.end_us)

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def cpu_memory_usage(self) -> int:
        return self.own_memory_usage + sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.own_memory_usage

    def append_cpu_child(self, child: "FunctionEvent") -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: "FunctionEvent") -> None:
        self.cpu_parent = parent

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} overload_name= "
                f"device_type={self.device_type} node_id=-1 cpu_time={self.cpu_time_str} "
                f"start_us={self.start_us:.3f} end_us={self.end_us:.3f} "
                f"cpu_children={[c.id for c in self.cpu_children]} name={self.name} "
                f"thread={self.thread} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} is_async=False is_remote=False "
                f"seq_nr={self.sequence_nr} is_legacy=False>")


class FunctionEventAvg(_Formatted):
    """The events of one key added up (``key_averages``).

    >>> avg = FunctionEventAvg()
    >>> _ = avg.add(FunctionEvent(1, "aten::mul", 0, 0.0, 4.0))
    >>> _ = avg.add(FunctionEvent(2, "aten::mul", 0, 10.0, 12.0))
    >>> avg.key, avg.count, avg.cpu_time_total, avg.cpu_time
    ('aten::mul', 2, 6.0, 3.0)
    """

    def __init__(self) -> None:
        self.key: str | None = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes: Any = None
        self.stack: list = []
        self.overload_name = ""
        self.is_user_annotation = False
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.scope = 0

    def add(self, other: Any) -> "FunctionEventAvg":
        if self.key is None:
            self.key = other.key
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
        elif other.key != self.key:
            raise AssertionError(f"Expected keys to match, but got {self.key} vs {other.key}")
        self.count += other.count
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        return self

    __iadd__ = add

    def __repr__(self) -> str:
        shapes = "" if self.input_shapes is None else self.input_shapes
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str}"
                f" cpu_time={self.cpu_time_str}  self_cuda_time=0.000us cuda_time=0.000us "
                f"input_shapes={shapes} cpu_memory_usage={self.cpu_memory_usage} "
                f"cuda_memory_usage=0>")


class EventList(list):
    """A list of events with PyTorch's summaries.

    >>> events = EventList([FunctionEvent(1, "aten::relu", 0, 0.0, 3.0),
    ...                     FunctionEvent(2, "aten::relu", 0, 5.0, 6.0)])
    >>> [(a.key, a.count, a.cpu_time_total) for a in events.key_averages()]
    [('aten::relu', 2, 4.0)]
    """

    def __init__(self, *args: Any, profile_memory: bool = False, with_stack: bool = False,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._profile_memory = profile_memory
        self._with_stack = with_stack

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100,
              max_src_column_width: int = 75, max_name_column_width: int = 55,
              max_shapes_column_width: int = 80, header: str | None = None,
              top_level_events_only: bool = False, time_unit: str | None = None) -> str:
        """The events as a text table in PyTorch's layout (``sort_by`` an attribute such
        as ``"cpu_time_total"`` or ``"self_cpu_memory_usage"``, largest first)."""
        return build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width,
                           profile_memory=self._profile_memory,
                           top_level_events_only=top_level_events_only, time_unit=time_unit)

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> "EventList":
        """Events added up by name (and input shapes, and the first ``group_by_stack_n``
        stack frames, when asked), in the order each key first appears."""
        groups: OrderedDict = OrderedDict()
        for event in self:
            key = [event.key]
            if group_by_input_shapes:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key += event.stack[:group_by_stack_n]
            groups.setdefault(tuple(key), FunctionEventAvg()).add(event)
        averages = EventList(groups.values(), profile_memory=self._profile_memory,
                             with_stack=self._with_stack)
        for avg in averages:
            avg.stack = avg.stack[:group_by_stack_n]
            if not group_by_input_shapes:
                avg.input_shapes = ""
        return averages

    def total_average(self) -> FunctionEventAvg:
        """All events added up under the key ``Total``."""
        total = FunctionEventAvg()
        for event in self:
            total.count += event.count
            total.cpu_time_total += event.cpu_time_total
            total.self_cpu_time_total += event.self_cpu_time_total
            total.cpu_memory_usage += event.cpu_memory_usage
            total.self_cpu_memory_usage += event.self_cpu_memory_usage
        total.key = "Total"
        return total

    def export_chrome_trace(self, path: str) -> None:
        """Writes the events as Chrome trace JSON (``chrome://tracing``, Perfetto);
        gzipped when ``path`` ends in ``.gz``."""
        write_chrome_trace(self, path)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Writes one line per event with a stack, ``frame;frame;... value`` (outermost
        frame first), for flame-graph tools."""
        with open(path, "w") as f:
            for event in self:
                if event.stack:
                    frames = ";".join(reversed(event.stack))
                    f.write(f"{frames} {int(getattr(event, metric))}\n")


def _pad_row(values: list, widths: list, left: set) -> str:
    cells = [f"{str(v):{'<' if i in left else '>'}{w}}" for i, (v, w) in
             enumerate(zip(values, widths))]
    return "".join(c + "  " for c in cells)


def _override_unit(time_us: float, default: str, unit: str | None) -> str:
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(unit)
    return default if scale is None else f"{time_us / scale:.3f}{unit}"


def build_table(events: list, sort_by: str | None = None, header: str | None = None,
                row_limit: int = 100, max_src_column_width: int = 75,
                max_name_column_width: int = 55, max_shapes_column_width: int = 80,
                profile_memory: bool = False, top_level_events_only: bool = False,
                time_unit: str | None = None) -> str:
    """The text table of ``events``: PyTorch's columns, widths and footer."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        events = sorted(events, key=lambda e: getattr(e, attr), reverse=True)
    has_shapes = any(e.input_shapes is not None and len(e.input_shapes) > 0 for e in events)
    stacks = [e.stack for e in events if e.stack]
    name_width = min(max(len(e.key) for e in events) + 4, max_name_column_width)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4,
                       max_shapes_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    left: set = set()
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    src_width = 0
    if stacks:
        src_width = min(max(len(f) for s in stacks for f in s) + 4, max_src_column_width)
        headers.append("Source Location")
        widths.append(src_width)
        left.add(len(headers) - 1)
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total_self = sum(e.self_cpu_time_total for e in events)

    def trim_path(path: str) -> str:
        if len(path) > src_width:
            path = path[len(path) - src_width:]
            path = "..." + path[3:] if len(path) > 3 else path
        return path

    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, _pad_row(headers, widths, left), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name, _share(e.self_cpu_time_total, total_self),
               _override_unit(e.self_cpu_time_total, e.self_cpu_time_total_str, time_unit),
               _share(e.cpu_time_total, total_self),
               _override_unit(e.cpu_time_total, e.cpu_time_total_str, time_unit),
               _override_unit(e.cpu_time, e.cpu_time_str, time_unit)]
        if profile_memory:
            row += [format_memory(e.cpu_memory_usage), format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            row.append(str(e.input_shapes)[:shapes_width])
        if stacks:
            row.append(trim_path(e.stack[0]) if e.stack else "")
        lines.append(_pad_row(row, widths, left))
        if stacks:
            blank = [""] * (len(headers) - 1)
            lines += [_pad_row(blank + [trim_path(f)], widths, left) for f in e.stack[1:]]
            lines.append(_pad_row(blank + [""], widths, left))
    lines += [separator, "Self CPU time total: "
              + _override_unit(total_self, format_time(total_self), time_unit)]
    return "\n".join(lines) + "\n"


def _trace_event(e: FunctionEvent, pid: int, base_us: float, index: int) -> dict:
    args: dict = {"External id": e.id, "Ev Idx": index}
    if e.input_shapes:
        args["Input Dims"] = e.input_shapes
        args["Input type"] = e.input_types
    if e.stack:
        args["Call stack"] = ";".join(e.stack)
    return {"ph": "X", "cat": "user_annotation" if e.is_user_annotation else "cpu_op",
            "name": e.name, "pid": pid, "tid": e.thread, "ts": base_us + e.start_us,
            "dur": e.cpu_time_total, "args": args}


def chrome_trace(events: list, base_ns: int | None = None) -> dict:
    """The Chrome trace object of ``events`` (``traceEvents`` of complete ``X`` events,
    timestamps in microseconds)."""
    pid = os.getpid()
    base_ns = time.time_ns() if base_ns is None else base_ns
    base_us = base_ns / 1000.0
    threads = sorted({e.thread for e in events})
    meta = [{"ph": "M", "name": "process_name", "ts": base_us, "pid": pid, "tid": 0,
             "args": {"name": "python"}},
            {"ph": "M", "name": "process_labels", "ts": base_us, "pid": pid, "tid": 0,
             "args": {"labels": "CPU"}}]
    meta += [{"ph": "M", "name": "thread_name", "ts": base_us, "pid": pid, "tid": t,
              "args": {"name": f"thread {t} (python)"}} for t in threads]
    trace = [_trace_event(e, pid, base_us, i) for i, e in enumerate(events)]
    return {"schemaVersion": 1, "deviceProperties": [], "record_shapes": 0,
            "host_name": socket.gethostname(), "displayTimeUnit": "ms",
            "baseTimeNanoseconds": base_ns, "traceEvents": meta + trace,
            "traceName": ""}


def write_chrome_trace(events: list, path: str, base_ns: int | None = None) -> None:
    data = chrome_trace(events, base_ns)
    data["traceName"] = str(path)
    data["record_shapes"] = int(any(e.input_shapes for e in events))
    text = json.dumps(data)
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as f:
            f.write(text)
    else:
        with open(path, "w") as f:
            f.write(text)


def current_thread_id() -> int:
    return threading.get_native_id()
