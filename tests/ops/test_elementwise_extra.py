"""copysign, float_power, frac, gcd, lcm, heaviside, signbit, logaddexp2, nextafter, ldexp,
frexp, the bit shifts, sinc, i0 and xlogy with ember and NumPy/math only: values from math,
gradients and second derivatives by gradcheck/gradgradcheck in float64, result dtypes,
in-place forms, out=, forward-mode AD, vmap, meta tensors and error paths in PyTorch's
words (texts taken from PyTorch 2.x)."""
import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
import ember.autograd.forward_ad as fwAD


def t(values, dtype=ember.float64, grad=False):
    return ember.tensor(values, dtype=dtype, requires_grad=grad)


X = [0.3, -1.7, 2.4, -0.6]
Y = [1.2, 0.8, -2.5, 0.4]


# ---- values ---------------------------------------------------------------------------------
def test_values_from_math():
    x, y = t(X), t(Y)
    np.testing.assert_allclose(ember.copysign(x, y).numpy(),
                               [math.copysign(a, b) for a, b in zip(X, Y)])
    np.testing.assert_allclose(ember.frac(x).numpy(), [a - math.trunc(a) for a in X])
    np.testing.assert_allclose(ember.sinc(x).numpy(),
                               [math.sin(math.pi * a) / (math.pi * a) for a in X])
    np.testing.assert_allclose(ember.logaddexp2(x, y).numpy(),
                               [math.log2(2 ** a + 2 ** b) for a, b in zip(X, Y)])
    np.testing.assert_allclose(ember.xlogy(x, y.abs()).numpy(),
                               [a * math.log(abs(b)) for a, b in zip(X, Y)])
    np.testing.assert_allclose(ember.nextafter(x, y).numpy(),
                               [math.nextafter(a, b) for a, b in zip(X, Y)], rtol=0)
    # I0(x) = sum_k (x/2)^(2k) / (k!)^2
    i0 = [sum((a / 2) ** (2 * k) / math.factorial(k) ** 2 for k in range(30)) for a in X]
    np.testing.assert_allclose(ember.i0(x).numpy(), i0, rtol=1e-12)
    assert ember.sinc(t([0.0])).item() == 1.0
    assert ember.signbit(t([-0.0, 0.0, -2.0])).tolist() == [True, False, True]


def test_integer_ops():
    a, b = ember.tensor([12, -18, 0, 0, 7]), ember.tensor([8, 4, 0, 5, -21])
    assert ember.gcd(a, b).tolist() == [math.gcd(p, q) for p, q in zip(a.tolist(), b.tolist())]
    assert ember.lcm(a, b).tolist() == [4 * 6, 36, 0, 0, 21]
    assert ember.bitwise_left_shift(a, ember.tensor([1, 2, 3, 64, -1])).tolist() == \
        [24, -72, 0, 0, 0]
    assert ember.bitwise_right_shift(a, ember.tensor([1, 2, 3, 64, 65])).tolist() == \
        [6, -5, 0, 0, 0]
    assert ember.bitwise_right_shift(ember.tensor([-5]), 70).tolist() == [-1]
    assert (a << 1).tolist() == [24, -36, 0, 0, 14] and (a >> 1).tolist() == [6, -9, 0, 0, 3]
    assert (1 << ember.tensor([3])).tolist() == [8] and (64 >> ember.tensor([3])).tolist() == [8]
    u = ember.tensor([200], dtype=ember.uint8)
    assert (u << 1).tolist() == [144] and (u << 1).dtype is ember.uint8
    c = a.clone()
    c <<= 2
    c >>= 1
    assert c.tolist() == [24, -36, 0, 0, 14]


def test_frexp_and_ldexp():
    m, e = ember.frexp(t([8.0, -0.75, 0.0, 3.0]))
    assert m.tolist() == [0.5, -0.75, 0.0, 0.75] and e.tolist() == [4, 0, 0, 2]
    assert e.dtype is ember.int32 and m.dtype is ember.float64
    assert ember.frexp(t([1.0])).mantissa.tolist() == [0.5]
    assert ember.ldexp(m, e).tolist() == [8.0, -0.75, 0.0, 3.0]
    assert ember.ldexp(ember.tensor([3]), ember.tensor([2])).dtype is ember.float32


def test_result_dtypes():
    i = ember.tensor([1, 2, 3])
    for fn in (ember.sinc, ember.i0):
        assert fn(i).dtype is ember.float32 and fn(i > 1).dtype is ember.float32
    assert ember.xlogy(i, i).dtype is ember.float32
    assert ember.copysign(i, -1).dtype is ember.float32
    assert ember.float_power(i, 2).dtype is ember.float64
    assert ember.float_power(t([1.0], ember.float32), 2).dtype is ember.float64
    assert ember.float_power(t([1.0], ember.complex64), 2).dtype is ember.complex128
    assert ember.xlogy(t([1.0], ember.float32), 2).dtype is ember.float32
    assert ember.xlogy(2, t([1.0], ember.float32)).dtype is ember.float32
    assert ember.gcd(i.to(ember.uint8), i.to(ember.int8)).dtype is ember.int16
    assert ember.signbit(i).dtype is ember.bool


def test_special_values():
    assert math.isnan(ember.frac(t([math.inf])).item())
    out = ember.xlogy(t([0.0, 0.0, 1.0]), t([0.0, math.nan, 0.0])).tolist()
    assert out[0] == 0.0 and math.isnan(out[1]) and out[2] == -math.inf
    assert math.isnan(ember.sinc(t([math.inf])).item())
    assert ember.heaviside(t([-1.0, 0.0, 2.0]), t([0.5])).tolist() == [0.0, 0.5, 1.0]


