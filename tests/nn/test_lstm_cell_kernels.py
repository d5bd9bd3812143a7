"""The compiled LSTM cell (ember.backend._vector) against the NumPy recurrence it replaces
(ember/_ops/rnn_ops.py): the backward step is the same operations in the same order (the same
bits, float32 and float64); the float32 forward step uses vector sigmoid/tanh within a few
ulp of NumPy's, with NaN and infinities as NumPy gives them."""
import numpy as np
import pytest

import ember
from ember._ops import rnn_ops
from ember.backend import kernels

needs_vector = pytest.mark.skipif(kernels._rows is None,
                                  reason="ember.backend._vector not built or no AVX2/FMA")
needs_cell = pytest.mark.skipif(kernels._vector is None,
                                reason="ember.backend._vector not built")

EPS32 = np.finfo(np.float32).eps


@pytest.fixture
def numpy_only():
    """Runs a function with the compiled kernels off, then on again."""
    def run(fn, *args):
        previous = kernels.set_enabled(False)
        try:
            return fn(*args)
        finally:
            kernels.set_enabled(previous)
    return run


def _saved_layer(rng, steps, batch, hidden, dtype, reverse):
    """The arrays LSTMLayer's forward keeps, from the NumPy recurrence."""
    x = rng.standard_normal((steps, batch, 4 * hidden)).astype(dtype)
    w_hh = (rng.standard_normal((4 * hidden, hidden)) * 0.3).astype(dtype)
    h0 = rng.standard_normal((batch, hidden)).astype(dtype)
    c0 = rng.standard_normal((batch, hidden)).astype(dtype)
    gates = x.copy()
    hs = np.empty((steps, batch, hidden), dtype)
    cells, tanh_cells = np.empty_like(hs), np.empty_like(hs)
    previous = kernels.set_enabled(False)
    try:
        with np.errstate(over="ignore"):
            rnn_ops._forward_steps(np, gates, w_hh, h0, c0, hs, cells, tanh_cells, reverse)
    finally:
        kernels.set_enabled(previous)
    return gates, w_hh, c0, hs, cells, tanh_cells


@needs_cell
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("hidden", [1, 5, 8, 13, 64])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("with_outputs,with_final,wants_h0", [(True, True, True),
                                                              (True, False, False),
                                                              (False, True, True)])
def test_backward_steps_give_the_numpy_bits(numpy_only, dtype, hidden, reverse, with_outputs,
                                            with_final, wants_h0):
    rng = np.random.default_rng(hidden)
    steps, batch = 6, 3
    gates, w_hh, c0, hs, cells, tanh_cells = _saved_layer(rng, steps, batch, hidden, dtype,
                                                          reverse)
    c_prev = rnn_ops._previous(np, cells, c0, reverse)
    grad_hs = rng.standard_normal(hs.shape).astype(dtype) if with_outputs else None
    if with_outputs:
        grad_hs = grad_hs.transpose(1, 0, 2).copy().transpose(1, 0, 2)  # not contiguous
    grad_h = rng.standard_normal((batch, hidden)).astype(dtype) if with_final else None
    grad_c = rng.standard_normal((batch, hidden)).astype(dtype) if with_final else None
    args = (np, gates, c_prev, tanh_cells, w_hh, grad_hs, grad_h, grad_c, reverse, wants_h0)
    assert kernels.lstm_native_for(gates, c_prev, tanh_cells, forward=False)
    compiled = rnn_ops._recurrence_grads(*args)
    reference = numpy_only(rnn_ops._recurrence_grads, *args)
    np.testing.assert_array_equal(compiled[0], reference[0])  # the gate gradients
    np.testing.assert_array_equal(compiled[2], reference[2])  # the first cell's
    if wants_h0:
        np.testing.assert_array_equal(compiled[1], reference[1])


@needs_vector
@pytest.mark.parametrize("hidden", [1, 7, 8, 9, 256])
@pytest.mark.parametrize("reverse", [False, True])
def test_forward_steps_match_numpy_within_ulps(numpy_only, hidden, reverse):
    rng = np.random.default_rng(hidden + 1)
    x = ember.tensor((rng.standard_normal((7, 4, 3)) * 2).astype(np.float32))
    h0 = ember.tensor(rng.standard_normal((4, hidden)).astype(np.float32))
    c0 = ember.tensor(rng.standard_normal((4, hidden)).astype(np.float32)).t().contiguous().t()
    w_ih = ember.tensor(rng.standard_normal((4 * hidden, 3)).astype(np.float32))
    w_hh = ember.tensor((rng.standard_normal((4 * hidden, hidden)) * 0.5).astype(np.float32))
    got = [t.numpy() for t in rnn_ops.lstm_layer(x, h0, c0, w_ih, w_hh, reverse=reverse)]
    ref = [t.numpy() for t in numpy_only(rnn_ops.lstm_layer, x, h0, c0, w_ih, w_hh, None,
                                         None, reverse)]
    exact = [t.numpy() for t in rnn_ops.lstm_layer(*(t.double() for t in (x, h0, c0, w_ih,
                                                                           w_hh)),
                                                   reverse=reverse)]
    for g, r, e in zip(got, ref, exact):
        # as close to the float64 result as the NumPy float32 recurrence is (the steps
        # compound each other's rounding), and close to it
        assert np.abs(g - e).max() <= 2 * np.abs(r - e).max() + 8 * EPS32
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5)


