"""The margin, embedding, triplet, Poisson/Gaussian NLL and multi-class/multi-label losses:
values from their formulas in NumPy, gradients and second gradients by finite differences
(float64), reductions, the deprecated arguments, meta tensors and error paths."""
import math
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

R = np.random.default_rng(0)
X = R.standard_normal((4, 5))
Y = R.standard_normal((4, 5))
Z = R.standard_normal((4, 5))
PM = np.sign(R.standard_normal((4, 5)))
POS = R.uniform(0.3, 2.0, (4, 5))
CLS = np.array([0, 4, 2, 1])
LABELS = np.array([[3, 0, -1, 1, 2], [1, 4, 4, 0, -1], [-1, 2, 3, 0, 0], [0, 1, 2, 3, 4]])


def t(a, grad=False):
    return ember.tensor(a, dtype=ember.float64, requires_grad=grad)


def _multi_margin(x, y, p, margin, w):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        for j in range(c):
            if j != y[i]:
                out[i] += max(0.0, margin - x[i, y[i]] + x[i, j]) ** p * w[y[i]]
    return out / c


def _multilabel_margin(x, labels):
    n, c = x.shape
    out = np.zeros(n)
    for i in range(n):
        targets = []
        for v in labels[i]:
            if v == -1:
                break
            targets.append(v)
        for j in targets:
            for k in range(c):
                if k not in targets:
                    out[i] += max(0.0, 1 - x[i, j] + x[i, k])
    return out / c


def _norm(a, p=2, eps=1e-6):
    return (np.abs(a + eps) ** p).sum(-1) ** (1 / p)


EXPECTED = {
    "margin_ranking": (lambda r: F.margin_ranking_loss(t(X), t(Y), t(PM), 0.2, reduction=r),
                       np.maximum(0, -PM * (X - Y) + 0.2)),
    "hinge_embedding": (lambda r: F.hinge_embedding_loss(t(X), t(PM), 0.5, reduction=r),
                        np.where(PM == 1, X, np.maximum(0, 0.5 - X))),
    "soft_margin": (lambda r: F.soft_margin_loss(t(X), t(PM), reduction=r),
                    np.log1p(np.exp(-PM * X))),
    "cosine_embedding": (
        lambda r: F.cosine_embedding_loss(t(X), t(Y), t(PM[:, 0]), 0.1, reduction=r),
        np.where(PM[:, 0] == 1, 1 - (X * Y).sum(1) / np.sqrt((X * X).sum(1) * (Y * Y).sum(1)),
                 np.maximum(0, (X * Y).sum(1) / np.sqrt((X * X).sum(1) * (Y * Y).sum(1)) - 0.1))),
    "triplet_margin": (lambda r: F.triplet_margin_loss(t(X), t(Y), t(Z), 1.5, reduction=r),
                       np.maximum(0, 1.5 + _norm(X - Y) - _norm(X - Z))),
    "poisson_nll": (lambda r: F.poisson_nll_loss(t(X), t(POS), reduction=r),
                    np.exp(X) - POS * X),
    "poisson_nll_full": (
        lambda r: F.poisson_nll_loss(t(POS), t(POS + 0.5), log_input=False, full=True,
                                     reduction=r),
        POS - (POS + 0.5) * np.log(POS + 1e-8) + np.where(
            POS + 0.5 > 1, (POS + 0.5) * np.log(POS + 0.5) - (POS + 0.5)
            + 0.5 * np.log(2 * np.pi * (POS + 0.5)), 0)),
    "gaussian_nll": (lambda r: F.gaussian_nll_loss(t(X), t(Y), t(POS), full=True, reduction=r),
                     0.5 * (np.log(POS) + (X - Y) ** 2 / POS) + 0.5 * math.log(2 * math.pi)),
    "multi_margin": (lambda r: F.multi_margin_loss(t(X), ember.tensor(CLS), 2, 0.7,
                                                   weight=t(POS[0]), reduction=r),
                     _multi_margin(X, CLS, 2, 0.7, POS[0])),
    "multilabel_margin": (lambda r: F.multilabel_margin_loss(t(X), ember.tensor(LABELS),
                                                             reduction=r),
                          _multilabel_margin(X, LABELS)),
    "multilabel_soft_margin": (
        lambda r: F.multilabel_soft_margin_loss(t(X), t(PM > 0), reduction=r),
        -((PM > 0) * -np.log1p(np.exp(-X)) + (PM <= 0) * -np.log1p(np.exp(X))).mean(1)),
}


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_values(case, reduction):
    fn, expected = EXPECTED[case]
    expected = {"none": expected, "sum": expected.sum(), "mean": expected.mean()}[reduction]
    np.testing.assert_allclose(fn(reduction).numpy(), expected, rtol=1e-10, atol=1e-12)


GRAD_CASES = {
    "margin_ranking": (lambda a, b, c: F.margin_ranking_loss(a, b, c, 0.2), (X, Y, PM)),
    "hinge_embedding": (lambda a: F.hinge_embedding_loss(a, t(PM), 0.5), (X,)),
    "soft_margin": (lambda a: F.soft_margin_loss(a, t(PM)), (X,)),
    "cosine_embedding": (lambda a, b: F.cosine_embedding_loss(a, b, t(PM[:, 0]), -0.3), (X, Y)),
    "triplet_margin": (lambda a, b, c: F.triplet_margin_loss(a, b, c, 2.0, p=3, swap=True),
                       (X, Y, Z)),
    "triplet_distance": (lambda a, b, c: F.triplet_margin_with_distance_loss(
        a, b, c, distance_function=lambda u, v: (u - v).pow(2).sum(-1), margin=4.0), (X, Y, Z)),
    "poisson_nll": (lambda a, b: F.poisson_nll_loss(a, b, log_input=False, full=True),
                    (POS, POS + 0.5)),
    "gaussian_nll": (lambda a, b, v: F.gaussian_nll_loss(a, b, v, reduction="sum"),
                     (X, Y, POS)),
    "multi_margin": (lambda a: F.multi_margin_loss(a, ember.tensor(CLS), p=2, margin=0.7,
                                                   weight=t(POS[0])), (X,)),
    "multilabel_margin": (lambda a: F.multilabel_margin_loss(a, ember.tensor(LABELS)), (X,)),
    "multilabel_soft_margin": (lambda a, b: F.multilabel_soft_margin_loss(a, b, t(POS[0])),
                               (X, np.abs(PM) * 0.3)),
}


