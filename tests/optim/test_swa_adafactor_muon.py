"""Behaviour tests (no torch) of Adafactor, Muon, SparseAdam and swa_utils: first updates
computed by hand from the published rules, the Newton-Schulz iteration on singular values,
running averages of snapshots, batch-norm statistics of a dataset, SWALR's schedule,
argument errors."""
import math

import numpy as np
import pytest

import ember
import ember.optim
from ember import nn
from ember.optim import swa_utils


def param(values):
    return nn.Parameter(ember.tensor(np.array(values, dtype=np.float64)))


def grad_step(opt, p, g):
    """One step with gradient ``g``."""
    p.grad = ember.tensor(np.array(g, dtype=np.float64))
    opt.step()


# ---- Adafactor -----------------------------------------------------------------------------
def test_adafactor_first_step_on_a_vector_is_a_scaled_sign():
    """Step 1: the variance is g**2, the update sign(g) (RMS 1, no clipping), the step size
    max(eps2, RMS(p)) * min(lr, 1)."""
    p0 = np.array([1.0, -2.0, 0.5, 3.0])
    p = param(p0)
    opt = ember.optim.Adafactor([p], lr=0.1)
    g = np.array([0.3, -0.1, 2.0, -0.7])
    grad_step(opt, p, g)
    alpha = max(1e-3, np.sqrt(np.mean(p0 ** 2))) * 0.1
    np.testing.assert_allclose(p.detach().numpy(), p0 - alpha * np.sign(g), rtol=1e-14)
    np.testing.assert_allclose(opt.state[p]["variance"].numpy(), g ** 2, rtol=1e-15)
    assert opt.state[p]["step"].item() == 1.0 and opt.state[p]["step"].dtype == ember.float32


def _factored_update(g, row, col, eps1, d):
    v = (row @ col) / max(row.mean(), eps1)
    u = g / np.sqrt(np.maximum(v, eps1 ** 2))
    return u / max(1.0, np.sqrt(np.mean(u ** 2)) / d)


def test_adafactor_matrix_steps_by_hand():
    """Two steps on a matrix: row/column means of g**2 averaged with weight t**-0.8, the
    variance their outer product over the mean row, update clipped to RMS d, weight decay
    decoupled."""
    rng = np.random.default_rng(0)
    p0, g1, g2 = rng.standard_normal((3, 3, 4))
    lr, wd, d, eps1, eps2 = 0.05, 0.1, 1.2, 1e-30, 1e-3
    p = param(p0)
    opt = ember.optim.Adafactor([p], lr=lr, weight_decay=wd, d=d, eps=(eps1, eps2))
    expected, row, col = p0.copy(), np.zeros((3, 1)), np.zeros((1, 4))
    for t, g in ((1, g1), (2, g2)):
        grad_step(opt, p, g)
        w = t ** -0.8
        row += w * ((g ** 2).mean(1, keepdims=True) - row)
        col += w * ((g ** 2).mean(0, keepdims=True) - col)
        alpha = max(eps2, np.sqrt(np.mean(expected ** 2))) * min(lr, t ** -0.5)
        expected = expected * (1 - lr * wd) - alpha * _factored_update(g, row, col, eps1, d)
    np.testing.assert_allclose(p.detach().numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["row_var"].numpy(), row, rtol=1e-13)
    np.testing.assert_allclose(opt.state[p]["col_var"].numpy(), col, rtol=1e-13)
    assert list(opt.state[p]) == ["step", "row_var", "col_var"]


def test_adafactor_batched_matrices_factor_the_last_two_dims_and_maximize():
    p = param(np.ones((2, 3, 4)))
    opt = ember.optim.Adafactor([p], maximize=True)
    grad_step(opt, p, np.full((2, 3, 4), -1.0))
    assert tuple(opt.state[p]["row_var"].shape) == (2, 3, 1)
    assert tuple(opt.state[p]["col_var"].shape) == (2, 1, 4)
    np.testing.assert_allclose(p.detach().numpy(), 1 - 0.01, rtol=1e-12)  # climbs -g


