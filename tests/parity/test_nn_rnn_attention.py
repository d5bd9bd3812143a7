"""RNN/LSTM/GRU, attention and transformer encoder layers vs PyTorch.

Weights are copied from the torch module into the ember module through state_dict and
NumPy; outputs, final states and the gradients of the inputs and of every parameter are
compared (float32 within 1e-5-ish, float64 within 1e-10-ish).
"""
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn as enn
import ember.nn.functional as EF

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-9, atol=1e-10)}


def _lib_dtype(lib, dt):
    return getattr(lib, np.dtype(dt).name)


def _copy_weights(tm, em, dt):
    sd = {k: ember.tensor(v.detach().numpy().astype(dt)) for k, v in tm.state_dict().items()}
    assert list(sd) == list(em.state_dict())
    for k, v in em.state_dict().items():
        assert tuple(v.shape) == tuple(sd[k].shape), k
    em.load_state_dict(sd)


def _flat(out):
    if isinstance(out, (tuple, list)):
        res = []
        for o in out:
            res.extend(_flat(o))
        return res
    return [] if out is None else [out]


def _check_module(tm, em, arrays, dt, call=None, grad_mask=None):
    """Run both modules on the same arrays; compare outputs, input and parameter grads."""
    call = call or (lambda m, *xs: m(*xs))
    tol = TOL[dt]
    grad_mask = grad_mask or [np.asarray(a).dtype.kind == "f" for a in arrays]
    tx = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grad_mask)]
    ex = [ember.tensor(a, requires_grad=g) for a, g in zip(arrays, grad_mask)]
    t_out, e_out = _flat(call(tm, *tx)), _flat(call(em, *ex))
    assert len(t_out) == len(e_out)
    rng = np.random.default_rng(0)
    cots = []
    for t, e in zip(t_out, e_out):
        assert tuple(t.shape) == tuple(e.shape), (t.shape, e.shape)
        assert e.dtype.name == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
        cots.append(rng.standard_normal(tuple(t.shape)).astype(dt))
    torch.autograd.backward(t_out, [torch.tensor(c) for c in cots])
    ember.autograd.backward(e_out, [ember.tensor(c) for c in cots])
    for i, (t, e) in enumerate(zip(tx, ex)):
        if t.requires_grad:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), err_msg=f"input {i}",
                                       **tol)
    e_params = dict(em.named_parameters())
    for name, p in tm.named_parameters():
        q = e_params[name]
        if p.grad is None:
            assert q.grad is None or not np.any(q.grad.numpy()), name
            continue
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), err_msg=name, **tol)


def _pair(cls_name, dt, *args, **kwargs):
    torch.manual_seed(0)
    tm = getattr(torch.nn, cls_name)(*args, **kwargs).to(_lib_dtype(torch, dt))
    em = getattr(enn, cls_name)(*args, **kwargs).to(_lib_dtype(ember, dt))
    _copy_weights(tm, em, dt)
    return tm, em


# ----------------------------------------------------------------------------- RNNs

