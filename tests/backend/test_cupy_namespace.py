"""The stand-ins CupyNamespace gives a CuPy lacking NumPy names ember's ops call, checked
on NumPy with those names taken away (no CuPy needed)."""
import contextlib
import types

import numpy as np
import pytest

from ember.backend import cupy_backend
from ember.backend.cupy_backend import FILLS, CupyNamespace, _raising_linalg


@contextlib.contextmanager
def _errstate(**kwargs):  # cupyx.errstate's stand-in: records what it was asked for
    _errstate.calls.append(kwargs)
    yield


_errstate.calls = []


@pytest.fixture
def bare(monkeypatch):
    """NumPy's namespace without the names FILLS covers, wrapped as CuPy would be."""
    module = types.SimpleNamespace(**{k: getattr(np, k) for k in dir(np)
                                      if not k.startswith("__") and k not in FILLS})
    monkeypatch.setitem(cupy_backend.OVERRIDES, "linalg",
                        lambda cupy: _raising_linalg(cupy, _errstate))
    return CupyNamespace(module)


def test_own_functions_pass_through(bare):
    assert bare.exp is np.exp and bare.linalg.inv.__wrapped__ is np.linalg.inv
    with pytest.raises(AttributeError, match="CuPy has no 'no_such_function'"):
        bare.no_such_function


def test_errstate_is_a_context(bare):
    with bare.errstate(divide="ignore", invalid="ignore"):
        pass


def test_infinity_tests(bare):
    x = np.array([np.inf, -np.inf, 1.0, np.nan])
    np.testing.assert_array_equal(bare.isposinf(x), np.isposinf(x))
    np.testing.assert_array_equal(bare.isneginf(x), np.isneginf(x))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_put_along_axis(bare, axis):
    rng = np.random.default_rng(0)
    index = rng.integers(0, 3, (2, 4)) if axis == 0 else rng.integers(0, 4, (3, 2))
    values = rng.standard_normal(index.shape)
    want, got = np.zeros((3, 4)), np.zeros((3, 4))
    np.put_along_axis(want, index, values, axis)
    bare.put_along_axis(got, index, values, axis)
    np.testing.assert_array_equal(got, want)


def test_broadcast_shapes(bare):
    assert bare.broadcast_shapes((2, 1), (3,)) == (2, 3)


def test_linalg_runs_under_errstate_raise(bare):
    """CuPy's linalg reports singular / not positive-definite input only under
    cupyx.errstate(linalg="raise"); ember's namespace calls every linalg function so."""
    _errstate.calls = []
    np.testing.assert_array_equal(bare.linalg.inv(2 * np.eye(2)), 0.5 * np.eye(2))
    assert _errstate.calls == [{"linalg": "raise"}]
    assert bare.linalg.LinAlgError is np.linalg.LinAlgError
    with pytest.raises(np.linalg.LinAlgError):
        bare.linalg.cholesky(-np.eye(2))