def test_adafactor_foreach_gives_the_same_numbers():
    out = []
    for foreach in (None, True):
        ps = [param([[1.0, 2.0], [3.0, -1.0]]), param([0.5, -0.5])]
        opt = ember.optim.Adafactor(ps, lr=0.1, foreach=foreach)
        for _ in range(3):
            opt.zero_grad()
            ((ps[0] ** 2).sum() + (ps[0].sum() * ps[1] ** 3).sum()).backward()
            opt.step()
        out.append([q.detach().numpy() for q in ps])
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kw,match", [
    (dict(lr=-0.1), "Learning rate should be >= 0 but is: -0.1"),
    (dict(beta2_decay=0.1), "beta2_decay should be <= 0"),
    (dict(eps=(-1.0, 0.1)), "epsilon1 should be >= 0"),
    (dict(eps=(None, -0.1)), "epsilon2 should be >= 0"),
    (dict(d=0.9), "Clipping threshold d should be >= 1"),
    (dict(weight_decay=-1.0), "weight_decay should be >= 0"),
])
def test_adafactor_argument_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        ember.optim.Adafactor([param([1.0])], **kw)


# ---- Muon ----------------------------------------------------------------------------------
def _bf16(x):
    return ember.tensor(np.asarray(x, dtype=np.float32)).bfloat16().float().numpy()


def test_muon_orthogonalizes_singular_values_by_the_quintic():
    """A diagonal gradient's singular values s / ||G||_F go through s -> a s + b s^3 + c s^5
    ns_steps times (bfloat16 arithmetic: 1e-2); the step is lr times that (square: no lr
    adjustment), nesterov's update g + momentum * buf = g (1 + momentum (1 - momentum))."""
    a, b, c = 3.4445, -4.775, 2.0315
    g = np.diag([3.0, 1.0, 0.2])
    p = param(np.zeros((3, 3)))
    opt = ember.optim.Muon([p], lr=0.1, weight_decay=0.0)
    grad_step(opt, p, g)
    s = np.diag(g) / np.linalg.norm(g)
    for _ in range(5):
        s = a * s + b * s ** 3 + c * s ** 5
    np.testing.assert_allclose(p.detach().numpy(), -0.1 * np.diag(s), atol=1e-2)
    assert np.all((s > 0.6) & (s < 1.2))  # near 1 for all three, however unequal g is
    np.testing.assert_allclose(opt.state[p]["momentum_buffer"].numpy(), 0.05 * g, rtol=1e-14)


@pytest.mark.parametrize("shape,fn,ratio", [((6, 2), None, math.sqrt(3)),
                                            ((2, 6), "original", 1.0),
                                            ((6, 2), "match_rms_adamw", 0.2 * math.sqrt(6))])
def test_muon_lr_adjustment_and_weight_decay(shape, fn, ratio):
    """G = U diag(sigma) V^T orthogonalizes to U diag(q(sigma / |sigma|)) V^T, q the quintic
    five times (to bfloat16 accuracy); decay multiplies p by 1 - lr wd first."""
    rng = np.random.default_rng(1)
    k = min(shape)
    u = np.linalg.qr(rng.standard_normal((max(shape), k)))[0]
    v = np.linalg.qr(rng.standard_normal((k, k)))[0]
    sigma = np.array([2.0, 1.5])
    g = u @ np.diag(sigma) @ v.T
    if shape[0] < shape[1]:
        g = g.T
    p0 = rng.standard_normal(shape)
    p = param(p0)
    opt = ember.optim.Muon([p], lr=0.01, weight_decay=0.5, momentum=0.0, adjust_lr_fn=fn)
    grad_step(opt, p, g)
    s = sigma / np.linalg.norm(sigma)
    for _ in range(5):
        s = 3.4445 * s - 4.775 * s ** 3 + 2.0315 * s ** 5
    update = u @ np.diag(s) @ v.T
    if shape[0] < shape[1]:
        update = update.T
    expected = p0 * (1 - 0.01 * 0.5) - 0.01 * ratio * update
    np.testing.assert_allclose(p.detach().numpy(), expected, atol=0.01 * ratio * 2e-2)


def test_muon_errors():
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        ember.optim.Muon([param([1.0, 2.0])])
    with pytest.raises(ValueError, match="Adjust learning rate function x is not supported"):
        ember.optim.Muon([param([[1.0]])], adjust_lr_fn="x")
    with pytest.raises(ValueError, match="momentum should be >= 0"):
        ember.optim.Muon([param([[1.0]])], momentum=-1)
    p = param([[1.0]])
    opt = ember.optim.Muon([p], ns_steps=100)
    with pytest.raises(ValueError, match="less than 100"):
        grad_step(opt, p, [[1.0]])


