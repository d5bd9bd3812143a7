"""Binds every declared op (``_registry``) onto ``Tensor``: methods and in-place
variants (``x.add_(y)``), plus the operators (``x + y``, ``x += y``). Declares the methods
that have no ``ember.<name>`` function: dtype conversion, the ``new_*`` constructors and
in-place fills. Imported once by ``ember/__init__.py``.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .backend import get_array_module, broadcast_shapes, device_module as get_device_module
from . import _functions as F
from ._creation import legacy_tensor_data, tensor, beside, _filled, _empty, _refuse_random, \
    _check_float8_fill, _check_layout, _check_pin_memory, keyword_sizes
from ._tensor import Tensor
from ._typing import Any, Number, Sequence, dtype
from ._registry import DECLARED, method, method_entry, method_impl
from ._torch_function import (dispatching, dispatching_property, is_entry,
                              DisableTorchFunctionSubclass, _State as _tf_state)
from ._ops import shape as S, indexing as I
from ._ops.primitive import Primitive, ToDevice
from ._ops import memory_format as _formats
from ._ops.elementwise import Add as _AddOp, Sub as _SubOp, Mul as _MulOp, _check_broadcast
from .backend import dtypes
from .backend.dtypes import LEGACY_TENSOR_TYPES as _LEGACY
from .backend.kernels import cast as _cast
from .device import check_device, device as _device_cls, device, cpu as cpu_device
from .backend.meta import meta_module, NO_DATA
from .random import rng, check_inplace_draw
from ._ops.sets import check_probability
from ._ops import storage as _storage_ops
from .autograd.batching import INPLACE_BERNOULLI
from .autograd import grad_mode
from ._runtime_switches import is_warn_always_enabled


# ---- dtype conversion ---------------------------------------------------------------------
_COMPLEX_CAST_WARNED = []


class ToDtype(Primitive):
    """Cast; the gradient is cast back to the input's dtype by the node. Host float32 <->
    float16/bfloat16 casts are compiled (``kernels.cast``: astype's bits, ~5-30x faster)."""
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype):
        d = x._data
        if d.dtype.kind == "c" and not dtype.is_complex:
            if not _COMPLEX_CAST_WARNED or is_warn_always_enabled():  # once, as PyTorch
                _COMPLEX_CAST_WARNED.append(True)
                warnings.warn("Casting complex values to real discards the imaginary part",
                              UserWarning, stacklevel=4)
            d = d.real
        return _cast(d, dtype.np)

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class ToMeta(Primitive):
    """A copy on the 'meta' device (shape and dtype, no data). Its gradient would have to
    come back from meta to the CPU, which has no data to give: backward raises, as
    PyTorch's does."""
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, dtype):
        return meta_module.empty(x._data.shape, x._data.dtype if dtype is None else dtype.np)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(NO_DATA)


_Add, _Sub, _Mul = _AddOp.apply, _SubOp.apply, _MulOp.apply

_LEGACY_NAME = {v.name: k for k, v in _LEGACY.items()}


def _parse_dtype(d):
    if isinstance(d, dtypes.dtype):
        return d
    if isinstance(d, str):
        name = d.split(".")[-1]
        if name in _LEGACY:
            return _LEGACY[name]
        raise ValueError(f"invalid type: '{d}'")
    if isinstance(d, type) and getattr(d, "_legacy_dtype", None) is not None:
        return d._legacy_dtype
    return dtypes.from_numpy_dtype(d)


