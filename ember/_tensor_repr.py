"""``repr(tensor)`` laid out like PyTorch's: ``tensor([1.5000, 2.0000], requires_grad=True)``.

The values are formatted on the host: NumPy on a ``to_host`` copy (the array itself when it
is NumPy's)."""
import numpy as np

from .backend import to_host
from .backend.dtypes import get_default_dtype, int64, bool_

_THRESHOLD = 1000
_EDGE = 3


def _float_formatter(values):
    """(format, width) following PyTorch's ``_Formatter``: the mode and the width come
    from the nonzero finite values only; integral values print as ``3.``."""
    finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
    if finite.size == 0:
        return (lambda v: _special(v) or f"{v:.0f}."), 1
    absv = np.abs(finite)
    big, small = absv.max(), absv.min()
    integral = bool(np.all(finite == np.ceil(finite)))
    sci = big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4
    if sci:
        fmt = lambda v: _special(v) or f"{v:.4e}"  # noqa: E731
    elif integral:
        fmt = lambda v: _special(v) or f"{v:.0f}."  # noqa: E731
    else:
        fmt = lambda v: _special(v) or f"{v:.4f}"  # noqa: E731
    width = max(len(fmt(v)) for v in finite.tolist())
    return fmt, width


def _special(v):
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _summarized_values(a, summarize):
    if not summarize or a.ndim == 0:
        return a.reshape(-1)
    parts = []
    for i in _edge_indices(a.shape[0], summarize):
        parts.append(_summarized_values(a[i], summarize))
    return np.concatenate(parts) if parts else a.reshape(-1)


def _edge_indices(n, summarize):
    if summarize and n > 2 * _EDGE:
        return list(range(_EDGE)) + list(range(n - _EDGE, n))
    return list(range(n))


def _format_array(a, fmt, width, indent, summarize):
    if a.ndim == 0:
        return fmt(a.item()).rjust(width)
    if a.ndim == 1:
        items = [fmt(a[i].item()).rjust(width) for i in _edge_indices(a.shape[0], summarize)]
        if summarize and a.shape[0] > 2 * _EDGE:
            items.insert(_EDGE, " ...")
        per_line = max(1, (80 - indent) // (width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_format_array(a[i], fmt, width, indent + 1, summarize)
            for i in _edge_indices(a.shape[0], summarize)]
    if summarize and a.shape[0] > 2 * _EDGE:
        rows.insert(_EDGE, "...")
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def tensor_repr(t):
    a = to_host(t._data)
    prefix = "tensor("
    summarize = a.size > _THRESHOLD
    suffixes = []
    if a.size == 0:
        body = "[]"
        if a.shape != (0,):
            suffixes.append(f"size=({', '.join(map(str, a.shape))}{',' if a.ndim == 1 else ''})")
    else:
        values = _summarized_values(a, summarize)
        if a.dtype.kind == "f":
            fmt, width = _float_formatter(values)
        else:
            fmt = (lambda v: str(bool(v))) if a.dtype.kind == "b" else (lambda v: str(int(v)))
            width = max(len(fmt(v)) for v in values.tolist())
        body = _format_array(a, fmt, width, len(prefix), summarize)
    dt = t.dtype
    if dt is not get_default_dtype() and dt is not int64 and dt is not bool_:
        suffixes.append(f"dtype={dt!r}")
    elif a.size == 0 and dt is not get_default_dtype():
        suffixes.append(f"dtype={dt!r}")
    fn = t.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return prefix + ", ".join([body] + suffixes) + ")"
