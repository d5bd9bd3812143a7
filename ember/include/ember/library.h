// <ember/library.h> -- register operators from C++: EMBER_LIBRARY / EMBER_LIBRARY_IMPL
// (TORCH_LIBRARY / TORCH_LIBRARY_IMPL in <torch/library.h>).
//
//   ember::Tensor mymul_cpu(const ember::Tensor& a, const ember::Tensor& b) { ... }
//   EMBER_LIBRARY(myops, m) { m.def("mymul(Tensor a, Tensor b) -> Tensor"); }
//   EMBER_LIBRARY_IMPL(myops, CPU, m) { m.impl("mymul", &mymul_cpu); }
//
// Each block is a static object whose constructor runs when the shared library is loaded (by
// ember.ops.load_library, cpp_extension.load(..., is_python_module=False) or a plain import)
// and calls ember's Python API: EMBER_LIBRARY is ember.library.Library(ns, "DEF"),
// EMBER_LIBRARY_FRAGMENT is Library(ns, "FRAGMENT"), EMBER_LIBRARY_IMPL(ns, CPU, m) is
// Library(ns, "IMPL", "CPU"); m.def(schema) calls .define(schema) and m.impl(name, fn) calls
// .impl(name, fn) with fn wrapped as a Python callable (pybind11 converts the arguments the
// schema describes: Tensor, float -> double, int -> int64_t, bool, Tensor(a!) -> Tensor&,
// Tensor? -> std::optional<Tensor>), which gets every argument of the schema in order, the
// defaults filled in, as PyTorch's dispatcher calls a C++ kernel.
// The Python Library objects are kept for the life of the process, as the registrations are.
//
// A static constructor cannot raise into Python, so a failed registration (a bad schema, an
// op defined twice) is handed to ember (ember.utils._oplib), which raises it
// from load_library / load once the library is loaded, or warns when something else loaded
// it. Nothing here throws out of a static constructor or aborts the interpreter.
#pragma once

#include <ember/extension.h>

#include <cstdio>
#include <string>
#include <utility>

namespace ember {

/// One TORCH_LIBRARY-style block's handle: ``m`` in ``EMBER_LIBRARY(ns, m) { ... }``.
class Library {
 public:
  enum Kind { DEF, IMPL, FRAGMENT };

