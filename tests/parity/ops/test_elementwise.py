"""Parity with PyTorch for element-wise ops: arithmetic (with broadcasting,
Python scalars on either side, in-place forms and type promotion), unary
math, clamp, maximum/minimum, lerp, addcmul, comparisons and logic, where
and masked_fill. Values, dtypes and gradients come from torch."""
import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def uniform(shape, dtype, lo, hi, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, shape).astype(dtype)


def away_from_zero(shape, dtype, seed=0, margin=0.2):
    r = np.random.default_rng(seed).standard_normal(shape)
    return (np.sign(r) * (np.abs(r) + margin)).astype(dtype)


def off_half(shape, dtype, seed=0):
    """Values at least 0.1 from every integer and half-integer (rounding is unambiguous)."""
    r = np.random.default_rng(seed).integers(-6, 6, shape) + \
        np.random.default_rng(seed + 1).choice([0.15, 0.3, 0.65, 0.85], shape)
    return r.astype(dtype)


# ---- binary arithmetic with broadcasting --------------------------------------------------
BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((4,), (2, 3, 1)),
                    ((3, 4), ())]

BINARY = {
    "add": lambda lib, a, b: a + b,
    "sub": lambda lib, a, b: a - b,
    "mul": lambda lib, a, b: a * b,
    "div": lambda lib, a, b: a / b,
    "add_fn_alpha": lambda lib, a, b: lib.add(a, b, alpha=2.5),
    "sub_fn_alpha": lambda lib, a, b: lib.sub(a, b, alpha=-1.5),
    "mul_fn": lambda lib, a, b: lib.mul(a, b),
    "div_fn": lambda lib, a, b: lib.div(a, b),
    "true_divide": lambda lib, a, b: lib.true_divide(a, b),
    "pow": lambda lib, a, b: a.abs() ** b,
    "pow_fn": lambda lib, a, b: lib.pow(a.abs() + 0.5, b),
    "remainder": lambda lib, a, b: a % b,
    "remainder_fn": lambda lib, a, b: lib.remainder(a, b),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_broadcast(op, shapes, dtype):
    sa, sb = shapes
    a = away_from_zero(sa, dtype, seed=1)
    b = away_from_zero(sb, dtype, seed=2, margin=0.5)
    if op.startswith("remainder"):
        # keep away from the discontinuities of a % b (where a / b is an integer):
        # 0.2 <= |a| <= 0.9 and 1 <= |b| <= 2 puts every |a / b| in [0.1, 0.9]
        r = np.random.default_rng(3)
        a = (r.choice([-1, 1], sa) * r.uniform(0.2, 0.9, sa)).astype(dtype)
        b = (r.choice([-1, 1], sb) * r.uniform(1.0, 2.0, sb)).astype(dtype)
    compare(BINARY[op], a, b)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "pow", "add_fn_alpha"])
