"""Parity with PyTorch for the samplers (normal's four overloads, poisson, binomial, the
in-place exponential_/geometric_/cauchy_/log_normal_), logspace and the window functions.

Draws cannot equal PyTorch's (another bit generator), so samplers are compared by result
dtype, shape, gradients, errors and the moments/quantiles of many draws (fixed seeds);
logspace and the windows are deterministic and compared value for value."""
import math

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import compare, error_of, DEVICE

N = 20000  # draws per moment check: the mean's standard error is ~0.7% of the std


def _meta(t):
    return tuple(t.shape), str(t.dtype).split(".")[-1], t.requires_grad


def both(fn):
    """``fn(lib)`` run with ember (on the parity device) and torch, seeded alike."""
    torch.manual_seed(0)
    ember.manual_seed(0)
    if DEVICE is not None:
        previous = ember.get_default_device()
        ember.set_default_device(DEVICE)
        try:
            return fn(ember), fn(torch)
        finally:
            ember.set_default_device(previous)
    return fn(ember), fn(torch)


def host(t):
    return t.detach().cpu().numpy().astype(np.float64) if isinstance(t, ember.Tensor) else \
        t.detach().numpy().astype(np.float64)


# ---- normal -----------------------------------------------------------------------------------
NORMAL_FORMS = [
    lambda lib: lib.normal(lib.full((N,), 2.0), lib.full((N,), 3.0)),
    lambda lib: lib.normal(lib.full((N,), 2.0), 3.0),
    lambda lib: lib.normal(2.0, lib.full((N,), 3.0)),
    lambda lib: lib.normal(2.0, 3.0, (N,)),
    lambda lib: lib.normal(2.0, 3.0, size=(N // 100, 100), dtype=lib.float64),
    lambda lib: lib.normal(lib.full((N, 1), 2.0), lib.full((1,), 3.0, dtype=lib.float64)),
]


@pytest.mark.parametrize("form", range(len(NORMAL_FORMS)))
def test_normal_forms(form):
    e, t = both(NORMAL_FORMS[form])
    assert _meta(e) == _meta(t)
    x = host(e)
    assert abs(x.mean() - 2.0) < 0.1 and abs(x.std() - 3.0) < 0.1


def test_normal_gradients_are_zero_like_torch():
    def run(lib):
        m = lib.zeros(3, requires_grad=True)
        s = lib.ones(3, requires_grad=True)
        out = (lib.normal(m, s).sum() + lib.normal(m, 2.0).sum() + lib.normal(1.0, s).sum())
        return [g.tolist() for g in lib.autograd.grad(out, (m, s))], \
            lib.normal(m, s).grad_fn.name(), lib.normal(m, 1.0).grad_fn.name(), \
            lib.normal(0.0, s).grad_fn.name()
    e, t = both(run)
    assert e == t


def test_normal_out_and_generator():
    e, t = both(lambda lib: lib.normal(0.0, 1.0, (4,), out=lib.empty(4, dtype=lib.float64)))
    assert _meta(e) == _meta(t)
    e, t = both(lambda lib: lib.normal(lib.zeros(4), lib.ones(4), out=lib.empty(4)))
    assert _meta(e) == _meta(t)
    g = ember.Generator().manual_seed(5)
    a = ember.normal(ember.zeros(4), 1.0, generator=g)
    g.manual_seed(5)
    assert ember.equal(a, ember.normal(ember.zeros(4), 1.0, generator=g))


@pytest.mark.parametrize("case", [
    lambda lib: lib.normal(lib.zeros(2), -1.0),
    lambda lib: lib.normal(lib.zeros(2), -lib.ones(2)),
    lambda lib: lib.normal(0.0, -lib.ones(2)),
    lambda lib: lib.normal(0.0, -1.0, (2,)),
    lambda lib: lib.normal(lib.tensor([1, 2]), 1.0),
    lambda lib: lib.normal(1.0, lib.tensor([1, 2])),
    lambda lib: lib.normal(0, 1, (2,), dtype=lib.int64),
    lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(3, 2)),
])
def test_normal_errors(case):
    assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


@pytest.mark.parametrize("args", [(0.0, 1.0), (0.0, 1.0, 5)])
def test_normal_without_a_size_tuple_is_a_type_error(args):
    e, t = error_of(lambda: ember.normal(*args)), error_of(lambda: torch.normal(*args))
    assert e[0] == t[0] == "TypeError"
    assert e[1].split(":")[0] == t[1].split(":")[0]


# ---- poisson and binomial ---------------------------------------------------------------------
def test_poisson():
    e, t = both(lambda lib: lib.poisson(lib.full((N,), 4.0, dtype=lib.float64)))
    assert _meta(e) == _meta(t)
    x = host(e)
    assert abs(x.mean() - 4.0) < 0.1 and abs(x.var() - 4.0) < 0.25
    assert (x == np.round(x)).all()
    e, t = both(lambda lib: lib.poisson(lib.tensor([0.0, 1.0, 2.0], requires_grad=True)))
    assert _meta(e) == _meta(t) and e.grad_fn.name() == t.grad_fn.name()


def test_poisson_gradient_is_zero():
    def run(lib):
        r = lib.tensor([1.0, 5.0], requires_grad=True)
        return lib.autograd.grad(lib.poisson(r).sum(), r)[0].tolist()
    e, t = both(run)
    assert e == t


def test_binomial():
    e, t = both(lambda lib: lib.binomial(lib.full((N,), 10.0), lib.full((N,), 0.3)))
    assert _meta(e) == _meta(t)
    x = host(e)
    assert abs(x.mean() - 3.0) < 0.06 and abs(x.var() - 2.1) < 0.15
    e, t = both(lambda lib: lib.binomial(lib.tensor([10.0, 3.0, 0.0]),
                                         lib.tensor([1.0, 0.0, 0.5])))
    assert host(e).tolist() == host(t).tolist()  # certain outcomes
    e, t = both(lambda lib: lib.binomial(lib.tensor([10.0, 3.0]), lib.tensor([1.5, -0.2])))
    assert host(e).tolist() == host(t).tolist()  # probabilities clamped to [0, 1], as torch
    e, t = both(lambda lib: lib.binomial(lib.full((2, 3), 4.0), lib.full((3,), 0.5)))
    assert _meta(e) == _meta(t)


@pytest.mark.parametrize("case", [
    lambda lib: lib.poisson(lib.tensor([1, 5])),
    lambda lib: lib.poisson(lib.tensor([-1.0, 5.0])),
    lambda lib: lib.poisson(lib.tensor([math.nan])),
    lambda lib: lib.binomial(lib.tensor([10, 5]), lib.tensor([0.5, 0.1])),
    lambda lib: lib.binomial(lib.tensor([10.0]), lib.tensor([0.5], dtype=lib.float64)),
    lambda lib: lib.binomial(lib.tensor([10.0]), 0.5),
    lambda lib: lib.binomial(lib.ones(2), lib.ones(3)),
    lambda lib: lib.binomial(lib.tensor([4.0], requires_grad=True),
                             lib.tensor([0.5])).sum().backward(),
])
def test_poisson_binomial_errors(case):
    assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


# ---- in-place fills ---------------------------------------------------------------------------
def test_exponential_moments():
    x = host(both(lambda lib: lib.empty(N).exponential_(2.0))[0])
    assert abs(x.mean() - 0.5) < 0.02 and (x > 0).all()


def test_geometric_moments_and_integers():
    e, t = both(lambda lib: lib.empty(N, dtype=lib.int64).geometric_(0.25))
    assert _meta(e) == _meta(t)
    x = host(e)
    assert x.min() >= 1 and abs(x.mean() - 4.0) < 0.15


def test_cauchy_quantiles():
    x = host(both(lambda lib: lib.empty(N, dtype=lib.float64).cauchy_(1.0, 2.0))[0])
    q1, q2, q3 = np.quantile(x, [0.25, 0.5, 0.75])
    assert abs(q2 - 1.0) < 0.1 and abs(q1 + 1.0) < 0.15 and abs(q3 - 3.0) < 0.15


def test_log_normal_moments():
    x = host(both(lambda lib: lib.empty(N).log_normal_(0.5, 0.25))[0])
    assert abs(np.log(x).mean() - 0.5) < 0.01 and abs(np.log(x).std() - 0.25) < 0.01


@pytest.mark.parametrize("name,args", [("exponential_", ()), ("geometric_", (0.5,)),
                                       ("cauchy_", ()), ("log_normal_", ())])
def test_fills_keep_dtype_shape_and_graph(name, args):
    for dt in ("float32", "float64"):
        e, t = both(lambda lib: getattr(lib.empty(2, 3, dtype=getattr(lib, dt)), name)(*args))
        assert _meta(e) == _meta(t)

    def grad_fn(lib):
        z = lib.zeros(3, requires_grad=True) * 1
        out = getattr(z, name)(*args)
        return out.grad_fn.name()
    e, t = both(grad_fn)
    assert e == t


@pytest.mark.parametrize("case", [
    lambda lib: lib.empty(3).exponential_(0.0),
    lambda lib: lib.empty(3).exponential_(-1.0),
    lambda lib: lib.empty(3, dtype=lib.int64).exponential_(),
    lambda lib: lib.empty(0, dtype=lib.int64).exponential_(),
    lambda lib: lib.empty(3).geometric_(0.0),
    lambda lib: lib.empty(3).geometric_(1.0),
    lambda lib: lib.empty(3).geometric_(1.5),
    lambda lib: lib.empty(3).cauchy_(0.0, -1.0),
    lambda lib: lib.empty(3, dtype=lib.int64).cauchy_(),
    lambda lib: lib.empty(0, dtype=lib.int64).cauchy_(),
    lambda lib: lib.empty(3).log_normal_(1.0, 0.0),
    lambda lib: lib.empty(3, dtype=lib.int64).log_normal_(),
    lambda lib: lib.empty(0, dtype=lib.int64).log_normal_(),
    lambda lib: lib.zeros(3, requires_grad=True).exponential_(),
])
def test_fill_errors(case):
    assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


def test_reproducible_after_manual_seed():
    def draws():
        ember.manual_seed(7)
        return [ember.normal(0.0, 1.0, (3,)), ember.empty(3).exponential_(),
                ember.poisson(ember.ones(3) * 3), ember.empty(3).cauchy_(),
                ember.binomial(ember.full((3,), 5.0), ember.full((3,), 0.5))]
    for a, b in zip(draws(), draws()):
        assert ember.equal(a, b)


# ---- logspace and windows ---------------------------------------------------------------------
@pytest.mark.parametrize("args,kwargs", [
    ((0, 2, 3), {}), ((0, 2, 5), {"base": 2}), ((0, 1, 4), {"dtype": "int64"}),
    ((3, 5, 1), {}), ((3, 5, 0), {}), ((-1.5, 2.5, 7), {"dtype": "float64"}),
    ((0, 2, 3), {"base": -2}), ((0, 1, 3), {"dtype": "complex64"}),
])
def test_logspace(args, kwargs):
    def run(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        return lib.logspace(*args, **kw)
    compare(lambda lib: run(lib), grad=False)


def test_logspace_tensors_out_and_grad():
    compare(lambda lib: lib.logspace(lib.tensor(1.0), lib.tensor(2.0), 3), grad=False)
    compare(lambda lib: lib.logspace(0, 2, 3, out=lib.empty(3, dtype=lib.float64)), grad=False)
    e, t = both(lambda lib: lib.logspace(0, 1, 3, requires_grad=True))
    assert _meta(e) == _meta(t) and e.is_leaf


@pytest.mark.parametrize("case", [
    lambda lib: lib.logspace(3, 5, -1), lambda lib: lib.logspace(0, 1, 3, dtype=lib.bool),
])
def test_logspace_errors(case):
    assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


WINDOWS = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("length", [0, 1, 2, 5, 8])
@pytest.mark.parametrize("periodic", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_windows(name, length, periodic, dtype):
    compare(lambda lib: getattr(lib, name)(length, periodic, dtype=getattr(lib, dtype)),
            grad=False, atol=2e-7)


def test_window_parameters():
    compare(lambda lib: lib.hamming_window(6, True, 0.5, 0.5), grad=False, atol=2e-7)
    compare(lambda lib: lib.hamming_window(6, False, alpha=0.6, beta=0.3), grad=False, atol=2e-7)
    compare(lambda lib: lib.kaiser_window(7, True, 8.0), grad=False)
    compare(lambda lib: lib.kaiser_window(7, False, beta=3.0, dtype=lib.float64), grad=False)
    compare(lambda lib: lib.hann_window(5), grad=False)
    for name in WINDOWS:
        e, t = both(lambda lib: getattr(lib, name)(4, requires_grad=True, dtype=lib.float64))
        assert _meta(e) == _meta(t) and e.is_leaf


@pytest.mark.parametrize("name", WINDOWS)
@pytest.mark.parametrize("case", [
    lambda lib, f: f(-1), lambda lib, f: f(4, dtype=lib.int64), lambda lib, f: f(4.0),
    lambda lib, f: f(0, dtype=lib.int64),
])
def test_window_errors(name, case):
    assert error_of(lambda: case(ember, getattr(ember, name))) == \
        error_of(lambda: case(torch, getattr(torch, name)))
