"""Behaviour tests (no torch) of Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop and LBFGS:
first updates computed by hand from the published update rules, convergence on convex
problems and the Rosenbrock function, LBFGS's budgets and tolerances, flags."""
import numpy as np
import pytest

import ember
import ember.optim
from ember import nn

P0 = np.array([1.0, -2.0, 0.5])


def param(values=P0):
    return nn.Parameter(ember.tensor(np.array(values, dtype=np.float64)))


def quad_step(opt, p, scale=1.0):
    """Loss scale * sum(p**2) / 2: the gradient is scale * p."""
    opt.zero_grad()
    loss = scale * (p * p).sum() / 2
    loss.backward()
    opt.step()
    return loss.item()


def test_adadelta_first_step_by_hand():
    p = param()
    opt = ember.optim.Adadelta([p], lr=0.5, rho=0.8, eps=1e-4)
    quad_step(opt, p)
    g = P0
    v = 0.2 * g ** 2
    delta = np.sqrt(1e-4) / np.sqrt(v + 1e-4) * g
    np.testing.assert_allclose(p.detach().numpy(), P0 - 0.5 * delta, rtol=1e-13)
    np.testing.assert_allclose(opt.state[p]["acc_delta"].numpy(), 0.2 * delta ** 2, rtol=1e-13)


def test_adamax_first_step_is_lr_times_sign():
    p = param()
    opt = ember.optim.Adamax([p], lr=0.1, eps=0.0)
    quad_step(opt, p)
    np.testing.assert_allclose(p.detach().numpy(), P0 - 0.1 * np.sign(P0), rtol=1e-13)
    np.testing.assert_allclose(opt.state[p]["exp_inf"].numpy(), np.abs(P0), rtol=1e-15)


def test_nadam_first_step_by_hand():
    p = param()
    lr, b1, b2, psi = 0.01, 0.9, 0.999, 0.004
    opt = ember.optim.NAdam([p], lr=lr, momentum_decay=psi, eps=0.0)
    quad_step(opt, p)
    g = P0
    mu1 = b1 * (1 - 0.5 * 0.96 ** psi)
    mu2 = b1 * (1 - 0.5 * 0.96 ** (2 * psi))
    m = (1 - b1) * g
    v_hat = (1 - b2) * g ** 2 / (1 - b2)
    expected = P0 - lr * (1 - mu1) / (1 - mu1) * g / np.sqrt(v_hat) \
        - lr * mu2 / (1 - mu1 * mu2) * m / np.sqrt(v_hat)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-6)  # mu_product: float32
    assert opt.state[p]["mu_product"].dtype == ember.float32
    assert opt.state[p]["mu_product"].item() == pytest.approx(mu1, rel=1e-7)


def test_radam_starts_as_momentum_sgd_then_rectifies():
    p = param()
    opt = ember.optim.RAdam([p], lr=0.1)
    quad_step(opt, p)
    # rho_1 = rho_inf - 2 b2 / (1 - b2) <= 5: a plain bias-corrected momentum step
    np.testing.assert_allclose(p.detach().numpy(), P0 - 0.1 * P0, rtol=1e-13)
    p2 = param()
    opt2 = ember.optim.RAdam([p2], lr=0.1, betas=(0.0, 0.5))  # rho_inf = 3: never rectified
    for _ in range(3):
        before = p2.detach().numpy().copy()
        quad_step(opt2, p2)
        np.testing.assert_allclose(p2.detach().numpy(), before * 0.9, rtol=1e-13)


def test_asgd_averages_after_t0():
    p = param()
    opt = ember.optim.ASGD([p], lr=0.1, lambd=0.0, t0=2)
    iterates = []
    for _ in range(6):
        quad_step(opt, p)
        iterates.append(p.detach().numpy().copy())
    # plain SGD (with eta, a float32 state tensor, = 0.1 to float32 precision)
    np.testing.assert_allclose(iterates[-1], P0 * 0.9 ** 6, rtol=1e-6)
    # mu = 1 / max(1, t - t0) after step t weighs step t + 1: the average equals p
    # through step t0 + 2 and is then the running mean from that iterate on
    np.testing.assert_allclose(opt.state[p]["ax"].numpy(), np.mean(iterates[3:], axis=0),
                               rtol=1e-6)
    assert opt.state[p]["eta"].item() == pytest.approx(0.1)
    assert opt.state[p]["mu"].item() == pytest.approx(1 / 4)


def test_rprop_grows_and_shrinks_step_sizes():
    p = param([1.0])
    opt = ember.optim.Rprop([p], lr=0.1, etas=(0.5, 2.0), step_sizes=(1e-3, 0.3))
    trace = []
    for _ in range(5):
        quad_step(opt, p)
        trace.append((p.item(), opt.state[p]["step_size"].item()))
    # same sign: 0.1, 0.2, 0.3 (capped); then p crosses 0: halve, skip; then resume
    expected_p = [0.9, 0.7, 0.4, 0.1, -0.2]
    np.testing.assert_allclose([t[0] for t in trace], expected_p, rtol=1e-12)
    assert [t[1] for t in trace] == pytest.approx([0.1, 0.2, 0.3, 0.3, 0.3])
    quad_step(opt, p)  # sign flipped: step size halves and p stays
    assert p.item() == pytest.approx(-0.2) and opt.state[p]["step_size"].item() == 0.15