def test_binary_noncontiguous(op, dtype):
    a = away_from_zero((3, 4), dtype, seed=4)
    b = away_from_zero((3, 4), dtype, seed=5, margin=0.5)
    compare(BINARY[op], a, b, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_noncontiguous_broadcast_mixed(dtype):
    a = randn((4, 3), dtype, seed=6)
    b = randn((3,), dtype, seed=7)
    compare(lambda lib, x, y: x * y - y / (x * x + 1), a, b, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_floor_divide_values(dtype):
    # torch has no derivative for floor_divide: compare values only
    a = off_half((3, 4), dtype, seed=8)
    b = away_from_zero((4,), dtype, seed=9, margin=0.5)
    compare(lambda lib, x, y: x // y, a, b, grad=False)
    compare(lambda lib, x, y: lib.floor_divide(x, y), a, b, grad=False)
    compare(lambda lib, x, y: lib.div(x, y, rounding_mode="floor"), a, b, grad=False)
    compare(lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"), a, b, grad=False)


def test_integer_floor_divide_and_remainder_signs():
    a = np.array([7, -7, 7, -7, 0, 5], np.int64)
    b = np.array([2, 2, -2, -2, 3, 5], np.int64)
    compare(lambda lib, x, y: x // y, a, b)
    compare(lambda lib, x, y: x % y, a, b)
    compare(lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"), a, b)
    compare(lambda lib, x, y: lib.div(x, y, rounding_mode="floor"), a, b)


def test_integer_trunc_division_is_exact():
    # beyond 2**53 a float quotient loses the low bits; fmod is built on this division
    a = np.array([2 ** 62 + 1, -(2 ** 62) - 3, 7, -1, 0], np.int64)
    b = np.array([1, 2, -2, 3, 5], np.int64)
    compare(lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"), a, b)
    compare(lambda lib, x, y: lib.fmod(x, y), a, b)
    compare(lambda lib, x: lib.div(x, -3, rounding_mode="trunc"), a)
    compare(lambda lib, x, y: lib.div(x, y, rounding_mode="trunc"),
            np.array([7, 249], np.uint8), np.array([2, 3], np.uint8))
    for case in (lambda lib: lib.fmod(lib.tensor([1, 2]), lib.tensor([0, 1])),
                 lambda lib: lib.div(lib.tensor([7, -7]), 0, rounding_mode="trunc")):
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch)) is not None


# ---- Python scalars on both sides ---------------------------------------------------------
SCALAR_OPS = {
    "x+s": lambda lib, x: x + 2.5,
    "s+x": lambda lib, x: 2.5 + x,
    "x-s": lambda lib, x: x - 2,
    "s-x": lambda lib, x: 2 - x,
    "x*s": lambda lib, x: x * 3,
    "s*x": lambda lib, x: -1.5 * x,
    "x/s": lambda lib, x: x / 4,
    "s/x": lambda lib, x: 2 / x,
    "s/x_float": lambda lib, x: 2.5 / x,
    "x**2": lambda lib, x: x ** 2,
    "x**3": lambda lib, x: x ** 3,
    "x**0.5": lambda lib, x: x.abs() ** 0.5,
    "x**-1.5": lambda lib, x: x.abs() ** -1.5,
    "x**0": lambda lib, x: x ** 0,
    "s**x": lambda lib, x: 2 ** x,
    "s**x_float": lambda lib, x: 2.5 ** x,
    "s**x_frac": lambda lib, x: 0.5 ** x,
    "x%s": lambda lib, x: x % 0.7,
    "add_alpha_scalar": lambda lib, x: lib.add(x, 2, alpha=3),
    "pow_fn_scalar_base": lambda lib, x: lib.pow(3.0, x),
    "-x": lambda lib, x: -x,
    "neg": lambda lib, x: lib.neg(x),
    "+x": lambda lib, x: +x,
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(SCALAR_OPS))
def test_python_scalar_operands(op, dtype):
    x = away_from_zero((3, 4), dtype, seed=10, margin=0.3)
    if op == "x%s":
        # stay away from multiples of 0.7
        x = ((np.random.default_rng(11).integers(-3, 3, (3, 4)) +
              np.random.default_rng(12).uniform(0.1, 0.9, (3, 4))) * 0.7).astype(dtype)
    compare(SCALAR_OPS[op], x)
    compare(SCALAR_OPS[op], x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_reflected_integer_scalar_ops_values(dtype):
    # torch has no derivative for scalar // tensor or scalar % tensor: values only
    x = away_from_zero((3, 4), dtype, seed=13, margin=0.3)
    compare(lambda lib, t: 5 // t, x, grad=False)
    compare(lambda lib, t: 5 % t, x, grad=False)
    compare(lambda lib, t: t // 0.3, x, grad=False)


# ---- in-place forms ----------------------------------------------------------------------
INPLACE = {
    "add_": lambda lib, a, b: (a * 1).add_(b),
    "add_alpha_": lambda lib, a, b: (a * 1).add_(b, alpha=-2),
    "sub_": lambda lib, a, b: (a * 1).sub_(b),
    "sub_alpha_": lambda lib, a, b: (a * 1).sub_(b, alpha=0.5),
    "mul_": lambda lib, a, b: (a * 1).mul_(b),
    "div_": lambda lib, a, b: (a * 1).div_(b),
    "pow_": lambda lib, a, b: (a.abs() + 0.5).pow_(b),
    "add_scalar_": lambda lib, a, b: (a * 1).add_(3.0) * b,
    "mul_scalar_": lambda lib, a, b: (a + 0).mul_(-2) + b,
    "clamp_": lambda lib, a, b: (a * 1).clamp_(-0.5, 0.5) * b,
    "exp_": lambda lib, a, b: (a * 1).exp_() + b,
    "sigmoid_": lambda lib, a, b: (a * 1).sigmoid_() * b,
}


def _iops(name):
    def iadd(lib, a, b):
        y = a * 1
        y += b
        return y

    def isub(lib, a, b):
        y = a * 1
        y -= b
        y -= 2
        return y

    def imul(lib, a, b):
        y = a * 1
        y *= b
        y *= 1.5
        return y

    def idiv(lib, a, b):
        y = a * 1
        y /= b
        y /= 2
        return y

    def ipow(lib, a, b):
        y = a.abs() + 1
        y **= 2
        return y * b
    return {"iadd": iadd, "isub": isub, "imul": imul, "idiv": idiv, "ipow": ipow}[name]


for _n in ["iadd", "isub", "imul", "idiv", "ipow"]:
    INPLACE[_n] = _iops(_n)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(INPLACE))
def test_inplace_on_non_leaf(op, dtype):
    a = away_from_zero((3, 4), dtype, seed=14)
    b = away_from_zero((4,), dtype, seed=15, margin=0.5)
    compare(INPLACE[op], a, b)


@pytest.mark.parametrize("dtype", FLOATS)
def test_inplace_on_noncontiguous(dtype):
    a = randn((3, 4), dtype, seed=16)
    b = randn((3, 4), dtype, seed=17)

    def fn(lib, x, y):
        z = x * 1
        z.t().mul_(y.t())  # in-place through a view
        return z + 0
    compare(fn, a, b, noncontiguous=True)


def test_inplace_on_plain_tensors_values():
    a = randn((3, 4), np.float32, seed=18)
    b = randn((4,), np.float32, seed=19)
    for lib in (torch, ember):
        x = lib.tensor(a)
        x.add_(lib.tensor(b), alpha=2)
        x.mul_(3)
        x -= 1
        x /= lib.tensor(b)
        out = x.numpy()
        if lib is torch:
            expected = out.copy()
    np.testing.assert_allclose(out, expected, rtol=1e-6)


def test_inplace_int_tensor_with_int_values():
    a = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    outs = []
    for lib in (torch, ember):
        x = lib.tensor(a)
        x += 2
        x *= lib.tensor([1, 2, 3])
        x //= 2
        outs.append((x.numpy().copy(), str(x.dtype).split(".")[-1]))
    np.testing.assert_array_equal(outs[1][0], outs[0][0])
    assert outs[1][1] == outs[0][1]


# ---- type promotion -----------------------------------------------------------------------
def _i64(*v):
    return np.array(v, np.int64)


PROMOTION = [
    ("int_tensor+float_scalar", lambda lib, a: a + 1.5, [_i64(1, 2, 3)]),
    ("float_scalar*int_tensor", lambda lib, a: 2.5 * a, [_i64(1, 2, 3)]),
    ("int_tensor+int_scalar", lambda lib, a: a + 2, [_i64(1, 2, 3)]),
    ("int_tensor*bool_scalar", lambda lib, a: a * True, [_i64(1, 2, 3)]),
    ("f32*py_float", lambda lib, a: a * 1e-3, [np.ones(3, np.float32)]),
    ("f32+py_int", lambda lib, a: a + 7, [np.ones(3, np.float32)]),
    ("f64*py_float", lambda lib, a: a * 0.1, [np.ones(3, np.float64)]),
    ("f16*py_float", lambda lib, a: a * 0.5, [np.ones(3, np.float16)]),
    ("int32+int64", lambda lib, a, b: a + b, [np.array([1, 2], np.int32), _i64(3, 4)]),
    ("int8*uint8", lambda lib, a, b: a * b,
     [np.array([1, -2], np.int8), np.array([3, 4], np.uint8)]),
    ("f16+int64", lambda lib, a, b: a + b, [np.array([1.5, 2.5], np.float16), _i64(3, 4)]),
    ("f32+f64", lambda lib, a, b: a + b,
     [np.array([1.5, 2.5], np.float32), np.array([1.0, 2.0], np.float64)]),
    ("bool+int", lambda lib, a, b: a + b, [np.array([True, False]), _i64(3, 4)]),
    ("bool+bool", lambda lib, a, b: a + b, [np.array([True, False]), np.array([True, True])]),
    ("bool*float_scalar", lambda lib, a: a * 2.0, [np.array([True, False])]),
    ("0d_f64+f32", lambda lib, a, b: a + b,
     [np.array(2.0, np.float64), np.array([1.0, 2.0], np.float32)]),
    ("0d_i64+i32", lambda lib, a, b: a * b,
     [np.array(3, np.int64), np.array([1, 2], np.int32)]),
    ("0d_f32+i64", lambda lib, a, b: a + b,
     [np.array(1.5, np.float32), _i64(1, 2)]),
    ("0d_f64*0d_f32", lambda lib, a, b: a * b,
     [np.array(2.0, np.float64), np.array(3.0, np.float32)]),
    ("int/int", lambda lib, a, b: a / b, [_i64(1, 2, 3), _i64(2, 4, 5)]),
    ("int/int_scalar", lambda lib, a: a / 2, [_i64(1, 2, 3)]),
    ("int_scalar/int", lambda lib, a: 2 / a, [_i64(1, 2, 3)]),
    ("int**float", lambda lib, a: a ** 0.5, [_i64(1, 2, 3)]),
    ("int**int", lambda lib, a: a ** 2, [_i64(1, 2, 3)]),
    ("int_sqrt", lambda lib, a: lib.sqrt(a), [_i64(1, 2, 3)]),
    ("int_exp", lambda lib, a: lib.exp(a), [_i64(1, 2, 3)]),
    ("int_sigmoid", lambda lib, a: lib.sigmoid(a), [_i64(-1, 0, 3)]),
    ("int_abs", lambda lib, a: lib.abs(a), [_i64(-1, 0, 3)]),
    ("int_neg", lambda lib, a: -a, [np.array([-1, 0, 3], np.int32)]),
    ("int_sign", lambda lib, a: lib.sign(a), [_i64(-4, 0, 3)]),
    ("int_floor", lambda lib, a: lib.floor(a), [_i64(-4, 0, 3)]),
    ("int_relu", lambda lib, a: lib.relu(a), [_i64(-4, 0, 3)]),
    ("int_where_float", lambda lib, a: lib.where(a > 0, a, 0.5), [_i64(-4, 0, 3)]),
    ("f32_where_f64", lambda lib, a, b: lib.where(a > 0, a, b),
     [np.array([1.0, -1.0], np.float32), np.array([2.0, 3.0], np.float64)]),
    ("int_maximum_float", lambda lib, a, b: lib.maximum(a, b),
     [_i64(1, 5), np.array([2.5, 3.5], np.float32)]),
    ("int_clamp_float", lambda lib, a: lib.clamp(a, min=0.5), [_i64(-1, 2)]),
    ("int_clamp_int", lambda lib, a: lib.clamp(a, min=0, max=2), [_i64(-1, 2, 5)]),
    ("int_mod_float", lambda lib, a: a % 1.5, [_i64(4, -4, 7)]),
    ("int_floordiv_float", lambda lib, a: a // 1.5, [_i64(4, -4, 7)]),
    ("int_eq_float", lambda lib, a: a == 2.0, [_i64(2, 3)]),
    ("int_scalar**int", lambda lib, a: 2 ** a, [_i64(1, 2, 3)]),
    ("float_scalar**int", lambda lib, a: 2.5 ** a, [_i64(1, 2, 3)]),
    ("f32**int_tensor", lambda lib, a, b: a ** b,
     [np.array([1.5, 2.0, 0.5], np.float32), _i64(1, 2, 3)]),
    ("int**f64_tensor", lambda lib, a, b: a ** b,
     [_i64(1, 2, 3), np.array([0.5, 2.0, 1.5], np.float64)]),
    ("i32*py_int", lambda lib, a: a * 3, [np.array([1, 2], np.int32)]),
    ("u8+py_int", lambda lib, a: a + 3, [np.array([1, 2], np.uint8)]),
    ("f16/f16", lambda lib, a, b: a / b,
     [np.array([1.0, 3.0], np.float16), np.array([3.0, 7.0], np.float16)]),
]


@pytest.mark.parametrize("name,fn,arrays", PROMOTION, ids=[p[0] for p in PROMOTION])
def test_type_promotion(name, fn, arrays):
    compare(fn, *arrays)


@pytest.mark.parametrize("dtype", FLOATS)
def test_promotion_gradient_dtype(dtype):
    # float32 leaf combined with a float64 tensor: the grad of each keeps its own dtype
    a = randn((3,), np.float32, seed=20)
    b = randn((3,), np.float64, seed=21)
    compare(lambda lib, x, y: x * y + x, a, b, rtol=1e-5, atol=1e-6)
    c = randn((3,), dtype, seed=22)
    compare(lambda lib, x, i: x * i, c, np.array([1, 2, 3], np.int64))


# ---- unary math ---------------------------------------------------------------------------
UNARY = {
    "neg": (lambda lib, x: lib.neg(x), "any"),
    "abs": (lambda lib, x: lib.abs(x), "nonzero"),
    "abs_method": (lambda lib, x: abs(x), "nonzero"),
    "sign": (lambda lib, x: lib.sign(x), "nonzero"),
    "exp": (lambda lib, x: lib.exp(x), "any"),
    "exp2": (lambda lib, x: lib.exp2(x), "any"),
    "log": (lambda lib, x: lib.log(x), "pos"),
    "log2": (lambda lib, x: lib.log2(x), "pos"),
    "log1p": (lambda lib, x: lib.log1p(x), "gt-1"),
    "expm1": (lambda lib, x: lib.expm1(x), "any"),
    "sqrt": (lambda lib, x: lib.sqrt(x), "pos"),
    "rsqrt": (lambda lib, x: lib.rsqrt(x), "pos"),
    "reciprocal": (lambda lib, x: lib.reciprocal(x), "nonzero"),
    "sin": (lambda lib, x: lib.sin(x), "any"),
    "cos": (lambda lib, x: lib.cos(x), "any"),
    "tan": (lambda lib, x: lib.tan(x), "small"),
    "tanh": (lambda lib, x: lib.tanh(x), "any"),
    "sigmoid": (lambda lib, x: lib.sigmoid(x), "any"),
    "sigmoid_method": (lambda lib, x: x.sigmoid(), "wide"),
    "relu": (lambda lib, x: lib.relu(x), "nonzero"),
    "erf": (lambda lib, x: lib.erf(x), "any"),
    "floor": (lambda lib, x: lib.floor(x), "offhalf"),
    "ceil": (lambda lib, x: lib.ceil(x), "offhalf"),
    "round": (lambda lib, x: lib.round(x), "offhalf"),
    "trunc": (lambda lib, x: lib.trunc(x), "offhalf"),
    "square": (lambda lib, x: lib.square(x), "any"),
    "exp_method": (lambda lib, x: x.exp().log(), "any"),
}


def _domain(kind, shape, dtype, seed):
    if kind == "any":
        return randn(shape, dtype, seed)
    if kind == "nonzero":
        return away_from_zero(shape, dtype, seed)
    if kind == "pos":
        return uniform(shape, dtype, 0.2, 3.0, seed)
    if kind == "gt-1":
        return uniform(shape, dtype, -0.8, 3.0, seed)
    if kind == "small":
        return uniform(shape, dtype, -1.2, 1.2, seed)
    if kind == "wide":
        return (randn(shape, np.float64, seed) * 8).astype(dtype)
    if kind == "offhalf":
        return off_half(shape, dtype, seed)
    raise ValueError(kind)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, dtype):
    fn, kind = UNARY[op]
    compare(fn, _domain(kind, (3, 4), dtype, 23))
    compare(fn, _domain(kind, (2, 3, 4), dtype, 24), noncontiguous=True)
    compare(fn, _domain(kind, (), dtype, 25))


@pytest.mark.parametrize("dtype", FLOATS)
def test_round_half_to_even_and_decimals(dtype):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, 3.25, -2.75], dtype)
    compare(lambda lib, t: lib.round(t), x)
    y = np.array([1.234, -5.678, 0.0449, 12.3456], dtype)
    compare(lambda lib, t: lib.round(t, decimals=2), y, grad=False)


def test_relu_at_zero_gradient():
    # torch: relu's gradient at exactly 0 is 0
    compare(lambda lib, t: lib.relu(t), np.array([-1.0, 0.0, 2.0]))


@pytest.mark.parametrize("n", [7, 5000])  # the small path and the row-split one
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_signed_zero_nan_inf_forward(n, dtype):
    """torch keeps x unless x < 0: relu(-0.0) is -0.0, NaN stays NaN (every relu entry)."""
    x = np.zeros(n, dtype)
    x[:7] = [-0.0, 0.0, np.nan, -1.0, 2.0, np.inf, -np.inf]
    x[7:] = np.random.default_rng(n).standard_normal(n - 7)
    for f in (lambda lib, t: lib.relu(t), lambda lib, t: t.relu(),
              lambda lib, t: lib.nn.functional.relu(t), lambda lib, t: lib.nn.ReLU()(t),
              lambda lib, t: t.clone().relu_()):
        want = f(torch, torch.tensor(x)).numpy()
        got = f(ember, ember.tensor(x)).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)  # NaN positions equal too
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("n", [9, 5000])  # the small path and the row-split one
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_relu_gradient_at_nan_inf_and_zero(n, dtype):
    """torch: ``out <= 0 ? 0 : grad`` -- a NaN output passes the gradient, an inf or NaN
    gradient where the output is <= 0 gives 0 (not inf * 0 = NaN)."""
    x = np.resize(np.array([-0.0, 0.0, np.nan, -1, 2, np.inf, -np.inf, 3, -2], dtype), n)
    g = np.resize(np.array([1, np.nan, 1, np.inf, 1, 1, np.inf, np.nan, -np.inf], dtype), n)
    for f in (lambda lib, t: lib.relu(t), lambda lib, t: t.relu(),
              lambda lib, t: lib.nn.functional.relu(t), lambda lib, t: lib.nn.ReLU()(t)):
        grads = []
        for lib in (torch, ember):
            t = lib.tensor(x, requires_grad=True)
            f(lib, t).backward(lib.tensor(g))
            grads.append(t.grad.numpy())
        want, got = grads
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # a broadcast gradient (that of a sum) takes the same path
    for lib in (torch, ember):
        t = lib.tensor(x, requires_grad=True)
        lib.nn.functional.relu(t).sum().backward()
        grads.append(t.grad.numpy())
    np.testing.assert_array_equal(grads[-1], grads[-2])


def test_sigmoid_extreme_values():
    x = np.array([-100.0, -30.0, 0.0, 30.0, 100.0])
    compare(lambda lib, t: lib.sigmoid(t), x)
    compare(lambda lib, t: lib.sigmoid(t), x.astype(np.float32))


# ---- clamp --------------------------------------------------------------------------------
CLAMP = {
    "min": lambda lib, x, lo, hi: lib.clamp(x, min=-0.5),
    "max": lambda lib, x, lo, hi: lib.clamp(x, max=0.3),
    "both": lambda lib, x, lo, hi: lib.clamp(x, -0.5, 0.3),
    "clip": lambda lib, x, lo, hi: lib.clip(x, -0.5, 0.3),
    "method": lambda lib, x, lo, hi: x.clamp(min=-0.4),
    "clamp_min": lambda lib, x, lo, hi: x.clamp_min(0.1),
    "clamp_max": lambda lib, x, lo, hi: x.clamp_max(0.1),
    "tensor_min": lambda lib, x, lo, hi: lib.clamp(x, min=lo),
    "tensor_max": lambda lib, x, lo, hi: lib.clamp(x, max=hi),
    "tensor_both": lambda lib, x, lo, hi: lib.clamp(x, min=lo, max=hi),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(CLAMP))
def test_clamp(op, dtype):
    x = randn((3, 4), dtype, seed=26)
    lo = (np.full((4,), -0.5) + np.array([0.07, -0.2, 0.13, 0.31])).astype(dtype)
    hi = (lo + np.array([0.5, 1.1, 0.29, 0.77])).astype(dtype)
    # keep x clear of the clamp bounds (gradient undefined there)
    bounds = np.concatenate([lo, hi, [-0.5, 0.3, -0.4, 0.1]])
    for v in bounds:
        x = np.where(np.abs(x - v) < 0.02, x + 0.05, x).astype(dtype)
    compare(CLAMP[op], x, lo, hi)


def test_clamp_min_greater_than_max():
    # PyTorch: every element becomes max
    compare(lambda lib, t: lib.clamp(t, min=1.0, max=0.0), randn((5,), np.float64, 27))


# ---- maximum / minimum --------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum(name, dtype):
    a = randn((3, 4), dtype, seed=28)
    b = randn((4,), dtype, seed=29)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b)
    compare(lambda lib, x, y: getattr(x, name)(y), a, randn((3, 4), dtype, 30),
            noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["maximum", "minimum"])
def test_maximum_minimum_ties(name, dtype):
    # PyTorch splits the gradient evenly between tied inputs
    a = np.array([1.0, 2.0, 3.0, -1.0], dtype)
    b = np.array([1.0, 0.0, 3.0, 5.0], dtype)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b)


@pytest.mark.parametrize("name", ["max", "min"])
def test_binary_max_min_function_form(name):
    a = randn((3, 4), np.float64, seed=31)
    b = randn((3, 4), np.float64, seed=32)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b)


# ---- lerp / addcmul -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_lerp(dtype):
    s = randn((3, 4), dtype, seed=33)
    e = randn((4,), dtype, seed=34)
    w = uniform((3, 1), dtype, 0, 1, seed=35)
    compare(lambda lib, a, b: lib.lerp(a, b, 0.3), s, e)
    compare(lambda lib, a, b: a.lerp(b, 1.7), s, randn((3, 4), dtype, 36), noncontiguous=True)
    compare(lambda lib, a, b, c: lib.lerp(a, b, c), s, e, w)
    compare(lambda lib, a, b, c: lib.lerp(a, b, c), s, randn((3, 4), dtype, 37),
            uniform((3, 4), dtype, 0, 1, 38), noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_addcmul(dtype):
    x = randn((3, 4), dtype, seed=39)
    t1 = randn((4,), dtype, seed=40)
    t2 = randn((3, 1), dtype, seed=41)
    compare(lambda lib, a, b, c: lib.addcmul(a, b, c), x, t1, t2)
    compare(lambda lib, a, b, c: lib.addcmul(a, b, c, value=-0.5), x, t1, t2)
    compare(lambda lib, a, b, c: a.addcmul(b, c, value=2), x, randn((3, 4), dtype, 42),
            randn((3, 4), dtype, 43), noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_addcmul_broadcasts_input(dtype):
    # the result takes the broadcast shape of all three; input's grad is summed back
    x = randn((4,), dtype, seed=44)
    t1 = randn((3, 4), dtype, seed=45)
    t2 = randn((3, 1), dtype, seed=46)
    compare(lambda lib, a, b, c: lib.addcmul(a, b, c, value=1.5), x, t1, t2)


# ---- comparisons and logic ----------------------------------------------------------------
CMP = ["eq", "ne", "lt", "le", "gt", "ge"]
CMP_OPS = {"eq": "__eq__", "ne": "__ne__", "lt": "__lt__", "le": "__le__", "gt": "__gt__",
           "ge": "__ge__"}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", CMP)
def test_comparisons(name, dtype):
    a = np.random.default_rng(47).integers(-2, 3, (3, 4)).astype(dtype)
    b = np.random.default_rng(48).integers(-2, 3, (4,)).astype(dtype)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b)
    compare(lambda lib, x, y: getattr(x, CMP_OPS[name])(y), a, b)
    compare(lambda lib, x: getattr(x, CMP_OPS[name])(1.0), a)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, a.T.copy().T, noncontiguous=True)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a.astype(np.int64), b)


