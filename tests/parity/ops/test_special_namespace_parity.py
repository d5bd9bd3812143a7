"""Parity with PyTorch for ``ember.special`` (``torch.special``): values and gradients in
float32 and float64 of every function, integer inputs' dtypes, special values, out=, the
derivatives PyTorch lacks (zeta's first argument, bessel_j0/j1, the incomplete gamma's
first argument) and the errors."""
import numpy as np
import pytest
import torch

import ember
import ember.special  # noqa: F401  (the lazy submodule, imported as users do)

from tests.parity.compare import compare, error_of

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def unit(shape, dtype, seed=0):
    return np.random.default_rng(seed).uniform(0.05, 0.95, shape).astype(dtype)


def positive(shape, dtype, seed=0):
    return np.random.default_rng(seed).uniform(0.5, 3.0, shape).astype(dtype)


# (name, inputs maker): unary functions with gradients
UNARY = [("i0", randn), ("i0e", randn), ("i1", randn), ("i1e", randn), ("ndtr", randn),
         ("ndtri", unit), ("log_ndtr", randn), ("erf", randn), ("erfc", randn),
         ("erfcx", randn), ("erfinv", unit), ("expit", randn), ("logit", unit),
         ("exp2", randn), ("expm1", randn), ("log1p", unit), ("gammaln", positive),
         ("digamma", positive), ("psi", positive), ("sinc", randn), ("entr", positive)]
NO_GRAD = [("bessel_j0", randn), ("bessel_j1", randn), ("round", randn), ("bessel_y0", positive),
           ("bessel_y1", positive), ("modified_bessel_i0", randn), ("modified_bessel_i1", randn),
           ("modified_bessel_k0", positive), ("modified_bessel_k1", positive),
           ("scaled_modified_bessel_k0", positive), ("scaled_modified_bessel_k1", positive),
           ("airy_ai", randn), ("spherical_bessel_j0", randn)]


def special(lib, name):
    return getattr(lib.special, name)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,make", UNARY, ids=[c[0] for c in UNARY])
def test_unary(name, make, dtype):
    compare(lambda lib, x: special(lib, name)(x), make((3, 4), dtype, 1))
    compare(lambda lib, x: special(lib, name)(x), make((3, 4), dtype, 2), noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,make", NO_GRAD, ids=[c[0] for c in NO_GRAD])
def test_without_gradient(name, make, dtype):
    # PyTorch's own float64 kernels differ from SciPy's (ember's) by up to ~3e-6 relative for
    # bessel_j0/j1 past |x| = 5 (SciPy's agree with mpmath there) and ~2e-5 for airy_ai on
    # the negative axis
    compare(lambda lib, x: special(lib, name)(x * 4), make((3, 4), dtype, 1),
            rtol=1e-4 if name == "airy_ai" else 1e-5)


@pytest.mark.parametrize("name", [c[0] for c in UNARY + NO_GRAD if c[0] not in ("round",)])
def test_integer_inputs(name):
    compare(lambda lib, x: special(lib, name)(x), np.array([0, 1, 2, -3], np.int64))


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary(dtype):
    a, b = positive((3, 4), dtype, 1), positive((4,), dtype, 2)
    compare(lambda lib, x, y: lib.special.xlogy(x, y), a, b)
    compare(lambda lib, x, y: lib.special.xlog1py(x, y), a, b)
    compare(lambda lib, x, y: lib.special.zeta(x.detach() + 1, y), a, b)
    compare(lambda lib, x, y: lib.special.gammainc(x.detach(), y), a, b)
    compare(lambda lib, x, y: lib.special.gammaincc(x.detach(), y), a, b)
    compare(lambda lib, x: lib.special.xlog1py(2.0, x), b)
    compare(lambda lib, x: lib.special.xlog1py(x, 3), b)
    compare(lambda lib, x: lib.special.zeta(2.0, x), b)
    compare(lambda lib, x: lib.special.zeta(x.detach() + 1, 2), b.astype(dtype))


def test_zeta_needs_no_input_gradient():
    compare(lambda lib, x, y: lib.special.zeta(x.detach() + 1, y), positive((4,), np.float64),
            positive((4,), np.float64, 3))


def test_reductions_and_others():
    x = randn((3, 4), np.float32, 1)
    compare(lambda lib, t: lib.special.logsumexp(t, 1), x)
    compare(lambda lib, t: lib.special.logsumexp(t, (0, 1), keepdim=True), x)
    compare(lambda lib, t: lib.special.softmax(t, 0), x)
    compare(lambda lib, t: lib.special.log_softmax(t, -1, dtype=lib.float64), x)
    compare(lambda lib, t: lib.special.polygamma(2, t), positive((4,), np.float64))
    compare(lambda lib, t: lib.special.multigammaln(t, 3), positive((4,), np.float64) + 1.5)
    compare(lambda lib, t: lib.special.multigammaln(t, 1), positive((4,), np.float32) + 1.5)
    compare(lambda lib, t: lib.special.round(t * 10, decimals=1), x)
    compare(lambda lib, t: lib.special.logit(t, eps=0.2), unit((5,), np.float64))
    edges = np.array([-0.5, 0.0, 0.3, 1.0, 1.5])
    compare(lambda lib, t: lib.special.logit(t), edges)
    compare(lambda lib, t: lib.special.logit(t, eps=0.1), edges)


def test_special_values():
    x = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 40.0, -40.0, np.inf, -np.inf, np.nan], np.float64)
    for name in ("i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfc", "erfcx",
                 "entr", "bessel_j0", "bessel_j1", "sinc", "logit", "bessel_y0", "bessel_y1",
                 "modified_bessel_i0", "modified_bessel_k0", "scaled_modified_bessel_k1",
                 "airy_ai", "spherical_bessel_j0"):
        compare(lambda lib, t: special(lib, name)(t), x, grad=False)
    q = np.array([-1.0, -1.5, 0.0, 1.0, 1.0, 2.0], np.float64)
    s = np.array([2.0, 2.0, 2.0, 1.0, 0.5, -1.0], np.float64)
    compare(lambda lib, a, b: lib.special.zeta(a, b), s, q, grad=False)
    a = np.array([0.0, 1.0, -1.0, 1.0, 0.0, 2.0], np.float64)
    b = np.array([1.0, 0.0, 1.0, -1.0, 0.0, np.inf], np.float64)
    compare(lambda lib, u, v: lib.special.gammaincc(u, v), a, b, grad=False)
    compare(lambda lib, u, v: lib.special.xlog1py(u, v), a, b - 1, grad=False)


