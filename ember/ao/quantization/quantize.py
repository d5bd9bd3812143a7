"""``quantize_dynamic``: a model's Linear layers swapped for dynamically quantized ones
(PyTorch's ``torch.ao.quantization.quantize_dynamic``, for ``nn.Linear`` and qint8).

>>> import ember
>>> from ember.ao.quantization import quantize_dynamic
>>> model = quantize_dynamic(ember.nn.Sequential(ember.nn.Linear(4, 2)), {ember.nn.Linear})
>>> type(model[0]).__name__
'Linear'
"""
from __future__ import annotations

import copy

from ... import nn
from ...backend.dtypes import qint8
from ..nn.quantized.dynamic import Linear as DynamicLinear

#: what PyTorch's default specification lists besides Linear (not quantized here)
_RECURRENT = ("LSTM", "GRU", "LSTMCell", "RNNCell", "GRUCell")


def quantize_dynamic(model, qconfig_spec=None, dtype=qint8, mapping=None, inplace=False):
    """``model`` (a copy unless ``inplace``) in eval mode with each ``nn.Linear`` whose type
    ``qconfig_spec`` names (a set of module types; None: PyTorch's default set) replaced by
    ``ember.ao.nn.quantized.dynamic.Linear``. Only qint8 and Linear are supported:
    recurrent layers the specification reaches, other dtypes, a dict specification and a
    custom ``mapping`` raise NotImplementedError."""
    if dtype is not qint8:
        raise NotImplementedError(f"quantize_dynamic with dtype={dtype}: ember supports "
                                  "qint8 only")
    if mapping is not None:
        raise NotImplementedError("quantize_dynamic with a custom mapping")
    if qconfig_spec is None:
        types = {nn.Linear} | {getattr(nn, name) for name in _RECURRENT}
    elif isinstance(qconfig_spec, set):
        types = set(qconfig_spec)
    else:
        raise NotImplementedError("quantize_dynamic with a dict qconfig_spec")
    if not inplace:
        model = copy.deepcopy(model)
    model.eval()
    if type(model) in types and type(model) is nn.Linear:
        return DynamicLinear.from_float(model)
    _swap(model, types)
    return model


def _swap(module, types):
    for name, child in module.named_children():
        if type(child) in types:
            if type(child) is not nn.Linear:
                raise NotImplementedError(
                    f"quantize_dynamic of {type(child).__name__}: ember quantizes nn.Linear "
                    "only")
            setattr(module, name, DynamicLinear.from_float(child))
        else:
            _swap(child, types)
