"""nn.utils.rnn and RNN/LSTM/GRU on PackedSequence vs PyTorch: packed layouts, padded
results, final states and gradients of inputs and parameters, error messages."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of
from tests.parity.nn.test_rnn_attention import DTYPES, _check_module, _pair


def _rnn_utils(lib):
    return lib.nn.utils.rnn


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [2, 5, 1, 3], [3, 3, 3, 3]], ids=str)
def test_pack_pad_roundtrip(lengths, batch_first, dt):
    x = np.random.default_rng(0).standard_normal((4, 5, 2) if batch_first else (5, 4, 2))
    sorted_ok = lengths == sorted(lengths, reverse=True)

    def fn(lib, x):
        u = _rnn_utils(lib)
        p = u.pack_padded_sequence(x, lib.tensor(lengths), batch_first=batch_first,
                                   enforce_sorted=sorted_ok)
        padded, out_lengths = u.pad_packed_sequence(p, batch_first=batch_first,
                                                    padding_value=0.5, total_length=6)
        extra = [] if p.sorted_indices is None else [p.sorted_indices, p.unsorted_indices]
        return [p.data, p.batch_sizes, padded, out_lengths] + extra
    compare(fn, x.astype(dt))


@pytest.mark.parametrize("kw", [dict(), dict(batch_first=True, padding_value=-2.0),
                                dict(padding_side="left")], ids=str)
def test_pad_sequence(kw):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal((n, 3)) for n in (2, 4, 1)]
    compare(lambda lib, *xs: _rnn_utils(lib).pad_sequence(list(xs), **kw), *arrays)


def test_pack_sequence_unpack_unpad():
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((n, 2)) for n in (2, 4, 3)]

    def fn(lib, *xs):
        u = _rnn_utils(lib)
        p = u.pack_sequence(list(xs), enforce_sorted=False)
        padded = u.pad_sequence(list(xs), batch_first=True)
        return [p.data * 2, *u.unpack_sequence(p),
                *u.unpad_sequence(padded, lib.tensor([2, 4, 3]), batch_first=True)]
    compare(fn, *arrays)


def test_packed_sequence_repr_and_to():
    for lib in (torch, ember):
        p = _rnn_utils(lib).pack_sequence([lib.tensor([1.0, 2.0]), lib.tensor([3.0])])
        assert p.to(lib.float32) is p
    reprs = [repr(_rnn_utils(lib).pack_sequence([lib.tensor([1.0, 2.0]), lib.tensor([3.0])]))
             for lib in (torch, ember)]
    assert reprs[0] == reprs[1]


PACK_ERRORS = {
    "unsorted": lambda lib: _rnn_utils(lib).pack_padded_sequence(
        lib.zeros(3, 4), [1, 3, 2], batch_first=True),
    "zero_length": lambda lib: _rnn_utils(lib).pack_padded_sequence(
        lib.zeros(3, 4), [3, 2, 0], batch_first=True),
    "length_count": lambda lib: _rnn_utils(lib).pack_padded_sequence(
        lib.zeros(4, 3), [3, 2]),
    "2d_lengths": lambda lib: _rnn_utils(lib).pack_padded_sequence(
        lib.zeros(4, 3), lib.tensor([[3, 2, 1]])),
    "total_length": lambda lib: _rnn_utils(lib).pad_packed_sequence(
        _rnn_utils(lib).pack_sequence([lib.zeros(3), lib.zeros(2)]), total_length=2),
    "empty": lambda lib: _rnn_utils(lib).pad_sequence([]),
    "side": lambda lib: _rnn_utils(lib).pad_sequence([lib.zeros(2)], padding_side="top"),
}


@pytest.mark.parametrize("case", sorted(PACK_ERRORS))
def test_packing_errors_match(case):
    t_err, e_err = error_of(lambda: PACK_ERRORS[case](torch)), error_of(
        lambda: PACK_ERRORS[case](ember))
    assert e_err == t_err


RNN_CONFIGS = [dict(), dict(num_layers=2, bidirectional=True),
               dict(batch_first=True, bidirectional=True), dict(bias=False, num_layers=2)]


def _run_packed(lengths, batch_first, enforce_sorted, with_state, cls):
    def call(m, x, *state):
        lib = ember if isinstance(m, ember.nn.Module) else torch
        u = _rnn_utils(lib)
        p = u.pack_padded_sequence(x, lengths, batch_first=batch_first,
                                   enforce_sorted=enforce_sorted)
        if state:
            hx = tuple(state) if cls == "LSTM" else state[0]
            out, hidden = m(p, hx)
        else:
            out, hidden = m(p)
        assert isinstance(out, u.PackedSequence)
        padded, _ = u.pad_packed_sequence(out, batch_first=batch_first)
        return out.data, padded, hidden
    return call


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("kw", RNN_CONFIGS, ids=str)
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_rnn_on_packed_sequence(cls, kw, with_state, dt):
    tm, em = _pair(cls, dt, 3, 4, **kw)
    rng = np.random.default_rng(3)
    batch_first = kw.get("batch_first", False)
    x = rng.standard_normal((4, 5, 3) if batch_first else (5, 4, 3)).astype(dt)
    arrays = [x]
    if with_state:
        d = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
        arrays += [rng.standard_normal((d, 4, 4)).astype(dt)
                   for _ in range(2 if cls == "LSTM" else 1)]
    _check_module(tm, em, arrays, dt,
                  call=_run_packed([2, 5, 1, 3], batch_first, False, with_state, cls))
    _check_module(tm, em, arrays, dt,
                  call=_run_packed([5, 3, 3, 1], batch_first, True, with_state, cls))


def test_lstm_proj_size_on_packed_sequence():
    tm, em = _pair("LSTM", np.float64, 3, 5, proj_size=2, bidirectional=True)
    x = np.random.default_rng(4).standard_normal((5, 3, 3))
    _check_module(tm, em, [x], np.float64, call=_run_packed([4, 5, 2], False, False, False,
                                                            "LSTM"))


def test_packed_rnn_errors_match():
    def bad_hidden(lib):
        lib.manual_seed(0)
        m = lib.nn.GRU(2, 3)
        p = _rnn_utils(lib).pack_sequence([lib.zeros(3, 2), lib.zeros(1, 2)])
        return m(p, lib.zeros(1, 4, 3))
    assert error_of(lambda: bad_hidden(ember)) == error_of(lambda: bad_hidden(torch))
