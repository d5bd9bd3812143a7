"""F.linear_cross_entropy / nn.LinearCrossEntropyLoss and the legacy layers (CrossMapLRN2d,
NLLLoss2d, Container) against PyTorch: values, gradients, errors and warnings."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of

DTYPES = [np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_linear_cross_entropy_class_indices(dtype, reduction):
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((6, 4), (5, 4), (5,)))
    cw = rng.random(5).astype(dtype) + 0.5
    target = np.array([0, 4, 2, 1, 3, 2])

    def fn(lib, x, w, b, cw):
        t = lib.tensor(target)
        return lib.nn.functional.linear_cross_entropy(
            x, w, t, linear_bias=b, weight=cw.detach(), reduction=reduction,
            label_smoothing=0.1)
    compare(fn, x, w, b, cw)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_cross_entropy_ignore_index_unbatched_and_probabilities(dtype):
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((6, 4)).astype(dtype), rng.standard_normal((5, 4)).astype(dtype)
    target = np.array([0, 4, -1, 1, -1, 2])
    compare(lambda lib, x, w: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor(target), ignore_index=-1), x, w)
    compare(lambda lib, x, w: lib.nn.functional.linear_cross_entropy(
        x[0], w, lib.tensor(3)), x, w)
    probs = rng.random((6, 5)).astype(dtype)
    probs /= probs.sum(1, keepdims=True)
    compare(lambda lib, x, w, p: lib.nn.functional.linear_cross_entropy(x, w, p.detach()),
            x, w, probs)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_cross_entropy_k_dimensional(dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 4)).astype(dtype)
    w = rng.standard_normal((5, 2, 3, 4)).astype(dtype)
    b = rng.standard_normal((5, 2, 3)).astype(dtype)
    target = rng.integers(0, 5, (3, 2, 3))
    compare(lambda lib, x, w, b: lib.nn.functional.linear_cross_entropy(
        x, w, lib.tensor(target), linear_bias=b, reduction="none"), x, w, b)


def test_linear_cross_entropy_errors():
    def cases(lib):
        F = lib.nn.functional
        x, w, t = lib.ones(2, 3), lib.ones(4, 3), lib.tensor([0, 1])
        return [lambda: F.linear_cross_entropy(lib.ones(1, 2, 3), w, t),
                lambda: F.linear_cross_entropy(x, lib.ones(3), t),
                lambda: F.linear_cross_entropy(x, lib.ones(4, 2), t),
                lambda: F.linear_cross_entropy(x, w, t, linear_bias=lib.ones(3)),
                lambda: F.linear_cross_entropy(x[0], lib.ones(4, 2, 3), t),
                lambda: F.linear_cross_entropy(x, w, lib.ones(2, 4), ignore_index=1)]
    for t_case, e_case in zip(cases(torch), cases(ember)):
        assert error_of(e_case) == error_of(t_case)


@pytest.mark.parametrize("bias", [False, True])
def test_linear_cross_entropy_loss_module(bias):
    torch.manual_seed(0)
    t_loss = torch.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=bias,
                                             label_smoothing=0.2)
    e_loss = ember.nn.LinearCrossEntropyLoss(4, 3, out_features=(2,), bias=bias,
                                             label_smoothing=0.2)
    e_loss.load_state_dict({k: ember.tensor(v.numpy()) for k, v in t_loss.state_dict().items()})
    assert repr(e_loss) == repr(t_loss)
    x = np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32)
    target = np.random.default_rng(4).integers(0, 3, (5, 2))
    t_out = t_loss(torch.tensor(x), torch.tensor(target))
    e_out = e_loss(ember.tensor(x), ember.tensor(target))
    np.testing.assert_allclose(e_out.item(), t_out.item(), rtol=1e-5)
    t_out.backward()
    e_out.backward()
    np.testing.assert_allclose(e_loss.linear.weight.grad.numpy(),
                               t_loss.linear.weight.grad.numpy(), rtol=1e-4, atol=1e-6)
    for lib in (torch, ember):
        assert error_of(lambda: lib.nn.LinearCrossEntropyLoss(
            4, 3, weight=lib.ones(2)))[1] == "expected weight shape to be (3,), got (2,)"
        assert "label_smoothing" in error_of(
            lambda: lib.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=2.0))[1]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("size,channels", [(2, 5), (3, 4), (5, 7), (5, 3), (6, 8),
                                           (4, 2)])
def test_cross_map_lrn2d(dtype, size, channels):
    x = np.random.default_rng(size * 10 + channels).standard_normal((2, channels, 3, 2))
    compare(lambda lib, x: lib.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=1.5)(x),
            x.astype(dtype))


def test_cross_map_lrn2d_size_one_backward_fails_as_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 2, 2))
    compare(lambda lib, x: lib.nn.CrossMapLRN2d(1)(x), x, grad=False)
    errors = []
    for lib in (torch, ember):
        y = lib.nn.CrossMapLRN2d(1)(lib.tensor(x, requires_grad=True))
        errors.append(error_of(lambda: y.sum().backward()))
    assert errors[1] == errors[0] and errors[0] is not None


def test_cross_map_lrn2d_repr_and_errors():
    assert repr(ember.nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))
    for lib in (torch, ember):
        assert error_of(lambda: lib.nn.CrossMapLRN2d(3)(lib.ones(2, 3, 4))) == (
            "ValueError", "CrossMapLRN2d: Expected input to be 4D, got 3D instead.")


def test_deprecated_nllloss2d_and_container():
    x = np.random.default_rng(5).standard_normal((2, 3, 4, 4)).astype(np.float32)
    t = np.random.default_rng(6).integers(0, 3, (2, 4, 4))
    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            loss = lib.nn.NLLLoss2d()(lib.tensor(x).log_softmax(1), lib.tensor(t))
            box = lib.nn.Container(fc=lib.nn.Linear(2, 2))
        results.append((loss.item(), [(w.category, str(w.message)) for w in seen],
                        list(dict(box.named_children()))))
    assert results[1][0] == pytest.approx(results[0][0], rel=1e-6)
    assert results[1][1:] == results[0][1:]
