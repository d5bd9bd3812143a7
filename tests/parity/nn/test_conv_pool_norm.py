"""Conv, pooling, normalization and interpolate: ember vs PyTorch (values and gradients)."""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF
import torch.nn.functional as TF
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]
TOL = {np.float32: dict(rtol=1e-4, atol=1e-5), np.float64: dict(rtol=1e-7, atol=1e-10)}


def rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def F(lib):
    return TF if lib is torch else EF


def module_parity(make, x, dtype, train=True, steps=1, extra_inputs=()):
    """Build the module in both libraries, copy torch's state into ember, compare the
    output, the input gradient, every parameter gradient and the buffers after ``steps``."""
    tm = make(torch).to(getattr(torch, np.dtype(dtype).name))
    em = make(ember).to(getattr(ember, np.dtype(dtype).name))
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    tm.train(train)
    em.train(train)
    tol = TOL[dtype]
    for step in range(steps):
        xt = torch.tensor(x, requires_grad=True)
        xe = ember.tensor(x, requires_grad=True)
        yt, ye = tm(xt), em(xe)
        if isinstance(yt, tuple):
            yt, ye = yt[0], ye[0]
        assert tuple(yt.shape) == tuple(ye.shape)
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
            tp[name].grad = None
            ep[name].grad = None
    tb, eb = dict(tm.named_buffers()), dict(em.named_buffers())
    assert list(tb) == list(eb)
    for name in tb:
        np.testing.assert_allclose(eb[name].numpy(), tb[name].numpy(), err_msg=name, **tol)
        assert eb[name].dtype.name == str(tb[name].dtype).split(".")[-1], name
    return tm, em


# ---- convolution -----------------------------------------------------------------------------
CONV2D_CASES = [
    dict(),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 2)),
    dict(dilation=2, padding=2),
    dict(padding="same"),
    dict(padding="same", dilation=(1, 2)),
    dict(padding="valid"),
    dict(groups=2),
    dict(groups=2, stride=2, dilation=(2, 1), padding=1),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", CONV2D_CASES)
def test_conv2d_functional(kw, dtype):
    x = rand(2, 4, 7, 6, dtype=dtype)
    w = rand(6, 4 // kw.get("groups", 1), 3, 2, dtype=dtype, seed=1)
    b = rand(6, dtype=dtype, seed=2)
    compare(lambda lib, x, w, b: F(lib).conv2d(x, w, b, **kw), x, w, b)
    compare(lambda lib, x, w: F(lib).conv2d(x, w, **kw), x, w)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1), dict(dilation=2),
                                dict(padding="same"), dict(groups=2, padding=1)])
def test_conv1d_functional(kw, dtype):
    x = rand(3, 4, 9, dtype=dtype)
    w = rand(6, 4 // kw.get("groups", 1), 4, dtype=dtype, seed=1)
    b = rand(6, dtype=dtype, seed=2)
    compare(lambda lib, x, w, b: F(lib).conv1d(x, w, b, **kw), x, w, b)


def test_conv_unbatched():
    compare(lambda lib, x, w: F(lib).conv2d(x, w, padding=1), rand(2, 5, 5), rand(3, 2, 3, 3))
    compare(lambda lib, x, w: F(lib).conv1d(x, w), rand(2, 5), rand(3, 2, 2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(), dict(stride=2), dict(stride=2, padding=1, output_padding=1),
                                dict(stride=(2, 3), output_padding=(1, 2)), dict(dilation=2),
                                dict(groups=2, stride=2, padding=1), dict(dilation=2, stride=3,
                                                                          output_padding=2)])
def test_conv_transpose2d_functional(kw, dtype):
    x = rand(2, 4, 5, 4, dtype=dtype)
    w = rand(4, 3, 3, 2, dtype=dtype, seed=1)
    b = rand(3 * kw.get("groups", 1), dtype=dtype, seed=2)
    compare(lambda lib, x, w, b: F(lib).conv_transpose2d(x, w, b, **kw), x, w, b)


@pytest.mark.parametrize("dtype", DTYPES)
def test_conv_modules(dtype):
    module_parity(lambda lib: lib.nn.Conv2d(3, 4, 3, padding=1), rand(2, 3, 6, 6, dtype=dtype),
                  dtype)
    module_parity(lambda lib: lib.nn.Conv2d(4, 6, (3, 2), stride=2, groups=2, bias=False),
                  rand(2, 4, 7, 6, dtype=dtype), dtype)
    module_parity(lambda lib: lib.nn.Conv1d(3, 4, 3, padding="same", dilation=2),
                  rand(2, 3, 9, dtype=dtype), dtype)
    module_parity(lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                     output_padding=1, groups=2),
                  rand(2, 4, 4, 5, dtype=dtype), dtype)


