"""``fused=True`` and ``foreach=True`` on SGD, Adam, AdamW and Adagrad: PyTorch's argument
checks (fused with differentiable, fused with foreach, fused with integer parameters, a
Tensor lr with foreach) raise the same errors, and the steps, which run the same arithmetic
as the default path in ember, give torch's parameters (also with a 1-element Tensor lr)."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import error_of

FUSED = ["SGD", "Adam", "AdamW", "Adagrad"]
P0 = np.array([0.5, -1.0, 2.0])
GRADS = [np.array([0.1, -0.3, 0.2]), np.array([-0.2, 0.4, 0.05]), np.array([0.3, 0.1, -0.1])]


def _steps(lib, name, param, **kwargs):
    opt = getattr(lib.optim, name)([param], **kwargs)
    for g in GRADS:
        param.grad = lib.tensor(g, dtype=param.dtype)
        opt.step()
    return param


def _same_error(make):
    expected = error_of(lambda: make(torch))
    assert expected is not None
    got = error_of(lambda: make(ember))
    assert got == (expected[0], expected[1].replace("torch.", "ember."))


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("kwargs", [dict(fused=True, differentiable=True),
                                    dict(fused=True, foreach=True),
                                    dict(fused=True, foreach=True, differentiable=True)], ids=str)
def test_construction_errors(name, kwargs):
    _same_error(lambda L: getattr(L.optim, name)([L.zeros(3, requires_grad=True)], lr=0.1,
                                                 **kwargs))


@pytest.mark.parametrize("name", FUSED)
def test_fused_refuses_integer_parameters_at_the_step(name):
    def make(L):
        p = L.zeros(3, dtype=L.int64)
        return _steps(L, name, p, lr=0.1, fused=True)
    _same_error(make)


@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_tensor_lr_with_foreach(name):
    _same_error(lambda L: getattr(L.optim, name)([L.zeros(3, requires_grad=True)],
                                                 lr=L.tensor(0.1), foreach=True))


@pytest.mark.parametrize("name", FUSED)
@pytest.mark.parametrize("flags", [dict(fused=True), dict(foreach=True), dict(fused=False),
                                   dict(fused=True, maximize=True, weight_decay=0.1)], ids=str)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_steps_match_torch(name, flags, dtype):
    out = [_steps(lib, name, lib.tensor(P0.astype(dtype), requires_grad=True), lr=0.1,
                  **flags).detach().numpy() for lib in (torch, ember)]
    assert out[1].dtype == out[0].dtype
    np.testing.assert_allclose(out[1], out[0], rtol=1e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("name", FUSED + ["RMSprop"])
@pytest.mark.parametrize("lr_shape", [(), (1,)], ids=["0-d", "1-element"])
def test_tensor_lr_steps_match_torch(name, lr_shape):
    out = [_steps(lib, name, lib.tensor(P0, requires_grad=True),
                  lr=lib.tensor(np.full(lr_shape, 0.1))).detach().numpy()
           for lib in (torch, ember)]
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)


def test_fused_adam_with_capturable_runs_on_cpu():
    """PyTorch's fused step has no CUDA-graph device check (capturable=True alone fails)."""
    out = [_steps(lib, "Adam", lib.tensor(P0, requires_grad=True), lr=0.1, fused=True,
                  capturable=True).detach().numpy() for lib in (torch, ember)]
    np.testing.assert_allclose(out[1], out[0], rtol=1e-12)
