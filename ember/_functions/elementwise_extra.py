"""Declarations of the elementwise extras, samplers, logspace and window functions (ops in
``_ops/elementwise_extra.py``, ``_ops/special_functions.py``, ``_ops/sampling.py``)."""
from __future__ import annotations

import builtins
import inspect as _inspect

from .. import return_types as _RT
from .._ops import elementwise_extra as _EX, special_functions as _SPF, sampling as _SMP
from .._registry import (DECLARED as _DECLARED, write_out as _write_out, op, unary, binary,
                         factory_with_out as _factory_with_out, _declare as _declare_entry,
                         method as _method)
from .._tensor import Tensor
from .._torch_function import dispatching as _dispatching
from .._typing import Any, Number, Sequence, dtype
from ..backend import dtypes
from .basics import _inplace_function

# ---- elementwise extras, samplers, logspace and windows (_ops/elementwise_extra.py, ---------
# special_functions.py, sampling.py)

copysign = binary(_EX.Copysign, "copysign", inplace=True)
frac = unary(_EX.Frac, "frac", inplace=True)
sinc = unary(_EX.Sinc, "sinc", inplace=True)
i0 = unary(_SPF.I0, "i0", inplace=True)
signbit = unary(_EX.Signbit, "signbit")
gcd = binary(_EX.Gcd, "gcd", inplace=True)
lcm = binary(_EX.Lcm, "lcm", inplace=True)
logaddexp2 = binary(_EX.LogAddExp2, "logaddexp2")
nextafter = binary(_EX.Nextafter, "nextafter", inplace=True)
xlogy = binary(_EX.Xlogy, "xlogy", inplace=True)
bitwise_left_shift = binary(_EX.LeftShift, "bitwise_left_shift", inplace=True)
bitwise_right_shift = binary(_EX.RightShift, "bitwise_right_shift", inplace=True)

_EXTRA_DOCS = {  # (what it computes, an example call, what the example prints)
    "copysign": ("|input| with the sign of other (integers give the default float dtype)",
                 "ember.copysign(ember.tensor([1.5, -2.0]), -1.0)", "tensor([-1.5000, -2.0000])"),
    "frac": ("The fractional part, ``input - trunc(input)`` (float dtypes only)",
             "ember.frac(ember.tensor([1.5, -2.25]))", "tensor([ 0.5000, -0.2500])"),
    "sinc": ("The normalized sinc, ``sin(pi x) / (pi x)`` (1 at 0)",
             "ember.sinc(ember.tensor([0.0, 0.5]))", "tensor([1.0000, 0.6366])"),
    "i0": ("The modified Bessel function of the first kind of order 0",
           "ember.i0(ember.tensor([0.0, 1.0]))", "tensor([1.0000, 1.2661])"),
    "signbit": ("True where the sign bit is set (-0.0 included)",
                "ember.signbit(ember.tensor([-0.0, 1.0]))", "tensor([ True, False])"),
    "gcd": ("The greatest common divisor of integer tensors",
            "ember.gcd(ember.tensor([12, 18]), ember.tensor([8, 4]))", "tensor([4, 2])"),
    "lcm": ("The least common multiple of integer tensors",
            "ember.lcm(ember.tensor([4, 6]), ember.tensor([6, 4]))", "tensor([12, 12])"),
    "logaddexp2": ("``log2(2 ** input + 2 ** other)`` without overflow",
                   "ember.logaddexp2(ember.tensor([1.0]), ember.tensor([1.0]))",
                   "tensor([2.])"),
    "nextafter": ("The next float after input towards other",
                  "ember.nextafter(ember.tensor([1.0]), ember.tensor([2.0])) - 1",
                  "tensor([1.1921e-07])"),
    "xlogy": ("``input * log(other)``, 0 where input is 0 (unless other is NaN)",
              "ember.xlogy(ember.tensor([0.0, 2.0]), ember.tensor([0.0, 4.0]))",
              "tensor([0.0000, 2.7726])"),
    "bitwise_left_shift": ("Integers shifted left by other bits (0 past the width)",
                           "ember.bitwise_left_shift(ember.tensor([1, 3]), 2)",
                           "tensor([ 4, 12])"),
    "bitwise_right_shift": ("Integers shifted right by other bits, sign-filled",
                            "ember.bitwise_right_shift(ember.tensor([-8, 8]), 2)",
                            "tensor([-2,  2])"),
}
for _name, (_what, _call, _shown) in _EXTRA_DOCS.items():
    globals()[_name].__doc__ = f"{_what}.\n\n>>> import ember\n>>> {_call}\n{_shown}\n"
