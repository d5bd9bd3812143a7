"""The array backend: which array module (``xp``) holds tensor data.

The rule: code above the backend never names numpy for tensor data. It asks the
backend which module owns its arrays, ``xp = get_array_module(x._data)``, or,
for arrays made from nothing (``zeros(3)``, ``randn``), the default module,
``xp = default_array_module()``, and calls that module: ``xp.exp(d)``,
``xp.zeros(shape, dtype)``. Array methods and operators (``d.sum()``,
``a * b``, ``d[idx]``) need no module. NumPy holds the CPU's data; another module
registers its array type and device with ``register_array_module`` (CuPy for "cuda":
``cupy_backend.py``, looked for the first time CUDA is asked for) and the ops run on
its arrays unchanged.

What may still name NumPy, because it is not tensor data: dtype objects and
their metadata (``backend.dtypes``, ``np.iinfo``, scalar types), shape
arithmetic (``broadcast_shapes``), user NumPy input (``tensor()``,
``from_numpy``), host-side serialization and DataLoader collation of NumPy
data, gradcheck's float64 Jacobians and printing (both on host copies made
with ``to_host``).

>>> from ember.backend import get_array_module
>>> import numpy
>>> get_array_module(numpy.zeros(2)) is numpy
True
"""
import numpy

from .dtypes import (dtype, float16, float32, float64, int8, int16, int32, int64,
                     uint8, bool_, half, float, double, short, int, long,
                     get_default_dtype, set_default_dtype, from_numpy_dtype, to_numpy_dtype,
                     result_type, promote_types, scalar_dtype)

#: NumPy's array type. Per-op fast paths test ``type(a) is numpy_ndarray`` inline and hand
#: anything else to ``as_array``; nothing else above the backend should need it.
numpy_ndarray = _ndarray = numpy.ndarray
#: NumPy's scalar base type (what its full reductions return) and the call that makes a 0-d
#: array of one: the compiled op apply turns such results into arrays without Python
numpy_scalar_type = numpy.generic
numpy_scalar_to_array = numpy.asarray

xp = numpy  # the default array module (read it through default_array_module())

#: array type -> the module whose functions take and make such arrays
_MODULES = {_ndarray: numpy}
#: array type -> the type of the device holding such arrays, for those not on the CPU
_DEVICE_TYPES = {}
#: array type -> (device type, module, runtime), in the order they were registered
_REGISTERED = {}
#: device type ("cuda") -> (array module, runtime) registered for it last
_DEVICES = {}


def get_array_module(array=None, *arrays):
    """The array module (numpy, later cupy) that owns the arrays given: the module of the
    first one that is an array of a registered type; the default module when none is
    (Python scalars, None). Runs once per op: a NumPy array first takes one type check
    (the first array is a parameter of its own: no tuple to build and loop over)."""
    if type(array) is _ndarray:
        return numpy
    return _module_of((array,) + arrays)


def _module_of(arrays):
    for a in arrays:
        t = type(a)
        if t is _ndarray:
            return numpy
        module = _MODULES.get(t)
        if module is not None:
            return module
        if isinstance(a, _ndarray):  # NumPy subclasses ember did not register (memmap, ...)
            return numpy
    return xp


def numpy_function(name):
    """NumPy's function ``name``, for an op's inline fast path: resolved once where the op is
    defined and called when its array ``type(a) is numpy_ndarray``; any other array asks
    ``get_array_module``. The seam then costs the op one type check and no extra call."""
    return getattr(numpy, name)


def default_array_module():
    """The module new arrays come from when no array is at hand (``zeros(3)``, ``randn``)."""
    return xp


def set_default_array_module(module):
    """Make ``module`` the default array module; returns the previous one."""
    global xp
    previous, xp = xp, module
    return previous


def register_array_module(array_type, module, device_type="cpu", runtime=None):
    """Arrays of ``array_type`` belong to ``module`` (``cupy.ndarray`` -> ``cupy``).

    ``device_type`` names the device holding them ("cuda": tensors of such arrays report
    ``cuda:0`` and ``device="cuda"`` makes them); ``runtime`` answers ``ember.cuda``'s
    queries for it (``device_count()``, ``current_device()``, ``synchronize()``,
    ``get_device_name(index)``, ``memory_allocated()``; see ``backend/cupy_backend.py``)."""
    _MODULES[array_type] = module
    if device_type != "cpu":
        _DEVICE_TYPES[array_type] = device_type
        _REGISTERED.pop(array_type, None)
        _REGISTERED[array_type] = (device_type, module, runtime)
        _DEVICES[device_type] = (module, runtime)


def unregister_array_module(array_type):
    """Forget ``array_type`` (NumPy's own stays); its device goes back to the module
    registered for it before (a test's stand-in gives CUDA back to CuPy), or to none."""
    if array_type is not _ndarray:
        _MODULES.pop(array_type, None)
        device_type = _DEVICE_TYPES.pop(array_type, None)
        _REGISTERED.pop(array_type, None)
        if device_type is not None:
            _DEVICES.pop(device_type, None)
            for kind, module, runtime in _REGISTERED.values():
                if kind == device_type:
                    _DEVICES[kind] = (module, runtime)


def is_array(obj):
    """Whether ``obj`` is an array of NumPy or of a registered module."""
    return type(obj) in _MODULES or isinstance(obj, _ndarray)


def device_type_of(array):
    """The type of the device holding ``array``: "cpu" for NumPy's (and unregistered
    types'), else what its module was registered with ("cuda", "meta")."""
    return _DEVICE_TYPES.get(type(array), "cpu")


