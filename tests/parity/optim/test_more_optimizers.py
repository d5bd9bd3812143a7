"""Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop vs PyTorch: 20 float64 steps on a small
tanh network (nonconvex) and on a quadratic, with parameter groups, weight decay and
maximize, give the same parameters to 1e-10; the state_dicts have torch's keys, dtypes
and values; a state_dict round trip continues exactly; invalid arguments give torch's
errors."""
import numpy as np
import pytest
import torch

import ember
import ember.optim

R = np.random.default_rng(7)
X = R.standard_normal((8, 4))
Y = R.standard_normal((8, 2))
INIT = {"w1": R.standard_normal((4, 5)) * 0.5, "b1": R.standard_normal(5) * 0.1,
        "w2": R.standard_normal((5, 2)) * 0.5, "b2": R.standard_normal(2) * 0.1,
        "unused": R.standard_normal(3)}
A = R.standard_normal((5, 5))
HESSIAN = A @ A.T + np.eye(5)
CENTER = R.standard_normal(5)


def make_params(lib):
    return {k: lib.nn.Parameter(lib.tensor(v.copy())) for k, v in INIT.items()}


def network_loss(lib, p):
    h = lib.tanh(lib.tensor(X) @ p["w1"] + p["b1"])
    out = h @ p["w2"] + p["b2"]
    return ((out - lib.tensor(Y)) ** 2).mean()


def quadratic_loss(lib, p):
    """0.5 (x - c)' H (x - c) in the first bias and the first column of w1, convex."""
    x = lib.cat([p["b1"], p["w1"][:, 0], p["b2"][:1]]) - lib.tensor(np.r_[CENTER, 0, 0, 0, 0, 0])
    x = x[:5]
    return 0.5 * (x @ (lib.tensor(HESSIAN) @ x)) + (p["w1"] ** 2).sum() * 0.01


LOSSES = {"network": network_loss, "quadratic": quadratic_loss}


def param_groups(p, split):
    if split is None:
        return list(p.values())
    return [{"params": [p["w1"], p["b1"], p["unused"]]},
            {"params": [p["w2"], p["b2"]], **split}]


def run(lib, name, kw, steps=20, split=None, problem="network", closure=False):
    """``steps`` optimizer steps; a maximizing optimizer climbs the negated loss."""
    p = make_params(lib)
    opt = getattr(lib.optim, name)(param_groups(p, split), **kw)
    sign = -1.0 if kw.get("maximize") else 1.0

    def closure_fn():
        opt.zero_grad()
        loss = sign * LOSSES[problem](lib, p)
        loss.backward()
        return loss
    for _ in range(steps):
        if closure:
            opt.step(closure_fn)
        else:
            closure_fn()
            opt.step()
    return {k: v.detach().numpy().copy() for k, v in p.items()}, opt


