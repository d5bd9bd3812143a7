"""Parity with PyTorch for the matmul family: baddbmm, addbmm, addmv, addr, addmm (with
their methods and in-place forms), chain_matmul, tensordot, inner and kron. Values and
gradients in float32 and float64, ``input`` broadcast to the product, transposed
(non-contiguous) inputs, ``beta=0`` ignoring NaN and inf, integer ``beta``/``alpha`` rules,
double backward, ``out=``, and the errors of wrong shapes and dtypes."""
import warnings

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]
SCALARS = [(1, 1), (0.5, 2.0), (0, 1.5), (2, 0), (-1, 0.25)]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ---- beta * input + alpha * product ---------------------------------------------------------
# (name, function of (lib, input, a, b, beta, alpha), input shapes that broadcast, a, b)
ADD_PRODUCTS = [
    ("baddbmm", lambda lib, i, x, y, **kw: lib.baddbmm(i, x, y, **kw),
     [(2, 3, 5), (3, 5), (5,), (1, 3, 1), ()], (2, 3, 4), (2, 4, 5)),
    ("addbmm", lambda lib, i, x, y, **kw: lib.addbmm(i, x, y, **kw),
     [(3, 5), (5,), (3, 1), ()], (2, 3, 4), (2, 4, 5)),
    ("addmv", lambda lib, i, x, y, **kw: lib.addmv(i, x, y, **kw),
     [(3,), (1,), ()], (3, 4), (4,)),
    ("addr", lambda lib, i, x, y, **kw: lib.addr(i, x, y, **kw),
     [(3, 4), (4,), (3, 1), ()], (3,), (4,)),
    ("addmm", lambda lib, i, x, y, **kw: lib.addmm(i, x, y, **kw),
     [(3, 5), (5,), (1, 5), ()], (3, 4), (4, 5)),
]
ADD_IDS = [case[0] for case in ADD_PRODUCTS]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("beta,alpha", SCALARS, ids=str)
@pytest.mark.parametrize("name,fn,inputs,sa,sb", ADD_PRODUCTS, ids=ADD_IDS)
def test_add_products(name, fn, inputs, sa, sb, beta, alpha, dtype):
    a, b = randn(sa, dtype, 1), randn(sb, dtype, 2)
    for k, shape in enumerate(inputs):
        inp = randn(shape, dtype, 3 + k)
        compare(lambda lib, i, x, y: fn(lib, i, x, y, beta=beta, alpha=alpha), inp, a, b)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn,inputs,sa,sb", ADD_PRODUCTS, ids=ADD_IDS)
def test_add_products_noncontiguous_and_methods(name, fn, inputs, sa, sb, dtype):
    inp, a, b = randn(inputs[0], dtype, 4), randn(sa, dtype, 5), randn(sb, dtype, 6)
    compare(lambda lib, i, x, y: fn(lib, i, x, y, beta=0.5, alpha=-2), inp, a, b,
            noncontiguous=True)
    method = lambda lib, i, x, y: getattr(i, name)(x, y, beta=1.5, alpha=0.5)  # noqa: E731
    compare(method, inp, a, b, noncontiguous=True)
    compare(lambda lib, i, x, y: getattr(i, name)(x, y), inp, a, b)


INPLACE = ["baddbmm", "addbmm", "addmv", "addr", "addmm"]


def test_inplace_forms_are_those_of_torch():
    for name in ["baddbmm", "addbmm", "addmv", "addr", "addmm", "chain_matmul", "tensordot",
                 "inner", "kron"]:
        for attr in (name, name + "_"):
            assert hasattr(ember.Tensor, attr) == hasattr(torch.Tensor, attr), attr
        assert hasattr(ember, name) == hasattr(torch, name), name


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn,inputs,sa,sb", ADD_PRODUCTS, ids=ADD_IDS)
def test_inplace_forms(name, fn, inputs, sa, sb, dtype):
    inp, a, b = randn(inputs[0], dtype, 7), randn(sa, dtype, 8), randn(sb, dtype, 9)

    def inplace(lib, i, x, y):
        out = i.clone()  # a leaf requiring grad cannot change in place
        result = getattr(out, name + "_")(x, y, beta=0.5, alpha=3)
        assert result is out
        return out
    compare(inplace, inp, a, b)
    compare(inplace, inp, a, b, noncontiguous=True)


