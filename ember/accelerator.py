"""``ember.accelerator``: the device-agnostic accelerator queries of PyTorch 2.x, answered
for a machine with none (a GPU backend plugs in here).

>>> import ember
>>> ember.accelerator.is_available(), ember.accelerator.current_accelerator()
(False, None)
>>> acc = ember.accelerator.current_accelerator()
>>> device = acc if acc is not None else ember.device("cpu")
"""
from .device import _NO_ACCELERATOR


def is_available():
    """Whether an accelerator (CUDA, MPS, ...) can be used: no."""
    return False


def current_accelerator(check_available=False):
    """The accelerator's device type, or None when there is none."""
    return None


def device_count():
    return 0


def _none_available(*args, **kwargs):
    raise RuntimeError(_NO_ACCELERATOR)


current_device_index = current_device_idx = set_device_index = set_device_idx = \
    _none_available
current_stream = set_stream = synchronize = _none_available
