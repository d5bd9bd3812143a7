"""Channels-last memory formats against PyTorch: strides, ``is_contiguous`` answers, the
layouts ops return, values and gradients (a small CNN trained two steps in channels-last in
both libraries), errors."""
import numpy as np
import pytest
import torch

import ember

LIBS = (ember, torch)
TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-10, atol=1e-12)}


def _both(make):
    """``make(lib)`` for ember and torch."""
    return make(ember), make(torch)


def _layout(t):
    """What a tensor reports about its layout: strides and every format's answer."""
    lib = ember if isinstance(t, ember.Tensor) else torch
    return (tuple(t.stride()), t.is_contiguous(),
            t.is_contiguous(memory_format=lib.channels_last),
            t.is_contiguous(memory_format=lib.channels_last_3d))


def _same_layout(make):
    e, t = _both(make)
    assert _layout(e) == _layout(t)
    return e, t


# ---- strides and contiguity answers -----------------------------------------------------
@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (1, 3, 1, 5), (2, 1, 4, 5), (2, 3, 1, 1),
                                   (0, 3, 4, 5), (1, 1, 1, 1)])
def test_contiguous_and_clone_strides(shape):
    def base(lib):
        return lib.ones(*shape)
    _same_layout(base)
    _same_layout(lambda lib: base(lib).contiguous(memory_format=lib.channels_last))
    _same_layout(lambda lib: base(lib).clone(memory_format=lib.channels_last))
    _same_layout(lambda lib: base(lib).to(memory_format=lib.channels_last))
    if 0 not in shape:  # an empty tensor's clone is row-major in ember (docs/features.md)
        _same_layout(lambda lib: base(lib).contiguous(memory_format=lib.channels_last).clone())
    _same_layout(lambda lib: base(lib).contiguous(memory_format=lib.channels_last)
                 .contiguous())
    _same_layout(lambda lib: lib.empty(*shape, memory_format=lib.channels_last))


def test_channels_last_3d_strides():
    _same_layout(lambda lib: lib.ones(2, 3, 4, 5, 6).contiguous(
        memory_format=lib.channels_last_3d))
    _same_layout(lambda lib: lib.empty(2, 3, 4, 5, 6, memory_format=lib.channels_last_3d))
    _same_layout(lambda lib: lib.ones(2, 3, 4, 5, 6).to(memory_format=lib.channels_last_3d)
                 .clone())


def test_views_and_slices_report_the_same():
    def cl(lib):
        return lib.ones(2, 3, 4, 6).contiguous(memory_format=lib.channels_last)
    _same_layout(lambda lib: cl(lib)[:, :, ::2])
    _same_layout(lambda lib: cl(lib)[:, :, ::2].clone())
    _same_layout(lambda lib: cl(lib)[:, 1:])
    _same_layout(lambda lib: cl(lib).permute(0, 2, 3, 1))
    _same_layout(lambda lib: lib.ones(2, 3, 4, 6).as_strided((2, 3, 4, 6), (72, 1, 18, 3)))
    e, t = _both(lambda lib: cl(lib).dim_order())
    assert e == t


def test_conversions_report_the_same():
    def x(lib):
        return lib.ones(2, 3, 4, 5)

    def y(lib):
        return x(lib).contiguous(memory_format=lib.channels_last)
    _same_layout(lambda lib: x(lib).to(lib.float64, memory_format=lib.channels_last))
    _same_layout(lambda lib: y(lib).to(lib.float64))
    _same_layout(lambda lib: y(lib).double())
    _same_layout(lambda lib: y(lib).half())
    _same_layout(lambda lib: x(lib).double(memory_format=lib.channels_last))
    _same_layout(lambda lib: x(lib).cpu(memory_format=lib.channels_last))
    _same_layout(lambda lib: y(lib).to(memory_format=lib.contiguous_format))
    _same_layout(lambda lib: y(lib).clone(memory_format=lib.contiguous_format))
    for keep in (lambda lib, t: t.to(memory_format=lib.channels_last),
                 lambda lib, t: t.to(memory_format=lib.preserve_format),
                 lambda lib, t: t.contiguous(memory_format=lib.channels_last)):
        e, t = _both(lambda lib: (lambda a: keep(lib, a) is a)(y(lib)))
        assert e == t


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like",
                                  "randn_like", "full_like", "randint_like"])
