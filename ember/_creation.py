"""Tensor creation: ``tensor``, ``zeros``, ``ones``, ``arange``, ``randn``, ...

Every function takes ``dtype=`` and ``requires_grad=`` (and ``device=``: 'cpu',
'meta', or 'cuda' where an array module holds CUDA data, see ``ember.backend``).

>>> import ember
>>> ember.zeros(2, 3).shape
ember.Size([2, 3])
>>> ember.arange(3)
tensor([0, 1, 2])
"""
import ctypes
import math
import operator
import warnings

import numpy as np

from . import _layouts
from ._tensor import Tensor, Size, _init
from .backend import get_array_module, default_array_module, move_array, to_host, \
    device_type_of, device_module
from .backend import dtypes
from .backend.dtypes import get_default_dtype
from . import random as _random
from .backend.meta import MetaArray, meta_module, NO_DATA
from .backend import memory_layout
from .backend.dlpack import array_from_dlpack
from .backend.ranges import linspace_array
from .backend.kernels import cast as _cast
from .backend.float8 import check_fits as check_float8_fits
from .device import check_device, device as _device, meta as _meta, cpu as _cpu, module_of, \
    device_out_of_memory


def _np_dtype(dtype, default=None):
    if dtype is None:
        dtype = default or get_default_dtype()
    if not isinstance(dtype, dtypes.dtype):
        dtype = dtypes.from_numpy_dtype(dtype)
    return dtype.np


def _module(like, device=None):
    """Where a new array goes: the module of ``device`` when one is given (or there is no
    ``like``: the default device's), else the array module of tensor ``like``; a CPU
    array goes to the default module."""
    if device is not None or like is None:
        target = check_device(device)
        if target is _meta:
            return meta_module
        if target is not _cpu:
            return module_of(target)
        return default_array_module() if like is None or not like.is_cpu else \
            get_array_module(like._data)
    return get_array_module(like._data)


def beside(t, like):
    """``t`` (a tensor just made) with its array moved to the module of tensor ``like``
    (no copy when it is there already)."""
    if type(t._data) is not type(like._data):
        t._data = get_array_module(like._data).asarray(t._data)
    return t


def _finish(array, requires_grad=False, device=None, like=None):
    # device=None with a tensor ``like`` keeps like's device; otherwise the one named (or the
    # default) decides, and data made on the host for 'meta' keeps only its shape and dtype
    if device is not None or like is None:
        target = check_device(device)
        if target is not _cpu or type(array) is not np.ndarray:
            array = _place(array, target)
    t = Tensor._make(array)
    if requires_grad:
        if array.dtype.kind != "c" and not dtypes.from_numpy_dtype(array.dtype).is_floating_point:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        t._requires_grad = True
    return t


def _place(array, target):
    """``array`` on device ``target``: data made on the host keeps only its shape and dtype
    for 'meta', is copied to a device's module, and comes back to the host for the CPU."""
    if target is _meta:
        return array if type(array) is MetaArray else meta_module.asarray(array)
    if type(array) is MetaArray:
        raise NotImplementedError(NO_DATA)
    if target is _cpu:
        return array if device_type_of(array) == "cpu" else to_host(array)
    return move_array(array, target.type)


_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _is_int(s):
    if isinstance(s, Tensor):
        return s._data.dtype.kind in "iub" and s._data.size == 1
    return isinstance(s, (int, np.integer))


