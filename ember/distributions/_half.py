"""The shared part of HalfNormal and HalfCauchy: ``|X|`` for a distribution ``X``
centred at 0 with a ``scale`` (density doubled on [0, inf), cdf ``2 F - 1``)."""
from __future__ import annotations

import math

from .._creation import zeros_like
from .._functions import where
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform


class HalfOfCentred(TransformedDistribution):
    """``|X|``, ``X = base_family(0, scale)``; subclasses name the family and the moments."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    base_family = None  # the centred distribution's class (loc, scale)

    def __init__(self, scale, validate_args=None):
        base_dist = self.base_family(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(type(self), _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def _value(self, value):
        return value

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = self._value(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
