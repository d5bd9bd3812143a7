"""``Dirichlet(concentration)``: distributions on the probability simplex.

>>> import ember
>>> from ember.distributions import Dirichlet
>>> d = Dirichlet(ember.tensor([1.0, 2.0, 3.0]))
>>> d.mean
tensor([0.1667, 0.3333, 0.5000])
>>> bool(d.sample().sum().sub(1).abs() < 1e-5)
True
"""
from __future__ import annotations

from .._creation import arange, beside
from .._functions import digamma, lgamma, where
from .._ops.special import standard_gamma
from .._tensor import Size
from . import constraints
from .exp_family import ExponentialFamily
from .utils import xlogy


class Dirichlet(ExponentialFamily):
    """Concentrations of shape ``batch_shape + (K,)`` (all positive)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        batch_shape, event_shape = concentration.shape[:-1], concentration.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) +
                                                      tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=()):
        # independent Gamma(alpha_i, 1) draws, normalized: each is reparameterized
        # implicitly (_ops/special.py), so gradients reach the concentrations
        gammas = standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        shifted = (self.concentration - 1).clamp(min=0.0)
        # with every concentration below 1 the density peaks at the vertex of the largest
        below_one = (self.concentration < 1).all(-1, keepdim=True)
        total = where(below_one, 1.0, shifted.sum(-1, True))  # no 0/0 there, nor in its grad
        mode = shifted / total
        k = shifted.shape[-1]
        vertex = (beside(arange(k), mode) == mode.argmax(-1, keepdim=True)).to(mode.dtype)
        return where(below_one, vertex, mode)

    @property
    def variance(self):
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k = c.shape[-1]
        total = c.sum(-1)
        return (lgamma(c).sum(-1) - lgamma(total) - (k - total) * digamma(total)
                - ((c - 1.0) * digamma(c)).sum(-1))


__all__ = ["Dirichlet"]
