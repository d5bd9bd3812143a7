"""``Laplace(loc, scale)``: density ``exp(-|x - loc| / scale) / (2 scale)``.

>>> import ember
>>> from ember.distributions import Laplace
>>> d = Laplace(ember.tensor([0.0]), ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([0.0])), d.variance
(tensor([-1.6931]), tensor([0.5000]), tensor([2.]))
"""
from __future__ import annotations

from numbers import Number

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, finfo


class Laplace(Distribution):
    """Laplace (double exponential) of location ``loc`` and scale ``scale``."""
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
        new = self._get_checked_instance(Laplace, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        super(Laplace, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        # u in (-1, 1): its sign picks the side, |u| the distance by inverse CDF
        u = self.loc.new_empty(shape).uniform_(float(finfo(self.loc.dtype).eps) - 1, 1)
        return self.loc - self.scale * u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        return 0.5 - 0.5 * diff.sign() * (-diff.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()


__all__ = ["Laplace"]
