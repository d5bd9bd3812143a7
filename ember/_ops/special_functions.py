"""The special functions of ``ember.special`` that NumPy lacks: the modified Bessel functions
``i0``, ``i0e``, ``i1``, ``i1e``, the normal distribution's ``ndtr``, ``ndtri``, ``log_ndtr``,
``erfc``, ``erfcx``, Hurwitz's ``zeta``, the upper incomplete gamma ``igammac``, the Bessel
family (``bessel_j0``/``j1``/``y0``/``y1``, ``modified_bessel_*``, ``airy_ai``,
``spherical_bessel_j0``) and the orthogonal polynomials (Chebyshev, Hermite, Laguerre,
Legendre).

Their values come from SciPy (a dependency of ember, imported on first use: it is slow to
import) on a float64 host copy, cast to the result's dtype and moved back to the input's
array module, as ``erf`` is computed (a meta input gives a meta result of its shape).
Gradients are written with these ops again, so they are differentiable twice where PyTorch
is; the Bessel family past ``i1e`` and the polynomials have no derivative in PyTorch (their
results do not require grad), zeta none in its first argument, igammac none in its first.
"""
import math

import numpy as np  # the host kernels (on host copies, see host_special)

from .._tensor import Tensor
from ..backend import dtypes, get_array_module, to_host
from ..backend.meta import is_meta
from .primitive import Primitive, unbroadcast
from .special import Lgamma
from .elementwise_extra import (_float_pair, _save_pair, _saved_pair, _pair_grads, _unary_jvp,
                                need_one_tensor)

_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)
_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


#: the functions SciPy has only as part of another (``airy`` gives Ai, Ai', Bi, Bi')
_COMPOSED = {
    "airy_ai": lambda sp, x: sp.airy(x)[0],
    "spherical_j0": lambda sp, x: sp.spherical_jn(0, x),
}


def host_special(name, *arrays):
    """``scipy.special.<name>`` of ``arrays`` (of one dtype, their module's), computed in
    float64 on the host and returned in that dtype and module."""
    first = arrays[0]
    xp = get_array_module(*arrays)
    out_dtype = first.dtype
    if any(is_meta(a) for a in arrays):
        shape = xp.broadcast_arrays(*arrays)[0].shape if len(arrays) > 1 else first.shape
        return xp.empty(shape, out_dtype)
    import scipy.special  # slow to import: only when a special function first runs
    host = [to_host(a).astype("float64", copy=False) for a in arrays]
    if name in _COMPOSED:
        out = _COMPOSED[name](scipy.special, *host)
    else:
        out = getattr(scipy.special, name)(*host)
    out = out.astype(out_dtype, copy=False)
    return out if type(first) is type(out) else xp.asarray(out)


def _float_input(x, kernel, half=True):
    """x's array in a float dtype (integers and bool: the default float dtype); ``half``:
    whether float16 and bfloat16 have a kernel in PyTorch."""
    d = x._data
    if d.dtype.kind in "biu":
        return d.astype(dtypes.get_default_dtype().np)
    if d.dtype.kind == "c" or (not half and x.dtype.itemsize == 2):
        raise NotImplementedError(f"\"{kernel}_cpu\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")
    return d


def _special_unary(name, scipy_name, kernel, grad_formula=None, node=None,
                   saves="input", half=True):
    """A unary Primitive computed by SciPy; ``grad_formula(grad, x, out)`` on tensors (None:
    no derivative, the result requires no grad, as PyTorch's)."""
    def forward(ctx, x):
        if grad_formula is not None:
            ctx.save_for_backward(x)
        d = _float_input(x, kernel, half)
        if d.dtype.kind == "V":  # bfloat16: SciPy has no loop; rounded once from float64
            return host_special(scipy_name, d.astype("float32")).astype(d.dtype)
        return host_special(scipy_name, d)

    body = {"forward": staticmethod(forward), "__module__": __name__}
    if grad_formula is None:
        body["differentiable"] = False
    else:
        def backward(ctx, grad):
            saved = ctx.saved_tensors
            return grad_formula(grad, saved[0], saved[-1] if saves == "output" else None)
        body.update(backward=staticmethod(backward), saves_output=saves == "output",
                    _backward_name=node, _grad_formula=staticmethod(grad_formula),
                    jvp=_unary_jvp(grad_formula))
    return type(name, (Primitive,), body)


def _i0_grad(g, x, out):
    return g * I1.apply(x)


def _i0e_grad(g, x, out):
    return g * (I1e.apply(x) - x.sign() * out)


def _i1_grad(g, x, out):
    return g * (I0.apply(x) - out / x).masked_fill(x == 0, 0.5)


