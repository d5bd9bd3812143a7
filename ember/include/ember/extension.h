// <ember/extension.h> -- write ember ops in C++.
//
// ember::Tensor is a handle on a Python ember tensor. At the pybind11 binding boundary it is
// converted to and from ember tensors without copying: data_ptr<T>() points into the tensor's
// NumPy buffer, so writes through it change the ember tensor. Metadata (sizes, strides in
// elements, dtype) is read from that buffer; ops (+, mm, sum, sigmoid, cat, ...) call back into
// ember, so they record autograd history when called under grad mode -- except where no history
// can be recorded (grad mode off, as in an autograd.Function's forward and backward, or no input
// requiring grad): then the common ops on float32/float64 tensors compute on the buffers in C++
// without a call into Python (<ember/fast_ops.h> says which).
//
// Errors: EMBER_CHECK(cond, msg...) throws ember::Error, which reaches Python as RuntimeError;
// any other std::exception becomes a Python exception too (pybind11's translation), and
// data_ptr<T>() with the wrong T raises TypeError. Nothing here aborts the interpreter.
//
// The GIL is held whenever a bound function runs. Pointers from data_ptr() stay valid while the
// tensor is alive and not resized; release the GIL (pybind11::gil_scoped_release) only around
// loops that touch raw memory, never around ember ops.
#pragma once

#ifdef Py_LIMITED_API
// (PyTorch's <torch/library.h> needs no Python; ember's tensors are Python objects)
#error "ember's C++ API calls Python through pybind11, which needs the full Python C API: build without -DPy_LIMITED_API (and without py_limited_api=True)"
#endif

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <ember/fast_ops.h>

#include <array>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

// The module's init function is exported even under -fvisibility=hidden (which ember's builds
// use): a source that writes its own (extension-cpp's empty `PyInit__C`, without
// PyMODINIT_FUNC) still imports. A declaration only; PYBIND11_MODULE defines it the same way.
#ifdef EMBER_EXTENSION_NAME
#define EMBER_MODULE_INIT_CAT_(a, b) a##b
#define EMBER_MODULE_INIT_(name) EMBER_MODULE_INIT_CAT_(PyInit_, name)
extern "C" __attribute__((visibility("default"))) PyObject* EMBER_MODULE_INIT_(EMBER_EXTENSION_NAME)(void);
#endif

namespace ember {
namespace py = pybind11;

// ---- errors ------------------------------------------------------------------------------------

/// The exception EMBER_CHECK throws; Python sees a RuntimeError with its message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Reaches Python as NotImplementedError (TORCH_CHECK_NOT_IMPLEMENTED).
class NotImplementedError : public py::builtin_exception {
 public:
  using py::builtin_exception::builtin_exception;
  void set_error() const override { PyErr_SetString(PyExc_NotImplementedError, what()); }
};

// ---- shapes ------------------------------------------------------------------------------------

/// A list of sizes, strides or dims: a std::vector<int64_t> that prints as [2, 3].
class IntArrayRef : public std::vector<int64_t> {
 public:
  using std::vector<int64_t>::vector;
  IntArrayRef() = default;
  IntArrayRef(const std::vector<int64_t>& v) : std::vector<int64_t>(v) {}
  IntArrayRef(std::vector<int64_t>&& v) : std::vector<int64_t>(std::move(v)) {}
};

inline std::ostream& operator<<(std::ostream& os, const IntArrayRef& v) {
  os << "[";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  return os << "]";
}

// ---- dtypes ------------------------------------------------------------------------------------

/// Element types (values follow PyTorch's c10::ScalarType).
enum class ScalarType : int8_t {
  Byte = 0, Char = 1, Short = 2, Int = 3, Long = 4, Half = 5, Float = 6, Double = 7, Bool = 11,
  Undefined = -1
};

constexpr ScalarType kUInt8 = ScalarType::Byte, kByte = ScalarType::Byte;
constexpr ScalarType kInt8 = ScalarType::Char, kChar = ScalarType::Char;
constexpr ScalarType kInt16 = ScalarType::Short, kShort = ScalarType::Short;
constexpr ScalarType kInt32 = ScalarType::Int, kInt = ScalarType::Int;
constexpr ScalarType kInt64 = ScalarType::Long, kLong = ScalarType::Long;
constexpr ScalarType kFloat16 = ScalarType::Half, kHalf = ScalarType::Half;
constexpr ScalarType kFloat32 = ScalarType::Float, kFloat = ScalarType::Float;
constexpr ScalarType kFloat64 = ScalarType::Double, kDouble = ScalarType::Double;
constexpr ScalarType kBool = ScalarType::Bool;

/// ember's name of a dtype ("float32", ...), as in ``ember.float32``.
inline const char* toString(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: return "uint8";
    case ScalarType::Char: return "int8";
    case ScalarType::Short: return "int16";
    case ScalarType::Int: return "int32";
    case ScalarType::Long: return "int64";
    case ScalarType::Half: return "float16";
    case ScalarType::Float: return "float32";
    case ScalarType::Double: return "float64";
    case ScalarType::Bool: return "bool";
    default: return "undefined";
  }
}

inline std::ostream& operator<<(std::ostream& os, ScalarType t) {
  return os << "ember." << toString(t);
}

inline size_t elementSize(ScalarType t) {
  switch (t) {
    case ScalarType::Byte: case ScalarType::Char: case ScalarType::Bool: return 1;
    case ScalarType::Short: case ScalarType::Half: return 2;
    case ScalarType::Int: case ScalarType::Float: return 4;
    case ScalarType::Long: case ScalarType::Double: return 8;
    default: return 0;
  }
}

inline bool isFloatingType(ScalarType t) {
  return t == kFloat16 || t == kFloat32 || t == kFloat64;
}

/// The ScalarType of a C++ element type (only the types ember has).
template <typename T> struct CppTypeToScalarType;
#define EMBER_SCALAR_TYPE_OF(T, K) \
  template <> struct CppTypeToScalarType<T> { static constexpr ScalarType value = K; };
EMBER_SCALAR_TYPE_OF(float, kFloat32)
EMBER_SCALAR_TYPE_OF(double, kFloat64)
EMBER_SCALAR_TYPE_OF(int64_t, kInt64)
EMBER_SCALAR_TYPE_OF(int32_t, kInt32)
EMBER_SCALAR_TYPE_OF(int16_t, kInt16)
EMBER_SCALAR_TYPE_OF(int8_t, kInt8)
EMBER_SCALAR_TYPE_OF(uint8_t, kUInt8)
EMBER_SCALAR_TYPE_OF(bool, kBool)
#undef EMBER_SCALAR_TYPE_OF

