"""The closed-form KL divergences PyTorch registers for Binomial, Geometric, Poisson,
OneHotCategorical, ContinuousBernoulli, LowRankMultivariateNormal and Wishart, with each
other and with the other families (imported by the package; kl.py owns the registry).

>>> import ember
>>> from ember.distributions import Poisson, kl_divergence
>>> kl_divergence(Poisson(ember.tensor(2.0)), Poisson(ember.tensor(1.0)))
tensor(0.3863)
"""
from __future__ import annotations

import math

from .._functions import broadcast_shapes, diag_embed, mvlgamma, where
from ..linalg import slogdet, solve_triangular
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .continuous_bernoulli import ContinuousBernoulli
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .kl import _infinite_like, _kl_categorical_categorical, register_kl
from .laplace import Laplace
from .lowrank_multivariate_normal import LowRankMultivariateNormal, _batch_lowrank_logdet, \
    _batch_lowrank_mahalanobis
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .uniform import Uniform
from .wishart import Wishart, _mvdigamma


def _batch_trace_xxt(matrices):
    """``trace(X X^T)`` of each matrix of a batch: the sum of its squared entries."""
    return matrices.pow(2).sum((-2, -1))


def _log_diag_sum(tril):
    return tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                 d._capacitance_tril)


def _lowrank_mahalanobis(q, diff):
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                      diff, q._capacitance_tril)


def _woodbury_factor(q):
    """``A`` with ``cov_q^-1 = D_q^-1 - A^T A`` (Woodbury)."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


def _check_event_shapes(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with"
                         f"                          different event shapes cannot be "
                         f"computed")


# ---- same family ---------------------------------------------------------------------------
@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    return kl.masked_fill(p.total_count > q.total_count, math.inf)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + (-p.probs).log1p()
    t3 = -q._cont_bern_log_norm() - (-q.probs).log1p()
    return t1 + t2 + t3


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - (-q.probs).log1p() / p.probs - q.logits


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrank_lowrank(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # trace(cov_q^-1 cov_p) = trace((D_q^-1 - A^T A)(D_p + W_p W_p^T))
    A = _woodbury_factor(q)
    term21 = (p._unbroadcasted_cov_diag / q._unbroadcasted_cov_diag).sum(-1)
    term22 = _batch_trace_xxt(p._unbroadcasted_cov_factor
                              * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_xxt(A * p._unbroadcasted_cov_diag.sqrt().unsqueeze(-2))
    term24 = _batch_trace_xxt(A.matmul(p._unbroadcasted_cov_factor))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Wishart, Wishart)
def _kl_wishart_wishart(p, q):
    # PyTorch gets this from the Bregman divergence of the log normalizer; the closed form
    # is the same function of the parameters. q enters through its precision matrix, as
    # there, so that the gradients w.r.t. q's Cholesky factor match (upper triangle too).
    n_p, n_q, dim = p.df, q.df, p.event_shape[-1]
    precision_q = q.precision_matrix
    log_det_ratio = -slogdet(precision_q).logabsdet - 2 * _log_diag_sum(
        p._unbroadcasted_scale_tril)
    trace = (precision_q * p.covariance_matrix).sum((-2, -1))  # tr(V_q^-1 V_p)
    return (n_q / 2 * log_det_ratio + n_p / 2 * (trace - dim) + mvlgamma(n_q / 2, dim)
            - mvlgamma(n_p / 2, dim) + (n_p - n_q) / 2 * _mvdigamma(n_p / 2, dim))


# ---- across families -----------------------------------------------------------------------
@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_mvn_lowrank(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    term1 = _lowrank_logdet(q) - 2 * _log_diag_sum(p._unbroadcasted_scale_tril)
    term3 = _lowrank_mahalanobis(q, q.loc - p.loc)
    # trace(cov_q^-1 L_p L_p^T) = trace((D_q^-1 - A^T A) L_p L_p^T)
    A = _woodbury_factor(q)
    term21 = _batch_trace_xxt(p._unbroadcasted_scale_tril
                              * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_xxt(A.matmul(p._unbroadcasted_scale_tril))
    return 0.5 * (term1 + term21 - term22 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrank_mvn(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    term1 = 2 * _log_diag_sum(q._unbroadcasted_scale_tril) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    batch = tuple(broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                                   p._unbroadcasted_cov_factor.shape[:-2]))
    n = p.event_shape[0]
    q_tril = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_factor = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.shape[-1]))
    p_diag = diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_xxt(solve_triangular(q_tril, p_factor, upper=False))
    term22 = _batch_trace_xxt(solve_triangular(q_tril, p_diag, upper=False))
    return 0.5 * (term1 + term21 + term22 + term3 - p.event_shape[0])


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


def _kl_to_continuous_bernoulli(p, q):
    """KL(p || q) of a p on [0, 1] with a known entropy and mean."""
    return -p.entropy() - p.mean * q.logits - (-q.probs).log1p() - q._cont_bern_log_norm()


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return _kl_to_continuous_bernoulli(p, q)


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    result = _kl_to_continuous_bernoulli(p, q)
    outside = (p.high >= q.support.upper_bound) | (p.low <= q.support.lower_bound)
    return where(outside, math.inf, result)


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + (q.loc / q.scale).square()) + q.scale.log()
    t3 = ((p.variance + p.mean.square() - 2.0 * q.loc * p.mean)
          / (2.0 * q.scale.square()))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    # as PyTorch: infinite unless q is strictly inside [0, 1] on both ends
    outside = (q.low >= p.support.lower_bound) | (q.high <= p.support.upper_bound)
    return where(outside, math.inf, result)


@register_kl(Gamma, ContinuousBernoulli)
def _kl_gamma_continuous_bernoulli(p, q):
    return _infinite_like(p.concentration)


@register_kl(Normal, ContinuousBernoulli)
def _kl_normal_continuous_bernoulli(p, q):
    return _infinite_like(p.loc)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_pareto(p, q):
    return _infinite_like(p.probs)


@register_kl(Exponential, ContinuousBernoulli)
def _kl_exponential_continuous_bernoulli(p, q):
    return _infinite_like(p.rate)


@register_kl(Pareto, ContinuousBernoulli)
def _kl_pareto_continuous_bernoulli(p, q):
    return _infinite_like(p.scale)


@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Laplace, ContinuousBernoulli)
def _kl_loc_family_continuous_bernoulli(p, q):
    return _infinite_like(p.loc)


__all__: list = []
