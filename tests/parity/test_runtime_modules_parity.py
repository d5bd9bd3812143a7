"""Parity with PyTorch for the runtime modules and switches: fused conv/linear + BatchNorm
numbers, hub.load on a local hubconf.py, load_state_dict_from_url's hash check, and the
errors and warnings of the global switches, sdpa_kernel, multiprocessing's sharing
strategies, the autograd helpers and the deprecated nn spellings."""
import warnings

import numpy as np
import pytest
import torch
import torch.multiprocessing as tmp
from torch.nn.attention import SDPBackend as TB, sdpa_kernel as t_sdpa_kernel

import ember
import ember.multiprocessing as emp
from ember.nn.attention import SDPBackend as EB, sdpa_kernel as e_sdpa_kernel
from tests.parity.compare import DEVICE, error_of

TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-12)}


def _host(t):
    return t.detach().cpu().numpy()


def _pair_modules(t_mod, e_mod):
    """Copy torch's parameters and buffers into ember's module (same numbers on both)."""
    with ember.no_grad():
        for name, t in list(t_mod.state_dict().items()):
            e_mod.state_dict()[name].copy_(ember.tensor(t.numpy()))
    return e_mod.to(DEVICE) if DEVICE else e_mod


def _bn_pair(t_cls, e_cls, n, dtype):
    t_bn = t_cls(n).to(getattr(torch, dtype))
    rng = np.random.default_rng(1)
    with torch.no_grad():
        t_bn.running_mean.copy_(torch.tensor(rng.normal(size=n)))
        t_bn.running_var.copy_(torch.tensor(rng.uniform(0.5, 2.0, size=n)))
        t_bn.weight.copy_(torch.tensor(rng.normal(size=n)))
        t_bn.bias.copy_(torch.tensor(rng.normal(size=n)))
    e_bn = _pair_modules(t_bn, e_cls(n).to(getattr(ember, dtype)))
    return t_bn.eval(), e_bn.eval()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,transpose,bias", [
    ("Conv2d", False, True), ("Conv2d", False, False), ("ConvTranspose2d", True, True),
    ("Conv1d", False, True)])
def test_fuse_conv_bn_eval_gives_torchs_numbers(dtype, kind, transpose, bias):
    torch.manual_seed(0)
    t_conv = getattr(torch.nn, kind)(3, 4, 3, bias=bias).to(getattr(torch, dtype)).eval()
    e_conv = _pair_modules(t_conv, getattr(ember.nn, kind)(3, 4, 3, bias=bias)
                           .to(getattr(ember, dtype))).eval()
    bn_cls = "BatchNorm1d" if kind == "Conv1d" else "BatchNorm2d"
    t_bn, e_bn = _bn_pair(getattr(torch.nn, bn_cls), getattr(ember.nn, bn_cls), 4, dtype)
    t_f = torch.nn.utils.fuse_conv_bn_eval(t_conv, t_bn, transpose=transpose)
    e_f = ember.nn.utils.fuse_conv_bn_eval(e_conv, e_bn, transpose=transpose)
    for name in ("weight", "bias"):
        te, ee = getattr(t_f, name), getattr(e_f, name)
        assert str(ee.dtype).split(".")[-1] == str(te.dtype).split(".")[-1]
        assert ee.requires_grad == te.requires_grad
        np.testing.assert_allclose(_host(ee), te.detach().numpy(), **TOL[dtype])
    x = np.random.default_rng(2).normal(size=(2, 3, 5) if kind == "Conv1d" else (2, 3, 5, 6))
    t_out = t_f(torch.tensor(x, dtype=getattr(torch, dtype)))
    e_out = e_f(ember.tensor(x, dtype=getattr(ember, dtype), device=DEVICE))
    np.testing.assert_allclose(_host(e_out), t_out.detach().numpy(), **TOL[dtype])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fuse_linear_bn_eval_gives_torchs_numbers(dtype):
    torch.manual_seed(0)
    t_lin = torch.nn.Linear(5, 4).to(getattr(torch, dtype)).eval()
    e_lin = _pair_modules(t_lin, ember.nn.Linear(5, 4).to(getattr(ember, dtype))).eval()
    t_bn, e_bn = _bn_pair(torch.nn.BatchNorm1d, ember.nn.BatchNorm1d, 4, dtype)
    t_f = torch.nn.utils.fuse_linear_bn_eval(t_lin, t_bn)
    e_f = ember.nn.utils.fuse_linear_bn_eval(e_lin, e_bn)
    np.testing.assert_allclose(_host(e_f.weight), t_f.weight.detach().numpy(), **TOL[dtype])
    np.testing.assert_allclose(_host(e_f.bias), t_f.bias.detach().numpy(), **TOL[dtype])


def test_fusion_errors_as_torchs():
    cases = [
        lambda L: L.nn.utils.fuse_conv_bn_eval(L.nn.Conv2d(2, 2, 1), L.nn.BatchNorm2d(2)),
        lambda L: L.nn.utils.fuse_linear_bn_eval(L.nn.Linear(2, 3).eval(),
                                                 L.nn.BatchNorm1d(2).eval()),
        lambda L: L.nn.utils.fuse_conv_bn_eval(
            L.nn.Conv2d(2, 2, 1).eval(), L.nn.BatchNorm2d(2, track_running_stats=False).eval()),
    ]
    for case in cases:
        assert error_of(lambda: case(ember)) == error_of(lambda: case(torch))


# ---- hub ------------------------------------------------------------------------------

HUBCONF = '''dependencies = ["os", "json"]
def entry(a, b=10, **kw):
    """The entry point."""
    return (a, b, sorted(kw.items()))
_hidden = 1
constant = 5
'''


def test_hub_load_local_as_torch(tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    d = str(tmp_path)
    assert ember.hub.load(d, "entry", 1, b=2, c=3, source="local") == \
        torch.hub.load(d, "entry", 1, b=2, c=3, source="local")
    for call in (lambda H: H.load(d, "constant", source="local"),
                 lambda H: H.load(d, "missing", source="local"),
                 lambda H: H.load(d, "entry", source="LOCALS"),
                 lambda H: H.load(d, 3, source="local"),
                 lambda H: H.load(d + "/nope", "entry", source="local")):
        assert error_of(lambda: call(ember.hub)) == error_of(lambda: call(torch.hub))
    (tmp_path / "hubconf.py").write_text('dependencies = ["json", "no_such_mod_a", "no_such_b"]\n')
    assert error_of(lambda: ember.hub.load(d, "entry", source="local")) == \
        error_of(lambda: torch.hub.load(d, "entry", source="local"))


def test_load_state_dict_from_url_hash_check_as_torch(tmp_path):
    for lib, name in ((torch, "t"), (ember, "e")):
        src = tmp_path / f"{name}-0123abcd.pt"
        lib.save({"w": lib.arange(3.0)}, str(src))
        err = error_of(lambda: lib.hub.load_state_dict_from_url(
            src.as_uri(), model_dir=str(tmp_path / f"cache_{name}"), progress=False,
            check_hash=True))
        assert err[0] == "RuntimeError"
        assert err[1].startswith('invalid hash value (expected "0123abcd", got "')
        assert not (tmp_path / f"cache_{name}" / src.name).exists()  # no partial file left
        sd = lib.hub.load_state_dict_from_url(src.as_uri(), model_dir=str(tmp_path / name),
                                              progress=False)
        assert sd["w"].tolist() == [0.0, 1.0, 2.0]


# ---- switches ---------------------------------------------------------------------------

def _warning_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [(w.category.__name__, str(w.message).split(" (Triggered internally")[0])
            for w in caught]


def test_matmul_precision_messages_as_torchs():
    try:
        for lib in (torch, ember):
            lib.set_float32_matmul_precision("medium")
        assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        assert _warning_of(lambda: ember.set_float32_matmul_precision("fast")) == \
            _warning_of(lambda: torch.set_float32_matmul_precision("fast"))
        assert ember.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        assert error_of(lambda: ember.set_float32_matmul_precision(2)) == \
            error_of(lambda: torch.set_float32_matmul_precision(2))
    finally:
        for lib in (torch, ember):
            lib.set_float32_matmul_precision("highest")


def test_deterministic_switches_as_torchs():
    try:
        for mode in ("warn", "error", "default", 1, 2, 0):
            results = []
            for lib in (torch, ember):
                lib.set_deterministic_debug_mode(mode)
                results.append((lib.get_deterministic_debug_mode(),
                                lib.are_deterministic_algorithms_enabled(),
                                lib.is_deterministic_algorithms_warn_only_enabled()))
            assert results[0] == results[1]
        for call in (lambda L: L.set_deterministic_debug_mode("loud"),
                     lambda L: L.set_deterministic_debug_mode(5),
                     lambda L: L.set_deterministic_debug_mode(None),
                     lambda L: L.use_deterministic_algorithms("yes"),
                     lambda L: L.use_deterministic_algorithms(True, warn_only=1)):
            assert error_of(lambda: call(ember)) == error_of(lambda: call(torch))
    finally:
        for lib in (torch, ember):
            lib.use_deterministic_algorithms(False)


@pytest.mark.parametrize("allowed", [
    "MATH", "FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "OVERRIDEABLE", "ERROR",
    ("FLASH_ATTENTION", "EFFICIENT_ATTENTION"), ("MATH", "FLASH_ATTENTION"), ()])
@pytest.mark.parametrize("case", ["plain", "3d", "dropout", "head_dim", "heads"])
def test_sdpa_kernel_as_torchs(allowed, case):
    rng = np.random.default_rng(0)
    shapes = {"plain": [(1, 2, 3, 4)] * 3, "3d": [(2, 3, 4)] * 3, "dropout": [(1, 2, 3, 4)] * 3,
              "head_dim": [(1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 5)],
              "heads": [(1, 2, 3, 4), (1, 3, 3, 4), (1, 3, 3, 4)]}[case]
    arrays = [rng.normal(size=s) for s in shapes]
    p = 0.5 if case == "dropout" else 0.0

    def run(lib, B, kernel):
        names = [allowed] if isinstance(allowed, str) else list(allowed)
        backends = getattr(B, names[0]) if isinstance(allowed, str) else \
            [getattr(B, n) for n in names]
        device = DEVICE if lib is ember else None
        q, k, v = (lib.tensor(a, dtype=lib.float32, device=device) for a in arrays)
        with kernel(backends):
            out = lib.nn.functional.scaled_dot_product_attention(q, k, v, dropout_p=p)
        return None if p else out

    t_err = error_of(lambda: run(torch, TB, t_sdpa_kernel))
    e_err = error_of(lambda: run(ember, EB, e_sdpa_kernel))
    assert e_err == t_err
    if t_err is None and not p:
        np.testing.assert_allclose(_host(run(ember, EB, e_sdpa_kernel)),
                                   run(torch, TB, t_sdpa_kernel).numpy(), rtol=1e-5, atol=1e-6)


def test_sdpa_kernel_argument_error_as_torchs():
    def enter(kernel, arg):
        with kernel(arg):
            pass
    assert error_of(lambda: enter(e_sdpa_kernel, "math")) == \
        error_of(lambda: enter(t_sdpa_kernel, "math"))
    assert [(m.name, int(m)) for m in EB] == [(n, int(v)) for n, v in TB.__members__.items()]
    assert repr(EB.FLASH_ATTENTION) == repr(TB.FLASH_ATTENTION)
    assert str(EB.MATH) == str(TB.MATH)


# ---- multiprocessing, autograd helpers, deprecated spellings ------------------------------

def test_sharing_strategies_as_torchs():
    assert emp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert emp.get_sharing_strategy() == tmp.get_sharing_strategy()
    assert error_of(lambda: emp.set_sharing_strategy("shm")) == \
        error_of(lambda: tmp.set_sharing_strategy("shm"))
    assert set(tmp.__all__) <= set(emp.__all__) | {"reducer"}


def test_autograd_helper_errors_as_torchs():
    for call in (lambda L: L.autograd.graph.get_gradient_edge(L.ones(2)),
                 lambda L: L.autograd.graph.increment_version(3),
                 lambda L: L.autograd.set_multithreading_enabled(1)):
        assert error_of(lambda: call(ember)) == error_of(lambda: call(torch))
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        y = x * 3
        edge = lib.autograd.graph.get_gradient_edge(y)
        assert edge.output_nr == 0 and edge.ownership_token is None
        assert type(edge.node).__name__ == "MulBackward0" or edge.node.name() == "MulBackward0"
        z = (y * y).sum()
        grads = lib.autograd.grad(z, [edge, x], retain_graph=True)
        assert [g.tolist() for g in grads] == [[6.0, 6.0], [18.0, 18.0]]
        assert error_of(lambda: lib.autograd.grad(z, edge, materialize_grads=True)) is None
        lib.autograd.graph.increment_version([x, y])
        assert (x._version, y._version) == (1, 1)
    unused = []
    for lib in (torch, ember):
        x = lib.ones(2, requires_grad=True)
        w = x * 2
        edge = lib.autograd.graph.get_gradient_edge(w)
        unused.append(error_of(lambda: lib.autograd.grad((x * 3).sum(), edge,
                                                         materialize_grads=True)))
    assert unused[0] == unused[1]


def test_swap_tensors_as_torchs():
    results = []
    for lib in (torch, ember):
        a, b = lib.tensor([1.0, 2.0]), lib.nn.Parameter(lib.zeros(3))
        a.tag = "a"
        lib.utils.swap_tensors(a, b)
        results.append((type(a).__name__, a.tolist(), a.requires_grad, type(b).__name__,
                        b.tolist(), b.requires_grad, getattr(b, "tag", None),
                        hasattr(a, "tag")))
    assert results[0] == results[1]


@pytest.mark.parametrize("name", ["uniform", "normal", "constant", "eye", "dirac",
                                  "xavier_uniform", "xavier_normal", "kaiming_uniform",
                                  "kaiming_normal", "orthogonal", "sparse"])
def test_deprecated_init_warnings_as_torchs(name):
    args = {"constant": (0.5,), "sparse": (0.5,)}.get(name, ())
    shape = (2, 2, 3) if name == "dirac" else (3, 3)
    got = _warning_of(lambda: getattr(ember.nn.init, name)(ember.empty(*shape), *args))
    want = _warning_of(lambda: getattr(torch.nn.init, name)(torch.empty(*shape), *args))
    assert got == want
    assert getattr(ember.nn.init, name).__name__ == name


def test_clip_grad_norm_warning_and_value_as_torchs():
    out = []
    for lib in (torch, ember):
        p = lib.nn.Parameter(lib.ones(3))
        p.grad = lib.full((3,), 2.0)
        msgs = _warning_of(lambda: out.append(lib.nn.utils.clip_grad_norm([p], 1.0).item()))
        out.append((msgs, p.grad.tolist()))
    assert out[0] == out[2] and out[1][0] == out[3][0]
    np.testing.assert_allclose(out[1][1], out[3][1], rtol=1e-6)


def test_stateless_functional_call_as_torchs():
    got = []
    for lib in (torch, ember):
        lin = lib.nn.Linear(2, 1)
        new = {"weight": lib.ones(1, 2), "bias": lib.full((1,), 0.5)}
        msgs = _warning_of(lambda: got.append(
            lib.nn.utils.stateless.functional_call(lin, new, (lib.ones(2),)).tolist()))
        got.append([m[0] for m in msgs])
    assert got[:2] == got[2:]
