"""ConstantLR, LinearLR, PolynomialLR, SequentialLR, ChainedScheduler, CyclicLR and
CosineAnnealingWarmRestarts vs PyTorch: the same lr (and momentum) sequences, 20 float64
training steps driven by them give the same parameters to 1e-10, state_dicts with torch's
keys that resume exactly, and torch's errors and warnings."""
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.optim
from tests.parity.optim.test_more_optimizers import make_params, network_loss


def _sgd(lib, params, **kw):
    return lib.optim.SGD([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}],
                         **{"lr": 0.1, "momentum": 0.9, **kw})


SCHEDULERS = {
    "constant": lambda S, o: S.ConstantLR(o),
    "constant-half": lambda S, o: S.ConstantLR(o, factor=0.5, total_iters=7),
    "linear": lambda S, o: S.LinearLR(o),
    "linear-down": lambda S, o: S.LinearLR(o, start_factor=1.0, end_factor=0.1,
                                           total_iters=9),
    "polynomial": lambda S, o: S.PolynomialLR(o),
    "polynomial-2": lambda S, o: S.PolynomialLR(o, total_iters=12, power=2.0),
    "polynomial-half": lambda S, o: S.PolynomialLR(o, total_iters=8, power=0.5),
    "sequential": lambda S, o: S.SequentialLR(
        o, [S.LinearLR(o, start_factor=0.1, total_iters=4), S.ExponentialLR(o, gamma=0.9)],
        milestones=[5]),
    "sequential-3": lambda S, o: S.SequentialLR(
        o, [S.ConstantLR(o, factor=0.2, total_iters=3), S.CosineAnnealingLR(o, T_max=6),
            S.StepLR(o, step_size=3, gamma=0.5)], milestones=[4, 11]),
    "chained": lambda S, o: S.ChainedScheduler(
        [S.ConstantLR(o, factor=0.5, total_iters=6), S.ExponentialLR(o, gamma=0.9)]),
    "chained-optimizer": lambda S, o: S.ChainedScheduler(
        [S.LinearLR(o, start_factor=0.2, total_iters=5), S.MultiStepLR(o, [3, 9]),
         S.PolynomialLR(o, total_iters=15)], optimizer=o),
    "cyclic": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4),
    "cyclic-triangular2": lambda S, o: S.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3],
                                                  step_size_up=3, step_size_down=5,
                                                  mode="triangular2"),
    "cyclic-exp-range": lambda S, o: S.CyclicLR(o, base_lr=0.01, max_lr=0.2, step_size_up=2,
                                                mode="exp_range", gamma=0.9,
                                                base_momentum=0.7, max_momentum=0.95),
    "cyclic-scale-fn": lambda S, o: S.CyclicLR(o, base_lr=0.02, max_lr=0.1, step_size_up=3,
                                               scale_fn=lambda x: 0.5 ** x,
                                               scale_mode="iterations", cycle_momentum=False),
    "cyclic-scale-fn-cycle": lambda S, o: S.CyclicLR(o, base_lr=0.02, max_lr=0.1,
                                                     step_size_up=2,
                                                     scale_fn=lambda x: 1 / x),
    "warm-restarts": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=5),
    "warm-restarts-mult": lambda S, o: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=2,
                                                                      eta_min=0.001),
}
NAMES = list(SCHEDULERS)


def lr_sequence(lib, name, epochs=30):
    params = [lib.nn.Parameter(lib.zeros(2)) for _ in range(4)]
    opt = _sgd(lib, params)
    sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
    seq = [[g["lr"] for g in opt.param_groups] + [g["momentum"] for g in opt.param_groups]]
    for _ in range(epochs):
        opt.step()
        sched.step()
        seq.append([g["lr"] for g in opt.param_groups]
                   + [g["momentum"] for g in opt.param_groups])
    return seq, sched


@pytest.mark.parametrize("name", NAMES)
def test_lr_sequence_matches_torch(name):
    t, ts = lr_sequence(torch, name)
    e, es = lr_sequence(ember, name)
    np.testing.assert_allclose(np.array(e, dtype=float), np.array(t, dtype=float),
                               rtol=1e-14, atol=1e-16)
    assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-14)
    assert getattr(es, "last_epoch", None) == getattr(ts, "last_epoch", None)


def train(lib, name, steps=20, opt_name="SGD"):
    p = make_params(lib)
    params = [p["w1"], p["b1"], p["w2"], p["b2"]]
    if opt_name == "SGD":
        opt = _sgd(lib, params)
    else:
        opt = lib.optim.Adam([{"params": params[:2]}, {"params": params[2:], "lr": 0.05}],
                             lr=0.01)
    sched = SCHEDULERS[name](lib.optim.lr_scheduler, opt)
    for _ in range(steps):
        opt.zero_grad()
        network_loss(lib, p).backward()
        opt.step()
        sched.step()
    return {k: v.detach().numpy() for k, v in p.items()}


@pytest.mark.parametrize("name", NAMES)
def test_twenty_training_steps_match_torch(name):
    t, e = train(torch, name), train(ember, name)
    for k in t:
        np.testing.assert_allclose(e[k], t[k], rtol=0, atol=1e-10, err_msg=k)


@pytest.mark.parametrize("name", ["cyclic", "cyclic-exp-range", "sequential", "chained"])
def test_with_adam_betas_match_torch(name):
    t, e = train(torch, name, opt_name="Adam"), train(ember, name, opt_name="Adam")
    for k in t:
        np.testing.assert_allclose(e[k], t[k], rtol=0, atol=1e-10, err_msg=k)


