"""Channels-last memory formats: strides, conversions, layouts kept by ops, values and
gradients equal to the row-major run (ember and NumPy only; tests/parity/memory_format/
compares with PyTorch)."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import nn
from ember.autograd import gradcheck, gradgradcheck

CL, CL3 = ember.channels_last, ember.channels_last_3d


def _nhwc_strides(shape):
    """Element strides of an (N, C, *S) shape laid out (N, *S, C), computed by hand."""
    n, c, *spatial = shape
    strides = [0] * len(shape)
    strides[1] = 1
    step = c
    for d in reversed(range(2, len(shape))):
        strides[d] = step
        step *= shape[d]
    strides[0] = step
    return tuple(strides)


def _is_cl(t):
    return t.is_contiguous(memory_format=CL) and not t.is_contiguous()


# ---- strides and contiguity ---------------------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 5), (3, 2, 2, 1)])
def test_contiguous_channels_last_strides(shape):
    x = ember.randn(*shape)
    y = x.contiguous(memory_format=CL)
    assert y.stride() == _nhwc_strides(shape) or x.is_contiguous(memory_format=CL)
    assert y.is_contiguous(memory_format=CL)
    assert np.array_equal(y.numpy(), x.numpy())


def test_channels_last_3d_strides():
    x = ember.randn(2, 3, 4, 5, 6)
    y = x.contiguous(memory_format=CL3)
    assert y.stride() == (360, 1, 90, 18, 3)
    assert y.is_contiguous(memory_format=CL3) and not y.is_contiguous(memory_format=CL)
    assert not y.is_contiguous()
    assert np.array_equal(y.numpy(), x.numpy())


def test_contiguous_returns_self_when_laid_out():
    x = ember.randn(2, 3, 4, 5)
    y = x.contiguous(memory_format=CL)
    assert y.contiguous(memory_format=CL) is y
    assert x.contiguous(memory_format=ember.contiguous_format) is x
    z = y.contiguous()
    assert z.is_contiguous() and z.stride() == (60, 20, 5, 1)


def test_is_contiguous_rules():
    assert ember.randn(2, 3, 1, 1).is_contiguous(memory_format=CL)  # both layouts at once
    assert ember.randn(2, 1, 4, 5).is_contiguous(memory_format=CL)  # C = 1
    assert not ember.randn(0, 3, 4, 5).is_contiguous(memory_format=CL)  # no empty exemption
    assert not ember.randn(2, 3, 4).is_contiguous(memory_format=CL)  # another rank
    y = ember.randn(2, 3, 4, 5).contiguous(memory_format=CL)
    assert not y.is_contiguous(memory_format=ember.preserve_format)  # the default rule
    assert not y.is_contiguous(memory_format=CL3)


def test_dim_order():
    y = ember.randn(2, 3, 4, 5).contiguous(memory_format=CL)
    assert y.dim_order() == (0, 2, 3, 1)
    assert ember.randn(2, 3, 4, 5, 6).contiguous(memory_format=CL3).dim_order() == \
        (0, 2, 3, 4, 1)


# ---- conversions ----------------------------------------------------------------------------
def test_clone_and_preserve_format():
    x = ember.randn(2, 3, 4, 5)
    y = x.clone(memory_format=CL)
    assert y.stride() == (60, 1, 15, 3)
    assert y.clone().stride() == (60, 1, 15, 3)  # preserve_format keeps channels-last
    assert y.clone(memory_format=ember.preserve_format).stride() == (60, 1, 15, 3)
    assert y.clone(memory_format=ember.contiguous_format).is_contiguous()
    assert y[:, :, ::2].clone().stride() == (30, 1, 15, 3)  # a slice's layout suggested
    assert x.clone().is_contiguous()


def test_to_memory_format():
    x = ember.randn(2, 3, 4, 5)
    y = x.to(memory_format=CL)
    assert y.stride() == (60, 1, 15, 3)
    assert y.to(memory_format=CL) is y and y.to(memory_format=ember.preserve_format) is y
    assert x.to(memory_format=ember.contiguous_format) is x
    assert y.to(memory_format=ember.contiguous_format).is_contiguous()
    z = x.to(ember.float64, memory_format=CL)
    assert z.dtype == ember.float64 and z.stride() == (60, 1, 15, 3)
    assert y.to(ember.float64).stride() == (60, 1, 15, 3)  # a cast keeps the layout
    assert y.double().stride() == (60, 1, 15, 3)
    assert x.double(memory_format=CL).stride() == (60, 1, 15, 3)
    assert x.cpu(memory_format=CL).stride() == (60, 1, 15, 3)
    assert np.array_equal(z.numpy(), x.numpy().astype(np.float64))


def test_factories():
    assert ember.empty(2, 3, 4, 5, memory_format=CL).stride() == (60, 1, 15, 3)
    assert ember.empty(2, 3, 4, 5, 6, memory_format=CL3).stride() == (360, 1, 90, 18, 3)
    y = ember.randn(2, 3, 4, 5).contiguous(memory_format=CL)
    x = ember.randn(2, 3, 4, 5)
    for make in (ember.zeros_like, ember.ones_like, ember.empty_like, ember.rand_like,
                 ember.randn_like, lambda t, **kw: ember.full_like(t, 2.0, **kw)):
        assert make(y).stride() == (60, 1, 15, 3)  # preserve_format
        assert make(x, memory_format=CL).stride() == (60, 1, 15, 3)
        assert make(y, memory_format=ember.contiguous_format).is_contiguous()
        assert make(x).is_contiguous()
    assert np.all(ember.ones_like(y).numpy() == 1)
    assert np.all(ember.full_like(x, 2.0, memory_format=CL).numpy() == 2)


def test_module_to_memory_format():
    m = nn.Sequential(nn.Conv2d(2, 3, 2), nn.BatchNorm2d(3), nn.Linear(3, 3))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    assert m.to(memory_format=CL) is m
    assert m[0].weight.stride() == (8, 1, 4, 2) and isinstance(m[0].weight, nn.Parameter)
    assert m[2].weight.is_contiguous() and m[0].bias.is_contiguous()
    for k, v in m.state_dict().items():
        assert np.array_equal(v.numpy(), before[k].numpy())
    m.to(ember.float64, memory_format=CL)
    assert m[0].weight.dtype == ember.float64 and m[0].weight.stride() == (8, 1, 4, 2)
    assert m[1].num_batches_tracked.dtype == ember.int64
    m3 = nn.Conv3d(2, 2, 2).to(memory_format=CL3)
    assert m3.weight.stride() == (16, 1, 8, 4, 2)


# ---- errors ----------------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: ember.randn(2, 3, 4).contiguous(memory_format=CL),
    lambda: ember.randn(2, 3, 4, 5, 6).contiguous(memory_format=CL),
    lambda: ember.randn(2, 3, 4).clone(memory_format=CL),
    lambda: ember.randn(2, 3, 4).to(memory_format=CL),
    lambda: ember.empty(2, 3, 4, memory_format=CL),
    lambda: ember.zeros_like(ember.randn(2, 3), memory_format=CL),
    lambda: nn.Conv3d(2, 2, 2).to(memory_format=CL),
])
def test_rank_errors(call):
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        call()


def test_other_errors():
    x = ember.randn(2, 3, 4, 5)
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        x.contiguous(memory_format=CL3)
    with pytest.raises(RuntimeError, match="unsupported memory format Preserve"):
        ember.empty(2, 3, memory_format=ember.preserve_format)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported by the"):
        x.contiguous(memory_format=CL).contiguous(memory_format=ember.preserve_format)
    for call, name in ((lambda: x.is_contiguous(memory_format=1), "is_contiguous"),
                       (lambda: x.contiguous(memory_format=1), "contiguous"),
                       (lambda: x.clone(memory_format="channels_last"), "clone"),
                       (lambda: ember.empty_like(x, memory_format=1), "empty_like"),
                       (lambda: x.to(memory_format=2), "to")):
        with pytest.raises(TypeError, match=rf"{name}\(\): argument 'memory_format' must be "):
            call()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.contiguous(memory_format=CL).view(2, -1)  # as PyTorch: reshape copies instead


# ---- ops keep the layout, values and gradients equal ----------------------------------------
_OPS = {
    "conv2d": lambda t, w: F.conv2d(t, w, padding=1),
    "conv2d_stride2": lambda t, w: F.conv2d(t, w, stride=2),
    "max_pool2d": lambda t, w: F.max_pool2d(t, 2),
    "max_pool2d_overlapping": lambda t, w: F.max_pool2d(t, 3, stride=1, padding=1),
    "avg_pool2d": lambda t, w: F.avg_pool2d(t, 2),
    "adaptive_avg_pool2d": lambda t, w: F.adaptive_avg_pool2d(t, 2),
    "relu": lambda t, w: F.relu(t),
    "add": lambda t, w: t + t,
    "add_bias": lambda t, w: t + ember.ones(3, 1, 1, dtype=t.dtype),
    "mul_scalar": lambda t, w: t * 3,
    "batch_norm_train": lambda t, w: F.batch_norm(t, None, None, training=True),
    "batch_norm_eval": lambda t, w: F.batch_norm(
        t, ember.zeros(3, dtype=t.dtype), ember.ones(3, dtype=t.dtype)),
    "sigmoid": lambda t, w: ember.sigmoid(t),
}
# reductions sum in memory order: equal to rounding, not bit for bit
_ROUNDED = {"avg_pool2d", "batch_norm_train"}


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
@pytest.mark.parametrize("name", sorted(_OPS))
def test_op_keeps_layout_and_values(name, dtype):
    ember.manual_seed(0)
    x = ember.randn(2, 3, 6, 6, dtype=dtype)
    w = ember.randn(4, 3, 3, 3, dtype=dtype)
    results = []
    for layout in (ember.contiguous_format, CL):
        xi = x.contiguous(memory_format=layout).detach().requires_grad_()
        wi = w.contiguous(memory_format=layout).detach().requires_grad_()
        out = _OPS[name](xi, wi)
        (out * out).sum().backward()
        results.append((out, xi.grad, wi.grad))
    (y0, gx0, gw0), (y1, gx1, gw1) = results
    assert _is_cl(y1), y1.stride()
    assert y0.is_contiguous()
    for a, b in ((y0, y1), (gx0, gx1)) + (((gw0, gw1),) if gw0 is not None else ()):
        if name in _ROUNDED:
            np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(),
                                       rtol=1e-5, atol=1e-5)
        else:
            assert np.array_equal(b.detach().numpy(), a.detach().numpy())


def test_conv_gradients_laid_out_as_their_tensors():
    x = ember.randn(2, 3, 6, 6).contiguous(memory_format=CL).requires_grad_()
    w = ember.randn(4, 3, 3, 3).contiguous(memory_format=CL).requires_grad_()
    F.conv2d(x, w, padding=1).sum().backward()
    assert _is_cl(x.grad) and _is_cl(w.grad)
    gx, = ember.autograd.grad(F.conv2d(x, w.detach()).sum(), x)
    assert _is_cl(gx)
    w2 = ember.randn(4, 3, 3, 3, requires_grad=True)  # only the input channels-last
    out = F.conv2d(x, w2)
    out.sum().backward()
    assert _is_cl(out) and w2.grad.is_contiguous()


def test_gradcheck_through_channels_last():
    x = ember.randn(1, 2, 4, 4, dtype=ember.float64).contiguous(memory_format=CL)
    w = ember.randn(3, 2, 2, 2, dtype=ember.float64).contiguous(memory_format=CL)
    x.requires_grad_()
    w.requires_grad_()
    assert gradcheck(lambda a, b: F.max_pool2d(F.relu(F.conv2d(a, b, padding=1)), 2),
                     (x, w))
    src = ember.randn(1, 2, 3, 3, dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a: a.contiguous(memory_format=CL) * 2, (src,))
    assert gradcheck(lambda a: a.to(memory_format=CL).clone().sum(dim=1), (src,))


def test_conv_twice_differentiable_in_channels_last():
    x = ember.randn(2, 6, 5, 5, dtype=ember.float64).contiguous(memory_format=CL)
    w = ember.randn(4, 6, 3, 3, dtype=ember.float64).contiguous(memory_format=CL)
    b = ember.randn(4, dtype=ember.float64, requires_grad=True)
    x.requires_grad_()
    w.requires_grad_()

    def conv(a, c, d):  # a long patch: the im2col rows path, channels-last throughout
        return F.conv2d(a, c, d, padding=1, stride=2)
    assert gradcheck(conv, (x, w, b)) and gradgradcheck(conv, (x, w, b))
    xt = ember.randn(2, 4, 5, 5, dtype=ember.float64).contiguous(memory_format=CL)
    wt = ember.randn(4, 6, 2, 2, dtype=ember.float64).contiguous(memory_format=CL)
    xt.requires_grad_()
    wt.requires_grad_()

    def conv_t(a, c):
        return F.conv_transpose2d(a, c, stride=2)
    assert _is_cl(conv_t(xt, wt))
    assert gradcheck(conv_t, (xt, wt)) and gradgradcheck(conv_t, (xt, wt))


def test_cnn_trains_the_same_in_both_layouts():
    def run(layout):
        ember.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                            nn.MaxPool2d(2), nn.Conv2d(4, 4, 3), nn.AdaptiveAvgPool2d(1),
                            nn.Flatten(), nn.Linear(4, 2)).to(memory_format=layout)
        opt = ember.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        gen = np.random.default_rng(0)
        x = ember.tensor(gen.standard_normal((4, 3, 8, 8)), dtype=ember.float32)
        x = x.contiguous(memory_format=layout)
        target = ember.tensor([0, 1, 1, 0])
        losses = []
        for _ in range(2):
            opt.zero_grad()
            loss = F.cross_entropy(net(x), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return net, losses
    net0, losses0 = run(ember.contiguous_format)
    net1, losses1 = run(CL)
    np.testing.assert_allclose(losses1, losses0, rtol=1e-5)
    assert _is_cl(net1[0].weight) and _is_cl(net1[0].weight.grad)
    for p0, p1 in zip(net0.parameters(), net1.parameters()):
        np.testing.assert_allclose(p1.detach().numpy(), p0.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
