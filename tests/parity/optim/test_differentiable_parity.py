"""``differentiable=True`` against PyTorch: the parameters after 1-3 recorded steps, and the
gradients of a loss of them w.r.t. the initial parameters, every step's gradient and a
tensor lr (float64; float32 values too); PyTorch's errors: its own backward failures where
a step changes in place a tensor an earlier step saved, tensor lr where a number is
needed, foreach, fused."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import DEVICE, error_of

P0 = [0.7, -1.3, 0.4, 2.1]
GRADS = [[0.5, -0.2, 0.9, -1.1], [-0.3, 0.6, 0.25, 0.8], [0.45, 0.35, -0.7, 0.2]]
WEIGHTS = [1.0, -2.0, 0.5, 3.0]


def _tensor(lib, value, dtype, grad):
    device = DEVICE if lib is ember else None
    return lib.tensor(value, dtype=getattr(lib, dtype), requires_grad=grad, device=device)


def _host(t):
    return None if t is None else t.detach().cpu().numpy()


def _run(lib, name, kwargs, steps=3, tensor_lr=False, dtype="float64", constant_grads=False):
    """Parameters after ``steps`` differentiable steps and the gradients of a loss of them
    w.r.t. p0, each step's gradient, lr (if a tensor) and the tensors in ``kwargs`` given
    as ``"T:value"`` (hyperparameters that require grad)."""
    leaves = []

    def hyper(v):
        if isinstance(v, str) and v.startswith("T:"):
            leaves.append(_tensor(lib, float(v[2:]), dtype, True))
            return leaves[-1]
        return tuple(hyper(x) for x in v) if isinstance(v, tuple) else v
    kwargs = {k: hyper(v) for k, v in kwargs.items()}
    lr = hyper("T:0.1") if tensor_lr else 0.1
    p0 = _tensor(lib, P0, dtype, True)
    grads = [_tensor(lib, GRADS[k % len(GRADS)], dtype, not constant_grads)
             for k in range(steps)]
    p = p0.clone()
    opt = getattr(lib.optim, name)([p], lr=lr, differentiable=True, **kwargs)
    for g in grads:
        p.grad = g * 1.0
        opt.step()
    loss = (p * _tensor(lib, WEIGHTS, dtype, False)).sum() + (p * p).sum()
    wrt = [p0, *(g for g in grads if g.requires_grad), *leaves]
    return [_host(p)] + [_host(g) for g in lib.autograd.grad(loss, wrt, allow_unused=True)]


def _same(name, kwargs, **options):
    expected = error_of(lambda: _run(torch, name, kwargs, **options))
    if expected is not None:
        got = error_of(lambda: _run(ember, name, kwargs, **options))
        assert got is not None, expected
        # ember names clamp_'s node Clamp where PyTorch numbers the overload (Clamp1)
        assert got[0] == expected[0]
        assert got[1] == expected[1].replace("torch.", "ember.").replace("Clamp1", "Clamp")
        return
    want = _run(torch, name, kwargs, **options)
    got = _run(ember, name, kwargs, **options)
    tol = (dict(rtol=1e-10, atol=1e-12) if options.get("dtype", "float64") == "float64"
           else dict(rtol=1e-5, atol=1e-6))
    for w, g in zip(want, got):
        assert (w is None) == (g is None)
        if w is not None:
            np.testing.assert_allclose(g, w, **tol)


CASES = [
    ("SGD", {}), ("SGD", dict(momentum=0.9)),
    ("SGD", dict(momentum=0.9, nesterov=True, weight_decay=0.1)),
    ("SGD", dict(momentum=0.5, dampening=0.3, maximize=True)),
    ("SGD", dict(foreach=True, momentum=0.9)),
    ("Adam", {}), ("Adam", dict(amsgrad=True, weight_decay=0.1)), ("Adam", dict(maximize=True)),
    ("AdamW", {}), ("AdamW", dict(amsgrad=True)),
    ("RMSprop", {}), ("RMSprop", dict(centered=True, momentum=0.5, weight_decay=0.1)),
    ("RMSprop", dict(momentum=0.5)),
    ("Adagrad", {}), ("Adagrad", dict(lr_decay=0.1, weight_decay=0.1,
                                      initial_accumulator_value=0.2)),
    ("Adadelta", {}), ("Adadelta", dict(weight_decay=0.1, maximize=True)),
    ("Adamax", {}), ("Adamax", dict(weight_decay=0.1)),
    ("NAdam", {}), ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", dict(weight_decay=0.1)),
    ("RAdam", {}), ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("ASGD", {}), ("ASGD", dict(t0=1, lambd=0.1, weight_decay=0.1)),
    ("Rprop", {}), ("Rprop", dict(etas=(0.3, 1.5))),
]


@pytest.mark.parametrize("tensor_lr", [False, True], ids=["lr", "tensor_lr"])
@pytest.mark.parametrize("name, kwargs", CASES, ids=str)
def test_three_steps_match_torch(name, kwargs, tensor_lr):
    _same(name, kwargs, tensor_lr=tensor_lr)


@pytest.mark.parametrize("name, kwargs, options", [
    ("Adam", dict(amsgrad=True), dict(steps=1, tensor_lr=True)),
    ("SGD", dict(momentum=0.9, weight_decay=0.1), dict(steps=1, tensor_lr=True)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True), dict(steps=1, tensor_lr=True)),
    ("Adamax", dict(weight_decay=0.1), dict(steps=1)),
    ("Rprop", {}, dict(steps=1)),
    ("RMSprop", dict(centered=True, weight_decay=0.1), dict(steps=1)),
    # RAdam's rectified branch (the SMA length passes 5 at the 7th step with beta2 = 0.9)
    ("RAdam", dict(betas=(0.9, 0.9)), dict(steps=8, tensor_lr=True)),
    ("RAdam", dict(betas=(0.9, 0.9), weight_decay=0.1, decoupled_weight_decay=True),
     dict(steps=8)),
    ("ASGD", dict(t0=1, lambd=0.1, alpha=0.5), dict(steps=4, tensor_lr=True)),
    ("AdamW", dict(weight_decay=0.3), dict(tensor_lr=True)),
    # hyperparameters given as tensors that require grad
    ("Adam", dict(betas=("T:0.9", "T:0.99")), dict(tensor_lr=True)),
    ("Adam", dict(weight_decay="T:0.1"), dict(steps=2)),
    ("SGD", dict(weight_decay="T:0.1"), dict(tensor_lr=True)),
    ("Adam", dict(betas=("T:0.9", 0.99)), {}),
    ("SGD", dict(weight_decay="T:0.1", foreach=True), {}),
    ("SGD", dict(weight_decay="T:0.1", foreach=True, maximize=True), {}),
    ("SGD", dict(foreach=True), dict(tensor_lr=True)),
    # float32 parameters (the step counters and moments round as PyTorch's)
    ("Adam", {}, dict(dtype="float32", tensor_lr=True)),
    ("NAdam", {}, dict(dtype="float32")),
    ("RMSprop", dict(momentum=0.5), dict(dtype="float32")),
], ids=str)
def test_more_configurations_match_torch(name, kwargs, options):
    _same(name, kwargs, **options)


NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
         "ASGD", "Rprop"]


@pytest.mark.parametrize("name", NAMES)
def test_gradients_that_do_not_require_grad(name):
    # only p0 (and lr) require grad: Adamax's second step still changes its saved exp_inf
    _same(name, {}, constant_grads=True, tensor_lr=name not in ("RMSprop", "Adagrad",
                                                                "Adadelta", "Adamax", "Rprop"))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("options", [dict(foreach=True), dict(fused=True)], ids=str)
def test_foreach_and_fused_errors_match_torch(name, options):
    _same(name, options, steps=1)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adagrad"])
def test_a_leaf_parameter_that_requires_grad(name):
    def step(lib):
        w = _tensor(lib, P0, "float64", True)
        w.grad = _tensor(lib, GRADS[0], "float64", False)
        getattr(lib.optim, name)([w], lr=0.1, differentiable=True).step()
    assert error_of(lambda: step(ember)) == error_of(lambda: step(torch))