CASES = [
    ("Adadelta", dict()),
    ("Adadelta", dict(lr=0.5, rho=0.8, eps=1e-5, weight_decay=0.1)),
    ("Adadelta", dict(lr=2.0, maximize=True)),
    ("Adamax", dict(lr=0.02)),
    ("Adamax", dict(lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.05)),
    ("Adamax", dict(lr=0.05, maximize=True, weight_decay=0.01)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.02, betas=(0.8, 0.99), momentum_decay=0.01, weight_decay=0.05)),
    ("NAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(lr=0.02, maximize=True, eps=1e-6)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.02, betas=(0.5, 0.9), weight_decay=0.05)),
    ("RAdam", dict(lr=0.02, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.02, betas=(0.9, 0.6), maximize=True)),
    ("ASGD", dict(lr=0.05)),
    ("ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5, weight_decay=0.05)),
    ("ASGD", dict(lr=0.05, t0=0, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2))),
    ("Rprop", dict(lr=0.02, maximize=True)),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def assert_same(e, t):
    for k in t:
        np.testing.assert_allclose(e[k], t[k], rtol=0, atol=1e-10, err_msg=k)


@pytest.mark.parametrize("problem", ["network", "quadratic"])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_twenty_steps_match_torch(name, kw, problem):
    t, _ = run(torch, name, kw, problem=problem)
    e, _ = run(ember, name, kw, problem=problem)
    assert_same(e, t)
    np.testing.assert_array_equal(e["unused"], INIT["unused"])  # no grad: untouched
    assert not np.allclose(e["w2"], INIT["w2"]) or problem == "quadratic"


@pytest.mark.parametrize("name,kw,split", [
    ("Adadelta", dict(lr=1.0), dict(lr=0.5, rho=0.5, weight_decay=0.1)),
    ("Adamax", dict(lr=0.02), dict(betas=(0.5, 0.6), maximize=False, weight_decay=0.1)),
    ("NAdam", dict(lr=0.02), dict(momentum_decay=0.1, decoupled_weight_decay=True,
                                  weight_decay=0.2)),
    ("RAdam", dict(lr=0.02), dict(lr=0.05, betas=(0.6, 0.7), weight_decay=0.1)),
    ("ASGD", dict(lr=0.05), dict(lr=0.02, t0=3, lambd=0.1)),
    ("Rprop", dict(lr=0.02), dict(lr=0.1, etas=(0.1, 2.0))),
])
def test_param_groups_and_state_dict_match_torch(name, kw, split):
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
            assert tuple(ev.shape) == tuple(tv.shape), key
            np.testing.assert_allclose(ev.numpy(), tv.numpy(), rtol=0, atol=1e-10)


@pytest.fixture
def float64_default():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    ember.set_default_dtype(ember.float64)
    yield
    torch.set_default_dtype(before)
    ember.set_default_dtype(ember.float32)


@pytest.mark.parametrize("name,kw", [c for c in CASES if "maximize" not in c[1]][::2])
def test_float64_default_dtype_state(name, kw, float64_default):
    """With float64 as the default dtype, scalar state (step, mu_product, eta, mu) is
    float64 in both."""
    t, topt = run(torch, name, kw, steps=5)
    e, eopt = run(ember, name, kw, steps=5)
    assert_same(e, t)
    for key, tv in topt.state_dict()["state"][0].items():
        assert eopt.state_dict()["state"][0][key].dtype.name == str(tv.dtype).split(".")[-1]


@pytest.mark.parametrize("name,kw", CASES[1::3] + [CASES[14]], ids=IDS[1::3] + [IDS[14]])
def test_closure_and_foreach(name, kw, float64_default):
    """step(closure) returns the loss; foreach=True is PyTorch's multi-tensor path there
    (for ASGD a different arithmetic, which ember follows). Float64 scalar state: ASGD's
    multi-tensor path raises a float32 step to a power, where PyTorch's float32 pow and
    NumPy's can differ by an ulp."""
    t, _ = run(torch, name, dict(kw, foreach=True), steps=8, closure=True)
    e, _ = run(ember, name, dict(kw, foreach=True), steps=8, closure=True)
    assert_same(e, t)


def round_trip(lib, name, kw):
    """10 steps, state_dict into a fresh optimizer on copies of the parameters, 10 more."""
    p = make_params(lib)
    opt = getattr(lib.optim, name)(list(p.values()), **kw)
    for _ in range(10):
        opt.zero_grad()
        network_loss(lib, p).backward()
        opt.step()
    p2 = {k: lib.nn.Parameter(v.detach().clone()) for k, v in p.items()}
    opt2 = getattr(lib.optim, name)(list(p2.values()), lr=123.0)
    opt2.load_state_dict(opt.state_dict())
    assert opt2.param_groups[0]["lr"] == kw.get("lr", opt.defaults["lr"])
    loaded = {k: str(v.dtype).split(".")[-1] for k, v in opt2.state[p2["w1"]].items()}
    for _ in range(10):
        opt2.zero_grad()
        network_loss(lib, p2).backward()
        opt2.step()
    return {k: v.detach().numpy() for k, v in p2.items()}, loaded


@pytest.mark.parametrize("name,kw", [CASES[1], CASES[4], CASES[8], CASES[12], CASES[15],
                                     CASES[18]])
def test_state_dict_round_trip(name, kw):
    """Loading casts floating state to the parameter's dtype except ``step`` (so ASGD's
    eta and NAdam's mu_product become float64 here), in both."""
    t, t_loaded = round_trip(torch, name, kw)
    e, e_loaded = round_trip(ember, name, kw)
    assert e_loaded == t_loaded
    assert_same(e, t)


def test_tensor_lr_matches_torch():
    for name in ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]:
        t, _ = run(torch, name, dict(lr=torch.tensor(0.01, dtype=torch.float64)), steps=5)
        e, _ = run(ember, name, dict(lr=ember.tensor(0.01, dtype=ember.float64)), steps=5)
        assert_same(e, t)


