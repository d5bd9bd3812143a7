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
import importlib
import os
import warnings

from .backend import dtypes

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


# ---- warnings, denormals, threads, build facts ---------------------------------------------
# (torch.set_warn_always, set_flush_denormal, the inter-op thread count, has_lapack & co.)
class _Switches:
    warn_always = False
    interop_threads = None  # None: never set (the count reported is the CPUs')
    tensor_type_warned = False


_switches = _Switches()


def set_warn_always(b):
    """Make the warnings PyTorch gives once per process (``set_default_tensor_type``'s
    deprecation, a complex value cast to a real dtype, ...) warn on every call.

    >>> import ember
    >>> ember.set_warn_always(True); ember.is_warn_always_enabled()
    True
    >>> ember.set_warn_always(False)
    """
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _switches.warn_always = b


def is_warn_always_enabled():
    """True after ``set_warn_always(True)``.

    >>> import ember
    >>> ember.is_warn_always_enabled()
    False
    """
    return _switches.warn_always


def set_flush_denormal(mode):
    """Flush denormal floats to zero: PyTorch sets the CPU's FTZ/DAZ bits and returns True
    where it could. NumPy offers no such switch, so ember answers as PyTorch does on a CPU
    without them: ``False`` for ``True`` (nothing changed, denormals are kept), ``True``
    for ``False``.

    >>> import ember
    >>> ember.set_flush_denormal(True), ember.set_flush_denormal(False)
    (False, True)
    """
    if not isinstance(mode, bool):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return not mode


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def get_num_interop_threads():
    """The inter-op thread count PyTorch programs read (the CPUs ember may use, or the
    count set). ember runs no inter-op pool: ops run in the caller's thread, and each uses
    the intra-op pool of ``get_num_threads``.

    >>> import ember
    >>> ember.get_num_interop_threads() >= 1
    True
    """
    n = _switches.interop_threads
    return _cpu_count() if n is None else n


def set_num_interop_threads(n):
    """Record the inter-op thread count (once per process, as in PyTorch); it changes
    nothing on ember, which has no inter-op pool.

    >>> import ember
    >>> ember.set_num_interop_threads(0)
    Traceback (most recent call last):
    ...
    RuntimeError: set_num_interop_threads expects a positive integer
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"set_num_interop_threads expects an int, but got "
                           f"{type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_interop_threads expects a positive integer")
    if _switches.interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work "
                           "has started or set_num_interop_threads called")
    _switches.interop_threads = n


def init_num_threads():
    """Nothing to do: ember's thread pool sets itself up on first use.

    >>> import ember
    >>> ember.init_num_threads()
    """


def compiled_with_cxx11_abi():
    """True: C++ extensions built for ember use the C++11 ABI of libstdc++ (GCC's default).

    >>> import ember
    >>> ember.compiled_with_cxx11_abi()
    True
    """
    return True


def is_vulkan_available():
    """False: ember has no Vulkan backend.

    >>> import ember
    >>> ember.is_vulkan_available()
    False
    """
    return False


#: ember's linear algebra runs on LAPACK (NumPy's and SciPy's)
has_lapack = True
#: ember calls no MKL routine of its own (NumPy's BLAS does the products)
has_mkl = False
#: ember's threads are its own pool, not OpenMP's
has_openmp = False
#: ember.fft is available
has_spectral = True

_TENSOR_TYPE_DEPRECATED = ("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, "
                           "please use torch.set_default_dtype() and torch.set_default_device() "
                           "as alternatives.")
_INVALID_TENSOR_TYPE = ("invalid type object: only floating-point types are supported as the "
                        "default type")


def _legacy_dtype(t):
    """The dtype of a legacy tensor type given as a class or its name; CUDA ones refused."""
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module in ("torch.cuda", "ember.cuda"):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        if not module:
            raise ModuleNotFoundError(f"No module named '{name}'")
        if module not in ("torch", "ember"):
            importlib.import_module(module)  # PyTorch imports it: ModuleNotFoundError
            raise TypeError(_INVALID_TENSOR_TYPE)
        if name not in dtypes.LEGACY_TENSOR_TYPES:
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        return dtypes.LEGACY_TENSOR_TYPES[name]
    dt = getattr(t, "_legacy_dtype", None) if isinstance(t, type) else None
    if dt is None:
        raise TypeError(_INVALID_TENSOR_TYPE)
    if getattr(t, "is_cuda", False) is True:
        raise TypeError(f"type torch.cuda.{t.__name__} not available. Torch not compiled with "
                        f"CUDA enabled.")
    return dt


def set_default_tensor_type(t, /):
    """Set the default floating dtype from a legacy tensor type (``ember.DoubleTensor``
    or its name, ``'torch.DoubleTensor'``); deprecated in PyTorch 2.1 for
    ``set_default_dtype``, with a warning given once.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.set_default_tensor_type("torch.DoubleTensor")
    >>> ember.get_default_dtype()
    ember.float64
    >>> ember.set_default_dtype(ember.float32)
    """
    if not _switches.tensor_type_warned or _switches.warn_always:
        _switches.tensor_type_warned = True
        warnings.warn(_TENSOR_TYPE_DEPRECATED, UserWarning, stacklevel=2)
    dt = _legacy_dtype(t)
    if not dt.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(dt)


__all__ += ["set_warn_always", "is_warn_always_enabled", "set_flush_denormal",
            "get_num_interop_threads", "set_num_interop_threads", "init_num_threads",
            "compiled_with_cxx11_abi", "is_vulkan_available", "has_lapack", "has_mkl",
            "has_openmp", "has_spectral", "set_default_tensor_type"]