def _sizes(size, name="empty", negative=None):
    """The shape given to a creation function (as ``*size`` or one sequence), with PyTorch's
    argument-parsing TypeErrors and its RuntimeError for a negative size (``negative``: a
    function's own wording of it)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        seq, from_sequence = size[0], True
    else:
        seq, from_sequence = size, False
        if len(size) == 1 and not _is_int(size[0]):
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, not "
                            f"{type(size[0]).__name__}")
    if seq and type(seq[0]) is not int and not _is_int(seq[0]):
        if from_sequence:
            raise TypeError(f"{name}(): argument 'size' (position 1) must be tuple of ints, but "
                            f"found element of type {type(seq[0]).__name__} at pos 0")
        raise TypeError(f"{name}() takes 1 positional argument but {len(seq)} were given")
    shape = []
    for pos, s in enumerate(seq, 1):
        if type(s) is not int:
            if not _is_int(s):
                raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos "
                                f"{pos} with error \"type must be tuple of ints,but got "
                                f"{type(s).__name__}\"")
            s = int(s)
        if not _INT64_MIN <= s <= _INT64_MAX:
            raise TypeError(f"{name}(): argument 'size' failed to unpack the object at pos {pos} "
                            f"with error \"Overflow when unpacking long long\"")
        shape.append(s)
    if any(s < 0 for s in shape):
        raise RuntimeError(negative or f"Trying to create tensor with negative dimension "
                                       f"{min(shape)}: [{', '.join(map(str, shape))}]")
    return tuple(shape)


def keyword_sizes(positional, given, name, keyword):
    """A ``*sizes`` parameter given by its keyword instead (``zeros(size=(2, 3))``,
    ``x.flip(dims=[0])``): ``given`` as the one-sequence positional form, with PyTorch's
    TypeErrors for a keyword given besides positional sizes or holding no sequence.

    >>> keyword_sizes((), [2, 3], "zeros", "size")
    ([2, 3],)
    """
    if positional:
        raise TypeError(f"{name}() got multiple values for argument '{keyword}'")
    if not isinstance(given, (tuple, list)):
        raise TypeError(f"{name}(): argument '{keyword}' must be tuple of ints, not "
                        f"{type(given).__name__}")
    return (given,)


def storage_nbytes(shape, itemsize):
    """Bytes of a contiguous tensor of ``shape``, or PyTorch's RuntimeError where its size or
    strides overflow (and ours where NumPy cannot hold the shape at all)."""
    numel = math.prod(shape)
    nbytes = numel * itemsize
    if numel and nbytes <= _INT64_MAX:
        return nbytes  # a product of positive sizes: no partial product or stride is larger
    return _checked_storage_nbytes(tuple(shape), itemsize)


def _checked_storage_nbytes(shape, itemsize):
    # PyTorch multiplies the sizes in uint64 and remembers an overflow even when a later 0
    # makes the product 0; then it checks the strides (the size of every trailing block)
    product, overflowed = 1, False
    for s in shape:
        product *= s
        overflowed |= product >= 2 ** 64
        product %= 2 ** 64
    if overflowed or product * itemsize > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes="
                           f"[{', '.join(map(str, shape))}]")
    stride = 1
    for s in reversed(shape[1:]):
        stride *= max(s, 1)
        if stride > _INT64_MAX:
            raise RuntimeError("Stride calculation overflowed")
    if math.prod(s for s in shape if s) * itemsize > _INT64_MAX:
        raise RuntimeError(f"ember cannot hold an empty tensor of sizes "
                           f"[{', '.join(map(str, shape))}]: NumPy limits the product of its "
                           f"non-zero sizes to {_INT64_MAX} bytes")
    return product * itemsize


def allocate(make, shape, np_dtype):
    """``make()`` (which allocates an array of ``shape``), with PyTorch's errors when that
    size overflows or the memory cannot be had, instead of NumPy's MemoryError."""
    nbytes = storage_nbytes(shape, np.dtype(np_dtype).itemsize)
    try:
        return make()
    except MemoryError as error:
        on_device = device_out_of_memory(error, nbytes)
        if on_device is not None:
            raise on_device from None
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to allocate "
                           f"{nbytes} bytes. Error code 12 (Cannot allocate memory)") from None


def to_array(data, dtype=None):
    """Convert Python/NumPy data into a fresh array with PyTorch's dtype inference: a
    tensor's copied in its own array module, anything else read on the host (NumPy)."""
    if isinstance(data, Tensor):
        d = data._data
        arr = get_array_module(d).array(d, copy=True)
        return arr if dtype is None else _cast(arr, _np_dtype(dtype))
    if isinstance(data, np.ndarray):
        arr = np.array(data, copy=True)
        if dtype is None:
            dtypes.from_numpy_dtype(arr.dtype)  # reject unsupported dtypes
            return arr
        return _cast(arr, _np_dtype(dtype))
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{_type_name(data)}'")
    leaf_types = _leaf_types(data, set()) if isinstance(data, (list, tuple)) else None
    # ints past int64 read by NumPy become floats: uint64 is read number by number
    arr = None if dtype is dtypes.uint64 else _numpy_reading(data, leaf_types)
    if arr is None:
        return _read_like_torch(data, dtype)
    if dtype is not None:
        target = _np_dtype(dtype)
        if arr.dtype.kind == "c" and target.kind != "c":
            raise TypeError("must be real number, not complex")
        _check_fits(arr, target)
        return _cast(arr, target)
    if arr.dtype.kind == "b":
        return arr
    if isinstance(data, np.generic):  # NumPy scalars keep their dtype
        return arr
    if leaf_types is not None:
        typed = _typed_elements_dtype(leaf_types)
        if typed is not None:
            return arr.astype(typed.np)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "c":
        return arr.astype(get_default_dtype().to_complex().np)
    return arr.astype(get_default_dtype().np)


