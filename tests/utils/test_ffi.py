"""ember.utils.ffi: C extensions built with cffi that take ember tensors.

Each extension is compiled once per module into a temporary directory.
"""
import importlib
import os
import shutil
import subprocess
import sys
import sysconfig

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "examples", "extensions", "ffi_add")


def _have_compiler():
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    return shutil.which(os.environ.get("CC", cc).split()[0]) is not None


pytestmark = pytest.mark.skipif(not _have_compiler(), reason="no C compiler on this machine")

HEADER = """
#ifndef TESTLIB_H
#define TESTLIB_H
#include <ember/ffi/EmberTensor.h>
int t_resize_as(EmberFloatTensor *dst, EmberFloatTensor *src);
int t_resize_iota(EmberFloatTensor *t, int64_t n0, int64_t n1);
void t_write_iota(EmberFloatTensor *t);
double t_weighted_sum(EmberDoubleTensor *t);
int t_double_axpy(EmberDoubleTensor *out, EmberDoubleTensor *a, double value,
                  EmberDoubleTensor *b);
void t_double_fill(EmberDoubleTensor *t, double value);
int t_same(EmberFloatTensor *a, EmberFloatTensor *b);
int64_t t_nelement(EmberDoubleTensor *t);
EmberFloatTensor *t_pick(EmberFloatTensor *a, EmberFloatTensor *b, int which);
int64_t t_long_sum(EmberLongTensor *t);
int t_int_fill(EmberIntTensor *t, int value);
int t_twice(EmberFloatTensor *a, EmberFloatTensor *b);
#endif
"""

SOURCE = r"""
#include <ember/ffi/EmberTensor.h>
#include "testlib.h"

int t_resize_as(EmberFloatTensor *dst, EmberFloatTensor *src) {
  return EmberFloatTensor_resizeAs(dst, src);
}
int t_resize_iota(EmberFloatTensor *t, int64_t n0, int64_t n1) {
  int64_t i;
  if (!EmberFloatTensor_resize2d(t, n0, n1)) return 0;
  for (i = 0; i < EmberFloatTensor_nElement(t); i++) EmberFloatTensor_data(t)[i] = (float)i;
  return 1;
}
void t_write_iota(EmberFloatTensor *t) {
  int64_t i, n = EmberFloatTensor_nElement(t);
  for (i = 0; i < n; i++) t->data[i] = (float)i;
}
double t_weighted_sum(EmberDoubleTensor *t) {
  double s = 0;
  int64_t i, n = EmberDoubleTensor_nElement(t);
  if (!EmberDoubleTensor_isContiguous(t)) return -1;
  for (i = 0; i < n; i++) s += EmberDoubleTensor_data(t)[i] * (double)(i + 1);
  return s;
}
int t_double_axpy(EmberDoubleTensor *out, EmberDoubleTensor *a, double value,
                  EmberDoubleTensor *b) {
  if (!EmberDoubleTensor_isSameSizeAs(a, b)) return 0;
  return EmberDoubleTensor_cadd(out, a, value, b);
}
void t_double_fill(EmberDoubleTensor *t, double value) { EmberDoubleTensor_fill(t, value); }
int t_same(EmberFloatTensor *a, EmberFloatTensor *b) {
  return EmberFloatTensor_isSameSizeAs(a, b);
}
int64_t t_nelement(EmberDoubleTensor *t) { return EmberDoubleTensor_nElement(t); }
EmberFloatTensor *t_pick(EmberFloatTensor *a, EmberFloatTensor *b, int which) {
  return which == 0 ? a : which == 1 ? b : NULL;
}
int64_t t_long_sum(EmberLongTensor *t) {
  int64_t s = 0, i;
  for (i = 0; i < EmberLongTensor_nElement(t); i++) s += t->data[i];
  return s;
}
int t_int_fill(EmberIntTensor *t, int value) { EmberIntTensor_fill(t, value); return 1; }
/* resize a, then b: when a and b are the same tensor, b's struct must follow */
int t_twice(EmberFloatTensor *a, EmberFloatTensor *b) {
  if (!EmberFloatTensor_resize1d(a, 7)) return 0;
  return (int)EmberFloatTensor_nElement(b);
}
"""


