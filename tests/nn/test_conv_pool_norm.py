"""Conv, pooling, normalization and interpolate without torch: finite differences,
second derivatives, hand-computed values, bookkeeping and error paths."""
import numpy as np
import pytest

import ember
from ember import nn
import ember.nn.functional as F
from tests.helpers import check_grad, check_second_grad


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def naive_conv2d(x, w, stride=1, pad=0, dil=1, groups=1):
    """Direct six-loop reference convolution (tiny shapes only)."""
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    ho = (h - dil * (kh - 1) - 1) // stride + 1
    wo = (wd - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, ho, wo))
    og = o // groups
    for b in range(n):
        for oc in range(o):
            g = oc // og
            for i in range(ho):
                for j in range(wo):
                    rows = slice(i * stride, i * stride + dil * (kh - 1) + 1, dil)
                    cols = slice(j * stride, j * stride + dil * (kw - 1) + 1, dil)
                    patch = x[b, g * cg:(g + 1) * cg, rows, cols]
                    out[b, oc, i, j] = (patch * w[oc]).sum()
    return out


# ---- convolution -----------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, pad=1), dict(dil=2, pad=1),
                                dict(groups=2, stride=2)])
def test_conv2d_matches_direct_loops(kw):
    x, w = rand(2, 4, 6, 5), rand(4, 4 // kw.get("groups", 1), 3, 2, seed=1)
    got = F.conv2d(ember.tensor(x), ember.tensor(w), stride=kw.get("stride", 1),
                   padding=kw.get("pad", 0), dilation=kw.get("dil", 1),
                   groups=kw.get("groups", 1)).numpy()
    np.testing.assert_allclose(got, naive_conv2d(x, w, **kw), rtol=1e-12, atol=1e-12)


def test_conv2d_grad_finite_differences():
    check_grad(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2),
               rand(1, 2, 4, 4), rand(2, 1, 3, 3, seed=1), rand(2, seed=2))


@pytest.mark.parametrize("conv,x_shape,w_shape,kw", [
    # long patches (C/G * prod(k) > 32): the channels-last input gradient, whose strided
    # col2im holds the gradient phase by phase
    (F.conv2d, (2, 4, 7, 8), (3, 4, 3, 3), dict(stride=2, padding=1)),
    (F.conv2d, (1, 6, 9, 7), (4, 3, 3, 4), dict(stride=(3, 2), dilation=(1, 2), groups=2)),
    (F.conv1d, (2, 12, 11), (2, 12, 3), dict(stride=3, padding=2)),
    (F.conv3d, (1, 5, 5, 4, 6), (2, 5, 2, 2, 2), dict(stride=(2, 1, 3), padding=1)),
    (F.conv2d, (1, 40, 5, 5), (2, 40, 1, 1), dict(stride=2)),  # positions no window reaches
])
def test_strided_input_gradient_of_long_patches(conv, x_shape, w_shape, kw):
    check_grad(lambda x, w: conv(x, w, **kw).tanh(), rand(*x_shape), rand(*w_shape, seed=1))


def test_conv_transpose2d_grad_finite_differences():
    check_grad(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                  output_padding=1),
               rand(1, 2, 3, 3), rand(2, 2, 3, 3, seed=1), rand(2, seed=2))


def test_conv2d_second_derivative():
    check_second_grad(lambda x, w: F.conv2d(x, w, stride=2, padding=1) ** 2,
                      rand(1, 2, 4, 4), rand(2, 2, 3, 3, seed=1))


def test_conv1d_second_derivative_and_transpose():
    check_second_grad(lambda x, w: F.conv1d(x, w, dilation=2).tanh(),
                      rand(1, 2, 6), rand(2, 2, 2, seed=1))
    check_second_grad(lambda x, w: F.conv_transpose2d(x, w, stride=2) ** 2,
                      rand(1, 1, 2, 2), rand(1, 2, 2, 2, seed=1))


def test_conv_same_padding_keeps_size():
    for k in (2, 3, 4):
        y = F.conv2d(ember.ones(1, 1, 5, 6), ember.ones(1, 1, k, k), padding="same")
        assert y.shape == (1, 1, 5, 6)


