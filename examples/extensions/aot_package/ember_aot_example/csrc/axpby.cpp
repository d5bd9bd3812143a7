// out = a * x + b * y in one pass, for float32 and float64 tensors of the same shape.
#include <ember/extension.h>

ember::Tensor axpby(double a, ember::Tensor x, double b, ember::Tensor y) {
  EMBER_CHECK(x.sizes() == y.sizes(), "axpby: x and y must have the same shape, got ",
              x.sizes(), " and ", y.sizes());
  EMBER_CHECK(x.scalar_type() == y.scalar_type(), "axpby: x and y must have the same dtype, got ",
              x.scalar_type(), " and ", y.scalar_type());
  auto xc = x.contiguous(), yc = y.contiguous();
  auto out = ember::empty(x.sizes(), x.scalar_type());
  EMBER_DISPATCH_FLOATING_TYPES(x.scalar_type(), "axpby", [&] {
    const scalar_t* px = xc.data_ptr<scalar_t>();
    const scalar_t* py = yc.data_ptr<scalar_t>();
    scalar_t* po = out.data_ptr<scalar_t>();
    for (int64_t i = 0, n = out.numel(); i < n; ++i) po[i] = a * px[i] + b * py[i];
  });
  return out;
}

PYBIND11_MODULE(EMBER_EXTENSION_NAME, m) {
  m.doc() = "ember_aot_example: a C++ extension built ahead of time with BuildExtension";
  m.def("axpby", &axpby, "a * x + b * y", pybind11::arg("a"), pybind11::arg("x"),
        pybind11::arg("b"), pybind11::arg("y"));
}
