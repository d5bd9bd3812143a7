"""``ember.ao.quantization``: observers, fake-quantize modules and qconfigs for
quantization-aware training (PyTorch's ``torch.ao.quantization``; the quantized tensors and
fake-quantize ops themselves are in ``ember``'s namespace).

>>> import ember
>>> from ember.ao.quantization import FakeQuantize
>>> FakeQuantize()(ember.tensor([0.5])).shape
ember.Size([1])
"""
from .observer import (ObserverBase, UniformQuantizationObserverBase, MinMaxObserver,
                       MovingAverageMinMaxObserver, PerChannelMinMaxObserver,
                       MovingAveragePerChannelMinMaxObserver, default_observer,
                       default_weight_observer, default_per_channel_weight_observer)
from .histogram_observer import HistogramObserver
from .fake_quantize import (FakeQuantizeBase, FakeQuantize, FusedMovingAvgObsFakeQuantize,
                            default_fake_quant, default_weight_fake_quant,
                            default_per_channel_weight_fake_quant,
                            default_fused_act_fake_quant, default_fused_wt_fake_quant,
                            default_fused_per_channel_wt_fake_quant, disable_fake_quant,
                            enable_fake_quant, disable_observer, enable_observer)
from .qconfig import QConfig, default_qat_qconfig, get_default_qat_qconfig
from .quantize import quantize_dynamic
from . import observer, fake_quantize, qconfig  # noqa: F401  (the submodules, as PyTorch's)

__all__ = ["ObserverBase", "UniformQuantizationObserverBase", "MinMaxObserver",
           "MovingAverageMinMaxObserver", "PerChannelMinMaxObserver",
           "MovingAveragePerChannelMinMaxObserver", "HistogramObserver", "default_observer",
           "default_weight_observer", "default_per_channel_weight_observer",
           "FakeQuantizeBase", "FakeQuantize", "FusedMovingAvgObsFakeQuantize",
           "default_fake_quant", "default_weight_fake_quant",
           "default_per_channel_weight_fake_quant", "default_fused_act_fake_quant",
           "default_fused_wt_fake_quant", "default_fused_per_channel_wt_fake_quant",
           "disable_fake_quant", "enable_fake_quant", "disable_observer", "enable_observer",
           "QConfig", "default_qat_qconfig", "get_default_qat_qconfig", "quantize_dynamic"]
