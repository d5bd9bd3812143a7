"""A stand-in "cuda" array module for tests on machines without a GPU.

``FakeCudaArray`` is a NumPy array underneath that behaves, where ember could tell, like
a CuPy array: results of its ufuncs, functions and methods are FakeCudaArrays (scalars
as 0-d arrays), and a plain NumPy array mixed into its arithmetic or passed to the
namespace's functions raises CuPy's ``TypeError: Unsupported type <class
'numpy.ndarray'>`` (CuPy refuses host arrays, 0-d ones too). Only the namespace's
``asarray``/``array`` take host data, and copy it, as a transfer to a GPU does.
Its API is CuPy's where CuPy's differs from NumPy's in ways ember could trip over: ``flags``
has only ``c_contiguous``, ``f_contiguous`` and ``owndata`` (no read-only arrays),
``ctypes`` and ``__array_interface__`` are missing, diagonals are writeable views, and
``lib.stride_tricks.as_strided`` takes no ``writeable``/``subok``, ``linalg.solve`` does not
broadcast batches.
``FAKE_CUDA`` is the module-like namespace, ``FakeRuntime`` answers ``ember.cuda``'s
queries. The ``fake_cuda`` fixture (tests/conftest.py) registers them for device "cuda".
"""
import time
import types

import numpy

from ember import backend


class FakeCudaArray(numpy.ndarray):
    """A NumPy array standing for CUDA device memory (see the module docstring)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _refuse_host_arrays(inputs, kwargs)
        return _wrap(getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs)),
                     kwargs.get("out"))

    def __array_function__(self, func, types, args, kwargs):
        _refuse_host_arrays(args, kwargs)
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)), kwargs.get("out"))

    def __getitem__(self, index):
        out = numpy.ndarray.__getitem__(self, _unwrap(index))
        return numpy.asarray(out).view(FakeCudaArray) if isinstance(out, numpy.generic) else out

    def diagonal(self, *args, **kwargs):  # CuPy's diagonals are writeable views
        view = numpy.ndarray.diagonal(self, *args, **kwargs)
        try:
            numpy.ndarray.flags.__get__(view).writeable = True
        except ValueError:  # a view of read-only memory
            pass
        return view

    @property
    def flags(self):
        return _CupyFlags(numpy.ndarray.flags.__get__(self))

    def _missing(name):
        def fail(self):
            raise AttributeError(f"'cupy.ndarray' object has no attribute {name!r}")
        return property(fail)

    @property
    def __cuda_array_interface__(self):  # CuPy's export; the "device" pointer is host memory
        host = numpy.ndarray.__array_interface__.__get__(self)
        return {"shape": self.shape, "typestr": self.dtype.str, "data": host["data"],
                "strides": host["strides"], "version": 3}

    ctypes = _missing("ctypes")
    __array_interface__ = _missing("__array_interface__")
    del _missing


class _CupyFlags:
    """CuPy's ``ndarray.flags``: three read-only attributes, also as items."""

    def __init__(self, flags):
        self.c_contiguous, self.f_contiguous = flags.c_contiguous, flags.f_contiguous
        self.owndata = flags.owndata

    def __getitem__(self, name):
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "OWNDATA": "owndata"}[name])


def _host_array(obj):
    """A plain NumPy array found in ``obj`` (also inside lists, tuples, dicts), or None."""
    if isinstance(obj, numpy.ndarray):
        return None if isinstance(obj, FakeCudaArray) else obj
    if type(obj) in (list, tuple):
        return next((a for a in map(_host_array, obj) if a is not None), None)
    if type(obj) is dict:
        return _host_array(list(obj.values()))
    return None


def _refuse_host_arrays(*parts):
    found = _host_array(list(parts))
    if found is not None:
        raise TypeError(f"Unsupported type {type(found)}")


def _unwrap(obj):
    if isinstance(obj, FakeCudaArray):
        return obj.view(numpy.ndarray)
    if type(obj) in (list, tuple):
        return type(obj)(_unwrap(o) for o in obj)
    if type(obj) is dict:
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


