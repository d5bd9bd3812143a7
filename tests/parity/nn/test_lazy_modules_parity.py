"""Parity with PyTorch for the lazy modules and uninitialized parameters: the same first
inputs through torch's and ember's lazy modules give the same reprs (before and after), class
changes, parameter shapes and dtypes, state_dict keys and entry types; loading a state_dict
into a lazy module; which calls an uninitialized parameter accepts, and the errors' types and
texts. Then torch's initialized weights are copied into ember and a forward/backward is
compared (float32 and float64), also through optimizers built before the first call."""
import copy

import numpy as np
import pytest
import torch
import torch.nn as tnn

import ember
import ember.nn as enn

from tests.parity.compare import DEVICE, TOL, error_of

FLOATS = [np.float32, np.float64]


def _tdtype(dtype):
    return torch.float32 if dtype == np.float32 else torch.float64


def _edtype(dtype):
    return ember.float32 if dtype == np.float32 else ember.float64


def _host(t):
    return t.detach().cpu().numpy()


def _same_text(t_text, e_text):
    assert e_text == t_text.replace("torch.Size", "ember.Size")


def _entry_types(sd):
    return [(k, type(v).__name__) for k, v in sd.items()]


# (name, constructor arguments, first-input shape): each lazy class, batched and unbatched
CASES = [
    ("LazyLinear", (3,), {}, (2, 5)),
    ("LazyLinear", (4,), {"bias": False}, (6,)),
    ("LazyLinear", (2,), {}, (2, 3, 4)),
    ("LazyConv1d", (4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("LazyConv2d", (4, 3), {}, (2, 3, 6, 6)),
    ("LazyConv2d", (4, 3), {"groups": 2, "bias": False, "padding_mode": "reflect",
                            "padding": 1}, (2, 6, 5, 5)),
    ("LazyConv2d", (4, (3, 2)), {"dilation": 2}, (3, 7, 7)),
    ("LazyConv3d", (2, 2), {"padding": 1}, (1, 3, 3, 3, 3)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2, "dilation": 2}, (1, 4, 4, 4)),
    ("LazyConvTranspose2d", (2, 2), {}, (3, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {"stride": 2}, (1, 2, 2, 2, 2)),
    ("LazyBatchNorm1d", (), {}, (4, 3)),
    ("LazyBatchNorm1d", (), {"affine": False, "momentum": None}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"eps": 1e-3, "bias": False}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 2, 2)),
]
IDS = [f"{c[0]}-{i}" for i, c in enumerate(CASES)]


def _pair(name, args, kwargs, dtype):
    t_mod = getattr(tnn, name)(*args, **kwargs, dtype=_tdtype(dtype))
    e_mod = getattr(enn, name)(*args, **kwargs, dtype=_edtype(dtype), device=DEVICE)
    return t_mod, e_mod


def _describe(mod):
    """What must agree between the libraries: class, repr, state_dict entry types, and the
    shapes and dtypes of the initialized parameters and buffers."""
    sd = mod.state_dict()
    shapes = [(k, tuple(v.shape), str(v.dtype).split(".")[-1]) for k, v in sd.items()
              if not type(v).__name__.startswith("Uninitialized")]
    attributes = sorted(k for k in mod.__dict__
                        if not k.startswith("_") or k in ("_initialize_hook", "_load_hook"))
    return type(mod).__name__, repr(mod), _entry_types(sd), shapes, attributes


@pytest.mark.parametrize("name, args, kwargs, shape", CASES, ids=IDS)
@pytest.mark.parametrize("dtype", FLOATS)
def test_first_call_and_forward_backward(name, args, kwargs, shape, dtype):
    t_mod, e_mod = _pair(name, args, kwargs, dtype)
    assert _describe(e_mod) == _describe(t_mod)
    assert e_mod.has_uninitialized_params() == t_mod.has_uninitialized_params()
    x = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    with torch.no_grad():
        t_mod(torch.tensor(x))
    with ember.no_grad():
        e_mod(ember.tensor(x, device=DEVICE))
    assert _describe(e_mod) == _describe(t_mod)
    # torch's weights into ember, then a training-mode forward and backward
    e_mod.load_state_dict({k: ember.tensor(v.numpy(), device=DEVICE)
                           for k, v in t_mod.state_dict().items()})
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    t_in = torch.tensor(x, requires_grad=True)
    e_in = ember.tensor(x, requires_grad=True, device=DEVICE)
    t_out, e_out = t_mod(t_in), e_mod(e_in)
    tol = TOL[dtype]
    np.testing.assert_allclose(_host(e_out), t_out.detach().numpy(), **tol)
    cot = np.random.default_rng(2).standard_normal(tuple(t_out.shape)).astype(dtype)
    t_out.backward(torch.tensor(cot))
    e_out.backward(ember.tensor(cot, device=DEVICE))
    np.testing.assert_allclose(_host(e_in.grad), t_in.grad.numpy(), **tol)
    for (tn, tp), (en, ep) in zip(t_mod.named_parameters(), e_mod.named_parameters()):
        assert tn == en
        np.testing.assert_allclose(_host(ep.grad), tp.grad.numpy(), err_msg=tn, **tol)
    for (tn, tb), (en, eb) in zip(t_mod.named_buffers(), e_mod.named_buffers()):
        np.testing.assert_allclose(_host(eb), tb.numpy(), err_msg=tn, **tol)


