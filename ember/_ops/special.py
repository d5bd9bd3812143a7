"""Special functions as Primitives: ``lgamma``, ``digamma``, ``polygamma``, ``erfinv``, and
the standard gamma sampler with its implicit reparameterization gradient.

The kernels compute in float64 with vectorized series (no SciPy): Lanczos for ``lgamma``,
upward recurrence plus the asymptotic series for ``digamma``, Euler-Maclaurin for the
Hurwitz zeta behind ``polygamma``, and Newton steps on ``erf`` for ``erfinv``. Results are
cast back to the input's dtype. Each backward is written with these ops again, so
``lgamma`` and ``digamma`` are differentiable to any order, as in PyTorch.
"""
import math

import numpy as np  # dtype metadata only (finfo); array math goes through xp

from ..backend import dtypes, get_array_module, to_host
from .. import random as _random
from .activation_ops import erf_array
from .primitive import Primitive, unbroadcast

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
# Bernoulli numbers B_2, B_4, ..., B_18 (the asymptotic series of digamma and zeta)
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798)
_SHIFT = 10.0  # recurrences move arguments up to here, where the asymptotic series converge


def _float64(d):
    """``d`` in float64 for the kernels, and the float dtype the result is cast back to
    (integer inputs give the default float dtype, as PyTorch's float ops do)."""
    out_dtype = d.dtype if dtypes.is_float_np(d.dtype) else dtypes.get_default_dtype().np
    return d.astype("float64", copy=False), out_dtype


def _is_nonpositive_integer(xp, x):
    return (x <= 0) & (xp.floor(x) == x)


# ---- kernels on float64 arrays -------------------------------------------------------------
def lgamma_array(x):
    """``log|Gamma(x)|``; +inf at the poles and at +-inf, as PyTorch."""
    xp = get_array_module(x)
    reflect = x < 0.5
    y = xp.where(reflect, 1.0 - x, x) - 1.0  # Lanczos runs on y + 1 >= 0.5
    series = xp.full(x.shape, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], 1):
        series = series + c / (y + i)
    t = y + _LANCZOS_G + 0.5
    direct = _HALF_LOG_2PI + (y + 0.5) * xp.log(t) - t + xp.log(series)
    # Gamma(x) Gamma(1 - x) = pi / sin(pi x)
    sine = xp.abs(xp.sin(math.pi * (x - xp.floor(x))))
    out = xp.where(reflect, math.log(math.pi) - xp.log(sine) - direct, direct)
    out = xp.where((x == 1.0) | (x == 2.0), 0.0, out)  # exact zeros, not Lanczos' ulps
    return xp.where(_is_nonpositive_integer(xp, x) | xp.isinf(x), math.inf, out)


def digamma_array(x):
    """``d/dx log Gamma(x)``; -inf at +0, +inf at -0, NaN at the negative integers."""
    xp = get_array_module(x)
    reflect = x < 0
    y = xp.where(reflect, 1.0 - x, x)
    y = xp.where(y == 0, 1.0, y)  # zeros are set below; keep 1/y finite meanwhile
    acc = xp.zeros(x.shape)
    for _ in range(int(_SHIFT)):  # psi(y) = psi(y + 1) - 1 / y
        low = y < _SHIFT
        acc = acc - xp.where(low, 1.0 / y, 0.0)
        y = xp.where(low, y + 1.0, y)
    inv2 = 1.0 / (y * y)
    tail = xp.zeros(x.shape)
    for k in range(len(_BERNOULLI), 0, -1):  # sum of B_2k / (2k y^2k), Horner in 1/y^2
        tail = (tail + _BERNOULLI[k - 1] / (2 * k)) * inv2
    direct = acc + xp.log(y) - 0.5 / y - tail
    # psi(1 - x) - psi(x) = pi cot(pi x)
    frac = x - xp.floor(x)
    reflected = direct - math.pi / xp.tan(math.pi * xp.where(frac == 0, 0.5, frac))
    out = xp.where(reflect, reflected, direct)
    out = xp.where(reflect & (frac == 0), math.nan, out)
    out = xp.where(x == 0, xp.where(xp.signbit(x), math.inf, -math.inf), out)
    return xp.where(x == math.inf, math.inf, out)


