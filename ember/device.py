"""``ember.device``: where a tensor lives, and the default device of creation functions.

The CPU holds tensors, and "cuda" does when an array module is registered for it
(CuPy on a machine with a GPU: ``backend/cupy_backend.py``). Without one, asking for
CUDA fails the way a CPU-only PyTorch build does (``AssertionError: Torch not
compiled with CUDA enabled``), other accelerators with a RuntimeError that names
them.

>>> import ember
>>> ember.device("cpu")
device(type='cpu')
>>> ember.get_default_device()
device(type='cpu')
"""
import builtins
import re

from .backend import device_module, device_runtime, device_type_of

# The device types PyTorch's parser knows, in its order (its error message lists them).
_KNOWN_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_NO_ACCELERATOR = "Cannot access accelerator device when none is available."
_NO_CUDA = "Torch not compiled with CUDA enabled"


class OutOfMemoryError(RuntimeError):
    """A device ran out of memory (``torch.OutOfMemoryError``; also ``ember.cuda``'s)."""


def _format_size(nbytes):
    """Bytes as PyTorch's CUDA allocator writes them: "512 bytes", "1.50 KiB", "2.00 GiB"."""
    for limit, unit, scale in ((1 << 10, "bytes", None), (1 << 20, "KiB", 1 << 10),
                               (1 << 30, "MiB", 1 << 20)):
        if nbytes <= limit:
            return f"{nbytes} bytes" if scale is None else f"{nbytes / scale:.2f} {unit}"
    return f"{nbytes / (1 << 30):.2f} GiB"


def device_out_of_memory(error, nbytes=None):
    """PyTorch's ``OutOfMemoryError`` for ``error`` when it is a device's allocation failure
    (its runtime's ``is_out_of_memory``: CuPy's OutOfMemoryError), else None. ``nbytes``: the
    size asked for, when the caller knows it (else read from CuPy's message).

    >>> device_out_of_memory(MemoryError("host")) is None
    True
    """
    runtime = device_runtime("cuda")
    if runtime is None or not runtime.is_out_of_memory(error):
        return None
    if nbytes is None:
        found = re.search(r"allocating ([\d,]+) bytes", str(error))
        nbytes = int(found.group(1).replace(",", "")) if found else None
    free, total = runtime.mem_get_info()
    tried = "" if nbytes is None else f"Tried to allocate {_format_size(nbytes)}. "
    return OutOfMemoryError(f"CUDA out of memory. {tried}GPU {runtime.current_device()} has a "
                            f"total capacity of {_format_size(total)} of which "
                            f"{_format_size(free)} is free.")


class device:
    """A device name and optional index: ``device("cpu")``, ``device("cuda:1")``,
    ``device("cuda", 1)``. A bare integer means "accelerator number i", which a
    CPU-only build does not have."""
    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        elif isinstance(type, int) and not isinstance(type, bool):
            raise RuntimeError(_NO_ACCELERATOR)
        elif not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got "
                            f"({builtins.type(type).__name__}), but expected one of:\n"
                            " * (torch.device device)\n * (str type, int index = -1)")
        if ":" in type:
            type, idx = type.split(":", 1)
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}:{idx}'")
            index = int(idx)
        if type not in _KNOWN_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_KNOWN_TYPES)} device type at "
                               f"start of device string: {type}")
        self.type, self.index = type, index

    def __repr__(self):
        return f"device(type='{self.type}')" if self.index is None else \
            f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return device, (self.type, self.index)

    def __enter__(self):
        """``with ember.device("meta"):`` makes this the default device inside the block."""
        global _default_device
        _outer_defaults.append(_default_device)
        _default_device = self
        return self

    def __exit__(self, *exc):
        global _default_device
        _default_device = _outer_defaults.pop()


cpu = device("cpu")
meta = device("meta")  # tensors with a shape and a dtype but no data (ember.backend.meta)
_default_device = None  # set_default_device's choice; None means the CPU
_outer_defaults = []  # the defaults that enclosing ``with device(...)`` blocks replaced


def set_default_device(d):
    """The device creation functions use when given none (``None`` resets to the CPU).

    Like PyTorch, setting an unavailable device succeeds; creating a tensor then fails.

    >>> import ember
    >>> ember.set_default_device("cpu"); ember.zeros(1).device
    device(type='cpu')
    >>> ember.set_default_device(None)
    """
    global _default_device
    _default_device = None if d is None else device(d)


def get_default_device():
    """The device a creation function uses when given none.

    >>> import ember
    >>> ember.get_default_device()
    device(type='cpu')
    """
    return cpu if _default_device is None else _default_device


def check_device(d):
    """The device a tensor may be put on: the CPU, 'meta', or 'cuda' when a module holds
    its data (``cuda:0``, the current device); anything else raises as a CPU-only PyTorch
    build does. ``None`` means the default device; an int, that CUDA device."""
    if d is None:
        if _default_device is None:
            return cpu
        d = _default_device
    elif isinstance(d, int) and not isinstance(d, bool):
        if device_module("cuda") is None:
            raise RuntimeError(_NO_ACCELERATOR)
        d = device("cuda", d)
    d = device(d) if not isinstance(d, device) else d
    if d.type == "cpu":
        return cpu
    if d.type == "meta":
        return meta
    if d.type == "cuda":
        return _cuda_device(d.index)
    raise RuntimeError(f"ember has no '{d.type}' backend (only 'cpu'); tensors cannot be "
                       f"placed on {d}")


_cuda_devices = {}  # index -> device('cuda', index), made once


def _cuda_device(index):
    """``cuda:index`` (the current device when None) once CUDA's index is checked."""
    if device_module("cuda") is None:
        raise AssertionError(_NO_CUDA)
    runtime = device_runtime("cuda")
    current = 0 if runtime is None else runtime.current_device()
    index = current if index is None else index
    if index != current:
        count = 1 if runtime is None else runtime.device_count()
        if not 0 <= index < count:
            raise RuntimeError("CUDA error: invalid device ordinal")
        raise NotImplementedError(f"ember places CUDA tensors on the current device only "
                                  f"(cuda:{current}), not on cuda:{index}")
    found = _cuda_devices.get(index)
    if found is None:
        found = _cuda_devices[index] = device("cuda", index)
    return found


def device_of(array):
    """The device of a tensor holding ``array`` (NumPy's: the CPU)."""
    kind = device_type_of(array)
    if kind == "cpu":
        return cpu
    if kind == "meta":
        return meta
    index = getattr(getattr(array, "device", None), "id", 0)  # CuPy's Device; fakes: 0
    found = _cuda_devices.get(index)
    if found is None:
        found = _cuda_devices[index] = device(kind, index)
    return found


def module_of(d):
    """The array module holding data of device ``d`` (checked by ``check_device``);
    None for the CPU, whose data goes to the default module."""
    return None if d.type == "cpu" else device_module(d.type)