  /// Opens ember.library.Library(ns, kind[, dispatch_key]) for the block at file:line; the GIL
  /// must be held.
  Library(Kind kind, const std::string& ns, const char* dispatch_key, const char* file = "",
          int line = 0)
      : ns_(ns), dispatch_key_(dispatch_key ? dispatch_key : ""), file_(file), line_(line) {
    static const char* kinds[] = {"DEF", "IMPL", "FRAGMENT"};
    py::object cls = py::module_::import("ember.library").attr("Library");
    py::object lib = kind == IMPL ? call(cls, ns, kinds[kind], dispatch_key_)
                                  : call(cls, ns, kinds[kind]);
    // never released: the registrations live as long as the process (and a static destructor
    // must not touch Python after the interpreter is gone)
    lib_ = lib.release().ptr();
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  /// Declares an operator: ``m.def("mymul(Tensor a, Tensor b) -> Tensor")``.
  Library& def(const char* schema) & {
    call(handle().attr("define"), schema);
    return *this;
  }
  /// Declares an operator and gives its implementation for every device (PyTorch's
  /// CompositeImplicitAutograd kernel): ``m.def("twice(Tensor x) -> Tensor", &twice)``.
  template <typename Func>
  Library& def(const char* schema, Func&& fn) & {
    call(handle().attr("define"), schema);
    // the name as written, with its overload ("name.out"), perhaps "ns::"
    std::string s(schema);
    size_t begin = s.find_first_not_of(" \t\n"), end = s.find('(');
    std::string name = s.substr(begin, end == std::string::npos ? end : end - begin);
    name = name.substr(0, name.find_last_not_of(" \t\n") + 1);
    register_kernel(name, std::forward<Func>(fn), "CompositeImplicitAutograd");
    return *this;
  }
  /// Gives the implementation of ``name`` (``"mymul"``, ``"mymul.out"`` or ``"ns::mymul"``)
  /// for this block's dispatch key (CPU, ...).
  template <typename Func>
  Library& impl(const char* name, Func&& fn) & {
    register_kernel(name, std::forward<Func>(fn), dispatch_key_);
    return *this;
  }

  const std::string& ns() const { return ns_; }
  /// The Python ember.library.Library behind this block.
  py::handle handle() const { return py::handle(lib_); }

 private:
  template <typename Func>
  void register_kernel(const std::string& name, Func&& fn, const std::string& key) {
    std::string shown = name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
    py::cpp_function kernel(std::forward<Func>(fn), py::name(shown.c_str()));
    // takes the arguments as ember.library passes them, calls the C++ function with all
    py::object full =
        py::module_::import("ember.utils._oplib").attr("cpp_kernel")(ns_, name, kernel);
    call(handle().attr("impl"), name, full, key);
  }

  // Calls fn(args...) from a Python frame that reads as the block's file:line, so that
  // ember.library's messages ("registered at ...", "Error occurred while processing
  // TORCH_LIBRARY_IMPL block at ...") name the C++ source, as PyTorch's do.
  template <typename... Args>
  py::object call(py::handle fn, Args&&... args) const {
    if (line_ <= 0) return py::reinterpret_borrow<py::object>(fn)(std::forward<Args>(args)...);
    return py::module_::import("ember.utils._oplib")
        .attr("call_from")(file_, line_, fn, std::forward<Args>(args)...);
  }

  std::string ns_;
  std::string dispatch_key_;
  std::string file_;
  int line_;
  PyObject* lib_ = nullptr;
};

namespace detail {

// Hands a registration failure to ember (which raises it from load_library), or prints it
// when even that is impossible. Call with the GIL held and no Python error set.
inline void report_registration_failure(const std::string& where, const std::string& what) {
  try {
    py::module_::import("ember.utils._oplib")
        .attr("registration_failed")(where, what);
  } catch (const std::exception& e) {
    PyErr_Clear();
    PySys_WriteStderr("ember: %s failed: %s (and could not be reported: %s)\n", where.c_str(),
                      what.c_str(), e.what());
  }
}

/// The static object behind each EMBER_LIBRARY* block: runs the block while the library loads.
class LibraryInit {
 public:
  LibraryInit(Library::Kind kind, void (*body)(Library&), const char* ns,
              const char* dispatch_key, const char* file, int line) {
    std::string where = str(kind == Library::IMPL ? "TORCH_LIBRARY_IMPL(" : kind == Library::DEF
                                ? "TORCH_LIBRARY(" : "TORCH_LIBRARY_FRAGMENT(",
                            ns, dispatch_key ? std::string(", ") + dispatch_key : "", ") at ",
                            file, ":", line);
    if (!Py_IsInitialized()) {  // loaded by a program without Python: nothing to register with
      std::fprintf(stderr, "ember: %s: no Python interpreter to register with\n", where.c_str());
      return;
    }
    // ctypes and the import system load libraries with the GIL held; take it anyway, in case a
    // loader released it.
    PyGILState_STATE gil = PyGILState_Ensure();
    {
      std::string failure;
      try {
        Library lib(kind, ns, dispatch_key, file, line);
        body(lib);
      } catch (py::error_already_set& e) {
        failure = py::str(e.value()).cast<std::string>();
        std::string type = py::str(e.type().attr("__name__")).cast<std::string>();
        failure = type + ": " + failure;
      } catch (const std::exception& e) {
        failure = e.what();
      } catch (...) {
        failure = "an unknown C++ exception";
      }
      if (!failure.empty()) report_registration_failure(where, failure);
    }
    PyGILState_Release(gil);
  }
};

}  // namespace detail
}  // namespace ember

#define EMBER_LIBRARY_CAT_(a, b) a##b
#define EMBER_LIBRARY_CAT(a, b) EMBER_LIBRARY_CAT_(a, b)

#define EMBER_LIBRARY_BLOCK_(kind, ns, key, m, uid)                                            \
  static void EMBER_LIBRARY_CAT(ember_library_body_##ns##_, uid)(::ember::Library&);          \
  static const ::ember::detail::LibraryInit EMBER_LIBRARY_CAT(ember_library_init_##ns##_, uid)( \
      ::ember::Library::kind, &EMBER_LIBRARY_CAT(ember_library_body_##ns##_, uid), #ns, key,   \
      __FILE__, __LINE__);                                                                     \
  void EMBER_LIBRARY_CAT(ember_library_body_##ns##_, uid)(::ember::Library & m)

/// Defines the operators of namespace ``ns`` (one such block per namespace in a process).
#define EMBER_LIBRARY(ns, m) EMBER_LIBRARY_BLOCK_(DEF, ns, nullptr, m, __COUNTER__)
/// Defines more operators of ``ns`` (any number of blocks).
#define EMBER_LIBRARY_FRAGMENT(ns, m) EMBER_LIBRARY_BLOCK_(FRAGMENT, ns, nullptr, m, __COUNTER__)
/// Implements operators of ``ns`` for one dispatch key (CPU, CUDA, Meta, ...).
#define EMBER_LIBRARY_IMPL(ns, k, m) EMBER_LIBRARY_BLOCK_(IMPL, ns, #k, m, __COUNTER__)
