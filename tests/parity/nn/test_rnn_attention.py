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
from tests.parity.compare import error_of

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")

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
        if t.grad is None:
            assert e.grad is None or not np.any(e.grad.numpy()), f"input {i}"
        elif t.requires_grad:
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
    expected = error_of(lambda: case(torch))
    assert expected is not None
    got = error_of(lambda: case(ember))
    assert got is not None and got[0] == expected[0]
    assert got[1].replace("ember.", "torch.") == expected[1]


# ------------------------------------------------------- scaled_dot_product_attention

def _sdpa_case(dt, mask_kind, rng):
    q = rng.standard_normal((2, 3, 4, 6)).astype(dt)
    k = rng.standard_normal((2, 3, 5, 6)).astype(dt)
    v = rng.standard_normal((2, 3, 5, 7)).astype(dt)
    if mask_kind == "bool":
        m = rng.random((4, 5)) > 0.4
        m[:, 0] = True
        return [q, k, v, m]
    if mask_kind == "bool_full_row":  # a query row that sees nothing gives 0
        m = rng.random((3, 4, 5)) > 0.4
        m[:, 1] = False
        return [q, k, v, m]
    if mask_kind == "float":
        return [q, k, v, rng.standard_normal((2, 1, 4, 5)).astype(dt)]
    return [q, k, v]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("mask_kind", [None, "bool", "bool_full_row", "float"])
def test_sdpa_masks(dt, mask_kind):
    arrays = _sdpa_case(dt, mask_kind, np.random.default_rng(10))

    def call(lib, q, k, v, m=None):
        F = torch.nn.functional if lib is torch else EF
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m)
    _check_fn(call, arrays, dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", [dict(is_causal=True), dict(scale=0.3), dict(scale=-0.5),
                                dict(is_causal=True, scale=2.0)], ids=str)
@pytest.mark.parametrize("lq", [4, 6])
def test_sdpa_causal_and_scale(dt, kw, lq):
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((3, lq, 6)).astype(dt),
              rng.standard_normal((3, 5, 6)).astype(dt),
              rng.standard_normal((3, 5, 2)).astype(dt)]

    def call(lib, q, k, v):
        F = torch.nn.functional if lib is torch else EF
        return F.scaled_dot_product_attention(q, k, v, **kw)
    _check_fn(call, arrays, dt)


def test_sdpa_gqa():
    rng = np.random.default_rng(12)
    arrays = [rng.standard_normal((2, 4, 3, 6)), rng.standard_normal((2, 2, 5, 6)),
              rng.standard_normal((2, 2, 5, 6))]

    def call(lib, q, k, v):
        F = torch.nn.functional if lib is torch else EF
        return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    _check_fn(call, arrays, np.float64)


def test_sdpa_dropout_one_and_errors():
    q = ember.randn(2, 3, 4)
    out = EF.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
    assert np.all(out.numpy() == 0)
    for lib, F in ((torch, torch.nn.functional), (ember, EF)):
        x = lib.zeros(2, 3, 4)
        with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
            F.scaled_dot_product_attention(x, x, x, attn_mask=lib.zeros(3, 3), is_causal=True)


def _check_fn(call, arrays, dt):
    """Compare a functional call on torch and ember (values and grads of float inputs)."""
    tol = TOL[dt]
    grad = [a.dtype.kind == "f" for a in arrays]
    tx = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grad)]
    ex = [ember.tensor(a, requires_grad=g) for a, g in zip(arrays, grad)]
    t, e = call(torch, *tx), call(ember, *ex)
    assert tuple(t.shape) == tuple(e.shape)
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **tol)
    c = np.random.default_rng(0).standard_normal(tuple(t.shape)).astype(dt)
    t.backward(torch.tensor(c))
    e.backward(ember.tensor(c))
    for i, (a, b) in enumerate(zip(tx, ex)):
        if a.requires_grad:
            np.testing.assert_allclose(b.grad.numpy(), a.grad.numpy(), err_msg=f"input {i}",
                                       **tol)


# ----------------------------------------------------------------- MultiheadAttention

MHA_CONFIGS = [dict(), dict(batch_first=True), dict(bias=False), dict(kdim=3, vdim=5),
               dict(add_bias_kv=True, add_zero_attn=True)]
