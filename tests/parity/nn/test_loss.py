"""Loss functions and modules vs PyTorch: values, input and target gradients, errors."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare

DTYPES = [np.float32, np.float64]
REDUCTIONS = ["mean", "sum", "none"]


def rng(seed=0):
    return np.random.default_rng(seed)


def F(lib):
    return lib.nn.functional


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,kw", [("mse_loss", {}), ("l1_loss", {}),
                                     ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                     ("smooth_l1_loss", {"beta": 0.0}),
                                     ("huber_loss", {}), ("huber_loss", {"delta": 0.3})])
def test_regression_losses(name, kw, reduction, dtype):
    r = rng()
    x = r.standard_normal((4, 5)).astype(dtype)
    y = r.standard_normal((4, 5)).astype(dtype)
    compare(lambda lib, a, b: getattr(F(lib), name)(a, b, reduction=reduction, **kw), x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss"])
def test_regression_losses_weighted(name, reduction):
    r = rng(1)
    x, y = r.standard_normal((2, 3, 3)), r.standard_normal((2, 3, 3))
    w = r.random((2, 3, 3))
    compare(lambda lib, a, b: getattr(F(lib), name)(a, b, reduction=reduction,
                                                    weight=lib.tensor(w)), x, y)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"])
@pytest.mark.parametrize("dtypes", [(np.float32, np.float64), (np.float64, np.float32)], ids=str)
def test_regression_losses_of_mixed_dtypes(name, reduction, dtypes):
    # huber_loss keeps the input's dtype (a float64 target is rounded away), the others
    # promote; torch's huber_loss backward refuses mixed dtypes, so only its values compare
    r = rng(2)
    x, y = r.standard_normal((4, 5)).astype(dtypes[0]), r.standard_normal((4, 5)).astype(dtypes[1])
    compare(lambda lib, a, b: getattr(F(lib), name)(a, b, reduction=reduction), x, y,
            grad=name != "huber_loss")


def test_regression_broadcast_warns():
    x, y = rng().standard_normal((3, 1)), rng(1).standard_normal(3)
    with pytest.warns(UserWarning, match="different to the input size"):
        compare(lambda lib, a, b: F(lib).mse_loss(a, b), x, y)


@pytest.mark.parametrize("name,cls,kw", [
    ("mse_loss", "MSELoss", {}), ("l1_loss", "L1Loss", {}),
    ("smooth_l1_loss", "SmoothL1Loss", {"beta": 0.7}), ("huber_loss", "HuberLoss", {"delta": 2.0}),
])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_regression_modules(name, cls, kw, reduction):
    r = rng(2)
    x, y = 2 * r.standard_normal((3, 4)), r.standard_normal((3, 4))
    compare(lambda lib, a, b: getattr(lib.nn, cls)(reduction=reduction, **kw)(a, b), x, y)


# ----------------------------------------------------------------- cross entropy / nll
def _targets(r, shape, n_classes, ignore=None):
    t = r.integers(0, n_classes, size=shape)
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    return t


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5, 4), (3, 4, 2), (2, 3, 2, 3), (4,)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [None, -100, 1])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_indices(shape, reduction, dtype, weighted, ignore, smoothing):
    r = rng(3)
    x = r.standard_normal(shape).astype(dtype)
    c = shape[1] if len(shape) > 1 else shape[0]
    tshape = (shape[0],) + shape[2:] if len(shape) > 1 else ()
    t = _targets(r, tshape, c, ignore if tshape else None)
    w = r.random(c).astype(dtype) + 0.1
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    if ignore is not None:
        kw["ignore_index"] = ignore

    def fn(lib, a):
        weight = lib.tensor(w) if weighted else None
        return F(lib).cross_entropy(a, lib.tensor(t), weight=weight, **kw)
    compare(fn, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
def test_cross_entropy_probabilities(shape, reduction, dtype, weighted, smoothing):
    r = rng(4)
    x = r.standard_normal(shape).astype(dtype)
    p = r.random(shape).astype(dtype)
    p = p / p.sum(1, keepdims=True)
    w = (r.random(shape[1]) + 0.5).astype(dtype)

    def fn(lib, a, b):
        weight = lib.tensor(w) if weighted else None
        return F(lib).cross_entropy(a, b, weight=weight, reduction=reduction,
                                    label_smoothing=smoothing)
    compare(fn, x, p)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("shape", [(5, 4), (2, 3, 4), (2, 3, 2, 2)])
def test_nll_loss(shape, reduction, weighted):
    r = rng(5)
    x = r.standard_normal(shape)
    t = _targets(r, (shape[0],) + shape[2:], shape[1], ignore=2)
    w = r.random(shape[1]) + 0.1

    def fn(lib, a):
        weight = lib.tensor(w) if weighted else None
        return F(lib).nll_loss(a, lib.tensor(t), weight=weight, ignore_index=2,
                               reduction=reduction)
    compare(fn, x)


def test_cross_entropy_all_ignored_is_nan():
    x = rng().standard_normal((3, 4))
    compare(lambda lib, a: F(lib).cross_entropy(a, lib.tensor([-100, -100, -100])), x, grad=False)


def test_cross_entropy_uint8_target():
    x = rng().standard_normal((3, 4))
    compare(lambda lib, a: F(lib).cross_entropy(a, lib.tensor(np.array([0, 3, 1], np.uint8))), x)


def test_cross_entropy_second_derivative():
    x = rng(7).standard_normal((3, 4))
    t = np.array([0, 2, 3])
    out = {}
    for lib in (torch, ember):
        a = lib.tensor(x, requires_grad=True)
        loss = F(lib).cross_entropy(a, lib.tensor(t), label_smoothing=0.1)
        g, = lib.autograd.grad(loss, a, create_graph=True)
        (g ** 2).sum().backward()
        out[lib] = a.grad.numpy()
    np.testing.assert_allclose(out[ember], out[torch], rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_cross_entropy_module(reduction):
    r = rng(8)
    x = r.standard_normal((4, 3))
    t = np.array([0, 2, 1, 2])
    w = r.random(3)

    def fn(lib, a):
        m = lib.nn.CrossEntropyLoss(weight=lib.tensor(w), ignore_index=1, reduction=reduction,
                                    label_smoothing=0.05)
        return m(a, lib.tensor(t))
    compare(fn, x)
    compare(lambda lib, a: lib.nn.NLLLoss(reduction=reduction)(a, lib.tensor(t)), x)


# ----------------------------------------------------------------- binary cross entropy
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_bce(dtype, reduction, weighted):
    r = rng(9)
    x = (r.random((4, 3)) * 0.9 + 0.05).astype(dtype)
    y = r.random((4, 3)).astype(dtype)
    w = r.random(3).astype(dtype)

    def fn(lib, a, b):
        weight = lib.tensor(w) if weighted else None
        return F(lib).binary_cross_entropy(a, b, weight=weight, reduction=reduction)
    compare(fn, x, y)
    compare(lambda lib, a, b: lib.nn.BCELoss(weight=lib.tensor(w) if weighted else None,
                                             reduction=reduction)(a, b), x, y)


def test_bce_clamps_log():
    x = np.array([0.0, 1.0, 0.5, 1e-60], dtype=np.float64)
    y = np.array([1.0, 0.0, 0.5, 1.0])
    compare(lambda lib, a, b: F(lib).binary_cross_entropy(a, b, reduction="none"), x, y,
            grad=False)
    compare(lambda lib, a: F(lib).binary_cross_entropy(a, lib.tensor(y), reduction="sum"),
            np.array([0.0, 1.0, 0.3, 1e-60]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pos", [False, True])
def test_bce_with_logits(dtype, reduction, weighted, pos):
    r = rng(10)
    x = (4 * r.standard_normal((4, 3))).astype(dtype)
    x[0, 0], x[0, 1] = 80.0, -80.0  # large logits stay finite
    y = r.random((4, 3)).astype(dtype)
    w = r.random(3).astype(dtype)
    pw = (r.random(3) * 3).astype(dtype)

    def fn(lib, a, b):
        return F(lib).binary_cross_entropy_with_logits(
            a, b, weight=lib.tensor(w) if weighted else None,
            pos_weight=lib.tensor(pw) if pos else None, reduction=reduction)
    compare(fn, x, y)
    compare(lambda lib, a, b: lib.nn.BCEWithLogitsLoss(
        weight=lib.tensor(w) if weighted else None, pos_weight=lib.tensor(pw) if pos else None,
        reduction=reduction)(a, b), x, y)


# ----------------------------------------------------------------- kl_div
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(dtype, reduction, log_target):
    r = rng(11)
    x = np.log(r.random((3, 4)) + 0.1).astype(dtype)
    y = r.random((3, 4)).astype(dtype) + 0.05
    if log_target:
        y = np.log(y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compare(lambda lib, a, b: F(lib).kl_div(a, b, reduction=reduction,
                                                log_target=log_target), x, y)
        compare(lambda lib, a, b: lib.nn.KLDivLoss(reduction=reduction,
                                                   log_target=log_target)(a, b), x, y)


def test_kl_div_zero_target():
    x = np.log(np.array([[0.2, 0.3, 0.5]]))
    y = np.array([[0.0, 0.4, 0.6]])
    compare(lambda lib, a: F(lib).kl_div(a, lib.tensor(y), reduction="batchmean"), x)


def test_kl_div_mean_warns():
    with pytest.warns(UserWarning, match="batchmean"):
        ember.nn.functional.kl_div(ember.zeros(2), ember.ones(2))


# ----------------------------------------------------------------- errors, modules
def _error(fn):
    out = []
    for lib in (torch, ember):
        with pytest.raises(Exception) as info:
            fn(lib)
        out.append((type(info.value).__name__, str(info.value).replace("torch.", "ember.")))
    return out


@pytest.mark.parametrize("case", [
    lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), lib.tensor([0, 1])),
    lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), lib.tensor([0, 1, 7])),
    lambda lib: F(lib).nll_loss(lib.zeros(3, 4), lib.tensor([0, -3, 1])),
    lambda lib: F(lib).cross_entropy(lib.zeros(2, 3, 4), lib.tensor([[0, 1, 2], [0, 1, 2]])),
    lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), lib.tensor([0.0, 1.0, 2.0])),
    lambda lib: F(lib).nll_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2], dtype=lib.int32)),
    lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), lib.tensor([0, 1, 2]), reduction="foo"),
    lambda lib: F(lib).nll_loss(lib.zeros(3, 4, 5, 6), lib.tensor([0, 1, 2])),
    lambda lib: F(lib).nll_loss(lib.zeros(3, 4), lib.tensor([0, 1, 2]), weight=lib.ones(3)),
    lambda lib: F(lib).nll_loss(lib.tensor(1.0), lib.tensor(0)),
    lambda lib: F(lib).cross_entropy(lib.zeros(3, 4), lib.tensor([0, 1, 2]),
                                     label_smoothing=1.5),
    lambda lib: F(lib).binary_cross_entropy(lib.rand(3), lib.rand(4)),
    lambda lib: F(lib).binary_cross_entropy(lib.ones(3) + 1, lib.rand(3)),
    lambda lib: F(lib).binary_cross_entropy_with_logits(lib.rand(3), lib.rand(4)),
    lambda lib: F(lib).smooth_l1_loss(lib.rand(3), lib.rand(3), beta=-1.0),
    lambda lib: F(lib).huber_loss(lib.rand(3), lib.rand(3), delta=0.0),
    lambda lib: F(lib).mse_loss(lib.rand(3), lib.rand(3), weight=lib.rand(2)),
])
def test_errors_match(case):
    t, e = _error(case)
    assert e == t


def test_module_repr_and_buffers():
    for name in ["MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "KLDivLoss",
                 "BCEWithLogitsLoss", "SmoothL1Loss", "HuberLoss"]:
        assert repr(getattr(ember.nn, name)()) == repr(getattr(torch.nn, name)())
    e = ember.nn.CrossEntropyLoss(weight=ember.ones(3))
    t = torch.nn.CrossEntropyLoss(weight=torch.ones(3))
    assert list(e.state_dict()) == list(t.state_dict())
    e = ember.nn.BCEWithLogitsLoss(pos_weight=ember.ones(3))
    t = torch.nn.BCEWithLogitsLoss(pos_weight=torch.ones(3))
    assert list(e.state_dict()) == list(t.state_dict())
    with pytest.warns(UserWarning):
        assert ember.nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert ember.nn.L1Loss(reduce=False).reduction == "none"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("classes", [5003, 10000])
def test_cross_entropy_language_model_logits(classes, dtype):
    """(tokens, vocabulary) logits large enough for log_softmax's row blocks (and, float32,
    the compiled rows): loss and logits gradient, with a NaN row and an -inf logit in the
    way as PyTorch computes them."""
    r = rng(11)
    x = (r.standard_normal((150, classes)) * 4).astype(dtype)
    x[7, 3] = -np.inf
    t = r.integers(0, classes, 150)
    compare(lambda lib, a: F(lib).cross_entropy(a, lib.tensor(t)), x)
    compare(lambda lib, a: F(lib).log_softmax(a, 1) * lib.tensor(x[::-1].copy()).clamp(-1, 1),
            x)
    x[9, 0] = np.nan
    compare(lambda lib, a: F(lib).log_softmax(a, 1), x, grad=False)
