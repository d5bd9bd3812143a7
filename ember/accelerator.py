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


# ---- torch.Stream / torch.Event: the device-agnostic classes, on the CPU ------------------
_NO_EVENTS = "{} backend doesn't support events."


def _host_device(d):
    """The CPU or meta device a Stream or Event is made for (the default: the accelerator's,
    else the CPU). ember's CUDA streams and events are ember.cuda's own classes."""
    if d is None:
        d = current_accelerator() or device("cpu")
    elif isinstance(d, int):
        if not is_available():
            raise RuntimeError(_NO_ACCELERATOR)
        d = device("cuda", d)
    d = device(d)
    if d.type not in ("cpu", "meta"):
        if d.type == "cuda" and is_available():
            raise NotImplementedError("ember's torch.Stream and torch.Event are the CPU's; use "
                                      "ember.cuda.Stream and ember.cuda.Event for CUDA")
        raise RuntimeError(f"PyTorch is not linked with support for {d.type} devices")
    return device(d.type)


class Stream:
    """``torch.Stream`` on the CPU: work there runs in order as it is issued, so a stream
    is always done (``query()`` is True) and has no events to record.

    >>> import ember
    >>> s = ember.Stream()
    >>> s, s.query()
    (torch.Stream device_type=cpu, device_index=-1, stream_id=0, True)
    """

    def __init__(self, device=None, *, priority=0):
        self.device = _host_device(device)
        self.stream_id = 0
        self.device_index = -1
        self.device_type = 0 if self.device.type == "cpu" else 14  # c10::DeviceType

    def query(self):
        return True

    def synchronize(self):
        return None

    def wait_event(self, event):
        return None

    def wait_stream(self, stream):
        raise RuntimeError(_NO_EVENTS.format(self.device.type))

    def record_event(self, event=None):
        raise RuntimeError(_NO_EVENTS.format(self.device.type))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def __eq__(self, other):
        return isinstance(other, Stream) and (self.device, self.stream_id) == (
            other.device, other.stream_id)

    def __hash__(self):
        return hash((self.device.type, self.device_index, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device.type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event:
    """``torch.Event`` on the CPU: always complete; recording one is refused, as PyTorch's
    CPU backend refuses it.

    >>> import ember
    >>> ember.Event(enable_timing=True)
    torch.Event device_type=cpu, device_index=-1, event_flag=1, event_id=0
    """

    def __init__(self, device=None, *, enable_timing=False, blocking=False,
                 interprocess=False):
        self.device = _host_device(device)
        self.event_id = 0
        self._timing = bool(enable_timing)

    def query(self):
        return True

    def synchronize(self):
        return None

    def wait(self, stream=None):
        return None

    def record(self, stream=None):
        raise RuntimeError(_NO_EVENTS.format(self.device.type))

    def elapsed_time(self, end_event):
        if not (self._timing and getattr(end_event, "_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise ValueError("Both events must be recorded before calculating elapsed time.")

    def ipc_handle(self):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    def __repr__(self):
        return (f"torch.Event device_type={self.device.type}, device_index=-1, "
                f"event_flag={int(self._timing)}, event_id={self.event_id}")


Stream.__module__ = Event.__module__ = "ember"
