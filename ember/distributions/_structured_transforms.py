"""Transforms over whole vectors and matrices (softmax, stick breaking, Cholesky factors of
covariance and correlation matrices), transforms applied slice by slice (``CatTransform``,
``StackTransform``) and a distribution's CDF as a transform.

>>> import ember
>>> from ember.distributions.transforms import StickBreakingTransform
>>> t = StickBreakingTransform()
>>> y = t(ember.tensor([0.0, 0.0], dtype=ember.float64))
>>> y, t.inv(y).abs().max() < 1e-12
(tensor([0.3333, 0.3333, 0.3333], dtype=ember.float64), tensor(True))
"""
from __future__ import annotations

import math

from .._creation import beside, eye
from .._functions import cat, sigmoid, stack
from ..linalg import cholesky
from ..nn.functional import logsigmoid, pad, softplus
from . import constraints
from ._transform_base import Transform
from .independent import _sum_rightmost
from .utils import finfo, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix


def _clipped_sigmoid(x):
    """sigmoid(x) kept strictly inside (0, 1), so its logit stays finite."""
    info = finfo(x.dtype)
    return sigmoid(x).clamp(min=float(info.tiny), max=1.0 - float(info.eps))


class SoftmaxTransform(Transform):
    """Unconstrained vectors to the simplex by softmax (not bijective: shifts are lost)."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape


def _stick_offset(x):
    """log(K - k) for k = 1..K-1 (K = size + 1): centres the zero vector on the uniform
    point of the simplex."""
    k = x.shape[-1]
    return (k + 1 - x.new_ones(k).cumsum(-1)).log()


class StickBreakingTransform(Transform):
    """Vectors of size K-1 to the K-simplex by stick breaking (bijective)."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offset(x))
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = (y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)).log()
        remaining = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - remaining.log() + offset

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offset(x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices to lower-triangular ones of positive diagonal (the strictly lower
    part kept, the diagonal exponentiated)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices to positive definite ones: ``L @ L.mT`` of their lower-Cholesky
    transform ``L``."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of D(D-1)/2 reals to Cholesky factors of D x D correlation matrices (tanh to
    (-1, 1), then stick breaking along each row so rows have unit norm)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = x.tanh()
        eps = float(finfo(x.dtype).eps)
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + beside(eye(r.shape[-1], dtype=r.dtype), r)
        return r * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = (tril_matrix_to_vec(y, diag=-1)
             / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt())
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)


def _check_dim(t, dim, size, what, expected, name="tensor"):
    if not -t.dim() <= dim < t.dim():
        raise AssertionError(f"dim {dim} out of range for {name} with {t.dim()} dimensions")
    if t.shape[dim] != size:
        raise AssertionError(f"{what}.size({dim}) = {t.shape[dim]} must equal {expected}")


class CatTransform(Transform):
    """Transforms ``tseq`` applied to consecutive slices (of ``lengths``) along ``dim``."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, z):
        start = 0
        for length in self.lengths:
            yield z.narrow(self.dim, start, length)
            start += length

    def _call(self, x):
        _check_dim(x, self.dim, self.length, "x", f"length {self.length}")
        return cat([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        _check_dim(y, self.dim, self.length, "y", f"length {self.length}")
        return cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_dim(x, self.dim, self.length, "x", f"length {self.length}", "x")
        _check_dim(y, self.dim, self.length, "y", f"length {self.length}", "y")
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        # when dim is an event dimension the slices' terms add up, else they line up
        return cat(terms, dim=dim) if dim < 0 else sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """Transforms ``tseq`` applied one each to the slices of ``dim``."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.shape[self.dim])]

    def _check(self, t, what, name="tensor"):
        n = len(self.transforms)
        _check_dim(t, self.dim, n, what, f"len(transforms) {n}", name)

    def _call(self, x):
        self._check(x, "x")
        return stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "y")
        return stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        terms = [t.log_abs_det_jacobian(xs, ys)
                 for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)]
        return stack(terms, dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's CDF, from its support to the unit interval (its log-density is the
    log-det)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)


__all__ = ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "SoftmaxTransform",
           "StackTransform", "StickBreakingTransform"]
