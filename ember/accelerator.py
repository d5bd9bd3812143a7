"""``ember.accelerator``: the device-agnostic accelerator queries of PyTorch 2.x. The only
accelerator ember knows is CUDA (CuPy, see ``ember.backend.cupy_backend``); without it the
answers are those of a machine with none.

>>> import ember
>>> acc = ember.accelerator.current_accelerator()
>>> device = acc if acc is not None else ember.device("cpu")
>>> ember.accelerator.is_available() == (acc is not None)
True
"""
from .backend import device_module, device_runtime
from .device import _NO_ACCELERATOR, device


def _runtime():
    runtime = device_runtime("cuda")
    if runtime is None:
        raise RuntimeError(_NO_ACCELERATOR)
    return runtime


def is_available():
    """Whether an accelerator (CUDA) can be used."""
    return device_module("cuda") is not None


def current_accelerator(check_available=False):
    """The accelerator's device (``device(type='cuda')``), or None when there is none."""
    return device("cuda") if is_available() else None


def device_count():
    runtime = device_runtime("cuda")
    return 0 if runtime is None else runtime.device_count()


def current_device_index():
    return _runtime().current_device()


def set_device_index(index):
    _runtime().set_device(index.index if isinstance(index, device) else int(index))


def synchronize(device=None):
    runtime = _runtime()
    runtime.synchronize(None if device is None else getattr(device, "index", device))


def _none_available(*args, **kwargs):
    raise RuntimeError(_NO_ACCELERATOR)


current_device_idx = current_device_index
set_device_idx = set_device_index
current_stream = set_stream = _none_available
