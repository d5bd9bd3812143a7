"""Behaviour tests of ember.optim and the losses it trains with (no torch needed):
hand-computed updates, bookkeeping, state_dict format, schedulers, finite differences."""
import math
import warnings

import numpy as np
import pytest

import ember
import ember.optim
from ember import nn
from ember.optim import lr_scheduler
from tests.helpers import check_grad, check_second_grad

F = nn.functional


def param(values, dtype=ember.float64):
    return nn.Parameter(ember.tensor(values, dtype=dtype))


def quad_step(opt, *ps):
    """Loss sum(p**2) / 2: the gradient equals p."""
    opt.zero_grad()
    loss = sum((p * p).sum() for p in ps) / 2
    loss.backward()
    opt.step()
    return loss.item()


# ----------------------------------------------------------------- hand-computed updates
def test_sgd_momentum_nesterov_by_hand():
    p = param([1.0, -2.0])
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.5)
    g = np.array([1.0, -2.0]) * 1.5  # grad p + weight_decay * p
    quad_step(opt, p)
    buf = g
    expected = np.array([1.0, -2.0]) - 0.1 * (g + 0.9 * buf)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-14)
    g2 = expected * 1.5
    buf = 0.9 * buf + g2
    expected = expected - 0.1 * (g2 + 0.9 * buf)
    quad_step(opt, p)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-14)


def test_adam_first_step_is_lr_times_sign():
    p = param([3.0, -0.5, 1e-3])
    opt = ember.optim.Adam([p], lr=0.01, eps=0.0)
    quad_step(opt, p)
    np.testing.assert_allclose(p.detach().numpy(), [2.99, -0.49, -0.009], atol=1e-12)


def test_adamw_decays_before_update():
    p = param([2.0])
    opt = ember.optim.AdamW([p], lr=0.1, weight_decay=0.5, eps=0.0)
    quad_step(opt, p)
    np.testing.assert_allclose(p.item(), 2.0 * (1 - 0.05) - 0.1, rtol=1e-14)


def test_rmsprop_and_adagrad_by_hand():
    p = param([2.0])
    opt = ember.optim.RMSprop([p], lr=0.01, alpha=0.9, eps=0.0)
    quad_step(opt, p)
    np.testing.assert_allclose(p.item(), 2.0 - 0.01 * 2.0 / math.sqrt(0.1 * 4.0), rtol=1e-14)
    q = param([2.0])
    opt = ember.optim.Adagrad([q], lr=0.5, initial_accumulator_value=5.0, eps=0.0)
    quad_step(opt, q)
    np.testing.assert_allclose(q.item(), 2.0 - 0.5 * 2.0 / 3.0, rtol=1e-14)


def test_maximize_ascends():
    p = param([1.0])
    opt = ember.optim.SGD([p], lr=0.1, maximize=True)
    quad_step(opt, p)
    assert p.item() == pytest.approx(1.1)


@pytest.mark.parametrize("make", [
    lambda ps: ember.optim.SGD(ps, lr=0.1, momentum=0.5),
    lambda ps: ember.optim.Adam(ps, lr=0.1),
    lambda ps: ember.optim.AdamW(ps, lr=0.1, amsgrad=True),
    lambda ps: ember.optim.RMSprop(ps, lr=0.02, centered=True, momentum=0.5),
    lambda ps: ember.optim.Adagrad(ps, lr=0.5),
])
def test_optimizers_minimize_a_quadratic(make):
    p = param([3.0, -2.0, 1.0])
    opt = make([p])
    first = quad_step(opt, p)
    for _ in range(150):
        last = quad_step(opt, p)
    assert last < 0.05 * first


# ----------------------------------------------------------------- bookkeeping
def test_update_is_in_place_and_bumps_version_without_graph():
    p = param([1.0, 2.0])
    opt = ember.optim.Adam([p], lr=0.1)
    ident, data = id(p), p.detach()
    (p * p).sum().backward()
    v = p._version if hasattr(p, "_version") else p._vc[0]
    opt.step()
    v2 = p._version if hasattr(p, "_version") else p._vc[0]
    assert v2 > v
    assert id(p) == ident and p.grad_fn is None and p.requires_grad and p.is_leaf
    assert not np.allclose(data.numpy(), [1.0, 2.0])  # detached view shares the storage