RNN_CONFIGS = [
    dict(),
    dict(num_layers=2),
    dict(bidirectional=True),
    dict(num_layers=2, bidirectional=True, batch_first=True),
    dict(bias=False, batch_first=True),
]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", RNN_CONFIGS, ids=str)
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_rnn_no_initial_state(cls, kw, dt):
    tm, em = _pair(cls, dt, 4, 6, **kw)
    x = np.random.default_rng(1).standard_normal((5, 3, 4)).astype(dt)
    _check_module(tm, em, [x], dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", [dict(), dict(num_layers=2, bidirectional=True, batch_first=True)],
                         ids=str)
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_rnn_with_initial_state(cls, kw, dt):
    tm, em = _pair(cls, dt, 4, 6, **kw)
    rng = np.random.default_rng(2)
    d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    x = rng.standard_normal((3, 5, 4) if kw.get("batch_first") else (5, 3, 4)).astype(dt)
    h0 = rng.standard_normal((d, 3, 6)).astype(dt)
    if cls == "LSTM":
        c0 = rng.standard_normal((d, 3, 6)).astype(dt)
        _check_module(tm, em, [x, h0, c0], dt, call=lambda m, x, h, c: m(x, (h, c)))
    else:
        _check_module(tm, em, [x, h0], dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("with_state", [False, True])
def test_rnn_unbatched(cls, dt, with_state):
    tm, em = _pair(cls, dt, 4, 5, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((5, 4)).astype(dt)
    if not with_state:
        _check_module(tm, em, [x], dt)
    elif cls == "LSTM":
        h0, c0 = rng.standard_normal((2, 4, 5)).astype(dt)
        _check_module(tm, em, [x, h0, c0], dt, call=lambda m, x, h, c: m(x, (h, c)))
    else:
        _check_module(tm, em, [x, rng.standard_normal((4, 5)).astype(dt)], dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_lstm_proj_size(dt):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm, em = _pair("LSTM", dt, 4, 6, proj_size=3, num_layers=2, bidirectional=True)
        x = np.random.default_rng(4).standard_normal((5, 3, 4)).astype(dt)
        _check_module(tm, em, [x], dt)


def test_rnn_relu_nonlinearity():
    tm, em = _pair("RNN", np.float64, 4, 6, 2, "relu")
    assert repr(em) == repr(tm)
    x = np.random.default_rng(5).standard_normal((5, 3, 4))
    _check_module(tm, em, [x], np.float64)


@pytest.mark.parametrize("cls", ["LSTM", "GRU"])
def test_rnn_dropout_eval_and_train_p0(cls):
    tm, em = _pair(cls, np.float64, 4, 6, num_layers=3, dropout=0.5)
    tm.eval(), em.eval()
    x = np.random.default_rng(6).standard_normal((5, 3, 4))
    _check_module(tm, em, [x], np.float64)
    tm, em = _pair(cls, np.float64, 4, 6, num_layers=2, dropout=0.0)
    _check_module(tm, em, [x], np.float64)


@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_rnn_names_shapes_repr(cls):
    kw = dict(num_layers=2, bias=False, batch_first=True, dropout=0.25, bidirectional=True)
    tm, em = _pair(cls, np.float32, 3, 5, **kw)
    assert repr(em) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("cls", ["LSTMCell", "GRUCell", "RNNCell"])
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cells(cls, dt, batched, with_state):
    tm, em = _pair(cls, dt, 4, 6)
    assert repr(em) == repr(tm)
    rng = np.random.default_rng(7)
    lead = (3,) if batched else ()
    x = rng.standard_normal(lead + (4,)).astype(dt)
    if not with_state:
        _check_module(tm, em, [x], dt)
    elif cls == "LSTMCell":
        h, c = rng.standard_normal((2,) + lead + (6,)).astype(dt)
        _check_module(tm, em, [x, h, c], dt, call=lambda m, x, h, c: m(x, (h, c)))
    else:
        _check_module(tm, em, [x, rng.standard_normal(lead + (6,)).astype(dt)], dt)


def test_rnn_cell_relu_no_bias():
    tm, em = _pair("RNNCell", np.float64, 4, 6, bias=False, nonlinearity="relu")
    assert repr(em) == repr(tm)
    x = np.random.default_rng(8).standard_normal((3, 4))
    _check_module(tm, em, [x], np.float64)


def _err(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.LSTM(4, 6)(lib.zeros(5, 3, 2, 4)),
    lambda lib: lib.nn.GRU(4, 6)(lib.zeros(5, 3, 2, 4)),
    lambda lib: lib.nn.RNN(4, 6)(lib.zeros(5, 3, 2, 4)),
    lambda lib: lib.nn.LSTM(4, 6)(lib.zeros(5, 3, 5)),
    lambda lib: lib.nn.GRU(4, 6)(lib.zeros(5, 3, 4), lib.zeros(1, 2, 6)),
    lambda lib: lib.nn.GRU(4, 6)(lib.zeros(5, 3, 4), lib.zeros(2, 6)),
    lambda lib: lib.nn.GRU(4, 6)(lib.zeros(5, 4), lib.zeros(1, 1, 6)),
    lambda lib: lib.nn.LSTM(4, 6)(lib.zeros(5, 3, 4), (lib.zeros(1, 3, 6), lib.zeros(1, 3, 5))),
    lambda lib: lib.nn.LSTM(4, 6)(lib.zeros(5, 3, 4), (lib.zeros(1, 2, 6), lib.zeros(1, 3, 6))),
    lambda lib: lib.nn.LSTM(4, 6)(lib.zeros(5, 4), (lib.zeros(1, 1, 6), lib.zeros(1, 1, 6))),
    lambda lib: lib.nn.LSTM(4, 6)(lib.zeros(5, 3, 4, dtype=lib.float64)),
    lambda lib: lib.nn.LSTM(4, 6, proj_size=6),
    lambda lib: lib.nn.GRU(4, 6, proj_size=2),
    lambda lib: lib.nn.LSTM(4, 0),
    lambda lib: lib.nn.LSTM(4, 6, dropout=1.5),
    lambda lib: lib.nn.RNN(4, 6, nonlinearity="gelu"),
    lambda lib: lib.nn.LSTMCell(4, 6)(lib.zeros(2, 3, 4)),
    lambda lib: lib.nn.GRUCell(4, 6)(lib.zeros(3, 4), lib.zeros(1, 3, 6)),
])
def test_rnn_errors_match(case):
    expected = _err(case, torch)
    assert expected is not None
    got = _err(case, ember)
    assert got is not None and got[0] == expected[0]
    assert got[1].replace("ember.", "torch.") == expected[1]
