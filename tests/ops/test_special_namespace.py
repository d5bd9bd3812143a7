"""``ember.special`` with ember and the standard library only: values from math (series and
closed forms), gradients and second derivatives by gradcheck/gradgradcheck in float64,
integer inputs, out=, the derivatives PyTorch lacks, results on another array module's
data and meta tensors, and error paths in PyTorch's words."""
import math

import pytest

import ember
import ember.special as special
from ember.autograd import gradcheck, gradgradcheck


def t(values, dtype=ember.float64, grad=False):
    return ember.tensor(values, dtype=dtype, requires_grad=grad)


X = [0.3, -1.2, 2.5, 0.05]


def _i(order, x, terms=40):
    """I_order(x) by its power series."""
    return sum((x / 2) ** (2 * k + order) / (math.factorial(k) * math.factorial(k + order))
               for k in range(terms))


def _j(order, x, terms=40):
    return sum((-1) ** k * (x / 2) ** (2 * k + order) /
               (math.factorial(k) * math.factorial(k + order)) for k in range(terms))


def test_values_from_math():
    x = t(X)
    checks = {
        "i0e": [math.exp(-abs(a)) * _i(0, a) for a in X],
        "i1": [_i(1, a) for a in X],
        "i1e": [math.exp(-abs(a)) * _i(1, a) for a in X],
        "ndtr": [0.5 * math.erfc(-a / math.sqrt(2)) for a in X],
        "log_ndtr": [math.log(0.5 * math.erfc(-a / math.sqrt(2))) for a in X],
        "erfc": [math.erfc(a) for a in X],
        "erfcx": [math.exp(a * a) * math.erfc(a) for a in X],
        "bessel_j0": [_j(0, a) for a in X],
        "bessel_j1": [_j(1, a) for a in X],
        "expit": [1 / (1 + math.exp(-a)) for a in X],
        "gammaln": [math.lgamma(abs(a)) for a in X],
    }
    for name, expected in checks.items():
        arg = x.abs() if name == "gammaln" else x
        got = getattr(special, name)(arg).tolist()
        assert all(abs(g - e) <= 1e-12 * max(1.0, abs(e)) for g, e in zip(got, expected)), name
    p = t([0.1, 0.5, 0.975])
    back = special.ndtr(special.ndtri(p)).tolist()
    assert all(abs(a - b) < 1e-14 for a, b in zip(back, p.tolist()))
    assert abs(special.zeta(t([2.0]), t([1.0])).item() - math.pi ** 2 / 6) < 1e-14
    assert abs(special.zeta(2.0, t([2.0])).item() - (math.pi ** 2 / 6 - 1)) < 1e-14
    assert special.entr(t([0.0, 1.0, -1.0])).tolist() == [0.0, -0.0, -math.inf]
    assert abs(special.xlog1py(t([2.0]), t([1.0])).item() - 2 * math.log(2)) < 1e-15
    assert special.xlog1py(t([0.0]), t([-1.0])).item() == 0.0
    got = special.multigammaln(t([2.5]), 2).item()
    assert abs(got - (0.5 * math.log(math.pi) + math.lgamma(2.5) + math.lgamma(2.0))) < 1e-14
    assert abs(special.logit(t([0.25])).item() - math.log(1 / 3)) < 1e-15
    q = special.gammaincc(t([1.0, 2.0]), t([0.5, 1.0])).tolist()
    assert abs(q[0] - math.exp(-0.5)) < 1e-14 and abs(q[1] - 2 * math.exp(-1)) < 1e-14


def test_reused_ops_are_the_same():
    x = t(X)
    assert ember.equal(special.expit(x), ember.sigmoid(x))
    assert ember.equal(special.gammaln(x.abs()), ember.lgamma(x.abs()))
    assert ember.equal(special.psi(x.abs()), ember.digamma(x.abs()))
    assert ember.equal(special.sinc(x), ember.sinc(x))
    assert ember.equal(special.logsumexp(x, 0), ember.logsumexp(x, 0))
    assert ember.equal(special.softmax(x, 0), ember.softmax(x, 0))


@pytest.mark.parametrize("name", ["i0", "i0e", "i1", "i1e", "ndtr", "log_ndtr", "erfc",
                                  "erfcx", "entr", "expit", "logit"])
