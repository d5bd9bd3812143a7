"""``HalfCauchy(scale)``: ``|X|`` for ``X ~ Cauchy(0, scale)``.

>>> import ember
>>> from ember.distributions import HalfCauchy
>>> d = HalfCauchy(ember.tensor([1.0]))
>>> d.log_prob(ember.tensor([1.0])), d.cdf(ember.tensor([1.0]))
(tensor([-1.1447]), tensor([0.5000]))
"""
from __future__ import annotations

import math

from .._creation import as_tensor, beside, full
from ._half import HalfOfCentred
from .cauchy import Cauchy


class HalfCauchy(HalfOfCentred):
    """The absolute value of a centred Cauchy of scale ``scale``."""
    base_family = Cauchy

    @property
    def mean(self):
        return beside(full(self._extended_shape(), math.inf, dtype=self.scale.dtype),
                      self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def _value(self, value):  # numbers are taken, as PyTorch's HalfCauchy does
        return as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)


__all__ = ["HalfCauchy"]
