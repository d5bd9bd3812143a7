// <ATen/cuda/CUDAContext.h> for ember: at::cuda::getCurrentCUDAStream() (see <ember/cuda.h>).
#pragma once
#include <ember/cuda.h>

namespace at {
namespace cuda {
using ::ember::cuda::getCurrentCUDAStream;
}  // namespace cuda
}  // namespace at