def test_gradients_at_zero():
    zero = np.zeros(3, np.float64)
    for name in ("i1", "i1e", "i0e", "entr", "sinc"):
        compare(lambda lib, t: special(lib, name)(t + 0), zero + (1.0 if name == "entr" else 0))


def test_double_backward():
    def second(lib, x):
        y = (lib.special.i1e(x) + lib.special.ndtr(x) + lib.special.erfcx(x)).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        return (g * g).sum()
    compare(second, randn((5,), np.float64, 4))


def test_out():
    x = randn((3,), np.float32, 1)
    for name in ("i0e", "ndtr", "erfc", "expit", "gammaln", "entr", "sinc", "bessel_j0"):
        compare(lambda lib, t: special(lib, name)(t.abs(), out=lib.empty(3)), x, grad=False)
    compare(lambda lib, t: lib.special.zeta(2.0, t.abs() + 1, out=lib.empty(3, dtype=lib.float64)),
            x, grad=False)


@pytest.mark.parametrize("case", [
    lambda lib: lib.special.zeta(lib.tensor([2.0], requires_grad=True),
                                 lib.tensor([1.0])).sum().backward(),
    lambda lib: lib.special.gammainc(lib.tensor([2.0], requires_grad=True),
                                     lib.tensor([1.0])).sum().backward(),
    lambda lib: lib.special.gammaincc(lib.tensor([2.0], requires_grad=True),
                                      lib.tensor([1.0])).sum().backward(),
    lambda lib: lib.special.gammaincc(lib.tensor([2]), lib.tensor([1])),
    lambda lib: lib.special.gammainc(lib.tensor([2]), lib.tensor([1])),
    lambda lib: lib.special.gammaincc(2.0, lib.tensor([1.0])),
    lambda lib: lib.special.gammainc(lib.tensor([1.0]), 2),
    lambda lib: lib.special.multigammaln(lib.tensor([2.0]), 0),
    lambda lib: lib.special.xlog1py(lib.ones(2), lib.ones(3)),
    lambda lib: lib.special.bessel_j0(lib.tensor([1.0], requires_grad=True)).sum().backward(),
])
def test_errors_match_torch(case):
    assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfc",
                                  "erfcx", "bessel_j0", "bessel_j1", "entr"])
def test_complex_inputs_are_refused_like_torch(name):
    assert error_of(lambda: special(ember, name)(ember.ones(2, dtype=ember.complex64))) == \
        error_of(lambda: special(torch, name)(torch.ones(2, dtype=torch.complex64)))


