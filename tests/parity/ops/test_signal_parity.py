"""Parity with PyTorch for the signal family: stft/istft (values and gradients of the signal,
the spectrum and the window; float32/float64 and complex inputs; centring and its padding
modes, win_length, normalized, onesided, return_complex=False, batches, non-contiguous
inputs), the Hermitian n-d transforms (fft.hfft2/ihfft2/hfftn/ihfftn), gradient (scalar,
per-dim and coordinate spacing, edge_order 1 and 2, integer inputs) and histogramdd; their
errors (type and message) and warnings."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of
from tests.parity.complex_compare import compare_complex

NORMS = [None, "ortho", "forward"]
_rng = np.random.default_rng(11)


def _r(*shape, dtype=np.float64):
    return _rng.standard_normal(shape).astype(dtype)


def _z(*shape, dtype=np.complex128):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(dtype)


def _hann(n, dtype=np.float64):
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(dtype)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def same_error(fn):
    t, e = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert t is not None, "torch raised nothing"
    assert e == t, (e, t)


# ---- stft ---------------------------------------------------------------------------------
STFT_CASES = [
    dict(n_fft=8),
    dict(n_fft=8, hop_length=3),
    dict(n_fft=8, hop_length=2, win_length=5),
    dict(n_fft=7, hop_length=2, center=False),
    dict(n_fft=8, pad_mode="constant", normalized=True),
    dict(n_fft=6, hop_length=2, pad_mode="replicate", onesided=False),
    dict(n_fft=6, hop_length=4, pad_mode="circular"),
]


@pytest.mark.parametrize("case", range(len(STFT_CASES)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_stft_real(case, dtype):
    kw = STFT_CASES[case]
    window = _hann(kw.get("win_length", kw["n_fft"]), dtype)
    for x in (_r(21, dtype=dtype), _r(2, 16, dtype=dtype)):
        compare_complex(lambda m, a, w: m.stft(a, window=w, return_complex=True, **kw), x,
                        window)
        compare_complex(lambda m, a: m.stft(a, return_complex=True, **kw), x)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_stft_complex(dtype):
    real = np.float32 if dtype == np.complex64 else np.float64
    x = _z(2, 18, dtype=dtype)
    compare_complex(lambda m, a, w: m.stft(a, 8, 3, window=w), x, _hann(8, real))
    compare_complex(lambda m, a, w: a.stft(6, 2, 4, window=w, center=False, normalized=True,
                                           return_complex=True), x[0], _hann(4, real))
    # a complex window on a real signal: the full spectrum
    compare_complex(lambda m, a, w: m.stft(a, 6, 2, window=w), _r(15, dtype=real),
                    _z(6, dtype=dtype))


def test_stft_real_output_and_mixed_dtypes():
    x = _r(2, 17)
    compare_complex(lambda m, a, w: m.stft(a, 8, 2, window=w, return_complex=False), x,
                    _hann(8))
    compare_complex(lambda m, a: m.stft(a, 4, return_complex=False), _z(12))
    compare_complex(lambda m, a, w: m.stft(a, 8, 2, window=w, return_complex=True),
                    x.astype(np.float32), _hann(8))
    compare_complex(lambda m, a, w: m.stft(a, 8, 2, window=w, return_complex=True),
                    x, _hann(8, np.float32))


def test_stft_non_contiguous_and_methods():
    x = _r(20, 3)
    compare_complex(lambda m, a, w: a.t().stft(8, 2, window=w, return_complex=True), x,
                    _hann(8))
    compare_complex(lambda m, a, w: m.stft(a[::2, 1], 4, window=w, return_complex=True), x,
                    _hann(4))
    compare_complex(lambda m, a: m.stft(a, 4, window=m.ones(4), return_complex=True),
                    _r(1, 9))


STFT_ERRORS = [
    lambda m: m.stft(m.ones(10), 4),
    lambda m: m.stft(m.ones(10), 4, window=m.ones(3), return_complex=True),
    lambda m: m.stft(m.ones(10), 4, win_length=3, window=m.ones(4), return_complex=True),
    lambda m: m.stft(m.ones(10), 4, window=m.ones(2, 2), return_complex=True),
    lambda m: m.stft(m.ones(10), 4, win_length=5, return_complex=True),
    lambda m: m.stft(m.ones(10), 4, win_length=0, return_complex=True),
    lambda m: m.stft(m.ones(10), 0, return_complex=True),
    lambda m: m.stft(m.ones(10), 11, return_complex=True, center=False),
    lambda m: m.stft(m.ones(10), 4, hop_length=0, return_complex=True),
    lambda m: m.stft(m.ones(10), 4, return_complex=True, pad_mode="bad"),
    lambda m: m.stft(m.ones(3), 8, return_complex=True),
    lambda m: m.stft(m.ones(3), 8, return_complex=True, pad_mode="circular"),
    lambda m: m.stft(m.ones(2, 3, 10), 4, return_complex=True),
    lambda m: m.stft(m.ones(2, 3, 1, 10), 4, return_complex=True),
    lambda m: m.stft(m.ones(()), 4, return_complex=True),
    lambda m: m.stft(m.ones(()), 4, return_complex=True, pad_mode="constant"),
    lambda m: m.stft(m.arange(10), 4, return_complex=True),
    lambda m: m.stft(m.ones(0, 10), 4, return_complex=True),
    lambda m: m.stft(m.ones(10, dtype=m.float64), 4, onesided=True, return_complex=True,
                     window=m.ones(4, dtype=m.complex64)),
    lambda m: m.stft(m.ones(10, dtype=m.complex128), 4, window=m.ones(4), onesided=True),
    lambda m: m.stft(m.ones(10), 4, return_complex=True, align_to_window=True),
    lambda m: m.stft(m.ones(10, dtype=m.float16), 4, return_complex=True),
]


@pytest.mark.parametrize("case", range(len(STFT_ERRORS)))
def test_stft_errors(case):
    same_error(STFT_ERRORS[case])


def test_stft_sizes_must_be_ints():
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.stft(lib.ones(10), 4.0, return_complex=True)
        with pytest.raises(TypeError):
            lib.stft(lib.ones(10), 4, 2.0, return_complex=True)


# ---- istft --------------------------------------------------------------------------------
def _spectrum(x, n_fft, hop, window, **kw):
    return torch.stft(torch.tensor(x), n_fft, hop, window=torch.tensor(window),
                      return_complex=True, **kw).numpy()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_istft_round_trip_and_gradients(dtype):
    x, w = _r(2, 24, dtype=dtype), _hann(8, dtype)
    spec = _spectrum(x, 8, 2, w)
    compare_complex(lambda m, s, w: m.istft(s, 8, 2, window=w), spec, w)
    compare_complex(lambda m, s, w: m.istft(s, 8, 2, window=w, length=24), spec[0], w)
    compare_complex(lambda m, s, w: m.istft(s, 8, 2, window=w, length=30), spec, w)
    compare_complex(lambda m, s, w: s.istft(8, 2, window=w, length=9), spec, w)
    out = ember.istft(ember.tensor(spec), 8, 2, window=ember.tensor(w), length=24)
    np.testing.assert_allclose(out.numpy(), x, atol=1e-5)


def test_istft_variants():
    x = _r(30)
    w5 = _hann(5)
    spec = _spectrum(x, 8, 2, w5, win_length=5, normalized=True)
    compare_complex(lambda m, s, w: m.istft(s, 8, 2, 5, window=w, normalized=True), spec, w5)
    full = _spectrum(x, 6, 2, _hann(6), onesided=False)
    compare_complex(lambda m, s, w: m.istft(s, 6, 2, window=w), full, _hann(6))
    compare_complex(lambda m, s, w: m.istft(s, 6, 2, window=w, return_complex=True), full,
                    _hann(6))
    compare_complex(lambda m, s: m.istft(s, 6, 2, onesided=True), _spectrum(x, 6, 2, _hann(6)))
    odd = _spectrum(x, 7, 3, np.ones(7), center=False)
    compare_complex(lambda m, s: m.istft(s, 7, 3, window=m.ones(7), center=False), odd)
    zc = _z(2, 20, dtype=np.complex64)
    spec = torch.stft(torch.tensor(zc), 8, 2, window=torch.hann_window(8)).numpy()
    compare_complex(lambda m, s, w: m.istft(s, 8, 2, window=w, return_complex=True), spec,
                    _hann(8, np.float32))
    compare_complex(lambda m, s, w: m.istft(s, 8, 2, window=w, return_complex=True), spec,
                    _z(8, dtype=np.complex64))


ISTFT_ERRORS = [
    lambda m, s: m.istft(s.real, 8, 2),
    lambda m, s: m.istft(s, 8, 2, return_complex=True),
    lambda m, s: m.istft(s, 8, 2, onesided=False),
    lambda m, s: m.istft(s, 4, 2),
    lambda m, s: m.istft(s, 8, 2, window=m.ones(7)),
    lambda m, s: m.istft(s, 8, 2, win_length=7, window=m.ones(8)),
    lambda m, s: m.istft(s, 8, 9),
    lambda m, s: m.istft(s, 8, 0),
    lambda m, s: m.istft(s, 8, 2, win_length=9),
    lambda m, s: m.istft(s, 8, 2, window=m.zeros(8)),
    lambda m, s: m.istft(s, 8, 2, window=m.hann_window(8), center=False),
    lambda m, s: m.istft(s[None, None], 8, 2),
    lambda m, s: m.istft(s[:, :0], 8, 2),
    lambda m, s: m.istft(s, 8, 2, window=m.ones(8, dtype=m.complex64)),
    lambda m, s: m.istft(s.double(), 8, 2, window=m.ones(8, dtype=m.complex64), onesided=False),
]


@pytest.mark.parametrize("case", range(len(ISTFT_ERRORS)))
def test_istft_errors(case):
    spec = _spectrum(_r(20, dtype=np.float32), 8, 2, _hann(8, np.float32))
    same_error(lambda m: ISTFT_ERRORS[case](m, m.tensor(spec)))


def _warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


def test_warnings_as_torch():
    spec = _spectrum(_r(20), 8, 2, _hann(8))
    calls = [lambda m: m.stft(m.ones(10), 4, return_complex=True),
             lambda m: m.stft(m.ones(10), 4, window=m.ones(4), return_complex=False),
             lambda m: m.istft(m.tensor(spec), 8, 2),
             lambda m: m.istft(m.tensor(spec), 8, 2, window=m.ones(8), length=30)]
    for call in calls:
        got, want = _warnings(lambda: call(ember)), _warnings(lambda: call(torch))
        assert len(got) == 1
        # torch warns once per process: compare wherever it still does
        assert got == want or not want


# ---- Hermitian n-d transforms -------------------------------------------------------------
HERMITIAN_CASES = [(None, None), ((3, 6), None), (None, (0, 2)), ((4, 5), (0, 1)), ((3,), None),
                   (None, (1,)), ((-1, 7), (1, 2)), (None, -1)]


@pytest.mark.parametrize("s,dim", HERMITIAN_CASES)
@pytest.mark.parametrize("name", ["hfftn", "ihfftn"])
def test_hermitian_n_dimensional(name, s, dim):
    x = _r(2, 4, 5) if name == "ihfftn" else _z(2, 4, 5)
    for norm in NORMS:
        compare_complex(lambda m, a: getattr(m.fft, name)(a, s=s, dim=dim, norm=norm), x)


@pytest.mark.parametrize("name", ["hfft2", "ihfft2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_hermitian_two_dimensional(name, dtype):
    if name == "ihfft2" and dtype == np.complex64:
        dtype = np.float32
    x = (_r(2, 3, 4) if np.dtype(dtype).kind == "f" else _z(2, 3, 4)).astype(dtype)
    compare_complex(lambda m, a: (getattr(m.fft, name)(a),
                                  getattr(m.fft, name)(a, s=(4, 6), dim=(0, 2), norm="ortho")), x)


def test_hermitian_integer_non_contiguous_and_out():
    compare_complex(lambda m, a: (m.fft.hfftn(a), m.fft.ihfftn(a), m.fft.hfft2(a)),
                    np.arange(12).reshape(3, 4))
    compare_complex(lambda m, a: (m.fft.hfftn(a.t()), m.fft.ihfft2(a.real.t())), _z(4, 3))
    for lib in (torch, ember):
        out = lib.empty(0)
        result = lib.fft.hfft2(lib.ones(2, 2), out=out)
        assert result is out and out.tolist() == [[4.0, 0.0], [0.0, 0.0]]


HERMITIAN_ERRORS = [
    lambda m: m.fft.hfftn(m.ones(2, 3, dtype=m.complex64), dim=()),
    lambda m: m.fft.ihfftn(m.ones(2, 3), dim=()),
    lambda m: m.fft.ihfftn(m.ones(2, 3, dtype=m.complex64)),
    lambda m: m.fft.hfft2(m.ones(3, dtype=m.complex64)),
    lambda m: m.fft.hfftn(m.ones(3, 1, dtype=m.complex64)),
    lambda m: m.fft.ihfftn(m.ones(3, dtype=m.float16)),
    lambda m: m.fft.hfftn(m.ones(3, 3), norm="x"),
    lambda m: m.fft.ihfft2(m.ones(3, 3), s=(2,)),
    lambda m: m.fft.hfftn(m.ones(3, 3), dim=(0, 0)),
    lambda m: m.fft.ihfftn(m.ones(3, 3), out=m.empty(2)),
]


@pytest.mark.parametrize("case", range(len(HERMITIAN_ERRORS)))
def test_hermitian_errors(case):
    same_error(HERMITIAN_ERRORS[case])


# ---- gradient -----------------------------------------------------------------------------
GRADIENT_CASES = [dict(), dict(spacing=2.0), dict(spacing=[0.5, 3]), dict(dim=1),
                  dict(dim=-2, spacing=1.5), dict(dim=(1, 0), spacing=[2.0, 0.25]),
                  dict(edge_order=2), dict(edge_order=2, spacing=[3.0, 0.5], dim=[0, 1])]


@pytest.mark.parametrize("case", range(len(GRADIENT_CASES)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_uniform(case, dtype):
    kw = GRADIENT_CASES[case]
    compare(lambda m, a: m.gradient(a, **kw), _r(4, 5, dtype=dtype))
    compare(lambda m, a: m.gradient(a, **kw), _r(5, 3, dtype=dtype), noncontiguous=True)


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradient_coordinates(edge_order, dtype):
    x = _r(4, 6, dtype=dtype)
    c0 = np.array([0.0, 1.0, 3.0, 3.5], dtype)
    c1 = np.array([-1.0, 0.0, 0.5, 2.0, 4.0, 4.25], dtype)
    compare(lambda m, a, p, q: m.gradient(a, spacing=[p, q], edge_order=edge_order), x, c0, c1)
    compare(lambda m, a, q: m.gradient(a, spacing=(q,), dim=1, edge_order=edge_order), x, c1)
    compare(lambda m, a, p: m.gradient(a, spacing=[p], dim=[0], edge_order=edge_order),
            x, c0.astype(np.float64))


def test_gradient_integer_complex_and_edge_cases():
    ints = np.array([1, 4, 9, 16, 25])
    for kw in (dict(), dict(spacing=2), dict(spacing=2.5, edge_order=2)):
        compare(lambda m, a: m.gradient(a, **kw), ints)
    compare(lambda m, a, c: m.gradient(a, spacing=[c], edge_order=2), ints,
            np.array([0, 1, 3, 4, 7]))
    compare_complex(lambda m, a: m.gradient(a, spacing=0.5), _z(3, 4))
    compare_complex(lambda m, a: m.gradient(a, spacing=1 + 2j), _r(5))
    compare(lambda m, a: m.gradient(a, dim=0), _r(2, 0))
    for lib in (torch, ember):
        assert lib.gradient(lib.tensor(3.0)) == ()
        assert lib.gradient(lib.ones(2, 3), dim=[]) == ()


GRADIENT_ERRORS = [
    lambda m: m.gradient(m.ones(4, 5), spacing=[2.0]),
    lambda m: m.gradient(m.ones(4, 5), spacing=[]),
    lambda m: m.gradient(m.ones(4, 5), spacing=(m.arange(4.0),)),
    lambda m: m.gradient(m.ones(4, 5), spacing=[1.0, 2.0], dim=0),
    lambda m: m.gradient(m.ones(4, 5), spacing=[1.0], dim=[0, 5]),
    lambda m: m.gradient(m.ones(4, 5), spacing=[1.0, 2.0], dim=[0, 5]),
    lambda m: m.gradient(m.ones(4, 5), dim=2),
    lambda m: m.gradient(m.ones(4, 5), dim=[1, 1]),
    lambda m: m.gradient(m.ones(4, 5), edge_order=3),
    lambda m: m.gradient(m.ones(1, 5)),
    lambda m: m.gradient(m.ones(2, 5), edge_order=2),
    lambda m: m.gradient(m.ones(0)),
    lambda m: m.gradient(m.ones(4, dtype=m.uint8)),
    lambda m: m.gradient(m.ones(5), spacing=[m.ones(2, 5)]),
    lambda m: m.gradient(m.ones(4, 5), spacing=[m.tensor(1.0), m.tensor(2.0)]),
    lambda m: m.gradient(m.ones(4, 5), spacing=[m.arange(4.0), 2.0]),
    lambda m: m.gradient(m.ones(4, 5), spacing=(m.arange(5.0),), dim=0),
    lambda m: m.gradient(m.ones(5, dtype=m.bool)),
]


@pytest.mark.parametrize("case", range(len(GRADIENT_ERRORS)))
def test_gradient_errors(case):
    same_error(GRADIENT_ERRORS[case])


def test_gradient_spacing_tensor_is_a_type_error():
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.gradient(lib.ones(4), spacing=lib.ones(4))


# ---- histogramdd --------------------------------------------------------------------------
def _flat(result):
    """hist and every bin edge as one flat tuple (compare() looks at tensors only)."""
    hist, edges = result
    return (hist, *edges)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogramdd(dtype):
    x = _rng.random((40, 3)).astype(dtype)
    w = _rng.random(40).astype(dtype)
    edges = [np.array([0.0, 0.2, 0.7, 1.0], dtype), np.array([0.1, 0.5], dtype),
             np.array([-1.0, 0.3, 0.6, 0.9, 2.0], dtype)]
    cases = [
        lambda m, a, w: m.histogramdd(a, 4),
        lambda m, a, w: m.histogramdd(a, [2, 3, 5], weight=w),
        lambda m, a, w: m.histogramdd(a, (3, 1, 2), range=[0.2, 0.8, 0.0, 1.0, -1, 2],
                                      density=True),
        lambda m, a, w: m.histogramdd(a, [m.tensor(e) for e in edges], weight=w, density=True),
        lambda m, a, w: m.histogramdd(a.reshape(5, 8, 3), 2, weight=w.reshape(5, 8)),
        lambda m, a, w: m.histogramdd(a[:, :2].t().contiguous().t(), 3),
        lambda m, a, w: m.histogramdd(a[:0], 3),
    ]
    for case in cases:
        compare(lambda m, a, w: _flat(case(m, a, w)), x, w, grad=False)
    compare(lambda m, a: _flat(m.histogramdd(a, 2)), np.array([[0.0, 0.0], [0.0, 0.0]], dtype),
            grad=False)
    compare(lambda m, a: _flat(m.histogramdd(a, [2, 2], range=[0.0, 1.0, 0.0, 1.0])),
            np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.5, 0.5]], dtype), grad=False)
    compare(lambda m, a: _flat(m.histogramdd(a, 3)), np.zeros((2, 0), dtype), grad=False)
    out = ember.histogramdd(ember.tensor(x), 2)
    assert type(out).__name__ == "histogramdd" and out._fields == ("hist", "bin_edges")


HISTOGRAMDD_ERRORS = [
    lambda m: m.histogramdd(m.ones(10, 2), [3]),
    lambda m: m.histogramdd(m.ones(10, 2), [3, 4, 5]),
    lambda m: m.histogramdd(m.ones(10, 2), [m.tensor([0.0, 1.0])]),
    lambda m: m.histogramdd(m.ones(10, 2), 3, range=[0.0, 1.0]),
    lambda m: m.histogramdd(m.ones(10, 2), 3, range=[1.0, 0.0, 0.0, 2.0]),
    lambda m: m.histogramdd(m.ones(10, 2), 3, weight=m.ones(9)),
    lambda m: m.histogramdd(m.ones(10, 2), 3, weight=m.ones(10, dtype=m.float64)),
    lambda m: m.histogramdd(m.ones(10, 2, dtype=m.int64), 3),
    lambda m: m.histogramdd(m.ones(10), 3),
    lambda m: m.histogramdd(m.ones(10, 2), 0),
    lambda m: m.histogramdd(m.ones(10, 2), [m.tensor([]), m.tensor([0.0, 1.0])]),
    lambda m: m.histogramdd(m.ones(10, 2), [m.tensor([1.0]), m.tensor([0.0, 1.0])]),
    lambda m: m.histogramdd(m.ones(10, 2), [m.ones(1, 3), m.tensor([0.0, 1.0])]),
    lambda m: m.histogramdd(m.ones(10, 2), [m.ones(3, dtype=m.float64), m.ones(2)]),
    lambda m: m.histogramdd(m.tensor([[float("nan"), 0.0]]), 2),
    lambda m: m.histogramdd(m.tensor([[0.0, float("inf")]]), 2),
]


@pytest.mark.parametrize("bins", [lambda m: m.tensor([0.0, 1.0]), lambda m: 2.5,
                                  lambda m: [3, m.tensor([0.0, 1.0])],
                                  lambda m: [m.tensor([0.0, 1.0]), 3]])
def test_histogramdd_bins_of_the_wrong_type(bins):
    for lib in (torch, ember):
        with pytest.raises(TypeError):
            lib.histogramdd(lib.ones(4, 2), bins(lib))


@pytest.mark.parametrize("case", range(len(HISTOGRAMDD_ERRORS)))
def test_histogramdd_errors(case):
    same_error(HISTOGRAMDD_ERRORS[case])