def _numpy_reading(data, leaf_types):
    """NumPy's reading of plain numbers and (nested) lists of them, or None where it is not
    PyTorch's: strings, objects, ragged lists, tensors inside lists (PyTorch reads each as
    one number), ints beyond int64 (NumPy's uint64 or object)."""
    if leaf_types is None and not isinstance(data, (int, float, np.generic)):
        return None
    if leaf_types is not None and any(issubclass(k, Tensor) for k in leaf_types):
        return None
    try:
        arr = np.array(data)
    except (ValueError, TypeError, OverflowError):
        return None
    if arr.dtype.kind not in "biufc" or arr.dtype == np.uint64:
        return None
    return arr


def _check_fits(arr, target):
    """PyTorch's checked conversion of each number to an integer ``dtype=``: RuntimeError
    where a value does not fit (negative ints down to -max wrap into unsigned types)."""
    if target.kind not in "iu" or arr.dtype.kind == "b" or arr.size == 0 or (
            target == np.int64 and arr.dtype.kind in "iu"):
        return
    info = np.iinfo(target)
    if arr.dtype.kind == "f":
        fits = bool(np.all((arr >= info.min) & (arr <= info.max)))  # False for nan
    else:
        low = -int(info.max) if target.kind == "u" else int(info.min)
        fits = low <= int(arr.min()) and int(arr.max()) <= int(info.max)
    if not fits:
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")


# ---- PyTorch's reading of Python data, for what NumPy reads differently -------------------
_MAX_DIMS = 128
_PySequence_Check = ctypes.pythonapi.PySequence_Check
_PySequence_Check.argtypes = (ctypes.py_object,)
_PySequence_Check.restype = ctypes.c_int


def _is_sequence(obj):
    """Python's own sequence test (what PyTorch asks); a tensor counts as a number."""
    return not isinstance(obj, Tensor) and _PySequence_Check(obj) == 1


def _type_name(obj):
    """The type's name as Python's C level prints it (``numpy.str_``, ``NoneType``)."""
    kind = type(obj)
    if kind.__module__ == "builtins" or kind.__flags__ & (1 << 9):  # (1 << 9): a heap type
        return kind.__name__
    return f"{kind.__module__.split('.')[0]}.{kind.__name__}"


def _read_like_torch(data, dtype):
    """PyTorch's algorithm: the shape from the first element at each depth, the dtype
    promoted over every element, then each element stored with its checked conversion."""
    shape = _python_shape(data)
    dt = _infer_dtype(data) if dtype is None else \
        (dtype if isinstance(dtype, dtypes.dtype) else dtypes.from_numpy_dtype(dtype))
    if dt.np.kind == "c":
        store, holder = complex, np.complex128
    elif dt.is_floating_point:
        store, holder = _as_double, np.float64
    elif dt.np.kind == "b":
        store, holder = _as_bool, np.bool_
    else:
        def store(obj):
            return _as_integer(obj, dt.np)
        holder = np.uint64 if dt.np == np.uint64 else np.int64
    if 0 in shape:  # PyTorch stores (and so checks) no element of an empty tensor
        return np.empty(shape, dt.np)
    flat = []
    _store_all(data, shape, 0, store, flat)
    with np.errstate(over="ignore"):  # floats beyond the dtype's range become inf
        return _cast(np.array(flat, holder), dt.np).reshape(shape)


def _python_shape(data):
    shape, seq = [], data
    while _is_sequence(seq):
        n = len(seq)
        shape.append(n)
        if len(shape) > _MAX_DIMS:
            raise ValueError(f"too many dimensions '{_type_name(seq)}'")
        if n == 0:
            break
        seq = seq[0]
    return shape