def hurwitz_zeta_array(s, q):
    """``zeta(s, q) = sum_k (q + k)^-s`` for an integer ``s >= 2`` (so any real ``q`` works:
    the first terms are summed until q passes _SHIFT, Euler-Maclaurin does the rest)."""
    xp = get_array_module(q)
    pole = _is_nonpositive_integer(xp, q)
    y = xp.where(pole, 1.0, q)
    acc = xp.zeros(q.shape)
    steps = int(math.ceil(_SHIFT - float(y.min()))) if y.size else 0
    for _ in range(max(steps, 0)):
        low = y < _SHIFT
        acc = acc + xp.where(low, y ** -s, 0.0)
        y = xp.where(low, y + 1.0, y)
    out = acc + y ** (1 - s) / (s - 1) + 0.5 * y ** -s
    rising, factorial, power = float(s), 2.0, y ** (-s - 1)
    for j, b in enumerate(_BERNOULLI, 1):  # B_2j / (2j)! * s (s+1) ... (s+2j-2) y^(-s-2j+1)
        out = out + (b / factorial * rising) * power
        rising *= (s + 2 * j - 1) * (s + 2 * j)
        factorial *= (2 * j + 1) * (2 * j + 2)
        power = power / (y * y)
    return xp.where(pole, math.inf, out)


def polygamma_array(n, x):
    """The n-th derivative of digamma."""
    if n == 0:
        return digamma_array(x)
    sign = 1.0 if n % 2 else -1.0
    return sign * math.factorial(n) * hurwitz_zeta_array(n + 1, x)


# Giles' single-precision erfinv approximation (central and tail pieces), refined below.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                   0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844,
                0.00573950773, -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


def _horner(coefficients, w):
    p = coefficients[0]
    for c in coefficients[1:]:
        p = c + p * w
    return p


def erfinv_array(y):
    """The inverse error function: +-inf at +-1, NaN outside [-1, 1]."""
    xp = get_array_module(y)
    inside = xp.abs(y) < 1
    yc = xp.where(inside, y, 0.0)
    w = -xp.log((1.0 - yc) * (1.0 + yc))
    central = _horner(_ERFINV_CENTRAL, w - 2.5)
    tail = _horner(_ERFINV_TAIL, xp.sqrt(xp.maximum(w, 5.0)) - 3.0)
    x = xp.where(w < 5.0, central, tail) * yc
    for _ in range(3):  # Newton on erf(x) = y: the approximation has ~7 digits
        slope = (2 / math.sqrt(math.pi)) * xp.exp(-x * x)
        step = (erf_array(x) - yc) / xp.where(slope == 0, 1.0, slope)
        x = x - xp.where(slope == 0, 0.0, step)
    out = xp.where(inside, x, math.nan)
    return xp.where(xp.abs(y) == 1, xp.where(y > 0, math.inf, -math.inf), out)


# ---- Primitives ---------------------------------------------------------------------------
class Lgamma(Primitive):
    _backward_name = "LgammaBackward0"

    @staticmethod
    def forward(ctx, x):
        dtypes.refuse_float8(x._data.dtype, "lgamma_vml_cpu")
        ctx.save_for_backward(x)
        d, out_dtype = _float64(x._data)
        return lgamma_array(d).astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * Digamma.apply(x)


class Digamma(Primitive):
    _backward_name = "DigammaBackward0"

    @staticmethod
    def forward(ctx, x):
        dtypes.refuse_float8(x._data.dtype, "digamma")
        ctx.save_for_backward(x)
        d, out_dtype = _float64(x._data)
        return digamma_array(d).astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * Polygamma.apply(1, x)


class Polygamma(Primitive):
    _backward_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx, n, x):
        ctx.n = n
        ctx.save_for_backward(x)
        d, out_dtype = _float64(x._data)
        return polygamma_array(n, d).astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return None, grad * Polygamma.apply(ctx.n + 1, x)


class Erfinv(Primitive):
    _backward_name = "ErfinvBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, y):
        dtypes.refuse_float8(y._data.dtype, "erfinv_vml_cpu")
        d, out_dtype = _float64(y._data)
        return erfinv_array(d).astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * (math.sqrt(math.pi) / 2) * (out * out).exp()


# ---- the standard gamma sampler -------------------------------------------------------------
_GRAD_EPS = 1e-15  # a few ulps: the last terms only add rounding noise
_GRAD_MAX_TERMS = 20000
_LARGE_ALPHA = 1e6  # beyond: the Wilson-Hilferty approximation (see _wilson_hilferty_grad)


class _Converging:
    """The per-element state of an iteration over 1-D arrays: elements that converge are
    written to the results and leave, so the work follows the slow ones only."""

    def __init__(self, xp, n, n_results):
        self.index = xp.arange(n)
        self.results = [xp.empty(n) for _ in range(n_results)]

    def retire(self, done, results, state):
        """Store ``results`` where ``done``; returns the state arrays of the others (None
        when none is left)."""
        if not bool(done.any()):
            return state
        where = self.index[done]
        for out, value in zip(self.results, results):
            out[where] = value[done]
        keep = ~done
        self.index = self.index[keep]
        if self.index.size == 0:
            return None
        return [v[keep] for v in state]


