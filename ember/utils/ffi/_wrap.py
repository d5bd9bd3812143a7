"""Calling a cffi-built C function with ember tensors (the run-time half of ``ember.utils.ffi``).

Each tensor argument becomes an ``Ember<Type>Tensor`` struct (see
``<ember/ffi/EmberTensor.h>``) that points at the tensor's own memory. A tensor that is not
C-contiguous, aligned and writeable is copied in and, if the C code wrote to the copy, copied
back out afterwards. The struct's ``resize`` field is the module's ``extern "Python"``
callback: it reallocates the ember tensor (``Tensor.resize_``) and updates every struct that
describes that tensor. Errors raised inside the callback are re-raised once the C function
returns, so the interpreter never sees a half-done call crash.
"""
import numpy as np

from ..._tensor import Tensor

MAX_DIMS = 64  # EMBER_FFI_MAX_DIMS
RESIZE_CALLBACK = "_ember_ffi_resize"

# struct type -> (numpy dtype, ember dtype name, C element type, dtype code)
TENSOR_TYPES = {
    "EmberFloatTensor": (np.dtype(np.float32), "float32", "float", 1),
    "EmberDoubleTensor": (np.dtype(np.float64), "float64", "double", 2),
    "EmberLongTensor": (np.dtype(np.int64), "int64", "int64_t", 3),
    "EmberIntTensor": (np.dtype(np.int32), "int32", "int32_t", 4),
}

# The cdef part cffi needs to see (kept in step with EmberTensor.h; cffi checks the layout
# against the real header when it compiles the module).
CDEF = ("typedef int (*EmberFFIResizeFn)(void *handle, int64_t ndim, const int64_t *sizes);\n"
        + "".join(
            f"typedef struct Ember{name[5:-6]}Tensor {{ {ctype} *data; int64_t ndim; "
            f"int64_t size[{MAX_DIMS}]; int64_t stride[{MAX_DIMS}]; int dtype; void *handle; "
            f"EmberFFIResizeFn resize; }} {name};\n"
            for name, (_, _, ctype, _) in TENSOR_TYPES.items())
        + f'extern "Python" int {RESIZE_CALLBACK}(void *, int64_t, const int64_t *);\n')

_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def wrap_module(ffi, lib, namespace, arg_names=None):
    """Fill ``namespace`` with ember-aware wrappers of every function in ``lib``; returns
    the list of exported names (the generated package's ``__all__``)."""
    _register_resize(ffi)
    arg_names = arg_names or {}
    exported = []
    for symbol in dir(lib):
        if symbol.startswith("_ember_ffi"):
            continue
        obj = getattr(lib, symbol)
        if callable(obj):
            obj = _wrap_function(obj, symbol, ffi, lib, arg_names.get(symbol))
        namespace[symbol] = obj
        exported.append(symbol)
    return exported


def _register_resize(ffi):
    def resize(handle, ndim, sizes):
        try:
            record = ffi.from_handle(handle)
        except Exception:  # not a handle of ours: refuse rather than guess
            return 0
        try:
            record.call.resize(record, int(ndim), sizes)
            return 1
        except BaseException as exc:  # noqa: B902 - reported when the C call returns
            record.call.errors.append(exc)
            return 0

    ffi.def_extern(name=RESIZE_CALLBACK, onerror=lambda *exc: 0)(resize)


def _tensor_type(ctype):
    """The struct name when ``ctype`` is a pointer to one of the Ember tensor structs."""
    if ctype.kind != "pointer":
        return None
    cname = ctype.item.cname
    if cname.startswith("struct "):
        cname = cname[len("struct "):]
    return cname if cname in TENSOR_TYPES else None


def _wrap_function(fn, symbol, ffi, lib, names):
    ftype = ffi.typeof(fn)
    params = ftype.args
    slots = [(i, t) for i, t in ((i, _tensor_type(p)) for i, p in enumerate(params)) if t]
    returns_tensor = _tensor_type(ftype.result) is not None
    if not slots:
        return fn
    names = list(names) if names and len(names) == len(params) else [None] * len(params)
    resize_fn = getattr(lib, RESIZE_CALLBACK)

    def call(*args):
        if len(args) != len(params) and not ftype.ellipsis:
            raise TypeError(f"{symbol}() expected {len(params)} arguments, got {len(args)}")
        state = _Call(ffi, resize_fn, symbol)
        try:
            cargs = list(args)
            for i, struct_name in slots:
                cargs[i] = state.convert(args[i], struct_name, i, names[i])
            result = fn(*cargs)
            state.finish()
            if returns_tensor:
                return state.tensor_of(result)
            return result
        finally:
            state.close()

    call.__name__ = call.__qualname__ = symbol
    call.__doc__ = (f"{symbol}{_signature(ftype, names)}: the C function, called with ember "
                    "tensors for its Ember*Tensor * arguments.")
    call.__wrapped_cdata__ = fn
    return call


