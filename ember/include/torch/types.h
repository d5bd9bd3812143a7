// <torch/types.h> for ember: the same as <torch/extension.h> (load_inline puts it first in
// cuda_sources, as PyTorch does).
#pragma once
#include <torch/extension.h>
