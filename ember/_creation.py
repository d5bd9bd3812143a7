"""Tensor creation: ``tensor``, ``zeros``, ``ones``, ``arange``, ``randn``, ...

Every function takes ``dtype=`` and ``requires_grad=`` (and ``device=``,
which must be 'cpu' for now).

>>> import ember
>>> ember.zeros(2, 3).shape
ember.Size([2, 3])
>>> ember.arange(3)
tensor([0, 1, 2])
"""
import math
import warnings

import numpy as np

from ._tensor import Tensor
from .backend import dtypes
from .backend.dtypes import get_default_dtype
from . import random as _random
from .device import check_device


def _np_dtype(dtype, default=None):
    if dtype is None:
        dtype = default or get_default_dtype()
    if not isinstance(dtype, dtypes.dtype):
        dtype = dtypes.from_numpy_dtype(dtype)
    return dtype.np


def _finish(array, requires_grad=False, device=None):
    check_device(device)
    t = Tensor._make(array)
    if requires_grad:
        if array.dtype.kind != "f":
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def _sizes(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (int, np.integer)) and not (isinstance(s, Tensor) and s.numel() == 1):
            raise TypeError(f"empty(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
    size = tuple(int(s) for s in size)
    if any(s < 0 for s in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(size)}: "
                           f"[{', '.join(map(str, size))}]")
    return size


def to_array(data, dtype=None):
    """Convert Python/NumPy data into a fresh array with PyTorch's dtype inference."""
    if isinstance(data, Tensor):
        arr = np.array(data._data, copy=True)
        return arr if dtype is None else arr.astype(_np_dtype(dtype))
    if isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
        if dtype is None:
            dtypes.from_numpy_dtype(arr.dtype)  # reject unsupported dtypes
            return arr
        return arr.astype(_np_dtype(dtype))
    if isinstance(data, (str, bytes)) or (not isinstance(data, (list, tuple)) and
                                          not np.isscalar(data) and not hasattr(data, "__float__")):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    try:
        arr = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length sequences: {e}") from None
    if arr.dtype == object:
        raise TypeError("Could not infer dtype of " + type(data).__name__)
    if dtype is not None:
        return arr.astype(_np_dtype(dtype))
    if arr.dtype.kind == "b":
        return arr
    if isinstance(data, np.generic):  # NumPy scalars keep their dtype
        dtypes.from_numpy_dtype(arr.dtype)
        return arr
    if isinstance(data, (list, tuple)):
        typed = _typed_elements_dtype(data)
        if typed is not None:
            return arr.astype(typed.np)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        return arr.astype(get_default_dtype().np)
    return arr


def _typed_elements_dtype(data):
    """PyTorch's dtype for a sequence holding NumPy scalars or arrays, which keep their
    dtype (``tensor([np.float64(1.5)])`` is float64) and promote with the Python numbers
    beside them (a float counts as the default dtype, an int as int64); None when there
    are no such elements."""
    kinds = _leaf_types(data, set())
    if not any(issubclass(k, np.generic) for k in kinds):
        return None
    result = None
    for k in kinds:
        if issubclass(k, np.generic):
            dt = dtypes.from_numpy_dtype(np.dtype(k))
        elif issubclass(k, bool):
            dt = dtypes.bool_
        elif issubclass(k, int):
            dt = dtypes.int64
        else:  # float (or a 0-d tensor: PyTorch reads it as a number too)
            dt = get_default_dtype()
        result = dt if result is None else dtypes.promote_types(result, dt)
    return result


def _leaf_types(seq, found):
    """The types of the scalars in a nested list (an array counts as its scalar type)."""
    kinds = set(map(type, seq))  # C speed over long flat lists
    for k in kinds:
        if k is list or k is tuple:
            for item in seq:
                if type(item) is k:
                    _leaf_types(item, found)
        elif issubclass(k, np.ndarray):
            found.update(item.dtype.type for item in seq if isinstance(item, np.ndarray))
        else:
            found.add(k)
    return found


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new tensor holding a copy of ``data`` (nested lists, scalars, arrays).

    >>> import ember
    >>> ember.tensor([[1, 2], [3, 4]], dtype=ember.float64)
    tensor([[1., 2.],
            [3., 4.]], dtype=ember.float64)
    """
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    return _finish(to_array(data, dtype), requires_grad, device)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        return data if dtype is None or data.dtype is dtype else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or data.dtype == _np_dtype(dtype)):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor sharing memory with ``array`` (no copy).

    >>> import numpy, ember
    >>> a = numpy.zeros(2); t = ember.from_numpy(a); t[0] = 5; a[0]
    np.float64(5.0)
    """
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._make(array)


