"""cuda_sources and .cu files: built by nvcc with the CUDA runtime, on a machine where ember
has CUDA. Here on the stand-in cuda module with a stand-in toolkit: an "nvcc" that logs its
arguments and compiles the (host-only) .cu source as C++, stub CUDA headers and runtime. The
real toolkit and GPU are exercised by tests/backend/test_cupy.py."""
import os
import stat
import subprocess
import sys
import textwrap

import pytest

import ember
from ember.utils.cpp_extension import load, load_inline
from ember.utils.cpp_extension._compiler import find_compiler
from tests.utils.axpb_cuda import AXPB_CUDA, AXPB_DECLARATIONS


@pytest.mark.skipif(ember.cuda.is_available(), reason="CUDA (CuPy) is available")
def test_cuda_sources_need_cuda():
    with pytest.raises(RuntimeError, match="^Error building extension 'k': CUDA sources need "
                                           "CUDA, and this ember has none"):
        load_inline("k", "", cuda_sources="__global__ void k() {}", functions="k")
    with pytest.raises(RuntimeError, match="CUDA sources need CUDA"):
        load("k", ["kernel.cu"])


def test_without_a_toolkit_the_error_is_pytorchs(fake_cuda, monkeypatch, tmp_path):
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))  # no bin/nvcc there
    with pytest.raises(OSError, match="^CUDA_HOME environment variable is not set. Please set "
                                      "it to your CUDA install root.$"):
        load_inline("k", "", cuda_sources=["__global__ void k() {}"])
    with pytest.raises(OSError, match="CUDA_HOME environment variable is not set"):
        load_inline("k", "", with_cuda=True)
    with pytest.raises(OSError, match="CUDA_HOME environment variable is not set"):
        load("k", ["kernel.cu"])


_NVCC = '''\
#!{python}
"""A stand-in nvcc: logs its arguments, compiles the .cu source as C++ with the host compiler."""
import subprocess, sys
with open({log!r}, "a") as f:
    f.write(" ".join(sys.argv[1:]) + "\\n")
args, it = [], iter(sys.argv[1:])
for a in it:
    if a == "-Xcompiler":
        args.append(next(it))
    elif a == "--expt-relaxed-constexpr":
        pass
    elif a.endswith(".cu"):
        args += ["-x", "c++", a]
    else:
        args.append(a)
sys.exit(subprocess.call({cxx!r} + args))
'''

_CUDA_RUNTIME_H = '''\
#pragma once
typedef struct CUstream_st* cudaStream_t;
typedef enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 } cudaError_t;
extern "C" {
cudaError_t cudaGetLastError(void);
const char* cudaGetErrorString(cudaError_t);
cudaError_t cudaGetDevice(int*);
cudaError_t cudaSetDevice(int);
}
'''

_CUDART_C = '''\
typedef enum { cudaSuccess = 0, cudaErrorInvalidValue = 1 } cudaError_t;
static int launches_failed = 0;
cudaError_t cudaGetLastError(void) { return launches_failed ? cudaErrorInvalidValue : cudaSuccess; }
const char* cudaGetErrorString(cudaError_t e) { return e ? "invalid argument" : "no error"; }
cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidValue; }
'''


@pytest.fixture
def stand_in_toolkit(tmp_path, monkeypatch):
    """A CUDA_HOME whose nvcc compiles host code; returns the file nvcc logs its calls to."""
    cxx = find_compiler()
    if cxx is None:
        pytest.skip("no C++ compiler")
    home = tmp_path / "cuda"
    for sub in ("bin", "include", "lib64"):
        (home / sub).mkdir(parents=True)
    log = tmp_path / "nvcc.log"
    nvcc = home / "bin" / "nvcc"
    nvcc.write_text(_NVCC.format(python=sys.executable, log=str(log), cxx=cxx))
    nvcc.chmod(nvcc.stat().st_mode | stat.S_IEXEC)
    (home / "include" / "cuda_runtime.h").write_text(_CUDA_RUNTIME_H)
    (home / "include" / "cuda.h").write_text("#pragma once\n#include <cuda_runtime.h>\n")
    (tmp_path / "cudart.c").write_text(_CUDART_C)
    subprocess.run(["cc", "-shared", "-fPIC", str(tmp_path / "cudart.c"), "-o",
                    str(home / "lib64" / "libcudart.so")], check=True)
    monkeypatch.setenv("CUDA_HOME", str(home))
    monkeypatch.setenv("EMBER_EXTENSIONS_DIR", str(tmp_path / "extensions"))
    return log


_CUDA_SOURCE = textwrap.dedent('''
    #include <ATen/cuda/CUDAContext.h>
    #include <c10/cuda/CUDAException.h>
    #include <c10/cuda/CUDAGuard.h>

    torch::Tensor scale_on_device(torch::Tensor x, double k) {
      TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
      const c10::cuda::OptionalCUDAGuard guard(x.device());
      auto out = torch::empty_like(x);
      // the stand-in device's memory is host memory: a loop stands in for a kernel launch
      const float* src = x.data_ptr<float>();
      float* dst = out.data_ptr<float>();
      for (int64_t i = 0; i < x.numel(); ++i) dst[i] = static_cast<float>(src[i] * k);
      C10_CUDA_KERNEL_LAUNCH_CHECK();
      return out;
    }
''')


