"""CuPy as the array module of the "cuda" device.

``load_cupy()`` is called (once, by ``ember.backend``) the first time something asks
for CUDA: ``device="cuda"``, ``.cuda()``, ``ember.cuda.is_available()``. When CuPy
imports and sees at least one GPU it hands back what the backend registers:
``cupy.ndarray`` arrays belong to the module ``cupy`` on device "cuda", and
``CupyRuntime`` answers ``ember.cuda``'s queries. Otherwise it returns None and ember
stays a CPU-only build ("Torch not compiled with CUDA enabled").

CuPy is imported nowhere else, so a machine without it pays nothing.

>>> from ember.backend.cupy_backend import load_cupy
>>> found = load_cupy()
>>> found is None or found[2] == "cuda"
True
"""
import os

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
    return cupy.ndarray, cupy, "cuda", CupyRuntime(cupy)
