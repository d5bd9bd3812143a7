"""The extension-cpp ``muladd`` layout on ember and on torch, from one C++ source.

``examples/extensions/muladd`` (``csrc/muladd.cpp`` + ``ops.py``) is imported on ember, which
builds it with ``load(..., is_python_module=False)``; torch builds the same file with its own
``torch.utils.cpp_extension.load`` (once per session) and runs the same ``ops.py`` with only
the import changed. Where torch cannot build extensions here, its operators are the same
formulas registered through ``torch.library`` instead.
"""
import shutil
import types

import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import compare, error_of
from tests.utils.extension_cpp_example import OPS, SOURCE, import_example

pytestmark = pytest.mark.skipif(
    not any(shutil.which(c) for c in ("g++", "c++", "clang++")),
    reason="no C++ compiler found (looked for g++, c++, clang++)")


def _torch_ops_module():
    """The example's ops.py, run on torch: only the import differs."""
    text = open(OPS).read()
    ember_import = "import ember as torch\nfrom ember import Tensor\n"
    assert ember_import in text
    module = types.ModuleType("extension_cpp_ops_on_torch")
    exec(compile(text.replace(ember_import, "import torch\nfrom torch import Tensor\n"), OPS,
                 "exec"), module.__dict__)
    return module


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
    """The example on ember; the same source and ops.py on torch; how torch got its ops."""
    example = import_example()
    torch_dir = tmp_path_factory.mktemp("muladd_torch_build")
    keep = []
    try:
        from torch.utils import cpp_extension as torch_cpp_extension
        torch_cpp_extension.load("extension_cpp", [SOURCE], is_python_module=False,
                                 build_directory=str(torch_dir))
        how = "built"
    except Exception:  # noqa: BLE001 - no ninja, no headers, ...: the formulas instead
        keep.append(_torch_formulas())
        how = "formulas"
    ops = {ember: example.ops, torch: _torch_ops_module()}
    return types.SimpleNamespace(ember_path=example.library_path, torch=how, keep=keep, ops=ops)


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
    compare(lambda lib, x, y: built.ops[lib].mymuladd(x, y, 1.25), a, b,
            noncontiguous=noncontiguous)
    compare(lambda lib, x, y: lib.ops.extension_cpp.mymuladd.default(x, y, 3), a, b)


def test_gradient_of_one_input(built):
    a, b = _pair((3, 4), seed=5)

    def fn(lib, x, y):
        return built.ops[lib].mymuladd(x, y.detach(), -0.5)
    compare(fn, a, b)


def test_mymul(built):
    a, b = _pair((4, 3), seed=6)
    compare(lambda lib, x, y: built.ops[lib].mymul(x, y), a, b, grad=False,
            noncontiguous=True)


def test_myadd_out_writes_out(built):
    a, b = _pair((3, 5), seed=7)
    results = {}
    for lib in (torch, ember):
        out = lib.zeros(3, 5)
        returned = built.ops[lib].myadd_out(lib.tensor(a), lib.tensor(b), out)
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



def _samples(lib, requires_grad):
    """extension-cpp's own test inputs: sizes, differentiable or not, int and float c."""
    gen = np.random.default_rng(9)

    def make(*size, grad=requires_grad):
        return lib.tensor(gen.standard_normal(size).astype(np.float32), requires_grad=grad)
    return [[make(3), make(3), 1], [make(20), make(20), 3.14],
            [make(20), make(20, grad=False), -123], [make(2, 3, grad=False), make(2, 3), -0.3]]


def _out_samples(lib, requires_grad):
    """extension-cpp's test inputs of myadd_out (a, b, out)."""
    gen = np.random.default_rng(10)
    return [[lib.tensor(gen.standard_normal(n).astype(np.float32), requires_grad=requires_grad)
             for _ in range(3)] for n in (3, 20)]


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("name", ["mymuladd", "myadd_out"])
def test_opcheck_reports_the_same(built, name, requires_grad):
    samples = _samples if name == "mymuladd" else _out_samples
    results = {}
    for lib in (torch, ember):
        op = getattr(lib.ops.extension_cpp, name).default
        results[lib] = [lib.library.opcheck(op, tuple(args))
                        for args in samples(lib, requires_grad)]
    assert results[ember] == results[torch]
    assert all(set(r.values()) == {"SUCCESS"} for r in results[ember])
