"""Behaviour of ATen's functional forms in the ember namespace (no torch needed): the
statistics of native_layer_norm/batch_norm/group_norm, native_dropout's mask, feature_dropout,
the RNN cells and sequences, convolution, conv_tbc, grid_sampler, affine_grid_generator,
ctc_loss, the deprecated norms, norm_except_dim, segment_reduce, cond and while_loop.
Gradients by finite differences in float64 (``gradcheck``); expected values from the math;
errors in PyTorch's words (texts from PyTorch 2.13)."""
import math
import warnings

import pytest

import ember
from ember.autograd import gradcheck


def rand(*shape, seed=0):
    g = ember.Generator().manual_seed(seed)
    return ember.randn(*shape, generator=g, dtype=ember.float64)


def leaf(*shape, seed=0):
    return rand(*shape, seed=seed).requires_grad_()


# ---- normalization ----------------------------------------------------------------------------
def test_native_layer_norm_statistics_from_the_math():
    x = ember.tensor([[1.0, 3.0], [2.0, 2.0]], dtype=ember.float64)
    out, mean, rstd = ember.native_layer_norm(x, [2], None, None, 1e-5)
    assert mean.tolist() == [[2.0], [2.0]]
    assert rstd.flatten().tolist() == pytest.approx([1 / math.sqrt(1 + 1e-5), 1 / math.sqrt(1e-5)])
    assert not mean.requires_grad and out.shape == x.shape


def test_native_norms_gradcheck():
    x, w, b = leaf(2, 3, 4), leaf(3, 4, seed=1), leaf(3, 4, seed=2)
    assert gradcheck(lambda x, w, b: ember.native_layer_norm(x, [3, 4], w, b, 1e-5)[0],
                     (x, w, b))
    xg, wg, bg = leaf(2, 6, 3), leaf(6, seed=1), leaf(6, seed=2)
    assert gradcheck(lambda x, w, b: ember.native_group_norm(x, w, b, 2, 6, 3, 3, 1e-5),
                     (xg, wg, bg))
    assert gradcheck(lambda x, w, b: ember.native_batch_norm(x, w, b, None, None, True, 0.1,
                                                             1e-5)[0], (xg, wg, bg))


def test_native_batch_norm_updates_running_statistics():
    x = ember.tensor([[1.0], [3.0]], dtype=ember.float64)
    rm, rv = ember.zeros(1, dtype=ember.float64), ember.ones(1, dtype=ember.float64)
    out, mean, invstd = ember.native_batch_norm(x, None, None, rm, rv, True, 0.5, 0.0)
    assert out.flatten().tolist() == [-1.0, 1.0]
    assert mean.tolist() == [2.0] and invstd.tolist() == [1.0]
    assert rm.tolist() == [1.0]            # 0.5 * 0 + 0.5 * 2
    assert rv.tolist() == [1.5]            # 0.5 * 1 + 0.5 * (unbiased variance 2)
    out, mean, invstd = ember.native_batch_norm(x, None, None, rm, rv, False, 0.5, 0.0)
    assert mean.shape == (0,) and invstd.shape == (0,)
    assert out.flatten().tolist() == pytest.approx([0.0, 2 / math.sqrt(1.5)])


def test_native_batch_norm_errors():
    x = ember.ones(2, 3, 4)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements not 2"):
        ember.native_batch_norm(x, ember.ones(2), None, None, None, True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        ember.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)


def test_native_group_norm_checks_its_sizes():
    with pytest.raises(RuntimeError, match=r"Expected X.numel\(\) == N \* C \* HxW"):
        ember.native_group_norm(ember.ones(2, 3, 4), None, None, 2, 3, 5, 3, 1e-5)


