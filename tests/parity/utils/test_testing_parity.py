"""ember.testing against torch.testing: the same calls pass or fail alike, with the same
exception type and message (library names aside); make_tensor's ranges, shapes, strides
and errors."""
import re
import warnings

import numpy as np
import pytest
import torch
import torch.testing

import ember
import ember.testing
from tests.parity.compare import DEVICE, _on_device

NAN, INF = float("nan"), float("inf")
#: where PyTorch's message names its own issue tracker, ember's stops before that sentence
TRACKER = " If you are a user and see this message during normal operation"


def _neutral(text):
    text = text.replace("<class 'ember._tensor.Tensor'>", "<class 'torch.Tensor'>")
    text = text.replace("ember.nn.parameter", "torch.nn.parameter")
    return text.replace("ember.", "torch.").split(TRACKER)[0]


def outcome(fn, lib):
    """``fn(lib)``'s exception as (type name, message) with library names made neutral."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if lib is ember:
                _on_device(fn, lib)
            else:
                fn(lib)
        except Exception as error:  # noqa: BLE001 - whatever each library raises
            return type(error).__name__, _neutral(str(error))
    return None


def close(lib):
    return lib.testing.assert_close


def T(lib, *args, **kwargs):
    return lib.tensor(*args, **kwargs)


CASES = {
    # tolerances: defaults per dtype, given ones, the both-or-neither rule
    "f32 within": lambda m: close(m)(T(m, [1., 2.]), T(m, [1., 2. + 1e-6])),
    "f32 outside": lambda m: close(m)(T(m, [1., 2., 3.]), T(m, [1., 2.1, 3.])),
    "f32 rel": lambda m: close(m)(T(m, [1000.]), T(m, [1000.01])),
    "f64": lambda m: close(m)(T(m, [1., 2.], dtype=m.float64), T(m, [1., 2. + 1e-6],
                                                                   dtype=m.float64)),
    "f16": lambda m: close(m)(T(m, [1., 2., 3.], dtype=m.half), T(m, [1., 2.1, 3.], dtype=m.half)),
    "bf16": lambda m: close(m)(T(m, [1., 2., 3.], dtype=m.bfloat16),
                               T(m, [1., 2.1, 3.], dtype=m.bfloat16)),
    "c64": lambda m: close(m)(T(m, [1 + 1j, 2]), T(m, [1 + 1j, 2.1 + 1j])),
    "c128": lambda m: close(m)(T(m, [1 + 1j], dtype=m.complex128),
                               T(m, [1 + 2j], dtype=m.complex128)),
    "given tol pass": lambda m: close(m)(T(m, [1., 2.]), T(m, [1., 2.2]), rtol=0.1, atol=0),
    "given tol fail": lambda m: close(m)(T(m, [1., 2.]), T(m, [1., 4.]), rtol=0.1, atol=0),
    "int atol": lambda m: close(m)(T(m, [1, 2]), T(m, [1, 4]), rtol=0, atol=1),
    "rtol only": lambda m: close(m)(T(m, [1.]), T(m, [1.]), rtol=1e-3),
    "atol only in list": lambda m: close(m)([1.0], [1.0], atol=1e-3),
    "negative tol": lambda m: close(m)(T(m, [1.]), T(m, [1.]), rtol=-1, atol=-1),
    # dtypes compared exactly
    "int": lambda m: close(m)(T(m, [1, 2, 3]), T(m, [1, 5, 3])),
    "bool": lambda m: close(m)(T(m, [True, False]), T(m, [True, True])),
    "int8 wide": lambda m: close(m)(T(m, [127, 0], dtype=m.int8), T(m, [-128, 0], dtype=m.int8)),
    "uint8": lambda m: close(m)(T(m, [5, 0], dtype=m.uint8), T(m, [7, 0], dtype=m.uint8),
                                rtol=0, atol=2),
    "int64 wrap": lambda m: close(m)(T(m, [2 ** 62, 0]), T(m, [-2 ** 62, 0])),
    "int as float32": lambda m: close(m)(T(m, [16777217]), T(m, [16777216]), rtol=0, atol=0.5),
    # NaN and infinities
    "nan": lambda m: close(m)(T(m, [1., NAN, 3.]), T(m, [1., NAN, 4.])),
    "nan equal": lambda m: close(m)(T(m, [NAN, 1.]), T(m, [NAN, 1.]), equal_nan=True),
    "nan equal partial": lambda m: close(m)(T(m, [NAN, 1.]), T(m, [NAN, 2.]), equal_nan=True),
    "nan order": lambda m: close(m)(T(m, [1., 9., NAN, NAN]), T(m, [2., 1., 1., NAN])),
    "complex nan": lambda m: close(m)(T(m, [complex(NAN, 0)]), T(m, [complex(NAN, 0)]),
                                      equal_nan=True),
    "inf": lambda m: close(m)(T(m, [INF, -INF]), T(m, [INF, -INF])),
    "inf sign": lambda m: close(m)(T(m, [1., INF]), T(m, [1., -INF])),
    "inf finite": lambda m: close(m)(T(m, [INF, 1.]), T(m, [1e38, 1.])),
    "zero expected": lambda m: close(m)(T(m, [0., 1.]), T(m, [1., 0.])),
    "f32 overflow": lambda m: close(m)(T(m, [3e38]), T(m, [-3e38])),
    # shapes, attributes
    "2d index": lambda m: close(m)(T(m, [[1., 2., 3.], [4., 5., 6.]]),
                                   T(m, [[1., 2., 3.], [4., 5.5, 6.]])),
    "3d index": lambda m: close(m)(m.zeros(2, 3, 4), m.zeros(2, 3, 4).index_fill(2, T(m, [3]), 1.)),
    "ties": lambda m: close(m)(T(m, [[1., 2.], [3., 4.]]), T(m, [[2., 3.], [4., 5.]])),
    "percent": lambda m: close(m)(m.ones(3000), m.cat([m.zeros(1), m.ones(2999)])),
    "empty": lambda m: close(m)(m.zeros(0, 3), m.zeros(0, 3)),
    "shape": lambda m: close(m)(m.zeros(2), m.zeros(3)),
    "dtype": lambda m: close(m)(m.zeros(2), m.zeros(2, dtype=m.float64)),
    "int dtypes": lambda m: close(m)(T(m, [1], dtype=m.int32), T(m, [1])),
    "dtype off": lambda m: close(m)(T(m, [1., 2.]), T(m, [1., 2.0001], dtype=m.float64),
                                    check_dtype=False),
    "int float off": lambda m: close(m)(T(m, [1, 2]), T(m, [1., 2.5]), check_dtype=False),
    "bool int off": lambda m: close(m)(T(m, [True, False]), T(m, [1, 1]), check_dtype=False),
    "half bf16 off": lambda m: close(m)(T(m, [1.], dtype=m.bfloat16),
                                        T(m, [1.0005], dtype=m.half), check_dtype=False),
    "stride": lambda m: close(m)(m.zeros(2, 3).t(), m.zeros(3, 2), check_stride=True),
    "stride unchecked": lambda m: close(m)(m.zeros(2, 3).t(), m.zeros(3, 2)),
    "noncontiguous": lambda m: close(m)(m.arange(6.).reshape(2, 3).t(),
                                        m.arange(6.).reshape(2, 3).t().contiguous() + 1e-3),
    "meta": lambda m: close(m)(m.zeros(2, device="meta"), m.ones(2, device="meta")),
    "meta cpu": lambda m: close(m)(m.zeros(2, device="meta"), m.ones(2, device="cpu")),
    "meta cpu off": lambda m: close(m)(m.zeros(2, device="meta"), m.ones(2, device="cpu"),
                                       check_device=False),
    "requires grad": lambda m: close(m)(m.zeros(2, requires_grad=True), m.ones(2)),
    "parameter": lambda m: close(m)(m.nn.Parameter(m.zeros(2)), m.zeros(2)),
    "parameter strict": lambda m: close(m)(m.nn.Parameter(m.zeros(2)), m.zeros(2),
                                           allow_subclasses=False),
    # 0-d tensors and scalars
    "0d": lambda m: close(m)(T(m, 1.5), T(m, 2.0)),
    "0d int": lambda m: close(m)(T(m, 1), T(m, 3)),
    "0d bool": lambda m: close(m)(T(m, True), T(m, False)),
    "0d half": lambda m: close(m)(T(m, 1.1, dtype=m.float16), T(m, 1.2, dtype=m.float16)),
    "0d bf16": lambda m: close(m)(T(m, 1.1, dtype=m.bfloat16), T(m, 1.2, dtype=m.bfloat16)),
    "0d complex": lambda m: close(m)(T(m, 1 + 1j), T(m, 1 + 2j)),
    "0d nan": lambda m: close(m)(T(m, NAN), T(m, NAN)),
    "0d bool tol": lambda m: close(m)(T(m, True), T(m, False), rtol=0.5, atol=0.5),
    "float": lambda m: close(m)(1.0, 1.1),
    "float zero": lambda m: close(m)(1.0, 0.0),
    "int float": lambda m: close(m)(1, 1.0),
    "scalar int float off": lambda m: close(m)(1, 1.5, check_dtype=False),
    "bool int": lambda m: close(m)(True, 1),
    "bools": lambda m: close(m)(True, False),
    "numpy bool": lambda m: close(m)(np.bool_(True), False),
    "numpy scalars": lambda m: close(m)(np.float32(1.0), np.float32(1.1)),
    "numpy int": lambda m: close(m)(np.int32(1), 2),
    "numpy int same": lambda m: close(m)(np.int64(3), 3),
    "scalar nan": lambda m: close(m)(NAN, NAN),
    "scalar nan equal": lambda m: close(m)(NAN, NAN, equal_nan=True),
    "scalar inf": lambda m: close(m)(INF, -INF),
    "scalar complex": lambda m: close(m)(1 + 2j, 1 + 2.1j),
    "scalar tol": lambda m: close(m)(1.0, 1.5, rtol=0, atol=0.2),
    "none": lambda m: close(m)(None, 1),
    "nones": lambda m: close(m)(None, None),
    # NumPy arrays and what is not a tensor-like
    "numpy": lambda m: close(m)(np.array([1., 2.]), np.array([1., 2.1])),
    "numpy f32": lambda m: close(m)(np.array([1., 2.], dtype=np.float32),
                                    np.array([1., 2.1], dtype=np.float32)),
    "numpy int arrays": lambda m: close(m)(np.array([1, 2]), np.array([1, 3])),
    "numpy 0d": lambda m: close(m)(np.array(1.0), np.array(2.0)),
    "numpy dtypes": lambda m: close(m)(np.array([1., 2.]), np.array([1, 2])),
    "tensor numpy": lambda m: close(m)(T(m, [1.]), np.array([1.])),
    "scalar tensor": lambda m: close(m)(1.0, T(m, 1.0)),
    "strings": lambda m: close(m)("a", "a"),
    "objects": lambda m: close(m)(1, "a"),
    # containers
    "sequences": lambda m: close(m)((1, 2.0), [1, 2.5]),
    "length": lambda m: close(m)([1.0], [1.0, 2]),
    "length first": lambda m: close(m)([T(m, 1.), [1]], [T(m, 2.), [1, 2]]),
    "nested": lambda m: close(m)([[1, [T(m, [1.])]]], [[1, [T(m, [2.])]]]),
    "mixed list": lambda m: close(m)([T(m, [1.]), 2.0, np.array(3.0)],
                                     (T(m, [1.]), 2.0, np.array(3.0))),
    "item type": lambda m: close(m)([1], [T(m, 1)]),
    "keys": lambda m: close(m)({"a": 1, "b": 2}, {"a": 1, "c": 3}),
    "int keys": lambda m: close(m)({1: 1, 2: 2}, {1: 1, 3: 3}),
    "mapping item": lambda m: close(m)({"a": [1, 2]}, {"a": [1, 3]}),
    "mapping order": lambda m: close(m)({"b": T(m, [1.]), "a": 2}, {"a": 2, "b": T(m, [1.])}),
    "unsortable keys": lambda m: close(m)({1: 1, "a": 2}, {1: 1, "a": 3}),
    "size": lambda m: close(m)(m.Size([2]), m.Size([3])),
    "bytes": lambda m: close(m)(b"ab", b"ac"),
    # msg
    "msg str": lambda m: close(m)(T(m, [1.]), T(m, [2.]), msg="custom"),
    "msg fn": lambda m: close(m)(T(m, [1., 2., 3.]), T(m, [1., 4., 5.]),
                                 msg=lambda s: f"Header\n\n{s}\n\nFooter"),
    "msg fn item": lambda m: close(m)({"a": [1, 2]}, {"a": [1, 3]}, msg=lambda s: "X" + s + "Y"),
    "msg str item": lambda m: close(m)({"a": [1, 2]}, {"a": [1, 3]}, msg="S"),
    "msg fn shape": lambda m: close(m)(m.zeros(2), m.zeros(3), msg=lambda s: s.lower()),
    "msg ignored for tol": lambda m: close(m)(1.0, 1.0, rtol=1e-3, msg="m"),
    "msg ignored for length": lambda m: close(m)([1.0], [1.0, 2], msg="m"),
    "msg fn type": lambda m: close(m)(1, "a", msg=lambda s: "X"),
    # the deprecated assert_allclose
    "allclose list": lambda m: m.testing.assert_allclose([1., 2.], [1., 2.1]),
    "allclose loose": lambda m: m.testing.assert_allclose(T(m, [1.]), T(m, [1.00002])),
    "allclose nan": lambda m: m.testing.assert_allclose(T(m, [1., NAN]), [1., NAN]),
    "allclose dtypes": lambda m: m.testing.assert_allclose(T(m, [1, 2]), [1., 2.5]),
    "allclose f64": lambda m: m.testing.assert_allclose(T(m, [1.], dtype=m.float64),
                                                        T(m, [1.0000001], dtype=m.float64)),
    "allclose half": lambda m: m.testing.assert_allclose(T(m, [1.], dtype=m.half),
                                                         T(m, [1.001], dtype=m.half)),
    "allclose scalar": lambda m: m.testing.assert_allclose(T(m, [1.]), 1.1),
    "allclose rtol": lambda m: m.testing.assert_allclose(1.0, 1.0001, rtol=1e-3),
    "allclose msg": lambda m: m.testing.assert_allclose(1.0, 1.1, msg="m"),
    "allclose ints": lambda m: m.testing.assert_allclose([1, 2], [1, 3]),
    "allclose shape": lambda m: m.testing.assert_allclose(m.zeros(2), m.zeros(3)),
}
#: on a device these differ: "meta != cpu" stays, a tensor made without a device is elsewhere
HOST_ONLY = {"meta cpu", "meta cpu off", "negative tol"}  # the last: its message shows tensors


@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_close_agrees(name):
    if DEVICE is not None and name in HOST_ONLY:
        pytest.skip("compares a CPU tensor")
    fn = CASES[name]
    assert outcome(fn, ember) == outcome(fn, torch)


def test_assert_allclose_warns_as_torch():
    for lib in (torch, ember):
        with pytest.warns(FutureWarning) as record:
            lib.testing.assert_allclose(1.0, 1.0)
        assert str(record[0].message) == (
            "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a "
            "future release. Please use `torch.testing.assert_close()` instead. You can find "
            "detailed upgrade instructions in https://github.com/pytorch/pytorch/issues/61844.")


def _random_pair(rng, dtype):
    size = int(rng.integers(1, 6))
    if dtype == "bool":
        base = rng.integers(0, 2, size).astype(bool)
        other = base.copy()
        other[rng.integers(0, size)] ^= bool(rng.random() < .5)
        return base, other
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        base = rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
        return base, (base + rng.integers(-3, 4, size)).astype(dtype)
    scale = 10.0 ** rng.integers(-8, 8)
    base = rng.standard_normal(size) * scale
    if dtype.startswith("complex"):
        base = base + 1j * rng.standard_normal(size) * scale
    other = base * (1 + 10.0 ** rng.uniform(-9, -1, size) * rng.choice([-1, 1], size))
    if rng.random() < .2:
        other[rng.integers(0, size)] = rng.choice([NAN, INF, -INF, 0.0])
    return base, other


def _rounded(result):
    number = re.compile(r"\d+\.\d+(e[-+]\d+)?")
    return result[0], number.sub(lambda m: f"{float(m.group()):.5g}", result[1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64",
                                   "complex128", "int8", "uint8", "int32", "int64", "bool"])
def test_random_pairs_near_the_tolerances(dtype):
    rng = np.random.default_rng(sum(map(ord, dtype)))
    for _ in range(60):
        base, other = _random_pair(rng, dtype)
        kwargs = {}
        if rng.random() < .3:
            kwargs = dict(rtol=float(10.0 ** rng.uniform(-8, -1)),
                          atol=float(10.0 ** rng.uniform(-9, -1)))
        kwargs["equal_nan"] = bool(rng.random() < .2)
        if rng.random() < .3:
            base, other = base[:1].reshape(()), other[:1].reshape(())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # complex -> real casts of the test data
            pair = [torch.tensor(a).to(getattr(torch, dtype)) for a in (base, other)]
        # bfloat16: the same values handed over in float32 (NumPy has no bfloat16)
        host = [p.float().numpy() if dtype == "bfloat16" else p.numpy() for p in pair]

        def run(lib):
            args = pair if lib is torch else [lib.tensor(h).to(getattr(lib, dtype)) for h in host]
            lib.testing.assert_close(*args, **kwargs)
        got, expected = outcome(run, ember), outcome(run, torch)
        if dtype.startswith("complex") and got is not None and expected is not None:
            # PyTorch's complex abs rounds differently in its vectorized loop and in the
            # loop's tail (SLEEF's hypot, the C library's): the last digit may differ
            got, expected = _rounded(got), _rounded(expected)
        assert got == expected, (pair, kwargs)


# ---- make_tensor ----------------------------------------------------------------------------

def _make(lib, *shape, **kwargs):
    dtype = getattr(lib, kwargs.pop("dtype"))
    device = "cpu" if lib is torch else (DEVICE or "cpu")
    return lib.testing.make_tensor(*shape, dtype=dtype, device=device, **kwargs)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "complex64",
                                   "complex128", "uint8", "int8", "int16", "int32", "int64",
                                   "bool"])
@pytest.mark.parametrize("kwargs", [{}, dict(low=-2, high=3), dict(low=0.5, high=4.5),
                                    dict(noncontiguous=True), dict(exclude_zero=True, low=0)])
def test_make_tensor_like_torch(dtype, kwargs):
    shape = (64, 5)
    t = _make(torch, *shape, dtype=dtype, **kwargs)
    e = _make(ember, *shape, dtype=dtype, **kwargs)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    assert e.is_contiguous() == t.is_contiguous() and e.storage_offset() == t.storage_offset()
    as_real = np.complex128 if t.dtype.is_complex else np.float64
    tv, ev = t.to(torch.float32 if dtype == "bfloat16" else t.dtype).numpy().astype(as_real), \
        e.cpu().float().numpy().astype(as_real) if dtype == "bfloat16" else \
        e.cpu().numpy().astype(as_real)
    for part in (np.real, np.imag) if t.dtype.is_complex else (np.real,):
        low = kwargs.get("low", 0 if dtype in ("uint8", "bool") else -9)
        high = kwargs.get("high", 9 if t.dtype.is_floating_point or t.dtype.is_complex else 10)
        if dtype == "bool":
            low, high = max(low, 0), min(high, 2)
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            low, high = int(np.ceil(low)), int(np.ceil(high))
        # both within the same half-open range (ember's values are its own random numbers)
        for values in (part(tv), part(ev)):
            assert values.min() >= low and values.max() <= high
        if kwargs.get("exclude_zero"):
            assert (part(ev) != 0).all() or t.dtype.is_complex
        # and both reach the same distinct integer values
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            assert set(np.unique(part(ev))) == set(np.unique(part(tv)))


@pytest.mark.parametrize("kwargs", [
    dict(dtype="float32", requires_grad=True),  # complex: ember has no complex autograd
    dict(dtype="float64", requires_grad=True, noncontiguous=True),
])
def test_make_tensor_requires_grad_like_torch(kwargs):
    t, e = _make(torch, 2, 3, **kwargs), _make(ember, 2, 3, **kwargs)
    assert (e.requires_grad, e.is_leaf) == (t.requires_grad, t.is_leaf) == (True, True)


@pytest.mark.parametrize("shape", [(), (0,), (1,), (3,), ((2, 3),), ([2, 3],), (2, 0, 3),
                                   (1, 1, 1)])
def test_make_tensor_shapes_like_torch(shape):
    for noncontiguous in (False, True):
        t = _make(torch, *shape, dtype="float32", noncontiguous=noncontiguous)
        e = _make(ember, *shape, dtype="float32", noncontiguous=noncontiguous)
        assert (tuple(e.shape), e.is_contiguous()) == (tuple(t.shape), t.is_contiguous())
        if t.numel():  # ember's empty tensors have NumPy's zero strides (all its factories)
            assert e.stride() == t.stride()


@pytest.mark.parametrize("kwargs", [
    dict(dtype="float32", low=2, high=1), dict(dtype="int64", low=3, high=3),
    dict(dtype="int32", low=3.5, high=3.5), dict(dtype="float32", low=NAN),
    dict(dtype="float64", high=NAN), dict(dtype="uint8", low=-5, high=-1),
    dict(dtype="int8", low=200, high=300), dict(dtype="bool", low=2, high=3),
    dict(dtype="float16", low=1e6, high=1e7), dict(dtype="int32", requires_grad=True),
    dict(dtype="bool", requires_grad=True),
    dict(dtype="float32", noncontiguous=True, memory_format="contiguous_format"),
])
def test_make_tensor_errors_like_torch(kwargs):
    def run(lib):
        args = dict(kwargs)
        if "memory_format" in args:
            args["memory_format"] = getattr(lib, args["memory_format"])
        _make(lib, 2, 3, **args)
    assert outcome(run, ember) == outcome(run, torch) is not None


def test_make_tensor_unsupported_dtype_like_torch():
    def run(lib):
        lib.testing.make_tensor(2, dtype=None, device="cpu")
    got, expected = outcome(run, ember), outcome(run, torch)
    assert got[0] == expected[0] and expected[1].startswith(got[1])
    assert re.match(r"The requested dtype 'None' is not supported", got[1])


def test_make_tensor_low_equal_high_warns_like_torch():
    for lib in (torch, ember):
        with pytest.warns(FutureWarning, match=r"^Passing `low==high` to `torch.testing"):
            t = _make(lib, 3, dtype="float32", low=2.0, high=2.0)
        assert t.tolist() == [2.0, 2.0, 2.0]
