"""Behaviour tests (no torch) of ConstantLR, LinearLR, PolynomialLR, SequentialLR,
ChainedScheduler, CyclicLR and CosineAnnealingWarmRestarts against their closed forms."""
import math
import warnings

import numpy as np
import pytest

import ember
import ember.optim
from ember.optim import lr_scheduler as S


def sgd(lr=1.0, groups=1, **kw):
    params = [{"params": [ember.nn.Parameter(ember.zeros(1))], "lr": lr * (i + 1)}
              for i in range(groups)]
    return ember.optim.SGD(params, lr=lr, **kw)


def run(opt, sched, epochs, key="lr", group=0):
    seq = [opt.param_groups[group][key]]
    for _ in range(epochs):
        opt.step()
        sched.step()
        seq.append(opt.param_groups[group][key])
    return seq


def test_constant_and_linear_closed_forms():
    opt = sgd(0.5)
    seq = run(opt, S.ConstantLR(opt, factor=0.2, total_iters=4), 8)
    np.testing.assert_allclose(seq, [0.1] * 4 + [0.5] * 5, rtol=1e-14)
    opt = sgd(0.5)
    seq = run(opt, S.LinearLR(opt, start_factor=0.1, end_factor=0.7, total_iters=6), 9)
    expected = [0.5 * (0.1 + 0.6 * min(e, 6) / 6) for e in range(10)]
    np.testing.assert_allclose(seq, expected, rtol=1e-13)


@pytest.mark.parametrize("power", [1.0, 2.0, 0.5])
def test_polynomial_closed_form(power):
    opt = sgd(0.3)
    seq = run(opt, S.PolynomialLR(opt, total_iters=7, power=power), 10)
    expected = [0.3 * (1 - min(e, 7) / 7) ** power for e in range(11)]
    np.testing.assert_allclose(seq, expected, rtol=1e-12, atol=1e-15)


def test_sequential_restarts_each_scheduler_at_its_milestone():
    opt = sgd(1.0)
    warm = S.LinearLR(opt, start_factor=0.25, total_iters=3)
    decay = S.ExponentialLR(opt, gamma=0.5)
    sched = S.SequentialLR(opt, [warm, decay], milestones=[4])
    seq = run(opt, sched, 7)
    np.testing.assert_allclose(seq, [0.25, 0.5, 0.75, 1.0, 1.0, 0.5, 0.25, 0.125], rtol=1e-14)
    assert sched.get_last_lr() == [0.125] and sched.last_epoch == 7


def test_chained_multiplies_the_schedules():
    opt = sgd(1.0, groups=2)
    sched = S.ChainedScheduler([S.ConstantLR(opt, factor=0.5, total_iters=3),
                                S.ExponentialLR(opt, gamma=0.9)])
    seq = run(opt, sched, 6, group=1)
    expected = [2.0 * 0.9 ** e * (0.5 if e < 3 else 1.0) for e in range(7)]
    np.testing.assert_allclose(seq, expected, rtol=1e-13)
    assert sched.get_last_lr() == pytest.approx([expected[-1] / 2, expected[-1]])


def triangle(i, up, down):
    """Position in [0, 1] of iteration i on a triangle wave rising for up, falling for down."""
    t = i % (up + down)
    return t / up if t <= up else 1 - (t - up) / down


@pytest.mark.parametrize("mode", ["triangular", "triangular2", "exp_range"])
def test_cyclic_modes(mode):
    opt = sgd(0.1, momentum=0.9)
    sched = S.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=3, step_size_down=2,
                       mode=mode, gamma=0.8)
    lrs = run(opt, sched, 16)
    for i, lr in enumerate(lrs):
        cycle = i // 5 + 1
        scale = {"triangular": 1.0, "triangular2": 0.5 ** (cycle - 1),
                 "exp_range": 0.8 ** i}[mode]
        assert lr == pytest.approx(0.1 + 0.4 * triangle(i, 3, 2) * scale, rel=1e-12), i
    # momentum moves inversely: max at base_lr, base at max_lr
    opt = sgd(0.1, momentum=0.9)
    sched = S.CyclicLR(opt, base_lr=0.1, max_lr=0.5, step_size_up=2)
    assert run(opt, sched, 4, key="momentum") == pytest.approx([0.9, 0.85, 0.8, 0.85, 0.9])


