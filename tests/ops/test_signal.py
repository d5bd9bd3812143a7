"""The signal family: stft/istft (values from the DFT of the windowed frames, centring by
reflection, the inverse's round trip, finite-difference gradients of the signal, the spectrum
and the window), the Hermitian n-d transforms (from the definition), gradient (exact on
quadratics, uneven grids) and histogramdd (counts by hand, density, weights); errors."""
import cmath
import math
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _r(*shape, seed=0, grad=True):
    return ember.tensor(np.random.default_rng(seed).standard_normal(shape),
                        dtype=ember.float64, requires_grad=grad)


def _z(*shape, seed=1, grad=True):
    rng = np.random.default_rng(seed)
    return ember.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape),
                        dtype=ember.complex128, requires_grad=grad)


def _dft(x):
    n = len(x)
    return [sum(x[j] * cmath.exp(-2j * math.pi * k * j / n) for j in range(n))
            for k in range(n)]


def _hann(n):
    return [0.5 - 0.5 * math.cos(2 * math.pi * i / n) for i in range(n)]


# ---- stft ---------------------------------------------------------------------------------
def test_stft_is_the_dft_of_windowed_frames():
    x = [0.5, -1.0, 2.0, 0.25, 3.0, -0.5, 1.5, 0.0, -2.0]
    w = _hann(4)
    got = ember.stft(ember.tensor(x, dtype=ember.float64), 4, 2,
                     window=ember.tensor(w, dtype=ember.float64), center=False,
                     return_complex=True)
    assert got.shape == (3, 3) and got.dtype is ember.complex128
    for t in range(3):
        frame = [x[2 * t + i] * w[i] for i in range(4)]
        assert np.allclose(got[:, t].numpy(), _dft(frame)[:3])
    full = ember.stft(ember.tensor(x), 4, 2, window=ember.tensor(w), center=False,
                      onesided=False, normalized=True, return_complex=True)
    assert full.dtype is ember.complex64 and full.shape == (4, 3)
    assert np.allclose(full[:, 1].numpy(), np.array(_dft([x[2 + i] * w[i] for i in range(4)]))
                       / 2, atol=1e-5)


def test_stft_centres_by_reflection_and_pads_the_window():
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    got = ember.stft(ember.tensor(x, dtype=ember.float64), 4, 1, return_complex=True)
    padded = [3.0, 2.0] + x + [4.0, 3.0]  # reflected by n_fft // 2 on each side
    assert got.shape == (3, 6)
    for t in range(6):
        assert np.allclose(got[:, t].numpy(), _dft(padded[t:t + 4])[:3])
    short = ember.stft(ember.tensor(x, dtype=ember.float64), 4, 1, win_length=2,
                       window=ember.tensor([2.0, 3.0], dtype=ember.float64), center=False,
                       return_complex=True)
    # the window of 2 points sits in the middle of the 4-point frame
    assert np.allclose(short[:, 0].numpy(), _dft([0.0, 2.0 * 2, 3.0 * 3, 0.0])[:3])
    constant = ember.stft(ember.tensor(x), 4, 1, pad_mode="constant", return_complex=True)
    assert np.allclose(constant[:, 0].numpy(), _dft([0.0, 0.0, 1.0, 2.0])[:3], atol=1e-5)


def test_stft_shapes_and_dtypes():
    x = ember.randn(2, 30)
    assert ember.stft(x, 8, return_complex=True).shape == (2, 5, 16)
    assert x.stft(8, return_complex=False).shape == (2, 5, 16, 2)
    z = ember.randn(30, dtype=ember.complex128)
    assert ember.stft(z, 8).dtype is ember.complex128 and ember.stft(z, 8).shape == (8, 16)
    mixed = ember.stft(ember.randn(30), 8, window=ember.ones(8, dtype=ember.float64),
                       return_complex=True)
    assert mixed.dtype is ember.complex128


