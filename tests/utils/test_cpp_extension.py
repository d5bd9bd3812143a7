"""ember.utils.cpp_extension: compile-and-run tests (C++ compiler required).

Every test uses a private cache directory ($EMBER_EXTENSIONS_DIR) and a $CXX wrapper script that
logs each compiler invocation, so tests can tell a cache hit from a rebuild. Compiled modules are
shared through module-scoped fixtures; small test modules build with -O0.
"""
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import ember
from ember.utils import cpp_extension
from ember.utils.cpp_extension import ExtensionBuildError, load, load_inline

REAL_CXX = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
pytestmark = pytest.mark.skipif(REAL_CXX is None,
                                reason="no C++ compiler found (looked for g++, c++, clang++)")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAST = ["-O0"]

WRAPPER = r"""#!/bin/sh
# logs every invocation; with EMBER_TEST_CXX_HANG set, plays a build that is killed halfway:
# writes a truncated output file, signals, and waits to be killed
echo "$*" >> "{log}"
if [ -n "$EMBER_TEST_CXX_HANG" ]; then
  out=""; prev=""
  for a in "$@"; do [ "$prev" = "-o" ] && out="$a"; prev="$a"; done
  printf 'not a library' > "$out"
  touch "$EMBER_TEST_CXX_HANG"
  sleep 60
fi
exec "{cxx}" "$@"
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A private cache dir and a logging $CXX for the whole module."""
    d = tmp_path_factory.mktemp("cppext")
    log = d / "cxx.log"
    log.write_text("")
    wrapper = d / "cxx-wrapper"
    wrapper.write_text(WRAPPER.format(log=log, cxx=REAL_CXX))
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMBER_EXTENSIONS_DIR", str(d / "cache"))
        mp.setenv("CXX", str(wrapper))
        mp.delenv("EMBER_TEST_CXX_HANG", raising=False)
        mp.delenv("EMBER_EXTENSIONS_LOCK_TIMEOUT", raising=False)
        yield type("Env", (), {"dir": d, "log": log, "cache": d / "cache",
                               "invocations": staticmethod(lambda: _invocations(log))})


def _invocations(log, name=None):
    lines = [ln for ln in log.read_text().splitlines() if ln.strip()]
    if name is not None:
        lines = [ln for ln in lines if f"-DEMBER_EXTENSION_NAME={name} " in ln]
    return lines


def _subprocess_env(extra=None):
    e = dict(os.environ)
    e["PYTHONPATH"] = REPO + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra or {})
    return e


# ---- the shared module -------------------------------------------------------------------------

