"""``Geometric(probs=None, logits=None)``: the number of failures before the first success
of Bernoulli(``probs``) trials.

>>> import ember
>>> from ember.distributions import Geometric
>>> d = Geometric(probs=ember.tensor([0.25]))
>>> d.mean, d.log_prob(ember.tensor([2.0]))
(tensor([3.]), tensor([-1.9617]))
"""
from __future__ import annotations

from numbers import Number

from .._creation import beside, rand, zeros_like
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, finfo, lazy_property, logits_to_probs, probs_to_logits


class Geometric(Distribution):
    """Given by exactly one of ``probs`` (success probability, in (0, 1]) or ``logits``."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        if probs is not None:
            self.probs, = broadcast_all(probs)
        else:
            self.logits, = broadcast_all(logits)
        batch_shape = Size() if isinstance(given, Number) else given.shape
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            # probability 0 never succeeds: unit_interval alone would let it through
            value = self.probs
            valid = value > 0
            if not bool(valid.all()):
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{value.detach()[~valid]}")

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Geometric, _instance)
        batch_shape = Size(batch_shape)
        if "probs" in self.__dict__:
            new.probs = self.probs.expand(batch_shape)
        if "logits" in self.__dict__:
            new.logits = self.logits.expand(batch_shape)
        super(Geometric, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = float(finfo(self.probs.dtype).tiny)
        with no_grad():
            # u uniform on [tiny, 1): floor(log u / log(1 - p)) is the inverse cdf
            u = beside(rand(shape, dtype=self.probs.dtype), self.probs) * (1 - tiny) + tiny
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # P(0) = 1 when probs == 1: 0 * log(0) must count as 0
        probs = probs.masked_fill((probs == 1) & (value == 0), 0.0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return binary_cross_entropy_with_logits(self.logits, self.probs,
                                                reduction="none") / self.probs


__all__ = ["Geometric"]
