"""``autocast``: regions where chosen ops run in a lower precision (PyTorch's op lists,
``ember/_autocast/policy.py``), and ``custom_fwd`` / ``custom_bwd`` for custom Functions."""
import functools
import warnings

from .. import _autocast
from ..backend import device_module
from ..backend.dtypes import bfloat16, float16
from ..device import device as _device

#: device types autocast knows (PyTorch's other backends are not ember's)
_DEVICE_TYPES = ("cpu", "cuda")


def is_autocast_available(device_type):
    """Whether autocast has an op policy for ``device_type`` ("cpu" and "cuda").

    >>> import ember
    >>> ember.amp.is_autocast_available("cpu"), ember.amp.is_autocast_available("meta")
    (True, False)
    """
    return _device(device_type).type in _DEVICE_TYPES


class autocast:
    """``with ember.autocast(device_type, dtype=None, enabled=True, cache_enabled=None):``

    Inside, the ops on PyTorch's lists run in ``dtype`` (default: bfloat16 on the CPU,
    float16 on CUDA) -- matmuls, linear layers, convolutions -- or in float32 (losses,
    reductions, ...), whatever their inputs' dtypes; the casts are differentiable, so
    float32 parameters get float32 gradients. Call ``backward`` after the region, as in
    PyTorch. Also a decorator. ``cache_enabled``: reuse each float32 weight's cast within
    the region (default on).

    >>> import ember
    >>> lin = ember.nn.Linear(4, 2)
    >>> with ember.autocast("cpu"):
    ...     out = lin(ember.ones(3, 4))
    ...     loss = out.float().sum()
    >>> out.dtype, loss.dtype
    (ember.bfloat16, ember.float32)
    >>> loss.backward(); lin.weight.grad.dtype
    ember.float32
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = _device(_device_type_checked(device_type)).type
        if self.device not in _DEVICE_TYPES:
            raise RuntimeError("unsupported scalarType")  # PyTorch's: no default dtype there
        self.fast_dtype = _autocast.get_dtype(self.device) if dtype is None else dtype
        self._cache_enabled = _autocast.is_cache_enabled() if cache_enabled is None \
            else cache_enabled
        enabled = bool(enabled)
        if enabled and self.device == "cuda":
            if device_module("cuda") is None:
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype is bfloat16:
                # CuPy has no bfloat16 arrays; PyTorch raises this on GPUs without it
                raise RuntimeError("Current CUDA Device does not support bfloat16. Please "
                                   "switch dtype to float16.")
        elif enabled and self.fast_dtype not in (bfloat16, float16):
            name = self.device.upper()
            warnings.warn(f"In {name} autocast, but the target dtype is not supported. "
                          f"Disabling autocast.\n{name} Autocast only supports dtypes of "
                          f"torch.bfloat16, torch.float16 currently.", stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        self.prev_cache_enabled = _autocast.is_cache_enabled()
        self.prev = _autocast.is_enabled(self.device)
        self.prev_fastdtype = _autocast.get_dtype(self.device)
        _autocast.set_enabled(self.device, self._enabled)
        _autocast.set_dtype(self.device, self.fast_dtype)
        _autocast.increment_nesting()
        _autocast.set_cache_enabled(self._cache_enabled)
        return self

    def __exit__(self, *exc):
        if _autocast.decrement_nesting() == 0:
            _autocast.clear_cache()  # no cast outlives the outermost region
        _autocast.set_enabled(self.device, self.prev)
        _autocast.set_dtype(self.device, self.prev_fastdtype)
        _autocast.set_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return decorate_autocast


def _device_type_checked(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    return device_type


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorate a custom Function's ``forward``: with ``cast_inputs`` (a dtype), in an
    autocast region its floating inputs on ``device_type`` are cast to it and forward
    runs with autocast off; without, forward runs under the region as it is. Pair it with
    ``custom_bwd``, which runs backward under the same autocast state.

    >>> import ember
    >>> class Square(ember.autograd.Function):
    ...     @staticmethod
    ...     @ember.amp.custom_fwd(device_type="cpu", cast_inputs=ember.float32)
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     @ember.amp.custom_bwd(device_type="cpu")
    ...     def backward(ctx, grad):
    ...         x, = ctx.saved_tensors
    ...         return 2 * x * grad
    >>> with ember.autocast("cpu"):
    ...     y = Square.apply(ember.ones(2, dtype=ember.bfloat16))
    >>> y.dtype
    ember.float32
    """
    _device_type_checked(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = _autocast.get_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = _autocast.is_enabled(device_type)
            return fwd(*args, **kwargs)
        ctx._fwd_used_autocast = False
        if not _autocast.is_enabled(device_type):
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_autocast.cast_floating(args, device_type, cast_inputs),
                       **_autocast.cast_floating(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorate a custom Function's ``backward``: it runs under the autocast state its
    ``forward`` (decorated with ``custom_fwd``) ran under."""
    _device_type_checked(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd


# ---- the state functions of ``ember`` (PyTorch's torch.* autocast functions) ---------------
def _device_type(device_type):
    return _device(device_type).type


def is_autocast_enabled(device_type=None):
    """Whether autocast is on for ``device_type`` in this thread (no argument: CUDA's).

    >>> import ember
    >>> with ember.autocast("cpu"):
    ...     ember.is_autocast_enabled("cpu"), ember.is_autocast_enabled()
    (True, False)
    """
    return _autocast.is_enabled("cuda" if device_type is None else _device_type(device_type))


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast on or off for ``device_type`` (one argument: CUDA's)."""
    if enabled is None:
        device_type, enabled = "cuda", device_type
    _autocast.set_enabled(_device_type(device_type), enabled)


def get_autocast_dtype(device_type):
    """The lower-precision dtype of ``device_type``'s autocast (bfloat16 on the CPU,
    float16 on CUDA until set)."""
    device_type = _device_type(device_type)
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError("unsupported scalarType")
    return _autocast.get_dtype(device_type)


def set_autocast_dtype(device_type, dtype):
    device_type = _device_type(device_type)
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError("unsupported scalarType")
    _autocast.set_dtype(device_type, dtype)


def _deprecated(name, instead, device_type, state_function):
    """PyTorch's per-device spelling ``name`` of ``state_function(device_type, ...)``, which
    warns that it is deprecated (``instead`` is the call to use)."""
    def deprecated(*args):
        warnings.warn(f"torch.{name}() is deprecated. Please use torch.{instead} instead.",
                      DeprecationWarning, stacklevel=2)
        return state_function(device_type, *args)
    deprecated.__name__ = deprecated.__qualname__ = name
    return deprecated


is_autocast_cpu_enabled = _deprecated("is_autocast_cpu_enabled", "is_autocast_enabled('cpu')",
                                      "cpu", _autocast.is_enabled)
set_autocast_cpu_enabled = _deprecated("set_autocast_cpu_enabled",
                                       "set_autocast_enabled('cpu', enabled)", "cpu",
                                       _autocast.set_enabled)
get_autocast_cpu_dtype = _deprecated("get_autocast_cpu_dtype", "get_autocast_dtype('cpu')",
                                     "cpu", _autocast.get_dtype)
set_autocast_cpu_dtype = _deprecated("set_autocast_cpu_dtype",
                                     "set_autocast_dtype('cpu', dtype)", "cpu",
                                     _autocast.set_dtype)
get_autocast_gpu_dtype = _deprecated("get_autocast_gpu_dtype", "get_autocast_dtype('cuda')",
                                     "cuda", _autocast.get_dtype)
set_autocast_gpu_dtype = _deprecated("set_autocast_gpu_dtype",
                                     "set_autocast_dtype('cuda', dtype)", "cuda",
                                     _autocast.set_dtype)

is_autocast_cache_enabled = _autocast.is_cache_enabled
set_autocast_cache_enabled = _autocast.set_cache_enabled
clear_autocast_cache = _autocast.clear_cache
autocast_increment_nesting = _autocast.increment_nesting
autocast_decrement_nesting = _autocast.decrement_nesting

#: what ``ember`` exports from here
STATE_FUNCTIONS = ("is_autocast_enabled", "set_autocast_enabled", "get_autocast_dtype",
                   "set_autocast_dtype", "is_autocast_cpu_enabled", "set_autocast_cpu_enabled",
                   "get_autocast_cpu_dtype", "set_autocast_cpu_dtype", "get_autocast_gpu_dtype",
                   "set_autocast_gpu_dtype", "is_autocast_cache_enabled",
                   "set_autocast_cache_enabled", "clear_autocast_cache",
                   "autocast_increment_nesting", "autocast_decrement_nesting")