MAIN_SRC = r"""
ember::Tensor scale_add(ember::Tensor x, ember::Tensor y, double a) {
  EMBER_CHECK(x.sizes() == y.sizes(), "scale_add: shapes differ: ", x.sizes(), " vs ", y.sizes());
  auto out = ember::empty_like(x);
  auto xc = x.contiguous(), yc = y.contiguous();
  EMBER_DISPATCH_FLOATING_TYPES(x.scalar_type(), "scale_add", [&] {
    const scalar_t* px = xc.data_ptr<scalar_t>();
    const scalar_t* py = yc.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); ++i) po[i] = a * px[i] + py[i];
  });
  return out;
}

void fill_iota(ember::Tensor x) {
  float* p = x.data_ptr<float>();
  for (int64_t i = 0; i < x.numel(); ++i) p[i] = static_cast<float>(i);
}

intptr_t address(ember::Tensor x) { return reinterpret_cast<intptr_t>(x.data_ptr()); }
ember::Tensor identity(ember::Tensor x) { return x; }

// sum of a 2-D float64 tensor read through its strides (no copy)
double strided_sum(ember::Tensor x) {
  auto a = x.accessor<double, 2>();
  double s = 0;
  for (int64_t i = 0; i < x.size(0); ++i)
    for (int64_t j = 0; j < x.size(1); ++j) s += a[i][j];
  return s;
}

std::vector<int64_t> meta(ember::Tensor x) {
  std::vector<int64_t> out{x.dim(), x.numel(), x.is_contiguous(), x.size(-1)};
  for (auto s : x.strides()) out.push_back(s);
  // PyTorch code builds vectors from two calls' iterators: they must bound one range
  std::vector<int64_t> sizes(x.sizes().begin(), x.sizes().end());
  out.insert(out.end(), sizes.begin(), sizes.end());
  return out;
}

ember::ScalarType dtype_of(ember::Tensor x) { return x.dtype(); }

// ops dispatched to ember: differentiable when called under grad mode
ember::Tensor composite(ember::Tensor a, ember::Tensor b) {
  auto h = ember::sigmoid(ember::mm(a, b.t()) + 1.0) * 2 - ember::tanh(a).sum() / 4;
  return ember::cat({h, ember::exp(h) - h}, 1).transpose(0, 1) * h.sum();
}

std::vector<ember::Tensor> factories() {
  return {ember::zeros({2, 3}), ember::ones({2}, ember::kFloat64), ember::empty({4}, ember::kInt64),
          ember::zeros_like(ember::ones({3}, ember::kInt32)), ember::full({2}, 7, ember::kInt64)};
}

void check_positive(double v) { EMBER_CHECK(v > 0, "value must be positive, got ", v); }
void bare_check(bool ok) { EMBER_CHECK(ok); }
void throw_std() { throw std::runtime_error("plain std::runtime_error from C++"); }
"""
MAIN_FUNCS = {"scale_add": "a * x + y", "fill_iota": "fill_iota", "address": "address",
              "identity": "identity", "strided_sum": "strided_sum", "meta": "meta",
              "dtype_of": "dtype_of", "composite": "composite", "factories": "factories",
              "check_positive": "check_positive", "bare_check": "bare_check",
              "throw_std": "throw_std"}


@pytest.fixture(scope="module")
def mod(env):
    return load_inline("ember_test_main", MAIN_SRC, functions=MAIN_FUNCS, extra_cflags=FAST)


@pytest.mark.parametrize("dtype", [ember.float32, ember.float64])
def test_round_trip(mod, dtype):
    x = ember.randn(3, 4, dtype=dtype)
    y = ember.randn(3, 4, dtype=dtype)
    out = mod.scale_add(x, y, 2.5)
    assert isinstance(out, ember.Tensor) and out.dtype is dtype and out.shape == (3, 4)
    np.testing.assert_allclose(out.numpy(), 2.5 * x.numpy() + y.numpy(),
                               rtol=1e-6 if dtype is ember.float32 else 1e-14)
    assert mod.scale_add.__doc__.strip().endswith("a * x + y")