def _i1e_grad(g, x, out):
    return g * (I0e.apply(x) - out * (x.sign() + x.reciprocal())).masked_fill(x == 0, 0.5)


def _ndtr_grad(g, x, out):
    return g * ((x * x) * -0.5).exp() * _INV_SQRT_2PI


def _ndtri_grad(g, x, out):
    return g * ((out * out) * 0.5).exp() * math.sqrt(2 * math.pi)


def _log_ndtr_grad(g, x, out):
    return g * (-(out + (x * x) * 0.5)).exp() * _INV_SQRT_2PI


def _erfc_grad(g, x, out):
    return g * (-(x * x)).exp() * -_TWO_OVER_SQRT_PI


def _erfcx_grad(g, x, out):
    return g * (x * out * 2 - _TWO_OVER_SQRT_PI)


I0 = _special_unary("I0", "i0", "i0_vml", _i0_grad, "I0Backward0")
I0e = _special_unary("I0e", "i0e", "i0e", _i0e_grad, "SpecialI0EBackward0",
                     saves="output")
I1 = _special_unary("I1", "i1", "i1", _i1_grad, "SpecialI1Backward0", saves="output")
I1e = _special_unary("I1e", "i1e", "i1e", _i1e_grad, "SpecialI1EBackward0",
                     saves="output")
Ndtr = _special_unary("Ndtr", "ndtr", "erf_vml", _ndtr_grad, "SpecialNdtrBackward0")
Ndtri = _special_unary("Ndtri", "ndtri", "ndtri", _ndtri_grad, "SpecialNdtriBackward0",
                       saves="output", half=False)
LogNdtr = _special_unary("LogNdtr", "log_ndtr", "log_ndtr", _log_ndtr_grad,
                         "SpecialLogNdtrBackward0", saves="output", half=False)
Erfc = _special_unary("Erfc", "erfc", "erfc_vml", _erfc_grad, "ErfcBackward0")
Erfcx = _special_unary("Erfcx", "erfcx", "erfcx", _erfcx_grad,
                       "SpecialErfcxBackward0", saves="output", half=False)
BesselJ0 = _special_unary("BesselJ0", "j0", "bessel_j0", half=False)
BesselJ1 = _special_unary("BesselJ1", "j1", "bessel_j1", half=False)
# the Bessel family without derivatives in PyTorch (their results do not require grad)
BesselY0 = _special_unary("BesselY0", "y0", "bessel_y0", half=False)
BesselY1 = _special_unary("BesselY1", "y1", "bessel_y1", half=False)
ModifiedBesselI0 = _special_unary("ModifiedBesselI0", "i0", "modified_bessel_i0", half=False)
ModifiedBesselI1 = _special_unary("ModifiedBesselI1", "i1", "modified_bessel_i1", half=False)
ModifiedBesselK0 = _special_unary("ModifiedBesselK0", "k0", "modified_bessel_k0", half=False)
ModifiedBesselK1 = _special_unary("ModifiedBesselK1", "k1", "modified_bessel_k1", half=False)
ScaledModifiedBesselK0 = _special_unary("ScaledModifiedBesselK0", "k0e",
                                        "scaled_modified_bessel_k0", half=False)
ScaledModifiedBesselK1 = _special_unary("ScaledModifiedBesselK1", "k1e",
                                        "scaled_modified_bessel_k1", half=False)
AiryAi = _special_unary("AiryAi", "airy_ai", "airy_ai", half=False)
SphericalBesselJ0 = _special_unary("SphericalBesselJ0", "spherical_j0", "spherical_bessel_j0",
                                   half=False)


class Zeta(Primitive):
    """Hurwitz's zeta ``sum_k (q + k)^-x``; differentiable in q only, as PyTorch."""
    _backward_name = "SpecialZetaBackward0"

    @staticmethod
    def forward(ctx, x, q):
        a, b = _float_pair(x, q, "zeta", "special_zeta")
        if a.dtype.itemsize == 2:
            raise NotImplementedError(f"\"zeta_cpu\" not implemented for "
                                      f"'{dtypes.result_type(x, q).scalar_name}'")
        _save_pair(ctx, x, q)
        return host_special("zeta", a, b)

    @staticmethod
    def backward(ctx, grad):
        x, q = _saved_pair(ctx)
        if ctx.needs_input_grad[0] and isinstance(x, Tensor):
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return _pair_grads(ctx, None, lambda: grad * -x * Zeta.apply(x + 1, q), x, q)


