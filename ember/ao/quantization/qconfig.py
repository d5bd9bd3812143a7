"""``QConfig``: which observer or fake-quantize constructors a layer's activation and
weight get, and PyTorch's default QAT configurations per backend.

>>> from ember.ao.quantization import get_default_qat_qconfig
>>> qconfig = get_default_qat_qconfig("fbgemm")
>>> qconfig.weight().qscheme
ember.per_channel_symmetric
"""
from __future__ import annotations

from collections import namedtuple

from ... import nn

from .fake_quantize import (FakeQuantize, FusedMovingAvgObsFakeQuantize, default_fake_quant,
                            default_fused_per_channel_wt_fake_quant,
                            default_fused_wt_fake_quant,
                            default_per_channel_weight_fake_quant, default_weight_fake_quant)
from .observer import MovingAverageMinMaxObserver


class QConfig(namedtuple("QConfig", ["activation", "weight"])):
    """The pair of constructors (classes or ``with_args`` results) for a layer's activation
    and weight observers; instances are refused."""

    def __new__(cls, activation, weight):
        if isinstance(activation, nn.Module) or isinstance(weight, nn.Module):
            raise ValueError(
                "QConfig received observer instance, please pass observer class instead. "
                "Use MyObserver.with_args(x=1) to override arguments to constructor if needed")
        return super().__new__(cls, activation, weight)


default_qat_qconfig = QConfig(activation=default_fake_quant, weight=default_weight_fake_quant)


def get_default_qat_qconfig(backend="x86", version=1):
    """The default QAT qconfig of a backend ("x86", "fbgemm", "qnnpack", "onednn");
    ``version=1`` uses the fused observer + fake-quant modules, ``version=0`` the plain."""
    supported = ["fbgemm", "x86", "qnnpack", "onednn"]
    if backend not in supported:
        raise AssertionError(f"backend: {backend} not supported. backend must be one of "
                             f"{supported}")
    if version == 0:
        fake_quant_cls = FakeQuantize
        per_channel_weight = default_per_channel_weight_fake_quant
        per_tensor_weight = default_weight_fake_quant
    elif version == 1:
        fake_quant_cls = FusedMovingAvgObsFakeQuantize
        per_channel_weight = default_fused_per_channel_wt_fake_quant
        per_tensor_weight = default_fused_wt_fake_quant
    else:
        raise AssertionError(f"Version number: {version}in get_default_qat_qconfig is not "
                             "supported. Version number must be 0 or 1")
    if backend == "onednn" and version == 0:
        activation = fake_quant_cls.with_args(observer=MovingAverageMinMaxObserver,
                                              quant_min=0, quant_max=255)
    else:
        activation = fake_quant_cls.with_args(observer=MovingAverageMinMaxObserver,
                                              quant_min=0, quant_max=255,
                                              reduce_range=backend in ("fbgemm", "x86"))
    weight = per_tensor_weight if backend == "qnnpack" else per_channel_weight
    return QConfig(activation=activation, weight=weight)
