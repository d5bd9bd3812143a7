"""The LLTM cell of PyTorch's "Custom C++ extensions" tutorial, three ways.

* ``LLTM`` -- forward and backward in C++ (``lltm.cpp``, compiled on first use by
  ``ember.utils.cpp_extension.load`` and cached), wrapped in ``LLTMFunction``;
* ``LLTMPython`` -- the same cell written with ember ops (autograd derives the backward);

Both modules have the same parameters (``weights``: (3 * state_size, input_features +
state_size), ``bias``: (3 * state_size,)) and compute the same thing::

    X = [old_h, input];  gates = X @ weights.T + bias  ->  (input, output, candidate)
    new_cell = old_cell + elu(candidate) * sigmoid(input);  new_h = tanh(new_cell) * sigmoid(output)
"""
import math
import os

import ember
import ember.nn.functional as F
from ember import nn
from ember.autograd.function import once_differentiable
from ember.utils.cpp_extension import load

_HERE = os.path.dirname(os.path.abspath(__file__))
_ext = None
# -O3 -ffast-math lets GCC vectorize the exp/tanh/expm1 calls with glibc's vector math library
# (libmvec), as NumPy's own SIMD loops are; without it the fused loops call scalar libm.
EXTRA_CFLAGS = ["-O3", "-ffast-math"]


def extension(verbose=False):
    """The compiled C++ module (built on first call, then loaded from the cache)."""
    global _ext
    if _ext is None:
        _ext = load("lltm_cpp", [os.path.join(_HERE, "lltm.cpp")], extra_cflags=EXTRA_CFLAGS,
                    verbose=verbose)
    return _ext


class LLTMFunction(ember.autograd.Function):
    """The LLTM cell with forward and backward in C++."""

    @staticmethod
    def forward(ctx, input, weights, bias, old_h, old_cell):
        new_h, new_cell, *saved = extension().forward(input, weights, bias, old_h, old_cell)
        ctx.save_for_backward(new_cell, *saved, weights)
        return new_h, new_cell

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_h, grad_cell):
        d_old_h, d_input, d_weights, d_bias, d_old_cell = extension().backward(
            grad_h, grad_cell, *ctx.saved_tensors)
        return d_input, d_weights, d_bias, d_old_h, d_old_cell


class _LLTMBase(nn.Module):
    def __init__(self, input_features, state_size, dtype=None):
        super().__init__()
        self.input_features = input_features
        self.state_size = state_size
        self.weights = nn.Parameter(ember.empty(3 * state_size, input_features + state_size,
                                                dtype=dtype))
        self.bias = nn.Parameter(ember.empty(3 * state_size, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.state_size)
        for weight in self.parameters():
            nn.init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        return f"{self.input_features}, {self.state_size}"


class LLTM(_LLTMBase):
    """LLTM cell backed by the C++ extension: ``new_h, new_cell = cell(input, (h, c))``."""

    def forward(self, input, state):
        return LLTMFunction.apply(input, self.weights, self.bias, *state)


class LLTMPython(_LLTMBase):
    """The same cell in pure ember (the tutorial's Python version)."""

    def forward(self, input, state):
        old_h, old_cell = state
        X = ember.cat([old_h, input], dim=1)
        gate_weights = F.linear(X, self.weights, self.bias)
        gates = gate_weights.chunk(3, dim=1)
        input_gate = ember.sigmoid(gates[0])
        output_gate = ember.sigmoid(gates[1])
        candidate_cell = F.elu(gates[2])
        new_cell = old_cell + candidate_cell * input_gate
        new_h = ember.tanh(new_cell) * output_gate
        return new_h, new_cell


if __name__ == "__main__":
    ember.manual_seed(0)
    x = ember.randn(4, 8, dtype=ember.float64)
    h = ember.randn(4, 16, dtype=ember.float64)
    c = ember.randn(4, 16, dtype=ember.float64)
    w = ember.randn(48, 24, dtype=ember.float64) * 0.3
    b = ember.randn(48, dtype=ember.float64)
    inputs = [t.requires_grad_() for t in (x, w, b, h, c)]
    print("gradcheck:", ember.autograd.gradcheck(LLTMFunction.apply, inputs))
    cell, ref = LLTM(8, 16), LLTMPython(8, 16)
    ref.load_state_dict(cell.state_dict())
    out, want = cell(x.float(), (h.float(), c.float())), ref(x.float(), (h.float(), c.float()))
    print("max |C++ - ember|:", max(float((o - r).abs().max()) for o, r in zip(out, want)))