@method
def to(self, *args: Any, **kwargs: Any) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(other_tensor)``, ``to(device, dtype)``;
    ``memory_format=`` lays the result out (``channels_last``...)."""
    if "memory_format" in kwargs:
        memory_format = kwargs.pop("memory_format")
        return _formats.to_format(to(self, *args, **kwargs), memory_format)
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, dtypes.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (str, _device_cls)) or (isinstance(a, int)
                                                    and not isinstance(a, bool)):
            device = a  # an int is a CUDA index: check_device raises for it without CUDA
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    target = check_device(device) if device is not None else None
    if target is not None and target != self.device:
        if self.is_meta:
            raise NotImplementedError(NO_DATA)  # out of meta: no data to copy
        if target.type == "meta":
            return ToMeta.apply(self, dtype)
        return ToDevice.apply(self, target, dtype)
    if dtype is None or dtype is self.dtype:
        return F.clone(self) if copy else self
    return ToDtype.apply(self, dtype)


@method(name="type")
def type_(self, dtype: dtype | str | None = None, non_blocking: bool = False,
          **kwargs: Any) -> Tensor | str:
    """No argument: the legacy type name ('torch.FloatTensor'); else convert."""
    if dtype is None:
        return ("torch.cuda." if self.is_cuda else "torch.") + \
            _LEGACY_NAME.get(self.dtype.name, self.dtype.scalar_name + "Tensor")
    return to(self, _parse_dtype(dtype))


@method
def type_as(self, other: Tensor) -> Tensor:
    return to(self, other.dtype)


def _caster(name, dt):
    def cast(self, memory_format: Any = None) -> Tensor:
        if memory_format is not None:
            return _formats.to_format(to(self, dt), memory_format, name)
        return to(self, dt)
    cast.__name__ = cast.__qualname__ = name
    return method(cast)


for _name, _dt in (("double", dtypes.float64), ("float", dtypes.float32),
                   ("half", dtypes.float16), ("long", dtypes.int64), ("int", dtypes.int32),
                   ("short", dtypes.int16), ("char", dtypes.int8), ("byte", dtypes.uint8),
                   ("bool", dtypes.bool_), ("cfloat", dtypes.complex64),
                   ("cdouble", dtypes.complex128), ("bfloat16", dtypes.bfloat16)):
    _caster(_name, _dt)
del _name, _dt


@method
def cpu(self, memory_format: Any = None) -> Tensor:
    if memory_format is not None:
        return _formats.to_format(cpu(self), memory_format, "cpu")
    if self.is_meta:
        raise NotImplementedError(NO_DATA)
    return self if self.is_cpu else ToDevice.apply(self, cpu_device, None)


@method
def cuda(self, device: device | int | str | None = None, non_blocking: bool = False,
         memory_format: Any = None) -> Tensor:
    """A copy on the CUDA device (self when it is there already). Without a CUDA array
    module (CuPy and a GPU) it raises as a CPU-only PyTorch build does
    (``AssertionError: Torch not compiled with CUDA enabled``); so does ``Module.cuda()``."""
    target = check_device(_cuda_target(device))
    if target.type != "cuda":
        raise RuntimeError("Invalid device, must be cuda device")
    if memory_format is not None:
        return _formats.to_format(to(self, target), memory_format, "cuda")
    return to(self, target)


def _cuda_target(device):
    """``.cuda(device)``'s argument as a device: None is the current CUDA device, an int
    its index."""
    if device is None:
        return "cuda"
    if isinstance(device, int) and not isinstance(device, bool):
        return _device_cls("cuda", device)
    return device


@method
def is_pinned(self, device: device | str | None = None) -> bool:
    """False: there is no accelerator to pin host memory for."""
    return False


@method
def pin_memory(self, device: device | str | None = None) -> Tensor:
    """A copy in host memory for fast moves to the GPU; ember's is an ordinary copy (CuPy
    copies from any host memory). Raises as PyTorch does on a machine with no accelerator."""
    if not self.is_cpu:
        name = _LEGACY_NAME[self.dtype.name]
        name = f"Meta{name[:-len('Tensor')]}Type" if self.is_meta else f"torch.cuda.{name}"
        raise RuntimeError(f"cannot pin '{name}' only dense CPU tensors can be pinned")
    if get_device_module("cuda") is None:
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return F.clone(self)


# ---- new_* constructors -------------------------------------------------------------------
@method
def new(self, *args: Any) -> Tensor:
    data = legacy_tensor_data(args, self.dtype, like=self)
    return Tensor._make(data.astype(self._data.dtype, copy=False))


@method
def new_tensor(self, data: Any, dtype: dtype | None = None, device: device | str | None = None,
               requires_grad: bool = False) -> Tensor:
    if isinstance(data, Tensor):
        data = data._data
    return beside(tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad), self)


def _new_checks(layout, pin_memory, name):
    _check_layout(layout, name)
    _check_pin_memory(pin_memory)


def _new_filled(name, fill):
    def make(self, *size_args: int | Sequence[int], size: Sequence[int] | None = None,
             dtype: dtype | None = None, device: device | str | None = None,
             requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
        size = size_args if size is None else keyword_sizes(size_args, size, name, "size")
        _new_checks(layout, pin_memory, name)
        return _filled(fill, size, dtype or self.dtype, requires_grad, device, like=self)
    make.__name__ = make.__qualname__ = name
    return method(make)


_new_filled("new_zeros", 0)
_new_filled("new_ones", 1)


@method
def new_empty(self, *size_args: int | Sequence[int], size: Sequence[int] | None = None,
              dtype: dtype | None = None, device: device | str | None = None,
              requires_grad: bool = False, layout: Any = None, pin_memory: bool = False) -> Tensor:
    size = size_args if size is None else keyword_sizes(size_args, size, "new_empty", "size")
    _new_checks(layout, pin_memory, "new_empty")
    return _empty(size, dtype or self.dtype, requires_grad, device, like=self)


@method
def new_full(self, size: Sequence[int], fill_value: Number, *, dtype: dtype | None = None,
             device: device | str | None = None, requires_grad: bool = False,
             layout: Any = None, pin_memory: bool = False) -> Tensor:
    _new_checks(layout, pin_memory, "new_full")
    _check_float8_fill(fill_value, dtype or self.dtype, size)
    return _filled(fill_value, (size,), dtype or self.dtype, requires_grad, device, name="full",
                   like=self)


# ---- in-place helpers ---------------------------------------------------------------------
class Overwrite(Primitive):
    """New values that do not depend on the old ones (fill_, zero_, normal_, copy_)."""
    _backward_name = "FillBackward0"
    complex_grad = True  # backward right for complex tensors (complex_ops.py)

    @staticmethod
    def forward(ctx, x, value):
        ctx.value_shape = value._data.shape if isinstance(value, Tensor) else None
        v = value._data if isinstance(value, Tensor) else value
        xp = get_array_module(x._data)
        v = xp.asarray(v)
        if v.dtype != x._data.dtype:
            v = _cast(v, x._data.dtype)  # float8's rounding is PyTorch's, not astype's
        return xp.broadcast_to(v, x._data.shape).copy()

    @staticmethod
    def backward(ctx, grad):
        gv = None
        if ctx.value_shape is not None and ctx.needs_input_grad[1]:
            gv = grad.sum_to_size(ctx.value_shape)
        return grad * 0, gv  # the old values get a zero gradient, as in PyTorch


@method
def fill_(self, value: Tensor | Number) -> Tensor:
    if isinstance(value, Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.dim()} dimensions.")
    if self._data.dtype.itemsize == 1:
        _check_float8_fill(value, self.dtype, tuple(self._data.shape))
    return self._inplace(Overwrite.apply, value)


@method
def zero_(self) -> Tensor:
    return self._inplace(Overwrite.apply, 0)


@method
def copy_(self, src: Tensor, non_blocking: bool = False) -> Tensor:
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    try:
        get_array_module(src._data).broadcast_to(src._data, self._data.shape)
    except ValueError:
        _check_broadcast(self, src)  # PyTorch's message for the first mismatched dim
        # broadcastable together, but to a larger shape than self's
        dims = lambda shape: "[" + ", ".join(map(str, shape)) + "]"  # noqa: E731
        raise RuntimeError(
            f"output with shape {dims(self._data.shape)} doesn't match the broadcast shape "
            f"{dims(broadcast_shapes(self._data.shape, src._data.shape))}") from None
    return self._inplace(Overwrite.apply, src)


def _random_fill(self, draw, kind):
    """Fill self with ``draw(shape)``; ``kind``: "rand" (uniform_) or "randn" (normal_), whose
    PyTorch kernels refuse other than floating dtypes (normal_'s only with elements to draw;
    on meta neither runs)."""
    dt = self._data.dtype
    if (not dtypes.is_float_np(dt) or dt in dtypes.FLOAT8_NP) and dt.kind != "c" and \
            not self.is_meta:
        if kind == "rand" or self._data.size:
            _refuse_random(kind, dt)
        return self
    check_inplace_draw(self)
    if self.is_meta:  # no data to fill: nothing is drawn (nor by PyTorch's generator)
        return self
    if dt.kind == "c":  # both parts drawn alike (normal_: std / sqrt(2) each, as PyTorch)
        reals = draw(self._data.shape + (2,), kind == "randn")
        values = reals.astype(np.float32 if dt == np.complex64 else np.float64).view(dt)
        values = values.reshape(self._data.shape)
    else:
        values = draw(self._data.shape, False).astype(dt)  # drawn on the host
    return self._inplace(Overwrite.apply, get_array_module(self._data).asarray(values))


@method
def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    dt = self._data.dtype
    if a > b and (dtypes.is_float_np(dt) or dt.kind == "c"):  # (others: refused by kernel)
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={a:g} > to={b:g}")
    return _random_fill(self, lambda s, _: rng(generator).uniform(a, b, s), "rand")


@method
def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return _random_fill(self, lambda s, halve: rng(generator).normal(
        mean, std * math.sqrt(0.5) if halve else std, s), "randn")


@method
def random_(self, from_: int = 0, to: int | None = None, *, generator: Any = None) -> Tensor:
    dt = self.dtype
    bounded = to is not None or bool(from_)  # random_(from, to) or random_(to)
    if (dt.is_complex or dt in dtypes.LIMITED_UNSIGNED or dt in dtypes.FLOAT8) and \
            not bounded:
        raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for "
                                  f"'{dt.scalar_name}'")
    dtypes.refuse_float8(dt.np, "random_update_from_to")
    if to is None:  # floats: PyTorch's [0, 2 ** digits] (every integer there is exact)
        from_, to = 0, (from_ if from_ else
                        2 ** (dtypes._np_finfo(dt.np).nmant + 1) + 1 if dt.is_floating_point
                        else 2 if dt is dtypes.bool_ else int(np.iinfo(dt.np).max) + 1)
    if bounded:
        if from_ >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={from_} >= to={to}")
        if dt.is_complex:
            raise RuntimeError("check_random_bounds handles only integral, floating-point and "
                               "boolean types")
        if not dt.is_floating_point:  # PyTorch's range checks of integer (and bool) dtypes
            low, high = (0, 1) if dt is dtypes.bool_ else \
                (int(np.iinfo(dt.np).min), int(np.iinfo(dt.np).max))
            if not low <= from_ <= high:
                raise RuntimeError(f"from is out of bounds for {dt.cpp_name}")
            if not low <= to - 1 <= high:
                raise RuntimeError(f"to - 1 is out of bounds for {dt.cpp_name}")
    check_inplace_draw(self)
    if self.is_meta:
        return self
    vals = rng(generator).integers(from_, to, self._data.shape).astype(self._data.dtype)
    return self._inplace(Overwrite.apply, get_array_module(self._data).asarray(vals))


@method
def bernoulli_(self, p: float | Tensor = 0.5, *, generator: Any = None) -> Tensor:
    xp = get_array_module(self._data)
    if isinstance(p, Tensor) and p._vmap_level is not None:  # batched p, self not (a
        raise RuntimeError(INPLACE_BERNOULLI)                # BatchedTensor has its own)
    prob = p._data if isinstance(p, Tensor) else check_probability(p)
    if self.dtype.is_complex or self.dtype in dtypes.FLOAT8:  # PyTorch's kernels (one for a
        # tensor p, one for a number)
        kernel = "bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else "bernoulli_scalar_cpu_"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{self.dtype.scalar_name}'")
    check_inplace_draw(self)
    if self.is_meta:
        return self
    vals = xp.asarray(rng(generator).random(self._data.shape)) < prob  # drawn on the host
    return self._inplace(Overwrite.apply, vals.astype(self._data.dtype))


@method
def resize_(self, *sizes: int | Sequence[int], memory_format: Any = None) -> Tensor:
    """Change the shape in place to a contiguous layout at the same storage offset: the
    storage's elements kept in storage order, its memory reused while large enough (new
    memory past it, zeros where PyTorch leaves them uninitialized); no autograd."""
    dtypes.check_memory_format(memory_format, "resize_")
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    return _storage_ops.resize_(self, _storage_ops.resize_sizes(sizes))


@method
def resize_as_(self, other: Tensor, memory_format: Any = None) -> Tensor:
    return resize_(self, other.shape, memory_format=memory_format)


def _inplace_of(fn, name):
    """``x.<op>_(...)``: ``fn`` (the out-of-place method) run on x, written into x."""
    def inplace(self, *args, **kwargs):
        try:
            if kwargs:
                return self._inplace(lambda s, *a: fn(s, *a, **kwargs), *args)
            return self._inplace(fn, *args)
        except TypeError as e:  # an argument's type error names the in-place form, as PyTorch
            text = str(e)
            if not text.startswith(name[:-1] + "(): argument "):
                raise
            raise TypeError(name + text[len(name) - 1:]) from None
    inplace.__name__ = inplace.__qualname__ = name
    return inplace


def _reflected(fn):
    def reflected(self, other):
        return fn(other, self)
    return reflected


def _rtruediv(self, other):
    """``other / self`` as PyTorch's Tensor computes it: ``self.reciprocal() * other``."""
    return _Mul(F.reciprocal(self), other)


