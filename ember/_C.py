"""``ember._C``: the few names PyTorch code reaches in ``torch._C`` for the
``__torch_function__`` protocol (ember has no C extension of that name).

>>> import ember
>>> ember._C._is_torch_function_enabled()
True
>>> with ember._C.DisableTorchFunctionSubclass():
...     ember._C._is_torch_function_enabled()
False
"""
from ._torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass,
                              _disabled_torch_function_impl, _is_torch_function_enabled,
                              _is_torch_function_mode_enabled)

__all__ = ["DisableTorchFunction", "DisableTorchFunctionSubclass",
           "_disabled_torch_function_impl", "_is_torch_function_enabled",
           "_is_torch_function_mode_enabled"]