def _infer_dtype(obj):
    if isinstance(obj, np.generic):
        return dtypes.from_numpy_dtype(obj.dtype)
    if isinstance(obj, bool):
        return dtypes.bool_
    if isinstance(obj, int):
        return dtypes.int64
    if isinstance(obj, float):
        return get_default_dtype()
    if isinstance(obj, complex):
        return get_default_dtype().to_complex()
    if isinstance(obj, Tensor):
        return obj.dtype
    if isinstance(obj, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{_type_name(obj)}'")
    if isinstance(obj, np.ndarray):
        return dtypes.from_numpy_dtype(obj.dtype)
    if _is_sequence(obj):
        result = None
        for i in range(len(obj)):
            dt = _infer_dtype(obj[i])
            result = dt if result is None else dtypes.promote_types(result, dt)
        return result or get_default_dtype()
    raise RuntimeError(f"Could not infer dtype of {_type_name(obj)}")


def _store_all(obj, shape, dim, store, flat):
    if dim == len(shape):
        flat.append(store(obj))
        return
    if isinstance(obj, (list, tuple)):
        seq = obj
    else:
        try:
            seq = list(obj)
        except TypeError:
            raise TypeError("not a sequence") from None
    if len(seq) != shape[dim]:
        raise ValueError(f"expected sequence of length {shape[dim]} at dim {dim} "
                         f"(got {len(seq)})")
    for item in seq:
        _store_all(item, shape, dim + 1, store, flat)


def _one_number(t):
    if t._data.size != 1:
        raise ValueError("only one element tensors can be converted to Python scalars")
    return t._data.reshape(()).item()


def _as_double(obj):
    if isinstance(obj, float):
        return obj
    if isinstance(obj, Tensor):
        return float(_one_number(obj))
    kind = type(obj)
    if isinstance(obj, (str, bytes, complex)) or not (
            hasattr(kind, "__float__") or hasattr(kind, "__index__")):
        raise TypeError(f"must be real number, not {_type_name(obj)}")
    return float(obj)


def _as_bool(obj):
    if isinstance(obj, float):
        return obj != 0
    return operator.index(obj) != 0


def _as_integer(obj, target):
    info = np.iinfo(target)
    if isinstance(obj, float):
        if not info.min <= obj <= info.max:  # also nan
            raise RuntimeError(f"value cannot be converted to type {target.name} without "
                               f"overflow")
        return int(obj)
    value = operator.index(obj)
    if target == np.uint64:  # read as an unsigned 64-bit number, not through int64
        if value < 0:
            raise OverflowError("can't convert negative int to unsigned")
        if value > info.max:
            raise OverflowError("int too big to convert")
        return value
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    low = -int(info.max) if target.kind == "u" else int(info.min)
    if not low <= value <= info.max:
        raise RuntimeError(f"value cannot be converted to type {target.name} without overflow")
    return value


def _typed_elements_dtype(kinds):
    """PyTorch's dtype for a sequence holding NumPy scalars or arrays, which keep their
    dtype (``tensor([np.float64(1.5)])`` is float64) and promote with the Python numbers
    beside them (a float counts as the default dtype, an int as int64); None when there
    are no such elements. ``kinds``: the sequence's leaf types."""
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
        else:  # float
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
    _check_pin_memory(pin_memory)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.clone().detach() or sourceTensor.clone().detach()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    return _finish(_to_module(to_array(data, dtype), data), requires_grad, device)


def _to_module(array, data, like=None):
    """``array`` read from ``data`` by ``to_array``: host data goes to the array module new
    arrays go to (``_module(like)``); a tensor's copy stays where it is."""
    return array if isinstance(data, Tensor) else _module(like).asarray(array)


#: the one layout ember's tensors have (``Tensor.layout``); ``ember.strided``
STRIDED = _layouts.strided


def _check_layout(layout, name):
    if layout is not None and layout != STRIDED:
        raise NotImplementedError(f"{name}(): layout={layout!r} is not supported: ember's "
                                  f"tensors are strided")


def _check_pin_memory(pin_memory):
    if pin_memory and device_module("cuda") is None:  # as PyTorch with no accelerator
        raise RuntimeError("pin_memory=True requires a CUDA or other accelerator backend; no "
                           "pinned memory allocator is available on this system.")


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


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor sharing memory with ``ext_tensor``: an object with ``__dlpack__`` (a NumPy
    or CuPy array, a PyTorch tensor) or a DLPack capsule (``to_dlpack``'s), which can be
    consumed once. ``device``: where the result goes (a copy if elsewhere); ``copy=True``
    copies, ``copy=False`` refuses to.

    >>> import numpy, ember
    >>> a = numpy.arange(3.0); t = ember.from_dlpack(a); t[0] = 9; a
    array([9., 1., 2.])
    """
    array = array_from_dlpack(ext_tensor, copy=copy)
    dtypes.from_numpy_dtype(array.dtype)  # reject dtypes ember lacks
    t = Tensor._make(array)
    if device is not None:
        target = check_device(device)
        if target != t.device:
            if copy is False:
                raise BufferError(f"from_dlpack(copy=False) cannot move the data from "
                                  f"{t.device} to {target}")
            t = Tensor._make(_place(array, target))
    return t


def legacy_tensor_data(args, dtype=None, like=None):
    """``Tensor(2, 3)``, ``Tensor([1, 2])``, ``Tensor()``, ``Tensor(Size)``; new arrays go to
    ``like``'s array module (a tensor) or the default one."""
    dt = dtype or get_default_dtype()
    xp = _module(like)
    if not args:
        return xp.empty((0,), dt.np)
    if len(args) == 1 and not isinstance(args[0], (int, np.integer)):
        data = args[0]
        if isinstance(data, Tensor):
            return data._data
        if isinstance(data, Size):
            return _empty_array(tuple(data), dt.np, xp)
        if not isinstance(data, np.ndarray) and not _is_sequence(data):
            raise TypeError(f"new(): data must be a sequence (got {_type_name(data)})")
        return _to_module(to_array(data, dt), data, like)
    return _empty_array(_sizes(args, "new"), dt.np, xp)


def _legacy_init(self, *args, dtype=None, device=None):
    """``ember.Tensor(2, 3)``, ``ember.Tensor([1, 2])``: the legacy constructor."""
    if device is not None:
        _check_legacy_device(device)
    _init(self, legacy_tensor_data(args, dtype), False)


def _check_legacy_device(d):
    if isinstance(d, int) and not isinstance(d, bool):
        check_device(d)  # an accelerator index: none is available
    kind = (d if isinstance(d, _device) else _device(d)).type
    if kind != "cpu":
        raise RuntimeError(f"legacy constructor expects device type: cpu but device type: "
                           f"{kind} was passed")


# Tensor sits below this module and cannot read Python data itself: its legacy
# constructor is attached here (see ember/_tensor.py).
Tensor.__init__ = _legacy_init


def _empty_array(shape, np_dtype, xp):
    return allocate(lambda: xp.empty(shape, np_dtype), shape, np_dtype)


def _filled(fill, size, dtype, requires_grad, device, default=None, name="empty",
            negative=None, like=None):
    """A tensor of ``size`` holding ``fill``, in ``like``'s array module or the default."""
    shape, np_dtype = _sizes(size, name, negative), _np_dtype(dtype, default)
    xp = _module(like, device)
    if np_dtype.itemsize == 1 and np_dtype in dtypes.FLOAT8_NP:  # PyTorch's rounding
        arr = _cast(xp.full(shape, fill, dtype=np.float32), np_dtype)
        return _finish(arr, requires_grad, device, like)
    arr = allocate(lambda: xp.full(shape, fill, dtype=np_dtype), shape, np_dtype)
    return _finish(arr, requires_grad, device, like)


def zeros(*size_args, size=None, dtype=None, device=None, requires_grad=False, layout=None):
    size = size_args if size is None else keyword_sizes(size_args, size, "zeros", "size")
    _check_layout(layout, "zeros")
    return _filled(0, size, dtype, requires_grad, device, name="zeros",
                   negative="zeros: Dimension size must be non-negative.")


def ones(*size_args, size=None, dtype=None, device=None, requires_grad=False, layout=None):
    size = size_args if size is None else keyword_sizes(size_args, size, "ones", "size")
    _check_layout(layout, "ones")
    return _filled(1, size, dtype, requires_grad, device, name="ones")


def empty(*size_args, size=None, dtype=None, device=None, requires_grad=False,
          memory_format=None, layout=None, pin_memory=False):
    size = size_args if size is None else keyword_sizes(size_args, size, "empty", "size")
    _check_layout(layout, "empty")
    _check_pin_memory(pin_memory)
    return _laid_out(_empty(size, dtype, requires_grad, device), memory_format, None, "empty")


def _laid_out(result, fmt, like, name):
    """``result`` (a tensor just made) laid out as ``memory_format=fmt`` asks: for the
    ``*_like`` factories None and preserve_format keep ``like``'s channels-last layout
    (a row-major ``like`` costs one flag test); ``empty`` refuses preserve_format."""
    if fmt is None:
        flags = None if like is None else getattr(like._data, "flags", None)
        if flags is None or flags.c_contiguous:
            return result
    fmt = memory_layout.checked_format(fmt, name)
    if like is None:
        if fmt is dtypes.preserve_format:
            raise RuntimeError("unsupported memory format Preserve")
    else:
        fmt = memory_layout.like_format(like._data, fmt)
    if fmt is dtypes.contiguous_format:
        return result
    data = result._data
    memory_layout.check_rank(fmt, data.ndim)
    if type(data) is not MetaArray:  # meta tensors have no memory to lay out
        result._data = memory_layout.copy_in_format(data, get_array_module(data), fmt)
    return result


def _empty(size, dtype, requires_grad, device, like=None):
    """``empty`` in ``like``'s array module (a tensor) or the default one."""
    array = _empty_array(_sizes(size), _np_dtype(dtype), _module(like, device))
    return _finish(array, requires_grad, device, like)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = dtypes.scalar_dtype(fill_value)
    _check_float8_fill(fill_value, dtype, size)
    return _filled(fill_value, (size,), dtype, requires_grad, device, name="full")


def _check_float8_fill(value, dtype, size):
    """PyTorch's fill of a float8 tensor checks that the number fits (not of one element)."""
    if dtype in dtypes.FLOAT8 and not isinstance(value, Tensor) and \
            math.prod(_sizes((size,) if isinstance(size, int) else size)) != 1:
        check_float8_fits(value, dtype)


def _like_dtype(t, dtype):
    return dtype or t.dtype


def zeros_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    if getattr(t, "_made_like", None) is not None:  # batched (vmap): batched result
        return t._made_like(zeros_like, dtype=dtype, device=device,
                            requires_grad=requires_grad, memory_format=memory_format)
    return _laid_out(_filled(0, t.shape, _like_dtype(t, dtype), requires_grad, device, like=t),
                     memory_format, t, "zeros_like")


def ones_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    if getattr(t, "_made_like", None) is not None:  # batched (vmap): batched result
        return t._made_like(ones_like, dtype=dtype, device=device,
                            requires_grad=requires_grad, memory_format=memory_format)
    return _laid_out(_filled(1, t.shape, _like_dtype(t, dtype), requires_grad, device, like=t),
                     memory_format, t, "ones_like")


def empty_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    if getattr(t, "_made_like", None) is not None:  # batched (vmap): batched result
        return t._made_like(empty_like, dtype=dtype, device=device,
                            requires_grad=requires_grad, memory_format=memory_format)
    return _laid_out(_empty((t.shape,), _like_dtype(t, dtype), requires_grad, device, like=t),
                     memory_format, t, "empty_like")


def full_like(t, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    if getattr(t, "_made_like", None) is not None:  # batched (vmap): batched result
        return t._made_like(full_like, fill_value, dtype=dtype, device=device,
                            requires_grad=requires_grad, memory_format=memory_format)
    _check_float8_fill(fill_value, _like_dtype(t, dtype), tuple(t.shape))
    return _laid_out(_filled(fill_value, t.shape, _like_dtype(t, dtype), requires_grad, device,
                             like=t), memory_format, t, "full_like")


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values from ``start`` to ``end`` (exclusive); integer args give int64."""
    if end is None:
        start, end = 0, start
    vals = [(v.item() if v.numel() == 1 else float(v)) if isinstance(v, Tensor) else v
            for v in (start, end, step)]
    if dtype is not None and (dtype is dtypes.bool_ or dtype.is_complex
                              or dtype in dtypes.LIMITED_UNSIGNED or dtype in dtypes.FLOAT8) and \
            _module(None, device) is not meta_module:  # no kernel for them (on the CPU)
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{dtype.scalar_name}'")
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in vals)
        dtype = dtypes.int64 if is_int else get_default_dtype()
    n = max(int(math.ceil((vals[1] - vals[0]) / vals[2])), 0)
    xp = _module(None, device)
    if xp is meta_module:
        return _finish(xp.empty((n,), dtype.np), requires_grad, device)

    def make():
        arr = (vals[0] + vals[2] * xp.arange(n, dtype=xp.float64)) \
            if dtype.is_floating_point else xp.arange(vals[0], vals[1], vals[2])
        return arr.astype(dtype.np)
    return _finish(allocate(make, (n,), dtype.np), requires_grad, device)


_RANGE_DEPRECATED = ("torch.range is deprecated and will be removed in a future release because "
                     "its behavior is inconsistent with Python's range builtin. Instead, use "
                     "torch.arange, which produces values in [start, end).")


def range_(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """The deprecated ``range``: values from ``start`` to ``end`` *inclusive*, in the
    default float dtype unless ``dtype`` is given (warns, as PyTorch does).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); ember.range(1, 3)
    tensor([1., 2., 3.])
    """
    warnings.warn(_RANGE_DEPRECATED, UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dt = dtype or get_default_dtype()
    n = int(math.floor((end - start) / step)) + 1
    arr = allocate(lambda: (start + step * np.arange(n, dtype=np.float64)).astype(dt.np),
                   (n,), dt.np)
    return _finish(arr, requires_grad, device)


range_.__name__ = range_.__qualname__ = "range"  # ember.range (a module-level ``range`` would
# hide the builtin from this module)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    np_dtype = _np_dtype(dtype)
    if steps > 1 and (np_dtype.kind == "b"  # (one step: the start, no kernel)
                      or np_dtype.kind == "u" and np_dtype.itemsize > 1
                      or np_dtype in dtypes.FLOAT8_NP):
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for "
                                  f"'{dtypes.from_numpy_dtype(np_dtype).scalar_name}'")
    xp = default_array_module()
    arr = allocate(lambda: linspace_array(xp, start, end, steps, np_dtype), (steps,), np_dtype)
    return _finish(arr, requires_grad, device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    np_dtype = _np_dtype(dtype)
    if np_dtype.kind == "u" and np_dtype.itemsize > 1:  # PyTorch's limited unsigned types
        raise NotImplementedError(f"\"eye\" not implemented for "
                                  f"'{dtypes.from_numpy_dtype(np_dtype).scalar_name}'")
    xp = default_array_module()
    arr = allocate(lambda: xp.eye(n, m, dtype=np_dtype), (n, n if m is None else m), np_dtype)
    return _finish(arr, requires_grad, device)


def _random_float(draw, size, dtype, generator, requires_grad, device, name, like=None):
    """Samples drawn on the host by ember's generator, handed to ``like``'s array module
    (a tensor) or the default one."""
    dt = _np_dtype(dtype)
    size = _sizes(size, name)
    xp = _module(like, device)
    floating = (dtypes.is_float_np(dt) and dt not in dtypes.FLOAT8_NP) or dt.kind == "c"
    if xp is meta_module and (floating or name == "rand"):
        # nothing to draw (PyTorch's generator does not advance either); no kernel runs
        # there to refuse an integer dtype, which its meta randn refuses itself
        return _finish(xp.empty(size, dt), requires_grad, device, like)
    if not floating and (name == "rand" or math.prod(size) or dt not in dtypes.FLOAT8_NP):
        _refuse_random(name, dt, xp is meta_module)  # float8's normal draws none of none
    gen = _random.rng(generator)
    drawn = dt if dt in (np.float32, np.float64) else np.float32
    if dt.kind == "c":
        draw = _complex_draw(draw, name == "randn")
        drawn = dt
    policy = _random.vmap_randomness
    batch = None if policy is None else policy.batch_size()
    if batch is not None:  # vmap(randomness="different"): one draw per sample
        arr = xp.asarray(draw(gen, (batch,) + tuple(size), drawn).astype(dt, copy=False))
        return policy.wrap(_finish(arr, requires_grad, device, like))
    arr = allocate(lambda: xp.asarray(draw(gen, size, drawn).astype(dt, copy=False)), size, dt)
    return _finish(arr, requires_grad, device, like)


#: the kernel PyTorch's CPU draws run (and name when refusing a dtype)
_RANDOM_KERNELS = {"rand": "check_uniform_bounds", "randn": "normal_kernel_cpu"}


def _refuse_random(name, np_dtype, meta=False):
    """PyTorch's error for ``rand``/``randn`` (or ``uniform_``/``normal_``) of a dtype that
    is neither floating nor complex."""
    dt = dtypes.from_numpy_dtype(np_dtype)
    if meta:  # PyTorch's meta randn
        raise RuntimeError(f"expected a floating-point or complex dtype, but got dtype={dt}")
    raise NotImplementedError(f"\"{_RANDOM_KERNELS[name]}\" not implemented for "
                              f"'{dt.scalar_name}'")


def _complex_draw(draw, halve_variance):
    """``draw`` of complex numbers: real and imaginary parts drawn as one real array of twice
    the size (parts side by side, as a view_as_real); a standard normal's parts have
    variance 1/2 each, as PyTorch's (the complex variance is then 1)."""
    def complex_draw(gen, shape, dtype):
        part = np.float32 if dtype == np.complex64 else np.float64
        reals = draw(gen, tuple(shape) + (2,), part)
        if halve_variance:
            reals *= part(math.sqrt(0.5))
        return reals.view(dtype).reshape(shape)
    return complex_draw


def _uniform(gen, shape, dtype):
    return gen.random(shape, dtype=dtype)


def _normal(gen, shape, dtype):
    return gen.standard_normal(shape, dtype=dtype)


def rand(*size_args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples on [0, 1)."""
    size = size_args if size is None else keyword_sizes(size_args, size, "rand", "size")
    return _random_float(_uniform, size, dtype, generator, requires_grad, device, "rand")


def randn(*size_args, size=None, generator=None, dtype=None, device=None,
          requires_grad=False):
    """Standard normal samples."""
    size = size_args if size is None else keyword_sizes(size_args, size, "randn", "size")
    return _random_float(_normal, size, dtype, generator, requires_grad, device, "randn")


def rand_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _laid_out(_random_float(_uniform, (t.shape,), _like_dtype(t, dtype), None,
                                   requires_grad, device, "rand", like=t),
                     memory_format, t, "rand_like")


def randn_like(t, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return _laid_out(_random_float(_normal, (t.shape,), _like_dtype(t, dtype), None,
                                   requires_grad, device, "randn", like=t),
                     memory_format, t, "randn_like")


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
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
    shape, np_dtype = _sizes((tuple(size),), "randint"), _np_dtype(dtype, dtypes.int64)
    if np_dtype.kind == "c" and _module(None, device) is not meta_module:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                           "boolean types")
    dtypes.refuse_float8(np_dtype, "random_update_from_to")
    gen = _random.rng(generator)
    xp = default_array_module()
    if _module(None, device) is meta_module:
        return _finish(meta_module.empty(shape, np_dtype), requires_grad, device)
    policy = _random.vmap_randomness
    batch = None if policy is None else policy.batch_size()
    if batch is not None:  # vmap(randomness="different"): one draw per sample
        arr = xp.asarray(gen.integers(low, high, (batch,) + tuple(shape)).astype(np_dtype))
        return policy.wrap(_finish(arr, requires_grad, device))
    arr = allocate(lambda: xp.asarray(gen.integers(low, high, shape).astype(np_dtype)), shape,
                   np_dtype)
    return _finish(arr, requires_grad, device)


def randint_like(t, low, high=None, *, dtype=None, device=None, memory_format=None):
    return _laid_out(beside(randint(low, high, t.shape, dtype=_like_dtype(t, dtype),
                                    device=device), t), memory_format, t, "randint_like")


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    np_dtype, gen = _np_dtype(dtype, dtypes.int64), _random.rng(generator)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    if (np_dtype.kind in "bc" or np_dtype.kind == "u" and np_dtype.itemsize > 1
            or np_dtype in dtypes.FLOAT8_NP) and _module(None, device) is not meta_module:
        # PyTorch's CPU kernel has none of them (empty or not)
        raise NotImplementedError(f"\"randperm\" not implemented for "
                                  f"'{dtypes.from_numpy_dtype(np_dtype).scalar_name}'")
    xp = default_array_module()
    if _module(None, device) is meta_module:
        return _finish(meta_module.empty((n,), np_dtype), requires_grad, device)
    arr = allocate(lambda: xp.asarray(gen.permutation(n).astype(np_dtype)), (n,), np_dtype)
    return _finish(arr, requires_grad, device)
