"""The CUDA runtime and device arguments, for ``ember.cuda`` and its streams."""
from ..backend import device_runtime
from ..device import _NO_CUDA, device as _device


def _not_compiled(*args, **kwargs):
    raise AssertionError(_NO_CUDA)


def _runtime():
    """The CUDA runtime (CuPy's), or PyTorch's CPU-only AssertionError."""
    runtime = device_runtime("cuda")
    if runtime is None:
        _not_compiled()
    return runtime


def _index(device=None):
    """A device argument (None: the current device; an int, "cuda:1", a device) as an
    index."""
    if device is None:
        return _runtime().current_device()
    if isinstance(device, int) and not isinstance(device, bool):
        return device
    device = _device(device)
    if device.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {device}")
    return _runtime().current_device() if device.index is None else device.index