def test_zero_copy(mod):
    x = ember.zeros(2, 3)
    assert mod.fill_iota(x) is None
    np.testing.assert_array_equal(x.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert mod.address(x) == x.data_ptr()
    assert mod.identity(x) is x
    v = x[1]  # a view: C++ writes land in the base
    mod.fill_iota(v)
    np.testing.assert_array_equal(x.numpy()[1], [0, 1, 2])


def test_non_contiguous(mod):
    base = ember.arange(12, dtype=ember.float64).reshape(3, 4)
    t = base.t()
    assert not t.is_contiguous()
    # dim, numel, contiguous, size(-1), strides, sizes
    assert mod.meta(t) == [2, 12, 0, 3, 1, 4, 4, 3]
    assert mod.strided_sum(t) == 66.0
    assert mod.strided_sum(base[:, ::2]) == float(base.numpy()[:, ::2].sum())
    out = mod.scale_add(t, ember.ones(4, 3, dtype=ember.float64), 1.0)
    np.testing.assert_array_equal(out.numpy(), base.numpy().T + 1)


def test_dtype_mismatch_raises_type_error(mod):
    with pytest.raises(TypeError, match=r"data_ptr<float32>\(\) called on a tensor of dtype "
                                        r"ember.float64"):
        mod.fill_iota(ember.zeros(3, dtype=ember.float64))
    with pytest.raises(TypeError, match="scale_add not implemented for ember.int64"):
        mod.scale_add(ember.ones(2, dtype=ember.int64), ember.ones(2, dtype=ember.int64), 1.0)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        mod.scale_add(np.ones(2), ember.ones(2), 1.0)
    x = ember.zeros(2)  # the module still works afterwards
    mod.fill_iota(x)
    assert x.tolist() == [0.0, 1.0]


def test_cpp_errors_become_python_exceptions(mod):
    with pytest.raises(RuntimeError, match=r"^value must be positive, got -2$"):
        mod.check_positive(-2.0)
    with pytest.raises(RuntimeError, match=r"Expected ok to be true, but got false"):
        mod.bare_check(False)
    with pytest.raises(RuntimeError, match="plain std::runtime_error from C"):
        mod.throw_std()
    with pytest.raises(RuntimeError, match=r"shapes differ: \[2\] vs \[3\]"):
        mod.scale_add(ember.ones(2), ember.ones(3), 1.0)
    mod.check_positive(1.0)


def test_metadata_and_factories(mod):
    a, b, c, d, e = mod.factories()
    assert (a.shape, a.dtype, a.sum().item()) == ((2, 3), ember.float32, 0.0)
    assert (b.shape, b.dtype, b.tolist()) == ((2,), ember.float64, [1.0, 1.0])
    assert (c.shape, c.dtype) == ((4,), ember.int64)
    assert (d.dtype, d.tolist()) == (ember.int32, [0, 0, 0])
    assert (e.dtype, e.tolist()) == (ember.int64, [7, 7])
    assert mod.dtype_of(ember.ones(1, dtype=ember.int16)) is ember.int16
    assert mod.meta(ember.ones(2, 3, 5)) == [3, 30, 1, 5, 15, 5, 1, 2, 3, 5]


def test_ops_call_back_into_ember_with_autograd(mod):
    a0 = np.random.default_rng(0).standard_normal((3, 4))
    b0 = np.random.default_rng(1).standard_normal((2, 4))
    a = ember.tensor(a0, requires_grad=True)
    b = ember.tensor(b0, requires_grad=True)
    out = mod.composite(a, b)
    # the same computation in ember
    a2 = ember.tensor(a0, requires_grad=True)
    b2 = ember.tensor(b0, requires_grad=True)
    h = ember.sigmoid(ember.mm(a2, b2.t()) + 1.0) * 2 - ember.tanh(a2).sum() / 4
    ref = ember.cat([h, ember.exp(h) - h], 1).transpose(0, 1) * h.sum()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-12)
    assert out.requires_grad and out.grad_fn is not None
    out.sum().backward()
    ref.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), a2.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), b2.grad.numpy(), rtol=1e-12)
    # and the values themselves, from NumPy
    hn = 2 / (1 + np.exp(-(a0 @ b0.T + 1))) - np.tanh(a0).sum() / 4
    expected = np.concatenate([hn, np.exp(hn) - hn], 1).T * hn.sum()
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12)


# ---- the cache ---------------------------------------------------------------------------------

