"""``ember.special``: PyTorch's ``torch.special`` (special functions under SciPy's names).

Functions ember already has are the same ops under these names (``expit`` is ``sigmoid``,
``gammaln`` is ``lgamma``, ``gammainc`` is ``igamma``...); the others are in
``_ops/special_functions.py`` (SciPy on a host copy) and ``_ops/elementwise_extra.py``.
Every function takes ``out=`` where PyTorch's does.

>>> import ember
>>> ember.special.ndtr(ember.tensor([0.0]))
tensor([0.5000])
"""
from __future__ import annotations

import math

from .._tensor import Tensor
from .._creation import arange, full_like, beside
from ..backend import dtypes
from .._typing import Number, Sequence, dtype
from .._registry import write_out, with_out
from .._torch_function import wrap_namespace as _wrap_namespace
from .. import _functions as _F
from .._ops import elementwise_extra as _EX, special_functions as _SPF


def _with_out(fn, name=None):
    return with_out(fn, "special_" + (name or fn.__name__))


def _unary(apply, name, doc):
    def function(input: Tensor) -> Tensor:
        return apply(input)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return _with_out(function)


# ---- the same ops as ember's ----------------------------------------------------------------
def _same(fn, name, shown):
    """``fn`` (an ember function taking out=) under ``name``; ``shown``: what the example
    (``name`` at 0.5) prints."""
    def function(input: Tensor, *, out: Tensor | None = None) -> Tensor:
        return fn(input, out=out)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"``ember.{fn.__name__}`` under SciPy's name.\n\n>>> import ember\n"
                        f">>> ember.special.{name}(ember.tensor([0.5]))\n{shown}\n")
    return function


erf = _same(_F.erf, "erf", "tensor([0.5205])")
erfinv = _same(_F.erfinv, "erfinv", "tensor([0.4769])")
expit = _same(_F.sigmoid, "expit", "tensor([0.6225])")
exp2 = _same(_F.exp2, "exp2", "tensor([1.4142])")
expm1 = _same(_F.expm1, "expm1", "tensor([0.6487])")
log1p = _same(_F.log1p, "log1p", "tensor([0.4055])")
gammaln = _same(_F.lgamma, "gammaln", "tensor([0.5724])")
digamma = _same(_F.digamma, "digamma", "tensor([-1.9635])")
psi = _same(_F.digamma, "psi", "tensor([-1.9635])")
i0 = _same(_F.i0, "i0", "tensor([1.0635])")
sinc = _same(_F.sinc, "sinc", "tensor([0.6366])")


def xlogy(input: Tensor | Number, other: Tensor | Number, *,
          out: Tensor | None = None) -> Tensor:
    """``input * log(other)``, 0 where input is 0 (unless other is NaN).

    >>> import ember
    >>> ember.special.xlogy(ember.tensor([0.0, 2.0]), ember.tensor([0.0, 1.0]))
    tensor([0., 0.])
    """
    return _F.xlogy(input, other, out=out)


def round(input: Tensor, *, decimals: int = 0, out: Tensor | None = None) -> Tensor:  # noqa: A001
    """``ember.round``.

    >>> import ember
    >>> ember.special.round(ember.tensor([1.26]), decimals=1)
    tensor([1.3000])
    """
    return _F.round(input, decimals=decimals, out=out)


def polygamma(n: int, input: Tensor, *, out: Tensor | None = None) -> Tensor:
    """``ember.polygamma``: the n-th derivative of digamma.

    >>> import ember
    >>> ember.special.polygamma(1, ember.tensor([1.0]))
    tensor([1.6449])
    """
    result = _F.polygamma(n, input)
    return result if out is None else write_out(result, out, "special_polygamma")


