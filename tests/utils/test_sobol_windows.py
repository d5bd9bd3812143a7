"""ember.quasirandom.SobolEngine and ember.signal.windows without PyTorch: the Sobol' points'
known values and net properties, the engine's state (draws, fast_forward, reset, scrambling
seeds), windows against their formulas, and the errors."""
import math

import numpy as np
import pytest

import ember
from ember.quasirandom import SobolEngine

W = ember.signal.windows


# -- SobolEngine -----------------------------------------------------------------------------

def test_first_points_are_sobols():
    # dimension 1 is van der Corput's sequence in Gray-code order; dimension 2 has the
    # primitive polynomial x + 1 and initial direction number 1
    points = SobolEngine(2).draw(8, dtype=ember.float64).numpy()
    np.testing.assert_array_equal(points[:, 0], [0, .5, .75, .25, .375, .875, .625, .125])
    np.testing.assert_array_equal(points[:, 1], [0, .5, .25, .75, .375, .875, .125, .625])


@pytest.mark.parametrize("scramble", [False, True])
def test_base2_draws_are_nets(scramble):
    m = 6
    points = SobolEngine(5, scramble=scramble, seed=11).draw_base2(m, dtype=ember.float64)
    points = points.numpy()
    assert points.shape == (2 ** m, 5) and ((points >= 0) & (points < 1)).all()
    for d in range(5):  # every dimension: one point in each interval of width 2^-m
        np.testing.assert_array_equal(np.sort(np.floor(points[:, d] * 2 ** m)), np.arange(2 ** m))
    for a in range(m + 1):  # dimensions 1 and 2 form a (0, m, 2)-net
        boxes = (np.floor(points[:, 0] * 2 ** a) * 2 ** (m - a)
                 + np.floor(points[:, 1] * 2 ** (m - a)))
        assert len(np.unique(boxes)) == 2 ** m


def test_quasi_monte_carlo_beats_the_random_error():
    # integral of prod(2 x_i) over the unit cube is 1
    points = SobolEngine(4, scramble=True, seed=0).draw(4096, dtype=ember.float64).numpy()
    assert abs(np.prod(2 * points, axis=1).mean() - 1) < 5e-3


def test_draws_continue_the_sequence_and_reset_restarts_it():
    whole = SobolEngine(3).draw(20)
    engine = SobolEngine(3)
    parts = [engine.draw(1), engine.draw(6), engine.draw(0), engine.draw(13)]
    assert engine.num_generated == 20
    assert ember.equal(ember.cat(parts), whole)
    assert ember.equal(engine.reset().draw(20), whole) and engine.num_generated == 20


@pytest.mark.parametrize("skip", [0, 1, 5, 16])
def test_fast_forward_is_drawing_unseen(skip):
    whole = SobolEngine(4, scramble=True, seed=2).draw(30)
    engine = SobolEngine(4, scramble=True, seed=2)
    assert engine.fast_forward(skip) is engine and engine.num_generated == skip
    assert ember.equal(engine.draw(30 - skip), whole[skip:])
    engine = SobolEngine(4, scramble=True, seed=2)
    engine.draw(3)
    engine.fast_forward(skip)
    assert ember.equal(engine.draw(4), whole[3 + skip:7 + skip])


def test_dtypes_and_out():
    engine = SobolEngine(2)
    assert engine.draw(3).dtype == ember.get_default_dtype()
    assert engine.draw(3, dtype=ember.float64).dtype == ember.float64
    out = ember.empty(0, dtype=ember.float64)
    assert engine.reset().draw(4, out=out) is out
    assert out.shape == (4, 2) and out[3].tolist() == [0.25, 0.75]
    # the first point alone converts to any dtype
    assert SobolEngine(2).draw(1, dtype=ember.int64).tolist() == [[0, 0]]


def test_scrambling_is_seeded():
    a, b = SobolEngine(3, scramble=True, seed=7), SobolEngine(3, scramble=True, seed=7)
    assert ember.equal(a.draw(10), b.draw(10))
    assert not ember.equal(SobolEngine(3, scramble=True, seed=8).draw(10), a.reset().draw(10))
    assert not ember.equal(a.reset().draw(10), SobolEngine(3).draw(10))
    ember.manual_seed(5)  # without a seed, ember's default generator scrambles
    first = SobolEngine(3, scramble=True).draw(5)
    ember.manual_seed(5)
    assert ember.equal(SobolEngine(3, scramble=True).draw(5), first)


def test_attributes_and_repr():
    engine = SobolEngine(4, scramble=True, seed=3)
    assert (engine.dimension, engine.scramble, engine.seed, engine.num_generated) == (4, True, 3, 0)
    assert (SobolEngine.MAXBIT, SobolEngine.MAXDIM) == (30, 21201)
    assert repr(engine) == "SobolEngine(dimension=4, scramble=True, seed=3)"
    assert repr(SobolEngine(2)) == "SobolEngine(dimension=2)"
    assert SobolEngine(SobolEngine.MAXDIM).draw(2).shape == (2, 21201)


