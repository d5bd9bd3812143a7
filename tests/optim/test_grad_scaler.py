"""ember.amp.GradScaler and autocast: the loss-scaling cycle, its errors, and the
disabled forms scripts use on machines without CUDA."""
import math
import warnings

import pytest

import ember
from ember import nn


def _setup():
    w = nn.Parameter(ember.tensor([1.0, -2.0], dtype=ember.float64))
    return w, ember.optim.SGD([w], lr=0.1)


def test_scaled_step_equals_unscaled_step():
    w, opt = _setup()
    scaler = ember.amp.GradScaler("cpu", init_scale=1024.0)
    loss = (w * w).sum()
    scaled = scaler.scale(loss)
    assert scaled.item() == pytest.approx(1024.0 * loss.item())
    scaled.backward()
    assert w.grad.tolist() == [2048.0, -4096.0]
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == pytest.approx([0.8, -1.6])
    assert scaler.state_dict()["_growth_tracker"] == 1


def test_overflow_skips_step_and_backs_off():
    w, opt = _setup()
    scaler = ember.amp.GradScaler("cpu", init_scale=8.0, growth_interval=1)
    w.grad = ember.tensor([math.inf, 1.0], dtype=ember.float64)
    assert scaler.step(opt) is None
    scaler.update()
    assert w.tolist() == [1.0, -2.0] and scaler.get_scale() == 4.0
    opt.zero_grad()
    scaler.scale((w * w).sum()).backward()
    scaler.step(opt)
    scaler.update()  # a clean step with growth_interval=1 doubles the scale
    assert scaler.get_scale() == 8.0


def test_cycle_errors():
    w, opt = _setup()
    scaler = ember.amp.GradScaler("cpu")
    with pytest.raises(AssertionError, match="No inf checks were recorded prior to update"):
        scaler.update()
    scaler.scale((w * w).sum()).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="already been called on this optimizer"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) is being called after step"):
        scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="Closure use is not currently supported"):
        scaler.step(opt, closure=lambda: None)
    with pytest.raises(AssertionError, match="growth factor must be > 1.0"):
        ember.amp.GradScaler("cpu", growth_factor=1.0)


def test_disabled_for_cuda_runs_plain_steps():
    w, opt = _setup()
    with pytest.warns(UserWarning, match="CUDA is not available"):
        scaler = ember.amp.GradScaler("cuda")
    assert not scaler.is_enabled() and scaler.get_scale() == 1.0
    loss = (w * w).sum()
    assert scaler.scale(loss) is loss
    loss.backward()
    scaler.step(opt)
    scaler.update()
    assert w.tolist() == pytest.approx([0.8, -1.6])
    assert scaler.state_dict() == {}
    with pytest.warns(FutureWarning, match="deprecated"), \
            pytest.warns(UserWarning, match="CUDA is not available"):
        ember.cuda.amp.GradScaler()


def test_state_dict_round_trip():
    a = ember.amp.GradScaler("cpu", init_scale=16.0)
    a.update(new_scale=32.0)
    b = ember.amp.GradScaler("cpu")
    b.load_state_dict(a.state_dict())
    assert b.get_scale() == 32.0 and b.state_dict() == a.state_dict()


def test_autocast():
    with ember.autocast("cpu", enabled=False):
        y = ember.ones(2, 2) @ ember.ones(2, 2)
    assert y.dtype is ember.float32
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autocast("cuda"):
            pass
    assert "CUDA is not available" in str(caught[0].message)
    with pytest.raises(RuntimeError, match="device type at start of device string"):
        ember.autocast("foo")


def test_on_a_gpu_the_scaler_scales(fake_cuda):
    # the stand-in cuda module (tests/backend/fake_cuda.py): with a GPU there, GradScaler
    # ("cuda") is enabled (no "CUDA is not available" warning) and gives the CPU's steps
    results = {}
    for device in ("cpu", "cuda"):
        w = nn.Parameter(ember.tensor([1.0, -2.0, 0.5], dtype=ember.float32, device=device))
        opt = ember.optim.SGD([w], lr=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no warning at all
            scaler = ember.amp.GradScaler(device, init_scale=1024.0, growth_interval=1)
        assert scaler.is_enabled()
        for step in range(3):
            opt.zero_grad()
            scaled = scaler.scale((w * w).sum())
            assert scaled.device.type == device
            scaled.backward()
            if step == 1:  # an overflow: the step is skipped, the scale halved
                w.grad = ember.tensor([math.inf, 0.0, 0.0], device=device)
            scaler.step(opt)
            scaler.update()
        assert w.device.type == device
        results[device] = (w.detach().cpu().tolist(), scaler.get_scale())
    assert results["cuda"] == results["cpu"]
    assert results["cpu"][1] == 2048.0  # 1024 -> 2048 -> 1024 (overflow) -> 2048
