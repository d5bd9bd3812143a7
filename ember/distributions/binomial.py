"""``Binomial(total_count=1, probs=None, logits=None)``: successes among ``total_count``
independent Bernoulli(``probs``) trials.

>>> import ember
>>> from ember.distributions import Binomial
>>> d = Binomial(10, probs=ember.tensor([0.5]))
>>> d.mean, d.log_prob(ember.tensor([5.0]))
(tensor([5.]), tensor([-1.4020]))
"""
from __future__ import annotations

from .._creation import arange, beside
from .._functions import binomial, lgamma
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .distribution import Distribution
from .utils import (broadcast_all, expand_probs_or_logits, BinaryProbsLogits)


def _clamp_by_zero(x):
    """``max(x, 0)`` whose gradient at 0 is 1/2 (the mean of the two one-sided slopes)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(BinaryProbsLogits, Distribution):
    """``total_count`` (non-negative integers, broadcast with the parameter) and exactly one
    of ``probs`` or ``logits``."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        new = self._get_checked_instance(Binomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count.expand(batch_shape)
        expand_probs_or_logits(self, new, batch_shape)
        super(Binomial, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        # log(1 + e^logits) * n, written to stay finite for large |logits|
        log_normalizer = (n * _clamp_by_zero(logits) + n * (-logits.abs()).exp().log1p()
                          - lgamma(n + 1))
        return value * logits - lgamma(value + 1) - lgamma(n - value + 1) - log_normalizer

    def _homogeneous_count(self, what):
        count = int(self.total_count.max())
        if not bool(self.total_count.min() == count):
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(log_prob.exp() * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        values = beside(arange(1 + count, dtype=self._param.dtype), self._param)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


__all__ = ["Binomial"]