def test_cyclic_custom_scale_fn_and_adam_betas():
    opt = ember.optim.Adam([ember.nn.Parameter(ember.zeros(1))], lr=0.1)
    sched = S.CyclicLR(opt, base_lr=0.0, max_lr=1.0, step_size_up=1,
                       scale_fn=lambda x: 1 / x, scale_mode="cycle")
    assert run(opt, sched, 6) == pytest.approx([0, 1, 0, 0.5, 0, 1 / 3, 0])
    assert opt.param_groups[0]["betas"] == (0.9, 0.999)
    assert sched.state_dict()["_scale_fn_custom"] is None


def test_cyclic_saves_callable_object_state():
    class Scale:
        def __init__(self):
            self.base = 0.5

        def __call__(self, x):
            return self.base ** x

    opt = sgd(0.1, momentum=0.9)
    fn = Scale()
    sched = S.CyclicLR(opt, 0.1, 0.2, scale_fn=fn)
    fn.base = 0.25
    sd = sched.state_dict()
    assert sd["_scale_fn_custom"] == {"base": 0.25}
    other_fn = Scale()
    other = S.CyclicLR(sgd(0.1, momentum=0.9), 0.1, 0.2, scale_fn=other_fn)
    other.load_state_dict(sd)
    assert other_fn.base == 0.25 and other._scale_fn_custom is other_fn


@pytest.mark.parametrize("T_0,T_mult", [(3, 1), (2, 2), (1, 3)])
def test_warm_restarts_closed_form(T_0, T_mult):
    opt = sgd(1.0)
    seq = run(opt, S.CosineAnnealingWarmRestarts(opt, T_0=T_0, T_mult=T_mult, eta_min=0.1), 20)
    starts, T_i, expected = 0, T_0, []
    for epoch in range(21):
        if epoch - starts >= T_i:
            starts += T_i
            T_i *= T_mult
        expected.append(0.1 + 0.9 * (1 + math.cos(math.pi * (epoch - starts) / T_i)) / 2)
    np.testing.assert_allclose(seq, expected, rtol=1e-12)


def test_warm_restarts_fractional_epoch():
    opt = sgd(1.0)
    sched = S.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    sched.step(2.5)  # in the second period (length 4), 0.5 into it
    assert sched.T_i == 4 and sched.T_cur == pytest.approx(0.5) and sched.last_epoch == 2
    assert opt.param_groups[0]["lr"] == pytest.approx((1 + math.cos(math.pi / 8)) / 2)
    with pytest.raises(ValueError, match="Expected non-negative epoch, but got -1"):
        sched.step(-1)


@pytest.mark.parametrize("make", [
    lambda o: S.ConstantLR(o, factor=0.5, total_iters=3),
    lambda o: S.LinearLR(o, start_factor=0.5, total_iters=5),
    lambda o: S.PolynomialLR(o, total_iters=6, power=2.0),
    lambda o: S.CyclicLR(o, 0.1, 1.0, step_size_up=3, mode="triangular2"),
    lambda o: S.CosineAnnealingWarmRestarts(o, T_0=3, T_mult=2),
    lambda o: S.SequentialLR(o, [S.ConstantLR(o, factor=0.5, total_iters=2),
                                 S.ExponentialLR(o, gamma=0.8)], milestones=[3]),
    lambda o: S.ChainedScheduler([S.LinearLR(o, total_iters=3),
                                  S.ExponentialLR(o, gamma=0.8)]),
])
def test_state_dict_resumes(make):
    opt = sgd(1.0, momentum=0.9)
    full = run(opt, make(opt), 14)
    opt = sgd(1.0, momentum=0.9)
    sched = make(opt)
    run(opt, sched, 6)
    osd, ssd = opt.state_dict(), sched.state_dict()
    assert "optimizer" not in ssd
    opt2 = sgd(1.0, momentum=0.9)
    sched2 = make(opt2)
    opt2.load_state_dict(osd)
    sched2.load_state_dict(ssd)
    assert run(opt2, sched2, 8) == pytest.approx(full[6:], rel=1e-13)


def test_get_lr_outside_step_warns_and_tensor_lr_is_filled_in_place():
    lr = ember.tensor(0.5, dtype=ember.float64)
    opt = ember.optim.SGD([ember.nn.Parameter(ember.zeros(1))], lr=lr)
    sched = S.LinearLR(opt, start_factor=0.5, total_iters=2)
    assert opt.param_groups[0]["lr"] is lr and lr.item() == 0.25
    last = sched.get_last_lr()[0]
    opt.step()
    sched.step()
    assert lr.item() == pytest.approx(0.375) and last.item() == 0.25  # a copy, not the lr
    with pytest.warns(UserWarning, match="please use `get_last_lr\\(\\)`"):
        sched.get_lr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        opt.step()
        sched.step()
