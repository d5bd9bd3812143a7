"""``ember.cpu.amp``: the deprecated spelling of ``ember.amp.autocast("cpu")``."""
import warnings

from ..amp import autocast as _autocast
from ..backend.dtypes import bfloat16


class autocast(_autocast):
    def __init__(self, enabled=True, dtype=bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
