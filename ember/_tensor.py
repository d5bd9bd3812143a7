"""``ember.Tensor``: an array, its autograd metadata and a version counter.

The class is the data type under autograd: this module imports nothing from
autograd or any layer above it (docs/architecture.md). Members that need a higher
layer are attached by that layer: the legacy constructor ``Tensor(2, 3)`` by
``ember._creation``; ``grad_fn``, ``grad``, ``backward``, ``register_hook``,
``retain_grad`` and the in-place machinery ``_inplace`` by
``ember.autograd.tensor_members``; the math (``ember._ops``) by
``ember._tensor_methods`` as one-line methods and operators.

Views (``view``, ``transpose``, basic slicing, ...) share their base's NumPy
memory *and* its version counter (a one-element list, ``_vc``), and remember
how to re-derive themselves from the base (``_view_fn``) so that an in-place
op on a view can be replayed onto the base's graph (``ember.autograd.views``).
"""
import copy
import warnings

from . import _layouts
from .backend import as_array as _as_array, broadcast_shapes as _broadcast_shapes, \
    contiguous_strides as _contiguous_strides, numpy_ndarray as _ndarray
from .backend.meta import MetaArray as _MetaArray, NO_NUMPY as _NO_NUMPY
from .backend.memory_layout import checked_format as _checked_format, \
    is_format_contiguous as _is_format_contiguous
from .backend.dlpack import DLDeviceType as _DLDeviceType

from ._tensor_repr import tensor_repr
from .backend.dtypes import _BY_NUMPY, FLOAT8_NP as _FLOAT8_NP, is_float_np as _is_float_np
from .backend.dtypes import contiguous_format as _contiguous_format, \
    preserve_format as _preserve_format
from .device import cpu, device_of as _device_of


class Size(tuple):
    """The shape of a tensor: a tuple that prints as ``ember.Size([2, 3])``."""

    def __repr__(self):
        return f"ember.Size([{', '.join(str(s) for s in self)}])"

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n

    # slices, concatenations and repeats of a Size are Sizes, as PyTorch's
    def __getitem__(self, index):
        item = tuple.__getitem__(self, index)
        return Size(item) if isinstance(index, slice) else item

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to "
                            f"ember.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, count):
        result = tuple.__mul__(self, count)
        return result if result is NotImplemented else Size(result)

    __rmul__ = __mul__