@pytest.mark.parametrize("name,fn,inputs,sa,sb", ADD_PRODUCTS, ids=ADD_IDS)
def test_beta_zero_ignores_nan_and_inf_in_input(name, fn, inputs, sa, sb):
    inp = np.full(inputs[0], np.nan)
    inp.reshape(-1)[::2] = np.inf
    a, b = randn(sa, np.float64, 10), randn(sb, np.float64, 11)
    compare(lambda lib, i, x, y: fn(lib, i, x, y, beta=0, alpha=0.5), inp, a, b)
    compare(lambda lib, i, x, y: fn(lib, i, x, y, beta=0), inp, a, b, grad=False)
    for lib in (torch, ember):  # the values really are finite (not NaN on both sides)
        t = lib.tensor
        assert bool(lib.isfinite(fn(lib, t(inp), t(a), t(b), beta=0)).all())


@pytest.mark.parametrize("name,fn,inputs,sa,sb", ADD_PRODUCTS, ids=ADD_IDS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_tensors(name, fn, inputs, sa, sb, dtype):
    rng = np.random.default_rng(12)
    inp, a, b = (rng.integers(-5, 6, s).astype(dtype) for s in (inputs[0], sa, sb))
    compare(lambda lib, i, x, y: fn(lib, i, x, y, beta=3, alpha=-2), inp, a, b)
    if name != "addr":  # the others truncate float scalars, as their kernels convert them
        compare(lambda lib, i, x, y: fn(lib, i, x, y, beta=1.7, alpha=-2.5), inp, a, b)


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0, 1), (1, 0), (2, True), (False, 3)],
                         ids=str)
def test_addr_of_booleans(beta, alpha):
    rng = np.random.default_rng(13)
    inp, v1, v2 = rng.random((3, 4)) > 0.5, rng.random(3) > 0.5, rng.random(4) > 0.5
    compare(lambda lib, i, x, y: lib.addr(i, x, y, beta=beta, alpha=alpha), inp, v1, v2)


@pytest.mark.parametrize("dtypes", [(np.float64, np.float32, np.float32),
                                    (np.float32, np.int64, np.float64),
                                    (np.int64, np.int32, np.int64)], ids=str)
def test_addr_promotes(dtypes):
    rng = np.random.default_rng(14)
    inp, v1, v2 = (rng.integers(-4, 5, s).astype(d) for s, d in zip([(3, 4), (3,), (4,)],
                                                                        dtypes))
    # values only: PyTorch's backward of a mixed-dtype addr fails (its addmv sees two dtypes)
    compare(lambda lib, i, x, y: lib.addr(i, x, y, beta=2, alpha=3), inp, v1, v2, grad=False)


@pytest.mark.parametrize("dtype", [np.float16, np.complex64])
def test_other_dtypes(dtype):
    rng = np.random.default_rng(15)

    def arr(*shape):
        values = rng.standard_normal(shape)
        if dtype == np.complex64:
            values = values + 1j * rng.standard_normal(shape)
        return values.astype(dtype)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype == np.float16 else {}
    for fn, arrays in [
        (lambda lib, i, x, y: lib.baddbmm(i, x, y, beta=0.5, alpha=2), (arr(3, 5), arr(2, 3, 4),
                                                                        arr(2, 4, 5))),
        (lambda lib, i, x, y: lib.addmv(i, x, y, alpha=-1), (arr(3), arr(3, 4), arr(4))),
        (lambda lib, i, x, y: lib.addr(i, x, y, beta=2), (arr(3, 4), arr(3), arr(4))),
        (lambda lib, x, y: lib.tensordot(x, y, dims=1), (arr(2, 3), arr(3, 4))),
        (lambda lib, x, y: lib.kron(x, y), (arr(2, 3), arr(2, 2))),
    ]:
        compare(fn, *arrays, grad=False, **tol)


# ---- chain_matmul ---------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shapes", [[(2, 3)], [(2, 3), (3, 4)], [(2, 3), (3, 4), (4, 1)],
                                    [(5, 3), (3, 2), (2, 6), (6, 4)], [(1, 3), (3, 1)],
                                    [(3, 7), (7, 2), (2, 9), (9, 4), (4, 1), (1, 5)]], ids=str)
def test_chain_matmul(shapes, dtype):
    arrays = [randn(s, dtype, 20 + k) for k, s in enumerate(shapes)]
    compare(lambda lib, *ms: lib.chain_matmul(*ms), *arrays)
    compare(lambda lib, *ms: lib.chain_matmul(*ms), *arrays, noncontiguous=True)


