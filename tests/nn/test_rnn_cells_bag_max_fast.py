"""The fused recurrent cell ops (``_ops/rnn_cell_ops.py``) that the step-by-step layers
use, and the segment-maximum path of ``F.embedding_bag(mode='max')``: gradients by finite
differences, agreement with the composite cell, higher derivatives, fallbacks."""
import sys

import numpy as np
import pytest

import ember
import ember.nn.modules.rnn  # noqa: F401 - the module, not the name ember.nn re-exports
from ember._ops.rnn_cell_ops import (FusedGRUCell, FusedLSTMCell, gru_cell_composite,
                                     lstm_cell_composite)
from ember.autograd import gradcheck, gradgradcheck
from ember.overrides import TorchFunctionMode

RNN = sys.modules["ember.nn.modules.rnn"]


def _leaves(*shapes, seed=0):
    rs = np.random.RandomState(seed)
    return [ember.tensor(rs.standard_normal(s), requires_grad=True) for s in shapes]


def test_fused_cells_gradcheck_and_gradgradcheck():
    lstm = _leaves((2, 12), (2, 12), (2, 3))
    gru = _leaves((2, 9), (2, 9), (2, 3), seed=1)
    assert gradcheck(lambda *t: FusedLSTMCell.apply(*t), lstm)
    assert gradcheck(lambda *t: FusedGRUCell.apply(*t), gru)
    assert gradgradcheck(lambda *t: FusedLSTMCell.apply(*t), lstm)
    assert gradgradcheck(lambda *t: FusedGRUCell.apply(*t), gru)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_fused_cells_match_the_composite(dtype):
    for fused, composite, k in ((FusedLSTMCell, lstm_cell_composite, 4),
                                (FusedGRUCell, gru_cell_composite, 3)):
        args = [t.detach().to(dtype).requires_grad_() for t in _leaves((3, 4 * k), (3, 4 * k),
                                                                         (3, 4))]
        got, want = fused.apply(*args), composite(*args)
        got, want = (got if isinstance(got, tuple) else (got,)), \
            (want if isinstance(want, tuple) else (want,))
        tol = 1e-6 if dtype is ember.float32 else 1e-13
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.detach().numpy(), w.detach().numpy(), rtol=tol,
                                       atol=tol)
        grads = [ember.autograd.grad(sum((o * o).sum() for o in outs), args)
                 for outs in (got, want)]
        for g, w in zip(*grads):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=10 * tol, atol=10 * tol)


def _nodes(out):
    seen, stack, names = set(), [out.grad_fn], []
    while stack:
        fn = stack.pop()
        if fn is None or fn in seen:
            continue
        seen.add(fn)
        names.append(type(fn).__name__)
        stack.extend(f for f, _ in fn.next_functions)
    return names



def test_gru_layer_records_one_fused_node_per_step(monkeypatch, no_dispatch):
    gru = ember.nn.GRU(3, 4)
    out, _ = gru(ember.randn(5, 2, 3))
    assert _nodes(out).count("ThnnFusedGruCellBackward0") == 5


def test_torch_function_mode_gives_the_same_numbers():
    seen = []

    class Seen(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func)
            return func(*args, **(kwargs or {}))
    gru = ember.nn.GRU(3, 4)
    x = ember.randn(2, 1, 3)
    with Seen():
        out, _ = gru(x)
    assert seen
    np.testing.assert_array_equal(out.detach().numpy(), gru(x)[0].detach().numpy())


def test_half_precision_layers_keep_the_composite_cell():
    gru = ember.nn.GRU(3, 4).to(ember.bfloat16)
    out, _ = gru(ember.randn(2, 1, 3, dtype=ember.bfloat16))
    assert out.dtype == ember.bfloat16 and "ThnnFusedGruCellBackward0" not in _nodes(out)


def test_embedding_bag_max_nan_rule_and_empty_bag():
    # bag 0 = rows (0, 1): NaN in row 1 is passed over; bag 1 is empty; bag 2 = rows (1, 0):
    # it opens with the NaN, which stays
    w = ember.tensor([[1.0, 5.0], [float("nan"), 2.0]], requires_grad=True)
    out = ember.nn.functional.embedding_bag(ember.tensor([0, 1, 1, 0]), w,
                                            ember.tensor([0, 2, 2]), mode="max")
    got = out.detach().numpy()
    np.testing.assert_array_equal(got[[0, 1]], [[1.0, 5.0], [0.0, 0.0]])
    assert np.isnan(got[2, 0]) and got[2, 1] == 5.0
    out.backward(ember.tensor([[1.0, 2.0], [4.0, 8.0], [16.0, 32.0]]))
    np.testing.assert_array_equal(w.grad.numpy(), [[1.0, 34.0], [16.0, 0.0]])
