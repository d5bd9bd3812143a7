"""Vision layers: 3-D conv/pool, padding, pixel shuffle, interpolate modes, instance norm,
fold/unfold, grid_sample/affine_grid (expected values from NumPy, gradients by finite
differences in float64, PyTorch's error texts)."""
import itertools
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from tests.helpers import check_grad, check_second_grad


def rand(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(a):
    return ember.tensor(np.asarray(a, dtype=np.float64))


def raises(exc, text, fn):
    with pytest.raises(exc) as info:
        fn()
    assert str(info.value) == text


# ---- 3-D convolution and pooling -------------------------------------------------------------
def conv3d_reference(x, w, stride, padding):
    n, c, *size = x.shape
    o, _, *k = w.shape
    xp = np.pad(x, ((0, 0), (0, 0)) + tuple((p, p) for p in padding))
    out = [(s + 2 * p - kk) // st + 1 for s, p, kk, st in zip(size, padding, k, stride)]
    y = np.zeros((n, o, *out))
    for d, h, v in itertools.product(*map(range, out)):
        patch = xp[:, :, d * stride[0]:d * stride[0] + k[0], h * stride[1]:h * stride[1] + k[1],
                   v * stride[2]:v * stride[2] + k[2]]
        y[:, :, d, h, v] = np.einsum("ncijk,ocijk->no", patch, w)
    return y


def test_conv3d_matches_direct_sum_and_gradients():
    x, w, b = rand(2, 3, 4, 5, 3), rand(4, 3, 2, 3, 2, seed=1), rand(4, seed=2)
    y = F.conv3d(t(x), t(w), t(b), stride=(1, 2, 1), padding=(1, 0, 1))
    expected = conv3d_reference(x, w, (1, 2, 1), (1, 0, 1)) + b.reshape(1, 4, 1, 1, 1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-10, atol=1e-12)
    check_grad(lambda x, w, b: F.conv3d(x, w, b, stride=2, padding=1), rand(1, 2, 3, 4, 3),
               rand(3, 2, 2, 2, 2, seed=1), rand(3, seed=2))
    check_grad(lambda x, w: F.conv_transpose3d(x, w, stride=2, output_padding=1),
               rand(1, 2, 2, 2, 3), rand(2, 1, 2, 2, 2, seed=1))


def test_conv3d_module_shapes_init_and_repr():
    m = nn.Conv3d(4, 6, (1, 2, 3), stride=2, padding=1, groups=2, bias=False)
    assert tuple(m.weight.shape) == (6, 2, 1, 2, 3) and m.bias is None
    bound = 1 / np.sqrt(2 * 6)  # kaiming_uniform(a=sqrt(5)): 1 / sqrt(fan_in)
    assert np.abs(m.weight.detach().numpy()).max() <= bound
    assert repr(m) == ("Conv3d(4, 6, kernel_size=(1, 2, 3), stride=(2, 2, 2), "
                       "padding=(1, 1, 1), groups=2, bias=False)")
    assert tuple(m(ember.randn(1, 4, 3, 4, 5)).shape) == (1, 6, 3, 3, 3)
    assert tuple(nn.ConvTranspose3d(2, 3, 2, stride=2).weight.shape) == (2, 3, 2, 2, 2)


def test_max_and_avg_pool3d_match_windows():
    x = rand(2, 3, 4, 6, 5)
    y, idx = F.max_pool3d(t(x), 2, return_indices=True)
    win = x[:, :, :4, :6, :4].reshape(2, 3, 2, 2, 3, 2, 2, 2).transpose(0, 1, 2, 4, 6, 3, 5, 7)
    np.testing.assert_array_equal(y.numpy(), win.reshape(2, 3, 2, 3, 2, 8).max(-1))
    flat = x.reshape(2, 3, -1)
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(2, 3, -1), 2),
                                  y.numpy().reshape(2, 3, -1))
    a = F.avg_pool3d(t(x), 2)
    np.testing.assert_allclose(a.numpy(), win.reshape(2, 3, 2, 3, 2, 8).mean(-1), rtol=1e-12)
    d = F.avg_pool3d(t(x), 2, divisor_override=3)
    np.testing.assert_allclose(d.numpy(), win.reshape(2, 3, 2, 3, 2, 8).sum(-1) / 3,
                               rtol=1e-12)
    check_grad(lambda x: F.avg_pool3d(x, (2, 3, 2), stride=1, padding=1, ceil_mode=True,
                                      count_include_pad=False), rand(1, 2, 3, 4, 3))
    check_grad(lambda x: F.max_pool3d(x, 2, stride=1, padding=1), rand(1, 2, 3, 3, 3))
    check_grad(lambda x: F.adaptive_avg_pool3d(x, (2, 3, None)), rand(1, 2, 3, 4, 2))
    check_grad(lambda x: F.adaptive_max_pool3d(x, 2), rand(1, 2, 3, 4, 3))