def test_conv_transpose_output_size():
    x = rand(1, 2, 4, 4, dtype=np.float32)
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2)
    em = ember.nn.ConvTranspose2d(2, 3, 3, stride=2)
    for size in ([9, 9], [10, 10]):
        assert tuple(tm(torch.tensor(x), output_size=size).shape) == \
            tuple(em(ember.tensor(x), output_size=size).shape)


def test_conv_second_derivatives_match_torch():
    x, w = rand(2, 2, 5, 5), rand(3, 2, 3, 3, seed=1)
    v = rand(2, 3, 3, 3, seed=2)
    out = {}
    for lib in (torch, ember):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = F(lib).conv2d(xt, wt, stride=2, padding=1)
        gx, gw = lib.autograd.grad(y, (xt, wt), lib.tensor(v), create_graph=True)
        s = (gx ** 2).sum() + (gw ** 3).sum()
        s.backward()
        out[lib] = (xt.grad.numpy(), wt.grad.numpy())
    for a, b in zip(out[ember], out[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_conv_init_distribution():
    ember.manual_seed(0)
    w = ember.nn.Conv2d(16, 64, 3).weight.detach().numpy()
    t = torch.nn.Conv2d(16, 64, 3).weight.detach().numpy()
    bound = 1 / np.sqrt(16 * 9)
    assert abs(w).max() <= bound and abs(w).max() > 0.99 * bound
    np.testing.assert_allclose(w.std(), t.std(), rtol=0.05)
    assert abs(w.mean()) < 0.01 * bound * 10


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.Conv2d(3, 4, 3),
    lambda lib: lib.nn.Conv2d(3, 4, (3, 2), stride=2, padding=1, dilation=2, bias=False),
    lambda lib: lib.nn.Conv2d(4, 4, 3, padding="same", groups=2),
    lambda lib: lib.nn.Conv1d(2, 4, 3, padding="valid"),
    lambda lib: lib.nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1, groups=2),
])
def test_conv_repr_and_params(make):
    tm, em = make(torch), make(ember)
    assert repr(em) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in em.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).conv2d(lib.ones(2, 1, 8, 8), lib.ones(16, 3, 3, 3)),
    lambda lib: F(lib).conv2d(lib.ones(8, 8), lib.ones(16, 3, 3, 3)),
    lambda lib: F(lib).conv2d(lib.ones(2, 4, 8, 8), lib.ones(6, 2, 3, 3), groups=3),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 8, 8), lib.ones(16, 3, 3, 3), padding="same",
                              stride=2),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 8, 8), lib.ones(16, 3, 3, 3), padding="foo"),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 2, 2), lib.ones(16, 3, 3, 3)),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 8, 8), lib.ones(16, 3, 3, 3), lib.ones(5)),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 8, 8, dtype=lib.float64), lib.ones(16, 3, 3, 3)),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 8, 8), lib.ones(16, 3, 3, 3),
                              lib.ones(16, dtype=lib.float64)),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 8, 8), lib.ones(16, 3, 3, 3), stride=0),
    lambda lib: F(lib).conv2d(lib.ones(2, 3, 8, 8), lib.ones(16, 3, 3, 3), padding=(1, 1, 1)),
    lambda lib: F(lib).conv1d(lib.ones(2, 3, 8, 8), lib.ones(16, 3, 3)),
    lambda lib: F(lib).conv_transpose2d(lib.ones(2, 3, 8, 8), lib.ones(4, 3, 3, 3)),
    lambda lib: F(lib).conv_transpose2d(lib.ones(2, 4, 8, 8), lib.ones(4, 3, 3, 3), stride=2,
                                        output_padding=2),
    lambda lib: lib.nn.Conv2d(3, 4, 3, groups=2),
    lambda lib: lib.nn.Conv2d(4, 3, 3, groups=2),
    lambda lib: lib.nn.Conv2d(3, 4, 3, padding="same", stride=2),
])
def test_conv_errors(call):
    expected = error_of(lambda: call(torch))
    assert expected is not None
    assert error_of(lambda: call(ember)) == expected


