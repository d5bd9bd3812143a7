"""ember.backend.kernels.cast: float32 <-> float16 / bfloat16 conversions compiled
(ember/backend/_casts.c), bit for bit NumPy's and ml_dtypes' astype.

Up-casts are checked on all 65536 half and bfloat16 bit patterns; down-casts on every float32
within a few ulp of a rounding tie of either format (all of them, every binade: normal and
subnormal halves, the tie at 65520 that overflows to inf), contiguous ranges across the
subnormal, overflow and NaN boundaries, NaNs with every top payload pattern, and random bit
patterns. Each check runs every vector path this CPU has (``_casts.paths()``), with the
arrays' starts and lengths off the vectors' widths. The floating-point flags NumPy would raise
(overflow, underflow, invalid) are checked per value against ``np.errstate``.
"""
import warnings

import ml_dtypes
import numpy as np
import pytest

from ember.backend import kernels

BF16 = np.dtype(ml_dtypes.bfloat16)
F16, F32 = np.dtype(np.float16), np.dtype(np.float32)

pytestmark = pytest.mark.skipif(kernels._casts is None,
                                reason="ember.backend._casts was not built")

PATHS = kernels._casts.paths() if kernels._casts is not None else ()
KIND = {(F32, F16): 0, (F16, F32): 1, (F32, BF16): 2, (BF16, F32): 3}


@pytest.fixture(params=PATHS)
def path(request, monkeypatch):
    """Each compiled path in turn (0 portable C, 1 C for AVX2, 2 F16C, 3 AVX-512), every
    size taken by the compiled code."""
    monkeypatch.setattr(kernels, "_cast_path", [request.param])
    monkeypatch.setattr(kernels, "_CAST_KINDS",
                        {k: (v[0], 0) for k, v in kernels._CAST_KINDS.items()})
    return request.param


def _bits(a):
    return a.view(np.uint32 if a.itemsize == 4 else np.uint16)


def _reference(src, dtype):
    with np.errstate(all="ignore"):
        return src.astype(dtype)


def _same(src, dtype, path):
    """cast(src) against astype, and the raw convert on an odd start and length."""
    want = _bits(_reference(src, dtype))
    with np.errstate(all="ignore"):  # else an overflow or a NaN sends it to astype, to warn
        got = kernels.cast(src, dtype)
    assert got.dtype == dtype and got.shape == src.shape
    bad = np.flatnonzero(_bits(got) != want)
    assert bad.size == 0, (f"{bad.size} differ, e.g. input bits "
                           f"{[hex(int(b)) for b in _bits(src)[bad[:5]]]}")
    out = np.zeros(src.size, dtype)
    lo, hi = 3, src.size - 5
    kernels._casts.convert(src, out, KIND[(src.dtype, np.dtype(dtype))], lo, hi, path)
    assert (_bits(out)[lo:hi] == want[lo:hi]).all()
    assert (_bits(out)[:lo] == 0).all() and (_bits(out)[hi:] == 0).all()  # no stray writes


