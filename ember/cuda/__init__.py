"""``ember.cuda`` on a CPU-only build: the queries scripts make before choosing a device.

Answers as a CPU-only PyTorch build does: nothing is available, seeding and cache
calls are harmless no-ops, and anything that needs a GPU raises
``AssertionError: Torch not compiled with CUDA enabled``. A GPU backend replaces
this module's answers.

>>> import ember
>>> ember.cuda.is_available(), ember.cuda.device_count()
(False, 0)
>>> device = "cuda" if ember.cuda.is_available() else "cpu"
"""
from ..device import _NO_CUDA
from . import amp  # noqa: F401  (ember.cuda.amp.GradScaler / autocast, as scripts import them)


def _not_compiled(*args, **kwargs):
    raise AssertionError(_NO_CUDA)


def is_available():
    """Whether a CUDA device can be used: never, on this build."""
    return False


def device_count():
    """Number of CUDA devices: 0."""
    return 0


def is_initialized():
    return False


def init():
    _not_compiled()


def is_bf16_supported(including_emulation=True):
    return False


# Seeding the GPU generators is allowed without a GPU (it is deferred in PyTorch, and never
# runs here): scripts call these unconditionally next to manual_seed.
def manual_seed(seed):
    """No-op without CUDA (like PyTorch's deferred seeding)."""


def manual_seed_all(seed):
    """No-op without CUDA."""


def seed():
    """No-op without CUDA."""


def seed_all():
    """No-op without CUDA."""


def empty_cache():
    """No-op: there is no GPU cache to release."""


def memory_allocated(device=None):
    return 0


def max_memory_allocated(device=None):
    return 0


def memory_reserved(device=None):
    return 0


def max_memory_reserved(device=None):
    return 0


synchronize = current_device = get_device_name = get_device_properties = _not_compiled
get_device_capability = set_device = current_stream = initial_seed = _not_compiled
get_rng_state = set_rng_state = get_rng_state_all = set_rng_state_all = _not_compiled
reset_peak_memory_stats = _not_compiled


class device:
    """Context manager selecting a CUDA device: constructing it is allowed, entering it
    (which would switch devices) raises like every other GPU call."""

    def __init__(self, device):
        self.idx = device

    def __enter__(self):
        _not_compiled()

    def __exit__(self, *exc):
        return False