@pytest.mark.parametrize("name, eager, args, kwargs", [
    ("LazyLinear", "Linear", (5, 3), {}),
    ("LazyConv2d", "Conv2d", (3, 4, 3), {}),
    ("LazyConvTranspose1d", "ConvTranspose1d", (2, 4, 3), {"bias": False}),
    ("LazyBatchNorm2d", "BatchNorm2d", (3,), {}),
    ("LazyInstanceNorm1d", "InstanceNorm1d", (3,), {"affine": True,
                                                    "track_running_stats": True}),
])
def test_load_state_dict_into_lazy(name, eager, args, kwargs):
    src = getattr(tnn, eager)(*args, **kwargs)
    lazy_args = {"Linear": (3,), "Conv2d": (4, 3), "ConvTranspose1d": (4, 3)}.get(eager, ())
    lazy_kwargs = {"bias": False} if eager == "ConvTranspose1d" else {}
    t_mod = getattr(tnn, name)(*lazy_args, **lazy_kwargs)
    e_mod = getattr(enn, name)(*lazy_args, **lazy_kwargs, device=DEVICE)
    sd = src.state_dict()
    t_keys = t_mod.load_state_dict(sd)
    e_keys = e_mod.load_state_dict({k: ember.tensor(v.numpy(), device=DEVICE)
                                    for k, v in sd.items()})
    assert repr(e_keys) == repr(t_keys)
    assert _describe(e_mod) == _describe(t_mod)
    for k, v in t_mod.state_dict().items():
        np.testing.assert_array_equal(_host(e_mod.state_dict()[k]), v.numpy())


def test_lazy_into_lazy_and_partial_loads():
    t_keys = tnn.LazyLinear(3).load_state_dict(tnn.LazyLinear(3).state_dict())
    e_keys = enn.LazyLinear(3).load_state_dict(enn.LazyLinear(3).state_dict())
    assert repr(e_keys) == repr(t_keys)
    w = np.ones((3, 5), np.float32)
    t_mod, e_mod = tnn.LazyLinear(3), enn.LazyLinear(3)
    assert error_of(lambda: e_mod.load_state_dict({"weight": ember.tensor(w)})) == \
        error_of(lambda: t_mod.load_state_dict({"weight": torch.tensor(w)}))
    assert _describe(e_mod) == _describe(t_mod)
    assert error_of(lambda: e_mod(ember.ones(1, 5))) == error_of(lambda: t_mod(torch.ones(1, 5)))
    # an uninitialized entry into an initialized module: the shape error, raised directly
    assert error_of(lambda: enn.Linear(5, 3).load_state_dict(enn.LazyLinear(3).state_dict())) \
        == error_of(lambda: tnn.Linear(5, 3).load_state_dict(tnn.LazyLinear(3).state_dict()))
    # the loaded shapes against the first input
    t_mod, e_mod = tnn.LazyLinear(3), enn.LazyLinear(3)
    t_mod.load_state_dict(tnn.Linear(5, 3).state_dict())
    e_mod.load_state_dict(enn.Linear(5, 3).state_dict())
    assert error_of(lambda: e_mod(ember.ones(2, 4))) == error_of(lambda: t_mod(torch.ones(2, 4)))


# ---- uninitialized tensors ----------------------------------------------------------------------
ALLOWED_OR_NOT = [
    "size", "dtype", "device", "requires_grad", "is_leaf", "grad", "ndim", "is_floating_point",
    "is_complex", "float", "double", "half", "long", "int", "short", "char", "cpu", "to64",
    "add", "dim", "numel", "detach", "clone", "len", "zero_", "fill_", "requires_grad_",
    "stride", "item", "tolist", "eq", "bool", "ones_like", "linear", "mul_scalar", "shape",
    "share_memory_", "repr", "str", "materialize_twice", "copy_", "copy_no_grad",
]


