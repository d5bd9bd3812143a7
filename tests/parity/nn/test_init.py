"""Parity with PyTorch for ``nn.init``: ember draws from its own stream, so the tests
compare distributions (mean, std, bounds) with torch's on large tensors, and the
deterministic initializers and helpers exactly."""
import math
import warnings

import numpy as np
import pytest
import torch
import torch.nn.init as TI

import ember
import ember.nn.init as EI

SHAPES = [(256, 128), (64, 32, 3, 3)]


def _pair(shape):
    return torch.empty(shape), ember.empty(*shape)


def _moments_close(e, t, std_rtol=0.03, mean_atol=None):
    e, t = e.detach().numpy().ravel(), t.detach().numpy().ravel()
    std = t.std()
    assert abs(e.std() / std - 1) < std_rtol, (e.std(), std)
    assert abs(e.mean() - t.mean()) < (mean_atol if mean_atol is not None else 0.05 * std + 1e-3)
    return e, t


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name,kwargs", [
    ("uniform_", {}), ("uniform_", {"a": -3.0, "b": 5.0}), ("normal_", {}),
    ("normal_", {"mean": 2.0, "std": 0.5}), ("xavier_uniform_", {}),
    ("xavier_uniform_", {"gain": 2.0}), ("xavier_normal_", {}), ("xavier_normal_", {"gain": 0.5}),
    ("kaiming_uniform_", {}), ("kaiming_uniform_", {"a": math.sqrt(5)}),
    ("kaiming_uniform_", {"mode": "fan_out", "nonlinearity": "relu"}),
    ("kaiming_normal_", {}), ("kaiming_normal_", {"a": 0.2, "mode": "fan_out"}),
    ("kaiming_normal_", {"nonlinearity": "tanh"}),
    ("trunc_normal_", {}), ("trunc_normal_", {"mean": 1.0, "std": 2.0, "a": -1.0, "b": 2.0}),
    ("trunc_normal_", {"std": 0.02}),
])
def test_random_init_moments(shape, name, kwargs):
    t, e = _pair(shape)
    assert getattr(EI, name)(e, **kwargs) is e
    getattr(TI, name)(t, **kwargs)
    ev, tv = _moments_close(e, t)
    truncated = name == "trunc_normal_" and kwargs.get("std", 1.0) >= 0.5  # bounds within 2 std
    if name in ("uniform_", "xavier_uniform_", "kaiming_uniform_") or truncated:
        # the same support: extremes within a small fraction of the range
        span = tv.max() - tv.min()
        assert abs(ev.max() - tv.max()) < 0.01 * span and abs(ev.min() - tv.min()) < 0.01 * span
    if name == "trunc_normal_":
        lo, hi = kwargs.get("a", -2.0), kwargs.get("b", 2.0)
        assert ev.min() >= lo and ev.max() <= hi


def test_init_runs_under_no_grad_and_keeps_leaf():
    p = ember.nn.Parameter(ember.empty(30, 20))
    for fn in [EI.uniform_, EI.normal_, EI.xavier_uniform_, EI.kaiming_normal_, EI.ones_,
               EI.zeros_, EI.eye_, EI.orthogonal_, EI.trunc_normal_,
               lambda t: EI.constant_(t, 0.3)]:
        out = fn(p)
        assert out is p and p.is_leaf and p.grad_fn is None and p.requires_grad


def test_generator_argument_reproducible():
    for fn in [EI.uniform_, EI.normal_, EI.xavier_uniform_, EI.xavier_normal_,
               EI.kaiming_uniform_, EI.kaiming_normal_, EI.trunc_normal_, EI.orthogonal_]:
        a, b = ember.empty(8, 5), ember.empty(8, 5)
        fn(a, generator=ember.Generator().manual_seed(3))
        fn(b, generator=ember.Generator().manual_seed(3))
        assert np.array_equal(a.numpy(), b.numpy())
        fn(b, generator=ember.Generator().manual_seed(4))
        assert not np.array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (5, 2, 3)])