/// Options for factories: ``ember::zeros({2, 3}, ember::TensorOptions().dtype(ember::kFloat64))``
/// or simply ``ember::zeros({2, 3}, ember::kFloat64)``. Without a dtype, ember's default dtype.
class TensorOptions {
 public:
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}  // NOLINT: implicit, like PyTorch's
  TensorOptions dtype(ScalarType t) const { TensorOptions o = *this; o.dtype_ = t; return o; }
  TensorOptions requires_grad(bool r = true) const {
    TensorOptions o = *this; o.requires_grad_ = r; return o;
  }
  std::optional<ScalarType> dtype_opt() const { return dtype_; }
  bool requires_grad_opt() const { return requires_grad_; }

 private:
  std::optional<ScalarType> dtype_;
  bool requires_grad_ = false;
};

inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

// ---- devices -----------------------------------------------------------------------------------

/// Device kinds (values follow PyTorch's c10::DeviceType).
enum class DeviceType : int8_t { CPU = 0, CUDA = 1, Meta = 14 };
constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;
constexpr DeviceType kMeta = DeviceType::Meta;

/// Where a tensor lives: ``t.device().type() == ember::kCPU``, ``t.device().is_cpu()``.
class Device {
 public:
  Device(DeviceType type, int8_t index = -1) : type_(type), index_(index) {}  // NOLINT
  DeviceType type() const { return type_; }
  int8_t index() const { return index_; }
  bool has_index() const { return index_ >= 0; }
  bool is_cpu() const { return type_ == kCPU; }
  bool is_cuda() const { return type_ == kCUDA; }
  bool is_meta() const { return type_ == kMeta; }
  bool operator==(const Device& o) const { return type_ == o.type_ && index_ == o.index_; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  /// "cpu", "cuda:0", ...
  std::string str() const {
    std::string s = type_ == kCPU ? "cpu" : type_ == kCUDA ? "cuda" : "meta";
    return has_index() ? s + ":" + std::to_string(index_) : s;
  }

 private:
  DeviceType type_;
  int8_t index_;
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }
inline std::ostream& operator<<(std::ostream& os, DeviceType t) { return os << Device(t).str(); }

// ---- scalars -----------------------------------------------------------------------------------

/// A Python number on the C++ side (int, float or bool).
class Scalar {
 public:
  Scalar() = default;
  template <typename T, std::enable_if_t<std::is_integral<T>::value &&
                                         !std::is_same<T, bool>::value, int> = 0>
  Scalar(T v) : i_(static_cast<int64_t>(v)), kind_(Int) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_floating_point<T>::value, int> = 0>
  Scalar(T v) : d_(static_cast<double>(v)), kind_(Double) {}  // NOLINT
  Scalar(bool v) : i_(v), kind_(Bool) {}  // NOLINT

  bool isFloatingPoint() const { return kind_ == Double; }
  bool isIntegral(bool include_bool = false) const {
    return kind_ == Int || (include_bool && kind_ == Bool);
  }
  bool isBoolean() const { return kind_ == Bool; }
  double toDouble() const { return kind_ == Double ? d_ : static_cast<double>(i_); }
  float toFloat() const { return static_cast<float>(toDouble()); }
  int64_t toLong() const { return kind_ == Double ? static_cast<int64_t>(d_) : i_; }
  int toInt() const { return static_cast<int>(toLong()); }
  bool toBool() const { return kind_ == Double ? d_ != 0 : i_ != 0; }
  template <typename T> T to() const {
    if constexpr (std::is_floating_point<T>::value) return static_cast<T>(toDouble());
    else return static_cast<T>(toLong());
  }
  py::object to_py() const {
    if (kind_ == Double) return py::float_(d_);
    if (kind_ == Bool) return py::bool_(i_ != 0);
    return py::int_(i_);
  }

 private:
  double d_ = 0;
  int64_t i_ = 0;
  enum Kind { Int, Double, Bool } kind_ = Int;
};

class Tensor;

// ---- plumbing to Python ------------------------------------------------------------------------

namespace detail {

template <typename... Args>
inline std::string str(const Args&... args) {
  std::ostringstream os;
  (void)std::initializer_list<int>{0, ((void)(os << args), 0)...};
  return os.str();
}

[[noreturn]] inline void check_failed(const char* cond, const char* file, int line,
                                      const std::string& msg) {
  if (msg.empty()) {
    throw Error(str("Expected ", cond, " to be true, but got false. (", file, ":", line, ")"));
  }
  throw Error(msg);
}

// Imported once per extension and never released (safe at interpreter exit). The check is
// repeated after the import because the import may release the GIL.
inline py::handle cached(PyObject*& slot, const char* path) {
  if (!slot) {
    py::object o = py::module_::import("ember");
    std::string p(path);
    size_t pos = 0;
    while (!p.empty() && pos != std::string::npos) {
      size_t next = p.find('.', pos);
      o = o.attr(py::str(p.substr(pos, next == std::string::npos ? std::string::npos
                                                                  : next - pos)));
      pos = next == std::string::npos ? next : next + 1;
    }
    if (!slot) slot = o.release().ptr();
  }
  return py::handle(slot);
}

/// ``ember`` (path "") or an attribute of it ("Tensor", "nn.functional", ...).
inline py::handle ember_attr(const char* path) {
  static PyObject* module = nullptr;
  static PyObject* tensor = nullptr;
  static PyObject* functional = nullptr;
  std::string p(path);
  if (p.empty()) return cached(module, "");
  if (p == "Tensor") return cached(tensor, "Tensor");
  if (p == "nn.functional") return cached(functional, "nn.functional");
  throw std::logic_error("ember_attr: unknown path");
}

inline bool is_tensor(py::handle h) {
  static PyObject* tensor_type = ember_attr("Tensor").ptr();
  if (Py_TYPE(h.ptr()) == reinterpret_cast<PyTypeObject*>(tensor_type)) return true;
  int r = PyObject_IsInstance(h.ptr(), tensor_type);
  if (r < 0) throw py::error_already_set();
  return r == 1;
}

inline ScalarType scalar_type_of(const py::dtype& dt) {
  char kind = dt.kind();
  auto size = dt.itemsize();
  if (kind == 'f') return size == 2 ? kFloat16 : size == 4 ? kFloat32 : size == 8 ? kFloat64
                                                                                  : ScalarType::Undefined;
  if (kind == 'i') return size == 1 ? kInt8 : size == 2 ? kInt16 : size == 4 ? kInt32
                          : size == 8 ? kInt64 : ScalarType::Undefined;
  if (kind == 'u' && size == 1) return kUInt8;
  if (kind == 'b') return kBool;
  return ScalarType::Undefined;
}

inline py::object dtype_object(ScalarType t) {
  if (t == ScalarType::Undefined) throw py::type_error("undefined ember dtype");
  return py::reinterpret_borrow<py::object>(ember_attr("")).attr(toString(t));
}

inline py::object dtype_object(const std::optional<ScalarType>& t) {
  return t ? dtype_object(*t) : py::object(py::none());
}

inline ScalarType scalar_type_from_object(py::handle dtype) {
  std::string name = py::str(dtype.attr("name"));
  for (ScalarType t : {kUInt8, kInt8, kInt16, kInt32, kInt64, kFloat16, kFloat32, kFloat64, kBool})
    if (name == toString(t)) return t;
  throw py::type_error("not an ember dtype: " + name);
}

inline int64_t wrap_dim(int64_t d, int64_t ndim) {
  int64_t lo = ndim > 0 ? -ndim : -1, hi = ndim > 0 ? ndim - 1 : 0;
  if (d < lo || d > hi) {
    throw py::index_error(str("Dimension out of range (expected to be in range of [", lo, ", ",
                              hi, "], but got ", d, ")"));
  }
  return d < 0 ? d + (ndim > 0 ? ndim : 1) : d;
}

// Arguments on their way to ember functions.
py::object to_py(const Tensor& t);
inline py::object to_py(const Scalar& s) { return s.to_py(); }
inline py::object to_py(ScalarType t) { return dtype_object(t); }
inline py::object to_py(const IntArrayRef& v) { return py::tuple(py::cast(static_cast<const std::vector<int64_t>&>(v))); }
py::object to_py(const std::vector<Tensor>& v);
inline py::object to_py(const py::object& o) { return o; }
inline py::object to_py(const char* s) { return py::str(s); }
inline py::object to_py(bool b) { return py::bool_(b); }
inline py::object to_py(double d) { return py::float_(d); }
inline py::object to_py(float d) { return py::float_(d); }
inline py::object to_py(int i) { return py::int_(i); }
inline py::object to_py(long i) { return py::int_(i); }
inline py::object to_py(long long i) { return py::int_(i); }
inline py::object to_py(std::nullopt_t) { return py::none(); }

}  // namespace detail

#define EMBER_CHECK(cond, ...)                                                             \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      ::ember::detail::check_failed(#cond, __FILE__, __LINE__,                             \
                                    ::ember::detail::str(__VA_ARGS__));                    \
    }                                                                                      \
  } while (0)

