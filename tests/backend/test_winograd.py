"""Winograd's F(2x2, 3x3) convolution (ember/backend/winograd.py, _winograd.c) against the
im2col path it stands in for: float64 to rounding, float32 close, which convolutions take
it, and bits independent of the thread count."""
import numpy as np
import pytest

import ember
from ember._ops import conv
from ember.backend import winograd

pytestmark = pytest.mark.skipif(not winograd.available(), reason="_winograd not built")

RNG = np.random.default_rng(0)


def _geom(pads, hw):
    return conv._Geom((1, 1), (1, 1), pads, hw, 1)


def _im2col(fn):
    old = winograd.ENABLED
    winograd.ENABLED = False
    try:
        return fn()
    finally:
        winograd.ENABLED = old


CASES = [  # (n, C, O, H, W, ((top, bottom), (left, right)))
    (2, 8, 16, 7, 9, ((1, 1), (1, 1))),
    (3, 9, 8, 6, 6, ((0, 0), (0, 0))),
    (1, 8, 8, 5, 4, ((2, 2), (1, 0))),
    (5, 16, 12, 14, 14, ((1, 1), (1, 1))),
    (2, 8, 8, 1, 1, ((1, 1), (1, 1))),     # one output pixel per tile
    (2, 8, 8, 3, 2, ((0, 2), (2, 0))),
]


@pytest.mark.parametrize("case", CASES)
def test_forward_and_input_gradient_match_im2col(case):
    n, c, o, h, w, pads = case
    x = RNG.standard_normal((n, c, h, w))
    k = RNG.standard_normal((o, c, 3, 3))
    b = RNG.standard_normal(o)
    geom = _geom(pads, (h, w))
    assert winograd.applies(x, k, geom.stride, geom.dilation, pads, 1)
    ref = _im2col(lambda: conv.conv_forward(x, k, geom, b))
    np.testing.assert_allclose(winograd.forward(x, k, pads, b), ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(winograd.forward(x, k, pads), ref - b[:, None, None],
                               rtol=1e-12, atol=1e-12)
    gy = RNG.standard_normal(ref.shape)
    rgx, rgw, rgb = _im2col(lambda: conv.conv_backward(x, k, gy, geom, (True, True, True)))
    gx, gw, gb = winograd.backward(x, k, gy, pads, (True, True, True))
    np.testing.assert_allclose(gx, rgx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gw, rgw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gb, rgb, rtol=1e-12, atol=1e-12)
    # float32: the transforms' extra roundings stay at the level of the products' own
    x32, k32, gy32 = x.astype(np.float32), k.astype(np.float32), gy.astype(np.float32)
    y32 = winograd.forward(x32, k32, pads, b.astype(np.float32))
    assert y32.dtype == np.float32
    assert np.abs(y32 - ref).max() <= 2e-6 * np.abs(ref).max()
    gx32 = winograd.backward(x32, k32, gy32, pads, (True, False, False))[0]
    assert np.abs(gx32 - rgx).max() <= 2e-6 * np.abs(rgx).max()


def test_conv_ops_use_it_and_agree_with_the_columns_path():
    # through ember.nn.functional.conv2d: values and both gradients, float64
    x = RNG.standard_normal((4, 8, 9, 7))
    k = RNG.standard_normal((12, 8, 3, 3))
    b = RNG.standard_normal(12)

    def run():
        xt = ember.tensor(x, requires_grad=True)
        kt = ember.tensor(k, requires_grad=True)
        bt = ember.tensor(b, requires_grad=True)
        y = ember.nn.functional.conv2d(xt, kt, bt, padding=1)
        (y * y).sum().backward()
        return [t.detach().numpy() for t in (y, xt.grad, kt.grad, bt.grad)]
    calls = []
    real = winograd.forward
    winograd.forward = lambda *a, **kw: calls.append(1) or real(*a, **kw)
    try:
        fast = run()
    finally:
        winograd.forward = real
    assert calls, "conv2d did not take the Winograd path"
    slow = _im2col(run)
    for a, r in zip(fast, slow):
        np.testing.assert_allclose(a, r, rtol=1e-11, atol=1e-11)


def test_gradcheck_through_it():
    x = ember.tensor(RNG.standard_normal((2, 8, 5, 4)), requires_grad=True)
    k = ember.tensor(RNG.standard_normal((8, 8, 3, 3)), requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda x, k: ember.nn.functional.conv2d(x, k, padding=1), (x, k))


@pytest.mark.parametrize("change", [
    dict(stride=(2, 1)), dict(dilation=(1, 2)), dict(groups=2), dict(ksize=5),
    dict(channels=7), dict(pads=((3, 3), (1, 1))), dict(dtype=np.float16),
    dict(disabled=True)])
def test_what_qualifies(change):
    c = change.get("channels", 8)
    x = np.ones((2, c, 6, 6), dtype=change.get("dtype", np.float32))
    ksize = change.get("ksize", 3)
    k = np.ones((8, c, ksize, ksize), dtype=x.dtype)
    args = (change.get("stride", (1, 1)), change.get("dilation", (1, 1)),
            change.get("pads", ((1, 1), (1, 1))), change.get("groups", 1))
    assert winograd.applies(np.ones((2, 8, 6, 6), np.float32), np.ones((8, 8, 3, 3), np.float32),
                            (1, 1), (1, 1), ((1, 1), (1, 1)), 1)
    old = winograd.ENABLED
    winograd.ENABLED = not change.get("disabled", False)
    try:
        assert not winograd.applies(x, k, *args)
    finally:
        winograd.ENABLED = old


def test_bits_do_not_depend_on_the_thread_count():
    x = RNG.standard_normal((16, 8, 10, 10)).astype(np.float32)
    k = RNG.standard_normal((8, 8, 3, 3)).astype(np.float32)
    gy = RNG.standard_normal((16, 8, 10, 10)).astype(np.float32)
    old = ember.get_num_threads()
    results = []
    try:
        for threads in (1, 2, 3):
            ember.set_num_threads(threads)
            results.append((winograd.forward(x, k, (1, 1)),
                            winograd.backward(x, k, gy, (1, 1), (True, True, True))))
    finally:
        ember.set_num_threads(old)
    for y, grads in results[1:]:
        np.testing.assert_array_equal(y, results[0][0])
        for a, b in zip(grads, results[0][1]):
            np.testing.assert_array_equal(a, b)


def test_empty_batch():
    x = np.zeros((0, 8, 5, 5))
    k = RNG.standard_normal((8, 8, 3, 3))
    assert winograd.forward(x, k, (1, 1)).shape == (0, 8, 5, 5)
    gx, gw, gb = winograd.backward(x, k, np.zeros((0, 8, 5, 5)), (1, 1), (True, True, True))
    assert gx.shape == (0, 8, 5, 5) and not gw.any() and not gb.any()
