"""Softmax2d, alpha/feature-alpha/3-D dropout, LocalResponseNorm, LPPool, MaxUnpool,
ChannelShuffle and gumbel_softmax: values from their definitions, gradients by finite
differences, the dropouts' statistics and zeroed patterns (train vs eval, in place, seeded)."""
import math

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

R = np.random.default_rng(0)
SELU_SAT = 1.0507009873554805 * 1.6732632423543772


def t(a, grad=False):
    return ember.tensor(a, dtype=ember.float64, requires_grad=grad)


# ------------------------------------------------------------------------------- Softmax2d
def test_softmax2d_normalizes_channels():
    x = R.standard_normal((2, 3, 4, 5))
    out = nn.Softmax2d()(t(x)).numpy()
    np.testing.assert_allclose(out, np.exp(x) / np.exp(x).sum(1, keepdims=True), rtol=1e-12)
    with pytest.raises(ValueError, match="expected input to be 3D or 4D, got 2D instead"):
        nn.Softmax2d()(t(x[0, 0]))


# -------------------------------------------------------------------------------- dropouts
def _alpha_constants(p):
    a = 1 / math.sqrt((SELU_SAT ** 2 * p + 1) * (1 - p))
    return a, SELU_SAT * a * p, -SELU_SAT * a + SELU_SAT * a * p  # scale, shift, dropped value


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_alpha_dropout_statistics_and_values(p):
    ember.manual_seed(0)
    x = ember.randn(200_000, dtype=ember.float64)
    out = F.alpha_dropout(x, p, training=True)
    a, c, d = _alpha_constants(p)
    dropped = (out - d).abs() < 1e-12
    assert abs(dropped.double().mean().item() - p) < 0.01
    kept = ~dropped
    np.testing.assert_allclose(out[kept].numpy(), a * x[kept].numpy() + c, rtol=1e-12)
    # the point of alpha dropout: a standard normal input keeps mean 0 and variance 1
    assert abs(out.mean().item()) < 0.02 and abs(out.var().item() - 1) < 0.03


def test_feature_alpha_dropout_drops_whole_channels():
    ember.manual_seed(1)
    x = ember.randn(64, 16, 3, 3, dtype=ember.float64)
    out = F.feature_alpha_dropout(x, 0.5, training=True)
    _, _, d = _alpha_constants(0.5)
    dropped = ((out - d).abs() < 1e-12).reshape(64, 16, 9)
    per_channel = dropped.double().mean(-1)
    assert bool(((per_channel == 0) | (per_channel == 1)).all())
    assert 0.4 < per_channel.mean().item() < 0.6


def test_dropout3d_zeroes_channels_and_scales():
    ember.manual_seed(2)
    x = ember.ones(8, 32, 2, 2, 2)
    out = F.dropout3d(x, 0.25)
    values = out.reshape(8, 32, 8)
    assert bool((values == values[..., :1]).all())
    assert set(np.unique(values.numpy()).tolist()) <= {0.0, float(np.float32(1 / 0.75))}
    # an unbatched (C, D, H, W) input drops its channels too
    out = F.dropout3d(ember.ones(64, 1, 2, 2), 0.5).reshape(64, 4)
    assert bool((out == out[:, :1]).all()) and 0 < (out[:, 0] == 0).sum().item() < 64


def test_dropout_gradients_are_the_mask_scale():
    ember.manual_seed(3)
    x = t(R.standard_normal((6, 5)), grad=True)
    out = F.alpha_dropout(x, 0.3, training=True)
    out.sum().backward()
    a, _, d = _alpha_constants(0.3)
    kept = ((out - d).abs() > 1e-12).double()
    np.testing.assert_allclose(x.grad.numpy(), (a * kept).numpy(), rtol=1e-12)


