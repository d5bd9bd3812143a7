"""``Categorical(probs=None, logits=None)``: one of ``K`` categories, the last dimension of
the parameter indexing them.

>>> import ember
>>> from ember.distributions import Categorical
>>> d = Categorical(probs=ember.tensor([0.25, 0.75]))
>>> d.log_prob(ember.tensor(1)), d.sample((4,)).shape
(tensor(-0.2877), ember.Size([4]))
"""
from __future__ import annotations

import math

from .._creation import arange, beside, full, rand
from .._functions import broadcast_tensors, clamp
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..backend import dtypes
from . import constraints
from .distribution import Distribution
from .utils import (finfo, expand_probs_or_logits, CategoricalProbsLogits)


class Categorical(CategoricalProbsLogits, Distribution):
    """Given by exactly one of ``probs`` (non-negative, normalized here) or ``logits``
    (unnormalized log-probabilities), each of shape ``batch_shape + (K,)``."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.shape[-1]
        batch_shape = self._param.shape[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        expand_probs_or_logits(self, new, param_shape)
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return beside(full(self._extended_shape(), math.nan, dtype=self.probs.dtype), self.probs)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return beside(full(self._extended_shape(), math.nan, dtype=self.probs.dtype), self.probs)

    def sample(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        if sample_shape.numel() == 0:  # PyTorch draws sample_shape.numel() with multinomial
            raise RuntimeError("cannot sample n_sample <= 0 samples")
        shape = self._extended_shape(sample_shape)
        with no_grad():
            cdf = self.probs.cumsum(-1)
            cdf = cdf / cdf[..., -1:]  # the last entry exactly 1
            # u in (0, 1]: the first category whose cdf reaches u; categories of
            # probability 0 are never picked (their cdf equals the one before)
            u = 1 - beside(rand(tuple(shape) + (1,), dtype=cdf.dtype), cdf)
            return (u > cdf).sum(-1).to(dtypes.int64)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        min_real = float(finfo(self.logits.dtype).min)
        logits = clamp(self.logits, min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = beside(arange(self._num_events, dtype=dtypes.int64), self._param)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


__all__ = ["Categorical"]
