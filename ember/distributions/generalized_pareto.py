"""``GeneralizedPareto(loc, scale, concentration)``: the distribution of tails; Exponential
at concentration 0, Pareto above, bounded (Uniform at -1) below.

>>> import ember
>>> from ember.distributions import GeneralizedPareto
>>> d = GeneralizedPareto(ember.tensor([0.0]), ember.tensor([2.0]), ember.tensor([0.25]))
>>> d.mean, d.log_prob(ember.tensor([1.0]))
(tensor([2.6667]), tensor([-1.2821]))
"""
from __future__ import annotations

import math
from numbers import Number, Real

from .._creation import beside, ones_like, rand, tensor
from .._functions import broadcast_to, isclose, where
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


class GeneralizedPareto(Distribution):
    """Generalized Pareto with location ``loc``, ``scale`` > 0 and shape ``concentration``."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = Size()
        else:
            batch_shape = self.loc.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(GeneralizedPareto, _instance)
        batch_shape = Size(batch_shape)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        super(GeneralizedPareto, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _zero_and_safe_concentration(self):
        """Where the concentration is (close to) 0, and the concentration with 1 there (the
        limit formulas take over at those places)."""
        zero = isclose(self.concentration, beside(tensor(0.0), self.concentration))
        return zero, where(zero, ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(beside(rand(shape, dtype=self.loc.dtype), self.loc))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, safe = self._zero_and_safe_concentration()
        y = 1 / safe + ones_like(z)
        nonzero = where(y == 0, y, y * (safe * z).log1p())
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - where(zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        zero, safe = self._zero_and_safe_concentration()
        return where(zero, -z, -(safe * z).log1p() / safe)

    def log_cdf(self, value):
        return (-self.log_survival_function(value).exp()).log1p()

    def cdf(self, value):
        return self.log_cdf(value).exp()

    def icdf(self, value):
        zero, safe = self._zero_and_safe_concentration()
        log_u = (-value).log1p()
        nonzero = self.loc + self.scale / safe * (-safe * log_u).expm1()
        return where(zero, self.loc - self.scale * log_u, nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - safe), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe)), math.nan)

    def entropy(self):
        return broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(lower, upper)


__all__ = ["GeneralizedPareto"]