def _signature(ftype, names):
    parts = []
    for p, n in zip(ftype.args, names):
        parts.append(p.cname + (" " + n if n else ""))
    return f"({', '.join(parts)}) -> {ftype.result.cname}"


class _Record:
    """One tensor argument during one call: the tensor, what C sees, and the struct."""
    __slots__ = ("call", "tensor", "array", "buffer", "struct", "handle", "name", "copied")


class _Call:
    """The state of one call: records, arrays kept alive, errors from callbacks."""

    def __init__(self, ffi, resize_fn, symbol):
        self.ffi, self.resize_fn, self.symbol = ffi, resize_fn, symbol
        self.records, self.errors, self.keep = [], [], []

    def _describe(self, i, name):
        return f"{self.symbol}(): argument '{name}' (position {i + 1})" if name else \
            f"{self.symbol}(): argument {i + 1}"

    def convert(self, value, struct_name, i, name):
        np_dtype, dtype_name, _, code = TENSOR_TYPES[struct_name]
        what = self._describe(i, name)
        if not isinstance(value, Tensor):
            raise TypeError(f"{what} must be an ember tensor of dtype ember.{dtype_name} "
                            f"({struct_name} *), not {type(value).__name__}")
        array = value._data
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{what} must be a CPU tensor")
        if array.dtype != np_dtype:
            raise TypeError(f"{what} must be a tensor of dtype ember.{dtype_name} "
                            f"({struct_name} *), got {value.dtype}")
        if array.ndim > MAX_DIMS:
            raise ValueError(f"{what} has {array.ndim} dimensions; at most {MAX_DIMS} supported")
        rec = _Record()
        rec.call, rec.tensor, rec.array, rec.name = self, value, array, what
        flags = array.flags
        rec.copied = not (flags.c_contiguous and flags.aligned and flags.writeable)
        rec.buffer = np.array(array, order="C", copy=True) if rec.copied else array
        rec.struct = self.ffi.new(struct_name + " *")
        rec.struct.dtype = code
        rec.handle = self.ffi.new_handle(rec)
        rec.struct.handle = rec.handle
        rec.struct.resize = self.resize_fn
        self._describe_buffer(rec)
        self.records.append(rec)
        return rec.struct

    def _describe_buffer(self, rec):
        buf, s = rec.buffer, rec.struct
        s.data = self.ffi.cast(self.ffi.typeof(s.data), buf.ctypes.data)
        s.ndim = buf.ndim
        if buf.ndim:
            s.size[0:buf.ndim] = buf.shape
            s.stride[0:buf.ndim] = [st // buf.itemsize for st in buf.strides]

    def resize(self, rec, ndim, sizes):
        """The resize callback: reallocate the tensor's storage and update its structs."""
        if not 0 <= ndim <= MAX_DIMS:
            raise ValueError(f"{rec.name}: cannot resize to {ndim} dimensions")
        shape = tuple(int(sizes[k]) for k in range(ndim))
        if any(s < 0 for s in shape):
            raise ValueError(f"{rec.name}: cannot resize to negative sizes {list(shape)}")
        if rec.copied:
            raise ValueError(f"{rec.name} is not a contiguous, writeable tensor, so the C code "
                             "cannot resize it in place; pass a contiguous tensor (e.g. "
                             "x.contiguous() or x.new())")
        tensor = rec.tensor
        self.keep.append(tensor._data)  # other structs may still point at the old memory
        tensor.resize_(*shape)
        for other in self.records:
            if other.tensor is tensor:
                other.array = other.buffer = tensor._data
                self._describe_buffer(other)

    def finish(self):
        """After the C call: copy written copies back, then raise any callback error."""
        for rec in self.records:
            if rec.copied and rec.buffer.shape == rec.array.shape:
                view = _UINT[rec.array.itemsize]
                if not np.array_equal(rec.array.view(view), rec.buffer.view(view)):
                    if not rec.array.flags.writeable:
                        self.errors.append(ValueError(
                            f"{rec.name} is read-only, but the C function wrote to it"))
                        continue
                    rec.array[...] = rec.buffer
                    rec.tensor._vc[0] += 1
        if self.errors:
            err = self.errors[0]
            raise err

    def tensor_of(self, result):
        """Map a returned struct pointer back to its tensor (None for NULL)."""
        if result == self.ffi.NULL:
            return None
        address = int(self.ffi.cast("uintptr_t", result))
        for rec in self.records:
            if int(self.ffi.cast("uintptr_t", rec.struct)) == address:
                return rec.tensor
        raise RuntimeError(f"{self.symbol}() returned a tensor struct that was not one of "
                           "its arguments; structs only live for the duration of a call")

    def close(self):
        for rec in self.records:  # break record <-> handle cycles; the C call is over
            rec.struct.handle = self.ffi.NULL
            rec.struct.resize = self.ffi.NULL
            rec.handle = rec.call = None
        self.records = self.keep = None