@pytest.mark.parametrize("case", sorted(GRAD_CASES))
def test_gradients_and_second_gradients(case):
    fn, arrays = GRAD_CASES[case]
    inputs = [t(a, grad=True) for a in arrays]
    assert gradcheck(fn, inputs)
    assert gradgradcheck(fn, inputs)


def test_gaussian_nll_clamp_keeps_gradient():
    # a variance below eps is used as eps, and its gradient is the one at eps
    v = t([1e-9, 2.0], grad=True)
    F.gaussian_nll_loss(t([0.0, 0.0]), t([0.1, 0.1]), v, eps=1e-6, reduction="sum").backward()
    expected = 0.5 / 1e-6 - 0.5 * 0.01 / 1e-12
    assert v.grad[0].item() == pytest.approx(expected)


def test_unbatched_shapes():
    x = t(X[0])
    assert F.multi_margin_loss(x, ember.tensor(2), reduction="none").shape == ()
    assert F.multi_margin_loss(x, ember.tensor([2]), reduction="none").shape == (1,)
    assert F.multilabel_margin_loss(x, ember.tensor(LABELS[0]), reduction="none").shape == ()
    assert F.cosine_embedding_loss(x, x, ember.tensor(1.0), reduction="none").shape == ()
    assert F.triplet_margin_loss(x, x, x, reduction="none").shape == ()


def test_empty_batch_mean_is_nan():
    out = F.multi_margin_loss(ember.zeros(0, 3), ember.zeros(0, dtype=ember.int64))
    assert math.isnan(out.item())


def test_meta_tensors_skip_value_checks():
    x = ember.empty(3, 4, device="meta")
    targets = ember.empty(3, dtype=ember.int64, device="meta")
    assert F.multi_margin_loss(x, targets).device.type == "meta"
    labels = ember.empty(3, 4, dtype=ember.int64, device="meta")
    assert F.multilabel_margin_loss(x, labels, reduction="none").shape == (3,)
    assert F.gaussian_nll_loss(x, x, x).shape == ()


def test_legacy_arguments_warn_and_map():
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        loss = F.soft_margin_loss(t(X), t(PM), size_average=False)
    assert loss.item() == pytest.approx(np.log1p(np.exp(-PM * X)).sum())
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        module = nn.MultiLabelMarginLoss(reduce=False)
    assert module.reduction == "none"


def test_modules_keep_arguments():
    m = nn.TripletMarginLoss(margin=0.5, p=1.0, eps=0.0, swap=True, reduction="sum")
    assert (m.margin, m.p, m.eps, m.swap, m.reduction) == (0.5, 1.0, 0.0, True, "sum")
    m = nn.TripletMarginWithDistanceLoss()
    assert isinstance(m.distance_function, nn.PairwiseDistance)
    assert "distance_function" in dict(m.named_children())
    m = nn.MultiMarginLoss(weight=ember.ones(3))
    assert list(m.state_dict()) == ["weight"]
    m = nn.PoissonNLLLoss(log_input=False, full=True, eps=1e-3)
    assert (m.log_input, m.full, m.eps) == (False, True, 1e-3)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: F.margin_ranking_loss(t(X), t(Y[0]), t(PM)), RuntimeError, "same dimension"),
    (lambda: F.soft_margin_loss(t(X), t(PM, grad=True)), RuntimeError, "not differentiable"),
    (lambda: F.cosine_embedding_loss(t(X), t(Y), t(PM)), RuntimeError, "multi-target"),
    (lambda: F.triplet_margin_loss(t(X), t(Y), t(Z[0])), RuntimeError, "number of dimensions"),
    (lambda: F.triplet_margin_with_distance_loss(t(X), t(Y), t(Z), margin=-1), ValueError,
     "margin must be greater than 0"),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(-POS)), ValueError, "negative entry"),
    (lambda: F.gaussian_nll_loss(t(X), t(Y), t(POS[:2])), ValueError, "incorrect size"),
    (lambda: F.multi_margin_loss(t(X), ember.tensor([0, 1, 2, 5])), RuntimeError,
     "target out of range"),
    (lambda: F.multi_margin_loss(t(X), ember.tensor(CLS), p=3), ValueError, "only p == 1"),
    (lambda: F.multilabel_margin_loss(t(X), ember.tensor(LABELS) + 1), RuntimeError,
     "out of range"),
    (lambda: F.multilabel_margin_loss(t(X), ember.tensor(LABELS[:2])), RuntimeError,
     "inconsistent target size"),
    (lambda: F.multilabel_soft_margin_loss(t(X), t(Y), reduction="avg"), ValueError,
     "avg is not valid"),
    (lambda: F.poisson_nll_loss(t(X), t(Y), reduction="avg"), ValueError,
     "avg is not a valid value for reduction"),
    (lambda: nn.MultiMarginLoss(weight=ember.ones(2, 2)), ValueError, "1D tensor"),
])
def test_errors(call, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(exc, match=match):
            call()
