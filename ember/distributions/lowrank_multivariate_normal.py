"""``LowRankMultivariateNormal(loc, cov_factor, cov_diag)``: the Gaussian whose covariance is
``cov_factor @ cov_factor.mT + diag(cov_diag)``, computed with the Woodbury identity and the
matrix determinant lemma (cost linear in the event size for a small rank).

>>> import ember
>>> from ember.distributions import LowRankMultivariateNormal
>>> d = LowRankMultivariateNormal(ember.zeros(2), ember.ones(2, 1), ember.ones(2))
>>> d.covariance_matrix
tensor([[2., 1.],
        [1., 2.]])
>>> d.log_prob(ember.zeros(2))
tensor(-2.3872)
"""
from __future__ import annotations

import math

from .._creation import beside, eye, randn
from .._functions import broadcast_tensors, diag_embed, matmul
from ..linalg import cholesky, solve_triangular
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import lazy_property


def _identity_like(n, like):
    return beside(eye(n, dtype=like.dtype), like)


def _batch_capacitance_tril(W, D):
    """The lower Cholesky factor of the capacitance ``I + W^T D^-1 W`` (m x m)."""
    m = W.shape[-1]
    capacitance = matmul(W.mT / D.unsqueeze(-2), W) + _identity_like(m, W)
    return cholesky(capacitance)


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """``log det(W W^T + D)`` by the matrix determinant lemma."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """``loc`` (``batch + (n,)``), ``cov_factor`` (``batch + (n, m)``) and positive
    ``cov_diag`` (``batch + (n,)``), their batch dimensions broadcast."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = Size(loc.shape[-1:])
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        loc_shape = tuple(batch_shape) + tuple(self.event_shape)
        new.loc = self.loc.expand(loc_shape)
        new.cov_diag = self.cov_diag.expand(loc_shape)
        new.cov_factor = self.cov_factor.expand(loc_shape + tuple(self.cov_factor.shape[-1:]))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        super(LowRankMultivariateNormal, new).__init__(batch_shape, self.event_shape,
                                                       validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape) * 2

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return ((self._unbroadcasted_cov_factor.pow(2).sum(-1) + self._unbroadcasted_cov_diag)
                .expand(tuple(self._batch_shape) + tuple(self._event_shape)))

    @lazy_property
    def scale_tril(self):
        # D^1/2 (I + D^-1/2 W W^T D^-1/2)^1/2: a lower Cholesky factor of the covariance
        n = self._event_shape[0]
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled = self._unbroadcasted_cov_factor / sqrt_d
        inner = matmul(scaled, scaled.mT) + _identity_like(n, scaled)
        return (sqrt_d * cholesky(inner)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        W = self._unbroadcasted_cov_factor
        return (matmul(W, W.mT) + diag_embed(self._unbroadcasted_cov_diag)).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - A^T A with A = L_C^-1 W^T D^-1
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        A = solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        precision = diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - matmul(A.mT, A)
        return precision.expand(self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        w_shape = tuple(shape[:-1]) + tuple(self.cov_factor.shape[-1:])
        eps_w = beside(randn(w_shape, dtype=self.loc.dtype), self.loc)
        eps_d = beside(randn(shape, dtype=self.loc.dtype), self.loc)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        mahalanobis = _batch_lowrank_mahalanobis(
            self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag, value - self.loc,
            self._capacitance_tril)
        n = self._event_shape[0]
        return -0.5 * (n * math.log(2 * math.pi) + self._log_det() + mahalanobis)

    def entropy(self):
        n = self._event_shape[0]
        h = 0.5 * (n * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h if len(self._batch_shape) == 0 else h.expand(self._batch_shape)


__all__ = ["LowRankMultivariateNormal"]
