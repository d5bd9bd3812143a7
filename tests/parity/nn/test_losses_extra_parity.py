"""Margin, embedding, triplet, Poisson/Gaussian NLL and multi-class/multi-label losses vs
PyTorch: values and gradients (every reduction, float32 and float64), broadcasting, the
deprecated size_average/reduce, the modules and their errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]
REDUCTIONS = ["mean", "sum", "none"]


def F(lib):
    return lib.nn.functional


def rng(seed=0):
    return np.random.default_rng(seed)


def signs(r, shape, dtype=np.float64):
    return r.choice([-1.0, 1.0], size=shape).astype(dtype)


# ------------------------------------------------------------------------ values + grads
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_margin_ranking_loss(reduction, dtype):
    r = rng(1)
    a, b = r.standard_normal(6).astype(dtype), r.standard_normal(6).astype(dtype)
    y = signs(r, 6, dtype)
    compare(lambda lib, x1, x2, t: F(lib).margin_ranking_loss(x1, x2, t, margin=0.3,
                                                              reduction=reduction), a, b, y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_hinge_embedding_loss(reduction, dtype):
    r = rng(2)
    x = r.standard_normal((3, 4)).astype(dtype)
    y = signs(r, (3, 4), dtype)
    y[0, 0] = 0.5  # neither 1 nor -1: both terms count
    compare(lambda lib, a, t: F(lib).hinge_embedding_loss(a, t, margin=0.7, reduction=reduction),
            x, y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(reduction, dtype):
    r = rng(3)
    x, y = 3 * r.standard_normal((3, 4)).astype(dtype), signs(r, (3, 4), dtype)
    compare(lambda lib, a: F(lib).soft_margin_loss(a, lib.tensor(y), reduction=reduction), x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss(reduction, dtype):
    r = rng(4)
    a, b = r.standard_normal((5, 3)).astype(dtype), r.standard_normal((5, 3)).astype(dtype)
    y = np.array([1.0, -1.0, 1.0, -1.0, 0.0], dtype)
    compare(lambda lib, x1, x2, t: F(lib).cosine_embedding_loss(x1, x2, t, margin=-0.2,
                                                                reduction=reduction), a, b, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cosine_embedding_loss_unbatched_and_broadcast(reduction):
    r = rng(5)
    a, b = r.standard_normal(4), r.standard_normal(4)
    compare(lambda lib, x1, x2: F(lib).cosine_embedding_loss(x1, x2, lib.tensor(-1.0),
                                                             reduction=reduction), a, b)
    a, b = r.standard_normal((3, 4)), r.standard_normal((1, 4))
    compare(lambda lib, x1, x2: F(lib).cosine_embedding_loss(
        x1, x2, lib.tensor([1.0, -1.0, 1.0]), reduction=reduction), a, b)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,swap", [(2, False), (1, True), (3.0, False)])
def test_triplet_margin_loss(p, swap, reduction, dtype):
    r = rng(6)
    a, pos, neg = (r.standard_normal((4, 5)).astype(dtype) for _ in range(3))
    compare(lambda lib, x, y, z: F(lib).triplet_margin_loss(x, y, z, margin=2.0, p=p, swap=swap,
                                                            reduction=reduction), a, pos, neg)


@pytest.mark.parametrize("shapes", [((5,), (5,), (5,)), ((2, 3, 4),) * 3,
                                    ((3, 4), (1, 4), (3, 4))], ids=str)
def test_triplet_margin_loss_shapes(shapes):
    r = rng(7)
    arrays = [r.standard_normal(s) for s in shapes]
    compare(lambda lib, x, y, z: F(lib).triplet_margin_loss(x, y, z, reduction="none"), *arrays)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("dist", ["default", "cosine"])
def test_triplet_margin_with_distance_loss(dist, reduction, dtype):
    r = rng(8)
    a, pos, neg = (r.standard_normal((4, 5)).astype(dtype) for _ in range(3))

    def fn(lib, x, y, z):
        d = None if dist == "default" else (lambda u, v: 1.0 - F(lib).cosine_similarity(u, v))
        return F(lib).triplet_margin_with_distance_loss(x, y, z, distance_function=d,
                                                        margin=1.5, swap=True,
                                                        reduction=reduction)
    compare(fn, a, pos, neg)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input,full", [(True, False), (False, False), (True, True),
                                            (False, True)])
def test_poisson_nll_loss(log_input, full, reduction, dtype):
    r = rng(9)
    x = (r.standard_normal((3, 4)) if log_input else r.uniform(0.1, 3, (3, 4))).astype(dtype)
    y = r.uniform(0.2, 4, (3, 4)).astype(dtype)
    compare(lambda lib, a, t: F(lib).poisson_nll_loss(a, t, log_input=log_input, full=full,
                                                      reduction=reduction), x, y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("var_shape", [(3, 4), (3,), (3, 1), (1, 4)], ids=str)
def test_gaussian_nll_loss(var_shape, reduction, dtype):
    r = rng(10)
    x, y = r.standard_normal((3, 4)).astype(dtype), r.standard_normal((3, 4)).astype(dtype)
    v = r.uniform(1e-7, 2, var_shape).astype(dtype)
    v.reshape(-1)[0] = 1e-8  # below eps: clamped, the gradient still flows
    compare(lambda lib, a, t, s: F(lib).gaussian_nll_loss(a, t, s, reduction=reduction), x, y, v)


@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss_float_var_and_full(full):
    r = rng(11)
    x, y = r.standard_normal((3, 4)), r.standard_normal((3, 1))
    compare(lambda lib, a, t: F(lib).gaussian_nll_loss(a, t, 0.5, full=full, eps=1e-3), x, y)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p,weighted", [(1, False), (2, False), (1, True), (2, True)])
def test_multi_margin_loss(p, weighted, reduction, dtype):
    r = rng(12)
    x = r.standard_normal((5, 4)).astype(dtype)
    t = np.array([0, 3, 1, 2, 3])
    w = r.uniform(0.5, 2, 4).astype(dtype)
    compare(lambda lib, a: F(lib).multi_margin_loss(
        a, lib.tensor(t), p=p, margin=0.8, weight=lib.tensor(w) if weighted else None,
        reduction=reduction), x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("target", [np.array(2), np.array([2])], ids=["0d", "1d"])
def test_multi_margin_loss_unbatched(target, reduction):
    x = rng(13).standard_normal(4)
    compare(lambda lib, a: F(lib).multi_margin_loss(a, lib.tensor(target), reduction=reduction),
            x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction, dtype):
    r = rng(14)
    x = r.standard_normal((4, 5)).astype(dtype)
    t = np.array([[3, 0, -1, 1, 2], [1, 1, 4, 0, -1], [-1, 2, 3, 0, 0], [0, 1, 2, 3, 4]])
    compare(lambda lib, a: F(lib).multilabel_margin_loss(a, lib.tensor(t), reduction=reduction),
            x)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss_unbatched(reduction):
    x = rng(15).standard_normal(4)
    compare(lambda lib, a: F(lib).multilabel_margin_loss(a, lib.tensor([3, 0, -1, 1]),
                                                         reduction=reduction), x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape,weighted", [((3, 4), False), ((3, 4), True), ((4,), False),
                                            ((2, 3, 4), True)], ids=str)
def test_multilabel_soft_margin_loss(shape, weighted, reduction, dtype):
    r = rng(16)
    x = r.standard_normal(shape).astype(dtype)
    y = r.integers(0, 2, shape).astype(dtype)
    w = r.uniform(0.5, 2, shape[-1]).astype(dtype)
    compare(lambda lib, a, t: F(lib).multilabel_soft_margin_loss(
        a, t, weight=lib.tensor(w) if weighted else None, reduction=reduction), x, y)


# ---------------------------------------------------------- broadcasting, noncontiguous
@pytest.mark.parametrize("case", [
    ("margin_ranking_loss", [(3, 1), (1, 4), (3, 4)]),
    ("hinge_embedding_loss", [(3, 1), (4,)]),
    ("soft_margin_loss", [(3, 4), (4,)]),
    ("poisson_nll_loss", [(3, 1), (4,)]),
    ("multilabel_soft_margin_loss", [(3, 4), (4,)]),
], ids=lambda c: c[0])
def test_broadcasting(case):
    name, shapes = case
    r = rng(17)
    arrays = [r.standard_normal(s) for s in shapes]
    arrays[-1] = np.sign(arrays[-1])
    if name == "soft_margin_loss":  # its target cannot require grad
        y = arrays.pop()
        compare(lambda lib, a: F(lib).soft_margin_loss(a, lib.tensor(y), reduction="none"),
                *arrays)
        return
    compare(lambda lib, *ts: getattr(F(lib), name)(*ts, reduction="none"), *arrays)


@pytest.mark.parametrize("name", ["margin_ranking_loss", "cosine_embedding_loss",
                                  "triplet_margin_loss"])
def test_noncontiguous(name):
    r = rng(18)
    a, b = r.standard_normal((4, 3)), r.standard_normal((4, 3))
    if name == "triplet_margin_loss":
        c = r.standard_normal((4, 3))
        compare(lambda lib, x, y, z: F(lib).triplet_margin_loss(x, y, z), a, b, c,
                noncontiguous=True)
        return
    t = np.sign(r.standard_normal(4 if name == "cosine_embedding_loss" else (4, 3)))
    compare(lambda lib, x, y: getattr(F(lib), name)(x, y, lib.tensor(t)), a, b,
            noncontiguous=True)


def test_integer_targets_promote():
    r = rng(19)
    a, b = r.standard_normal(4).astype(np.float32), r.standard_normal(4).astype(np.float32)
    t = np.array([1, -1, 1, -1])
    compare(lambda lib, x1, x2: F(lib).margin_ranking_loss(x1, x2, lib.tensor(t)), a, b)
    compare(lambda lib, x: F(lib).hinge_embedding_loss(x, lib.tensor(t)), a)
    compare(lambda lib, x: F(lib).soft_margin_loss(x, lib.tensor(t)), a)


def test_empty_batches():
    x = np.zeros((0, 4))
    t = np.zeros(0, np.int64)
    for reduction in ("none", "sum"):  # PyTorch's mean of no samples reads uninitialized memory
        compare(lambda lib, a: F(lib).multi_margin_loss(a, lib.tensor(t), reduction=reduction),
                x)
        compare(lambda lib, a: F(lib).multilabel_margin_loss(
            a, lib.tensor(np.zeros((0, 4), np.int64)), reduction=reduction), x)


# ---------------------------------------------------------------------- double backward
def test_double_backward():
    r = rng(20)
    a, b = r.standard_normal((3, 4)), r.standard_normal((3, 4))

    def fn(lib, x, y):
        loss = F(lib).cosine_embedding_loss(x, y, lib.tensor([1.0, -1.0, 1.0]), margin=-0.5)
        loss = loss + F(lib).triplet_margin_loss(x, y, x.flip(0), swap=True) ** 2
        loss = loss + F(lib).poisson_nll_loss(x, y.abs(), full=True)
        (g,) = lib.autograd.grad(loss, x, create_graph=True)
        return (g * g).sum()
    compare(fn, a, b)


# ---------------------------------------------------------------- deprecated arguments
@pytest.mark.parametrize("size_average,reduce", [(False, None), (None, False), (True, True)])
def test_legacy_size_average_reduce(size_average, reduce):
    r = rng(21)
    x, y = r.standard_normal((3, 4)), np.sign(r.standard_normal((3, 4)))
    kw = dict(size_average=size_average, reduce=reduce)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compare(lambda lib, a: F(lib).hinge_embedding_loss(a, lib.tensor(y), **kw), x)
        compare(lambda lib, a: F(lib).multilabel_soft_margin_loss(a, lib.tensor(y), **kw), x)
        compare(lambda lib, a: F(lib).multi_margin_loss(a, lib.tensor([0, 1, 3]), **kw), x)
        compare(lambda lib, a: lib.nn.SoftMarginLoss(**kw)(a, lib.tensor(y)), x)
    messages = [str(w.message) for w in caught]
    assert any("size_average and reduce args will be deprecated" in m for m in messages)


# ---------------------------------------------------------------------------- modules
MODULES = [
    ("MarginRankingLoss", dict(margin=0.2), 3),
    ("HingeEmbeddingLoss", dict(margin=0.5), 2),
    ("SoftMarginLoss", {}, 2),
    ("CosineEmbeddingLoss", dict(margin=0.1), 3),
    ("TripletMarginLoss", dict(margin=0.5, p=1.0, swap=True), 3),
    ("TripletMarginWithDistanceLoss", dict(margin=0.5, swap=True), 3),
    ("PoissonNLLLoss", dict(log_input=False, full=True), 2),
    ("GaussianNLLLoss", dict(full=True, eps=1e-4), 3),
    ("MultiMarginLoss", dict(p=2, margin=0.5), 2),
    ("MultiLabelMarginLoss", {}, 2),
    ("MultiLabelSoftMarginLoss", {}, 2),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw,nargs", MODULES, ids=[m[0] for m in MODULES])
def test_modules(name, kw, nargs, reduction):
    r = rng(22)
    x = r.uniform(0.1, 2, (3, 4))
    pm = np.sign(r.standard_normal((3, 4)))
    consts = {
        "MarginRankingLoss": [pm], "HingeEmbeddingLoss": [pm], "SoftMarginLoss": [pm],
        "CosineEmbeddingLoss": [pm[:, 0]], "MultiMarginLoss": [np.array([0, 3, 1])],
        "MultiLabelMarginLoss": [np.array([[1, 0, -1, 3]] * 3)],
        "MultiLabelSoftMarginLoss": [(pm > 0).astype(np.float64)],
    }.get(name)
    arrays = [x] + [r.uniform(0.1, 2, (3, 4)) for _ in range(nargs - 1 - len(consts or []))]

    def fn(lib, *ts):
        module = getattr(lib.nn, name)(reduction=reduction, **kw)
        return module(*ts, *[lib.tensor(c) for c in consts or []])
    compare(fn, *arrays)


def test_module_reprs_and_state():
    for name, kw, _ in MODULES:
        assert repr(getattr(ember.nn, name)(**kw)) == repr(getattr(torch.nn, name)(**kw))
    w = [1.0, 2.0, 3.0]
    for name in ("MultiMarginLoss", "MultiLabelSoftMarginLoss"):
        e, t = getattr(ember.nn, name)(weight=ember.tensor(w)), getattr(torch.nn, name)(
            weight=torch.tensor(w))
        assert list(e.state_dict()) == list(t.state_dict()) == ["weight"]
    e, t = ember.nn.MarginRankingLoss(0.3, reduction="sum"), torch.nn.MarginRankingLoss(0.3,
                                                                                        reduction="sum")
    assert (e.margin, e.reduction) == (t.margin, t.reduction)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.MultiMarginLoss(p=3),
    lambda lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)),
    lambda lib: lib.nn.TripletMarginLoss(margin=0),
    lambda lib: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0),
])
def test_module_constructor_errors(make):
    assert error_of(lambda: make(ember)) == error_of(lambda: make(torch))


# ----------------------------------------------------------------------------- errors
def _r(lib, *shape):
    return lib.tensor(rng(23).standard_normal(shape))


def _long(lib, values):
    return lib.tensor(values)


ERRORS = {
    "mrl dims": lambda lib: F(lib).margin_ranking_loss(_r(lib, 3), _r(lib, 3, 1), _r(lib, 3)),
    "mrl sizes": lambda lib: F(lib).margin_ranking_loss(_r(lib, 3), _r(lib, 4), _r(lib, 3)),
    "mrl reduction": lambda lib: F(lib).margin_ranking_loss(_r(lib, 3), _r(lib, 3), _r(lib, 3),
                                                            reduction="foo"),
    "hel sizes": lambda lib: F(lib).hinge_embedding_loss(_r(lib, 3), _r(lib, 4)),
    "sml sizes": lambda lib: F(lib).soft_margin_loss(_r(lib, 3), _r(lib, 4)),
    "sml target wider": lambda lib: F(lib).soft_margin_loss(_r(lib, 3, 1), _r(lib, 4)),
    "sml target grad": lambda lib: F(lib).soft_margin_loss(
        _r(lib, 3), _r(lib, 3).requires_grad_()),
    "cel 2d target": lambda lib: F(lib).cosine_embedding_loss(_r(lib, 3, 5), _r(lib, 3, 5),
                                                              lib.ones(3, 1)),
    "cel 1d target 1d input": lambda lib: F(lib).cosine_embedding_loss(_r(lib, 5), _r(lib, 5),
                                                                       lib.ones(1)),
    "cel 0d target 2d input": lambda lib: F(lib).cosine_embedding_loss(
        _r(lib, 2, 5), _r(lib, 2, 5), lib.tensor(1.0)),
    "cel sizes": lambda lib: F(lib).cosine_embedding_loss(_r(lib, 3, 5), _r(lib, 3, 4),
                                                          lib.ones(3)),
    "cel batch": lambda lib: F(lib).cosine_embedding_loss(_r(lib, 3, 5), _r(lib, 3, 5),
                                                          lib.ones(4)),
    "tml dims": lambda lib: F(lib).triplet_margin_loss(_r(lib, 3, 5), _r(lib, 3, 5), _r(lib, 5)),
    "tmwd margin": lambda lib: F(lib).triplet_margin_with_distance_loss(
        _r(lib, 3, 5), _r(lib, 3, 5), _r(lib, 3, 5), margin=0),
    "tmwd dims": lambda lib: F(lib).triplet_margin_with_distance_loss(
        _r(lib, 3, 5), _r(lib, 3), _r(lib, 3, 5)),
    "tmwd reduction": lambda lib: F(lib).triplet_margin_with_distance_loss(
        _r(lib, 3, 5), _r(lib, 3, 5), _r(lib, 3, 5), reduction="x"),
    "pnll sizes": lambda lib: F(lib).poisson_nll_loss(_r(lib, 3), _r(lib, 4)),
    "pnll reduction": lambda lib: F(lib).poisson_nll_loss(_r(lib, 3), _r(lib, 3),
                                                          reduction="x"),
    "gnll negative var": lambda lib: F(lib).gaussian_nll_loss(_r(lib, 3, 2), _r(lib, 3, 2),
                                                              -lib.ones(3, 2)),
    "gnll negative float var": lambda lib: F(lib).gaussian_nll_loss(_r(lib, 3), _r(lib, 3),
                                                                    -1.0),
    "gnll int var": lambda lib: F(lib).gaussian_nll_loss(_r(lib, 3), _r(lib, 3), 1),
    "gnll var size": lambda lib: F(lib).gaussian_nll_loss(_r(lib, 3, 2), _r(lib, 3, 2),
                                                          lib.ones(4)),
    "gnll var two dims": lambda lib: F(lib).gaussian_nll_loss(_r(lib, 3, 2), _r(lib, 3, 2),
                                                              lib.ones(1, 1)),
    "gnll reduction": lambda lib: F(lib).gaussian_nll_loss(_r(lib, 3), _r(lib, 3), 0.5,
                                                           reduction="x"),
    "mml p": lambda lib: F(lib).multi_margin_loss(_r(lib, 3, 4), _long(lib, [0, 1, 2]), p=3),
    "mml weight dims": lambda lib: F(lib).multi_margin_loss(
        _r(lib, 3, 4), _long(lib, [0, 1, 2]), weight=lib.ones(2, 2)),
    "mml weight size": lambda lib: F(lib).multi_margin_loss(
        _r(lib, 3, 4), _long(lib, [0, 1, 2]), weight=lib.ones(3)),
    "mml target range": lambda lib: F(lib).multi_margin_loss(_r(lib, 3, 4),
                                                             _long(lib, [0, 1, 4])),
    "mml target negative": lambda lib: F(lib).multi_margin_loss(_r(lib, 3, 4),
                                                                _long(lib, [0, -1, 1])),
    "mml target size": lambda lib: F(lib).multi_margin_loss(_r(lib, 3, 4), _long(lib, [0, 1])),
    "mml target size 1d": lambda lib: F(lib).multi_margin_loss(_r(lib, 4), _long(lib, [0, 1])),
    "mml 3d": lambda lib: F(lib).multi_margin_loss(_r(lib, 3, 4, 2), _long(lib, [0, 1, 1])),
    "mml no classes": lambda lib: F(lib).multi_margin_loss(_r(lib, 3, 0), _long(lib, [0, 1, 1])),
    "mml float target": lambda lib: F(lib).multi_margin_loss(_r(lib, 3, 4),
                                                             lib.tensor([0.0, 1.0, 2.0])),
    "mml int32 target": lambda lib: F(lib).multi_margin_loss(
        _r(lib, 3, 4), lib.tensor([0, 1, 2], dtype=lib.int32)),
    "mlml target shape": lambda lib: F(lib).multilabel_margin_loss(
        _r(lib, 3, 4), _long(lib, [[0, 1, -1, 0]] * 2)),
    "mlml target shape 1d": lambda lib: F(lib).multilabel_margin_loss(
        _r(lib, 4), _long(lib, [0, 1, -1])),
    "mlml range": lambda lib: F(lib).multilabel_margin_loss(_r(lib, 3, 4),
                                                            _long(lib, [[0, 4, -1, 0]] * 3)),
    "mlml range after end": lambda lib: F(lib).multilabel_margin_loss(
        _r(lib, 1, 4), _long(lib, [[0, -1, 5, 0]])),
    "mlml below -1": lambda lib: F(lib).multilabel_margin_loss(_r(lib, 3, 4),
                                                               _long(lib, [[0, -2, -1, 0]] * 3)),
    "mlml float target": lambda lib: F(lib).multilabel_margin_loss(
        _r(lib, 3, 4), lib.tensor([[0.0, 1, -1, 0]] * 3)),
    "mlml 3d": lambda lib: F(lib).multilabel_margin_loss(
        _r(lib, 2, 3, 4), lib.zeros(2, 3, 4, dtype=lib.int64)),
    "mlsml reduction": lambda lib: F(lib).multilabel_soft_margin_loss(_r(lib, 3, 4),
                                                                      _r(lib, 3, 4),
                                                                      reduction="x"),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = error_of(lambda: ERRORS[name](torch))
        got = error_of(lambda: ERRORS[name](ember))
    assert expected is not None
    assert got == (expected[0], expected[1].replace("torch.Size", "ember.Size"))
