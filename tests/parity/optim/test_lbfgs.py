"""LBFGS vs PyTorch: 20 float64 steps (each up to ``max_iter`` iterations) on a small tanh
network, a quadratic and the Rosenbrock function, with the fixed step and the
strong-Wolfe line search, give the same parameters to 1e-10, the same losses and
evaluation counts, and state_dicts with torch's keys and types; a state_dict round trip
continues exactly; misuse gives torch's errors."""
import numpy as np
import pytest
import torch

import ember
import ember.optim

R = np.random.default_rng(11)
X = R.standard_normal((8, 3))
Y = R.standard_normal((8, 1))
INIT = {"w1": R.standard_normal((3, 4)) * 0.5, "b1": R.standard_normal(4) * 0.1,
        "w2": R.standard_normal((4, 1)) * 0.5}
A = R.standard_normal((6, 6))
HESSIAN = A @ A.T + 0.1 * np.eye(6)
CENTER = R.standard_normal(6)


def network(lib):
    p = [lib.nn.Parameter(lib.tensor(v.copy())) for v in INIT.values()]

    def loss(p):
        h = lib.tanh(lib.tensor(X) @ p[0] + p[1])
        decay = sum((q ** 2).sum() for q in p)
        return ((h @ p[2] - lib.tensor(Y)) ** 2).mean() + 0.05 * decay
    return p, loss


def quadratic(lib):
    p = [lib.nn.Parameter(lib.tensor(np.zeros(6))), lib.nn.Parameter(lib.tensor(np.ones(2)))]

    def loss(p):
        x = p[0] - lib.tensor(CENTER)
        return 0.5 * (x @ (lib.tensor(HESSIAN) @ x)) + ((p[1] - 3) ** 2).sum()
    return p, loss


def rosenbrock(lib):
    p = [lib.nn.Parameter(lib.tensor(np.array([-1.5, 2.0, -0.5, 1.0])))]

    def loss(p):
        x = p[0]
        return (100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2).sum()
    return p, loss


PROBLEMS = {"network": network, "quadratic": quadratic, "rosenbrock": rosenbrock}


def run(lib, problem, kw, steps=20):
    params, loss_fn = PROBLEMS[problem](lib)
    opt = lib.optim.LBFGS(params, **kw)

    def closure():
        opt.zero_grad()
        loss = loss_fn(params)
        loss.backward()
        return loss
    losses = [opt.step(closure).item() for _ in range(steps)]
    return [p.detach().numpy().copy() for p in params], losses, opt


CASES = [
    dict(),
    dict(lr=0.5, max_iter=5),
    dict(lr=0.1, max_iter=3, history_size=2),
    dict(max_iter=7, max_eval=9, tolerance_grad=1e-5, tolerance_change=1e-7),
    dict(line_search_fn="strong_wolfe"),
    dict(line_search_fn="strong_wolfe", max_iter=4, history_size=3),
    dict(line_search_fn="strong_wolfe", lr=0.3, max_iter=6, max_eval=8),
    dict(line_search_fn="strong_wolfe", max_iter=2, tolerance_change=1e-12),
]


def check_same(lib_runs):
    (tp, tl, topt), (ep, el, eopt) = lib_runs
    for t, e in zip(tp, ep):
        np.testing.assert_allclose(e, t, rtol=0, atol=1e-10)
    np.testing.assert_allclose(el, tl, rtol=1e-10, atol=1e-12)
    ts, es = topt.state[topt._params[0]], eopt.state[eopt._params[0]]
    assert es["func_evals"] == ts["func_evals"]
    assert es["n_iter"] == ts["n_iter"]


