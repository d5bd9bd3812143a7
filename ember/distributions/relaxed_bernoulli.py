"""``RelaxedBernoulli(temperature, probs=None, logits=None)``: the concrete (Gumbel-softmax)
relaxation of a Bernoulli on (0, 1), reparameterizable; ``LogitRelaxedBernoulli`` is its
logit.

>>> import ember
>>> from ember.distributions import RelaxedBernoulli
>>> d = RelaxedBernoulli(ember.tensor(0.5), probs=ember.tensor([0.3]))
>>> d.log_prob(ember.tensor([0.2]))
tensor([-0.2528])
"""
from __future__ import annotations

from numbers import Number

from .._creation import beside, rand
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import (broadcast_all, clamp_probs, expand_probs_or_logits, BinaryProbsLogits)


class LogitRelaxedBernoulli(BinaryProbsLogits, Distribution):
    """The logit of a RelaxedBernoulli: ``(logit(u) + logits) / temperature`` for a uniform
    ``u``."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if is_scalar else self._param.shape
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        expand_probs_or_logits(self, new, batch_shape)
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(beside(rand(shape, dtype=probs.dtype), probs))
        return (uniforms.log() - (-uniforms).log1p() + probs.log()
                - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """The sigmoid of a LogitRelaxedBernoulli: values in (0, 1) that approach a Bernoulli's
    as ``temperature`` goes to 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs


__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]
