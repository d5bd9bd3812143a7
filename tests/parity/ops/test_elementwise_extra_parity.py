"""Parity with PyTorch for copysign, float_power, frac, gcd, lcm, heaviside, signbit,
logaddexp2, nextafter, ldexp, frexp, the bit shifts (and ``<<``/``>>``), sinc, i0 and xlogy:
values and gradients in float32 and float64, broadcasting, non-contiguous inputs, integer
inputs' result dtypes, special values, in-place forms, out= and the errors."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def positive(shape, dtype, seed=0):
    return (np.abs(randn(shape, dtype, seed)) + 0.2).astype(dtype)


# (name, fn(lib, a, b), make a, make b): differentiable binary ops
BINARY = [
    ("copysign", lambda lib, a, b: lib.copysign(a, b), randn, randn),
    ("logaddexp2", lambda lib, a, b: lib.logaddexp2(a, b), randn, randn),
    ("nextafter", lambda lib, a, b: lib.nextafter(a, b), randn, randn),
    ("xlogy", lambda lib, a, b: lib.xlogy(a, b), randn, positive),
    ("float_power", lambda lib, a, b: lib.float_power(a, b), positive, randn),
    ("ldexp", lambda lib, a, b: lib.ldexp(a, b), randn, randn),
]
UNARY = [
    ("frac", lambda lib, a: lib.frac(a * 3)),
    ("sinc", lambda lib, a: lib.sinc(a)),
    ("i0", lambda lib, a: lib.i0(a)),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn,ma,mb", BINARY, ids=[c[0] for c in BINARY])
def test_binary_values_and_gradients(name, fn, ma, mb, dtype):
    compare(fn, ma((3, 4), dtype, 1), mb((3, 4), dtype, 2))
    compare(fn, ma((2, 3, 4), dtype, 3), mb((4,), dtype, 4))  # broadcast
    compare(fn, ma((3, 4), dtype, 5), mb((3, 4), dtype, 6), noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn", UNARY, ids=[c[0] for c in UNARY])
def test_unary_values_and_gradients(name, fn, dtype):
    compare(fn, randn((3, 4), dtype, 1))
    compare(fn, randn((3, 4), dtype, 2), noncontiguous=True)
    compare(fn, randn((), dtype, 3))


def test_double_backward():
    def second(lib, x, y):
        out = (lib.sinc(x) * lib.xlogy(x, y) + lib.i0(y)).sum()
        gx, gy = lib.autograd.grad(out, (x, y), create_graph=True)
        return (gx * gx).sum() + (gy * gy).sum()
    compare(second, randn((5,), np.float64, 1), positive((5,), np.float64, 2))


def test_special_values():
    vals = np.array([0.0, -0.0, 1.0, -1.5, 0.5, np.inf, -np.inf, np.nan], np.float32)
    for fn in (lambda lib, x: lib.sinc(x), lambda lib, x: lib.frac(x),
               lambda lib, x: lib.signbit(x), lambda lib, x: lib.i0(x),
               lambda lib, x: lib.copysign(x, -1.0), lambda lib, x: lib.frexp(x)):
        compare(fn, vals, grad=False)
    y = np.array([0.0, np.nan, 0.0, 1.0, -1.0, 2.0, 0.0, 3.0], np.float32)
    compare(lambda lib, a, b: lib.xlogy(a, b), vals, y, grad=False)
    compare(lambda lib, a, b: lib.heaviside(a, b), vals, y, grad=False)
    compare(lambda lib, a, b: lib.nextafter(a, b), vals, y, grad=False)


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
def test_integer_inputs_promote_like_torch(dtype):
    a = np.array([3, 0, 1, 2], dtype)
    b = np.array([1, 2, 0, 3], dtype)
    for fn in (lambda lib, x: lib.sinc(x), lambda lib, x: lib.i0(x),
               lambda lib, x: lib.signbit(x), lambda lib, x, y: lib.xlogy(x, y),
               lambda lib, x, y: lib.copysign(x, y), lambda lib, x, y: lib.float_power(x, y),
               lambda lib, x, y: lib.ldexp(x, y)):
        args = (a,) if fn.__code__.co_argcount == 2 else (a, b)
        compare(fn, *args)


def test_integer_ops_exact():
    a = np.array([[12, -18, 0, 7], [0, 5, -9, 100]], np.int64)
    b = np.array([8, 4, 0, -21], np.int64)
    for name in ("gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift", "heaviside"):
        compare(lambda lib, x, y: getattr(lib, name)(x, y), a, np.abs(b) % 9)
    compare(lambda lib, x, y: lib.gcd(x, y), a.astype(np.uint8), b.astype(np.int8))
    shifts = np.array([-1, 0, 63, 64], np.int64)
    compare(lambda lib, x, y: lib.bitwise_left_shift(x, y), a, shifts)
    compare(lambda lib, x, y: lib.bitwise_right_shift(x, y), a, shifts)
    compare(lambda lib, x: (x << 2, x >> 1, 1 << x.abs() % 8, 256 >> x.abs() % 8), a)
    compare(lambda lib, x: (x << 1, x >> 1), np.array([200, 100, 7], np.uint8))
    compare(lambda lib, x: lib.bitwise_left_shift(3, x.abs() % 8), a)


def test_frexp_and_ldexp():
    x = np.array([8.0, -0.75, 1e-40, 3.0, 0.0], np.float32)
    compare(lambda lib, t: tuple(lib.frexp(t)), x, grad=False)
    compare(lambda lib, t: lib.frexp(t).mantissa, randn((4,), np.float64, 1))
    compare(lambda lib, t: t.frexp()[0], randn((4,), np.float64, 2))
    e = np.array([2, -1, 0, 3], np.int64)
    compare(lambda lib, t, k: lib.ldexp(t, k), randn((4,), np.float32, 3), e)
    compare(lambda lib, t, k: lib.ldexp(t, k), randn((4,), np.float64, 4), e)


def test_float_power_dtypes_and_scalars():
    x = randn((3,), np.float32, 1)
    compare(lambda lib, t: lib.float_power(t, 2), x)
    compare(lambda lib, t: lib.float_power(2, t), x)
    compare(lambda lib, t: t.float_power(0.5), np.abs(x))
    compare(lambda lib, t: lib.float_power(t.to(lib.complex64), 2), x, grad=False)
    compare(lambda lib, t: t.double().float_power_(2), x)
    assert error_of(lambda: torch.ones(2).float_power_(2)) == \
        error_of(lambda: ember.ones(2).float_power_(2))


def test_inplace_forms_and_methods():
    x, y = randn((3, 4), np.float64, 1), randn((4,), np.float64, 2)
    for name in ("copysign", "nextafter", "xlogy", "ldexp"):
        compare(lambda lib, a, b: getattr(a * 1, name + "_")(b), x, np.abs(y) + 0.1)
        compare(lambda lib, a, b: getattr(a, name)(b), x, np.abs(y) + 0.1)
    for name in ("frac", "sinc", "i0"):
        compare(lambda lib, a: getattr(a * 1, name + "_")(), x)
    ints = np.array([12, 6, 5], np.int64)
    for name in ("gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift"):
        compare(lambda lib, a, b: getattr(a.clone(), name + "_")(b), ints, ints % 4)
    compare(lambda lib, a: a.signbit(), x)
    compare(lambda lib, a, b: a.heaviside(b), x, y, grad=False)


def test_out():
    x, y = randn((3,), np.float32, 1), randn((3,), np.float32, 2)
    for name in ("copysign", "logaddexp2", "nextafter", "xlogy", "heaviside"):
        compare(lambda lib, a, b: getattr(lib, name)(a, b, out=lib.empty(3)), x, y, grad=False)
    compare(lambda lib, a: lib.sinc(a, out=lib.empty(3, dtype=lib.float64)), x, grad=False)
    compare(lambda lib, a: lib.float_power(a, 2, out=lib.empty(3, dtype=lib.float64)), x,
            grad=False)
    compare(lambda lib, a: tuple(lib.frexp(a, out=(lib.empty(3), lib.empty(3, dtype=lib.int32)))),
            x, grad=False)


@pytest.mark.parametrize("case", [
    lambda lib: lib.gcd(lib.tensor([1.5]), lib.tensor([2.0])),
    lambda lib: lib.lcm(lib.tensor([True]), lib.tensor([True])),
    lambda lib: lib.gcd(lib.tensor([4]), 2),
    lambda lib: lib.frac(lib.tensor([3])),
    lambda lib: lib.logaddexp2(lib.tensor([1]), lib.tensor([2])),
    lambda lib: lib.nextafter(lib.tensor([1]), lib.tensor([2])),
    lambda lib: lib.nextafter(lib.tensor([1.0]), 2.0),
    lambda lib: lib.heaviside(lib.tensor([1]), lib.tensor([1.0])),
    lambda lib: lib.heaviside(lib.tensor([1.0]), 1),
    lambda lib: lib.frexp(lib.tensor([1])),
    lambda lib: lib.bitwise_left_shift(lib.tensor([1.0]), 1),
    lambda lib: lib.tensor([1.0]) << 1,
    lambda lib: lib.tensor([True]) >> lib.tensor([True]),
    lambda lib: lib.copysign(lib.ones(2), lib.ones(3)),
    lambda lib: lib.xlogy(lib.ones(2, 3), lib.ones(4)),
    lambda lib: lib.tensor([1, 2]).xlogy_(lib.tensor([1, 2])),
    lambda lib: lib.tensor([1, 2]).sinc_(),
    lambda lib: lib.frac(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.signbit(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.copysign(lib.ones(2, dtype=lib.complex64), 1.0),
    lambda lib: lib.xlogy(lib.ones(2, dtype=lib.complex64), 1.0),
    lambda lib: lib.xlogy(2, 3),
    lambda lib: lib.bitwise_left_shift(2, 3),
    lambda lib: lib.float_power(2, 3),
    lambda lib: lib.copysign(2, lib.ones(2)),
    lambda lib: lib.bitwise_right_shift(2, 3),
    lambda lib: lib.ldexp(2.0, lib.tensor([1])),
    lambda lib: lib.float_power(lib.ones(2), 2, out=lib.empty(2)),
    lambda lib: lib.signbit(lib.ones(2), out=lib.empty(2)),
    lambda lib: lib.frexp(lib.ones(2), out=(lib.empty(2), lib.empty(2, dtype=lib.int64))),
    lambda lib: lib.frexp(lib.ones(2), out=(lib.empty(2, dtype=lib.float64),
                                            lib.empty(2, dtype=lib.int32))),
])
def test_errors_match_torch(case):
    assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


def test_heaviside_has_no_derivative():
    def run(lib):
        x = lib.tensor([1.0, -1.0], requires_grad=True)
        return lib.heaviside(x, lib.tensor([0.5, 0.5])).sum().backward()
    assert error_of(lambda: run(ember)) == error_of(lambda: run(torch))
    x = ember.tensor([1.0, -1.0], requires_grad=True)
    assert not ember.signbit(x).requires_grad


def test_empty_and_zero_dim():
    for shape in [(0,), (2, 0), ()]:
        a, b = randn(shape, np.float32, 1), randn(shape, np.float32, 2)
        for name, fn, _, _ in BINARY:
            compare(fn, a, np.abs(b) + 0.5)
        for name, fn in UNARY:
            compare(fn, a)


OUT_DTYPE_CASES = {
    "copysign": lambda lib, x, out: lib.copysign(x, -1.0, out=out),
    "float_power": lambda lib, x, out: lib.float_power(x, 2, out=out),
    "signbit": lambda lib, x, out: lib.signbit(x, out=out),
    "sinc": lambda lib, x, out: lib.sinc(x, out=out),
    "xlogy": lambda lib, x, out: lib.xlogy(x, 2.0, out=out),
    "ldexp": lambda lib, x, out: lib.ldexp(x, lib.tensor([1, 2, 3]), out=out),
    "frac": lambda lib, x, out: lib.frac(x, out=out),
    "gcd": lambda lib, x, out: lib.gcd(x.long(), lib.tensor([4, 6, 8]), out=out),
    "heaviside": lambda lib, x, out: lib.heaviside(x, lib.tensor(0.5, dtype=x.dtype), out=out),
    "bitwise_left_shift": lambda lib, x, out: lib.bitwise_left_shift(x.long(), 1, out=out),
}


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64", "int32", "bool"])
@pytest.mark.parametrize("case", sorted(OUT_DTYPE_CASES))
def test_out_dtypes_as_torch(case, out_dtype):
    x = np.array([[0.5, -1.5, 2.0], [0.25, 3.0, -0.75]], np.float32)
    if case == "ldexp" and out_dtype == "float64":
        pytest.skip("PyTorch fails an internal assert there (a float32 result, float64 out)")

    def run(lib):
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        result = OUT_DTYPE_CASES[case](lib, lib.tensor(x), out)
        assert result is out
        return str(out.dtype).split(".")[-1], tuple(out.shape), out.tolist()
    assert error_of(lambda: run(ember)) == error_of(lambda: run(torch))


def test_top_level_inplace_functions():
    x = randn((3,), np.float64, 1)
    for name in ("frac_", "sinc_", "i0_"):
        compare(lambda lib, a: getattr(lib, name)(a * 1), x)
    compare(lambda lib, a: lib.xlogy_(a * 1, 2.0), x)
    compare(lambda lib, a, e: lib.ldexp_(a * 1, e), x, np.array([1, -2, 3]))
    for name in ("gcd_", "lcm_"):
        compare(lambda lib, a, b: getattr(lib, name)(a.clone(), b), np.array([12, 6]),
                np.array([8, 4]))
