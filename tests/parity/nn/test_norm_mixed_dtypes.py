"""Normalization with float16/bfloat16 inputs and float32 parameters, rms_norm / RMSNorm,
BatchNorm3d and prelu's dtype rule: ember vs PyTorch (dtypes, values, gradients, errors)."""
import numpy as np
import pytest
import torch

import ember
import ember.nn.functional as EF
import torch.nn.functional as TF
from tests.parity.compare import DEVICE, compare, error_of

DTYPES = [np.float32, np.float64]
REDUCED = ["float16", "bfloat16"]
ALL = ["float16", "bfloat16", "float32", "float64"]
#: one rounding of each reduced dtype
ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def rand(*shape, dtype=np.float64, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def F(lib):
    return TF if lib is torch else EF


def name_of(dtype):
    return str(dtype).split(".")[-1]


def leaf(lib, a, dtype, noncontiguous=False, grad=True):
    """A leaf of ``dtype`` made from the float array ``a`` (a transposed view if asked)."""
    if grad and lib is ember:
        try:  # bfloat16 autograd is newer than the rest of ember's bfloat16 support
            ember.zeros(1, dtype=getattr(ember, dtype)).requires_grad_()
        except NotImplementedError:
            pytest.skip(f"no autograd for {dtype} in this build")
    if noncontiguous:
        t = lib.tensor(np.ascontiguousarray(np.swapaxes(a, -1, -2))).to(getattr(lib, dtype))
        t.requires_grad_(grad)
        return t, t.transpose(-1, -2)
    t = lib.tensor(a).to(getattr(lib, dtype)).requires_grad_(grad)
    return t, t


def host(t):
    return t.detach().float().numpy().astype(np.float64)


def assert_close(e, t, dtype, what, spread=0):
    """ember's ``e`` against torch's ``t``: the same dtype, values within one rounding of a
    reduced dtype. A gradient (``spread`` > 0) sums many terms, which PyTorch partly rounds to
    the reduced dtype (ember sums in float32): it is judged relative to its largest value,
    within ``spread`` roundings there."""
    assert name_of(e.dtype) == name_of(t.dtype), (what, e.dtype, t.dtype)
    want = host(t)
    rtol = ULP.get(dtype, 1e-5)
    atol = rtol * (spread * np.abs(want).max() if spread else 1e-2) + 1e-6
    np.testing.assert_allclose(host(e), want, rtol=rtol, atol=atol, err_msg=what)


def mixed_parity(fn, x, params, dtype, noncontiguous=False, param_dtype="float32", seed=3,
                 out_spread=0, grad=True):
    """``fn(lib, x, *params)`` with x of ``dtype`` and float32 params in both libraries: the
    output, then the gradient of every input after the same cotangent. ``out_spread``: where
    PyTorch rounds intermediates to the reduced dtype (see ``assert_close``)."""
    made = {}
    for lib in (torch, ember):
        xl, xv = leaf(lib, x, dtype, noncontiguous)
        ps = [None if p is None else leaf(lib, p, param_dtype)[0] for p in params]
        made[lib] = (xl, ps, fn(lib, xv, *ps))
    (txl, tps, tout), (exl, eps_, eout) = made[torch], made[ember]
    assert_close(eout, tout, dtype, "output", spread=out_spread)
    if not grad:
        return
    cot = rand(*tout.shape, seed=seed)
    tout.backward(torch.tensor(cot).to(tout.dtype))
    eout.backward(ember.tensor(cot).to(eout.dtype))
    assert_close(exl.grad, txl.grad, dtype, "input grad", spread=1)
    for i, (tp, ep) in enumerate(zip(tps, eps_)):
        if tp is None:
            continue
        assert (ep.grad is None) == (tp.grad is None), i
        if tp.grad is not None:
            assert_close(ep.grad, tp.grad, dtype, f"grad of parameter {i}", spread=2)


# ---- functional forms: reduced input, float32 parameters ----------------------------------------
@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("dtype", REDUCED)
def test_layer_norm(dtype, noncontiguous):
    x = rand(3, 4, 6) * 2 + 1
    w, b = rand(6, seed=1), rand(6, seed=2)
    mixed_parity(lambda lib, x, w, b: F(lib).layer_norm(x, (6,), w, b), x, (w, b), dtype,
                 noncontiguous)
    mixed_parity(lambda lib, x, w: F(lib).layer_norm(x, (4, 6), w, eps=1e-3), x,
                 (rand(4, 6, seed=4),), dtype, noncontiguous)
    mixed_parity(lambda lib, x: F(lib).layer_norm(x, (6,)), x, (), dtype, noncontiguous)


@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("dtype", REDUCED)
def test_group_norm(dtype, noncontiguous):
    x = rand(2, 6, 5, 3)
    w, b = rand(6, seed=1), rand(6, seed=2)
    for groups in (1, 3, 6):
        mixed_parity(lambda lib, x, w, b: F(lib).group_norm(x, groups, w, b), x, (w, b), dtype,
                     noncontiguous)
    # forward only: PyTorch's backward of group_norm with a bias and no weight fails ("tensor
    # does not have a device"), whatever the dtypes
    mixed_parity(lambda lib, x, b: F(lib).group_norm(x, 2, None, b), x, (b,), dtype, grad=False)


@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("dtype", REDUCED)
def test_batch_norm_training_and_running_stats(dtype, noncontiguous):
    x = rand(5, 3, 4) * 3 + 1
    w, b = rand(3, seed=1), rand(3, seed=2)
    stats = {}

    def fn(lib, x, w, b):
        rm, rv = lib.zeros(3), lib.ones(3)
        stats[lib] = (rm, rv)
        return F(lib).batch_norm(x, rm, rv, w, b, training=True, momentum=0.3)
    mixed_parity(fn, x, (w, b), dtype, noncontiguous)
    for e, t in zip(stats[ember], stats[torch]):  # updated in float32, as float32
        assert e.dtype is ember.float32 and t.dtype is torch.float32
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    # no float32 parameter: PyTorch's kernel of one dtype rounds intermediates to it, where
    # ember computes in float32 and rounds once
    mixed_parity(lambda lib, x: F(lib).batch_norm(x, None, None, training=True), x, (), dtype,
                 out_spread=1)


@pytest.mark.parametrize("dtype", REDUCED)
def test_batch_norm_eval(dtype):
    x = rand(4, 3, 5)
    rm, rv = rand(3, seed=3), np.abs(rand(3, seed=4)) + 0.5

    def stats(lib):  # float32 running statistics (no gradient, as in PyTorch)
        return lib.tensor(rm, dtype=lib.float32), lib.tensor(rv, dtype=lib.float32)
    mixed_parity(lambda lib, x, w, b: F(lib).batch_norm(x, *stats(lib), w, b), x,
                 (rand(3, seed=1), rand(3, seed=2)), dtype)
    mixed_parity(lambda lib, x: F(lib).batch_norm(x, *stats(lib)), x, (), dtype)


@pytest.mark.parametrize("dtype", REDUCED)
def test_instance_norm(dtype):
    x = rand(2, 3, 6) * 2
    w, b = rand(3, seed=1), rand(3, seed=2)
    stats = {}

    def fn(lib, x, w, b):
        rm, rv = lib.zeros(3), lib.ones(3)
        stats[lib] = (rm, rv)
        return F(lib).instance_norm(x, rm, rv, w, b, momentum=0.4)
    mixed_parity(fn, x, (w, b), dtype)
    for e, t in zip(stats[ember], stats[torch]):
        assert e.dtype is ember.float32 and t.dtype is torch.float32
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-5, atol=1e-6)
    rm, rv = rand(3, seed=3), np.abs(rand(3, seed=4)) + 0.5
    mixed_parity(lambda lib, x, w: F(lib).instance_norm(
        x, lib.tensor(rm, dtype=lib.float32), lib.tensor(rv, dtype=lib.float32), w,
        use_input_stats=False), x, (w,), dtype)


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("call", ["layer_norm", "group_norm", "batch_norm", "rms_norm"])
def test_parameters_of_the_reduced_dtype_too(call, dtype):
    # a model cast to the reduced dtype: everything of one dtype, computed in float32
    fns = {"layer_norm": lambda lib, x, w, b: F(lib).layer_norm(x, (4,), w, b),
           "group_norm": lambda lib, x, w, b: F(lib).group_norm(x, 2, w, b),
           "batch_norm": lambda lib, x, w, b: F(lib).batch_norm(x, None, None, w, b,
                                                                training=True),
           "rms_norm": lambda lib, x, w, b: F(lib).rms_norm(x, (4,), w)}
    # PyTorch's batch norm of one reduced dtype rounds intermediates to it (ember: once)
    mixed_parity(fns[call], rand(3, 4, 4) * 2 + 1, (rand(4, seed=1), rand(4, seed=2)), dtype,
                 param_dtype=dtype, out_spread=1 if call == "batch_norm" else 0)