@pytest.mark.parametrize("name", CMP)
def test_comparison_result_has_no_grad(name):
    a = randn((3,), np.float32, seed=49)
    for lib in (torch, ember):
        x = lib.tensor(a, requires_grad=True)
        out = getattr(lib, name)(x, 0.0)
        assert out.requires_grad is False
        assert out.grad_fn is None
        assert str(out.dtype).endswith("bool")


LOGIC = ["logical_and", "logical_or", "logical_xor"]


@pytest.mark.parametrize("name", LOGIC)
def test_logical_binary(name):
    a = np.array([[True, False, True, False]])
    b = np.array([[True], [False]])
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a, b)
    f = np.array([0.0, 1.5, -2.0, 0.0], np.float32)
    i = np.array([3, 0, 1, 0], np.int64)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), f, i)
    compare(lambda lib, x, y: getattr(x, name)(y), f, i)


def test_logical_not():
    compare(lambda lib, x: lib.logical_not(x), np.array([True, False]))
    compare(lambda lib, x: lib.logical_not(x), np.array([0.0, 2.5, -1.0], np.float32))
    compare(lambda lib, x: lib.logical_not(x), np.array([0, 3], np.int64))
    compare(lambda lib, x: ~x, np.array([True, False]))


def test_bool_operators():
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    compare(lambda lib, x, y: x & y, a, b)
    compare(lambda lib, x, y: x | y, a, b)
    compare(lambda lib, x, y: x ^ y, a, b)


