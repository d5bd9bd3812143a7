"""Adafactor, Muon, SparseAdam and swa_utils vs PyTorch: several steps on a small tanh network
give the same parameters (float32 to rounding, float64 to 1e-12; Muon's bfloat16
Newton-Schulz iteration included), the state_dicts have torch's keys, dtypes and values,
errors have torch's types and wording; AveragedModel, update_bn and SWALR give torch's
averages, statistics and learning rates. ember's tensors live on EMBER_PARITY_DEVICE."""
import math
import warnings

import numpy as np
import pytest
import torch

import ember
import ember.optim
from tests.parity.compare import DEVICE

R = np.random.default_rng(3)
X = R.standard_normal((6, 4))
INIT = {"w1": R.standard_normal((4, 5)) * 0.7, "b1": R.standard_normal(5) * 0.3,
        "w2": R.standard_normal((5, 3)) * 0.7, "w3": R.standard_normal((2, 3, 4)) * 0.5,
        "unused": R.standard_normal((3, 2))}
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


def _device(lib):
    return DEVICE if lib is ember else None


def make_params(lib, dtype, keys=None):
    dt = getattr(lib, dtype)
    return {k: lib.nn.Parameter(lib.tensor(v, dtype=dt, device=_device(lib)))
            for k, v in INIT.items() if keys is None or k in keys}


def loss_of(lib, p, dtype):
    x = lib.tensor(X, dtype=getattr(lib, dtype), device=_device(lib))
    h = lib.tanh(x @ p["w1"] + p["b1"]) if "b1" in p else lib.tanh(x @ p["w1"])
    loss = (lib.sin(h @ p["w2"]) ** 2).sum()
    return loss + (p["w3"] ** 3).sum() if "w3" in p else loss


def run(lib, name, kw, dtype="float32", steps=6, keys=None, groups=None, closure=False):
    p = make_params(lib, dtype, keys)
    params = list(p.values()) if groups is None else [
        {"params": [p[k] for k in ks], **extra} for ks, extra in groups]
    opt = getattr(lib.optim, name)(params, **kw)
    sign = -1.0 if kw.get("maximize") else 1.0

    def closure_fn():
        opt.zero_grad()
        loss = sign * loss_of(lib, p, dtype)
        loss.backward()
        return loss
    for _ in range(steps):
        if closure:
            assert opt.step(closure_fn) is not None
        else:
            closure_fn()
            opt.step()
    return {k: v.detach().cpu().double().numpy() for k, v in p.items()}, opt


def assert_same(e, t, dtype):
    for k in t:
        np.testing.assert_allclose(e[k], t[k], err_msg=k, **TOL[dtype])


def assert_same_state(eopt, topt, dtype):
    tsd, esd = topt.state_dict(), eopt.state_dict()
    assert esd["param_groups"] == tsd["param_groups"]
    assert list(esd["state"]) == list(tsd["state"])
    for i, tstate in tsd["state"].items():
        assert list(esd["state"][i]) == list(tstate)
        for key, tv in tstate.items():
            ev = esd["state"][i][key]
            assert ev.dtype.name == str(tv.dtype).split(".")[-1], key
            assert tuple(ev.shape) == tuple(tv.shape), key
            np.testing.assert_allclose(ev.cpu().double().numpy(), tv.double().numpy(),
                                       err_msg=key, **TOL[dtype])