# ---- which mixes PyTorch takes, which it refuses, with its error --------------------------------
def _outcome(fn):
    try:
        return name_of(fn().dtype)
    except Exception as e:  # noqa: BLE001 - whatever each library raises
        return type(e).__name__, str(e)


def _params(lib, dtypes, n=4):
    return [None if d is None else lib.ones(n, dtype=getattr(lib, d)) for d in dtypes]


CALLS = {
    "layer_norm": lambda lib, x, p: F(lib).layer_norm(x, (4,), p[0], p[1]),
    "group_norm": lambda lib, x, p: F(lib).group_norm(x, 2, p[0], p[1]),
    "batch_norm_train": lambda lib, x, p: F(lib).batch_norm(x, p[2], p[3], p[0], p[1],
                                                            training=True),
    "batch_norm_eval": lambda lib, x, p: F(lib).batch_norm(x, p[2], p[3], p[0], p[1]),
    "instance_norm": lambda lib, x, p: F(lib).instance_norm(x, None, None, p[0], p[1]),
}


@pytest.mark.parametrize("p_dtype", ALL)
@pytest.mark.parametrize("x_dtype", ALL)
@pytest.mark.parametrize("call", sorted(CALLS))
def test_dtype_mixes_match_torch(call, x_dtype, p_dtype):
    outcomes = {}
    for lib in (torch, ember):
        x = lib.ones(3, 4, 4, dtype=getattr(lib, x_dtype))
        x[0] = 2  # not constant
        params = _params(lib, [p_dtype] * 4)
        if call == "batch_norm_eval":  # the statistics always given; weight and bias not
            params[0] = params[1] = None
        outcomes[lib] = _outcome(lambda: CALLS[call](lib, x, params))
    assert outcomes[ember] == outcomes[torch]


