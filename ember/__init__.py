"""ember: a PyTorch-compatible deep-learning framework on NumPy, built to be extended.

>>> import ember as torch
>>> x = torch.randn(3, requires_grad=True)
>>> (x * 2).sum().backward()
>>> x.grad
tensor([2., 2., 2.])
"""
from .backend import process as _process
_process.apply()  # everything importing ember changes in the process: see backend/process.py

from .backend.dtypes import (dtype, float16, float32, float64, int8, int16, int32, int64,
                             uint8, uint16, uint32, uint64, half, float, double, short,
                             int, long, bfloat16,
                             complex64, complex128, cfloat, cdouble,
                             get_default_dtype, set_default_dtype, finfo, iinfo,
                             memory_format, preserve_format, contiguous_format,
                             channels_last, channels_last_3d)
from .backend.dtypes import bool_ as bool  # noqa: A001  (PyTorch's spelling: ember.bool)
from .backend.dtypes import (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,  # noqa: F401
                             float8_e5m2fnuz, float8_e8m0fnu)
from ._tensor import Tensor, Size
from ._tensor_repr import set_printoptions
from .device import device, set_default_device, get_default_device, OutOfMemoryError
from .backend.parallel import get_num_threads, set_num_threads  # intra-op threads
from . import autograd
from .autograd.anomaly import is_anomaly_enabled, is_anomaly_check_nan_enabled, set_detect_anomaly
from .autograd.anomaly import set_anomaly_enabled  # noqa: F401
from .autograd.grad_mode import (no_grad, enable_grad, set_grad_enabled, inference_mode,
                                 is_grad_enabled, is_inference_mode_enabled)
from ._creation import (tensor, as_tensor, from_numpy, zeros, ones, empty, full, zeros_like,
                        ones_like, empty_like, full_like, arange, linspace, eye, rand, randn,
                        rand_like, randn_like, randint, randint_like, randperm, from_dlpack)
from ._creation import range_ as range  # noqa: A001  (PyTorch's deprecated inclusive range)
from ._creation import STRIDED as strided
from ._layouts import layout, _mkldnn  # noqa: F401  (ember.layout: the layouts' type)
from .random import (Generator, manual_seed, seed, initial_seed, get_rng_state,
                     set_rng_state, default_generator)
from ._functions import *  # noqa: F401,F403
from ._sparse import sparse_coo_tensor, smm, spmm, sparse_coo  # noqa: F401
from ._quantized import *  # noqa: F401,F403  (quantized dtypes, qschemes, fake quantization)
from ._sparse import (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc,  # noqa: F401
                      sparse_compressed_tensor, sparse_csr_tensor, sparse_csc_tensor,
                      sparse_bsr_tensor, sparse_bsc_tensor)
from ._registry import factory_with_out as _factory_with_out
# out= of the factories (the _creation functions take no out: their dtype comes from it)
zeros, ones, empty, full, arange, range, linspace, eye, rand, randn, randint, randperm = (
    _factory_with_out(_fn, _fn.__name__) for _fn in (zeros, ones, empty, full, arange, range,
                                                      linspace, eye, rand, randn, randint,
                                                      randperm))
from math import inf, nan, pi, e  # noqa: E402,F401  (ember.inf, ember.pi, ...)
from . import _tensor_methods
from . import return_types
from ._checks import (_check, _check_with, _check_value, _check_type,  # noqa: F401
                      _check_index, _check_not_implemented)  # (torch._check & co.)
from . import linalg  # noqa: F401  (ember.linalg)

FloatTensor = _tensor_methods.LEGACY_TYPES["FloatTensor"]
DoubleTensor = _tensor_methods.LEGACY_TYPES["DoubleTensor"]
HalfTensor = _tensor_methods.LEGACY_TYPES["HalfTensor"]
LongTensor = _tensor_methods.LEGACY_TYPES["LongTensor"]
IntTensor = _tensor_methods.LEGACY_TYPES["IntTensor"]
ShortTensor = _tensor_methods.LEGACY_TYPES["ShortTensor"]
CharTensor = _tensor_methods.LEGACY_TYPES["CharTensor"]
ByteTensor = _tensor_methods.LEGACY_TYPES["ByteTensor"]
BoolTensor = _tensor_methods.LEGACY_TYPES["BoolTensor"]