# ---- pooling ---------------------------------------------------------------------------------
MAXPOOL2D_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 1), dilation=2),
    dict(kernel_size=2, stride=1),  # overlapping windows: gradients accumulate
    dict(kernel_size=3, stride=2, ceil_mode=True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", MAXPOOL2D_CASES)
def test_max_pool2d(kw, dtype):
    x = rand(2, 3, 7, 6, dtype=dtype)
    compare(lambda lib, x: F(lib).max_pool2d(x, return_indices=True, **kw), x)
    compare(lambda lib, x: F(lib).max_pool2d(x, **kw), x[0])  # unbatched


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=2, dilation=2, ceil_mode=True, stride=3),
                                dict(kernel_size=3, stride=1)])
def test_max_pool1d(kw, dtype):
    x = rand(2, 3, 10, dtype=dtype)
    compare(lambda lib, x: F(lib).max_pool1d(x, return_indices=True, **kw), x)


def test_max_pool_ties_and_nan():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 1, 2] = np.nan
    compare(lambda lib, x: F(lib).max_pool2d(x, 2, return_indices=True), x)
    compare(lambda lib, x: F(lib).max_pool2d(x, 3, 1, return_indices=True), np.ones((1, 2, 4, 4)))


AVGPOOL2D_CASES = [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1),
    dict(kernel_size=3, stride=2, padding=1, count_include_pad=False),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
    dict(kernel_size=(2, 3), stride=(1, 2), padding=(1, 0)),
    dict(kernel_size=2, stride=1, divisor_override=3),
    dict(kernel_size=2, ceil_mode=True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", AVGPOOL2D_CASES)
def test_avg_pool2d(kw, dtype):
    x = rand(2, 3, 7, 6, dtype=dtype)
    compare(lambda lib, x: F(lib).avg_pool2d(x, **kw), x)
    compare(lambda lib, x: F(lib).avg_pool2d(x, **kw), x[0])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1,
                                                          count_include_pad=False),
                                dict(kernel_size=3, stride=2, padding=1, ceil_mode=True)])
