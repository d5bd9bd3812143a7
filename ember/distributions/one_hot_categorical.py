"""``OneHotCategorical(probs=None, logits=None)``: a Categorical whose values are one-hot
vectors; ``OneHotCategoricalStraightThrough`` adds an ``rsample`` whose gradient is the
straight-through estimator (the gradient of ``probs``).

>>> import ember
>>> from ember.distributions import OneHotCategorical
>>> d = OneHotCategorical(probs=ember.tensor([0.25, 0.75]))
>>> d.log_prob(ember.tensor([0.0, 1.0])), d.sample((3,)).shape
(tensor(-0.2877), ember.Size([3, 2]))
"""
from __future__ import annotations

from .._creation import beside, eye
from .._tensor import Size
from ..nn.functional import one_hot
from . import constraints
from .categorical import Categorical
from .distribution import Distribution


class OneHotCategorical(Distribution):
    """Exactly one of ``probs`` or ``logits``, of shape ``batch_shape + (K,)``; values are
    vectors of ``K`` zeros and ones with a single one."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(OneHotCategorical, _instance)
        batch_shape = Size(batch_shape)
        new._categorical = self._categorical.expand(batch_shape)
        super(OneHotCategorical, new).__init__(batch_shape, self.event_shape,
                                               validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        return self._categorical.probs * (1 - self._categorical.probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        probs = self._categorical.probs
        indices = self._categorical.sample(Size(sample_shape))
        return one_hot(indices, self._categorical._num_events).to(probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self.event_shape[0]
        values = beside(eye(n, dtype=self._param.dtype), self._param)
        values = values.view((n,) + (1,) * len(self.batch_shape) + (n,))
        if expand:
            values = values.expand((n,) + tuple(self.batch_shape) + (n,))
        return values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A OneHotCategorical whose ``rsample`` passes gradients to ``probs`` as if the one-hot
    sample were ``probs`` itself (biased, but often useful)."""
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        samples = self.sample(sample_shape)
        probs = self._categorical.probs
        return samples + (probs - probs.detach())


__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]
