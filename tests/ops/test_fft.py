"""ember.fft: values from the definition of the DFT, result dtypes, finite-difference
gradients (complex inputs and outputs as real pairs: gradcheck), n/s padding and trimming,
norms, out=, the helpers and the errors."""
import cmath
import math

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def _dft(x, sign=-1):
    """The DFT by its definition (host, float64): sum_n x[n] exp(sign 2 pi i k n / N)."""
    n = len(x)
    return [sum(x[j] * cmath.exp(sign * 2j * math.pi * k * j / n) for j in range(n))
            for k in range(n)]


def _r(*shape, seed=0):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape),
                        dtype=ember.float64, requires_grad=True)


def _z(*shape, seed=1):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape),
                        dtype=ember.complex128, requires_grad=True)


def test_values_follow_the_definition():
    x = [1.0, -2.0, 0.5, 3.0, 0.25]
    expected = _dft(x)
    got = ember.fft.fft(ember.tensor(x, dtype=ember.float64))
    assert np.allclose(got.numpy(), expected)
    assert np.allclose(ember.fft.rfft(ember.tensor(x, dtype=ember.float64)).numpy(),
                       expected[:3])
    inverse = ember.fft.ifft(ember.tensor(expected, dtype=ember.complex128))
    assert np.allclose(inverse.numpy(), x)
    assert np.allclose(ember.fft.irfft(ember.tensor(expected[:3]), n=5).numpy(), x, atol=1e-6)
    assert np.allclose(ember.fft.fft(ember.tensor(x), norm="ortho").numpy(),
                       np.array(expected) / math.sqrt(5), atol=1e-5)
    assert np.allclose(ember.fft.fft(ember.tensor(x), norm="forward").numpy(),
                       np.array(expected) / 5, atol=1e-6)


def test_hermitian_transforms():
    half = [1.0 + 0j, 2 - 1j, 0.5 + 0j]  # the first half of a Hermitian signal of 4 points
    full = half + [np.conj(half[1])]
    assert np.allclose(ember.fft.hfft(ember.tensor(half)).numpy(), np.real(_dft(full)),
                       atol=1e-5)
    real = [1.0, 2.0, -1.0, 0.5]
    assert np.allclose(ember.fft.ihfft(ember.tensor(real, dtype=ember.float64)).numpy(),
                       np.array(_dft(real, sign=1))[:3] / 4)


def test_result_dtypes():
    f = ember.fft
    assert f.fft(ember.ones(4)).dtype is ember.complex64
    assert f.fft(ember.ones(4, dtype=ember.float64)).dtype is ember.complex128
    assert f.fft(ember.arange(4)).dtype is ember.complex64
    assert f.rfft(ember.tensor([True, False])).dtype is ember.complex64
    assert f.irfft(ember.ones(3, dtype=ember.complex128)).dtype is ember.float64
    assert f.irfft(ember.arange(3)).dtype is ember.float32
    assert f.hfft(ember.ones(3)).dtype is ember.float32
    assert f.fftfreq(3).dtype is ember.float32
    assert f.rfftfreq(3, dtype=ember.float64).dtype is ember.float64


def test_n_and_s_pad_and_trim():
    x = ember.tensor([1.0, 2.0, 3.0])
    assert np.allclose(ember.fft.fft(x, n=5).numpy(), _dft([1.0, 2.0, 3.0, 0.0, 0.0]))
    assert np.allclose(ember.fft.fft(x, n=2).numpy(), _dft([1.0, 2.0]))
    y = ember.ones(2, 3)
    assert ember.fft.fftn(y, s=(4, 1)).shape == (4, 1)
    assert ember.fft.fftn(ember.ones(2, 3, 4), s=(3,)).shape == (2, 3, 3)
    assert ember.fft.rfftn(ember.ones(2, 3, 4)).shape == (2, 3, 3)
    assert ember.fft.irfftn(ember.ones(2, 3, 4, dtype=ember.complex64)).shape == (2, 3, 6)
    assert ember.fft.irfftn(ember.ones(2, 3, dtype=ember.complex64), s=(-1, 5)).shape == (2, 5)
    assert ember.fft.fft2(ember.ones(2, 3)).tolist()[0][0] == 6