@pytest.mark.parametrize("dtypes", [
    ("bfloat16", "float32", None, None), ("float32", "bfloat16", None, None),
    (None, "float32", None, None), ("bfloat16", None, "float32", "float32"),
    ("float32", "float32", "bfloat16", "bfloat16"), (None, None, "float32", "bfloat16"),
    ("float32", None, "float32", "bfloat16"), (None, "bfloat16", "float32", "float32"),
])
@pytest.mark.parametrize("x_dtype", ["bfloat16", "float32"])
def test_the_first_parameter_decides_as_in_torch(x_dtype, dtypes):
    for call in ("layer_norm", "group_norm", "batch_norm_train", "batch_norm_eval"):
        if call == "batch_norm_eval" and dtypes[2] is None:
            continue
        outcomes = {}
        for lib in (torch, ember):
            x = lib.arange(48.0).reshape(3, 4, 4).to(getattr(lib, x_dtype))
            outcomes[lib] = _outcome(lambda: CALLS[call](lib, x, _params(lib, dtypes)))
        assert outcomes[ember] == outcomes[torch], call


@pytest.mark.parametrize("dtypes", [
    ("bfloat16", "float32"), ("float32", "bfloat16"), ("float32", None), (None, "float32"),
])
def test_instance_norm_affine_mixes_match_torch(dtypes):
    for x_dtype in ("bfloat16", "float16", "float32"):
        outcomes = {}
        for lib in (torch, ember):
            x = lib.arange(48.0).reshape(3, 4, 4).to(getattr(lib, x_dtype))
            outcomes[lib] = _outcome(lambda: CALLS["instance_norm"](lib, x,
                                                                    _params(lib, dtypes)))
        assert outcomes[ember] == outcomes[torch], x_dtype