def _series(xp, a, x):
    """The sum S of P(a, x) = x^a e^-x / Gamma(a) * S, S = sum_n x^n / (a (a+1) ... (a+n)),
    and dS/da, term by term (forward mode along the sum); for x < a + 1 (1-D arrays)."""
    term, dterm = 1.0 / a, -1.0 / (a * a)
    total, dtotal = term, dterm
    ap = a.copy()
    loop = _Converging(xp, a.shape[0], 2)
    for step in range(_GRAD_MAX_TERMS):
        ap = ap + 1.0
        ratio = x / ap
        dterm = dterm * ratio - term * ratio / ap
        term = term * ratio
        total, dtotal = total + term, dtotal + dterm
        # every dterm is negative: dtotal is no sum of cancelling terms
        done = (xp.abs(term) <= _GRAD_EPS * xp.abs(total)) & \
            (xp.abs(dterm) <= _GRAD_EPS * xp.abs(dtotal))
        if step == _GRAD_MAX_TERMS - 1:
            done = done | True
        state = loop.retire(done, (total, dtotal), (x, ap, term, dterm, total, dtotal))
        if state is None:
            break
        x, ap, term, dterm, total, dtotal = state
    return loop.results


def _series_grad(xp, a, x, psi):
    """dx/da where x < a + 1, from the series of P."""
    total, dtotal = _series(xp, a, x)
    # P = x^a e^-x / Gamma(a) * total and the density is x^(a-1) e^-x / Gamma(a), so
    # -(dP/da) / density needs no exponentials
    return -x * (total * (xp.log(x) - psi) + dtotal)


def _fraction(xp, a, x, psi):
    """The continued fraction F of Q(a, x) = 1 - P(a, x) = x^a e^-x / Gamma(a) * F, and
    dF/da (modified Lentz, with the derivative of each convergent carried along); for
    x >= a + 1 (1-D arrays)."""
    tiny = 1e-300
    b = x + 1.0 - a
    c, dc = xp.full(a.shape, 1.0 / tiny), xp.zeros(a.shape)
    d = 1.0 / b
    dd = d * d  # d(1/b)/da with db/da = -1
    h, dh = d, dd
    log_term = xp.abs(xp.log(x) - psi) + 1.0
    loop = _Converging(xp, a.shape[0], 2)
    for i in range(1, _GRAD_MAX_TERMS):
        an, dan = -i * (i - a), float(i)
        b = b + 2.0
        den = an * d + b
        dden = dan * d + an * dd - 1.0
        den = xp.where(xp.abs(den) < tiny, tiny, den)
        c_new = b + an / c
        dc = -1.0 + dan / c - an * dc / (c * c)
        c = xp.where(xp.abs(c_new) < tiny, tiny, c_new)
        d = 1.0 / den
        dd = -dden * d * d
        delta = d * c
        dh_next = dh * delta + h * (dd * c + d * dc)
        h = h * delta
        # converged when the value and its derivative both stop moving (at integer a the
        # fraction ends, an = 0, while the derivative's terms go on)
        done = (xp.abs(delta - 1.0) <= _GRAD_EPS) & \
            (xp.abs(dh_next - dh) <= _GRAD_EPS * (xp.abs(h) * log_term + xp.abs(dh_next)))
        dh = dh_next
        if i == _GRAD_MAX_TERMS - 1:
            done = done | True
        state = loop.retire(done, (h, dh), (a, b, c, dc, d, dd, h, dh, log_term))
        if state is None:
            break
        a, b, c, dc, d, dd, h, dh, log_term = state
    return loop.results


def _fraction_grad(xp, a, x, psi):
    """dx/da where x >= a + 1, from the continued fraction of Q."""
    h, dh = _fraction(xp, a, x, psi)
    return x * (h * (xp.log(x) - psi) + dh)