def test_stft_gradcheck():
    w = ember.tensor(_hann(6), dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a, w: ember.stft(a, 6, 2, window=w, return_complex=True),
                     (_r(14), w))
    assert gradcheck(lambda a: ember.stft(a, 5, 2, 3, center=False, normalized=True,
                                          onesided=False, return_complex=True), (_r(2, 12),))
    assert gradcheck(lambda a, w: ember.stft(a, 4, 2, window=w, pad_mode="constant"),
                     (_z(10), _z(4)))
    assert gradgradcheck(lambda a: ember.stft(a, 4, 2, return_complex=True).abs(), (_r(9),))


# ---- istft --------------------------------------------------------------------------------
def test_istft_inverts_stft():
    x = _r(2, 40, grad=False)
    for kw in (dict(n_fft=8, hop_length=2), dict(n_fft=9, hop_length=3, win_length=7),
               dict(n_fft=8, hop_length=4, normalized=True)):
        w = ember.hann_window(kw.get("win_length", kw["n_fft"]), dtype=ember.float64)
        spec = ember.stft(x, window=w, return_complex=True, **kw)
        back = ember.istft(spec, window=w, length=40, **kw)
        assert back.shape == (2, 40) and np.allclose(back.numpy(), x.numpy())
    z = _z(30, grad=False)
    spec = ember.stft(z, 6, 2, window=ember.hann_window(6, dtype=ember.float64))
    back = ember.istft(spec, 6, 2, window=ember.hann_window(6, dtype=ember.float64),
                       return_complex=True)
    assert back.dtype is ember.complex128 and np.allclose(back.numpy(), z.numpy()[:30])


def test_istft_length_trims_and_pads():
    x = _r(20, grad=False)
    spec = ember.stft(x, 8, 2, window=ember.hann_window(8, dtype=ember.float64),
                      return_complex=True)
    w = ember.hann_window(8, dtype=ember.float64)
    assert ember.istft(spec, 8, 2, window=w).shape == (20,)
    assert np.allclose(ember.istft(spec, 8, 2, window=w, length=7).numpy(), x.numpy()[:7])
    with pytest.warns(UserWarning, match="padded with zeros"):
        longer = ember.istft(spec, 8, 2, window=w, length=25)
    # the frames cover 24 points past the centring: the 25th is the zero padding
    assert longer.shape == (25,) and longer[24].item() == 0.0
    assert np.allclose(longer[:20].numpy(), x.numpy())


def test_istft_gradcheck():
    w = ember.tensor(_hann(6), dtype=ember.float64, requires_grad=True)
    spec = ember.stft(_r(16, grad=False), 6, 2, window=w.detach(), return_complex=True)
    spec.requires_grad_()
    assert gradcheck(lambda s, w: ember.istft(s, 6, 2, window=w), (spec, w))
    full = ember.stft(_z(12, grad=False), 4, 1).requires_grad_()
    assert gradcheck(lambda s: ember.istft(s, 4, 1, return_complex=True, normalized=True),
                     (full,))


def test_istft_nola_and_input_errors():
    spec = ember.stft(ember.randn(20), 8, 2, window=ember.hann_window(8), return_complex=True)
    with pytest.raises(RuntimeError, match="window overlap add min: 1"):
        ember.istft(spec, 8, 2, window=ember.zeros(8))
    with pytest.raises(RuntimeError, match="requires a complex-valued input"):
        ember.istft(spec.real, 8, 2)
    with pytest.raises(RuntimeError, match="Cannot have onesided output"):
        ember.istft(spec, 8, 2, return_complex=True)
    with pytest.raises(RuntimeError, match=r"stft requires the return_complex parameter"):
        ember.stft(ember.randn(20), 8)
    with pytest.raises(RuntimeError, match=r"expected 0 < n_fft < 20"):
        ember.stft(ember.randn(20), 21, center=False, return_complex=True)
    with pytest.raises(NotImplementedError):
        ember.stft(ember.randn(20), 8, win_length=4, center=False, align_to_window=True,
                   return_complex=True)