def test_avg_pool1d(kw, dtype):
    compare(lambda lib, x: F(lib).avg_pool1d(x, **kw), rand(2, 3, 10, dtype=dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size", [1, 3, (2, 4), (5, None), (7, 6), (4, 5)])
def test_adaptive_pool2d(size, dtype):
    x = rand(2, 3, 7, 6, dtype=dtype)
    compare(lambda lib, x: F(lib).adaptive_avg_pool2d(x, size), x)
    compare(lambda lib, x: F(lib).adaptive_max_pool2d(x, size, return_indices=True), x)
    compare(lambda lib, x: F(lib).adaptive_max_pool2d(x, size), x[0])


def test_adaptive_pool1d():
    x = rand(2, 3, 10)
    compare(lambda lib, x: F(lib).adaptive_avg_pool1d(x, 4), x)
    compare(lambda lib, x: F(lib).adaptive_max_pool1d(x, 3, return_indices=True), x)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pool_modules(dtype):
    x = rand(2, 3, 7, 6, dtype=dtype)
    for make in (lambda lib: lib.nn.MaxPool2d(3, 2, 1),
                 lambda lib: lib.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
                 lambda lib: lib.nn.AdaptiveAvgPool2d((3, None)),
                 lambda lib: lib.nn.AdaptiveMaxPool2d(2)):
        module_parity(make, x, dtype)
    for make in (lambda lib: lib.nn.MaxPool1d(2), lambda lib: lib.nn.AvgPool1d(3, 2, 1)):
        module_parity(make, x[:, :, 0], dtype)


def test_pool_module_return_indices():
    x = rand(2, 3, 6, 6)
    for make in (lambda lib: lib.nn.MaxPool2d(2, return_indices=True),
                 lambda lib: lib.nn.AdaptiveMaxPool2d(3, return_indices=True)):
        (tv, ti), (ev, ei) = make(torch)(torch.tensor(x)), make(ember)(ember.tensor(x))
        np.testing.assert_array_equal(ei.numpy(), ti.numpy())
        assert ei.dtype is ember.int64
        np.testing.assert_allclose(ev.numpy(), tv.numpy())


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.MaxPool2d(2),
    lambda lib: lib.nn.MaxPool2d((2, 3), stride=(1, 2), padding=1, dilation=2,
                                 return_indices=True),
    lambda lib: lib.nn.MaxPool1d(3, return_indices=True, ceil_mode=True),
    lambda lib: lib.nn.AvgPool2d(3, 2, 1, ceil_mode=True, count_include_pad=False),
    lambda lib: lib.nn.AvgPool1d(2),
    lambda lib: lib.nn.AdaptiveAvgPool2d((3, None)),
    lambda lib: lib.nn.AdaptiveMaxPool2d((2, 3), return_indices=True),
    lambda lib: lib.nn.AdaptiveAvgPool1d(4),
])
def test_pool_repr(make):
    assert repr(make(ember)) == repr(make(torch))


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).max_pool2d(lib.ones(2, 3, 8, 8), 3, padding=2),
    lambda lib: F(lib).max_pool2d(lib.ones(2, 8), 3),
    lambda lib: F(lib).max_pool2d(lib.ones(2, 3, 2, 2), 3),
    lambda lib: F(lib).avg_pool2d(lib.ones(2, 3, 2, 2), 3),
    lambda lib: F(lib).avg_pool2d(lib.ones(2, 3, 8, 8), 3, padding=2),
    lambda lib: F(lib).max_pool1d(lib.ones(2, 3, 2), 3),
    lambda lib: F(lib).max_pool1d(lib.ones(2), 3),
    lambda lib: F(lib).max_pool1d(lib.ones(2, 3, 5), 3, padding=2),
    lambda lib: F(lib).avg_pool1d(lib.ones(2, 3, 4, 5), 3),
    lambda lib: F(lib).max_pool2d(lib.ones(2, 3, 5, 5), 3, stride=0),
    lambda lib: F(lib).max_pool2d(lib.ones(2, 3, 5, 5), (2, 2, 2)),
    lambda lib: F(lib).adaptive_max_pool2d(lib.ones(2, 8), 3),
    lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(2, 8), 3),
    lambda lib: F(lib).adaptive_avg_pool2d(lib.ones(2, 3, 8, 8), (3, 2, 1)),
    lambda lib: F(lib).avg_pool2d(lib.ones(2, 3, 5, 5), 2, divisor_override=0),
    # only a batched input's batch dim may be empty
    lambda lib: F(lib).max_pool2d(lib.ones(2, 0, 4, 4), 2),
    lambda lib: F(lib).max_pool2d(lib.ones(0, 4, 4), 2),
    lambda lib: F(lib).max_pool2d(lib.ones(4, 4), 2),
    lambda lib: F(lib).max_pool1d(lib.ones(2, 0, 5), 2),
])
def test_pool_errors(call):
    expected = error_of(lambda: call(torch))
    assert expected is not None
    assert error_of(lambda: call(ember)) == expected


@pytest.mark.parametrize("call", [
    lambda lib, x: F(lib).max_pool2d(x, 2),
    lambda lib, x: F(lib).max_pool2d(x, 3, stride=1, padding=1, return_indices=True),
    lambda lib, x: F(lib).max_pool2d(x, 3, stride=2, ceil_mode=True),
    lambda lib, x: F(lib).max_pool2d(x, 2, dilation=2),
    lambda lib, x: F(lib).adaptive_max_pool2d(x, 3, return_indices=True),
    lambda lib, x: F(lib).max_pool1d(x.flatten(-2), 3, stride=2),
    lambda lib, x: F(lib).avg_pool2d(x, 3, stride=1, padding=1),
    lambda lib, x: lib.nn.MaxPool2d(2)(x),
])
def test_pool_empty_batch(call):
    """An empty batch pools to an empty batch, and back to an empty gradient (PyTorch)."""
    results = {}
    for lib in (torch, ember):
        x = lib.zeros(0, 3, 4, 4, requires_grad=True)
        out = call(lib, x)
        y, idx = out if isinstance(out, tuple) else (out, None)
        y.sum().backward()
        results[lib.__name__] = (tuple(y.shape), str(y.dtype).split(".")[-1],
                                 tuple(x.grad.shape),
                                 None if idx is None else (tuple(idx.shape),
                                                           str(idx.dtype).split(".")[-1]))
    assert results["ember"] == results["torch"]