@pytest.mark.parametrize("cls", [nn.AlphaDropout, nn.FeatureAlphaDropout, nn.Dropout3d])
def test_train_and_eval(cls):
    x = ember.randn(4, 3, 2, 2, 2)
    m = cls(0.5)
    ember.manual_seed(4)
    a = m(x)
    ember.manual_seed(4)
    b = m(x)
    assert not ember.equal(a, x) and ember.equal(a, b)  # drawn from ember's Generator
    assert m.eval()(x) is x


@pytest.mark.parametrize("fn", [F.alpha_dropout, F.feature_alpha_dropout, F.dropout3d])
def test_inplace_returns_the_input(fn):
    x = ember.randn(4, 3, 2, 2, 2)
    before = x.clone()
    out = fn(x, 0.5, True, True)
    assert out is x and not ember.equal(x, before)
    x = ember.randn(3, 2, 2, 2)  # unbatched dropout3d as well
    assert F.dropout3d(x, 0.5, True, True) is x


def test_dropout_argument_errors():
    for fn in (F.alpha_dropout, F.feature_alpha_dropout, F.dropout3d):
        with pytest.raises(ValueError, match="between 0 and 1, but got 1.5"):
            fn(ember.ones(2, 2), 1.5)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        F.feature_alpha_dropout(ember.ones(3), 0.5, True)


# ------------------------------------------------------------------------ LocalResponseNorm
def _lrn(x, size, alpha, beta, k):
    sq = np.pad(x * x, [(0, 0), (size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 2))
    window = sum(sq[:, i:i + x.shape[1]] for i in range(size))
    return x / (k + alpha * window / size) ** beta


@pytest.mark.parametrize("shape,size", [((2, 5, 3), 3), ((2, 4, 3, 2), 2), ((1, 3, 2, 2, 2), 5)])
def test_local_response_norm(shape, size):
    x = R.standard_normal(shape)
    out = nn.LocalResponseNorm(size, alpha=0.3, beta=0.7, k=1.5)(t(x))
    np.testing.assert_allclose(out.numpy(), _lrn(x, size, 0.3, 0.7, 1.5), rtol=1e-12)
    fn = lambda a: F.local_response_norm(a, size, 0.3, 0.7, 1.5)  # noqa: E731
    assert gradcheck(fn, [t(x, grad=True)]) and gradgradcheck(fn, [t(x, grad=True)])
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality"):
        F.local_response_norm(t(x.reshape(-1, shape[-1])), size)


# ---------------------------------------------------------------------------------- LPPool
@pytest.mark.parametrize("p", [1, 2, 3.0])
def test_lp_pool_is_the_window_p_norm(p):
    x = R.uniform(0.1, 2, (2, 3, 4, 6))
    out = F.lp_pool2d(t(x), p, (2, 3))
    windows = x.reshape(2, 3, 2, 2, 2, 3).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 2, 2, 6)
    np.testing.assert_allclose(out.numpy(), (windows ** p).sum(-1) ** (1 / p), rtol=1e-12)
    fn = lambda a: F.lp_pool2d(a, p, (2, 3))  # noqa: E731
    assert gradcheck(fn, [t(x, grad=True)]) and gradgradcheck(fn, [t(x, grad=True)])


def test_lp_pool_inf_is_max_of_abs_and_1d_3d():
    x = R.standard_normal((2, 3, 8))
    np.testing.assert_allclose(F.lp_pool1d(t(x), float("inf"), 2).numpy(),
                               np.abs(x).reshape(2, 3, 4, 2).max(-1))
    x3 = R.uniform(0.1, 1, (1, 2, 2, 2, 4))
    np.testing.assert_allclose(nn.LPPool3d(1, 2)(t(x3)).numpy(),
                               x3.reshape(1, 2, 1, 2, 1, 2, 2, 2).sum((3, 5, 7)), rtol=1e-12)


