"""The extension-cpp ``muladd`` layout on ember and on torch, from one C++ source.

The same file is built by ``ember.utils.cpp_extension.load(..., is_python_module=False)`` and by
torch's own ``torch.utils.cpp_extension.load`` (once per session each); its TORCH_LIBRARY blocks
register ``extension_cpp::mymuladd``, ``mymul`` and ``myadd_out`` in each library, and the
same Python code (``register_autograd``, ``register_fake``) runs on ``lib.library``. Where
torch cannot build extensions here, its operators are the same formulas registered through
``torch.library`` instead.
"""
import shutil

import numpy as np
import pytest
import torch

import ember
from ember.utils import cpp_extension as ember_cpp_extension
from tests.parity.compare import compare, error_of

pytestmark = pytest.mark.skipif(
    not any(shutil.which(c) for c in ("g++", "c++", "clang++")),
    reason="no C++ compiler found (looked for g++, c++, clang++)")

MULADD = r"""
#include <Python.h>
#include <ATen/Operators.h>
#include <torch/all.h>
#include <torch/library.h>

#include <vector>

extern "C" {
// an empty module "_C", for packages that import the library as a module
PyObject* PyInit__C(void) {
  static struct PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "_C", NULL, -1, NULL};
  return PyModule_Create(&module_def);
}
}

namespace extension_cpp {

static void check_inputs(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.sizes() == b.sizes());
  TORCH_CHECK(a.dtype() == at::kFloat);
  TORCH_CHECK(b.dtype() == at::kFloat);
  TORCH_INTERNAL_ASSERT(a.device().type() == at::DeviceType::CPU);
  TORCH_INTERNAL_ASSERT(b.device().type() == at::DeviceType::CPU);
}

at::Tensor mymuladd_cpu(const at::Tensor& a, const at::Tensor& b, double c) {
  check_inputs(a, b);
  at::Tensor a_contig = a.contiguous();
  at::Tensor b_contig = b.contiguous();
  at::Tensor result = torch::empty(a_contig.sizes(), a_contig.options());
  const float* a_ptr = a_contig.data_ptr<float>();
  const float* b_ptr = b_contig.data_ptr<float>();
  float* result_ptr = result.data_ptr<float>();
  for (int64_t i = 0; i < result.numel(); i++) {
    result_ptr[i] = a_ptr[i] * b_ptr[i] + c;
  }
  return result;
}

at::Tensor mymul_cpu(const at::Tensor& a, const at::Tensor& b) {
  check_inputs(a, b);
  at::Tensor a_contig = a.contiguous();
  at::Tensor b_contig = b.contiguous();
  at::Tensor result = at::empty_like(a_contig);
  const float* a_ptr = a_contig.data_ptr<float>();
  const float* b_ptr = b_contig.data_ptr<float>();
  float* result_ptr = result.data_ptr<float>();
  for (int64_t i = 0; i < result.numel(); i++) {
    result_ptr[i] = a_ptr[i] * b_ptr[i];
  }
  return result;
}

void myadd_out_cpu(const at::Tensor& a, const at::Tensor& b, at::Tensor& out) {
  check_inputs(a, b);
  TORCH_CHECK(b.sizes() == out.sizes());
  TORCH_CHECK(out.dtype() == at::kFloat);
  TORCH_CHECK(out.is_contiguous());
  TORCH_INTERNAL_ASSERT(out.device().type() == at::DeviceType::CPU);
  at::Tensor a_contig = a.contiguous();
  at::Tensor b_contig = b.contiguous();
  const float* a_ptr = a_contig.data_ptr<float>();
  const float* b_ptr = b_contig.data_ptr<float>();
  float* result_ptr = out.data_ptr<float>();
  for (int64_t i = 0; i < out.numel(); i++) {
    result_ptr[i] = a_ptr[i] + b_ptr[i];
  }
}

TORCH_LIBRARY(extension_cpp, m) {
  m.def("mymuladd(Tensor a, Tensor b, float c) -> Tensor");
  m.def("mymul(Tensor a, Tensor b) -> Tensor");
  m.def("myadd_out(Tensor a, Tensor b, Tensor(a!) out) -> ()");
}

TORCH_LIBRARY_IMPL(extension_cpp, CPU, m) {
  m.impl("mymuladd", &mymuladd_cpu);
  m.impl("mymul", &mymul_cpu);
  m.impl("myadd_out", &myadd_out_cpu);
}

}  // namespace extension_cpp
"""


def _register_python_side(lib):
    """extension-cpp's ops.py, written once for both libraries."""
    ops = lib.ops.extension_cpp

    @lib.library.register_fake("extension_cpp::mymuladd")
    def _(a, b, c):
        return lib.empty_like(a)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        grad_a = ops.mymul.default(grad, b) if ctx.needs_input_grad[0] else None
        grad_b = ops.mymul.default(grad, a) if ctx.needs_input_grad[1] else None
        return grad_a, grad_b, None

    def setup_context(ctx, inputs, output):
        a, b, c = inputs
        ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                              b if ctx.needs_input_grad[0] else None)

    lib.library.register_autograd("extension_cpp::mymuladd", backward,
                                  setup_context=setup_context)

    @lib.library.register_fake("extension_cpp::mymul")
    def _(a, b):
        return lib.empty_like(a)


