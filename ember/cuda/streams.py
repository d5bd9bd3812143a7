"""CUDA streams and events: PyTorch's classes over the CUDA runtime's (CuPy's).

ember's CUDA ops are CuPy calls, which queue on CuPy's current stream: ``with
ember.cuda.stream(s):`` makes ``s`` current for them, ``Event``s record points on a stream and
time the work between two of them. Without CUDA the answers are a CPU-only PyTorch's.

>>> import ember
>>> if ember.cuda.is_available():
...     start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
...     start.record(); x = ember.ones(1000, device="cuda").sum(); end.record()
...     end.synchronize(); ms = start.elapsed_time(end)
"""
from ..backend import device_runtime
from ..device import _NO_CUDA, device as _device
from ._runtime import _index


def _runtime_or(error):
    runtime = device_runtime("cuda")
    if runtime is None:
        raise error
    return runtime


def _on_current_device(device):
    """Refuse a device other than the current one (ember's CUDA tensors live there)."""
    if device is not None and _index(device) != device_runtime("cuda").current_device():
        raise NotImplementedError(f"ember's CUDA streams live on the current device, not {device}")


class Stream:
    """A CUDA stream (a new one; ``current_stream()``/``default_stream()`` give the existing
    ones), on the current device. ``priority`` other than 0, and another device, are not
    supported (NotImplementedError)."""

    def __init__(self, device=None, priority=0):
        runtime = _runtime_or(RuntimeError("torch.cuda.Stream requires CUDA support"))
        _on_current_device(device)
        if priority != 0:
            raise NotImplementedError("ember.cuda.Stream(priority=...) is not supported")
        self._native = runtime.new_stream()

    @classmethod
    def _of(cls, native):
        """The Stream for an existing runtime stream."""
        stream = cls.__new__(cls)
        stream._native = native
        return stream

    @property
    def cuda_stream(self):
        """The ``cudaStream_t`` as an int (0: the legacy default stream)."""
        return self._native.ptr

    @property
    def device(self):
        return _device("cuda", device_runtime("cuda").current_device())

    def query(self):
        """Whether all the work queued on this stream has finished."""
        return bool(self._native.done)

    def synchronize(self):
        """Wait until all the work queued on this stream has finished."""
        self._native.synchronize()

    def wait_event(self, event):
        """Make later work on this stream wait for ``event``."""
        self._native.wait_event(event._native)

    def wait_stream(self, stream):
        """Make later work on this stream wait for the work queued on ``stream`` so far."""
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        """Record ``event`` (a new one when None) on this stream; returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream

    def __hash__(self):
        return hash(self.cuda_stream)

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """A CUDA event: ``record`` it on a stream, ``wait``/``synchronize`` for it, and
    ``elapsed_time`` (milliseconds) between two events made with ``enable_timing=True``.
    ``interprocess=True`` is not supported (NotImplementedError)."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        runtime = _runtime_or(RuntimeError("Tried to instantiate dummy base class Event"))
        if interprocess:
            raise NotImplementedError("ember.cuda.Event(interprocess=True) is not supported")
        self._native = runtime.new_event(bool(enable_timing), bool(blocking))
        self._timing = bool(enable_timing)
        self._recorded = False

    def record(self, stream=None):
        """Record this event on ``stream`` (the current one when None)."""
        self._native.record((current_stream() if stream is None else stream)._native)
        self._recorded = True

    def wait(self, stream=None):
        """Make later work on ``stream`` (the current one) wait for this event."""
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self):
        """Whether the work before this event's record has finished."""
        return bool(self._native.done)

    def synchronize(self):
        """Wait until the work before this event's record has finished."""
        self._native.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds between this event's record and ``end_event``'s."""
        if not (self._timing and end_event._timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if not (self._recorded and end_event._recorded):
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        return float(device_runtime("cuda").elapsed_time(self._native, end_event._native))

    def __repr__(self):
        return f"<torch.cuda.Event {self._native.ptr:#x}>"


def current_stream(device=None):
    """The stream ember's CUDA ops queue on now."""
    runtime = _runtime_or(AssertionError(_NO_CUDA))
    _on_current_device(device)
    return Stream._of(runtime.current_stream())


def default_stream(device=None):
    """The legacy default stream (``cuda_stream`` 0)."""
    runtime = _runtime_or(AssertionError(_NO_CUDA))
    _on_current_device(device)
    return Stream._of(runtime.null_stream())


class StreamContext:
    """``with ember.cuda.stream(s):`` -- ``s`` is the current stream inside (None: no-op)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream._native.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream._native.__exit__(*exc)
        return False


def stream(stream):
    """A context manager making ``stream`` the current stream (None: no-op)."""
    return StreamContext(stream)


def set_stream(stream):
    """Make ``stream`` the current stream (None: no-op)."""
    if stream is not None:
        stream._native.use()
