"""Behaviour tests (no torch) of the recurrent layers, attention and the encoder layer.

Expected values come from NumPy re-computations or finite differences, never from ember.
"""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from tests.helpers import check_grad, check_second_grad

pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _np(t):
    return t.detach().numpy()


# ----------------------------------------------------------------------------- RNNs

@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_rnn_default_init_is_uniform_in_bound(cls):
    ember.manual_seed(0)
    m = cls(4, 16, num_layers=2, bidirectional=True)
    bound = 1 / math.sqrt(16)
    allw = np.concatenate([_np(p).ravel() for p in m.parameters()])
    assert np.abs(allw).max() <= bound
    assert np.abs(allw).max() > 0.95 * bound
    assert abs(allw.mean()) < 0.02 and abs(allw.var() - bound ** 2 / 3) < 0.1 * bound ** 2
    assert all(p.requires_grad and p.is_leaf for p in m.parameters())


def test_lstm_parameter_names_and_shapes():
    m = nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2)
    shapes = {n: tuple(p.shape) for n, p in m.named_parameters()}
    assert list(shapes)[:5] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                "weight_hr_l0"]
    assert shapes["weight_ih_l0"] == (20, 3)
    assert shapes["weight_hh_l0_reverse"] == (20, 2)
    assert shapes["weight_ih_l1"] == (20, 4)
    assert shapes["weight_hr_l1_reverse"] == (2, 5)
    assert len(m.all_weights) == 4 and len(m.all_weights[0]) == 5
    assert [n for n, _ in nn.GRU(3, 5, bias=False).named_parameters()] == \
        ["weight_ih_l0", "weight_hh_l0"]


def _np_lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for xt in x:
        g = xt @ w_ih.T + b_ih + h @ w_hh.T + b_hh
        i, f, gg, o = np.split(g, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
        h = _sigmoid(o) * np.tanh(c)
        outs.append(h)
    return np.stack(outs), h, c


def _np_gru(x, h, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for xt in x:
        gi, gh = xt @ w_ih.T + b_ih, h @ w_hh.T + b_hh
        ir, iz, in_ = np.split(gi, 3, axis=-1)
        hr, hz, hn = np.split(gh, 3, axis=-1)
        r, z = _sigmoid(ir + hr), _sigmoid(iz + hz)
        n = np.tanh(in_ + r * hn)
        h = (1 - z) * n + z * h
        outs.append(h)
    return np.stack(outs), h


def _weights(m, suffix=""):
    return [_np(getattr(m, f"{k}_l0{suffix}")).astype(np.float64)
            for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]


def test_lstm_matches_numpy_recurrence_bidirectional():
    ember.manual_seed(1)
    m = nn.LSTM(3, 4, bidirectional=True).double()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 2, 3))
    h0, c0 = rng.standard_normal((2, 2, 2, 4))
    out, (hn, cn) = m(ember.tensor(x), (ember.tensor(h0), ember.tensor(c0)))
    fo, fh, fc = _np_lstm(x, h0[0], c0[0], *_weights(m))
    ro, rh, rc = _np_lstm(x[::-1], h0[1], c0[1], *_weights(m, "_reverse"))
    np.testing.assert_allclose(_np(out), np.concatenate([fo, ro[::-1]], -1), atol=1e-12)
    np.testing.assert_allclose(_np(hn), np.stack([fh, rh]), atol=1e-12)
    np.testing.assert_allclose(_np(cn), np.stack([fc, rc]), atol=1e-12)


def test_gru_matches_numpy_recurrence_batch_first_unbatched():
    ember.manual_seed(2)
    m = nn.GRU(3, 4, batch_first=True).double()
    x = np.random.default_rng(1).standard_normal((6, 3))
    out, hn = m(ember.tensor(x))  # unbatched: (L, H_in)
    eo, eh = _np_gru(x[:, None], np.zeros((1, 4)), *_weights(m))
    assert tuple(out.shape) == (6, 4) and tuple(hn.shape) == (1, 4)
    np.testing.assert_allclose(_np(out), eo[:, 0], atol=1e-12)
    np.testing.assert_allclose(_np(hn), eh, atol=1e-12)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU, nn.RNN])