def test_sobol_errors():
    for dimension in (0, 21202):
        with pytest.raises(ValueError, match=r"for SobolEngine is \[1, 21201\]"):
            SobolEngine(dimension)
    with pytest.raises(ValueError, match="require n to be a power of 2. 1 points have been "):
        e = SobolEngine(2)
        e.draw(1)
        e.draw_base2(2)
    with pytest.raises(RuntimeError, match=r"negative dimension -1: \[-1, 2\]"):
        SobolEngine(2).draw(0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Half'"):
        SobolEngine(2).draw(3, dtype=ember.float16)
    with pytest.raises(TypeError, match="argument 'n' .* must be int, not float"):
        SobolEngine(2).draw(2.0)
    with pytest.raises(RuntimeError, match="manual_seed expected a long, but got float"):
        SobolEngine(2, scramble=True, seed=1.5)
    with pytest.raises(ValueError, match="Overflow"):
        SobolEngine(2, scramble=True, seed=2 ** 64)


# -- windows ---------------------------------------------------------------------------------

ALL = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
       "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _window(name, M, **kw):
    if name == "general_cosine":
        kw.setdefault("a", [0.5, 0.5])
    return getattr(W, name)(M, **kw)


def _values(t):
    return t.detach().numpy()


def test_windows_match_their_formulas():
    n = np.arange(7)
    f = lambda name, **kw: _values(_window(name, 7, dtype=ember.float64, **kw))
    close = lambda a, b: np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    close(f("hann"), 0.5 - 0.5 * np.cos(2 * np.pi * n / 6))
    close(f("hamming"), 0.54 - 0.46 * np.cos(2 * np.pi * n / 6))
    close(f("general_hamming", alpha=0.6), 0.6 - 0.4 * np.cos(2 * np.pi * n / 6))
    close(f("blackman"),
          0.42 - 0.5 * np.cos(2 * np.pi * n / 6) + 0.08 * np.cos(4 * np.pi * n / 6))
    nut = [0.3635819, 0.4891775, 0.1365995, 0.0106411]
    close(f("nuttall"),
          sum((-1) ** i * a * np.cos(2 * np.pi * i * n / 6) for i, a in enumerate(nut)))
    close(f("bartlett"), 1 - np.abs(n - 3) / 3)
    close(f("cosine"), np.sin(np.pi * (n + 0.5) / 7))
    close(f("gaussian", std=1.5), np.exp(-((n - 3) ** 2) / (2 * 1.5 ** 2)))
    close(f("exponential", tau=2.0), np.exp(-np.abs(n - 3) / 2.0))
    close(f("kaiser", beta=4.0), np.i0(4.0 * np.sqrt(1 - ((n - 3) / 3) ** 2)) / np.i0(4.0))
    close(_values(W.exponential(7, center=1.0, tau=0.5, sym=False, dtype=ember.float64)),
          np.exp(-np.abs(n - 1.0) / 0.5))


@pytest.mark.parametrize("name", ALL)
def test_symmetric_and_periodic(name):
    sym = _values(_window(name, 9, dtype=ember.float64))
    np.testing.assert_allclose(sym, sym[::-1], atol=1e-12)
    periodic = _values(_window(name, 8, sym=False, dtype=ember.float64))
    np.testing.assert_allclose(periodic, sym[:-1], atol=1e-12)  # the length-9 window, cut


@pytest.mark.parametrize("name", ALL)
def test_window_edge_lengths_dtypes_and_grad(name):
    assert _window(name, 0).shape == (0,)
    assert _window(name, 1).tolist() == [1.0] and _window(name, 1, sym=False).tolist() == [1.0]
    assert _window(name, 5).dtype == ember.get_default_dtype()
    assert _window(name, 5, dtype=ember.float64).dtype == ember.float64
    w = _window(name, 5, requires_grad=True)
    assert w.requires_grad and w.grad_fn is not None
    w.sum().backward()
    leaf = _window(name, 0, requires_grad=True)
    assert leaf.requires_grad and leaf.is_leaf


@pytest.mark.parametrize("name", ALL)
def test_window_errors(name):
    shown = "general_cosine" if name in ("hann", "hamming", "general_hamming", "nuttall") else name
    with pytest.raises(ValueError,
                       match=f"^{shown} requires non-negative window length, got M=-1$"):
        _window(name, -1)
    with pytest.raises(ValueError, match=f"^{shown} expects float32 or float64 dtypes, got: "
                                         "torch.int64$"):
        _window(name, 3, dtype=ember.int64)
    with pytest.raises(ValueError, match=f"^{shown} is implemented for strided tensors only, "
                                         "got: torch.sparse_coo$"):
        _window(name, 3, layout=ember.sparse_coo)


def test_window_parameter_errors():
    with pytest.raises(ValueError, match="Tau must be positive, got: 0 instead."):
        W.exponential(4, tau=0)
    with pytest.raises(ValueError, match="Center must be None for symmetric windows"):
        W.exponential(4, center=1.0)
    with pytest.raises(ValueError, match="Standard deviation must be positive, got: -1.0"):
        W.gaussian(4, std=-1.0)
    with pytest.raises(ValueError, match="beta must be non-negative, got: -1 instead."):
        W.kaiser(4, beta=-1)
    with pytest.raises(ValueError, match="Coefficients cannot be empty"):
        W.general_cosine(4, a=[])
    with pytest.raises(TypeError, match="Coefficients must be a list/tuple"):
        W.general_cosine(4, a=3)
    with pytest.raises(TypeError, match="linspace"):
        W.hann(4.0)
    assert W.kaiser(4, beta=0.0).tolist() == [1.0] * 4
    assert math.isclose(W.cosine(2).tolist()[0], math.sqrt(0.5), rel_tol=1e-6)


@pytest.mark.parametrize("name", ALL)
def test_window_on_meta(name):
    w = _window(name, 6, device="meta", dtype=ember.float64)
    assert w.device.type == "meta" and w.shape == (6,) and w.dtype == ember.float64
