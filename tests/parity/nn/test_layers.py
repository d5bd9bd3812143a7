"""Parity with PyTorch for Linear, Bilinear, Identity, Flatten/Unflatten, the activations,
Dropout (statistics), Embedding, F.pad/one_hot/normalize and nn.utils: weights are copied
from the torch module through state_dict and NumPy; outputs and input/parameter gradients
are compared (float32 and float64)."""
import math

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import ember
import ember.nn as enn
import ember.nn.functional as EF

from tests.parity.compare import compare, error_of, TOL

FLOATS = [np.float32, np.float64]


def randn(shape, dtype, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


def _tdtype(dtype):
    return torch.float32 if dtype == np.float32 else torch.float64


def _edtype(dtype):
    return ember.float32 if dtype == np.float32 else ember.float64


def copy_weights(t_mod, e_mod):
    sd = {k: ember.tensor(v.detach().numpy().copy()) for k, v in t_mod.state_dict().items()}
    e_mod.load_state_dict(sd)


def compare_module(t_mod, e_mod, *arrays, seed=0):
    """Same input(s) through both modules: outputs, input grads and parameter grads."""
    dtype = arrays[0].dtype.type
    t_mod = t_mod.to(_tdtype(dtype))
    e_mod = e_mod.to(_edtype(dtype))
    copy_weights(t_mod, e_mod)
    tol = TOL[dtype]
    t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    e_in = [ember.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    t_out, e_out = t_mod(*t_in), e_mod(*e_in)
    assert tuple(t_out.shape) == tuple(e_out.shape)
    assert e_out.dtype.name == str(t_out.dtype).split(".")[-1]
    np.testing.assert_allclose(e_out.detach().numpy(), t_out.detach().numpy(), **tol)
    cot = np.random.default_rng(seed + 1).standard_normal(tuple(t_out.shape)).astype(dtype)
    t_out.backward(torch.tensor(cot))
    e_out.backward(ember.tensor(cot))
    for i, (t, e) in enumerate(zip(t_in, e_in)):
        if t.grad is not None:
            np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), err_msg=f"input {i}",
                                       **tol)
    e_params = dict(e_mod.named_parameters())
    t_params = dict(t_mod.named_parameters())
    assert list(e_params) == list(t_params)
    for name, tp in t_params.items():
        ep = e_params[name]
        assert tuple(ep.shape) == tuple(tp.shape)
        if tp.grad is None:
            assert ep.grad is None, name
        else:
            np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), err_msg=name, **tol)


# ---- Linear / Bilinear / Identity / Flatten ------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(4, 3), (2, 4, 3), (3,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_module(dtype, shape, bias):
    compare_module(tnn.Linear(3, 5, bias=bias), enn.Linear(3, 5, bias=bias),
                   randn(shape, dtype))


@pytest.mark.parametrize("dtype", FLOATS)
def test_linear_functional(dtype):
    compare(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b),
            randn((2, 3, 4), dtype), randn((5, 4), dtype, 1), randn((5,), dtype, 2))
    compare(lambda lib, x, w: lib.nn.functional.linear(x, w),
            randn((3, 4), dtype), randn((5, 4), dtype, 1), noncontiguous=True)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("lead", [(4,), (2, 3), ()])
@pytest.mark.parametrize("bias", [True, False])
def test_bilinear_module(dtype, lead, bias):
    compare_module(tnn.Bilinear(3, 2, 4, bias=bias), enn.Bilinear(3, 2, 4, bias=bias),
                   randn(lead + (3,), dtype), randn(lead + (2,), dtype, 1))


