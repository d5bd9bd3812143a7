"""CTC loss, fractional max pooling, AdaptiveLogSoftmaxWithLoss, SyncBatchNorm, bfloat16 and
shared memory: values from the math, finite-difference gradients (float64), errors."""
import math

import pytest

import ember
import ember.nn.functional as F
from ember.autograd import gradcheck


# ------------------------------------------------------------------------------ CTC
def test_ctc_value_by_enumerating_paths():
    # uniform over 2 classes, 2 frames, target "1": paths 11, 01, 10 -> 3/4
    lp = ember.zeros(2, 1, 2).log_softmax(2)
    loss = F.ctc_loss(lp, ember.tensor([[1]]), (2,), (1,), reduction="none")
    assert loss.shape == (1,)
    assert math.isclose(loss.item(), -math.log(0.75), rel_tol=1e-6)
    # 'mean' divides by the target length first; an empty target has only the blank path
    lp3 = ember.zeros(3, 2, 3, dtype=ember.float64).log_softmax(2)
    losses = F.ctc_loss(lp3, ember.tensor([[1, 2], [0, 0]]), (3, 3), (2, 0), reduction="none")
    # "12" in 3 frames over 3 classes: 12-, 1-2, -12, 112, 122 -> 5/27; "" -> 1/27
    assert math.isclose(losses[0].item(), -math.log(5 / 27), rel_tol=1e-12)
    assert math.isclose(losses[1].item(), -math.log(1 / 27), rel_tol=1e-12)
    mean = F.ctc_loss(lp3, ember.tensor([[1, 2], [0, 0]]), (3, 3), (2, 0))
    assert math.isclose(mean.item(), (losses[0].item() / 2 + losses[1].item()) / 2)


def test_ctc_gradcheck_through_log_softmax():
    logits = ember.randn(5, 2, 4, dtype=ember.float64, requires_grad=True)
    targets, il, tl = ember.tensor([[1, 3, 3], [2, 1, 0]]), ember.tensor([5, 4]), \
        ember.tensor([3, 2])
    for reduction in ("none", "sum", "mean"):
        assert gradcheck(lambda z: F.ctc_loss(z.log_softmax(2), targets, il, tl,
                                              reduction=reduction), (logits,))


def test_ctc_impossible_alignment_and_zero_infinity():
    lp = ember.zeros(2, 1, 3, requires_grad=True)
    target = ember.tensor([[1, 1]])  # needs 3 frames
    loss = F.ctc_loss(lp, target, (2,), (2,), reduction="sum")
    assert loss.item() == math.inf
    zeroed = F.ctc_loss(lp, target, (2,), (2,), reduction="sum", zero_infinity=True)
    assert zeroed.item() == 0.0
    zeroed.backward()
    assert lp.grad.abs().sum().item() == 0.0


def test_ctc_module_and_errors():
    m = ember.nn.CTCLoss(blank=1, reduction="sum", zero_infinity=True)
    assert (m.blank, m.reduction, m.zero_infinity) == (1, "sum", True)
    lp = ember.zeros(4, 1, 3).log_softmax(2)
    with pytest.raises(RuntimeError, match="blank must be in label range"):
        F.ctc_loss(lp, ember.tensor([[1]]), (4,), (1,), blank=3)
    with pytest.raises(RuntimeError, match="input_lengths to have value at most 4"):
        F.ctc_loss(lp, ember.tensor([[1]]), (5,), (1,))
    with pytest.raises(ValueError, match="not a valid value for reduction"):
        F.ctc_loss(lp, ember.tensor([[1]]), (4,), (1,), reduction="avg")
    with pytest.raises(TypeError):
        F.ctc_loss(lp, ember.tensor([[1]]), 4, 1)


def test_ctc_double_backward_is_refused():
    lp = ember.zeros(3, 1, 2, dtype=ember.float64, requires_grad=True)
    loss = F.ctc_loss(lp, ember.tensor([[1]]), (3,), (1,))
    g, = ember.autograd.grad(loss, lp, create_graph=True)
    with pytest.raises(RuntimeError, match="not implemented"):
        g.sum().backward()


# ------------------------------------------------------------- fractional max pooling
def test_fractional_windows_from_the_rule():
    # kernel 1, 9 -> 3 wide: alpha = 4, starts int((i + u) * 4) - int(u * 4), last at 8
    x = ember.arange(45.0).reshape(1, 1, 5, 9)
    out, idx = F.fractional_max_pool2d(x, 1, output_size=(2, 3), return_indices=True,
                                       _random_samples=ember.tensor([[[0.3, 0.0]]]))
    # u = 0.3 for the width: starts 0, int(5.2) - int(1.2) = 4, 8; height: 0, 4
    assert idx.tolist() == [[[[0, 4, 8], [36, 40, 44]]]]
    assert out.tolist() == [[[[0.0, 4.0, 8.0], [36.0, 40.0, 44.0]]]]


