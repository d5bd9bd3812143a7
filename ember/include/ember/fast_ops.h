// <ember/fast_ops.h> -- the C++ fast paths behind ember::Tensor's common ops (included by
// <ember/extension.h>; not meant to be included alone).
//
// An op called from C++ normally calls back into ember (a Python method call: argument
// checks, __torch_function__, autograd). When nothing of that can matter, the ops below compute
// on the tensors' NumPy buffers directly and wrap the result as an ember tensor, as ember's own
// ops do (Tensor._make): float32/float64 tensors of one dtype (plain ember.Tensor or
// nn.Parameter, NumPy arrays, aligned, native byte order), 0-, 1- or 2-D strided or any
// contiguous layout, and no graph to record -- grad mode off (as in an autograd.Function's
// forward and backward) or no input requiring grad -- with no __torch_function__ mode or
// dispatching subclass, no __torch_dispatch__, no vmap and no forward-AD level active.
//
// Fast: + - * / (tensor-tensor of one shape, tensor-scalar, scalar-tensor), add/sub (alpha 1),
// mul, div, neg, exp, log, sqrt, abs, sigmoid, tanh, relu, elu, pow(number), the comparisons
// < <= > >= == != (bool results), to/type_as float32/float64 (from bool too), sum() and
// sum(dim, keepdim) of 1-/2-D
// tensors, mm/matmul of 2-D tensors, addmm (bias (m,), (1, m) or (n, m)), cat of contiguous
// tensors, contiguous(), the views t/transpose/narrow/slice (step 1)/chunk (sharing the
// source's version counter and base, re-derivable from the base as ember's views are), and
// empty/zeros/ones with a float dtype and their *_like forms. Anything else (other dtypes,
// broadcasting, 3-D strided inputs, shape or index errors, in-place ops) returns a null object
// and the caller takes the general path, which also raises ember's errors.
//
// Matrix products go through ember.backend.gemm.matmul on the arrays (BLAS, ember's threads),
// or NumPy's matmul where gemm.matmul would use one thread, skipping the tensor-level layers;
// from gemm.NATIVE_MIN_FMAS on they are cut into bands that ember's spinning pool threads take
// (_pool.gemm, called from here: no Python pass) when gemm.native_for_extension allows it.
// Build with -DEMBER_NO_FAST_OPS to turn all of it off; detail::fast::taken() counts the results
// made here.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>
#include <vector>

namespace ember {
namespace detail {
namespace fast {
namespace py = pybind11;

// Module state read by every fast path: resolved once per extension on first use.
struct State {
  bool ready = false;
  bool usable = false;
  PyTypeObject* tensor_type = nullptr;
  PyTypeObject* parameter_type = nullptr;
  PyTypeObject* ndarray_type = nullptr;
  PyObject* tf_active = nullptr;        // ember._torch_function.ACTIVE, [bool]
  PyObject* batching = nullptr;         // ember.autograd.batching.hooks, [None | rules]
  PyObject* dispatch_active = nullptr;  // ember.autograd.dispatch.active, [bool]
  PyObject* fw_active = nullptr;        // ember.autograd.forward_ad.active, [] unless a level
  PyObject* grad_state = nullptr;       // ember.autograd.grad_mode._state (thread-local)
  PyObject* matmul = nullptr;           // ember.backend.gemm.matmul(a, b) on arrays
  PyObject* gemm = nullptr;             // ember.backend.gemm (its MIN_CHUNK_FMAS)
  PyObject* np_matmul = nullptr;        // numpy.matmul: what gemm.matmul runs on one thread
  PyObject* s_native_for = nullptr;     // "native_for_extension" (of ember.backend.gemm)
  PyObject* s_gemm = nullptr;           // "gemm": _pool.gemm, the native bands
  PyObject* s_data = nullptr;
  PyObject* s_requires_grad = nullptr;
  PyObject* s_grad_fn = nullptr;
  PyObject* s_output_nr = nullptr;
  PyObject* s_vc = nullptr;
  PyObject* s_base = nullptr;
  PyObject* s_enabled = nullptr;
  PyObject* empty_tuple = nullptr;
  int64_t taken = 0;  // fast paths taken (tests read it to know which path ran)
};

inline PyObject* module_attr(const char* module, const char* name) {
  py::object m = py::module_::import(module);
  return py::object(m.attr(name)).release().ptr();  // kept for the extension's lifetime
}

inline State& state() {
  static State s;
  if (s.ready) return s;
  s.ready = true;
#ifndef EMBER_NO_FAST_OPS
  try {
    s.tensor_type = reinterpret_cast<PyTypeObject*>(module_attr("ember", "Tensor"));
    s.parameter_type = reinterpret_cast<PyTypeObject*>(module_attr("ember.nn", "Parameter"));
    s.ndarray_type = py::detail::npy_api::get().PyArray_Type_;
    s.tf_active = module_attr("ember._torch_function", "ACTIVE");
    s.batching = module_attr("ember.autograd.batching", "hooks");
    s.dispatch_active = module_attr("ember.autograd.dispatch", "active");
    s.fw_active = module_attr("ember.autograd.forward_ad", "active");
    s.grad_state = module_attr("ember.autograd.grad_mode", "_state");
    s.matmul = module_attr("ember.backend.gemm", "matmul");
    s.gemm = py::module_::import("ember.backend.gemm").release().ptr();
    s.np_matmul = module_attr("numpy", "matmul");
    s.s_native_for = PyUnicode_InternFromString("native_for_extension");
    s.s_gemm = PyUnicode_InternFromString("gemm");
    for (PyObject* l : {s.tf_active, s.batching, s.dispatch_active, s.fw_active}) {
      if (!PyList_Check(l)) return s;  // not what this header was written against
    }
    s.s_data = PyUnicode_InternFromString("_data");
    s.s_requires_grad = PyUnicode_InternFromString("_requires_grad");
    s.s_grad_fn = PyUnicode_InternFromString("_grad_fn");
    s.s_output_nr = PyUnicode_InternFromString("_output_nr");
    s.s_vc = PyUnicode_InternFromString("_vc");
    s.s_base = PyUnicode_InternFromString("_base");
    s.s_enabled = PyUnicode_InternFromString("enabled");
    s.empty_tuple = PyTuple_New(0);
    s.usable = s.s_data && s.s_requires_grad && s.s_grad_fn && s.s_output_nr && s.s_vc &&
               s.s_base && s.s_enabled && s.empty_tuple;
  } catch (const py::error_already_set&) {
    s.usable = false;  // an ember without these internals: the general path always
  }
#endif
  return s;
}

inline int64_t taken() { return state().taken; }

// ---- which calls qualify ----------------------------------------------------------------------

inline bool list_item_is(PyObject* list, PyObject* value) {
  return PyList_GET_SIZE(list) > 0 && PyList_GET_ITEM(list, 0) == value;
}

/// No __torch_function__, __torch_dispatch__, vmap or forward AD can see the call.
inline bool nothing_intercepts(const State& s) {
  return s.usable && list_item_is(s.tf_active, Py_False) && list_item_is(s.batching, Py_None) &&
         list_item_is(s.dispatch_active, Py_False) && PyList_GET_SIZE(s.fw_active) == 0;
}

inline bool grad_enabled(const State& s) {
  PyObject* v = PyObject_GetAttr(s.grad_state, s.s_enabled);
  if (!v) {
    PyErr_Clear();
    return true;  // unknown: assume a graph would be recorded
  }
  const bool on = v != Py_False;
  Py_DECREF(v);
  return on;
}

/// A float32/float64 ember tensor's array, as the kernels read it.
struct Operand {
  py::object array;           // the tensor's _data (a reference held while the op runs)
  char* data = nullptr;
  int nd = 0;
  const Py_ssize_t* shape = nullptr;
  const Py_ssize_t* strides = nullptr;  // in bytes
  int typenum = -1;           // NPY_FLOAT or NPY_DOUBLE
  int itemsize = 0;
  bool contiguous = false;
  bool requires_grad = false;