def test_params_without_grad_are_skipped():
    p, q = param([1.0]), param([5.0])
    opt = ember.optim.Adam([p, q], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert q.item() == 5.0
    assert len(opt.state[q]) == 0 and "exp_avg" in opt.state[p]


def test_zero_grad():
    p = param([1.0])
    opt = ember.optim.SGD([p], lr=0.1)
    (p * 3).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert p.grad is not None and p.grad.item() == 0.0
    opt.zero_grad()
    assert p.grad is None


def test_param_groups_merge_defaults_and_reject_duplicates():
    a, b, c = param([1.0]), param([2.0]), param([3.0])
    opt = ember.optim.SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0.9 and opt.param_groups[1]["params"] == [b]
    opt.add_param_group({"params": [c], "nesterov": True})
    assert opt.param_groups[2]["nesterov"] and opt.param_groups[2]["lr"] == 0.1
    with pytest.raises(ValueError, match="some parameters appear in more than one"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        ember.optim.SGD([a * 2], lr=0.1)
    with pytest.raises(TypeError, match="iterable of Tensors or dicts"):
        ember.optim.SGD(a, lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        ember.optim.SGD([], lr=0.1)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        ember.optim.SGD([a, a], lr=0.1)


def test_required_hyperparameter():
    class Plain(ember.optim.Optimizer):
        def __init__(self, params, lr=ember.optim.optimizer.required):
            super().__init__(params, dict(lr=lr))
    with pytest.raises(ValueError, match="didn't specify a value of required optimization "
                                         "parameter lr"):
        Plain([param([1.0])])
    assert Plain([param([1.0])], lr=0.3).param_groups[0]["lr"] == 0.3


def test_closure_runs_with_grad_and_returns_loss():
    p = param([2.0])
    opt = ember.optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        opt.zero_grad()
        seen.append(ember.is_grad_enabled())
        loss = (p * p).sum()
        loss.backward()
        return loss
    with ember.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 4.0 and p.item() == pytest.approx(1.6)


def test_step_hooks():
    p = param([1.0])
    opt = ember.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", p.item())))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", p.item())))
    quad_step(opt, p)
    h1.remove()
    quad_step(opt, p)
    assert calls == [("pre", 1.0), ("post", 0.9), ("post", pytest.approx(0.81))]