GRADCHECKS = {
    "fft": lambda a: ember.fft.fft(a, n=7, norm="ortho"),
    "ifft": lambda a: ember.fft.ifft(a, n=3),
    "fftn": lambda a: ember.fft.fftn(a, s=(3, 5), norm="forward"),
    "ifft2": lambda a: ember.fft.ifft2(a),
    "irfft_even": lambda a: ember.fft.irfft(a, n=6),
    "irfft_odd": lambda a: ember.fft.irfft(a, n=5, dim=0, norm="ortho"),
    "irfft_short": lambda a: ember.fft.irfft(a, n=2),
    "irfftn": lambda a: ember.fft.irfftn(a, s=(2, 4)),
    "hfft": lambda a: ember.fft.hfft(a, n=5, norm="forward"),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_complex_input_gradcheck(name):
    assert gradcheck(GRADCHECKS[name], (_z(2, 4),))


REAL_GRADCHECKS = {
    "rfft": lambda a: ember.fft.rfft(a, n=6),
    "rfft_odd": lambda a: ember.fft.rfft(a, dim=0, norm="ortho"),
    "rfftn": lambda a: ember.fft.rfftn(a, s=(3, 4), norm="forward"),
    "rfft2": lambda a: ember.fft.rfft2(a),
    "ihfft": lambda a: ember.fft.ihfft(a, n=5),
    "fft_real": lambda a: ember.fft.fft(a),
    "irfft_real": lambda a: ember.fft.irfft(a),
    "shifts": lambda a: (ember.fft.fftshift(a), ember.fft.ifftshift(a, dim=1)),
}


@pytest.mark.parametrize("name", sorted(REAL_GRADCHECKS))
def test_real_input_gradcheck(name):
    assert gradcheck(REAL_GRADCHECKS[name], (_r(3, 4),))


def test_second_order():
    assert gradgradcheck(lambda a: ember.fft.irfft(ember.fft.rfft(a) ** 2, n=4), (_r(4),))
    assert gradgradcheck(lambda a: ember.fft.fft(a * a), (_z(3),))


def test_frequencies_and_shifts():
    assert ember.fft.fftfreq(5).tolist() == pytest.approx([0.0, 0.2, 0.4, -0.4, -0.2])
    assert ember.fft.fftfreq(4, d=0.5).tolist() == [0.0, 0.5, -1.0, -0.5]
    assert ember.fft.rfftfreq(5, 2.0).tolist() == pytest.approx([0.0, 0.1, 0.2])
    assert ember.fft.fftfreq(2, requires_grad=True).requires_grad
    x = ember.arange(6).reshape(2, 3)
    assert ember.fft.fftshift(x).tolist() == [[5, 3, 4], [2, 0, 1]]
    assert ember.fft.ifftshift(ember.fft.fftshift(x)).tolist() == x.tolist()
    assert ember.fft.ifftshift(ember.arange(5), dim=0).tolist() == [2, 3, 4, 0, 1]


def test_out():
    out = ember.empty(3, dtype=ember.complex64)
    assert ember.fft.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0]), out=out) is out
    assert out.tolist() == [10 + 0j, -2 + 2j, -2 + 0j]


@pytest.mark.parametrize("call,error,message", [
    (lambda: ember.fft.rfft(ember.ones(3, dtype=ember.complex64)), RuntimeError,
     "rfft expects a real input tensor, but got ComplexFloat"),
    (lambda: ember.fft.fft(ember.ones(3), n=0), RuntimeError,
     r"Invalid number of data points \(0\) specified"),
    (lambda: ember.fft.irfft(ember.ones(1)), RuntimeError,
     r"Invalid number of data points \(0\) specified"),
    (lambda: ember.fft.fft(ember.ones(3), norm="bad"), RuntimeError,
     'Invalid normalization mode: "bad"'),
    (lambda: ember.fft.fft(ember.ones(3), dim=2), IndexError, "Dimension out of range"),
    (lambda: ember.fft.fft(ember.ones(())), IndexError,
     "Dimension specified as -1 but tensor has no dimensions"),
    (lambda: ember.fft.fft(ember.ones(3, dtype=ember.float16)), RuntimeError,
     "Unsupported dtype Half"),
    (lambda: ember.fft.fftn(ember.ones(3, 3), s=(2,), dim=(0, 1)), RuntimeError,
     "When given, dim and shape arguments must have the same length"),
    (lambda: ember.fft.fftn(ember.ones(3, 3), dim=(0, 0)), RuntimeError,
     "FFT dims must be unique"),
    (lambda: ember.fft.fftfreq(3, layout="sparse"), NotImplementedError, "strided"),
])
def test_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_fake_cuda_runs_on_the_device_module(fake_cuda):
    x = ember.tensor([1.0, 2.0, 3.0, 4.0], device="cuda", requires_grad=True)
    y = ember.fft.irfft(ember.fft.rfft(x) * 2, n=4)
    y.sum().backward()
    assert y.device.type == "cuda" and x.grad.device.type == "cuda"
    assert np.allclose(y.cpu().detach().numpy(), [2.0, 4.0, 6.0, 8.0])
    assert np.allclose(x.grad.cpu().numpy(), 2.0)