def test_pool3d_modules():
    x = ember.randn(1, 2, 4, 4, 4)
    assert tuple(nn.MaxPool3d(2)(x).shape) == (1, 2, 2, 2, 2)
    assert tuple(nn.AvgPool3d(3, stride=1, padding=1)(x).shape) == (1, 2, 4, 4, 4)
    np.testing.assert_allclose(nn.AdaptiveAvgPool3d(1)(x).numpy().ravel(),
                               x.numpy().mean(axis=(2, 3, 4)).ravel(), rtol=1e-5)
    vals, idx = nn.AdaptiveMaxPool3d(1, return_indices=True)(x)
    np.testing.assert_array_equal(vals.numpy().ravel(), x.numpy().max(axis=(2, 3, 4)).ravel())
    assert repr(nn.MaxPool3d(2)) == ("MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, "
                                     "ceil_mode=False)")


def test_pool3d_errors():
    raises(RuntimeError, "non-empty 4D or 5D (batch mode) tensor expected for input",
           lambda: F.max_pool3d(ember.randn(3, 4), 2))
    raises(RuntimeError, "input image (T: 4 H: 5 W: 6) smaller than kernel size (kT: 5 kH: 5 "
           "kW: 5)", lambda: F.avg_pool3d(ember.randn(2, 3, 4, 5, 6), 5))
    raises(RuntimeError, "max_pool3d: kernel_size must either be a single int, or a tuple of "
           "three ints", lambda: F.max_pool3d(ember.randn(2, 3, 4, 5, 6), (2, 2)))
    raises(RuntimeError, "adaptive_avg_pool3d: output_size must be 3",
           lambda: F.adaptive_avg_pool3d(ember.randn(2, 3, 4, 5, 6), (2, 2)))
    raises(RuntimeError, "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got "
           "input of size: [3, 4]", lambda: F.conv3d(ember.randn(3, 4), ember.randn(2, 3, 1, 1, 1)))


# ---- padding ---------------------------------------------------------------------------------
NUMPY_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


@pytest.mark.parametrize("cls,mode,nd", [
    (nn.ReflectionPad1d, "reflect", 1), (nn.ReflectionPad2d, "reflect", 2),
    (nn.ReflectionPad3d, "reflect", 3), (nn.ReplicationPad1d, "replicate", 1),
    (nn.ReplicationPad2d, "replicate", 2), (nn.ReplicationPad3d, "replicate", 3),
    (nn.CircularPad1d, "circular", 1), (nn.CircularPad2d, "circular", 2),
    (nn.CircularPad3d, "circular", 3)])
def test_padding_layers_match_numpy(cls, mode, nd):
    pads = (2, 1, 0, 2, 1, 1)[:2 * nd]
    x = rand(2, 3, 4, 3, 5)[(0,) * (3 - nd)]
    y = cls(pads)(t(x))
    np_pads = [(0, 0)] * (x.ndim - nd) + [(pads[2 * k], pads[2 * k + 1])
                                           for k in reversed(range(nd))]
    np.testing.assert_array_equal(y.numpy(), np.pad(x, np_pads, mode=NUMPY_MODE[mode]))
    check_grad(lambda x: cls(1)(x), rand(*(2, 3, 3, 3)[:nd + 1]))