def _import_from(path, name):
    sys.path.insert(0, path)
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(path)


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """The test extension, built with package=True under a unique package name."""
    from ember.utils.ffi import create_extension
    d = tmp_path_factory.mktemp("ffi_testlib")
    (d / "testlib.h").write_text(HEADER)
    (d / "testlib.c").write_text(SOURCE)
    ext = create_extension("ember_ffi_testpkg.testlib", headers="testlib.h",
                           sources=["testlib.c"], relative_to=str(d), package=True,
                           include_dirs=[str(d)], verbose=False)
    library = ext.build()
    assert os.path.isfile(library)
    module = _import_from(str(d), "ember_ffi_testpkg.testlib")
    yield module
    for key in [k for k in sys.modules if k.startswith("ember_ffi_testpkg")]:
        del sys.modules[key]


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """The extension-ffi example, copied to a temporary directory and built by its build.py."""
    d = tmp_path_factory.mktemp("ffi_example") / "ffi_add"
    shutil.copytree(EXAMPLE, d, ignore=shutil.ignore_patterns("_ext", "__pycache__"))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "build.py"], cwd=d, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return d, env


def test_example_build_py_and_test_py(example):
    d, env = example
    assert (d / "_ext" / "__init__.py").is_file()
    assert (d / "_ext" / "my_lib" / "__init__.py").is_file()
    r = subprocess.run([sys.executable, "test.py"], cwd=d, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("ok")
    assert "grad_fn=<MyAddFunctionBackward>" in r.stdout


@pytest.fixture
def example_modules(example):
    d, _ = example
    names = ("_ext", "functions", "modules")
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in names}
    for k in saved:
        del sys.modules[k]
    sys.path.insert(0, str(d))
    try:
        yield (importlib.import_module("functions.add"), importlib.import_module("modules.add"),
               importlib.import_module("_ext.my_lib"))
    finally:
        sys.path.remove(str(d))
        for k in [k for k in sys.modules if k.split(".")[0] in names]:
            del sys.modules[k]
        sys.modules.update(saved)


def test_example_forward_backward_values(example_modules):
    functions_add, modules_add, my_lib = example_modules
    rng = np.random.default_rng(0)
    a_np, b_np = rng.random((3, 4), dtype=np.float32), rng.random((3, 4), dtype=np.float32)
    a = ember.tensor(a_np, requires_grad=True)
    b = ember.tensor(b_np, requires_grad=True)
    out = functions_add.MyAddFunction()(a, b)
    assert out.shape == (3, 4) and out.dtype == ember.float32
    np.testing.assert_array_equal(out.detach().numpy(), a_np + b_np)
    assert type(out.grad_fn).__name__ == "MyAddFunctionBackward"
    g = rng.random((3, 4), dtype=np.float32)
    out.backward(ember.tensor(g))
    np.testing.assert_array_equal(a.grad.numpy(), g)
    np.testing.assert_array_equal(b.grad.numpy(), g)

    module_out = modules_add.MyAddModule()(a, b)
    np.testing.assert_array_equal(module_out.detach().numpy(), a_np + b_np)

    # the raw C entry points: sizes differ -> 0 and the output is left alone
    output = ember.zeros(2)
    assert my_lib.my_lib_add_forward(ember.zeros(2, 3), ember.zeros(3, 2), output) == 0
    assert output.shape == (2,)
    with pytest.raises(ValueError, match="input sizes must match"):
        functions_add.MyAddFunction()(ember.zeros(2, 3), ember.zeros(3, 2))
    grad_input = ember.zeros(1)
    assert my_lib.my_lib_add_backward(ember.zeros(2, 5), grad_input) == 1
    np.testing.assert_array_equal(grad_input.numpy(), np.ones((2, 5), np.float32))