def test_rnn_gradients_match_finite_differences(cls):
    ember.manual_seed(3)
    m = cls(2, 3, num_layers=2, bidirectional=True).double()
    x = np.random.default_rng(2).standard_normal((3, 2, 2))
    h = np.random.default_rng(3).standard_normal((4, 2, 3))

    def fn(x, h):
        hx = (h, h * 0.5) if cls is nn.LSTM else h
        out, _ = m(x, hx)
        return out
    check_grad(fn, x, h)


def test_rnn_parameter_gradient_matches_finite_differences():
    ember.manual_seed(4)
    m = nn.GRU(2, 3).double()
    x = ember.tensor(np.random.default_rng(4).standard_normal((4, 2, 2)))
    w0 = _np(m.weight_hh_l0).copy()

    def fn(w):
        with ember.no_grad():
            m.weight_hh_l0.copy_(w.detach())
        return m(x)[0]
    # finite differences through the weight; backward through the parameter
    out = fn(ember.tensor(w0))
    v = np.random.default_rng(0).standard_normal(out.shape)
    m.zero_grad()
    out.backward(ember.tensor(v))
    got = _np(m.weight_hh_l0.grad)
    eps, num = 1e-6, np.zeros_like(w0)
    for idx in np.ndindex(*w0.shape):
        for sgn in (1, -1):
            w = w0.copy()
            w[idx] += sgn * eps
            with ember.no_grad():
                num[idx] += sgn * np.sum(_np(fn(ember.tensor(w))) * v) / (2 * eps)
    np.testing.assert_allclose(got, num, atol=1e-6, rtol=1e-5)


def test_gru_cell_second_derivative():
    ember.manual_seed(5)
    cell = nn.GRUCell(2, 3).double()
    rng = np.random.default_rng(5)
    check_second_grad(lambda x, h: cell(x, h), rng.standard_normal((2, 2)),
                      rng.standard_normal((2, 3)))


def test_lstm_cell_equals_one_lstm_step():
    ember.manual_seed(6)
    lstm = nn.LSTM(3, 4).double()
    cell = nn.LSTMCell(3, 4).double()
    cell.load_state_dict({k[:-3]: v for k, v in lstm.state_dict().items()})
    x = ember.tensor(np.random.default_rng(6).standard_normal((1, 2, 3)))
    out, (h, c) = lstm(x)
    h2, c2 = cell(x[0])
    np.testing.assert_allclose(_np(h2), _np(h[0]), atol=1e-14)
    np.testing.assert_allclose(_np(c2), _np(c[0]), atol=1e-14)


def test_rnn_dropout_between_layers_only_in_training():
    ember.manual_seed(7)
    m = nn.LSTM(3, 8, num_layers=2, dropout=0.5)
    x = ember.randn(4, 2, 3)
    a, b = m(x)[0], m(x)[0]
    assert not np.allclose(_np(a), _np(b))
    m.eval()
    np.testing.assert_array_equal(_np(m(x)[0]), _np(m(x)[0]))
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        nn.GRU(3, 4, dropout=0.2)


def test_rnn_errors():
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D"):
        nn.LSTM(3, 4)(ember.zeros(1, 2, 3, 3))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        nn.GRU(3, 4)(ember.zeros(5, 2, 3), ember.zeros(1, 3, 4))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        nn.RNN(3, 4)(ember.zeros(5, 2, 2))
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(3, 4, proj_size=1)
    assert repr(nn.GRU(3, 4, num_layers=2, dropout=0.1)) == "GRU(3, 4, num_layers=2, dropout=0.1)"
    assert repr(nn.RNNCell(3, 4, nonlinearity="relu")) == "RNNCell(3, 4, nonlinearity=relu)"


def test_rnn_state_dict_round_trip():
    ember.manual_seed(8)
    a, b = nn.LSTM(3, 4, num_layers=2), nn.LSTM(3, 4, num_layers=2)
    b.load_state_dict(a.state_dict())
    x = ember.randn(5, 2, 3)
    np.testing.assert_array_equal(_np(a(x)[0]), _np(b(x)[0]))


# ---------------------------------------------------------------------- attention