del _name, _what, _call, _shown


@op(inplace=True, out=True)
def heaviside(input: Tensor, values: Tensor) -> Tensor:
    """0 where input < 0, 1 where input > 0 and ``values`` where input is 0.

    >>> import ember
    >>> ember.heaviside(ember.tensor([-1.0, 0.0, 2.0]), ember.tensor(0.5))
    tensor([0.0000, 0.5000, 1.0000])
    """
    return _EX.Heaviside.apply(input, values)


@op(inplace=True, out=True)
def ldexp(input: Tensor, other: Tensor) -> Tensor:
    """``input * 2 ** other`` (integer inputs give the default float dtype).

    >>> import ember
    >>> ember.ldexp(ember.tensor([1.0, 3.0]), ember.tensor([2, -1]))
    tensor([4.0000, 1.5000])
    """
    return _EX.Ldexp.apply(input, other)


def _float_power_dtype(*operands):
    complex_ = builtins.any(x.is_complex() if isinstance(x, Tensor)
                            else isinstance(x, builtins.complex) for x in operands)
    return dtypes.complex128 if complex_ else dtypes.float64


@op(out=True)
def float_power(input: Tensor | Number, exponent: Tensor | Number) -> Tensor:
    """``input ** exponent`` computed in float64 (complex128 for complex operands).

    >>> import ember
    >>> ember.float_power(ember.tensor([2, 3]), 2)
    tensor([4., 9.], dtype=ember.float64)
    """
    _EX.need_one_tensor(input, exponent, "float_power", "exponent")
    dt = _float_power_dtype(input, exponent)
    input, exponent = (x.to(dt) if isinstance(x, Tensor) else x for x in (input, exponent))
    return pow(input, exponent)


@_method
def float_power_(self: Tensor, exponent: Tensor | Number) -> Tensor:
    """``self ** exponent`` in place; self must be float64 (complex128 for complex operands).

    >>> import ember
    >>> ember.tensor([2.0, 3.0], dtype=ember.float64).float_power_(2)
    tensor([4., 9.], dtype=ember.float64)
    """
    dt = _float_power_dtype(self, exponent)
    if self.dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype.scalar_name} "
                           f"but the operation's result requires dtype {dt.scalar_name}")
    return self.pow_(exponent.to(dt) if isinstance(exponent, Tensor) else exponent)


def frexp(input: Tensor, *, out: tuple[Tensor, Tensor] | None = None
          ) -> tuple[Tensor, Tensor]:
    """Mantissas in [0.5, 1) (in magnitude) and int32 exponents: ``input = m * 2 ** e``.

    >>> import ember
    >>> m, e = ember.frexp(ember.tensor([8.0, -0.75]))
    >>> m, e
    (tensor([ 0.5000, -0.7500]), tensor([4, 0], dtype=ember.int32))
    """
    _EX.check_frexp(input)
    if out is not None and isinstance(out, (tuple, list)) and len(out) == 2 and \
            builtins.all(isinstance(o, Tensor) for o in out):
        if out[0].dtype is not input.dtype:  # PyTorch checks out's dtypes (no cast)
            raise RuntimeError(f"torch.frexp() expects mantissa to have dtype "
                               f"{input.dtype.cpp_name} but got {out[0].dtype.cpp_name}")
        if out[1].dtype is not dtypes.int32:
            raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                               f"{out[1].dtype.cpp_name}")
    result = _RT.frexp(_EX.FrexpMantissa.apply(input), _EX.FrexpExponent.apply(input))
    return result if out is None else _write_out(result, out, "frexp")


