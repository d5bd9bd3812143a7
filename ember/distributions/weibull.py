"""``Weibull(scale, concentration)``: ``scale * E^(1/concentration)`` for a unit
Exponential ``E``.

>>> import ember
>>> from ember.distributions import Weibull
>>> d = Weibull(ember.tensor([1.0]), ember.tensor([2.0]))
>>> d.log_prob(ember.tensor([1.0])), d.mean
(tensor([-0.3069]), tensor([0.8862]))
"""
from __future__ import annotations

from .._creation import ones_like
from .._functions import lgamma
from . import constraints
from .exponential import Exponential
from .gumbel import EULER_CONSTANT
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all


class Weibull(TransformedDistribution):
    """Weibull of scale ``scale`` and shape ``concentration``."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        base_dist = Exponential(ones_like(self.scale), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration_reciprocal),
                      AffineTransform(loc=0, scale=self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        base_dist = self.base_dist.expand(batch_shape)
        transforms = [PowerTransform(exponent=new.concentration_reciprocal),
                      AffineTransform(loc=0, scale=new.scale)]
        super(Weibull, new).__init__(base_dist, transforms, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * lgamma(1 + self.concentration_reciprocal).exp()

    @property
    def mode(self):
        c = self.concentration
        return self.scale * ((c - 1) / c) ** c.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (lgamma(1 + 2 * r).exp() - (2 * lgamma(1 + r)).exp())

    def entropy(self):
        r = self.concentration_reciprocal
        return EULER_CONSTANT * (1 - r) + (self.scale * r).log() + 1


__all__ = ["Weibull"]