def _np_softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_sdpa_matches_numpy():
    rng = np.random.default_rng(9)
    q, k, v = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3)), \
        rng.standard_normal((2, 5, 2))
    mask = rng.random((4, 5)) > 0.3
    mask[:, 0] = True
    out = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                         attn_mask=ember.tensor(mask))
    s = q @ k.transpose(0, 2, 1) / np.sqrt(3)
    s = np.where(mask, s, -np.inf)
    np.testing.assert_allclose(_np(out), _np_softmax(s) @ v, atol=1e-12)
    causal = F.scaled_dot_product_attention(ember.tensor(q), ember.tensor(k), ember.tensor(v),
                                            is_causal=True, scale=0.5)
    s = np.where(np.tril(np.ones((4, 5), bool)), q @ k.transpose(0, 2, 1) * 0.5, -np.inf)
    np.testing.assert_allclose(_np(causal), _np_softmax(s) @ v, atol=1e-12)


def test_sdpa_fully_masked_row_gives_zero_and_finite_grad():
    q = ember.randn(1, 3, 4, requires_grad=True)
    mask = ember.tensor([[True, True], [False, False], [True, False]])
    out = F.scaled_dot_product_attention(q, ember.randn(1, 2, 4), ember.randn(1, 2, 4),
                                         attn_mask=mask)
    assert np.all(_np(out)[0, 1] == 0)
    out.sum().backward()
    assert np.all(np.isfinite(_np(q.grad))) and np.all(_np(q.grad)[0, 1] == 0)


def test_sdpa_gradients_finite_differences_and_second_order():
    rng = np.random.default_rng(10)
    arrays = [rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 5, 4)),
              rng.standard_normal((2, 5, 3))]
    fmask = ember.tensor(rng.standard_normal((3, 5)))
    check_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=fmask),
               *arrays)
    check_second_grad(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                      *arrays)


def test_sdpa_dropout_scales_kept_weights():
    ember.manual_seed(11)
    v = ember.eye(50).unsqueeze(0)  # output row = attention weights row
    q = ember.zeros(1, 50, 50)  # uniform weights 1/50
    out = _np(F.scaled_dot_product_attention(q, q, v, dropout_p=0.5))
    kept = out[out != 0]
    np.testing.assert_allclose(kept, 2 / 50, rtol=1e-6)
    assert 0.4 < kept.size / out.size < 0.6


def _np_mha(x, m, kpm=None):
    """Self-attention by hand for a sequence-first (L, N, E) input."""
    L, N, E = x.shape
    H = m.num_heads
    d = E // H
    w, b = _np(m.in_proj_weight), _np(m.in_proj_bias)
    qkv = x @ w.T + b
    q, k, v = np.split(qkv, 3, -1)
    q, k, v = (a.reshape(L, N, H, d).transpose(1, 2, 0, 3) for a in (q, k, v))  # N,H,L,d
    s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d)
    if kpm is not None:
        s = np.where(kpm[:, None, None, :], -np.inf, s)
    p = _np_softmax(s)
    o = (p @ v).transpose(2, 0, 1, 3).reshape(L, N, E)
    return o @ _np(m.out_proj.weight).T + _np(m.out_proj.bias), p


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_matches_numpy(need_weights):
    ember.manual_seed(12)
    m = nn.MultiheadAttention(6, 3).double()
    with ember.no_grad():
        m.in_proj_bias.uniform_(-0.5, 0.5)
        m.out_proj.bias.uniform_(-0.5, 0.5)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((4, 2, 6))
    kpm = np.array([[False, False, True, False], [False, True, True, False]])
    t = ember.tensor(x)
    out, w = m(t, t, t, key_padding_mask=ember.tensor(kpm), need_weights=need_weights)
    eo, ep = _np_mha(x, m, kpm)
    np.testing.assert_allclose(_np(out), eo, atol=1e-12)
    if need_weights:
        np.testing.assert_allclose(_np(w), ep.mean(1), atol=1e-12)
        np.testing.assert_allclose(_np(w).sum(-1), 1, atol=1e-12)
        assert np.all(_np(w)[0, :, 2] == 0)
    else:
        assert w is None