def test_linear_bilinear_parameters_and_repr():
    for t, e in [(tnn.Linear(3, 4), enn.Linear(3, 4)),
                 (tnn.Linear(3, 4, bias=False), enn.Linear(3, 4, bias=False)),
                 (tnn.Bilinear(2, 3, 4), enn.Bilinear(2, 3, 4)),
                 (tnn.Identity(), enn.Identity()), (tnn.Flatten(), enn.Flatten()),
                 (tnn.Flatten(0, 2), enn.Flatten(0, 2)),
                 (tnn.Unflatten(1, (2, 3)), enn.Unflatten(1, (2, 3)))]:
        assert repr(e) == repr(t)
        assert [(n, tuple(p.shape)) for n, p in e.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert enn.Linear(3, 4, dtype=ember.float64).weight.dtype is ember.float64


def test_linear_error_message_matches_torch():
    for shape in [(4, 3), (2, 4, 3), (3,)]:
        with pytest.raises(RuntimeError) as t_err:
            TF.linear(torch.zeros(shape), torch.zeros(2, 5))
        with pytest.raises(RuntimeError) as e_err:
            EF.linear(ember.zeros(shape), ember.zeros(2, 5))
        assert str(e_err.value) == str(t_err.value)


def test_linear_default_init_distribution():
    # kaiming_uniform_(a=sqrt(5)) -> U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the weight too
    t, e = tnn.Linear(400, 300), enn.Linear(400, 300)
    tw, ew = t.weight.detach().numpy(), e.weight.detach().numpy()
    assert abs(ew.max() - tw.max()) < 2e-3 and abs(ew.min() - tw.min()) < 2e-3
    assert abs(ew.std() / tw.std() - 1) < 0.03
    tb, eb = t.bias.detach().numpy(), e.bias.detach().numpy()
    assert np.abs(eb).max() <= 1 / math.sqrt(400) + 1e-7
    assert abs(eb.std() / tb.std() - 1) < 0.3
    tb2, eb2 = tnn.Bilinear(50, 20, 40), enn.Bilinear(50, 20, 40)
    assert abs(eb2.weight.detach().numpy().std() / tb2.weight.detach().numpy().std() - 1) < 0.03


@pytest.mark.parametrize("dtype", FLOATS)
def test_flatten_unflatten_identity(dtype):
    x = randn((2, 3, 4, 2), dtype)
    for t, e in [(tnn.Flatten(), enn.Flatten()), (tnn.Flatten(1, 2), enn.Flatten(1, 2)),
                 (tnn.Flatten(-3, -1), enn.Flatten(-3, -1)), (tnn.Identity(5), enn.Identity(5))]:
        compare_module(t, e, x)
    compare_module(tnn.Unflatten(2, (2, 2)), enn.Unflatten(2, (2, 2)), x)
    compare_module(tnn.Unflatten(-1, (1, 2)), enn.Unflatten(-1, (1, 2)), x)


# ---- activations ---------------------------------------------------------------------------
ACTIVATIONS = [
    ("ReLU", (), {}), ("ReLU6", (), {}), ("LeakyReLU", (), {}), ("LeakyReLU", (0.2,), {}),
    ("ELU", (), {}), ("ELU", (0.5,), {}), ("GELU", (), {}), ("GELU", (), {"approximate": "tanh"}),
    ("SiLU", (), {}), ("Mish", (), {}), ("Sigmoid", (), {}), ("Tanh", (), {}),
    ("Hardtanh", (), {}), ("Hardtanh", (-2.0, 0.5), {}), ("Softplus", (), {}),
    ("Softplus", (2.0, 3.0), {}), ("Softmax", (1,), {}), ("Softmax", (-1,), {}),
    ("LogSoftmax", (1,), {}), ("LogSoftmax", (0,), {}),
]


def _act_input(dtype):
    x = randn((4, 5, 3), dtype, scale=3.0)
    # values exactly at kinks (0, 6, +-1) and far in the tails (overflow paths)
    flat = x.reshape(-1)
    flat[:8] = [0.0, 6.0, 1.0, -1.0, 30.0, -30.0, 100.0, -100.0]
    return x


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,args,kwargs", ACTIVATIONS,
                         ids=[f"{n}{a}{k}" for n, a, k in ACTIVATIONS])