@pytest.mark.parametrize("gain", [1.0, 2.5])
def test_orthogonal(shape, gain):
    e = EI.orthogonal_(ember.empty(*shape), gain=gain)
    t = TI.orthogonal_(torch.empty(shape), gain=gain)
    q = e.numpy().reshape(shape[0], -1).astype(np.float64) / gain
    tq = t.numpy().reshape(shape[0], -1).astype(np.float64) / gain
    small = min(q.shape)
    gram = q @ q.T if q.shape[0] == small else q.T @ q
    tgram = tq @ tq.T if tq.shape[0] == small else tq.T @ tq
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    np.testing.assert_allclose(gram, tgram, atol=1e-5)


def test_orthogonal_float64():
    e = EI.orthogonal_(ember.empty(7, 7, dtype=ember.float64))
    q = e.numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(7), atol=1e-12)


@pytest.mark.parametrize("shape", [(3, 3), (2, 5), (5, 2)])
def test_deterministic_inits(shape):
    for name, args in [("zeros_", ()), ("ones_", ()), ("constant_", (0.25,)), ("eye_", ())]:
        t, e = _pair(shape)
        getattr(TI, name)(t, *args)
        assert getattr(EI, name)(e, *args) is e
        np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("shape,groups", [((4, 2, 3), 1), ((6, 3, 3, 3), 2), ((2, 2, 1, 3, 3), 1)])
def test_dirac(shape, groups):
    t, e = _pair(shape)
    TI.dirac_(t, groups)
    EI.dirac_(e, groups)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",), ("relu",),
                                  ("leaky_relu",), ("leaky_relu", 0.2), ("leaky_relu", 0),
                                  ("selu",), ("conv_transpose3d",)])
def test_calculate_gain(args):
    assert EI.calculate_gain(*args) == TI.calculate_gain(*args)


@pytest.mark.parametrize("shape", [(3, 4), (5, 4, 3), (6, 2, 3, 3), (2, 3, 1, 2, 2)])
def test_fan_in_and_fan_out(shape):
    assert EI._calculate_fan_in_and_fan_out(ember.empty(*shape)) == \
        TI._calculate_fan_in_and_fan_out(torch.empty(shape))


@pytest.mark.parametrize("call", [
    lambda init, lib: init.calculate_gain("foo"),
    lambda init, lib: init.calculate_gain("leaky_relu", "a"),
    lambda init, lib: init.calculate_gain("leaky_relu", True),
    lambda init, lib: init.xavier_uniform_(lib.empty(3)),
    lambda init, lib: init._calculate_fan_in_and_fan_out(lib.empty(3)),
    lambda init, lib: init.kaiming_uniform_(lib.empty(2, 3), mode="fan_avg"),
    lambda init, lib: init.eye_(lib.empty(2, 3, 4)),
    lambda init, lib: init.orthogonal_(lib.empty(4)),
    lambda init, lib: init.dirac_(lib.empty(4, 4)),
    lambda init, lib: init.dirac_(lib.empty(3, 2, 3), 2),
])
def test_error_messages(call):
    with pytest.raises(ValueError) as t_err:
        call(TI, torch)
    with pytest.raises(ValueError) as e_err:
        call(EI, ember)
    assert str(e_err.value) == str(t_err.value)


def test_kaiming_zero_element_warns():
    with warnings.catch_warnings(record=True) as tw:
        warnings.simplefilter("always")
        TI.kaiming_uniform_(torch.empty(0, 3))
    with warnings.catch_warnings(record=True) as ew:
        warnings.simplefilter("always")
        e = ember.empty(0, 3)
        assert EI.kaiming_uniform_(e) is e
    assert [str(w.message) for w in ew] == [str(w.message) for w in tw]


def test_trunc_normal_far_mean_warns():
    with pytest.warns(UserWarning, match="mean is more than 2 std"):
        EI.trunc_normal_(ember.empty(10), mean=10.0, std=1.0, a=-1.0, b=1.0)
