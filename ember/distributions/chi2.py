"""``Chi2(df)``: the sum of ``df`` squared standard normals, ``Gamma(df / 2, 1 / 2)``.

>>> import ember
>>> from ember.distributions import Chi2
>>> d = Chi2(ember.tensor([3.0]))
>>> d.mean, d.log_prob(ember.tensor([2.0]))
(tensor([3.]), tensor([-1.5724]))
"""
from __future__ import annotations

from . import constraints
from .gamma import Gamma


class Chi2(Gamma):
    """Chi-squared with ``df`` (positive, real) degrees of freedom."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Chi2, _instance)
        return super().expand(batch_shape, new)

    @property
    def df(self):
        return self.concentration * 2


__all__ = ["Chi2"]