@pytest.mark.parametrize("case", [
    lambda lib: lib.special.ndtri(lib.ones(2, dtype=lib.float16)),
    lambda lib: lib.special.erfcx(lib.ones(2, dtype=lib.bfloat16)),
    lambda lib: lib.special.bessel_j1(lib.ones(2, dtype=lib.float16)),
    lambda lib: lib.special.airy_ai(lib.ones(2, dtype=lib.float16)),
    lambda lib: lib.special.modified_bessel_k1(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.special.zeta(lib.ones(2, dtype=lib.float16), lib.ones(2, dtype=lib.float16)),
    lambda lib: lib.special.zeta(lib.ones(2, dtype=lib.complex64), 1.0),
    lambda lib: lib.special.xlog1py(2, 3),
    lambda lib: lib.special.logit(lib.ones(2, dtype=lib.complex64)),
    lambda lib: lib.special.multigammaln(lib.tensor([True]), 2),
])
def test_dtype_refusals_match_torch(case):
    assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


def test_half_inputs():
    for name in ("i0", "i0e", "i1", "i1e", "ndtr", "erfc", "entr", "sinc"):
        compare(lambda lib, x: special(lib, name)(x), np.array([0.5, 1.5, -2.0], np.float16),
                grad=False, rtol=2e-3, atol=1e-3)


def test_namespace_lists_torch_names():
    ours = set(ember.special.__all__)
    assert ours <= set(dir(torch.special))
    for name in ours:
        assert callable(getattr(ember.special, name))


POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w"]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomials(name):
    x = np.array([-1.0, -0.5, 0.0, 0.3, 1.0, 1.5, -3.0])
    n = np.array([[0], [1], [2], [3], [7], [12], [-1], [2.5], [np.nan]])
    compare(lambda lib, a, k: special(lib, name)(a, k), x, n, grad=False)
    compare(lambda lib, a: special(lib, name)(a, 4), x.astype(np.float32))
    compare(lambda lib, k: special(lib, name)(0.25, k), np.array([0, 3, 5]))
    compare(lambda lib, a: special(lib, name)(a, 3, out=lib.empty(7, dtype=lib.float64)), x,
            grad=False)
    for case in (lambda lib: special(lib, name)(0.5, 2),
                 lambda lib: special(lib, name)(lib.ones(2, dtype=lib.float16), 2),
                 lambda lib: special(lib, name)(lib.ones(2, dtype=lib.complex64), 2)):
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


# ---- the top-level names: torch.erfc/igammac/logit/mvlgamma, their methods, in-place forms --
TOP_LEVEL = [
    ("erfc", lambda L, x: L.erfc(x), lambda x: x.erfc(), randn),
    # (its first argument has no derivative in PyTorch: detached on both sides)
    ("igammac", lambda L, x: L.igammac(x.detach().abs() + 0.5, x.abs()), None, randn),
    ("logit", lambda L, x: L.logit(x), lambda x: x.logit(), unit),
    ("logit_eps", lambda L, x: L.logit(x, 0.2), lambda x: x.logit(eps=0.2), unit),
    ("mvlgamma", lambda L, x: L.mvlgamma(x + 2, 3), lambda x: (x + 2).mvlgamma(p=3), positive),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,fn,method,make", TOP_LEVEL, ids=[c[0] for c in TOP_LEVEL])
def test_top_level_forms(name, fn, method, make, dtype):
    x = make((3, 4), dtype, 1)
    compare(fn, x, noncontiguous=True)
    if method is not None:
        compare(lambda L, t: method(t), x)


@pytest.mark.parametrize("call", [
    lambda L: L.tensor([0.3, 0.9]).erfc_(),
    lambda L: L.tensor([0.3, 0.9]).logit_(0.35),
    lambda L: L.tensor([2.5, 3.0]).mvlgamma_(2),
    lambda L: L.tensor([1.5, 2.0]).igammac_(L.tensor([0.5, 1.0])),
    lambda L: L.logit(L.tensor([0, 1, 2])),
    lambda L: L.mvlgamma(L.tensor([3, 4]), 2),
    lambda L: L.erfc(L.tensor([1, 2])),
], ids=["erfc_", "logit_", "mvlgamma_", "igammac_", "logit_int", "mvlgamma_int", "erfc_int"])
def test_top_level_in_place_and_integer_inputs(call):
    e, t = call(ember), call(torch)
    assert str(e.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("call", [
    lambda L: L.mvlgamma(L.tensor([3.0]), 0),
    lambda L: L.mvlgamma(L.tensor([True]), 1),
], ids=["p0", "bool"])
def test_top_level_errors(call):
    assert error_of(lambda: call(ember)) == error_of(lambda: call(torch))
