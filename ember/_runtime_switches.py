"""Process-wide switches PyTorch programs set: float32 matmul precision and deterministic
algorithms (``torch.set_float32_matmul_precision``, ``torch.use_deterministic_algorithms``, ...).

On ember they are recorded and reported back, and nothing else: NumPy's float32 matmuls are
always computed at full float32 precision (there are no TF32 or bfloat16 tensor-core paths to
switch to), and every ember op is already deterministic, so no op warns or raises under
``use_deterministic_algorithms(True)``.

>>> import ember
>>> ember.use_deterministic_algorithms(True)
>>> ember.are_deterministic_algorithms_enabled(), ember.get_deterministic_debug_mode()
(True, 2)
>>> ember.use_deterministic_algorithms(False)
"""
import warnings

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode"]

_PRECISIONS = ("highest", "high", "medium")


class _State:
    matmul_precision = "highest"
    deterministic = False
    warn_only = False


_state = _State()


def set_float32_matmul_precision(precision):
    """Record the internal precision of float32 matmuls: 'highest', 'high' or 'medium'.

    Any other string warns and changes nothing, as in PyTorch. On ember (NumPy on the CPU)
    the setting changes no result: float32 matmuls always run in full float32.

    >>> import ember
    >>> ember.set_float32_matmul_precision("high")
    >>> ember.get_float32_matmul_precision()
    'high'
    >>> ember.set_float32_matmul_precision("highest")
    """
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _state.matmul_precision = precision


def get_float32_matmul_precision():
    """The float32 matmul precision last set (default 'highest').

    >>> import ember
    >>> ember.get_float32_matmul_precision()
    'highest'
    """
    return _state.matmul_precision


def _check_bool(value, fn, arg, position):
    if not isinstance(value, bool):
        where = f" (position {position})" if position else ""
        raise TypeError(f"{fn}(): argument '{arg}'{where} must be bool, not "
                        f"{type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms only (``warn_only``: warn instead of raising where
    an op has none). ember's ops are all deterministic, so none warns or raises.

    >>> import ember
    >>> ember.use_deterministic_algorithms(True, warn_only=True)
    >>> ember.is_deterministic_algorithms_warn_only_enabled()
    True
    >>> ember.use_deterministic_algorithms(False)
    """
    _check_bool(mode, "_set_deterministic_algorithms", "mode", 1)
    _check_bool(warn_only, "_set_deterministic_algorithms", "warn_only", None)
    _state.deterministic = mode
    _state.warn_only = warn_only


def are_deterministic_algorithms_enabled():
    """True after ``use_deterministic_algorithms(True)``.

    >>> import ember
    >>> ember.are_deterministic_algorithms_enabled()
    False
    """
    return _state.deterministic


def is_deterministic_algorithms_warn_only_enabled():
    """True after ``use_deterministic_algorithms(True, warn_only=True)``.

    >>> import ember
    >>> ember.is_deterministic_algorithms_warn_only_enabled()
    False
    """
    return _state.warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """The same switch as ``use_deterministic_algorithms`` by level: 0 / 'default' (off),
    1 / 'warn' (warn only), 2 / 'error' (on).

    >>> import ember
    >>> ember.set_deterministic_debug_mode("warn")
    >>> ember.get_deterministic_debug_mode()
    1
    >>> ember.set_deterministic_debug_mode(0)
    """
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0 (off), 1 (warn only) or 2 (deterministic algorithms on).

    >>> import ember
    >>> ember.get_deterministic_debug_mode()
    0
    """
    if not _state.deterministic:
        return 0
    return 1 if _state.warn_only else 2
