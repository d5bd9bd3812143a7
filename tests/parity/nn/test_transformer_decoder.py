"""TransformerDecoderLayer, TransformerDecoder and Transformer vs PyTorch: torch's weights
copied over through state_dict, outputs and gradients of inputs and parameters compared."""
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.nn as enn
from tests.parity.nn.test_rnn_attention import (DTYPES, _check_module, _copy_weights,
                                                _lib_dtype)

pytestmark = [pytest.mark.filterwarnings("ignore:enable_nested_tensor is True"),
              pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")]

DEC_CONFIGS = [dict(), dict(batch_first=True), dict(norm_first=True),
               dict(batch_first=True, norm_first=True, bias=False),
               dict(activation="gelu", batch_first=True)]


def _decoder_layers(kw, dropout=0.0):
    torch.manual_seed(0)
    tl = torch.nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=dropout, **kw)
    el = enn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dropout=dropout, **kw)
    return tl, el


def _inputs(kw, rng, dt, tgt_len=4, src_len=5, batch=3):
    bf = kw.get("batch_first")
    tgt = rng.standard_normal((batch, tgt_len, 8) if bf else (tgt_len, batch, 8)).astype(dt)
    mem = rng.standard_normal((batch, src_len, 8) if bf else (src_len, batch, 8)).astype(dt)
    return tgt, mem


def _masks(rng, dt, tgt_len=4, src_len=5, batch=3):
    causal = np.triu(np.full((tgt_len, tgt_len), -np.inf), 1).astype(dt)
    tkpm = rng.random((batch, tgt_len)) > 0.7
    tkpm[:, 0] = False
    mkpm = rng.random((batch, src_len)) > 0.7
    mkpm[:, 0] = False
    mem_mask = rng.standard_normal((tgt_len, src_len)).astype(dt)
    return causal, tkpm, mkpm, mem_mask


def _with_masks(mod, tgt, mem, causal, tkpm, mkpm, mem_mask):
    return mod(tgt, mem, tgt_mask=causal, memory_mask=mem_mask, tgt_key_padding_mask=tkpm,
               memory_key_padding_mask=mkpm)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", DEC_CONFIGS, ids=str)
def test_decoder_layer(kw, dt):
    tl, el = _decoder_layers(kw)
    tl, el = tl.to(_lib_dtype(torch, dt)), el.to(_lib_dtype(ember, dt))
    _copy_weights(tl, el, dt)
    rng = np.random.default_rng(3)
    tgt, mem = _inputs(kw, rng, dt)
    _check_module(tl, el, [tgt, mem], dt)
    _check_module(tl, el, [tgt, mem, *_masks(rng, dt)], dt, call=_with_masks)
    causal = _masks(rng, dt)[0]
    _check_module(tl, el, [tgt, mem, causal], dt,
                  call=lambda m, t, s, c: m(t, s, tgt_mask=c, tgt_is_causal=True))


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", DEC_CONFIGS[:3], ids=str)
def test_decoder_stack(kw, dt):
    tl, el = _decoder_layers(kw)
    tm = torch.nn.TransformerDecoder(tl, 2, norm=torch.nn.LayerNorm(8)).to(_lib_dtype(torch, dt))
    em = enn.TransformerDecoder(el, 2, norm=enn.LayerNorm(8)).to(_lib_dtype(ember, dt))
    _copy_weights(tm, em, dt)
    rng = np.random.default_rng(4)
    tgt, mem = _inputs(kw, rng, dt)
    _check_module(tm, em, [tgt, mem], dt)
    _check_module(tm, em, [tgt, mem, *_masks(rng, dt)], dt, call=_with_masks)


def test_decoder_train_mode_without_dropout_and_unbatched():
    tl, el = _decoder_layers({}, dropout=0.0)
    tm, em = torch.nn.TransformerDecoder(tl, 2).double(), enn.TransformerDecoder(el, 2).double()
    _copy_weights(tm, em, np.float64)
    rng = np.random.default_rng(5)
    tgt, mem = rng.standard_normal((4, 8)), rng.standard_normal((5, 8))
    _check_module(tm, em, [tgt, mem], np.float64)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True, norm_first=True)], ids=str)
def test_transformer(kw, dt):
    torch.manual_seed(0)
    tm = torch.nn.Transformer(8, 2, 2, 2, 16, dropout=0.0, **kw).to(_lib_dtype(torch, dt))
    em = enn.Transformer(8, 2, 2, 2, 16, dropout=0.0, **kw).to(_lib_dtype(ember, dt))
    _copy_weights(tm, em, dt)
    rng = np.random.default_rng(6)
    tgt, src = _inputs(kw, rng, dt)
    causal, tkpm, skpm, _ = _masks(rng, dt)
    _check_module(tm, em, [src, tgt], dt)
    _check_module(tm, em, [src, tgt, causal, tkpm, skpm], dt,
                  call=lambda m, s, t, c, tk, sk: m(
                      s, t, tgt_mask=c, tgt_key_padding_mask=tk, src_key_padding_mask=sk,
                      memory_key_padding_mask=sk))


def test_transformer_names_shapes_repr_and_init():
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.Transformer(8, 2, 1, 2, 16)
        em = enn.Transformer(8, 2, 1, 2, 16)
    assert repr(em) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    # every matrix is Xavier-uniform: bound sqrt(6 / (fan_in + fan_out)); vectors keep their init
    for name, p in em.named_parameters():
        if p.dim() > 1:
            bound = np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            assert np.abs(p.detach().numpy()).max() <= bound, name
        elif name.endswith("in_proj_bias"):
            assert not np.any(p.detach().numpy()), name
    tl, el = _decoder_layers(dict(norm_first=True, bias=False))
    assert repr(el) == repr(tl)
    assert repr(enn.TransformerDecoder(el, 2)) == repr(torch.nn.TransformerDecoder(tl, 2))


def test_generate_square_subsequent_mask():
    for kw in [dict(), dict(dtype="float64")]:
        t = torch.nn.Transformer.generate_square_subsequent_mask(
            4, **{k: getattr(torch, v) for k, v in kw.items()})
        e = enn.Transformer.generate_square_subsequent_mask(
            4, **{k: getattr(ember, v) for k, v in kw.items()})
        assert e.dtype.name == str(t.dtype).split(".")[-1]
        np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("case", ["batch", "features"])
def test_transformer_errors_match(case):
    msgs = []
    for lib, nn in ((torch, torch.nn), (ember, enn)):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = nn.Transformer(8, 2, 1, 1, 16)
        src = lib.zeros(5, 3, 8)
        tgt = lib.zeros(4, 2, 8) if case == "batch" else lib.zeros(4, 3, 6)
        with pytest.raises(RuntimeError) as info:
            model(src, tgt)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
