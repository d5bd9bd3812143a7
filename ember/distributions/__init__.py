"""Probability distributions with PyTorch's ``torch.distributions`` API: parameters checked
against ``constraints``, ``sample``/``rsample`` (reparameterized, gradients reach the
parameters), ``log_prob``, ``entropy``, moments, and ``kl_divergence``.

>>> import ember
>>> from ember.distributions import Normal, kl_divergence
>>> loc = ember.zeros(2, requires_grad=True)
>>> d = Normal(loc, ember.ones(2))
>>> d.rsample((5,)).mean().backward()
>>> loc.grad
tensor([0.5000, 0.5000])
"""
from . import constraints
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .uniform import Uniform

__all__ = ["Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution",
           "ExponentialFamily", "Gamma", "Independent", "MultivariateNormal", "Normal", "Uniform",
           "constraints", "kl_divergence", "register_kl"]