def test_example_dtype_mismatch_raises(example_modules):
    _, _, my_lib = example_modules
    out = ember.zeros(0)
    with pytest.raises(TypeError, match=r"my_lib_add_forward\(\): argument 'input2' \(position 2\)"
                                        r" must be a tensor of dtype ember.float32 "
                                        r"\(EmberFloatTensor \*\), got ember.float64"):
        my_lib.my_lib_add_forward(ember.zeros(2), ember.zeros(2, dtype=ember.float64), out)
    assert out.shape == (0,)  # nothing ran


def test_resize_as_reallocates_the_ember_tensor(lib):
    dst = ember.ones(2)
    old_ptr, old_version = dst.data_ptr(), dst._version
    keep_old = dst.numpy()  # the old storage, still alive
    assert lib.t_resize_as(dst, ember.zeros(3, 4)) == 1
    assert dst.shape == (3, 4) and dst.stride() == (4, 1)
    assert dst.data_ptr() != old_ptr and dst._version > old_version
    np.testing.assert_array_equal(keep_old, [1, 1])  # the old storage was not written
    # TH semantics: the leading elements survive, the new ones are zero
    np.testing.assert_array_equal(dst.numpy().ravel(), [1, 1] + [0] * 10)
    # same size: nothing is reallocated
    ptr = dst.data_ptr()
    assert lib.t_resize_as(dst, ember.zeros(3, 4)) == 1
    assert dst.data_ptr() == ptr


def test_resize_then_write_is_seen_by_python(lib):
    t = ember.zeros(0)
    assert lib.t_resize_iota(t, 2, 3) == 1
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert lib.t_resize_iota(t, 1, 2) == 1  # shrink
    np.testing.assert_array_equal(t.numpy(), [[0, 1]])
    with pytest.raises(ValueError, match="negative sizes"):
        lib.t_resize_iota(t, -1, 3)
    assert t.shape == (1, 2)


def test_same_tensor_twice_follows_the_resize(lib):
    t = ember.zeros(2)
    assert lib.t_twice(t, t) == 7  # b's struct saw the resize made through a
    assert t.shape == (7,)


def test_zero_copy_writes(lib):
    base = ember.full((3, 4), -1.0)
    view = base[1]  # shares memory with base
    ptr = base.data_ptr()
    lib.t_write_iota(base)
    assert base.data_ptr() == ptr
    np.testing.assert_array_equal(base.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(view.numpy(), [4, 5, 6, 7])
    arr = np.zeros(5, np.float32)
    lib.t_write_iota(ember.from_numpy(arr))  # from_numpy shares memory: C writes land in arr
    np.testing.assert_array_equal(arr, np.arange(5))


def test_non_contiguous_arguments(lib):
    x = ember.arange(12, dtype=ember.float64).reshape(3, 4)
    xt = x.t()
    assert not xt.is_contiguous()
    expected = float((xt.numpy().ravel() * np.arange(1, 13)).sum())
    assert lib.t_weighted_sum(xt) == expected  # C saw a contiguous copy, in xt's order
    np.testing.assert_array_equal(x.numpy(), np.arange(12).reshape(3, 4))  # untouched

    y = ember.zeros(4, 3)
    yt = y.t()
    lib.t_write_iota(yt)  # written into a copy, copied back through the view
    np.testing.assert_array_equal(yt.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4))
    np.testing.assert_array_equal(y.numpy(), np.arange(12, dtype=np.float32).reshape(3, 4).T)

    with pytest.raises(ValueError, match="argument 'dst' .*not a contiguous.*cannot resize"):
        lib.t_resize_as(ember.zeros(4, 3).t(), ember.zeros(5))


