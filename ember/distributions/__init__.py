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
from .binomial import Binomial
from .chi2 import Chi2
from .continuous_bernoulli import ContinuousBernoulli
from .fishersnedecor import FisherSnedecor
from .generalized_pareto import GeneralizedPareto
from .geometric import Geometric
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .mixture_same_family import MixtureSameFamily
from .multinomial import Multinomial
from .negative_binomial import NegativeBinomial
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .studentT import StudentT
from .von_mises import VonMises
from .wishart import Wishart
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
# part 1 of torch's remaining families: transforms and the distributions built on them
from . import transforms
from . import _kl_part1  # noqa: F401 - registers the KL pairs of these families
from . import _kl_part2  # noqa: F401 - the KL pairs of Binomial ... Wishart
from .cauchy import Cauchy
from .constraint_registry import biject_to, transform_to
from .exponential import Exponential
from .gumbel import Gumbel
from .half_cauchy import HalfCauchy
from .half_normal import HalfNormal
from .inverse_gamma import InverseGamma
from .kumaraswamy import Kumaraswamy
from .laplace import Laplace
from .log_normal import LogNormal
from .logistic_normal import LogisticNormal
from .pareto import Pareto
from .relaxed_bernoulli import RelaxedBernoulli
from .relaxed_categorical import RelaxedOneHotCategorical
from .transformed_distribution import TransformedDistribution
from .transforms import *  # noqa: F403 - torch.distributions exports every transform
from .weibull import Weibull

__all__ = ["Bernoulli", "Beta", "Categorical", "Dirichlet", "Distribution",
           "ExponentialFamily", "Gamma", "Independent", "MultivariateNormal", "Normal", "Uniform",
           "constraints", "kl_divergence", "register_kl"]
__all__ += ["Binomial", "Chi2", "ContinuousBernoulli", "FisherSnedecor", "GeneralizedPareto",
            "Geometric", "LKJCholesky", "LowRankMultivariateNormal", "MixtureSameFamily",
            "Multinomial", "NegativeBinomial", "OneHotCategorical",
            "OneHotCategoricalStraightThrough", "Poisson", "StudentT", "VonMises", "Wishart"]
__all__ += ["Cauchy", "Exponential", "Gumbel", "HalfCauchy", "HalfNormal", "InverseGamma",
            "Kumaraswamy", "Laplace", "LogNormal", "LogisticNormal", "Pareto", "RelaxedBernoulli",
            "RelaxedOneHotCategorical", "TransformedDistribution", "Weibull", "biject_to",
            "transform_to"] + transforms.__all__