def test_like_factories(name):
    def make(lib, src, **kw):
        fn = getattr(lib, name)
        if name in ("full_like", "randint_like"):
            return fn(src, 2, **kw)
        return fn(src, **kw)
    _same_layout(lambda lib: make(lib, lib.ones(2, 3, 4, 5).contiguous(
        memory_format=lib.channels_last)))
    _same_layout(lambda lib: make(lib, lib.ones(2, 3, 4, 5), memory_format=lib.channels_last))
    _same_layout(lambda lib: make(lib, lib.ones(2, 3, 4, 5).contiguous(
        memory_format=lib.channels_last), memory_format=lib.contiguous_format))
    _same_layout(lambda lib: make(lib, lib.ones(2, 3, 4, 5)[:, :, ::2]))


def test_module_to_memory_format():
    def model(lib, *args, **kw):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(2, 3, 2), lib.nn.BatchNorm2d(3),
                              lib.nn.Linear(3, 3))
        return m.to(*args, **kw)
    e = model(ember, memory_format=ember.channels_last)
    t = model(torch, memory_format=torch.channels_last)
    assert list(e.state_dict()) == list(t.state_dict())
    for k in t.state_dict():
        assert _layout(e.state_dict()[k]) == _layout(t.state_dict()[k]), k
    e = model(ember, ember.float64, memory_format=ember.channels_last)
    t = model(torch, torch.float64, memory_format=torch.channels_last)
    for k in t.state_dict():
        assert _layout(e.state_dict()[k]) == _layout(t.state_dict()[k]), k
        assert str(e.state_dict()[k].dtype)[6:] == str(t.state_dict()[k].dtype)[6:]
    e, t = _both(lambda lib: lib.nn.Conv3d(2, 2, 2).to(memory_format=lib.channels_last_3d)
                 .weight)
    assert _layout(e) == _layout(t)


# ---- op outputs: layouts, values, gradients ---------------------------------------------
_OPS = {
    "conv2d": lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1),
    "conv2d_stride2": lambda lib, x, w: lib.nn.functional.conv2d(x, w, stride=2),
    "max_pool2d": lambda lib, x, w: lib.nn.functional.max_pool2d(x, 2),
    "max_pool2d_overlapping": lambda lib, x, w: lib.nn.functional.max_pool2d(x, 3, 1, 1),
    "avg_pool2d": lambda lib, x, w: lib.nn.functional.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda lib, x, w: lib.nn.functional.adaptive_avg_pool2d(x, 2),
    "adaptive_max_pool2d": lambda lib, x, w: lib.nn.functional.adaptive_max_pool2d(x, 2),
    "conv_transpose2d": lambda lib, x, w: lib.nn.functional.conv_transpose2d(
        x, w.transpose(0, 1), stride=2),
    "batch_norm": lambda lib, x, w: lib.nn.functional.batch_norm(
        x, None, None, w[0, :, 0, 0], w[1, :, 0, 0], training=True),
    "relu": lambda lib, x, w: lib.relu(x),
    "add": lambda lib, x, w: x + x,
    "add_bias": lambda lib, x, w: x + w[0, :, :1, :1],
    "mul_scalar": lambda lib, x, w: x * 3,
    "sigmoid": lambda lib, x, w: lib.sigmoid(x),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name, weight_cl", [(name, False) for name in sorted(_OPS)] + [
    (name, True) for name in sorted(_OPS) if name.startswith("conv")])  # (a conv's weight)
def test_ops_on_channels_last(name, weight_cl, dtype):
    gen = np.random.default_rng(0)
    xa = gen.standard_normal((2, 3, 6, 6)).astype(dtype)
    wa = gen.standard_normal((4, 3, 3, 3)).astype(dtype)
    cot = None
    results = {}
    for lib in LIBS:
        x = lib.tensor(xa).contiguous(memory_format=lib.channels_last).requires_grad_()
        w = lib.tensor(wa)
        if weight_cl:
            w = w.contiguous(memory_format=lib.channels_last)
        w.requires_grad_()
        out = _OPS[name](lib, x, w)
        if cot is None:
            cot = gen.standard_normal(tuple(out.shape)).astype(dtype)
        out.backward(lib.tensor(cot))
        results[lib] = (out, x.grad, w.grad)
    (eo, egx, egw), (to, tgx, tgw) = results[ember], results[torch]
    assert _layout(eo) == _layout(to)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **TOL[dtype])
    np.testing.assert_allclose(egx.numpy(), tgx.numpy(), **TOL[dtype])
    assert (egw is None) == (tgw is None)
    if tgw is not None:
        np.testing.assert_allclose(egw.numpy(), tgw.numpy(), **TOL[dtype])
    if name in ("conv2d", "conv2d_stride2"):  # leaf gradients in their tensors' layouts
        assert _layout(egx) == _layout(tgx)
        assert _layout(egw) == _layout(tgw)