  Py_ssize_t size(int d) const { return shape[d]; }
  Py_ssize_t numel() const {
    Py_ssize_t n = 1;
    for (int i = 0; i < nd; ++i) n *= shape[i];
    return n;
  }
  bool same_shape(const Operand& o) const {
    if (nd != o.nd) return false;
    for (int i = 0; i < nd; ++i)
      if (shape[i] != o.shape[i]) return false;
    return true;
  }
};

/// Read ``t`` into ``op``; false when it does not qualify (the general path then runs): a float
/// tensor, or (``allow_bool``) a bool one.
inline bool read_operand(const State& s, PyObject* t, Operand& op, bool allow_bool = false) {
  if (!t || (Py_TYPE(t) != s.tensor_type && Py_TYPE(t) != s.parameter_type)) return false;
  PyObject* a = PyObject_GetAttr(t, s.s_data);
  if (!a) {
    PyErr_Clear();
    return false;
  }
  op.array = py::reinterpret_steal<py::object>(a);
  if (Py_TYPE(a) != s.ndarray_type) return false;  // meta arrays, other array modules
  auto* arr = py::detail::array_proxy(a);
  auto* descr = py::detail::array_descriptor_proxy(arr->descr);
  constexpr int kFloat = py::detail::npy_api::NPY_FLOAT_, kDouble = py::detail::npy_api::NPY_DOUBLE_;
  constexpr int kBool = py::detail::npy_api::NPY_BOOL_;
  const bool is_bool = allow_bool && descr->type_num == kBool;
  if (descr->type_num != kFloat && descr->type_num != kDouble && !is_bool) return false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  if (descr->byteorder == '<') return false;
#else
  if (descr->byteorder == '>') return false;
#endif
  constexpr int kAligned = 0x0100;  // NPY_ARRAY_ALIGNED
  if (!(arr->flags & kAligned)) return false;
  op.data = arr->data;
  op.nd = arr->nd;
  op.shape = arr->dimensions;
  op.strides = arr->strides;
  op.typenum = descr->type_num;
  op.itemsize = is_bool ? 1 : descr->type_num == kFloat ? 4 : 8;
  op.contiguous = (arr->flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) != 0;
  for (int i = 0; i < op.nd; ++i)
    if (op.strides[i] % op.itemsize != 0) return false;
  PyObject* rg = PyObject_GetAttr(t, s.s_requires_grad);
  if (!rg) {
    PyErr_Clear();
    return false;
  }
  op.requires_grad = rg == Py_True;
  Py_DECREF(rg);
  return true;
}

/// Read every tensor of ``ts`` (all of one dtype); false when the call must take the general
/// path. ``ops`` receives one Operand per tensor.
inline bool qualify(std::initializer_list<PyObject*> ts, std::vector<Operand>& ops) {
  State& s = state();
  if (!nothing_intercepts(s)) return false;
  ops.resize(ts.size());
  bool any_grad = false;
  size_t i = 0;
  for (PyObject* t : ts) {
    if (!read_operand(s, t, ops[i])) return false;
    if (ops[i].typenum != ops[0].typenum) return false;  // promotion: ember's rules
    any_grad = any_grad || ops[i].requires_grad;
    ++i;
  }
  return !(any_grad && grad_enabled(s));
}

// ---- results ----------------------------------------------------------------------------------

/// A new C-contiguous array of ``typenum`` (uninitialized).
inline py::object new_array(int typenum, int nd, const Py_ssize_t* shape) {
  auto& api = py::detail::npy_api::get();
  PyObject* descr = api.PyArray_DescrFromType_(typenum);
  if (!descr) throw py::error_already_set();
  PyObject* a = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, nd, shape, nullptr, nullptr,
                                          0, nullptr);  // steals descr
  if (!a) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(a);
}

inline char* array_data(const py::object& a) { return py::detail::array_proxy(a.ptr())->data; }

/// The ember tensor of ``array`` (what Tensor._make makes: no grad, no history), with the
/// version counter ``vc`` and base ``base`` of a view, or (null ``vc``) a new counter and none.
inline py::object wrap(py::object array, PyObject* vc = nullptr, PyObject* base = Py_None) {
  State& s = state();
  PyObject* t = PyBaseObject_Type.tp_new(s.tensor_type, s.empty_tuple, nullptr);
  if (!t) throw py::error_already_set();
  py::object out = py::reinterpret_steal<py::object>(t);
  py::object zero = py::int_(0);
  py::object new_vc;
  if (!vc) {
    new_vc = py::reinterpret_steal<py::object>(PyList_New(1));
    if (!new_vc) throw py::error_already_set();
    PyList_SET_ITEM(new_vc.ptr(), 0, zero.inc_ref().ptr());
    vc = new_vc.ptr();
  }
  if (PyObject_SetAttr(t, s.s_data, array.ptr()) < 0 ||
      PyObject_SetAttr(t, s.s_requires_grad, Py_False) < 0 ||
      PyObject_SetAttr(t, s.s_grad_fn, Py_None) < 0 ||
      PyObject_SetAttr(t, s.s_output_nr, zero.ptr()) < 0 ||
      PyObject_SetAttr(t, s.s_vc, vc) < 0 || PyObject_SetAttr(t, s.s_base, base) < 0) {
    throw py::error_already_set();
  }
  ++s.taken;
  return out;
}

// ---- element-wise kernels ---------------------------------------------------------------------

// An operand seen as rows x cols with strides in elements (contiguous: one row).
struct Plane {
  Py_ssize_t rows = 1, cols = 1, row_stride = 0, col_stride = 1;
};

/// ``o`` as rows x cols: one row when contiguous, its own strides when 0-, 1- or 2-D.
inline bool as_plane(const Operand& o, Plane& p, bool flat_if_contiguous = true) {
  if (flat_if_contiguous && o.contiguous) {
    p = {1, o.numel(), 0, 1};
    return true;
  }
  const Py_ssize_t item = o.itemsize;
  if (o.nd == 0) p = {1, 1, 0, 1};
  else if (o.nd == 1) p = {1, o.shape[0], 0, o.strides[0] / item};
  else if (o.nd == 2) p = {o.shape[0], o.shape[1], o.strides[0] / item, o.strides[1] / item};
  else return false;  // strided 3-D and up: the general path
  return true;
}

enum class Unary { Neg, Exp, Log, Sqrt, Abs, Sigmoid, Tanh, Relu };

template <typename T>
inline T unary_value(Unary f, T x) {
  switch (f) {
    case Unary::Neg: return -x;
    case Unary::Exp: return std::exp(x);
    case Unary::Log: return std::log(x);
    case Unary::Sqrt: return std::sqrt(x);
    case Unary::Abs: return std::abs(x);
    case Unary::Sigmoid: return T(1) / (T(1) + std::exp(-x));
    case Unary::Tanh: return std::tanh(x);
    case Unary::Relu: return x > T(0) ? x : (x == x ? T(0) : x);  // NaN stays NaN
  }
  return x;
}

// One loop per function so that each inner loop is a plain vectorizable loop.
template <typename T, typename U, typename F>
inline void map_plane(const T* x, const Plane& p, U* out, F f) {
  if (p.col_stride == 1) {
    for (Py_ssize_t r = 0; r < p.rows; ++r) {
      const T* xr = x + r * p.row_stride;
      U* o = out + r * p.cols;
      for (Py_ssize_t c = 0; c < p.cols; ++c) o[c] = f(xr[c]);
    }
    return;
  }
  for (Py_ssize_t r = 0; r < p.rows; ++r)
    for (Py_ssize_t c = 0; c < p.cols; ++c)
      out[r * p.cols + c] = f(x[r * p.row_stride + c * p.col_stride]);
}

template <typename T>
inline void unary_kernel(Unary f, const T* x, const Plane& p, T* out) {
  switch (f) {
    case Unary::Neg: return map_plane(x, p, out, [](T v) { return -v; });
    case Unary::Exp: return map_plane(x, p, out, [](T v) { return std::exp(v); });
    case Unary::Log: return map_plane(x, p, out, [](T v) { return std::log(v); });
    case Unary::Sqrt: return map_plane(x, p, out, [](T v) { return std::sqrt(v); });
    case Unary::Abs: return map_plane(x, p, out, [](T v) { return std::abs(v); });
    case Unary::Sigmoid:
      return map_plane(x, p, out, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
    case Unary::Tanh: return map_plane(x, p, out, [](T v) { return std::tanh(v); });
    case Unary::Relu: return map_plane(x, p, out, [](T v) { return unary_value(Unary::Relu, v); });
  }
}

/// ``f(t)``, or a null object for the general path.
inline py::object unary(const py::object& t, Unary f) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  Plane p;
  if (!as_plane(x, p)) return py::object();
  py::object out = new_array(x.typenum, x.nd, x.shape);
  if (x.itemsize == 4) {
    unary_kernel(f, reinterpret_cast<const float*>(x.data), p,
                 reinterpret_cast<float*>(array_data(out)));
  } else {
    unary_kernel(f, reinterpret_cast<const double*>(x.data), p,
                 reinterpret_cast<double*>(array_data(out)));
  }
  return wrap(std::move(out));
}

enum class Binary { Add, Sub, Mul, Div };

template <typename T, typename F>
inline void zip_planes(const T* a, const Plane& pa, const T* b, const Plane& pb, T* out, F f) {
  if (pa.col_stride == 1 && pb.col_stride == 1) {
    for (Py_ssize_t r = 0; r < pa.rows; ++r) {
      const T* ar = a + r * pa.row_stride;
      const T* br = b + r * pb.row_stride;
      T* o = out + r * pa.cols;
      for (Py_ssize_t c = 0; c < pa.cols; ++c) o[c] = f(ar[c], br[c]);
    }
    return;
  }
  for (Py_ssize_t r = 0; r < pa.rows; ++r)
    for (Py_ssize_t c = 0; c < pa.cols; ++c)
      out[r * pa.cols + c] = f(a[r * pa.row_stride + c * pa.col_stride],
                               b[r * pb.row_stride + c * pb.col_stride]);
}

template <typename T>
inline void binary_kernel(Binary f, const T* a, const Plane& pa, const T* b, const Plane& pb,
                          T* out) {
  switch (f) {
    case Binary::Add: return zip_planes(a, pa, b, pb, out, [](T x, T y) { return x + y; });
    case Binary::Sub: return zip_planes(a, pa, b, pb, out, [](T x, T y) { return x - y; });
    case Binary::Mul: return zip_planes(a, pa, b, pb, out, [](T x, T y) { return x * y; });
    case Binary::Div: return zip_planes(a, pa, b, pb, out, [](T x, T y) { return x / y; });
  }
}

/// ``a (f) b`` for two tensors of one shape and dtype (no broadcasting), or a null object.
inline py::object binary(const py::object& a, const py::object& b, Binary f) {
  std::vector<Operand> ops;
  if (!qualify({a.ptr(), b.ptr()}, ops)) return py::object();
  const Operand &x = ops[0], &y = ops[1];
  if (!x.same_shape(y)) return py::object();
  // both contiguous: one flat row each; else both walked by their own strides
  const bool flat = x.contiguous && y.contiguous;
  Plane px, py_;
  if (!as_plane(x, px, flat) || !as_plane(y, py_, flat)) return py::object();
  py::object out = new_array(x.typenum, x.nd, x.shape);
  if (x.itemsize == 4) {
    binary_kernel(f, reinterpret_cast<const float*>(x.data), px,
                  reinterpret_cast<const float*>(y.data), py_,
                  reinterpret_cast<float*>(array_data(out)));
  } else {
    binary_kernel(f, reinterpret_cast<const double*>(x.data), px,
                  reinterpret_cast<const double*>(y.data), py_,
                  reinterpret_cast<double*>(array_data(out)));
  }
  return wrap(std::move(out));
}

template <typename T>
inline void scalar_kernel(Binary f, const T* x, const Plane& p, T s, bool scalar_first, T* out) {
  switch (f) {
    case Binary::Add: return map_plane(x, p, out, [s](T v) { return v + s; });
    case Binary::Mul: return map_plane(x, p, out, [s](T v) { return v * s; });
    case Binary::Sub:
      if (scalar_first) return map_plane(x, p, out, [s](T v) { return s - v; });
      return map_plane(x, p, out, [s](T v) { return v - s; });
    case Binary::Div:
      if (scalar_first) return map_plane(x, p, out, [s](T v) { return s / v; });
      return map_plane(x, p, out, [s](T v) { return v / s; });
  }
}

/// ``t (f) s`` (``s (f) t`` when ``scalar_first``) for a Python number ``s``, or a null object.
inline py::object with_scalar(const py::object& t, double s, Binary f, bool scalar_first) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  Plane p;
  if (!as_plane(x, p)) return py::object();
  py::object out = new_array(x.typenum, x.nd, x.shape);
  if (x.itemsize == 4) {
    scalar_kernel(f, reinterpret_cast<const float*>(x.data), p, static_cast<float>(s),
                  scalar_first, reinterpret_cast<float*>(array_data(out)));
  } else {
    scalar_kernel(f, reinterpret_cast<const double*>(x.data), p, s, scalar_first,
                  reinterpret_cast<double*>(array_data(out)));
  }
  return wrap(std::move(out));
}

/// ``t ** e`` for a Python number ``e``, or a null object.
inline py::object pow_scalar(const py::object& t, double e) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  Plane p;
  if (!as_plane(x, p)) return py::object();
  py::object out = new_array(x.typenum, x.nd, x.shape);
  auto run = [&](auto* in, auto* o) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    const T et = static_cast<T>(e);
    if (e == 2.0) map_plane(in, p, o, [](T v) { return v * v; });
    else map_plane(in, p, o, [et](T v) { return std::pow(v, et); });
  };
  if (x.itemsize == 4) run(reinterpret_cast<const float*>(x.data), reinterpret_cast<float*>(array_data(out)));
  else run(reinterpret_cast<const double*>(x.data), reinterpret_cast<double*>(array_data(out)));
  return wrap(std::move(out));
}

