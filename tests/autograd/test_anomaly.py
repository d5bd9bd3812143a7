"""Anomaly detection with custom Functions: NaN in backward raises and warns with the
traceback of the forward call, the mode is scoped, and user exceptions pass unchanged."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import Function

from tests.autograd.custom_functions import random_pair as _pair, t64


class NaNBack(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


def _make_nan_output(x):
    return NaNBack.apply(x)          # the forward call the anomaly warning must point at


def _forward_line():
    import inspect
    src, start = inspect.getsourcelines(_make_nan_output)
    return start + 1


def test_detect_anomaly_nan_raises_and_warns_with_forward_traceback():
    x = t64([1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = _make_nan_output(x)
            with pytest.raises(RuntimeError, match=r"^Function 'NaNBackBackward' returned nan "
                                                   r"values in its 0th output.$"):
                y.sum().backward()
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any(m.startswith("Anomaly Detection has been enabled.") for m in messages)
    trace = next(m for m in messages if m.startswith("Error detected in NaNBackBackward."))
    assert "Traceback of forward call that caused the error:" in trace
    assert f'File "{__file__}", line {_forward_line()}, in _make_nan_output' in trace
    assert "return NaNBack.apply(x)" in trace


def test_detect_anomaly_is_scoped():
    x = t64([1.0])
    with pytest.warns(UserWarning):
        with ember.autograd.detect_anomaly():
            assert ember.autograd.is_anomaly_enabled()
    assert not ember.autograd.is_anomaly_enabled()
    NaNBack.apply(x).sum().backward()              # no check outside: NaN passes through
    assert np.isnan(x.grad.numpy()).all()


def test_set_detect_anomaly_true():
    x = t64([1.0])
    ember.autograd.set_detect_anomaly(True)
    try:
        assert ember.autograd.is_anomaly_enabled()
        y = _make_nan_output(x)
        with pytest.warns(UserWarning, match="Error detected in NaNBackBackward"):
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                y.sum().backward()
    finally:
        ember.autograd.set_detect_anomaly(False)
    assert not ember.autograd.is_anomaly_enabled()


def test_anomaly_nan_index_names_the_input():
    class SecondNaN(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g * float("nan")

    a, b = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="^Function 'SecondNaNBackward' returned nan "
                                                   "values in its 1th output.$"):
                SecondNaN.apply(a, b).sum().backward()


def test_anomaly_mode_keeps_user_exceptions_unchanged():
    err = LookupError("from backward")

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise err

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            with pytest.raises(LookupError) as info:
                Boom.apply(t64([1.0])).sum().backward()
    assert info.value is err
    assert any("Error detected in BoomBackward" in str(w.message) for w in caught)