@pytest.mark.parametrize("problem", ["network", "quadratic", "rosenbrock"])
@pytest.mark.parametrize("kw", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_twenty_steps_match_torch(problem, kw):
    runs = [run(lib, problem, kw) for lib in (torch, ember)]
    check_same(runs)


def test_rosenbrock_ends_at_the_same_stationary_point():
    """From (-1.5, 2, -0.5, 1) both settle in the 4-D Rosenbrock's local minimum near
    (-0.776, 0.613, 0.382, 0.146)."""
    ends = []
    for lib in (torch, ember):
        params, losses, _ = run(lib, "rosenbrock", dict(line_search_fn="strong_wolfe"))
        ends.append(params[0])
    np.testing.assert_allclose(ends[1], ends[0], rtol=0, atol=1e-10)
    np.testing.assert_allclose(ends[1], [-0.7757, 0.6131, 0.3821, 0.1460], atol=1e-3)


def _state_layout(sd):
    out = {}
    for key, value in sd["state"][0].items():
        if isinstance(value, list):
            out[key] = ("list", len(value),
                        sorted({type(v).__name__.replace("Parameter", "Tensor") for v in value}))
        else:
            out[key] = type(value).__name__
    return out


@pytest.mark.parametrize("kw", [CASES[1], CASES[2], CASES[5], dict(max_iter=1)])
def test_state_dict_layout(kw):
    _, _, topt = run(torch, "network", kw, steps=3)
    _, _, eopt = run(ember, "network", kw, steps=3)
    tsd, esd = topt.state_dict(), eopt.state_dict()
    assert esd["param_groups"] == tsd["param_groups"]
    assert _state_layout(esd) == _state_layout(tsd)
    for key in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(esd["state"][0][key].numpy(), tsd["state"][0][key].numpy(),
                                   rtol=0, atol=1e-10)
    assert esd["state"][0]["prev_loss"] == pytest.approx(tsd["state"][0]["prev_loss"],
                                                         rel=1e-12)


@pytest.mark.parametrize("kw", [CASES[2], CASES[5]])
def test_state_dict_round_trip(kw):
    """5 steps, state_dict into a fresh LBFGS on copies of the parameters, 5 more: the
    same as 10 uninterrupted torch steps."""
    params, loss_fn = network(ember)
    opt = ember.optim.LBFGS(params, **kw)

    def closure_for(o, ps):
        def closure():
            o.zero_grad()
            loss = loss_fn(ps)
            loss.backward()
            return loss
        return closure
    for _ in range(5):
        opt.step(closure_for(opt, params))
    params2 = [ember.nn.Parameter(p.detach().clone()) for p in params]
    opt2 = ember.optim.LBFGS(params2, lr=123.0)
    opt2.load_state_dict(opt.state_dict())
    for _ in range(5):
        opt2.step(closure_for(opt2, params2))
    tp, _, _ = run(torch, "network", kw, steps=10)
    for t, e in zip(tp, params2):
        np.testing.assert_allclose(e.detach().numpy(), t, rtol=0, atol=1e-10)


def test_defaults_and_repr_match():
    for kw in [dict(), dict(max_iter=8),
               dict(max_iter=8, max_eval=3, line_search_fn="strong_wolfe")]:
        t = torch.optim.LBFGS([torch.nn.Parameter(torch.zeros(2))], **kw)
        e = ember.optim.LBFGS([ember.nn.Parameter(ember.zeros(2))], **kw)
        assert e.defaults == t.defaults
        assert repr(e) == repr(t)


def _errors(make):
    out = []
    for lib in (torch, ember):
        p = [lib.nn.Parameter(lib.ones(2)), lib.nn.Parameter(lib.ones(2))]
        with pytest.raises(Exception) as info:
            make(lib, p)
        out.append((type(info.value).__name__, str(info.value)))
    return out


def _bogus_search(lib, p):
    opt = lib.optim.LBFGS(p, line_search_fn="bogus")

    def closure():
        opt.zero_grad()
        loss = (p[0] ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.LBFGS(p, lr=-1.0),
    lambda lib, p: lib.optim.LBFGS([{"params": [p[0]]}, {"params": [p[1]]}]),
    lambda lib, p: lib.optim.LBFGS(p).step(),
    lambda lib, p: lib.optim.LBFGS(p, lr=lib.tensor([1.0, 2.0])),
    _bogus_search,
])
def test_errors_match(make):
    t, e = _errors(make)
    assert e == t
