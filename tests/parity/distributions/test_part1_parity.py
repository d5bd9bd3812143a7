"""ember.distributions against torch.distributions, part 1: transforms (values, inverses,
log-dets, shapes, signs, domains), biject_to/transform_to, TransformedDistribution and the
families built on it or on location-scale forms (densities, CDFs, moments, entropies and
their gradients, float32 and float64), their KL pairs, shapes, expand, supports and
validation errors."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]


def _positive(shape, dtype, low=0.5, high=3.0, seed=0):
    return np.random.default_rng(seed).uniform(low, high, shape).astype(dtype)


def _real(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _tol(dtype):
    return dict(rtol=5e-4, atol=5e-5) if dtype == np.float32 else dict(rtol=1e-8, atol=1e-10)


def _same_error(make):
    torch_error = error_of(lambda: make(torch))
    ember_error = error_of(lambda: make(ember))
    assert torch_error is not None
    assert ember_error == (torch_error[0], torch_error[1].replace("torch.Size", "ember.Size"))


# ---- transforms ---------------------------------------------------------------------------
TRANSFORMS = {
    "exp": (lambda T, lib: T.ExpTransform(), "real", (3, 4)),
    "power": (lambda T, lib: T.PowerTransform(lib.tensor([0.5, 2.0, 3.0, -1.5])), "pos", (3, 4)),
    "sigmoid": (lambda T, lib: T.SigmoidTransform(), "real", (3, 4)),
    "softplus": (lambda T, lib: T.SoftplusTransform(), "real", (3, 4)),
    "tanh": (lambda T, lib: T.TanhTransform(), "real", (3, 4)),
    "affine": (lambda T, lib: T.AffineTransform(1.5, -2.0), "real", (3, 4)),
    "affine_tensor": (lambda T, lib: T.AffineTransform(lib.tensor([1.0, 2.0, 0.0, 1.0]),
                                                       lib.tensor([2.0, -0.5, 3.0, 1.0]),
                                                       event_dim=1), "real", (3, 4)),
    "stick_breaking": (lambda T, lib: T.StickBreakingTransform(), "real", (3, 4)),
    "corr_cholesky": (lambda T, lib: T.CorrCholeskyTransform(), "real", (2, 6)),
    "reshape": (lambda T, lib: T.ReshapeTransform((4,), (2, 2)), "real", (3, 4)),
    "compose": (lambda T, lib: T.ComposeTransform([T.AffineTransform(0.5, 2.0), T.ExpTransform(),
                                                   T.PowerTransform(0.5)]), "real", (3, 4)),
    "compose_events": (lambda T, lib: T.ComposeTransform([T.ExpTransform(),
                                                          T.StickBreakingTransform()]),
                       "real", (3, 4)),
    "independent": (lambda T, lib: T.IndependentTransform(T.SigmoidTransform(), 1), "real",
                    (3, 4)),
    "inverse": (lambda T, lib: T.ExpTransform().inv, "pos", (3, 4)),
    "cat": (lambda T, lib: T.CatTransform([T.ExpTransform(), T.SigmoidTransform()], dim=1,
                                          lengths=[1, 3]), "real", (3, 4)),
    "cat_events": (lambda T, lib: T.CatTransform([T.IndependentTransform(T.ExpTransform(), 1),
                                                  T.SigmoidTransform()],
                                                 dim=0, lengths=[1, 2]), "real", (3, 4)),
    "stack": (lambda T, lib: T.StackTransform([T.ExpTransform(), T.TanhTransform(),
                                               T.SoftplusTransform()], dim=0), "real", (3, 4)),
    "cdf": (lambda T, lib: T.CumulativeDistributionTransform(
        lib.distributions.Normal(0.5, 2.0)), "real", (3, 4)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_values_inverses_and_log_dets(name, dtype):
    make, kind, shape = TRANSFORMS[name]
    x = _positive(shape, dtype) if kind == "pos" else _real(shape, dtype)

    def fn(lib, x):
        t = make(lib.distributions.transforms, lib)
        y = t(x)
        return y, t.inv(y.detach()), t.log_abs_det_jacobian(x, y)
    compare(fn, x, **_tol(dtype))


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_transform_attributes(name):
    make, _, shape = TRANSFORMS[name]
    seen = []
    for lib in (torch, ember):
        t = make(lib.distributions.transforms, lib)
        y_shape = tuple(t.forward_shape(lib.Size(shape)))
        sign = error_of(lambda: t.sign)
        if sign is None:
            sign = t.sign
            sign = sign.tolist() if isinstance(sign, (torch.Tensor, ember.Tensor)) else sign
        seen.append((y_shape, tuple(t.inverse_shape(lib.Size(y_shape))), t.bijective,
                     repr(t.domain), repr(t.codomain), t.domain.event_dim,
                     t.codomain.event_dim, sign, repr(t).replace("torch", "ember"),
                     error_of(lambda: t.event_dim), t == make(lib.distributions.transforms, lib),
                     t.inv.inv is t))
    assert seen[0] == seen[1]


@pytest.mark.parametrize("dtype", DTYPES)
def test_matrix_transforms(dtype):
    x = _real((2, 3, 3), dtype)

    def fn(lib, x):
        T = lib.distributions.transforms
        low = T.LowerCholeskyTransform()(x)
        pd = T.PositiveDefiniteTransform()(x)
        return (low, T.LowerCholeskyTransform().inv(low.detach()), pd,
                T.PositiveDefiniteTransform().inv(pd.detach()), T.SoftmaxTransform()(x),
                T.SoftmaxTransform().inv(T.SoftmaxTransform()(x)), T.AbsTransform()(x))
    compare(fn, x, **_tol(dtype))


def test_transforms_noncontiguous():
    def fn(lib, x):
        T = lib.distributions.transforms
        t = T.ComposeTransform([T.StickBreakingTransform(), T.ExpTransform().inv])
        y = t(x)
        return y, t.log_abs_det_jacobian(x, y), T.CorrCholeskyTransform().inv(
            T.CorrCholeskyTransform()(x))
    compare(fn, _real((3, 3), np.float64), noncontiguous=True)


def test_transform_equality_cache_and_errors():
    for lib in (torch, ember):
        T = lib.distributions.transforms
        assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
        assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
        assert T.AffineTransform(1.0, 2.0) != T.AffineTransform(1.0, 3.0)
        assert T.ExpTransform().inv == T.ExpTransform().inv
        assert T.identity_transform == T.ComposeTransform([])
        t = T.ExpTransform(cache_size=1)
        x = lib.zeros(2)
        y = t(x)
        assert t(x) is y and t.inv(y) is x
        assert T.ExpTransform().with_cache() is not None
    _same_error(lambda lib: lib.distributions.transforms.ExpTransform(cache_size=2))
    _same_error(lambda lib: lib.distributions.transforms.ReshapeTransform((4,), (3,)))
    _same_error(lambda lib: lib.distributions.transforms.ReshapeTransform(
        (4,), (2, 2)).forward_shape((3, 5)))
    _same_error(lambda lib: lib.distributions.transforms.ReshapeTransform(
        (4,), (2, 2)).forward_shape(()))
    _same_error(lambda lib: lib.distributions.transforms.CorrCholeskyTransform().forward_shape(
        (4,)))
    _same_error(lambda lib: lib.distributions.transforms.CorrCholeskyTransform().inverse_shape(
        (2, 3)))
    _same_error(lambda lib: lib.distributions.transforms.CorrCholeskyTransform()(lib.zeros(4)))
    _same_error(lambda lib: lib.distributions.transforms.SoftmaxTransform().sign)
    _same_error(lambda lib: lib.distributions.transforms.ReshapeTransform((4,), (2, 2))
                .event_dim)
    _same_error(lambda lib: lib.distributions.transforms.CatTransform(
        [lib.distributions.transforms.ExpTransform()], dim=0)(lib.zeros(2)))
    _same_error(lambda lib: lib.distributions.transforms.StackTransform(
        [lib.distributions.transforms.ExpTransform()], dim=2)(lib.zeros(2)))
    _same_error(lambda lib: lib.distributions.transforms.CatTransform([1]))


# ---- biject_to / transform_to -------------------------------------------------------------
def _constraints(lib):
    C = lib.distributions.constraints
    return [C.real, C.real_vector, C.positive, C.nonnegative, C.greater_than(2.0),
            C.greater_than_eq(-1.0), C.less_than(3.0), C.interval(-2.0, 5.0), C.unit_interval,
            C.half_open_interval(0.0, 2.0), C.simplex, C.corr_cholesky, C.lower_cholesky,
            C.positive_definite, C.positive_semidefinite,
            C.independent(C.positive, 1), C.cat([C.positive, C.real], dim=0, lengths=[2, 1]),
            C.stack([C.positive, C.unit_interval], dim=0), C.boolean, C.lower_triangular]


@pytest.mark.parametrize("index", range(len(_constraints(torch))))
@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
def test_biject_to_and_transform_to(registry, index):
    reprs = []
    for lib in (torch, ember):
        constraint = _constraints(lib)[index]
        reprs.append(error_of(lambda: getattr(lib.distributions, registry)(constraint)) or
                     repr(getattr(lib.distributions, registry)(constraint)))
    assert reprs[0] == reprs[1]
    if isinstance(reprs[0], tuple):
        return
    shapes = {"simplex": (2, 3), "corr_cholesky": (2, 3), "lower_cholesky": (2, 3, 3),
              "positive_definite": (2, 3, 3), "positive_semidefinite": (2, 3, 3),
              "stack": (2, 3), "cat": (3, 2)}
    name = type(_constraints(torch)[index]).__name__.lower().strip("_")
    shape = next((s for k, s in shapes.items() if k.replace("_", "") in name), (2, 3))

    def fn(lib, x):
        constraint = _constraints(lib)[index]
        t = getattr(lib.distributions, registry)(constraint)
        y = t(x)
        return y, constraint.check(y)
    compare(fn, _real(shape, np.float64))


def test_registry_errors():
    _same_error(lambda lib: lib.distributions.constraint_registry.biject_to.register(
        3, lambda c: None))
    for lib in (torch, ember):
        registry = lib.distributions.constraint_registry.ConstraintRegistry()
        registry.register(lib.distributions.constraints.positive,
                          lambda c: lib.distributions.transforms.SoftplusTransform())
        assert repr(registry(lib.distributions.constraints.positive)) == "SoftplusTransform()"


# ---- new constraints ----------------------------------------------------------------------
def test_new_constraints():
    def fn(lib, x):
        C = lib.distributions.constraints
        onehot = lib.tensor([[0.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 0.0]])
        corr = lib.distributions.transforms.CorrCholeskyTransform()(x[0])
        counts = lib.tensor([[1.0, 2.0], [3.0, 1.0]])
        return (C.one_hot.check(onehot), C.multinomial(3).check(counts),
                C.square.check(lib.zeros(2, 3, 3)), C.square.check(lib.zeros(2, 3, 2)),
                C.corr_cholesky.check(corr), C.corr_cholesky.check(lib.eye(3) * 2),
                C.cat([C.positive, C.real], 1, [1, 2]).check(x),
                C.stack([C.positive, C.real, C.unit_interval], 1).check(x),
                C.symmetric.check(lib.zeros(2, 3)))
    compare(fn, _real((2, 3), np.float64), grad=False)
    for lib in (torch, ember):
        C = lib.distributions.constraints
        assert C.cat([C.positive, C.real_vector]).event_dim == 1
        assert C.stack([C.positive], dim=-1).event_dim == 1
        assert C.stack([C.positive], dim=0).event_dim == 0
        assert repr(C.one_hot) == "OneHot()" and repr(C.square) == "Square()"
        assert C.one_hot.is_discrete and C.multinomial(2).event_dim == 1


# ---- distributions ------------------------------------------------------------------------
def _families(dtype):
    """name -> (constructor(lib, *params), param arrays, value array, probabilities)"""
    pos = lambda shape, seed=0, low=0.5, high=3.0: _positive(shape, dtype, low, high, seed)  # noqa: E731
    u = np.random.default_rng(9).uniform(0.05, 0.95, (2, 3, 4)).astype(dtype)
    simplex = pos((2, 3, 4), 11)
    simplex = simplex / simplex.sum(-1, keepdims=True)
    D = lambda lib: lib.distributions  # noqa: E731
    return {
        "exponential": (lambda lib, r: D(lib).Exponential(r), [pos((3, 4))], pos((2, 3, 4), 1),
                        u),
        "laplace": (lambda lib, m, s: D(lib).Laplace(m, s), [_real((3, 1), dtype), pos((4,))],
                    _real((2, 3, 4), dtype, 1), u),
        "cauchy": (lambda lib, m, s: D(lib).Cauchy(m, s), [_real((3, 1), dtype), pos((4,))],
                   _real((2, 3, 4), dtype, 1), u),
        "log_normal": (lambda lib, m, s: D(lib).LogNormal(m, s),
                       [_real((3, 1), dtype), pos((4,), 1, 0.3, 1.2)], pos((2, 3, 4), 2), u),
        "gumbel": (lambda lib, m, s: D(lib).Gumbel(m, s), [_real((3, 1), dtype), pos((4,))],
                   _real((2, 3, 4), dtype, 1), u),
        "weibull": (lambda lib, s, c: D(lib).Weibull(s, c), [pos((3, 1)), pos((4,), 1)],
                    pos((2, 3, 4), 2), u),
        "half_normal": (lambda lib, s: D(lib).HalfNormal(s), [pos((3, 4))], pos((2, 3, 4), 1),
                        u),
        "half_cauchy": (lambda lib, s: D(lib).HalfCauchy(s), [pos((3, 4))], pos((2, 3, 4), 1),
                        u),
        "pareto": (lambda lib, s, a: D(lib).Pareto(s, a), [pos((3, 1), 0, 0.2, 0.5),
                                                         pos((4,), 1, 0.5, 4.0)],
                   pos((2, 3, 4), 2, 0.6, 4.0), u),
        "kumaraswamy": (lambda lib, a, b: D(lib).Kumaraswamy(a, b), [pos((3, 1)), pos((4,), 1)],
                        u, None),
        "inverse_gamma": (lambda lib, c, r: D(lib).InverseGamma(c, r),
                          [pos((3, 1), 0, 0.5, 4.0), pos((4,), 1)], pos((2, 3, 4), 2), None),
        "logistic_normal": (lambda lib, m, s: D(lib).LogisticNormal(m, s),
                            [_real((3, 3), dtype), pos((3,))], simplex, None),
        "relaxed_bernoulli": (lambda lib, t, p: D(lib).RelaxedBernoulli(t, probs=p),
                              [pos((4,), 0, 0.3, 2.0), pos((3, 4), 1, 0.1, 0.9)], u, None),
        "relaxed_bernoulli_logits": (lambda lib, t, p: D(lib).RelaxedBernoulli(t, logits=p),
                                     [pos((), 0, 0.3, 2.0), _real((3, 4), dtype)], u, None),
        "logit_relaxed_bernoulli": (
            lambda lib, t, p: D(lib).relaxed_bernoulli.LogitRelaxedBernoulli(t, probs=p),
            [pos((4,), 0, 0.3, 2.0), pos((3, 4), 1, 0.1, 0.9)], _real((2, 3, 4), dtype), None),
        "exp_relaxed_categorical": (
            lambda lib, t, p: D(lib).relaxed_categorical.ExpRelaxedCategorical(t, logits=p),
            [pos((), 0, 0.3, 2.0), _real((3, 4), dtype)], np.log(simplex), None),
        "relaxed_one_hot": (lambda lib, t, p: D(lib).RelaxedOneHotCategorical(t, probs=p),
                            [pos((), 0, 0.3, 2.0), pos((3, 4), 1)], simplex, None),
        "relaxed_one_hot_logits": (
            lambda lib, t, p: D(lib).RelaxedOneHotCategorical(t, logits=p),
            [pos((), 0, 0.3, 2.0), _real((3, 4), dtype)], simplex, None),
    }


STATISTICS = ["log_prob", "cdf", "icdf", "entropy", "mean", "variance", "stddev", "mode"]


def _statistics(d, value, u):
    """What each library computes, or the error type it raises (torch's NotImplementedError
    where a family has no closed form)."""
    out = []
    for name in STATISTICS:
        try:
            if name in ("log_prob", "cdf"):
                out.append(getattr(d, name)(value))
            elif name == "icdf":
                out.append(d.icdf(u) if u is not None else None)
            elif name == "entropy":
                out.append(d.entropy())
            else:
                out.append(getattr(d, name))
        except NotImplementedError:
            out.append(None)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(_families(np.float64)))
def test_family_values_and_gradients(name, dtype):
    make, params, value, u = _families(dtype)[name]
    arrays = params + [value] + ([u] if u is not None else [])
    nparams = len(params)

    def fn(lib, *tensors):
        d = make(lib, *tensors[:nparams])
        rest = tensors[nparams:]
        got = _statistics(d, rest[0].detach(), rest[1].detach() if len(rest) > 1 else None)
        if name == "inverse_gamma":  # torch has no igamma gradient w.r.t. the concentration
            got[1] = make(lib, tensors[0].detach(), tensors[1]).cdf(rest[0].detach())
        return tuple(g for g in got if g is not None)
    compare(fn, *arrays, **_tol(dtype))
    # the same statistics exist (or are missing) in both
    for lib_results in [[g is None for g in _statistics(
            make(lib, *[lib.tensor(a) for a in params]), lib.tensor(value),
            lib.tensor(u) if u is not None else None)] for lib in (torch, ember)]:
        assert lib_results == [g is None for g in _statistics(
            make(torch, *[torch.tensor(a) for a in params]), torch.tensor(value),
            torch.tensor(u) if u is not None else None)]


@pytest.mark.parametrize("name", list(_families(np.float64)))
def test_family_shapes_supports_and_expand(name):
    make, params, value, _ = _families(np.float64)[name]
    seen = []
    for lib in (torch, ember):
        d = make(lib, *[lib.tensor(a) for a in params])
        e = d.expand((5,) + tuple(d.batch_shape))
        ember.manual_seed(0)
        torch.manual_seed(0)
        seen.append((tuple(d.batch_shape), tuple(d.event_shape), d.has_rsample,
                     repr(d.support).replace("torch.", "ember."), sorted(d.arg_constraints),
                     {k: repr(c) for k, c in d.arg_constraints.items()},
                     tuple(e.batch_shape), tuple(e.sample((2,)).shape),
                     tuple(d.sample().shape), repr(d).replace("torch.Size", "ember.Size"),
                     tuple(e.log_prob(lib.tensor(value)[:1]).shape)))
    assert seen[0] == seen[1]


def test_numbers_as_parameters():
    def fn(lib, v):
        D = lib.distributions
        return (D.Exponential(2.0).log_prob(v), D.Laplace(0.5, 2.0).log_prob(v),
                D.Cauchy(0.5, 2.0).cdf(v), D.Gumbel(0.5, 2.0).log_prob(v),
                D.LogNormal(0.5, 2.0).log_prob(v), D.HalfNormal(2.0).log_prob(v),
                D.Weibull(1.5, 2.0).log_prob(v), D.Pareto(0.1, 2.0).log_prob(v),
                D.Kumaraswamy(2.0, 3.0).log_prob(v / 4), D.InverseGamma(2.0, 3.0).log_prob(v),
                D.HalfCauchy(1.0).log_prob(v), D.Gumbel(0.5, 2.0).cdf(v),
                D.Exponential(2.0).entropy(), D.Gumbel(0.5, 2.0).entropy())
    compare(fn, _positive((5,), np.float64, 0.2, 3.5), rtol=1e-6)
    for lib in (torch, ember):
        D = lib.distributions
        assert tuple(D.Exponential(2.0).batch_shape) == () and tuple(D.Gumbel(0., 1.)
                                                                     .sample((3,)).shape) == (3,)


def test_edge_values():
    def fn(lib, v):
        D = lib.distributions
        return (D.HalfNormal(1.0, validate_args=False).log_prob(v),
                D.HalfCauchy(1.0, validate_args=False).log_prob(v),
                D.Pareto(lib.tensor([1.0, 1.0]), lib.tensor([0.5, 1.5])).mean,
                D.Pareto(lib.tensor([1.0, 1.0]), lib.tensor([1.5, 2.5])).variance,
                D.InverseGamma(lib.tensor([0.5, 1.5, 2.5]), 1.0).mean,
                D.InverseGamma(lib.tensor([0.5, 1.5, 2.5]), 1.0).variance,
                D.Kumaraswamy(lib.tensor([0.5, 2.0]), lib.tensor([2.0, 2.0])).mode,
                D.Weibull(1.0, lib.tensor([0.5, 2.0])).mode,
                D.Exponential(lib.tensor([1.0, 2.0])).mode)
    compare(fn, np.array([-1.0, 0.0, 0.5]), grad=False)


def test_transformed_distribution_general():
    def fn(lib, loc, scale, value):
        D, T = lib.distributions, lib.distributions.transforms
        base = D.Normal(loc, scale)
        d = D.TransformedDistribution(base, [T.AffineTransform(1.0, -2.0), T.ExpTransform()])
        vec = D.TransformedDistribution(base, [T.StickBreakingTransform()])
        aff = D.TransformedDistribution(D.Normal(loc[0], scale), T.AffineTransform(
            lib.ones(2, 1, dtype=loc.dtype), 2.0))
        return (d.log_prob(value), d.cdf(value), d.icdf(lib.tensor(0.3, dtype=loc.dtype)),
                vec.log_prob(vec.sample().detach()).shape and vec.log_prob(
                    lib.tensor([0.1, 0.2, 0.3, 0.4], dtype=loc.dtype)),
                aff.log_prob(value[0, 0]))
    compare(fn, _real((3,), np.float64), _positive((3,), np.float64), _positive((2, 3),
                                                                           np.float64, seed=3))
    for lib in (torch, ember):
        D, T = lib.distributions, lib.distributions.transforms
        base = D.Normal(lib.zeros(3), lib.ones(3))
        d = D.TransformedDistribution(base, [T.StickBreakingTransform()])
        assert tuple(d.batch_shape) == () and tuple(d.event_shape) == (4,)
        assert repr(d.support) == "Simplex()"
        aff = D.TransformedDistribution(D.Normal(0.0, 1.0), T.AffineTransform(lib.zeros(2, 3),
                                                                                1.0))
        assert tuple(aff.batch_shape) == (2, 3) and tuple(aff.base_dist.batch_shape) == (2, 3)
        assert tuple(d.expand((2,)).batch_shape) == (2,)
        assert repr(D.TransformedDistribution(D.Normal(lib.zeros(2), 1.0), [
            T.ExpTransform(), T.ReshapeTransform((2,), (1, 2))]).support) == \
            "IndependentConstraint(Real(), 2)"


INVALID = [
    lambda lib: lib.distributions.Exponential(lib.tensor([-1.0])),
    lambda lib: lib.distributions.Exponential(1.0).log_prob(lib.tensor(-1.0)),
    lambda lib: lib.distributions.Laplace(0.0, lib.tensor([0.0])),
    lambda lib: lib.distributions.Cauchy(lib.tensor([0.0]), -1.0),
    lambda lib: lib.distributions.LogNormal(0.0, lib.tensor([-1.0])),
    lambda lib: lib.distributions.LogNormal(0.0, 1.0).log_prob(lib.tensor(-1.0)),
    lambda lib: lib.distributions.Gumbel(0.0, lib.tensor([-1.0])),
    lambda lib: lib.distributions.Weibull(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda lib: lib.distributions.Weibull(1.0, 1.0).log_prob(lib.tensor(-1.0)),
    lambda lib: lib.distributions.HalfNormal(lib.tensor([-1.0])),
    lambda lib: lib.distributions.HalfNormal(1.0).log_prob(lib.tensor(-1.0)),
    lambda lib: lib.distributions.HalfCauchy(lib.tensor([-1.0])),
    lambda lib: lib.distributions.Pareto(lib.tensor([1.0]), lib.tensor([-1.0])),
    lambda lib: lib.distributions.Pareto(1.0, 1.0).log_prob(lib.tensor(0.5)),
    lambda lib: lib.distributions.Kumaraswamy(lib.tensor([1.0]), lib.tensor([0.0])),
    lambda lib: lib.distributions.Kumaraswamy(1.0, 1.0).log_prob(lib.tensor(1.5)),
    lambda lib: lib.distributions.InverseGamma(lib.tensor([-1.0]), 1.0),
    lambda lib: lib.distributions.LogisticNormal(lib.zeros(2), lib.tensor([-1.0, 1.0])),
    lambda lib: lib.distributions.LogisticNormal(lib.zeros(2), lib.ones(2)).log_prob(
        lib.tensor([0.5, 0.6, 0.2])),
    lambda lib: lib.distributions.RelaxedBernoulli(lib.tensor(1.0)),
    lambda lib: lib.distributions.RelaxedBernoulli(lib.tensor(1.0), probs=lib.tensor([1.5])),
    lambda lib: lib.distributions.RelaxedBernoulli(lib.tensor(1.0), probs=0.5).log_prob(
        lib.tensor(1.5)),
    lambda lib: lib.distributions.RelaxedOneHotCategorical(lib.tensor(1.0),
                                                           probs=lib.tensor([-0.5, 1.5])),
    lambda lib: lib.distributions.RelaxedOneHotCategorical(lib.tensor(1.0), probs=lib.tensor(
        [0.5, 0.5])).log_prob(lib.tensor([0.9, 0.9])),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0),
                                                          "exp"),
    lambda lib: lib.distributions.TransformedDistribution(lib.distributions.Normal(0.0, 1.0),
                                                          [1]),
    lambda lib: lib.distributions.TransformedDistribution(
        lib.distributions.Normal(0.0, 1.0),
        [lib.distributions.transforms.StickBreakingTransform()]),
    lambda lib: lib.distributions.LogNormal(lib.zeros(4), 1.0).log_prob(lib.ones(3)),
]


@pytest.mark.parametrize("make", INVALID, ids=[str(i) for i in range(len(INVALID))])
def test_validation_errors(make):
    _same_error(make)


# ---- KL -----------------------------------------------------------------------------------
def _kl_makers(lib, a, b):
    """Distributions made from positive parameter tensors ``a`` and ``b`` (shape (3,))."""
    D = lib.distributions
    return {
        "Exponential": D.Exponential(a),
        "Laplace": D.Laplace(b - 1.5, a),
        "Cauchy": D.Cauchy(b - 1.5, a),
        "Gumbel": D.Gumbel(b - 1.0, a),
        "HalfNormal": D.HalfNormal(b),
        "Pareto": D.Pareto(a * 0.3, b + 2.5),
        "Normal": D.Normal(a - 1.0, b),
        "Gamma": D.Gamma(a + 0.5, b),
        "Beta": D.Beta(a, b),
        "Uniform": D.Uniform(a * 0.1, a + b),
        "LogNormal": D.LogNormal(a - 1.0, b),
    }


KL_PAIRS = [
    ("Exponential", "Exponential"), ("Laplace", "Laplace"), ("Cauchy", "Cauchy"),
    ("Gumbel", "Gumbel"), ("HalfNormal", "HalfNormal"), ("Pareto", "Pareto"),
    ("LogNormal", "LogNormal"), ("Beta", "Exponential"), ("Beta", "Pareto"),
    ("Exponential", "Gamma"), ("Exponential", "Gumbel"), ("Exponential", "Normal"),
    ("Exponential", "Beta"), ("Exponential", "Pareto"), ("Exponential", "Uniform"),
    ("Gamma", "Exponential"), ("Gamma", "Gumbel"), ("Gamma", "Pareto"),
    ("Gumbel", "Normal"), ("Gumbel", "Exponential"), ("Laplace", "Normal"),
    ("Laplace", "Gamma"), ("Normal", "Gumbel"), ("Normal", "Laplace"),
    ("Normal", "Exponential"), ("Normal", "Pareto"), ("Pareto", "Exponential"),
    ("Pareto", "Gamma"), ("Pareto", "Normal"), ("Pareto", "Uniform"),
    ("Uniform", "Exponential"), ("Uniform", "Gumbel"), ("Uniform", "Pareto"),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("pair", KL_PAIRS, ids=["-".join(p) for p in KL_PAIRS])
def test_kl_pairs(pair, dtype):
    def fn(lib, a1, b1, a2, b2):
        p = _kl_makers(lib, a1, b1)[pair[0]]
        q = _kl_makers(lib, a2, b2)[pair[1]]
        return lib.distributions.kl_divergence(p, q)
    compare(fn, _positive((3,), dtype, seed=1), _positive((3,), dtype, seed=2),
            _positive((3,), dtype, seed=3), _positive((3,), dtype, seed=4), **_tol(dtype))


def test_kl_infinite_regions_and_errors():
    def fn(lib, x):
        D = lib.distributions
        return (D.kl_divergence(D.Pareto(x, 2.0), D.Pareto(1.0, 2.0)),
                D.kl_divergence(D.Pareto(1.0, x), D.Exponential(2.0)),
                D.kl_divergence(D.Pareto(1.0, x), D.Normal(0.0, 2.0)),
                D.kl_divergence(D.Uniform(x - 1.0, x + 1.0), D.Exponential(1.0)))
    compare(fn, np.array([0.5, 1.0, 1.5, 3.0]))
    _same_error(lambda lib: lib.distributions.kl_divergence(
        lib.distributions.LogNormal(0.0, 1.0), lib.distributions.TransformedDistribution(
            lib.distributions.Normal(0.0, 1.0), lib.distributions.transforms.TanhTransform())))
    _same_error(lambda lib: lib.distributions.kl_divergence(
        lib.distributions.Laplace(0.0, 1.0), lib.distributions.Cauchy(0.0, 1.0)))


def test_tril_vector_utilities():
    def fn(lib, vec, mat):
        U = lib.distributions.utils
        return (U.vec_to_tril_matrix(vec), U.vec_to_tril_matrix(vec[..., :3], diag=-1),
                U.tril_matrix_to_vec(mat), U.tril_matrix_to_vec(mat, diag=-1),
                U.tril_matrix_to_vec(mat, diag=1))
    compare(fn, _real((2, 6), np.float64), _real((2, 3, 3), np.float64, seed=1))
    assert ember.distributions.utils.euler_constant == torch.distributions.utils.euler_constant
    _same_error(lambda lib: lib.distributions.utils.vec_to_tril_matrix(lib.zeros(2)))
    _same_error(lambda lib: lib.distributions.utils.tril_matrix_to_vec(lib.zeros(3, 3), diag=-4))