/// ``elu(t, alpha)``: ``t`` where positive, else ``alpha * expm1(t)``, or a null object.
inline py::object elu(const py::object& t, double alpha) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  Plane p;
  if (!as_plane(x, p)) return py::object();
  py::object out = new_array(x.typenum, x.nd, x.shape);
  auto run = [&](auto* in, auto* o) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(in)>>;
    const T a = static_cast<T>(alpha);
    map_plane(in, p, o, [a](T v) { return v > T(0) ? v : std::expm1(std::min(v, T(0))) * a; });
  };
  if (x.itemsize == 4) run(reinterpret_cast<const float*>(x.data), reinterpret_cast<float*>(array_data(out)));
  else run(reinterpret_cast<const double*>(x.data), reinterpret_cast<double*>(array_data(out)));
  return wrap(std::move(out));
}

enum class Compare { LT, LE, GT, GE, EQ, NE };

template <typename T>
inline bool compare_values(Compare c, T a, T b) {
  switch (c) {
    case Compare::LT: return a < b;
    case Compare::LE: return a <= b;
    case Compare::GT: return a > b;
    case Compare::GE: return a >= b;
    case Compare::EQ: return a == b;
    case Compare::NE: return a != b;
  }
  return false;
}

/// ``a (c) b`` as a bool tensor: two float tensors of one shape and dtype (``b`` non-null) or
/// a tensor and a Python number ``s`` (``s (c) a`` when ``scalar_first``), or a null object.
inline py::object compare(const py::object& a, const py::object* b, double s, Compare c,
                          bool scalar_first) {
  std::vector<Operand> ops;
  if (b ? !qualify({a.ptr(), b->ptr()}, ops) : !qualify({a.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  if (b && !x.same_shape(ops[1])) return py::object();
  const bool flat = x.contiguous && (!b || ops[1].contiguous);
  Plane px, py_;
  if (!as_plane(x, px, flat) || (b && !as_plane(ops[1], py_, flat))) return py::object();
  py::object out = new_array(py::detail::npy_api::NPY_BOOL_, x.nd, x.shape);
  bool* o = reinterpret_cast<bool*>(array_data(out));
  auto run = [&](auto* xa, auto* ya) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(xa)>>;
    const T st = static_cast<T>(s);
    for (Py_ssize_t r = 0; r < px.rows; ++r)
      for (Py_ssize_t k = 0; k < px.cols; ++k) {
        const T v = xa[r * px.row_stride + k * px.col_stride];
        const T w = ya ? ya[r * py_.row_stride + k * py_.col_stride] : st;
        o[r * px.cols + k] = scalar_first ? compare_values(c, w, v) : compare_values(c, v, w);
      }
  };
  if (x.itemsize == 4) {
    run(reinterpret_cast<const float*>(x.data),
        b ? reinterpret_cast<const float*>(ops[1].data) : nullptr);
  } else {
    run(reinterpret_cast<const double*>(x.data),
        b ? reinterpret_cast<const double*>(ops[1].data) : nullptr);
  }
  return wrap(std::move(out));
}

/// ``t.to(dtype)`` from bool, float32 or float64 to float32 or float64 (``typenum``): ``t``
/// itself when it has that dtype already, else a new contiguous tensor; or a null object.
inline py::object convert(const py::object& t, int typenum) {
  State& s = state();
  if (!nothing_intercepts(s)) return py::object();
  Operand x;
  if (!read_operand(s, t.ptr(), x, true)) return py::object();
  if (x.requires_grad && grad_enabled(s)) return py::object();
  if (x.typenum == typenum) return t;
  Plane p;
  if (!as_plane(x, p)) return py::object();
  py::object out = new_array(typenum, x.nd, x.shape);
  auto run = [&](auto* in) {
    if (typenum == py::detail::npy_api::NPY_FLOAT_)
      map_plane(in, p, reinterpret_cast<float*>(array_data(out)),
                [](auto v) { return static_cast<float>(v); });
    else
      map_plane(in, p, reinterpret_cast<double*>(array_data(out)),
                [](auto v) { return static_cast<double>(v); });
  };
  if (x.itemsize == 1) run(reinterpret_cast<const bool*>(x.data));
  else if (x.itemsize == 4) run(reinterpret_cast<const float*>(x.data));
  else run(reinterpret_cast<const double*>(x.data));
  return wrap(std::move(out));
}

// ---- reductions -------------------------------------------------------------------------------

template <typename T>
inline void sum_rows_kernel(const T* x, const Plane& p, T* out) {  // over dim 0
  for (Py_ssize_t c = 0; c < p.cols; ++c) out[c] = T(0);
  for (Py_ssize_t r = 0; r < p.rows; ++r) {
    const T* xr = x + r * p.row_stride;
    if (p.col_stride == 1) {
      for (Py_ssize_t c = 0; c < p.cols; ++c) out[c] += xr[c];
    } else {
      for (Py_ssize_t c = 0; c < p.cols; ++c) out[c] += xr[c * p.col_stride];
    }
  }
}

template <typename T>
inline void sum_cols_kernel(const T* x, const Plane& p, T* out) {  // over dim 1 (per row)
  for (Py_ssize_t r = 0; r < p.rows; ++r) {
    double acc = 0;
    const T* xr = x + r * p.row_stride;
    for (Py_ssize_t c = 0; c < p.cols; ++c) acc += xr[c * p.col_stride];
    out[r] = static_cast<T>(acc);
  }
}

/// ``t.sum()`` (``dim`` < 0: all elements, a 0-d result) or ``t.sum(dim, keepdim)`` of a 1-D or
/// 2-D tensor, or a null object. Accumulates in double for a whole row or the whole tensor.
inline py::object sum(const py::object& t, bool all, int64_t dim, bool keepdim) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  Plane p;
  if (!as_plane(x, p) || x.numel() == 0) return py::object();
  if (all) {
    py::object out = new_array(x.typenum, 0, nullptr);
    Plane whole{1, x.numel(), 0, 1};
    const Plane& q = x.contiguous ? whole : p;
    // rows summed into a double each, then the rows together
    double total = 0;
    for (Py_ssize_t r = 0; r < q.rows; ++r) {
      double row = 0;
      if (x.itemsize == 4) {
        const float* xr = reinterpret_cast<const float*>(x.data) + r * q.row_stride;
        for (Py_ssize_t c = 0; c < q.cols; ++c) row += xr[c * q.col_stride];
      } else {
        const double* xr = reinterpret_cast<const double*>(x.data) + r * q.row_stride;
        for (Py_ssize_t c = 0; c < q.cols; ++c) row += xr[c * q.col_stride];
      }
      total += row;
    }
    if (x.itemsize == 4) *reinterpret_cast<float*>(array_data(out)) = static_cast<float>(total);
    else *reinterpret_cast<double*>(array_data(out)) = total;
    return wrap(std::move(out));
  }
  if (x.nd != 2) return py::object();
  if (dim < 0) dim += 2;
  if (dim != 0 && dim != 1) return py::object();  // out of range: the general path's error
  Plane q{x.shape[0], x.shape[1], x.strides[0] / x.itemsize, x.strides[1] / x.itemsize};
  Py_ssize_t shape[2];
  int nd = 1;
  if (keepdim) {
    nd = 2;
    shape[0] = dim == 0 ? 1 : x.shape[0];
    shape[1] = dim == 0 ? x.shape[1] : 1;
  } else {
    shape[0] = dim == 0 ? x.shape[1] : x.shape[0];
  }
  py::object out = new_array(x.typenum, nd, shape);
  if (x.itemsize == 4) {
    const float* d = reinterpret_cast<const float*>(x.data);
    float* o = reinterpret_cast<float*>(array_data(out));
    dim == 0 ? sum_rows_kernel(d, q, o) : sum_cols_kernel(d, q, o);
  } else {
    const double* d = reinterpret_cast<const double*>(x.data);
    double* o = reinterpret_cast<double*>(array_data(out));
    dim == 0 ? sum_rows_kernel(d, q, o) : sum_cols_kernel(d, q, o);
  }
  return wrap(std::move(out));
}

// ---- joins ------------------------------------------------------------------------------------

/// ``cat(ts, dim)`` of contiguous non-empty tensors of one dtype and rank, or a null object.
inline py::object cat(const std::vector<py::object>& ts, int64_t dim) {
  if (ts.empty()) return py::object();
  State& s = state();
  if (!nothing_intercepts(s)) return py::object();
  std::vector<Operand> ops(ts.size());
  bool any_grad = false;
  for (size_t i = 0; i < ts.size(); ++i) {
    Operand& o = ops[i];
    if (!read_operand(s, ts[i].ptr(), o) || !o.contiguous || o.nd == 0 || o.numel() == 0)
      return py::object();
    if (o.typenum != ops[0].typenum || o.nd != ops[0].nd) return py::object();
    any_grad = any_grad || o.requires_grad;
  }
  if (any_grad && grad_enabled(s)) return py::object();
  const int nd = ops[0].nd;
  if (dim < -nd || dim >= nd) return py::object();
  if (dim < 0) dim += nd;
  std::vector<Py_ssize_t> shape(ops[0].shape, ops[0].shape + nd);
  shape[dim] = 0;
  for (const Operand& o : ops) {
    for (int d = 0; d < nd; ++d)
      if (d != dim && o.shape[d] != shape[d]) return py::object();
    shape[dim] += o.shape[dim];
  }
  Py_ssize_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (int d = dim + 1; d < nd; ++d) inner *= shape[d];
  const int item = ops[0].itemsize;
  py::object out = new_array(ops[0].typenum, nd, shape.data());
  char* dst = array_data(out);
  for (Py_ssize_t i = 0; i < outer; ++i) {
    for (const Operand& o : ops) {
      const size_t bytes = static_cast<size_t>(o.shape[dim] * inner * item);
      std::memcpy(dst, o.data + i * bytes, bytes);
      dst += bytes;
    }
  }
  return wrap(std::move(out));
}

// ---- matrix products --------------------------------------------------------------------------

/// (transposed, leading dimension) under which BLAS reads the 2-D operand in place, or
/// false (the layouts gemm.py's _blas_layout takes).
inline bool blas_layout(const Operand& x, bool& trans, long long& ld) {
  const Py_ssize_t item = x.itemsize, s0 = x.strides[0], s1 = x.strides[1];
  const Py_ssize_t rows = x.shape[0], cols = x.shape[1];
  if (rows < 2 || cols < 2) return false;
  if (s1 == item && s0 > 0 && s0 % item == 0 && s0 / item >= cols) {
    trans = false;
    ld = s0 / item;
    return true;
  }
  if (s0 == item && s1 > 0 && s1 % item == 0 && s1 / item >= rows) {
    trans = true;
    ld = s1 / item;
    return true;
  }
  return false;
}

/// ``a @ b`` in native bands shared with ember's spinning pool threads (_pool.gemm, no Python
/// between), or a null object when that path does not apply now (gemm.native_for_extension
/// says why; it also wakes the pool for the products that follow).
inline py::object native_bands(const Operand& a, const Operand& b) {
  State& s = state();
  bool ta, tb;
  long long lda, ldb;
  if (!blas_layout(a, ta, lda) || !blas_layout(b, tb, ldb)) return py::object();
  PyObject* native = PyObject_CallMethodNoArgs(s.gemm, s.s_native_for);
  if (!native) throw py::error_already_set();
  py::object holder = py::reinterpret_steal<py::object>(native);
  if (native == Py_None) return py::object();
  const Py_ssize_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  const Py_ssize_t shape[2] = {m, n};
  py::object out = new_array(a.typenum, 2, shape);
  const bool by_rows = n < 128;  // as gemm.matmul: columns unless the result is narrow
  const long long width = by_rows ? m : n;
  PyObject* r = PyObject_CallMethodObjArgs(
      native, s.s_gemm, py::int_(a.itemsize == 8 ? 1 : 0).ptr(), py::bool_(ta).ptr(),
      py::bool_(tb).ptr(), py::int_(m).ptr(), py::int_(n).ptr(), py::int_(k).ptr(),
      py::int_(reinterpret_cast<uintptr_t>(a.data)).ptr(), py::int_(lda).ptr(),
      py::int_(reinterpret_cast<uintptr_t>(b.data)).ptr(), py::int_(ldb).ptr(),
      py::int_(reinterpret_cast<uintptr_t>(array_data(out))).ptr(), py::int_(n).ptr(),
      py::bool_(by_rows).ptr(), py::int_(64).ptr(), py::int_(std::max(1LL, width / 64)).ptr(),
      nullptr);
  if (!r) throw py::error_already_set();
  const long bands = PyLong_AsLong(r);
  Py_DECREF(r);
  if (bands == -1 && PyErr_Occurred()) throw py::error_already_set();
  return bands > 0 ? out : py::object();
}

/// The product of two 2-D operands through ember.backend.gemm.matmul (a new array), or a null
/// object when the result is not the fresh C-contiguous array of their dtype expected.
inline py::object matmul_array(const Operand& a, const Operand& b) {
  State& s = state();
  // gemm.matmul splits a product over threads only from 2 * MIN_CHUNK_FMAS multiply-adds on;
  // below that it calls NumPy's matmul, and so does this, without the Python in between
  PyObject* fn = s.matmul;
  PyObject* min_fmas = PyObject_GetAttrString(s.gemm, "MIN_CHUNK_FMAS");
  if (!min_fmas) throw py::error_already_set();
  const long long limit = PyLong_AsLongLong(min_fmas);
  Py_DECREF(min_fmas);
  if (limit == -1 && PyErr_Occurred()) throw py::error_already_set();
  const double fmas = double(a.shape[0]) * double(a.shape[1]) * double(b.shape[1]);
  if (fmas < 2.0 * double(limit)) {
    fn = s.np_matmul;
    // from NATIVE_MIN_FMAS on, shared with the pool's threads when they spin
    PyObject* native_min = PyObject_GetAttrString(s.gemm, "NATIVE_MIN_FMAS");
    if (!native_min) throw py::error_already_set();
    const long long from = PyLong_AsLongLong(native_min);
    Py_DECREF(native_min);
    if (from == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (fmas >= double(from)) {
      py::object banded = native_bands(a, b);
      if (banded) return banded;
    }
  }
  PyObject* args[] = {a.array.ptr(), b.array.ptr()};
  PyObject* r = PyObject_Vectorcall(fn, args, 2, nullptr);
  if (!r) throw py::error_already_set();
  py::object out = py::reinterpret_steal<py::object>(r);
  if (Py_TYPE(r) != state().ndarray_type) return py::object();
  auto* arr = py::detail::array_proxy(r);
  if (py::detail::array_descriptor_proxy(arr->descr)->type_num != a.typenum || arr->nd != 2 ||
      !(arr->flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) ||
      !(arr->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) || arr->base != nullptr)
    return py::object();
  return out;
}

/// ``a @ b`` for 2-D tensors of one dtype whose sizes agree, or a null object.
inline py::object mm(const py::object& a, const py::object& b) {
  std::vector<Operand> ops;
  if (!qualify({a.ptr(), b.ptr()}, ops)) return py::object();
  const Operand &x = ops[0], &y = ops[1];
  if (x.nd != 2 || y.nd != 2 || x.shape[1] != y.shape[0]) return py::object();
  py::object p = matmul_array(x, y);
  return p ? wrap(std::move(p)) : py::object();
}

template <typename T>
inline void add_bias(T* out, Py_ssize_t rows, Py_ssize_t cols, const T* bias,
                     Py_ssize_t bias_row_stride, T alpha, T beta) {
  for (Py_ssize_t r = 0; r < rows; ++r) {
    T* o = out + r * cols;
    const T* br = bias + r * bias_row_stride;
    if (alpha == T(1) && beta == T(1)) {
      for (Py_ssize_t c = 0; c < cols; ++c) o[c] += br[c];
    } else if (beta == T(0)) {  // the bias is ignored (NaN and inf in it too)
      for (Py_ssize_t c = 0; c < cols; ++c) o[c] *= alpha;
    } else {
      for (Py_ssize_t c = 0; c < cols; ++c) o[c] = alpha * o[c] + beta * br[c];
    }
  }
}

/// ``beta * bias + alpha * (a @ b)`` for 2-D ``a``, ``b`` and a contiguous ``bias`` of shape
/// (m,), (1, m) or (n, m), or a null object.
inline py::object addmm(const py::object& bias, const py::object& a, const py::object& b,
                        double beta, double alpha) {
  std::vector<Operand> ops;
  if (!qualify({bias.ptr(), a.ptr(), b.ptr()}, ops)) return py::object();
  const Operand &c = ops[0], &x = ops[1], &y = ops[2];
  if (x.nd != 2 || y.nd != 2 || x.shape[1] != y.shape[0] || !c.contiguous) return py::object();
  const Py_ssize_t n = x.shape[0], m = y.shape[1];
  Py_ssize_t bias_row_stride;
  if (c.nd == 1 && c.shape[0] == m) bias_row_stride = 0;
  else if (c.nd == 2 && c.shape[0] == 1 && c.shape[1] == m) bias_row_stride = 0;
  else if (c.nd == 2 && c.shape[0] == n && c.shape[1] == m) bias_row_stride = m;
  else return py::object();  // other broadcasts and size errors: the general path
  py::object p = matmul_array(x, y);
  if (!p) return py::object();
  if (x.itemsize == 4) {
    add_bias(reinterpret_cast<float*>(array_data(p)), n, m,
             reinterpret_cast<const float*>(c.data), bias_row_stride, static_cast<float>(alpha),
             static_cast<float>(beta));
  } else {
    add_bias(reinterpret_cast<double*>(array_data(p)), n, m,
             reinterpret_cast<const double*>(c.data), bias_row_stride, alpha, beta);
  }
  return wrap(std::move(p));
}

// ---- views ------------------------------------------------------------------------------------

/// ``_view_fn`` of a view made here: re-derives it from a base ``b`` as ember's own views do,
/// through the parent view's function (if any) and then the public method ``name(*args)``.
inline py::object replay_function() {
  static PyObject* fn = nullptr;
  if (!fn) {
    py::cpp_function replay([](py::object parent_fn, py::str name, py::tuple args,
                               py::object b) -> py::object {
      py::object v = parent_fn.is_none() ? b : parent_fn(b);
      return v.attr(name)(*args);
    });
    fn = replay.release().ptr();
  }
  return py::reinterpret_borrow<py::object>(fn);
}

/// A view of ``src`` (whose array ``x`` is) with the given geometry: the array shares x's
/// memory, and the tensor shares src's version counter and base, as ember's view ops link them
/// (``name(*args)`` re-derives it from the base).
inline py::object view(const py::object& src, const Operand& x, int nd, const Py_ssize_t* shape,
                       const Py_ssize_t* strides, Py_ssize_t offset_bytes, const char* name,
                       py::tuple args) {
  State& s = state();
  auto& api = py::detail::npy_api::get();
  auto* arr = py::detail::array_proxy(x.array.ptr());
  PyObject* descr = arr->descr;
  Py_INCREF(descr);
  const int flags = arr->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  PyObject* v = api.PyArray_NewFromDescr_(api.PyArray_Type_, descr, nd, shape, strides,
                                          x.data + offset_bytes, flags, nullptr);
  if (!v) throw py::error_already_set();
  py::object va = py::reinterpret_steal<py::object>(v);
  if (api.PyArray_SetBaseObject_(v, x.array.inc_ref().ptr()) < 0) throw py::error_already_set();
  py::object vc = src.attr(py::handle(s.s_vc));
  py::object base = src.attr(py::handle(s.s_base));
  if (base.is_none()) base = src;
  py::object base_vc = base.attr(py::handle(s.s_vc));
  if (!PyList_Check(vc.ptr()) || !PyList_Check(base_vc.ptr()) || PyList_GET_SIZE(base_vc.ptr()) < 1)
    throw py::type_error("ember tensor with an unexpected version counter");
  py::object t = wrap(std::move(va), vc.ptr(), base.ptr());
  static PyObject* partial = nullptr;
  static PyObject* s_view_fn = nullptr;
  static PyObject* s_view_version = nullptr;
  if (!partial) {
    partial = module_attr("functools", "partial");
    s_view_fn = PyUnicode_InternFromString("_view_fn");
    s_view_version = PyUnicode_InternFromString("_view_version");
  }
  py::object parent_fn = src.attr(py::handle(s_view_fn));
  py::object fn = py::reinterpret_borrow<py::object>(partial)(replay_function(), parent_fn,
                                                              py::str(name), std::move(args));
  if (PyObject_SetAttr(t.ptr(), s_view_version, PyList_GET_ITEM(base_vc.ptr(), 0)) < 0 ||
      PyObject_SetAttr(t.ptr(), s_view_fn, fn.ptr()) < 0)
    throw py::error_already_set();
  return t;
}

/// ``t.transpose(d0, d1)`` (``t.t()``: d0 = 0, d1 = 1 of a 2-D tensor), or a null object.
inline py::object transpose(const py::object& t, int64_t d0, int64_t d1, bool as_t) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  if (as_t && x.nd != 2) return py::object();
  if (x.nd == 0 || d0 < -x.nd || d0 >= x.nd || d1 < -x.nd || d1 >= x.nd) return py::object();
  if (d0 < 0) d0 += x.nd;
  if (d1 < 0) d1 += x.nd;
  std::vector<Py_ssize_t> shape(x.shape, x.shape + x.nd), strides(x.strides, x.strides + x.nd);
  std::swap(shape[d0], shape[d1]);
  std::swap(strides[d0], strides[d1]);
  if (as_t) return view(t, x, x.nd, shape.data(), strides.data(), 0, "t", py::tuple());
  return view(t, x, x.nd, shape.data(), strides.data(), 0, "transpose",
              py::make_tuple(d0, d1));
}

/// ``t[..., start:end]`` along ``dim`` (Python's slice rules for the bounds), or a null object.
/// The view is replayed as ``narrow(dim, start, length)`` with the bounds resolved.
inline py::object slice(const py::object& t, int64_t dim, int64_t start, int64_t end) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  const Operand& x = ops[0];
  if (x.nd == 0 || dim < -x.nd || dim >= x.nd) return py::object();
  if (dim < 0) dim += x.nd;
  const int64_t n = x.shape[dim];
  auto clamp = [n](int64_t i) {
    if (i < 0) i += n;
    return i < 0 ? int64_t(0) : (i > n ? n : i);
  };
  start = clamp(start);
  end = clamp(end);
  const int64_t len = end > start ? end - start : 0;
  std::vector<Py_ssize_t> shape(x.shape, x.shape + x.nd);
  shape[dim] = len;
  return view(t, x, x.nd, shape.data(), x.strides, len > 0 ? start * x.strides[dim] : 0,
              "narrow", py::make_tuple(dim, len > 0 ? start : 0, len));
}