# ---- dropout ----------------------------------------------------------------------------------
def test_native_dropout_mask_and_scale():
    ember.manual_seed(0)
    x = ember.ones(1000, dtype=ember.float64, requires_grad=True)
    out, mask = ember.native_dropout(x, 0.25, True)
    assert mask.dtype == ember.bool
    kept = mask.to(ember.float64)
    assert ember.equal(out, kept / 0.75)
    assert 0.65 < kept.mean().item() < 0.85
    out.sum().backward()
    assert ember.equal(x.grad, kept / 0.75)
    out, mask = ember.native_dropout(x, 0.25, False)
    assert bool(mask.all()) and ember.equal(out, x) and out is not x and out.requires_grad
    out, mask = ember.native_dropout(x, 0.25, None)  # None: training
    assert not bool(mask.all())


def test_native_dropout_errors():
    with pytest.raises(RuntimeError, match=r"bernoulli_ expects p to be in \[0, 1\], but got "
                                           r"p=-0.5"):
        ember.native_dropout(ember.ones(3), 1.5, True)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        ember.native_dropout(ember.arange(3), 0.5, True)


def test_feature_dropout_drops_whole_channels_in_place():
    ember.manual_seed(1)
    x = ember.ones(4, 8, 3)
    assert ember.feature_dropout_(x, 0.5, True) is x
    per_channel = x.amax(-1) == x.amin(-1)
    assert bool(per_channel.all()) and set(x.unique().tolist()) <= {0.0, 2.0}
    with pytest.raises(RuntimeError, match="dropout probability has to be between 0 and 1, "
                                           "but got 1.5"):
        ember.feature_dropout(ember.ones(2, 2), 1.5, False)


def test_native_channel_shuffle_interleaves_groups():
    x = ember.arange(6.0).reshape(1, 6, 1)
    assert ember.native_channel_shuffle(x, 2).flatten().tolist() == [0, 3, 1, 4, 2, 5]


# ---- recurrent forms --------------------------------------------------------------------------
def test_cells_gradcheck():
    x, h, c = leaf(2, 3), leaf(2, 4, seed=1), leaf(2, 4, seed=2)
    wi, wh, bi, bh = leaf(16, 3, seed=3), leaf(16, 4, seed=4), leaf(16, seed=5), leaf(16, seed=6)
    assert gradcheck(lambda *a: ember.lstm_cell(a[0], [a[1], a[2]], *a[3:]),
                     (x, h, c, wi, wh, bi, bh))
    assert gradcheck(lambda x, h, wi, wh: ember.gru_cell(x, h, wi, wh),
                     (x, h, leaf(12, 3, seed=7), leaf(12, 4, seed=8)))
    assert gradcheck(lambda x, h, wi, wh: ember.rnn_tanh_cell(x, h, wi, wh),
                     (x, h, leaf(4, 3, seed=9), leaf(4, 4, seed=10)))


def test_rnn_relu_cell_from_the_math():
    out = ember.rnn_relu_cell(ember.tensor([[1.0, -2.0]]), ember.tensor([[0.5]]),
                              ember.tensor([[1.0, 1.0]]), ember.tensor([[2.0]]),
                              ember.tensor([0.25]), ember.tensor([0.5]))
    assert out.tolist() == [[max(0.0, 1 - 2 + 0.25 + 1 + 0.5)]]


def test_cell_errors():
    x, h = ember.ones(3, 4), ember.ones(3, 5)
    with pytest.raises(RuntimeError, match="lstm_cell expects two hidden states"):
        ember.lstm_cell(x, [h], ember.ones(20, 4), ember.ones(20, 5))
    with pytest.raises(RuntimeError, match="weight_hh first dim must be 3 \\* hidden_size = "
                                           "15, but got 14"):
        ember.gru_cell(x, h, ember.ones(15, 4), ember.ones(14, 5))