// ---- accessors ---------------------------------------------------------------------------------

/// ``t.accessor<float, 2>()[i][j]``: strided element access without bounds checks.
template <typename T, size_t N>
class TensorAccessor {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  TensorAccessor<T, N - 1> operator[](int64_t i) const {
    return TensorAccessor<T, N - 1>(data_ + strides_[0] * i, sizes_ + 1, strides_ + 1);
  }
  int64_t size(int64_t i) const { return sizes_[i]; }
  int64_t stride(int64_t i) const { return strides_[i]; }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

template <typename T>
class TensorAccessor<T, 1> {
 public:
  TensorAccessor(T* data, const int64_t* sizes, const int64_t* strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  T& operator[](int64_t i) const { return data_[strides_[0] * i]; }
  int64_t size(int64_t i) const { return sizes_[i]; }
  int64_t stride(int64_t i) const { return strides_[i]; }
  T* data() const { return data_; }

 private:
  T* data_;
  const int64_t* sizes_;
  const int64_t* strides_;
};

/// What Tensor::accessor returns: owns the sizes and strides its sub-accessors point into.
template <typename T, size_t N>
class OwningAccessor {
 public:
  OwningAccessor(T* data, std::array<int64_t, N> sizes, std::array<int64_t, N> strides)
      : data_(data), sizes_(sizes), strides_(strides) {}
  decltype(auto) operator[](int64_t i) const {
    return TensorAccessor<T, N>(data_, sizes_.data(), strides_.data())[i];
  }
  int64_t size(int64_t i) const { return sizes_[i]; }
  int64_t stride(int64_t i) const { return strides_[i]; }
  T* data() const { return data_; }

 private:
  T* data_;
  std::array<int64_t, N> sizes_, strides_;
};

// ---- Tensor ------------------------------------------------------------------------------------

/// A reference to a Python ember tensor (copying the handle never copies data).
class Tensor {
 public:
  Tensor() = default;  // undefined; converts to None
  explicit Tensor(py::object obj) : obj_(std::move(obj)) {}

  bool defined() const { return obj_ && !obj_.is_none(); }
  /// The Python ember tensor.
  const py::object& obj() const { return obj_; }

  // -- metadata (read from the NumPy buffer; for CUDA data, from the Python tensor) --
  /// The tensor's NumPy array (shares memory); Error for a CUDA tensor, whose data is
  /// device memory (its metadata and data_ptr() work, read through the Python tensor).
  py::array array() const {
    py::object data = data_object();
    if (on_device(data)) {
      throw Error("array(): this tensor is on " + std::string(py::str(obj_.attr("device"))) +
                  ": its data is device memory, not a NumPy array (sizes(), strides(), dtype() "
                  "and data_ptr(), a device address, still work)");
    }
    if (!py::isinstance<py::array>(data)) {
      throw Error("ember's C++ tensors are host (CPU) or CUDA tensors, but this one is on " +
                  std::string(py::str(obj_.attr("device"))));
    }
    return py::reinterpret_steal<py::array>(data.release());
  }
  int64_t dim() const {
    py::object data = data_object();
    if (on_device(data)) return static_cast<int64_t>(py::len(data.attr("shape")));
    return static_cast<int64_t>(as_array(data).ndim());
  }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const {
    py::object data = data_object();
    if (on_device(data)) return data.attr("size").cast<int64_t>();
    return static_cast<int64_t>(as_array(data).size());
  }
  /// The sizes, held by this handle until its next sizes() call, so that (as with PyTorch's
  /// view of the tensor's sizes) ``t.sizes().begin()`` and ``t.sizes().end()`` bound one range.
  const IntArrayRef& sizes() const {
    py::object data = data_object();
    if (on_device(data)) {
      auto shape = data.attr("shape").cast<std::vector<int64_t>>();
      sizes_.assign(shape.begin(), shape.end());  // in place: an earlier begin() stays valid
    } else {
      py::array a = as_array(data);
      sizes_.assign(a.shape(), a.shape() + a.ndim());
    }
    return sizes_;
  }
  int64_t size(int64_t d) const {
    py::object data = data_object();
    if (!on_device(data)) {
      py::array a = as_array(data);
      return a.shape(detail::wrap_dim(d, a.ndim()));
    }
    IntArrayRef s = sizes();
    return s[detail::wrap_dim(d, static_cast<int64_t>(s.size()))];
  }
  /// Strides in elements (the array's byte strides divided by the element size); held as
  /// sizes() are.
  const IntArrayRef& strides() const {
    py::object data = data_object();
    if (on_device(data)) {
      auto bytes = data.attr("strides").cast<std::vector<int64_t>>();
      int64_t item = data.attr("itemsize").cast<int64_t>();
      strides_.resize(bytes.size());
      for (size_t i = 0; i < bytes.size(); ++i) strides_[i] = bytes[i] / item;
      return strides_;
    }
    py::array a = as_array(data);
    strides_.resize(a.ndim());
    for (py::ssize_t i = 0; i < a.ndim(); ++i) strides_[i] = a.strides(i) / a.itemsize();
    return strides_;
  }
  int64_t stride(int64_t d) const {
    py::object data = data_object();
    if (!on_device(data)) {
      py::array a = as_array(data);
      return a.strides(detail::wrap_dim(d, a.ndim())) / a.itemsize();
    }
    IntArrayRef s = strides();
    return s[detail::wrap_dim(d, static_cast<int64_t>(s.size()))];
  }
  ScalarType scalar_type() const { return detail::scalar_type_of(dtype_of(data_object())); }
  ScalarType dtype() const { return scalar_type(); }
  ScalarType type() const { return scalar_type(); }  // for AT_DISPATCH_*(t.type(), ...)
  int64_t element_size() const { return static_cast<int64_t>(dtype_of(data_object()).itemsize()); }
  int64_t itemsize() const { return element_size(); }
  bool is_contiguous() const {
    py::object data = data_object();
    if (on_device(data)) return obj_.attr("is_contiguous")().cast<bool>();
    return (as_array(data).flags() & py::array::c_style) != 0;
  }
  bool is_floating_point() const { return isFloatingType(scalar_type()); }
  bool requires_grad() const { return obj_.attr("requires_grad").cast<bool>(); }
  /// The tensor's device, read from the Python tensor's ``device``.
  Device device() const {
    check_defined("device");
    py::object d = obj_.attr("device");
    std::string type = py::str(d.attr("type"));
    py::object index = d.attr("index");
    int8_t i = index.is_none() ? -1 : static_cast<int8_t>(index.cast<int>());
    if (type == "cpu") return Device(kCPU, i);
    if (type == "cuda") return Device(kCUDA, i);
    if (type == "meta") return Device(kMeta, i);
    throw Error("device(): ember's C++ API has no device type '" + type + "'");
  }
  bool is_cpu() const { return device().is_cpu(); }
  bool is_cuda() const { return device().is_cuda(); }
  bool is_meta() const { return device().is_meta(); }
  TensorOptions options() const { return TensorOptions(scalar_type()); }
  Tensor grad() const { return Tensor(obj_.attr("grad")); }

