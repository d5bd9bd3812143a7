"""``ExponentialFamily``: the base of distributions of the exponential family (Normal,
Bernoulli, Gamma, Beta, Dirichlet); KL divergences between two different families of it
are not defined (see kl.py).

>>> from ember.distributions import ExponentialFamily, Normal
>>> issubclass(Normal, ExponentialFamily)
True
"""
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """Distributions whose density is ``exp(<t(x), theta> - F(theta) + k(x))``."""


__all__ = ["ExponentialFamily"]
