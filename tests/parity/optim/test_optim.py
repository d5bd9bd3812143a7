"""Optimizers and lr schedulers vs PyTorch: 20 steps on the same model and data give the
same parameters (float64, 1e-10); schedulers give the same lr sequences; state_dict
round trips continue exactly where the uninterrupted run goes."""
import copy
import math

import numpy as np
import pytest
import torch

import ember
import ember.optim

R = np.random.default_rng(0)
X = R.standard_normal((8, 4))
Y = R.standard_normal((8, 2))
INIT = {"w1": R.standard_normal((4, 5)) * 0.5, "b1": R.standard_normal(5) * 0.1,
        "w2": R.standard_normal((5, 2)) * 0.5, "b2": R.standard_normal(2) * 0.1,
        "unused": R.standard_normal(3)}


def make_params(lib):
    return {k: lib.nn.Parameter(lib.tensor(v.copy())) for k, v in INIT.items()}


def loss_fn(lib, p):
    h = lib.tanh(lib.tensor(X) @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    return ((out - lib.tensor(Y)) ** 2).mean()


def param_groups(p, split):
    if split is None:
        return list(p.values())
    return [{"params": [p["w1"], p["b1"], p["unused"]]},
            {"params": [p["w2"], p["b2"]], **split}]


def run(lib, opt_name, kw, steps=20, split=None, closure=False):
    p = make_params(lib)
    opt = getattr(lib.optim, opt_name)(param_groups(p, split), **kw)
    for _ in range(steps):
        def closure_fn():
            opt.zero_grad()
            loss = loss_fn(lib, p)
            loss.backward()
            return loss
        if closure:
            opt.step(closure_fn)
        else:
            closure_fn()
            opt.step()
    return {k: v.detach().numpy().copy() for k, v in p.items()}, opt


CASES = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.8, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.5, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.02, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.05)),
    ("Adam", dict(lr=0.02, amsgrad=True)),
    ("Adam", dict(lr=0.02, amsgrad=True, maximize=True, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.02, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=0.02, betas=(0.5, 0.9), maximize=True)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.5)),
    ("RMSprop", dict(lr=0.01, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.005, centered=True, momentum=0.9, maximize=True, eps=1e-5)),
    ("Adagrad", dict(lr=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.05)),
    ("Adagrad", dict(lr=0.1, initial_accumulator_value=0.5, eps=1e-6, maximize=True)),
]


def assert_same(e, t):
    for k in t:
        np.testing.assert_allclose(e[k], t[k], rtol=0, atol=1e-10, err_msg=k)


@pytest.mark.parametrize("name,kw", CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CASES)])
def test_twenty_steps_match_torch(name, kw):
    t, _ = run(torch, name, kw)
    e, _ = run(ember, name, kw)
    assert_same(e, t)
    np.testing.assert_array_equal(e["unused"], INIT["unused"])  # no grad: untouched


@pytest.mark.parametrize("name,kw,split", [
    ("SGD", dict(lr=0.1), dict(lr=0.01, momentum=0.9)),
    ("Adam", dict(lr=0.01), dict(betas=(0.5, 0.6), amsgrad=True)),
    ("RMSprop", dict(lr=0.01), dict(centered=True)),
    ("Adagrad", dict(lr=0.1), dict(lr_decay=0.1)),
])
def test_param_groups_match_torch(name, kw, split):
    t, topt = run(torch, name, kw, split=split)
    e, eopt = run(ember, name, kw, split=split)
    assert_same(e, t)
    tsd, esd = topt.state_dict(), eopt.state_dict()
    assert esd["param_groups"] == tsd["param_groups"]
    assert list(esd["state"]) == list(tsd["state"])
    for i in tsd["state"]:
        assert list(esd["state"][i]) == list(tsd["state"][i])
        for key, tv in tsd["state"][i].items():
            ev = esd["state"][i][key]
            assert ev.dtype.name == str(tv.dtype).split(".")[-1], key
            np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=0, atol=1e-10)


@pytest.mark.parametrize("name,kw", [CASES[1], CASES[7], CASES[15], CASES[17]])
def test_closure(name, kw):
    t, _ = run(torch, name, kw, steps=5, closure=True)
    e, _ = run(ember, name, kw, steps=5, closure=True)
    assert_same(e, t)


@pytest.mark.parametrize("name,kw", [CASES[2], CASES[8], CASES[10], CASES[15], CASES[18]])
def test_state_dict_round_trip(name, kw):
    """10 steps, state_dict into a fresh optimizer (on a copy of the parameters), 10 more
    steps: same as 20 uninterrupted steps, and as torch."""
    full, _ = run(ember, name, kw)
    p = make_params(ember)
    opt = getattr(ember.optim, name)(list(p.values()), **kw)
    for _ in range(10):
        opt.zero_grad()
        loss_fn(ember, p).backward()
        opt.step()
    sd = opt.state_dict()
    p2 = {k: ember.nn.Parameter(v.detach().clone()) for k, v in p.items()}
    opt2 = getattr(ember.optim, name)(list(p2.values()), lr=123.0)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == kw["lr"]
    for _ in range(10):
        opt2.zero_grad()
        loss_fn(ember, p2).backward()
        opt2.step()
    # the first optimizer's state was not shared with the second one
    for _ in range(10):
        opt.zero_grad()
        loss_fn(ember, p).backward()
        opt.step()
    t, _ = run(torch, name, kw)
    assert_same({k: v.detach().numpy() for k, v in p2.items()}, full)
    assert_same({k: v.detach().numpy() for k, v in p.items()}, full)
    assert_same(full, t)


