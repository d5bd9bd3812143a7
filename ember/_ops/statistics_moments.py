"""Covariance and correlation (``cov``, ``corrcoef``), integration by the trapezoidal rule
(``trapezoid``/``trapz``, ``cumulative_trapezoid``) and ``renorm``, composed from
differentiable ember ops, so their gradients (and double backward, forward-mode AD, vmap)
are those ops' own. Each follows PyTorch's order of checks and its messages.

>>> import ember
>>> ember.trapezoid(ember.tensor([1., 2., 4.]))
tensor(4.5000)
"""
from __future__ import annotations

import warnings

from .._tensor import Tensor, _wrap_dim
from .._typing import Number
from ..backend import dtypes
from ..backend.meta import is_meta


# ---- covariance and correlation -------------------------------------------------------------
def _check_weights(name, w, n, integral):
    if w.dim() > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.dim()} dimensions")
    if integral and (w.dtype.is_floating_point or w.dtype.is_complex):
        raise RuntimeError(f"cov(): expected {name} to have integral dtype but got {name} with "
                           f"{w.dtype.scalar_name} dtype")
    if not integral and not w.dtype.is_floating_point:
        raise RuntimeError(f"cov(): expected {name} to have floating point dtype but got "
                           f"{name} with {w.dtype.scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not is_meta(w._data) and bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,
        aweights: Tensor | None = None) -> Tensor:
    """Covariance matrix of the variables in ``input``'s rows (observations in columns),
    with frequency (``fweights``) and importance (``aweights``) weights.

    >>> import ember
    >>> ember.cov(ember.tensor([[0., 1., 2.], [2., 1., 0.5]]))
    tensor([[ 1.0000, -0.7500],
            [-0.7500,  0.5833]])
    """
    if input.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.dim()} dimensions")
    if input.dtype is dtypes.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    if isinstance(correction, bool) or not isinstance(correction, int):
        raise TypeError(f"cov(): argument 'correction' must be int, not "
                        f"{type(correction).__name__}")
    x = input if input.dim() == 2 else input.reshape(1, -1)
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        x = x.to(dtypes.get_default_dtype())
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights("fweights", fweights, n, True)
        w = fweights
    if aweights is not None:
        _check_weights("aweights", aweights, n, False)
        w = aweights if w is None else w * aweights
    if w is None:  # the count is a number: nothing data-dependent (vmap runs it batched)
        avg = x.mean(1)
        norm = n - correction
        nonpositive = norm <= 0
    else:
        w_sum = w.sum()
        avg = (x * w).sum(1) / w_sum
        if aweights is not None and correction != 0:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
        else:
            norm = w_sum - correction
        nonpositive = not is_meta(norm._data) and bool(norm <= 0)
    if nonpositive:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=3)
        norm = norm * 0
    centered = x - avg.unsqueeze(1)
    other = centered if w is None else centered * w
    c = centered.matmul(other.t().conj() if x.dtype.is_complex else other.t())
    return (c / norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the variables in ``input``'s rows, clipped to
    [-1, 1].

    >>> import ember
    >>> ember.corrcoef(ember.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    c = cov(input)
    if c.dim() == 0:
        return c / c  # one variable: 1 (NaN when its variance is 0)
    std = c.diagonal()
    std = (std.real if std.dtype.is_complex else std).sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    if c.dtype.is_complex:
        raise NotImplementedError("ember's corrcoef takes real tensors only")
    return c.clip(-1, 1)


# ---- the trapezoidal rule -------------------------------------------------------------------
def _overloads_error(name, y, x, dx, dim, dx_type):
    given = [type(y).__name__ if not isinstance(y, Tensor) else "Tensor"]
    if x is not None:
        given.append("Tensor" if isinstance(x, Tensor) else type(x).__name__)
    if dx is not None:
        given.append(f"dx={'Tensor' if isinstance(dx, Tensor) else type(dx).__name__}")
    if dim != -1:
        given.append(f"dim={type(dim).__name__}")
    tensor_form = " * (Tensor y, Tensor x, *, int dim = -1)\n"
    dx_form = f" * (Tensor y, *, {dx_type} dx = 1, int dim = -1)\n"
    forms = tensor_form + dx_form if name != "trapz" else dx_form + tensor_form
    return TypeError(f"{name}() received an invalid combination of arguments - got "
                     f"({', '.join(given)}), but expected one of:\n{forms}")


def _trapezoid_args(name, y, x, dx, dim, dx_type="Number"):
    if not isinstance(y, Tensor) or (x is not None and (not isinstance(x, Tensor)
                                                        or dx is not None)):
        raise _overloads_error(name, y, x, dx, dim, dx_type)
    shown = "trapezoid" if name == "trapz" else name
    if y.dtype is dtypes.bool_ or (x is not None and x.dtype is dtypes.bool_):
        which = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"{shown}: received a bool input for {which}, but bool is not "
                           f"supported")
    if y.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, y.dim())
    if x is not None and x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{shown}: There must be one `x` value for each sample point")
        shape = [1] * y.dim()
        shape[dim] = x.shape[0]
        x = x.reshape(shape)
    return dim, x, 1 if dx is None else dx


