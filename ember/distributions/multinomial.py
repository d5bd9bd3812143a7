"""``Multinomial(total_count=1, probs=None, logits=None)``: counts of each of ``K``
categories over ``total_count`` independent Categorical draws.

>>> import ember
>>> from ember.distributions import Multinomial
>>> d = Multinomial(4, probs=ember.tensor([0.25, 0.75]))
>>> d.mean, d.log_prob(ember.tensor([1.0, 3.0]))
(tensor([1., 3.]), tensor(-0.8630))
"""
from __future__ import annotations

import math

from .._creation import beside, tensor
from .._functions import lgamma
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import one_hot
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all


class Multinomial(Distribution):
    """``total_count`` (a Python int, the same for the whole batch) and exactly one of
    ``probs`` or ``logits`` over the last dimension."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with no_grad():
            draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
            counts = one_hot(draws, self._categorical._num_events).sum(0)
            return counts.type_as(self.probs)

    def entropy(self):
        n = beside(tensor(self.total_count), self.probs)
        term1 = n * self._categorical.entropy() - lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # a category of probability 0 drawn 0 times contributes 0, not 0 * -inf
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0.0)
        log_factorial_n = lgamma(value.sum(-1) + 1)
        log_factorial_xs = lgamma(value + 1).sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)


__all__ = ["Multinomial"]