def _activations(values):
    """sigmoid and tanh of ``values`` through the compiled cell: gate columns i, f, g, o get
    ``values``; c_prev = 0, so the activated gates are left in place."""
    n = len(values)
    gate = np.concatenate([values] * 4).astype(np.float32)[None]
    c_prev = np.zeros((1, n), np.float32)
    cell, tanh_cell, h = np.empty_like(c_prev), np.empty_like(c_prev), np.empty_like(c_prev)
    kernels.lstm_cell_forward(gate, c_prev, cell, tanh_cell, h)
    return gate[0, :n], gate[0, 2 * n:3 * n], cell[0], tanh_cell[0], h[0]


@needs_vector
def test_vector_sigmoid_and_tanh_over_their_range():
    xs = np.concatenate([np.linspace(-110, 110, 100_001), np.geomspace(1e-30, 1e-2, 1001),
                         -np.geomspace(1e-30, 1e-2, 1001), [0.0, -0.0]]).astype(np.float32)
    sig, tanh, _, _, _ = _activations(xs)
    x64 = xs.astype(np.float64)
    with np.errstate(over="ignore"):
        sig_ref = (1 / (1 + np.exp(-x64))).astype(np.float32)
        # below ~-88.7 the float32 formula's e^-x overflows: 0, as NumPy's own path gives
        sig_numpy = 1 / (1 + np.exp(-xs))
    tanh_ref = np.tanh(x64).astype(np.float32)
    for got, ref, below in ((sig, sig_ref, sig_numpy), (tanh, tanh_ref, tanh_ref)):
        normal = np.abs(ref) >= np.finfo(np.float32).tiny
        assert (np.abs(got[normal] - ref[normal]) <= 3 * np.spacing(np.abs(ref[normal]))).all()
        assert (np.abs(got[~normal] - below[~normal]) <= 2.0 ** -149).all()
    assert np.array_equal(np.signbit(tanh[-2:]), [False, True])  # tanh(+-0) = +-0
    assert (tanh[xs > 9] == 1).all() and (tanh[xs < -9] == -1).all()
    assert (sig[xs > 17] == 1).all()


@needs_vector
def test_vector_cell_propagates_nan_and_infinities():
    specials = np.array([np.nan, np.inf, -np.inf, 0, 1, -1, 50, -50], np.float32)
    sig, tanh, cell, tanh_cell, h = _activations(specials)
    with np.errstate(over="ignore", invalid="ignore"):
        sig_ref = 1 / (1 + np.exp(-specials))
        tanh_ref = np.tanh(specials)
        cell_ref = sig_ref * 0 + sig_ref * tanh_ref
        h_ref = sig_ref * np.tanh(cell_ref)
    for got, ref in ((sig, sig_ref), (tanh, tanh_ref), (cell, cell_ref), (h, h_ref)):
        np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
        finite = ~np.isnan(ref)
        np.testing.assert_allclose(got[finite], ref[finite], rtol=4 * EPS32, atol=0)


@needs_cell
def test_cell_kernels_check_their_buffers():
    gate, state = np.zeros((2, 12), np.float32), np.zeros((2, 3), np.float32)
    with pytest.raises(ValueError, match="4x"):
        kernels._vector.lstm_cell_backward(gate[:, :8].copy(), state, state, None, state,
                                           state.copy(), gate.copy(), 3, False)
    with pytest.raises(ValueError, match="different sizes"):
        kernels._vector.lstm_cell_backward(gate, state, state[:1].copy(), None, state,
                                           state.copy(), gate.copy(), 3, False)
    with pytest.raises(ValueError, match="rows of hidden"):
        kernels._vector.lstm_cell_backward(gate, state, state, None, state, state.copy(),
                                           gate.copy(), 4, False)
    if kernels._rows is not None:
        with pytest.raises(ValueError, match="4x"):
            kernels._vector.lstm_cell_forward(gate[:, :8].copy(), state, state.copy(),
                                              state.copy(), state.copy(), 3)
