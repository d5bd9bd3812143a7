"""TORCH_LIBRARY in C++: operators registered by a shared library as it loads.

The library under test is built once per session (module-scoped fixture) from two sources:
the kernels with their TORCH_LIBRARY_IMPL block come first on the link line, so their static
initializer runs before the TORCH_LIBRARY block of the second source, as can happen with any
two translation units. Expected values come from NumPy; gradients from the closed forms and
float64 finite differences.
"""
import os
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import ember
from ember.utils.cpp_extension import load, load_inline
from tests.helpers import check_grad

pytestmark = pytest.mark.skipif(
    not any(shutil.which(c) for c in ("g++", "c++", "clang++")),
    reason="no C++ compiler found (looked for g++, c++, clang++)")

FAST = ["-O0"]
NS = "ember_cpp_ops"

KERNELS = r"""
#include <ATen/Operators.h>
#include <torch/all.h>
#include <torch/library.h>

namespace cppops {

// float32 only, contiguous copies, written through raw pointers
at::Tensor muladd_cpu(const at::Tensor& a, const at::Tensor& b, double c) {
  TORCH_CHECK(a.sizes() == b.sizes());
  TORCH_CHECK(a.dtype() == at::kFloat);
  TORCH_CHECK(b.dtype() == at::kFloat);
  TORCH_INTERNAL_ASSERT(a.device().type() == at::DeviceType::CPU);
  at::Tensor ac = a.contiguous(), bc = b.contiguous();
  at::Tensor out = torch::empty(ac.sizes(), ac.options());
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); i++) po[i] = pa[i] * pb[i] + c;
  return out;
}

at::Tensor mul_cpu(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.sizes() == b.sizes(), "mul: sizes ", a.sizes(), " and ", b.sizes(), " differ");
  TORCH_CHECK(a.dtype() == at::kFloat && b.dtype() == at::kFloat);
  at::Tensor ac = a.contiguous(), bc = b.contiguous();
  at::Tensor out = at::empty_like(ac);
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); i++) po[i] = pa[i] * pb[i];
  return out;
}

// mutates out, declared Tensor(a!) in the schema
void add_out_cpu(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  TORCH_CHECK(out.is_contiguous());
  TORCH_CHECK(a.sizes() == out.sizes() && b.sizes() == out.sizes());
  at::Tensor ac = a.contiguous(), bc = b.contiguous();
  const float* pa = ac.data_ptr<float>();
  const float* pb = bc.data_ptr<float>();
  float* po = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); i++) po[i] = pa[i] + pb[i];
}

// int and bool arguments, float32 and float64
at::Tensor shift_cpu(const at::Tensor& x, int64_t k, bool negate) {
  at::Tensor xc = x.contiguous();
  at::Tensor out = at::empty_like(xc);
  AT_DISPATCH_FLOATING_TYPES(xc.scalar_type(), "shift", [&] {
    const scalar_t* px = xc.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < out.numel(); i++) po[i] = (negate ? -px[i] : px[i]) + k;
  });
  return out;
}

// an optional tensor: None arrives as an empty optional
at::Tensor scale_add_cpu(const at::Tensor& x, const c10::optional<at::Tensor>& y, double s) {
  return y.has_value() ? x * s + *y : x * s;
}

void check_value(int64_t which, int64_t v) {
  if (which == 0) TORCH_CHECK_VALUE(v > 0, "v must be positive, got ", v);
  if (which == 1) TORCH_CHECK_TYPE(v > 0);
  if (which == 2) TORCH_CHECK_NOT_IMPLEMENTED(v > 0, "negative v");
  if (which == 3) TORCH_INTERNAL_ASSERT(v > 0, "v = ", v);
}

TORCH_LIBRARY_IMPL(ember_cpp_ops, CPU, m) {
  m.impl("muladd", &muladd_cpu);
  m.impl("mul", &mul_cpu);
  m.impl("add_out", &add_out_cpu);
  m.impl("shift", TORCH_FN(shift_cpu));
  m.impl("ember_cpp_ops::check_value", &check_value);  // qualified: the same operator
  m.impl("scale_add", &scale_add_cpu);
}

}  // namespace cppops
"""