def test_repr_and_defaults_match():
    for name in ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"]:
        tp, ep = torch.nn.Parameter(torch.zeros(2)), ember.nn.Parameter(ember.zeros(2))
        t = getattr(torch.optim, name)([tp])
        e = getattr(ember.optim, name)([ep])
        assert e.defaults == t.defaults
        assert list(e.defaults) == list(t.defaults)
        assert repr(e) == repr(t)


def _errors(make, at_step=False):
    out = []
    for lib in (torch, ember):
        p = [lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2))]
        with pytest.raises(Exception) as info:
            opt = make(lib, p)
            if at_step:
                p[0].grad = lib.ones(2)
                opt.step()
        out.append((type(info.value).__name__, str(info.value)))
    return out


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.Adadelta(p, lr=-1.0),
    lambda lib, p: lib.optim.Adadelta(p, rho=1.5),
    lambda lib, p: lib.optim.Adadelta(p, eps=-1),
    lambda lib, p: lib.optim.Adadelta(p, weight_decay=-0.5),
    lambda lib, p: lib.optim.Adamax(p, lr=-1.0),
    lambda lib, p: lib.optim.Adamax(p, betas=(1.0, 0.9)),
    lambda lib, p: lib.optim.Adamax(p, betas=(0.9, -0.1)),
    lambda lib, p: lib.optim.Adamax(p, eps=-1e-8),
    lambda lib, p: lib.optim.NAdam(p, momentum_decay=-1),
    lambda lib, p: lib.optim.NAdam(p, weight_decay=-1),
    lambda lib, p: lib.optim.NAdam(p, betas=(0.9, 1.0)),
    lambda lib, p: lib.optim.RAdam(p, lr=-0.5),
    lambda lib, p: lib.optim.RAdam(p, eps=-1),
    lambda lib, p: lib.optim.RAdam(p, betas=(-0.1, 0.9)),
    lambda lib, p: lib.optim.ASGD(p, lr=-1.0),
    lambda lib, p: lib.optim.ASGD(p, weight_decay=-1),
    lambda lib, p: lib.optim.Rprop(p, lr=-1.0),
    lambda lib, p: lib.optim.Rprop(p, etas=(1.5, 1.2)),
    lambda lib, p: lib.optim.Rprop(p, etas=(0.5, 0.9)),
    lambda lib, p: lib.optim.NAdam(p, lr=lib.tensor([0.1, 0.2])),
    lambda lib, p: lib.optim.RAdam([]),
])
def test_errors_match(make):
    t, e = _errors(make)
    assert e == t


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop",
                                  "Adam", "AdamW", "RMSprop"])
def test_capturable_fails_at_step_as_on_a_cpu_build(name):
    t, e = _errors(lambda lib, p: getattr(lib.optim, name)(p, capturable=True), at_step=True)
    assert e == t