# ---- Hermitian n-d transforms -------------------------------------------------------------
def test_hermitian_n_dimensional_follow_the_definition():
    # the columns standing for themselves (0 and 2) are real, so the half determines it
    half = np.array([[1.0 + 0j, 2 - 1j, 0.5 + 0j], [0.5 + 0j, -1 + 0.5j, 2 + 0j]])
    # the full signal (2 x 4) is Hermitian: x[-i, -j] = conj(x[i, j])
    full = np.zeros((2, 4), complex)
    for i in range(2):
        for j in range(4):
            full[i, j] = half[i, j] if j < 3 else np.conj(half[(-i) % 2, (-j) % 4])
    expected = np.array([[sum(full[a, b] * cmath.exp(-2j * math.pi * (k * a / 2 + m * b / 4))
                              for a in range(2) for b in range(4)) for m in range(4)]
                         for k in range(2)])
    got = ember.fft.hfftn(ember.tensor(half, dtype=ember.complex64))
    assert got.dtype is ember.float32 and np.allclose(got.numpy(), expected.real, atol=1e-4)
    assert np.allclose(ember.fft.hfft2(ember.tensor(half), norm="forward").numpy(),
                       expected.real / 8, atol=1e-5)
    back = ember.fft.ihfftn(ember.tensor(expected.real, dtype=ember.float64))
    assert back.dtype is ember.complex128 and np.allclose(back.numpy(), half)
    assert np.allclose(ember.fft.ihfft2(ember.tensor(expected.real), norm="ortho").numpy(),
                       half * math.sqrt(8), atol=1e-4)


def test_hermitian_gradcheck():
    assert gradcheck(lambda a: ember.fft.hfftn(a, s=(3, 4)), (_z(2, 3),))
    assert gradcheck(lambda a: ember.fft.hfft2(a, norm="ortho"), (_z(2, 3, 3),))
    assert gradcheck(lambda a: ember.fft.ihfftn(a, dim=(0, 1)), (_r(3, 4, 2),))
    assert gradcheck(lambda a: ember.fft.ihfft2(a, s=(2, 5), norm="forward"), (_r(3, 4),))


