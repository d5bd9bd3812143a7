"""``FisherSnedecor(df1, df2)``: the F distribution, the ratio of two scaled Chi2 variables.

>>> import ember
>>> from ember.distributions import FisherSnedecor
>>> d = FisherSnedecor(ember.tensor([4.0]), ember.tensor([6.0]))
>>> d.mean, d.log_prob(ember.tensor([1.0]))
(tensor([1.5000]), tensor([-0.8802]))
"""
from __future__ import annotations

import math
from numbers import Number

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all, finfo


class FisherSnedecor(Distribution):
    """F distribution with ``df1`` and ``df2`` (positive) degrees of freedom."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        if isinstance(df1, Number) and isinstance(df2, Number):
            batch_shape = Size()
        else:
            batch_shape = self.df1.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(FisherSnedecor, _instance)
        batch_shape = Size(batch_shape)
        new.df1 = self.df1.expand(batch_shape)
        new.df2 = self.df2.expand(batch_shape)
        new._gamma1 = self._gamma1.expand(batch_shape)
        new._gamma2 = self._gamma2.expand(batch_shape)
        super(FisherSnedecor, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        df2 = self.df2.masked_fill(self.df2 <= 2, math.nan)
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        return mode.masked_fill(self.df1 <= 2, math.nan)

    @property
    def variance(self):
        df2 = self.df2.masked_fill(self.df2 <= 4, math.nan)
        return (2 * df2.pow(2) * (self.df1 + df2 - 2)
                / (self.df1 * (df2 - 2).pow(2) * (df2 - 4)))

    def rsample(self, sample_shape=Size(())):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = float(finfo(x2.dtype).tiny)
        return (x1 / x2.clamp(min=tiny)).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        half1, half2 = self.df1 * 0.5, self.df2 * 0.5
        ratio = self.df1 / self.df2
        t1 = (half1 + half2).lgamma() - half1.lgamma() - half2.lgamma()
        t2 = half1 * ratio.log() + (half1 - 1) * value.log()
        t3 = (half1 + half2) * (ratio * value).log1p()
        return t1 + t2 - t3


__all__ = ["FisherSnedecor"]