# ---- Adafactor -----------------------------------------------------------------------------
ADAFACTOR = [
    dict(),
    dict(lr=0.05, beta2_decay=-0.5, eps=(1e-5, 1e-2), d=2.0, weight_decay=0.1),
    dict(lr=0.05, maximize=True),
    dict(lr=0.02, foreach=True, weight_decay=0.05),
    dict(lr=0.02, eps=(1e-2, 1e-3), beta2_decay=0.0, d=1.0),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", ADAFACTOR, ids=range(len(ADAFACTOR)))
def test_adafactor_steps_and_state_match_torch(kw, dtype):
    t, topt = run(torch, "Adafactor", kw, dtype)
    e, eopt = run(ember, "Adafactor", kw, dtype)
    assert_same(e, t, dtype)
    np.testing.assert_array_equal(e["unused"], INIT["unused"].astype(dtype))
    assert_same_state(eopt, topt, dtype)


def test_adafactor_groups_closure_and_tensor_lr():
    groups = [(["w1", "b1"], {}), (["w2", "w3"], dict(lr=0.03, d=1.5, weight_decay=0.2))]
    t, topt = run(torch, "Adafactor", dict(lr=0.1), groups=groups, closure=True)
    e, eopt = run(ember, "Adafactor", dict(lr=0.1), groups=groups, closure=True)
    assert_same(e, t, "float32")
    assert_same_state(eopt, topt, "float32")
    t, _ = run(torch, "Adafactor", dict(lr=torch.tensor(0.02)), steps=4)
    e, _ = run(ember, "Adafactor", dict(lr=ember.tensor(0.02)), steps=4)
    assert_same(e, t, "float32")


@pytest.mark.parametrize("foreach", [None, True])
def test_adafactor_eps1_of_a_mixed_dtype_group(foreach):
    """eps1=None is one machine epsilon for the whole group: the first parameter's dtype's,
    with foreach the other one's (PyTorch's multi-tensor grouping). Tiny gradients so that
    it matters."""
    out = {}
    for lib in (torch, ember):
        p = [lib.nn.Parameter(lib.tensor(INIT["w1"] * 1e-3, dtype=lib.float64,
                                         device=_device(lib))),
             lib.nn.Parameter(lib.tensor(INIT["b1"] * 1e-3, dtype=lib.float32,
                                         device=_device(lib)))]
        opt = lib.optim.Adafactor(p, foreach=foreach, eps=(None, 1e-6))
        for _ in range(3):
            opt.zero_grad()
            ((p[0] ** 2).sum() * 1e-8 + (p[1] ** 3).sum() * 1e-9).backward()
            opt.step()
        out[lib] = [q.detach().cpu().double().numpy() for q in p]
    for e, t in zip(out[ember], out[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-6, atol=0)


def _round_trip(lib, name, kw, keys=None):
    """4 steps, the state into a fresh optimizer on copies of the parameters, 4 more."""
    _, opt = run(lib, name, kw, steps=4, keys=keys)
    p = {k: lib.nn.Parameter(v.detach().clone())
         for k, v in zip([k for k in INIT if keys is None or k in keys],
                         opt.param_groups[0]["params"])}
    opt2 = getattr(lib.optim, name)(list(p.values()), lr=123.0)
    opt2.load_state_dict(opt.state_dict())
    for _ in range(4):
        opt2.zero_grad()
        loss_of(lib, p, "float32").backward()
        opt2.step()
    return {k: v.detach().cpu().double().numpy() for k, v in p.items()}


@pytest.mark.parametrize("name,kw,keys", [("Adafactor", dict(lr=0.05), None),
                                          ("Muon", dict(lr=0.05), ["w1", "w2"])])
def test_state_dict_round_trip(name, kw, keys):
    """Saving and loading the state mid-run changes nothing: the round trip equals the
    straight 8-step run in each library, and the libraries agree after 4 steps. (Muon's
    8-step runs can part by 1e-3 between the two libraries on some CPUs: a float32 sum
    rounded differently by the BLAS kernel the CPU selects, amplified by Newton-Schulz.)"""
    for lib in (ember, torch):
        straight, _ = run(lib, name, kw, steps=8, keys=keys)
        assert_same(_round_trip(lib, name, kw, keys), straight, "float32")
    assert_same(run(ember, name, kw, steps=4, keys=keys)[0],
                run(torch, name, kw, steps=4, keys=keys)[0], "float32")


# ---- Muon ----------------------------------------------------------------------------------
MUON = [
    dict(lr=0.02),
    dict(lr=0.05, nesterov=False, momentum=0.5, weight_decay=0.0),
    dict(lr=0.03, adjust_lr_fn="match_rms_adamw", ns_steps=3),
    dict(lr=0.01, adjust_lr_fn="original", ns_coefficients=(2.0, -1.5, 0.5), eps=1e-3),
]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw", MUON, ids=range(len(MUON)))
def test_muon_steps_and_state_match_torch(kw, dtype):
    """w1 is tall (4x5 is wide, its transpose orthogonalized), w2 tall: both orientations."""
    t, topt = run(torch, "Muon", kw, dtype, keys=["w1", "w2"])
    e, eopt = run(ember, "Muon", kw, dtype, keys=["w1", "w2"])
    assert_same(e, t, dtype)
    assert_same_state(eopt, topt, dtype)


def test_muon_groups_and_closure():
    groups = [(["w1"], {}), (["w2"], dict(lr=0.01, momentum=0.9, nesterov=False))]
    t, topt = run(torch, "Muon", dict(lr=0.02), keys=["w1", "w2"], groups=groups, closure=True)
    e, eopt = run(ember, "Muon", dict(lr=0.02), keys=["w1", "w2"], groups=groups, closure=True)
    assert_same(e, t, "float32")
    assert_same_state(eopt, topt, "float32")
    t, _ = run(torch, "Muon", dict(lr=torch.tensor([0.02])), keys=["w1", "w2"], steps=3)
    e, _ = run(ember, "Muon", dict(lr=ember.tensor([0.02])), keys=["w1", "w2"], steps=3)
    assert_same(e, t, "float32")


def test_muon_bfloat16_parameters_match_torch():
    """bfloat16 parameters without nesterov: PyTorch's in-place normalization rescales the
    momentum buffer itself, which ember follows. momentum=0 (the buffer is the gradient):
    ember's bfloat16 lerp can round differently from PyTorch's; 8x8, as PyTorch's bfloat16
    add rounds twice in the elements past its last full vector, once in the others."""
    w0 = np.random.default_rng(4).standard_normal((8, 8))
    out = {}
    for lib in (torch, ember):
        w = lib.nn.Parameter(lib.tensor(w0, dtype=lib.bfloat16, device=_device(lib)))
        opt = lib.optim.Muon([w], lr=0.05, nesterov=False, momentum=0.0)
        for _ in range(3):
            opt.zero_grad()
            (w.float() ** 2).sum().backward()
            opt.step()
        out[lib] = (w.detach().float().cpu().numpy(),
                    opt.state[w]["momentum_buffer"].float().cpu().numpy())
    for a, b in zip(out[ember], out[torch]):
        np.testing.assert_array_equal(a, b)


# ---- defaults, reprs, errors ---------------------------------------------------------------
@pytest.mark.parametrize("name", ["Adafactor", "Muon", "SparseAdam"])
def test_defaults_and_repr_match(name):
    t = getattr(torch.optim, name)([torch.nn.Parameter(torch.zeros(2, 2))])
    e = getattr(ember.optim, name)([ember.nn.Parameter(ember.zeros(2, 2))])
    assert list(e.defaults.items()) == list(t.defaults.items())
    assert repr(e) == repr(t)


def _errors(make, at_step=False, shape=(2, 2), dtype="float32"):
    out = []
    for lib in (torch, ember):
        p = [lib.nn.Parameter(lib.zeros(*shape, dtype=getattr(lib, dtype)))]
        with pytest.raises(Exception) as info:
            opt = make(lib, p)
            if at_step:
                p[0].grad = lib.ones(*shape, dtype=getattr(lib, dtype))
                opt.step()
        out.append((type(info.value).__name__, str(info.value).replace("torch.", "ember.")))
    return out


@pytest.mark.parametrize("make", [
    lambda lib, p: lib.optim.Adafactor(p, lr=-1.0),
    lambda lib, p: lib.optim.Adafactor(p, lr=lib.tensor([0.1, 0.2])),
    lambda lib, p: lib.optim.Adafactor(p, beta2_decay=0.5),
    lambda lib, p: lib.optim.Adafactor(p, eps=(-1.0, 1e-3)),
    lambda lib, p: lib.optim.Adafactor(p, eps=(None, -1e-3)),
    lambda lib, p: lib.optim.Adafactor(p, d=0.5),
    lambda lib, p: lib.optim.Adafactor(p, weight_decay=-0.1),
    lambda lib, p: lib.optim.Muon(p, lr=-1.0),
    lambda lib, p: lib.optim.Muon(p, momentum=-0.5),
    lambda lib, p: lib.optim.Muon(p, weight_decay=-0.5),
    lambda lib, p: lib.optim.Muon(p, adjust_lr_fn="sqrt"),
    lambda lib, p: lib.optim.Muon(p + [lib.nn.Parameter(lib.zeros(3))]),
    lambda lib, p: lib.optim.Muon(p + [lib.nn.Parameter(lib.zeros(1, 2, 3))]),
    lambda lib, p: lib.optim.SparseAdam(p, lr=0.0),
    lambda lib, p: lib.optim.SparseAdam(p, eps=0.0),
    lambda lib, p: lib.optim.SparseAdam(p, betas=(0.9, 1.0)),
    lambda lib, p: lib.optim.SparseAdam(p, lr=lib.tensor([0.1, 0.2])),
    lambda lib, p: lib.optim.SparseAdam([{"params": p}, {"params": [
        lib.nn.Parameter(lib.zeros(2)), lib.nn.Parameter(lib.zeros(2, dtype=lib.complex64))]}]),
    lambda lib, p: lib.optim.Muon([]),
])
def test_construction_errors_match(make):
    t, e = _errors(make)
    assert e == t


@pytest.mark.parametrize("make,dtype", [
    (lambda lib, p: lib.optim.Muon(p, ns_steps=100), "float32"),
    (lambda lib, p: lib.optim.Muon(p, ns_coefficients=(1.0, 2.0)), "float32"),
    (lambda lib, p: lib.optim.Muon(p), "complex64"),
    (lambda lib, p: lib.optim.Adafactor(p), "complex64"),
    (lambda lib, p: lib.optim.SparseAdam(p), "float32"),
])
def test_step_errors_match(make, dtype):
    t, e = _errors(make, at_step=True, dtype=dtype)
    assert e == t


def test_sparse_adam_without_gradients_steps_as_torch():
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SparseAdam([p])
        assert opt.step(lambda: lib.tensor(1.5)).item() == 1.5
        assert len(opt.state) == 0


# ---- swa_utils -----------------------------------------------------------------------------
def make_net(lib, seed=0):
    """A network with a batch norm: parameters and float and integer buffers."""
    rng = np.random.default_rng(seed)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.BatchNorm1d(4), lib.nn.Tanh(),
                            lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=lib.float32))
    return net


