"""The fast paths of embedding_bag's max mode (segment maxima) and of the step-by-step
recurrent layers (one fused cell op per step) vs PyTorch: values, gradients, NaN."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare
from tests.parity.nn.test_layers import FLOATS, randn

def _layer(lib, mode, dtype, *args, **kw):
    """A recurrent layer with the same weights in both libraries."""
    layer = getattr(lib.nn, mode)(*args, **kw).to(getattr(lib, np.dtype(dtype).name))
    rs = np.random.RandomState(0)
    with lib.no_grad():
        for _, p in sorted(layer.named_parameters()):
            p.copy_(lib.tensor(rs.standard_normal(tuple(p.shape)) * 0.5))
    return layer


INDICES = np.array([1, 2, 4, 5, 4, 3, 2, 9, 2, 2, 7])
OFFSETS = np.array([0, 4, 4, 7])  # the second bag is empty


@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_bag_max_skips_nan_unless_first(dtype):
    w = randn((10, 3), dtype, seed=7)
    w[2, 0] = np.nan  # row 2 opens bag 3: NaN there; inside bag 0 it is passed over
    w[4, 1] = np.nan

    def fn(lib, w):
        return lib.nn.functional.embedding_bag(lib.tensor(INDICES), w, lib.tensor(OFFSETS),
                                               mode="max")
    compare(fn, w)


def test_aten_embedding_bag_max_indices_with_nan_and_ties():
    w = np.round(randn((10, 3), np.float32, seed=8))
    w[4, 1] = np.nan
    got = ember.embedding_bag(ember.tensor(w), ember.tensor(INDICES), ember.tensor(OFFSETS),
                              False, 2)
    want = torch.embedding_bag(torch.tensor(w), torch.tensor(INDICES), torch.tensor(OFFSETS),
                               False, 2)
    for g, t in zip(got, want):
        np.testing.assert_array_equal(g.numpy(), t.numpy())


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("mode", ["GRU", "LSTM"])
def test_packed_bidirectional_layer(mode, dtype):
    x = randn((4, 5, 3), dtype, seed=9)

    def fn(lib, x):
        layer = _layer(lib, mode, dtype, 3, 4, num_layers=2, bidirectional=True,
                       batch_first=True)
        packed = lib.nn.utils.rnn.pack_padded_sequence(x, lib.tensor([5, 2, 4, 1]),
                                                       batch_first=True, enforce_sorted=False)
        out, hidden = layer(packed)
        out = lib.nn.utils.rnn.pad_packed_sequence(out, batch_first=True)[0]
        return out, hidden[0] if mode == "LSTM" else hidden
    compare(fn, x)


@pytest.mark.parametrize("dtype", FLOATS)
def test_gru_decoder_steps_with_given_state(dtype):
    x, h = randn((3, 1, 4), dtype, seed=10), randn((1, 3, 5), dtype, seed=11)

    def fn(lib, x, h):
        gru = _layer(lib, "GRU", dtype, 4, 5, batch_first=True)
        outs = []
        for _ in range(3):
            out, h = gru(x, h)
            outs.append(out)
        return lib.cat(outs, 1), h
    compare(fn, x, h)