class Igammac(Primitive):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x); differentiable
    in x only (PyTorch has no derivative in a)."""
    _backward_name = "IgammacBackward0"

    @staticmethod
    def forward(ctx, a, x):
        for i, t in enumerate((a, x)):
            if not isinstance(t, Tensor):
                raise TypeError(f"igammac(): argument '{('input', 'other')[i]}' (position "
                                f"{i + 1}) must be Tensor, not {type(t).__name__}")
        dt = dtypes.result_type(a, x)
        if not dt.is_floating_point:
            raise NotImplementedError(f"\"igammac_cpu\" not implemented for '{dt.scalar_name}'")
        a_, x_ = _float_pair(a, x, "igammac")
        ctx.save_for_backward(a, x)
        return host_special("gammaincc", a_, x_)

    @staticmethod
    def backward(ctx, grad):
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igammac: input' is not implemented.")
        a, x = ctx.saved_tensors
        density = ((a - 1) * x.log() - x - Lgamma.apply(a)).exp()
        return None, unbroadcast(-grad * density, x._data.shape)


# ---- orthogonal polynomials ------------------------------------------------------------------
def _chebyshev_34(sign):
    """Chebyshev polynomials of the third (sign -1) and fourth (+1) kind by their recurrence
    (V, W: P_0 = 1, P_1 = 2x + sign, P_k+1 = 2x P_k - P_k-1), on float64 host arrays."""
    def evaluate(sp, n, x):
        previous, current = np.ones_like(x), 2 * x + sign
        out = np.where(n == 0, previous, current)
        top = int(n.max()) if n.size else 0
        for k in range(2, top + 1):
            previous, current = current, 2 * x * current - previous
            out = np.where(n == k, current, out)
        return out
    return evaluate


def _shifted(evaluate):
    return lambda sp, n, x: evaluate(sp, n, 2 * x - 1)


_POLYNOMIALS = {
    "chebyshev_polynomial_t": lambda sp, n, x: sp.eval_chebyt(n, x),
    "chebyshev_polynomial_u": lambda sp, n, x: sp.eval_chebyu(n, x),
    "chebyshev_polynomial_v": _chebyshev_34(-1),
    "chebyshev_polynomial_w": _chebyshev_34(1),
    "hermite_polynomial_h": lambda sp, n, x: sp.eval_hermite(n, x),
    "hermite_polynomial_he": lambda sp, n, x: sp.eval_hermitenorm(n, x),
    "laguerre_polynomial_l": lambda sp, n, x: sp.eval_laguerre(n, x),
    "legendre_polynomial_p": lambda sp, n, x: sp.eval_legendre(n, x),
    "shifted_chebyshev_polynomial_t": lambda sp, n, x: sp.eval_sh_chebyt(n, x),
    "shifted_chebyshev_polynomial_u": lambda sp, n, x: sp.eval_sh_chebyu(n, x),
    "shifted_chebyshev_polynomial_v": _shifted(_chebyshev_34(-1)),
    "shifted_chebyshev_polynomial_w": _shifted(_chebyshev_34(1)),
}


def _polynomial_host(name):
    """The host kernel of polynomial ``name`` of (x, n): n truncated to an integer, 0 where
    it is negative or NaN, as PyTorch."""
    def kernel(sp, x, n):
        x, n = np.broadcast_arrays(x, n)
        valid = n >= 0  # NaN fails too
        degree = np.where(valid, np.trunc(np.where(valid, n, 0)), 0).astype(np.int64)
        return np.where(valid, _POLYNOMIALS[name](sp, degree, x), 0.0)
    return kernel


for _name in _POLYNOMIALS:
    _COMPOSED[_name] = _polynomial_host(_name)
del _name


class Polynomial(Primitive):
    """An orthogonal polynomial of x of degree n (``ember.special.<name>``); PyTorch gives
    it no derivative (the result requires no grad)."""
    differentiable = False

    @staticmethod
    def forward(ctx, x, n, name):
        need_one_tensor(x, n, "special_" + name, "n", first=("x", "x"))
        a, b = _float_pair(x, n, name)
        if a.dtype.itemsize == 2:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                      f"'{dtypes.result_type(x, n).scalar_name}'")
        return host_special(name, a, b)


__all__ = ["host_special", "Polynomial", "I0", "I0e", "I1", "I1e", "Ndtr", "Ndtri", "LogNdtr",
           "Erfc", "Erfcx", "BesselJ0", "BesselJ1", "Zeta", "Igammac", "BesselY0", "BesselY1",
           "ModifiedBesselI0", "ModifiedBesselI1", "ModifiedBesselK0", "ModifiedBesselK1",
           "ScaledModifiedBesselK0", "ScaledModifiedBesselK1", "AiryAi", "SphericalBesselJ0"]