def _snapshots(lib, model, n, seed=5):
    """``n`` different states of ``model``: perturbed weights and a training forward (new
    BN statistics) each."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        with lib.no_grad():
            for p in model.parameters():
                p.add_(lib.tensor(rng.standard_normal(tuple(p.shape)), dtype=p.dtype,
                                  device=p.device))
        model.train()
        model(lib.tensor(rng.standard_normal((5, 3)), dtype=lib.float32, device=_device(lib)))
        yield


def _averaged(lib, n=4, **kw):
    model = make_net(lib)
    if _device(lib) is not None:
        model = model.to(_device(lib))
    for key in ("avg_fn", "multi_avg_fn"):
        if key in kw:
            kw[key] = kw[key](lib)
    avg = lib.optim.swa_utils.AveragedModel(model, **kw)
    for _ in _snapshots(lib, model, n):
        avg.update_parameters(model)
    return avg


def _sd(module):
    return {k: v.detach().cpu().numpy() for k, v in module.state_dict().items()}


@pytest.mark.parametrize("kw", [
    dict(),
    dict(use_buffers=True),
    dict(avg_fn=lambda lib: lib.optim.swa_utils.get_ema_avg_fn(0.8)),
    dict(multi_avg_fn=lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(0.7)),
    dict(multi_avg_fn=lambda lib: lib.optim.swa_utils.get_swa_multi_avg_fn()),
    dict(avg_fn=lambda lib: lib.optim.swa_utils.get_swa_avg_fn(), use_buffers=True),
    dict(multi_avg_fn=lambda lib: lib.optim.swa_utils.get_ema_multi_avg_fn(0.5),
         use_buffers=True),
], ids=["swa", "swa-buffers", "ema", "ema-multi", "swa-multi", "swa-fn-buffers",
        "ema-multi-buffers"])
def test_averaged_model_matches_torch(kw, request):
    if DEVICE == "cuda" and request.node.callspec.id == "swa-buffers":
        # on CUDA PyTorch's default averages with its multi-tensor function, whose integer
        # path (BN's num_batches_tracked) divides with addcdiv_, which refuses integers
        with pytest.raises(RuntimeError):
            _averaged(ember, **dict(kw))
        return
    t = _averaged(torch, **dict(kw))
    e = _averaged(ember, **dict(kw))
    tsd, esd = _sd(t), _sd(e)
    assert list(esd) == list(tsd)
    assert list(tsd)[:2] == ["n_averaged", "module.0.weight"]
    for k in tsd:
        assert esd[k].dtype == tsd[k].dtype, k
        np.testing.assert_allclose(esd[k], tsd[k], rtol=1e-5, atol=1e-6, err_msg=k)
    x = np.random.default_rng(9).standard_normal((3, 3))
    t.eval()
    e.eval()
    np.testing.assert_allclose(
        e(ember.tensor(x, dtype=ember.float32, device=DEVICE)).detach().cpu().numpy(),
        t(torch.tensor(x, dtype=torch.float32)).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_swa_multi_avg_fn_on_integer_buffers_fails_as_torch():
    out = []
    for lib in (torch, ember):
        f = lib.optim.swa_utils.get_swa_multi_avg_fn()
        with pytest.raises(RuntimeError) as info:
            f([lib.tensor([5, 7])], [lib.tensor([1, 2])], 1)
        out.append(str(info.value))
    assert out[0] == out[1]


def test_avg_fn_errors_match():
    out = []
    for lib in (torch, ember):
        su = lib.optim.swa_utils
        row = []
        for make in (lambda: su.get_ema_avg_fn(1.5), lambda: su.get_ema_multi_avg_fn(-0.1),
                     lambda: su.AveragedModel(lib.nn.Linear(1, 1), avg_fn=su.get_swa_avg_fn(),
                                              multi_avg_fn=su.get_swa_multi_avg_fn())):
            with pytest.raises(Exception) as info:
                make()
            row.append((type(info.value).__name__, str(info.value)))
        out.append(row)
    assert out[0] == out[1]


def test_update_bn_matches_torch():
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((n, 3)) for n in (4, 7, 2)]
    out = {}
    for lib in (torch, ember):
        model = make_net(lib)
        if _device(lib) is not None:
            model = model.to(_device(lib))
        model.eval()
        model[1].momentum = 0.3
        loader = [lib.tensor(batches[0], dtype=lib.float32),
                  (lib.tensor(batches[1], dtype=lib.float32), lib.zeros(7)),
                  [lib.tensor(batches[2], dtype=lib.float32)]]
        lib.optim.swa_utils.update_bn(loader, model, device=_device(lib))
        assert not model.training and model[1].momentum == 0.3
        out[lib] = _sd(model)
    for k in out[torch]:
        np.testing.assert_allclose(out[ember][k], out[torch][k], rtol=1e-5, atol=1e-6,
                                   err_msg=k)


def _swalr_lrs(lib, kw, steps=8, groups=2, base=(1.0, 0.5)):
    params = [{"params": [lib.nn.Parameter(lib.zeros(1))], "lr": base[i]}
              for i in range(groups)]
    opt = lib.optim.SGD(params, lr=0.1)
    sched = lib.optim.swa_utils.SWALR(opt, **kw)
    lrs = [sched.get_last_lr()]
    for _ in range(steps):
        opt.step()
        sched.step()
        lrs.append(sched.get_last_lr())
    return lrs, sched


@pytest.mark.parametrize("kw", [
    dict(swa_lr=0.05),
    dict(swa_lr=[0.05, 0.2], anneal_epochs=3, anneal_strategy="linear"),
    dict(swa_lr=0.3, anneal_epochs=0),
    dict(swa_lr=0.01, anneal_epochs=5, anneal_strategy="cos"),
])
def test_swalr_matches_torch(kw):
    (t, tsched), (e, esched) = _swalr_lrs(torch, kw), _swalr_lrs(ember, kw)
    np.testing.assert_allclose(np.array(e), np.array(t), rtol=1e-15, atol=0)
    tsd, esd = tsched.state_dict(), esched.state_dict()
    assert sorted(esd) == sorted(tsd)
    for key in ("anneal_epochs", "_anneal_strategy", "last_epoch", "base_lrs", "_step_count"):
        assert esd[key] == tsd[key], key
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(esched.get_lr(), tsched.get_lr(), rtol=1e-15)


def test_swalr_after_another_schedule_and_errors_match():
    """SWALR recovers its starting lr from the current one, so it picks up where a
    previous scheduler left the optimizer."""
    out = []
    for lib in (torch, ember):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.zeros(1))], lr=1.0)
        first = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        for _ in range(3):
            opt.step()
            first.step()
        swa = lib.optim.swa_utils.SWALR(opt, swa_lr=0.01, anneal_epochs=4)
        lrs = []
        for _ in range(6):
            opt.step()
            swa.step()
            lrs.append(opt.param_groups[0]["lr"])
        errors = []
        for kw in (dict(swa_lr=[0.1, 0.2]), dict(swa_lr=0.1, anneal_strategy="exp"),
                   dict(swa_lr=0.1, anneal_epochs=-1), dict(swa_lr=0.1, anneal_epochs=1.5)):
            with pytest.raises(ValueError) as info:
                lib.optim.swa_utils.SWALR(opt, **kw)
            errors.append(str(info.value))
        out.append((lrs, errors))
    np.testing.assert_allclose(out[1][0], out[0][0], rtol=1e-15)
    assert out[1][1] == out[0][1]
    assert not math.isclose(out[0][0][0], 0.01)
