"""Random samplers with PyTorch's signatures: ``normal`` (its four overloads), ``poisson``,
``binomial`` and the in-place fills ``exponential_``, ``geometric_``, ``cauchy_``,
``log_normal_``; and the sequences ``logspace`` and the window functions (Hann, Hamming,
Blackman, Bartlett, Kaiser).

Numbers are drawn on the host by ember's Generator (``random.rng``) and moved to the
data's array module, so they follow PyTorch's distributions, not its exact numbers. The
samplers' gradients are PyTorch's: zero for ``normal``'s mean and std and for ``poisson``'s
rate, none for ``binomial``. The sequences are composed of ember ops in float64 and cast.
"""
from __future__ import annotations

import math
import operator

import numpy as np  # host-side draws (the Generator's numbers) and dtype metadata

from .. import _creation
from .._tensor import Tensor
from .._typing import Any, dtype as _dtype
from ..autograd import grad_mode
from ..backend import dtypes, get_array_module, to_host, broadcast_shapes
from ..backend.meta import is_meta
from ..random import rng, check_inplace_draw
from . import elementwise as E
from .primitive import Primitive, unbroadcast
from .special_functions import I0


# ---- normal -------------------------------------------------------------------------------
class _NormalDraw(Primitive):
    """``mean + std * z`` for standard normal draws z: the gradient is zero for both (as
    PyTorch's: the draws are not reparameterized)."""

    @staticmethod
    def forward(ctx, mean, std, generator=None):
        ctx.shapes = tuple(t._data.shape if isinstance(t, Tensor) else None for t in (mean, std))
        xp = E._module(mean, std)
        shape = broadcast_shapes(E._shape(mean), E._shape(std))
        dt = (mean if isinstance(mean, Tensor) else std)._data.dtype  # mean's, as PyTorch
        if any(isinstance(t, Tensor) and is_meta(t._data) for t in (mean, std)):
            return xp.empty(shape, dt)
        if dt.kind == "c":  # parts of variance 1/2 each, as PyTorch's complex normal
            z = rng(generator).standard_normal(tuple(shape) + (2,)) * math.sqrt(0.5)
            z = xp.asarray(z.view(np.complex128).reshape(shape)).astype(dt, copy=False)
        else:
            z = xp.asarray(rng(generator).standard_normal(shape)).astype(dt, copy=False)
        m, s = (t._data if isinstance(t, Tensor) else t for t in (mean, std))
        return (m + s * z).astype(dt, copy=False)

    @staticmethod
    def backward(ctx, grad):
        return tuple(None if shape is None else unbroadcast(grad * 0, shape)
                     for shape in ctx.shapes) + (None,)


class NormalTensorFloat(_NormalDraw):
    _backward_name = "NormalBackward1"


class NormalFloatTensor(_NormalDraw):
    _backward_name = "NormalBackward2"


class NormalTensorTensor(_NormalDraw):
    _backward_name = "NormalBackward3"


def _check_float(t, complex_allowed=False):
    if complex_allowed and t.dtype.is_complex:
        return
    if t.dtype.is_complex:  # (a complex mean is drawn around; a std must be real)
        raise RuntimeError("normal expects standard deviation to be non-complex")
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{t.dtype.scalar_name}'")


def _check_std_number(std):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _check_std_tensor(std):
    if std._data.size and not is_meta(std._data) and bool((to_host(std._data) < 0).any()):
        raise RuntimeError("normal expects all elements of std >= 0.0")


_NORMAL_OVERLOADS = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n")


def _bad_normal(args):
    got = ", ".join(type(a).__name__ for a in args)
    return TypeError(f"normal() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_NORMAL_OVERLOADS}")


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, layout=None, device=None,
           pin_memory=False, requires_grad=False):
    """The body of ``ember.normal`` (``out=`` is handled by its declaration)."""
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if size is not None or not (mean_t or std_t):
        if mean_t or std_t or size is None:
            raise _bad_normal((mean, std) + (() if size is None else (size,)))
        _check_std_number(std)
        t = _creation.randn(*_sizes(size, (mean, std, size)), generator=generator, dtype=dtype,
                            device=device)
        if not is_meta(t._data):  # complex: the mean added to both parts, as PyTorch
            shift = mean * (1 + 1j) if t.dtype.is_complex else mean
            t._data = (t._data * std + shift).astype(t._data.dtype, copy=False)
        return t.requires_grad_(requires_grad) if requires_grad else t
    if dtype is not None or device is not None or requires_grad:
        raise _bad_normal((mean, std))
    if mean_t and std_t:
        _check_float(mean, complex_allowed=True)
        _check_float(std)
        E._check_broadcast(mean, std)
        _check_std_tensor(std)
        return NormalTensorTensor.apply(mean, std, generator)
    if mean_t:
        _check_float(mean, complex_allowed=True)
        _check_std_number(std)
        return NormalTensorFloat.apply(mean, std, generator)
    _check_float(std)
    _check_std_tensor(std)
    return NormalFloatTensor.apply(mean, std, generator)


