"""CuPy as the array module of the "cuda" device.

``load_cupy()`` is called (once, by ``ember.backend``) the first time something asks
for CUDA: ``device="cuda"``, ``.cuda()``, ``ember.cuda.is_available()``. When CuPy
imports and sees at least one GPU it hands back what the backend registers:
``cupy.ndarray`` arrays belong to the module ``cupy`` on device "cuda", and
``CupyRuntime`` answers ``ember.cuda``'s queries. Otherwise it returns None and ember
stays a CPU-only build ("Torch not compiled with CUDA enabled").

CuPy is imported nowhere else, so a machine without it pays nothing. The module the
backend registers is ``CupyNamespace(cupy)``: CuPy's own functions, plus stand-ins for
the few NumPy names ember's ops call that CuPy lacks (``errstate``: CuPy reports no
floating-point errors; ``isposinf``/``isneginf``; ``put_along_axis``;
``broadcast_shapes``); each is used only where CuPy has no function of that name. Its
``linalg`` runs CuPy's under ``cupyx.errstate(linalg="raise")``, so that singular and not
positive-definite inputs raise ``LinAlgError`` as NumPy's do (``_raising_linalg``).

>>> from ember.backend.cupy_backend import load_cupy
>>> found = load_cupy()
>>> found is None or found[2] == "cuda"
True
"""
import contextlib
import functools
import os
import types

import numpy

#: set to "0" to keep CuPy out even where it would work (a CPU-only run on a GPU machine)
ENABLE_VARIABLE = "EMBER_CUPY"


class CupyRuntime:
    """``ember.cuda``'s answers, from CuPy's CUDA runtime bindings and memory pool."""

    def __init__(self, cupy):
        self._cupy = cupy

    def device_count(self):
        return self._cupy.cuda.runtime.getDeviceCount()

    def current_device(self):
        return self._cupy.cuda.runtime.getDevice()

    def set_device(self, index):
        self._cupy.cuda.runtime.setDevice(index)

    def synchronize(self, index=None):
        self._cupy.cuda.Device(self.current_device() if index is None else index).synchronize()

    def get_device_name(self, index):
        name = self._cupy.cuda.runtime.getDeviceProperties(index)["name"]
        return name.decode() if isinstance(name, bytes) else name

    def get_device_capability(self, index):
        properties = self._cupy.cuda.runtime.getDeviceProperties(index)
        return properties["major"], properties["minor"]

    def memory_allocated(self):
        return self._cupy.get_default_memory_pool().used_bytes()

    def memory_reserved(self):
        return self._cupy.get_default_memory_pool().total_bytes()

    def empty_cache(self):
        self._cupy.get_default_memory_pool().free_all_blocks()

    def get_device_properties(self, index):
        """The properties PyTorch's ``get_device_properties`` reports, from CUDA's."""
        p = self._cupy.cuda.runtime.getDeviceProperties(index)
        name = p["name"].decode() if isinstance(p["name"], bytes) else p["name"]
        return {"name": name, "major": p["major"], "minor": p["minor"],
                "total_memory": p["totalGlobalMem"],
                "multi_processor_count": p["multiProcessorCount"],
                "L2_cache_size": p.get("l2CacheSize", 0),
                "is_integrated": bool(p.get("integrated", 0)),
                "is_multi_gpu_board": bool(p.get("isMultiGpuBoard", 0))}

    def new_stream(self):
        return self._cupy.cuda.Stream(non_blocking=False)

    def current_stream(self):
        return self._cupy.cuda.get_current_stream()

    def null_stream(self):
        return self._cupy.cuda.Stream.null

    def new_event(self, timing, blocking):
        return self._cupy.cuda.Event(block=blocking, disable_timing=not timing)

    def elapsed_time(self, start, end):
        return self._cupy.cuda.get_elapsed_time(start, end)

    def mem_get_info(self):
        """(free, total) bytes of the current device."""
        return self._cupy.cuda.runtime.memGetInfo()

    def is_out_of_memory(self, error):
        return isinstance(error, self._cupy.cuda.memory.OutOfMemoryError)


