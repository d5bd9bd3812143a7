"""Autocast's state and its one hook: what a public op does in an autocast region.

The state is per thread, as PyTorch's: which device types have autocast on, their
lower-precision dtypes, the cast cache. While any thread has a region on, every public
entry point (``_torch_function``) hands its call to ``call``: the op's policy
(``policy.py``) casts its floating arguments on that device, then the op runs as one
piece, with autocast off inside it -- as PyTorch's autocast kernels exclude their own
dispatch key -- so an op's own helpers never cast again. The casts are ordinary
differentiable ``Tensor.to`` calls: gradients flow back to the float32 leaves in float32.

>>> import ember
>>> w = ember.ones(3, 3, requires_grad=True)
>>> with ember.autocast("cpu", dtype=ember.bfloat16):
...     y = ember.ones(2, 3) @ w
>>> y.dtype, w.dtype
(ember.bfloat16, ember.float32)
"""
import threading

from .. import _torch_function
from .._tensor import Tensor
from ..backend.dtypes import bfloat16, float16, float32, float64
from . import policy as _policy

#: each device type's lower-precision dtype until set (PyTorch's defaults)
DEFAULT_DTYPES = {"cpu": bfloat16, "cuda": float16}


class _State(threading.local):
    def __init__(self):
        self.enabled = {}      # device type -> bool
        self.dtypes = dict(DEFAULT_DTYPES)
        self.cache_enabled = True
        self.nesting = 0       # depth of autocast contexts (the cache is dropped at 0)
        self.suspended = 0     # > 0 inside an op's own code: its helpers do not cast
        self.on = 0            # device types with autocast on in this thread


_state = _State()
_cache = {}  # id(float32 leaf) -> (leaf, its lower-precision copy): reused weight casts
_lock = threading.Lock()
_threads_on = [0]  # threads with a region on anywhere: the entry points' hook is set then


def _switch(delta):
    with _lock:
        _threads_on[0] += delta
        _torch_function.set_autocast_hook(call if _threads_on[0] else None)


def is_enabled(device_type):
    return _state.enabled.get(device_type, False)


def set_enabled(device_type, enabled):
    enabled = bool(enabled)
    was = _state.enabled.get(device_type, False)
    if enabled == was:
        return
    _state.enabled[device_type] = enabled
    before = _state.on
    _state.on += 1 if enabled else -1
    if (before == 0) != (_state.on == 0):
        _switch(1 if _state.on else -1)


def get_dtype(device_type):
    return _state.dtypes[device_type]


def set_dtype(device_type, dtype):
    _state.dtypes[device_type] = dtype


def is_cache_enabled():
    return _state.cache_enabled


def set_cache_enabled(enabled):
    _state.cache_enabled = bool(enabled)


def increment_nesting():
    _state.nesting += 1
    return _state.nesting


def decrement_nesting():
    _state.nesting -= 1
    return _state.nesting


def clear_cache():
    with _lock:
        _cache.clear()


class suspended:
    """Autocast off in this thread while inside (an op's own code, a backward pass)."""

    def __enter__(self):
        _state.suspended += 1

    def __exit__(self, *exc):
        _state.suspended -= 1
        return False


def pause():
    """Turn this thread's autocast off (a backward pass runs in its forward's dtypes);
    returns what ``resume`` needs, None when it was off."""
    if not _state.on:
        return None
    saved = dict(_state.enabled)
    for device_type in saved:
        set_enabled(device_type, False)
    return saved


def resume(saved):
    if saved:
        for device_type, enabled in saved.items():
            set_enabled(device_type, enabled)


def is_suspended():
    return _state.suspended > 0


