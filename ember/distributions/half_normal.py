"""``HalfNormal(scale)``: ``|X|`` for ``X ~ Normal(0, scale)``.

>>> import ember
>>> from ember.distributions import HalfNormal
>>> d = HalfNormal(ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([1.0]))
(tensor([-0.7258]), tensor([0.6827]))
"""
from __future__ import annotations

import math

from ._half import HalfOfCentred
from .normal import Normal


class HalfNormal(HalfOfCentred):
    """The absolute value of a centred Normal of standard deviation ``scale``."""
    base_family = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)


__all__ = ["HalfNormal"]