def _frexp_method(self: Tensor) -> tuple[Tensor, Tensor]:
    return frexp(self)


frexp = _declare_entry("frexp", frexp, _frexp_method, _frexp_method, False).function


@_method
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with exponential draws of rate ``lambd``.

    >>> import ember
    >>> bool((ember.empty(3).exponential_(2.0) > 0).all())
    True
    """
    return _SMP.exponential_(self, lambd, generator=generator)


@_method
def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill with the trials to the first success of Bernoulli(p) draws (1, 2, ...).

    >>> import ember
    >>> bool((ember.empty(3, dtype=ember.int64).geometric_(0.5) >= 1).all())
    True
    """
    return _SMP.geometric_(self, p, generator=generator)


@_method
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Any = None) -> Tensor:
    """Fill with Cauchy draws of location ``median`` and scale ``sigma``.

    >>> import ember
    >>> ember.empty(2, 3).cauchy_().shape
    ember.Size([2, 3])
    """
    return _SMP.cauchy_(self, median, sigma, generator=generator)


@_method
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Any = None) -> Tensor:
    """Fill with ``exp(N(mean, std))`` draws.

    >>> import ember
    >>> bool((ember.empty(3).log_normal_() > 0).all())
    True
    """
    return _SMP.log_normal_(self, mean, std, generator=generator)


@op(method=False)
def poisson(input: Tensor, generator: Any = None) -> Tensor:
    """Poisson counts with ``input`` as the rates (input's float dtype).

    >>> import ember
    >>> ember.poisson(ember.zeros(3))
    tensor([0., 0., 0.])
    """
    return _SMP.Poisson.apply(input, generator)