def test_lstm_sequence_matches_the_module_and_gradchecks():
    ember.manual_seed(0)
    m = ember.nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True).double()
    x = rand(2, 5, 3)
    h0, c0 = rand(4, 2, 4, seed=1), rand(4, 2, 4, seed=2)
    out, (h, c) = m(x, (h0, c0))
    out2, h2, c2 = ember.lstm(x, [h0, c0], m._flat_weights, True, 2, 0.0, False, True, True)
    assert ember.allclose(out, out2) and ember.allclose(h, h2) and ember.allclose(c, c2)
    params = [leaf(8, 2, seed=3), leaf(8, 2, seed=4)]
    assert gradcheck(lambda x, h, c, w1, w2: ember.lstm(x, [h, c], [w1, w2], False, 1, 0.0,
                                                        False, False, False),
                     (leaf(3, 1, 2), leaf(1, 1, 2, seed=5), leaf(1, 1, 2, seed=6), *params))


def test_packed_gru_matches_the_module():
    ember.manual_seed(0)
    m = ember.nn.GRU(3, 4).double()
    seqs = [rand(3, 3), rand(2, 3, seed=1)]
    packed = ember.nn.utils.rnn.pack_sequence(seqs)
    out, h = m(packed)
    data, h2 = ember.gru(packed.data, packed.batch_sizes, ember.zeros(1, 2, 4,
                                                                     dtype=ember.float64),
                         m._flat_weights, True, 1, 0.0, False, False)
    assert ember.allclose(out.data, data) and ember.allclose(h, h2)


def test_sequence_forms_dropout_between_layers_only_in_training():
    ember.manual_seed(0)
    x, h = rand(5, 1, 2), ember.zeros(2, 1, 4, dtype=ember.float64)
    params = [rand(4, 2), rand(4, 4, seed=1), rand(4, 4, seed=2), rand(4, 4, seed=3)]
    a = ember.rnn_tanh(x, h, params, False, 2, 1.0, False, False, False)[0]
    b = ember.rnn_tanh(x, h, params, False, 2, 0.0, False, False, False)[0]
    assert ember.equal(a, b)
    dropped = ember.rnn_tanh(x, h, params, False, 2, 1.0, True, False, False)[0]
    assert dropped.abs().sum().item() == 0.0  # all of the first layer's output dropped


def test_sequence_errors():
    with pytest.raises(RuntimeError, match="lstm expects two hidden states"):
        ember.lstm(ember.ones(2, 1, 1), [ember.ones(1, 1, 1)], [ember.ones(4, 1)] * 2, False, 1,
                   0.0, False, False, False)
    with pytest.raises(RuntimeError, match=r"Expected hidden\[0\] size \(1, 2, 4\), got "
                                           r"\[1, 3, 4\]"):
        ember.lstm(ember.ones(5, 2, 3), [ember.zeros(1, 3, 4), ember.zeros(1, 2, 4)],
                   [ember.ones(16, 3), ember.ones(16, 4)], False, 1, 0.0, False, False, False)
    with pytest.raises(RuntimeError, match="ArrayRef size 3 not divisible by stride 2"):
        ember.gru(ember.ones(2, 1, 1), ember.ones(1, 1, 1), [ember.ones(3, 1)] * 3, False, 1,
                  0.0, False, False, False)


# ---- convolution ------------------------------------------------------------------------------
def test_convolution_and_conv_tbc_gradcheck():
    x, w, b = leaf(1, 2, 5), leaf(3, 2, 2, seed=1), leaf(3, seed=2)
    assert gradcheck(lambda x, w, b: ember.convolution(x, w, b, [2], [1], [1], False, [0], 1),
                     (x, w, b))
    assert gradcheck(lambda x, w: ember.convolution(x, w, None, [2], [1], [1], True, [1], 1),
                     (leaf(1, 3, 4), w))
    assert gradcheck(lambda x, w, b: ember.conv_tbc(x, w, b, 1),
                     (leaf(5, 2, 3), leaf(2, 3, 4, seed=1), leaf(4, seed=2)))


