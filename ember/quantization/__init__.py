"""``ember.quantization``: the older name of ``ember.ao.quantization`` (PyTorch keeps
``torch.quantization`` as the same alias).

>>> import ember
>>> ember.quantization.FakeQuantize is ember.ao.quantization.FakeQuantize
True
"""
from ..ao.quantization import *  # noqa: F401,F403
from ..ao.quantization import __all__  # noqa: F401
from ..ao.quantization import observer, fake_quantize, qconfig  # noqa: F401