@pytest.mark.parametrize("name,kw", [
    ("Adadelta", dict(lr=20.0)), ("Adamax", dict(lr=0.05)), ("NAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05)), ("ASGD", dict(lr=0.05)), ("Rprop", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
])
def test_minimises_and_maximize_climbs(name, kw):
    p = param()
    opt = getattr(ember.optim, name)([p], **kw)
    first = quad_step(opt, p)
    for _ in range(150):
        last = quad_step(opt, p)
    assert last < 0.2 * first
    q = param()
    opt = getattr(ember.optim, name)([q], maximize=True, **kw)
    for _ in range(50):
        quad_step(opt, q, scale=-1.0)  # maximise -|q|^2 / 2
    assert (q.detach().numpy() ** 2).sum() < (P0 ** 2).sum()


@pytest.mark.parametrize("name", ["Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"])
def test_flags(name):
    cls = getattr(ember.optim, name)
    p = param()
    opt = cls([p], capturable=True)
    opt.step()  # no gradients: nothing to check, as in PyTorch
    with pytest.raises(AssertionError, match="capturable=True"):
        quad_step(opt, p)
    p = param()
    plain, fe = param(), param()
    o1, o2 = cls([plain]), cls([fe], foreach=True)
    for _ in range(3):
        quad_step(o1, plain)
        quad_step(o2, fe)
    np.testing.assert_allclose(fe.detach().numpy(), plain.detach().numpy(), rtol=1e-6)


# ----------------------------------------------------------------- LBFGS
def quadratic_problem():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 5))
    h = a @ a.T + np.eye(5)
    b = rng.standard_normal(5)
    x = nn.Parameter(ember.zeros(5, dtype=ember.float64))

    def loss_fn():
        return 0.5 * (x @ (ember.tensor(h) @ x)) - ember.tensor(b) @ x
    return x, loss_fn, np.linalg.solve(h, b)


def make_closure(opt, loss_fn, calls=None):
    def closure():
        if calls is not None:
            calls.append(1)
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_minimises_a_quadratic(line_search_fn):
    x, loss_fn, solution = quadratic_problem()
    opt = ember.optim.LBFGS([x], line_search_fn=line_search_fn, max_iter=50,
                            tolerance_grad=1e-12, tolerance_change=1e-14)
    for _ in range(3):
        opt.step(make_closure(opt, loss_fn))
    np.testing.assert_allclose(x.detach().numpy(), solution, atol=1e-6)


def test_lbfgs_solves_rosenbrock_with_line_search():
    x = nn.Parameter(ember.tensor(np.array([-1.2, 1.0])))

    def loss_fn():
        return 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2
    opt = ember.optim.LBFGS([x], line_search_fn="strong_wolfe", max_iter=100,
                            tolerance_grad=1e-10, tolerance_change=1e-14)
    for _ in range(3):
        opt.step(make_closure(opt, loss_fn))
    np.testing.assert_allclose(x.detach().numpy(), [1.0, 1.0], atol=1e-6)


def test_lbfgs_budgets_and_history():
    x, loss_fn, _ = quadratic_problem()
    calls = []
    opt = ember.optim.LBFGS([x], max_iter=10, max_eval=4, history_size=2)
    first = opt.step(make_closure(opt, loss_fn, calls))
    assert len(calls) == 4  # max_eval bounds the closure calls of one step
    state = opt.state[x]
    assert state["func_evals"] == 4 and state["n_iter"] == 3
    for _ in range(5):
        opt.step(make_closure(opt, loss_fn, calls))
    assert len(state["old_dirs"]) == len(state["old_stps"]) == len(state["ro"]) == 2
    assert opt.step(make_closure(opt, loss_fn)).item() < first.item()
    assert opt.defaults["max_eval"] == 4
    assert ember.optim.LBFGS([x], max_iter=8).defaults["max_eval"] == 10


def test_lbfgs_stops_at_a_stationary_point():
    x = nn.Parameter(ember.zeros(3, dtype=ember.float64))
    calls = []
    opt = ember.optim.LBFGS([x])
    loss = opt.step(make_closure(opt, lambda: (x ** 2).sum(), calls))
    assert loss.item() == 0.0 and len(calls) == 1
    assert set(opt.state[x]) == {"func_evals", "n_iter"}


def test_lbfgs_misuse():
    x = nn.Parameter(ember.zeros(3))
    with pytest.raises(TypeError, match="closure"):
        ember.optim.LBFGS([x]).step()
    with pytest.raises(ValueError, match="parameter groups"):
        ember.optim.LBFGS([{"params": [x]}, {"params": [nn.Parameter(ember.zeros(1))]}])
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        ember.optim.LBFGS([x], lr=-1)


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop"])
def test_older_optimizers_capturable_fails_at_step(name):
    p = param()
    opt = getattr(ember.optim, name)([p], capturable=True)
    with pytest.raises(AssertionError, match="must be on supported devices"):
        quad_step(opt, p)