def legacy_tensor_data(args, dtype=None):
    """``Tensor(2, 3)``, ``Tensor([1, 2])``, ``Tensor()``, ``Tensor(Size)``."""
    dt = dtype or get_default_dtype()
    if not args:
        return np.empty((0,), dt.np)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        data = args[0]
        if isinstance(data, Tensor):
            return data._data
        from ._tensor import Size
        if isinstance(data, Size):
            return np.empty(tuple(data), dt.np)
        return to_array(data, dt)
    return np.empty(_sizes(args), dt.np)


def _filled(fill, size, dtype, requires_grad, device, default=None):
    arr = np.full(_sizes(size), fill, dtype=_np_dtype(dtype, default))
    return _finish(arr, requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    if any(isinstance(s, (int, np.integer)) and s < 0 for s in size):
        raise RuntimeError("zeros: Dimension size must be non-negative.")
    return _filled(0, size, dtype, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return _filled(1, size, dtype, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None, out=None,
          layout=None, pin_memory=False):
    return _finish(np.empty(_sizes(size), _np_dtype(dtype)), requires_grad, device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None):
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    return _filled(fill_value, (size,) if isinstance(size, int) else tuple(size), dtype,
                   requires_grad, device)


def _like_dtype(t, dtype):
    return dtype or t.dtype


def zeros_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _filled(0, t.shape, _like_dtype(t, dtype), requires_grad, device)


def ones_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _filled(1, t.shape, _like_dtype(t, dtype), requires_grad, device)


def empty_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return empty(t.shape, dtype=_like_dtype(t, dtype), requires_grad=requires_grad)


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    return _filled(fill_value, t.shape, _like_dtype(t, dtype), requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    """Values from ``start`` to ``end`` (exclusive); integer args give int64."""
    if end is None:
        start, end = 0, start
    vals = [(v.item() if v.numel() == 1 else float(v)) if isinstance(v, Tensor) else v
            for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals)
        dtype = dtypes.int64 if is_int else get_default_dtype()
    n = max(int(math.ceil((vals[1] - vals[0]) / vals[2])), 0)
    arr = (vals[0] + vals[2] * np.arange(n, dtype=np.float64)) if dtype.is_floating_point \
        else np.arange(vals[0], vals[1], vals[2])
    return _finish(arr.astype(dtype.np), requires_grad, device)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    if steps < 0:
        raise RuntimeError("linspace(): number of steps must be non-negative")
    return _finish(np.linspace(start, end, steps).astype(_np_dtype(dtype)), requires_grad,
                   device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    return _finish(np.eye(n, m, dtype=_np_dtype(dtype)), requires_grad, device)


def _random_float(draw, size, dtype, generator, requires_grad, device):
    dt = _np_dtype(dtype)
    if dt.kind != "f":
        raise RuntimeError(f"\"check_uniform_bounds\" not implemented for "
                           f"'{dtypes.from_numpy_dtype(dt).name.capitalize()}'")
    size = _sizes(size)
    gen = _random.rng(generator)
    arr = draw(gen, size, dt if dt in (np.float32, np.float64) else np.float32)
    return _finish(arr.astype(dt, copy=False), requires_grad, device)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """Uniform samples on [0, 1)."""
    return _random_float(lambda g, s, d: g.random(s, dtype=d), size, dtype, generator,
                         requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    """Standard normal samples."""
    return _random_float(lambda g, s, d: g.standard_normal(s, dtype=d), size, dtype, generator,
                         requires_grad, device)


def rand_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return rand(t.shape, dtype=_like_dtype(t, dtype), requires_grad=requires_grad)


def randn_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return randn(t.shape, dtype=_like_dtype(t, dtype), requires_grad=requires_grad)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False, out=None):
    """Integers in [low, high); ``randint(high, size)`` starts at 0."""
    if size is None:
        if high is None or not isinstance(high, (tuple, list)):
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}")
    arr = _random.rng(generator).integers(low, high, _sizes(tuple(size)))
    return _finish(arr.astype(_np_dtype(dtype, dtypes.int64)), requires_grad, device)


def randint_like(t, low, high=None, *, dtype=None, device=None):
    return randint(low, high, t.shape, dtype=_like_dtype(t, dtype))


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    arr = _random.rng(generator).permutation(n)
    return _finish(arr.astype(_np_dtype(dtype, dtypes.int64)), requires_grad, device)
