"""DLPack import: an array of the right module sharing memory with another library's.

``array_from_dlpack(obj)`` takes an object with ``__dlpack__``/``__dlpack_device__``
(NumPy arrays, PyTorch tensors, CuPy arrays) or a DLPack capsule (what
``torch.utils.dlpack.to_dlpack`` returns). CPU data becomes a NumPy array, CUDA data an
array of the module registered for "cuda" (CuPy's ``from_dlpack``).

NumPy reads the protocol objects itself. Capsules it would only read as read-only
arrays (the unversioned format has no read-only flag, so NumPy assumes one), while
PyTorch shares them writable: the CPU capsule is therefore read here, with ctypes, as
the consumer the protocol describes: the capsule is renamed "used_dltensor" (it may
be consumed once) and the producer's deleter runs when the last array viewing the
memory is gone.

>>> import numpy
>>> from ember.backend.dlpack import array_from_dlpack
>>> a = numpy.arange(3.0); b = array_from_dlpack(a); b[0] = 7.0; a[0]
np.float64(7.0)
"""
import ctypes
import enum

import numpy

from . import device_module

INVALID_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can "
                   "be consumed only once, so you might have already constructed a tensor "
                   "from it once.")


class DLDeviceType(enum.IntEnum):
    """DLPack's device codes (``__dlpack_device__()[0]``)."""
    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLOpenCL = 4
    kDLVulkan = 7
    kDLMetal = 8
    kDLVPI = 9
    kDLROCM = 10
    kDLROCMHost = 11
    kDLExtDev = 12
    kDLCUDAManaged = 13
    kDLOneAPI = 14
    kDLWebGPU = 15
    kDLHexagon = 16
    kDLMAIA = 17


_CUDA_KINDS = (DLDeviceType.kDLCUDA, DLDeviceType.kDLCUDAManaged)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", _DELETER)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER),
                ("flags", ctypes.c_uint64), ("dl_tensor", _DLTensor)]


_READ_ONLY_FLAG = 1
_CAPSULE_NAMES = {b"dltensor": _DLManagedTensor, b"dltensor_versioned": _DLManagedTensorVersioned}
# a capsule keeps a pointer to its name: these must live as long as the process
_USED_NAMES = {b"dltensor": b"used_dltensor", b"dltensor_versioned": b"used_dltensor_versioned"}

_api = ctypes.pythonapi
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

# DLPack type code -> NumPy kind letter (bool is code 6; bfloat16, code 4, NumPy lacks)
_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}


def array_from_dlpack(obj, copy=None):
    """An array sharing ``obj``'s memory (a copy when ``copy`` is True)."""
    if hasattr(obj, "__dlpack__"):
        kind = obj.__dlpack_device__()[0]
        if kind in _CUDA_KINDS:
            array = _cuda_module().from_dlpack(obj)
            return array.copy() if copy else array
        if kind != DLDeviceType.kDLCPU:
            raise BufferError(f"ember cannot import DLPack data of device type {kind}")
        return numpy.from_dlpack(obj, copy=copy)
    array = _from_capsule(obj)
    return array.copy() if copy else array


def _cuda_module():
    module = device_module("cuda")
    if module is None:
        raise AssertionError("Torch not compiled with CUDA enabled")
    return module


def _from_capsule(capsule):
    for name, layout in _CAPSULE_NAMES.items():
        if _is_capsule(capsule, name):
            break
    else:
        raise RuntimeError(INVALID_CAPSULE)
    managed = layout.from_address(_api.PyCapsule_GetPointer(capsule, name))
    tensor = managed.dl_tensor
    if tensor.device.device_type in _CUDA_KINDS:
        return _cuda_module().from_dlpack(capsule)  # CuPy reads (and consumes) it
    if tensor.device.device_type != DLDeviceType.kDLCPU:
        raise BufferError(f"ember cannot import DLPack data of device type "
                          f"{tensor.device.device_type}")
    dtype = _numpy_dtype(tensor.dtype)
    shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
    strides = None if not tensor.strides else \
        tuple(tensor.strides[i] * dtype.itemsize for i in range(tensor.ndim))
    owner = _Owner(ctypes.addressof(managed), managed.deleter)
    _api.PyCapsule_SetName(capsule, _USED_NAMES[name])  # consumed: the deleter is ours now
    low, high = _extent(shape, strides, dtype.itemsize)
    start = (tensor.data or 0) + tensor.byte_offset + low
    # the array's base chain (memoryview -> ctypes buffer) keeps the owner alive
    buffer = (ctypes.c_char * (high - low)).from_address(start) if high > low and start \
        else ctypes.create_string_buffer(1)
    buffer.owner = owner
    array = numpy.ndarray(shape, dtype, buffer=memoryview(buffer), offset=-low,
                          strides=strides)
    if layout is _DLManagedTensorVersioned and managed.flags & _READ_ONLY_FLAG:
        array.flags.writeable = False
    return array


def _is_capsule(obj, name):
    try:
        return bool(_api.PyCapsule_IsValid(obj, name))
    except Exception:
        return False


def _numpy_dtype(dl_dtype):
    kind = _KINDS.get(dl_dtype.code)
    if kind is None or dl_dtype.lanes != 1:
        raise RuntimeError("Unsupported dtype in DLTensor.")
    if kind == "b":
        return numpy.dtype(numpy.bool_)
    return numpy.dtype(f"{kind}{dl_dtype.bits // 8}")


def _extent(shape, strides, itemsize):
    """Byte offsets, from the first element, of the lowest address and past the highest
    one the array reaches (0, 0 when it is empty)."""
    if 0 in shape:
        return 0, 0
    if strides is None:
        return 0, int(numpy.prod(shape, dtype=numpy.int64)) * itemsize
    steps = [(n - 1) * s for n, s in zip(shape, strides)]
    return sum(s for s in steps if s < 0), sum(s for s in steps if s > 0) + itemsize


class _Owner:
    """Holds a consumed DLPack tensor: calls its producer's deleter when collected."""

    def __init__(self, address, deleter):
        self.address, self.deleter = address, deleter

    def __del__(self):
        if self.deleter:
            self.deleter(self.address)