def _scalar_as_tensor(fn):
    def reflected(self, other):
        return fn(beside(tensor(other), self) if not isinstance(other, Tensor) else other, self)
    return reflected


@method
def unsqueeze_(self, dim: int) -> Tensor:
    new = F.unsqueeze(self, dim)
    self._data = new._data
    return self


@method
def squeeze_(self, dim: int | Sequence[int] | None = None) -> Tensor:
    new = F.squeeze(self, dim)
    self._data = new._data
    return self


def _restrided_(self, new):
    """Make self ``new`` (a view of self with other sizes or strides) in place: its array
    and, when recorded, its graph node (``x.t_()``, ``x.transpose_(0, 1)``)."""
    if self._requires_grad and self._grad_fn is None and grad_mode.is_grad_enabled():
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    self._data = new._data
    if new._grad_fn is not None:
        self._grad_fn, self._output_nr = new._grad_fn, new._output_nr
    if self._base is not None:  # a view stays one: its replay now ends with the new view op
        self._view_fn = new._view_fn
    return self


@method
def transpose_(self, dim0: int, dim1: int) -> Tensor:
    """``transpose`` in place: self becomes the view with ``dim0`` and ``dim1`` swapped.

    >>> import ember
    >>> x = ember.zeros(2, 3); x.transpose_(0, 1) is x, x.shape
    (True, ember.Size([3, 2]))
    """
    return _restrided_(self, F.transpose(self, dim0, dim1))