def test_activation_modules(dtype, name, args, kwargs):
    t = getattr(tnn, name)(*args, **kwargs)
    e = getattr(enn, name)(*args, **kwargs)
    assert repr(e) == repr(t)
    compare_module(t, e, _act_input(dtype))


FUNCTIONAL = [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.3}), ("elu", {"alpha": 2.0}),
    ("gelu", {}), ("gelu", {"approximate": "tanh"}), ("silu", {}), ("mish", {}),
    ("hardtanh", {"min_val": -0.5, "max_val": 2.0}), ("softplus", {"beta": 0.5, "threshold": 5}),
    ("softmax", {"dim": 2}), ("log_softmax", {"dim": -2}), ("sigmoid", {}), ("tanh", {}),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name,kwargs", FUNCTIONAL, ids=[f"{n}{k}" for n, k in FUNCTIONAL])
def test_activation_functional(dtype, name, kwargs):
    compare(lambda lib, x: getattr(lib.nn.functional, name)(x, **kwargs), _act_input(dtype),
            noncontiguous=True)


@pytest.mark.parametrize("name,kwargs", [("relu", {}), ("leaky_relu", {}), ("elu", {}),
                                         ("hardtanh", {}), ("silu", {}), ("mish", {}),
                                         ("relu6", {})])
def test_activation_inplace(name, kwargs):
    def fn(lib, x):
        y = x * 1.0
        out = getattr(lib.nn.functional, name)(y, inplace=True, **kwargs)
        assert out is y
        return y * 2
    compare(fn, _act_input(np.float64))


@pytest.mark.parametrize("name", ["ReLU", "ReLU6", "LeakyReLU", "ELU", "SiLU", "Mish",
                                  "Hardtanh"])
def test_activation_inplace_repr(name):
    assert repr(getattr(enn, name)(inplace=True)) == repr(getattr(tnn, name)(inplace=True))


@pytest.mark.parametrize("name,kwargs", [("elu", {}), ("gelu", {}),
                                         ("gelu", {"approximate": "tanh"}), ("silu", {}),
                                         ("mish", {}), ("softplus", {"beta": 2.0}),
                                         ("leaky_relu", {"negative_slope": 0.1})])
def test_activation_second_derivative(name, kwargs):
    x = randn((7,), np.float64, 3, scale=2.0)
    t = torch.tensor(x, requires_grad=True)
    e = ember.tensor(x, requires_grad=True)
    # f(x) * x: the double backward runs through both x and the incoming gradient
    tg, = torch.autograd.grad((getattr(TF, name)(t, **kwargs) * t).sum(), t, create_graph=True)
    eg, = ember.autograd.grad((getattr(EF, name)(e, **kwargs) * e).sum(), e, create_graph=True)
    np.testing.assert_allclose(eg.detach().numpy(), tg.detach().numpy(), rtol=1e-10, atol=1e-12)
    tgg, = torch.autograd.grad((tg * tg).sum(), t)
    egg, = ember.autograd.grad((eg * eg).sum(), e)
    np.testing.assert_allclose(egg.numpy(), tgg.numpy(), rtol=1e-9, atol=1e-12)


def test_gelu_bad_approximate():
    with pytest.raises(RuntimeError) as t_err:
        TF.gelu(torch.zeros(2), approximate="x")
    with pytest.raises(RuntimeError) as e_err:
        EF.gelu(ember.zeros(2), approximate="x")
    assert str(e_err.value) == str(t_err.value)


# ---- dropout (statistics) ------------------------------------------------------------------
@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_dropout_statistics(p):
    x = ember.ones(200, 200)
    y = EF.dropout(x, p, training=True).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / (1 - p), rtol=1e-6)   # torch's scaling
    assert abs(kept.mean() - (1 - p)) < 0.02
    assert abs(y.mean() - 1) < 0.05                                 # unbiased
    ty = TF.dropout(torch.ones(200, 200), p).numpy()
    assert abs(kept.mean() - (ty != 0).mean()) < 0.03


