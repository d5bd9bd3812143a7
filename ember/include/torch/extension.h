// <torch/extension.h> for ember: lets simple PyTorch C++ extension sources compile unchanged.
//
// torch::, at:: and c10:: name ember's types and functions (torch::Tensor is ember::Tensor,
// torch::zeros is ember::zeros, torch::kFloat32 is ember::kFloat32, ...); TORCH_CHECK is
// EMBER_CHECK; TORCH_EXTENSION_NAME is the module name ember.utils.cpp_extension passes on the
// command line. Only what <ember/extension.h> offers is there: sources using other ATen APIs
// (CUDA, dispatcher registration, TensorIterator, ...) will not compile.
#pragma once

#include <ember/extension.h>

#ifndef TORCH_EXTENSION_NAME
#ifdef EMBER_EXTENSION_NAME
#define TORCH_EXTENSION_NAME EMBER_EXTENSION_NAME
#endif
#endif

namespace torch {
using namespace ::ember;
using Dtype = ::ember::ScalarType;
}  // namespace torch

namespace at {
using namespace ::ember;
using TensorList = std::vector<::ember::Tensor>;
}  // namespace at

namespace c10 {
using ::ember::IntArrayRef;
using ::ember::Scalar;
using ::ember::ScalarType;
using ::ember::toString;
using ::ember::elementSize;
template <typename T> using optional = std::optional<T>;
using std::nullopt;
}  // namespace c10

#define TORCH_CHECK(...) EMBER_CHECK(__VA_ARGS__)
#define TORCH_CHECK_VALUE(...) EMBER_CHECK(__VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(...) EMBER_CHECK(__VA_ARGS__)
#define AT_ASSERTM(...) EMBER_CHECK(__VA_ARGS__)
#define AT_ERROR(...) throw ::ember::Error(::ember::detail::str(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  EMBER_DISPATCH_FLOATING_TYPES(TYPE, NAME, __VA_ARGS__)
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) EMBER_DISPATCH_ALL_TYPES(TYPE, NAME, __VA_ARGS__)
