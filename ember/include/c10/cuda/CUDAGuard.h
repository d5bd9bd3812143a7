// <c10/cuda/CUDAGuard.h> for ember: c10::cuda::CUDAGuard / OptionalCUDAGuard (see <ember/cuda.h>).
#pragma once
#include <ember/cuda.h>

namespace c10 {
namespace cuda {
using CUDAGuard = ::ember::cuda::CUDAGuard;
using OptionalCUDAGuard = ::ember::cuda::CUDAGuard;
using ::ember::cuda::getCurrentCUDAStream;
}  // namespace cuda
}  // namespace c10

namespace at {
namespace cuda {
using CUDAGuard = ::ember::cuda::CUDAGuard;
using OptionalCUDAGuard = ::ember::cuda::CUDAGuard;
}  // namespace cuda
}  // namespace at
