// CUDA helpers for ember's C++ extensions built with nvcc (load_inline(cuda_sources=...),
// .cu files in load): the stream CuPy orders ember's CUDA work on, a device guard, and the
// launch checks. PyTorch's spellings live in <ATen/cuda/CUDAContext.h>, <c10/cuda/CUDAGuard.h>
// and <c10/cuda/CUDAException.h>, which include this file.
//
// ember's CUDA tensors are CuPy arrays: their work runs on CuPy's current stream (the legacy
// default stream unless a program selects another), so kernels launched on
// getCurrentCUDAStream() are ordered with it.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include <ember/extension.h>

namespace ember {
namespace cuda {

/// CuPy's current stream on this thread (where ember's CUDA ops run).
inline cudaStream_t getCurrentCUDAStream(int64_t device_index = -1) {
  (void)device_index;  // ember's CUDA tensors live on the current device
  // looked up once and kept for the process (a static py::object would be released after
  // the interpreter is gone)
  static PyObject* current =
      py::object(py::module_::import("cupy").attr("cuda").attr("get_current_stream"))
          .release().ptr();
  py::object stream = py::reinterpret_borrow<py::object>(current)();
  return reinterpret_cast<cudaStream_t>(stream.attr("ptr").cast<uintptr_t>());
}

/// Throws ember::Error (RuntimeError in Python) for a CUDA error code.
inline void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    throw ::ember::Error(std::string("CUDA error: ") + cudaGetErrorString(err) + " (" + what + ")");
  }
}

/// Makes ``device`` current while it lives, then restores the previous one.
class CUDAGuard {
 public:
  explicit CUDAGuard(int64_t index) { set(index); }
  explicit CUDAGuard(const ::ember::Device& d) { set(d.index()); }
  CUDAGuard(const CUDAGuard&) = delete;
  CUDAGuard& operator=(const CUDAGuard&) = delete;
  ~CUDAGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }

 private:
  void set(int64_t index) {
    if (index < 0) return;
    int current = 0;
    check(cudaGetDevice(&current), "cudaGetDevice");
    if (current != index) {
      check(cudaSetDevice(static_cast<int>(index)), "cudaSetDevice");
      previous_ = current;
    }
  }
  int previous_ = -1;
};

}  // namespace cuda
}  // namespace ember

/// After a kernel launch: throws the launch's error, if any.
#define EMBER_CUDA_KERNEL_LAUNCH_CHECK() \
  ::ember::cuda::check(cudaGetLastError(), "kernel launch")
#define EMBER_CUDA_CHECK(expr) ::ember::cuda::check((expr), #expr)
