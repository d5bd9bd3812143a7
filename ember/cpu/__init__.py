"""``ember.cpu``: the CPU's device module, as ``torch.cpu`` (scripts written for several
devices call ``getattr(torch, device_type).synchronize()`` and the like).

>>> import ember
>>> ember.cpu.is_available(), ember.cpu.device_count(), ember.cpu.current_device()
(True, 1, 'cpu')
"""
from . import amp  # noqa: F401  (ember.cpu.amp.autocast, as scripts import it)


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """Nothing to wait for: CPU ops finish before they return."""


def set_device(device):
    """The CPU is one device: nothing to select."""


__all__ = ["amp", "is_available", "device_count", "current_device", "synchronize",
           "set_device"]
