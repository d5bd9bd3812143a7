"""A CUDA extension's source shared by the tests that build it: ``axpb(x, a, b)`` = a*x + b
by a templated kernel launched through AT_DISPATCH_FLOATING_TYPES on
``at::cuda::getCurrentCUDAStream()``, with the guard and the launch check; and
``device_count()`` (a CUDA error where there is no driver or GPU)."""

AXPB_CUDA = """
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

template <typename scalar_t>
__global__ void axpb_kernel(const scalar_t* x, scalar_t* out, scalar_t a, scalar_t b,
                            int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a * x[i] + b;
}

torch::Tensor axpb(torch::Tensor x, double a, double b) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous(), "x must be a contiguous CUDA tensor");
  const c10::cuda::OptionalCUDAGuard guard(x.device());
  auto out = torch::empty_like(x);
  int64_t n = x.numel();
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "axpb", ([&] {
    axpb_kernel<scalar_t><<<(n + 255) / 256, 256, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<scalar_t>(), out.data_ptr<scalar_t>(), (scalar_t)a, (scalar_t)b, n);
  }));
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return out;
}

int64_t device_count() {
  int count = 0;
  C10_CUDA_CHECK(cudaGetDeviceCount(&count));
  return count;
}
"""

#: the declarations cpp_sources give, for the bindings
AXPB_DECLARATIONS = ("torch::Tensor axpb(torch::Tensor x, double a, double b);\n"
                     "int64_t device_count();")
