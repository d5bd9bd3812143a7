// <c10/cuda/CUDAException.h> for ember: C10_CUDA_KERNEL_LAUNCH_CHECK and C10_CUDA_CHECK.
#pragma once
#include <ember/cuda.h>

#define C10_CUDA_KERNEL_LAUNCH_CHECK() EMBER_CUDA_KERNEL_LAUNCH_CHECK()
#define C10_CUDA_CHECK(expr) EMBER_CUDA_CHECK(expr)
