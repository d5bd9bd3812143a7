"""Parity with PyTorch for ember.fft: values, result dtypes and gradients (complex
cotangents) of every transform for float32/float64 and complex64/complex128 inputs, with
``n``/``s``, ``dim`` and each ``norm``; the helpers; the errors."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.complex_compare import compare_complex

NORMS = [None, "ortho", "forward"]
_rng = np.random.default_rng(3)


def _r(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


def _z(*shape, dtype=np.complex128):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(dtype)


INPUTS = {"float32": _r(3, 6, dtype=np.float32), "float64": _r(3, 7),
          "complex64": _z(3, 6, dtype=np.complex64), "complex128": _z(3, 5)}


@pytest.mark.parametrize("n", [None, 4, 9])
@pytest.mark.parametrize("kind", sorted(INPUTS))
@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_complex_transforms(name, kind, n):
    for norm in NORMS:
        compare_complex(lambda m, a: getattr(m.fft, name)(a, n=n, norm=norm), INPUTS[kind])


@pytest.mark.parametrize("n", [None, 4, 9])
@pytest.mark.parametrize("kind", ["float32", "float64"])
@pytest.mark.parametrize("name", ["rfft", "ihfft"])
def test_real_input_transforms(name, kind, n):
    for norm in NORMS:
        compare_complex(lambda m, a: getattr(m.fft, name)(a, n=n, dim=0, norm=norm),
                        INPUTS[kind])


@pytest.mark.parametrize("n", [None, 1, 8, 9])
@pytest.mark.parametrize("kind", sorted(INPUTS))
@pytest.mark.parametrize("name", ["irfft", "hfft"])
def test_real_output_transforms(name, kind, n):
    """The half spectrum's gradient: bins standing for two count twice, as torch's."""
    for norm in NORMS:
        compare_complex(lambda m, a: getattr(m.fft, name)(a, n=n, norm=norm), INPUTS[kind])


ND_CASES = [(None, None), ((3, 5), None), (None, (0, 2)), ((5, 4), (0, 1)), ((3,), None),
            (None, (1,)), ((-1, 7), (1, 2)), (None, -1)]


@pytest.mark.parametrize("s,dim", ND_CASES)
@pytest.mark.parametrize("name", ["fftn", "ifftn", "rfftn", "irfftn"])
def test_n_dimensional(name, s, dim):
    x = _r(2, 4, 6) if name == "rfftn" else _z(2, 4, 6)
    for norm in NORMS:
        compare_complex(lambda m, a: getattr(m.fft, name)(a, s=s, dim=dim, norm=norm), x)


@pytest.mark.parametrize("name", ["fft2", "ifft2", "rfft2", "irfft2"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_two_dimensional(name, dtype):
    if name == "rfft2" and dtype == np.complex64:
        dtype = np.float32
    x = (_r(2, 3, 4) if dtype == np.float32 else _z(2, 3, 4)).astype(dtype)
    compare_complex(lambda m, a: (getattr(m.fft, name)(a),
                                  getattr(m.fft, name)(a, s=(4, 6), dim=(0, 2), norm="ortho")), x)


def test_non_contiguous_and_integer_inputs():
    x = _r(5, 4)
    compare_complex(lambda m, a: (m.fft.fft(a.t()), m.fft.rfft(a.t()[::2]),
                                  m.fft.irfft(m.fft.rfft(a, dim=0).t())), x)
    for data in (np.arange(6), np.array([True, False, True])):
        compare_complex(lambda m, a: (m.fft.fft(a), m.fft.rfft(a), m.fft.ifftn(a),
                                      m.fft.irfft(a), m.fft.hfft(a)), data)


def test_round_trips_and_composition():
    x = _r(4, 8)
    compare_complex(lambda m, a: m.fft.irfft(m.fft.rfft(a) * m.fft.rfft(a.flip(-1)), n=8), x)
    compare_complex(lambda m, a: m.fft.ifftn(m.fft.fftn(a, dim=0) * 2j, dim=0).real, x)


@pytest.mark.parametrize("n", [0, 1, 4, 5])
@pytest.mark.parametrize("d", [1.0, 0.3])
def test_frequencies(n, d):
    compare_complex(lambda m: (m.fft.fftfreq(n, d), m.fft.rfftfreq(n, d),
                               m.fft.fftfreq(n, d, dtype=m.float64),
                               m.fft.rfftfreq(n, d=d, dtype=m.float64)))


@pytest.mark.parametrize("dim", [None, 0, 1, (0, 1), -1])
def test_shifts(dim):
    compare_complex(lambda m, a, b: (m.fft.fftshift(a, dim), m.fft.ifftshift(a, dim),
                                     m.fft.fftshift(b, dim)), _r(3, 5), _z(4, 2))


def test_out():
    for lib in (torch, ember):
        out = lib.empty(3, dtype=lib.complex64)
        result = lib.fft.rfft(lib.tensor([1.0, 2.0, 3.0, 4.0]), out=out)
        assert result is out
        assert out.tolist() == [10 + 0j, -2 + 2j, -2 + 0j]
        out = lib.empty(0)
        lib.fft.fftfreq(4, out=out)
        assert out.tolist() == [0.0, 0.25, -0.5, -0.25]
        out = lib.empty(2, dtype=lib.float64)
        lib.fft.rfftfreq(2, out=out)
        assert out.dtype == lib.float64 and out.tolist() == [0.0, 0.5]
        assert lib.fft.fftn(lib.ones(2, 2), dim=()).tolist() == [[1 + 0j] * 2] * 2


ERRORS = [
    lambda m: m.fft.rfft(m.ones(3, dtype=m.complex64)),
    lambda m: m.fft.ihfft(m.ones(3, dtype=m.complex64)),
    lambda m: m.fft.fft(m.ones(3), n=0),
    lambda m: m.fft.irfft(m.ones(1)),
    lambda m: m.fft.fft(m.ones(3), norm="bad"),
    lambda m: m.fft.fft(m.ones(3), dim=2),
    lambda m: m.fft.fft(m.ones(())),
    lambda m: m.fft.fft2(m.ones(3)),
    lambda m: m.fft.fft(m.ones(3, dtype=m.float16)),
    lambda m: m.fft.fftn(m.ones(3, 3), s=(2,), dim=(0, 1)),
    lambda m: m.fft.fftn(m.ones(3, 3), dim=(0, 0)),
    lambda m: m.fft.fftn(m.ones(3, 3), s=(2, 2, 2)),
    lambda m: m.fft.fft(m.ones(0)),
    lambda m: m.fft.fft(m.ones(3, dtype=m.bfloat16)),
    lambda m: m.fft.rfftn(m.ones(2, 3), dim=()),
    lambda m: m.fft.fftfreq(3, dtype=m.int64),
    lambda m: m.fft.fftfreq(3, dtype=m.complex64),
    lambda m: m.fft.rfft(m.ones(3), out=m.empty(3)),
    lambda m: m.fft.irfft(m.ones(3, dtype=m.complex64), out=m.empty(4, dtype=m.complex64)),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_as_torch(case):
    caught = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            ERRORS[case](lib)
        caught.append(info.value)
    assert type(caught[1]) is type(caught[0])
    assert str(caught[1]) == str(caught[0])