  // -- data --
  /// Pointer to the first element; TypeError when T is not the tensor's element type.
  /// (For a CUDA tensor, a device address: hand it to kernels, never dereference it here.)
  template <typename T>
  T* data_ptr() const {
    py::object data = data_object();
    ScalarType want = CppTypeToScalarType<std::remove_cv_t<T>>::value;
    ScalarType have = detail::scalar_type_of(dtype_of(data));
    if (want != have) {
      throw py::type_error(detail::str("data_ptr<", toString(want), ">() called on a tensor of dtype ",
                                       have, "; expected dtype ", want));
    }
    return static_cast<T*>(address_of(data));
  }
  void* data_ptr() const { return address_of(data_object()); }
  template <typename T> T* mutable_data_ptr() const { return data_ptr<T>(); }
  template <typename T> const T* const_data_ptr() const { return data_ptr<T>(); }
  template <typename T, size_t N>
  OwningAccessor<T, N> accessor() const {
    py::array a = array();  // host tensors only (as PyTorch's accessor)
    EMBER_CHECK(a.ndim() == static_cast<py::ssize_t>(N), "accessor<", N, "> used on a ",
                a.ndim(), "-dimensional tensor");
    T* p = data_ptr<T>();
    std::array<int64_t, N> sz{}, st{};
    for (size_t i = 0; i < N; ++i) {
      sz[i] = a.shape(i);
      st[i] = a.strides(i) / a.itemsize();
    }
    return OwningAccessor<T, N>(p, sz, st);
  }
  template <typename T> T item() const { return obj_.attr("item")().cast<T>(); }

