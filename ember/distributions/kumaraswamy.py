"""``Kumaraswamy(concentration1, concentration0)``: density ``a b x^(a-1) (1 - x^a)^(b-1)``
on (0, 1), ``(1 - U^(1/b))^(1/a)`` for a uniform ``U``.

>>> import ember
>>> from ember.distributions import Kumaraswamy
>>> d = Kumaraswamy(ember.tensor([2.0]), ember.tensor([3.0]))
>>> d.log_prob(ember.tensor([0.5])), d.mean
(tensor([0.5232]), tensor([0.4571]))
"""
from __future__ import annotations

import math

from .._creation import full_like
from .._functions import digamma, lgamma
from . import constraints
from .gumbel import EULER_CONSTANT
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all


def _moments(a, b, n):
    """E[X^n] = b B(1 + n/a, b)."""
    arg1 = 1 + n / a
    return b * (lgamma(arg1) + lgamma(b) - lgamma(arg1 + b)).exp()


class Kumaraswamy(TransformedDistribution):
    """Kumaraswamy of shapes ``concentration1`` (a) and ``concentration0`` (b)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base_dist = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                            validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        return log_mode.masked_fill((b < 1) | (a < 1), math.nan).exp()

    @property
    def variance(self):
        return _moments(self.concentration1, self.concentration0, 2) - self.mean.pow(2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + EULER_CONSTANT
        return t0 + t1 * h0 - self.concentration1.log() - self.concentration0.log()


__all__ = ["Kumaraswamy"]