def _torch_formulas():
    """torch's operators as Python formulas, where torch cannot compile the source here."""
    lib = torch.library.Library("extension_cpp", "DEF")
    lib.define("mymuladd(Tensor a, Tensor b, float c) -> Tensor")
    lib.define("mymul(Tensor a, Tensor b) -> Tensor")
    lib.define("myadd_out(Tensor a, Tensor b, Tensor(a!) out) -> ()")

    def check(a, b):
        for cond, text in ((a.shape == b.shape, "a.sizes() == b.sizes()"),
                           (a.dtype == torch.float, "a.dtype() == at::kFloat"),
                           (b.dtype == torch.float, "b.dtype() == at::kFloat")):
            if not cond:
                raise RuntimeError(f"Expected {text} to be true, but got false.  (Could this "
                                   "error message be improved?  If so, please report an "
                                   "enhancement request to PyTorch.)")

    def mymuladd(a, b, c):
        check(a, b)
        return a * b + c

    def mymul(a, b):
        check(a, b)
        return a * b

    def myadd_out(a, b, out):
        check(a, b)
        out.copy_(a + b)

    for name, fn in (("mymuladd", mymuladd), ("mymul", mymul), ("myadd_out", myadd_out)):
        lib.impl(name, fn, "CPU")
    return lib


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The source built and loaded into ember and into torch; how torch got its ops."""
    d = tmp_path_factory.mktemp("muladd")
    source = d / "muladd.cpp"
    source.write_text(MULADD)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMBER_EXTENSIONS_DIR", str(d / "ember_cache"))
        ember_path = ember_cpp_extension.load("extension_cpp", [str(source)],
                                              is_python_module=False)
    torch_dir = d / "torch_build"
    torch_dir.mkdir()
    keep = []
    try:
        from torch.utils import cpp_extension as torch_cpp_extension
        torch_cpp_extension.load("extension_cpp", [str(source)], is_python_module=False,
                                 build_directory=str(torch_dir))
        how = "built"
    except Exception:  # noqa: BLE001 - no ninja, no headers, ...: the formulas instead
        keep.append(_torch_formulas())
        how = "formulas"
    for lib in (torch, ember):
        _register_python_side(lib)
    return type("Built", (), {"ember_path": ember_path, "torch": how, "keep": keep})


def _pair(shape, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for _ in range(2)]


def test_load_returns_the_path_like_torch(built):
    assert built.ember_path.endswith("/extension_cpp.so")
    assert built.ember_path in ember.ops.loaded_libraries


@pytest.mark.parametrize("noncontiguous", [False, True])
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
def test_mymuladd_values_and_gradients(built, shape, noncontiguous):
    a, b = _pair(shape, seed=len(shape))
    compare(lambda lib, x, y: lib.ops.extension_cpp.mymuladd(x, y, 1.25), a, b,
            noncontiguous=noncontiguous)
    compare(lambda lib, x, y: lib.ops.extension_cpp.mymuladd.default(x, y, 3), a, b)


def test_gradient_of_one_input(built):
    a, b = _pair((3, 4), seed=5)

    def fn(lib, x, y):
        return lib.ops.extension_cpp.mymuladd(x, y.detach(), -0.5)
    compare(fn, a, b)


def test_mymul(built):
    a, b = _pair((4, 3), seed=6)
    compare(lambda lib, x, y: lib.ops.extension_cpp.mymul(x, y), a, b, grad=False,
            noncontiguous=True)


def test_myadd_out_writes_out(built):
    a, b = _pair((3, 5), seed=7)
    results = {}
    for lib in (torch, ember):
        out = lib.zeros(3, 5)
        returned = lib.ops.extension_cpp.myadd_out(lib.tensor(a), lib.tensor(b), out)
        results[lib] = (returned, out.numpy())
    assert results[torch][0] is None and results[ember][0] is None
    np.testing.assert_allclose(results[ember][1], results[torch][1], rtol=1e-6)


@pytest.mark.parametrize("case", ["float64", "broadcast", "dtype_b"])
def test_check_failures_read_the_same(built, case):
    a, b = _pair((2, 3), seed=8)
    if case == "float64":
        a = a.astype(np.float64)
    elif case == "broadcast":
        b = b[0]
    else:
        b = b.astype(np.float64)
    errors = [error_of(lambda: lib.ops.extension_cpp.mymuladd(lib.tensor(a), lib.tensor(b), 1.0))
              for lib in (torch, ember)]
    assert errors[0] is not None
    assert errors[1] == errors[0]


def test_missing_argument_reads_the_same(built):
    errors = [error_of(lambda: lib.ops.extension_cpp.mymuladd(lib.ones(2), lib.ones(2)))
              for lib in (torch, ember)]
    assert errors[0] is not None and errors[1] == errors[0]