  // -- ops (dispatched to ember; differentiable under grad mode) --
  template <typename... Args>
  Tensor call(const char* method, const Args&... args) const {
    check_defined(method);
    return Tensor(obj_.attr(method)(detail::to_py(args)...));
  }
  Tensor add(const Tensor& o, const Scalar& alpha = 1) const {
    check_defined("add");
    if (alpha.toDouble() == 1.0)
      if (py::object r = detail::fast::binary(obj_, o.obj(), detail::fast::Binary::Add)) return Tensor(r);
    return Tensor(obj_.attr("add")(o.obj(), py::arg("alpha") = alpha.to_py()));
  }
  Tensor add(const Scalar& o) const { return fast_scalar(o, detail::fast::Binary::Add, "add"); }
  Tensor sub(const Tensor& o, const Scalar& alpha = 1) const {
    check_defined("sub");
    if (alpha.toDouble() == 1.0)
      if (py::object r = detail::fast::binary(obj_, o.obj(), detail::fast::Binary::Sub)) return Tensor(r);
    return Tensor(obj_.attr("sub")(o.obj(), py::arg("alpha") = alpha.to_py()));
  }
  Tensor sub(const Scalar& o) const { return fast_scalar(o, detail::fast::Binary::Sub, "sub"); }
  Tensor mul(const Tensor& o) const { return fast_binary(o, detail::fast::Binary::Mul, "mul"); }
  Tensor mul(const Scalar& o) const { return fast_scalar(o, detail::fast::Binary::Mul, "mul"); }
  Tensor div(const Tensor& o) const { return fast_binary(o, detail::fast::Binary::Div, "div"); }
  Tensor div(const Scalar& o) const { return fast_scalar(o, detail::fast::Binary::Div, "div"); }
  Tensor& add_(const Tensor& o) { call("add_", o); return *this; }
  Tensor& add_(const Scalar& o) { call("add_", o); return *this; }
  Tensor& sub_(const Tensor& o) { call("sub_", o); return *this; }
  Tensor& sub_(const Scalar& o) { call("sub_", o); return *this; }
  Tensor& mul_(const Tensor& o) { call("mul_", o); return *this; }
  Tensor& mul_(const Scalar& o) { call("mul_", o); return *this; }
  Tensor& div_(const Tensor& o) { call("div_", o); return *this; }
  Tensor& div_(const Scalar& o) { call("div_", o); return *this; }
  Tensor& fill_(const Scalar& v) { call("fill_", v); return *this; }
  Tensor& zero_() { call("zero_"); return *this; }
  Tensor& copy_(const Tensor& src) { call("copy_", src); return *this; }
  Tensor neg() const { return fast_unary(detail::fast::Unary::Neg, "neg"); }
  Tensor exp() const { return fast_unary(detail::fast::Unary::Exp, "exp"); }
  Tensor log() const { return fast_unary(detail::fast::Unary::Log, "log"); }
  Tensor sqrt() const { return fast_unary(detail::fast::Unary::Sqrt, "sqrt"); }
  Tensor abs() const { return fast_unary(detail::fast::Unary::Abs, "abs"); }
  Tensor sigmoid() const { return fast_unary(detail::fast::Unary::Sigmoid, "sigmoid"); }
  Tensor tanh() const { return fast_unary(detail::fast::Unary::Tanh, "tanh"); }
  Tensor relu() const { return fast_unary(detail::fast::Unary::Relu, "relu"); }
  Tensor pow(const Scalar& e) const {
    check_defined("pow");
    if (py::object r = detail::fast::pow_scalar(obj_, e.toDouble())) return Tensor(r);
    return call("pow", e);
  }
  Tensor pow(const Tensor& e) const { return call("pow", e); }
  Tensor clamp(const Scalar& lo, const Scalar& hi) const { return call("clamp", lo, hi); }
  Tensor clamp_min(const Scalar& lo) const { return call("clamp", lo); }
  Tensor sum() const {
    check_defined("sum");
    if (py::object r = detail::fast::sum(obj_, true, 0, false)) return Tensor(r);
    return call("sum");
  }
  Tensor sum(int64_t d, bool keepdim = false) const {
    check_defined("sum");
    if (py::object r = detail::fast::sum(obj_, false, d, keepdim)) return Tensor(r);
    return call("sum", d, keepdim);
  }
  Tensor sum(const IntArrayRef& dims, bool keepdim = false) const { return call("sum", dims, keepdim); }
  Tensor mean() const { return call("mean"); }
  Tensor mean(int64_t d, bool keepdim = false) const { return call("mean", d, keepdim); }
  Tensor max() const { return call("max"); }
  Tensor min() const { return call("min"); }
  Tensor mm(const Tensor& o) const {
    check_defined("mm");
    if (py::object r = detail::fast::mm(obj_, o.obj())) return Tensor(r);
    return call("mm", o);
  }
  Tensor matmul(const Tensor& o) const {  // the fast path takes 2-D @ 2-D only
    check_defined("matmul");
    if (py::object r = detail::fast::mm(obj_, o.obj())) return Tensor(r);
    return call("matmul", o);
  }
  Tensor t() const {
    check_defined("t");
    if (py::object r = detail::fast::transpose(obj_, 0, 1, true)) return Tensor(r);
    return call("t");
  }
  Tensor transpose(int64_t d0, int64_t d1) const {
    check_defined("transpose");
    if (py::object r = detail::fast::transpose(obj_, d0, d1, false)) return Tensor(r);
    return call("transpose", d0, d1);
  }
  Tensor permute(const IntArrayRef& dims) const { return call("permute", dims); }
  Tensor view(const IntArrayRef& shape) const { return call("view", shape); }
  Tensor reshape(const IntArrayRef& shape) const { return call("reshape", shape); }
  Tensor expand(const IntArrayRef& shape) const { return call("expand", shape); }
  Tensor expand_as(const Tensor& o) const { return call("expand_as", o); }
  Tensor unsqueeze(int64_t d) const { return call("unsqueeze", d); }
  Tensor squeeze() const { return call("squeeze"); }
  Tensor squeeze(int64_t d) const { return call("squeeze", d); }
  Tensor flatten() const { return call("flatten"); }
  Tensor narrow(int64_t d, int64_t start, int64_t length) const {
    check_defined("narrow");
    if (py::object r = fast_narrow(d, start, length)) return Tensor(r);
    return call("narrow", d, start, length);
  }
  Tensor select(int64_t d, int64_t index) const { return call("select", d, index); }
  /// ``t[:, start:end:step]`` along dim ``d``.
  Tensor slice(int64_t d = 0, std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt, int64_t step = 1) const {
    check_defined("slice");
    if (step == 1) {  // a narrow: the fast path (replayed as narrow)
      const int64_t lo = start.value_or(0);
      const int64_t hi = end.value_or(std::numeric_limits<int64_t>::max());
      if (py::object r = detail::fast::slice(obj_, d, lo, hi)) return Tensor(r);
    }
    int64_t nd = detail::wrap_dim(d, dim());
    auto opt = [](const std::optional<int64_t>& v) -> py::object {
      if (!v || *v == std::numeric_limits<int64_t>::max()) return py::none();
      return py::int_(*v);
    };
    py::tuple index(nd + 1);
    for (int64_t i = 0; i < nd; ++i) index[i] = py::slice(py::none(), py::none(), py::none());
    index[nd] = py::reinterpret_steal<py::object>(
        PySlice_New(opt(start).ptr(), opt(end).ptr(), py::int_(step).ptr()));
    return Tensor(obj_[index]);
  }
  Tensor operator[](int64_t i) const { return select(0, i); }
  std::vector<Tensor> chunk(int64_t chunks, int64_t d = 0) const {
    check_defined("chunk");
    const int64_t nd = dim();
    if (chunks > 0 && d >= -nd && d < nd && nd > 0) {  // narrow views, as PyTorch's chunk
      const int64_t n = size(d), step = (n + chunks - 1) / chunks;
      std::vector<Tensor> out;
      for (int64_t lo = 0; step > 0 && lo < n; lo += step) {
        py::object r = fast_narrow(d, lo, std::min(step, n - lo));
        if (!r) break;
        out.emplace_back(std::move(r));
      }
      if (n > 0 && !out.empty() && static_cast<int64_t>(out.size()) == (n + step - 1) / step)
        return out;
    }
    return unpack(obj_.attr("chunk")(chunks, d));
  }
  std::vector<Tensor> split(int64_t size, int64_t d = 0) const {
    return unpack(obj_.attr("split")(size, d));
  }
  Tensor contiguous() const {
    if (is_contiguous()) return *this;
    if (py::object r = detail::fast::contiguous(obj_)) return Tensor(r);
    return call("contiguous");
  }
  Tensor clone() const { return call("clone"); }
  Tensor detach() const { return call("detach"); }
  Tensor& requires_grad_(bool r = true) { call("requires_grad_", r); return *this; }
  Tensor to(ScalarType t) const {
    check_defined("to");
    if (t == kFloat32 || t == kFloat64)
      if (py::object r = detail::fast::convert(obj_, t == kFloat32 ? py::detail::npy_api::NPY_FLOAT_
                                                                   : py::detail::npy_api::NPY_DOUBLE_))
        return Tensor(r);
    return call("to", t);
  }
  Tensor toType(ScalarType t) const { return to(t); }
  Tensor type_as(const Tensor& o) const {
    check_defined("type_as");
    if (o.defined()) {
      const ScalarType t = o.scalar_type();
      if (t == kFloat32 || t == kFloat64) return to(t);
    }
    return call("type_as", o);
  }