@method
def swapaxes_(self, axis0: int, axis1: int) -> Tensor:
    """``transpose_`` under NumPy's name."""
    return _restrided_(self, F.transpose(self, axis0, axis1))


@method
def swapdims_(self, dim0: int, dim1: int) -> Tensor:
    """``transpose_`` under another name."""
    return _restrided_(self, F.transpose(self, dim0, dim1))


@method
def t_(self) -> Tensor:
    """``t`` in place (tensors of at most 2 dimensions).

    >>> import ember
    >>> ember.zeros(2, 3).t_().stride()
    (1, 3)
    """
    if self.dim() > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is "
                           f"{self.dim()}D")
    return _restrided_(self, F.t(self))


@method
def as_strided_(self, size: Sequence[int], stride: Sequence[int],
                storage_offset: int | None = None) -> Tensor:
    """``as_strided`` in place: self takes the new sizes, strides and offset."""
    return _restrided_(self, F.as_strided(self, size, stride, storage_offset))


@method
def new_empty_strided(self, size: Sequence[int], stride: Sequence[int], *,
                      dtype: dtype | None = None, device: device | str | None = None,
                      requires_grad: bool = False) -> Tensor:
    """``empty_strided`` with self's dtype and device unless given.

    >>> import ember
    >>> ember.zeros(1, dtype=ember.int32).new_empty_strided((2, 2), (1, 2)).dtype
    ember.int32
    """
    return F.empty_strided(size, stride, dtype=dtype or self.dtype,
                           device=device if device is not None else self.device,
                           requires_grad=requires_grad)