def _wrap(obj, out=None):
    if out is not None:  # ``out=``: the caller's arrays
        return out[0] if isinstance(out, tuple) and len(out) == 1 else out
    if type(obj) is numpy.ndarray:
        if obj.base is None:
            return _owning(obj)
        if not obj.flags.writeable:  # NumPy's read-only views (diagonal): CuPy has none
            try:
                obj.flags.writeable = True
            except ValueError:  # a view of read-only memory
                pass
        return obj.view(FakeCudaArray)
    if isinstance(obj, numpy.generic):
        return _owning(numpy.asarray(obj))
    if isinstance(obj, tuple):
        items = [_wrap(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if type(obj) is list:
        return [_wrap(o) for o in obj]
    return obj


def _owning(array):
    """A FakeCudaArray owning a copy of the fresh ``array`` (``base`` None, as a CuPy result's;
    a view of ``array`` would have it as its base)."""
    out = numpy.ndarray.__new__(FakeCudaArray, array.shape, array.dtype,
                                order="F" if array.flags.f_contiguous and array.ndim > 1 else "C")
    numpy.copyto(out.view(numpy.ndarray), array)
    return out


# arrays from the host may be given to these (a copy to the device)
_TRANSFERS = {"asarray", "array", "asanyarray", "ascontiguousarray"}


class OutOfMemoryError(MemoryError):
    """CuPy's allocation failure (``cupy.cuda.memory.OutOfMemoryError``)."""


def _function(fn, name):
    def call(*args, **kwargs):
        try:
            return _call(*args, **kwargs)
        except MemoryError as error:  # NumPy's, for a size the host cannot hold: CuPy's
            asked = getattr(error, "_total_size", 0)
            raise OutOfMemoryError(f"Out of memory allocating {asked:,} bytes (allocated so "
                                   f"far: 0 bytes).") from None

    def _call(*args, **kwargs):
        if name in _TRANSFERS:
            copy = _host_array([args[:1]]) is not None
            result = fn(*_unwrap(args), **_unwrap(kwargs))
            return _wrap(numpy.array(result, copy=True) if copy else result)
        _refuse_host_arrays(args, kwargs)
        return _wrap(fn(*_unwrap(args), **_unwrap(kwargs)), kwargs.get("out"))
    call.__name__ = name
    return call


class _Ufunc:
    def __init__(self, ufunc):
        self._ufunc = ufunc
        self._call = _function(ufunc, ufunc.__name__)

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        return _function(attr, name) if callable(attr) else attr


class FakeNamespace:
    """NumPy's namespace (or a submodule's) taking and making FakeCudaArrays."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        attr = getattr(self._module, name)
        if isinstance(attr, types.ModuleType):
            wrapped = FakeNamespace(attr)
        elif isinstance(attr, numpy.ufunc):
            wrapped = _Ufunc(attr)
        elif isinstance(attr, type) or not callable(attr):
            wrapped = attr
        else:
            wrapped = _function(attr, name)
        setattr(self, name, wrapped)
        return wrapped


def _as_strided(x, shape=None, strides=None):  # CuPy's signature: no writeable, no subok
    return numpy.lib.stride_tricks.as_strided(_unwrap(x), shape, strides).view(FakeCudaArray)


def _solve(a, b):
    """CuPy's linalg.solve: no batch broadcasting (``b`` a vector when it has one dim fewer
    than ``a``); LinAlgError on a singular system, as under the errstate ember's CupyNamespace
    sets."""
    _refuse_host_arrays(a, b)
    a, b = _unwrap(a), _unwrap(b)
    vector = b.ndim == a.ndim - 1
    if a.shape[:-2] != (b.shape[:-1] if vector else b.shape[:-2]):
        raise ValueError(f"a and b have different batch shapes: {a.shape}, {b.shape}")
    rhs = b[..., None] if vector else b
    x = numpy.linalg.solve(a, rhs)
    return _owning(numpy.ascontiguousarray(x[..., 0] if vector else x))


FAKE_CUDA = FakeNamespace(numpy)
FAKE_CUDA.lib.stride_tricks.as_strided = _as_strided
FAKE_CUDA.linalg.solve = _solve
FAKE_CUDA.ndarray = FakeCudaArray
FAKE_CUDA.asnumpy = lambda a: numpy.array(_unwrap(a), copy=True)


class FakeStream:
    """CuPy's Stream as ember uses it: a pointer, done/synchronize/wait_event/record/use and
    a context that makes it the runtime's current stream."""

    def __init__(self, runtime, ptr):
        self.runtime, self.ptr, self.done, self.waited = runtime, ptr, True, []

    def synchronize(self):
        self.runtime.synchronized += 1

    def wait_event(self, event):
        self.waited.append(event)

    def use(self):
        self.runtime.stream = self

    def __enter__(self):
        self.runtime.stack.append(self.runtime.stream)
        self.use()
        return self

    def __exit__(self, *exc):
        self.runtime.stream = self.runtime.stack.pop()


class FakeEvent:
    """CuPy's Event as ember uses it: record takes the host clock (timing)."""

    def __init__(self, runtime, timing):
        self.runtime, self.timing, self.ptr, self.done = runtime, timing, id(self), True
        self.stream = self.at = None

    def record(self, stream):
        self.stream, self.at = stream, time.perf_counter()

    def synchronize(self):
        self.runtime.synchronized += 1


class FakeRuntime:
    """``ember.cuda``'s answers for one fake device; counts synchronize calls."""

    def __init__(self):
        self.synchronized = 0
        self.null = FakeStream(self, 0)
        self.stream, self.stack, self.streams = self.null, [], 0

    def device_count(self):
        return 1

    def current_device(self):
        return 0

    def set_device(self, index):
        if index != 0:
            raise RuntimeError("CUDA error: invalid device ordinal")

    def synchronize(self, index=None):
        self.synchronized += 1

    def get_device_name(self, index):
        return "Fake CUDA device"

    def get_device_capability(self, index):
        return 9, 0

    def memory_allocated(self):
        return 0

    def memory_reserved(self):
        return 0

    def empty_cache(self):
        pass

    def mem_get_info(self):
        return 3 << 30, 80 << 30

    def get_device_properties(self, index):
        return {"name": "Fake CUDA device", "major": 9, "minor": 0, "total_memory": 80 << 30,
                "multi_processor_count": 132, "L2_cache_size": 50 << 20,
                "is_integrated": False, "is_multi_gpu_board": False}

    def new_stream(self):
        self.streams += 1
        return FakeStream(self, 0x1000 * self.streams)

    def current_stream(self):
        return self.stream

    def null_stream(self):
        return self.null

    def new_event(self, timing, blocking):
        return FakeEvent(self, timing)

    def elapsed_time(self, start, end):
        return (end.at - start.at) * 1e3

    def is_out_of_memory(self, error):
        return isinstance(error, OutOfMemoryError)


def install():
    """Register the fake for device "cuda"; returns its runtime."""
    runtime = FakeRuntime()
    backend.register_array_module(FakeCudaArray, FAKE_CUDA, "cuda", runtime)
    return runtime


def uninstall():
    backend.unregister_array_module(FakeCudaArray)
