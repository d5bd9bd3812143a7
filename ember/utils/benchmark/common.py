"""``Measurement`` (a Timer's result: times per run, median, IQR, PyTorch's repr) and
``TaskSpec`` (what was timed), with the unit helpers ``Compare`` uses."""
from __future__ import annotations

import collections
import contextlib
import dataclasses
import math
import textwrap
from typing import Any, Iterable, Iterator

from ...backend.parallel import get_num_threads, set_num_threads

__all__ = ["TaskSpec", "Measurement", "select_unit", "unit_to_english", "trim_sigfig",
           "ordered_unique", "set_torch_threads"]

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25
_MIN_CONFIDENCE_INTERVAL = 25e-9  # no timer resolves better than this
_MAX_SIGNIFICANT_FIGURES = 4


def _quantile(ordered: tuple, q: float) -> float:
    """Linear interpolation between the closest ranks (NumPy's and PyTorch's default)."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclasses.dataclass(init=True, repr=False, eq=True, frozen=True)
class TaskSpec:
    """What a Timer measures (its statement, setup and labels).

    >>> TaskSpec("x + y", "pass", label="add", sub_label="small").title
    'add: small'
    """
    stmt: str
    setup: str
    global_setup: str = ""
    label: str | None = None
    sub_label: str | None = None
    description: str | None = None
    env: str | None = None
    num_threads: int = 1

    @property
    def title(self) -> str:
        suffix = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + suffix
        if "\n" not in self.stmt:
            return self.stmt + suffix
        sub = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{sub}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self) -> str:
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self) -> str:
        """The lines a Measurement's repr starts with."""
        parts = [self.title, self.description or "", self.setup_str()]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts if p)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


@dataclasses.dataclass(init=True, repr=False)
class Measurement:
    """Timings of one statement: ``raw_times`` are the durations of blocks of
    ``number_per_run`` runs; ``times``, ``mean``, ``median`` and ``iqr`` are per run, in
    seconds.

    >>> m = Measurement(10, [1e-5, 2e-5, 3e-5, 4e-5], TaskSpec("f()", "pass"))
    >>> m.median, m.mean, round(m.iqr, 12)
    (2.5e-06, 2.5e-06, 1.5e-06)
    """
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict | None = None

    def __post_init__(self) -> None:
        self._sorted_times: tuple = ()
        self._warnings: tuple = ()
        self._median = self._mean = self._p25 = self._p75 = -1.0

    def __getattr__(self, name: str) -> Any:
        if name in _TASKSPEC_FIELDS:  # the task's fields read through
            return getattr(self.__dict__["task_spec"], name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self) -> list:
        return [t / self.number_per_run for t in self.raw_times]

    @property
    def median(self) -> float:
        self._lazy_init()
        return self._median

    @property
    def mean(self) -> float:
        self._lazy_init()
        return self._mean

    @property
    def iqr(self) -> float:
        self._lazy_init()
        return self._p75 - self._p25

    @property
    def significant_figures(self) -> int:
        """A rough count of trustworthy digits, from the spread of the middle half."""
        self._lazy_init()
        n = len(self._sorted_times)
        middle = self._sorted_times[n // 4:math.ceil(3 * n / 4)]
        mean = sum(middle) / len(middle)
        std = math.sqrt(sum((t - mean) ** 2 for t in middle) / len(middle))
        interval = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / interval))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self) -> bool:
        self._lazy_init()
        return bool(self._warnings)

    def _lazy_init(self) -> None:
        if not self.raw_times or self._sorted_times:
            return
        ordered = tuple(sorted(self.times))
        self._sorted_times = ordered
        self._median = _quantile(ordered, 0.5)
        self._mean = sum(ordered) / len(ordered)
        self._p25 = _quantile(ordered, 0.25)
        self._p75 = _quantile(ordered, 0.75)
        if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
            self._add_warning("This suggests significant environmental influence.")
        elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
            self._add_warning("This could indicate system fluctuation.")

    def _add_warning(self, message: str) -> None:
        relative = self.iqr / self.median * 100
        self._warnings += (f"  WARNING: Interquartile range is {relative:.1f}% of the median "
                           f"measurement.\n           {message}",)

    def meets_confidence(self, threshold: float = _IQR_WARN_THRESHOLD) -> bool:
        return self.iqr / self.median < threshold

    @property
    def title(self) -> str:
        return self.task_spec.title

    @property
    def env(self) -> str:
        return "Unspecified env" if self.task_spec.env is None else self.task_spec.env

    @property
    def as_row_name(self) -> str:
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self) -> str:
        self._lazy_init()
        n = len(self._sorted_times)
        unit, scale = select_unit(self._median)
        lines = [f"<{type(self).__module__}.{type(self).__name__} object at {hex(id(self))}>",
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {self.iqr / scale:.2f} {unit} ({self._p25 / scale:.2f} "
                         f"to {self._p75 / scale:.2f})")
        threads = self.num_threads
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {threads} "
                     f"thread{'s' if threads > 1 else ''}")
        lines.append("\n".join(self._warnings))
        return "\n".join(line for line in "\n".join(lines).strip().splitlines())

    @staticmethod
    def merge(measurements: Iterable["Measurement"]) -> list:
        """Measurements of the same task joined into one (times per run, number 1)."""
        groups: collections.OrderedDict = collections.OrderedDict()
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t: float) -> tuple[str, float]:
    """The unit (``ns``, ``us``, ``ms``, ``s``) that puts ``t`` seconds at 1 to 999.

    >>> select_unit(2.5e-6)
    ('us', 1e-06)
    """
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u: str) -> str:
    """The English name of a unit.

    >>> unit_to_english("us")
    'microsecond'
    """
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x: float, n: int) -> float:
    """``x`` rounded to ``n`` significant figures.

    >>> trim_sigfig(3.14159, 2)
    3.1
    """
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    magnitude = math.ceil(math.log10(abs(x)))
    scale = 10 ** (magnitude - n)
    return float(round(x / scale) * scale)


def ordered_unique(elements: Iterable) -> list:
    """The distinct elements, in the order they first appear.

    >>> ordered_unique([3, 1, 3, 2])
    [3, 1, 2]
    """
    return list(dict.fromkeys(elements))


@contextlib.contextmanager
def set_torch_threads(n: int) -> Iterator[None]:
    """ember's intra-op thread count set to ``n`` inside the block."""
    prior = get_num_threads()
    try:
        set_num_threads(n)
        yield
    finally:
        set_num_threads(prior)