def _invert(self):
    if dtypes.is_float_np(self._data.dtype):
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return F.logical_not(self) if self.dtype is dtypes.bool_ else F.bitwise_not(self)


@method
def view_as(self, other: Tensor) -> Tensor:
    return F.view(self, other.shape)


@method
def reshape_as(self, other: Tensor) -> Tensor:
    return F.reshape(self, other.shape)


@method
def expand_as(self, other: Tensor) -> Tensor:
    return F.expand(self, other.shape)


def _T(self):
    return F.permute(self, tuple(reversed(range(self.dim()))))


def _not_implemented_op(self, other):
    return NotImplemented


def _eq(self, other):
    if not isinstance(other, (Tensor, int, float, bool, np.ndarray, np.generic)):
        return NotImplemented
    return F.eq(self, other)


def _ne(self, other):
    if not isinstance(other, (Tensor, int, float, bool, np.ndarray, np.generic)):
        return NotImplemented
    return F.ne(self, other)


# Python's operators. The hot ones are copies of the ops' apply functions (self is the first
# argument, ``Primitive.entry``): no wrapper frame and none of the keyword handling of
# ember.add/sub/mul.
OPERATORS = {
    "__add__": _AddOp.apply, "__radd__": _AddOp.apply, "__sub__": _SubOp.apply,
    "__rsub__": _reflected(F.sub), "__mul__": _MulOp.apply, "__rmul__": _MulOp.apply,
    "__truediv__": F.div, "__rtruediv__": _rtruediv,
    "__floordiv__": F.floor_divide, "__rfloordiv__": _scalar_as_tensor(F.floor_divide),
    "__mod__": F.remainder, "__rmod__": _scalar_as_tensor(F.remainder),
    "__pow__": F.pow, "__rpow__": _reflected(F.pow), "__matmul__": F.matmul,
    "__rmatmul__": _reflected(F.matmul), "__neg__": F.neg, "__pos__": lambda self: self,
    "__abs__": F.abs, "__invert__": _invert,
    "__eq__": _eq, "__ne__": _ne, "__lt__": F.lt, "__le__": F.le, "__gt__": F.gt,
    "__ge__": F.ge, "__and__": F.bitwise_and, "__or__": F.bitwise_or,
    "__xor__": F.bitwise_xor, "__rand__": F.bitwise_and, "__ror__": F.bitwise_or,
    "__rxor__": F.bitwise_xor,
    "__lshift__": F.bitwise_left_shift, "__rlshift__": _reflected(F.bitwise_left_shift),
    "__rshift__": F.bitwise_right_shift, "__rrshift__": _reflected(F.bitwise_right_shift),
    "__getitem__": I.getitem, "__setitem__": I.setitem,
}
# The method a __torch_function__ override is given for an operator (PyTorch's operators
# that are its methods in C++ report the method: ``a + b`` is ``Tensor.add``).
OPERATOR_REPORTS = {"__add__": "add", "__radd__": "add", "__sub__": "sub", "__mul__": "mul",
                    "__rmul__": "mul", "__truediv__": "div", "__matmul__": "matmul",
                    "__neg__": "neg", "__abs__": "abs", "__lt__": "lt", "__le__": "le",
                    "__gt__": "gt", "__ge__": "ge", "__pow__": "pow"}