ALL16 = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_every_half_pattern_widens_exactly(dtype, path):
    src = ALL16.view(dtype)
    _same(src, F32, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: NumPy raises none either
        kernels.cast(src, F32)


def _f32(bits):
    return (np.asarray(bits, dtype=np.int64) & 0xffffffff).astype(np.uint32).view(np.float32)


def _around(centres, reach):
    """Every float32 within ``reach`` ulp of the given bit patterns, both signs."""
    c = np.asarray(centres, dtype=np.int64)[:, None] + np.arange(-reach, reach + 1)
    c = c[(c >= 0) & (c <= 0x7fffffff)].ravel()
    return np.concatenate([c, c | 0x80000000])


def _ranges(*pairs):
    return np.concatenate([np.arange(lo, hi, dtype=np.int64) for lo, hi in pairs])


def _nans():
    """NaNs: every pattern of the top 10 payload bits (float16 keeps them, bfloat16's quiet
    bit is the top one) with a few low patterns, both signs."""
    top = np.arange(1 << 10, dtype=np.int64) << 13
    low = np.array([0, 1, 0x1000, 0x1fff], dtype=np.int64)
    payload = (top[:, None] | low).ravel()
    payload = payload[payload != 0]
    nan = 0x7f800000 | payload
    return np.concatenate([nan, nan | 0x80000000])


def _random(n, seed):
    return np.random.default_rng(seed).integers(0, 1 << 32, n, dtype=np.uint32)


def _half_down_cases():
    # each finite half's float32 value and the midpoint to the next (the ties), +-3 ulp
    halves = ALL16[:0x7c00].view(np.float16).astype(np.float32).view(np.uint32).astype(np.int64)
    nxt = np.append(halves[1:], 0x47800000)  # above 65504: the tie at 65520 rounds to inf
    mids = (halves + nxt) // 2
    return _f32(np.concatenate([
        _around(halves, 3), _around(mids, 3),
        # contiguous: below 2^-25 (flushed to zero) up across the smallest subnormals, the
        # subnormal/normal boundary at 2^-14, the overflow boundary and inf
        _ranges((0, 5000), (0x007ff000, 0x00801000), (0x32ff0000, 0x33010000),
                (0x337f0000, 0x33810000), (0x387f0000, 0x38810000), (0x477f0000, 0x47810000),
                (0x7f7ff000, 0x7f800001)),
        _nans(), _random(1 << 18, 1)]))


def _bf16_down_cases():
    # every bfloat16 pattern with the 16 dropped bits just below, at and above the tie, and
    # 0, 1, 0xffff: all ties, all NaN kinds, inf, max finite rounding to inf, subnormals
    high = np.arange(1 << 16, dtype=np.int64) << 16
    low = np.array([0, 1, 0x7ffe, 0x7fff, 0x8000, 0x8001, 0xfffe, 0xffff], dtype=np.int64)
    return _f32(np.concatenate([(high[:, None] | low).ravel(), _nans(),
                                _random(1 << 18, 2)]))


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_float32_narrows_bit_for_bit(dtype, path):
    src = _half_down_cases() if dtype == F16 else _bf16_down_cases()
    _same(src, dtype, path)
    _same(src[7:], dtype, path)  # every element in another vector lane
    _same(src[::-1].copy(), dtype, path)


# ---- NumPy's floating-point flags -----------------------------------------------------------
def _numpy_raises(value, dtype):
    """The categories NumPy's astype of this one float32 reports."""
    found = set()
    for name in ("over", "under", "invalid"):
        try:
            with np.errstate(**{"all": "ignore", name: "raise"}):
                np.array([value], np.float32).astype(dtype)
        except FloatingPointError:
            found.add(name)
    return found


FLAG_NAMES = {1: "over", 2: "under", 4: "invalid"}


def _flag_values():
    v = _f32(np.concatenate([
        [0, 1, 0x007fffff, 0x00800000, 0x33000000, 0x33000001, 0x337fffff, 0x33800000,
         0x33c00000, 0x33a00000, 0x38000000, 0x38000001, 0x387fe000, 0x387ff000, 0x387fffff,
         0x38800000, 0x3f800000, 0x477fe000, 0x477fefff, 0x477ff000, 0x477fffff, 0x47800000,
         0x7f7fffff, 0x7f800000, 0x7f800001, 0x7fbfffff, 0x7fc00000, 0x7fffffff],
        _random(300, 3), np.random.default_rng(4).integers(0x30000000, 0x39000000, 300)]))
    return np.concatenate([v, -v])


@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_flags_are_numpys(dtype, path):
    kind = KIND[(F32, dtype)]
    filler = np.ones(40, np.float32)
    for value in _flag_values():
        want = _numpy_raises(value, dtype)
        for pos in (0, 13, 39):  # vector lanes and the tail
            src = filler.copy()
            src[pos] = value
            out = np.empty(40, dtype)
            flags = kernels._casts.convert(src, out, kind, 0, 40, path)
            got = {name for bit, name in FLAG_NAMES.items() if flags & bit}
            assert got == want, (hex(int(np.float32(value).view(np.uint32))), pos)


@pytest.mark.parametrize("dtype, value, category", [
    (F16, 1e6, "over"), (F16, 65520.0, "over"), (F16, 1e-8, "under"),
    (F16, 3 * 2.0 ** -25, "under"), (BF16, np.uint32(0x7f800001).view(np.float32), "invalid"),
])
def test_numpys_warnings_and_errors(dtype, value, category):
    x = np.linspace(-3, 3, 5000).astype(np.float32)
    x[1234] = value
    with np.errstate(**{category: "raise"}):
        with pytest.raises(FloatingPointError, match=category if category != "over"
                           else "overflow"):
            kernels.cast(x, dtype)
    with np.errstate(**{category: "warn"}):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = kernels.cast(x, dtype)
    assert [str(w.message) for w in caught] == [
        {"over": "overflow", "under": "underflow", "invalid": "invalid value"}[category]
        + " encountered in cast"]
    with np.errstate(all="ignore"):
        assert (_bits(got) == _bits(x.astype(dtype))).all()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            kernels.cast(x, dtype)


def test_exact_subnormals_do_not_underflow():
    x = np.full(4096, 2.0 ** -24, np.float32) * np.arange(4096, dtype=np.float32) % 2.0 ** -14
    with np.errstate(under="raise"):
        x.astype(np.float16)  # exact: NumPy reports nothing
        assert (_bits(kernels.cast(x, np.float16)) == _bits(x.astype(np.float16))).all()


# ---- layouts, sizes and fallbacks -----------------------------------------------------------
PAIRS = [(F32, F16), (F16, F32), (F32, BF16), (BF16, F32)]
PAIR_IDS = ["f32-f16", "f16-f32", "f32-bf16", "bf16-f32"]


def _values(shape, dtype, seed=0):
    x = np.asarray(np.random.default_rng(seed).standard_normal(shape), np.float32) * 100
    return np.asarray(x, np.float32).astype(dtype)


def _check_like_astype(src, dtype):
    want = _reference(src, dtype)
    with np.errstate(all="ignore"):
        got = kernels.cast(src, dtype)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    assert got.strides == want.strides
    assert got.flags.c_contiguous == want.flags.c_contiguous
    assert got.flags.f_contiguous == want.flags.f_contiguous
    assert got.flags.writeable and got.flags.owndata == want.flags.owndata
    assert not np.shares_memory(got, src)
    assert (_bits(np.ascontiguousarray(got)) == _bits(np.ascontiguousarray(want))).all()
    return got


@pytest.mark.parametrize("src_dt, dst_dt", PAIRS, ids=PAIR_IDS)
def test_layouts(src_dt, dst_dt, path):
    base = _values((64, 70), src_dt)
    _check_like_astype(base, dst_dt)              # C order
    _check_like_astype(base.T, dst_dt)            # Fortran order: compiled, kept
    _check_like_astype(np.asfortranarray(base), dst_dt)
    _check_like_astype(base[:, ::2], dst_dt)      # strided: astype
    _check_like_astype(base[::-1], dst_dt)        # negative strides: astype
    cube = _values((6, 7, 8), src_dt)
    for perm in ((1, 0, 2), (0, 2, 1), (2, 0, 1), (1, 2, 0), (2, 1, 0)):  # compiled, in
        _check_like_astype(cube.transpose(perm), dst_dt)                 # astype's layout
    _check_like_astype(cube.transpose(1, 0, 2)[:, ::2], dst_dt)  # not one block: astype
    _check_like_astype(cube.transpose(1, 0, 2)[::-1], dst_dt)
    heads = _values((4, 1, 5, 1, 6), src_dt)  # size-1 axes: their strides must match too
    for perm in ((0, 2, 1, 4, 3), (4, 3, 2, 1, 0), (1, 0, 4, 2, 3), (2, 4, 0, 3, 1)):
        _check_like_astype(heads.transpose(perm), dst_dt)
    _check_like_astype(np.lib.stride_tricks.as_strided(heads, (4, 1, 5, 1, 6),
                                                       (4, 0, 0, 0, 1)), dst_dt)
    raw = np.zeros(base.nbytes + 1, np.uint8)
    unaligned = np.frombuffer(raw.data, base.dtype, base.size, offset=1).reshape(base.shape)
    unaligned[...] = base
    assert not unaligned.flags.aligned
    _check_like_astype(unaligned, dst_dt)               # astype


@pytest.mark.parametrize("src_dt, dst_dt", PAIRS, ids=PAIR_IDS)
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 5), (1,), (17,), (5, 1, 33)])
def test_empty_zero_d_and_small(src_dt, dst_dt, shape, path):
    src = _values(shape, src_dt)
    got = _check_like_astype(src, dst_dt)
    assert type(got) is np.ndarray and got.ndim == len(shape)


