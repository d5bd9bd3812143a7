"""``repr(tensor)`` laid out like PyTorch's: ``tensor([1.5000, 2.0000], requires_grad=True)``,
with PyTorch's print options (``set_printoptions``)."""
import math

import numpy as np

from .backend import to_host
from .backend.dtypes import get_default_dtype, int64, bool_, _BY_NUMPY
from .backend.float8 import cast_float8


class _PrintOptions:
    precision = 4
    threshold = 1000
    edgeitems = 3
    linewidth = 80
    sci_mode = None


PRINT_OPTS = _PrintOptions()

_PROFILES = {"default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
             "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
             "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80)}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set how tensors print, as PyTorch's ``set_printoptions``: ``profile`` ("default",
    "short", "full") first, then the options given; ``sci_mode`` is always set (None: chosen
    per tensor).

    >>> import ember
    >>> ember.set_printoptions(precision=2); ember.tensor([1.23456])
    tensor([1.23])
    >>> ember.set_printoptions(profile="default")
    """
    if profile in _PROFILES:
        for name, value in _PROFILES[profile].items():
            setattr(PRINT_OPTS, name, value)
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            setattr(PRINT_OPTS, name, value)
    PRINT_OPTS.sci_mode = sci_mode


class _FloatFormatter:
    """PyTorch's float ``_Formatter``: the mode (integral, fixed, scientific) and the width
    come from the nonzero finite values only; integral values print as ``3.``."""

    def __init__(self, values, stats=None):
        precision = PRINT_OPTS.precision
        self.int_mode, self.sci_mode, self.width = True, False, 1
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64) \
            if stats is None else stats
        if finite.size:
            absv = np.abs(finite)
            big, small = absv.max(), absv.min()
            self.int_mode = bool(np.all(finite == np.ceil(finite)))
            self.sci_mode = (big / small > 1000.0 or big > 1.0e8 or small < 1.0e-4) \
                if PRINT_OPTS.sci_mode is None else PRINT_OPTS.sci_mode
            if self.sci_mode:
                widths = [len(f"{v:.{precision}e}") for v in finite.tolist()]
            elif self.int_mode:
                widths = [len(f"{v:.0f}") + 1 for v in finite.tolist()]
            else:
                widths = [len(f"{v:.{precision}f}") for v in finite.tolist()]
            self.width = max(widths)

    def __call__(self, v):
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            text = f"{v:.{precision}e}"
        elif self.int_mode:
            text = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            text = f"{v:.{precision}f}"
        return text.rjust(self.width)


class _PlainFormatter:
    """Integers and bools: ``str`` of each value, right-aligned to the widest."""

    def __init__(self, values, to_text):
        self.to_text = to_text
        self.width = max(len(to_text(v)) for v in values.tolist())

    def __call__(self, v):
        return self.to_text(v).rjust(self.width)


class _ComplexFormatter:
    """``1.5000+2.0000j``: the real and imaginary parts formatted each on their own, the
    imaginary part's padding dropped (PyTorch's layout)."""

    def __init__(self, values):
        self.real, self.imag = _FloatFormatter(values.real), _FloatFormatter(values.imag)
        self.width = self.real.width + self.imag.width + 1

    def __call__(self, v):
        v = complex(v)
        imag = (self.imag(v.imag) + "j").lstrip()
        return self.real(v.real) + (imag if imag[0] in "+-" else "+" + imag)


def _summarized_values(a, summarize):
    if not summarize or a.ndim == 0:
        return a.reshape(-1)
    parts = []
    for i in _edge_indices(a.shape[0], summarize):
        parts.append(_summarized_values(a[i], summarize))
    return np.concatenate(parts) if parts else a.reshape(-1)


def _edge_indices(n, summarize):
    edge = PRINT_OPTS.edgeitems
    if summarize and n > 2 * edge:
        return list(range(edge)) + list(range(n - edge, n))
    return list(range(n))


def _format_array(a, fmt, indent, summarize):
    edge = PRINT_OPTS.edgeitems
    if a.ndim == 0:
        return fmt(a.item())
    if a.ndim == 1:
        items = [fmt(a[i].item()) for i in _edge_indices(a.shape[0], summarize)]
        if summarize and not edge:
            items = ["..."]
        elif summarize and a.shape[0] > 2 * edge:
            items.insert(edge, " ...")
        per_line = max(1, int(math.floor((PRINT_OPTS.linewidth - indent) / (fmt.width + 2))))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = [_format_array(a[i], fmt, indent + 1, summarize)
            for i in _edge_indices(a.shape[0], summarize)]
    if summarize and a.shape[0] > 2 * edge:
        rows.insert(edge, "...")
    sep = "," + "\n" * (a.ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(rows) + "]"


def _formatter(values, dt):
    if dt.category == 3:  # complex
        return _ComplexFormatter(values)
    if dt.name == "float8_e8m0fnu":
        # PyTorch's statistics skip its zero (2 ** -127) but keep NaN (isfinite is True there),
        # which then turns the integral and scientific modes off
        values = values.astype(np.float64)
        return _FloatFormatter(values, values[values != 2.0 ** -127])
    if dt.is_floating_point:
        return _FloatFormatter(values.astype(np.float64))  # bfloat16 prints through float64
    if dt is bool_:
        return _PlainFormatter(values, lambda v: str(bool(v)))
    return _PlainFormatter(values, lambda v: str(int(v)))


def _meta_repr(t):
    """``tensor(..., device='meta', size=(3, 4))``: no values to show; a dtype other than
    the default one is named (int64 and bool too, unlike tensors with data)."""
    shape = t._data.shape
    suffixes = ["device='meta'",
                f"size=({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''})"]
    dt = _BY_NUMPY[t._data.dtype]
    if dt is not get_default_dtype():
        suffixes.append(f"dtype={dt!r}")
    fn = t.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    return "tensor(..., " + ", ".join(suffixes) + ")"  # one line, however long (PyTorch's)


def tensor_repr(t):
    if t.is_meta:
        return _meta_repr(t)
    a = to_host(t._data)
    dt = _BY_NUMPY[a.dtype]
    if dt.is_floating_point and a.itemsize == 1:  # float8 prints through float16, as
        # PyTorch's (but float8_e8m0fnu, whose 2 ** 127 float16 lacks)
        a = cast_float8(a, np.float32 if dt.name == "float8_e8m0fnu" else np.float16)
    elif dt.is_floating_point and a.dtype.kind != "f":
        a = a.astype(np.float32)  # bfloat16: NumPy's own float formatting needs a NumPy float
    cls = type(t)  # a subclass prints its own name, bar those that print as tensors
    prefix = "tensor(" if cls.__dict__.get("_repr_as_tensor") else f"{cls.__name__}("
    summarize = a.size > PRINT_OPTS.threshold
    suffixes = [] if a is t._data else _device_suffix(t)
    if a.size == 0:
        body = "[]"
        if a.shape != (0,):
            suffixes.append(f"size=({', '.join(map(str, a.shape))}{',' if a.ndim == 1 else ''})")
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(a.shape)}")
        fmt = _formatter(_summarized_values(a, summarize), dt)
        body = _format_array(a, fmt, len(prefix), summarize)
    default_complex = "complex128" if get_default_dtype().name == "float64" else "complex64"
    if dt is not get_default_dtype() and dt is not int64 and dt is not bool_ \
            and dt.name != default_complex:
        suffixes.append(f"dtype={dt!r}")
    elif a.size == 0 and dt is not get_default_dtype():
        suffixes.append(f"dtype={dt!r}")
    fn = t.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    fw = t._fw_grad
    if fw is not None and fw[0].open:  # a dual tensor of an open forward-mode level
        suffixes.append(f"tangent={fw[1]!r}")
    return _with_suffixes(prefix + body, suffixes, len(prefix))


def _device_suffix(t):
    """``device='cuda:0'`` for a tensor off the CPU (copied to the host to be printed)."""
    where = t.device
    return [] if where.type == "cpu" else [f"device='{where}'"]


def _with_suffixes(text, suffixes, indent):
    """``, dtype=...`` and the like after the values; a suffix that would pass the line
    width goes on a line of its own (PyTorch's layout)."""
    parts = [text]
    line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            line = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            line += len(suffix) + 2
    return "".join(parts) + ")"
