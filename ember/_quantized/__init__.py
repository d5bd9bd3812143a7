"""Quantization's core: the quantized dtypes and schemes, fake quantization (the
differentiable ops of quantization-aware training, ``ember._ops.fake_quant``) and
quantized tensors (``tensor.py``). The library on top is ``ember.ao.quantization``.

>>> import ember
>>> q = ember.quantize_per_tensor(ember.tensor([0.5, -1.0]), 0.5, 2, ember.quint8)
>>> q.int_repr(), q.dequantize()
(tensor([3, 0], dtype=ember.uint8), tensor([ 0.5000, -1.0000]))
"""
from ..backend.dtypes import quint8, qint8, qint32, quint4x2, quint2x4
from .._ops.fake_quant import (fake_quantize_per_tensor_affine,
                               fake_quantize_per_channel_affine,
                               _fake_quantize_learnable_per_tensor_affine,
                               _fake_quantize_learnable_per_channel_affine)
from .qscheme import (qscheme, per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                      per_channel_symmetric, per_channel_affine_float_qparams)
from .tensor import QuantizedTensor, quantize_per_tensor, quantize_per_channel, dequantize

from .._torch_function import wrap_namespace as _wrap_namespace

__all__ = ["quint8", "qint8", "qint32", "quint4x2", "quint2x4",
           "fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine",
           "_fake_quantize_learnable_per_tensor_affine",
           "_fake_quantize_learnable_per_channel_affine",
           "qscheme", "per_tensor_affine", "per_channel_affine", "per_tensor_symmetric",
           "per_channel_symmetric", "per_channel_affine_float_qparams",
           "quantize_per_tensor", "quantize_per_channel", "dequantize"]
# public entry points of their own, as PyTorch's (``__torch_function__`` overrides see them)
_wrap_namespace(globals(), [name for name in __all__ if "quantize" in name], "ember")