def test_conv_tbc_from_the_math():
    x = ember.arange(4.0).reshape(4, 1, 1)
    out = ember.conv_tbc(x, ember.tensor([[[1.0]], [[10.0]]]), ember.tensor([0.5]), 0)
    assert out.flatten().tolist() == [10.5, 21.5, 32.5]  # x[t] + 10 x[t + 1] + 0.5
    assert ember.conv_tbc(x, ember.ones(2, 1, 1), ember.zeros(1), -1).flatten().tolist() == [3.0]


# ---- grids ------------------------------------------------------------------------------------
def test_grid_forms_gradcheck():
    x = leaf(1, 2, 3, 3)
    grid = (rand(1, 2, 2, 2, seed=1) * 0.8).requires_grad_()
    assert gradcheck(lambda x, g: ember.grid_sampler(x, g, 0, 1, False), (x, grid))
    assert gradcheck(lambda th: ember.affine_grid_generator(th, [1, 1, 2, 3], False),
                     (leaf(1, 2, 3),))


def test_grid_sampler_integer_modes():
    x = ember.arange(4.0).reshape(1, 1, 2, 2)
    corner = ember.full((1, 1, 1, 2), 0.9)
    assert ember.grid_sampler_2d(x, corner, 1, 0, True).item() == 3.0  # nearest
    with pytest.raises(RuntimeError, match="interpolation_mode"):
        ember.grid_sampler(x, corner, 3, 0, True)
    with pytest.raises(RuntimeError, match="padding_mode"):
        ember.grid_sampler(x, corner, 0, 5, True)


# ---- losses and norms -------------------------------------------------------------------------
def test_ctc_loss_integer_reduction():
    lp = ember.zeros(2, 1, 2, dtype=ember.float64).log_softmax(2)
    per_sample = ember.ctc_loss(lp, ember.tensor([[1]]), [2], [1])
    # paths emitting label 1 in 2 steps: "1 1", "_ 1", "1 _", each of probability 1/4
    assert per_sample.tolist() == pytest.approx([-math.log(0.75)])
    assert ember.ctc_loss(lp, ember.tensor([[1]]), [2], [1], 0, 1).item() == \
        pytest.approx(-math.log(0.75))
    with pytest.raises(ValueError, match="3 is not a valid value for reduction"):
        ember.ctc_loss(lp, ember.tensor([[1]]), [2], [1], 0, 3)