def test_dropout_eval_and_edge_p():
    x = randn((3, 4), np.float32)
    for t_mod, e_mod in [(tnn.Dropout(0.3), enn.Dropout(0.3)),
                         (tnn.Dropout2d(0.3), enn.Dropout2d(0.3))]:
        assert repr(e_mod) == repr(t_mod)
        e_mod.eval()
        xi = ember.tensor(x.reshape(1, 3, 2, 2))
        assert e_mod(xi) is xi
    np.testing.assert_array_equal(EF.dropout(ember.tensor(x), 0.0).numpy(), x)
    np.testing.assert_array_equal(EF.dropout(ember.tensor(x), 1.0).numpy(),
                                  TF.dropout(torch.tensor(x), 1.0).numpy())
    for make in [lambda lib: lib.nn.Dropout(1.5), lambda lib: lib.nn.functional.dropout(
            lib.ones(2), 1.5), lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 2, 2), -0.1)]:
        with pytest.raises(ValueError) as t_err:
            make(torch)
        with pytest.raises(ValueError) as e_err:
            make(ember)
        assert str(e_err.value) == str(t_err.value)


def test_dropout_gradient_is_mask_times_scale():
    x = ember.ones(50, 40, requires_grad=True)
    y = EF.dropout(x, 0.4)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy(), rtol=1e-6)


def test_dropout2d_zeroes_whole_channels():
    x = ember.ones(16, 32, 3, 3)
    y = enn.Dropout2d(0.5)(x).numpy()
    per_channel = y.reshape(16, 32, 9)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()
    frac = (per_channel[..., 0] == 0).mean()
    t = TF.dropout2d(torch.ones(16, 32, 3, 3), 0.5).numpy().reshape(16, 32, 9)
    assert abs(frac - (t[..., 0] == 0).mean()) < 0.12
    assert abs(frac - 0.5) < 0.1


# ---- Embedding -----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", [{}, {"padding_idx": 2}, {"padding_idx": -1},
                                    {"scale_grad_by_freq": True},
                                    {"padding_idx": 0, "scale_grad_by_freq": True}])
def test_embedding_module(dtype, kwargs):
    idx = np.array([[1, 2, 2, 0], [4, 1, 2, 9]], dtype=np.int64)  # repeated indices accumulate
    t = tnn.Embedding(10, 3, **kwargs).to(_tdtype(dtype))
    e = enn.Embedding(10, 3, **kwargs).to(_edtype(dtype))
    assert repr(e) == repr(t)
    if "padding_idx" in kwargs:
        assert (e.weight.detach().numpy()[e.padding_idx] == 0).all()
    copy_weights(t, e)
    to, eo = t(torch.tensor(idx)), e(ember.tensor(idx))
    np.testing.assert_allclose(eo.detach().numpy(), to.detach().numpy(), **TOL[dtype])
    cot = randn(tuple(to.shape), dtype, 5)
    to.backward(torch.tensor(cot))
    eo.backward(ember.tensor(cot))
    np.testing.assert_allclose(e.weight.grad.numpy(), t.weight.grad.numpy(), **TOL[dtype])


def test_embedding_functional_and_max_norm():
    w = randn((6, 4), np.float64, 3, scale=2.0)
    idx = np.array([[0, 5], [5, 3]], dtype=np.int64)
    compare(lambda lib, w: lib.nn.functional.embedding(lib.tensor(idx), w), w)
    tw, ew = torch.tensor(w), ember.tensor(w)
    for norm_type in (2.0, 1.0):
        tw, ew = torch.tensor(w), ember.tensor(w)
        to = TF.embedding(torch.tensor(idx), tw, max_norm=1.5, norm_type=norm_type)
        eo = EF.embedding(ember.tensor(idx), ew, max_norm=1.5, norm_type=norm_type)
        np.testing.assert_allclose(eo.numpy(), to.numpy(), rtol=1e-10)
        np.testing.assert_allclose(ew.numpy(), tw.numpy(), rtol=1e-10)  # renormed in place