def _use(lib, t, what):
    calls = {
        "size": lambda: t.size(), "to64": lambda: t.to(lib.float64), "add": lambda: t + 1,
        "len": lambda: len(t), "fill_": lambda: t.fill_(1), "eq": lambda: t == t,
        "requires_grad_": lambda: t.requires_grad_(False), "ones_like": lambda: lib.ones_like(t),
        "linear": lambda: lib.nn.functional.linear(lib.ones(2), t),
        "mul_scalar": lambda: lib.mul(lib.tensor(2.0), t), "repr": lambda: repr(t),
        "copy_": lambda: t.copy_(lib.zeros(0)), "copy_no_grad": lambda: _no_grad_copy(lib, t),
        "str": lambda: str(t), "materialize_twice": lambda: (t.materialize((2,)),
                                                              t.materialize((3,))),
    }
    if what in calls:
        return calls[what]()
    value = getattr(t, what)
    return value() if callable(value) else value


def _no_grad_copy(lib, t):
    with lib.no_grad():
        return t.copy_(lib.zeros(0, dtype=lib.float64))


def _outcome(lib, t, what):
    try:
        r = _use(lib, t, what)
    except Exception as e:  # noqa: BLE001 - compared between the libraries
        text = str(e)
        if isinstance(e, ValueError) and text.startswith("Attempted to use an uninitialized"):
            text = text.split(" in ", 1)[0] + text.split(". This error", 1)[1]  # no func repr
        return type(e).__name__, text.replace("torch.Size", "ember.Size")
    if isinstance(r, tuple) and r and r[0] is None:
        r = None
    described = type(r).__name__
    if isinstance(r, (lib.Tensor,)):
        described += f" {str(r.dtype).split('.')[-1]} same={r is t}"
    elif isinstance(r, (bool, int, type(None), str)):
        described += f" {r}"
    return described.replace("torch.", "").replace("ember.", "")


@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
@pytest.mark.parametrize("what", ALLOWED_OR_NOT)
def test_uninitialized_tensor_calls(kind, what):
    t = getattr(torch.nn.parameter, kind)()
    e = getattr(ember.nn.parameter, kind)(device=DEVICE)
    t_out, e_out = _outcome(torch, t, what), _outcome(ember, e, what)
    if what == "device":
        t_out, e_out = t_out.split()[0], e_out.split()[0]
    if what == "cpu" and DEVICE is not None:  # a move: a new tensor, as torch's from a GPU
        t_out = t_out.replace("UninitializedParameter", "Tensor").replace("True", "False")
    assert e_out == t_out


def test_uninitialized_error_texts():
    t_err = error_of(lambda: torch.nn.parameter.UninitializedParameter() + 1)
    e_err = error_of(lambda: ember.nn.parameter.UninitializedParameter() + 1)
    assert e_err[0] == t_err[0] == "ValueError"
    head = "Attempted to use an uninitialized parameter in "
    assert t_err[1].startswith(head) and e_err[1].startswith(head)
    assert e_err[1].split(". This error", 1)[1] == t_err[1].split(". This error", 1)[1]
    for make in ("UninitializedParameter", "UninitializedBuffer"):
        assert error_of(lambda: getattr(ember.nn, make)().shape) == \
            error_of(lambda: getattr(torch.nn, make)().shape)


@pytest.mark.parametrize("kind", ["UninitializedParameter", "UninitializedBuffer"])
@pytest.mark.parametrize("kwargs", [{}, {"requires_grad": False}, {"requires_grad": True},
                                    {"dtype": "float64"}])
def test_materialize(kind, kwargs):
    def run(lib):
        kw = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        t = getattr(lib.nn.parameter, kind)(**kw)
        same = t
        t.materialize((2, 3))
        d = t.dtype
        t2 = getattr(lib.nn.parameter, kind)(**kw)
        t2.materialize(4, dtype=lib.float16)
        return (same is t, type(t).__name__, tuple(t.shape), str(d).split(".")[-1],
                t.requires_grad, t.is_leaf, tuple(t2.shape), str(t2.dtype).split(".")[-1])
    assert run(ember) == run(torch)


def test_deepcopy():
    for lib in (torch, ember):
        p = lib.nn.UninitializedParameter(requires_grad=False, dtype=lib.float64)
        c = copy.deepcopy(p)
        assert type(c).__name__ == "UninitializedParameter" and c is not p
        assert (c.requires_grad, str(c.dtype).split(".")[-1]) == (False, "float64")
    assert error_of(lambda: copy.deepcopy(enn.LazyBatchNorm1d()))[0] == \
        error_of(lambda: copy.deepcopy(tnn.LazyBatchNorm1d()))[0] == "ValueError"
    t_mod, e_mod = tnn.LazyLinear(3), enn.LazyLinear(3)
    t_c, e_c = copy.deepcopy(t_mod), copy.deepcopy(e_mod)
    t_c(torch.ones(1, 2))
    e_c(ember.ones(1, 2))
    assert _describe(e_c) == _describe(t_c) and _describe(e_mod) == _describe(t_mod)


