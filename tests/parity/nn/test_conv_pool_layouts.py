"""Conv kernels in both layouts (short patches: channels-first batched matmul; long
patches: channels-last rows) and max pooling's kernel == stride fast path, against torch,
with gradients and second gradients."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare

RNG = np.random.default_rng(0)


def _arr(*shape):
    return RNG.standard_normal(shape)


# (C, O, k, groups, extra kwargs): C/groups * k*k <= 32 takes the short layout
CONVS = [
    (1, 4, 3, 1, dict(padding=1)),                  # short
    (3, 4, 3, 1, dict(stride=2, dilation=2, padding=2)),  # short, strided + dilated
    (4, 6, 3, 2, dict(padding=1)),                  # short, grouped
    (5, 4, 3, 1, dict(padding=1)),                  # long (45)
    (8, 6, 3, 2, dict(stride=2, padding=(1, 0))),   # long (36), grouped, strided
    (4, 3, (2, 3), 1, dict(padding="same")),        # long? 24 -> short, asymmetric 'same'
    (6, 3, (3, 2), 1, dict(dilation=(1, 2))),       # long (36), dilated
]


@pytest.mark.parametrize("case", range(len(CONVS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_layouts(case, dtype):
    c, o, k, g, kw = CONVS[case]
    kh, kwid = (k, k) if isinstance(k, int) else k
    x = _arr(2, c, 7, 6).astype(dtype)
    w = _arr(o, c // g, kh, kwid).astype(dtype)
    b = _arr(o).astype(dtype)
    compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, groups=g, **kw), x, w, b)


@pytest.mark.parametrize("c,o,k", [(2, 3, 3), (7, 2, 5)])
def test_conv1d_and_transpose_layouts(c, o, k):
    x = _arr(2, c, 9)
    compare(lambda lib, x, w: lib.nn.functional.conv1d(x, w, padding=1, stride=2), x,
            _arr(o, c, k))
    compare(lambda lib, x, w: lib.nn.functional.conv_transpose2d(x, w, stride=2, padding=1),
            _arr(2, c, 4, 5), _arr(c, o, k, k))


@pytest.mark.parametrize("c", [2, 5, 8])  # 8: the Winograd path (3x3, stride 1, >= 8 channels)
def test_conv2d_second_grad(c):
    x, w = _arr(2, c, 5, 5), _arr(8 if c >= 8 else 3, c, 3, 3)
    grads = {}
    for lib in (torch, ember):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = lib.nn.functional.conv2d(xt, wt, padding=1)
        gx, gw = lib.autograd.grad((y * y).sum(), (xt, wt), create_graph=True)
        s = (gx * gx).sum() + (gw * gw).sum()
        grads[lib] = [t.detach().numpy() for t in lib.autograd.grad(s, (xt, wt))]
    for t, e in zip(grads[torch], grads[ember]):
        np.testing.assert_allclose(e, t, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("shape,k,kw", [((2, 3, 8, 8), 2, {}), ((2, 3, 7, 9), 3, {}),
                                        ((2, 3, 6, 6), (2, 3), {}),
                                        ((2, 3, 7, 7), 2, dict(ceil_mode=True)),
                                        ((2, 3, 8, 8), 2, dict(ceil_mode=True))])
def test_max_pool_tiled(shape, k, kw):
    x = np.round(_arr(*shape) * 2).clip(0)  # many ties (first maximum wins) and zeros
    compare(lambda lib, x: lib.nn.functional.max_pool2d(x, k, return_indices=True, **kw), x)
    k1 = k if isinstance(k, int) else k[1]
    compare(lambda lib, x: lib.nn.functional.max_pool1d(x.flatten(2), k1, **kw), x)


def test_max_pool_tiled_nan_and_second_grad():
    x = _arr(2, 2, 4, 4)
    x[0, 1, 2, 3] = np.nan
    compare(lambda lib, x: lib.nn.functional.max_pool2d(x, 2, return_indices=True), x)
    x = _arr(2, 2, 4, 4)
    out = {}
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.functional.max_pool2d(xt, 2)
        g = lib.tensor(_arr(2, 2, 2, 2) if lib is torch else out["g"], requires_grad=True)
        out["g"] = g.detach().numpy()
        gx, = lib.autograd.grad(y, xt, g, create_graph=True)
        gg, = lib.autograd.grad((gx * lib.tensor(x)).sum(), g)
        out[lib] = (gx.detach().numpy(), gg.numpy())
    for t, e in zip(out[torch], out[ember]):
        np.testing.assert_allclose(e, t)


# 3x3, stride 1, one group, >= 8 channels in and out: Winograd's F(2x2, 3x3)
# (ember/backend/winograd.py), odd and even sizes, padding 0-2 and asymmetric 'same'-like
WINOGRAD = [
    (8, 8, (7, 6), dict(padding=1)),
    (9, 12, (5, 9), dict(padding=0)),
    (8, 10, (6, 6), dict(padding=2)),
    (16, 8, (14, 14), dict(padding="same")),
]


@pytest.mark.parametrize("case", range(len(WINOGRAD)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_conv2d_winograd(case, dtype):
    c, o, hw, kw = WINOGRAD[case]
    x = _arr(3, c, *hw).astype(dtype)
    w = _arr(o, c, 3, 3).astype(dtype)
    b = _arr(o).astype(dtype)
    # The weight gradient sums n*H*W*... products into entries up to ~200 here; in float32
    # both libraries are off the float64 value by ~1e-5 (rms, measured: PyTorch 6.5e-6,
    # ember 8.2e-6; 2e-6 and 5e-7 of the largest entry at CNN sizes, PyTorch the larger),
    # so entries near zero differ by up to ~3e-5 between them: absolute tolerance 1e-4
    atol = 1e-4 if dtype == np.float32 else None
    compare(lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b, **kw), x, w, b, atol=atol)
    compare(lambda lib, x, w: lib.nn.functional.conv2d(x, w, **kw), x, w, atol=atol)