def test_fractional_gradcheck_and_unbatched():
    x = ember.randn(2, 7, 8, dtype=ember.float64, requires_grad=True)
    u = ember.rand(1, 2, 2, dtype=ember.float64)
    assert gradcheck(lambda t: F.fractional_max_pool2d(t, 2, output_size=(4, 5),
                                                       _random_samples=u), (x,))
    x3 = ember.randn(1, 1, 5, 5, 6, dtype=ember.float64, requires_grad=True)
    u3 = ember.rand(1, 1, 3, dtype=ember.float64)
    assert gradcheck(lambda t: F.fractional_max_pool3d(t, 2, output_ratio=0.5,
                                                       _random_samples=u3), (x3,))


def test_fractional_modules_and_errors():
    pool = ember.nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)
    out, idx = pool(ember.randn(2, 3, 8, 10))
    assert out.shape == idx.shape == (2, 3, 4, 5) and idx.dtype == ember.int64
    assert list(pool.state_dict()) == []
    with pytest.raises(ValueError, match="either an output size"):
        ember.nn.FractionalMaxPool3d(2)
    with pytest.raises(ValueError, match="between 0 and 1"):
        ember.nn.FractionalMaxPool2d(2, output_ratio=1.0)
    with pytest.raises(RuntimeError, match="too large relative to input height"):
        F.fractional_max_pool2d(ember.randn(1, 1, 4, 4), 3, output_size=3)
    with pytest.raises(RuntimeError, match="same dtype as input"):
        F.fractional_max_pool2d(ember.randn(1, 1, 4, 4), 2, output_size=2,
                                _random_samples=ember.rand(1, 1, 2, dtype=ember.float64))


# ------------------------------------------------------------------ adaptive softmax
def test_adaptive_log_softmax_is_a_distribution():
    ember.manual_seed(0)
    asm = ember.nn.AdaptiveLogSoftmaxWithLoss(6, 9, [2, 5], div_value=2.0, head_bias=True,
                                              dtype=ember.float64)
    assert [k for k, _ in asm.named_parameters()] == [
        "head.weight", "head.bias", "tail.0.0.weight", "tail.0.1.weight", "tail.1.0.weight",
        "tail.1.1.weight"]
    x = ember.randn(7, 6, dtype=ember.float64)
    target = ember.tensor([0, 1, 2, 4, 5, 8, 3])
    full = asm.log_prob(x)
    assert ember.allclose(full.exp().sum(1), ember.ones(7, dtype=ember.float64))
    out = asm(x, target)
    assert ember.allclose(out.output, full.gather(1, target.unsqueeze(1)).squeeze(1))
    assert math.isclose(out.loss.item(), -out.output.mean().item(), rel_tol=1e-12)
    assert asm.predict(x).tolist() == full.argmax(1).tolist()
    single = asm(x[3], target[3])
    assert single.output.shape == () and math.isclose(single.output.item(),
                                                      out.output[3].item(), rel_tol=1e-12)


def test_adaptive_log_softmax_gradcheck_and_errors():
    ember.manual_seed(1)
    asm = ember.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2], div_value=2.0, dtype=ember.float64)
    x = ember.randn(5, 4, dtype=ember.float64, requires_grad=True)
    target = ember.tensor([0, 1, 3, 5, 2])
    assert gradcheck(lambda t: asm(t, target).loss, (x,))
    with pytest.raises(RuntimeError, match=r"Target values should be in \[0, 5\]"):
        asm(x, ember.tensor([0, 1, 3, 6, 2]))
    with pytest.raises(ValueError, match="cutoffs should be a sequence of unique"):
        ember.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 6])


# ---------------------------------------------------------------------- sync batch norm
def test_sync_batch_norm_matches_batch_norm_without_a_process_group():
    x = ember.randn(4, 3, 5)
    sync, plain = ember.nn.SyncBatchNorm(3), ember.nn.BatchNorm1d(3)
    assert ember.allclose(sync(x), plain(x))
    assert ember.allclose(sync.running_var, plain.running_var)
    assert sync(ember.randn(2, 3, 2, 2)).shape == (2, 3, 2, 2)  # any rank >= 2
    with pytest.raises(ValueError, match="expected at least 2D input"):
        sync(ember.randn(3))


def test_convert_sync_batchnorm_shares_state():
    bn = ember.nn.BatchNorm2d(3)
    bn.running_mean.fill_(2.0)
    net = ember.nn.Sequential(ember.nn.Conv2d(1, 3, 1), bn)
    out = ember.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    assert isinstance(out[1], ember.nn.SyncBatchNorm)
    assert out[1].weight is bn.weight and out[1].running_mean is bn.running_mean
    assert out[1].process_group is None


# ------------------------------------------------------------ bfloat16, shared memory
def test_bfloat16_and_shared_memory():
    layer = ember.nn.Linear(2, 2)
    assert layer.bfloat16() is layer and layer.weight.dtype == ember.bfloat16
    assert not ember.ones(2).is_shared()
    with pytest.raises(NotImplementedError):
        ember.ones(2).share_memory_()
    with pytest.raises(NotImplementedError):
        layer.share_memory()
