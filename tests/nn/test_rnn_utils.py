"""nn.utils.rnn (packing, padding) and the recurrent layers on packed batches: values from
NumPy and from running each sequence alone, gradients by finite differences."""
import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence,
                                pack_sequence, pad_packed_sequence, pad_sequence,
                                unpack_sequence, unpad_sequence)
from tests.helpers import check_grad


def test_pack_padded_layout_sorted():
    x = np.arange(12.0).reshape(3, 4)  # (B=3, T=4), lengths 4, 2, 1
    p = pack_padded_sequence(ember.tensor(x), [4, 2, 1], batch_first=True)
    assert isinstance(p, PackedSequence) and isinstance(p, tuple)
    np.testing.assert_array_equal(p.data.numpy(), [0, 4, 8, 1, 5, 2, 3])
    np.testing.assert_array_equal(p.batch_sizes.numpy(), [3, 2, 1, 1])
    assert p.batch_sizes.dtype == ember.int64
    assert p.sorted_indices is None and p.unsorted_indices is None
    data, batch_sizes, sorted_indices, unsorted_indices = p
    assert data is p.data and p._fields == ("data", "batch_sizes", "sorted_indices",
                                            "unsorted_indices")


def test_pack_unsorted_roundtrip_keeps_order():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 3, 2))  # (T, B, F)
    lengths = ember.tensor([2, 5, 3])
    p = pack_padded_sequence(ember.tensor(x), lengths, enforce_sorted=False)
    np.testing.assert_array_equal(p.sorted_indices.numpy(), [1, 2, 0])
    np.testing.assert_array_equal(p.unsorted_indices.numpy(), [2, 0, 1])
    padded, out_lengths = pad_packed_sequence(p, padding_value=-1.0, total_length=6)
    np.testing.assert_array_equal(out_lengths.numpy(), [2, 5, 3])
    expected = np.full((6, 3, 2), -1.0)
    for b, n in enumerate([2, 5, 3]):
        expected[:n, b] = x[:n, b]
    np.testing.assert_array_equal(padded.numpy(), expected)


def test_pad_sequence_sides_and_batch_first():
    a, b = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([4.0])
    np.testing.assert_array_equal(pad_sequence([a, b]).numpy(), [[1, 4], [2, 0], [3, 0]])
    np.testing.assert_array_equal(
        pad_sequence([a, b], batch_first=True, padding_value=9, padding_side="left").numpy(),
        [[1, 2, 3], [9, 9, 4]])


def test_pack_sequence_unpack_and_unpad():
    seqs = [ember.tensor([[1.0], [2.0]]), ember.tensor([[3.0], [4.0], [5.0]])]
    p = pack_sequence(seqs, enforce_sorted=False)
    back = unpack_sequence(p)
    assert [s.tolist() for s in back] == [s.tolist() for s in seqs]
    padded = pad_sequence(seqs)
    parts = unpad_sequence(padded, ember.tensor([2, 3]))
    assert [s.tolist() for s in parts] == [s.tolist() for s in seqs]


def test_invert_permutation():
    assert invert_permutation(None) is None
    np.testing.assert_array_equal(invert_permutation(ember.tensor([2, 0, 1])).numpy(), [1, 2, 0])


def test_packed_sequence_to_and_dtype_methods():
    p = pack_sequence([ember.tensor([1.0, 2.0]), ember.tensor([3.0])], enforce_sorted=False)
    assert p.to(ember.float32) is p
    q = p.double()
    assert q.data.dtype == ember.float64 and isinstance(q, PackedSequence)
    np.testing.assert_array_equal(q.sorted_indices.numpy(), p.sorted_indices.numpy())
    assert p.long().data.dtype == ember.int64
    assert not p.is_cuda


def test_packing_errors():
    x = ember.zeros(3, 4)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(x, [1, 3, 2], batch_first=True)
    with pytest.raises(RuntimeError, match="has to be greater than 0"):
        pack_padded_sequence(x, [3, 2, 0], batch_first=True)
    with pytest.raises(RuntimeError, match=r"got 2 \(batch_size=3\)"):
        pack_padded_sequence(x, [3, 2], batch_first=True)
    p = pack_padded_sequence(x, [4, 2, 1], batch_first=True)
    with pytest.raises(ValueError, match="total_length=3 and max sequence length being 4"):
        pad_packed_sequence(p, total_length=3)
    with pytest.raises(RuntimeError, match="empty list"):
        pad_sequence([])
    with pytest.raises(RuntimeError, match="padding_side"):
        pad_sequence([x], padding_side="middle")


def test_gradients_flow_through_pack_and_pad():
    def fn(x):
        p = pack_padded_sequence(x, [2, 4, 3], batch_first=True, enforce_sorted=False)
        return pad_packed_sequence(p, total_length=5)[0] * 1.5
    check_grad(fn, np.random.default_rng(1).standard_normal((3, 4, 2)))


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_packed_rnn_matches_each_sequence_alone(cls, bidirectional):
    ember.manual_seed(0)
    rnn = getattr(nn, cls)(3, 4, num_layers=2, bidirectional=bidirectional,
                           batch_first=True).double()
    rng = np.random.default_rng(2)
    lengths = [3, 5, 1]
    x = rng.standard_normal((3, 5, 3))
    packed = pack_padded_sequence(ember.tensor(x), lengths, batch_first=True,
                                  enforce_sorted=False)
    out, hidden = rnn(packed)
    assert isinstance(out, PackedSequence)
    padded, _ = pad_packed_sequence(out, batch_first=True)
    h_n = hidden[0] if cls == "LSTM" else hidden
    for b, n in enumerate(lengths):
        alone_out, alone_hidden = rnn(ember.tensor(x[b:b + 1, :n]))
        alone_h = alone_hidden[0] if cls == "LSTM" else alone_hidden
        np.testing.assert_allclose(padded[b, :n].detach().numpy(),
                                   alone_out[0].detach().numpy(), atol=1e-12)
        assert not np.any(padded[b, n:].detach().numpy())
        np.testing.assert_allclose(h_n[:, b].detach().numpy(), alone_h[:, 0].detach().numpy(),
                                   atol=1e-12)


def test_packed_gru_gradients_with_initial_state():
    ember.manual_seed(0)
    gru = nn.GRU(2, 3, bidirectional=True).double()

    def fn(x, h0):
        packed = pack_padded_sequence(x, [1, 3, 2], enforce_sorted=False)
        out, h_n = gru(packed, h0)
        return pad_packed_sequence(out)[0].sum(0) + h_n.sum(0).sum(-1, keepdim=True)
    rng = np.random.default_rng(3)
    check_grad(fn, rng.standard_normal((3, 3, 2)), rng.standard_normal((2, 3, 3)))


def test_packed_rnn_hidden_size_error():
    rnn = nn.RNN(2, 3)
    packed = pack_sequence([ember.zeros(3, 2), ember.zeros(2, 2)])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 3\), got \[1, 3, 3\]"):
        rnn(packed, ember.zeros(1, 3, 3))
