"""``StudentT(df, loc=0.0, scale=1.0)``: Student's t with ``df`` degrees of freedom, shifted
by ``loc`` and scaled by ``scale``.

>>> import ember
>>> from ember.distributions import StudentT
>>> d = StudentT(ember.tensor([3.0]))
>>> d.log_prob(ember.tensor([0.0])), d.variance
(tensor([-1.0009]), tensor([3.]))
"""
from __future__ import annotations

import math

from .._creation import beside, randn
from .._functions import digamma, lgamma, rsqrt, where
from .._tensor import Size
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import broadcast_all


class StudentT(Distribution):
    """Student's t: ``loc + scale * X / sqrt(Z / df)``, X standard normal, Z Chi2(df)."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        batch_shape = Size(batch_shape)
        new.df = self.df.expand(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new._chi2 = self._chi2.expand(batch_shape)
        super(StudentT, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc.masked_fill(self.df <= 1, math.nan)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        finite = self.df > 2
        # the formula only where it holds, so no inf/nan reaches the other gradients
        df = where(finite, self.df, 3.0)
        scale = where(finite, self.scale, 1.0)
        var = where(finite, scale.pow(2) * df / (df - 2), self.df)
        var = var.masked_fill((self.df <= 2) & (self.df > 1), math.inf)
        return var.masked_fill(self.df <= 1, math.nan)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = beside(randn(shape, dtype=self.df.dtype), self.df)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        df = self.df
        log_z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                 + lgamma(0.5 * df) - lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * (y ** 2.0 / df).log1p() - log_z

    def entropy(self):
        df = self.df
        log_beta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (self.scale.log()
                + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
                + 0.5 * df.log() + log_beta)


__all__ = ["StudentT"]