DEFS = r"""
#include <ember/library.h>

EMBER_LIBRARY(ember_cpp_ops, m) {
  m.def("muladd(Tensor a, Tensor b, float c) -> Tensor");
  m.def("mul(Tensor a, Tensor b) -> Tensor");
  m.def("add_out(Tensor a, Tensor b, Tensor(a!) out) -> ()");
  m.def("shift(Tensor x, int k=1, *, bool negate=False) -> Tensor");
  m.def("check_value(int which, int v) -> ()");
  m.def("scale_add(Tensor x, Tensor? y=None, float s=1.) -> Tensor");
  // a kernel made of ember ops, for every device: differentiable as it is
  m.def("twice_sum(Tensor x, Tensor y) -> Tensor",
        [](const ember::Tensor& x, const ember::Tensor& y) { return (x * 2 + y).sum(); });
  // an overload, with its kernel
  m.def(" twice_sum.scaled (Tensor x, Tensor y, float s) -> Tensor",
        [](const ember::Tensor& x, const ember::Tensor& y, double s) {
          return (x * 2 + y).sum() * s;
        });
}
"""


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("cpplib")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMBER_EXTENSIONS_DIR", str(d / "cache"))
        yield d


@pytest.fixture(scope="module")
def ops(cache_dir):
    """ember.ops.ember_cpp_ops, loaded from the library built from KERNELS and DEFS."""
    kernels, defs = cache_dir / "kernels.cpp", cache_dir / "defs.cpp"
    kernels.write_text(KERNELS)
    defs.write_text(DEFS)
    path = load(NS, [str(kernels), str(defs)], extra_cflags=FAST, is_python_module=False)
    ops = getattr(ember.ops, NS)
    ops.library_path, ops.sources = path, [str(kernels), str(defs)]

    def mul_backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (ops.mul(grad, b) if ctx.needs_input_grad[0] else None,
                ops.mul(grad, a) if ctx.needs_input_grad[1] else None, None)

    def mul_setup(ctx, inputs, output):
        a, b, _ = inputs
        ctx.save_for_backward(a, b)

    ember.library.register_autograd(f"{NS}::muladd", mul_backward, setup_context=mul_setup)

    @ember.library.register_fake(f"{NS}::muladd")
    def _(a, b, c):
        return ember.empty_like(a)

    def shift_backward(ctx, grad):
        return -grad if ctx.negate else grad, None

    def shift_setup(ctx, inputs, keyword_only_inputs, output):
        ctx.negate = keyword_only_inputs["negate"]

    ember.library.register_autograd(f"{NS}::shift", shift_backward, setup_context=shift_setup)
    return ops