@pytest.mark.parametrize("name", ["conv3d", "max_pool3d", "batch_norm", "relu"])
def test_channels_last_3d_ops(name):
    ops = {"conv3d": lambda lib, x, w: lib.nn.functional.conv3d(x, w, padding=1),
           "max_pool3d": lambda lib, x, w: lib.nn.functional.max_pool3d(x, 2),
           "batch_norm": lambda lib, x, w: lib.nn.functional.batch_norm(x, None, None,
                                                                        training=True),
           "relu": lambda lib, x, w: lib.relu(x)}
    gen = np.random.default_rng(0)
    # float32: PyTorch's float64 conv3d runs a kernel that returns row-major results
    xa = gen.standard_normal((2, 3, 4, 4, 4)).astype(np.float32)
    wa = gen.standard_normal((2, 3, 3, 3, 3)).astype(np.float32)
    results = {}
    for lib in LIBS:
        x = lib.tensor(xa).contiguous(memory_format=lib.channels_last_3d).requires_grad_()
        w = lib.tensor(wa).contiguous(memory_format=lib.channels_last_3d).requires_grad_()
        out = ops[name](lib, x, w)
        out.backward(lib.ones_like(out))
        results[lib] = out, x.grad
    (eo, eg), (to, tg) = results[ember], results[torch]
    assert _layout(eo) == _layout(to)
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **TOL[np.float32])
    np.testing.assert_allclose(eg.numpy(), tg.numpy(), **TOL[np.float32])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_cnn_two_steps_channels_last(dtype):
    """The same CNN (torch's initial weights copied) trained two SGD-with-momentum steps in
    channels-last in both libraries: losses, parameters and gradients, and the conv
    weights' (and their gradients') layouts."""
    def build(lib):
        nn = lib.nn
        return nn.Sequential(nn.Conv2d(3, 6, 3, padding=1), nn.BatchNorm2d(6), nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d(6, 8, 3), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 3))
    torch.manual_seed(0)
    tnet = build(torch).to(getattr(torch, np.dtype(dtype).name))
    enet = build(ember).to(getattr(ember, np.dtype(dtype).name))
    enet.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in tnet.state_dict().items()})
    gen = np.random.default_rng(1)
    xa = gen.standard_normal((4, 3, 10, 10)).astype(dtype)
    target = np.array([0, 2, 1, 2])
    runs = {}
    for lib, net in ((ember, enet), (torch, tnet)):
        net.to(memory_format=lib.channels_last)
        opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
        x = lib.tensor(xa).contiguous(memory_format=lib.channels_last)
        losses, grads = [], []
        for _ in range(2):
            opt.zero_grad()
            out = net(x)
            loss = lib.nn.functional.cross_entropy(out, lib.tensor(target))
            loss.backward()
            grads.append([p.grad.numpy().copy() for p in net.parameters()])
            opt.step()
            losses.append(loss.item())
        runs[lib] = (losses, grads, net, out)
    (el, eg, enet, eout), (tl, tg, tnet, tout) = runs[ember], runs[torch]
    np.testing.assert_allclose(el, tl, **TOL[dtype])
    for step_e, step_t in zip(eg, tg):
        for a, b in zip(step_e, step_t):
            np.testing.assert_allclose(a, b, **TOL[dtype])
    for (name, pe), pt in zip(enet.named_parameters(), tnet.parameters()):
        np.testing.assert_allclose(pe.detach().numpy(), pt.detach().numpy(), **TOL[dtype])
        assert _layout(pe) == _layout(pt), name
        if pe.dim() == 4:
            assert _layout(pe.grad) == _layout(pt.grad), name
    assert _layout(eout) == _layout(tout)