def test_embedding_from_pretrained_and_errors():
    w = randn((5, 3), np.float32)
    t = tnn.Embedding.from_pretrained(torch.tensor(w), padding_idx=1)
    e = enn.Embedding.from_pretrained(ember.tensor(w), padding_idx=1)
    assert repr(e) == repr(t)
    assert e.weight.requires_grad is False
    np.testing.assert_array_equal(e.weight.detach().numpy(), w)  # padding row kept as given
    assert enn.Embedding.from_pretrained(ember.tensor(w), freeze=False).weight.requires_grad
    for call in [lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([5])),
                 lambda lib: lib.nn.Embedding(5, 3)(lib.tensor([1.0])),
                 lambda lib: lib.nn.Embedding(5, 3, padding_idx=5),
                 lambda lib: lib.nn.Embedding.from_pretrained(lib.ones(3))]:
        with pytest.raises(Exception) as t_err:
            call(torch)
        with pytest.raises(Exception) as e_err:
            call(ember)
        assert type(e_err.value) is type(t_err.value)
        assert str(e_err.value) == str(t_err.value).replace("torch.", "torch.")


def test_embedding_default_init():
    t, e = tnn.Embedding(300, 200), enn.Embedding(300, 200)
    assert abs(e.weight.detach().numpy().std() - t.weight.detach().numpy().std()) < 0.02
    assert abs(e.weight.detach().numpy().mean()) < 0.01


# ---- pad / one_hot / normalize -------------------------------------------------------------
PADS = [((1, 2), "constant", None), ((1, 2), "constant", 1.5), ((2, 0, 1, 3), "constant", None),
        ((-1, 2), "constant", None), ((1, 1, -1, 0, 1, 0), "constant", 0.5),
        ((2, 1), "reflect", None), ((1, 2, 2, 1), "reflect", None),
        ((2, 3), "replicate", None), ((1, 2, 3, 0), "replicate", None),
        ((2, 3), "circular", None), ((1, 2, 3, 0), "circular", None)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("pad,mode,value", PADS, ids=[f"{p}{m}{v}" for p, m, v in PADS])
def test_pad(dtype, pad, mode, value):
    x = randn((2, 3, 4), dtype)
    kw = {} if value is None else {"value": value}
    compare(lambda lib, x: lib.nn.functional.pad(x, pad, mode, **kw), x)


def test_pad_int_and_errors():
    x = np.arange(6).reshape(1, 2, 3)
    compare(lambda lib, x: lib.nn.functional.pad(x, (1, 1), value=2.5), x)
    compare(lambda lib, x: lib.nn.functional.pad(x, (1, 1), value=2.5),
            randn((2, 3), np.float32), noncontiguous=True)
    for pad, mode, kw in [((1, 2, 3), "constant", {}), ((3, 3), "reflect", {}),
                          ((1,) * 8, "constant", {}), ((1, 1), "foo", {}),
                          ((4, 1), "circular", {}), ((1, 1), "replicate", {"value": 2.0})]:
        with pytest.raises(Exception) as t_err:
            TF.pad(torch.tensor(x, dtype=torch.float32), pad, mode, **kw)
        with pytest.raises(Exception) as e_err:
            EF.pad(ember.tensor(x, dtype=ember.float32), pad, mode, **kw)
        assert type(e_err.value) is type(t_err.value)
        assert str(e_err.value) == str(t_err.value)


def test_one_hot():
    for idx, n in [([0, 2, 1], -1), ([[0], [3]], 5), ([], 3)]:
        compare(lambda lib, i: lib.nn.functional.one_hot(i, n), np.array(idx, dtype=np.int64))
    for args in [([0.0, 2.0], -1), ([0, 3], 3), ([-1, 1], -1), ([], -1)]:
        dt = np.float32 if isinstance(args[0][0] if args[0] else 0, float) else np.int64
        arr = np.array(args[0], dtype=dt)
        with pytest.raises(RuntimeError) as t_err:
            TF.one_hot(torch.tensor(arr), args[1])
        with pytest.raises(RuntimeError) as e_err:
            EF.one_hot(ember.tensor(arr), args[1])
        assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kwargs", [{}, {"dim": 0}, {"p": 1.0, "dim": -1},
                                    {"p": 3.0, "dim": 1, "eps": 0.1}])