def test_constant_and_zero_padding():
    x = rand(2, 3)
    y = nn.ConstantPad1d((1, 2), 3.5)(t(x))
    np.testing.assert_array_equal(y.numpy(), np.pad(x, ((0, 0), (1, 2)), constant_values=3.5))
    y = nn.ZeroPad2d((1, 0, 0, 2))(t(x))
    np.testing.assert_array_equal(y.numpy(), np.pad(x, ((0, 2), (1, 0))))
    assert tuple(nn.ZeroPad3d(1)(ember.ones(1, 1, 1, 1)).shape) == (1, 3, 3, 3)
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ConstantPad1d(2, 3.5)) == "ConstantPad1d(padding=(2, 2), value=3.5)"
    assert isinstance(nn.ZeroPad1d(1), nn.ConstantPad1d)


def test_padding_errors():
    raises(RuntimeError, "Argument #4: Padding size should be less than the corresponding input "
           "dimension, but got: padding (3, 3) at dimension 3 of input [1, 2, 3, 3]",
           lambda: nn.ReflectionPad2d(3)(ember.randn(1, 2, 3, 3)))
    raises(ValueError, "expected 3D or 4D input (got 2D input)",
           lambda: nn.CircularPad2d(1)(ember.randn(3, 3)))
    raises(RuntimeError, "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and "
           "other non-zero dimensions for input, but got: [1, 0, 3]",
           lambda: nn.ReplicationPad1d(1)(ember.randn(1, 0, 3)))
    assert tuple(nn.ReflectionPad1d(1)(ember.randn(0, 2, 3)).shape) == (0, 2, 5)


# ---- pixel shuffle ---------------------------------------------------------------------------
def test_pixel_shuffle_and_unshuffle():
    x = rand(2, 3, 8, 2, 3)
    y = F.pixel_shuffle(t(x), 2)
    expected = x.reshape(2, 3, 2, 2, 2, 2, 3).transpose(0, 1, 2, 5, 3, 6, 4).reshape(2, 3, 2, 4, 6)
    np.testing.assert_array_equal(y.numpy(), expected)
    np.testing.assert_array_equal(F.pixel_unshuffle(y, 2).numpy(), x)
    assert tuple(nn.PixelShuffle(3)(ember.ones(9, 2, 2)).shape) == (1, 6, 6)
    assert repr(nn.PixelUnshuffle(2)) == "PixelUnshuffle(downscale_factor=2)"
    check_grad(lambda x: F.pixel_shuffle(x, 2), rand(1, 4, 2, 3))
    raises(RuntimeError, "pixel_shuffle expects its input's 'channel' dimension to be divisible "
           "by the square of upscale_factor, but input.size(-3)=7 is not divisible by 4",
           lambda: F.pixel_shuffle(ember.randn(7, 4, 4), 2))
    raises(RuntimeError, "pixel_unshuffle expects width to be divisible by downscale_factor, "
           "but input.size(-1)=5 is not divisible by 2",
           lambda: F.pixel_unshuffle(ember.randn(8, 4, 5), 2))


# ---- interpolate -----------------------------------------------------------------------------
def cubic_weights(s):
    a = -0.75
    s = abs(s)
    if s <= 1:
        return ((a + 2) * s - (a + 3)) * s * s + 1
    if s < 2:
        return ((a * s - 5 * a) * s + 8 * a) * s - 4 * a
    return 0.0


def bicubic_1d(x, out, align_corners):
    n = x.shape[-1]
    y = np.zeros(x.shape[:-1] + (out,))
    for j in range(out):
        if align_corners:
            src = j * (n - 1) / (out - 1) if out > 1 else 0.0
        else:
            src = (j + 0.5) * n / out - 0.5
        base = int(np.floor(src))
        for k in range(base - 1, base + 3):
            y[..., j] += cubic_weights(src - k) * x[..., min(max(k, 0), n - 1)]
    return y


