"""``autocast``: ember runs every op in its inputs' dtype; the context exists so that
scripts written with ``enabled=use_amp`` or for a GPU run unchanged."""
import warnings

from ..backend import device_module
from ..device import device as _device


def is_autocast_available(device_type):
    """Whether autocast can be enabled for ``device_type``: not on ember (no op runs in a
    lower precision on its own)."""
    _device(device_type)
    return False


class autocast:
    """``with ember.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):``

    Disabled (``enabled=False``, or ``"cuda"`` without a GPU): runs the block unchanged,
    as PyTorch does. Enabled on the CPU or on a GPU: NotImplementedError, because ember
    has no lower-precision op policy and running in float32 would ignore the request.

    >>> import ember
    >>> with ember.autocast("cpu", enabled=False):
    ...     y = ember.ones(2, 2) @ ember.ones(2, 2)
    >>> y.dtype
    ember.float32
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        self.device = _device(device_type).type
        self.fast_dtype, self._enabled = dtype, bool(enabled)
        if self._enabled and self.device == "cuda" and device_module("cuda") is None:
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. "
                          "Disabling", stacklevel=2)
            self._enabled = False
        if self._enabled:
            raise NotImplementedError(
                f"autocast on '{self.device}' is not implemented in ember: ops run in their "
                f"inputs' dtype (pass enabled=False, or cast the model/inputs explicitly)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, func):
        def wrapped(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        wrapped.__name__, wrapped.__doc__ = func.__name__, func.__doc__
        return wrapped