# ---- errors ------------------------------------------------------------------------------
def _error(call):
    try:
        call()
    except Exception as e:  # the type and message are what is compared
        return type(e).__name__, str(e).split("\n")[0]
    return None


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(2, 3, 4).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5, 6).contiguous(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last_3d),
    lambda lib: lib.ones(2, 3, 4).clone(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4).to(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4).double(memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, 4, memory_format=lib.channels_last),
    lambda lib: lib.empty(2, 3, memory_format=lib.preserve_format),
    lambda lib: lib.zeros_like(lib.ones(2, 3), memory_format=lib.channels_last),
    lambda lib: lib.randn_like(lib.ones(2, 3, 4, 5, 6), memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3).t().contiguous(memory_format=lib.preserve_format),
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=lib.channels_last).view(2, -1),
    lambda lib: lib.nn.Conv3d(2, 2, 2).to(memory_format=lib.channels_last),
    lambda lib: lib.ones(2, 3, 4, 5).is_contiguous(memory_format=1),
    lambda lib: lib.ones(2, 3, 4, 5).contiguous(memory_format=1),
    lambda lib: lib.ones(2, 3, 4, 5).clone(memory_format=1),
    lambda lib: lib.empty_like(lib.ones(2, 3), memory_format=1),
])
def test_errors_match(call):
    e, t = _both(lambda lib: _error(lambda: call(lib)))
    assert t is not None
    assert e[0] == t[0]
    assert e[1][:60] == t[1][:60]


def test_to_with_a_bad_memory_format_is_a_type_error():
    for lib in LIBS:
        with pytest.raises(TypeError):
            lib.ones(2).to(memory_format=2)


def test_fx_shape_prop_names_the_layout():
    from importlib import import_module
    found = {}
    for lib in LIBS:
        shape_prop = import_module(lib.__name__ + ".fx.passes.shape_prop")
        lib.manual_seed(0)
        gm = lib.fx.symbolic_trace(lib.nn.Conv2d(3, 4, 3))
        shape_prop.ShapeProp(gm).propagate(
            lib.randn(2, 3, 5, 5).contiguous(memory_format=lib.channels_last))
        found[lib] = [(n.name, str(n.meta["tensor_meta"].memory_format).split(".")[-1],
                       tuple(n.meta["tensor_meta"].stride))
                      for n in gm.graph.nodes if "tensor_meta" in n.meta]
    assert found[ember] == found[torch]


_CONVS = {  # the kernels' paths: Winograd, im2col rows, short patches, groups
    "3x3_winograd": ((2, 16, 8, 8), (16, 16, 3, 3), dict(padding=1)),
    "1x1_rows": ((2, 40, 5, 5), (8, 40, 1, 1), {}),
    "5x5_stride2_rows": ((2, 8, 9, 9), (6, 8, 5, 5), dict(stride=2, padding=2)),
    "3x3_short": ((2, 3, 7, 7), (5, 3, 3, 3), dict(padding=1)),
    "grouped": ((2, 8, 6, 6), (8, 4, 3, 3), dict(groups=2, dilation=2, padding=1)),
}


@pytest.mark.parametrize("layouts", ["x", "w", "xw"])
@pytest.mark.parametrize("name", sorted(_CONVS))
def test_conv_paths_with_either_operand_channels_last(name, layouts):
    xs, ws, kw = _CONVS[name]
    gen = np.random.default_rng(2)
    xa, wa = gen.standard_normal(xs).astype(np.float32), gen.standard_normal(ws).astype(
        np.float32)
    results = {}
    for lib in LIBS:
        x, w = lib.tensor(xa), lib.tensor(wa)
        if "x" in layouts:
            x = x.contiguous(memory_format=lib.channels_last)
        if "w" in layouts:
            w = w.contiguous(memory_format=lib.channels_last)
        x.requires_grad_()
        w.requires_grad_()
        out = lib.nn.functional.conv2d(x, w, **kw)
        cot = lib.tensor(np.linspace(-1, 1, out.numel(), dtype=np.float32).reshape(out.shape))
        out.backward(cot.contiguous(memory_format=lib.channels_last))
        results[lib] = out, x.grad, w.grad
    for e, t in zip(results[ember], results[torch]):
        # a size-1 dim's stride is arbitrary (a 1x1 weight's gradient): the others compared
        assert _dense_layout(e) == _dense_layout(t)
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4,
                                   atol=1e-4)


def _dense_layout(t):
    strides, *answers = _layout(t)
    return tuple(s for s, n in zip(strides, t.shape) if n != 1), *answers