def test_conv2d_module_bookkeeping():
    m = nn.Conv2d(3, 8, 3, padding=1)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert m.weight.shape == (8, 3, 3, 3) and m.bias.shape == (8,)
    bound = 1 / np.sqrt(27)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert np.abs(m.bias.detach().numpy()).max() <= bound
    y = m(ember.randn(2, 3, 5, 5))
    assert y.shape == (2, 8, 5, 5)
    y.sum().backward()
    assert m.weight.grad.shape == m.weight.shape
    assert repr(m) == "Conv2d(3, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    assert nn.Conv2d(2, 2, 3, bias=False).bias is None
    m64 = nn.Conv2d(1, 2, 3).double()
    assert m64(ember.ones(1, 1, 3, 3, dtype=ember.float64)).dtype is ember.float64


def test_conv_error_wording():
    with pytest.raises(RuntimeError, match=r"Given groups=1, weight of size \[16, 3, 3, 3\], "
                       r"expected input\[2, 1, 8, 8\] to have 3 channels, but got 1 channels "
                       r"instead"):
        F.conv2d(ember.ones(2, 1, 8, 8), ember.ones(16, 3, 3, 3))
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)


# ---- pooling ---------------------------------------------------------------------------------
def test_max_pool2d_values_and_indices_by_hand():
    x = ember.tensor([[[[1.0, 5.0, 2.0, 0.0],
                        [3.0, 4.0, 9.0, 1.0],
                        [0.0, 0.0, 1.0, 1.0],
                        [7.0, 0.0, 1.0, 2.0]]]], requires_grad=True)
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(y.detach().numpy(), [[[[5.0, 9.0], [7.0, 2.0]]]])
    np.testing.assert_array_equal(idx.numpy(), [[[[1, 6], [12, 15]]]])
    y.sum().backward()
    expected = np.zeros((4, 4))
    expected.flat[[1, 6, 12, 15]] = 1
    np.testing.assert_array_equal(x.grad.numpy()[0, 0], expected)


def test_max_pool_overlapping_grad_accumulates():
    x = ember.tensor([[[0.0, 3.0, 1.0, 2.0]]], requires_grad=True)
    F.max_pool1d(x, 2, stride=1).sum().backward()  # windows [0,3] [3,1] [1,2]
    np.testing.assert_array_equal(x.grad.numpy(), [[[0.0, 2.0, 0.0, 1.0]]])


def test_avg_pool_by_hand():
    x = ember.arange(16.0).reshape(1, 1, 4, 4)
    np.testing.assert_allclose(F.avg_pool2d(x, 2).numpy(), [[[[2.5, 4.5], [10.5, 12.5]]]])
    # padding 1, count_include_pad=False: the corner window holds only x[0, 0]
    y = F.avg_pool2d(x, 2, stride=2, padding=1, count_include_pad=False)
    assert y.numpy()[0, 0, 0, 0] == 0.0 and y.numpy()[0, 0, 0, 1] == 1.5
    y = F.avg_pool2d(x, 2, stride=2, padding=1)
    assert y.numpy()[0, 0, 0, 1] == 0.75


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
    lambda x: F.adaptive_max_pool2d(x, (2, 3)),
])
def test_pool_grad_finite_differences(fn):
    check_grad(fn, rand(1, 2, 5, 4))


@pytest.mark.parametrize("fn", [
    lambda x: F.max_pool2d(x, 2, 1) ** 2,
    lambda x: F.avg_pool2d(x, 3, 2, 1) ** 2,
    lambda x: F.adaptive_avg_pool2d(x, 2) ** 2,
])
def test_pool_second_derivative(fn):
    check_second_grad(fn, rand(1, 1, 4, 4))


def test_pool_modules_defaults():
    m = nn.MaxPool2d(2)
    assert m.stride == 2 and not m.return_indices
    assert repr(m) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    assert nn.AvgPool1d(2).kernel_size == (2,)
    assert nn.AdaptiveAvgPool2d(1)(ember.ones(2, 3, 5, 5)).shape == (2, 3, 1, 1)
    v, i = nn.AdaptiveMaxPool2d(2, return_indices=True)(ember.ones(3, 4, 4))
    assert v.shape == (3, 2, 2) and i.dtype is ember.int64


def test_pool_errors():
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.max_pool2d(ember.ones(1, 1, 8, 8), 3, padding=2)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.avg_pool2d(ember.ones(1, 3, 2, 2), 3)


