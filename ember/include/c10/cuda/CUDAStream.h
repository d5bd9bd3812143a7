// <c10/cuda/CUDAStream.h> for ember: c10::cuda::getCurrentCUDAStream() (see <ember/cuda.h>).
#pragma once
#include <c10/cuda/CUDAGuard.h>