# ----------------------------------------------------------------- state_dict
def test_state_dict_format_and_round_trip():
    a, b = param([1.0, 2.0]), param([3.0])
    opt = ember.optim.Adam([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, amsgrad=True)
    for _ in range(3):
        quad_step(opt, a, b)
    sd = opt.state_dict()
    assert set(sd) == {"state", "param_groups"}
    assert [g["params"] for g in sd["param_groups"]] == [[0], [1]]
    assert sd["param_groups"][1]["lr"] == 0.5
    assert set(sd["state"]) == {0, 1}
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    assert sd["state"][0]["step"].item() == 3.0
    a2, b2 = param(a.detach().numpy().copy()), param(b.detach().numpy().copy())
    opt2 = ember.optim.Adam([{"params": [a2]}, {"params": [b2]}], lr=1.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[1]["lr"] == 0.5 and opt2.param_groups[0]["params"] == [a2]
    for _ in range(3):
        quad_step(opt, a, b)
        quad_step(opt2, a2, b2)
    np.testing.assert_array_equal(a2.detach().numpy(), a.detach().numpy())
    np.testing.assert_array_equal(b2.detach().numpy(), b.detach().numpy())


def test_load_state_dict_casts_to_param_dtype_and_checks_sizes():
    p = param([1.0, 2.0])
    opt = ember.optim.SGD([p], lr=0.1, momentum=0.9)
    quad_step(opt, p)
    q = param([1.0, 2.0], dtype=ember.float32)
    opt2 = ember.optim.SGD([q], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.state[q]["momentum_buffer"].dtype == ember.float32
    with pytest.raises(ValueError, match="different number of parameter groups"):
        ember.optim.SGD([{"params": [q]}, {"params": [param([1.0])]}], lr=0.1).load_state_dict(
            opt.state_dict())
    with pytest.raises(ValueError, match="doesn't match the size"):
        ember.optim.SGD([q, param([1.0])], lr=0.1).load_state_dict(opt.state_dict())


# ----------------------------------------------------------------- schedulers
def _sgd(lr=1.0, **kw):
    return ember.optim.SGD([param([0.0])], lr=lr, **kw)


def _run(opt, sched, n, metrics=None):
    out = []
    for i in range(n):
        opt.step()
        sched.step() if metrics is None else sched.step(metrics[i])
        out.append(opt.param_groups[0]["lr"])
    return out


def test_step_and_multistep_closed_forms():
    opt = _sgd()
    s = lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    np.testing.assert_allclose(_run(opt, s, 9), [0.5 ** ((e + 1) // 3) for e in range(9)])
    opt = _sgd()
    s = lr_scheduler.MultiStepLR(opt, milestones=[2, 5, 5], gamma=0.1)
    np.testing.assert_allclose(_run(opt, s, 7), [1, 0.1, 0.1, 0.1, 1e-3, 1e-3, 1e-3])
    assert opt.param_groups[0]["initial_lr"] == 1.0 and s.base_lrs == [1.0]


def test_cosine_and_exponential_closed_forms():
    opt = _sgd(eta := 2.0)
    s = lr_scheduler.CosineAnnealingLR(opt, T_max=8, eta_min=0.5)
    got = _run(opt, s, 16)
    want = [0.5 + (eta - 0.5) * (1 + math.cos(math.pi * e / 8)) / 2 for e in range(1, 17)]
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    opt = _sgd()
    s = lr_scheduler.ExponentialLR(opt, gamma=0.8)
    np.testing.assert_allclose(_run(opt, s, 5), [0.8 ** e for e in range(1, 6)], rtol=1e-14)
    assert s.get_last_lr() == [opt.param_groups[0]["lr"]]


def test_lambda_lr_and_state_dict():
    opt = _sgd(0.1)
    s = lr_scheduler.LambdaLR(opt, lambda e: 1.0 / (e + 1))
    np.testing.assert_allclose(_run(opt, s, 3), [0.05, 0.1 / 3, 0.025])
    sd = s.state_dict()
    assert sd["last_epoch"] == 3 and sd["lr_lambdas"] == [None] and "optimizer" not in sd
    with pytest.raises(ValueError, match="Expected 1 lr_lambdas, but got 2"):
        lr_scheduler.LambdaLR(_sgd(), [lambda e: 1, lambda e: 2])


def test_one_cycle_shape():
    opt = _sgd(momentum=0.9)
    s = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=20, pct_start=0.25)
    assert opt.param_groups[0]["lr"] == pytest.approx(1.0 / 25)
    assert opt.param_groups[0]["momentum"] == pytest.approx(0.95)
    lrs, moms = [], []
    for _ in range(19):
        opt.step()
        s.step()
        lrs.append(opt.param_groups[0]["lr"])
        moms.append(opt.param_groups[0]["momentum"])
    assert max(lrs) == pytest.approx(1.0) and lrs.index(max(lrs)) == 3
    assert min(moms) == pytest.approx(0.85) and moms.index(min(moms)) == 3
    assert lrs[-1] == pytest.approx(1.0 / 25 / 1e4)
    opt.step()
    with pytest.raises(ValueError, match="Tried to step 21 times"):
        s.step()
        s.step()
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        lr_scheduler.OneCycleLR(ember.optim.Adagrad([param([0.0])]), max_lr=1.0,
                                total_steps=5)
    with pytest.raises(ValueError, match="either total_steps OR"):
        lr_scheduler.OneCycleLR(_sgd(momentum=0.9), max_lr=1.0)


def test_one_cycle_adam_betas():
    opt = ember.optim.Adam([param([0.0])], lr=0.1, betas=(0.9, 0.99))
    s = lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    assert opt.param_groups[0]["betas"] == (0.95, 0.99)
    opt.step()
    s.step()
    assert opt.param_groups[0]["betas"][1] == 0.99 and opt.param_groups[0]["betas"][0] < 0.95


def test_reduce_lr_on_plateau():
    opt = _sgd()
    s = lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=1, cooldown=1, min_lr=0.2)
    metrics = [1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95, 0.95]
    got = _run(opt, s, 10, metrics)
    assert got == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25, 0.2]
    assert s.get_last_lr() == [0.2] and s.best == 0.9
    opt = _sgd()
    s = lr_scheduler.ReduceLROnPlateau(opt, mode="max", patience=0, threshold=0.1,
                                       threshold_mode="abs")
    assert _run(opt, s, 3, [1.0, 1.05, 1.2]) == [1.0, 0.1, 0.1]
    with pytest.raises(ValueError, match="Factor should be < 1.0."):
        lr_scheduler.ReduceLROnPlateau(_sgd(), factor=1.0)
    with pytest.raises(ValueError, match="mode avg is unknown!"):
        lr_scheduler.ReduceLROnPlateau(_sgd(), mode="avg")


def test_scheduler_warns_when_stepped_before_optimizer():
    opt = _sgd()
    s = lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        s.step()
    opt = _sgd()
    s = lr_scheduler.StepLR(opt, step_size=1)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.step()
    with pytest.raises(TypeError, match="list is not an Optimizer"):
        lr_scheduler.StepLR([], step_size=1)


# ----------------------------------------------------------------- losses (finite differences)
R = np.random.default_rng(0)
T1, T2, T3 = R.random((3, 3)), R.random((3, 3)), R.dirichlet(np.ones(3), 3)


@pytest.mark.parametrize("fn", [
    lambda x: F.cross_entropy(x, ember.tensor([0, 2, 1]), label_smoothing=0.1,
                              weight=ember.tensor([0.5, 1.0, 2.0], dtype=ember.float64)),
    lambda x: F.nll_loss(F.log_softmax(x, 1), ember.tensor([0, -100, 1])),
    lambda x: F.binary_cross_entropy_with_logits(
        x, ember.tensor(T1), pos_weight=ember.tensor([1.0, 2.0, 0.5],
                                                                   dtype=ember.float64)),
    lambda x: F.binary_cross_entropy(ember.sigmoid(x), ember.tensor(T2)),
    lambda x: F.kl_div(F.log_softmax(x, 1), ember.tensor(T3),
                       reduction="batchmean"),
    lambda x: F.smooth_l1_loss(x, ember.zeros(3, 3, dtype=ember.float64), beta=0.5),
    lambda x: F.huber_loss(x, ember.ones(3, 3, dtype=ember.float64), delta=0.7),
])
def test_losses_first_and_second_derivatives(fn):
    x = np.random.default_rng(1).standard_normal((3, 3))
    check_grad(fn, x)
    check_second_grad(fn, x)


def test_losses_known_values():
    x = ember.tensor([[0.0, 0.0]], dtype=ember.float64)
    assert F.cross_entropy(x, ember.tensor([1])).item() == pytest.approx(math.log(2))
    big = ember.tensor([1000.0, -1000.0], dtype=ember.float64)
    out = F.binary_cross_entropy_with_logits(big, ember.tensor([0.0, 1.0], dtype=ember.float64),
                                             reduction="none")
    np.testing.assert_allclose(out.numpy(), [1000.0, 1000.0])
    p = ember.tensor([0.0, 1.0], dtype=ember.float64)
    out = F.binary_cross_entropy(p, ember.tensor([1.0, 0.0], dtype=ember.float64),
                                 reduction="none")
    np.testing.assert_allclose(out.numpy(), [100.0, 100.0])
    assert F.mse_loss(ember.tensor([1.0, 3.0]), ember.tensor([0.0, 0.0])).item() == 5.0
    with pytest.raises(ValueError, match="foo is not a valid value for reduction"):
        F.l1_loss(ember.zeros(2), ember.zeros(2), reduction="foo")


def test_training_loop_logistic_regression():
    """BCEWithLogits + SGD/OneCycle learn a separable problem."""
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((64, 2))
    ys = (xs[:, 0] + 2 * xs[:, 1] > 0).astype(np.float64)
    w = nn.Parameter(ember.zeros(2, dtype=ember.float64))
    b = nn.Parameter(ember.zeros((), dtype=ember.float64))
    opt = ember.optim.SGD([w, b], lr=0.5, momentum=0.9)
    sched = lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=60)
    loss_fn = nn.BCEWithLogitsLoss()
    X, Y = ember.tensor(xs), ember.tensor(ys)
    for _ in range(60):
        opt.zero_grad()
        loss = loss_fn(X @ w + b, Y)
        loss.backward()
        opt.step()
        sched.step()
    acc = (((X @ w + b) > 0).to(ember.float64) == Y).to(ember.float64).mean().item()
    assert loss.item() < 0.2 and acc > 0.95