@pytest.mark.parametrize("src_dt, dst_dt", PAIRS, ids=PAIR_IDS)
def test_default_sizes(src_dt, dst_dt):
    """The thresholds as shipped: small arrays go to astype, large ones compiled; the same."""
    for n in (1, 100, 511, 512, 1024, 16384, 100_003):
        _check_like_astype(_values((n,), src_dt), dst_dt)


@pytest.mark.parametrize("src_dt, dst_dt", [
    (np.float64, np.float16), (np.float16, np.float64), (np.float16, BF16),
    (BF16, np.float16), (np.int32, np.float16), (np.float32, np.float32),
    (np.dtype(">f4"), np.float16), (np.float32, np.dtype(">f2")), (np.float16, np.int16),
])
def test_other_conversions_are_astype(src_dt, dst_dt, path):
    src = np.arange(-600, 600).astype(src_dt)
    _check_like_astype(src, dst_dt)


def test_dtype_spellings(path):
    x = _values((1000,), F32)
    for spelling in (np.float16, "float16", "f2", F16):
        assert (_bits(kernels.cast(x, spelling)) == _bits(x.astype(np.float16))).all()
    assert kernels.cast(x, ml_dtypes.bfloat16).dtype == BF16


def test_device_arrays_and_subclasses_are_astype():
    from tests.backend.fake_cuda import FakeCudaArray
    x = _values((4096,), F32).view(FakeCudaArray)
    got = kernels.cast(x, np.float16)
    assert type(got) is FakeCudaArray
    assert (np.asarray(got).view(np.uint16) == np.asarray(x).astype(np.float16).view(
        np.uint16)).all()
    masked = np.ma.masked_array(_values((4096,), F32), mask=False)
    assert type(kernels.cast(masked, np.float16)) is np.ma.MaskedArray