def test_cuda_sources_build_with_nvcc_and_the_runtime(fake_cuda, stand_in_toolkit):
    m = load_inline("cuda_inline_probe",
                    cpp_sources="torch::Tensor scale_on_device(torch::Tensor x, double k);",
                    cuda_sources=_CUDA_SOURCE, functions=["scale_on_device"],
                    extra_cuda_cflags=["-DPROBE_FLAG=1"])
    x = ember.arange(4.0, device="cuda")
    y = m.scale_on_device(x, 2.5)
    assert y.is_cuda and y.tolist() == [0.0, 2.5, 5.0, 7.5]
    with pytest.raises(RuntimeError, match="x must be a CUDA tensor"):
        m.scale_on_device(x.cpu(), 1.0)
    calls = stand_in_toolkit.read_text().splitlines()
    assert len(calls) == 1  # one .cu file, through nvcc; main.cpp through the C++ compiler
    words = calls[0].split()
    assert words[-4] == "-c" and words[-3].endswith("cuda.cu")
    for flag in ("-std=c++17", "--expt-relaxed-constexpr", "-DPROBE_FLAG=1",
                 "-DTORCH_EXTENSION_NAME=cuda_inline_probe"):
        assert flag in words
    assert words[words.index("-Xcompiler") + 1] == "-fPIC"
    root = os.path.join(os.environ["EMBER_EXTENSIONS_DIR"], "cuda_inline_probe")
    (key,) = [d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))]
    with open(os.path.join(root, key, "build.log")) as f:
        link = [line for line in f if line.startswith("$ ") and " -shared" in line]
    home = os.environ["CUDA_HOME"]
    assert "-lcudart" in link[0] and f"-L{home}/lib64" in link[0]
    # the cached build is reused: nvcc is not run again
    again = load_inline("cuda_inline_probe",
                        cpp_sources="torch::Tensor scale_on_device(torch::Tensor x, double k);",
                        cuda_sources=_CUDA_SOURCE, functions=["scale_on_device"],
                        extra_cuda_cflags=["-DPROBE_FLAG=1"])
    assert again is m and len(stand_in_toolkit.read_text().splitlines()) == 1


_AOT_SETUP = '''
from setuptools import setup
from ember.utils.cpp_extension import BuildExtension, CUDAExtension
setup(name="cuda_aot_probe",
      ext_modules=[CUDAExtension("cuda_aot_probe", ["probe.cpp", "probe_kernel.cu"],
                                 extra_compile_args={"cxx": ["-O1"],
                                                     "nvcc": ["-DNVCC_FLAG=2"]})],
      cmdclass={"build_ext": BuildExtension})
'''


def test_cuda_extension_ahead_of_time(stand_in_toolkit, tmp_path):
    """setup.py with CUDAExtension: BuildExtension compiles the .cu file with nvcc (its
    "nvcc" flags), the .cpp with the C++ compiler ("cxx" flags), and links the runtime."""
    work = tmp_path / "pkg"
    work.mkdir()
    (work / "setup.py").write_text(_AOT_SETUP)
    (work / "probe_kernel.cu").write_text(textwrap.dedent('''
        #include <cuda_runtime.h>
        int kernel_answer() { return 21 * NVCC_FLAG + (cudaGetLastError() == cudaSuccess); }
    '''))
    (work / "probe.cpp").write_text(textwrap.dedent('''
        #include <torch/extension.h>
        int kernel_answer();
        PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("answer", &kernel_answer); }
    '''))
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"],
                          cwd=work, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert done.returncode == 0, done.stdout + done.stderr
    calls = stand_in_toolkit.read_text().splitlines()
    assert len(calls) == 1 and "probe_kernel.cu" in calls[0] and "-DNVCC_FLAG=2" in calls[0]
    assert "-DTORCH_EXTENSION_NAME=cuda_aot_probe" in calls[0]
    out = subprocess.run([sys.executable, "-c", "import cuda_aot_probe as m; print(m.answer())"],
                         cwd=work, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert out.stdout.strip() == "43", out.stderr


def test_the_real_nvcc_builds_against_embers_headers(fake_cuda, monkeypatch, tmp_path):
    """Where a CUDA toolkit is installed (a GPU or not): a templated kernel, its launch on
    getCurrentCUDAStream() through AT_DISPATCH, the guard and the checks compile with nvcc
    against ember's and pybind11's headers, link with the CUDA runtime and import. (The
    kernel is not launched: the stand-in device's memory is host memory; test_cupy.py
    launches it on a GPU.)"""
    from ember.utils.cpp_extension._cuda import find_toolkit
    if find_toolkit() is None:
        pytest.skip("no CUDA toolkit")
    monkeypatch.setenv("EMBER_EXTENSIONS_DIR", str(tmp_path))
    m = load_inline("nvcc_header_probe", cpp_sources=AXPB_DECLARATIONS, cuda_sources=AXPB_CUDA,
                    functions=["axpb", "device_count"])
    try:
        assert m.device_count() >= 1
    except RuntimeError as e:  # no driver or no GPU here: the CUDA error, as a RuntimeError
        assert str(e).startswith("CUDA error: ")
