"""``ember.cuda``: the queries scripts make before choosing a device, and the GPU's.

With a CUDA array module registered (CuPy on a machine with a GPU, see
``ember/backend/cupy_backend.py``) the answers come from its runtime. Without one they
are a CPU-only PyTorch build's: nothing is available, seeding and cache calls are
harmless no-ops, and anything that needs a GPU raises
``AssertionError: Torch not compiled with CUDA enabled``.

>>> import ember
>>> device = "cuda" if ember.cuda.is_available() else "cpu"
>>> ember.zeros(2, device=device).device.type == device
True
"""
from ..backend import device_module, device_runtime
from ..device import OutOfMemoryError  # noqa: F401  (torch.cuda.OutOfMemoryError)
from ._runtime import _not_compiled, _runtime, _index
from . import amp  # noqa: F401  (ember.cuda.amp.GradScaler / autocast, as scripts import them)


def is_available():
    """Whether a CUDA device can be used: CuPy is installed and sees a GPU."""
    return device_module("cuda") is not None


def device_count():
    """Number of CUDA devices (0 without CUDA)."""
    runtime = device_runtime("cuda")
    return 0 if runtime is None else runtime.device_count()


def is_initialized():
    return is_available()


def init():
    _runtime()


def current_device():
    """Index of the current CUDA device."""
    return _runtime().current_device()


def set_device(device):
    """Make ``device`` current (ember's tensors live on the current device)."""
    _runtime().set_device(_index(device))


def synchronize(device=None):
    """Wait for the kernels queued on ``device`` (the current one) to finish."""
    _runtime().synchronize(_index(device))


def get_device_name(device=None):
    """The GPU's name, e.g. 'NVIDIA H100 80GB HBM3'."""
    return _runtime().get_device_name(_index(device))


def get_device_capability(device=None):
    """``(major, minor)`` compute capability."""
    return _runtime().get_device_capability(_index(device))


def is_bf16_supported(including_emulation=True):
    return False  # ember's bfloat16 lives in ml_dtypes, which CuPy cannot hold


# Seeding the GPU generators is allowed without a GPU (it is deferred in PyTorch): scripts
# call these unconditionally next to manual_seed. ember draws random numbers on the host
# with its own Generator (ember.manual_seed), so there is no GPU generator to seed.
def manual_seed(seed):
    """No-op: random numbers come from ember's host Generator (ember.manual_seed)."""


def manual_seed_all(seed):
    """No-op (see manual_seed)."""


def seed():
    """No-op (see manual_seed)."""


def seed_all():
    """No-op (see manual_seed)."""


def empty_cache():
    """Release the memory pool's unused blocks (no-op without CUDA)."""
    runtime = device_runtime("cuda")
    if runtime is not None:
        runtime.empty_cache()


def memory_allocated(device=None):
    """Bytes held by tensors (CuPy's memory pool: used bytes); 0 without CUDA."""
    runtime = device_runtime("cuda")
    return 0 if runtime is None else runtime.memory_allocated()


def max_memory_allocated(device=None):
    return memory_allocated(device)  # CuPy's pool keeps no peak: the current value


def memory_reserved(device=None):
    """Bytes the memory pool holds (used and cached); 0 without CUDA."""
    runtime = device_runtime("cuda")
    return 0 if runtime is None else runtime.memory_reserved()


def max_memory_reserved(device=None):
    return memory_reserved(device)


def mem_get_info(device=None):
    """``(free, total)`` bytes of the current GPU's memory (PyTorch's CPU-only
    AssertionError without one).

    >>> import ember
    >>> free, total = ember.cuda.mem_get_info() if ember.cuda.is_available() else (0, 1)
    >>> 0 <= free <= total
    True
    """
    return _runtime().mem_get_info()


def _not_there(name):
    def call(*args, **kwargs):
        _runtime()
        raise NotImplementedError(f"ember.cuda.{name} is not supported")
    call.__name__ = name
    return call


class _CudaDeviceProperties:
    """What ``get_device_properties`` reports: ``name``, ``major``, ``minor``,
    ``total_memory`` (bytes), ``multi_processor_count``, ``L2_cache_size`` (bytes),
    ``is_integrated``, ``is_multi_gpu_board``."""

    def __init__(self, properties):
        self.__dict__.update(properties)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory >> 20}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"L2_cache_size={self.L2_cache_size >> 20}MB)")


def get_device_properties(device=None):
    """The GPU's properties (name, compute capability, memory, multiprocessors, L2 cache).

    >>> import ember
    >>> if ember.cuda.is_available():
    ...     gib = ember.cuda.get_device_properties(0).total_memory / 2 ** 30
    """
    return _CudaDeviceProperties(_runtime().get_device_properties(_index(device)))


from .streams import (Stream, Event, StreamContext, current_stream, default_stream,  # noqa: E402
                      stream, set_stream)
initial_seed = _not_there("initial_seed")
get_rng_state = _not_there("get_rng_state")
set_rng_state = _not_there("set_rng_state")
get_rng_state_all = _not_there("get_rng_state_all")
set_rng_state_all = _not_there("set_rng_state_all")


def reset_peak_memory_stats(device=None):
    _runtime()


class device:
    """Context manager selecting a CUDA device: constructing it is allowed, entering it
    switches the current device (raising without CUDA)."""

    def __init__(self, device):
        self.idx = device
        self._previous = None

    def __enter__(self):
        runtime = _runtime()
        self._previous = runtime.current_device()
        runtime.set_device(_index(self.idx))

    def __exit__(self, *exc):
        if self._previous is not None:
            _runtime().set_device(self._previous)
        return False