# ------------------------------------------------------------------------------- MaxUnpool
@pytest.mark.parametrize("nd,shape", [(1, (2, 3, 6)), (2, (2, 2, 4, 6)), (3, (1, 2, 2, 4, 4))])
def test_max_unpool_inverts_max_pool(nd, shape):
    x = t(R.uniform(0.1, 1, shape))  # positive: the zeros unpooling adds are no maxima
    pooled, idx = getattr(F, f"max_pool{nd}d")(x, 2, return_indices=True)
    out = getattr(nn, f"MaxUnpool{nd}d")(2)(pooled, idx)
    assert out.shape == x.shape
    kept = out != 0
    np.testing.assert_array_equal(out[kept].numpy(), x[kept].numpy())
    assert kept.sum().item() == pooled.numel()
    # pooling the unpooled result gives the pooled values back
    again = getattr(F, f"max_pool{nd}d")(out, 2)
    np.testing.assert_array_equal(again.numpy(), pooled.numpy())
    fn = lambda a: getattr(F, f"max_unpool{nd}d")(a, idx, 2)  # noqa: E731
    assert gradcheck(fn, [pooled.detach().requires_grad_()])


def test_max_unpool_output_size_and_errors():
    x = t(R.standard_normal((1, 1, 5, 5)))
    pooled, idx = F.max_pool2d(x, 2, return_indices=True)
    assert F.max_unpool2d(pooled, idx, 2, output_size=(5, 5)).shape == (1, 1, 5, 5)
    with pytest.raises(ValueError, match="dim 0 must be between 2 and 6"):
        F.max_unpool2d(pooled, idx, 2, output_size=(6, 5))
    with pytest.raises(RuntimeError, match=r"invalid max index: \d+ \(output volumes are of "
                                           r"size 4x4\)"):
        F.max_unpool2d(pooled, idx + 30, 2)
    with pytest.raises(RuntimeError, match="should be type int64"):
        F.max_unpool2d(pooled, idx.int(), 2)


# --------------------------------------------------------------------------- ChannelShuffle
def test_channel_shuffle_order_and_gradient():
    x = t(np.arange(12.0).reshape(1, 6, 2))
    out = F.channel_shuffle(x, 3)
    assert out[0, :, 0].tolist() == [0.0, 4.0, 8.0, 2.0, 6.0, 10.0]
    assert nn.ChannelShuffle(2)(out).shape == (1, 6, 2)
    assert gradcheck(lambda a: F.channel_shuffle(a, 2), [t(R.standard_normal((2, 4, 3)), True)])
    with pytest.raises(RuntimeError, match="divisible by groups"):
        F.channel_shuffle(x, 4)


# --------------------------------------------------------------------------- gumbel_softmax
def test_gumbel_softmax_soft_samples():
    ember.manual_seed(5)
    logits = ember.tensor([[0.0, 1.0, 2.0]]).expand(20_000, 3)
    y = F.gumbel_softmax(logits, tau=0.1)
    np.testing.assert_allclose(y.sum(-1).numpy(), 1.0, rtol=1e-5)
    # at a low temperature the samples are nearly one-hot and follow softmax(logits)
    freq = ember.bincount(y.argmax(-1), minlength=3).double() / 20_000
    np.testing.assert_allclose(freq.numpy(), np.exp([0, 1, 2]) / np.exp([0, 1, 2]).sum(),
                               atol=0.015)


def test_gumbel_softmax_hard_straight_through():
    logits = t(R.standard_normal((4, 5)), grad=True)
    w = t(R.standard_normal((4, 5)))
    ember.manual_seed(6)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True, dim=1)
    assert set(np.unique(hard.detach().numpy()).tolist()) == {0.0, 1.0}
    assert hard.sum(1).tolist() == [1.0] * 4
    (g_hard,) = ember.autograd.grad((hard * w).sum(), logits)
    ember.manual_seed(6)
    soft = F.gumbel_softmax(logits, tau=0.5, dim=1)
    (g_soft,) = ember.autograd.grad((soft * w).sum(), logits)
    np.testing.assert_allclose(g_hard.numpy(), g_soft.numpy(), rtol=1e-12)
    assert ember.equal(hard.argmax(1), soft.argmax(1))