  static std::vector<Tensor> unpack(const py::object& seq) {
    std::vector<Tensor> out;
    for (py::handle h : seq) out.emplace_back(py::reinterpret_borrow<py::object>(h));
    return out;
  }

 private:
  // the fast path (<ember/fast_ops.h>) when it applies, else ember's method ``name``
  py::object fast_narrow(int64_t d, int64_t start, int64_t length) const {
    const int64_t nd = dim();
    if (nd == 0 || d < -nd || d >= nd) return py::object();
    const int64_t n = size(d);
    if (start < 0) start += n;
    if (start < 0 || length < 0 || start > n - length) return py::object();  // ember's errors
    return detail::fast::slice(obj_, d, start, start + length);
  }
  Tensor fast_unary(detail::fast::Unary f, const char* name) const {
    check_defined(name);
    if (py::object r = detail::fast::unary(obj_, f)) return Tensor(r);
    return call(name);
  }
  Tensor fast_binary(const Tensor& o, detail::fast::Binary f, const char* name) const {
    check_defined(name);
    if (py::object r = detail::fast::binary(obj_, o.obj(), f)) return Tensor(r);
    return call(name, o);
  }
  Tensor fast_scalar(const Scalar& o, detail::fast::Binary f, const char* name) const {
    check_defined(name);
    if (py::object r = detail::fast::with_scalar(obj_, o.toDouble(), f, false)) return Tensor(r);
    return call(name, o);
  }
  /// The Python tensor's ``_data`` (a NumPy array, a CUDA module's array, a meta array).
  py::object data_object() const {
    check_defined("data");
    static PyObject* name = PyUnicode_InternFromString("_data");  // looked up on every call
    PyObject* data = PyObject_GetAttr(obj_.ptr(), name);
    if (!data) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(data);
  }
  /// Whether ``data`` is device memory: not a NumPy array (the common case, one type check)
  /// and the tensor is on a CUDA device (CuPy's arrays, or a stand-in's).
  bool on_device(const py::object& data) const {
    if (Py_TYPE(data.ptr()) == reinterpret_cast<PyTypeObject*>(
            py::detail::npy_api::get().PyArray_Type_)) {
      return false;
    }
    return std::string(py::str(obj_.attr("device").attr("type"))) == "cuda";
  }
  static py::array as_array(py::object data) {
    if (!py::isinstance<py::array>(data)) throw Error("this tensor's data is not a NumPy array");
    return py::reinterpret_steal<py::array>(data.release());
  }
  static py::dtype dtype_of(const py::object& data) {
    return py::reinterpret_borrow<py::dtype>(data.attr("dtype"));  // NumPy's and CuPy's alike
  }
  /// The first element's address: the NumPy buffer's, or (CUDA) the Python tensor's data_ptr().
  void* address_of(const py::object& data) const {
    if (on_device(data)) {
      return reinterpret_cast<void*>(obj_.attr("data_ptr")().cast<uintptr_t>());
    }
    return const_cast<void*>(as_array(data).data());
  }
  void check_defined(const char* what) const {
    if (!defined()) throw Error(std::string(what) + "() called on an undefined tensor");
  }
  py::object obj_;
  mutable IntArrayRef sizes_, strides_;  // what sizes() / strides() last returned
};

inline std::ostream& operator<<(std::ostream& os, const Tensor& t) {
  return os << (t.defined() ? std::string(py::str(t.obj())) : std::string("[ undefined ]"));
}

namespace detail {
inline py::object to_py(const Tensor& t) {
  return t.defined() ? t.obj() : py::object(py::none());
}
inline py::object to_py(const std::vector<Tensor>& v) {
  py::list l;
  for (const Tensor& t : v) l.append(to_py(t));
  return l;
}
inline py::object binary(int op, const Tensor& a, py::object b, bool reflected = false) {
  py::object x = to_py(a);
  PyObject* l = reflected ? b.ptr() : x.ptr();
  PyObject* r = reflected ? x.ptr() : b.ptr();
  PyObject* res = nullptr;
  switch (op) {
    case '+': res = PyNumber_Add(l, r); break;
    case '-': res = PyNumber_Subtract(l, r); break;
    case '*': res = PyNumber_Multiply(l, r); break;
    case '/': res = PyNumber_TrueDivide(l, r); break;
    default: res = PyObject_RichCompare(l, r, op - 1000); break;
  }
  if (!res) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(res);
}
}  // namespace detail

// operators: tensor (+) tensor, tensor (+) scalar, scalar (+) tensor
namespace detail {
// The fast path of a comparison (a bool tensor), or a null object.
inline py::object fast_comparison(int op, const Tensor& a, const Tensor* b, const Scalar* s,
                                  bool reflected) {
  fast::Compare c;
  switch (op - 1000) {
    case Py_LT: c = fast::Compare::LT; break;
    case Py_LE: c = fast::Compare::LE; break;
    case Py_GT: c = fast::Compare::GT; break;
    case Py_GE: c = fast::Compare::GE; break;
    case Py_EQ: c = fast::Compare::EQ; break;
    case Py_NE: c = fast::Compare::NE; break;
    default: return py::object();
  }
  if (!a.defined() || (b && !b->defined())) return py::object();
  if (b) return fast::compare(a.obj(), &b->obj(), 0.0, c, false);
  return fast::compare(a.obj(), nullptr, s->toDouble(), c, reflected);
}
// The fast path of an arithmetic operator (<ember/fast_ops.h>), or a null object.
inline py::object fast_operator(int op, const Tensor& a, const Tensor* b, const Scalar* s,
                                bool reflected) {
  fast::Binary f;
  switch (op) {
    case '+': f = fast::Binary::Add; break;
    case '-': f = fast::Binary::Sub; break;
    case '*': f = fast::Binary::Mul; break;
    case '/': f = fast::Binary::Div; break;
    default: return fast_comparison(op, a, b, s, reflected);
  }
  if (!a.defined()) return py::object();
  if (b) return b->defined() ? fast::binary(a.obj(), b->obj(), f) : py::object();
  return fast::with_scalar(a.obj(), s->toDouble(), f, reflected);
}
}  // namespace detail

#define EMBER_BINARY_OP(OP, CODE)                                                             \
  inline Tensor operator OP(const Tensor& a, const Tensor& b) {                              \
    if (py::object r = detail::fast_operator(CODE, a, &b, nullptr, false)) return Tensor(r); \
    return Tensor(detail::binary(CODE, a, detail::to_py(b)));                                \
  }                                                                                          \
  inline Tensor operator OP(const Tensor& a, const Scalar& b) {                              \
    if (py::object r = detail::fast_operator(CODE, a, nullptr, &b, false)) return Tensor(r); \
    return Tensor(detail::binary(CODE, a, b.to_py()));                                       \
  }                                                                                          \
  inline Tensor operator OP(const Scalar& a, const Tensor& b) {                              \
    if (py::object r = detail::fast_operator(CODE, b, nullptr, &a, true)) return Tensor(r);  \
    return Tensor(detail::binary(CODE, b, a.to_py(), true));                                 \
  }
EMBER_BINARY_OP(+, '+')
EMBER_BINARY_OP(-, '-')
EMBER_BINARY_OP(*, '*')
EMBER_BINARY_OP(/, '/')
EMBER_BINARY_OP(<, 1000 + Py_LT)
EMBER_BINARY_OP(<=, 1000 + Py_LE)
EMBER_BINARY_OP(>, 1000 + Py_GT)
EMBER_BINARY_OP(>=, 1000 + Py_GE)
EMBER_BINARY_OP(==, 1000 + Py_EQ)
EMBER_BINARY_OP(!=, 1000 + Py_NE)
#undef EMBER_BINARY_OP

inline Tensor operator-(const Tensor& a) { return a.neg(); }
inline Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
inline Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
inline Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
inline Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
inline Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
inline Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
inline Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
inline Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

// ---- functions ---------------------------------------------------------------------------------

namespace detail {
template <typename... Args>
inline Tensor call_fn(const char* name, const Args&... args) {
  return Tensor(ember_attr("").attr(name)(to_py(args)...));
}
inline py::object factory_kwargs(const TensorOptions& o) {
  return py::dict(py::arg("dtype") = dtype_object(o.dtype_opt()),
                  py::arg("requires_grad") = o.requires_grad_opt());
}
inline Tensor factory(const char* name, py::object first, const TensorOptions& o) {
  py::dict kw = factory_kwargs(o);
  return Tensor(ember_attr("").attr(name)(first, **kw));
}
inline Tensor like(const char* name, const Tensor& t, const std::optional<TensorOptions>& o) {
  py::dict kw;
  if (o) {
    if (o->dtype_opt()) kw["dtype"] = dtype_object(o->dtype_opt());
    kw["requires_grad"] = o->requires_grad_opt();
  }
  return Tensor(ember_attr("").attr(name)(to_py(t), **kw));
}
}  // namespace detail

namespace detail {
// The fast path of a factory given a float32/float64 dtype and no requires_grad, or null.
inline py::object fast_factory(const IntArrayRef& size, const TensorOptions& o, fast::Fill fill) {
  if (!o.dtype_opt() || o.requires_grad_opt()) return py::object();  // default dtype: ember's
  const ScalarType t = *o.dtype_opt();
  if (t != kFloat32 && t != kFloat64) return py::object();
  return fast::factory(size, t == kFloat32 ? py::detail::npy_api::NPY_FLOAT_
                                           : py::detail::npy_api::NPY_DOUBLE_, fill);
}
inline Tensor fast_like(const char* name, const Tensor& t, const std::optional<TensorOptions>& o,
                        fast::Fill fill) {
  if (!o && t.defined())
    if (py::object r = fast::like(t.obj(), fill)) return Tensor(r);
  return like(name, t, o);
}
}  // namespace detail

inline Tensor empty(const IntArrayRef& size, const TensorOptions& o = {}) {
  if (py::object r = detail::fast_factory(size, o, detail::fast::Fill::None)) return Tensor(r);
  return detail::factory("empty", detail::to_py(size), o);
}
inline Tensor zeros(const IntArrayRef& size, const TensorOptions& o = {}) {
  if (py::object r = detail::fast_factory(size, o, detail::fast::Fill::Zeros)) return Tensor(r);
  return detail::factory("zeros", detail::to_py(size), o);
}
inline Tensor ones(const IntArrayRef& size, const TensorOptions& o = {}) {
  if (py::object r = detail::fast_factory(size, o, detail::fast::Fill::Ones)) return Tensor(r);
  return detail::factory("ones", detail::to_py(size), o);
}
inline Tensor full(const IntArrayRef& size, const Scalar& value, const TensorOptions& o = {}) {
  py::dict kw = detail::factory_kwargs(o);
  return Tensor(detail::ember_attr("").attr("full")(detail::to_py(size), value.to_py(), **kw));
}
inline Tensor empty_like(const Tensor& t, std::optional<TensorOptions> o = std::nullopt) {
  return detail::fast_like("empty_like", t, o, detail::fast::Fill::None);
}
inline Tensor zeros_like(const Tensor& t, std::optional<TensorOptions> o = std::nullopt) {
  return detail::fast_like("zeros_like", t, o, detail::fast::Fill::Zeros);
}
inline Tensor ones_like(const Tensor& t, std::optional<TensorOptions> o = std::nullopt) {
  return detail::fast_like("ones_like", t, o, detail::fast::Fill::Ones);
}

inline Tensor add(const Tensor& a, const Tensor& b) { return a + b; }
inline Tensor add(const Tensor& a, const Scalar& b) { return a + b; }
inline Tensor sub(const Tensor& a, const Tensor& b) { return a - b; }
inline Tensor sub(const Tensor& a, const Scalar& b) { return a - b; }
inline Tensor mul(const Tensor& a, const Tensor& b) { return a * b; }
inline Tensor mul(const Tensor& a, const Scalar& b) { return a * b; }
inline Tensor div(const Tensor& a, const Tensor& b) { return a / b; }
inline Tensor div(const Tensor& a, const Scalar& b) { return a / b; }
inline Tensor mm(const Tensor& a, const Tensor& b) {
  if (a.defined() && b.defined())
    if (py::object r = detail::fast::mm(a.obj(), b.obj())) return Tensor(r);
  return detail::call_fn("mm", a, b);
}
inline Tensor matmul(const Tensor& a, const Tensor& b) {
  if (a.defined() && b.defined())
    if (py::object r = detail::fast::mm(a.obj(), b.obj())) return Tensor(r);
  return detail::call_fn("matmul", a, b);
}
inline Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b,
                    const Scalar& beta = 1, const Scalar& alpha = 1) {
  if (bias.defined() && a.defined() && b.defined())
    if (py::object r = detail::fast::addmm(bias.obj(), a.obj(), b.obj(), beta.toDouble(),
                                           alpha.toDouble()))
      return Tensor(r);
  return Tensor(detail::ember_attr("").attr("addmm")(bias.obj(), a.obj(), b.obj(),
                                                    py::arg("beta") = beta.to_py(),
                                                    py::arg("alpha") = alpha.to_py()));
}
inline Tensor sum(const Tensor& t) { return t.sum(); }
inline Tensor sum(const Tensor& t, int64_t d, bool keepdim = false) { return t.sum(d, keepdim); }
inline Tensor sum(const Tensor& t, const IntArrayRef& d, bool keepdim = false) { return t.sum(d, keepdim); }
inline Tensor mean(const Tensor& t) { return t.mean(); }
inline Tensor mean(const Tensor& t, int64_t d, bool keepdim = false) { return t.mean(d, keepdim); }
inline Tensor exp(const Tensor& t) { return t.exp(); }
inline Tensor log(const Tensor& t) { return t.log(); }
inline Tensor sqrt(const Tensor& t) { return t.sqrt(); }
inline Tensor abs(const Tensor& t) { return t.abs(); }
inline Tensor neg(const Tensor& t) { return t.neg(); }
inline Tensor sigmoid(const Tensor& t) { return t.sigmoid(); }
inline Tensor tanh(const Tensor& t) { return t.tanh(); }
inline Tensor relu(const Tensor& t) { return t.relu(); }
inline Tensor pow(const Tensor& t, const Scalar& e) { return t.pow(e); }
inline Tensor pow(const Tensor& t, const Tensor& e) { return t.pow(e); }
inline Tensor clamp(const Tensor& t, const Scalar& lo, const Scalar& hi) { return t.clamp(lo, hi); }
inline Tensor elu(const Tensor& t, const Scalar& alpha = 1.0) {
  if (t.defined())
    if (py::object r = detail::fast::elu(t.obj(), alpha.toDouble())) return Tensor(r);
  return Tensor(detail::ember_attr("nn.functional").attr("elu")(t.obj(), alpha.to_py()));
}
inline Tensor cat(const std::vector<Tensor>& ts, int64_t d = 0) {
  std::vector<py::object> objs;
  objs.reserve(ts.size());
  for (const Tensor& t : ts) objs.push_back(t.obj());
  if (py::object r = detail::fast::cat(objs, d)) return Tensor(r);
  return detail::call_fn("cat", ts, d);
}
inline Tensor stack(const std::vector<Tensor>& ts, int64_t d = 0) { return detail::call_fn("stack", ts, d); }
inline Tensor transpose(const Tensor& t, int64_t d0, int64_t d1) { return t.transpose(d0, d1); }
inline Tensor t(const Tensor& x) { return x.t(); }
inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return detail::call_fn("where", cond, a, b);
}
inline Tensor maximum(const Tensor& a, const Tensor& b) { return detail::call_fn("maximum", a, b); }
inline Tensor minimum(const Tensor& a, const Tensor& b) { return detail::call_fn("minimum", a, b); }
inline std::vector<Tensor> chunk(const Tensor& t, int64_t chunks, int64_t d = 0) { return t.chunk(chunks, d); }

