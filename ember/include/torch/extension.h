// <torch/extension.h> for ember: lets simple PyTorch C++ extension sources compile unchanged.
//
// torch::, at:: and c10:: name ember's types and functions (torch::Tensor is ember::Tensor,
// torch::zeros is ember::zeros, torch::kFloat32 is ember::kFloat32, ...); TORCH_CHECK is
// EMBER_CHECK; TORCH_EXTENSION_NAME is the module name ember.utils.cpp_extension passes on the
// command line; TORCH_LIBRARY / TORCH_LIBRARY_FRAGMENT / TORCH_LIBRARY_IMPL register operators
// through ember.library (<ember/library.h>). <torch/library.h>, <torch/all.h>,
// <ATen/Operators.h> and <ATen/ATen.h> are this header too. Only what <ember/extension.h> and
// <ember/library.h> offer is there: sources using other ATen APIs (CUDA, boxed kernels,
// torch::autograd::Function in C++, TensorIterator, ...) will not compile.
#pragma once

#include <ember/extension.h>
#include <ember/library.h>

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
using ::ember::Device;
using ::ember::DeviceType;
using ::ember::kCPU;
using ::ember::kCUDA;
using ::ember::kMeta;
template <typename T> using optional = std::optional<T>;
using std::nullopt;
}  // namespace c10

namespace ember {
namespace detail {
// PyTorch's texts for a failed check without a message and for a failed internal assert
template <typename Exception>
[[noreturn]] inline void torch_check_failed(const char* cond, const std::string& msg) {
  if (!msg.empty()) throw Exception(msg);
  throw Exception(str("Expected ", cond, " to be true, but got false.  (Could this error message "
                      "be improved?  If so, please report an enhancement request to PyTorch.)"));
}
[[noreturn]] inline void internal_assert_failed(const char* cond, const char* file, int line,
                                                const std::string& msg) {
  throw Error(str(cond, " INTERNAL ASSERT FAILED at \"", file, "\":", line,
                  ", please report a bug to PyTorch. ", msg));
}
}  // namespace detail
}  // namespace ember

#define EMBER_TORCH_CHECK_(EXC, cond, ...)                                              \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      ::ember::detail::torch_check_failed<EXC>(#cond, ::ember::detail::str(__VA_ARGS__)); \
    }                                                                                  \
  } while (0)
// RuntimeError, ValueError, TypeError, IndexError, NotImplementedError, as in PyTorch
#define TORCH_CHECK(cond, ...) EMBER_TORCH_CHECK_(::ember::Error, cond, __VA_ARGS__)
#define TORCH_CHECK_VALUE(cond, ...) EMBER_TORCH_CHECK_(::pybind11::value_error, cond, __VA_ARGS__)
#define TORCH_CHECK_TYPE(cond, ...) EMBER_TORCH_CHECK_(::pybind11::type_error, cond, __VA_ARGS__)
#define TORCH_CHECK_INDEX(cond, ...) EMBER_TORCH_CHECK_(::pybind11::index_error, cond, __VA_ARGS__)
#define TORCH_CHECK_NOT_IMPLEMENTED(cond, ...) \
  EMBER_TORCH_CHECK_(::ember::NotImplementedError, cond, __VA_ARGS__)
#define TORCH_INTERNAL_ASSERT(cond, ...)                                                   \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      ::ember::detail::internal_assert_failed(#cond, __FILE__, __LINE__,                   \
                                              ::ember::detail::str(__VA_ARGS__));          \
    }                                                                                      \
  } while (0)
#define AT_ASSERTM(...) EMBER_CHECK(__VA_ARGS__)
#define AT_ERROR(...) throw ::ember::Error(::ember::detail::str(__VA_ARGS__))
#define AT_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...) \
  EMBER_DISPATCH_FLOATING_TYPES(TYPE, NAME, __VA_ARGS__)
#define AT_DISPATCH_ALL_TYPES(TYPE, NAME, ...) EMBER_DISPATCH_ALL_TYPES(TYPE, NAME, __VA_ARGS__)

#define TORCH_LIBRARY(ns, m) EMBER_LIBRARY(ns, m)
#define TORCH_LIBRARY_FRAGMENT(ns, m) EMBER_LIBRARY_FRAGMENT(ns, m)
#define TORCH_LIBRARY_IMPL(ns, k, m) EMBER_LIBRARY_IMPL(ns, k, m)
// PyTorch's compile-time function pointer; a plain one does here
#define TORCH_FN(func) (&func)
