"""ember's fake quantization against PyTorch: values bit-identical, straight-through and
LSQ gradients, float32 and float64, errors."""
import numpy as np
import pytest
import torch

import ember


def _pair(array, requires_grad=False):
    t = torch.from_numpy(array.copy()).requires_grad_(requires_grad)
    e = ember.from_numpy(array.copy()).requires_grad_(requires_grad)
    return t, e


def _values(rng, shape, dtype):
    x = rng.standard_normal(shape) * 3
    x.flat[:4] = [np.nan, np.inf, -np.inf, 1e20]
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("scale,zero_point,quant_min,quant_max",
                         [(0.0317, 5, 0, 255), (0.1, 0, -128, 127), (0.7, -3, -8, 7),
                          (1e-3, 100, 0, 255)])
def test_per_tensor_float_qparams(dtype, scale, zero_point, quant_min, quant_max):
    rng = np.random.default_rng(0)
    x = _values(rng, (300, 40), dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    tx, ex = _pair(x, True)
    ty = torch.fake_quantize_per_tensor_affine(tx, scale, zero_point, quant_min, quant_max)
    ey = ember.fake_quantize_per_tensor_affine(ex, scale, zero_point, quant_min, quant_max)
    np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
    assert ey.dtype.name == dtype
    ty.backward(torch.from_numpy(g))
    ey.backward(ember.from_numpy(g))
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_per_tensor_tensor_qparams(dtype):
    rng = np.random.default_rng(1)
    x = _values(rng, (50, 20), dtype)
    for zp_dtype in (torch.int32, torch.int64, torch.float32):
        tx, ex = _pair(x, True)
        ts, tz = torch.tensor(0.043), torch.tensor(2.7).to(zp_dtype)
        es, ez = ember.tensor(0.043), ember.tensor(2.7).to(getattr(ember, str(zp_dtype)[6:]))
        ty = torch.fake_quantize_per_tensor_affine(tx, ts, tz, 0, 255)
        ey = ember.fake_quantize_per_tensor_affine(ex, es, ez, 0, 255)
        np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
        ty.sum().backward()
        ey.sum().backward()
        np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
        assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("zp_dtype", ["int32", "float32", "float16"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_per_channel(dtype, zp_dtype, axis):
    rng = np.random.default_rng(2)
    shape = [30, 16, 8]
    x = _values(rng, shape, dtype)
    n = shape[axis]
    scale = (rng.random(n) * 0.1 + 0.01).astype("float32")
    zp = rng.integers(0, 10, n).astype(zp_dtype)
    if zp_dtype != "int32":
        zp = (zp + rng.random(n)).astype(zp_dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    tx, ex = _pair(x, True)
    ty = torch.fake_quantize_per_channel_affine(tx, torch.from_numpy(scale),
                                                torch.from_numpy(zp), axis, 0, 255)
    ey = ember.fake_quantize_per_channel_affine(ex, ember.from_numpy(scale),
                                                ember.from_numpy(zp), axis, 0, 255)
    np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
    ty.backward(torch.from_numpy(g))
    ey.backward(ember.from_numpy(g))
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
    assert type(ey.grad_fn).__name__ == type(ty.grad_fn).__name__


@pytest.mark.parametrize("scale,zero_point,quant_min,quant_max,grad_factor",
                         [(0.0317, 5.3, 0, 255, 1.0), (0.1, 2.5, -8, 7, 0.5),
                          (0.05, -300.0, 0, 255, 1.0), (0.02, 3.5, 0, 255, 2.0)])
def test_learnable_per_tensor(scale, zero_point, quant_min, quant_max, grad_factor):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((200, 30)) * 3).astype("float32")
    g = rng.standard_normal(x.shape).astype("float32")
    tx, ex = _pair(x, True)
    ts, es = _pair(np.array([scale], "float32"), True)
    tz, ez = _pair(np.array([zero_point], "float32"), True)
    ty = torch._fake_quantize_learnable_per_tensor_affine(tx, ts, tz, quant_min, quant_max,
                                                         grad_factor)
    ey = ember._fake_quantize_learnable_per_tensor_affine(ex, es, ez, quant_min, quant_max,
                                                         grad_factor)
    np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
    ty.backward(torch.from_numpy(g))
    ey.backward(ember.from_numpy(g))
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
    # the qparams' gradients are float32 sums: equal up to the order of summation
    np.testing.assert_allclose(es.grad.numpy(), ts.grad.numpy(), rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(ez.grad.numpy(), tz.grad.numpy(), rtol=2e-5, atol=1e-5)
    assert es.grad.shape == ts.grad.shape


@pytest.mark.parametrize("axis", [0, 1])
def test_learnable_per_channel(axis):
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((40, 24)) * 3).astype("float32")
    n = x.shape[axis]
    scale = (rng.random(n) * 0.1 + 0.01).astype("float32")
    zp = (rng.integers(0, 10, n) + rng.random(n)).astype("float32")
    zp[0], zp[1] = 2.5, 300.0
    g = rng.standard_normal(x.shape).astype("float32")
    tx, ex = _pair(x, True)
    ts, es = _pair(scale, True)
    tz, ez = _pair(zp, True)
    ty = torch._fake_quantize_learnable_per_channel_affine(tx, ts, tz, axis, 0, 255, 0.7)
    ey = ember._fake_quantize_learnable_per_channel_affine(ex, es, ez, axis, 0, 255, 0.7)
    np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
    ty.backward(torch.from_numpy(g))
    ey.backward(ember.from_numpy(g))
    np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(es.grad.numpy(), ts.grad.numpy(), rtol=2e-5, atol=1e-5)
    np.testing.assert_allclose(ez.grad.numpy(), tz.grad.numpy(), rtol=2e-5, atol=1e-5)


def _same_error(torch_call, ember_call):
    with pytest.raises(Exception) as t_err:
        torch_call(torch)
    with pytest.raises(type(t_err.value)) as e_err:
        ember_call(ember)
    assert str(e_err.value).split("\n")[0] == str(t_err.value).split("\n")[0]


def _x(mod, dtype="float32"):
    return mod.ones(4, 3, dtype=getattr(mod, dtype))


@pytest.mark.parametrize("call", [
    lambda m: m.fake_quantize_per_tensor_affine(_x(m), 0.1, 0, 5, 3),
    lambda m: m.fake_quantize_per_tensor_affine(_x(m), 0.1, 300, 0, 255),
    lambda m: m.fake_quantize_per_tensor_affine(_x(m, "int32"), 0.1, 0, 0, 255),
    lambda m: m.fake_quantize_per_tensor_affine(_x(m), m.tensor([0.1, 0.2]),
                                                m.tensor([0, 0]), 0, 255),
    lambda m: m.fake_quantize_per_tensor_affine(_x(m), m.tensor(0.1, requires_grad=True),
                                                m.tensor(0), 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2, .3]),
                                                 m.tensor([0, 1, 2]), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2, .3]).double(),
                                                 m.tensor([0, 1, 2]).int(), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2, .3]),
                                                 m.tensor([0, 1, 2]).int(), 0, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2, .3]),
                                                 m.tensor([0, 1, 2]).int(), 2, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2, .3]),
                                                 m.tensor([0, 1, 2]).int(), -1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2, .3]),
                                                 m.tensor([0, 1, 2]).int() + 300, 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2]),
                                                 m.tensor([0, 1, 2]).int(), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([[.1, .2, .3]]),
                                                 m.tensor([0, 1, 2]).int(), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m, "int32"), m.tensor([.1, .2, .3]),
                                                 m.tensor([0, 1, 2]).int(), 1, 0, 255),
    lambda m: m.fake_quantize_per_channel_affine(_x(m), m.tensor([.1, .2, .3]),
                                                 m.tensor([0, 1, 2]).int(), 1, 9, 3),
    lambda m: m._fake_quantize_learnable_per_tensor_affine(_x(m), m.tensor(.1),
                                                           m.tensor(2.), 0, 255, 1.0),
    lambda m: m._fake_quantize_learnable_per_tensor_affine(
        _x(m, "float64").requires_grad_(), m.tensor([.1]), m.tensor([2.]), 0, 255,
        1.0).sum().backward(),
])
def test_errors(call):
    _same_error(call, call)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_per_channel_ties(dtype):
    """x / scale exactly k + 0.5 (a symmetric observer's scale at the range's end): PyTorch
    multiplies by 1 / scale, which rounds the tie differently from the quotient."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 4, 3)).astype(dtype)
    scale = (np.abs(x.astype("float32")).reshape(8, -1).max(1) / np.float32(127.5))
    scale = scale.astype("float32")
    zp = np.zeros(8, "int32")
    ty = torch.fake_quantize_per_channel_affine(torch.from_numpy(x), torch.from_numpy(scale),
                                                torch.from_numpy(zp), 0, -128, 127)
    ey = ember.fake_quantize_per_channel_affine(ember.from_numpy(x), ember.from_numpy(scale),
                                                ember.from_numpy(zp), 0, -128, 127)
    np.testing.assert_array_equal(ey.numpy(), ty.numpy())