def _keys(sd):
    return {k: (_keys(v) if isinstance(v, dict) else
                [_keys(x) for x in v] if k == "_schedulers" else None) for k, v in sd.items()}


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_resumes_exactly(name):
    """Save after 12 epochs, load into a fresh scheduler on a fresh optimizer (loaded
    too): the remaining sequence is torch's uninterrupted one; the keys are torch's."""
    t, ts = lr_sequence(torch, name)
    _, ts12 = lr_sequence(torch, name, epochs=12)
    seq, es = lr_sequence(ember, name, epochs=12)
    osd, ssd = es.optimizer.state_dict(), es.state_dict()
    assert _keys(ssd) == _keys(ts12.state_dict())
    params = [ember.nn.Parameter(ember.zeros(2)) for _ in range(4)]
    opt = _sgd(ember, params)
    sched = SCHEDULERS[name](ember.optim.lr_scheduler, opt)
    opt.load_state_dict(osd)
    sched.load_state_dict(ssd)
    for _ in range(12, 30):
        opt.step()
        sched.step()
        seq.append([g["lr"] for g in opt.param_groups]
                   + [g["momentum"] for g in opt.param_groups])
    np.testing.assert_allclose(np.array(seq, dtype=float), np.array(t, dtype=float),
                               rtol=1e-14, atol=1e-16)


@pytest.mark.parametrize("T_mult", [1, 2, 3])
def test_warm_restarts_fractional_epochs(T_mult):
    """step(epoch + i / iters) once per batch, as SGDR is used."""
    out = []
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.5)
        sched = lib.optim.lr_scheduler.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=T_mult,
                                                                    eta_min=0.01)
        seq = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for epoch in range(12):
                for i in range(7):
                    opt.step()
                    sched.step(epoch + i / 7)
                    seq.append((opt.param_groups[0]["lr"], sched.T_cur, sched.T_i,
                                sched.last_epoch))
        out.append(seq)
    np.testing.assert_allclose(np.array(out[1], dtype=float), np.array(out[0], dtype=float),
                               rtol=1e-13, atol=1e-15)


def test_get_lr_outside_step_warns_like_torch():
    msgs = []
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.5)
        sched = lib.optim.lr_scheduler.LinearLR(opt)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sched.get_lr()
        msgs.append([str(w.message) for w in caught])
    assert msgs[1] == msgs[0] and len(msgs[0]) == 1


def _errors(make):
    out = []
    for lib in (torch, ember):
        S = lib.optim.lr_scheduler
        o = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1, momentum=0.9)
        o2 = lib.optim.SGD([lib.nn.Parameter(lib.zeros(2))], lr=0.1)
        with pytest.raises(Exception) as info:
            make(lib, S, o, o2)
        out.append((type(info.value).__name__, str(info.value)))
    return out


@pytest.mark.parametrize("make", [
    lambda lib, S, o, o2: S.ConstantLR(o, factor=1.5),
    lambda lib, S, o, o2: S.ConstantLR(o, factor=-0.1),
    lambda lib, S, o, o2: S.LinearLR(o, start_factor=0),
    lambda lib, S, o, o2: S.LinearLR(o, end_factor=1.5),
    lambda lib, S, o, o2: S.SequentialLR(o, [], milestones=[]),
    lambda lib, S, o, o2: S.SequentialLR(o, [S.ConstantLR(o), S.LinearLR(o)], milestones=[]),
    lambda lib, S, o, o2: S.SequentialLR(o, [S.ConstantLR(o), S.ReduceLROnPlateau(o)],
                                         milestones=[2]),
    lambda lib, S, o, o2: S.SequentialLR(o, [S.ConstantLR(o), 3], milestones=[2]),
    lambda lib, S, o, o2: S.SequentialLR(o, [S.ConstantLR(o), S.ConstantLR(o2)],
                                         milestones=[2]),
    lambda lib, S, o, o2: S.ChainedScheduler([S.ConstantLR(o)], optimizer=o2),
    lambda lib, S, o, o2: S.ChainedScheduler([]),
    lambda lib, S, o, o2: S.ChainedScheduler([S.ConstantLR(o), S.ReduceLROnPlateau(o)]),
    lambda lib, S, o, o2: S.CyclicLR(o, 0.01, 0.1, mode="square"),
    lambda lib, S, o, o2: S.CyclicLR(lib.optim.Adagrad([lib.nn.Parameter(lib.zeros(1))]),
                                     0.01, 0.1),
    lambda lib, S, o, o2: S.CyclicLR(o, [0.01, 0.02], 0.1),
    lambda lib, S, o, o2: S.CyclicLR(None, 0.01, 0.1),
    lambda lib, S, o, o2: S.CosineAnnealingWarmRestarts(o, T_0=0),
    lambda lib, S, o, o2: S.CosineAnnealingWarmRestarts(o, T_0=2.5),
    lambda lib, S, o, o2: S.CosineAnnealingWarmRestarts(o, T_0=2, T_mult=0),
    lambda lib, S, o, o2: S.CosineAnnealingWarmRestarts(o, T_0=2, eta_min="0"),
    lambda lib, S, o, o2: S.CosineAnnealingWarmRestarts(o, T_0=2).step(-1),
])
def test_errors_match(make):
    t, e = _errors(make)
    assert e == t