# ---- errors of the lazy modules --------------------------------------------------------------
ERRORS = [
    ("conv groups", lambda nn, lib: nn.LazyConv2d(4, 3, groups=2)(lib.ones(1, 3, 5, 5))),
    ("conv dims", lambda nn, lib: nn.LazyConv2d(4, 3)(lib.ones(3, 5, 5, 5, 5))),
    ("conv1d dims", lambda nn, lib: nn.LazyConvTranspose1d(4, 3)(lib.ones(5))),
    ("transpose padding mode", lambda nn, lib: nn.LazyConvTranspose2d(4, 3,
                                                                       padding_mode="circular")),
    ("linear 0-d", lambda nn, lib: nn.LazyLinear(3)(lib.tensor(1.0))),
    ("batchnorm 1-d", lambda nn, lib: nn.LazyBatchNorm1d()(lib.ones(3))),
    ("batchnorm dims", lambda nn, lib: nn.LazyBatchNorm2d()(lib.ones(2, 3, 4))),
    ("instancenorm unbatched", lambda nn, lib: nn.LazyInstanceNorm1d()(lib.ones(3, 5))),
    ("requires_grad_", lambda nn, lib: nn.LazyLinear(3).requires_grad_(False)),
    ("dtype mismatch", lambda nn, lib: nn.LazyLinear(3)(lib.ones(2, 4, dtype=lib.float64))),
]


@pytest.mark.parametrize("make", [e[1] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_errors(make):
    t_err = error_of(lambda: make(tnn, torch))
    e_err = error_of(lambda: make(enn, ember))
    assert t_err is not None and e_err is not None
    assert e_err[0] == t_err[0]
    if t_err[1].startswith("Attempted to use an uninitialized"):
        assert e_err[1].split(". This error")[1] == t_err[1].split(". This error")[1]
    else:
        _same_text(t_err[1], e_err[1])


def test_mixin_errors():
    def run(lib):
        class Bare(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
            pass

        class Half(lib.nn.modules.lazy.LazyModuleMixin, lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = lib.nn.UninitializedParameter()

            def initialize_parameters(self, x):
                pass

        return (error_of(lambda: Bare()(1)), error_of(lambda: Half()(1)),
                error_of(lambda: Half()._replicate_for_data_parallel()))
    assert run(ember) == run(torch)


@pytest.mark.parametrize("opt", ["SGD", "Adam"])
def test_optimizer_built_before_first_call(opt):
    kw = {"lr": 0.1, "momentum": 0.9} if opt == "SGD" else {"lr": 0.1}
    t_mod, e_mod = tnn.LazyLinear(3), enn.LazyLinear(3, device=DEVICE)
    t_opt = getattr(torch.optim, opt)(t_mod.parameters(), **kw)
    e_opt = getattr(ember.optim, opt)(e_mod.parameters(), **kw)
    assert [repr(p) for p in e_opt.param_groups[0]["params"]] == \
        [repr(p) for p in t_opt.param_groups[0]["params"]]
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    t_mod(torch.tensor(x))
    e_mod(ember.tensor(x, device=DEVICE))
    e_mod.load_state_dict({k: ember.tensor(v.numpy(), device=DEVICE)
                           for k, v in t_mod.state_dict().items()})
    for _ in range(2):
        t_opt.zero_grad()
        e_opt.zero_grad()
        (t_mod(torch.tensor(x)) ** 2).sum().backward()
        (e_mod(ember.tensor(x, device=DEVICE)) ** 2).sum().backward()
        t_opt.step()
        e_opt.step()
    assert e_opt.param_groups[0]["params"][0] is e_mod.weight
    for tp, ep in zip(t_mod.parameters(), e_mod.parameters()):
        np.testing.assert_allclose(_host(ep), tp.detach().numpy(), **TOL[np.float32])


def test_module_conversions_before_first_call():
    def run(lib):
        m = lib.nn.LazyBatchNorm1d().double()
        before = [(type(t).__name__, str(t.dtype).split(".")[-1])
                  for t in m.state_dict().values()]
        m(lib.ones(4, 3, dtype=lib.float64))
        after = [(type(t).__name__, str(t.dtype).split(".")[-1])
                 for t in m.state_dict().values()]
        half = lib.nn.LazyLinear(2).half()
        return before, after, type(half.weight).__name__, str(half.weight.dtype)[-7:]
    assert run(ember) == run(torch)