def test_without_the_extension(monkeypatch):
    x = _values((4096,), F32)
    want = _bits(x.astype(np.float16))
    monkeypatch.setattr(kernels, "_casts", None)
    assert (_bits(kernels.cast(x, np.float16)) == want).all()
    monkeypatch.undo()
    previous = kernels.set_enabled(False)
    try:
        assert (_bits(kernels.cast(x, np.float16)) == want).all()
    finally:
        kernels.set_enabled(previous)


def test_convert_checks_its_arguments():
    src, out = np.ones(16, np.float32), np.empty(16, np.float16)
    with pytest.raises(ValueError):
        kernels._casts.convert(src, out, 0, 0, 17, -1)  # past the buffers
    with pytest.raises(ValueError):
        kernels._casts.convert(src, out, 4, 0, 16, -1)  # no such kind
    with pytest.raises(ValueError):
        kernels._casts.convert(src, out, 0, 0, 16, len(PATHS))  # no such path here
    with pytest.raises(TypeError):
        kernels._casts.convert(src, src[::2], 0, 0, 4, -1)  # not a contiguous buffer


# ---- where ember casts ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_tensor_to_and_back(dtype):
    import ember
    x = _values((300, 200), F32)
    x[0, :4] = [np.inf, -np.inf, np.nan, 1e-30]
    t = ember.tensor(x, requires_grad=True)
    edt = ember.float16 if dtype == F16 else ember.bfloat16
    h = t.to(edt)
    assert (_bits(h.detach()._data) == _bits(_reference(x, dtype))).all()
    g = _values((300, 200), dtype, seed=5)
    h.backward(ember.tensor(g))
    assert (_bits(t.grad._data) == _bits(g.astype(np.float32))).all()


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")  # float16 sums > 65504
@pytest.mark.parametrize("dtype", [F16, BF16], ids=["float16", "bfloat16"])
def test_half_products_use_the_same_bits(dtype):
    """gemm's widened products: the same result with the compiled casts as with astype."""
    from ember.backend import gemm
    a, b, c = _values((96, 80), dtype, 1), _values((80, 72), dtype, 2), _values((72,), dtype, 3)
    got = [gemm.matmul(a, b), gemm.matmul(a, b.T.copy().T), gemm.matmul_add(a, b, c),
           *gemm.matmul_pair(a, b, a.T, _values((96, 72), dtype, 4))]
    previous = kernels.set_enabled(False)
    try:
        want = [gemm.matmul(a, b), gemm.matmul(a, b.T.copy().T), gemm.matmul_add(a, b, c),
                *gemm.matmul_pair(a, b, a.T, _values((96, 72), dtype, 4))]
    finally:
        kernels.set_enabled(previous)
    for g, w in zip(got, want):
        assert g.dtype == dtype and (_bits(g) == _bits(w)).all()