# ---- where / masked_fill ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_where(dtype):
    cond = np.random.default_rng(50).random((3, 4)) > 0.5
    a = randn((3, 4), dtype, seed=51)
    b = randn((4,), dtype, seed=52)
    compare(lambda lib, c, x, y: lib.where(c, x, y), cond, a, b)
    compare(lambda lib, c, x, y: x.where(c, y), cond, a, b)
    compare(lambda lib, c, x: lib.where(c, x, 0.0), cond, a)
    compare(lambda lib, c, x: lib.where(c, 1.5, x), cond, a)
    compare(lambda lib, c, x, y: lib.where(c, x, y), cond[:, :1], a, b)
    compare(lambda lib, x, y: lib.where(x > y, x, y), a, randn((3, 4), dtype, 53),
            noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_masked_fill(dtype):
    mask = np.random.default_rng(54).random((3, 4)) > 0.5
    x = randn((3, 4), dtype, seed=55)
    compare(lambda lib, m, t: t.masked_fill(m, -1.5), mask, x)
    compare(lambda lib, m, t: lib.masked_fill(t, m, 0.0), mask, x)
    compare(lambda lib, m, t: t.masked_fill(m, 2.0), mask[0], x)  # broadcast mask
    compare(lambda lib, m, t: (t * 1).masked_fill_(m, 3.0), mask, x)
    compare(lambda lib, m, t: t.masked_fill(m, float("-inf")).softmax(-1), mask[:, :1] & False,
            x)
    compare(lambda lib, m, t: t.masked_fill(m, 7.0), mask, x, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_masked_fill_with_tensor_value(dtype):
    mask = np.array([[True, False], [False, True]])
    x = randn((2, 2), dtype, seed=56)
    v = np.array(0.25, dtype)
    compare(lambda lib, m, t, val: t.masked_fill(m, val), mask, x, v)


# ---- errors: same exception type and message as torch -------------------------------------
def same_error(fn, *arrays):
    errors = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(lib, *[lib.tensor(a) for a in arrays])
        errors.append((type(info.value), str(info.value)))
    assert errors[1] == errors[0]


BOOLS = np.array([True, False])
ERRORS = [
    ("int-bool", lambda lib, a, b: a - b, [_i64(1, 2), BOOLS]),
    ("float-bool", lambda lib, a, b: a - b, [np.array([1.0, 2.0]), BOOLS]),
    ("bool-bool", lambda lib, a: a - a, [BOOLS]),
    ("bool-scalar", lambda lib, a: a - 1, [BOOLS]),
    ("scalar-bool", lambda lib, a: 1 - a, [BOOLS]),
    ("neg_bool", lambda lib, a: -a, [BOOLS]),
    ("broadcast", lambda lib, a, b: a + b, [np.ones((2, 3)), np.ones((2, 4))]),
    ("broadcast_mul", lambda lib, a, b: a * b, [np.ones((5, 2, 3)), np.ones((4, 1, 3))]),
    ("int_pow_negative", lambda lib, a: a ** -1, [_i64(1, 2)]),
    ("masked_fill_broadcast", lambda lib, a, m: a.masked_fill(m, 1.0),
     [np.ones((3, 4)), np.ones((3, 5), bool)]),
    ("masked_fill_non_bool", lambda lib, a, m: a.masked_fill(m, 1.0),
     [np.ones((3, 4)), np.ones((3, 4), np.int64)]),
    ("clamp_no_bounds", lambda lib, a: lib.clamp(a), [np.ones(3)]),
    ("where_non_bool", lambda lib, c, a: lib.where(c, a, a), [_i64(1, 0), np.ones(2)]),
    ("int_inplace_float", lambda lib, a: a.add_(1.5), [_i64(1, 2)]),
    ("int_inplace_div", lambda lib, a, b: a.div_(b), [_i64(1, 2), _i64(3, 4)]),
    ("bitwise_and_float", lambda lib, a: a & a, [np.array([1.0])]),
    ("bitwise_or_float32", lambda lib, a: lib.bitwise_or(a, a), [np.ones(2, np.float32)]),
    ("bitwise_not_float", lambda lib, a: lib.bitwise_not(a), [np.ones(2, np.float32)]),
    ("lerp_end_dtype", lambda lib, a, b: lib.lerp(a, b, 0.5),
     [np.ones(2, np.float32), np.ones(2)]),
    ("lerp_weight_dtype", lambda lib, a, w: lib.lerp(a, a, w),
     [np.ones(2), np.ones(2, np.float32)]),
    ("clamp_tensor_broadcast", lambda lib, a, m: lib.clamp(a, min=m), [np.ones(3), np.ones(4)]),
]


@pytest.mark.parametrize("name,fn,arrays", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, arrays):
    same_error(fn, *arrays)


# ---- edge points where PyTorch picks a convention -----------------------------------------
EDGES = [
    ("pow_scalar_at_zero", lambda lib, x: x ** 2, [np.array([0.0, 1.0, -2.0])]),
    ("pow_zero_exponent_at_zero", lambda lib, x: x ** 0, [np.array([0.0, 1.0, 2.0])]),
    ("pow_tensor_zero_base", lambda lib, x, y: x ** y,
     [np.array([0.0, 0.0, 2.0]), np.array([2.0, 0.0, 1.5])]),
    ("rpow_zero_base", lambda lib, x: 0 ** x, [np.array([0.0, 1.0, 2.0])]),
    ("div_by_zero", lambda lib, x, y: x / y, [np.array([1.0, -1.0, 0.0]), np.zeros(3)]),
    ("sqrt_log_at_zero", lambda lib, x: x.sqrt() + x.log(), [np.array([0.0, 4.0])]),
    ("abs_sign_at_zero", lambda lib, x: x.abs() + x.sign(), [np.array([0.0, -4.0])]),
    ("clamp_at_scalar_bounds", lambda lib, x: x.clamp(0.0, 1.0),
     [np.array([0.0, 1.0, 0.5, 2.0])]),
    ("clamp_at_tensor_bound", lambda lib, x, m: x.clamp(min=m),
     [np.array([0.0, 1.0, -1.0]), np.array([0.0, 0.5, 0.2])]),
    ("clamp_tensor_max_at_bound", lambda lib, x, m: lib.clamp(x, max=m),
     [np.array([0.5, 1.0, -1.0]), np.array([0.5, 0.5, 0.2])]),
    ("clamp_tensor_min_above_max", lambda lib, x, lo, hi: lib.clamp(x, lo, hi),
     [np.array([0.0, 2.0, -2.0, 0.7]), np.array([1.0, 1.0, 1.0, 0.0]),
      np.array([0.5, 0.5, 0.5, 1.0])]),
    ("clamp_int_tensor_float_bound", lambda lib, x, m: x.clamp(min=m),
     [_i64(1, 5), np.array([2.5, 0.5], np.float32)]),
    ("maximum_nan", lambda lib, x, y: lib.maximum(x, y),
     [np.array([1.0, np.nan, 2.0]), np.array([np.nan, 0.0, 2.0])]),
    ("minimum_nan", lambda lib, x, y: lib.minimum(x, y),
     [np.array([1.0, np.nan, 2.0]), np.array([np.nan, 0.0, 2.0])]),
    ("relu_sigmoid_inf", lambda lib, x: x.relu() + x.sigmoid(),
     [np.array([-np.inf, np.inf, 0.5])]),
    ("int_pow_int_tensor_negative", lambda lib, x, y: x ** y,
     [_i64(0, 1, -1, 2, -2, 0, 3), _i64(-1, -3, -3, -1, -2, 0, 2)]),
    ("int_scalar_pow_negative", lambda lib, y: 2 ** y, [_i64(-1, 2, 0)]),
    ("neg_int_scalar_pow", lambda lib, y: (-1) ** y, [_i64(-1, 2, -4, 3)]),
    ("addmm_like_nan_mask", lambda lib, x: x.masked_fill(x != x, 0.0),
     [np.array([np.nan, 1.0])]),
]


@pytest.mark.parametrize("name,fn,arrays", EDGES, ids=[e[0] for e in EDGES])
def test_edge_conventions(name, fn, arrays):
    with np.errstate(all="ignore"):
        compare(fn, *arrays)


def test_invert_float_error_matches_torch():
    same_error(lambda lib, a: ~a, np.ones(2, np.float32))


# ---- lerp rounds as PyTorch: from start below |w| 0.5, from end above -------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weight", [0.25, 0.5, 0.75, 1.0])
def test_lerp_bitwise_for_exact_products(weight, dtype):
    # weights whose products round the same with and without PyTorch's fused multiply-add
    rng = np.random.default_rng(3)
    s, e = (rng.standard_normal(4096).astype(dtype) for _ in range(2))
    got = ember.lerp(ember.tensor(s), ember.tensor(e), weight).numpy()
    want = torch.lerp(torch.tensor(s), torch.tensor(e), weight).numpy()
    assert np.array_equal(got, want)
    w = np.full(4096, weight, dtype)
    got = ember.lerp(ember.tensor(s), ember.tensor(e), ember.tensor(w)).numpy()
    want = torch.lerp(torch.tensor(s), torch.tensor(e), torch.tensor(w)).numpy()
    assert np.array_equal(got, want)