MHA_CALLS = [dict(), dict(need_weights=False), dict(average_attn_weights=False),
             dict(mask="float"), dict(mask="bool", need_weights=False), dict(kpm="bool"),
             dict(kpm="float", mask="float", need_weights=False),
             dict(mask="causal", is_causal=True, need_weights=False),
             dict(mask="3d")]


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("fkw", MHA_CALLS, ids=str)
@pytest.mark.parametrize("kw", MHA_CONFIGS, ids=str)
def test_multihead_attention(kw, fkw, dt):
    tm, em = _pair("MultiheadAttention", dt, 8, 2, **kw)
    rng = np.random.default_rng(13)
    L, S, N = 5, 6, 3
    kd, vd = kw.get("kdim", 8), kw.get("vdim", 8)
    q = rng.standard_normal((L, N, 8)).astype(dt)
    k = rng.standard_normal((S, N, kd)).astype(dt)
    v = rng.standard_normal((S, N, vd)).astype(dt)
    if kw.get("batch_first"):
        q, k, v = (np.ascontiguousarray(a.transpose(1, 0, 2)) for a in (q, k, v))
    masks = {"float": rng.standard_normal((L, S)).astype(dt),
             "bool": rng.random((L, S)) > 0.7,
             "causal": np.triu(np.ones((L, S), dtype=bool), 1),
             "3d": rng.standard_normal((N * 2, L, S)).astype(dt)}
    kpms = {"bool": rng.random((N, S)) > 0.7, "float": rng.standard_normal((N, S)).astype(dt)}
    for m in masks["bool"], kpms["bool"]:
        m[..., 0] = False
    arrays = [q, k, v]
    call_kw = {a: b for a, b in fkw.items() if a not in ("mask", "kpm")}
    if "mask" in fkw:
        arrays.append(masks[fkw["mask"]])
    if "kpm" in fkw:
        arrays.append(kpms[fkw["kpm"]])

    def call(m, q, k, v, *rest):
        rest = list(rest)
        attn_mask = rest.pop(0) if "mask" in fkw else None
        kpm = rest.pop(0) if "kpm" in fkw else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return m(q, k, v, attn_mask=attn_mask, key_padding_mask=kpm, **call_kw)
    _check_module(tm, em, arrays, dt, call=call)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_self_unbatched(dt, need_weights):
    tm, em = _pair("MultiheadAttention", dt, 6, 3, dropout=0.3)
    tm.eval(), em.eval()
    x = np.random.default_rng(14).standard_normal((5, 6)).astype(dt)
    kpm = np.array([False, False, True, False, True])
    _check_module(tm, em, [x, kpm], dt,
                  call=lambda m, x, kpm: m(x, x, x, key_padding_mask=kpm,
                                           need_weights=need_weights))


def test_multihead_attention_names_init_repr():
    tm, em = _pair("MultiheadAttention", np.float32, 8, 2, kdim=3, vdim=5, add_bias_kv=True)
    assert repr(em) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    em = enn.MultiheadAttention(8, 2)
    assert list(em.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight",
                                     "out_proj.bias"]
    assert not np.any(em.in_proj_bias.detach().numpy())
    assert not np.any(em.out_proj.bias.detach().numpy())
    bound = np.sqrt(6 / (8 + 24))
    w = em.in_proj_weight.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound


@pytest.mark.parametrize("case", [
    lambda lib: lib.nn.MultiheadAttention(8, 3),
    lambda lib: lib.nn.MultiheadAttention(0, 2),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(5, 3, 8),
                                               lib.zeros(5, 8)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(6, 3, 8),
                                               lib.zeros(6, 3, 8), attn_mask=lib.zeros(5, 5)),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(6, 3, 8),
                                               lib.zeros(6, 3, 8), is_causal=True),
    lambda lib: lib.nn.MultiheadAttention(8, 2)(lib.zeros(5, 3, 8), lib.zeros(6, 3, 8),
                                               lib.zeros(6, 3, 8),
                                               key_padding_mask=lib.zeros(3, 6, dtype=lib.long)),
])
def test_multihead_attention_errors_match(case):
    expected = error_of(lambda: case(torch))
    assert expected is not None
    got = error_of(lambda: case(ember))
    assert got is not None and got[0] == expected[0]
    assert got[1].replace("ember.", "torch.") == expected[1]


# ------------------------------------------------------------- Transformer encoder

ENC_CONFIGS = [dict(), dict(activation="gelu", norm_first=True), dict(batch_first=True),
               dict(bias=False), dict(layer_norm_eps=1e-3, norm_first=True)]