# ---- normalization ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("momentum", [0.1, None, 0.5])
def test_batch_norm_modules_training(momentum, dtype):
    module_parity(lambda lib: lib.nn.BatchNorm2d(3, momentum=momentum),
                  rand(4, 3, 5, 4, dtype=dtype), dtype, steps=3)
    module_parity(lambda lib: lib.nn.BatchNorm1d(3, momentum=momentum),
                  rand(6, 3, dtype=dtype), dtype, steps=3)
    module_parity(lambda lib: lib.nn.BatchNorm1d(3, momentum=momentum),
                  rand(4, 3, 5, dtype=dtype), dtype, steps=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm_variants(dtype):
    x = rand(4, 3, 5, 4, dtype=dtype)
    for make in (lambda lib: lib.nn.BatchNorm2d(3, affine=False),
                 lambda lib: lib.nn.BatchNorm2d(3, track_running_stats=False),
                 lambda lib: lib.nn.BatchNorm2d(3, bias=False, eps=1e-3)):
        module_parity(make, x, dtype, steps=2)
        module_parity(make, x, dtype, train=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm_eval_uses_running_stats(dtype):
    x = rand(4, 3, 5, 4, dtype=dtype)

    def make(lib):
        m = lib.nn.BatchNorm2d(3).to(getattr(lib, np.dtype(dtype).name))
        m(lib.tensor(rand(8, 3, 5, 4, dtype=dtype, seed=7) * 3 + 1))  # move the running stats
        with lib.no_grad():
            m.weight.mul_(2)
        return m
    module_parity(make, x, dtype, train=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_norm_functional(dtype):
    x, w, b = rand(4, 3, 5, dtype=dtype), rand(3, dtype=dtype, seed=1), rand(3, dtype=dtype, seed=2)
    rm, rv = rand(3, dtype=dtype, seed=3), np.abs(rand(3, dtype=dtype, seed=4)) + 0.5
    compare(lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b, training=True), x, w, b)
    compare(lambda lib, x, w, b: F(lib).batch_norm(x, lib.tensor(rm), lib.tensor(rv), w, b), x,
            w, b)
    outs = {}
    for lib in (torch, ember):
        m, v = lib.tensor(rm), lib.tensor(rv)
        F(lib).batch_norm(lib.tensor(x), m, v, training=True, momentum=0.3)
        outs[lib] = (m.numpy(), v.numpy())
    for a, e in zip(outs[ember], outs[torch]):
        np.testing.assert_allclose(a, e, **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5,), (4, 5)])
