"""nn.LSTM on its fused layer op vs PyTorch: longer sequences and wider layers than
test_rnn_attention.py's, gradients reaching only some outputs, graph node names, second
derivatives (ember's recompute the layer), and a few training steps."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.nn.test_rnn_attention import TOL, _check_module, _pair

DTYPES = [np.float32, np.float64]
CONFIGS = [dict(), dict(num_layers=2), dict(bidirectional=True), dict(bias=False),
           dict(num_layers=2, bidirectional=True, batch_first=True)]
STEPS, BATCH, FEATURES, HIDDEN = 12, 5, 7, 16


def _input(rng, kw, dt):
    shape = (BATCH, STEPS, FEATURES) if kw.get("batch_first") else (STEPS, BATCH, FEATURES)
    return rng.standard_normal(shape).astype(dt)


def _states(rng, kw, dt):
    layers = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    return [rng.standard_normal((layers, BATCH, HIDDEN)).astype(dt) for _ in range(2)]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", CONFIGS, ids=str)
@pytest.mark.parametrize("with_state", [False, True])
def test_values_and_every_gradient(kw, dt, with_state):
    tm, em = _pair("LSTM", dt, FEATURES, HIDDEN, **kw)
    rng = np.random.default_rng(10)
    x = _input(rng, kw, dt)
    if with_state:
        h0, c0 = _states(rng, kw, dt)
        _check_module(tm, em, [x, h0, c0], dt, call=lambda m, x, h, c: m(x, (h, c)))
    else:
        _check_module(tm, em, [x], dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("pick", ["output", "h_n", "c_n", "h_n and c_n"])
def test_gradient_of_some_outputs_only(pick, dt):
    kw = dict(num_layers=2, bidirectional=True)
    tm, em = _pair("LSTM", dt, FEATURES, HIDDEN, **kw)
    rng = np.random.default_rng(11)
    x = _input(rng, kw, dt)
    h0, c0 = _states(rng, kw, dt)

    def call(m, x, h, c):
        out, (h_n, c_n) = m(x, (h, c))
        return {"output": out, "h_n": h_n, "c_n": c_n, "h_n and c_n": (h_n, c_n)}[pick]
    _check_module(tm, em, [x, h0, c0], dt, call=call)


def test_noncontiguous_input_and_states():
    tm, em = _pair("LSTM", np.float64, FEATURES, HIDDEN, num_layers=2)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((BATCH, STEPS, FEATURES))
    h0, c0 = rng.standard_normal((2, BATCH, 2, HIDDEN))

    def call(m, x, h, c):  # (time, batch) swapped views; states (layer, batch) swapped
        return m(x.transpose(0, 1), (h.transpose(0, 1), c.transpose(0, 1)))
    _check_module(tm, em, [x, h0, c0], np.float64, call=call)


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True)], ids=str)
def test_node_names_match(kw):
    tm, em = _pair("LSTM", np.float32, FEATURES, HIDDEN, **kw)
    x = np.random.default_rng(13).standard_normal((STEPS, BATCH, FEATURES)).astype(np.float32)
    t_out, _ = tm(torch.tensor(x, requires_grad=True))
    e_out, _ = em(ember.tensor(x, requires_grad=True))

    def names(out):
        return type(out.grad_fn).__name__, [type(fn).__name__ for fn, _ in
                                            out.grad_fn.next_functions if fn is not None]
    assert names(e_out) == names(t_out)


@pytest.mark.parametrize("kw", [dict(), dict(bidirectional=True, num_layers=2)], ids=str)
def test_second_derivatives(kw):
    tm, em = _pair("LSTM", np.float64, 3, 4, **kw)
    rng = np.random.default_rng(14)
    x = rng.standard_normal((5, 2, 3))
    v = rng.standard_normal((5, 2, 3))
    results = {}
    for lib, m in ((torch, tm), (ember, em)):
        xt = lib.tensor(x, requires_grad=True)
        out, (h, c) = m(xt)
        loss = (out * out).sum() + (c * h).sum()
        gx, = lib.autograd.grad(loss, xt, create_graph=True)
        params = list(m.parameters())
        second = lib.autograd.grad((gx * lib.tensor(v)).sum(), [xt] + params)
        results[lib] = [gx.detach().numpy()] + [g.numpy() for g in second]
    for e, t in zip(results[ember], results[torch]):
        np.testing.assert_allclose(e, t, **TOL[np.float64])


@pytest.mark.parametrize("dt", DTYPES)
def test_training_steps_follow_torch(dt):
    tm, em = _pair("LSTM", dt, FEATURES, HIDDEN, num_layers=2)
    rng = np.random.default_rng(15)
    data = [(_input(rng, {}, dt), rng.standard_normal((STEPS, BATCH, HIDDEN)).astype(dt))
            for _ in range(3)]
    for lib, m in ((torch, tm), (ember, em)):
        opt = lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
        for x, y in data:
            opt.zero_grad()
            loss = ((m(lib.tensor(x))[0] - lib.tensor(y)) ** 2).mean()
            loss.backward()
            opt.step()
    tol = dict(rtol=1e-4, atol=2e-5) if dt == np.float32 else TOL[np.float64]
    for (name, p), q in zip(tm.named_parameters(), em.parameters()):
        np.testing.assert_allclose(q.detach().numpy(), p.detach().numpy(), err_msg=name, **tol)
