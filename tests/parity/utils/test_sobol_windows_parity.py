"""torch.quasirandom.SobolEngine and torch.signal.windows against PyTorch: Sobol' points bit
for bit (unscrambled, and scrambled with a seed), through draws, fast_forward and reset;
every window in float32 and float64, symmetric and periodic, and the errors."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

_DT = {"float32": (torch.float32, ember.float32), "float64": (torch.float64, ember.float64)}


def _engines(*args, **kw):
    return torch.quasirandom.SobolEngine(*args, **kw), ember.quasirandom.SobolEngine(*args, **kw)


def _same(t, e):
    assert str(t.dtype).split(".")[-1] == e.dtype.name
    np.testing.assert_array_equal(e.numpy(), t.numpy())


# a script of engine calls: ("draw", n, dtype), ("ff", n), ("reset",), ("base2", m)
SCRIPT = [("draw", 1, "float32"), ("draw", 6, "float64"), ("ff", 3), ("draw", 0, "float32"),
          ("draw", 22, "float32"), ("reset",), ("ff", 0), ("draw", 3, "float64"), ("reset",),
          ("ff", 5), ("draw", 1, "float64"), ("reset",), ("base2", 3), ("base2", 3),
          ("draw", 40, "float64")]


@pytest.mark.parametrize("dimension,scramble,seed", [
    (1, False, None), (3, False, None), (37, False, None), (2, True, 0), (6, True, 12345),
    (11, True, 2 ** 40 + 3), (4, True, -7), (5, False, 9)])
def test_engine_script_matches_bit_for_bit(dimension, scramble, seed):
    t, e = _engines(dimension, scramble=scramble, seed=seed)
    np.testing.assert_array_equal(e.sobolstate.numpy(), t.sobolstate.numpy())
    np.testing.assert_array_equal(e.shift.numpy(), t.shift.numpy())
    for step in SCRIPT:
        if step[0] == "draw":
            _same(t.draw(step[1], dtype=_DT[step[2]][0]), e.draw(step[1], dtype=_DT[step[2]][1]))
        elif step[0] == "base2":
            _same(t.draw_base2(step[1]), e.draw_base2(step[1]))
        elif step[0] == "ff":
            t.fast_forward(step[1])
            e.fast_forward(step[1])
        else:
            t.reset()
            e.reset()
        assert e.num_generated == t.num_generated
        np.testing.assert_array_equal(e.quasi.numpy(), t.quasi.numpy())
    assert repr(e) == repr(t)


def test_all_dimensions_direction_numbers():
    t, e = _engines(21201)
    np.testing.assert_array_equal(e.sobolstate.numpy(), t.sobolstate.numpy())
    _same(t.draw(9), e.draw(9))


def test_first_point_keeps_the_construction_dtype():
    previous = torch.get_default_dtype()
    t, e = _engines(3, scramble=True, seed=4)  # first point in float32: rounded
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    try:
        _same(t.draw(3), e.draw(3))
    finally:
        torch.set_default_dtype(previous)
        ember.set_default_dtype(ember.float32 if previous == torch.float32 else ember.float64)


def test_out_and_odd_counts():
    t, e = _engines(2)
    t_out, e_out = torch.zeros(1, dtype=torch.float64), ember.zeros(1, dtype=ember.float64)
    assert t.draw(5, out=t_out) is t_out and e.draw(5, out=e_out) is e_out
    _same(t_out, e_out)
    assert error_of(lambda: e.draw(1, dtype=ember.int64)) == \
        error_of(lambda: t.draw(1, dtype=torch.int64))  # past the first point: floats only
    t, e = _engines(2)
    _same(t.draw(1, dtype=torch.int64), e.draw(1, dtype=ember.int64))  # the first point
    t, e = _engines(3)
    for engine in (t, e):
        engine.draw(2)
        engine.fast_forward(-5)  # PyTorch takes it: the count goes negative
    _same(t.draw(7), e.draw(7))
    assert e.num_generated == t.num_generated


@pytest.mark.parametrize("call", [
    lambda lib: lib.quasirandom.SobolEngine(0),
    lambda lib: lib.quasirandom.SobolEngine(21202),
    lambda lib: lib.quasirandom.SobolEngine(2.5),
    lambda lib: lib.quasirandom.SobolEngine(2, scramble=True, seed=2 ** 64),
    lambda lib: lib.quasirandom.SobolEngine(2, scramble=True, seed=0.5),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(0),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(-3),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(3.0),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(4, dtype=lib.int32),
    lambda lib: lib.quasirandom.SobolEngine(2).draw(4, dtype=lib.bfloat16),
    lambda lib: lib.quasirandom.SobolEngine(2).fast_forward(1.5),
    lambda lib: lib.quasirandom.SobolEngine(2).draw_base2(-1),
    lambda lib: lib.quasirandom.SobolEngine(2).fast_forward(3).draw_base2(2),
])
def test_sobol_errors(call):
    assert error_of(lambda: call(ember)) == error_of(lambda: call(torch))


# -- windows ---------------------------------------------------------------------------------

WINDOWS = [("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {}),
           ("exponential", {"tau": 3.5}), ("gaussian", {}), ("gaussian", {"std": 4.2}),
           ("general_cosine", {"a": [0.46, 0.3, 0.2, 0.04]}), ("general_cosine", {"a": (1.0,)}),
           ("general_hamming", {}), ("general_hamming", {"alpha": 0.62}), ("hamming", {}),
           ("hann", {}), ("kaiser", {}), ("kaiser", {"beta": 0.7}), ("nuttall", {})]


@pytest.mark.parametrize("name,kw", WINDOWS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("sym", [True, False])
def test_window_values(name, kw, dtype, sym):
    for M in (0, 1, 2, 3, 8, 33):
        compare(lambda lib: getattr(lib.signal.windows, name)(M, sym=sym, dtype=getattr(lib, dtype),
                                                             **kw))


@pytest.mark.parametrize("name,kw", WINDOWS[::3])
def test_window_requires_grad(name, kw):
    for M in (0, 1, 6):
        t = getattr(torch.signal.windows, name)(M, requires_grad=True, **kw)
        e = getattr(ember.signal.windows, name)(M, requires_grad=True, **kw)
        assert (e.requires_grad, e.is_leaf) == (t.requires_grad, t.is_leaf)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_periodic_exponential_center():
    for dtype in ("float32", "float64"):
        compare(lambda lib: lib.signal.windows.exponential(9, center=2.5, tau=0.8, sym=False,
                                                           dtype=getattr(lib, dtype)))


def test_default_dtype_window():
    compare(lambda lib: lib.signal.windows.hann(10))


@pytest.mark.parametrize("call", [
    lambda lib, W: W.hann(-2), lambda lib, W: W.kaiser(-1, dtype=lib.int64),
    lambda lib, W: W.blackman(3, dtype=lib.float16), lambda lib, W: W.nuttall(3, dtype=lib.int8),
    lambda lib, W: W.cosine(3, layout=lib.sparse_coo), lambda lib, W: W.hann(3, layout=None),
    lambda lib, W: W.exponential(4, tau=-1.0), lambda lib, W: W.exponential(4, center=0.5),
    lambda lib, W: W.gaussian(4, std=0), lambda lib, W: W.kaiser(4, beta=-0.5),
    lambda lib, W: W.general_cosine(4, a=[]), lambda lib, W: W.general_cosine(4, a=1.0),
    lambda lib, W: W.general_cosine(4),
])
def test_window_errors(call):
    assert error_of(lambda: call(ember, ember.signal.windows)) == \
        error_of(lambda: call(torch, torch.signal.windows))


def test_float_length_is_a_type_error():
    assert error_of(lambda: ember.signal.windows.hann(4.0))[0] == \
        error_of(lambda: torch.signal.windows.hann(4.0))[0] == "TypeError"
