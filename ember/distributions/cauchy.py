"""``Cauchy(loc, scale)``: density ``1 / (pi scale (1 + ((x - loc) / scale)^2))``; no mean
(NaN) and infinite variance.

>>> import ember
>>> from ember.distributions import Cauchy
>>> d = Cauchy(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([1.0])), d.mean
(tensor([-1.8379]), tensor([0.7500]), tensor([nan]))
"""
from __future__ import annotations

import math
from numbers import Number

from .._creation import beside, full
from .._functions import atan
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class Cauchy(Distribution):
    """Cauchy (Lorentz) of median ``loc`` and half width ``scale``."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        if isinstance(loc, Number) and isinstance(scale, Number):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Cauchy, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Cauchy, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return beside(full(self._extended_shape(), math.nan, dtype=self.loc.dtype), self.loc)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return beside(full(self._extended_shape(), math.inf, dtype=self.loc.dtype), self.loc)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.loc + self.loc.new_empty(shape).cauchy_() * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()


__all__ = ["Cauchy"]