@pytest.mark.parametrize("align_corners", [False, True])
def test_bicubic_is_separable_cubic_convolution(align_corners):
    x = rand(1, 2, 5, 4)
    y = F.interpolate(t(x), size=(7, 3), mode="bicubic", align_corners=align_corners)
    rows = bicubic_1d(x, 3, align_corners)
    expected = bicubic_1d(rows.swapaxes(-1, -2), 7, align_corners).swapaxes(-1, -2)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-10, atol=1e-12)
    check_grad(lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic",
                                       align_corners=align_corners), rand(1, 1, 3, 4))


def test_area_trilinear_and_nearest_exact():
    x = rand(1, 2, 4, 6)
    area = F.interpolate(t(x), scale_factor=0.5, mode="area").numpy()
    np.testing.assert_allclose(area, x.reshape(1, 2, 2, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-12)
    x3 = rand(1, 2, 3, 4, 2)
    same = F.interpolate(t(x3), size=(3, 4, 2), mode="trilinear", align_corners=True)
    np.testing.assert_allclose(same.numpy(), x3, rtol=1e-12)
    check_grad(lambda x: F.interpolate(x, size=(4, 3, 3), mode="trilinear"), rand(1, 1, 2, 3, 2))
    check_grad(lambda x: F.interpolate(x, size=(2, 3, 2), mode="area"), rand(1, 1, 3, 4, 5))
    near = F.interpolate(t(np.arange(4.).reshape(1, 1, 4)), size=3, mode="nearest-exact")
    np.testing.assert_array_equal(near.numpy().ravel(), [0., 2., 3.])  # floor((j + .5) * 4/3)


def test_upsample_modules():
    x = ember.randn(1, 2, 3, 3)
    np.testing.assert_array_equal(nn.Upsample(scale_factor=2)(x).numpy(),
                                  np.repeat(np.repeat(x.numpy(), 2, 2), 2, 3))
    corners = nn.UpsamplingBilinear2d(size=5)(x).numpy()
    np.testing.assert_allclose(corners[..., ::2, ::2], x.numpy(), rtol=1e-6)
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert repr(nn.UpsamplingBilinear2d(size=3)) == "UpsamplingBilinear2d(size=3, mode='bilinear')"
    raises(NotImplementedError, "Got 4D input, but trilinear mode needs 5D input",
           lambda: F.interpolate(x, size=3, mode="trilinear"))


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_keeps_constants_and_is_differentiable(mode):
    """The filter's weights are normalised: a constant image stays constant whatever the
    scale; gradients check against finite differences in float64."""
    flat = ember.full((1, 2, 9, 7), 3.0, dtype=ember.float64)
    for size in ((4, 3), (2, 11), (9, 7)):
        out = F.interpolate(flat, size=size, mode=mode, antialias=True)
        np.testing.assert_allclose(out.numpy(), 3.0, rtol=1e-12)
    x = ember.randn(1, 2, 6, 5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda t: F.interpolate(t, size=(3, 4), mode=mode, antialias=True), (x,))


def test_antialias_downsampling_averages_a_whole_block():
    """Bilinear anti-aliasing at an integer factor 2 is a triangle over 4 inputs per output,
    weights (1, 3, 3, 1) / 8 away from the borders."""
    x = ember.arange(16.0, dtype=ember.float64).reshape(1, 1, 1, 16)
    out = F.interpolate(x, size=(1, 8), mode="bilinear", antialias=True).flatten()
    expected = [(x[0, 0, 0, 2 * i - 1] + 3 * x[0, 0, 0, 2 * i] + 3 * x[0, 0, 0, 2 * i + 1]
                 + x[0, 0, 0, 2 * i + 2]).item() / 8 for i in range(1, 7)]
    np.testing.assert_allclose(out[1:7].numpy(), expected, rtol=1e-12)


# ---- instance norm ---------------------------------------------------------------------------
def test_instance_norm_values_running_stats_and_gradients():
    x = rand(3, 2, 4, 5)
    w, b = rand(2, seed=1), rand(2, seed=2)
    rm, rv = ember.zeros(2, dtype=ember.float64), ember.ones(2, dtype=ember.float64)
    y = F.instance_norm(t(x), rm, rv, t(w), t(b), momentum=0.2)
    mean = x.mean(axis=(2, 3), keepdims=True)
    var = x.var(axis=(2, 3), keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * w.reshape(1, 2, 1, 1) + b.reshape(1, 2, 1, 1)
    np.testing.assert_allclose(y.numpy(), expected, rtol=1e-10)
    np.testing.assert_allclose(rm.numpy(), 0.2 * mean.reshape(3, 2).mean(0), rtol=1e-12)
    unbiased = x.var(axis=(2, 3), ddof=1).mean(0)
    np.testing.assert_allclose(rv.numpy(), 0.8 + 0.2 * unbiased, rtol=1e-12)
    check_grad(lambda x, w, b: F.instance_norm(x, weight=w, bias=b), rand(2, 2, 5), rand(2),
               rand(2, seed=3))
    check_second_grad(lambda x: F.instance_norm(x), rand(1, 2, 4))


def test_instance_norm_modules():
    m = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    assert [k for k, _ in m.named_parameters()] == ["weight", "bias"]
    assert [k for k, _ in m.named_buffers()] == ["running_mean", "running_var",
                                                  "num_batches_tracked"]
    assert repr(m) == ("InstanceNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
                       "track_running_stats=True)")
    m(ember.randn(2, 3, 4, 4))
    assert int(m.num_batches_tracked) == 0  # PyTorch does not count instance-norm batches
    m.eval()
    x = ember.randn(3, 4, 4)  # unbatched, uses the running statistics
    expected = ((x.numpy() - m.running_mean.numpy()[:, None, None])
                / np.sqrt(m.running_var.numpy()[:, None, None] + 1e-5))
    np.testing.assert_allclose(m(x).detach().numpy(), expected, rtol=1e-5, atol=1e-6)
    assert nn.InstanceNorm1d(3).weight is None
    raises(ValueError, "expected input's size at dim=1 to match num_features (3), but got: 4.",
           lambda: nn.InstanceNorm1d(3, affine=True)(ember.randn(2, 4, 5)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.InstanceNorm1d(3)(ember.randn(2, 4, 5))
    assert "does not match num_features" in str(caught[0].message)
    raises(ValueError, "expected 3D or 4D input (got 2D input)",
           lambda: nn.InstanceNorm2d(3)(ember.randn(4, 5)))
    raises(RuntimeError, "Expected running_mean and running_var to be defined when "
           "use_input_stats is false",
           lambda: F.instance_norm(ember.randn(2, 3, 4), use_input_stats=False))
    assert tuple(nn.InstanceNorm3d(2)(ember.randn(1, 2, 2, 3, 2)).shape) == (1, 2, 2, 3, 2)


# ---- fold / unfold ---------------------------------------------------------------------------
def unfold_reference(x, k, d, p, s):
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh = (h + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (w + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    cols = np.zeros((n, c, k[0], k[1], oh, ow))
    for i, j, a, b in itertools.product(range(k[0]), range(k[1]), range(oh), range(ow)):
        cols[:, :, i, j, a, b] = xp[:, :, a * s[0] + i * d[0], b * s[1] + j * d[1]]
    return cols.reshape(n, c * k[0] * k[1], oh * ow)


def test_unfold_fold_are_adjoint_im2col():
    geo = dict(kernel_size=(2, 3), dilation=(1, 2), padding=(1, 0), stride=(2, 1))
    x = rand(2, 3, 5, 7)
    cols = F.unfold(t(x), **geo)
    np.testing.assert_array_equal(cols.numpy(), unfold_reference(x, (2, 3), (1, 2), (1, 0),
                                                                 (2, 1)))
    y = rand(*cols.shape, seed=1)
    back = F.fold(t(y), (5, 7), **geo)
    np.testing.assert_allclose((cols.numpy() * y).sum(), (x * back.numpy()).sum(), rtol=1e-12)
    check_grad(lambda x: F.unfold(x, 2, padding=1), rand(1, 2, 3, 3))
    check_grad(lambda y: F.fold(y, (3, 4), 2, stride=(1, 2)), rand(1, 8, 4))
    check_second_grad(lambda x: F.unfold(x, 2) ** 2, rand(1, 1, 3, 3))
    assert tuple(nn.Unfold(2)(ember.ones(3, 4, 4)).shape) == (12, 9)
    assert tuple(nn.Fold((3, 3), 2)(ember.ones(4, 4)).shape) == (1, 3, 3)
    assert repr(nn.Fold((4, 5), 2)) == ("Fold(output_size=(4, 5), kernel_size=2, dilation=1, "
                                        "padding=0, stride=1)")


def test_fold_unfold_errors():
    raises(RuntimeError, "Given input with spatial size (5, 6), kernel_size=(7, 7), "
           "dilation=(1, 1), padding=(0, 0), calculated shape of the array of sliding blocks as "
           "(-1, 0), but its components must be at least one.",
           lambda: F.unfold(ember.randn(2, 3, 5, 6), 7))
    raises(RuntimeError, "stride should be greater than zero, but got stride_height: 0 "
           "stride_width: 0", lambda: F.fold(ember.randn(2, 12, 20), (5, 6), 2, stride=0))
    raises(RuntimeError, "Expected size of input's dimension 1 to be divisible by the product "
           "of kernel_size, but got input.size(1)=11 and kernel_size=(2, 2).",
           lambda: F.fold(ember.randn(2, 11, 20), (5, 6), 2))
    raises(RuntimeError, "Given output_size=(5, 5), kernel_size=(2, 2), dilation=(1, 1), "
           "padding=(0, 0), stride=(1, 1), expected size of input's dimension 2 to match the "
           "calculated number of sliding blocks 4 * 4 = 16, but got input.size(2)=20.",
           lambda: F.fold(ember.randn(2, 12, 20), 5, 2))


# ---- grid_sample / affine_grid ---------------------------------------------------------------
def test_affine_grid_identity_samples_the_input():
    theta = ember.tensor([[[1., 0., 0.], [0., 1., 0.]]], dtype=ember.float64)
    grid = F.affine_grid(theta, (1, 2, 3, 4), align_corners=True)
    np.testing.assert_allclose(grid.numpy()[0, :, :, 0], np.tile(np.linspace(-1, 1, 4), (3, 1)))
    np.testing.assert_allclose(grid.numpy()[0, :, :, 1],
                               np.tile(np.linspace(-1, 1, 3)[:, None], (1, 4)))
    x = rand(1, 2, 3, 4)
    for mode in ("bilinear", "nearest"):
        y = F.grid_sample(t(x), grid, mode=mode, align_corners=True)
        np.testing.assert_allclose(y.numpy(), x, rtol=1e-12, atol=1e-12)
    unaligned = F.affine_grid(theta, (1, 1, 1, 4), align_corners=False).numpy()[0, 0, :, 0]
    np.testing.assert_allclose(unaligned, [-0.75, -0.25, 0.25, 0.75])
    theta3 = ember.tensor(np.eye(3, 4)[None])
    x3 = rand(1, 1, 2, 3, 2)
    grid3 = F.affine_grid(theta3, (1, 1, 2, 3, 2), align_corners=False)
    np.testing.assert_allclose(F.grid_sample(t(x3), grid3, align_corners=False).numpy(), x3,
                               rtol=1e-12, atol=1e-12)


def test_grid_sample_bilinear_value_and_padding_modes():
    x = np.arange(6.).reshape(1, 1, 2, 3)
    # x = 0.5 along the width (pixel 2 with align_corners), y = -1 (row 0): between 1 and 2
    grid = np.array([[[[0.5, -1.0]]]])
    y = F.grid_sample(t(x), t(grid), align_corners=True)
    np.testing.assert_allclose(y.numpy().ravel(), [1.5])
    outside = np.array([[[[3.0, 0.0]]]])  # far right of the image
    zeros = F.grid_sample(t(x), t(outside), padding_mode="zeros", align_corners=True)
    border = F.grid_sample(t(x), t(outside), padding_mode="border", align_corners=True)
    reflect = F.grid_sample(t(x), t(outside), padding_mode="reflection", align_corners=True)
    assert zeros.item() == 0.0
    np.testing.assert_allclose(border.item(), 3.5)  # column 2, halfway between rows
    np.testing.assert_allclose(reflect.item(), 1.5)  # pixel 4 reflects off both edges to 0


@pytest.mark.parametrize("mode,padding_mode,align_corners", [
    ("bilinear", "zeros", False), ("bilinear", "border", True),
    ("bilinear", "reflection", False), ("bilinear", "reflection", True),
    ("nearest", "zeros", False)])
def test_grid_sample_gradients(mode, padding_mode, align_corners):
    # coordinates kept away from pixel boundaries, where the functions have kinks
    grid = np.random.default_rng(3).uniform(-1.2, 1.2, (1, 2, 3, 2))
    grid = np.round(grid * 8) / 8 + 0.031

    def fn(x, g):
        return F.grid_sample(x, g, mode=mode, padding_mode=padding_mode,
                             align_corners=align_corners)
    check_grad(fn, rand(1, 2, 3, 4), grid)


@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_bicubic(padding_mode):
    """At pixel centres bicubic reads the pixel itself (the cubic weights are 0, 1, 0, 0);
    gradients w.r.t. input and grid check against finite differences."""
    x = ember.randn(1, 2, 4, 5, dtype=ember.float64)
    ys, xs = ember.meshgrid(ember.linspace(-1, 1, 4, dtype=ember.float64),
                            ember.linspace(-1, 1, 5, dtype=ember.float64), indexing="ij")
    grid = ember.stack([xs, ys], -1).unsqueeze(0)
    out = F.grid_sample(x, grid, mode="bicubic", padding_mode=padding_mode, align_corners=True)
    np.testing.assert_allclose(out.numpy(), x.numpy(), rtol=1e-12, atol=1e-12)
    x.requires_grad_()
    g = (ember.rand(1, 3, 2, 2, dtype=ember.float64) * 2.4 - 1.2).requires_grad_()
    assert ember.autograd.gradcheck(
        lambda a, b: F.grid_sample(a, b, mode="bicubic", padding_mode=padding_mode,
                                   align_corners=False), (x, g))


def test_grid_sample_errors_and_warning():
    x, g = ember.randn(2, 3, 5, 6), ember.rand(2, 4, 7, 2)
    raises(ValueError, "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
           "or 'bicubic', but got: 'foo'", lambda: F.grid_sample(x, g, mode="foo"))
    raises(RuntimeError, "grid_sampler(): expected grid to have size 2 in last dimension, but "
           "got grid with sizes [2, 4, 7, 1]", lambda: F.grid_sample(x, g[..., :1]))
    raises(ValueError, "Expected a batch of 2D affine matrices of shape Nx2x3 for size "
           "(2, 3, 5, 6). Got ember.Size([2, 3, 4]).",
           lambda: F.affine_grid(ember.randn(2, 3, 4), (2, 3, 5, 6), align_corners=False))
    raises(RuntimeError, "grid_sampler(): bicubic interpolation only supports 4D input",
           lambda: F.grid_sample(ember.randn(1, 1, 2, 2, 2), ember.rand(1, 1, 1, 1, 3),
                                 mode="bicubic", align_corners=False))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.grid_sample(x, g)
    assert "align_corners=False since 1.3.0" in str(caught[0].message)
