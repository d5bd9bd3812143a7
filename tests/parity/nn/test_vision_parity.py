"""Vision layers, ember vs PyTorch: 3-D conv/pool, padding, pixel shuffle, interpolate modes,
instance norm, fold/unfold, grid_sample/affine_grid (values, input and weight gradients,
float32 and float64, non-contiguous inputs, module state, error messages)."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-7, atol=1e-10)}


def rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def uniform(lo, hi, shape, dtype, seed=1):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def F(lib):
    return lib.nn.functional


# ---- functional forms: values and gradients --------------------------------------------------
CASES = {
    "conv3d": (lambda L, x, w, b: F(L).conv3d(x, w, b, stride=(1, 2, 1), padding=1, groups=3),
               [(2, 3, 5, 4, 6), (6, 1, 3, 2, 3), (6,)]),
    "conv3d_same_dilated": (lambda L, x, w: F(L).conv3d(x, w, padding="same", dilation=(1, 2, 1)),
                            [(1, 2, 3, 5, 4), (3, 2, 3, 2, 3)]),
    "conv_transpose3d": (lambda L, x, w, b: F(L).conv_transpose3d(
        x, w, b, stride=2, padding=1, output_padding=1), [(2, 3, 3, 4, 2), (3, 2, 3, 2, 3), (2,)]),
    "max_pool3d": (lambda L, x: F(L).max_pool3d(x, (2, 3, 2), stride=(2, 1, 2), padding=1,
                                                ceil_mode=True), [(2, 3, 5, 4, 7)]),
    "max_pool3d_dilated": (lambda L, x: F(L).max_pool3d(x, 2, stride=1, dilation=(1, 2, 1)),
                           [(3, 5, 6, 4)]),
    "avg_pool3d": (lambda L, x: F(L).avg_pool3d(x, (2, 3, 2), stride=(2, 1, 2), padding=1,
                                                ceil_mode=True, count_include_pad=False),
                   [(2, 3, 5, 4, 7)]),
    "avg_pool3d_divisor": (lambda L, x: F(L).avg_pool3d(x, 2, divisor_override=3),
                           [(3, 5, 4, 6)]),
    "adaptive_avg_pool3d": (lambda L, x: F(L).adaptive_avg_pool3d(x, (2, 3, None)),
                            [(2, 3, 5, 4, 6)]),
    "adaptive_max_pool3d": (lambda L, x: F(L).adaptive_max_pool3d(x, (2, 3, 4)),
                            [(2, 3, 5, 4, 7)]),
    "pad_reflect3d": (lambda L, x: F(L).pad(x, (1, 2, 2, 0, 1, 1), mode="reflect"),
                      [(2, 3, 4, 5, 6)]),
    "pad_replicate2d": (lambda L, x: F(L).pad(x, (3, 0, 1, 2), mode="replicate"),
                        [(3, 4, 5)]),
    "pad_circular1d": (lambda L, x: F(L).pad(x, (2, 3), mode="circular"), [(2, 3, 5)]),
    # a negative side crops first; the other side then wraps around what is left
    "pad_circular_crop_left": (lambda L, x: F(L).pad(x, (-1, 2), mode="circular"), [(2, 3, 6)]),
    "pad_circular_crop_right": (lambda L, x: F(L).pad(x, (1, 2, 2, -1), mode="circular"),
                                [(2, 3, 5, 6)]),
    "pixel_shuffle": (lambda L, x: F(L).pixel_shuffle(x, 2), [(2, 3, 8, 4, 5)]),
    "pixel_unshuffle": (lambda L, x: F(L).pixel_unshuffle(x, 3), [(2, 6, 9)]),
    "bicubic": (lambda L, x: F(L).interpolate(x, size=(8, 4), mode="bicubic"), [(2, 3, 5, 7)]),
    "bicubic_aligned": (lambda L, x: F(L).interpolate(x, scale_factor=(1.7, 0.6), mode="bicubic",
                                                      align_corners=True), [(2, 3, 5, 7)]),
    "bicubic_scale": (lambda L, x: F(L).interpolate(x, scale_factor=2.3, mode="bicubic"),
                      [(1, 2, 3, 4)]),
    "area2d": (lambda L, x: F(L).interpolate(x, scale_factor=0.7, mode="area"), [(2, 3, 7, 5)]),
    "area1d": (lambda L, x: F(L).interpolate(x, size=4, mode="area"), [(2, 3, 9)]),
    "area3d": (lambda L, x: F(L).interpolate(x, size=(3, 6, 4), mode="area"), [(2, 3, 4, 5, 7)]),
    "trilinear": (lambda L, x: F(L).interpolate(x, size=(3, 6, 4), mode="trilinear"),
                  [(2, 3, 4, 5, 7)]),
    "trilinear_aligned": (lambda L, x: F(L).interpolate(x, scale_factor=1.6, mode="trilinear",
                                                        align_corners=True), [(1, 2, 4, 3, 5)]),
    "nearest3d": (lambda L, x: F(L).interpolate(x, scale_factor=1.6), [(1, 2, 4, 3, 5)]),
    "nearest_exact": (lambda L, x: F(L).interpolate(x, size=(3, 7, 9), mode="nearest-exact"),
                      [(1, 2, 4, 5, 7)]),
    "antialias_bilinear": (lambda L, x: F(L).interpolate(x, size=(3, 5), mode="bilinear",
                                                         antialias=True), [(2, 3, 8, 9)]),
    "antialias_bicubic": (lambda L, x: F(L).interpolate(x, scale_factor=(0.3, 0.7),
                                                        mode="bicubic", antialias=True),
                          [(2, 3, 10, 7)]),
    "antialias_aligned": (lambda L, x: F(L).interpolate(x, size=(4, 3), mode="bicubic",
                                                        align_corners=True, antialias=True),
                          [(1, 2, 9, 7)]),
    "lanczos": (lambda L, x: F(L).interpolate(x, size=(3, 8), mode="lanczos", antialias=True),
                [(2, 3, 9, 6)]),
    "antialias_mixed": (lambda L, x: F(L).interpolate(x, size=(2, 11), mode="bilinear",
                                                      antialias=True), [(2, 1, 7, 5)]),
    "instance_norm": (lambda L, x, w, b: F(L).instance_norm(x, weight=w, bias=b),
                      [(2, 3, 5, 4), (3,), (3,)]),
    "instance_norm3d": (lambda L, x: F(L).instance_norm(x, eps=1e-3), [(2, 3, 2, 3, 4)]),
    "unfold": (lambda L, x: F(L).unfold(x, (2, 3), dilation=(1, 2), padding=(1, 0),
                                        stride=(2, 1)), [(2, 3, 5, 7)]),
    "unfold_unbatched": (lambda L, x: F(L).unfold(x, 2, padding=1), [(3, 5, 4)]),
    "fold": (lambda L, x: F(L).fold(x, (5, 7), (2, 3), dilation=(1, 2), padding=(1, 0),
                                    stride=(2, 1)), [(2, 18, 9)]),
    "fold_unbatched": (lambda L, x: F(L).fold(x, (3, 4), 2), [(8, 6)]),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_functional_parity(name, dtype):
    fn, shapes = CASES[name]
    arrays = [rand(*s, dtype=dtype, seed=i) for i, s in enumerate(shapes)]
    compare(fn, *arrays)


@pytest.mark.parametrize("name", ["conv3d", "max_pool3d", "avg_pool3d", "bicubic", "trilinear",
                                  "pixel_shuffle", "unfold", "fold", "pad_reflect3d",
                                  "instance_norm", "antialias_bicubic"])
def test_functional_parity_noncontiguous(name):
    fn, shapes = CASES[name]
    arrays = [rand(*s, dtype=np.float64, seed=i) for i, s in enumerate(shapes)]
    compare(fn, *arrays, noncontiguous=True)


GRID_MODES = [(m, p, a) for m in ("bilinear", "nearest", "bicubic")
              for p in ("zeros", "border", "reflection") for a in (False, True)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode,padding_mode,align_corners", GRID_MODES)
def test_grid_sample_parity(mode, padding_mode, align_corners, dtype):
    x = rand(2, 3, 5, 6, dtype=dtype)
    grid = uniform(-1.3, 1.3, (2, 4, 7, 2), dtype)

    def fn(L, x, grid):
        return F(L).grid_sample(x, grid, mode=mode, padding_mode=padding_mode,
                                align_corners=align_corners)
    compare(fn, x, grid)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d_parity(mode, dtype):
    def fn(L, x, grid):
        return F(L).grid_sample(x, grid, mode=mode, padding_mode="reflection",
                                align_corners=False)
    compare(fn, rand(2, 3, 4, 5, 6, dtype=dtype), uniform(-1.3, 1.3, (2, 3, 4, 2, 3), dtype))


def test_grid_sample_noncontiguous_parity():
    def fn(L, x, grid):
        return F(L).grid_sample(x, grid, padding_mode="border", align_corners=False)
    compare(fn, rand(2, 3, 5, 6), uniform(-1.1, 1.1, (2, 4, 7, 2), np.float64),
            noncontiguous=True)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size,align_corners", [((2, 3, 5, 6), False), ((2, 3, 5, 6), True),
                                                ((2, 3, 1, 6), False), ((2, 1, 3, 4, 5), True),
                                                ((2, 1, 3, 4, 5), False)])
def test_affine_grid_parity(size, align_corners, dtype):
    nd = len(size) - 2
    theta = rand(2, nd, nd + 1, dtype=dtype)
    compare(lambda L, t: F(L).affine_grid(t, size, align_corners=align_corners), theta)


def test_affine_grid_then_grid_sample_parity():
    def fn(L, x, theta):
        grid = F(L).affine_grid(theta, (2, 3, 4, 5), align_corners=False)
        return F(L).grid_sample(x, grid, align_corners=False)
    compare(fn, rand(2, 3, 6, 7), rand(2, 2, 3, seed=1) * 0.7)


# ---- modules ---------------------------------------------------------------------------------
def module_parity(make, x, dtype, steps=2, train=True):
    """Same module in both libraries (torch's state copied into ember): outputs, input and
    parameter gradients, buffers after ``steps`` forward passes."""
    tm = make(torch).to(getattr(torch, np.dtype(dtype).name))
    em = make(ember).to(getattr(ember, np.dtype(dtype).name))
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    tm.train(train)
    em.train(train)
    tol = TOL[dtype]
    for step in range(steps):
        xs = x * (step + 1)
        xt = torch.tensor(xs, requires_grad=True)
        xe = ember.tensor(xs, requires_grad=True)
        yt, ye = tm(xt), em(xe)
        np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), **tol)
        cot = rand(*yt.shape, dtype=dtype, seed=step + 1)
        yt.backward(torch.tensor(cot))
        ye.backward(ember.tensor(cot))
        np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), **tol)
        tp, ep = dict(tm.named_parameters()), dict(em.named_parameters())
        assert list(tp) == list(ep)
        for name in tp:
            np.testing.assert_allclose(ep[name].grad.numpy(), tp[name].grad.numpy(),
                                       err_msg=name, **tol)
            tp[name].grad = ep[name].grad = None
    tb, eb = dict(tm.named_buffers()), dict(em.named_buffers())
    assert list(tb) == list(eb)
    for name in tb:
        np.testing.assert_allclose(eb[name].numpy(), tb[name].numpy(), err_msg=name, **tol)
    assert repr(em) == repr(tm)
    return tm, em


MODULES = {
    "Conv3d": (lambda L: L.nn.Conv3d(4, 6, (2, 3, 1), stride=(1, 2, 1), padding=1, groups=2),
               (2, 4, 3, 5, 4)),
    "Conv3d_reflect": (lambda L: L.nn.Conv3d(2, 3, 3, padding=1, padding_mode="reflect",
                                             bias=False), (1, 2, 3, 4, 5)),
    "ConvTranspose3d": (lambda L: L.nn.ConvTranspose3d(2, 3, 2, stride=2), (1, 2, 2, 3, 2)),
    "MaxPool3d": (lambda L: L.nn.MaxPool3d(2, stride=1, padding=1), (2, 2, 3, 4, 3)),
    "AvgPool3d": (lambda L: L.nn.AvgPool3d((1, 2, 2), ceil_mode=True), (2, 5, 3, 3)),
    "AdaptiveAvgPool3d": (lambda L: L.nn.AdaptiveAvgPool3d((1, None, 2)), (2, 2, 3, 4, 5)),
    "AdaptiveMaxPool3d": (lambda L: L.nn.AdaptiveMaxPool3d(2), (2, 2, 3, 4, 5)),
    "InstanceNorm1d": (lambda L: L.nn.InstanceNorm1d(3, affine=True, track_running_stats=True),
                       (2, 3, 5)),
    "InstanceNorm1d_unbatched": (lambda L: L.nn.InstanceNorm1d(3, momentum=None,
                                                               track_running_stats=True), (3, 5)),
    "InstanceNorm2d": (lambda L: L.nn.InstanceNorm2d(3, track_running_stats=True),
                       (2, 3, 4, 3)),
    "InstanceNorm3d": (lambda L: L.nn.InstanceNorm3d(2, affine=True), (2, 2, 3, 2, 3)),
    "Upsample": (lambda L: L.nn.Upsample(scale_factor=(2, 1.5), mode="bicubic"), (1, 2, 3, 4)),
    "Upsample_trilinear": (lambda L: L.nn.Upsample(size=(3, 4, 5), mode="trilinear",
                                                   align_corners=True), (1, 2, 2, 3, 2)),
    "UpsamplingNearest2d": (lambda L: L.nn.UpsamplingNearest2d(scale_factor=2), (1, 2, 3, 4)),
    "UpsamplingBilinear2d": (lambda L: L.nn.UpsamplingBilinear2d(size=(5, 3)), (1, 2, 3, 4)),
    "PixelShuffle": (lambda L: L.nn.PixelShuffle(2), (2, 8, 3, 2)),
    "PixelUnshuffle": (lambda L: L.nn.PixelUnshuffle(2), (2, 2, 4, 6)),
    "Fold": (lambda L: L.nn.Fold((4, 5), (2, 2), padding=1, stride=2), (2, 8, 9)),
    "Unfold": (lambda L: L.nn.Unfold((2, 3), dilation=(2, 1)), (2, 3, 5, 5)),
    "ZeroPad1d": (lambda L: L.nn.ZeroPad1d((2, 1)), (2, 3, 4)),
    "ZeroPad2d": (lambda L: L.nn.ZeroPad2d((1, 0, 2, 1)), (2, 3, 4)),
    "ZeroPad3d": (lambda L: L.nn.ZeroPad3d(1), (1, 2, 3, 4)),
    "ConstantPad1d": (lambda L: L.nn.ConstantPad1d(2, 3.5), (2, 3, 4)),
    "ConstantPad2d": (lambda L: L.nn.ConstantPad2d((1, -1, 0, 2), -1.0), (2, 3, 4)),
    "ConstantPad3d": (lambda L: L.nn.ConstantPad3d((1, 0, 0, 1, 2, 0), 0.5), (1, 2, 3, 4)),
    "ReflectionPad1d": (lambda L: L.nn.ReflectionPad1d((3, 1)), (2, 3, 4)),
    "ReflectionPad2d": (lambda L: L.nn.ReflectionPad2d(2), (2, 3, 4)),
    "ReflectionPad3d": (lambda L: L.nn.ReflectionPad3d((1, 0, 2, 1, 1, 2)), (1, 2, 3, 4, 3)),
    "ReplicationPad1d": (lambda L: L.nn.ReplicationPad1d(3), (3, 4)),
    "ReplicationPad2d": (lambda L: L.nn.ReplicationPad2d((0, 2, 3, 1)), (2, 3, 4, 2)),
    "ReplicationPad3d": (lambda L: L.nn.ReplicationPad3d(2), (2, 3, 4, 2)),
    "CircularPad1d": (lambda L: L.nn.CircularPad1d((2, 3)), (2, 3, 4)),
    "CircularPad2d": (lambda L: L.nn.CircularPad2d((1, 2, 0, 3)), (2, 3, 4)),
    "CircularPad3d": (lambda L: L.nn.CircularPad3d(1), (2, 3, 4, 2)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_parity(name, dtype):
    make, shape = MODULES[name]
    module_parity(make, rand(*shape, dtype=dtype), dtype)


@pytest.mark.parametrize("name", ["InstanceNorm1d", "InstanceNorm2d"])
def test_instance_norm_eval_uses_running_stats(name):
    make, shape = MODULES[name]
    tm, em = module_parity(make, rand(*shape), np.float64)
    tm.eval()
    em.eval()
    x = rand(*shape, seed=5)
    np.testing.assert_allclose(em(ember.tensor(x)).detach().numpy(),
                               tm(torch.tensor(x)).detach().numpy(), **TOL[np.float64])


def test_default_init_and_parameter_shapes():
    for name in ("Conv3d", "ConvTranspose3d", "InstanceNorm1d"):
        tm, em = MODULES[name][0](torch), MODULES[name][0](ember)
        tp, ep = dict(tm.named_parameters()), dict(em.named_parameters())
        assert list(tp) == list(ep)
        for key in tp:
            assert tuple(tp[key].shape) == tuple(ep[key].shape)
    torch.manual_seed(0)
    ember.manual_seed(0)
    tw, ew = torch.nn.Conv3d(3, 8, 3).weight, ember.nn.Conv3d(3, 8, 3).weight
    bound = 1 / np.sqrt(3 * 27)  # kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(fan_in), ...)
    assert np.abs(ew.detach().numpy()).max() <= bound
    assert np.abs(tw.detach().numpy()).max() <= bound
    assert np.abs(ew.detach().numpy()).max() > 0.8 * bound


@pytest.mark.parametrize("text", [
    "Upsample(scale_factor=2)", "Upsample(size=(3, 4), mode='bilinear')",
    "Upsample(scale_factor=(2, 3))", "Upsample(size=[2, 3])",
    "Upsample(scale_factor=2.5, mode='bicubic', align_corners=True)",
    "UpsamplingNearest2d(scale_factor=2)", "UpsamplingBilinear2d(size=3)", "PixelShuffle(2)",
    "PixelUnshuffle(3)", "Fold((4, 5), 2)", "Unfold(2, dilation=2, padding=1, stride=(1, 2))",
    "ZeroPad2d((1, 2, 3, 4))", "ConstantPad1d(2, 3.5)", "ReflectionPad3d(1)",
    "CircularPad2d((1, 0, 1, 0))", "ReplicationPad1d(2)", "ZeroPad3d(1)",
    "InstanceNorm3d(4, eps=1e-3, affine=True, bias=False)", "MaxPool3d(2, stride=1)",
    "AvgPool3d((1, 2, 3))", "AdaptiveAvgPool3d((1, None, 2))",
    "Conv3d(2, 4, 3, dilation=2, bias=False)", "ConvTranspose3d(2, 4, (1, 2, 3), stride=2)"])
def test_repr_parity(text):
    assert repr(eval("ember.nn." + text)) == repr(eval("torch.nn." + text))


# ---- errors ----------------------------------------------------------------------------------
def _randn(L, *shape):
    return L.tensor(rand(*shape, dtype=np.float32))


ERRORS = {
    "reflect_too_big": lambda L: L.nn.ReflectionPad2d(3)(_randn(L, 1, 2, 3, 3)),
    "reflect_5d": lambda L: L.nn.ReflectionPad2d(1)(_randn(L, 2, 1, 3, 3, 3)),
    "reflect_1d": lambda L: L.nn.ReflectionPad1d(1)(_randn(L, 3)),
    "replicate_2d": lambda L: L.nn.ReplicationPad2d(1)(_randn(L, 3, 3)),
    "replicate_empty": lambda L: L.nn.ReplicationPad1d(1)(_randn(L, 1, 0, 3)),
    "reflect_empty": lambda L: L.nn.ReflectionPad2d(1)(_randn(L, 1, 2, 0, 3)),
    "circular_dims": lambda L: L.nn.CircularPad2d(1)(_randn(L, 3, 3)),
    "circular_wrap": lambda L: L.nn.CircularPad1d(4)(_randn(L, 1, 2, 3)),
    "zero_pad_short": lambda L: L.nn.ZeroPad2d(1)(_randn(L, 3)),
    "zero_pad_odd": lambda L: L.nn.ZeroPad2d((1, 2, 3))(_randn(L, 3, 3)),
    "pad_value": lambda L: F(L).pad(_randn(L, 1, 2, 3), (1, 1), mode="reflect", value=1),
    "shuffle_2d": lambda L: F(L).pixel_shuffle(_randn(L, 8, 4), 2),
    "shuffle_channels": lambda L: F(L).pixel_shuffle(_randn(L, 7, 4, 4), 2),
    "shuffle_zero": lambda L: F(L).pixel_shuffle(_randn(L, 8, 4, 4), 0),
    "shuffle_float": lambda L: F(L).pixel_shuffle(_randn(L, 8, 4, 4), 2.0),
    "unshuffle_height": lambda L: F(L).pixel_unshuffle(_randn(L, 8, 5, 4), 2),
    "unshuffle_width": lambda L: F(L).pixel_unshuffle(_randn(L, 8, 4, 5), 2),
    "instance_spatial": lambda L: F(L).instance_norm(_randn(L, 2, 3, 1)),
    "instance_no_stats": lambda L: F(L).instance_norm(_randn(L, 2, 3, 4), use_input_stats=False),
    "instance_running_size": lambda L: F(L).instance_norm(_randn(L, 2, 3, 4), L.zeros(2),
                                                          L.ones(3)),
    "instance_weight_size": lambda L: F(L).instance_norm(_randn(L, 2, 3, 4), weight=L.ones(2)),
    "instance_one_stat": lambda L: F(L).instance_norm(_randn(L, 1, 3, 4), L.zeros(3), None),
    "instance_affine": lambda L: L.nn.InstanceNorm1d(3, affine=True)(_randn(L, 2, 4, 5)),
    "instance_dims": lambda L: L.nn.InstanceNorm2d(3)(_randn(L, 4, 5)),
    "unfold_2d": lambda L: F(L).unfold(_randn(L, 5, 6), 2),
    "unfold_5d": lambda L: F(L).unfold(_randn(L, 2, 3, 4, 5, 6), 2),
    "unfold_big_kernel": lambda L: F(L).unfold(_randn(L, 2, 3, 5, 6), 7),
    "unfold_zero_kernel": lambda L: F(L).unfold(_randn(L, 2, 3, 5, 6), 0),
    "unfold_stride": lambda L: F(L).unfold(_randn(L, 2, 3, 5, 6), 2, stride=0),
    "unfold_dilation": lambda L: F(L).unfold(_randn(L, 2, 3, 5, 6), 2, dilation=0),
    "unfold_padding": lambda L: F(L).unfold(_randn(L, 2, 3, 5, 6), 2, padding=-1),
    "unfold_kernel_len": lambda L: F(L).unfold(_randn(L, 2, 3, 5, 6), (2, 2, 2)),
    "unfold_empty": lambda L: F(L).unfold(_randn(L, 2, 0, 5, 6), 2),
    "fold_1d": lambda L: F(L).fold(_randn(L, 20), (5, 6), 2),
    "fold_channels": lambda L: F(L).fold(_randn(L, 2, 11, 20), (5, 6), 2),
    "fold_blocks": lambda L: F(L).fold(_randn(L, 2, 12, 20), (5, 6), 2, stride=(1, 2)),
    "fold_tiny": lambda L: F(L).fold(_randn(L, 2, 12, 20), (1, 1), 2),
    "fold_size_len": lambda L: F(L).fold(_randn(L, 2, 12, 20), (5, 6, 7), 2),
    "fold_empty": lambda L: F(L).fold(_randn(L, 2, 0, 20), (5, 6), 2),
    "grid_mode": lambda L: F(L).grid_sample(_randn(L, 2, 3, 5, 6), _randn(L, 2, 4, 7, 2),
                                            mode="foo"),
    "grid_padding": lambda L: F(L).grid_sample(_randn(L, 2, 3, 5, 6), _randn(L, 2, 4, 7, 2),
                                               padding_mode="foo"),
    "grid_batch": lambda L: F(L).grid_sample(_randn(L, 2, 3, 5, 6), _randn(L, 1, 4, 7, 2)),
    "grid_last": lambda L: F(L).grid_sample(_randn(L, 2, 3, 5, 6), _randn(L, 2, 4, 7, 1)),
    "grid_dtype": lambda L: F(L).grid_sample(_randn(L, 2, 3, 5, 6),
                                             _randn(L, 2, 4, 7, 2).double()),
    "grid_bicubic_3d": lambda L: F(L).grid_sample(_randn(L, 2, 3, 4, 5, 6),
                                                  _randn(L, 2, 3, 4, 5, 3), mode="bicubic"),
    "grid_empty": lambda L: F(L).grid_sample(_randn(L, 2, 3, 0, 6), _randn(L, 2, 4, 7, 2)),
    "affine_size": lambda L: F(L).affine_grid(_randn(L, 2, 2, 3), (2, 3, 5)),
    "affine_batch": lambda L: F(L).affine_grid(_randn(L, 2, 2, 3), (3, 3, 5, 6)),
    "affine_theta": lambda L: F(L).affine_grid(_randn(L, 2, 3, 4), (2, 3, 5, 6)),
    "affine_3d_theta": lambda L: F(L).affine_grid(_randn(L, 2, 2, 3), (2, 3, 5, 6, 7)),
    "affine_int": lambda L: F(L).affine_grid(_randn(L, 2, 2, 3).int(), (2, 3, 5, 6)),
    "affine_zero": lambda L: F(L).affine_grid(_randn(L, 2, 2, 3), (2, 3, 0, 6)),
    "interp_bicubic_3d": lambda L: F(L).interpolate(_randn(L, 2, 5, 6), size=3, mode="bicubic"),
    "interp_trilinear_4d": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6), size=3,
                                                      mode="trilinear"),
    "interp_antialias": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6), size=3,
                                                   antialias=True),
    "interp_area_align": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6), size=3, mode="area",
                                                    align_corners=True),
    "interp_lanczos_plain": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6), size=3,
                                                       mode="lanczos"),
    "interp_lanczos_aligned": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6), size=3,
                                                         mode="lanczos", align_corners=True,
                                                         antialias=True),
    "interp_lanczos_5d": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6, 4), size=3,
                                                    mode="lanczos"),
    "interp_mode": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6), size=3, mode="foo"),
    "interp_area_2d": lambda L: F(L).interpolate(_randn(L, 5, 6), size=3, mode="area"),
    "interp_bicubic_zero": lambda L: F(L).interpolate(_randn(L, 1, 2, 5, 6), size=0,
                                                      mode="bicubic"),
    "max_pool3d_dims": lambda L: F(L).max_pool3d(_randn(L, 3, 4), 2),
    "max_pool3d_empty": lambda L: F(L).max_pool3d(_randn(L, 2, 3, 0, 4, 4), 2),
    "max_pool3d_pad": lambda L: F(L).max_pool3d(_randn(L, 2, 3, 4, 5, 6), 2, padding=2),
    "max_pool3d_small": lambda L: F(L).max_pool3d(_randn(L, 2, 3, 4, 5, 6), 5),
    "max_pool3d_kernel": lambda L: F(L).max_pool3d(_randn(L, 2, 3, 4, 5, 6), (2, 2)),
    "max_pool3d_stride": lambda L: F(L).max_pool3d(_randn(L, 2, 3, 4, 5, 6), 2, stride=0),
    "max_pool3d_dilation": lambda L: F(L).max_pool3d(_randn(L, 2, 3, 4, 5, 6), 2, dilation=0),
    "avg_pool3d_dims": lambda L: F(L).avg_pool3d(_randn(L, 3, 4), 2),
    "avg_pool3d_small": lambda L: F(L).avg_pool3d(_randn(L, 2, 3, 4, 5, 6), 5, padding=2),
    "avg_pool3d_kernel": lambda L: F(L).avg_pool3d(_randn(L, 2, 3, 4, 5, 6), (2, 2)),
    "avg_pool3d_divisor": lambda L: F(L).avg_pool3d(_randn(L, 2, 3, 4, 5, 6), 2,
                                                    divisor_override=0),
    "avg_pool3d_empty": lambda L: F(L).avg_pool3d(_randn(L, 2, 3, 4, 0, 4), 2),
    "adaptive_avg3d_dims": lambda L: F(L).adaptive_avg_pool3d(_randn(L, 3, 4), 2),
    "adaptive_avg3d_size": lambda L: F(L).adaptive_avg_pool3d(_randn(L, 2, 3, 4, 5, 6), (2, 2)),
    "adaptive_avg3d_empty": lambda L: F(L).adaptive_avg_pool3d(_randn(L, 2, 3, 0, 4, 4), 2),
    "adaptive_max3d_dims": lambda L: F(L).adaptive_max_pool3d(_randn(L, 3, 4), 2),
    "adaptive_max3d_size": lambda L: F(L).adaptive_max_pool3d(_randn(L, 2, 3, 4, 5, 6), (2, 2)),
    "conv3d_dims": lambda L: F(L).conv3d(_randn(L, 3, 4), _randn(L, 2, 3, 1, 1, 1)),
    "conv3d_kernel": lambda L: F(L).conv3d(_randn(L, 2, 3, 4, 5, 6), _randn(L, 2, 3, 5, 1, 1)),
    "conv3d_channels": lambda L: F(L).conv3d(_randn(L, 2, 3, 4, 5, 6), _randn(L, 2, 2, 1, 1, 1)),
    "conv3d_stride": lambda L: F(L).conv3d(_randn(L, 2, 3, 4, 5, 6), _randn(L, 2, 3, 1, 1, 1),
                                           stride=(1, 2)),
    "conv_transpose3d_output_padding": lambda L: F(L).conv_transpose3d(
        _randn(L, 2, 3, 4, 5, 6), _randn(L, 3, 2, 1, 1, 1), stride=2, output_padding=2),
}


def _normalized(err):
    if err is None:
        return None
    kind, text = err
    return kind, text.replace("torch.", "ember.")


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_parity(name):
    fn = ERRORS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _normalized(error_of(lambda: fn(torch)))
        got = _normalized(error_of(lambda: fn(ember)))
    assert expected is not None
    assert got == expected


@pytest.mark.parametrize("name", ["grid_sample", "affine_grid"])
def test_align_corners_default_warning(name):
    def run(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if name == "grid_sample":
                F(L).grid_sample(_randn(L, 1, 1, 2, 2), L.zeros(1, 1, 1, 2))
            else:
                F(L).affine_grid(_randn(L, 1, 2, 3), (1, 1, 2, 2))
        return [(w.category, str(w.message)) for w in caught]
    assert run(ember) == run(torch)


def test_empty_batches_parity():
    for fn in (lambda L: F(L).unfold(L.zeros(0, 3, 5, 6), 2),
               lambda L: F(L).fold(L.zeros(0, 12, 20), (5, 6), 2),
               lambda L: F(L).max_pool3d(L.zeros(0, 3, 4, 4, 4), 2),
               lambda L: F(L).avg_pool3d(L.zeros(0, 3, 4, 4, 4), 2),
               lambda L: F(L).pad(L.zeros(0, 2, 3), (1, 1), mode="reflect"),
               lambda L: F(L).interpolate(L.zeros(1, 2, 5, 6), size=0, mode="area")):
        assert tuple(fn(ember).shape) == tuple(fn(torch).shape)


@pytest.mark.parametrize("name,kw", [("upsample", dict(scale_factor=2, mode="bilinear")),
                                     ("upsample_nearest", dict(scale_factor=2)),
                                     ("upsample_bilinear", dict(size=(3, 5)))])
def test_deprecated_upsample_aliases(name, kw):
    x = rand(1, 2, 2, 3)

    def run(L):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = getattr(F(L), name)(L.tensor(x), **kw)
        return y.numpy(), [(w.category, str(w.message)) for w in caught]
    (ye, we), (yt, wt) = run(ember), run(torch)
    np.testing.assert_allclose(ye, yt, **TOL[np.float64])
    assert we == wt
