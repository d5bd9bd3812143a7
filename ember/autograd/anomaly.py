"""Anomaly detection: find the forward op behind a NaN or a failing backward.

While enabled, every recorded node keeps the stack of the forward call that
created it; the engine checks each node's gradients for NaN and, when a node
fails, warns with that forward traceback.

>>> import ember
>>> with ember.autograd.detect_anomaly():
...     pass
"""
import traceback
import warnings

from ..backend import get_array_module
from ..backend.dtypes import is_float_np
from .grad_mode import _DecoratorContextManager


class _AnomalyState:
    # Process-wide, as in PyTorch: enabling detection in one thread covers backward
    # passes run by every thread.
    enabled = False
    check_nan = True


_state = _AnomalyState()


def is_enabled():
    return _state.enabled


def set_anomaly_enabled(enabled, check_nan=True):
    """Turns anomaly detection on or off for the process (``check_nan``: also check every
    gradient for NaN), as ``torch.set_anomaly_enabled``.

    >>> import ember
    >>> ember.set_anomaly_enabled(False); ember.is_anomaly_enabled()
    False
    """
    _state.enabled, _state.check_nan = bool(enabled), check_nan


def is_anomaly_enabled():
    return _state.enabled


def is_anomaly_check_nan_enabled():
    return _state.check_nan


def record_forward_trace(node):
    node._forward_trace = traceback.format_stack()[:-3]


def warn_forward_trace(node):
    trace = node.__dict__.get("_forward_trace")
    if trace:
        warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                      f"the error:\n{''.join(trace)}", UserWarning, stacklevel=2)


def check_nan(node, outputs):
    """Raise if a node's gradients contain NaN (PyTorch's wording)."""
    if not _state.check_nan:
        return
    for i, g in enumerate(outputs):
        d = getattr(g, "_data", g)  # gradients in flight may be bare arrays
        if d is not None and is_float_np(d.dtype) and bool(get_array_module(d).isnan(d).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th "
                               "output.")


class detect_anomaly(_DecoratorContextManager):
    """Context manager (and decorator) that enables anomaly detection."""

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the runtime "
                      "and should only be enabled for debugging.", UserWarning, stacklevel=2)

    def __enter__(self):
        self.prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev

    def clone(self):
        new = object.__new__(type(self))
        new.check_nan = self.check_nan
        return new


class set_detect_anomaly:
    """``set_detect_anomaly(True)`` turns detection on now (or for a ``with`` block)."""

    def __init__(self, mode, check_nan=True):
        self.prev = (_state.enabled, _state.check_nan)
        _state.enabled, _state.check_nan = bool(mode), check_nan

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev
