"""Runtime modules and switches: ember.multiprocessing, ember.hub, ember.utils.hooks,
swap_tensors, the global switches, nn.attention's sdpa_kernel and the autograd helpers."""
import operator
import os
import pathlib
import sys
import warnings

import pytest

import ember
import ember.multiprocessing as mp
from ember.nn.attention import SDPBackend, sdpa_kernel

F = ember.nn.functional


# ---- global switches -------------------------------------------------------------------

def test_matmul_precision_round_trip_and_bad_values():
    try:
        for p in ("high", "medium", "highest"):
            ember.set_float32_matmul_precision(p)
            assert ember.get_float32_matmul_precision() == p
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            ember.set_float32_matmul_precision("HIGH")
        assert ember.get_float32_matmul_precision() == "highest"
        with pytest.raises(RuntimeError, match="expects a str, but got int"):
            ember.set_float32_matmul_precision(1)
    finally:
        ember.set_float32_matmul_precision("highest")


def test_deterministic_switches():
    try:
        assert not ember.are_deterministic_algorithms_enabled()
        ember.use_deterministic_algorithms(True)
        assert ember.get_deterministic_debug_mode() == 2
        assert not ember.is_deterministic_algorithms_warn_only_enabled()
        ember.set_deterministic_debug_mode("warn")
        assert ember.are_deterministic_algorithms_enabled()
        assert ember.is_deterministic_algorithms_warn_only_enabled()
        ember.set_deterministic_debug_mode(0)
        assert ember.get_deterministic_debug_mode() == 0
        with pytest.raises(TypeError, match="must be bool, not int"):
            ember.use_deterministic_algorithms(1)
        with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 3"):
            ember.set_deterministic_debug_mode(3)
        with pytest.raises(TypeError, match="debug_mode must be str or int"):
            ember.set_deterministic_debug_mode(1.0)
    finally:
        ember.use_deterministic_algorithms(False)


def test_cudnn_flags_are_settable():
    cudnn = ember.backends.cudnn
    old = cudnn.deterministic, cudnn.benchmark
    try:
        cudnn.deterministic, cudnn.benchmark = True, True
        assert cudnn.deterministic is True and cudnn.benchmark is True
    finally:
        cudnn.deterministic, cudnn.benchmark = old


def test_cudnn_flags_default_to_false():
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", "import ember; c = ember.backends.cudnn; "
                          "print(c.deterministic, c.benchmark)"], capture_output=True,
                         text=True, timeout=120).stdout
    assert out.split() == ["False", "False"]


# ---- sdpa_kernel -------------------------------------------------------------------------

def test_sdpa_kernel_restricts_backends():
    q = ember.randn(1, 2, 3, 4)
    expected = F.scaled_dot_product_attention(q, q, q)
    for allowed in (SDPBackend.MATH, [SDPBackend.FLASH_ATTENTION], [SDPBackend.MATH,
                                                                   SDPBackend.CUDNN_ATTENTION]):
        with sdpa_kernel(allowed):
            assert ember.equal(F.scaled_dot_product_attention(q, q, q), expected)
    for allowed in ([], SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION):
        with sdpa_kernel(allowed), pytest.raises(RuntimeError, match="No viable backend"):
            F.scaled_dot_product_attention(q, q, q)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION), pytest.warns(UserWarning, match="dropout"):
        with pytest.raises(RuntimeError, match="No available kernel"):
            F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    # restored on exit
    assert ember.equal(F.scaled_dot_product_attention(q, q, q), expected)


def test_sdpa_kernel_argument_check_and_enum():
    with pytest.raises(AssertionError, match="got str"):
        with sdpa_kernel("math"):
            pass
    assert int(SDPBackend.OVERRIDEABLE) == 4 and str(SDPBackend.MATH) == "SDPBackend.MATH"


# ---- autograd helpers ------------------------------------------------------------------

def test_gradient_edge_and_increment_version():
    x = ember.ones(2, requires_grad=True)
    edge = ember.autograd.graph.get_gradient_edge(x)
    assert edge.node.name() == "torch::autograd::AccumulateGrad" and edge.output_nr == 0
    y = x * 2
    assert ember.autograd.graph.get_gradient_edge(y).node is y.grad_fn
    with pytest.raises(RuntimeError, match="does not require gradients"):
        ember.autograd.graph.get_gradient_edge(ember.ones(1))
    z = (y * y).sum()
    g_edge, g_x = ember.autograd.grad(z, [ember.autograd.graph.get_gradient_edge(y), x])
    assert g_edge.tolist() == [4.0, 4.0] and g_x.tolist() == [8.0, 8.0]  # 2y, 8x
    ember.autograd.graph.increment_version([x])
    assert x._version == 1
    with pytest.raises(RuntimeError, match="Iterable"):
        ember.autograd.graph.increment_version(3)
    # a saved tensor changed behind autograd's back
    a = ember.ones(2, requires_grad=True)
    b = a.clone()
    c = (b * b).sum()
    ember.autograd.graph.increment_version(b)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        c.backward()


def test_multithreading_switch_and_anomaly_mode_module():
    assert ember.autograd.is_multithreading_enabled()
    with ember.autograd.set_multithreading_enabled(False):
        assert not ember.autograd.is_multithreading_enabled()
    assert ember.autograd.is_multithreading_enabled()
    with pytest.raises(TypeError, match="must be bool"):
        ember.autograd.set_multithreading_enabled(1)
    assert ember.autograd.anomaly_mode.detect_anomaly is ember.autograd.detect_anomaly


# ---- hooks and swap_tensors ------------------------------------------------------------

def test_removable_handle_pytorch_form():
    hooks, extra = {}, {}
    h = ember.utils.hooks.RemovableHandle(hooks, extra_dict=extra)
    hooks[h.id] = extra[h.id] = print
    h2 = ember.utils.hooks.RemovableHandle(hooks)
    assert h2.id != h.id
    h.remove()
    assert not hooks and not extra
    x = ember.ones(1, requires_grad=True)
    assert isinstance(x.register_hook(lambda g: g), ember.utils.hooks.RemovableHandle)


def test_warn_if_has_hooks():
    x = ember.ones(1, requires_grad=True)
    x.register_hook(ember.utils.hooks.unserializable_hook(lambda g: g))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.utils.hooks.warn_if_has_hooks(x)
    x.register_hook(lambda g: g)
    with pytest.warns(UserWarning, match="will not be serialized"):
        ember.utils.hooks.warn_if_has_hooks(x)


def test_swap_tensors():
    a = ember.tensor([1.0, 2.0])
    b = ember.nn.Parameter(ember.zeros(3))
    a.note = "a"
    ember.utils.swap_tensors(a, b)
    assert type(a) is ember.nn.Parameter and a.requires_grad and a.shape == (3,)
    assert type(b) is ember.Tensor and b.tolist() == [1.0, 2.0] and b.note == "a"
    assert not hasattr(a, "note")
    with pytest.raises(AttributeError):
        ember.utils.swap_tensors(a, 1)


def test_swap_tensors_poisons_a_recorded_graph():
    w = ember.ones(2, requires_grad=True)
    loss = (w * 2).sum()
    ember.utils.swap_tensors(w, ember.zeros(2))
    with pytest.raises(RuntimeError, match="poisoned by swap_tensors"):
        loss.backward()


# ---- multiprocessing -------------------------------------------------------------------

def _child_ok(i, q):
    q.put((i, ember.tensor([float(i)])))


def _child_raises(i):
    if i == 1:
        raise ValueError("boom from child")


def _child_exits(i):
    sys.exit(3)


def test_sharing_strategy():
    assert mp.get_sharing_strategy() in mp.get_all_sharing_strategies()
    with pytest.raises(AssertionError, match="invalid sharing strategy 'x'"):
        mp.set_sharing_strategy("x")
    assert mp.Queue is not None and mp.get_context is not None  # multiprocessing's API


def test_start_processes_and_tensors_through_a_queue():
    ctx = mp.get_context("fork")
    q = ctx.SimpleQueue()
    pc = mp.start_processes(_child_ok, args=(q,), nprocs=2, join=False, start_method="fork")
    assert len(pc.pids()) == 2
    while not pc.join():
        pass
    got = sorted((q.get() for _ in range(2)), key=lambda r: r[0])
    assert [t.tolist() for _, t in got] == [[0.0], [1.0]]


def test_child_exception_and_exit_code():
    with pytest.raises(mp.ProcessRaisedException) as info:
        mp.start_processes(_child_raises, nprocs=2, start_method="fork")
    assert info.value.error_index == 1
    assert "-- Process 1 terminated with the following error:" in str(info.value)
    assert "ValueError: boom from child" in str(info.value)
    with pytest.raises(mp.ProcessExitedException, match="terminated with exit code 3") as info:
        mp.start_processes(_child_exits, nprocs=1, start_method="fork")
    assert info.value.exit_code == 3


def test_spawn_warns_for_other_start_methods():
    with pytest.warns(FutureWarning, match="only supports start_method=spawn"):
        assert mp.spawn(_child_exits, nprocs=0, start_method="fork") is None
    with pytest.raises(ValueError, match="cannot find context for 'bogus'"):
        mp.start_processes(_child_exits, nprocs=0, start_method="bogus")


# ---- hub -------------------------------------------------------------------------------

HUBCONF = '''dependencies = ["os"]
def scaled(x, factor=2):
    """Multiply."""
    return x * factor
def _private():
    pass
not_callable = 3
'''


@pytest.fixture
def hub_dir(tmp_path):
    old = ember.hub.get_dir()
    ember.hub.set_dir(str(tmp_path / "hub"))
    yield tmp_path
    ember.hub.set_dir(old)


def test_hub_local_load(tmp_path):
    (tmp_path / "hubconf.py").write_text(HUBCONF)
    assert ember.hub.load(str(tmp_path), "scaled", 3, source="local", factor=5) == 15
    with pytest.raises(RuntimeError, match="Cannot find callable not_callable in hubconf"):
        ember.hub.load(str(tmp_path), "not_callable", source="local")
    (tmp_path / "hubconf.py").write_text('dependencies = ["no_such_module_xyz"]\n')
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_module_xyz"):
        ember.hub.load(str(tmp_path), "scaled", source="local")
    with pytest.raises(ValueError, match="Unknown source"):
        ember.hub.load(str(tmp_path), "scaled", source="web")


def test_hub_github_from_cache_and_offline_error(hub_dir, monkeypatch):
    repo = hub_dir / "hub" / "owner_repo_v1"
    repo.mkdir(parents=True)
    (repo / "hubconf.py").write_text(HUBCONF)
    assert ember.hub.load("owner/repo:v1", "scaled", 4, trust_repo=True, verbose=False) == 8
    # a repository already downloaded counts as trusted: nothing is added to the list
    assert "owner_repo" not in (hub_dir / "hub" / "trusted_list").read_text()
    assert ember.hub.list("owner/repo:v1", verbose=False) == ["scaled"]
    assert ember.hub.help("owner/repo:v1", "scaled") == "Multiply."

    def offline(*args, **kwargs):
        raise ember.hub.URLError("no network")
    monkeypatch.setattr(ember.hub, "urlopen", offline)
    with pytest.raises(RuntimeError, match="no internet connection"):
        ember.hub.load("owner/other", "scaled", trust_repo=True)
    with pytest.raises(ember.hub.URLError, match="needs network access"):
        ember.hub.load("owner/other:v1", "scaled", trust_repo=True, skip_validation=True)
    assert "owner_other" in (hub_dir / "hub" / "trusted_list").read_text()


def test_hub_dir_from_env(monkeypatch):
    monkeypatch.setattr(ember.hub, "_hub_dir", None)
    monkeypatch.setenv("EMBER_HOME", "/tmp/some-home")
    assert ember.hub.get_dir() == os.path.join("/tmp/some-home", "hub")
    monkeypatch.delenv("EMBER_HOME")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert ember.hub.get_dir() == os.path.expanduser("~/.cache/ember/hub")


def test_load_state_dict_from_url(hub_dir, capsys):
    import hashlib
    src = hub_dir / "weights.pt"
    ember.save({"w": ember.arange(3.0)}, str(src))
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    named = hub_dir / f"weights-{digest[:8]}.pt"
    named.write_bytes(src.read_bytes())
    sd = ember.hub.load_state_dict_from_url(named.as_uri(), progress=False, check_hash=True)
    assert sd["w"].tolist() == [0.0, 1.0, 2.0]
    assert (hub_dir / "hub" / "checkpoints" / named.name).exists()
    bad = hub_dir / "weights-deadbeef.pt"
    bad.write_bytes(src.read_bytes())
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef"'):
        ember.hub.load_state_dict_from_url(bad.as_uri(), progress=False, check_hash=True)
    from ember.utils import model_zoo
    out = model_zoo.load_url(src.as_uri(), model_dir=str(hub_dir / "m"), file_name="x.pt",
                             progress=False)
    assert out["w"].tolist() == [0.0, 1.0, 2.0]
    assert pathlib.Path(hub_dir / "m" / "x.pt").exists()


def test_spawn_reports_the_child_traceback():
    # a standard-library fn: the spawned child need not import this test module
    with pytest.raises(mp.ProcessRaisedException, match="ZeroDivisionError") as info:
        mp.spawn(operator.truediv, args=(0,), nprocs=1)
    assert info.value.error_index == 0 and "Traceback (most recent call last)" in str(info.value)
