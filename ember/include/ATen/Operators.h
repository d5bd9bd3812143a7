// <ATen/Operators.h> for ember: the same as <torch/extension.h>.
#pragma once
#include <torch/extension.h>
