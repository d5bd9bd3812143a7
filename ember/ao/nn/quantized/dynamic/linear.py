"""The dynamically quantized Linear layer that ``quantize_dynamic`` puts in place of
``nn.Linear``: the weight is quantized once (qint8, per tensor, symmetric: the default
weight observer), each input is quantized at call time to quint8 over 7 bits (the fbgemm
backend's ``reduce_range``) with qparams chosen from its own minimum and maximum, the
product is taken on the integers exactly and scaled back to float32 before the bias is
added, as PyTorch's ``quantized::linear_dynamic`` on x86 does.

>>> import ember
>>> from ember.ao.nn.quantized.dynamic import Linear
>>> layer = Linear.from_float(ember.nn.Linear(4, 2))
>>> layer
DynamicQuantizedLinear(in_features=4, out_features=2, dtype=ember.qint8, \
qscheme=ember.per_tensor_affine)
"""
from __future__ import annotations

from ..... import nn
from ....._creation import tensor, zeros
from ....._functions.core import maximum, minimum
from ....._ops.statistics import aminmax
from ....._quantized.qparams import choose_qparams, f32
from ....._quantized.tensor import quantize_per_tensor
from .....backend.dtypes import float32, int64, qint8, quint8

_F32_EPS = 1.1920928955078125e-07


def _quantize_weight(weight):
    """qint8, per tensor, symmetric: the default weight observer's qparams (its formula,
    op for op: ``max(|min|, max) / 127.5``, at least float32's eps; zero point 0)."""
    weight = weight.detach().to(float32)
    lo, hi = aminmax(weight)
    zero = zeros(())
    bound = maximum(-minimum(lo, zero), maximum(hi, zero))
    scale = maximum(bound / ((127 - (-128)) / 2), tensor(_F32_EPS))
    return quantize_per_tensor(weight, float(scale), 0, qint8)


class Linear(nn.Module):
    """``y = dequant(quant(x) @ quant(W).T) + b`` (see the module); made by
    ``Linear.from_float(linear)`` or ``quantize_dynamic``. Inference only: it has no
    parameters and records no gradient."""

    def __init__(self, in_features, out_features, bias_=True, dtype=qint8):
        super().__init__()
        if dtype is not qint8:
            raise NotImplementedError("ember's dynamic quantized Linear supports qint8 only")
        self.in_features, self.out_features = in_features, out_features
        self._weight = quantize_per_tensor(zeros(out_features, in_features), 1.0, 0, qint8)
        self._bias = zeros(out_features) if bias_ else None

    def weight(self):
        """The quantized weight (qint8, per tensor)."""
        return self._weight

    def bias(self):
        return self._bias

    def set_weight_bias(self, weight, bias):
        self._weight, self._bias = weight, bias

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """The dynamic quantized form of a float ``nn.Linear``."""
        if type(mod) is not nn.Linear:
            raise AssertionError("nn.quantized.dynamic.Linear.from_float only works for "
                                 "Linear")
        layer = cls(mod.in_features, mod.out_features, mod.bias is not None)
        bias = None if mod.bias is None else mod.bias.detach().clone()
        layer.set_weight_bias(_quantize_weight(mod.weight.detach()), bias)
        return layer

    def forward(self, x):
        lo, hi = aminmax(x.detach().to(float32)) if x.numel() else (zeros(()), zeros(()))
        scale, zero_point = choose_qparams(float(lo), float(hi), 0, 127, False)
        xq = quantize_per_tensor(x.detach().to(float32), scale, zero_point, quint8)
        wq = self._weight
        acc = (xq.int_repr().to(int64) - zero_point).matmul(
            wq.int_repr().to(int64).t())
        y = acc.to(float32) * f32(scale * wq.q_scale())
        if self._bias is not None:
            y = y + self._bias
        return y.to(x.dtype)

    def _get_name(self):
        return "DynamicQuantizedLinear"

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"dtype={self._weight.dtype}, qscheme={self._weight.qscheme()}")