def device_module(device_type):
    """The array module holding data of ``device_type`` ("cuda"), None when there is none;
    for "cuda" CuPy is looked for (once) when nothing is registered yet."""
    entry = _DEVICES.get(device_type)
    if entry is None and device_type == "cuda" and _probe_cuda():
        entry = _DEVICES.get(device_type)
    return None if entry is None else entry[0]


def device_runtime(device_type):
    """The runtime registered with ``device_type``'s module (None without one)."""
    if device_module(device_type) is None:
        return None
    return _DEVICES[device_type][1]


_cuda_probed = []  # holds True once CuPy was looked for


def _probe_cuda():
    """Register CuPy for "cuda" if it imports and sees a GPU (looked for once)."""
    if _cuda_probed:
        return False
    _cuda_probed.append(True)
    found = load_cupy()
    if found is None:
        return False
    register_array_module(*found)
    return True


def move_array(array, device_type):
    """``array``'s values on ``device_type``: ``array`` itself when it is there already,
    else a copy (to the host with ``to_host``, to a device with its module's ``asarray``).
    The caller has checked that the device exists."""
    if device_type_of(array) == device_type:
        return array
    host = to_host(array)
    if device_type == "cpu":
        return host
    return _DEVICES[device_type][0].asarray(host)


def as_array(obj):
    """``obj`` as an array: arrays of a registered module as they are; NumPy scalars (what
    NumPy's full reductions return) and unregistered NumPy subclasses through NumPy;
    anything else (lists, Python numbers) through the default module."""
    if type(obj) in _MODULES:
        return obj
    if isinstance(obj, (_ndarray, numpy.generic)):
        return numpy.asarray(obj)
    return xp.asarray(obj)


def contiguous_strides(shape):
    """Strides, in elements, of a row-major array of ``shape`` (a dim of size 0 counts as 1).

    >>> contiguous_strides((2, 3, 4))
    (12, 4, 1)
    """
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def to_host(array):
    """A NumPy array with ``array``'s values, for host-side work (printing, gradcheck's
    Jacobians): ``array`` itself when it is one, else a copy (the module's ``asnumpy``)."""
    if type(array) is _ndarray:
        return array
    to_numpy = getattr(get_array_module(array), "asnumpy", None)
    return numpy.asarray(array) if to_numpy is None else to_numpy(array)


def is_writeable(array):
    """Whether ``array`` may be written to: NumPy's read-only flag; arrays of modules without
    one (CuPy's) are always writeable.

    >>> import numpy
    >>> a = numpy.zeros(2); a.flags.writeable = False
    >>> is_writeable(a), is_writeable(numpy.zeros(2))
    (False, True)
    """
    return getattr(getattr(array, "flags", None), "writeable", True)


def strided_view(array, shape, strides, writeable=True):
    """A view of ``array``'s memory with ``shape`` and byte ``strides`` (its module's
    ``as_strided``). ``writeable=False`` makes it read-only where the module has read-only
    arrays (NumPy; CuPy has none), as the overlapping windows of convolutions and pooling are.

    >>> import numpy
    >>> strided_view(numpy.arange(4.0), (3, 2), (8, 8), writeable=False).tolist()
    [[0.0, 1.0], [1.0, 2.0], [2.0, 3.0]]
    """
    stride_tricks = get_array_module(array).lib.stride_tricks
    if array.dtype.kind == "f" and array.dtype.itemsize == 1:  # float8_e5m2: its typestr
        # '<f1' means nothing to NumPy's array interface, its bytes are viewed instead
        return strided_view(array.view(numpy.uint8), shape, strides,
                            writeable).view(array.dtype)
    if hasattr(getattr(array, "flags", None), "writeable"):
        return stride_tricks.as_strided(array, shape, strides, writeable=writeable)
    return stride_tricks.as_strided(array, shape, strides)


_RESHAPE_TAKES_COPY = numpy.lib.NumpyVersion(numpy.__version__) >= "2.1.0"


def reshaped_view(array, shape):
    """A view of ``array`` with ``shape``, or None when that needs a copy (the layout does
    not allow it). NumPy 2.1+ through ``reshape(copy=False)`` (NumPy 2.5 deprecates setting
    ``shape``); other modules (CuPy) and older NumPy by setting ``shape`` on a view.

    >>> import numpy
    >>> reshaped_view(numpy.zeros((2, 3)), (3, 2)).shape, reshaped_view(numpy.zeros((2, 3)).T, (6,))
    ((3, 2), None)
    """
    if type(array) is _ndarray and array.flags.c_contiguous:
        return array.reshape(shape)  # always a view of a C-contiguous array
    if _RESHAPE_TAKES_COPY and type(array) is _ndarray:
        try:
            return numpy.reshape(array, shape, copy=False)
        except ValueError:
            return None
    out = array.view()
    try:
        out.shape = shape
    except AttributeError:
        return None
    return out


#: The broadcast of shapes (tuples, no arrays); ValueError when they do not broadcast. Host
#: shape arithmetic, NumPy's own function: ops call it per call (no wrapper to pass through).
broadcast_shapes = numpy.broadcast_shapes


from .cupy_backend import load_cupy  # noqa: E402  (imports CuPy only when called)

# Meta arrays (``device='meta'``: a shape and a dtype, no data) are a module of their own.
from .meta import MetaArray, meta_module  # noqa: E402

register_array_module(MetaArray, meta_module, "meta")
