"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None,
scale_tril=None)``: the Gaussian on vectors, given by exactly one of the three matrices.

>>> import ember
>>> from ember.distributions import MultivariateNormal
>>> d = MultivariateNormal(ember.zeros(2), covariance_matrix=ember.eye(2))
>>> d.log_prob(ember.zeros(2)), d.rsample((3,)).shape
(tensor(-1.8379), ember.Size([3, 2]))
"""
from __future__ import annotations

import math

from .._creation import beside, eye, randn
from .._functions import broadcast_shapes, flip, matmul
from ..linalg import cholesky, solve_triangular
from ..linalg._toplevel import cholesky_inverse
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import lazy_property


def _diagonal(matrices):
    """The diagonals of a batch of square matrices (differentiable)."""
    return (matrices * beside(eye(matrices.shape[-1], dtype=matrices.dtype), matrices)).sum(-1)


def _batch_mv(matrices, vectors):
    return matmul(matrices, vectors.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(scale_tril, x):
    """``x^T (L L^T)^-1 x`` over broadcast batch dimensions."""
    solved = solve_triangular(scale_tril, x.unsqueeze(-1), upper=False).squeeze(-1)
    return solved.pow(2).sum(-1)


def _half_log_det(scale_tril):
    return _diagonal(scale_tril).log().sum(-1)


def _precision_to_scale_tril(precision):
    """The lower Cholesky factor of ``precision^-1`` without inverting ``precision``: the
    factor of the flipped matrix, flipped back, is upper and inverts to the lower one."""
    flipped = cholesky(flip(precision, (-2, -1)))
    inverse_factor = flip(flipped, (-2, -1)).transpose(-2, -1)
    identity = beside(eye(precision.shape[-1], dtype=precision.dtype), precision)
    return solve_triangular(inverse_factor, identity, upper=False)


class MultivariateNormal(Distribution):
    """Gaussian with mean vector ``loc`` and one of a covariance matrix, a precision matrix
    or the lower Cholesky factor of the covariance (``scale_tril``); batch dimensions of
    ``loc`` and the matrix broadcast."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        name, matrix = next((n, m) for n, m in (("scale_tril", scale_tril),
                                                 ("covariance_matrix", covariance_matrix),
                                                 ("precision_matrix", precision_matrix))
                            if m is not None)
        if matrix.dim() < 2:
            label = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{label} must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        matrix_shape = loc_shape + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        super(MultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_scale_tril
        return matmul(factor, factor.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril.pow(2).sum(-1)
                .expand(tuple(self._batch_shape) + tuple(self._event_shape)))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = beside(randn(shape, dtype=self.loc.dtype), self.loc)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        mahalanobis = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        n = self._event_shape[0]
        return (-0.5 * (n * math.log(2 * math.pi) + mahalanobis)
                - _half_log_det(self._unbroadcasted_scale_tril))

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * n * (1.0 + math.log(2 * math.pi)) + _half_log_det(
            self._unbroadcasted_scale_tril)
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)


__all__ = ["MultivariateNormal"]