def test_chain_matmul_warns_as_torch():
    expected = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                "more tensors rather than multiple parameters.")
    messages = {}
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            lib.chain_matmul(lib.ones(2, 3), lib.ones(3, 4), lib.ones(4, 2))
        messages[lib] = [(w.category, str(w.message)) for w in seen]
    assert messages[ember] == [(UserWarning, expected)]
    # PyTorch warns once per process (with where in its C++ it was triggered)
    for category, message in messages[torch]:
        assert category is UserWarning and message.startswith(expected)


def test_chain_matmul_of_one_matrix_is_a_copy():
    for lib in (torch, ember):
        m = lib.ones(2, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = lib.chain_matmul(m)
        c += 1
        assert float(m.sum()) == 6.0


# ---- tensordot, inner, kron -----------------------------------------------------------------
TENSORDOT = [
    ((2, 3, 4), (3, 4, 5), 2),
    ((2, 3), (3, 5), 1),
    ((2, 3), (4, 5), 0),
    ((2, 3, 4), (2, 3, 4), 3),
    ((3, 4, 5), (4, 3, 2), ([1, 0], [0, 1])),
    ((3, 4, 5), (4, 3, 2), [[1, 0], [0, 1]]),
    ((3, 4, 5), (4, 3, 2), ([-2, 0], [0, -2])),
    ((3, 5, 4, 6), (6, 4, 5, 3), ([2, 1, 3], [1, 2, 0])),
    ((3, 4), (2,), ([], [])),
    ((3, 1, 5), (4, 3, 2), ([0, 1], [1, 0])),   # a size-1 dimension broadcasts
    ((3, 4, 5), (1, 3, 2), ([0, 1], [1, 0])),
    ((3, 1), (1, 4), ([1], [0])),
    ((), (3, 4), 0),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sa,sb,dims", TENSORDOT, ids=str)
def test_tensordot(sa, sb, dims, dtype):
    a, b = randn(sa, dtype, 30), randn(sb, dtype, 31)
    compare(lambda lib, x, y: lib.tensordot(x, y, dims), a, b)
    compare(lambda lib, x, y: lib.tensordot(x, y, dims=dims), a, b, noncontiguous=True)


@pytest.mark.parametrize("dims", [np.array(2), np.array([2]), np.array([[1, 2], [0, 1]])],
                         ids=str)
def test_tensordot_dims_as_a_tensor(dims):
    a, b = randn((2, 3, 4), np.float64, 32), randn((3, 4, 5), np.float64, 33)
    compare(lambda lib, x, y: lib.tensordot(x, y, dims=lib.tensor(dims)), a, b)


def test_tensordot_of_integers():
    rng = np.random.default_rng(34)
    a, b = rng.integers(-5, 6, (2, 3, 4)), rng.integers(-5, 6, (4, 3)).astype(np.int32)
    compare(lambda lib, x, y: lib.tensordot(x, y, ([1, 2], [1, 0])), a, b.astype(np.int64))
    compare(lambda lib, x, y: lib.tensordot(x, y, ([0, 1], [0, 1])),
            b[:, :1], b)  # int32, a summed size-1 dimension keeps the dtype


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sa,sb", [((4,), (4,)), ((2, 3, 4), (5, 4)), ((3,), (2, 3)),
                                   ((), (2, 3)), ((2, 3), ()), ((2, 0), (3, 0))], ids=str)