def _sizes(size, args):
    if isinstance(size, Tensor) or not isinstance(size, (tuple, list)):
        raise _bad_normal(args)
    return tuple(operator.index(s) for s in size)


# ---- poisson and binomial --------------------------------------------------------------------
class Poisson(Primitive):
    """Poisson counts with the input as rates, in its dtype; zero gradient (PyTorch's)."""
    _backward_name = "PoissonBackward0"

    @staticmethod
    def forward(ctx, rates, generator=None):
        d = rates._data
        if not dtypes.is_float_np(d.dtype):
            raise NotImplementedError(f"\"poisson_cpu\" not implemented for "
                                      f"'{rates.dtype.scalar_name}'")
        xp = get_array_module(d)
        if is_meta(d):
            return xp.empty(d.shape, d.dtype)
        host = to_host(d).astype(np.float64)
        if not bool((host >= 0).all()):  # NaN fails too
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        # np.asarray: NumPy's generator returns a Python scalar for a 0-d rate
        return xp.asarray(np.asarray(rng(generator).poisson(host)).astype(d.dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad * 0, None


class Binomial(Primitive):
    """Binomial counts of ``count`` trials with success probability ``prob``; PyTorch
    defines no derivative (backward raises)."""
    _backward_name = "NotImplemented"

    @staticmethod
    def forward(ctx, count, prob, generator=None):
        if not isinstance(prob, Tensor):
            raise TypeError(f"binomial(): argument 'prob' (position 2) must be Tensor, not "
                            f"{type(prob).__name__}")
        if not count.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                             f"{count.dtype.scalar_name}")
        if prob.dtype is not count.dtype:
            raise RuntimeError(f"Found dtype {prob.dtype.scalar_name} but expected "
                               f"{count.dtype.scalar_name}")
        E._check_broadcast(count, prob)
        c, p = count._data, prob._data
        xp = get_array_module(c, p)
        shape = broadcast_shapes(c.shape, p.shape)
        if is_meta(c) or is_meta(p):
            return xp.empty(shape, c.dtype)
        n = np.broadcast_to(to_host(c).astype(np.float64), shape)
        q = np.clip(np.broadcast_to(to_host(p).astype(np.float64), shape), 0.0, 1.0)
        n = np.maximum(np.nan_to_num(n), 0).astype(np.int64)  # PyTorch: no trials, no success
        draws = np.asarray(rng(generator).binomial(n, np.nan_to_num(q)))  # 0-d: a scalar
        return xp.asarray(draws.astype(c.dtype))

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("derivative for aten::binomial is not implemented")


# ---- in-place fills -------------------------------------------------------------------------
def _fill_node(name, node):
    """A Primitive whose forward returns its second argument (the drawn values, a tensor of
    self's dtype): self's old values get a zero gradient, as PyTorch's fills give."""
    def forward(ctx, x, values):
        return values._data

    def backward(ctx, grad):
        return grad * 0, None
    return type(name, (Primitive,), {"forward": staticmethod(forward),
                                     "backward": staticmethod(backward),
                                     "_backward_name": node, "__module__": __name__})


ExponentialFill = _fill_node("ExponentialFill", "ExponentialBackward0")
GeometricFill = _fill_node("GeometricFill", "GeometricBackward0")
CauchyFill = _fill_node("CauchyFill", "CauchyBackward0")
LogNormalFill = _fill_node("LogNormalFill", "LogNormalBackward0")


#: PyTorch's kernels of the draws, which refuse float8
_FLOAT8_KERNELS = {"ExponentialFill": "exponential_cpu", "GeometricFill": "geometric_cpu",
                   "CauchyFill": "cauchy_cpu", "LogNormalFill": "log_normal_cpu"}


def _fill(self, node, draw):
    """Write ``draw(gen, shape)`` (float64 host numbers) into self through ``node``."""
    if self._data.size:  # (nothing drawn, no kernel run)
        dtypes.refuse_float8(self._data.dtype, _FLOAT8_KERNELS[node.__name__])
    check_inplace_draw(self)
    if self.is_meta:
        return self
    d = self._data
    values = draw(d.shape)
    if d.dtype.kind in "iu":
        values = values.astype(np.int64, copy=False)
    values = get_array_module(d).asarray(values).astype(d.dtype, copy=False)
    return self._inplace(node.apply, Tensor._make(values))


def _continuous(self, name, kind_error):
    """PyTorch's refusal to draw a continuous distribution into integers (with elements)."""
    if not self.dtype.is_floating_point and (self.numel() or name == "cauchy"):
        raise kind_error


def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill with exponential draws of rate ``lambd``."""
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    _continuous(self, "exponential", RuntimeError(
        f"Exponential distribution is a continuous probability distribution. dtype must be a "
        f"floating point but you specified {self.dtype.scalar_name}"))
    return _fill(self, ExponentialFill,
                 lambda shape: rng(generator).exponential(1.0 / lambd, shape))


def geometric_(self: Tensor, p: float, *, generator: Any = None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.dtype.is_complex:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for "
                                  f"'{self.dtype.scalar_name}'")
    return _fill(self, GeometricFill,
                 lambda shape: rng(generator).geometric(p, shape).astype(np.float64))


def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *,
            generator: Any = None) -> Tensor:
    """Fill with Cauchy draws of location ``median`` and scale ``sigma``."""
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    _continuous(self, "cauchy", RuntimeError(
        f"Cauchy distribution is a continuous probability distribution. dtype must be a "
        f"floating point but you specified {self.dtype.cpp_name}"))
    return _fill(self, CauchyFill,
                 lambda shape: median + sigma * rng(generator).standard_cauchy(shape))


def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *,
                generator: Any = None) -> Tensor:
    """Fill with ``exp(N(mean, std))`` draws."""
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    _continuous(self, "log_normal", NotImplementedError(
        f"\"log_normal_cpu\" not implemented for '{self.dtype.scalar_name}'"))
    return _fill(self, LogNormalFill,
                 lambda shape: np.exp(rng(generator).normal(mean, std, shape)))


# ---- logspace and windows -------------------------------------------------------------------
def _steps(name, value, arg="steps", position=3):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return int(value)


def logspace(start: float | Tensor, end: float | Tensor, steps: int, base: float = 10.0, *,
             dtype: _dtype | None = None, layout: Any = None, device: Any = None,
             pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    """The body of ``ember.logspace``."""
    steps = _steps("logspace", steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    dt = dtype or dtypes.get_default_dtype()
    if dt is dtypes.bool_ or dt in dtypes.FLOAT8:
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for '{dt.scalar_name}'")
    start, end = (v.item() if isinstance(v, Tensor) else v for v in (start, end))
    with grad_mode.no_grad():
        exponents = _creation.linspace(start, end, steps, dtype=dtypes.float64, device=device)
        values = E.RPow.apply(exponents, float(base)) if steps else exponents
        out = values.to(dt)
    return out.requires_grad_(requires_grad) if requires_grad else out


_OPTIONS = ("TensorOptions(dtype={}, device=cpu, layout=Strided (default), requires_grad={}, "
            "pinned_memory=false, memory_format=(nullopt))")


def _window(name, window_length, periodic, dtype, device, requires_grad, formula):
    """``formula(k, n)``, float64 tensors of positions k = 0..N-1 over the period n (N for a
    periodic window, N - 1 for a symmetric one), cast to ``dtype``."""
    n = _steps(name, window_length, "window_length", 1)
    dt = dtype or dtypes.get_default_dtype()
    if not dt.is_floating_point:
        flag = "true" if requires_grad else "false (default)"
        raise RuntimeError(f"{name} expects floating point dtypes, got: "
                           f"{_OPTIONS.format(dt.cpp_name, flag)}")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={n}")
    with grad_mode.no_grad():
        if n <= 1:
            out = _creation.ones(n, dtype=dt, device=device)
        else:
            k = _creation.arange(n, dtype=dtypes.float64, device=device)
            out = formula(k, float(n if periodic else n - 1)).to(dt)
    return out.requires_grad_(requires_grad) if requires_grad else out


def _cosine_sum(*coefficients):
    def formula(k, n):
        total = 0  # the highest harmonic first, as PyTorch sums (exact zeros at the ends)
        for i in range(len(coefficients) - 1, -1, -1):
            term = (k * (2 * math.pi * i / n)).cos() * coefficients[i] if i else \
                coefficients[0]
            total = total + term
        return total
    return formula


def hann(window_length, periodic, dtype, device, requires_grad):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, -0.5))


def hamming(window_length, periodic, alpha, beta, dtype, device, requires_grad):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, -beta))


def blackman(window_length, periodic, dtype, device, requires_grad):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, -0.5, 0.08))


def bartlett(window_length, periodic, dtype, device, requires_grad):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - (k * (2 / n) - 1).abs())


def kaiser(window_length, periodic, beta, dtype, device, requires_grad):
    def formula(k, n):
        ratio = k * (2 / n) - 1
        return I0.apply(((1 - ratio * ratio).clamp(min=0)).sqrt() * beta) / \
            I0.apply(_creation.tensor(float(beta), dtype=dtypes.float64, device=device))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   formula)


__all__ = ["normal", "Poisson", "Binomial", "exponential_", "geometric_", "cauchy_",
           "log_normal_", "logspace", "hann", "hamming", "blackman", "bartlett", "kaiser",
           "NormalTensorFloat", "NormalFloatTensor", "NormalTensorTensor", "ExponentialFill",
           "GeometricFill", "CauchyFill", "LogNormalFill"]