# ---- modules ------------------------------------------------------------------------------------
MODULES = {
    "LayerNorm": (lambda lib: lib.nn.LayerNorm(5), (3, 4, 5)),
    "GroupNorm": (lambda lib: lib.nn.GroupNorm(2, 4), (3, 4, 5)),
    "BatchNorm1d": (lambda lib: lib.nn.BatchNorm1d(4), (3, 4, 5)),
    "BatchNorm2d": (lambda lib: lib.nn.BatchNorm2d(4, momentum=None), (3, 4, 2, 3)),
    "BatchNorm3d": (lambda lib: lib.nn.BatchNorm3d(4), (3, 4, 2, 2, 2)),
    "InstanceNorm1d": (lambda lib: lib.nn.InstanceNorm1d(4, affine=True,
                                                         track_running_stats=True), (3, 4, 5)),
    "InstanceNorm2d": (lambda lib: lib.nn.InstanceNorm2d(4, affine=True), (3, 4, 3, 3)),
    "RMSNorm": (lambda lib: lib.nn.RMSNorm([4, 5]), (3, 4, 5)),
}


@pytest.mark.parametrize("dtype", REDUCED)
@pytest.mark.parametrize("name", sorted(MODULES))
def test_float32_modules_take_reduced_inputs(name, dtype):
    make, shape = MODULES[name]
    tm, em = make(torch), make(ember)
    with torch.no_grad():  # parameters away from their ones and zeros
        for p in tm.parameters():
            p.copy_(torch.tensor(rand(*p.shape, seed=p.numel())))
    em.load_state_dict({k: ember.tensor(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    for step, training in enumerate((True, True, False)):
        tm.train(training)
        em.train(training)
        x = rand(*shape, seed=step) * 2 + 1
        mixed_parity(lambda lib, x: (tm if lib is torch else em)(x), x, (), dtype, seed=step)
        tp, ep = dict(tm.named_parameters()), dict(em.named_parameters())
        for key in tp:
            assert_close(ep[key].grad, tp[key].grad, dtype, key, spread=2)
            tp[key].grad = ep[key].grad = None
        tb, eb = dict(tm.named_buffers()), dict(em.named_buffers())
        assert list(eb) == list(tb)
        for key in tb:
            assert name_of(eb[key].dtype) == name_of(tb[key].dtype), key
            np.testing.assert_allclose(eb[key].numpy(), tb[key].numpy(), rtol=1e-5, atol=1e-6,
                                       err_msg=key)


@pytest.mark.parametrize("make", [
    lambda lib: lib.nn.RMSNorm(4),
    lambda lib: lib.nn.RMSNorm([2, 3], eps=1e-6),
    lambda lib: lib.nn.RMSNorm((3,), eps=0.5, elementwise_affine=False),
    lambda lib: lib.nn.RMSNorm(3, dtype=lib.float64),
    lambda lib: lib.nn.BatchNorm3d(3),
    lambda lib: lib.nn.BatchNorm3d(2, momentum=None, affine=False, track_running_stats=False),
])
def test_repr_and_state(make):
    tm, em = make(torch), make(ember)
    assert repr(em) == repr(tm)
    ts, es = tm.state_dict(), em.state_dict()
    assert list(es) == list(ts)
    for k in ts:
        assert name_of(es[k].dtype) == name_of(ts[k].dtype)
        np.testing.assert_array_equal(es[k].numpy(), ts[k].numpy())
    assert [n for n, _ in em.named_parameters()] == [n for n, _ in tm.named_parameters()]


# ---- rms_norm in float32 and float64 ------------------------------------------------------------
@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_functional(dtype, noncontiguous):
    x = rand(3, 4, 5, dtype=dtype) * 2
    compare(lambda lib, x, w: F(lib).rms_norm(x, (5,), w), x, rand(5, dtype=dtype, seed=1),
            noncontiguous=noncontiguous)
    compare(lambda lib, x, w: F(lib).rms_norm(x, [4, 5], w, eps=1e-2), x,
            rand(4, 5, dtype=dtype, seed=2), noncontiguous=noncontiguous)
    compare(lambda lib, x: F(lib).rms_norm(x, (5,)), x, noncontiguous=noncontiguous)
    compare(lambda lib, x: lib.rms_norm(x, [5], None, 1e-3), x, noncontiguous=noncontiguous)
    # tiny values: the default eps (float32's or float64's) shows in the result
    compare(lambda lib, x: F(lib).rms_norm(x, (5,)), x * 1e-4, noncontiguous=noncontiguous)


@pytest.mark.parametrize("dtype", DTYPES)
def test_rms_norm_module(dtype):
    x = rand(2, 3, 4, dtype=dtype)
    for kw in (dict(), dict(eps=1e-3), dict(elementwise_affine=False)):
        tm = torch.nn.RMSNorm([3, 4], dtype=getattr(torch, np.dtype(dtype).name), **kw)
        em = ember.nn.RMSNorm([3, 4], dtype=getattr(ember, np.dtype(dtype).name), **kw)
        if tm.weight is not None:
            w = rand(3, 4, dtype=dtype, seed=5)
            with torch.no_grad():
                tm.weight.copy_(torch.tensor(w))
            em.load_state_dict({"weight": ember.tensor(w)})
        if DEVICE is not None:  # where compare() puts ember's input
            em.to(DEVICE)
        compare(lambda lib, x: (tm if lib is torch else em)(x), x)
        if tm.weight is not None:
            np.testing.assert_allclose(em.weight.grad.cpu().numpy(), tm.weight.grad.numpy(),
                                       rtol=1e-4 if dtype == np.float32 else 1e-7)


def test_rms_norm_second_derivatives_and_node_names_match_torch():
    x, w = rand(3, 4), rand(4, seed=1)
    out = {}
    for lib in (torch, ember):
        xt = lib.tensor(x, requires_grad=True)
        wt = lib.tensor(w, requires_grad=True)
        y = F(lib).rms_norm(xt, (4,), wt)
        names = []
        node = y.grad_fn
        while node is not None:  # the chain from the output to x
            names.append(type(node).__name__)
            node = next((n for n, _ in node.next_functions
                         if n is not None and type(n).__name__ != "AccumulateGrad"), None)
        gx, gw = lib.autograd.grad((y ** 3).sum(), (xt, wt), create_graph=True)
        ((gx ** 2).sum() + (gw ** 2).sum()).backward()
        out[lib] = (names, xt.grad.numpy(), wt.grad.numpy())
    # the same chain of nodes (PyTorch's C++ composite adds eps with add's Scalar overload,
    # AddBackward1, which ember names as the Tensor one)
    assert [n.rstrip("01") for n in out[ember][0]] == [n.rstrip("01") for n in out[torch][0]]
    for e, t in zip(out[ember][1:], out[torch][1:]):
        np.testing.assert_allclose(e, t, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("w_dtype", ALL)
@pytest.mark.parametrize("x_dtype", ALL)
def test_rms_norm_any_dtype_pair(x_dtype, w_dtype):
    x, w = rand(3, 6) * 2, rand(6, seed=1)
    made = {}
    for lib in (torch, ember):
        xl, _ = leaf(lib, x, x_dtype)
        wl, _ = leaf(lib, w, w_dtype)
        made[lib] = (xl, wl, F(lib).rms_norm(xl, (6,), wl))
    (txl, twl, tout), (exl, ewl, eout) = made[torch], made[ember]
    tol = x_dtype if x_dtype in ULP else None
    assert_close(eout, tout, tol, "output")
    cot = rand(3, 6, seed=2)
    tout.backward(torch.tensor(cot).to(tout.dtype))
    eout.backward(ember.tensor(cot).to(eout.dtype))
    assert_close(exl.grad, txl.grad, tol, "input grad", spread=1)
    w_tol = w_dtype if w_dtype in ULP else tol
    assert_close(ewl.grad, twl.grad, w_tol, "weight grad", spread=2)


def test_rms_norm_of_complex_input():
    a = rand(3, 4) + 1j * rand(3, 4, seed=1)
    outs = [F(lib).rms_norm(lib.tensor(a.astype(np.complex64)), (4,)) for lib in (torch, ember)]
    assert name_of(outs[1].dtype) == name_of(outs[0].dtype) == "complex64"
    np.testing.assert_allclose(outs[1].numpy(), outs[0].numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda lib: F(lib).rms_norm(lib.ones(2, 3), 3),
    lambda lib: F(lib).rms_norm(lib.ones(2, 3), []),
    lambda lib: F(lib).rms_norm(lib.ones(2, 3), (3,), lib.ones(4)),
    lambda lib: F(lib).rms_norm(lib.ones(2, 3), (3,), lib.ones(1, 3)),
    lambda lib: F(lib).rms_norm(lib.ones(3), (2, 3)),
    lambda lib: F(lib).rms_norm(lib.ones(3), (2, 3), lib.ones(4)),
    lambda lib: F(lib).rms_norm(lib.ones(4, 2, 3), (5, 2, 3)),
    lambda lib: F(lib).rms_norm(lib.ones(2, 3, dtype=lib.int64), (3,)),
    lambda lib: F(lib).rms_norm(lib.ones(2, 3, dtype=lib.int32), (4,)),
    lambda lib: lib.rms_norm(lib.ones(2, 3), [4]),
    lambda lib: lib.nn.RMSNorm(4)(lib.ones(2, 3)),
    lambda lib: lib.nn.RMSNorm((2, 3))(lib.ones(3)),
    lambda lib: lib.nn.BatchNorm3d(3)(lib.ones(2, 3, 4, 4)),
])
def test_errors(call):
    expected = error_of(lambda: call(torch))
    assert expected is not None
    assert error_of(lambda: call(ember)) == expected


# ---- prelu --------------------------------------------------------------------------------------
@pytest.mark.parametrize("w_dtype", ALL)
@pytest.mark.parametrize("x_dtype", ALL)
def test_prelu_dtype_pairs(x_dtype, w_dtype):
    outcomes = {}
    for lib in (torch, ember):
        x = lib.tensor(rand(2, 3, 4)).to(getattr(lib, x_dtype))
        for w in (lib.full((1,), 0.25), lib.full((3,), 0.5), lib.full((5,), 0.5)):
            w = w.to(getattr(lib, w_dtype))
            result = _outcome(lambda: F(lib).prelu(x, w))
            if isinstance(result, str):
                result = (result, host(F(lib).prelu(x, w)).tolist())
            outcomes.setdefault(lib, []).append(result)
        outcomes[lib].append(_outcome(lambda: lib.nn.PReLU(dtype=getattr(lib, w_dtype))(x)))
    assert outcomes[ember] == outcomes[torch]
