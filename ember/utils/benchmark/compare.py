"""``Compare``: measurements as tables, one per label; a row per (threads, env, sub_label
or stmt), a column per description, medians in one unit, as PyTorch prints them."""
from __future__ import annotations

import enum
import math

from .common import Measurement, ordered_unique, select_unit, trim_sigfig, unit_to_english

__all__ = ["Compare", "Colorize"]

_BEST, _GOOD, _BAD, _VERY_BAD = "\033[92m", "\033[34m", "\033[2m\033[91m", "\033[31m"
_BOLD, _END = "\033[1m", "\033[0m"


class Colorize(enum.Enum):
    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _leading_digits(value: float) -> int:
    return math.ceil(math.log10(value))


def _color(text: str, value: float, best: float) -> str:
    if value <= best * 1.01 or value <= best + 100e-9:
        return _BEST + _BOLD + text + _END * 2
    if value <= best * 1.1:
        return _GOOD + _BOLD + text + _END * 2
    if value >= best * 5:
        return _VERY_BAD + _BOLD + text + _END * 2
    if value >= best * 2:
        return _BAD + text + _END * 2
    return text


class _Table:
    """One label's measurements laid out."""

    def __init__(self, results: list, colorize: Colorize, trim: bool, highlight: bool) -> None:
        self.results = results
        self.label = results[0].label
        self.unit, self.scale = select_unit(min(r.median for r in results))
        self.colorize, self.trim = colorize, trim
        self.highlight = highlight and any(r.has_warnings for r in results)
        rows = ordered_unique((r.num_threads, r.env, r.as_row_name) for r in results)
        self.rows = sorted(rows, key=lambda k: k[:2])  # stable: statements keep their order
        self.columns = ordered_unique(r.description for r in results)
        self.cells = {(r.num_threads, r.env, r.as_row_name, r.description): r for r in results}

    def _template(self, column: str) -> str:
        ms = [self.cells.get((*row, column)) for row in self.rows]
        digits = [_leading_digits(m.median / self.scale) for m in ms if m is not None]
        decimals = (min(max(m.significant_figures - _leading_digits(m.median / self.scale), 0)
                        for m in ms if m is not None) if self.trim else 1)
        width = max(digits) + decimals + (1 if decimals else 0)
        return f"{{:>{width}.{decimals}f}}"

    def _cell(self, m: Measurement | None, template: str) -> str:
        if m is None:
            return " " * len(template.format(1.0))
        value = m.median / self.scale
        if self.trim:
            value = trim_sigfig(value, m.significant_figures)
        text = template.format(value)
        if self.highlight:
            spread = f" (! {m.iqr / m.median * 100:.0f}%)" if m.has_warnings else ""
            text += f"{spread:>7}"
        return text

    def render(self) -> str:
        templates = {c: self._template(c) for c in self.columns}
        envs = {r.env for r in self.results}
        show_env = len(envs) > 1
        env_width = max(len(e) for e in envs) if show_env else 0
        body = []
        prior_env = prior_threads = None
        for threads, env, name in self.rows:
            if threads != prior_threads:  # each thread group shows its first env again
                prior_env, prior_threads = None, threads
            env_text = f"({env})" if show_env and env != prior_env else ""
            prior_env = env
            body.append(["  " + env_text.ljust(env_width + 4) + name]
                        + [self._cell(self.cells.get((threads, env, name, c)), templates[c])
                           for c in self.columns])
        header = [""] + [c or "" for c in self.columns]
        widths = [max(len(r[i]) for r in [header] + body) for i in range(len(header))]
        lines = ["  |  ".join(h.center(w) for h, w in zip(header, widths))]
        overall = len(lines[0])
        prior_threads = None
        for (threads, env, name), cells in zip(self.rows, body):
            if threads != prior_threads:
                lines.append(f"{threads} threads: ".ljust(overall, "-"))
                prior_threads = threads
            lines.append("  |  ".join(self._row_cells(threads, env, name, cells, widths)))
        note = ("(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
                if self.highlight else "")
        title = (" " + (self.label or "") + " ").center(overall - 2, "-")
        return (f"[{title}]\n" + "\n".join(lines) + "\n\nTimes are in "
                f"{unit_to_english(self.unit)}s ({self.unit}).\n{note}")

    def _row_cells(self, threads: int, env: str, name: str, cells: list, widths: list) -> list:
        out = [cells[0].ljust(widths[0])]
        row_ms = [self.cells.get((threads, env, name, c)) for c in self.columns]
        for i, (text, m) in enumerate(zip(cells[1:], row_ms)):
            text = text.center(widths[i + 1])
            if self.colorize != Colorize.NONE and m is not None:
                if self.colorize == Colorize.ROWWISE:
                    best = min(x.median for x in row_ms if x is not None)
                else:
                    best = min(r.median for (t, *_), r in
                               ((k, v) for k, v in self.cells.items()
                                if k[3] == self.columns[i]) if t == threads)
                text = _color(text, m.median, best)
            out.append(text)
        return out


class Compare:
    """Measurements side by side: ``print(Compare(results))``.

    >>> import ember
    >>> from ember.utils.benchmark import Compare, Measurement, TaskSpec
    >>> a = Measurement(1, [2e-6, 2e-6], TaskSpec("x + y", "pass", label="add",
    ...                                           sub_label="n=10", description="ember"))
    >>> b = Measurement(1, [3e-6, 3e-6], TaskSpec("x * y", "pass", label="add",
    ...                                           sub_label="n=10", description="mul"))
    >>> for line in str(Compare([a, b])).splitlines():
    ...     print(line)
    [---------- add -----------]
                |  ember  |  mul
    1 threads: -----------------
          n=10  |   2.0   |  3.0
    <BLANKLINE>
    Times are in microseconds (us).
    """

    def __init__(self, results: list) -> None:
        self._results: list = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def extend_results(self, results: list) -> None:
        """Adds measurements (each must be a ``Measurement``)."""
        for r in results:
            if not isinstance(r, Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} "
                                 "instead.")
        self._results.extend(results)

    def trim_significant_figures(self) -> None:
        """Prints each median to its estimated significant figures."""
        self._trim_significant_figures = True

    def colorize(self, rowwise: bool = False) -> None:
        """Colors each cell by how it compares with the best of its column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self) -> None:
        """Marks measurements with a high variance with their IQR / median."""
        self._highlight_warnings = True

    def print(self) -> None:
        print(str(self))

    def __str__(self) -> str:
        merged = Measurement.merge(self._results)
        groups: dict = {}
        for m in merged:
            groups.setdefault(m.label, []).append(m)
        return "\n".join(_Table(g, self._colorize, self._trim_significant_figures,
                                self._highlight_warnings).render() for g in groups.values())
