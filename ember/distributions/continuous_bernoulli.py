"""``ContinuousBernoulli(probs=None, logits=None, lims=(0.499, 0.501))``: the density on
[0, 1] proportional to ``probs^x (1 - probs)^(1 - x)`` (Loaiza-Ganem and Cunningham, 2019).

Near ``probs = 0.5`` the closed forms divide 0 by 0: inside ``lims`` Taylor expansions
around 0.5 take their place.

>>> import ember
>>> from ember.distributions import ContinuousBernoulli
>>> d = ContinuousBernoulli(probs=ember.tensor([0.2]))
>>> d.mean, d.log_prob(ember.tensor([0.5]))
(tensor([0.3880]), tensor([-0.0788]))
"""
from __future__ import annotations

import math
from numbers import Number

from .._creation import beside, ones_like, rand, zeros_like
from .._functions import where
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .exp_family import ExponentialFamily
from .utils import (broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits,
                    expand_probs_or_logits)


class ContinuousBernoulli(ExponentialFamily):
    """Given by exactly one of ``probs`` (in [0, 1], clamped eps away from the ends) or
    ``logits``."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            self.probs, = broadcast_all(probs)
            # checked before clamping (which would hide values outside [0, 1])
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
            self._param = self.probs
        else:
            is_scalar = isinstance(logits, Number)
            self.logits, = broadcast_all(logits)
            self._param = self.logits
        batch_shape = Size() if is_scalar else self._param.shape
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        batch_shape = Size(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        super(ContinuousBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _outside_unstable_region(self):
        return (self.probs <= self._lims[0]) | (self.probs > self._lims[1])

    def _cut_probs(self):
        """``probs`` with the unstable region replaced by a stable stand-in."""
        return where(self._outside_unstable_region(), self.probs, self._lims[0])

    def _cont_bern_log_norm(self):
        """The log normalizing constant as a function of ``probs``."""
        cut = self._cut_probs()
        below = where(cut <= 0.5, cut, 0.0)
        above = where(cut >= 0.5, cut, 1.0)
        log_norm = ((-cut).log1p() - cut.log()).abs().log() - where(
            cut <= 0.5, (-2.0 * below).log1p(), (2.0 * above - 1.0).log())
        x = (self.probs - 0.5).pow(2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / ((-cut).log1p() - cut.log())
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * x.pow(2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return self.variance.sqrt()

    @property
    def variance(self):
        cut = self._cut_probs()
        variances = (cut * (cut - 1.0) / (1.0 - 2.0 * cut).pow(2)
                     + 1.0 / ((-cut).log1p() - cut.log()).pow(2))
        x = (self.probs - 0.5).pow(2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.shape

    def sample(self, sample_shape=Size()):
        u = beside(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype), self.probs)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        u = beside(rand(self._extended_shape(sample_shape), dtype=self.probs.dtype), self.probs)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = (cut.pow(value) * (1.0 - cut).pow(1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        inside = where(self._outside_unstable_region(), cdfs, value)
        return where(value <= 0.0, zeros_like(value),
                     where(value >= 1.0, ones_like(value), inside))

    def icdf(self, value):
        cut = self._cut_probs()
        stable = (((-cut + value * (2.0 * cut - 1.0)).log1p() - (-cut).log1p())
                  / (cut.log() - (-cut).log1p()))
        return where(self._outside_unstable_region(), stable, value)

    def entropy(self):
        log_probs0 = (-self.probs).log1p()
        log_probs1 = self.probs.log()
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0


__all__ = ["ContinuousBernoulli"]