def test_dtype_and_type_errors_do_not_crash(lib):
    with pytest.raises(TypeError, match=r"t_same\(\): argument 'b' \(position 2\) must be a "
                                        r"tensor of dtype ember.float32.*got ember.float64"):
        lib.t_same(ember.zeros(2), ember.zeros(2, dtype=ember.float64))
    with pytest.raises(TypeError, match=r"argument 't' .*ember.float64.*got ember.float32"):
        lib.t_weighted_sum(ember.zeros(3))
    with pytest.raises(TypeError, match=r"argument 'a' \(position 1\) must be an ember tensor "
                                        r"of dtype ember.float32.*not list"):
        lib.t_same([1.0, 2.0], ember.zeros(2))
    with pytest.raises(TypeError, match="not NoneType"):
        lib.t_same(None, ember.zeros(2))
    with pytest.raises(TypeError, match="expected 2 arguments, got 1"):
        lib.t_same(ember.zeros(2))
    with pytest.raises(TypeError, match="argument 't'.*ember.int64.*got ember.int32"):
        lib.t_long_sum(ember.zeros(2, dtype=ember.int32))


def test_double_variant(lib):
    rng = np.random.default_rng(1)
    a_np, b_np = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    out = ember.zeros(0, dtype=ember.float64)
    assert lib.t_double_axpy(out, ember.tensor(a_np), 2.5, ember.tensor(b_np)) == 1
    assert out.shape == (2, 3) and out.dtype == ember.float64
    np.testing.assert_allclose(out.numpy(), a_np + 2.5 * b_np, rtol=0, atol=1e-15)
    lib.t_double_fill(out, 0.1)
    np.testing.assert_array_equal(out.numpy(), np.full((2, 3), 0.1))  # no float32 rounding
    assert lib.t_nelement(out) == 6
    assert lib.t_nelement(ember.tensor(3.0, dtype=ember.float64)) == 1  # 0-d
    assert lib.t_nelement(ember.zeros(0, 5, dtype=ember.float64)) == 0


def test_is_same_size_as(lib):
    assert lib.t_same(ember.zeros(2, 3), ember.zeros(2, 3)) == 1
    assert lib.t_same(ember.zeros(2, 3), ember.zeros(3, 2)) == 0
    assert lib.t_same(ember.zeros(6), ember.zeros(2, 3)) == 0
    out = ember.zeros(0, dtype=ember.float64)
    a, b = ember.zeros(2, 3, dtype=ember.float64), ember.zeros(3, 2, dtype=ember.float64)
    assert lib.t_double_axpy(out, a, 1.0, b) == 0 and out.shape == (0,)


def test_returned_struct_maps_back_to_the_tensor(lib):
    a, b = ember.zeros(2), ember.ones(3)
    assert lib.t_pick(a, b, 0) is a
    assert lib.t_pick(a, b, 1) is b
    assert lib.t_pick(a, b, 2) is None


def test_integer_variants(lib):
    assert lib.t_long_sum(ember.arange(10)) == 45
    t = ember.zeros(4, dtype=ember.int32)
    lib.t_int_fill(t, 7)
    np.testing.assert_array_equal(t.numpy(), [7, 7, 7, 7])


def test_resize_of_tensor_requiring_grad_raises(lib):
    w = ember.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        lib.t_resize_as(w, ember.zeros(5))
    assert w.shape == (2,)


def test_wrapper_metadata(lib):
    assert "t_same" in lib.__all__
    assert lib.t_same.__name__ == "t_same"
    assert "EmberFloatTensor * a" in lib.t_same.__doc__