# ---- normalization ---------------------------------------------------------------------------
def test_batch_norm_training_statistics_by_hand():
    x = rand(8, 3, 4, 4) * 2 + 5
    m = nn.BatchNorm2d(3).double()
    y = m(ember.tensor(x)).detach().numpy()
    mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    expected = (x - mean[None, :, None, None]) / np.sqrt(var[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(y, expected, rtol=1e-10, atol=1e-10)
    n = 8 * 16
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * mean, rtol=1e-12)
    np.testing.assert_allclose(m.running_var.numpy(), 0.9 + 0.1 * var * n / (n - 1), rtol=1e-12)
    assert m.num_batches_tracked.item() == 1 and m.num_batches_tracked.dtype is ember.int64
    m.eval()
    y = m(ember.tensor(x)).detach().numpy()
    rm, rv = m.running_mean.numpy(), m.running_var.numpy()
    np.testing.assert_allclose(y, (x - rm[None, :, None, None]) /
                               np.sqrt(rv[None, :, None, None] + 1e-5), rtol=1e-10)
    assert m.num_batches_tracked.item() == 1  # eval does not count


def test_batch_norm_cumulative_average():
    m = nn.BatchNorm1d(2, momentum=None).double()
    batches = [rand(5, 2, seed=s) for s in range(3)]
    for b in batches:
        m(ember.tensor(b))
    np.testing.assert_allclose(m.running_mean.numpy(), np.mean([b.mean(0) for b in batches], 0),
                               rtol=1e-12)
    np.testing.assert_allclose(m.running_var.numpy(),
                               np.mean([b.var(0, ddof=1) for b in batches], 0), rtol=1e-12)


def test_layer_and_group_norm_by_hand():
    x = rand(2, 4, 3)
    y = F.layer_norm(ember.tensor(x), (4, 3)).numpy()
    flat = x.reshape(2, -1)
    expected = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, expected.reshape(x.shape), rtol=1e-10)
    y = F.group_norm(ember.tensor(x), 2).numpy()
    g = x.reshape(2, 2, -1)
    expected = (g - g.mean(2, keepdims=True)) / np.sqrt(g.var(2, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, expected.reshape(x.shape), rtol=1e-10)


@pytest.mark.parametrize("fn", [
    lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True),
    lambda x, w, b: F.layer_norm(x, (3,), w, b),
    lambda x, w, b: F.group_norm(x.reshape(2, 3, 2), 3, w, b),
])
def test_norm_grads_finite_differences(fn):
    check_grad(fn, rand(4, 3),
               rand(3, seed=1), rand(3, seed=2))
    check_second_grad(lambda x, w, b: fn(x, w, b) ** 2, rand(4, 3), rand(3, seed=1),
                      rand(3, seed=2))


def test_norm_modules_bookkeeping():
    m = nn.BatchNorm2d(4)
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in m.named_buffers()] == ["running_mean", "running_var",
                                                 "num_batches_tracked"]
    assert nn.BatchNorm2d(4, track_running_stats=False).running_mean is None
    ln = nn.LayerNorm(5)
    assert ln.normalized_shape == (5,) and ln.weight.shape == (5,)
    gn = nn.GroupNorm(2, 4, affine=False)
    assert gn.weight is None and list(gn.parameters()) == []
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        nn.BatchNorm2d(3)(ember.ones(2, 3, 4))


# ---- interpolate -----------------------------------------------------------------------------
def test_interpolate_nearest_by_hand():
    x = ember.tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    np.testing.assert_array_equal(F.interpolate(x, scale_factor=2).numpy()[0, 0],
                                  [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])


def test_interpolate_bilinear_align_corners_by_hand():
    x = ember.tensor([[[[0.0, 3.0], [6.0, 9.0]]]])
    y = F.interpolate(x, size=(3, 4), mode="bilinear", align_corners=True).numpy()[0, 0]
    np.testing.assert_allclose(y, [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]], atol=1e-6)


@pytest.mark.parametrize("kw", [dict(scale_factor=2), dict(size=(3, 5), mode="bilinear"),
                                dict(size=(5, 2), mode="bilinear", align_corners=True)])
def test_interpolate_grads(kw):
    check_grad(lambda x: F.interpolate(x, **kw), rand(1, 2, 3, 4))
    check_second_grad(lambda x: F.interpolate(x, **kw) ** 2, rand(1, 1, 3, 3))


def test_interpolate_errors():
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(ember.ones(1, 1, 4, 4), size=3, scale_factor=2)
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(ember.ones(1, 1, 4), size=3, mode="bilinear")