def test_hermitian_errors():
    with pytest.raises(RuntimeError, match="Only supports floating-point dtypes"):
        ember.fft.ihfftn(ember.ones(2, 2, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match="hfftn must transform at least one axis"):
        ember.fft.hfftn(ember.ones(2, 2), dim=())


# ---- gradient -----------------------------------------------------------------------------
def test_gradient_is_exact_on_quadratics():
    t = np.array([0.0, 0.5, 1.5, 2.0, 3.5, 4.0])
    f = 3 * t ** 2 - t + 2
    (got,) = ember.gradient(ember.tensor(f), spacing=[ember.tensor(t)], edge_order=2)
    assert np.allclose(got.numpy(), 6 * t - 1)
    u = np.arange(5.0) * 0.5
    g = u ** 2
    (even,) = ember.gradient(ember.tensor(g), spacing=0.5, edge_order=2)
    assert np.allclose(even.numpy(), 2 * u)
    (first,) = ember.gradient(ember.tensor(g), spacing=0.5)
    assert np.allclose(first.numpy()[[0, -1]], [0.5, 3.5])  # one-sided at the ends


def test_gradient_dims_and_spacing_forms():
    x = ember.tensor([[1.0, 2.0, 4.0], [2.0, 5.0, 11.0]])
    d0, d1 = ember.gradient(x, spacing=[2.0, 0.5])
    assert d0.tolist() == [[0.5, 1.5, 3.5]] * 2
    assert d1.tolist() == [[2.0, 3.0, 4.0], [6.0, 9.0, 12.0]]
    (only,) = ember.gradient(x, dim=1)
    assert only.tolist() == [[1.0, 1.5, 2.0], [3.0, 4.5, 6.0]]
    ints = ember.gradient(ember.tensor([1, 4, 9]), spacing=2)
    assert ints[0].dtype is ember.float32 and ints[0].tolist() == [1.5, 2.0, 2.5]
    assert ember.gradient(ember.tensor(1.0)) == ()


def test_gradient_gradcheck():
    c = ember.tensor([0.0, 0.3, 1.0, 1.2, 2.0], dtype=ember.float64, requires_grad=True)
    assert gradcheck(lambda a: ember.gradient(a, spacing=[0.5, 2.0]), (_r(3, 4),))
    assert gradcheck(lambda a: ember.gradient(a, edge_order=2, dim=0), (_r(4, 2),))
    assert gradcheck(lambda a, c: ember.gradient(a, spacing=[c], dim=1, edge_order=2),
                     (_r(2, 5), c))
    assert gradcheck(lambda a, c: ember.gradient(a, spacing=[c]), (_r(5), c))


def test_gradient_errors():
    with pytest.raises(RuntimeError, match="only supports edge_order=1 and edge_order=2"):
        ember.gradient(ember.ones(4), edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order\\+1"):
        ember.gradient(ember.ones(2, 4), edge_order=2)
    with pytest.raises(RuntimeError, match="list of length equal to 'self.dim\\(\\) = 2'"):
        ember.gradient(ember.ones(3, 4), spacing=[1.0])
    with pytest.raises(RuntimeError, match="does not support uint8"):
        ember.gradient(ember.ones(3, dtype=ember.uint8))
    with pytest.raises(IndexError):
        ember.gradient(ember.ones(3), dim=1)
    with pytest.raises(TypeError):
        ember.gradient(ember.ones(3), spacing=ember.ones(3))


# ---- histogramdd --------------------------------------------------------------------------
def test_histogramdd_counts():
    pts = ember.tensor([[0.0, 0.0], [1.0, 1.0], [0.5, 0.2], [0.5, 0.5], [0.2, 0.9]])
    hist, edges = ember.histogramdd(pts, bins=[2, 2])
    # edges [0, .5, 1] per dim; a point on an inner edge opens the next bin, the last edge
    # closes the last bin
    assert [e.tolist() for e in edges] == [[0.0, 0.5, 1.0]] * 2
    assert hist.tolist() == [[1.0, 1.0], [1.0, 2.0]]
    weighted = ember.histogramdd(pts, [2, 2], weight=ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert weighted.hist.tolist() == [[1.0, 5.0], [3.0, 6.0]]
    custom = ember.histogramdd(pts, [ember.tensor([0.0, 0.4, 1.0]), ember.tensor([0.0, 1.0])])
    assert custom.hist.tolist() == [[2.0], [3.0]]
    ranged = ember.histogramdd(pts, 1, range=[0.4, 0.6, 0.0, 1.0])
    assert ranged.hist.tolist() == [[2.0]]


def test_histogramdd_density_and_dtypes():
    pts = ember.tensor(np.random.default_rng(0).random((50, 3)), dtype=ember.float64)
    hist, edges = ember.histogramdd(pts, [3, 2, 4], density=True)
    assert hist.dtype is ember.float64 and hist.shape == (3, 2, 4)
    volume = np.multiply.outer(np.multiply.outer(np.diff(edges[0].numpy()),
                                                 np.diff(edges[1].numpy())),
                               np.diff(edges[2].numpy()))
    assert math.isclose(float((hist.numpy() * volume).sum()), 1.0)
    single = ember.histogramdd(ember.tensor([[2.0, 2.0]]), 2)
    assert single.bin_edges[0].tolist() == [1.5, 2.0, 2.5]
    with pytest.raises(NotImplementedError, match="histogramdd"):
        ember.histogramdd(ember.ones(3, 2, dtype=ember.int64), 2)
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        ember.histogramdd(ember.ones(3), 2)
