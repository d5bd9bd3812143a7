"""The fused LSTM layer op (ember/_ops/rnn_ops.py) and which nn.LSTM calls take it.

Expected values come from a NumPy recurrence or float64 finite differences, never from ember.
"""
import warnings

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwad
import ember.nn as nn
from ember._ops.rnn_ops import lstm_layer
from tests.helpers import check_grad, check_second_grad

RNG = np.random.default_rng(0)
STEPS, BATCH, FEATURES, HIDDEN = 4, 3, 2, 3


def _sigmoid(x):
    with np.errstate(over="ignore"):  # exp(-x) = inf gives the right 0
        return 1 / (1 + np.exp(-x))


def _np_layer(x, h, c, w_ih, w_hh, b_ih, b_hh, reverse):
    hs = [None] * len(x)
    for t in (range(len(x) - 1, -1, -1) if reverse else range(len(x))):
        g = x[t] @ w_ih.T + h @ w_hh.T
        if b_ih is not None:
            g = g + b_ih + b_hh
        i, f, gg, o = np.split(g, 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
        h = hs[t] = _sigmoid(o) * np.tanh(c)
    return np.stack(hs), h, c


def _arrays(bias=True, scale=0.7):
    shapes = [(STEPS, BATCH, FEATURES), (BATCH, HIDDEN), (BATCH, HIDDEN),
              (4 * HIDDEN, FEATURES), (4 * HIDDEN, HIDDEN)]
    if bias:
        shapes += [(4 * HIDDEN,), (4 * HIDDEN,)]
    return [RNG.standard_normal(s) * scale for s in shapes]


def _all_outputs(reverse, bias=True):
    """The layer with every output in one tensor (so each gets a gradient)."""
    def fn(*ts):
        if not bias:
            ts = ts + (None, None)
        hs, h, c = lstm_layer(*ts, reverse=reverse)
        return ember.cat([hs.reshape(-1), h.reshape(-1), c.reshape(-1)])
    return fn


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_values_match_numpy_recurrence(reverse, bias):
    arrays = _arrays(bias)
    hs, h, c = lstm_layer(*[ember.tensor(a) for a in arrays] + ([] if bias else [None, None]),
                          reverse=reverse)
    ehs, eh, ec = _np_layer(*arrays + ([] if bias else [None, None]), reverse)
    np.testing.assert_allclose(hs.numpy(), ehs, atol=1e-13)
    np.testing.assert_allclose(h.numpy(), eh, atol=1e-13)
    np.testing.assert_allclose(c.numpy(), ec, atol=1e-13)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_gradients_of_every_input_match_finite_differences(reverse, bias):
    # x, h0, c0, both weights and both biases, through all three outputs
    check_grad(_all_outputs(reverse, bias), *_arrays(bias))


@pytest.mark.parametrize("pick", [0, 1, 2])
def test_gradient_through_one_output_only(pick):
    # the outputs that get no gradient reach the array backward as None
    check_grad(lambda *ts: lstm_layer(*ts)[pick], *_arrays())


def test_large_pre_activations_saturate_without_warnings():
    arrays = _arrays(scale=60.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's overflow warning from exp would raise here
        hs, h, c = lstm_layer(*[ember.tensor(a) for a in arrays])
    np.testing.assert_allclose(hs.numpy(), _np_layer(*arrays, False)[0], atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
def test_second_derivatives_through_the_recomputed_graph(reverse):
    check_second_grad(_all_outputs(reverse), *_arrays(scale=0.5))


def test_second_derivatives_when_one_output_gets_no_gradient():
    # the missing output gradients become zeros for the recomputed graph
    check_second_grad(lambda *ts: lstm_layer(*ts)[2], *_arrays(scale=0.5))


def test_array_and_tensor_backward_agree():
    ts = [ember.tensor(a, requires_grad=True) for a in _arrays()]
    shapes = [(STEPS, BATCH, HIDDEN), (BATCH, HIDDEN), (BATCH, HIDDEN)]
    cot = [ember.tensor(RNG.standard_normal(s)) for s in shapes]
    on_arrays = ember.autograd.grad(lstm_layer(*ts), ts, cot)
    on_tensors = ember.autograd.grad(lstm_layer(*ts), ts, cot, create_graph=True)
    for a, b in zip(on_arrays, on_tensors):
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=1e-12, atol=1e-13)


def test_bias_gradients_are_separate_arrays():
    m = nn.LSTM(2, 3)
    m(ember.randn(4, 2, 2))[0].sum().backward()
    assert np.array_equal(m.bias_ih_l0.grad.numpy(), m.bias_hh_l0.grad.numpy())
    assert not np.shares_memory(m.bias_ih_l0.grad.numpy(), m.bias_hh_l0.grad.numpy())


def test_output_modified_in_place_fails_backward():
    m = nn.LSTM(2, 3)
    out, _ = m(ember.randn(4, 2, 2, requires_grad=True))
    out.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


def test_second_backward_needs_retain_graph():
    m = nn.LSTM(2, 3)
    out, _ = m(ember.randn(4, 2, 2))
    out.sum().backward(retain_graph=True)
    first = m.weight_hh_l0.grad.numpy().copy()
    out.sum().backward()
    np.testing.assert_allclose(m.weight_hh_l0.grad.numpy(), 2 * first, rtol=1e-6)
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        out.sum().backward()


def test_saved_tensor_hooks_see_the_kept_activations():
    m = nn.LSTM(2, 3)
    x = ember.randn(4, 2, 2, requires_grad=True)
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t.clone()  # backward must read what unpack returns
    with ember.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out, (h, c) = m(x)
    assert (4, 2, 12) in packed  # the gates, beside inputs, weights, cells and the output
    (out.sum() + c.sum()).backward()
    grads = [x.grad.numpy().copy()] + [p.grad.numpy().copy() for p in m.parameters()]
    x.grad = None
    m.zero_grad()
    out, (h, c) = m(x)
    (out.sum() + c.sum()).backward()
    for got, want in zip(grads, [x.grad.numpy()] + [p.grad.numpy() for p in m.parameters()]):
        np.testing.assert_array_equal(got, want)


def test_non_reentrant_checkpoint_gives_the_same_gradients():
    m = nn.LSTM(2, 3, num_layers=2).double()
    x = ember.tensor(RNG.standard_normal((4, 2, 2)), requires_grad=True)
    out = ember.utils.checkpoint.checkpoint(lambda t: m(t)[0], x, use_reentrant=False)
    gx, gw = ember.autograd.grad(out.sum(), [x, m.weight_hh_l1])
    ex, ew = ember.autograd.grad(m(x)[0].sum(), [x, m.weight_hh_l1])
    np.testing.assert_allclose(gx.numpy(), ex.numpy(), rtol=1e-13)
    np.testing.assert_allclose(gw.numpy(), ew.numpy(), rtol=1e-13)


# ---- which nn.LSTM calls run the fused op ---------------------------------------------------
def _fused_nodes(out):
    """The MkldnnRnnLayerBackward0 nodes in ``out``'s graph."""
    found, seen, stack = [], set(), [out.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        if type(node).__name__ == "MkldnnRnnLayerBackward0":
            found.append(node)
        stack.extend(fn for fn, _ in node.next_functions)
    return found


@pytest.mark.parametrize("kw,layers", [(dict(), 1), (dict(num_layers=2), 2),
                                       (dict(bidirectional=True, batch_first=True), 2)])
def test_dense_lstm_runs_one_fused_op_per_layer_direction(kw, layers):
    m = nn.LSTM(2, 3, **kw)
    out, _ = m(ember.randn(4, 2, 2))
    assert len(_fused_nodes(out)) == layers


@pytest.mark.parametrize("case", ["proj_size", "packed", "float16", "vmap"])
def test_other_lstm_calls_run_cell_by_cell(case):
    m = nn.LSTM(2, 4, proj_size=2) if case == "proj_size" else nn.LSTM(2, 3)
    x = ember.randn(4, 2, 2)
    if case == "packed":
        out = m(nn.utils.rnn.pack_padded_sequence(x, [4, 3]))[0].data
    elif case == "float16":
        out = m.half()(x.half())[0]
    elif case == "vmap":
        out = ember.func.vmap(lambda xs: m(xs)[0])(x.unsqueeze(0))
    else:
        out = m(x)[0]
    assert out.grad_fn is not None and not _fused_nodes(out)


def test_fused_and_cell_by_cell_paths_agree():
    m = nn.LSTM(2, 3, num_layers=2, bidirectional=True).double()
    x = ember.tensor(RNG.standard_normal((5, 2, 2)))
    out, (h, c) = m(x)
    packed = nn.utils.rnn.pack_padded_sequence(x, [5, 5])  # equal lengths: same numbers
    pout, (ph, pc) = m(packed)
    np.testing.assert_allclose(out.detach().numpy(),
                               nn.utils.rnn.pad_packed_sequence(pout)[0].detach().numpy(),
                               atol=1e-14)
    np.testing.assert_allclose(h.detach().numpy(), ph.detach().numpy(), atol=1e-14)
    np.testing.assert_allclose(c.detach().numpy(), pc.detach().numpy(), atol=1e-14)


def test_forward_mode_tangent_matches_finite_differences():
    m = nn.LSTM(2, 3).double()
    x, v = (ember.tensor(RNG.standard_normal((4, 2, 2))) for _ in range(2))
    with fwad.dual_level():
        tangent = fwad.unpack_dual(m(fwad.make_dual(x, v))[0]).tangent
    eps = 1e-6
    with ember.no_grad():
        expected = (m(x + eps * v)[0] - m(x - eps * v)[0]) / (2 * eps)
    np.testing.assert_allclose(tangent.detach().numpy(), expected.numpy(), atol=1e-8)