def test_normalize(dtype, kwargs):
    x = randn((3, 4, 2), dtype)
    x[0, :, 0] = 0.0  # a zero slice: eps guards the division
    compare(lambda lib, x: lib.nn.functional.normalize(x, **kwargs), x)


# ---- nn.utils --------------------------------------------------------------------------------
def _twin_models(dtype):
    t = tnn.Sequential(tnn.Linear(4, 3), tnn.Tanh(), tnn.Linear(3, 2)).to(_tdtype(dtype))
    e = enn.Sequential(enn.Linear(4, 3), enn.Tanh(), enn.Linear(3, 2)).to(_edtype(dtype))
    copy_weights(t, e)
    x = randn((5, 4), dtype, 7, scale=3.0)
    (t(torch.tensor(x)) ** 2).sum().backward()
    (e(ember.tensor(x)) ** 2).sum().backward()
    return t, e


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("max_norm,norm_type", [(0.5, 2.0), (100.0, 2.0), (0.3, 1.0),
                                                (0.2, math.inf), (0.2, "inf"), (0.5, 3)])
def test_clip_grad_norm(dtype, max_norm, norm_type):
    t, e = _twin_models(dtype)
    tn = torch.nn.utils.clip_grad_norm_(t.parameters(), max_norm, norm_type)
    en = enn.utils.clip_grad_norm_(e.parameters(), max_norm, norm_type)
    assert isinstance(en, ember.Tensor) and en.dtype.name == str(tn.dtype).split(".")[-1]
    np.testing.assert_allclose(en.numpy(), tn.numpy(), **TOL[dtype])
    for tp, ep in zip(t.parameters(), e.parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), **TOL[dtype])


def test_clip_grad_norm_edge_cases():
    tp, ep = torch.ones(3, requires_grad=True), ember.ones(3, requires_grad=True)
    tp.grad, ep.grad = torch.tensor([3.0, 4.0, 0.0]), ember.tensor([3.0, 4.0, 0.0])
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0)   # a single tensor
    en = enn.utils.clip_grad_norm_(ep, 1.0)
    np.testing.assert_allclose(en.numpy(), tn.numpy())
    np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), rtol=1e-6)
    assert float(enn.utils.clip_grad_norm_([ember.ones(2, requires_grad=True)], 1.0)) == \
        float(torch.nn.utils.clip_grad_norm_([torch.ones(2, requires_grad=True)], 1.0))
    tp.grad, ep.grad = torch.tensor([float("nan"), 1.0, 0.0]), ember.tensor([float("nan"), 1, 0.])
    with pytest.raises(RuntimeError) as t_err:
        torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError) as e_err:
        enn.utils.clip_grad_norm_(ep, 1.0, error_if_nonfinite=True)
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("dtype", FLOATS)
def test_clip_grad_value(dtype):
    t, e = _twin_models(dtype)
    torch.nn.utils.clip_grad_value_(t.parameters(), 0.1)
    enn.utils.clip_grad_value_(e.parameters(), 0.1)
    for tp, ep in zip(t.parameters(), e.parameters()):
        np.testing.assert_allclose(ep.grad.numpy(), tp.grad.numpy(), **TOL[dtype])