_BINARY_OPERATORS = {name for name in OPERATORS
                     if name not in ("__neg__", "__pos__", "__abs__", "__invert__",
                                     "__getitem__", "__setitem__")}
PROPERTIES = {"T": _T, "mT": S.mT, "H": lambda self: F.conj(_T(self)),
              "mH": lambda self: F.conj(S.mT(self)), "real": F.real, "imag": F.imag,
              "itemsize": lambda self: self._data.itemsize,
              "nbytes": lambda self: self._data.size * self._data.itemsize}
INPLACE_OPERATORS = {"__iadd__": F.add, "__isub__": F.sub, "__imul__": F.mul,
                      "__itruediv__": F.div, "__ifloordiv__": F.floor_divide,
                      "__imod__": F.remainder, "__ipow__": F.pow,
                      "__iand__": F.bitwise_and, "__ior__": F.bitwise_or,
                      "__ixor__": F.bitwise_xor, "__ilshift__": F.bitwise_left_shift,
                      "__irshift__": F.bitwise_right_shift}


def _bind():
    own = set(vars(Tensor))  # what the class defines itself is never replaced

    def bind(name, fn):
        if name in own:
            raise RuntimeError(f"a declaration would replace Tensor.{name}")
        setattr(Tensor, name, fn)

    for d in DECLARED.values():
        if d.method is not None:
            bind(d.name, d.method)  # a one-op function's is its op's apply: x.tanh() is one call
        if d.inplace:
            bind(d.name + "_", dispatching(_inplace_of(d.impl, d.name + "_"),
                                           qualname=f"Tensor.{d.name}_"))
    for dunder, fn in OPERATORS.items():
        entry = method_entry(method_impl(fn), dunder, operator=dunder in _BINARY_OPERATORS)
        if dunder in OPERATOR_REPORTS:
            _report_as(entry, DECLARED[OPERATOR_REPORTS[dunder]].method)
        bind(dunder, entry)
    for dunder, fn in INPLACE_OPERATORS.items():
        bind(dunder, dispatching(_inplace_of(method_impl(fn), dunder),
                                 qualname=f"Tensor.{dunder}"))
    for name, fn in PROPERTIES.items():
        bind(name, dispatching_property(property(fn)))