def test_multihead_attention_batch_first_and_unbatched_agree():
    ember.manual_seed(13)
    m = nn.MultiheadAttention(4, 2)
    mb = nn.MultiheadAttention(4, 2, batch_first=True)
    mb.load_state_dict(m.state_dict())
    x = ember.randn(5, 3, 4)
    a = m(x, x, x)[0]
    b = mb(x.transpose(0, 1), x.transpose(0, 1), x.transpose(0, 1))[0]
    np.testing.assert_allclose(_np(a), _np(b.transpose(0, 1)), atol=1e-6)
    c, w = m(x[:, 1], x[:, 1], x[:, 1], average_attn_weights=False)
    np.testing.assert_allclose(_np(c), _np(a[:, 1]), atol=1e-6)
    assert tuple(w.shape) == (2, 5, 5)


def test_multihead_attention_gradients_finite_differences():
    ember.manual_seed(14)
    m = nn.MultiheadAttention(4, 2, kdim=3, vdim=2).double()
    rng = np.random.default_rng(14)
    check_grad(lambda q, k, v: m(q, k, v, need_weights=False)[0],
               rng.standard_normal((3, 2, 4)), rng.standard_normal((5, 2, 3)),
               rng.standard_normal((5, 2, 2)))


def test_multihead_attention_errors():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    m = nn.MultiheadAttention(4, 2)
    x = ember.zeros(3, 2, 4)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        m(x, x, x, is_causal=True)
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=ember.zeros(3, 3, dtype=ember.int64))


# ------------------------------------------------------------- Transformer encoder

def test_encoder_layer_post_norm_structure_matches_numpy():
    ember.manual_seed(15)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0).double()
    x = np.random.default_rng(15).standard_normal((3, 2, 4))
    out = layer(ember.tensor(x))

    def ln(a, norm):
        mu, var = a.mean(-1, keepdims=True), a.var(-1, keepdims=True)
        return (a - mu) / np.sqrt(var + 1e-5) * _np(norm.weight) + _np(norm.bias)

    sa, _ = _np_mha(x, layer.self_attn)
    h = ln(x + sa, layer.norm1)
    ff = np.maximum(h @ _np(layer.linear1.weight).T + _np(layer.linear1.bias), 0)
    ff = ff @ _np(layer.linear2.weight).T + _np(layer.linear2.bias)
    np.testing.assert_allclose(_np(out), ln(h + ff, layer.norm2), atol=1e-12)


def test_encoder_dropout_train_vs_eval_and_clones():
    ember.manual_seed(16)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.5)
    enc = nn.TransformerEncoder(layer, 3)
    assert len(enc.layers) == 3 and enc.layers[0] is not enc.layers[1]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    np.testing.assert_array_equal(_np(enc.layers[0].linear1.weight),
                                  _np(enc.layers[2].linear1.weight))
    assert len(enc.state_dict()) == 3 * len(layer.state_dict())
    x = ember.randn(5, 2, 8)
    assert not np.allclose(_np(enc(x)), _np(enc(x)))
    enc.eval()
    np.testing.assert_array_equal(_np(enc(x)), _np(enc(x)))


def test_encoder_causal_mask_equals_is_causal_and_gradient():
    ember.manual_seed(17)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0,
                                       norm_first=True, activation="gelu").double()
    enc = nn.TransformerEncoder(layer, 2)
    x = np.random.default_rng(17).standard_normal((4, 2, 4))
    mask = np.triu(np.full((4, 4), -np.inf), 1)
    a = enc(ember.tensor(x), mask=ember.tensor(mask))
    b = enc(ember.tensor(x), mask=ember.tensor(mask), is_causal=False)
    np.testing.assert_allclose(_np(a), _np(b), atol=1e-12)
    # causality: the first position does not depend on later ones
    x2 = x.copy()
    x2[2:] += 1.0
    c = enc(ember.tensor(x2), mask=ember.tensor(mask))
    np.testing.assert_allclose(_np(c)[:2], _np(a)[:2], atol=1e-12)
    check_grad(lambda t: enc(t, mask=ember.tensor(mask)), x)


def test_encoder_layer_bad_activation():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
