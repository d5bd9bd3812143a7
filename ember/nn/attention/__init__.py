"""``ember.nn.attention``: choosing the kernels of ``scaled_dot_product_attention``.

ember has one implementation, the math one (softmax(Q K^T) V composed of ember ops).
``sdpa_kernel`` restricts the backends as PyTorch's CPU build does: with ``MATH`` allowed
every call runs; with ``FLASH_ATTENTION`` but not ``MATH``, the calls PyTorch's CPU flash
kernel accepts run (on the math path: the same numbers up to rounding) and the others
raise "No available kernel"; with neither, every call raises. ``set_priority`` orders
kernels ember does not have, so it changes nothing.

>>> import ember
>>> from ember.nn.attention import SDPBackend, sdpa_kernel
>>> q = ember.ones(1, 1, 2, 4)
>>> with sdpa_kernel(SDPBackend.MATH):
...     ember.nn.functional.scaled_dot_product_attention(q, q, q).shape
ember.Size([1, 1, 2, 4])
"""
import contextlib
import enum
import warnings

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The kernels of scaled_dot_product_attention, by PyTorch's numbers.

    >>> from ember.nn.attention import SDPBackend
    >>> SDPBackend.MATH, int(SDPBackend.FLASH_ATTENTION)
    (<SDPBackend.MATH: 0>, 1)
    """
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __str__(self):
        return f"SDPBackend.{self.name}"


_ALL = (SDPBackend.CUDNN_ATTENTION, SDPBackend.FLASH_ATTENTION,
        SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH, SDPBackend.OVERRIDEABLE)
_enabled = list(_ALL)


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the block, scaled_dot_product_attention may use only ``backends`` (one
    SDPBackend or a list of them).

    >>> import ember
    >>> from ember.nn.attention import SDPBackend, sdpa_kernel
    >>> q = ember.ones(1, 1, 2, 4)
    >>> with sdpa_kernel([]):
    ...     ember.nn.functional.scaled_dot_product_attention(q, q, q)
    Traceback (most recent call last):
    RuntimeError: No viable backend for scaled_dot_product_attention was found. ...
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of "
                             f"SDPBackend instances, got {type(backends).__name__}")
    wanted = [backends] if isinstance(backends, SDPBackend) else list(backends)
    previous = list(_enabled)
    _enabled[:] = [b for b in _ALL if b in wanted]
    try:
        yield {}
    finally:
        _enabled[:] = previous


def _flash_refusal(query, key, value, dropout_p, enable_gqa):
    """Why PyTorch's CPU flash kernel would not take this call (None: it would)."""
    if dropout_p > 0.0:
        return "Both fused kernels do not support non-zero dropout."
    dims = (query.dim(), key.dim(), value.dim())
    if dims != (4, 4, 4):
        return ("All fused kernels requires query, key and value to be 4 dimensional, but got "
                f"Query dim: {dims[0]}, Key dim: {dims[1]}, Value dim: {dims[2]} instead.")
    heads = (query.size(1), key.size(1), value.size(1))
    same_heads = heads[0] == heads[1] == heads[2]
    grouped = enable_gqa and heads[1] == heads[2] and heads[1] and heads[0] % heads[1] == 0
    if not (same_heads or grouped):
        return ("For dense input, both fused kernels require query, key and value to have the "
                f"same num_heads. Query.sizes(): {list(query.shape)}, Key sizes(): "
                f"{list(key.shape)}, Value sizes(): {list(value.shape)} instead. To broadcast "
                "dense inputs, try using unsqueeze and expand_to before passing them into the "
                "kernel.")
    last = (query.size(-1), key.size(-1), value.size(-1))
    if not last[0] == last[1] == last[2]:
        return ("Flash attention requires q,k,v to have the same last dimension. Got "
                f"Query.size(-1): {last[0]}, Key.size(-1): {last[1]}, Value.size(-1): "
                f"{last[2]} instead.")
    return None


def _check_backend(query, key, value, dropout_p, enable_gqa):
    """Raise PyTorch's error when the backends allowed now cannot run this call."""
    if SDPBackend.MATH in _enabled:
        return
    if SDPBackend.FLASH_ATTENTION in _enabled:
        why = _flash_refusal(query, key, value, dropout_p, enable_gqa)
        if why is None:
            return
        warnings.warn("Flash attention kernel not used because:", UserWarning, stacklevel=3)
        warnings.warn(why, UserWarning, stacklevel=3)
        raise RuntimeError("No available kernel.  Aborting execution.")
    raise RuntimeError("No viable backend for scaled_dot_product_attention was found. This is "
                       "likely due to turning off both the math kernel and the fused kernels.")
