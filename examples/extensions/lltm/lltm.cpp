// A fused LLTM cell (the "Custom C++ extensions" tutorial's example) for ember.
//
// The two matrix products go through ember (NumPy's BLAS); everything element-wise between them
// -- three gates, the cell update and, in backward, their derivatives -- is one C++ loop over the
// batch instead of a dozen separate ember ops, each with its own temporaries.
#include <ember/extension.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace {

template <typename T> inline T sigmoid(T z) { return T(1) / (T(1) + std::exp(-z)); }
template <typename T> inline T elu(T z) {  // alpha = 1; expm1 unconditional so it vectorizes
  const T e = std::expm1(std::min(z, T(0)));
  return z > 0 ? z : e;
}

template <typename T>
void forward_kernel(const T* __restrict__ gates, const T* __restrict__ old_cell,
                    T* __restrict__ new_h, T* __restrict__ new_cell, T* __restrict__ input_gate,
                    T* __restrict__ output_gate, T* __restrict__ candidate_cell, int64_t batch,
                    int64_t state) {
  for (int64_t b = 0; b < batch; ++b) {
    const T* g = gates + b * 3 * state;
    for (int64_t j = 0; j < state; ++j) {
      const int64_t k = b * state + j;
      const T ig = sigmoid(g[j]), og = sigmoid(g[state + j]), cc = elu(g[2 * state + j]);
      const T c = old_cell[k] + cc * ig;
      input_gate[k] = ig;
      output_gate[k] = og;
      candidate_cell[k] = cc;
      new_cell[k] = c;
      new_h[k] = std::tanh(c) * og;
    }
  }
}

template <typename T>
void backward_kernel(const T* __restrict__ grad_h, const T* __restrict__ grad_cell,
                     const T* __restrict__ new_cell, const T* __restrict__ input_gate,
                     const T* __restrict__ output_gate, const T* __restrict__ candidate_cell,
                     const T* __restrict__ gates, T* __restrict__ d_gates,
                     T* __restrict__ d_old_cell, int64_t batch, int64_t state) {
  for (int64_t b = 0; b < batch; ++b) {
    const T* g = gates + b * 3 * state;
    T* dg = d_gates + b * 3 * state;
    for (int64_t j = 0; j < state; ++j) {
      const int64_t k = b * state + j;
      const T ig = input_gate[k], og = output_gate[k], cc = candidate_cell[k];
      const T t = std::tanh(new_cell[k]);
      const T d_new_cell = (T(1) - t * t) * og * grad_h[k] + grad_cell[k];
      d_old_cell[k] = d_new_cell;
      dg[j] = cc * d_new_cell * ig * (T(1) - ig);                        // input gate
      dg[state + j] = t * grad_h[k] * og * (T(1) - og);                  // output gate
      const T z = g[2 * state + j];
      dg[2 * state + j] = ig * d_new_cell * (z > 0 ? T(1) : cc + T(1));  // candidate (elu')
    }
  }
}

void check_inputs(const std::vector<ember::Tensor>& ts) {
  for (const auto& t : ts) {
    EMBER_CHECK(t.scalar_type() == ts[0].scalar_type(), "lltm: all tensors must have dtype ",
                ts[0].scalar_type(), ", got ", t.scalar_type());
    EMBER_CHECK(t.dim() == 2 || t.dim() == 1, "lltm: expected 1-D or 2-D tensors, got ", t.dim(),
                "-D");
  }
}

}  // namespace

/// Returns new_h, new_cell and what backward needs: input_gate, output_gate, candidate_cell,
/// X (= [old_h, input]) and the gate pre-activations.
std::vector<ember::Tensor> lltm_forward(ember::Tensor input, ember::Tensor weights,
                                        ember::Tensor bias, ember::Tensor old_h,
                                        ember::Tensor old_cell) {
  check_inputs({input, weights, bias, old_h, old_cell});
  const int64_t batch = old_cell.size(0), state = old_cell.size(1);
  EMBER_CHECK(weights.size(0) == 3 * state, "lltm: weights must have 3 * state_size = ",
              3 * state, " rows, got ", weights.size(0));
  auto X = ember::cat({old_h, input}, 1);
  auto gates = ember::addmm(bias, X, weights.t()).contiguous();
  auto cell = old_cell.contiguous();
  auto opts = ember::TensorOptions(input.scalar_type());
  auto new_h = ember::empty({batch, state}, opts), new_cell = ember::empty({batch, state}, opts);
  auto ig = ember::empty({batch, state}, opts), og = ember::empty({batch, state}, opts),
       cc = ember::empty({batch, state}, opts);
  EMBER_DISPATCH_FLOATING_TYPES(input.scalar_type(), "lltm_forward", [&] {
    forward_kernel<scalar_t>(gates.data_ptr<scalar_t>(), cell.data_ptr<scalar_t>(),
                             new_h.data_ptr<scalar_t>(), new_cell.data_ptr<scalar_t>(),
                             ig.data_ptr<scalar_t>(), og.data_ptr<scalar_t>(),
                             cc.data_ptr<scalar_t>(), batch, state);
  });
  return {new_h, new_cell, ig, og, cc, X, gates};
}

/// Returns the gradients for old_h, input, weights, bias and old_cell.
std::vector<ember::Tensor> lltm_backward(ember::Tensor grad_h, ember::Tensor grad_cell,
                                         ember::Tensor new_cell, ember::Tensor input_gate,
                                         ember::Tensor output_gate, ember::Tensor candidate_cell,
                                         ember::Tensor X, ember::Tensor gates,
                                         ember::Tensor weights) {
  const int64_t batch = new_cell.size(0), state = new_cell.size(1);
  auto gh = grad_h.contiguous(), gc = grad_cell.contiguous();
  auto d_gates = ember::empty({batch, 3 * state}, ember::TensorOptions(new_cell.scalar_type()));
  auto d_old_cell = ember::empty_like(new_cell);
  EMBER_DISPATCH_FLOATING_TYPES(new_cell.scalar_type(), "lltm_backward", [&] {
    backward_kernel<scalar_t>(gh.data_ptr<scalar_t>(), gc.data_ptr<scalar_t>(),
                              new_cell.data_ptr<scalar_t>(), input_gate.data_ptr<scalar_t>(),
                              output_gate.data_ptr<scalar_t>(),
                              candidate_cell.data_ptr<scalar_t>(), gates.data_ptr<scalar_t>(),
                              d_gates.data_ptr<scalar_t>(), d_old_cell.data_ptr<scalar_t>(), batch,
                              state);
  });
  auto d_weights = d_gates.t().mm(X);
  auto d_bias = d_gates.sum(0);
  auto d_X = d_gates.mm(weights);
  auto d_old_h = d_X.slice(1, 0, state);
  auto d_input = d_X.slice(1, state);
  return {d_old_h, d_input, d_weights, d_bias, d_old_cell};
}

PYBIND11_MODULE(EMBER_EXTENSION_NAME, m) {
  m.def("forward", &lltm_forward, "LLTM forward (fused gates and cell update)");
  m.def("backward", &lltm_backward, "LLTM backward (fused gate derivatives)");
}