# ---- SparseAdam ----------------------------------------------------------------------------
def test_sparse_adam_refuses_dense_gradients():
    p = param([1.0, 2.0])
    opt = ember.optim.SparseAdam([p])
    assert opt.step() is None  # no gradient yet: nothing to do
    p.grad = ember.ones(2, dtype=ember.float64)
    with pytest.raises(RuntimeError, match="does not support dense gradients"):
        opt.step()
    assert len(opt.state) == 0
    with pytest.raises(ValueError, match="Invalid learning rate: 0.0"):
        ember.optim.SparseAdam([p], lr=0.0)


# ---- swa_utils -----------------------------------------------------------------------------
def _set(model, values):
    with ember.no_grad():
        for p, v in zip(model.parameters(), values):
            p.copy_(ember.tensor(v, dtype=p.dtype))


def test_averaged_model_is_the_mean_of_the_snapshots():
    model = nn.Linear(2, 1)
    swa = swa_utils.AveragedModel(model)
    snaps = [(np.array([[1.0, 2.0]]), np.array([0.5])), (np.array([[3.0, -2.0]]), np.array([1.5])),
             (np.array([[2.0, 6.0]]), np.array([-0.5]))]
    for snap in snaps:
        _set(model, snap)
        swa.update_parameters(model)
    np.testing.assert_allclose(swa.module.weight.detach().numpy(), [[2.0, 2.0]], rtol=1e-6)
    np.testing.assert_allclose(swa.module.bias.detach().numpy(), [0.5], rtol=1e-6)
    assert swa.n_averaged.item() == 3 and swa.n_averaged.dtype == ember.int64
    assert list(swa.state_dict()) == ["n_averaged", "module.weight", "module.bias"]
    x = ember.tensor([[1.0, 1.0]])
    assert swa(x).item() == pytest.approx(4.5)
    assert swa.module.weight is not model.weight  # a copy


def test_ema_averages_and_buffers():
    """EMA: first update copies, then ema = d ema + (1 - d) w. Without use_buffers the
    buffers are copied from the model; with it they are averaged too."""
    model = nn.BatchNorm1d(1)
    ema = swa_utils.AveragedModel(model, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5))
    ema_b = swa_utils.AveragedModel(model, avg_fn=swa_utils.get_ema_avg_fn(0.5),
                                    use_buffers=True)
    for w, mean in ((1.0, 2.0), (3.0, 6.0), (5.0, 0.0)):
        with ember.no_grad():
            model.weight.fill_(w)
            model.running_mean.fill_(mean)
        ema.update_parameters(model)
        ema_b.update_parameters(model)
    # 1 -> 0.5 * 1 + 0.5 * 3 = 2 -> 0.5 * 2 + 0.5 * 5 = 3.5
    assert ema.module.weight.item() == 3.5 and ema_b.module.weight.item() == 3.5
    assert ema.module.running_mean.item() == 0.0  # copied
    assert ema_b.module.running_mean.item() == 2.0  # 2 -> 4 -> 2


def test_update_bn_computes_the_dataset_statistics():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((12, 3)) * 2 + 1
    model = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
    _set(model, [np.eye(3), np.zeros(3)])
    model.eval()
    loader = [(ember.tensor(data[i:i + 4], dtype=ember.float32), None) for i in (0, 4, 8)]
    swa_utils.update_bn(loader, model)
    bn = model[1]
    # cumulative averages of the per-batch means and unbiased variances
    means = [data[i:i + 4].mean(0) for i in (0, 4, 8)]
    variances = [data[i:i + 4].var(0, ddof=1) for i in (0, 4, 8)]
    np.testing.assert_allclose(bn.running_mean.numpy(), np.mean(means, 0), rtol=1e-5)
    np.testing.assert_allclose(bn.running_var.numpy(), np.mean(variances, 0), rtol=1e-5)
    assert bn.momentum == 0.1 and not model.training
    swa_utils.update_bn(loader, nn.Linear(3, 3))  # no batch norm: nothing to do


def test_swalr_cosine_schedule_by_hand():
    opt = ember.optim.SGD([nn.Parameter(ember.zeros(1))], lr=1.0)
    sched = swa_utils.SWALR(opt, swa_lr=0.2, anneal_epochs=4)
    lrs = [opt.param_groups[0]["lr"]]
    for _ in range(6):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    expected = [0.2 + 0.8 * (1 + math.cos(math.pi * min(t, 4) / 4)) / 2 for t in range(7)]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)
    assert "anneal_func" not in sched.state_dict()
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_strategy="step")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=-2)


def test_swa_utils_reached_as_an_attribute():
    assert ember.optim.swa_utils is swa_utils
    with pytest.raises(ValueError, match="Invalid decay value 2"):
        swa_utils.get_ema_avg_fn(2)