def test_compile_error_is_reported(tmp_path):
    from ember.utils.ffi import FFIBuildError, create_extension
    (tmp_path / "bad.h").write_text("int bad_fn(EmberFloatTensor *t);\n")
    (tmp_path / "bad.c").write_text("#include <ember/ffi/EmberTensor.h>\n"
                                    "int bad_fn(EmberFloatTensor *t) {\n"
                                    "  return EmberFloatTensor_nElement(t) + undeclared_var;\n"
                                    "}\n")
    ext = create_extension("_bad_ext.bad", "bad.h", ["bad.c"], relative_to=str(tmp_path),
                           verbose=False)
    with pytest.raises(FFIBuildError) as info:
        ext.build()
    msg = str(info.value)
    assert "building extension '_bad_ext.bad' failed" in msg
    assert "\n" in msg and "\\n" not in msg
    assert "bad.c:3:" in msg and "undeclared_var" in msg and "error" in msg
    assert not [f for f in os.listdir(tmp_path / "_bad_ext" / "bad") if f.endswith(".so")]


def test_missing_definition_fails_the_build(tmp_path):
    from ember.utils.ffi import FFIBuildError, create_extension
    (tmp_path / "m.h").write_text("int defined_fn(int x);\nint missing_fn(int x);\n")
    (tmp_path / "m.c").write_text("int defined_fn(int x) { return x + 1; }\n")
    ext = create_extension("_missing_ext", "m.h", ["m.c"], relative_to=str(tmp_path),
                           verbose=False)
    with pytest.raises(FFIBuildError, match="undefined symbol: missing_fn"):
        ext.build()


def test_bad_arguments(tmp_path):
    from ember.utils.ffi import FFIBuildError, create_extension
    (tmp_path / "h.h").write_text("int f(int x);\n")
    (tmp_path / "s.c").write_text("int f(int x) { return x; }\n")
    with pytest.raises(RuntimeError, match="with_cuda=True is not supported.*no CUDA"):
        create_extension("_e", "h.h", ["s.c"], relative_to=str(tmp_path), with_cuda=True)
    with pytest.raises(FileNotFoundError, match="cannot read header"):
        create_extension("_e", "nope.h", ["s.c"], relative_to=str(tmp_path))
    with pytest.raises(FileNotFoundError, match="nope.c"):
        create_extension("_e", "h.h", ["nope.c"], relative_to=str(tmp_path))
    (tmp_path / "bad.h").write_text("int f(int x;\n")
    with pytest.raises(FFIBuildError, match="cannot parse the declarations in bad.h"):
        create_extension("_e", "bad.h", ["s.c"], relative_to=str(tmp_path))


def test_broadcast_and_read_only_arguments(lib):
    x = ember.arange(3, dtype=ember.float64).expand(2, 3)  # zero stride, read-only memory
    assert lib.t_weighted_sum(x) == float((np.tile(np.arange(3.0), 2) * np.arange(1, 7)).sum())
    arr = np.zeros(4, np.float32)
    arr.flags.writeable = False
    with pytest.raises(ValueError, match="argument 't' .*read-only, but the C function wrote"):
        lib.t_write_iota(ember.from_numpy(arr))
    np.testing.assert_array_equal(arr, 0)


def test_extension_object(tmp_path, capfd):
    from ember.utils.ffi import create_extension, include_dir
    assert os.path.isfile(os.path.join(include_dir(), "ember", "ffi", "EmberTensor.h"))
    (tmp_path / "h.h").write_text("int plus_one(int x);\n")
    (tmp_path / "s.c").write_text("int plus_one(int x) { return x + 1; }\n")
    ext = create_extension("_ember_ffi_plain.plain", "h.h", ["s.c"],
                           relative_to=str(tmp_path / "build.py"), verbose=True)
    assert ext.module_dir == str(tmp_path / "_ember_ffi_plain" / "plain")
    assert ext.typeof("int") is not None  # the cffi.FFI interface is reachable
    ext.build()
    err = capfd.readouterr().err
    assert "building '_plain' extension" in err and "s.c" in err  # verbose: the commands
    try:
        plain = _import_from(str(tmp_path), "_ember_ffi_plain.plain")
        assert plain.plus_one(41) == 42 and plain.__all__ == ["plus_one"]
    finally:
        for key in [k for k in sys.modules if k.startswith("_ember_ffi_plain")]:
            del sys.modules[key]