// ---- dispatch over dtypes ----------------------------------------------------------------------

#define EMBER_DISPATCH_CASE_(ENUM, T, ...) \
  case ENUM: {                             \
    using scalar_t = T;                    \
    return __VA_ARGS__();                  \
  }

/// Run a lambda with ``scalar_t`` bound to the tensor's element type (float32, float64).
#define EMBER_DISPATCH_FLOATING_TYPES(TYPE, NAME, ...)                                          \
  [&] {                                                                                         \
    const ::ember::ScalarType _st = (TYPE);                                                     \
    switch (_st) {                                                                              \
      EMBER_DISPATCH_CASE_(::ember::kFloat32, float, __VA_ARGS__)                               \
      EMBER_DISPATCH_CASE_(::ember::kFloat64, double, __VA_ARGS__)                              \
      default:                                                                                  \
        throw ::pybind11::type_error(::ember::detail::str(NAME, " not implemented for ", _st)); \
    }                                                                                           \
  }()

/// Same for float32, float64, int8/16/32/64 and uint8.
#define EMBER_DISPATCH_ALL_TYPES(TYPE, NAME, ...)                                               \
  [&] {                                                                                         \
    const ::ember::ScalarType _st = (TYPE);                                                     \
    switch (_st) {                                                                              \
      EMBER_DISPATCH_CASE_(::ember::kFloat32, float, __VA_ARGS__)                               \
      EMBER_DISPATCH_CASE_(::ember::kFloat64, double, __VA_ARGS__)                              \
      EMBER_DISPATCH_CASE_(::ember::kInt64, int64_t, __VA_ARGS__)                               \
      EMBER_DISPATCH_CASE_(::ember::kInt32, int32_t, __VA_ARGS__)                               \
      EMBER_DISPATCH_CASE_(::ember::kInt16, int16_t, __VA_ARGS__)                               \
      EMBER_DISPATCH_CASE_(::ember::kInt8, int8_t, __VA_ARGS__)                                 \
      EMBER_DISPATCH_CASE_(::ember::kUInt8, uint8_t, __VA_ARGS__)                               \
      default:                                                                                  \
        throw ::pybind11::type_error(::ember::detail::str(NAME, " not implemented for ", _st)); \
    }                                                                                           \
  }()

}  // namespace ember

