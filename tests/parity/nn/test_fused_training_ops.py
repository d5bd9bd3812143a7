"""The hot-path ops of a training step vs PyTorch: Linear (one node), ReLU with a NumPy
backward, cross entropy on class indices (NllLoss on LogSoftmax), in-place SGD. Values, first
and second derivatives (create_graph goes through the ember-op backward), dtypes kept."""
import numpy as np
import pytest
import torch

import ember


def _second(lib, fn, arrays, needs):
    """loss, d loss / d inputs (create_graph), and d sum(g**3) / d inputs."""
    ts = [lib.tensor(a, requires_grad=n) for a, n in zip(arrays, needs)]
    loss = fn(lib, *ts)
    req = [t for t, n in zip(ts, needs) if n]
    gs = lib.autograd.grad(loss, req, create_graph=True)
    sum((g ** 3).sum() for g in gs).backward()
    return ([loss.detach().numpy()] + [g.detach().numpy() for g in gs]
            + [t.grad.numpy() for t in req])


def _check(fn, arrays, needs, rtol=1e-9, atol=1e-12):
    ours = _second(ember, fn, arrays, needs)
    ref = _second(torch, fn, arrays, needs)
    for a, b in zip(ours, ref):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 2])
def test_cross_entropy_indices_second_derivative(reduction, weighted, ignore):
    r = np.random.default_rng(1)
    x = r.standard_normal((5, 4))
    t = np.array([0, 2, 3, 2, 1])
    w = r.random(4) + 0.1
    scale = np.arange(1.0, 6.0)

    def fn(lib, a):
        loss = lib.nn.functional.cross_entropy(
            a, lib.tensor(t), weight=lib.tensor(w) if weighted else None, ignore_index=ignore,
            reduction=reduction)
        return (loss * lib.tensor(scale)).sum() if reduction == "none" else loss
    _check(fn, [x], [True])


def test_cross_entropy_indices_float32_and_errors():
    x = np.random.default_rng(2).standard_normal((6, 3)).astype(np.float32)
    t = np.array([0, 1, 2, 2, 1, 0])
    out = {}
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        loss = lib.nn.functional.cross_entropy(a, lib.tensor(t))
        loss.backward()
        out[lib] = (loss, a.grad)
    assert out[ember][0].dtype == ember.float32 and out[ember][1].dtype == ember.float32
    np.testing.assert_allclose(out[ember][0].item(), out[torch][0].item(), rtol=1e-6)
    np.testing.assert_allclose(out[ember][1].numpy(), out[torch][1].numpy(), atol=1e-6)
    with pytest.raises(IndexError, match="Target 5 is out of bounds."):
        ember.nn.functional.cross_entropy(ember.tensor(x), ember.tensor([0, 1, 5, 0, 0, 0]))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("lead", [(4,), (2, 3)])
def test_linear_second_derivative(bias, lead):
    r = np.random.default_rng(3)
    x = r.standard_normal(lead + (5,))
    w = r.standard_normal((3, 5))
    b = r.standard_normal(3)

    def fn(lib, a, wt, *bt):
        y = lib.nn.functional.linear(a, wt, bt[0] if bt else None)
        return (y * y).sum()
    arrays = [x, w, b] if bias else [x, w]
    _check(fn, arrays, [True] * len(arrays))


def test_linear_weight_grad_layout_and_dtype():
    lin = ember.nn.Linear(7, 4)
    x = ember.randn(5, 7)
    lin(x).sum().backward()
    assert lin.weight.grad.dtype == ember.float32 and lin.bias.grad.dtype == ember.float32
    assert lin.weight.grad.numpy().flags.c_contiguous
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.ones((5, 4)).T @ x.numpy(),
                               rtol=1e-5, atol=1e-5)


def test_relu_second_derivative():
    x = np.random.default_rng(4).standard_normal((3, 4))
    _check(lambda lib, a: (lib.nn.functional.relu(a) ** 2).sum(), [x], [True])


@pytest.mark.parametrize("kw", [dict(momentum=0.9), dict(momentum=0.9, nesterov=True,
                                                          weight_decay=0.1),
                                dict(momentum=0.5, dampening=0.2, maximize=True), dict()])
def test_sgd_in_place_matches_torch_and_bumps_versions(kw):
    r = np.random.default_rng(5)
    p0 = r.standard_normal((3, 4)).astype(np.float32)
    grads = [r.standard_normal((3, 4)).astype(np.float32) for _ in range(3)]
    res = {}
    for lib in (ember, torch):
        p = lib.tensor(p0.copy(), requires_grad=True)
        opt = lib.optim.SGD([p], lr=0.1, **kw)
        data_before = p.detach().numpy()
        for g in grads:
            p.grad = lib.tensor(g)
            v = p._version
            opt.step()
            assert p._version > v
            assert p.grad.numpy().tolist() == g.tolist()  # the gradient is left alone
        res[lib] = p.detach().numpy()
        if lib is ember:
            assert np.shares_memory(data_before, res[lib])  # updated in place
            assert p.dtype == ember.float32
    np.testing.assert_allclose(res[ember], res[torch], rtol=1e-6, atol=1e-6)