def test_load_torch_state_dict():
    """A state_dict made by torch (tensors converted through NumPy) loads into ember."""
    t, topt = run(torch, "Adam", dict(lr=0.01, amsgrad=True), steps=10)
    tsd = topt.state_dict()
    esd = {"state": {i: {k: ember.tensor(v.numpy()) for k, v in s.items()}
                     for i, s in tsd["state"].items()},
           "param_groups": copy.deepcopy(tsd["param_groups"])}
    p = {k: ember.nn.Parameter(ember.tensor(v)) for k, v in t.items()}
    opt = ember.optim.Adam(list(p.values()), lr=0.01, amsgrad=True)
    opt.load_state_dict(esd)
    tp = {k: v for k, v in zip(INIT, topt.param_groups[0]["params"])}
    for _ in range(10):
        opt.zero_grad()
        loss_fn(ember, p).backward()
        opt.step()
        topt.zero_grad()
        loss_fn(torch, tp).backward()
        topt.step()
    assert_same({k: v.detach().numpy() for k, v in p.items()},
                {k: v.detach().numpy() for k, v in tp.items()})


def test_repr_and_defaults_match():
    for name in ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"]:
        tp, ep = torch.nn.Parameter(torch.zeros(2)), ember.nn.Parameter(ember.zeros(2))
        t = getattr(torch.optim, name)([tp])
        e = getattr(ember.optim, name)([ep])
        assert e.defaults == t.defaults
        assert repr(e) == repr(t)


def _errors(make):
    out = []
    for lib in (torch, ember):
        p = [lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))]
        with pytest.raises(Exception) as info:
            make(lib, p)
        out.append((type(info.value).__name__, str(info.value)))
    return out


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.SGD(p, lr=-1),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, momentum=-1),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, nesterov=True),
    lambda lib, p: lib.optim.SGD(p, lr=0.1, weight_decay=-1),
    lambda lib, p: lib.optim.Adam(p, betas=(1.0, 0.9)),
    lambda lib, p: lib.optim.Adam(p, betas=(0.9, 1.0)),
    lambda lib, p: lib.optim.Adam(p, eps=-1),
    lambda lib, p: lib.optim.Adam([]),
    lambda lib, p: lib.optim.RMSprop(p, alpha=-1),
    lambda lib, p: lib.optim.Adagrad(p, lr_decay=-1),
    lambda lib, p: lib.optim.Adagrad(p, initial_accumulator_value=-1),
    lambda lib, p: lib.optim.SGD([p[0], {"params": p[1]}]),
    lambda lib, p: lib.optim.SGD([{"params": p[0]}, {"params": [p[0]]}]),
    lambda lib, p: lib.optim.SGD([p[0] * 2]),
    lambda lib, p: lib.optim.SGD([p[0]]).add_param_group({"params": [p[1], p[0]]}),
    lambda lib, p: lib.optim.SGD([p[0]]).add_param_group([p[1]]),
    lambda lib, p: lib.optim.SGD([p[0]]).add_param_group({"params": {p[1]}}),
    lambda lib, p: lib.optim.SGD([p[0]]).load_state_dict(
        lib.optim.SGD([{"params": [p[0]]}, {"params": [p[1]]}]).state_dict()),
    lambda lib, p: lib.optim.SGD([p[0]]).load_state_dict(lib.optim.SGD(p).state_dict()),
])
def test_errors_match(make):
    t, e = _errors(make)
    assert e == t


# ----------------------------------------------------------------- lr schedulers
def _lrs(lib, make_sched, epochs=30, opt="SGD", opt_kw=None, metrics=None, per_step=False):
    p = lib.nn.Parameter(lib.zeros(2))
    q = lib.nn.Parameter(lib.zeros(2))
    kw = dict(lr=0.1, momentum=0.9) if opt == "SGD" else dict(lr=0.1)
    kw.update(opt_kw or {})
    o = getattr(lib.optim, opt)([{"params": [p]}, {"params": [q], "lr": 0.05}], **kw)
    s = make_sched(lib, o)
    seq = []
    for epoch in range(epochs):
        o.step()
        if metrics is not None:
            s.step(metrics[epoch])
        else:
            s.step()
        seq.append([g["lr"] for g in o.param_groups]
                   + [g.get("momentum", g.get("betas", (None,))[0]) for g in o.param_groups])
    return seq, s


