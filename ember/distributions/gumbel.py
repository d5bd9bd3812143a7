"""``Gumbel(loc, scale)``: density ``exp(-(z + exp(-z))) / scale`` with
``z = (x - loc) / scale``; a Uniform pushed through ``loc - scale * log(-log(u))``.

>>> import ember
>>> from ember.distributions import Gumbel
>>> d = Gumbel(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([0.0])), d.mean
(tensor([-1.]), tensor([0.5772]))
"""
from __future__ import annotations

import math
from numbers import Number

from .._creation import full_like, ones_like
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, finfo
from .utils import euler_constant as EULER_CONSTANT


class Gumbel(TransformedDistribution):
    """Gumbel (type-I extreme value) of location ``loc`` and scale ``scale``."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        tiny, top = float(info.tiny), 1 - float(info.eps)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(tiny, top, validate_args=validate_args)
        else:
            base_dist = Uniform(full_like(self.loc, tiny), full_like(self.loc, top),
                                validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * EULER_CONSTANT

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + EULER_CONSTANT)


__all__ = ["Gumbel"]