def _rand(*shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_load_returns_the_loaded_library_path(ops):
    path = ops.library_path
    assert isinstance(path, str) and os.path.isabs(path)
    assert os.path.basename(path) == NS + ".so" and os.path.isfile(path)
    assert os.path.realpath(path) in ember.ops.loaded_libraries
    # loading again (cached; the library is already in the process) registers nothing twice
    assert load(NS, ops.sources, extra_cflags=FAST, is_python_module=False) == path
    ember.ops.load_library(path)
    x = ember.ones(2)
    np.testing.assert_array_equal(ops.shift(x).numpy(), [2.0, 2.0])


def test_kernels_compute_what_the_cpp_says(ops):
    a, b = _rand(3, 4, seed=1), _rand(3, 4, seed=2)
    got = ops.muladd(ember.tensor(a), ember.tensor(b), 0.5)
    assert got.dtype == ember.float32
    np.testing.assert_allclose(got.numpy(), a * b + np.float32(0.5), rtol=1e-6)
    got = ops.muladd.default(ember.tensor(a), ember.tensor(b), 2)  # an int for a float
    np.testing.assert_allclose(got.numpy(), a * b + 2, rtol=1e-6)
    np.testing.assert_allclose(ops.mul(ember.tensor(a), ember.tensor(b)).numpy(), a * b)
    x = _rand(5, dtype=np.float64, seed=3)
    np.testing.assert_array_equal(ops.shift(ember.tensor(x), 3, negate=True).numpy(), -x + 3)
    np.testing.assert_array_equal(ops.shift(ember.tensor(x), -1, negate=False).numpy(), x - 1)
    # the C++ function gets every argument: the defaults filled in
    np.testing.assert_array_equal(ops.shift(ember.tensor(x)).numpy(), x + 1)
    np.testing.assert_array_equal(ops.shift(ember.tensor(x), negate=True).numpy(), -x + 1)
    np.testing.assert_array_equal(ops.shift.default(x=ember.tensor(x), k=2).numpy(), x + 2)
    y = _rand(5, dtype=np.float64, seed=16)
    np.testing.assert_array_equal(ops.scale_add(ember.tensor(x)).numpy(), x)
    np.testing.assert_array_equal(ops.scale_add(ember.tensor(x), s=3.0).numpy(), x * 3)
    np.testing.assert_array_equal(ops.scale_add(ember.tensor(x), ember.tensor(y), 2.0).numpy(),
                                  x * 2 + y)


def test_non_contiguous_inputs_are_copied_by_the_kernel(ops):
    a, b = _rand(4, 3, seed=4), _rand(3, 4, seed=5)
    at, bt = ember.tensor(a).t(), ember.tensor(b)
    assert not at.is_contiguous()
    np.testing.assert_allclose(ops.muladd(at, bt, 1.0).numpy(), a.T * b + 1, rtol=1e-6)


def test_mutating_op_writes_its_out_argument(ops):
    a, b = _rand(2, 3, seed=6), _rand(2, 3, seed=7)
    out = ember.zeros(2, 3)
    assert ops.add_out(ember.tensor(a), ember.tensor(b), out) is None
    np.testing.assert_allclose(out.numpy(), a + b, rtol=1e-6)
    with pytest.raises(RuntimeError, match=r"^Expected out.is_contiguous\(\) to be true"):
        ops.add_out(ember.tensor(a), ember.tensor(b), ember.zeros(3, 2).t())


def test_checks_raise_pytorchs_exceptions(ops):
    a = ember.ones(2, 3)
    with pytest.raises(RuntimeError, match=r"^Expected a.dtype\(\) == at::kFloat to be true, "
                                           r"but got false\.  \(Could this error message be "
                                           r"improved\?  If so, please report an enhancement "
                                           r"request to PyTorch\.\)$"):
        ops.muladd(a.double(), a, 1.0)
    with pytest.raises(RuntimeError, match=r"^mul: sizes \[2, 3\] and \[3\] differ$"):
        ops.mul(a, ember.ones(3))
    with pytest.raises(ValueError, match=r"^v must be positive, got -1$"):
        ops.check_value(0, -1)
    with pytest.raises(TypeError, match=r"^Expected v > 0 to be true, but got false\."):
        ops.check_value(1, -1)
    with pytest.raises(NotImplementedError, match=r"^negative v$"):
        ops.check_value(2, -1)
    with pytest.raises(RuntimeError, match=r'^v > 0 INTERNAL ASSERT FAILED at ".*kernels\.cpp":'
                                           r'\d+, please report a bug to PyTorch\. v = -1$'):
        ops.check_value(3, -1)
    assert ops.check_value(3, 1) is None


def test_autograd_registered_in_python(ops):
    a, b = _rand(2, 3, seed=8), _rand(2, 3, seed=9)
    at = ember.tensor(a, requires_grad=True)
    bt = ember.tensor(b, requires_grad=True)
    out = ops.muladd(at, bt, 1.5)
    g = _rand(2, 3, seed=10)
    out.backward(ember.tensor(g))
    np.testing.assert_allclose(at.grad.numpy(), g * b, rtol=1e-6)
    np.testing.assert_allclose(bt.grad.numpy(), g * a, rtol=1e-6)
    # only the input that needs it gets a gradient
    at2 = ember.tensor(a, requires_grad=True)
    ops.muladd(at2, ember.tensor(b), 0.0).sum().backward()
    np.testing.assert_allclose(at2.grad.numpy(), b, rtol=1e-6)
    # float64 finite differences through the C++ kernel
    check_grad(lambda x: ops.shift(x, 2, negate=True), _rand(3, 2, dtype=np.float64, seed=11))
    check_grad(lambda x: ops.shift(x, 0), _rand(4, dtype=np.float64, seed=12))


def test_cpp_composite_kernel_is_differentiable_without_registration(ops):
    x, y = _rand(3, dtype=np.float64, seed=13), _rand(3, dtype=np.float64, seed=14)
    out = ops.twice_sum(ember.tensor(x), ember.tensor(y))
    np.testing.assert_allclose(out.item(), (2 * x + y).sum())
    check_grad(ops.twice_sum, x, y)
    out = ops.twice_sum.scaled(ember.tensor(x), ember.tensor(y), 3.0)
    np.testing.assert_allclose(out.item(), 3 * (2 * x + y).sum())
    check_grad(lambda a, b: ops.twice_sum.scaled(a, b, -0.5), x, y)


FAILING = r"""
#include <torch/library.h>

at::Tensor ident(const at::Tensor& x) { return x.clone(); }

// the namespace is defined already (by the library of the `ops` fixture)
TORCH_LIBRARY(ember_cpp_ops, m) {
  m.def("other(Tensor x) -> Tensor");
}

TORCH_LIBRARY_FRAGMENT(ember_cpp_more, m) {
  m.def("broken(Tensor x -> Tensor");
}

TORCH_LIBRARY_IMPL(ember_cpp_more, CPU, m) {
  m.def("inside_impl(Tensor x) -> Tensor");
}

// still registered: the failures above do not stop the blocks after them
TORCH_LIBRARY_FRAGMENT(ember_cpp_more, m) {
  m.def("ident(Tensor x) -> Tensor", &ident);
}
"""


def test_failed_blocks_raise_after_the_library_loaded(ops):
    with pytest.raises(RuntimeError) as info:
        load_inline("ember_cpp_failing", FAILING, extra_cflags=FAST, is_python_module=False)
    message = str(info.value)
    head, *failures = message.split("\n  TORCH_LIBRARY")
    assert head.startswith("registering the operators of ") and head.endswith(
        os.sep + "ember_cpp_failing.so failed:")
    assert len(failures) == 3, message
    # each failure names its C++ block (main.cpp: load_inline's source, 3 prelude lines)
    # and ember.library's message names the C++ lines too
    dup, bad_schema, def_in_impl = failures
    assert dup.startswith("(ember_cpp_ops) at ") and "main.cpp:10: RuntimeError: Only a " \
        "single TORCH_LIBRARY can be used to register the namespace ember_cpp_ops;" in dup
    assert "Previous registration of TORCH_LIBRARY was registered at " + os.path.join(
        str(ops.sources[1])) + ":4; latest registration was registered at " in dup
    assert dup.endswith("main.cpp:10")
    assert bad_schema.startswith("_FRAGMENT(ember_cpp_more) at ") and "main.cpp:14: " \
        "RuntimeError: " in bad_schema
    assert "\n    broken(Tensor x -> Tensor\n" in bad_schema  # the caret lines, indented
    assert def_in_impl.startswith("_IMPL(ember_cpp_more, CPU) at ")
    assert def_in_impl.endswith(': RuntimeError: def("inside_impl"): Cannot define an operator '
                                "inside of a TORCH_LIBRARY_IMPL block.  All def()s should be "
                                "placed in the (unique) TORCH_LIBRARY block for their "
                                "namespace.  (Error occurred while processing "
                                "TORCH_LIBRARY_IMPL block at " + def_in_impl.split(" at ")[1]
                                .split(": ")[0] + ")")
    assert "main.cpp:18" in def_in_impl
    x = ember.arange(3.0)
    np.testing.assert_array_equal(ember.ops.ember_cpp_more.ident(x).numpy(), [0.0, 1.0, 2.0])
    # the operators of the first library are untouched
    np.testing.assert_allclose(ops.mul(x, x).numpy(), [0.0, 1.0, 4.0])


MODULE_STYLE = r"""
#include <torch/extension.h>

at::Tensor plus_one(const at::Tensor& x) { return x + 1; }

TORCH_LIBRARY(ember_cpp_modstyle, m) {
  m.def("plus_one(Tensor x) -> Tensor");
}
TORCH_LIBRARY_IMPL(ember_cpp_modstyle, CPU, m) {
  m.impl("plus_one", &plus_one);
}
int answer() { return 42; }
"""


def test_python_module_with_torch_library_blocks(cache_dir):
    # the older extension-cpp layout: a pybind11 module whose import runs the blocks
    mod = load_inline("ember_cpp_modstyle", MODULE_STYLE, functions="answer",
                      extra_cflags=FAST)
    assert mod.answer() == 42
    y = ember.ops.ember_cpp_modstyle.plus_one(ember.zeros(2))
    np.testing.assert_array_equal(y.numpy(), [1.0, 1.0])


def test_registration_failure_outside_a_loader_warns():
    from ember.utils._oplib import registration_failed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        registration_failed("TORCH_LIBRARY(x) at a.cpp:1", "RuntimeError: no")
    assert [str(w.message) for w in caught] == ["TORCH_LIBRARY(x) at a.cpp:1 failed: "
                                                "RuntimeError: no"]
    assert caught[0].category is RuntimeWarning


def test_load_library_errors():
    with pytest.raises(OSError, match=r"^Could not load this library: /nonexistent/lib\.so$"):
        ember.ops.load_library("/nonexistent/lib.so")
    with pytest.raises(OSError, match=r"^Could not load this library: "):
        ember.ops.load_library(sys.executable + ".missing")


def test_extension_cpp_example_package():
    # examples/extensions/muladd: extension-cpp's csrc/muladd.cpp and ops.py (import ember as
    # torch), the package loading its library with load(..., is_python_module=False)
    from tests.utils.extension_cpp_example import import_example
    example = import_example()
    assert os.path.basename(example.library_path) == "extension_cpp.so"
    gen = np.random.default_rng(15)
    a, b = (gen.standard_normal(20).astype(np.float32) for _ in range(2))
    at, bt = ember.tensor(a, requires_grad=True), ember.tensor(b)
    out = example.ops.mymuladd(at, bt, 3.14)
    np.testing.assert_allclose(out.detach().numpy(), a * b + np.float32(3.14), rtol=1e-6)
    g = gen.standard_normal(20).astype(np.float32)
    (grad_a,) = ember.autograd.grad(out, [at], ember.tensor(g))
    np.testing.assert_allclose(grad_a.numpy(), g * b, rtol=1e-6)
    out = ember.empty(20)
    assert example.ops.myadd_out(ember.tensor(a), ember.tensor(b), out) is None
    np.testing.assert_allclose(out.numpy(), a + b, rtol=1e-6)
    result = ember.library.opcheck(ember.ops.extension_cpp.mymuladd.default,
                                   (ember.tensor(a, requires_grad=True), ember.tensor(b), -123))
    assert set(result.values()) == {"SUCCESS"}, result


AOT_SETUP = """
from setuptools import setup
from ember.utils.cpp_extension import BuildExtension, CppExtension
setup(name="extension_cpp", packages=["extension_cpp"],
      ext_modules=[CppExtension("extension_cpp._C", ["extension_cpp/csrc/muladd.cpp"])],
      cmdclass={"build_ext": BuildExtension})
"""


def test_ahead_of_time_build_of_the_example(tmp_path):
    # setup.py + BuildExtension, and the package imports its library as the module _C: the
    # source's own PyInit__C (no PyMODINIT_FUNC) is exported despite -fvisibility=hidden
    from tests.utils.extension_cpp_example import EXAMPLE, REPO
    pkg = tmp_path / "extension_cpp"
    shutil.copytree(EXAMPLE, pkg, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    (pkg / "__init__.py").write_text("from . import _C, ops  # noqa: F401\n")
    (tmp_path / "setup.py").write_text(AOT_SETUP)
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""),
               CFLAGS="-O0 -g0")
    r = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    check = textwrap.dedent("""
        import ember, extension_cpp
        a = ember.tensor([1.0, 2.0], requires_grad=True)
        out = extension_cpp.ops.mymuladd(a, ember.tensor([3.0, 4.0]), 0.5)
        out.sum().backward()
        print(out.tolist(), a.grad.tolist())
    """)
    r = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["[3.5, 8.5] [3.0, 4.0]"]



def test_limited_api_build_is_refused_with_a_reason(cache_dir):
    # extension-cpp's setup.py passes -DPy_LIMITED_API for PyTorch's Python-free headers;
    # ember's call Python through pybind11, so the build says so first
    from ember.utils.cpp_extension import ExtensionBuildError
    with pytest.raises(ExtensionBuildError) as info:
        load_inline("ember_cpp_limited", "int f() { return 1; }",
                    extra_cflags=FAST + ["-DPy_LIMITED_API=0x03090000"], is_python_module=False)
    first_error = next(line for line in str(info.value).splitlines() if "error:" in line)
    assert "#error" in first_error and "needs the full Python C API: build without " \
        "-DPy_LIMITED_API (and without py_limited_api=True)" in first_error