def test_parameters_vector_round_trip():
    t, e = _twin_models(np.float64)
    tv = torch.nn.utils.parameters_to_vector(t.parameters())
    ev = enn.utils.parameters_to_vector(e.parameters())
    np.testing.assert_array_equal(ev.detach().numpy(), tv.detach().numpy())
    new = np.arange(tv.numel(), dtype=np.float64)
    torch.nn.utils.vector_to_parameters(torch.tensor(new), t.parameters())
    enn.utils.vector_to_parameters(ember.tensor(new), e.parameters())
    for (n, tp), ep in zip(t.named_parameters(), e.parameters()):
        np.testing.assert_array_equal(ep.detach().numpy(), tp.detach().numpy(), err_msg=n)
    with pytest.raises(TypeError) as t_err:
        torch.nn.utils.vector_to_parameters([1.0], t.parameters())
    with pytest.raises(TypeError) as e_err:
        enn.utils.vector_to_parameters([1.0], e.parameters())
    assert str(e_err.value) == str(t_err.value)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_implicit_dim_warns_and_matches(name):
    x = randn((2, 3, 4), np.float64)
    with pytest.warns(UserWarning) as tw:
        t = getattr(TF, name)(torch.tensor(x))
    with pytest.warns(UserWarning) as ew:
        e = getattr(EF, name)(ember.tensor(x))
    assert [str(w.message) for w in ew] == [str(w.message) for w in tw]
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["relu", "relu6", "hardtanh", "leaky_relu", "elu", "gelu",
                                  "silu", "mish", "softplus"])
def test_activation_on_int_tensor(name):
    x = np.array([-1, 3, 7], dtype=np.int64)
    try:
        expected = getattr(TF, name)(torch.tensor(x))
    except NotImplementedError as t_err:
        with pytest.raises(NotImplementedError) as e_err:
            getattr(EF, name)(ember.tensor(x))
        assert str(e_err.value) == str(t_err)
        return
    got = getattr(EF, name)(ember.tensor(x))
    assert got.dtype is ember.int64
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


DEVICE_TAKING_LAYERS = {
    "Conv2d": lambda nn, device: nn.Conv2d(2, 2, 1, device=device),
    "ConvTranspose3d": lambda nn, device: nn.ConvTranspose3d(2, 2, 1, device=device),
    "BatchNorm1d": lambda nn, device: nn.BatchNorm1d(3, device=device),
    "InstanceNorm2d": lambda nn, device: nn.InstanceNorm2d(3, affine=True, device=device),
    "LayerNorm": lambda nn, device: nn.LayerNorm(3, device=device),
    "GroupNorm": lambda nn, device: nn.GroupNorm(1, 3, device=device),
    "LSTM": lambda nn, device: nn.LSTM(2, 2, device=device),
    "RNNCell": lambda nn, device: nn.RNNCell(2, 2, device=device),
    "LSTMCell": lambda nn, device: nn.LSTMCell(2, 2, device=device),
    "GRUCell": lambda nn, device: nn.GRUCell(2, 2, device=device),
    "MultiheadAttention": lambda nn, device: nn.MultiheadAttention(4, 2, device=device),
    "TransformerEncoderLayer": lambda nn, device: nn.TransformerEncoderLayer(4, 2, 8,
                                                                             device=device),
    "TransformerDecoderLayer": lambda nn, device: nn.TransformerDecoderLayer(4, 2, 8,
                                                                             device=device),
    "Transformer": lambda nn, device: nn.Transformer(4, 2, 1, 1, 8, device=device),
    "square_subsequent_mask": lambda nn, device: nn.Transformer.generate_square_subsequent_mask(
        2, device=device),
}


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")
@pytest.mark.parametrize("name", sorted(DEVICE_TAKING_LAYERS))
def test_layer_device_argument_is_not_ignored(name):
    # a CPU-only build refuses a CUDA device; 'cpu' builds the layer
    make = DEVICE_TAKING_LAYERS[name]
    expected = error_of(lambda: make(torch.nn, "cuda"))
    assert expected is not None
    assert error_of(lambda: make(ember.nn, "cuda")) == expected
    make(ember.nn, "cpu")