def gammainc(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The regularized lower incomplete gamma function P(input, other) (``ember.igamma``).

    >>> import ember
    >>> ember.special.gammainc(ember.tensor([1.0]), ember.tensor([0.0]))
    tensor([0.])
    """
    for i, t in enumerate((input, other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"special_gammainc(): argument '{('input', 'other')[i]}' (position "
                            f"{i + 1}) must be Tensor, not {type(t).__name__}")
    if not (input.dtype.is_floating_point or other.dtype.is_floating_point):
        raise NotImplementedError(f"\"igamma_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return _F.igamma(input, other, out=out)


def gammaincc(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P.

    >>> import ember
    >>> ember.special.gammaincc(ember.tensor([1.0]), ember.tensor([0.0]))
    tensor([1.])
    """
    for i, t in enumerate((input, other)):
        if not isinstance(t, Tensor):
            raise TypeError(f"special_gammaincc(): argument '{('input', 'other')[i]}' (position "
                            f"{i + 1}) must be Tensor, not {type(t).__name__}")
    result = _SPF.Igammac.apply(input, other)
    return result if out is None else write_out(result, out, "special_gammaincc")


def logsumexp(input: Tensor, dim: int | Sequence[int], keepdim: bool = False, *,
              out: Tensor | None = None) -> Tensor:
    """``ember.logsumexp``.

    >>> import ember
    >>> ember.special.logsumexp(ember.tensor([0.0, 0.0]), 0)
    tensor(0.6931)
    """
    return _F.logsumexp(input, dim, keepdim, out=out)


def softmax(input: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    """``ember.softmax`` along ``dim``.

    >>> import ember
    >>> ember.special.softmax(ember.tensor([0.0, 0.0]), 0)
    tensor([0.5000, 0.5000])
    """
    return _F.softmax(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: dtype | None = None) -> Tensor:
    """``ember.log_softmax`` along ``dim``.

    >>> import ember
    >>> ember.special.log_softmax(ember.tensor([0.0, 0.0]), 0)
    tensor([-0.6931, -0.6931])
    """
    return _F.log_softmax(input, dim, dtype=dtype)


def multigammaln(input: Tensor, p: int, *, out: Tensor | None = None) -> Tensor:
    """The log of the multivariate gamma function of dimension ``p`` (``ember.mvlgamma``).

    >>> import ember
    >>> ember.special.multigammaln(ember.tensor([2.0]), 1)
    tensor([0.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"special_multigammaln(): argument 'input' (position 1) must be "
                        f"Tensor, not {type(input).__name__}")
    result = _F.mvlgamma(input, p)
    return result if out is None else write_out(result, out, "special_multigammaln")


def logit(input: Tensor, eps: float | None = None, *, out: Tensor | None = None) -> Tensor:
    """``ember.logit``: ``log(p / (1 - p))``, p clamped to [eps, 1 - eps] when ``eps`` is given.

    >>> import ember
    >>> ember.special.logit(ember.tensor([0.5, 0.0]))
    tensor([0., -inf])
    """
    result = _F.logit(input, eps)
    return result if out is None else write_out(result, out, "special_logit")


# ---- ember.special's own functions ----------------------------------------------------------
i0e = _unary(_SPF.I0e.apply, "i0e", """The exponentially scaled modified Bessel function of
order 0, ``exp(-|x|) I0(x)``.

>>> import ember
>>> ember.special.i0e(ember.tensor([0.0]))
tensor([1.])
""")
i1 = _unary(_SPF.I1.apply, "i1", """The modified Bessel function of the first kind of order 1.

>>> import ember
>>> ember.special.i1(ember.tensor([0.0]))
tensor([0.])
""")
i1e = _unary(_SPF.I1e.apply, "i1e", """The exponentially scaled ``i1``: ``exp(-|x|) I1(x)``.

>>> import ember
>>> ember.special.i1e(ember.tensor([0.0]))
tensor([0.])
""")
ndtr = _unary(_SPF.Ndtr.apply, "ndtr", """The standard normal CDF.

>>> import ember
>>> ember.special.ndtr(ember.tensor([0.0]))
tensor([0.5000])
""")
ndtri = _unary(_SPF.Ndtri.apply, "ndtri", """The inverse of the standard normal CDF.

>>> import ember
>>> ember.special.ndtri(ember.tensor([0.5]))
tensor([0.])
""")
log_ndtr = _unary(_SPF.LogNdtr.apply, "log_ndtr", """The log of the standard normal CDF.

>>> import ember
>>> ember.special.log_ndtr(ember.tensor([0.0]))
tensor([-0.6931])
""")
erfc = _unary(_SPF.Erfc.apply, "erfc", """The complementary error function ``1 - erf(x)``.

>>> import ember
>>> ember.special.erfc(ember.tensor([0.0]))
tensor([1.])
""")
erfcx = _unary(_SPF.Erfcx.apply, "erfcx", """The scaled complementary error function
``exp(x^2) erfc(x)``.

>>> import ember
>>> ember.special.erfcx(ember.tensor([0.0]))
tensor([1.])
""")
entr = _unary(_EX.Entr.apply, "entr", """The elementwise entropy ``-x log x`` (0 at 0, -inf
for x < 0).

>>> import ember
>>> ember.special.entr(ember.tensor([0.0, 1.0]))
tensor([0., -0.])
""")
bessel_j0 = _unary(_SPF.BesselJ0.apply, "bessel_j0", """The Bessel function of the first kind
of order 0 (no gradient, as PyTorch's).

>>> import ember
>>> ember.special.bessel_j0(ember.tensor([0.0]))
tensor([1.])
""")
bessel_j1 = _unary(_SPF.BesselJ1.apply, "bessel_j1", """The Bessel function of the first kind
of order 1 (no gradient, as PyTorch's).

>>> import ember
>>> ember.special.bessel_j1(ember.tensor([0.0]))
tensor([0.])
""")


_NO_GRADIENT = "(no gradient, as PyTorch's)"
bessel_y0 = _unary(_SPF.BesselY0.apply, "bessel_y0", f"""The Bessel function of the second
kind of order 0 {_NO_GRADIENT}.

>>> import ember
>>> ember.special.bessel_y0(ember.tensor([1.0]))
tensor([0.0883])
""")
bessel_y1 = _unary(_SPF.BesselY1.apply, "bessel_y1", f"""The Bessel function of the second
kind of order 1 {_NO_GRADIENT}.

>>> import ember
>>> ember.special.bessel_y1(ember.tensor([1.0]))
tensor([-0.7812])
""")
modified_bessel_i0 = _unary(_SPF.ModifiedBesselI0.apply, "modified_bessel_i0", f"""The
modified Bessel function of the first kind of order 0 {_NO_GRADIENT}.

>>> import ember
>>> ember.special.modified_bessel_i0(ember.tensor([0.0]))
tensor([1.])
""")
modified_bessel_i1 = _unary(_SPF.ModifiedBesselI1.apply, "modified_bessel_i1", f"""The
modified Bessel function of the first kind of order 1 {_NO_GRADIENT}.

>>> import ember
>>> ember.special.modified_bessel_i1(ember.tensor([0.0]))
tensor([0.])
""")
modified_bessel_k0 = _unary(_SPF.ModifiedBesselK0.apply, "modified_bessel_k0", f"""The
modified Bessel function of the second kind of order 0 {_NO_GRADIENT}.

>>> import ember
>>> ember.special.modified_bessel_k0(ember.tensor([1.0]))
tensor([0.4210])
""")
modified_bessel_k1 = _unary(_SPF.ModifiedBesselK1.apply, "modified_bessel_k1", f"""The
modified Bessel function of the second kind of order 1 {_NO_GRADIENT}.

>>> import ember
>>> ember.special.modified_bessel_k1(ember.tensor([1.0]))
tensor([0.6019])
""")
scaled_modified_bessel_k0 = _unary(
    _SPF.ScaledModifiedBesselK0.apply, "scaled_modified_bessel_k0", f"""``exp(x) K0(x)``
{_NO_GRADIENT}.

>>> import ember
>>> ember.special.scaled_modified_bessel_k0(ember.tensor([1.0]))
tensor([1.1445])
""")
scaled_modified_bessel_k1 = _unary(
    _SPF.ScaledModifiedBesselK1.apply, "scaled_modified_bessel_k1", f"""``exp(x) K1(x)``
{_NO_GRADIENT}.

>>> import ember
>>> ember.special.scaled_modified_bessel_k1(ember.tensor([1.0]))
tensor([1.6362])
""")
airy_ai = _unary(_SPF.AiryAi.apply, "airy_ai", f"""The Airy function Ai {_NO_GRADIENT}.

>>> import ember
>>> ember.special.airy_ai(ember.tensor([0.0]))
tensor([0.3550])
""")
spherical_bessel_j0 = _unary(_SPF.SphericalBesselJ0.apply, "spherical_bessel_j0", f"""The
spherical Bessel function of the first kind of order 0, ``sin(x) / x`` {_NO_GRADIENT}.

>>> import ember
>>> ember.special.spherical_bessel_j0(ember.tensor([0.0]))
tensor([1.])
""")


# ---- orthogonal polynomials: (x, n), n truncated to an integer, 0 for negative n -----------
_POLYNOMIALS = {  # name: (what it is, its value at x = 0.5 for n = 2, as the example prints)
    "chebyshev_polynomial_t": ("the Chebyshev polynomial of the first kind T_n",
                               "tensor([-0.5000])"),
    "chebyshev_polynomial_u": ("the Chebyshev polynomial of the second kind U_n",
                               "tensor([0.])"),
    "chebyshev_polynomial_v": ("the Chebyshev polynomial of the third kind V_n",
                               "tensor([-1.])"),
    "chebyshev_polynomial_w": ("the Chebyshev polynomial of the fourth kind W_n",
                               "tensor([1.])"),
    "hermite_polynomial_h": ("the physicists' Hermite polynomial H_n", "tensor([-1.])"),
    "hermite_polynomial_he": ("the probabilists' Hermite polynomial He_n",
                              "tensor([-0.7500])"),
    "laguerre_polynomial_l": ("the Laguerre polynomial L_n", "tensor([0.1250])"),
    "legendre_polynomial_p": ("the Legendre polynomial P_n", "tensor([-0.1250])"),
    "shifted_chebyshev_polynomial_t": ("T_n(2x - 1)", "tensor([-1.])"),
    "shifted_chebyshev_polynomial_u": ("U_n(2x - 1)", "tensor([-1.])"),
    "shifted_chebyshev_polynomial_v": ("V_n(2x - 1)", "tensor([-1.])"),
    "shifted_chebyshev_polynomial_w": ("W_n(2x - 1)", "tensor([-1.])"),
}


def _polynomial(name, what, shown):
    def function(input: Tensor | Number, n: Tensor | Number, *,
                 out: Tensor | None = None) -> Tensor:
        result = _SPF.Polynomial.apply(input, n, name)
        return result if out is None else write_out(result, out, "special_" + name)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = (f"{what[0].upper()}{what[1:]} of ``input`` (n truncated to an "
                        f"integer; 0 where n < 0; no gradient, as PyTorch's).\n\n"
                        f">>> import ember\n>>> ember.special.{name}(ember.tensor([0.5]), 2)\n"
                        f"{shown}\n")
    return function


for _name, (_what, _shown) in _POLYNOMIALS.items():
    globals()[_name] = _polynomial(_name, _what, _shown)
del _name, _what, _shown


def xlog1py(input: Tensor | Number, other: Tensor | Number, *,
            out: Tensor | None = None) -> Tensor:
    """``input * log1p(other)``, 0 where input is 0 (unless other is NaN).

    >>> import ember
    >>> ember.special.xlog1py(ember.tensor([0.0, 2.0]), ember.tensor([-1.0, 0.0]))
    tensor([0., 0.])
    """
    result = _EX.Xlog1py.apply(input, other)
    return result if out is None else write_out(result, out, "special_xlog1py")


def zeta(input: Tensor | Number, other: Tensor | Number, *,
         out: Tensor | None = None) -> Tensor:
    """Hurwitz's zeta function ``sum_k (other + k) ** -input``.

    >>> import ember
    >>> ember.special.zeta(ember.tensor([2.0]), ember.tensor([1.0]))
    tensor([1.6449])
    """
    result = _SPF.Zeta.apply(input, other)
    return result if out is None else write_out(result, out, "special_zeta")


__all__ = [
    "erf", "erfc", "erfcx", "erfinv", "expit", "logit", "exp2", "expm1", "log1p", "gammaln",
    "digamma", "psi", "polygamma", "multigammaln", "gammainc", "gammaincc", "logsumexp",
    "softmax", "log_softmax", "round", "sinc", "xlogy", "xlog1py", "i0", "i0e", "i1", "i1e",
    "ndtr", "ndtri", "log_ndtr", "entr", "zeta", "bessel_j0", "bessel_j1", "bessel_y0",
    "bessel_y1", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "airy_ai",
    "spherical_bessel_j0", *_POLYNOMIALS,
]

_wrap_namespace(globals(), __all__, "ember.special")
