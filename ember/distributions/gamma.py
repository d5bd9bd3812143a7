"""``Gamma(concentration, rate)``: density ``rate^a x^(a-1) e^(-rate x) / Gamma(a)``.

>>> import ember
>>> from ember.distributions import Gamma
>>> d = Gamma(ember.tensor([2.0]), ember.tensor([4.0]))
>>> d.mean, d.log_prob(ember.tensor([0.5]))
(tensor([0.5000]), tensor([0.0794]))
"""
from __future__ import annotations

from numbers import Number

from .._creation import as_tensor
from .._functions import digamma, igamma, lgamma, log
from .._ops.special import standard_gamma
from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, finfo, xlogy


def _clamp_tiny(value):
    """``value`` moved up to the smallest normal number where it underflowed to zero,
    without changing its gradient."""
    tiny = float(finfo(value.dtype).tiny)
    detached = value.detach()
    return value + (detached.clamp(min=tiny) - detached)


class Gamma(ExponentialFamily):
    """Gamma with shape ``concentration`` and inverse scale ``rate`` (broadcast together)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        if isinstance(concentration, Number) and isinstance(rate, Number):
            batch_shape = Size()
        else:
            batch_shape = self.concentration.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        return _clamp_tiny(value)

    def log_prob(self, value):
        value = as_tensor(value, dtype=self.rate.dtype)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)

    def entropy(self):
        c = self.concentration
        return c - log(self.rate) + lgamma(c) + (1.0 - c) * digamma(c)


__all__ = ["Gamma"]