// ---- conversions at the binding boundary ---------------------------------------------------------

namespace pybind11 {
namespace detail {

template <>
struct type_caster<ember::Tensor> {
 public:
  PYBIND11_TYPE_CASTER(ember::Tensor, const_name("ember.Tensor"));
  bool load(handle src, bool) {
    if (!src || !ember::detail::is_tensor(src)) return false;
    value = ember::Tensor(reinterpret_borrow<object>(src));
    return true;
  }
  static handle cast(const ember::Tensor& t, return_value_policy, handle) {
    if (!t.defined()) return none().release();
    return t.obj().inc_ref();
  }
};

template <>
struct type_caster<ember::Scalar> {
 public:
  PYBIND11_TYPE_CASTER(ember::Scalar, const_name("float | int | bool"));
  bool load(handle src, bool) {
    if (!src) return false;
    if (PyBool_Check(src.ptr())) { value = ember::Scalar(src.ptr() == Py_True); return true; }
    if (PyLong_Check(src.ptr())) {
      long long v = PyLong_AsLongLong(src.ptr());
      if (v == -1 && PyErr_Occurred()) { PyErr_Clear(); return false; }
      value = ember::Scalar(v);
      return true;
    }
    if (PyFloat_Check(src.ptr())) { value = ember::Scalar(PyFloat_AsDouble(src.ptr())); return true; }
    return false;
  }
  static handle cast(const ember::Scalar& s, return_value_policy, handle) {
    return s.to_py().release();
  }
};

template <>
struct type_caster<ember::ScalarType> {
 public:
  PYBIND11_TYPE_CASTER(ember::ScalarType, const_name("ember.dtype"));
  bool load(handle src, bool) {
    if (!src || !hasattr(src, "is_floating_point") || !hasattr(src, "name")) return false;
    try {
      value = ember::detail::scalar_type_from_object(src);
    } catch (const type_error&) {
      return false;
    }
    return true;
  }
  static handle cast(ember::ScalarType t, return_value_policy, handle) {
    return ember::detail::dtype_object(t).release();
  }
};

template <>
struct type_caster<ember::IntArrayRef> : list_caster<ember::IntArrayRef, int64_t> {};

}  // namespace detail
}  // namespace pybind11