def _pair_sums(y, dim):
    n = y.shape[dim]
    return y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)


def _spacing(x, dim):
    n = x.shape[dim]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


def _empty_dim_zeros(y, dim):
    shape = [s for i, s in enumerate(y.shape) if i != dim]
    dt = y.dtype if y.dtype.is_floating_point or y.dtype.is_complex else \
        dtypes.get_default_dtype()
    return y.new_zeros(shape, dtype=dt)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Number | Tensor | None = None,
              dim: int = -1) -> Tensor:
    """Integral of ``y`` along ``dim`` by the trapezoidal rule, at sample points ``x``
    (a 1-D tensor along ``dim`` or one broadcasting with ``y``) or spaced ``dx`` apart.

    >>> import ember
    >>> ember.trapezoid(ember.tensor([1., 2., 4.]), ember.tensor([0., 1., 3.]))
    tensor(7.5000)
    """
    dim, x, dx = _trapezoid_args("trapezoid", y, x, dx, dim)
    return _trapezoid(y, x, dx, dim)


def _trapezoid(y, x, dx, dim):
    if y.shape[dim] == 0:
        return _empty_dim_zeros(y, dim)
    if x is not None:
        return (_pair_sums(y, dim) * _spacing(x, dim)).sum(dim) / 2.0
    n = y.shape[dim]
    ends = y.narrow(dim, 0, 1).squeeze(dim) + y.narrow(dim, n - 1, 1).squeeze(dim)
    return (y.sum(dim) - ends * 0.5) * dx


def trapz(y: Tensor, x: Tensor | None = None, *, dx: float | None = None,
          dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name (``dx`` a float).

    >>> import ember
    >>> ember.trapz(ember.tensor([1., 2., 4.]), dx=2.)
    tensor(9.)
    """
    dim, x, dx = _trapezoid_args("trapz", y, x, dx, dim, "float")
    return _trapezoid(y, x, dx, dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Number | None = None,
                         dim: int = -1) -> Tensor:
    """Running integral of ``y`` along ``dim`` by the trapezoidal rule: one fewer element
    than ``y`` along it.

    >>> import ember
    >>> ember.cumulative_trapezoid(ember.tensor([1., 2., 4.]))
    tensor([1.5000, 4.5000])
    """
    dim, x, dx = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if y.shape[dim] == 0:
        return y.narrow(dim, 0, 0) * 1.0
    if x is not None:
        return (_pair_sums(y, dim) * _spacing(x, dim)).cumsum(dim) / 2.0
    return (dx / 2.0 * _pair_sums(y, dim)).cumsum(dim)


# ---- renorm ---------------------------------------------------------------------------------
def _cpp_double(v):
    v = float(v)
    return str(int(v)) if v.is_integer() else f"{v:g}"


def renorm(input: Tensor, p: Number, dim: int, maxnorm: Number) -> Tensor:
    """``input`` with each slice along ``dim`` whose ``p``-norm exceeds ``maxnorm`` scaled
    down to that norm (by ``maxnorm / (norm + 1e-7)``).

    >>> import ember
    >>> ember.renorm(ember.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {_cpp_double(maxnorm)}")
    if input.dim() <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} "
                           f"dimensions")
    dim = _wrap_dim(dim, input.dim())
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {input.dtype.scalar_name}")
    others = tuple(i for i in range(input.dim()) if i != dim)
    low = input.dtype in (dtypes.float16, dtypes.bfloat16)  # the factor in float32, rounded
    norm = (input.float() if low else input).norm(p, others, True)
    factor = (maxnorm / (norm + 1e-7)).where(norm > maxnorm, 1.0)  # NaN norms: 1
    return input * (factor.to(input.dtype) if low else factor)
