"""Anomaly detection with custom Functions, ember vs PyTorch: the NaN error, the forward-trace
warning, ``set_detect_anomaly`` and ``is_anomaly_enabled``."""
import re
import warnings

import numpy as np

from tests.parity.autograd.function_builders import (make_function as _fn, on_both, t64,
                                                     to_numpy as _np)
from tests.parity.compare import error_of


def test_anomaly_nan_error_and_forward_trace_warning():
    def run(lib):
        F = _fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g * float("nan"))
        x = t64(lib, [1.0])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = F.apply(x)
                err = error_of(lambda: y.sum().backward())
        msgs = [str(w.message) for w in caught]
        enabled = [m.replace("torch", "ember") for m in msgs if m.startswith("Anomaly")]
        trace = [m for m in msgs if m.startswith("Error detected in")]
        return err, enabled, len(trace) == 1 and "y = F.apply(x)" in trace[0]
    (t_err, t_en, t_tr), (e_err, e_en, e_tr) = on_both(run)
    assert e_err == t_err
    assert re.fullmatch(r"Function '\w+Backward' returned nan values in its 0th output.",
                        e_err[1])
    assert e_en == t_en
    assert t_tr and e_tr


def test_set_detect_anomaly():
    def run(lib):
        F = _fn(lib, lambda ctx, x: x * 2, lambda ctx, g: g * float("nan"))
        lib.autograd.set_detect_anomaly(True)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                err = error_of(lambda: F.apply(t64(lib, [1.0])).sum().backward())
        finally:
            lib.autograd.set_detect_anomaly(False)
        x = t64(lib, [1.0])
        F.apply(x).sum().backward()          # off again: NaN passes through silently
        return err, bool(np.isnan(_np(x.grad)).all())
    t, e = on_both(run)
    assert e == t


def test_is_anomaly_enabled_top_level():
    def run(lib):
        lib.autograd.set_detect_anomaly(True)
        try:
            on = lib.is_anomaly_enabled()
        finally:
            lib.autograd.set_detect_anomaly(False)
        return on, lib.is_anomaly_enabled()
    t, e = on_both(run)
    assert e == t == (True, False)