@op(method=False)
def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Successes in ``count`` trials of probability ``prob`` (count's float dtype).

    >>> import ember
    >>> ember.binomial(ember.tensor([5.0, 3.0]), ember.tensor([1.0, 0.0]))
    tensor([5., 0.])
    """
    return _SMP.Binomial.apply(count, prob, generator)


def _declare_factory(fn):
    """Declare a function PyTorch lists among its ignored functions (factories, ``normal``):
    only modes see it, its ``out=`` is its own."""
    entry = _dispatching(fn, name=fn.__name__, module="ember", modes_only=True)
    entry._public_module, entry._tf_modes_only = "ember", True
    return _declare_entry(fn.__name__, entry, None, None, False).function


def normal(mean: Tensor | float, std: Tensor | float = 1.0, size: Sequence[int] | None = None,
           *, generator: Any = None, out: Tensor | None = None, dtype: dtype | None = None,
           layout: Any = None, device: Any = None, pin_memory: bool = False,
           requires_grad: bool = False) -> Tensor:
    """Normal draws: ``normal(mean, std)`` with a tensor for either (or both, broadcast), or
    ``normal(mean, std, size)`` with numbers; the gradient to mean and std is zero, as
    PyTorch's.

    >>> import ember
    >>> ember.normal(ember.tensor([1.0, 2.0]), 0.0)
    tensor([1., 2.])
    """
    if out is not None and size is not None and dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    result = _SMP.normal(mean, std, size, generator=generator, dtype=dtype, layout=layout,
                         device=device, pin_memory=pin_memory, requires_grad=requires_grad)
    return result if out is None else _write_out(result, out, "normal")


def logspace(start: float | Tensor, end: float | Tensor, steps: int, base: float = 10.0, *,
             dtype: dtype | None = None, layout: Any = None, device: Any = None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """``steps`` values ``base ** e``, e evenly spaced from ``start`` to ``end``.

    >>> import ember
    >>> ember.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    return _SMP.logspace(start, end, steps, base, dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory, requires_grad=requires_grad)


logspace = _factory_with_out(logspace, "logspace")


def hann_window(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                layout: Any = None, device: Any = None, pin_memory: bool = False,
                requires_grad: bool = False) -> Tensor:
    """The Hann window ``0.5 - 0.5 cos(2 pi k / N)`` (N: the length, or length - 1 when
    not ``periodic``).

    >>> import ember
    >>> ember.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _SMP.hann(window_length, periodic, dtype, device, requires_grad)


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype: dtype | None = None, layout: Any = None,
                   device: Any = None, pin_memory: bool = False,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window ``alpha - beta cos(2 pi k / N)``.

    >>> import ember
    >>> ember.hamming_window(3, periodic=False, dtype=ember.float64)
    tensor([0.0800, 1.0000, 0.0800], dtype=ember.float64)
    """
    return _SMP.hamming(window_length, periodic, alpha, beta, dtype, device, requires_grad)


def blackman_window(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """The Blackman window ``0.42 - 0.5 cos(2 pi k / N) + 0.08 cos(4 pi k / N)``.

    >>> import ember
    >>> ember.blackman_window(3, periodic=False, dtype=ember.float64)
    tensor([0., 1., 0.], dtype=ember.float64)
    """
    return _SMP.blackman(window_length, periodic, dtype, device, requires_grad)


def bartlett_window(window_length: int, periodic: bool = True, *, dtype: dtype | None = None,
                    layout: Any = None, device: Any = None, pin_memory: bool = False,
                    requires_grad: bool = False) -> Tensor:
    """The triangular window ``1 - |2k / N - 1|``.

    >>> import ember
    >>> ember.bartlett_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _SMP.bartlett(window_length, periodic, dtype, device, requires_grad)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype: dtype | None = None, layout: Any = None, device: Any = None,
                  pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - (2k / N - 1)^2)) / I0(beta)``.

    >>> import ember
    >>> ember.kaiser_window(3, periodic=False, beta=0.0)
    tensor([1., 1., 1.])
    """
    return _SMP.kaiser(window_length, periodic, beta, dtype, device, requires_grad)


#: PyTorch's torch.<op>_ functions of this section's ops (``_inplace_function`` above)
_EXTRA_INPLACE_FUNCTIONS = ("frac_", "sinc_", "i0_", "ldexp_", "xlogy_", "gcd_", "lcm_")
for _name in _EXTRA_INPLACE_FUNCTIONS:
    _base = _DECLARED[_name[:-1]]
    globals()[_name] = op(_inplace_function(_name, _inspect.signature(
        _base.signature or _base.function)), name=_name, method=False)
for _name, _call in (("ldexp_", "ember.tensor([0.5]), ember.tensor([2])"),
                     ("xlogy_", "ember.tensor([0.5]), 1.0"),
                     ("gcd_", "ember.tensor([4]), ember.tensor([6])"),
                     ("lcm_", "ember.tensor([4]), ember.tensor([6])")):
    globals()[_name].__doc__ = (
        f"``input.{_name}(other)``: the in-place form as a function (input changed and "
        f"returned).\n\n    >>> import ember\n    >>> ember.{_name}({_call}).shape\n"
        f"    ember.Size([1])\n    ")
del _name, _base, _call

normal, logspace, hann_window, hamming_window, blackman_window, bartlett_window, \
    kaiser_window = (_declare_factory(_fn) for _fn in (
        normal, logspace, hann_window, hamming_window, blackman_window, bartlett_window,
        kaiser_window))

__all__ = [
    "copysign", "frac", "sinc", "i0", "signbit", "gcd", "lcm", "logaddexp2", "nextafter",
    "xlogy", "bitwise_left_shift", "bitwise_right_shift", "heaviside", "ldexp", "float_power",
    "frexp", "poisson", "binomial", "normal", "logspace", "hann_window", "hamming_window",
    "blackman_window", "bartlett_window", "kaiser_window", *_EXTRA_INPLACE_FUNCTIONS,
]