def test_cache_hit_in_new_process_does_not_compile(mod, env):
    before = env.invocations()
    src_file = env.dir / "main_src.txt"
    src_file.write_text(MAIN_SRC)
    script = textwrap.dedent(f"""
        import json, time
        import ember
        from ember.utils.cpp_extension import load_inline
        src = open({str(src_file)!r}).read()
        t0 = time.perf_counter()
        m = load_inline("ember_test_main", src, functions={MAIN_FUNCS!r}, extra_cflags={FAST!r})
        dt = time.perf_counter() - t0
        out = m.scale_add(ember.ones(2), ember.ones(2), 3.0)
        print(json.dumps([dt, out.tolist()]))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       env=_subprocess_env(), timeout=120)
    assert r.returncode == 0, r.stderr
    import json
    dt, out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out == [4.0, 4.0]
    assert env.invocations() == before, "the compiler ran on a cache hit"
    assert dt < 0.5, f"cache hit took {dt:.3f} s"


HELPER_V1 = "inline int helper() { return 1; }\n"
SOURCE_V1 = r"""
#include <pybind11/pybind11.h>
#include "sub/helper.h"
int value() { return helper() * 10 + %d; }
PYBIND11_MODULE(EMBER_EXTENSION_NAME, m) { m.def("value", &value); }
"""


def test_rebuild_after_source_or_header_change(env, tmp_path):
    (tmp_path / "sub").mkdir()
    header = tmp_path / "sub" / "helper.h"
    src = tmp_path / "ext.cpp"
    header.write_text(HELPER_V1)
    src.write_text(SOURCE_V1 % 1)
    name = "ember_test_rebuild"
    m = load(name, [str(src)], extra_cflags=FAST)
    assert m.value() == 11 and len(_invocations(env.log, name)) == 1
    assert load(name, [str(src)], extra_cflags=FAST).value() == 11  # cached
    assert len(_invocations(env.log, name)) == 1

    header.write_text("inline int helper() { return 2; }\n")  # only the included header changes
    assert load(name, [str(src)], extra_cflags=FAST).value() == 21
    assert len(_invocations(env.log, name)) == 2

    src.write_text(SOURCE_V1 % 5)  # the source changes
    assert load(name, [str(src)], extra_cflags=FAST).value() == 25
    assert len(_invocations(env.log, name)) == 3

    assert load(name, [str(src)], extra_cflags=FAST).value() == 25  # and that one is cached
    assert len(_invocations(env.log, name)) == 3


BAD_IMPL = "".join(f"int f{i}() {{ return undefined_name_{i}; }}\n" for i in range(12))
GOOD_IMPL = r"""
#include <ember/extension.h>
int answer() { return 42; }
PYBIND11_MODULE(EMBER_EXTENSION_NAME, m) { m.def("answer", &answer); }
"""


def test_compile_error_message_then_rebuild_after_failed_build(env, tmp_path):
    src = tmp_path / "broken.cpp"
    impl = tmp_path / "impl.h"
    src.write_text('#include "impl.h"\n')
    impl.write_text(BAD_IMPL)
    name = "ember_test_broken"
    with pytest.raises(ExtensionBuildError) as info:
        load(name, [str(src)])
    msg = str(info.value)
    lines = msg.splitlines()
    assert lines[0] == f"Error building extension '{name}': the compiler failed (exit status 1)."
    assert lines[1] == "Command:" and "-DEMBER_EXTENSION_NAME=ember_test_broken" in lines[2]
    assert str(src) in lines[2]
    assert "first 3 of 12 errors" in msg and "build.log" in msg
    errors = [ln for ln in lines if ": error: " in ln]
    assert len(errors) == 3
    assert errors[0].startswith(f"{impl}:1:")
    assert "undefined_name_0" in errors[0] and "was not declared" in errors[0]
    assert "undefined_name_5" not in msg  # trimmed
    assert len(lines) < 30
    assert "\\n" not in msg  # real line breaks, not an escaped blob
    assert info.value.returncode == 1 and "undefined_name_11" in info.value.output
    assert os.path.isfile(info.value.log_path)
    assert not list(env.cache.glob(f"{name}/*/*.so"))  # nothing that looks like a library

    # the same failing build again: not mistaken for valid, the compiler runs again
    n = len(_invocations(env.log, name))
    with pytest.raises(ExtensionBuildError):
        load(name, [str(src)])
    assert len(_invocations(env.log, name)) == n + 1

    impl.write_text(GOOD_IMPL)  # fixed: builds and loads
    assert load(name, [str(src)], extra_cflags=FAST).answer() == 42
    assert not list(env.cache.glob(f"{name}/.build-*"))  # temporary dirs cleaned up


def test_verbose_streams_command_and_output(env, tmp_path, capfd):
    src = tmp_path / "noisy.cpp"
    src.write_text("#warning this is a compiler warning\nint x;\n#error stop here\n")
    with pytest.raises(ExtensionBuildError):
        load("ember_test_verbose", [str(src)], verbose=True)
    out = capfd.readouterr().out
    assert "-DEMBER_EXTENSION_NAME=ember_test_verbose" in out
    assert "this is a compiler warning" in out and "stop here" in out


def test_no_compiler_is_a_clear_error(env, monkeypatch):
    monkeypatch.setenv("CXX", "/nonexistent/c++")
    with pytest.raises(ExtensionBuildError, match="no C\\+\\+ compiler found.*nonexistent"):
        load_inline("ember_test_nocxx", "int f() { return 1; }", functions="f")


def test_bad_functions_argument(env):
    with pytest.raises(ValueError, match="not a C\\+\\+ function name"):
        load_inline("ember_test_badfn", "int f() { return 1; }", functions=["f()"])
    with pytest.raises(ValueError, match="Python identifier"):
        load_inline("bad-name", "int f() { return 1; }", functions="f")


CONCURRENT = r"""
import sys
import ember
from ember.utils.cpp_extension import load_inline
m = load_inline("ember_test_concurrent", '''
ember::Tensor plus_one(ember::Tensor x) { return x + 1; }
''', functions="plus_one", extra_cflags=["-O0"])
print("RESULT", m.plus_one(ember.zeros(2)).tolist())
"""


def test_three_processes_build_the_same_new_extension(env):
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_subprocess_env())
             for _ in range(3)]
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "RESULT [1.0, 1.0]" in out
    assert len(_invocations(env.log, "ember_test_concurrent")) == 1  # built once, loaded thrice
    assert not list(env.cache.glob("ember_test_concurrent/.build-*"))


KILLED = r"""
import ember
from ember.utils.cpp_extension import load_inline
m = load_inline("ember_test_killed", "int twice(int v) { return 2 * v; }", functions="twice",
                extra_cflags=["-O0"])
print(m.twice(21))
"""


def test_killed_build_then_load_and_lock_timeout(env, tmp_path, monkeypatch):
    marker = tmp_path / "compiling"
    proc = subprocess.Popen([sys.executable, "-c", KILLED], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True,
                            env=_subprocess_env({"EMBER_TEST_CXX_HANG": str(marker)}))
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the build never started"
            time.sleep(0.05)
        # the build holds the lock: a second load waits, then names the lock file
        monkeypatch.setenv("EMBER_EXTENSIONS_LOCK_TIMEOUT", "0.5")
        with pytest.raises(TimeoutError, match=r"waiting for the build lock .*ember_test_killed"
                                               r"/[0-9a-f]+\.lock \(held by process \d+\)"):
            load_inline("ember_test_killed", "int twice(int v) { return 2 * v; }",
                        functions="twice", extra_cflags=FAST)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the build and its compiler, mid-compile
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    leftovers = list(env.cache.glob("ember_test_killed/.build-*/*.o"))
    assert leftovers and leftovers[0].read_bytes() == b"not a library"  # the half-written object
    monkeypatch.delenv("EMBER_EXTENSIONS_LOCK_TIMEOUT")
    n = len(_invocations(env.log, "ember_test_killed"))
    m = load_inline("ember_test_killed", "int twice(int v) { return 2 * v; }", functions="twice",
                    extra_cflags=FAST)
    assert m.twice(21) == 42
    assert len(_invocations(env.log, "ember_test_killed")) == n + 1  # rebuilt, not trusted
    assert not list(env.cache.glob("ember_test_killed/.build-*"))  # the leftover is gone


# ---- the examples ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lltm(env):
    path = os.path.join(REPO, "examples", "extensions", "lltm")
    sys.path.insert(0, path)
    try:
        import lltm as module
        module._ext = None
        module.extension()
        yield module
    finally:
        sys.path.remove(path)
        sys.modules.pop("lltm", None)


def test_lltm_gradcheck(lltm):
    g = ember.Generator().manual_seed(0)
    B, IN, S = 3, 4, 5
    x = ember.randn(B, IN, dtype=ember.float64, generator=g, requires_grad=True)
    w = (ember.randn(3 * S, IN + S, dtype=ember.float64, generator=g) * 0.5).requires_grad_()
    b = ember.randn(3 * S, dtype=ember.float64, generator=g, requires_grad=True)
    h = ember.randn(B, S, dtype=ember.float64, generator=g, requires_grad=True)
    c = ember.randn(B, S, dtype=ember.float64, generator=g, requires_grad=True)
    assert ember.autograd.gradcheck(lltm.LLTMFunction.apply, (x, w, b, h, c))


def test_lltm_module_matches_pure_ember(lltm):
    ember.manual_seed(1)
    cell = lltm.LLTM(4, 6)
    ref = lltm.LLTMPython(4, 6)
    ref.load_state_dict(cell.state_dict())
    assert repr(cell) == "LLTM(4, 6)"
    x, h, c = ember.randn(2, 4), ember.randn(2, 6), ember.randn(2, 6)
    out, want = cell(x, (h, c)), ref(x, (h, c))
    for o, r in zip(out, want):
        np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=1e-5, atol=1e-6)
    (out[0].sum() + out[1].pow(2).sum()).backward()
    (want[0].sum() + want[1].pow(2).sum()).backward()
    for p, q in zip(cell.parameters(), ref.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="all tensors must have dtype ember.float32, got "
                                           "ember.float64"):
        cell(x, (h.double(), c))


# PyTorch's "Custom C++ extensions" tutorial source (lltm.cpp), unchanged.
TUTORIAL_LLTM = r"""
#include <torch/extension.h>

#include <iostream>

torch::Tensor d_sigmoid(torch::Tensor z) {
  auto s = torch::sigmoid(z);
  return (1 - s) * s;
}

std::vector<torch::Tensor> lltm_forward(
    torch::Tensor input,
    torch::Tensor weights,
    torch::Tensor bias,
    torch::Tensor old_h,
    torch::Tensor old_cell) {
  auto X = torch::cat({old_h, input}, /*dim=*/1);

  auto gate_weights = torch::addmm(bias, X, weights.transpose(0, 1));
  auto gates = gate_weights.chunk(3, /*dim=*/1);

  auto input_gate = torch::sigmoid(gates[0]);
  auto output_gate = torch::sigmoid(gates[1]);
  auto candidate_cell = torch::elu(gates[2], /*alpha=*/1.0);

  auto new_cell = old_cell + candidate_cell * input_gate;
  auto new_h = torch::tanh(new_cell) * output_gate;

  return {new_h,
          new_cell,
          input_gate,
          output_gate,
          candidate_cell,
          X,
          gate_weights};
}

// tanh'(z) = 1 - tanh^2(z)
torch::Tensor d_tanh(torch::Tensor z) {
  return 1 - z.tanh().pow(2);
}

// elu'(z) = relu'(z) + { alpha * exp(z) if (alpha * (exp(z) - 1)) < 0, else 0}
torch::Tensor d_elu(torch::Tensor z, torch::Scalar alpha = 1.0) {
  auto e = z.exp();
  auto mask = (alpha * (e - 1)) < 0;
  return (z > 0).type_as(z) + mask.type_as(z) * (alpha * e);
}

std::vector<torch::Tensor> lltm_backward(
    torch::Tensor grad_h,
    torch::Tensor grad_cell,
    torch::Tensor new_cell,
    torch::Tensor input_gate,
    torch::Tensor output_gate,
    torch::Tensor candidate_cell,
    torch::Tensor X,
    torch::Tensor gate_weights,
    torch::Tensor weights) {
  auto d_output_gate = torch::tanh(new_cell) * grad_h;
  auto d_tanh_new_cell = output_gate * grad_h;
  auto d_new_cell = d_tanh(new_cell) * d_tanh_new_cell + grad_cell;

  auto d_old_cell = d_new_cell;
  auto d_candidate_cell = input_gate * d_new_cell;
  auto d_input_gate = candidate_cell * d_new_cell;

  auto gates = gate_weights.chunk(3, /*dim=*/1);
  d_input_gate *= d_sigmoid(gates[0]);
  d_output_gate *= d_sigmoid(gates[1]);
  d_candidate_cell *= d_elu(gates[2]);

  auto d_gates =
      torch::cat({d_input_gate, d_output_gate, d_candidate_cell}, /*dim=*/1);

  auto d_weights = d_gates.t().mm(X);
  auto d_bias = d_gates.sum(/*dim=*/0, /*keepdim=*/true);

  auto d_X = d_gates.mm(weights);
  const auto state_size = grad_h.size(1);
  auto d_old_h = d_X.slice(/*dim=*/1, 0, state_size);
  auto d_input = d_X.slice(/*dim=*/1, state_size);

  return {d_old_h, d_input, d_weights, d_bias, d_old_cell};
}

void check_same_size(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.sizes() == b.sizes(), "sizes differ: ", a.sizes(), " and ", b.sizes());
  at::Tensor c = torch::zeros({1}, torch::kFloat64);
  (void)c;
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("forward", &lltm_forward, "LLTM forward");
  m.def("backward", &lltm_backward, "LLTM backward");
  m.def("d_sigmoid", &d_sigmoid, "sigmoid'");
  m.def("check_same_size", &check_same_size);
}
"""


def test_torch_compat_header_compiles_the_tutorial_unchanged(env, lltm, tmp_path):
    src = tmp_path / "lltm_tutorial.cpp"
    src.write_text(TUTORIAL_LLTM)
    m = load("ember_test_torch_lltm", [str(src)], extra_cflags=FAST)
    z = ember.tensor([-1.0, 0.0, 2.0], dtype=ember.float64)
    s = 1 / (1 + np.exp(-z.numpy()))
    np.testing.assert_allclose(m.d_sigmoid(z).numpy(), (1 - s) * s, rtol=1e-14)
    with pytest.raises(RuntimeError, match=r"sizes differ: \[2\] and \[3\]"):
        m.check_same_size(ember.ones(2), ember.ones(3))

    g = ember.Generator().manual_seed(2)
    B, IN, S = 3, 4, 5
    x, h, c = (ember.randn(B, n, dtype=ember.float64, generator=g) for n in (IN, S, S))
    w = ember.randn(3 * S, IN + S, dtype=ember.float64, generator=g) * 0.5
    b = ember.randn(3 * S, dtype=ember.float64, generator=g)
    new_h, new_cell, *saved = m.forward(x, w, b, h, c)
    ref_h, ref_cell, *ref_saved = lltm.extension().forward(x, w, b, h, c)
    np.testing.assert_allclose(new_h.numpy(), ref_h.numpy(), rtol=1e-12)
    np.testing.assert_allclose(new_cell.numpy(), ref_cell.numpy(), rtol=1e-12)
    gh = ember.randn(B, S, dtype=ember.float64, generator=g)
    gc = ember.randn(B, S, dtype=ember.float64, generator=g)
    d_old_h, d_input, d_weights, d_bias, d_old_cell = m.backward(gh, gc, new_cell, *saved, w)
    ref = lltm.extension().backward(gh, gc, ref_cell, *ref_saved, w)
    for got, want in zip((d_old_h, d_input, d_weights, d_bias.reshape(-1), d_old_cell), ref):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_setuptools_build_ext(env, tmp_path):
    pkg = tmp_path / "aot_package"
    shutil.copytree(os.path.join(REPO, "examples", "extensions", "aot_package"), pkg,
                    ignore=shutil.ignore_patterns("build", "*.so", "*.egg-info"))
    e = _subprocess_env({"CFLAGS": "-O0 -g0"})  # after Python's own -O3 -g: a faster build
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=pkg,
                       capture_output=True, text=True, env=e, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert list((pkg / "ember_aot_example").glob("_C*.so"))
    check = textwrap.dedent("""
        import ember, ember_aot_example as m
        print(m.axpby(2.0, ember.ones(3), 3.0, ember.arange(3.0)).tolist())
        print(m.axpby(a=1.0, x=ember.ones(2, dtype=ember.float64), b=-1.0,
                      y=ember.ones(2, dtype=ember.float64)).dtype)
        try:
            m.axpby(1.0, ember.ones(2), 1.0, ember.ones(3))
        except RuntimeError as err:
            print(err)
    """)
    r = subprocess.run([sys.executable, "-c", check], cwd=pkg, capture_output=True, text=True,
                       env=e, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "[2.0, 5.0, 8.0]", "ember.float64",
        "axpby: x and y must have the same shape, got [2] and [3]"]


def test_cpp_extension_helpers():
    paths = cpp_extension.include_paths()
    assert any(os.path.isfile(os.path.join(p, "ember", "extension.h")) for p in paths)
    assert any(os.path.isfile(os.path.join(p, "torch", "extension.h")) for p in paths)
    assert any(os.path.isfile(os.path.join(p, "pybind11", "pybind11.h")) for p in paths)
    ext = cpp_extension.CppExtension("pkg._ext", ["a.cpp"])
    assert ext.language == "c++" and set(paths) <= set(ext.include_dirs)
    assert cpp_extension.library_paths() == []


def test_cuda_paths_come_from_the_toolkit(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))  # no toolkit there
    with pytest.raises(OSError, match="CUDA_HOME environment variable is not set"):
        cpp_extension.include_paths(cuda=True)
    (tmp_path / "bin").mkdir()
    (tmp_path / "lib64").mkdir()
    (tmp_path / "bin" / "nvcc").write_text("#!/bin/sh\n")
    (tmp_path / "bin" / "nvcc").chmod(0o755)
    assert cpp_extension.include_paths(cuda=True)[-1] == str(tmp_path / "include")
    assert cpp_extension.library_paths(cuda=True) == [str(tmp_path / "lib64")]


def test_extension_named_like_a_standard_module_does_not_replace_it(env):
    import textwrap
    m = load_inline("textwrap", "int answer() { return 42; }", functions="answer",
                    extra_cflags=FAST)
    assert m.answer() == 42
    assert sys.modules["textwrap"] is textwrap
    assert textwrap.dedent("  x") == "x"


FP_MODE = r"""
import numpy as np
from ember.utils.cpp_extension import load_inline

def flushes():  # flush-to-zero / denormals-are-zero: the smallest denormal times 1 gives 0
    return float(np.array([1e-45], np.float32)[0] * np.float32(1.0)) == 0.0

before = flushes()
m = load_inline("ember_test_fast_math", "int seven() { return 7; }", functions="seven",
                extra_cflags=["-O2", "-ffast-math"])
print(before, flushes(), m.seven())
"""


def test_fast_math_extension_leaves_the_process_floating_point_mode(env):
    """-ffast-math compiles the extension only: linked with it, GCC (before 13) would add
    crtfastmath.o, which turns on flush-to-zero for the whole process at load (NumPy's and
    ember's denormals would then read 0). PyTorch's builds keep it out of the link too."""
    r = subprocess.run([sys.executable, "-c", FP_MODE], capture_output=True, text=True,
                       env=_subprocess_env(), timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False", "7"]