def test_deprecated_norms():
    x = ember.tensor([[3.0, 4.0], [0.0, 0.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ember.frobenius_norm(x, [0, 1]).item() == 5.0
        assert ember.nuclear_norm(ember.diag(ember.tensor([3.0, -4.0]))).item() == 7.0
    assert len(caught) == 2 and all("deprecated" in str(w.message) for w in caught)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(lambda a: ember.nuclear_norm(a, [0, 1], True), (leaf(3, 2),))
        with pytest.raises(RuntimeError, match="Expected at most 2 dimensions, but got 3"):
            ember.frobenius_norm(ember.ones(2, 2, 2), [0, 1, 2])
    with pytest.raises(NotImplementedError, match="aten::native_norm"):
        ember.native_norm(ember.ones(3))


def test_norm_except_dim():
    v = ember.tensor([[3.0, 4.0], [0.0, 1.0]])
    assert ember.norm_except_dim(v, 2, 0).tolist() == [[5.0], [1.0]]
    assert ember.norm_except_dim(v, 2, 1).flatten().tolist() == pytest.approx([3.0, 17 ** 0.5])
    assert ember.norm_except_dim(v, 2, -1).item() == pytest.approx(math.sqrt(26.0))
    with pytest.raises(TypeError, match="argument 'pow' \\(position 2\\) must be int"):
        ember.norm_except_dim(v, 2.5, 0)


# ---- segment_reduce ---------------------------------------------------------------------------
@pytest.mark.parametrize("reduce,expected", [
    ("sum", [3.0, 0.0, 12.0]), ("mean", [1.5, math.nan, 4.0]), ("max", [2.0, -math.inf, 5.0]),
    ("min", [1.0, math.inf, 3.0]), ("prod", [2.0, 1.0, 60.0])])
def test_segment_reduce_values(reduce, expected):
    out = ember.segment_reduce(ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0]), reduce,
                               lengths=ember.tensor([2, 0, 3]))
    assert out.tolist() == pytest.approx(expected, nan_ok=True)


def test_segment_reduce_initial_joins_every_segment():
    d, lengths = ember.tensor([1.0, 2.0, 3.0]), ember.tensor([1, 0, 2])
    assert ember.segment_reduce(d, "sum", lengths=lengths, initial=10).tolist() == \
        [11.0, 10.0, 15.0]
    assert ember.segment_reduce(d, "max", lengths=lengths, initial=2.5).tolist() == \
        [2.5, 2.5, 3.0]
    assert ember.segment_reduce(d, "mean", lengths=lengths, initial=1).tolist() == \
        [2.0, 1.0, 3.0]


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_gradcheck(reduce):
    data = leaf(7, 2)
    lengths = ember.tensor([2, 0, 4, 1])
    assert gradcheck(lambda d: ember.segment_reduce(d, reduce, lengths=lengths, initial=0.5),
                     (data,))
    offsets = ember.tensor([[0, 1, 3], [1, 2, 3]])
    assert gradcheck(lambda d: ember.segment_reduce(d, reduce, offsets=offsets, axis=1),
                     (leaf(2, 3, 2, seed=1),))


def test_segment_reduce_meta_and_errors():
    meta = ember.empty(6, 3, device="meta")
    assert ember.segment_reduce(meta, "sum", lengths=ember.tensor([2, 4], device="meta")).shape \
        == (2, 3)
    with pytest.raises(RuntimeError, match="indices based reduction is not supported yet"):
        ember.segment_reduce(ember.ones(2), "sum", indices=ember.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="lengths contains negative value!"):
        ember.segment_reduce(ember.ones(2), "sum", lengths=ember.tensor([3, -1]))


# ---- control flow -----------------------------------------------------------------------------
def test_cond_picks_a_branch_and_differentiates_it():
    x = leaf(3)
    assert gradcheck(lambda x: ember.cond(x.sum() > 0, lambda a: a.sin(), lambda a: a.exp(),
                                          (x,)), (x,))
    out = ember.cond(False, lambda a: a + 1, lambda a: {"k": [a - 1]}, (ember.ones(1),))
    assert out["k"][0].tolist() == [0.0]
    with pytest.raises(RuntimeError, match="Expect both branches to be callable."):
        ember.cond(ember.tensor(True), None, lambda: 0)
    with pytest.raises(RuntimeError, match="Expected the branches of cond to return tensors"):
        ember.cond(ember.tensor(True), lambda a: 3, lambda a: a, (ember.ones(1),))


def test_while_loop_semantics_and_checks():
    i, total = ember.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + i),
                                (ember.tensor(0), ember.tensor(0)))
    assert (i.item(), total.item()) == (4, 6)
    never = (ember.tensor(5),)
    assert ember.while_loop(lambda i: i < 0, lambda i: (i + 1,), never) is never
    with pytest.raises(RuntimeError, match="same number of outputs"):
        ember.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1,), (ember.tensor(0),
                                                                     ember.ones(2)))
    with pytest.raises(RuntimeError, match="same metadata"):
        ember.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x.double()),
                         (ember.tensor(0), ember.ones(2)))
    with pytest.raises(RuntimeError, match="tensor or int leaves"):
        ember.while_loop(lambda i: i < 3, lambda i: i, ("a",))
    with pytest.raises(RuntimeError, match="Expect cond_fn and body_fn to be callable."):
        ember.while_loop(3, lambda i: i, (ember.tensor(0),))