def test_inner(sa, sb, dtype):
    a, b = randn(sa, dtype, 35), randn(sb, dtype, 36)
    compare(lambda lib, x, y: lib.inner(x, y), a, b)
    compare(lambda lib, x, y: x.inner(y), a, b, noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("sa,sb", [((2, 3), (4, 5)), ((2,), (4,)), ((2, 3, 4), (4, 5)),
                                   ((3,), (4, 5)), ((), (2, 3)), ((2, 3), ()), ((), ()),
                                   ((2, 0), (5, 3)), ((1, 2, 1), (3, 1, 2))], ids=str)
def test_kron(sa, sb, dtype):
    a, b = randn(sa, dtype, 37), randn(sb, dtype, 38)
    compare(lambda lib, x, y: lib.kron(x, y), a, b)
    compare(lambda lib, x, y: x.kron(y), a, b)


@pytest.mark.parametrize("dtypes", [(np.int64, np.float32), (np.float32, np.float64),
                                    (np.bool_, np.bool_), (np.int64, np.bool_)], ids=str)
def test_kron_promotes(dtypes):
    rng = np.random.default_rng(39)
    a, b = (rng.integers(-3, 4, s).astype(d) for s, d in zip([(2, 3), (2, 2)], dtypes))
    compare(lambda lib, x, y: lib.kron(x, y), a, b)


# ---- double backward ------------------------------------------------------------------------
def _double_backward(lib, fn, arrays, seed):
    """The gradient of <grads of <fn's output, v>, w> with respect to every input."""
    rng = np.random.default_rng(seed)
    xs = [lib.tensor(a, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    v = lib.tensor(rng.standard_normal(tuple(out.shape)))
    grads = lib.autograd.grad(out, xs, v, create_graph=True)
    total = sum((g * lib.tensor(rng.standard_normal(tuple(g.shape)))).sum() for g in grads)
    return [None if g is None else g.detach().numpy()
            for g in lib.autograd.grad(total, xs, allow_unused=True)]


DOUBLE = [
    ("baddbmm", lambda lib, i, x, y: lib.baddbmm(i, x, y, beta=0.5, alpha=2).sin(),
     [(3, 1), (2, 3, 4), (2, 4, 1)]),
    ("addbmm", lambda lib, i, x, y: lib.addbmm(i, x, y, beta=2, alpha=-1).sin(),
     [(3,), (2, 2, 4), (2, 4, 3)]),
    ("addmv", lambda lib, i, x, y: lib.addmv(i, x, y, alpha=0.5).sin(), [(3,), (3, 4), (4,)]),
    ("addr", lambda lib, i, x, y: lib.addr(i, x, y, beta=-1, alpha=2).sin(),
     [(3, 4), (3,), (4,)]),
    ("addmm beta 0", lambda lib, i, x, y: lib.addmm(i, x, y, beta=0).sin(),
     [(2, 3), (2, 4), (4, 3)]),
    ("chain_matmul", lambda lib, x, y, z: lib.chain_matmul(x, y, z).sin(),
     [(2, 3), (3, 4), (4, 2)]),
    ("tensordot", lambda lib, x, y: lib.tensordot(x, y, ([1, 0], [0, 1])).sin(),
     [(3, 4, 2), (4, 3)]),
    ("inner", lambda lib, x, y: lib.inner(x, y).sin(), [(2, 3), (4, 3)]),
    ("kron", lambda lib, x, y: lib.kron(x, y).sin(), [(2, 3), (3, 2)]),
]


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("name,fn,shapes", DOUBLE, ids=[d[0] for d in DOUBLE])
def test_double_backward(name, fn, shapes):
    arrays = [randn(s, np.float64, 40 + k) for k, s in enumerate(shapes)]
    got = {lib: _double_backward(lib, fn, arrays, 41) for lib in (torch, ember)}
    for t, e in zip(got[torch], got[ember]):
        assert (t is None) == (e is None)
        if t is not None:
            np.testing.assert_allclose(e, t, rtol=1e-7, atol=1e-9)


# ---- out= -----------------------------------------------------------------------------------
OUT = [
    ("baddbmm", lambda lib, out: lib.baddbmm(lib.ones(3, 1), lib.ones(2, 3, 4),
                                             lib.ones(2, 4, 5), beta=2, out=out), (2, 3, 5)),
    ("addbmm", lambda lib, out: lib.addbmm(lib.ones(5), lib.ones(2, 3, 4), lib.ones(2, 4, 5),
                                           alpha=3, out=out), (3, 5)),
    ("addmv", lambda lib, out: lib.addmv(lib.ones(3), lib.ones(3, 4), lib.ones(4), out=out),
     (3,)),
    ("addr", lambda lib, out: lib.addr(lib.ones(3, 4), lib.ones(3), lib.ones(4), out=out),
     (3, 4)),
    ("addmm", lambda lib, out: lib.addmm(lib.ones(3), lib.ones(2, 4), lib.ones(4, 3), out=out),
     (2, 3)),
    ("chain_matmul", lambda lib, out: lib.chain_matmul(lib.ones(2, 3), lib.ones(3, 4),
                                                       out=out), (2, 4)),
    ("tensordot", lambda lib, out: lib.tensordot(lib.ones(2, 3), lib.ones(3, 4), 1, out=out),
     (2, 4)),
    ("inner", lambda lib, out: lib.inner(lib.ones(2, 3), lib.ones(4, 3), out=out), (2, 4)),
    ("kron", lambda lib, out: lib.kron(lib.ones(2, 3), lib.ones(2, 2), out=out), (4, 6)),
]


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("name,fn,shape", OUT, ids=[o[0] for o in OUT])
def test_out(name, fn, shape):
    results = {}
    for lib in (torch, ember):
        out = lib.empty(shape)
        assert fn(lib, out) is out
        resized = lib.empty(7)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            fn(lib, resized)
        warned = [str(w.message) for w in seen if "resized" in str(w.message)]
        results[lib] = (out.numpy(), resized.numpy(), [m.split(" (Triggered")[0] for m in warned])
        wrong = [error_of(lambda: fn(lib, lib.empty(shape, dtype=d)))
                 for d in (lib.float64, lib.int64)]
        results[lib] += tuple(wrong)
    t, e = results[torch], results[ember]
    np.testing.assert_array_equal(e[0], t[0])
    np.testing.assert_array_equal(e[1], t[1])
    assert e[2:] == t[2:]  # the resize warning (none for addbmm) and the dtype errors


# ---- errors ---------------------------------------------------------------------------------
def _f(*s):
    return ("float32", s)


def _d(*s):
    return ("float64", s)


def _i(*s):
    return ("int64", s)


def _b(*s):
    return ("bool", s)


def _z(dt="float32"):
    return (dt, ())


def _make(lib, spec):
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], str):
        return lib.ones(spec[1], dtype=getattr(lib, spec[0]))
    return spec


ERRORS = [
    # baddbmm: input expanded first (expand's errors), then dtypes, then batch shapes
    ("baddbmm input 4d", "baddbmm", [_f(1, 2, 3, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("baddbmm input mismatch", "baddbmm", [_f(4), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("baddbmm batch1 2d", "baddbmm", [_f(2, 3, 5), _f(3, 4), _f(2, 4, 5)], {}),
    ("baddbmm batch2 2d", "baddbmm", [_f(2, 3, 5), _f(2, 3, 4), _f(4, 5)], {}),
    ("baddbmm batch1 1d", "baddbmm", [_f(2, 3, 5), _f(3), _f(2, 4, 5)], {}),
    ("baddbmm batch1 0d", "baddbmm", [_f(2, 3, 5), _z(), _f(2, 4, 5)], {}),
    ("baddbmm batch1 4d", "baddbmm", [_f(2, 3, 5), _f(2, 3, 4, 1), _f(2, 4, 5)], {}),
    ("baddbmm batch2 4d", "baddbmm", [_f(2, 3, 5), _f(2, 3, 4), _f(2, 4, 5, 1)], {}),
    ("baddbmm batches", "baddbmm", [_f(2, 3, 5), _f(2, 3, 4), _f(3, 4, 5)], {}),
    ("baddbmm inner", "baddbmm", [_f(2, 3, 5), _f(2, 3, 4), _f(2, 3, 5)], {}),
    ("baddbmm input dtype", "baddbmm", [_d(2, 3, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("baddbmm batch1 dtype", "baddbmm", [_f(2, 3, 5), _i(2, 3, 4), _f(2, 4, 5)], {}),
    ("baddbmm batch2 dtype", "baddbmm", [_f(2, 3, 5), _f(2, 3, 4), _d(2, 4, 5)], {}),
    ("baddbmm dtype before shape", "baddbmm", [_d(2, 3, 5), _f(2, 3, 4), _f(3, 4, 5)], {}),
    ("baddbmm bool", "baddbmm", [_b(2, 3, 5), _b(2, 3, 4), _b(2, 4, 5)], {}),
    ("baddbmm complex alpha", "baddbmm", [_f(2, 3, 5), _f(2, 3, 4), _f(2, 4, 5)],
     dict(alpha=1j)),
    ("baddbmm complex beta int", "baddbmm", [_i(2, 3, 5), _i(2, 3, 4), _i(2, 4, 5)],
     dict(beta=2j)),
    ("baddbmm input float", "baddbmm", [1.0, _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("baddbmm_ broadcast", "baddbmm_", [_f(1, 3, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("baddbmm_ 2d", "baddbmm_", [_f(3, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("baddbmm_ dtype", "baddbmm_", [_f(2, 3, 5), _d(2, 3, 4), _d(2, 4, 5)], {}),
    ("baddbmm_ int self", "baddbmm_", [_i(2, 3, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    # addbmm
    ("addbmm input 3d", "addbmm", [_f(1, 3, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("addbmm input mismatch", "addbmm", [_f(4), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("addbmm batch1 2d", "addbmm", [_f(3, 5), _f(3, 4), _f(2, 4, 5)], {}),
    ("addbmm batch1 2d fits", "addbmm", [_f(4, 5), _f(4, 4), _f(2, 4, 5)], {}),
    ("addbmm batch2 2d", "addbmm", [_f(3, 5), _f(2, 3, 4), _f(4, 5)], {}),
    ("addbmm batch1 1d", "addbmm", [_f(3, 5), _f(3), _f(2, 4, 5)], {}),
    ("addbmm batch2 4d", "addbmm", [_f(3, 5), _f(2, 3, 4), _f(2, 4, 5, 1)], {}),
    ("addbmm batches", "addbmm", [_f(3, 5), _f(2, 3, 4), _f(3, 4, 5)], {}),
    ("addbmm inner", "addbmm", [_f(3, 5), _f(2, 3, 4), _f(2, 3, 5)], {}),
    ("addbmm input dtype", "addbmm", [_d(3, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    ("addbmm batch1 dtype", "addbmm", [_f(3, 5), _d(2, 3, 4), _f(2, 4, 5)], {}),
    ("addbmm batch2 dtype", "addbmm", [_f(3, 5), _f(2, 3, 4), _d(2, 4, 5)], {}),
    ("addbmm bool", "addbmm", [_b(3, 5), _b(2, 3, 4), _b(2, 4, 5)], {}),
    ("addbmm_ mismatch", "addbmm_", [_f(2, 5), _f(2, 3, 4), _f(2, 4, 5)], {}),
    # addmv
    ("addmv input 2d", "addmv", [_f(1, 3), _f(3, 4), _f(4)], {}),
    ("addmv input mismatch", "addmv", [_f(4), _f(3, 4), _f(4)], {}),
    ("addmv mat 1d", "addmv", [_f(3), _f(4), _f(4)], {}),
    ("addmv mat 3d", "addmv", [_f(3), _f(2, 3, 4), _f(4)], {}),
    ("addmv vec 2d", "addmv", [_f(3), _f(3, 4), _f(4, 1)], {}),
    ("addmv vec 0d", "addmv", [_f(3), _f(3, 4), _z()], {}),
    ("addmv vec mismatch", "addmv", [_f(3), _f(3, 4), _f(5)], {}),
    ("addmv vec mismatch 0d input", "addmv", [_z(), _f(3, 4), _f(5)], {}),
    ("addmv input dtype", "addmv", [_d(3), _f(3, 4), _f(4)], {}),
    ("addmv mat dtype", "addmv", [_f(3), _d(3, 4), _f(4)], {}),
    ("addmv vec dtype", "addmv", [_f(3), _f(3, 4), _i(4)], {}),
    ("addmv shape before dtype", "addmv", [_d(3), _f(3, 4), _f(5)], {}),
    ("addmv bool", "addmv", [_b(3), _b(3, 4), _b(4)], {}),
    ("addmv_ broadcast", "addmv_", [_f(1), _f(3, 4), _f(4)], {}),
    ("addmv_ 0d", "addmv_", [_z(), _f(3, 4), _f(4)], {}),
    ("addmv_ 2d", "addmv_", [_f(1, 3), _f(3, 4), _f(4)], {}),
    # addr
    ("addr input 3d", "addr", [_f(1, 3, 4), _f(3), _f(4)], {}),
    ("addr input mismatch", "addr", [_f(5), _f(3), _f(4)], {}),
    ("addr vec1 2d", "addr", [_f(3, 4), _f(3, 1), _f(4)], {}),
    ("addr vec2 2d", "addr", [_f(3, 4), _f(3), _f(4, 1)], {}),
    ("addr vec1 0d", "addr", [_f(3, 4), _z(), _f(4)], {}),
    ("addr integer alpha", "addr", [_i(3, 4), _i(3), _i(4)], dict(alpha=0.5)),
    ("addr integer beta", "addr", [_i(3, 4), _i(3), _i(4)], dict(beta=1.5)),
    ("addr bool alpha", "addr", [_b(3, 4), _b(3), _b(4)], dict(alpha=0.5)),
    ("addr boolean beta", "addr", [_f(3, 4), _f(3), _f(4)], dict(beta=True)),
    ("addr boolean alpha", "addr", [_i(3, 4), _i(3), _i(4)], dict(alpha=False)),
    ("addr_ broadcast", "addr_", [_f(1, 4), _f(3), _f(4)], {}),
    ("addr_ 1d", "addr_", [_f(4), _f(3), _f(4)], {}),
    ("addr_ 3d", "addr_", [_f(1, 3, 4), _f(3), _f(4)], {}),
    ("addr_ mismatch", "addr_", [_f(2, 4), _f(3), _f(4)], {}),
    ("addr_ int self", "addr_", [_i(3, 4), _f(3), _f(4)], {}),
    ("addr_ vec 2d", "addr_", [_f(3, 4), _f(3, 1), _f(4)], {}),
    # addmm
    ("addmm input 3d", "addmm", [_f(1, 2, 3), _f(2, 4), _f(4, 3)], {}),
    ("addmm input mismatch", "addmm", [_f(4), _f(2, 4), _f(4, 3)], {}),
    ("addmm mat1 1d", "addmm", [_f(2, 3), _f(4), _f(4, 3)], {}),
    ("addmm mat2 3d", "addmm", [_f(2, 3), _f(2, 4), _f(1, 4, 3)], {}),
    ("addmm mismatch", "addmm", [_f(2, 3), _f(2, 5), _f(4, 3)], {}),
    ("addmm input dtype", "addmm", [_d(2, 3), _f(2, 4), _f(4, 3)], {}),
    ("addmm mat1 dtype", "addmm", [_f(2, 3), _d(2, 4), _f(4, 3)], {}),
    ("addmm dtype before shape", "addmm", [_d(3), _f(3), _f(5)], {}),
    ("addmm bool", "addmm", [_b(2, 3), _b(2, 4), _b(4, 3)], {}),
    ("addmm input float", "addmm", [1.0, _f(2, 4), _f(4, 3)], {}),
    ("addmm_ broadcast", "addmm_", [_f(3), _f(2, 4), _f(4, 3)], {}),
    ("addmm_ broadcast 2d", "addmm_", [_f(1, 3), _f(2, 4), _f(4, 3)], {}),
    ("addmm_ dtype", "addmm_", [_f(2, 3), _d(2, 4), _d(4, 3)], {}),
    # chain_matmul
    ("chain_matmul none", "chain_matmul", [], {}),
    ("chain_matmul 1d", "chain_matmul", [_f(3), _f(3, 4)], {}),
    ("chain_matmul 1d alone", "chain_matmul", [_f(3)], {}),
    ("chain_matmul 3d", "chain_matmul", [_f(2, 3), _f(3, 4), _f(2, 4, 5)], {}),
    ("chain_matmul mismatch", "chain_matmul", [_f(2, 3), _f(4, 4)], {}),
    ("chain_matmul mismatch 3", "chain_matmul", [_f(2, 3), _f(3, 4), _f(5, 4)], {}),
    ("chain_matmul dtype", "chain_matmul", [_f(2, 3), _d(3, 4)], {}),
    ("chain_matmul dtype 3", "chain_matmul", [_f(2, 3), _f(3, 4), _i(4, 5)], {}),
    ("chain_matmul list", "chain_matmul", [[_f(2, 3), _f(3, 4)]], {}),
    # tensordot
    ("tensordot dims too big", "tensordot", [_f(2, 3), _f(2, 3, 5)], dict(dims=3)),
    ("tensordot dims negative", "tensordot", [_f(2, 3), _f(3, 5)], dict(dims=-1)),
    ("tensordot dims float", "tensordot", [_f(2, 3, 4), _f(3, 4, 5)], dict(dims=2.0)),
    ("tensordot dims str", "tensordot", [_f(2, 3, 4), _f(3, 4, 5)], dict(dims="a")),
    ("tensordot dims ints", "tensordot", [_f(3, 4, 5), _f(4, 3, 2)], dict(dims=(1, 0))),
    ("tensordot dims_other int", "tensordot", [_f(3, 4), _f(4, 3)], dict(dims=([1], 0))),
    ("tensordot dims float element", "tensordot", [_f(3, 4), _f(4, 3)],
     dict(dims=([1.0], [0]))),
    ("tensordot dims None", "tensordot", [_f(3, 4), _f(4, 3)], dict(dims=(None, [0]))),
    ("tensordot three lists", "tensordot", [_f(3, 4, 5), _f(4, 3, 2)],
     dict(dims=([1], [0], [1]))),
    ("tensordot lengths", "tensordot", [_f(3, 4, 5), _f(4, 3, 2)], dict(dims=([1, 0], [0]))),
    ("tensordot sizes", "tensordot", [_f(2, 3, 4), _f(3, 5, 5)], {}),
    ("tensordot sizes lists", "tensordot", [_f(3, 4, 5), _f(4, 3, 2)],
     dict(dims=([1, 0], [1, 0]))),
    ("tensordot dim out of range", "tensordot", [_f(3, 4, 5), _f(4, 3, 2)],
     dict(dims=([3], [0]))),
    ("tensordot 0d dim", "tensordot", [_z(), _f(4, 3)], dict(dims=([0], [0]))),
    ("tensordot repeated dim", "tensordot", [_f(3, 3, 5), _f(3, 3, 2)],
     dict(dims=([0, 0], [0, 1]))),
    ("tensordot repeated wrapped dim", "tensordot", [_f(3, 3, 5), _f(3, 3, 2)],
     dict(dims=([0, 1], [0, -3]))),
    ("tensordot dtype", "tensordot", [_f(2, 3), _d(3, 5)], dict(dims=1)),
    ("tensordot int and float", "tensordot", [_i(2, 3), _f(3, 5)], dict(dims=1)),
    ("tensordot bool", "tensordot", [_b(2, 3), _b(3, 5)], dict(dims=1)),
    ("tensordot tensor dims 1d", "tensordot", [_f(2, 3, 4), _f(4, 5)],
     dict(dims=("int64", [2, 0]))),
    ("tensordot tensor dims 3 rows", "tensordot", [_f(2, 3, 4), _f(4, 5)],
     dict(dims=("int64", [[2], [0], [1]]))),
    ("tensordot tensor dims negative", "tensordot", [_f(2, 3, 4), _f(3, 4, 5)],
     dict(dims=("int64", -1))),
    ("tensordot list input", "tensordot", [[1.0], _f(3, 5)], dict(dims=([0], [0]))),
    # inner, kron
    ("inner last dims", "inner", [_f(2, 3), _f(5, 4)], {}),
    ("inner dtype", "inner", [_f(2, 4), _d(5, 4)], {}),
    ("inner int and float", "inner", [_i(2, 4), _f(5, 4)], {}),
    ("inner shape before dtype", "inner", [_f(2, 3), _d(5, 4)], {}),
    ("inner bool", "inner", [_b(2, 4), _b(5, 4)], {}),
    ("inner number", "inner", [_f(2, 4), 2.0], {}),
    ("kron number", "kron", [_f(2, 4), 2.0], {}),
    ("kron input number", "kron", [2.0, _f(2, 4)], {}),
    ("addmv vec None", "addmv", [_f(3), _f(3, 4), None], {}),
    ("addmm_ mat1 number", "addmm_", [_f(2, 2), 1.0, _f(2, 2)], {}),
    ("baddbmm_ batch2 str", "baddbmm_", [_f(2, 2, 2), _f(2, 2, 2), "x"], {}),
    ("addmv_ vec None", "addmv_", [_f(2), _f(2, 2), None], {}),
    ("addr_ vec2 int", "addr_", [_f(2, 2), _f(2), 1], {}),
]


def _call(lib, name, args, kwargs):
    args = [[_make(lib, a) for a in arg] if isinstance(arg, list) else _make(lib, arg)
            for arg in args]
    kwargs = {k: (lib.tensor(v[1]) if isinstance(v, tuple) and v and v[0] == "int64" else v)
              for k, v in kwargs.items()}
    if name.endswith("_"):
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(lib, name)(*args, **kwargs)


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
@pytest.mark.parametrize("case,name,args,kwargs", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(case, name, args, kwargs):
    got = [error_of(lambda: _call(lib, name, args, kwargs)) for lib in (torch, ember)]
    assert got[0] is not None
    assert got[1] == got[0]


def test_gradient_refused_with_out():
    for lib in (torch, ember):
        x = lib.ones(3, 4, requires_grad=True)
        got = error_of(lambda: lib.addmv(lib.ones(3), x, lib.ones(4), out=lib.empty(3)))
        assert got == ("RuntimeError", "addmv(): functions with out=... arguments don't support "
                       "automatic differentiation, but one of the arguments requires grad.")