/// A C-contiguous copy of a float tensor (any layout), or a null object.
inline py::object contiguous(const py::object& t) {
  std::vector<Operand> ops;
  if (!qualify({t.ptr()}, ops)) return py::object();
  constexpr int kCOrder = 0;  // NPY_CORDER
  PyObject* copy = py::detail::npy_api::get().PyArray_NewCopy_(ops[0].array.ptr(), kCOrder);
  if (!copy) throw py::error_already_set();
  py::object out = py::reinterpret_steal<py::object>(copy);
  if (Py_TYPE(copy) != state().ndarray_type) return py::object();
  return wrap(std::move(out));
}

// ---- factories --------------------------------------------------------------------------------

enum class Fill { None, Zeros, Ones };

/// A new float32/float64 tensor of ``shape`` (``typenum``), or a null object.
inline py::object factory(const std::vector<int64_t>& shape, int typenum, Fill fill) {
  State& s = state();
  if (!nothing_intercepts(s)) return py::object();
  std::vector<Py_ssize_t> dims;
  Py_ssize_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return py::object();  // the general path's error
    dims.push_back(static_cast<Py_ssize_t>(d));
    n *= d;
  }
  py::object out = new_array(typenum, static_cast<int>(dims.size()), dims.data());
  const int item = typenum == py::detail::npy_api::NPY_FLOAT_ ? 4 : 8;
  if (fill == Fill::Zeros) {
    std::memset(array_data(out), 0, static_cast<size_t>(n) * item);
  } else if (fill == Fill::Ones) {
    if (item == 4) std::fill_n(reinterpret_cast<float*>(array_data(out)), n, 1.0f);
    else std::fill_n(reinterpret_cast<double*>(array_data(out)), n, 1.0);
  }
  return wrap(std::move(out));
}

/// ``empty_like`` / ``zeros_like`` / ``ones_like`` of a contiguous float tensor, or null.
inline py::object like(const py::object& t, Fill fill) {
  std::vector<Operand> ops;
  State& s = state();
  if (!nothing_intercepts(s)) return py::object();
  ops.resize(1);
  if (!read_operand(s, t.ptr(), ops[0]) || !ops[0].contiguous) return py::object();
  std::vector<int64_t> shape(ops[0].shape, ops[0].shape + ops[0].nd);
  return factory(shape, ops[0].typenum, fill);
}

}  // namespace fast
}  // namespace detail
}  // namespace ember