class Tensor:
    """A multi-dimensional array that can record the ops applied to it.

    Prefer ``ember.tensor(data)``; the legacy constructor ``ember.Tensor(2, 3)``
    makes an uninitialized float tensor of that size and ``ember.Tensor([1, 2])``
    copies data into a default-dtype tensor.

    >>> import ember
    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward(); x.grad
    tensor([2., 4.])
    """
    # Every op reads these, so they are slots. Rarely-set metadata lives in the
    # instance dict and falls back to the class defaults below, which keeps the
    # constructor every op runs down to six stores.
    __slots__ = ("_data", "_requires_grad", "_grad_fn", "_output_nr", "_vc", "_base",
                 "__weakref__", "__dict__")
    _view_fn = None        # replays the view ops from the base (views only)
    _view_version = 0      # base version when the view's grad_fn was last derived
    _accumulator = None    # weakref to the AccumulateGrad node of a leaf
    _grad = None
    _retains_grad = False
    _leaf_hooks = None     # keeps a leaf's accumulator alive while it has hooks
    _fw_grad = None        # (level token, tangent) under forward AD (autograd/forward_ad.py)
    _vmap_level = None     # a BatchedTensor's vmap level (_functorch/batched.py)
    __array_priority__ = 1000  # so ndarray <op> Tensor defers to Tensor's reflected op
    # ---- __torch_dispatch__ wrapper subclasses (autograd/dispatch.py) ----
    # Strides given to ``_make_wrapper_subclass``: such a tensor's array is a placeholder
    # without memory, so strides and contiguity are read from here instead.
    _wrapper_strides = None
    # ---- end __torch_dispatch__ ----
    _repr_as_tensor = True     # repr says "tensor(" (a subclass's says its own name)

    @classmethod
    def _make(cls, array, requires_grad=False):
        """Wrap an array without copying (the constructor every op uses)."""
        if type(array) is not _ndarray:
            array = _as_array(array)
        t = object.__new__(cls)
        t._data = array  # _init, inlined: every op result passes here
        t._requires_grad = requires_grad
        t._grad_fn = None
        t._output_nr = 0
        t._vc = [0]
        t._base = None
        return t

    # ---- basic properties -------------------------------------------------------------
    @property
    def dtype(self):
        return _BY_NUMPY[self._data.dtype]

    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        shape = self._data.shape
        if dim is None:
            return Size(shape)
        if not shape:
            raise IndexError(_no_dims(dim))
        return shape[_wrap_dim(dim, len(shape))]

    def dim(self):
        return self._data.ndim

    @property
    def ndim(self):
        return self._data.ndim

    def ndimension(self):
        return self._data.ndim

    def nelement(self):
        return self._data.size

    def numel(self):
        return self._data.size

    def element_size(self):
        return self._data.itemsize

    def stride(self, dim=None):
        strides = self._wrapper_strides
        if type(self._data) is _MetaArray:  # no memory: the strides of a contiguous layout
            strides = _contiguous_strides(self._data.shape)
        elif strides is None:
            strides = tuple(s // self._data.itemsize for s in self._data.strides)
            if self._data.size == 0 and not any(strides):
                # NumPy gives a fresh empty array zero strides; PyTorch a contiguous layout
                strides = _contiguous_strides(self._data.shape)
        if dim is None:
            return strides
        if not strides:
            raise IndexError(_no_dims(dim))
        return strides[_wrap_dim(dim, len(strides))]

    def storage_offset(self):
        if type(self._data) is _MetaArray:
            return 0
        return (_address(self._data) - _address(storage_array(self._data))) // \
            self._data.itemsize

    def data_ptr(self):
        if type(self._data) is _MetaArray:
            return 0  # as PyTorch's meta tensors: no memory
        return _address(self._data)

    def is_contiguous(self, memory_format=None):
        if memory_format is not None and memory_format is not _contiguous_format \
                and memory_format is not _preserve_format:  # a channels-last layout
            return _is_format_contiguous(self.shape, self.stride(),
                                         _checked_format(memory_format, "is_contiguous"))
        if self._wrapper_strides is not None:
            return _is_row_major(self._data.shape, self._wrapper_strides)
        return self._data.flags.c_contiguous or type(self._data) is _MetaArray

    def is_floating_point(self):
        return _BY_NUMPY[self._data.dtype].is_floating_point  # bfloat16's NumPy kind is "V"

    def is_complex(self):
        return self._data.dtype.kind == "c"

    @property
    def device(self):
        d = self._data
        return cpu if type(d) is _ndarray else _device_of(d)

    @property
    def is_meta(self):
        """Whether this tensor is on the 'meta' device: a shape and a dtype, no data.

        >>> import ember
        >>> ember.empty(2, 3, device="meta").is_meta
        True
        """
        return type(self._data) is _MetaArray

    @property
    def is_cpu(self):
        return type(self._data) is _ndarray or self.device.type == "cpu"

    @property
    def is_cuda(self):
        return type(self._data) is not _ndarray and self.device.type == "cuda"

    @property
    def layout(self):
        return _layouts.strided

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def _version(self):
        return self._vc[0]

    @property
    def is_sparse(self):
        return False

    @property
    def is_sparse_csr(self):
        return False

    # devices and layouts ember has none of (PyTorch's flags for them): always False
    is_xpu = is_mps = is_ipu = is_xla = is_mtia = is_maia = is_vulkan = property(
        lambda self: False, doc="False: ember has no such device.")
    is_mkldnn = is_quantized = is_nested = property(
        lambda self: False, doc="False: ember has no such layout.")

    @property
    def volatile(self):
        """Pre-0.4 flag; volatile was removed (use no_grad), so it reads False."""
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    # ---- autograd metadata ------------------------------------------------------------
    @property
    def requires_grad(self):
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value):
        if value and not _is_float_np(self._data.dtype) and self._data.dtype.kind != "c":
            raise RuntimeError("only Tensors of floating point and complex dtype can require "
                               "gradients")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` on a leaf in place; returns self."""
        if self._grad_fn is not None:
            if requires_grad:
                return self
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use "
                "a computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach().")
        if requires_grad and not _is_float_np(self._data.dtype) and self._data.dtype.kind != "c":
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def output_nr(self):
        return self._output_nr

    @property
    def retains_grad(self):
        return self._retains_grad

    @property
    def data(self):
        """A detached alias sharing storage (but not the version counter)."""
        t = Tensor._make(self._data)
        return t

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        self._data = value._data

    def detach(self):
        """A new tensor sharing storage and version counter, cut from the graph."""
        t = Tensor._make(self._data)
        t._vc = self._vc
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn = None
        self._requires_grad = False
        if self._fw_grad is not None:
            del self.__dict__["_fw_grad"]  # the forward-mode tangent goes too
        return self

    # ---- conversion -------------------------------------------------------------------
    def numpy(self, *, force=False):
        """The NumPy array behind this tensor (shared memory, no copy)."""
        if type(self._data) is not _ndarray:
            _check_on_host(self)
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        if type(self._data) is not _ndarray:
            _check_on_host(self)
        if self._data.dtype.itemsize == 1 and self._data.dtype in _FLOAT8_NP:  # as PyTorch
            raise TypeError(f"Got unsupported ScalarType {_BY_NUMPY[self._data.dtype].scalar_name}")
        return self._data if dtype is None else self._data.astype(dtype)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """This tensor's memory as a DLPack capsule (the array's own export), for
        ``numpy.from_dlpack(t)``, ``torch.from_dlpack(t)``: they share the memory.

        >>> import ember, numpy
        >>> t = ember.zeros(2); numpy.from_dlpack(t)[0] = 5.0; t
        tensor([5., 0.])
        """
        if self._requires_grad:
            raise BufferError("Can't export tensors that require gradient, use "
                              "tensor.detach()")
        d = self._data
        where = self.device
        if where.type == "meta":
            raise BufferError("Cannot pack tensors on meta")
        options = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                     ("copy", copy)) if v is not None}
        if where.type == "cpu":
            if stream is not None and stream != -1:
                raise AssertionError("stream should be None on cpu.")
            if any(s < 0 for s in d.strides):  # PyTorch cannot take negative strides
                d = d.copy()
        elif stream is not None:
            options["stream"] = stream
        return d.__dlpack__(**options)

    def __dlpack_device__(self):
        """``(DLDeviceType, index)`` of this tensor's memory.

        >>> import ember
        >>> ember.zeros(1).__dlpack_device__()
        (<DLDeviceType.kDLCPU: 1>, 0)
        """
        where = self.device
        if where.type == "cpu":
            return _DLDeviceType.kDLCPU, 0
        if where.type == "cuda":
            return _DLDeviceType.kDLCUDA, where.index
        raise ValueError(f"Unknown device type {where.type} for Dlpack")

    def tolist(self):
        return self._data.tolist()

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               "to Scalar")
        return self._data.reshape(()).item()

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if self._data.size == 0 else 'more than one value'}"
                               f" is ambiguous")
        return bool(self._data.reshape(()).item())

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self._data.dtype.kind not in "iub" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an "
                            "index")
        return int(self.item())

    def __hash__(self):
        return id(self)

    def __repr__(self, *, tensor_contents=None):
        return tensor_repr(self)

    def __format__(self, format_spec):
        """A 0-d tensor formats as its Python number (``f"{loss:.3f}"``); others accept only
        the empty spec, as in PyTorch."""
        if self._data.ndim == 0 and type(self) is Tensor and type(self._data) is not _MetaArray:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) "
                               "support the deepcopy protocol at the moment.")
        new = type(self)._make(self._data.copy(), self._requires_grad) \
            if type(self) is Tensor else _deepcopy_subclass(self, memo)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new

    def _write(self, array):
        """Copy ``array`` into this tensor's memory and bump the version counter."""
        data = self._data
        if array is not data:
            if array.shape != data.shape and _broadcast_shapes(array.shape, data.shape) \
                    != data.shape:
                raise RuntimeError(
                    f"output with shape {list(data.shape)} doesn't match the broadcast shape "
                    f"{list(_broadcast_shapes(array.shape, data.shape))}")
            if array.dtype != data.dtype:
                _check_cast(array.dtype, data.dtype)
                array = array.astype(data.dtype)
            data[...] = array
        self._vc[0] += 1


def _init(t, array, requires_grad):
    t._data = array
    t._requires_grad = requires_grad
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None


def _rebuild(array, requires_grad):
    return Tensor._make(array, requires_grad)


def _deepcopy_subclass(t, memo):
    new = type(t).__new__(type(t))
    _init(new, t._data.copy(), t._requires_grad)
    for k, v in t.__dict__.items():
        if k not in ("_accumulator", "_leaf_hooks", "_grad"):
            setattr(new, k, copy.deepcopy(v, memo))
    return new


def _check_cast(src, dst):
    src_dt, dst_dt = _BY_NUMPY[src], _BY_NUMPY[dst]
    if src_dt.category > dst_dt.category:
        raise RuntimeError(f"result type {src_dt.scalar_name} can't be cast to the desired "
                           f"output type {dst_dt.scalar_name}")


def _is_row_major(shape, strides):
    """Whether ``strides`` are row-major for ``shape`` (dims of size 1 may have any)."""
    step = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1 and stride != step:
            return False
        step *= size
    return True


def _address(array):
    """Where ``array``'s first element is: host memory for NumPy's arrays, device memory
    for arrays with the CUDA array interface (CuPy's)."""
    if type(array) is _ndarray:
        return array.__array_interface__["data"][0]
    interface = getattr(array, "__cuda_array_interface__", None)
    return (array.__array_interface__ if interface is None else interface)["data"][0]


def storage_array(array):
    """The array owning ``array``'s memory: the end of its chain of bases, passing through
    the holders that strided views (``as_strided``) keep as their base."""
    base, array_type = array, type(array)
    while base.base is not None:
        parent = base.base
        if not isinstance(parent, (_ndarray, array_type)):
            parent = getattr(parent, "base", None)  # NumPy's as_strided: a DummyArray between
            if not isinstance(parent, (_ndarray, array_type)):
                break
        base = parent
    return base


def _check_on_host(t):
    """PyTorch's TypeError for ``numpy()`` / ``numpy.asarray`` on a tensor off the CPU."""
    where = t.device
    if where.type == "meta":
        raise TypeError(_NO_NUMPY)
    if where.type != "cpu":
        raise TypeError(f"can't convert {where} device type tensor to numpy. Use Tensor.cpu() "
                        "to copy the tensor to host memory first.")


def _no_dims(dim):
    """PyTorch's IndexError for a dim of a 0-d tensor's ``size``/``stride`` (which, unlike
    most ops, take no dim 0 or -1 there)."""
    return f"Dimension specified as {dim} but tensor has no dimensions"


def _wrap_dim(dim, ndim):
    """Normalize a possibly negative ``dim``; IndexError in PyTorch's words."""
    n = ndim if ndim > 0 else 1
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim + n if dim < 0 else dim

