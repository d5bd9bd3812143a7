"""``Wishart(df, covariance_matrix=None, precision_matrix=None, scale_tril=None)``: the
distribution of ``X^T X`` for ``df`` rows ``X_i ~ N(0, covariance_matrix)``, over positive
definite matrices; sampled by Bartlett's decomposition (reparameterized).

>>> import ember
>>> from ember.distributions import Wishart
>>> d = Wishart(ember.tensor(3.0), covariance_matrix=ember.eye(2))
>>> d.mean
tensor([[3., 0.],
        [0., 3.]])
>>> d.log_prob(ember.eye(2))
tensor(-3.5310)
"""
from __future__ import annotations

import math
import warnings
from numbers import Number

from .._creation import arange, beside, eye, randn, tensor
from .._functions import broadcast_shapes, cholesky_solve, diag_embed, digamma, einsum, \
    matmul, mvlgamma, where
from ..linalg import cholesky, slogdet
from .._tensor import Size
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import finfo, lazy_property

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function: ``sum_i digamma(x - i / 2)``, i < p."""
    if not bool(x.gt((p - 1) / 2).all()):
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = beside(arange(p, dtype=x.dtype), x).div(2)
    return digamma(x.unsqueeze(-1) - halves.expand(tuple(x.shape) + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=float(finfo(x.dtype).eps))


class Wishart(ExponentialFamily):
    """Wishart with ``df`` (> p - 1) degrees of freedom and exactly one of the p x p
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``."""
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [m for m in (covariance_matrix, precision_matrix, scale_tril) if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = given[0]
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, Number):
            batch_shape = Size(param.shape[:-2])
            self.df = beside(tensor(df, dtype=param.dtype), param)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if bool(self.df.le(p - 1).any()):
            shown = df.item() if not isinstance(df, Number) and df.dim() == 0 else df
            raise ValueError(f"Value of df={shown} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        matrix_shape = tuple(batch_shape) + (-1, -1)
        if scale_tril is not None:
            self.scale_tril = param.expand(matrix_shape)
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(matrix_shape)
        else:
            self.precision_matrix = param.expand(matrix_shape)
        if bool(self.df.lt(p).any()):
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._bartlett_chi2(batch_shape)

    def _bartlett_chi2(self, batch_shape):
        """Chi2(df - i) for the i-th diagonal entry of Bartlett's factor."""
        p = self._event_shape[-1]
        steps = beside(arange(p, dtype=self._unbroadcasted_scale_tril.dtype), self.df)
        return Chi2(df=self.df.unsqueeze(-1) - steps.expand(tuple(batch_shape) + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        cov_shape = tuple(batch_shape) + tuple(self.event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(cov_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(cov_shape))
        new._event_shape = self._event_shape
        new._dist_chi2 = new._bartlett_chi2(batch_shape)
        super(Wishart, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return tuple(self._batch_shape) + tuple(self._event_shape)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        factor = self._unbroadcasted_scale_tril
        return matmul(factor, factor.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        factor = self._unbroadcasted_scale_tril
        identity = beside(eye(self._event_shape[-1], dtype=factor.dtype), factor)
        return cholesky_solve(identity, factor).expand(self._matrix_shape())

    def _df_matrix(self):
        return self.df.view(tuple(self._batch_shape) + (1, 1))

    @property
    def mean(self):
        return self._df_matrix() * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor = factor.masked_fill(factor <= 0, math.nan)
        return factor.view(tuple(self._batch_shape) + (1, 1)) * self.covariance_matrix

    @property
    def variance(self):
        V = self.covariance_matrix
        diag_v = V.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix() * (V.pow(2) + einsum("...i,...j->...ij", diag_v, diag_v))

    def _bartlett_sampling(self, sample_shape=Size()):
        p = self._event_shape[-1]
        # A: sqrt(Chi2(df - i)) on the diagonal, standard normals below it
        diagonal = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt())
        shape = tuple(Size(sample_shape)) + tuple(self._batch_shape) + (p, p)
        below = beside(randn(shape, dtype=diagonal.dtype), diagonal).tril(-1)
        chol = matmul(self._unbroadcasted_scale_tril, diag_embed(diagonal) + below)
        return matmul(chol, chol.transpose(-2, -1))

    def _singular(self, sample):
        singular = ~self.support.check(sample)
        if self._batch_shape:
            singular = singular.amax(self._batch_dims)
        return singular

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Bartlett samples; those that came out singular (rounding, small ``df``) are drawn
        again up to ``max_try_correction`` (10) times."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # PyTorch warns whenever its check flags a sample, and it flags the regular ones
        # (its test is inverted), so the warning comes with almost every call
        if bool((~self._singular(sample)).any()):
            warnings.warn("Singular sample detected.", stacklevel=2)
        for _ in range(max_try_correction):
            singular = self._singular(sample)
            if not bool(singular.any()):
                break
            fresh = self._bartlett_sampling(sample_shape)
            mask = singular.view(tuple(singular.shape) + (1,) * (len(self._batch_shape) + 2))
            sample = where(mask, fresh, sample)
        return sample

    def _half_log_det_term(self):
        p = self._event_shape[-1]
        diag = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1)
        return p * _LOG_2 / 2 + diag.log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        trace = cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(dim=-1)
        return (-nu * self._half_log_det_term() - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * slogdet(value).logabsdet - trace / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        return ((p + 1) * self._half_log_det_term() + mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)


__all__ = ["Wishart"]