def cast_floating(value, device_type, dtype):
    """``value`` with its floating tensors on ``device_type`` (None: any device; float64
    ones left alone) cast to ``dtype``, looking into lists, tuples and dicts."""
    if isinstance(value, Tensor):
        return value.to(dtype) if _eligible(value, device_type) and value.dtype is not dtype \
            else value
    if isinstance(value, dict):
        return {k: cast_floating(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(cast_floating(v, device_type, dtype) for v in value)
    return value


def snapshot():
    """This thread's autocast state (devices on, dtypes, cache switch), for ``restored``."""
    return dict(_state.enabled), dict(_state.dtypes), _state.cache_enabled


class restored:
    """Run a block under a ``snapshot``'s autocast state (a checkpoint's recomputation runs
    as its forward did), then put the state from before the block back."""

    def __init__(self, state):
        self.state = state

    def __enter__(self):
        self.outer = snapshot()
        self._apply(self.state)

    def __exit__(self, *exc):
        self._apply(self.outer)
        return False

    @staticmethod
    def _apply(state):
        enabled, dtypes, cache_enabled = state
        for device_type in set(enabled) | set(_state.enabled):
            set_enabled(device_type, enabled.get(device_type, False))
        _state.dtypes.update(dtypes)
        _state.cache_enabled = cache_enabled


# ---- the hook ---------------------------------------------------------------------------
_keys = {}


def op_key(func):
    """PyTorch's operator name for a public function or method (``ember.linalg.inv`` ->
    ``linalg_inv``; ``Tensor.__rpow__`` -> ``pow``)."""
    key = _keys.get(func)
    if key is None:  # first call of this function in a region
        name = getattr(func, "__name__", "")
        module = getattr(func, "_public_module", None) or ""
        for prefix in ("linalg", "special", "fft"):
            if module == "ember." + prefix:
                name = f"{prefix}_{name}"
        key = _keys[func] = _policy.ALIASES.get(name, name)
    return key


def _first_tensor(args, kwargs):
    for a in args:
        if isinstance(a, Tensor):
            return a
        if type(a) in (list, tuple):
            for item in a:
                if isinstance(item, Tensor):
                    return item
    for a in kwargs.values():
        if isinstance(a, Tensor):
            return a
    return None


def _eligible(t, device_type):
    return isinstance(t, Tensor) and t.is_floating_point() and t.dtype is not float64 and \
        (device_type is None or t.device.type == device_type)


def _cast(t, dtype, device_type):
    if not _eligible(t, device_type) or t.dtype is dtype:
        return t
    if dtype is _state.dtypes[device_type] and t.dtype is float32 and t.requires_grad and \
            t.is_leaf and t._base is None and _state.cache_enabled:
        # a float32 weight used by several ops in one region is cast once, as PyTorch does
        hit = _cache.get(id(t))
        if hit is not None and hit[0] is t:
            return hit[1]
        copy = t.to(dtype)
        with _lock:
            _cache[id(t)] = (t, copy)
        return copy
    return t.to(dtype)


def _map(value, fn):
    if isinstance(value, Tensor):
        return fn(value)
    if type(value) in (list, tuple):
        return type(value)(fn(v) if isinstance(v, Tensor) else v for v in value)
    return value


def _widest(args, kwargs, device_type, lower):
    widest = lower
    for a in list(args) + list(kwargs.values()):
        for t in (a if type(a) in (list, tuple) else (a,)):
            if _eligible(t, device_type) and t.dtype is float32:
                widest = float32
    return widest


def cast_arguments(func, args, kwargs):
    """The arguments as ``func``'s autocast policy wants them, or None (nothing to do)."""
    key = op_key(func)
    if key not in _policy.LISTED:
        return None
    first = _first_tensor(args, kwargs)
    if first is None:
        return None
    device_type = first.device.type
    if not _state.enabled.get(device_type) or kwargs.get("out") is not None:
        return None
    rule = _policy.TABLES.get(device_type, {}).get(key)
    if callable(rule):
        rule = rule(args, kwargs)
    if rule is None or kwargs.get("dtype") is not None:
        return None
    lower = _state.dtypes[device_type]
    if rule == _policy.BANNED:
        raise RuntimeError(_policy.BANNED_MESSAGE)
    if rule == _policy.FP32_FIRST:
        if not _eligible(args[0] if args else None, device_type):
            return None
        return (_cast(args[0], float32, device_type),) + tuple(args[1:]), kwargs
    target = {_policy.LOWER: lower, _policy.FP32: float32}.get(rule) or \
        _widest(args, kwargs, device_type, lower)

    def cast(t):
        return _cast(t, target, device_type)
    return (tuple(_map(a, cast) for a in args),
            {k: _map(v, cast) for k, v in kwargs.items()})


def call(func, impl, args, kwargs):
    """An entry point's call in a thread where autocast may be on: the op run on its
    cast arguments with autocast off inside, or ``PASS`` (autocast off in this thread, or
    an op whose pieces PyTorch casts one by one)."""
    st = _state
    if not st.on or st.suspended or op_key(func) in _policy.TRANSPARENT:
        return _torch_function.PASS
    st.suspended += 1
    try:
        cast = cast_arguments(func, args, kwargs)
        if cast is not None:
            args, kwargs = cast
        return impl(*args, **kwargs)
    finally:
        st.suspended -= 1


def cast_operands(func, args):
    """``cast_arguments`` for an op's own ``apply`` bound as a method (positional only):
    the arguments to run it on."""
    st = _state
    if not st.on or st.suspended or op_key(func) not in _policy.LISTED:
        return args
    st.suspended += 1
    try:
        cast = cast_arguments(func, args, {})
    finally:
        st.suspended -= 1
    return args if cast is None else cast[0]


def lower_precision_module(kind, device_type):
    """The dtype a recurrent layer (``kind``: "lstm", "gru", "lstm_cell", ...) runs in
    under autocast on ``device_type`` now, or None (PyTorch casts the fused cuDNN / oneDNN
    recurrent kernels, which ember's layers stand for)."""
    if not _state.on or _state.suspended or not _state.enabled.get(device_type):
        return None
    if _policy.TABLES.get(device_type, {}).get(kind) == _policy.LOWER:
        return _state.dtypes[device_type]
    return None


__all__ = ["DEFAULT_DTYPES", "is_enabled", "set_enabled", "get_dtype", "set_dtype",
           "is_cache_enabled", "set_cache_enabled", "increment_nesting", "decrement_nesting",
           "clear_cache", "suspended", "is_suspended", "cast_floating", "pause", "resume",
           "snapshot", "restored",
           "call", "cast_operands", "cast_arguments", "op_key", "lower_precision_module"]
