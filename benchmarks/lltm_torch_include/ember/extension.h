// <ember/extension.h> for a build with PyTorch's torch.utils.cpp_extension: maps the ember
// names that examples/extensions/lltm/lltm.cpp uses onto PyTorch's, so benchmarks/run.py's
// "lltm" workload compiles that same source file for both libraries.
#pragma once

#include <torch/extension.h>

namespace ember = torch;

#define EMBER_CHECK TORCH_CHECK
#define EMBER_DISPATCH_FLOATING_TYPES AT_DISPATCH_FLOATING_TYPES
#define EMBER_EXTENSION_NAME TORCH_EXTENSION_NAME
