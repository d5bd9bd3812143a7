"""``RelaxedOneHotCategorical(temperature, probs=None, logits=None)``: the Gumbel-softmax
relaxation of a one-hot Categorical on the simplex, reparameterizable;
``ExpRelaxedCategorical`` is its logarithm.

>>> import ember
>>> from ember.distributions import RelaxedOneHotCategorical
>>> d = RelaxedOneHotCategorical(ember.tensor(0.5), probs=ember.tensor([0.2, 0.3, 0.5]))
>>> d.log_prob(ember.tensor([0.1, 0.2, 0.7]))
tensor(0.2764)
"""
from __future__ import annotations

from .._creation import beside, full_like, rand
from .._tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical: log-softmax of ``(logits + Gumbel noise) /
    temperature``."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector  # the values lie on a submanifold of it
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        batch_shape = self._categorical.batch_shape
        event_shape = self._categorical.param_shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ExpRelaxedCategorical, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        new._categorical = self._categorical.expand(batch_shape)
        super(ExpRelaxedCategorical, new).__init__(batch_shape, self.event_shape,
                                                   validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        uniforms = clamp_probs(beside(rand(shape, dtype=logits.dtype), logits))
        gumbels = -((-(uniforms.log())).log())
        scores = (logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (full_like(self.temperature, float(k)).lgamma()
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The exp of an ExpRelaxedCategorical: points of the simplex that approach one-hot
    vectors as ``temperature`` goes to 0."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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


__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]
