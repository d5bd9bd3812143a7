"""Storages: the memory under a tensor as PyTorch shows it (``UntypedStorage``: its bytes;
``TypedStorage``: its elements of one dtype), and the tensor methods that work on that memory
(``untyped_storage``, ``storage``, ``set_``, ``is_set_to``, ``resize_``).

A tensor's memory is the array at the end of its ``_data``'s chain of bases (``storage_array``):
an UntypedStorage is a one-dimensional uint8 view of all of it, so its items read and write
the tensor's elements, and two views of one tensor have storages with the same ``data_ptr``.
Memory cannot grow in place under NumPy's views: ``resize_`` of a tensor's storage raises,
and a tensor resized past its storage gets a new one (other views keep the old memory).

>>> import ember
>>> x = ember.zeros(2)
>>> s = x.untyped_storage()
>>> s.nbytes(), s[3]
(8, 0)
>>> s[3] = 63; s[2] = 128  # the bytes of 1.0 as float32 (little-endian)
>>> x
tensor([1., 0.])
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Sequence

import numpy as np  # dtype metadata only: the bytes live in the tensor's array module

from .._tensor import Tensor, storage_array, _address
from ..backend import dtypes, get_array_module, strided_view, to_host, contiguous_strides
from ..backend.meta import is_meta
from ..device import cpu, device_of
from .. import _creation
from ..autograd import grad_mode

_TYPED_DEPRECATED = ("TypedStorage is deprecated. It will be removed in the future and "
                     "UntypedStorage will be the only storage class. This should only matter "
                     "to you if you are using storages directly.  To access UntypedStorage "
                     "directly, use tensor.untyped_storage() instead of tensor.storage()")
_NOT_RESIZABLE = "Trying to resize storage that is not resizable"


def _warn_typed(stacklevel=3):
    warnings.warn(_TYPED_DEPRECATED, UserWarning, stacklevel=stacklevel)


def _array_device(array):
    return cpu if type(array) is np.ndarray else device_of(array)


def _module_for(device):
    return _creation._module(None, device)


def _index(i, size, kind):
    """``i`` as a position in a storage of ``size`` items (negative counts from the end)."""
    if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
        raise TypeError(f"can't index a torch.{kind} with {type(i).__name__}")
    i = int(i)
    if not -size <= i < size:
        raise IndexError(f"index {i} out of range for storage of size {size}")
    return i + size if i < 0 else i


class UntypedStorage:
    """The bytes under a tensor (``x.untyped_storage()``), or a new block of ``size`` bytes
    (``UntypedStorage(size, device=...)``; zeros), or bytes from a sequence of ints.

    >>> import ember
    >>> ember.UntypedStorage([1, 2, 300]).tolist()  # bytes: 300 wraps to 44
    [1, 2, 44]
    """
    __module__ = "ember"
    __slots__ = ("_bytes", "_resizable", "__weakref__")
    is_sparse = False

    def __init__(self, *args, device=None):
        xp = _module_for(device)
        if len(args) > 1:
            raise TypeError(f"UntypedStorage(): expected at most 1 argument, got {len(args)}")
        arg = args[0] if args else 0
        if isinstance(arg, (int, np.integer)) and not isinstance(arg, bool):
            if arg < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {arg}: "
                                   f"[{arg}]")
            self._bytes = xp.zeros((int(arg),), np.uint8)
        else:
            values = np.array([int(v) % 256 for v in arg], dtype=np.uint8)
            self._bytes = xp.asarray(values)
        self._resizable = True

    @classmethod
    def _wrap(cls, byte_array, resizable=False):
        self = cls.__new__(cls)
        self._bytes, self._resizable = byte_array, resizable
        return self

    @classmethod
    def _of(cls, tensor):
        """The storage of ``tensor``: a byte view of the whole array owning its memory."""
        d = tensor._data
        xp = get_array_module(d)
        if is_meta(d):  # no memory: a storage of the bytes the tensor spans
            return cls._wrap(xp.empty(((tensor.storage_offset() + d.size) * d.itemsize,),
                                      np.uint8))
        owner = storage_array(d)
        if type(owner) is not type(d) and isinstance(d, np.ndarray):
            owner = owner.view(type(d))  # a NumPy subclass's array over a plain one's memory
        if not (owner.flags.c_contiguous or owner.flags.f_contiguous):
            raise NotImplementedError("ember cannot give the storage of a tensor whose memory "
                                      "is not one contiguous block")
        return cls._wrap(strided_view(owner, (owner.size,), (owner.itemsize,))
                         .view(np.uint8).reshape(-1) if owner.size else
                         xp.empty((0,), np.uint8))

    # ---- sizes and places --------------------------------------------------------------
    def size(self) -> int:
        return int(self._bytes.shape[0])

    def nbytes(self) -> int:
        return int(self._bytes.shape[0])

    def __len__(self):
        return int(self._bytes.shape[0])

    def element_size(self) -> int:
        return 1

    def data_ptr(self) -> int:
        return 0 if is_meta(self._bytes) else _address(self._bytes)

    @property
    def device(self):
        return _array_device(self._bytes)

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_meta(self):
        return is_meta(self._bytes)

    def type(self) -> str:
        return "torch.storage.UntypedStorage"

    def untyped(self) -> UntypedStorage:
        return self

    # ---- items -------------------------------------------------------------------------
    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of "
                                   f"1 is supported")
            return UntypedStorage._wrap(self._bytes[start:max(start, stop)])
        return int(to_host(self._bytes[_index(i, len(self), "UntypedStorage")]))

    def __setitem__(self, i, value):
        if not isinstance(i, slice):
            i = _index(i, len(self), "UntypedStorage")
        self._bytes[i] = int(value) % 256  # PyTorch keeps the low byte (-1 -> 255)

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return to_host(self._bytes).tolist()

    def __repr__(self):
        return _storage_repr(self, f"ember.UntypedStorage(device={self.device})")

    # ---- copies and fills --------------------------------------------------------------
    def cpu(self) -> UntypedStorage:
        if self.device.type == "cpu":
            return self
        return UntypedStorage._wrap(to_host(self._bytes).copy(), resizable=True)

    def clone(self) -> UntypedStorage:
        return UntypedStorage._wrap(self._bytes.copy(), resizable=True)

    def copy_(self, source: UntypedStorage | TypedStorage,
              non_blocking: bool | None = None) -> UntypedStorage:
        src = source.untyped()._bytes
        if src.shape[0] != self._bytes.shape[0]:
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but src "
                               f"was {src.shape[0]} bytes")
        if type(src) is not type(self._bytes):
            src = get_array_module(self._bytes).asarray(to_host(src))
        self._bytes[...] = src
        return self

    def fill_(self, value: int) -> UntypedStorage:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise RuntimeError(f"fill_ expects int, but got {type(value).__name__}")
        self._bytes[...] = int(value) % 256
        return self

    def resize_(self, size: int) -> UntypedStorage:
        """Change the number of bytes, keeping the leading ones (new ones are zero); only a
        storage made on its own (not a tensor's memory, which NumPy views cannot move)."""
        size = operator.index(size)
        if not self._resizable:
            raise RuntimeError(_NOT_RESIZABLE)
        old = self._bytes
        new = get_array_module(old).zeros((size,), np.uint8)
        n = min(size, old.shape[0])
        new[:n] = old[:n]
        self._bytes = new
        return self

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


def _storage_repr(storage, title):
    if storage.is_meta:
        return f"...\n[{title} of size {len(storage)}]"
    return " " + "\n ".join(str(v) for v in storage.tolist()) + \
        f"\n[{title} of size {len(storage)}]"


class TypedStorage:
    """A storage seen as elements of one dtype (``x.storage()``: deprecated in PyTorch, which
    warns, as ember does). ``TypedStorage(size_or_sequence, dtype=None, device=None)`` makes
    a new one (the default dtype unless given).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     s = ember.TypedStorage([1.5, 2.0])
    >>> s.tolist(), s.element_size(), s.nbytes()
    ([1.5, 2.0], 4, 8)
    """
    __module__ = "ember"
    __slots__ = ("_untyped_storage", "dtype", "__weakref__")
    is_sparse = False

    def __init__(self, *args, dtype=None, device=None, wrap_storage=None, _internal=False):
        if not _internal:
            _warn_typed()
        dt = dtype or dtypes.get_default_dtype()
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage.__init__ received an invalid combination of "
                                   "arguments: wrap_storage takes no other arguments")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError(f"expected a UntypedStorage for argument 'wrap_storage', but "
                                f"got {type(wrap_storage).__name__}")
            self._untyped_storage, self.dtype = wrap_storage, dt
            return
        if len(args) > 1:
            raise TypeError(f"TypedStorage(): expected at most 1 argument, got {len(args)}")
        arg = args[0] if args else 0
        if isinstance(arg, (int, np.integer)) and not isinstance(arg, bool):
            values = _creation.zeros(int(arg), dtype=dt, device=device)
        else:
            values = _creation.tensor(list(arg), dtype=dt, device=device)
        self._untyped_storage, self.dtype = UntypedStorage._of(values), dt
        self._untyped_storage._resizable = True

    @classmethod
    def _wrap(cls, untyped, dt):
        return cls(wrap_storage=untyped, dtype=dt, _internal=True)

    def _values(self):
        """The elements as a one-dimensional array of this storage's dtype."""
        b = self._untyped_storage._bytes
        n = b.shape[0] // self.dtype.itemsize
        if is_meta(b):
            return get_array_module(b).empty((n,), self.dtype.np)
        return b[:n * self.dtype.itemsize].view(self.dtype.np)

    # ---- sizes and places --------------------------------------------------------------
    def size(self) -> int:
        return self._untyped_storage.nbytes() // self.dtype.itemsize

    def __len__(self):
        return self.size()

    def nbytes(self) -> int:
        return self.size() * self.dtype.itemsize

    def element_size(self) -> int:
        return self.dtype.itemsize

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self):
        return self._untyped_storage.is_cuda

    @property
    def is_meta(self):
        return self._untyped_storage.is_meta

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def type(self) -> str:
        return f"torch.{self.pickle_storage_type()}"

    def pickle_storage_type(self) -> str:
        return f"{self.dtype.scalar_name}Storage"

    # ---- items -------------------------------------------------------------------------
    def __getitem__(self, i):
        if isinstance(i, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        return to_host(self._values()[_index(i, self.size(), "TypedStorage")]).item()

    def __setitem__(self, i, value):
        if not isinstance(i, slice):
            i = _index(i, self.size(), "TypedStorage")
        self._values()[i] = value

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return to_host(self._values()).tolist()

    def __repr__(self):
        return _storage_repr(self, f"ember.TypedStorage(dtype={self.dtype!r}, "
                                   f"device={self.device})")

    # ---- copies, fills, conversions ----------------------------------------------------
    def cpu(self) -> TypedStorage:
        return TypedStorage._wrap(self._untyped_storage.cpu(), self.dtype)

    def clone(self) -> TypedStorage:
        return TypedStorage._wrap(self._untyped_storage.clone(), self.dtype)

    def copy_(self, source: TypedStorage | UntypedStorage,
              non_blocking: bool | None = None) -> TypedStorage:
        self._untyped_storage.copy_(source)
        return self

    def fill_(self, value) -> TypedStorage:
        self._values()[...] = value
        return self

    def resize_(self, size: int) -> None:
        self._untyped_storage.resize_(operator.index(size) * self.dtype.itemsize)

    def _to(self, dt) -> TypedStorage:
        if dt is self.dtype:
            return self
        values = self._values().astype(dt.np)
        return TypedStorage._wrap(UntypedStorage._wrap(values.view(np.uint8).reshape(-1),
                                                       resizable=True), dt)

    def float(self):
        return self._to(dtypes.float32)

    def double(self):
        return self._to(dtypes.float64)

    def half(self):
        return self._to(dtypes.float16)

    def bfloat16(self):
        return self._to(dtypes.bfloat16)

    def long(self):
        return self._to(dtypes.int64)

    def int(self):
        return self._to(dtypes.int32)

    def short(self):
        return self._to(dtypes.int16)

    def char(self):
        return self._to(dtypes.int8)

    def byte(self):
        return self._to(dtypes.uint8)

    def bool(self):
        return self._to(dtypes.bool_)

    def cfloat(self):
        return self._to(dtypes.complex64)

    def cdouble(self):
        return self._to(dtypes.complex128)

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__


def is_storage(obj) -> bool:
    """Whether ``obj`` is a storage (untyped or typed).

    >>> import ember
    >>> ember.is_storage(ember.zeros(2).untyped_storage()), ember.is_storage(ember.zeros(2))
    (True, False)
    """
    return isinstance(obj, (UntypedStorage, TypedStorage))


# ---- tensor methods ------------------------------------------------------------------------
def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes of the memory under this tensor (all of it, not only this view's).

    >>> import ember
    >>> x = ember.arange(4, dtype=ember.int32)
    >>> x[2:].untyped_storage().nbytes(), x[2:].untyped_storage().data_ptr() == x.data_ptr()
    (16, True)
    """
    return UntypedStorage._of(self)


def storage(self: Tensor) -> TypedStorage:
    """The memory under this tensor as elements of its dtype (PyTorch warns that
    TypedStorage is deprecated; so does ember).

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore"); ember.arange(3)[1:].storage().tolist()
    [0, 1, 2]
    """
    _warn_typed()
    return TypedStorage._wrap(UntypedStorage._of(self), self.dtype)


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both tensors view the same memory with the same offset, sizes and strides.

    >>> import ember
    >>> x = ember.zeros(4)
    >>> x.is_set_to(x.view(4)), x.is_set_to(x[1:])
    (True, False)
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"is_set_to(): argument 'tensor' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    a, b = self._data, tensor._data
    if is_meta(a) or is_meta(b):
        return a is b
    return (_address(storage_array(a)) == _address(storage_array(b))
            and self.storage_offset() == tensor.storage_offset()
            and tuple(a.shape) == tuple(b.shape) and self.stride() == tensor.stride())


def _check_settable(self):
    if self._requires_grad and self._grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def set_(self: Tensor, source: Tensor | UntypedStorage | TypedStorage | None = None,
         storage_offset: int = 0, size: Sequence[int] | None = None,
         stride: Sequence[int] | None = None) -> Tensor:
    """Make this tensor view ``source``'s memory: another tensor's (same sizes, strides and
    offset), or a storage's (``storage_offset``, ``size`` and ``stride`` in elements; a
    contiguous layout of the whole storage by default); no argument: an empty tensor.

    >>> import ember
    >>> x, y = ember.zeros(2), ember.arange(6.0)
    >>> x.set_(y.untyped_storage(), 1, (2, 2), (2, 1))
    tensor([[1., 2.],
            [3., 4.]])
    >>> x[0, 0] = 9; y
    tensor([0., 9., 2., 3., 4., 5.])
    """
    _check_settable(self)
    xp = get_array_module(self._data)
    if source is None:
        new = xp.empty((0,), self._data.dtype)
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype.cpp_name} to a "
                               f"tensor of type {self.dtype.cpp_name}")
        if size is None and stride is None and not storage_offset:
            new = source._data
        else:  # the given geometry over the other tensor's memory
            new = _view_storage(UntypedStorage._of(source), self.dtype, storage_offset,
                                source.shape if size is None else size, stride)
    elif isinstance(source, (UntypedStorage, TypedStorage)):
        if isinstance(source, TypedStorage) and source.dtype is not self.dtype:
            raise RuntimeError(f"Expected a Storage of type {self.dtype.cpp_name} or an "
                               f"UntypedStorage, but got type {source.dtype.scalar_name} for "
                               f"argument 1 'storage'")
        new = _view_storage(source.untyped(), self.dtype, storage_offset, size, stride)
    else:
        raise TypeError(f"set_(): argument 'source' (position 1) must be Tensor or Storage, "
                        f"not {type(source).__name__}")
    self._data = new
    self._vc[0] += 1
    return self


def _view_storage(untyped, dt, offset, size, stride):
    b = untyped._bytes
    itemsize = dt.itemsize
    n_items = b.shape[0] // itemsize
    if size is None:
        size = (n_items - offset,) if stride is None else ()
    size = tuple(operator.index(s) for s in size)
    stride = contiguous_strides(size) if stride is None else \
        tuple(operator.index(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length "
                           f"({len(stride)})")
    if any(n < 0 for n in size) or any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > n_items:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {itemsize} requiring a storage size "
                           f"of {needed * itemsize} are out of bounds for storage of size "
                           f"{b.shape[0]}")
    xp = get_array_module(b)
    if is_meta(b):
        return xp.empty(size, dt.np)
    flat = b[:n_items * itemsize].view(dt.np)
    start = flat[offset:] if n_items > offset else flat[:0]
    return strided_view(start, size, tuple(s * itemsize for s in stride))


def resize_sizes(sizes: tuple) -> tuple:
    """``resize_``'s sizes (``resize_(2, 3)`` or ``resize_((2, 3))``) checked as PyTorch's."""
    if not sizes:
        raise TypeError('resize_() missing 1 required positional arguments: "size"')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) and not (
                isinstance(n, Tensor) and n.numel() == 1 and not n.is_floating_point()):
            raise TypeError(f"resize_(): argument 'size' (position 1) must be tuple of ints, "
                            f"not {type(n).__name__}")
    sizes = tuple(int(n) for n in sizes)
    if any(n < 0 for n in sizes):
        raise RuntimeError("numel: integer multiplication overflow")
    return sizes


def resize_(self: Tensor, sizes: tuple) -> Tensor:
    """``self.resize_(*sizes)``: a contiguous layout of ``sizes`` at the same storage offset;
    the storage's elements kept in storage order, and the same memory used while it is large
    enough (a larger tensor gets new memory holding the old storage's bytes, zeros after)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    d = self._data
    xp = get_array_module(d)
    if is_meta(d):
        self._data = xp.empty(sizes, d.dtype)
        self._vc[0] += 1
        return self
    numel = math.prod(sizes)
    storage = UntypedStorage._of(self)
    offset = self.storage_offset()
    itemsize = d.itemsize
    if (offset + numel) * itemsize > storage.nbytes():
        grown = xp.zeros(((offset + numel) * itemsize,), np.uint8)
        grown[:storage.nbytes()] = storage._bytes
        storage = UntypedStorage._wrap(grown)
    dt = dtypes.from_numpy_dtype(d.dtype)
    self._data = _view_storage(storage, dt, offset, sizes, contiguous_strides(sizes))
    self._vc[0] += 1
    return self


__all__ = ["UntypedStorage", "TypedStorage", "is_storage", "untyped_storage", "storage",
           "is_set_to", "set_", "resize_", "resize_sizes"]