def _errstate(cupy):
    def errstate(**kwargs):  # GPU kernels raise no floating-point errors to silence
        return contextlib.nullcontext()
    return errstate


def _isposinf(cupy):
    return lambda x, out=None: cupy.logical_and(cupy.isinf(x), x > 0, out=out)


def _isneginf(cupy):
    return lambda x, out=None: cupy.logical_and(cupy.isinf(x), x < 0, out=out)


def _put_along_axis(cupy):
    def put_along_axis(arr, indices, values, axis):
        """``arr[...]`` at ``indices`` along ``axis`` (NumPy's put_along_axis) set to
        ``values``, through an advanced index of broadcast ranges."""
        axis = axis % arr.ndim
        index = []
        for dim, size in enumerate(arr.shape):
            if dim == axis:
                index.append(indices)
            else:
                shape = [1] * arr.ndim
                shape[dim] = size
                index.append(cupy.arange(size).reshape(shape))
        arr[tuple(index)] = values
    return put_along_axis


def _broadcast_shapes(cupy):
    return numpy.broadcast_shapes  # shape arithmetic: no arrays involved


#: NumPy names ember's ops call -> a stand-in built from CuPy, for a CuPy without them
FILLS = {"errstate": _errstate, "isposinf": _isposinf, "isneginf": _isneginf,
         "put_along_axis": _put_along_axis, "broadcast_shapes": _broadcast_shapes}


def _raising_linalg(cupy, errstate=None):
    """``cupy.linalg`` whose functions raise ``numpy.linalg.LinAlgError`` on a singular or not
    positive-definite input, as NumPy's do (ember's errors rest on that): CuPy reports
    cuSOLVER's failures only under ``cupyx.errstate(linalg="raise")``, and by default returns
    NaN or meaningless values (a silent wrong answer). The check costs a device sync, as
    PyTorch's CUDA linalg errors do."""
    if errstate is None:
        import cupyx
        errstate = cupyx.errstate
    linalg = types.ModuleType("ember.backend.cupy_linalg")

    def raising(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            with errstate(linalg="raise"):
                return fn(*args, **kwargs)
        return call
    for name in dir(cupy.linalg):
        value = getattr(cupy.linalg, name)
        if not name.startswith("_"):
            setattr(linalg, name, raising(value) if callable(value) and
                    not isinstance(value, type) else value)
    return linalg


#: CuPy names whose NumPy behaviour ember relies on and CuPy's lacks -> ember's version
OVERRIDES = {"linalg": _raising_linalg}


class CupyNamespace(types.ModuleType):
    """``cupy`` with ``FILLS`` for the names it lacks and ``OVERRIDES`` for those whose
    behaviour differs; each name is looked up once and then read as a plain attribute."""

    def __init__(self, cupy):
        super().__init__("ember.backend.cupy_namespace")
        self._cupy = cupy

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name in OVERRIDES:
            value = OVERRIDES[name](self._cupy)
            setattr(self, name, value)
            return value
        try:
            value = getattr(self._cupy, name)
        except AttributeError:
            if name not in FILLS:
                raise AttributeError(f"CuPy has no {name!r} (ember's CUDA device needs "
                                     f"it)") from None
            value = FILLS[name](self._cupy)
        setattr(self, name, value)
        return value


def load_cupy():
    """``(cupy.ndarray, cupy, "cuda", CupyRuntime)`` when CuPy imports and sees a GPU,
    else None (not installed, no driver, no device, or ``EMBER_CUPY=0``)."""
    if os.environ.get(ENABLE_VARIABLE) == "0":
        return None
    try:
        import cupy
    except Exception:  # not installed, or installed for a CUDA the machine lacks
        return None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception:  # no driver / no device: CuPy raises CUDARuntimeError
        return None
    if count < 1:
        return None
    return cupy.ndarray, CupyNamespace(cupy), "cuda", CupyRuntime(cupy)