SCHEDULERS = [
    lambda lib, o: lib.optim.lr_scheduler.StepLR(o, step_size=7, gamma=0.5),
    lambda lib, o: lib.optim.lr_scheduler.MultiStepLR(o, milestones=[3, 8, 8, 20], gamma=0.3),
    lambda lib, o: lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9),
    lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=10),
    lambda lib, o: lib.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
    lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, lambda e: 1 / (1 + e)),
    lambda lib, o: lib.optim.lr_scheduler.LambdaLR(o, [lambda e: 0.9 ** e, lambda e: e % 3]),
    lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=31),
    lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=[1.0, 0.5], epochs=3,
                                                     steps_per_epoch=11, pct_start=0.4,
                                                     anneal_strategy="linear"),
    lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=0.8, total_steps=40,
                                                     three_phase=True, div_factor=10,
                                                     final_div_factor=100),
    lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(o, max_lr=0.8, total_steps=35,
                                                     cycle_momentum=False),
]


@pytest.mark.parametrize("i", range(len(SCHEDULERS)))
def test_scheduler_lr_sequence(i):
    t, ts = _lrs(torch, SCHEDULERS[i])
    e, es = _lrs(ember, SCHEDULERS[i])
    np.testing.assert_allclose(np.array(e, dtype=float), np.array(t, dtype=float),
                               rtol=1e-13, atol=1e-15)
    assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-13)
    assert es.last_epoch == ts.last_epoch


def test_one_cycle_with_adam_betas():
    make = lambda lib, o: lib.optim.lr_scheduler.OneCycleLR(  # noqa: E731
        o, max_lr=0.5, total_steps=30, base_momentum=0.7, max_momentum=0.9)
    t, _ = _lrs(torch, make, opt="Adam")
    e, _ = _lrs(ember, make, opt="Adam")
    np.testing.assert_allclose(np.array(e, dtype=float), np.array(t, dtype=float), rtol=1e-13)


@pytest.mark.parametrize("kw", [
    dict(),
    dict(mode="max", factor=0.5, patience=2),
    dict(threshold=0.1, threshold_mode="abs", cooldown=2, patience=1, min_lr=0.02),
    dict(mode="max", threshold_mode="abs", patience=0, min_lr=[0.01, 0.03], eps=1e-3),
])
def test_reduce_on_plateau(kw):
    rng = np.random.default_rng(3)
    metrics = list(np.round(rng.random(40), 1))
    make = lambda lib, o: lib.optim.lr_scheduler.ReduceLROnPlateau(o, **kw)  # noqa: E731
    t, ts = _lrs(torch, make, epochs=40, metrics=metrics)
    e, es = _lrs(ember, make, epochs=40, metrics=metrics)
    np.testing.assert_allclose(np.array(e, dtype=float), np.array(t, dtype=float), rtol=1e-13)
    assert es.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-13)
    for key in ["best", "num_bad_epochs", "cooldown_counter", "last_epoch"]:
        assert es.state_dict()[key] == ts.state_dict()[key], key


@pytest.mark.parametrize("i", [0, 3, 7, 9])
def test_scheduler_state_dict(i):
    """Save after 12 epochs, load into a fresh scheduler on a fresh optimizer: the remaining
    sequence equals torch's uninterrupted one."""
    t, _ = _lrs(torch, SCHEDULERS[i])
    p = ember.nn.Parameter(ember.zeros(2))
    q = ember.nn.Parameter(ember.zeros(2))
    o = ember.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.05}], lr=0.1, momentum=0.9)
    s = SCHEDULERS[i](ember, o)
    for _ in range(12):
        o.step()
        s.step()
    osd, ssd = o.state_dict(), s.state_dict()
    assert ssd["last_epoch"] == 12
    o2 = ember.optim.SGD([{"params": [p]}, {"params": [q], "lr": 0.05}], lr=0.1, momentum=0.9)
    s2 = SCHEDULERS[i](ember, o2)
    o2.load_state_dict(osd)
    s2.load_state_dict(ssd)
    seq = []
    for _ in range(12, 30):
        o2.step()
        s2.step()
        seq.append([g["lr"] for g in o2.param_groups] + [g["momentum"] for g in o2.param_groups])
    np.testing.assert_allclose(np.array(seq), np.array(t[12:30]), rtol=1e-13)


def test_chained_schedulers_and_initial_lr():
    def both(lib):
        p = lib.nn.Parameter(lib.zeros(2))
        o = lib.optim.SGD([p], lr=1.0)
        s1 = lib.optim.lr_scheduler.ExponentialLR(o, gamma=0.9)
        s2 = lib.optim.lr_scheduler.StepLR(o, step_size=3, gamma=0.1)
        seq = []
        for _ in range(10):
            o.step()
            s1.step()
            s2.step()
            seq.append(o.param_groups[0]["lr"])
        return seq, o.param_groups[0]["initial_lr"]
    t, e = both(torch), both(ember)
    np.testing.assert_allclose(e[0], t[0], rtol=1e-13)
    assert e[1] == t[1] == 1.0
    assert not math.isnan(e[0][-1])
