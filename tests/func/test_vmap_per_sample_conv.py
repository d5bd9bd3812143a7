"""Convolutions with batched weights under vmap (``PerSampleConv``): values and per-sample
gradients equal a per-sample loop of plain convolutions, in float64.

Two paths: a plain weight requiring grad, expanded along the batch (one weight for all:
the batch folds into N, each sample's weight gradient is one batched matmul), and truly
batched weights (the samples as groups of one grouped convolution). Second-order
gradients run the grouped formulas; nested vmaps join the outer batch to the inner one."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember._ops.conv import PerSampleConv, _Geom
from ember.func import grad, vmap
from tests.helpers import check_grad, check_second_grad


def _randn(*shape, seed):
    return ember.randn(*shape, dtype=ember.float64, generator=ember.Generator().manual_seed(seed))


def _close(a, b, tol=1e-10):
    assert tuple(a.shape) == tuple(b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


def _no_fallback(f, *xs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a loop fallback would warn
        return vmap(f, **kw)(*xs)


# conv function, per-sample input shape (N, C, *S), weight shape, bias?, keyword arguments
CASES = {
    "2d_pad_stride": (F.conv2d, (1, 3, 7, 6), (4, 3, 3, 3), True, dict(stride=2, padding=1)),
    "2d_short_patch": (F.conv2d, (1, 1, 6, 6), (5, 1, 3, 3), True, dict(padding=1)),
    "2d_groups_dilation": (F.conv2d, (2, 4, 8, 7), (6, 2, 3, 2), False,
                           dict(groups=2, dilation=(2, 1))),
    "2d_same_even_kernel": (F.conv2d, (2, 2, 5, 5), (3, 2, 2, 4), True, dict(padding="same")),
    "2d_unbatched_sample": (F.conv2d, (3, 6, 6), (2, 3, 3, 3), True, dict(padding=1)),
    "1d": (F.conv1d, (2, 3, 9), (4, 3, 3), True, dict(stride=2)),
    "3d": (F.conv3d, (1, 2, 4, 5, 4), (3, 2, 2, 3, 2), True, dict(padding=1)),
}
B = 3


def _case(name):
    conv, xshape, wshape, has_bias, kw = CASES[name]
    x = _randn(B, *xshape, seed=1)
    w = _randn(*wshape, seed=2)
    b = _randn(wshape[0], seed=3) if has_bias else None
    return conv, x, w, b, kw


def _loop(f, *xs):
    rows = [f(*[x[i] for x in xs]) for i in range(xs[0].shape[0])]
    if isinstance(rows[0], tuple):
        return tuple(ember.stack([r[k] for r in rows]) for k in range(len(rows[0])))
    return ember.stack(rows)


@pytest.mark.parametrize("name", sorted(CASES))
def test_per_sample_gradients_of_shared_weights_match_loop(name):
    conv, x, w, b, kw = _case(name)
    params = [w.requires_grad_()] + ([] if b is None else [b.requires_grad_()])

    def per_sample(xi):
        xi = xi.detach().requires_grad_()
        out = conv(xi, *params, **kw)
        loss = (out.tanh() * out).sum()
        return (out,) + ember.autograd.grad(loss, [xi] + params)
    got, want = _no_fallback(per_sample, x), _loop(per_sample, x)
    for g, e in zip(got, want):
        _close(g, e)


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_weights_and_bias_match_loop(name):
    conv, x, w, b, kw = _case(name)
    ws = ember.stack([w * (k + 1) for k in range(B)])
    if b is None:
        def loss(xi, wi):
            return (conv(xi, wi, **kw).sin()).sum()
        args = (x, ws)
    else:
        def loss(xi, wi, bi):
            return (conv(xi, wi, bi, **kw).sin()).sum()
        args = (x, ws, ember.stack([b - k for k in range(B)]))
    f = grad(loss, argnums=tuple(range(len(args))))
    got, want = _no_fallback(f, *args), _loop(f, *args)
    for g, e in zip(got, want):
        _close(g, e)
    value = _no_fallback(lambda *a: conv(*a, **kw), *args)
    _close(value, _loop(lambda *a: conv(*a, **kw), *args))


def test_shared_weight_with_batched_bias_and_unbatched_input():
    x, w, b = _randn(2, 3, 5, 5, seed=4), _randn(4, 3, 3, 3, seed=5), _randn(B, 4, seed=6)
    xs = ember.stack([x * (k + 1) for k in range(B)])

    def loss(wi, bi, xi):
        return F.conv2d(xi, wi, bi, stride=2).pow(2).sum()
    f = grad(loss, argnums=(0, 1))
    for in_dims, args in (((None, 0, 0), (w, b, xs)), ((None, 0, None), (w, b, x))):
        got = _no_fallback(f, *args, in_dims=in_dims)
        want = [f(w, b[k], xs[k] if in_dims[2] == 0 else x) for k in range(B)]
        for g, e in zip(got, zip(*want)):
            _close(g, ember.stack(e))  # per-sample gradients, also of the plain weight


@pytest.mark.parametrize("shared", [True, False])
def test_second_order_per_sample_gradients(shared):
    x = _randn(B, 2, 6, 6, seed=7)
    w0, b0 = _randn(3, 2, 3, 3, seed=8), _randn(3, seed=9)

    def grad_of_grad_norm(xi, w, b):
        out = F.conv2d(xi.unsqueeze(0), w, b, stride=2, padding=1).tanh().sum()
        gw, gb = ember.autograd.grad(out, (w, b), create_graph=True)
        return ember.autograd.grad((gw * gw).sum() + (gb * gb).sum() * xi.sum(), (w, b))

    if shared:
        w, b = w0.requires_grad_(), b0.requires_grad_()
        got = _no_fallback(lambda xi: grad_of_grad_norm(xi, w, b), x)
        want = _loop(lambda xi: grad_of_grad_norm(xi, w, b), x)
    else:
        ws = ember.stack([w0 + k for k in range(B)])
        bs = ember.stack([b0 * k for k in range(B)])

        def f(xi, wi, bi):
            return grad_of_grad_norm(xi, wi.requires_grad_(), bi.requires_grad_())
        got = _no_fallback(f, x, ws, bs)
        want = _loop(lambda xi, wi, bi: f(xi, wi.detach(), bi.detach()), x, ws, bs)
    for g, e in zip(got, want):
        _close(g, e)


def test_nested_vmap_per_sample_gradients():
    x = _randn(2, B, 1, 2, 5, 5, seed=10)
    w, b = _randn(3, 2, 3, 3, seed=11).requires_grad_(), _randn(3, seed=12).requires_grad_()

    def per_sample(xi):
        return ember.autograd.grad(F.conv2d(xi, w, b, padding=1).exp().sum(), (w, b))
    got = _no_fallback(vmap(per_sample), x)
    want = _loop(lambda xo: _loop(per_sample, xo), x)
    for g, e in zip(got, want):
        _close(g, e)
    ws = ember.stack([ember.stack([w.detach() * (i + j) for j in range(B)]) for i in range(2)])

    def batched(xi, wi):
        return F.conv2d(xi, wi, padding=1)
    _close(_no_fallback(vmap(batched), x, ws), _loop(lambda a, c: _loop(batched, a, c), x, ws))


def _geom(stride, pad, in_size, groups=1):
    return _Geom(stride, (1, 1), pad, in_size, groups)


@pytest.mark.parametrize("shared", [True, False])
@pytest.mark.parametrize("has_bias", [True, False])
def test_per_sample_conv_gradients_match_finite_differences(shared, has_bias):
    rng = np.random.default_rng(13)
    geom = _geom((2, 1), ((1, 0), (1, 1)), (5, 4), groups=2)
    x = rng.standard_normal((2, 2, 4, 5, 4))
    w = rng.standard_normal((1 if shared else 2, 4, 2, 3, 2))
    b = rng.standard_normal((2, 4))

    def f(xt, wt, *bt):
        if shared:
            wt = wt.expand(2, *wt.shape[1:])
        return PerSampleConv.apply(xt, wt, geom, *bt)
    args = (x, w, b) if has_bias else (x, w)
    check_grad(f, *args)
    check_second_grad(f, *args)


def test_per_sample_conv_values_match_a_direct_loop():
    rng = np.random.default_rng(14)
    x, w, b = (rng.standard_normal(s) for s in ((3, 2, 4, 6, 5), (3, 6, 2, 3, 3), (3, 6)))
    pad = ((1, 1), (0, 2))
    geom = _geom((1, 2), pad, (6, 5), groups=2)
    shared = ember.tensor(w[:1]).expand(3, 6, 2, 3, 3)  # a stride-0 stack
    for wt in (ember.tensor(w), shared):
        out = PerSampleConv.apply(ember.tensor(x), wt, geom, ember.tensor(b))
        wa = wt.numpy()
        ref = np.stack([_conv_ref(x[k], wa[k], b[k], (1, 2), pad, 2) for k in range(3)])
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-12, atol=1e-12)


def _conv_ref(x, w, b, stride, pad, groups):
    """A direct (loop) 2-D cross-correlation in NumPy: x (N, C, H, W), w (O, C/G, kh, kw)."""
    x = np.pad(x, ((0, 0), (0, 0)) + tuple(pad))
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    oh, ow = (h - kh) // stride[0] + 1, (wd - kw) // stride[1] + 1
    out = np.zeros((n, o, oh, ow))
    og = o // groups
    for j in range(o):
        g = j // og
        for i in range(oh):
            for k in range(ow):
                patch = x[:, g * cg:(g + 1) * cg, i * stride[0]:i * stride[0] + kh,
                          k * stride[1]:k * stride[1] + kw]
                out[:, j, i, k] = (patch * w[j]).sum(axis=(1, 2, 3)) + b[j]
    return out


def test_per_sample_conv_of_no_problems():
    geom = _geom((1, 1), ((1, 1), (1, 1)), (4, 4))
    x = ember.zeros(0, 2, 3, 4, 4, dtype=ember.float64, requires_grad=True)
    w = ember.zeros(0, 5, 3, 3, 3, dtype=ember.float64, requires_grad=True)
    out = PerSampleConv.apply(x, w, geom)
    assert tuple(out.shape) == (0, 2, 5, 4, 4)
    out.sum().backward()
    assert tuple(x.grad.shape) == (0, 2, 3, 4, 4) and tuple(w.grad.shape) == (0, 5, 3, 3, 3)


def test_forward_mode_through_batched_weights():
    x, w = _randn(B, 1, 2, 5, 5, seed=15), _randn(4, 2, 3, 3, seed=16)
    tw = _randn(4, 2, 3, 3, seed=17)
    ws = ember.stack([w * (k + 1) for k in range(B)])

    def f(xi, wi):
        return F.conv2d(xi, wi, stride=2, padding=1).tanh()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, tangent = ember.func.jvp(lambda W: vmap(f)(x, W), (ws,), (ember.stack([tw] * B),))
        per_sample = vmap(lambda xi: ember.func.jvp(lambda W: f(xi, W), (w,), (tw,))[1])(x)
    _close(tangent, _loop(lambda xi, wi: ember.func.jvp(lambda W: f(xi, W), (wi,), (tw,))[1],
                          x, ws))
    _close(per_sample, _loop(lambda xi: ember.func.jvp(lambda W: f(xi, W), (w,), (tw,))[1], x))
