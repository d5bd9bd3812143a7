"""``NegativeBinomial(total_count, probs=None, logits=None)``: successes of Bernoulli(``probs``)
trials before ``total_count`` failures.

>>> import ember
>>> from ember.distributions import NegativeBinomial
>>> d = NegativeBinomial(3.0, probs=ember.tensor([0.5]))
>>> d.mean, d.log_prob(ember.tensor([2.0]))
(tensor([3.]), tensor([-1.6740]))
"""
from __future__ import annotations

from .._functions import lgamma, poisson, sigmoid
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import logsigmoid
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import (broadcast_all, lazy_property, expand_probs_or_logits, BinaryProbsLogits)


class NegativeBinomial(BinaryProbsLogits, Distribution):
    """``total_count`` (> 0, real) failures and the success ``probs`` in [0, 1) (or
    ``logits``)."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self._param = self.probs
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self._param = self.logits
        self.total_count = self.total_count.type_as(self._param)
        super().__init__(self._param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(NegativeBinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        super(NegativeBinomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # a Poisson whose rate is Gamma(total_count, odds) distributed is NegativeBinomial
        return Gamma(concentration=self.total_count, rate=(-self.logits).exp(),
                     validate_args=False)

    def sample(self, sample_shape=Size()):
        with no_grad():
            return poisson(self._gamma.sample(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_unnormalized = n * logsigmoid(-self.logits) + value * logsigmoid(self.logits)
        log_normalization = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        # total_count == 0 puts all mass on 0: log P(0) = 0 there
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization


__all__ = ["NegativeBinomial"]