def igamma_array(a, x):
    """The regularized lower incomplete gamma function P(a, x) (float64 arrays): 1 at
    a = 0, NaN for negative a or x, as PyTorch's igamma."""
    xp = get_array_module(a)
    a, x = xp.broadcast_arrays(a, x)
    out = xp.full(a.shape, math.nan)
    interior = (a > 0) & (x > 0) & xp.isfinite(x) & xp.isfinite(a)
    series = interior & (x < a + 1.0)
    fraction = interior & ~series
    for mask in (series, fraction):
        if not bool(mask.any()):
            continue
        am, xm = a[mask], x[mask]
        scale = xp.exp(am * xp.log(xm) - xm - lgamma_array(am))
        if mask is series:
            out[mask] = scale * _series(xp, am, xm)[0]
        else:
            out[mask] = 1.0 - scale * _fraction(xp, am, xm, digamma_array(am))[0]
    out = xp.where((a >= 0) & (x == 0), 0.0, out)
    out = xp.where((a == 0) & (x > 0), 1.0, out)
    return xp.where((a >= 0) & (x == math.inf), 1.0, out)


class Igamma(Primitive):
    """P(a, x); differentiable in x only (PyTorch has no derivative in a either)."""
    _backward_name = "IgammaBackward0"

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        dt = dtypes.result_type(a, x)
        dt = dt if dt.is_floating_point else dtypes.get_default_dtype()
        a64, x64 = a._data.astype("float64"), x._data.astype("float64")
        return igamma_array(a64, x64).astype(dt.np, copy=False)

    @staticmethod
    def backward(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        a, x = ctx.saved_tensors
        density = ((a - 1) * x.log() - x - Lgamma.apply(a)).exp()
        return None, unbroadcast(grad * density, x._data.shape)


def _wilson_hilferty_grad(xp, a, x):
    """dx/da for large a: x = a (1 - 1/(9a) + z / (3 sqrt a))^3 holds z fixed."""
    u = xp.cbrt(x / a)
    z = (u - 1.0 + 1.0 / (9.0 * a)) * 3.0 * xp.sqrt(a)
    du = -1.0 / (9.0 * a * a) - z / (6.0 * a * xp.sqrt(a))
    return u ** 3 + 3.0 * a * u * u * du


def standard_gamma_grad_array(alpha, x):
    """d x / d alpha of a Gamma(alpha, 1) sample x at fixed CDF value (float64 arrays),
    -(dF/dalpha) / density by the implicit function theorem."""
    xp = get_array_module(alpha)
    alpha, x = xp.broadcast_arrays(alpha, x)
    out = xp.zeros(alpha.shape)
    large = alpha >= _LARGE_ALPHA
    if bool(large.any()):
        out[large] = _wilson_hilferty_grad(xp, alpha[large], x[large])
    psi = digamma_array(alpha)
    for use_series, grad in ((True, _series_grad), (False, _fraction_grad)):
        mask = ~large & ((x < alpha + 1.0) == use_series)
        if bool(mask.any()):
            out[mask] = grad(xp, alpha[mask], x[mask], psi[mask])
    return out


class StandardGammaGrad(Primitive):
    """d sample / d concentration of standard gamma samples; it has no derivative of its
    own (a second derivative through it raises, as PyTorch's ``_standard_gamma_grad``)."""
    _backward_name = "StandardGammaGradBackward0"

    @staticmethod
    def forward(ctx, alpha, sample):
        a, out_dtype = _float64(alpha._data)
        x, _ = _float64(sample._data)
        return standard_gamma_grad_array(a, x).astype(out_dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(
            "the derivative for '_standard_gamma_grad' is not implemented.")


class StandardGamma(Primitive):
    """Gamma(alpha, 1) samples drawn with ``generator``; the gradient w.r.t. alpha is the
    implicit reparameterization one (``StandardGammaGrad``)."""
    _backward_name = "StandardGammaBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, alpha, generator=None):
        ctx.save_for_backward(alpha)
        a, out_dtype = _float64(alpha._data)
        drawn = _random.rng(generator).standard_gamma(to_host(a))
        xp = get_array_module(alpha._data)
        sample = xp.asarray(drawn).astype(out_dtype, copy=False)
        # samples that underflowed to 0 are moved to the smallest normal: inside the support
        return xp.maximum(sample, dtypes._np_finfo(np.dtype(out_dtype)).tiny)

    @staticmethod
    def backward(ctx, grad):
        alpha, sample = ctx.saved_tensors
        return grad * StandardGammaGrad.apply(alpha, sample), None


def standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) samples of ``alpha``'s shape, differentiable w.r.t. alpha."""
    return StandardGamma.apply(alpha, generator)


__all__ = ["Lgamma", "Digamma", "Polygamma", "Erfinv", "Igamma", "igamma_array", "StandardGamma",
           "StandardGammaGrad",
           "standard_gamma", "lgamma_array", "digamma_array", "polygamma_array",
           "erfinv_array", "standard_gamma_grad_array"]
