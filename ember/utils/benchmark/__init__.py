"""``ember.utils.benchmark``: PyTorch's benchmark utilities for Python statements.

``Timer`` times a statement (``timeit``, ``blocked_autorange``, ``adaptive_autorange``)
with warmup and a fixed intra-op thread count, ``Measurement`` holds the times (per run:
``mean``, ``median``, ``iqr``) and prints as PyTorch prints it, ``Compare`` lays many
measurements out as a table. Inside statements ``torch`` and ``ember`` name ember unless
``globals`` says otherwise.

>>> import ember
>>> from ember.utils import benchmark
>>> m = benchmark.Timer("a @ b", globals={"a": ember.ones(4, 4), "b": ember.ones(4, 4)}
...                     ).timeit(50)
>>> m.mean > 0
True
"""
from .common import (Measurement, TaskSpec, ordered_unique, select_unit,  # noqa: F401
                     set_torch_threads, trim_sigfig, unit_to_english)
from .compare import Colorize, Compare  # noqa: F401
from .timer import Language, Timer, timer  # noqa: F401

__all__ = ["Timer", "Measurement", "TaskSpec", "Compare", "Colorize", "Language",
           "select_unit", "trim_sigfig", "unit_to_english", "ordered_unique",
           "set_torch_threads", "timer"]