def test_gradcheck_unary(name):
    fn = getattr(special, name)
    x = t([0.3, 1.2, 0.7] if name in ("entr", "logit") else X, grad=True)
    if name == "logit":
        x = t([0.3, 0.8, 0.55], grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_gradcheck_others():
    p = t([0.2, 0.6, 0.9], grad=True)
    assert gradcheck(special.ndtri, (p,)) and gradgradcheck(special.ndtri, (p,))
    a, b = t([0.5, 2.0, 1.5], grad=True), t([0.3, 1.1, 2.0], grad=True)
    assert gradcheck(special.xlog1py, (a, b)) and gradgradcheck(special.xlog1py, (a, b))
    assert gradcheck(lambda q: special.zeta(a.detach() + 1, q), (b,))
    assert gradcheck(lambda v: special.gammaincc(a.detach(), v), (b,))
    assert gradcheck(lambda v: special.multigammaln(v + 2, 3), (a,))
    assert gradcheck(special.i1, (t([0.0, 1e-3], grad=True),))


def test_missing_derivatives():
    a = t([2.0], grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented."):
        special.zeta(a, t([1.0])).sum().backward()
    with pytest.raises(NotImplementedError, match="the derivative for 'igammac: input' is not "
                                                  "implemented."):
        special.gammaincc(a, t([1.0])).sum().backward()
    assert not special.bessel_j0(a).requires_grad and not special.bessel_j1(a).requires_grad


def test_integer_inputs_and_dtypes():
    i = ember.tensor([1, 2, 3])
    for name in ("i0e", "i1", "i1e", "ndtr", "ndtri", "log_ndtr", "erfc", "erfcx", "entr",
                 "bessel_j0", "bessel_j1", "logit"):
        assert getattr(special, name)(i).dtype is ember.float32, name
    assert special.zeta(i, i).dtype is ember.float32
    assert special.xlog1py(i, 2).dtype is ember.float32
    assert special.ndtr(t([0.0], ember.float16)).dtype is ember.float16
    assert special.ndtr(t([0.0], ember.bfloat16)).item() == 0.5


def test_out_and_meta():
    out = ember.empty(4, dtype=ember.float64)
    assert special.i0e(t(X), out=out) is out
    assert ember.equal(out, special.i0e(t(X)))
    assert special.zeta(t([2.0]), t([1.0]), out=ember.empty(1, dtype=ember.float64)).shape == (1,)
    m = ember.empty(2, 3, device="meta")
    for name in ("i0e", "ndtr", "erfcx", "bessel_j1"):
        r = getattr(special, name)(m)
        assert r.is_meta and r.shape == (2, 3)
    assert special.zeta(m, m).is_meta


def test_errors():
    with pytest.raises(RuntimeError, match="p has to be greater than or equal to 1"):
        special.multigammaln(t([2.0]), 0)
    with pytest.raises(TypeError, match="must be Tensor, not float"):
        special.gammaincc(2.0, t([1.0]))
    with pytest.raises(NotImplementedError, match="\"igammac_cpu\" not implemented for 'Long'"):
        special.gammaincc(ember.tensor([2]), ember.tensor([1]))
    with pytest.raises(RuntimeError, match="must match the size"):
        special.xlog1py(ember.ones(2), ember.ones(3))
    with pytest.raises(NotImplementedError, match="not implemented for 'ComplexFloat'"):
        special.ndtr(ember.ones(2, dtype=ember.complex64))


def test_polynomials_from_their_formulas():
    x = t([-0.7, 0.2, 1.3])
    cases = {
        "chebyshev_polynomial_t": lambda v: 4 * v ** 3 - 3 * v,
        "chebyshev_polynomial_u": lambda v: 8 * v ** 3 - 4 * v,
        "chebyshev_polynomial_v": lambda v: 8 * v ** 3 - 4 * v ** 2 - 4 * v + 1,
        "chebyshev_polynomial_w": lambda v: 8 * v ** 3 + 4 * v ** 2 - 4 * v - 1,
        "hermite_polynomial_h": lambda v: 8 * v ** 3 - 12 * v,
        "hermite_polynomial_he": lambda v: v ** 3 - 3 * v,
        "laguerre_polynomial_l": lambda v: (-v ** 3 + 9 * v ** 2 - 18 * v + 6) / 6,
        "legendre_polynomial_p": lambda v: (5 * v ** 3 - 3 * v) / 2,
        "shifted_chebyshev_polynomial_t": lambda v: 4 * (2 * v - 1) ** 3 - 3 * (2 * v - 1),
    }
    for name, formula in cases.items():
        got = getattr(special, name)(x, 3).tolist()
        expected = [formula(v) for v in x.tolist()]
        assert all(abs(g - e) < 1e-12 for g, e in zip(got, expected)), name
        assert getattr(special, name)(x, -1).tolist() == [0.0] * 3
        assert getattr(special, name)(x, 3.7).tolist() == got  # n truncated
        assert not getattr(special, name)(t([0.5], grad=True), 2).requires_grad
    assert special.chebyshev_polynomial_t(ember.tensor([1, 2]), 2).dtype is ember.float32