def _report_as(entry, public):
    """Make ``entry`` (an op's apply copy or a dispatching wrapper) present itself to
    ``__torch_function__`` overrides as ``public``."""
    entry._tf_report[0] = public


_bind()


# ---- __torch_function__: the default of Tensor and its subclasses ----------------------------
def _tensor_torch_function(cls, func, types, args=(), kwargs=None):
    """``Tensor.__torch_function__``: run ``func`` with subclass dispatch off and return its
    tensors as ``cls`` (``as_subclass``); NotImplemented when another type in ``types`` is
    not a superclass of ``cls`` (two unrelated subclasses meeting).

    >>> import ember
    >>> class Tagged(ember.Tensor):
    ...     pass
    >>> t = ember.ones(2).as_subclass(Tagged)
    >>> type(t * 2).__name__, type(ember.sum(t)).__name__
    ('Tagged', 'Tagged')
    """
    if kwargs is None:
        kwargs = {}
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with DisableTorchFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _default_nowrap_functions():
            return ret
        return _convert(ret, cls)


def _default_nowrap_functions():
    """The getters whose results ``Tensor.__torch_function__`` leaves as they are."""
    return {Tensor.grad.__get__}


def _convert(ret, cls):
    """``ret`` with its tensors (also inside lists and tuples) made instances of ``cls``."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = as_subclass(ret, cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        ret = type(ret)(*items) if hasattr(ret, "_fields") else type(ret)(items)
    return ret


def as_subclass(self, cls):
    """A ``cls`` instance sharing this tensor's data, version counter and graph (an alias,
    as PyTorch's: the gradient flows back into self).

    >>> import ember
    >>> class Tagged(ember.Tensor):
    ...     pass
    >>> x = ember.ones(2, requires_grad=True)
    >>> y = x.as_subclass(Tagged)
    >>> type(y).__name__, y.grad_fn.name()
    ('Tagged', 'AliasBackward0')
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a type, not "
                        f"{type(cls).__name__}" if not isinstance(cls, type) else
                        "Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    with DisableTorchFunctionSubclass():
        alias = I.getitem(self, Ellipsis)  # an alias view: AliasBackward0, shared memory
    alias.__class__ = cls
    return alias


Tensor.__torch_function__ = classmethod(_tensor_torch_function)
Tensor.as_subclass = as_subclass

# Tensor's own members (size, dim, shape, dtype, backward, __len__, ...) become dispatching
# entry points only once dispatch is first needed (a mode entered, a subclass defined):
# until then they stay plain functions, which ember's own code calls everywhere.
_OWN_DUNDERS = ("__len__", "__iter__", "__bool__", "__float__", "__int__", "__complex__",
                "__index__", "__repr__", "__format__", "__array__", "__deepcopy__",
                "__reduce_ex__", "__contains__", "__reversed__", "__dlpack__",
                "__dlpack_device__")


def _patch_own_members():
    for klass in (Tensor,):
        for name, value in list(vars(klass).items()):
            if name.startswith("_") and name not in _OWN_DUNDERS:
                continue
            if name in ("as_subclass", "__torch_function__"):
                continue
            if isinstance(value, property):
                if not is_entry(value.fget):
                    setattr(klass, name, dispatching_property(value))
            elif callable(value) and not isinstance(value, (type, classmethod, staticmethod)) \
                    and not is_entry(value) and not hasattr(value, "_primitive"):
                setattr(klass, name, dispatching(value, qualname=f"Tensor.{name}",
                                                 python_level=name in _OWN_DUNDERS))


if _tf_state.subclass_seen or _tf_state.modes:
    _patch_own_members()
else:
    _tf_state.on_activate.append(_patch_own_members)


class _LegacyTensorType(type):
    """``ember.FloatTensor(2, 3)`` builds; ``isinstance(x, ember.FloatTensor)`` checks dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._legacy_dtype

    def __call__(cls, *args):
        return Tensor(*args, dtype=cls._legacy_dtype)


def _legacy_types():
    return {name: _LegacyTensorType(name, (), {"_legacy_dtype": dt})
            for name, dt in _LEGACY.items()}


LEGACY_TYPES = _legacy_types()