def _encoder_pair(dt, kw, dropout):
    torch.manual_seed(0)
    tl = torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=dropout, **kw)
    el = enn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=dropout, **kw)
    return tl, el


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("kw", ENC_CONFIGS, ids=str)
def test_transformer_encoder_layer(kw, train, dt):
    tl, el = _encoder_pair(dt, kw, 0.0 if train else 0.1)
    tl, el = tl.to(_lib_dtype(torch, dt)), el.to(_lib_dtype(ember, dt))
    _copy_weights(tl, el, dt)
    tl.train(train), el.train(train)
    rng = np.random.default_rng(15)
    x = rng.standard_normal((3, 5, 8) if kw.get("batch_first") else (5, 3, 8)).astype(dt)
    kpm = rng.random((3, 5)) > 0.7
    kpm[:, 0] = False
    m = rng.standard_normal((5, 5)).astype(dt)
    _check_module(tl, el, [x], dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_module(tl, el, [x, m, kpm], dt,
                      call=lambda mod, x, m, kpm: mod(x, src_mask=m, src_key_padding_mask=kpm))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("train", [False, True])
@pytest.mark.parametrize("kw", ENC_CONFIGS[:3], ids=str)
def test_transformer_encoder(kw, train, dt):
    tl, el = _encoder_pair(dt, kw, 0.0 if train else 0.1)
    tm = torch.nn.TransformerEncoder(tl, 2, norm=torch.nn.LayerNorm(8),
                                     enable_nested_tensor=False).to(_lib_dtype(torch, dt))
    norm = enn.modules.transformer.LayerNorm(8)
    em = enn.TransformerEncoder(el, 2, norm=norm).to(_lib_dtype(ember, dt))
    _copy_weights(tm, em, dt)
    tm.train(train), em.train(train)
    rng = np.random.default_rng(16)
    x = rng.standard_normal((3, 5, 8) if kw.get("batch_first") else (5, 3, 8)).astype(dt)
    causal = np.triu(np.full((5, 5), -np.inf), 1).astype(dt)
    kpm = rng.random((3, 5)) > 0.7
    kpm[:, 0] = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check_module(tm, em, [x, causal], dt, call=lambda mod, x, m: mod(x, mask=m))
        _check_module(tm, em, [x, causal, kpm], dt,
                      call=lambda mod, x, m, kpm: mod(x, mask=m, src_key_padding_mask=kpm))
        _check_module(tm, em, [x], dt)


def test_transformer_encoder_unbatched():
    tl, el = _encoder_pair(np.float64, {}, 0.1)
    tm = torch.nn.TransformerEncoder(tl, 2, enable_nested_tensor=False).double()
    em = enn.TransformerEncoder(el, 2).double()
    _copy_weights(tm, em, np.float64)
    tm.eval(), em.eval()
    x = np.random.default_rng(17).standard_normal((5, 8))
    _check_module(tm, em, [x], np.float64)


def test_transformer_encoder_layer_names_repr():
    tl, el = _encoder_pair(np.float32, dict(bias=False), 0.1)
    assert repr(el) == repr(tl)
    assert [(n, tuple(p.shape)) for n, p in el.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tl.named_parameters()]
    if not hasattr(enn, "GELU"):
        return
    tl, el = _encoder_pair(np.float32, dict(activation=torch.nn.GELU()), 0.1)
    el = enn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=enn.GELU())
    assert repr(el) == repr(tl)
    assert el.activation_relu_or_gelu == tl.activation_relu_or_gelu == 2


def test_transformer_encoder_repr():
    tl, el = _encoder_pair(np.float32, {}, 0.1)
    assert repr(enn.TransformerEncoder(el, 2)) == repr(
        torch.nn.TransformerEncoder(tl, 2, enable_nested_tensor=False))


@pytest.mark.parametrize("kw", [dict(batch_first=True), dict(), dict(batch_first=True,
                                norm_first=True), dict(batch_first=True, bias=False)], ids=str)
def test_transformer_encoder_nested_tensor_warning(kw):
    msgs = {}
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            layer = lib.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, **kw)
            enc = lib.nn.TransformerEncoder(layer, 2)
        msgs[lib] = ([str(w.message) for w in rec if "nested" in str(w.message)],
                     enc.use_nested_tensor)
    assert msgs[ember] == msgs[torch]


@pytest.mark.parametrize("left_aligned", [True, False])
@pytest.mark.parametrize("grad", [False, True])
def test_transformer_encoder_inference_fast_path_zeros_padding(left_aligned, grad):
    """torch's eval/no-grad path runs on nested tensors: padded positions come out as 0."""
    tl, el = _encoder_pair(np.float32, dict(batch_first=True), 0.1)
    tm = torch.nn.TransformerEncoder(tl, 2)
    em = enn.TransformerEncoder(el, 2)
    _copy_weights(tm, em, np.float32)
    tm.eval(), em.eval()
    x = np.random.default_rng(18).standard_normal((3, 5, 8)).astype(np.float32)
    kpm = np.zeros((3, 5), bool)
    kpm[0, 3:] = kpm[1, 4] = True
    if not left_aligned:
        kpm[2, 1] = True
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.set_grad_enabled(grad), ember.set_grad_enabled(grad):
            t = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(kpm))
            e = em(ember.tensor(x), src_key_padding_mask=ember.tensor(kpm))
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL[np.float32])
