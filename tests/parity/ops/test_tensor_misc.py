"""Parity with PyTorch for the tensor-level API scripts use besides arithmetic: inverse trig
and hyperbolic functions, atan2/hypot/logaddexp, the infinity tests and nan_to_num, sets
(unique), grids and repeats, diff/take/movedim, searchsorted, finfo/iinfo, printing
(set_printoptions, format), range indexing and ember.range, out=, memory formats, bfloat16."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]


def rng(seed=0):
    return np.random.default_rng(seed)


def uniform(shape, dtype, lo, hi, seed=0):
    return rng(seed).uniform(lo, hi, shape).astype(dtype)


# ---- unary trig / hyperbolic ----------------------------------------------------------------
UNARY = {  # name: domain (lo, hi) where the function and its derivative are finite
    "asin": (-0.9, 0.9), "arcsin": (-0.9, 0.9), "acos": (-0.9, 0.9), "arccos": (-0.9, 0.9),
    "atan": (-3, 3), "arctan": (-3, 3), "sinh": (-2, 2), "cosh": (-2, 2),
    "asinh": (-3, 3), "arcsinh": (-3, 3), "acosh": (1.2, 4), "arccosh": (1.2, 4),
    "atanh": (-0.9, 0.9), "arctanh": (-0.9, 0.9), "deg2rad": (-180, 180),
    "rad2deg": (-3, 3),
}


@pytest.mark.parametrize("noncontiguous", [False, True], ids=["contig", "noncontig"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_function_and_method(name, dtype, noncontiguous):
    a = uniform((3, 4), dtype, *UNARY[name])
    compare(lambda lib, x: getattr(lib, name)(x) * 1.5 + getattr(x, name)(), a,
            noncontiguous=noncontiguous)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_in_place_and_second_derivative(name):
    a = uniform((5,), np.float64, *UNARY[name], seed=3)
    # torch has no derivative for the in-place inverse hyperbolics (ember has one)
    compare(lambda lib, x: getattr(x * 1.0, name + "_")(), a,
            grad=name not in ("asinh", "arcsinh", "acosh", "arccosh", "atanh", "arctanh"))

    if name in ("deg2rad", "rad2deg"):
        return  # a constant first derivative: no second one
    def second(lib):
        x = lib.tensor(a, requires_grad=True)
        g, = lib.autograd.grad(getattr(lib, name)(x).sum(), x, create_graph=True)
        gg, = lib.autograd.grad((g * g).sum(), x)
        return gg.detach().numpy()
    np.testing.assert_allclose(second(ember), second(torch), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["asin", "atan", "cosh", "deg2rad", "rad2deg"])
def test_unary_on_integers_gives_the_default_float(name):
    compare(lambda lib, x: getattr(lib, name)(x), np.array([0, 1, 2]))


def test_unary_grad_fn_names():
    for name in ["asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"]:
        x = ember.tensor([1.5], requires_grad=True)
        t = torch.tensor([1.5], requires_grad=True)
        assert getattr(x, name)().grad_fn.name() == getattr(t, name)().grad_fn.name()


# ---- binary -------------------------------------------------------------------------------
SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1))]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("name", ["atan2", "arctan2", "hypot", "logaddexp"])
def test_binary_broadcast(name, shapes, dtype):
    a = uniform(shapes[0], dtype, 0.3, 2.0) * np.where(rng(1).random(shapes[0]) < 0.5, -1, 1)
    b = uniform(shapes[1], dtype, 0.3, 2.0, seed=2)
    compare(lambda lib, x, y: getattr(lib, name)(x, y), a.astype(dtype), b)
    compare(lambda lib, x, y: getattr(x, name)(y), a.astype(dtype), b)


@pytest.mark.parametrize("name", ["atan2", "hypot"])
def test_binary_in_place_noncontiguous_and_mixed_dtypes(name):
    a, b = uniform((4, 4), np.float64, 0.5, 2), uniform((4, 4), np.float64, 0.5, 2, seed=1)
    compare(lambda lib, x, y: getattr(x * 1.0, name + "_")(y), a, b, noncontiguous=True)
    compare(lambda lib, x, y: getattr(lib, name)(x, y.float()), a, b)


def test_binary_second_derivative():
    a, b = uniform((5,), np.float64, 0.5, 2), uniform((5,), np.float64, 0.5, 2, seed=1)
    for name in ["atan2", "hypot", "logaddexp"]:
        def second(lib):
            x, y = lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True)
            gx, gy = lib.autograd.grad(getattr(lib, name)(x, y).sum(), (x, y), create_graph=True)
            return [g.detach().numpy() for g in lib.autograd.grad((gx * gy).sum(), (x, y))]
        for e, t in zip(second(ember), second(torch)):
            np.testing.assert_allclose(e, t, rtol=1e-7, atol=1e-9)


def test_binary_errors():
    for name in ["atan2", "hypot", "logaddexp"]:
        assert error_of(lambda: getattr(ember, name)(ember.ones(2), 2.0)) == \
            error_of(lambda: getattr(torch, name)(torch.ones(2), 2.0))
        assert error_of(lambda: getattr(ember, name)(ember.ones(2), ember.ones(3))) == \
            error_of(lambda: getattr(torch, name)(torch.ones(2), torch.ones(3)))
    for name in ["hypot", "logaddexp"]:
        assert error_of(lambda: getattr(ember, name)(ember.ones(2).long(), ember.ones(2).long())) \
            == error_of(lambda: getattr(torch, name)(torch.ones(2).long(), torch.ones(2).long()))
    compare(lambda lib, x: lib.atan2(x, x + 1), np.array([1, 2, 3]))


# ---- infinities and NaN -------------------------------------------------------------------
SPECIAL = np.array([1.5, np.nan, np.inf, -np.inf, 0.0, -2.0])


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("name", ["isinf", "isfinite", "isposinf", "isneginf", "isnan",
                                  "isreal"])
def test_infinity_tests(name, dtype):
    compare(lambda lib, x: getattr(lib, name)(x), SPECIAL.astype(dtype), grad=False)
    compare(lambda lib, x: getattr(x, name)(), SPECIAL.astype(dtype), grad=False)
    compare(lambda lib, x: getattr(lib, name)(x), np.array([1, 2]))
    compare(lambda lib, x: getattr(lib, name)(x), np.array([True, False]))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("kwargs", [{}, dict(nan=2.0), dict(posinf=9.0, neginf=-7.0)], ids=str)
def test_nan_to_num(kwargs, dtype):
    compare(lambda lib, x: lib.nan_to_num(x, **kwargs), SPECIAL.astype(dtype),
            grad=dtype is not np.float16)
    compare(lambda lib, x: (x * 1).nan_to_num_(**kwargs), SPECIAL.astype(dtype),
            grad=dtype is not np.float16)
    compare(lambda lib, x: lib.nan_to_num(x, **kwargs), np.array([1, 2]))


# ---- sets ---------------------------------------------------------------------------------
INTS = np.array([[3, 1, 2], [3, 1, 2], [0, 1, 1], [3, 1, 2]])


@pytest.mark.parametrize("return_counts", [False, True])
@pytest.mark.parametrize("return_inverse", [False, True])
@pytest.mark.parametrize("dim", [None, 0, 1, -1])
def test_unique(dim, return_inverse, return_counts):
    compare(lambda lib, x: lib.unique(x, return_inverse=return_inverse,
                                      return_counts=return_counts, dim=dim), INTS)
    compare(lambda lib, x: x.unique(sorted=True, return_inverse=return_inverse,
                                    return_counts=return_counts, dim=dim), INTS)
    compare(lambda lib, x: lib.unique_consecutive(x, return_inverse=return_inverse,
                                                  return_counts=return_counts, dim=dim), INTS)


def test_unique_of_floats_and_errors():
    a = np.array([2.5, -1.0, 2.5, np.inf, 0.0], np.float32)
    compare(lambda lib, x: lib.unique(x, return_counts=True), a, grad=False)
    assert error_of(lambda: ember.unique(ember.ones(2), dim=3)) == \
        error_of(lambda: torch.unique(torch.ones(2), dim=3))


@pytest.mark.parametrize("fn", ["unique", "unique_consecutive"])
def test_unique_of_empty_and_0d(fn):
    for shape, dim in [((0, 3), None), ((0, 3), 0), ((2, 0, 3), 1), ((2, 0, 3), -2)]:
        compare(lambda lib, x: getattr(lib, fn)(x, return_inverse=True, return_counts=True,
                                                dim=dim), np.zeros(shape), grad=False)
    for shape, dim in [((0, 3), 1), ((3, 0), 0), ((0, 0), 0), ((), 0), ((), -1)]:
        expected = error_of(lambda: getattr(torch, fn)(torch.zeros(shape), dim=dim))
        assert expected is not None
        assert error_of(lambda: getattr(ember, fn)(ember.zeros(shape), dim=dim)) == expected


def test_multinomial_and_bernoulli_errors():
    cases = [
        lambda lib: lib.multinomial(lib.ones(2, 2, 2), 1),
        lambda lib: lib.multinomial(lib.tensor([0.1, 0.9]), 3),
        lambda lib: lib.multinomial(lib.tensor([-1.0, 1.0]), 1),
        lambda lib: lib.multinomial(lib.tensor([float("nan"), 1.0]), 1),
        lambda lib: lib.multinomial(lib.zeros(2), 1),
        lambda lib: lib.multinomial(lib.tensor([0.1, 0.9]), 0),
        lambda lib: lib.multinomial(lib.tensor([1, 2]), 1),
        lambda lib: lib.bernoulli(lib.tensor([1.5])),
        lambda lib: lib.bernoulli(lib.tensor([1, 0])),
        lambda lib: lib.ones(3).bernoulli_(1.5),
    ]
    for case in cases:
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


def test_multinomial_and_bernoulli_shapes_and_dtypes():
    for lib_case in [lambda lib: lib.multinomial(lib.ones(4, 5, dtype=lib.float64), 3),
                     lambda lib: lib.multinomial(lib.ones(5), 7, replacement=True),
                     lambda lib: lib.tensor([0.2, 0.8]).multinomial(2),
                     lambda lib: lib.bernoulli(lib.full((2, 3), 0.5, dtype=lib.float64)),
                     lambda lib: lib.bernoulli(lib.ones(3), 0.5),
                     lambda lib: lib.zeros(2, 2).bernoulli(),
                     lambda lib: lib.zeros(2, 2).bernoulli_(lib.full((2, 2), 0.3))]:
        e, t = lib_case(ember), lib_case(torch)
        assert tuple(e.shape) == tuple(t.shape) and e.dtype.name == str(t.dtype).split(".")[1]
    # deterministic cases: certain outcomes
    for lib in (ember, torch):
        picks = lib.multinomial(lib.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 2.0]]), 1)
        assert picks.tolist() == [[1], [2]]
        assert lib.bernoulli(lib.tensor([0.0, 1.0])).tolist() == [0.0, 1.0]


# ---- grids, repeats, moved dimensions, differences, take ----------------------------------
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid(indexing):
    a, b, c = np.arange(2.0), np.arange(3.0) + 1, np.arange(4.0) - 1
    compare(lambda lib, x, y, z: lib.meshgrid(x, y, z, indexing=indexing), a, b, c)
    compare(lambda lib, x, y: lib.meshgrid([x, y], indexing=indexing), a, b)


def test_meshgrid_warns_without_indexing_as_torch():
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="it will be required to pass the indexing"):
            lib.meshgrid(lib.arange(2), lib.arange(3))
    assert error_of(lambda: ember.meshgrid(ember.ones(2), indexing="ab")) == \
        error_of(lambda: torch.meshgrid(torch.ones(2), indexing="ab"))


@pytest.mark.parametrize("dtype", FLOATS)
def test_repeat_interleave(dtype):
    a = rng().standard_normal((3, 4)).astype(dtype)
    compare(lambda lib, x: lib.repeat_interleave(x, 2), a)
    compare(lambda lib, x: x.repeat_interleave(3, dim=1), a, noncontiguous=True)
    compare(lambda lib, x: lib.repeat_interleave(x, lib.tensor([1, 0, 2]), dim=0), a)
    compare(lambda lib, x: lib.repeat_interleave(x, lib.tensor([2, 1, 0, 1]), dim=-1,
                                                 output_size=4), a)
    compare(lambda lib, x: lib.repeat_interleave(x, lib.tensor(2), dim=0), a)
    compare(lambda lib, x: lib.repeat_interleave(x), np.array([2, 0, 3]))


def test_repeat_interleave_errors():
    cases = [lambda lib: lib.repeat_interleave(lib.ones(3), lib.tensor([1, 2]), dim=0),
             lambda lib: lib.repeat_interleave(lib.ones(3), -1),
             lambda lib: lib.repeat_interleave(lib.ones(3), lib.tensor([1, 2, 1]), dim=0,
                                               output_size=3),
             lambda lib: lib.repeat_interleave(lib.ones(3), lib.tensor([[1]]))]
    for case in cases:
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


def test_movedim_is_a_view():
    a = rng().standard_normal((2, 3, 4, 5))
    for src, dst in [(0, -1), ((0, 1), (2, 0)), ([3, 1], [0, 1]), (1, 1)]:
        compare(lambda lib, x: lib.movedim(x, src, dst), a)
        compare(lambda lib, x: lib.moveaxis(x, src, dst), a)
        compare(lambda lib, x: x.movedim(src, dst), a)
    x = ember.zeros(2, 3)
    x.movedim(0, 1)[1, 0] = 5
    assert x[0, 1].item() == 5
    assert error_of(lambda: ember.movedim(ember.ones(2, 3), (0, 1), (0,))) == \
        error_of(lambda: torch.movedim(torch.ones(2, 3), (0, 1), (0,)))
    assert error_of(lambda: ember.movedim(ember.ones(2, 3), 4, 0)) == \
        error_of(lambda: torch.movedim(torch.ones(2, 3), 4, 0))


@pytest.mark.parametrize("dtype", FLOATS)
def test_diff(dtype):
    a = rng().standard_normal((4, 5)).astype(dtype)
    p, q = rng(1).standard_normal((4, 2)).astype(dtype), rng(2).standard_normal((1, 5))
    compare(lambda lib, x: lib.diff(x), a, noncontiguous=True)
    compare(lambda lib, x: x.diff(n=2, dim=0), a)
    compare(lambda lib, x, y: lib.diff(x, n=3, prepend=y), a, p)
    compare(lambda lib, x, y: lib.diff(x, dim=0, append=y), a, q.astype(dtype))
    compare(lambda lib, x: lib.diff(x), np.array([[1, 4, 9], [2, 2, 2]]))
    compare(lambda lib, x: lib.diff(x), np.array([True, False, False, True]))
    assert error_of(lambda: ember.diff(ember.tensor(1.0))) == \
        error_of(lambda: torch.diff(torch.tensor(1.0)))


@pytest.mark.parametrize("dtype", FLOATS)
def test_take(dtype):
    a = rng().standard_normal((3, 4)).astype(dtype)
    compare(lambda lib, x: lib.take(x, lib.tensor([[0, 11], [-1, 5]])), a, noncontiguous=True)
    compare(lambda lib, x: x.take(lib.tensor([3, 3, 2])), a)
    assert error_of(lambda: ember.take(ember.ones(2, 3), ember.tensor([10]))) == \
        error_of(lambda: torch.take(torch.ones(2, 3), torch.tensor([10])))


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_and_bucketize(right):
    seq = np.array([1.0, 2.0, 2.0, 4.0, 8.0])
    vals = np.array([[0.5, 2.0, 9.0], [4.0, 1.0, 3.0]])
    compare(lambda lib, s, v: lib.searchsorted(s, v, right=right), seq, vals, grad=False)
    compare(lambda lib, s, v: lib.bucketize(v, s, right=right), seq, vals, grad=False)
    compare(lambda lib, s, v: lib.searchsorted(s, v, side="right", out_int32=True), seq, vals,
            grad=False)
    batched = np.sort(rng().standard_normal((2, 6)), axis=1)
    compare(lambda lib, s, v: lib.searchsorted(s, v, right=right), batched, vals, grad=False)


# ---- finfo / iinfo / constants -------------------------------------------------------------
@pytest.mark.parametrize("name", ["float16", "float32", "float64", "bfloat16", "complex64",
                                  "complex128"])
def test_finfo(name):
    e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
    for attr in ["bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype"]:
        assert getattr(e, attr) == getattr(t, attr), attr
    assert repr(e) == repr(t)


def test_finfo_default_and_iinfo():
    assert ember.finfo().dtype == torch.finfo().dtype == "float32"
    for name in ["uint8", "int8", "int16", "int32", "int64"]:
        e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
        assert (e.bits, e.max, e.min, e.dtype) == (t.bits, t.max, t.min, t.dtype)
        assert repr(e) == repr(t)
    for case in [lambda lib: lib.finfo(lib.int32), lambda lib: lib.iinfo(lib.float32),
                 lambda lib: lib.iinfo(lib.bool), lambda lib: lib.finfo("float32")]:
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


def test_constants():
    assert (ember.pi, ember.e, ember.inf) == (torch.pi, torch.e, torch.inf)
    assert np.isnan(ember.nan) and np.isnan(torch.nan)


# ---- printing -----------------------------------------------------------------------------
PRINTED = [np.arange(20.0) / 3, np.arange(2000.0), np.array([1.123456, 2.0]),
           np.array([1e-8, 2e10]), np.array([1.5, np.nan, -np.inf]), np.arange(12.0).reshape(3, 4),
           np.array([1.0, 2.0]), np.arange(10), np.array(2.5), np.arange(24).reshape(2, 3, 4) / 7]
OPTIONS = [dict(precision=2, linewidth=30), dict(profile="short"), dict(profile="full"),
           dict(sci_mode=True), dict(sci_mode=False), dict(threshold=5, edgeitems=1),
           dict(threshold=3, edgeitems=0),
           dict(profile="default")]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_set_printoptions(options):
    try:
        for lib in (ember, torch):
            lib.set_printoptions(**options)
        for a in PRINTED:
            assert repr(ember.tensor(a)) == repr(torch.tensor(a)).replace("torch.", "ember.")
    finally:
        for lib in (ember, torch):
            lib.set_printoptions(profile="default")


def test_format():
    for spec in [".3f", "", "8.2e", ">10"]:
        assert format(ember.tensor(1.23456), spec) == format(torch.tensor(1.23456), spec)
    assert f"{ember.tensor(3):5d}" == f"{torch.tensor(3):5d}"
    assert f"{ember.tensor([1.5, 2.0])}" == f"{torch.tensor([1.5, 2.0])}"
    assert error_of(lambda: f"{ember.tensor([1.5, 2.0]):.3f}") == \
        error_of(lambda: f"{torch.tensor([1.5, 2.0]):.3f}")


# ---- range indexing, ember.range ----------------------------------------------------------
def test_indexing_with_a_range():
    a = rng().standard_normal((3, 4))
    compare(lambda lib, x: x[range(2)], a)
    compare(lambda lib, x: x[1, range(1, 4, 2)], a)
    compare(lambda lib, x: x[range(2), range(2)], a)
    compare(lambda lib, x: x[range(0)], a)
    for lib in (ember, torch):
        x = lib.zeros(3, 2)
        x[range(1, 3)] = 1.0
        assert x.sum().item() == 4


def test_range_is_inclusive_and_warns():
    for args, kwargs in [((1, 4), {}), ((0, 1, 0.25), {}), ((1, 4), dict(dtype="long")),
                         ((4, 1, -1), {}), ((0, 5, 2), {})]:
        if kwargs:
            kwargs = dict(dtype=ember.long), dict(dtype=torch.long)
        else:
            kwargs = {}, {}
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            e = ember.range(*args, **kwargs[0])
        with pytest.warns(UserWarning, match="torch.range is deprecated"):
            t = torch.range(*args, **kwargs[1])
        assert e.tolist() == t.tolist() and e.dtype.name == str(t.dtype).split(".")[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert error_of(lambda: ember.range(4, 1)) == error_of(lambda: torch.range(4, 1))


# ---- out= ---------------------------------------------------------------------------------
def test_out_is_written_and_returned():
    for lib in (ember, torch):
        a, b = lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0])
        c = lib.empty(2)
        assert lib.add(a, b, out=c) is c and c.tolist() == [4.0, 6.0]
        assert lib.exp(lib.zeros(2), out=c) is c and c.tolist() == [1.0, 1.0]
        assert lib.atan2(a, b, out=c) is c
        np.testing.assert_allclose(c.numpy(), np.arctan2([1, 2], [3, 4]), rtol=1e-6)
        lib.mul(a, b, out=c)
        assert c.tolist() == [3.0, 8.0]
        d = lib.empty(2, dtype=lib.float64)  # a wider float: cast
        lib.div(a, b, out=d)
        assert d.dtype == lib.float64
        values, indices = lib.empty(0), lib.empty(0, dtype=lib.long)
        r = lib.max(lib.tensor([[1.0, 5.0], [7.0, 2.0]]), 1, out=(values, indices))
        assert r[0] is values and r[1] is indices and indices.tolist() == [1, 0]
        assert lib.zeros(3, out=lib.empty(3, dtype=lib.long)).dtype == lib.long
        assert lib.arange(4, out=lib.empty(0)).tolist() == [0.0, 1.0, 2.0, 3.0]
        n = lib.empty(2, 2)
        lib.nn.functional.normalize(lib.ones(2, 2), dim=1, out=n)
        np.testing.assert_allclose(n.numpy(), np.full((2, 2), 0.5 ** 0.5), rtol=1e-6)


def test_out_errors_and_resize_warning():
    cases = [
        lambda lib: lib.add(lib.ones(3, requires_grad=True), lib.ones(3), out=lib.empty(3)),
        lambda lib: lib.add(lib.ones(3), lib.ones(3), out=lib.empty(3, requires_grad=True)),
        lambda lib: lib.add(lib.ones(3), lib.ones(3), out=lib.empty(3, dtype=lib.long)),
        lambda lib: lib.add(lib.ones(3).int(), lib.ones(3).int(), out=lib.empty(3, dtype=lib.bool)),
        lambda lib: lib.sin(lib.ones(3, requires_grad=True), out=lib.empty(3)),
        lambda lib: lib.zeros(3, dtype=lib.float64, out=lib.empty(3, dtype=lib.long)),
        lambda lib: lib.zeros(3, out=lib.empty(3, requires_grad=True)),
    ]
    for case in cases:
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match=r"had shape \[2\], which does not match the "
                                             r"required output shape \[3\]"):
            out = lib.add(lib.ones(3), 1, out=lib.empty(2))
        assert out.tolist() == [2.0, 2.0, 2.0]
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # an empty out is resized silently
            lib.add(lib.ones(3), 1, out=lib.empty(0))
        with lib.no_grad():  # no gradient wanted: allowed
            w = lib.empty(3, requires_grad=True)
            lib.add(lib.ones(3), 1, out=w)
            assert w.tolist() == [2.0, 2.0, 2.0] and w.grad_fn is None


# ---- memory formats -----------------------------------------------------------------------
def test_memory_formats():
    for lib in (ember, torch):
        x = lib.ones(2, 3).t()
        assert lib.clone(x, memory_format=lib.contiguous_format).is_contiguous()
        assert x.contiguous(memory_format=lib.contiguous_format).is_contiguous()
        assert lib.zeros_like(x, memory_format=lib.preserve_format).shape == x.shape
        assert x.double(memory_format=lib.preserve_format).dtype == lib.float64
    assert repr(ember.channels_last) == repr(torch.channels_last)
    for lib in (ember, torch):  # channels-last layouts (tests/parity/memory_format/: more)
        assert lib.ones(1, 2, 3, 3).clone(memory_format=lib.channels_last).stride() == \
            (18, 1, 6, 2)
        assert lib.empty_like(lib.ones(1, 2, 3, 3), memory_format=lib.channels_last).stride() \
            == (18, 1, 6, 2)


# ---- bfloat16 -----------------------------------------------------------------------------
def test_bfloat16_creation_casting_arithmetic_and_printing():
    values = [1.5, -2.25, 3.0078125, 100.3]
    e, t = ember.tensor(values, dtype=ember.bfloat16), torch.tensor(values, dtype=torch.bfloat16)
    assert e.tolist() == t.tolist() and e.dtype.name == "bfloat16"
    assert repr(e) == repr(t).replace("torch.", "ember.")
    assert (e * 2.5).tolist() == (t * 2.5).tolist() and (e * 2.5).dtype is ember.bfloat16
    assert (e + e).tolist() == (t + t).tolist()
    assert (e.float() * 3).tolist() == (t.float() * 3).tolist()
    assert ember.tensor(values).to(ember.bfloat16).tolist() == \
        torch.tensor(values).to(torch.bfloat16).tolist()
    assert (e + ember.ones(4, dtype=ember.float16)).dtype.name == \
        str((t + torch.ones(4, dtype=torch.float16)).dtype).split(".")[1]
    assert (e + ember.ones(4)).dtype is ember.float32
    assert e.is_floating_point() and ember.ones(2, dtype=ember.bfloat16).sum().item() == 2
    assert ember.promote_types(ember.bfloat16, ember.int64) is ember.bfloat16


BF16_PRODUCTS = {
    "matmul": lambda lib, a, b: a @ b,
    "mm": lambda lib, a, b: lib.mm(a, b),
    "bmm": lambda lib, a, b: lib.bmm(a[None], b[None]),
    "mv": lambda lib, a, b: lib.mv(a, b[0]),
    "dot": lambda lib, a, b: lib.dot(a[0], b[0]),
    "linear": lambda lib, a, b: lib.nn.functional.linear(a, b),
    "einsum": lambda lib, a, b: lib.einsum("ij,kj->ik", a, b),
    "einsum3": lambda lib, a, b: lib.einsum("ij,jk,kl->il", a, b, a),
}


@pytest.mark.parametrize("name", sorted(BF16_PRODUCTS))
def test_bfloat16_products_stay_bfloat16(name):
    # accumulated in float32, rounded once to bfloat16, as PyTorch's CPU kernels do
    r = np.random.default_rng(20)
    a, b = r.standard_normal((3, 3)), r.standard_normal((3, 3))
    t = BF16_PRODUCTS[name](torch, torch.tensor(a).bfloat16(), torch.tensor(b).bfloat16())
    e = BF16_PRODUCTS[name](ember, ember.tensor(a).bfloat16(), ember.tensor(b).bfloat16())
    assert e.dtype is ember.bfloat16 and t.dtype is torch.bfloat16
    if name == "einsum3":  # torch rounds each pairwise contraction to bfloat16 on the way
        np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=2e-2, atol=1e-2)
    else:
        assert e.float().tolist() == t.float().tolist()


BF16_REDUCTIONS = {
    "vector_norm": lambda lib, x: lib.linalg.vector_norm(x),
    "norm_1": lambda lib, x: x.norm(1, dim=0),
    "var": lambda lib, x: x.var(),
    "std": lambda lib, x: x.std(1),
    "softmax": lambda lib, x: lib.softmax(x, 0),
    "log_softmax": lambda lib, x: lib.log_softmax(x, -1),
    "logsumexp": lambda lib, x: lib.logsumexp(x, 1),
}


@pytest.mark.parametrize("name", sorted(BF16_REDUCTIONS))
def test_bfloat16_reductions(name):
    # computed in float32 and rounded to bfloat16 (torch may differ by an ulp)
    x = np.random.default_rng(21).standard_normal((3, 4))
    t = BF16_REDUCTIONS[name](torch, torch.tensor(x).bfloat16())
    e = BF16_REDUCTIONS[name](ember, ember.tensor(x).bfloat16())
    assert e.dtype is ember.bfloat16 and t.dtype is torch.bfloat16
    np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["var", "std", "logsumexp"])
def test_complex_var_std_logsumexp(name):
    # var/std of complex values are real; logsumexp keeps the imaginary parts
    x = np.array([[1 + 2j, 3 - 1j, 0.5j], [-2 + 0.5j, 1 - 1j, 2 + 3j]], np.complex128)
    fn = {"var": lambda lib, t: t.var(1), "std": lambda lib, t: t.std(),
          "logsumexp": lambda lib, t: lib.logsumexp(t, 0)}[name]
    for dtype in (np.complex64, np.complex128):
        _same(fn(ember, ember.tensor(x.astype(dtype))), fn(torch, torch.tensor(x.astype(dtype))))


# ---- complex ------------------------------------------------------------------------------
def _same(e, t):
    assert tuple(e.shape) == tuple(t.shape)
    assert e.dtype.name == str(t.dtype).split(".")[1], (e.dtype, t.dtype)
    np.testing.assert_allclose(e.numpy(), t.resolve_conj().numpy(), rtol=1e-6, atol=1e-7)


COMPLEX_DATA = [[1 + 2j, 3 - 1j], [0.5 - 0.25j, -2 + 0j]]


def test_complex_creation_and_promotion():
    for case in [lambda lib: lib.tensor(COMPLEX_DATA),
                 lambda lib: lib.tensor(COMPLEX_DATA, dtype=lib.complex128),
                 lambda lib: lib.tensor([1.0, 2j]),
                 lambda lib: lib.tensor(np.array(COMPLEX_DATA)),
                 lambda lib: lib.tensor(np.array(COMPLEX_DATA, np.complex64)),
                 lambda lib: lib.tensor([[1, 2]], dtype=lib.cdouble),
                 lambda lib: lib.ones(2, dtype=lib.float64) * 1j,
                 lambda lib: lib.ones(2) * 1j,
                 lambda lib: lib.arange(3) * (1 + 1j),
                 lambda lib: lib.tensor(COMPLEX_DATA) + lib.ones(2, dtype=lib.float64),
                 lambda lib: lib.tensor(COMPLEX_DATA) + lib.tensor(2.0, dtype=lib.float64),
                 lambda lib: lib.tensor(1.0, dtype=lib.float64) + lib.tensor(COMPLEX_DATA[0]),
                 lambda lib: lib.zeros(2, 2, dtype=lib.complex64),
                 lambda lib: lib.ones(2).to(lib.complex128),
                 lambda lib: lib.ones(2).cfloat()]:
        _same(case(ember), case(torch))
    assert ember.promote_types(ember.complex64, ember.float64) is ember.complex128
    assert ember.result_type(ember.ones(2), 1j) is ember.complex64
    assert error_of(lambda: ember.tensor([1 + 2j], dtype=ember.float32)) == \
        error_of(lambda: torch.tensor([1 + 2j], dtype=torch.float32))


def test_complex_arithmetic_and_reductions():
    a = np.array(COMPLEX_DATA, np.complex64)
    b = np.array([[2 - 1j, 0.5j], [1 + 1j, 3 + 0j]], np.complex64)
    for case in [lambda lib, x, y: x + y, lambda lib, x, y: x - y, lambda lib, x, y: x * y,
                 lambda lib, x, y: x / y, lambda lib, x, y: x * 2.5, lambda lib, x, y: 1 / x,
                 lambda lib, x, y: x @ y, lambda lib, x, y: x.sum(), lambda lib, x, y: x.mean(0),
                 lambda lib, x, y: x.exp(), lambda lib, x, y: x.abs(), lambda lib, x, y: x.conj(),
                 lambda lib, x, y: lib.angle(x), lambda lib, x, y: x.angle(),
                 lambda lib, x, y: x.t(), lambda lib, x, y: x.reshape(4)[1:],
                 lambda lib, x, y: x == y, lambda lib, x, y: lib.isreal(x),
                 lambda lib, x, y: lib.isfinite(x), lambda lib, x, y: x.real + x.imag,
                 lambda lib, x, y: x.mH, lambda lib, x, y: lib.cat([x, y])]:
        _same(case(ember, ember.tensor(a), ember.tensor(b)),
              case(torch, torch.tensor(a), torch.tensor(b)))
    assert ember.tensor(COMPLEX_DATA)[0, 1].item() == torch.tensor(COMPLEX_DATA)[0, 1].item()
    assert complex(ember.tensor(COMPLEX_DATA)[1, 0]) == complex(torch.tensor(COMPLEX_DATA)[1, 0])


def test_complex_views_and_constructors():
    re_, im = rng().standard_normal((3, 2)), rng(1).standard_normal((2,))
    for case in [lambda lib, r, i: lib.complex(r, i), lambda lib, r, i: lib.polar(r.abs(), i),
                 lambda lib, r, i: lib.view_as_real(lib.complex(r, i)),
                 lambda lib, r, i: lib.view_as_complex(lib.stack([r, r * 2], -1)),
                 lambda lib, r, i: lib.view_as_complex(lib.stack([r, r], -1)[:, ::2]),
                 lambda lib, r, i: lib.real(lib.complex(r, i)),
                 lambda lib, r, i: lib.imag(lib.complex(r, i)),
                 lambda lib, r, i: lib.angle(r), lambda lib, r, i: lib.angle(lib.tensor([-1, 2])),
                 lambda lib, r, i: r.real, lambda lib, r, i: lib.conj(r)]:
        _same(case(ember, ember.tensor(re_), ember.tensor(im)),
              case(torch, torch.tensor(re_), torch.tensor(im)))
    for lib in (ember, torch):  # .real/.imag and view_as_real write through
        z = lib.tensor([1 + 2j, 3 - 1j])
        z.imag[0] = 5.0
        lib.view_as_real(z)[1, 0] = 7.0
        assert z.tolist() == [1 + 5j, 7 - 1j]
    for case in [lambda lib: lib.complex(lib.ones(2).long(), lib.ones(2).long()),
                 lambda lib: lib.complex(lib.ones(2), lib.ones(2).double()),
                 lambda lib: lib.view_as_real(lib.ones(2)),
                 lambda lib: lib.view_as_complex(lib.ones(2, 3)),
                 lambda lib: lib.view_as_complex(lib.ones(2, 2).long()),
                 lambda lib: lib.view_as_complex(lib.ones(2, 2).t()),
                 lambda lib: lib.ones(2).imag]:
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


def test_complex_printing():
    for data in [COMPLEX_DATA, [1 + 2j, 3 - 1j], [1.5 + 2j], 1j, [1e-5 + 1j], -0.0 - 0j,
                 [[1 + 1j, 2.5 - 3j], [0j, -1 - 1e-5j]], [complex(np.nan, 1), np.inf + 0j]]:
        assert repr(ember.tensor(data)) == repr(torch.tensor(data))
    assert repr(ember.tensor(COMPLEX_DATA, dtype=ember.complex128)) == \
        repr(torch.tensor(COMPLEX_DATA, dtype=torch.complex128)).replace("torch.", "ember.")


def test_complex_casting_to_real_warns_as_torch():
    """Once per process in both libraries (fresh processes: the state is process-wide)."""
    import subprocess
    import sys
    code = ("import warnings, {lib} as t\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    values = [t.tensor([1 + 2j]).float().tolist() for _ in range(2)]\n"
            "print(values, len(w), str(w[0].message).split(' (Triggered')[0])")
    outputs = [subprocess.run([sys.executable, "-c", code.format(lib=lib)], capture_output=True,
                              text=True, timeout=120).stdout for lib in ("torch", "ember")]
    assert outputs[0] == outputs[1]
    assert outputs[0].startswith("[[1.0], [1.0]] 1 Casting complex values to real discards")


def test_complex_autograd_is_refused_clearly_where_unsupported():
    # complex leaves may require grad; an op without a complex backward refuses
    assert ember.tensor([1j], requires_grad=True).requires_grad
    z = ember.ones(2, requires_grad=True) * ember.tensor([1j, 2j])
    with pytest.raises(NotImplementedError, match="autograd for NanToNum on complex"):
        z.nan_to_num()
    # bfloat16 is a floating dtype for autograd, as in PyTorch
    for lib in (ember, torch):
        assert lib.ones(2, dtype=lib.bfloat16).requires_grad_().requires_grad


def test_other_accepted_parameters_are_honoured():
    for case in [lambda lib: lib.tensor([1.0], pin_memory=True),
                 lambda lib: lib.empty(2, pin_memory=True),
                 lambda lib: lib.empty_like(lib.ones(2), device="cuda")]:
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))
    compare(lambda lib, x: lib.norm(x, dtype=lib.float64), rng().standard_normal(5)
            .astype(np.float32))


@pytest.mark.parametrize("name", ["exp", "sin", "sqrt", "tanh", "sigmoid", "asin", "log", "abs",
                                  "neg", "sum", "mean", "max"])
def test_bfloat16_unary_math_and_reductions_stay_bfloat16(name):
    e = getattr(ember, name)(ember.tensor([0.25, 0.5, 0.75], dtype=ember.bfloat16))
    t = getattr(torch, name)(torch.tensor([0.25, 0.5, 0.75], dtype=torch.bfloat16))
    assert e.dtype is ember.bfloat16 and np.array(e.tolist()).tolist() == \
        np.array(t.tolist()).tolist()


def test_methods_take_no_out_as_in_torch():
    for lib in (ember, torch):
        x = lib.ones(2)
        with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
            x.add(x, out=lib.empty(2))
        with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
            x.sum(0, out=lib.empty(()))


def _takes_out(fn):
    """Whether a torch function accepts ``out=`` (its signature is not introspectable)."""
    x = torch.ones(2, 2)
    for args in ((x,), (x, x)):
        try:
            fn(*args, out=torch.empty(0))
        except TypeError as e:
            if "unexpected keyword argument 'out'" in str(e):
                return False
        except Exception:  # noqa: BLE001 -- wrong arguments for this op: out= was accepted
            pass
    return True


def test_only_functions_pytorch_gives_out_take_out():
    import inspect
    from ember._registry import DECLARED
    with_out = [name for name, d in DECLARED.items() if d.function is not None
                and "out" in inspect.signature(d.function).parameters
                and hasattr(torch, name)]
    assert {"add", "sin", "isposinf"} <= set(with_out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert [name for name in with_out if not _takes_out(getattr(torch, name))] == []
    with pytest.raises(TypeError, match="unexpected keyword argument 'out'"):
        ember.relu(ember.ones(2), out=ember.empty(2))


OUT_DTYPE_CASES = {
    "abs": lambda lib, x, out: lib.abs(x, out=out),
    "neg": lambda lib, x, out: lib.neg(x, out=out),
    "floor": lambda lib, x, out: lib.floor(x, out=out),
    "round": lambda lib, x, out: lib.round(x, out=out),
    "sign": lambda lib, x, out: lib.sign(x, out=out),
    "nan_to_num": lambda lib, x, out: lib.nan_to_num(x, out=out),
    "amax": lambda lib, x, out: lib.amax(x, 0, out=out),
    "argmax": lambda lib, x, out: lib.argmax(x, out=out),
    "argmin": lambda lib, x, out: lib.argmin(x, 0, out=out),
    "nonzero": lambda lib, x, out: lib.nonzero(x, out=out),
    "all": lambda lib, x, out: lib.all(x, out=out),
    "any": lambda lib, x, out: lib.any(x, 0, out=out),
    "isposinf": lambda lib, x, out: lib.isposinf(x, out=out),
    "searchsorted": lambda lib, x, out: lib.searchsorted(x.sort().values, x, out=out),
    "searchsorted_int32": lambda lib, x, out: lib.searchsorted(x.sort().values, x,
                                                               out_int32=True, out=out),
    "bernoulli": lambda lib, x, out: lib.bernoulli(x.abs().clamp(max=1), out=out),
}


@pytest.mark.parametrize("out_dtype", ["float32", "float64", "int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("case", sorted(OUT_DTYPE_CASES))
def test_out_dtype_checks_as_torch(case, out_dtype):
    # which out= dtypes an op accepts differs per op in PyTorch (exact, index, bool...)
    x = np.array([[0.5, -1.5, 2.0], [0.25, 3.0, -0.75]])
    fn = OUT_DTYPE_CASES[case]

    def run(lib):
        out = lib.empty(0, dtype=getattr(lib, out_dtype))
        result = fn(lib, lib.tensor(x), out)
        assert result is out
        return out.dtype, tuple(out.shape)
    expected = error_of(lambda: run(torch))
    if case in ("all", "any") and out_dtype == "uint8":  # torch casts the input to uint8
        with pytest.raises(NotImplementedError, match="uint8 out="):
            run(ember)
        return
    assert error_of(lambda: run(ember)) == expected
    if expected is None and case != "bernoulli":
        compare(lambda lib, t: fn(lib, t, lib.empty(0, dtype=getattr(lib, out_dtype))), x,
                grad=False)


# ---- strides of empty tensors ---------------------------------------------------------------
@pytest.mark.parametrize("shape", [(0,), (2, 0, 3), (3, 0), (0, 0), (1, 0, 1)], ids=str)
def test_empty_tensor_strides(shape):
    for make in (lambda L: L.zeros(*shape), lambda L: L.empty(shape), lambda L: L.ones(shape)):
        assert make(ember).stride() == make(torch).stride()
    assert ember.zeros(2, 3)[:, :0].stride() == torch.zeros(2, 3)[:, :0].stride()