# ---- gradients ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fn", [
    lambda a, b: ember.copysign(a, b), lambda a, b: ember.logaddexp2(a, b),
    lambda a, b: ember.xlogy(a, b.abs() + 0.1), lambda a, b: ember.float_power(a.abs() + 0.1, b),
    lambda a, b: ember.ldexp(a, b), lambda a, b: ember.sinc(a) * ember.i0(b),
    lambda a, b: ember.frac(a * 3) + ember.frexp(b)[0],
], ids=["copysign", "logaddexp2", "xlogy", "float_power", "ldexp", "sinc_i0", "frac_frexp"])
def test_gradcheck(fn):
    a, b = t(X, grad=True), t(Y, grad=True)
    assert gradcheck(fn, (a, b))
    assert gradgradcheck(fn, (a, b))  # every op here is twice differentiable


def test_gradients_of_pytorch_conventions():
    x = t([0.0, 1.5], grad=True)
    ember.copysign(x, t([-1.0, -1.0])).sum().backward()
    assert x.grad.tolist() == [0.0, -1.0]  # zero where x is 0
    x = t([1.5, -2.0], grad=True)
    y = t([0.0, 3.0], grad=True)
    ember.nextafter(x, y).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [0.0, 0.0]
    x = t([1.0, 1.0, 1.0], grad=True)
    ember.ldexp(x, ember.tensor([2, -1, 70])).sum().backward()
    assert x.grad.tolist() == [4.0, 0.0, 0.0]  # 2 ** k in integers, as PyTorch
    x = t([0.0], grad=True)
    ember.sinc(x).sum().backward()
    assert x.grad.tolist() == [0.0]
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        ember.heaviside(t([1.0], grad=True), t([0.5])).sum().backward()
    assert not ember.signbit(t([1.0], grad=True)).requires_grad


def test_forward_mode_and_vmap():
    x = t([0.3, 0.7])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.ones(2, dtype=ember.float64))
        tangent = fwAD.unpack_dual(ember.sinc(d)).tangent
    px = math.pi * 0.3
    assert abs(tangent[0].item() - (math.cos(px) * px - math.sin(px)) / (px * 0.3)) < 1e-12
    batch = ember.tensor(np.random.default_rng(0).standard_normal((3, 4)))
    assert ember.allclose(ember.vmap(ember.i0)(batch), ember.i0(batch))
    assert ember.allclose(ember.vmap(lambda a: ember.xlogy(a, 2.0))(batch),
                          ember.xlogy(batch, 2.0))


def test_meta_tensors():
    m = ember.empty(2, 3, device="meta")
    for out in (ember.sinc(m), ember.i0(m), ember.copysign(m, m), ember.frexp(m)[1],
                ember.ldexp(m, m), ember.xlogy(m, 1.0)):
        assert out.is_meta and out.shape == (2, 3)
    assert (ember.empty(3, dtype=ember.int64, device="meta") << 1).is_meta


# ---- in-place, methods, out= ------------------------------------------------------------------
def test_inplace_and_out():
    x = t(X)
    assert ember.equal(x.clone().copysign_(-1.0), -x.abs())
    assert ember.equal(x.clone().frac_(), ember.frac(x))
    assert ember.equal(x.clone().xlogy_(2.0), ember.xlogy(x, 2.0))
    assert ember.equal(x.clone().float_power_(2), ember.float_power(x, 2))
    i = ember.tensor([12, 6])
    assert i.clone().gcd_(ember.tensor([8, 4])).tolist() == [4, 2]
    out = ember.empty(4, dtype=ember.float64)
    assert ember.sinc(x, out=out) is out and ember.equal(out, ember.sinc(x))
    m, e = ember.empty(4, dtype=ember.float64), ember.empty(4, dtype=ember.int32)
    got = ember.frexp(x, out=(m, e))
    assert got.mantissa is m and got.exponent is e
    assert ember.equal(ember.float_power(x, 2, out=out), x * x)


# ---- errors ---------------------------------------------------------------------------------
def test_errors():
    with pytest.raises(NotImplementedError, match="\"gcd_cpu\" not implemented for 'Float'"):
        ember.gcd(t([1.0], ember.float32), t([2.0], ember.float32))
    with pytest.raises(TypeError,
                       match=r"gcd\(\): argument 'other' \(position 2\) must be Tensor"):
        ember.gcd(ember.tensor([4]), 2)
    with pytest.raises(NotImplementedError, match="\"frac_cpu\" not implemented for 'Long'"):
        ember.frac(ember.tensor([3]))
    with pytest.raises(NotImplementedError, match="\"lshift_cpu\" not implemented for 'Float'"):
        t([1.0], ember.float32) << 1
    with pytest.raises(RuntimeError, match="torch.frexp\\(\\) only supports floating-point"):
        ember.frexp(ember.tensor([1]))
    with pytest.raises(RuntimeError, match="heaviside is not yet implemented for tensors with "
                                           "different dtypes."):
        ember.heaviside(ember.tensor([1]), t([1.0], ember.float32))
    with pytest.raises(RuntimeError, match="the base given to float_power_ has dtype Float but "
                                           "the operation's result requires dtype Double"):
        ember.ones(2).float_power_(2)
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        ember.tensor([1, 2]).xlogy_(ember.tensor([1, 2]))
    with pytest.raises(RuntimeError, match="The size of tensor a \\(2\\) must match"):
        ember.copysign(ember.ones(2), ember.ones(3))