__version__ = "0.1.0"
from . import nn  # noqa: E402  (after the core: nn builds on it)
from .nn.functional._distance import cdist  # noqa: E402  (torch.cdist, composed in nn)
from .nn.functional._normalization import rms_norm  # noqa: E402  (torch.rms_norm, as F's)
from .nn._toplevel import *  # noqa: E402,F401,F403  (torch.conv2d & co.: F's ops, ATen signatures)
from .nn._aten_forms import *; from .nn._aten_rnn import *  # noqa: E402,E702,F401,F403  (torch.native_layer_norm, torch.lstm & co.)
from .nn import _toplevel as _nn_toplevel  # noqa: E402
from ._functions import fill_, zero_, resize_as_  # noqa: E402,F401  (torch.fill_ & co.)
from ._functions.storage_dtypes import (UntypedStorage, TypedStorage,  # noqa: E402,F401
                                        addmv_, as_strided_)
from . import utils  # noqa: E402
from . import optim  # noqa: E402
from . import distributed  # noqa: E402  (MPI: mpi4py is imported on init_process_group)
from .serialization import save, load  # noqa: E402
from . import accelerator, backends, cuda, cpu, amp  # noqa: E402  (device queries of a CPU build)
from . import sparse  # noqa: E402  (torch.sparse: functions of sparse COO tensors)
from . import nested  # noqa: E402  (torch.nested: nested tensors)
from ._nested import jagged  # noqa: E402,F401  (the jagged layout, beside strided)
from . import quasirandom, signal  # noqa: E402  (SobolEngine; signal.windows)
from .amp import autocast  # noqa: E402
from .amp.autocast_mode import (  # noqa: E402,F401  (torch.is_autocast_enabled & co.)
    is_autocast_enabled, set_autocast_enabled, get_autocast_dtype, set_autocast_dtype,
    is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype,
    set_autocast_cpu_dtype, get_autocast_gpu_dtype, set_autocast_gpu_dtype,
    is_autocast_cache_enabled, set_autocast_cache_enabled, clear_autocast_cache,
    autocast_increment_nesting, autocast_decrement_nesting)
from . import ops  # noqa: E402  (ember.ops.<namespace>: built-in and custom operators)
from . import compiler  # noqa: E402
from .compiler import compile  # noqa: E402,A001  (torch.compile: runs eagerly, see compiler/)
from ._runtime_switches import *  # noqa: E402,F401,F403  (matmul precision, determinism)
from ._functions.api_surface import (newaxis, typename, AcceleratorError,  # noqa: E402,F401
                                     conj_physical_)
from .amp import GradScaler  # noqa: E402,F401
from .accelerator import Stream, Event  # noqa: E402,F401  (torch.Stream/Event, the CPU's)
from ._C import DisableTorchFunction, DisableTorchFunctionSubclass  # noqa: E402,F401
from .ops import aten as _aten  # noqa: E402,F401  (ember.ops.aten: the ops __torch_dispatch__ sees)

from . import _C  # noqa: E402  (the names PyTorch code reaches in torch._C)
from . import overrides  # noqa: E402  (the __torch_function__ helpers)
from ._torch_function import wrap_namespace as _wrap_namespace  # noqa: E402

# The factories, cdist and rms_norm are __torch_function__ entry points as well; the ones
# with no tensor argument are seen by modes only (PyTorch lists them in get_ignored_functions).
_FACTORIES = ("tensor", "as_tensor", "from_numpy", "zeros", "ones", "empty", "full", "arange",
              "range", "linspace", "eye", "rand", "randn", "randint", "randperm", "rand_like",
              "randn_like", "randint_like")
_wrap_namespace(globals(), _FACTORIES + ("zeros_like", "ones_like", "empty_like", "full_like",
                                         "cdist", "rms_norm") + tuple(_nn_toplevel.__all__),
                "ember", modes_only=_FACTORIES)

# Imported on first use, to keep ``import ember`` short: ``ember.distributions``,
# ``ember.onnx`` (export), ``ember.func`` (function transforms; ``ember.vmap`` is its vmap),
# ``ember.library`` (custom operators), ``ember.special`` (special functions, SciPy's names),
# ``ember.testing`` (assert_close, make_tensor). ``import ember.func`` and
# ``from ember import func`` work as for any submodule.
_LAZY_SUBMODULES = frozenset({"distributions", "onnx", "func", "library", "special", "testing",
                              "fft", "jit", "profiler", "multiprocessing", "hub", "masked",
                              "fx", "ao", "quantization"})
_LAZY_ATTRIBUTES = {"vmap": "func"}


def __getattr__(name):
    if name in _LAZY_SUBMODULES or name in _LAZY_ATTRIBUTES:
        import importlib
        module = importlib.import_module("." + _LAZY_ATTRIBUTES.get(name, name), __name__)
        if name in _LAZY_SUBMODULES:
            return module
        value = globals()[name] = getattr(module, name)
        return value
    raise AttributeError(f"module 'ember' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES | set(_LAZY_ATTRIBUTES))
