"""``Timer``: PyTorch's benchmark timer (timeit with warmup, a fixed thread count and
replicates) for Python statements."""
from __future__ import annotations

import enum
import sys
import textwrap
import timeit
from typing import Any, Callable

from ..._tensor import Tensor
from .common import Measurement, TaskSpec, set_torch_threads

__all__ = ["Timer", "Language", "timer"]

timer = timeit.default_timer


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Times ``stmt`` (Python source) after running ``setup`` once, with ``globals`` as its
    namespace (``torch`` and ``ember`` are ember unless given) and ``num_threads`` intra-op
    threads; ``label``, ``sub_label``, ``description`` and ``env`` label the
    ``Measurement`` for ``Compare``.

    >>> import ember
    >>> from ember.utils.benchmark import Timer
    >>> t = Timer("x * 2", globals={"x": ember.ones(8)}, label="mul")
    >>> m = t.timeit(100)
    >>> m.number_per_run, len(m.times), m.title
    (100, 1, 'mul')
    """

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict | None = None,
                 label: str | None = None, sub_label: str | None = None,
                 description: str | None = None, env: str | None = None,
                 num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("ember's Timer times Python statements only (it "
                                      "compiles no C++)")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        self._globals = dict(globals or {})
        package = sys.modules[Tensor.__module__.split(".")[0]]  # the ember package
        self._globals.setdefault("torch", package)
        self._globals.setdefault("ember", package)
        stmt, setup = _tidy(stmt), _tidy(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                   label=label, sub_label=sub_label, description=description,
                                   env=env, num_threads=num_threads)
        self._language = Language.PYTHON

    def _timeit(self, number: int) -> float:
        # no real statement runs in under a nanosecond; this also keeps ratios finite
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> Measurement:
        """Runs ``stmt`` ``number`` times (after a warmup of ``number // 100``, at least 2):
        one measurement.
        """
        with set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return Measurement(number_per_run=number, raw_times=[self._timeit(number)],
                               task_spec=self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time: float) -> int:
        """Runs per block: enough that the timer's own cost is negligible (also the warmup)."""
        with set_torch_threads(self._task_spec.num_threads):
            overheads = sorted(self._timeit(0) for _ in range(5))
            overhead = overheads[2]
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def _loop(self, number: int, stop: Callable[[list], bool], min_run_time: float,
              max_run_time: float | None, callback: Callable | None) -> list:
        total, can_stop, times = 0.0, False, []
        with set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def blocked_autorange(self, callback: Callable[[int, float], Any] | None = None,
                          min_run_time: float = 0.2) -> Measurement:
        """Blocks of a fixed number of runs (chosen so the timer's cost is negligible),
        repeated until ``min_run_time`` seconds have been spent; ``callback(number, time)``
        after each block.

        >>> import ember
        >>> from ember.utils.benchmark import Timer
        >>> m = Timer("x + 1", globals={"x": ember.ones(4)}).blocked_autorange(min_run_time=0.01)
        >>> sum(m.raw_times) >= 0.01
        True
        """
        number = self._estimate_block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, None, callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01,
                           max_run_time: float = 10.0,
                           callback: Callable[[int, float], Any] | None = None) -> Measurement:
        """Blocks as in ``blocked_autorange`` until more than 3 were timed, ``min_run_time``
        has passed and IQR / median is under ``threshold`` (or ``max_run_time`` has passed).

        >>> import ember
        >>> from ember.utils.benchmark import Timer
        >>> m = Timer("x + 1", globals={"x": ember.ones(4)}).adaptive_autorange(max_run_time=0.1)
        >>> len(m.times) >= 4 or sum(m.raw_times) > 0.1
        True
        """
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times: list) -> bool:
            if len(times) <= 3:
                return False
            return Measurement(number, times, self._task_spec).meets_confidence(threshold)
        times = self._loop(number, stop, min_run_time, max_run_time, callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def collect_callgrind(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ember's Timer does not run Callgrind (collect_callgrind)")



def _tidy(code: str) -> str:
    """Source written as an indented block string, dedented without its first newline and
    trailing space (what runs is unchanged; the repr reads better), as PyTorch does."""
    code = textwrap.dedent(code)
    return (code[1:] if code.startswith("\n") else code).rstrip()