def test_layer_norm(shape, dtype):
    x = rand(2, 3, 4, 5, dtype=dtype) * 2 + 1
    w, b = rand(*shape, dtype=dtype, seed=1), rand(*shape, dtype=dtype, seed=2)
    compare(lambda lib, x, w, b: F(lib).layer_norm(x, shape, w, b, eps=1e-4), x, w, b)
    compare(lambda lib, x: F(lib).layer_norm(x, shape), x)
    module_parity(lambda lib: lib.nn.LayerNorm(shape), x, dtype)
    module_parity(lambda lib: lib.nn.LayerNorm(shape, bias=False), x, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm(dtype):
    x = rand(2, 6, 4, 3, dtype=dtype)
    w, b = rand(6, dtype=dtype, seed=1), rand(6, dtype=dtype, seed=2)
    for g in (1, 2, 3, 6):
        compare(lambda lib, x, w, b: F(lib).group_norm(x, g, w, b), x, w, b)
    compare(lambda lib, x: F(lib).group_norm(x, 2), x[:, :, 0])
    module_parity(lambda lib: lib.nn.GroupNorm(3, 6), x, dtype)
    module_parity(lambda lib: lib.nn.GroupNorm(2, 6, affine=False), x, dtype)


def test_norm_second_derivatives_match_torch():
    x = rand(4, 3, 2)
    out = {}
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=True)
        gn = F(lib).group_norm(xt, 3)
        ln = F(lib).layer_norm(xt, (2,))
        bn = F(lib).batch_norm(xt, None, None, training=True)
        y = (gn ** 3).sum() + (ln ** 3).sum() + (bn ** 3).sum()
        g, = lib.autograd.grad(y, xt, create_graph=True)
        (g ** 2).sum().backward()
        out[lib] = xt.grad.numpy()
    np.testing.assert_allclose(out[ember], out[torch], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.BatchNorm1d(3),
    lambda lib: lib.nn.BatchNorm2d(3, momentum=None, affine=False),
    lambda lib: lib.nn.BatchNorm2d(4, eps=1e-3, track_running_stats=False, bias=False),
    lambda lib: lib.nn.LayerNorm(4),
    lambda lib: lib.nn.LayerNorm((4, 5), bias=False, elementwise_affine=True),
    lambda lib: lib.nn.LayerNorm(3, elementwise_affine=False),
    lambda lib: lib.nn.GroupNorm(2, 4),
    lambda lib: lib.nn.GroupNorm(1, 4, affine=False),
])
def test_norm_repr_and_state(make):
    tm, em = make(torch), make(ember)
    assert repr(em) == repr(tm)
    ts, es = tm.state_dict(), em.state_dict()
    assert list(es) == list(ts)
    for k in ts:
        np.testing.assert_array_equal(es[k].numpy(), ts[k].numpy())
        assert es[k].dtype.name == str(ts[k].dtype).split(".")[-1]


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).batch_norm(lib.ones(2, 3, 4), lib.zeros(4), lib.ones(4)),
    lambda lib: F(lib).batch_norm(lib.ones(2, 3), None, None),
    lambda lib: F(lib).batch_norm(lib.ones(2, 3), lib.zeros(3), lib.ones(3), lib.ones(4)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 4)),
    lambda lib: lib.nn.BatchNorm1d(3)(lib.ones(2, 3, 4, 5)),
    lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(2, 3, 4)),
    lambda lib: lib.nn.LayerNorm(5)(lib.ones(2, 4)),
    lambda lib: F(lib).layer_norm(lib.ones(2, 3), (3,), lib.ones(4)),
    lambda lib: lib.nn.GroupNorm(2, 3),
    lambda lib: lib.nn.GroupNorm(2, 4)(lib.ones(2, 3, 5)),
    lambda lib: F(lib).group_norm(lib.ones(3), 1),
    lambda lib: F(lib).group_norm(lib.ones(2, 4), 2, lib.ones(3)),
])
def test_norm_errors(call):
    expected = error_of(lambda: call(torch))
    assert expected is not None
    assert error_of(lambda: call(ember)) == expected


def test_batch_norm_single_value_error():
    for lib in (torch, ember):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel when "
                                             "training, got input size"):
            lib.nn.BatchNorm1d(3)(lib.ones(1, 3))


# ---- interpolate -----------------------------------------------------------------------------
INTERP_CASES = [
    dict(size=(7, 3)), dict(size=8), dict(scale_factor=2), dict(scale_factor=1.7),
    dict(scale_factor=(0.6, 2.3)), dict(scale_factor=1.5, recompute_scale_factor=True),
    dict(size=8, mode="bilinear"), dict(size=(3, 7), mode="bilinear", align_corners=True),
    dict(size=(2, 9), mode="bilinear", align_corners=False),
    dict(scale_factor=(0.6, 2.3), mode="bilinear"), dict(scale_factor=2, mode="bilinear",
                                                          align_corners=True),
    dict(size=1, mode="bilinear", align_corners=True),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kw", INTERP_CASES)
def test_interpolate(kw, dtype):
    compare(lambda lib, x: F(lib).interpolate(x, **kw), rand(2, 3, 5, 4, dtype=dtype))


@pytest.mark.parametrize("kw", [dict(size=7), dict(scale_factor=0.5), dict(size=9, mode="linear"),
                                dict(scale_factor=1.3, mode="linear", align_corners=True)])
def test_interpolate_3d(kw):
    compare(lambda lib, x: F(lib).interpolate(x, **kw), rand(2, 3, 6))


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).interpolate(lib.ones(1, 1, 4, 4), size=3, scale_factor=2),
    lambda lib: F(lib).interpolate(lib.ones(1, 1, 4, 4)),
    lambda lib: F(lib).interpolate(lib.ones(1, 1, 4), mode="bilinear", size=3),
    lambda lib: F(lib).interpolate(lib.ones(1, 1, 4, 4), size=3, align_corners=True),
    lambda lib: F(lib).interpolate(lib.ones(1, 1, 4, 4), size=(3, 3, 3)),
])
def test_interpolate_errors(call):
    expected = error_of(lambda: call(torch))
    assert expected is not None
    assert error_of(lambda: call(ember)) == expected
