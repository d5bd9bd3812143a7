"""Quantized tensors: integers with a scale and a zero point, ``real = (q - zero_point) *
scale``, one pair for the whole tensor (per tensor) or one per index along an axis (per
channel), as PyTorch's ``quantize_per_tensor`` / ``quantize_per_channel`` make them.

A ``QuantizedTensor`` keeps its integer representation (a dense int tensor: uint8 for
``quint8``, ``quint4x2`` and ``quint2x4``, int8 for ``qint8``, int32 for ``qint32``) and its
qparams beside a ``QuantizedData`` placeholder in the ``_data`` slot. Calls reach it through
``__torch_function__`` (dispatch held on only while one lives, so dense programs pay
nothing) and are answered by name from ``HANDLERS``: metadata, the quantization accessors,
``dequantize``, ``int_repr``, copies, equality and, per tensor, the shape views; any other op
raises PyTorch's "Could not run 'aten::<op>' with arguments from the 'QuantizedCPU'
backend". Quantizing rounds ``x * (1 / scale) + zero_point`` half to even in float32, as
PyTorch's CPU kernels (bit-identical integers).

>>> import ember
>>> q = ember.quantize_per_tensor(ember.tensor([1.0, -0.5, 2.26]), 0.1, 3, ember.quint8)
>>> q.int_repr()
tensor([13,  0, 26], dtype=ember.uint8)
>>> q.dequantize()
tensor([ 1.0000, -0.3000,  2.3000])
"""
from __future__ import annotations

import copy
import weakref

from .._tensor import Tensor
from .._tensor_repr import PRINT_OPTS, tensor_repr
from .._torch_function import called_name, hold_dispatch, registrar
from ..backend import get_array_module
from ..backend.dtypes import QUANTIZED, float32, float64, int64
from ..backend.quantized_data import QuantizedData, no_quantized_kernel
from .qscheme import per_channel_affine, per_tensor_affine

#: call name -> the code a quantized tensor runs for it
HANDLERS = {}

#: the integer range of each quantized dtype
_RANGES = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-2 ** 31, 2 ** 31 - 1),
           "quint4x2": (0, 15), "quint2x4": (0, 3)}
_ENHANCE = ("to be true, but got false.  (Could this error message be improved?  If so, "
            "please report an enhancement request to PyTorch.)")


class QuantizedTensor(Tensor):
    """A quantized tensor (see the module); ``type(q)`` is this class where PyTorch's is
    ``Tensor``."""
    _dispatch_while_alive = True
    _repr_as_tensor = True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = called_name(func)
        handler = HANDLERS.get(name)
        if handler is None:
            raise no_quantized_kernel(name.strip("_"))
        return handler(*args, **(kwargs or {}))


def _make(int_repr, dtype, qscheme, scale, zero_point, axis=None):
    """A quantized tensor over the dense integer tensor ``int_repr`` (kept as it is)."""
    t = object.__new__(QuantizedTensor)
    t._data = QuantizedData(int_repr.shape, int_repr._data.dtype)
    t._requires_grad = False
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    t.__dict__["_q"] = (int_repr, dtype, qscheme, scale, zero_point, axis)
    hold_dispatch(1)
    weakref.finalize(t, hold_dispatch, -1)
    return t


def _parts(q):
    return q.__dict__["_q"]


def _is_quantized(t):
    return type(t) is QuantizedTensor


def _check_quantized_dtype(dtype):
    if dtype not in QUANTIZED:
        raise RuntimeError(f"ScalarType {dtype.scalar_name} is not supported in new_qtensor.")


def _check_float_input(x):
    if x.dtype is not float32:
        raise RuntimeError(f"Quantize only works on Float Tensor, got {x.dtype.scalar_name}")


def _check_zero_point(zero_point, dtype, kernel):
    lo, hi = _RANGES[dtype.name]
    if zero_point < lo:
        raise RuntimeError(f"{kernel} zero_point {zero_point} is below lower bound.")
    if zero_point > hi:
        raise RuntimeError(f"{kernel} zero_point {zero_point} is above upper bound.")


def _quantize_array(d, scale32, zero_point, dtype):
    """The integers of float32 array ``d``: round(d * (1 / scale) + zero_point) in float32,
    clamped to the dtype's range (``scale32``, ``zero_point``: scalars or broadcasting
    arrays)."""
    xp = get_array_module(d)
    inv_scale = xp.float32(1.0) / scale32
    q = xp.rint(d * inv_scale + xp.asarray(zero_point).astype(xp.float32))
    lo, hi = _RANGES[dtype.name]
    q = xp.clip(q.astype(xp.float64), lo, hi)
    return q.astype(dtype.repr_np)


def quantize_per_tensor(input, scale, zero_point, dtype):
    """Quantize a float32 tensor with one ``scale`` and ``zero_point`` (numbers or one-element
    tensors) to ``dtype`` (``quint8``, ``qint8``, ``qint32``, ``quint4x2``, ``quint2x4``); a
    list of tensors gives a list.

    >>> import ember
    >>> ember.quantize_per_tensor(ember.tensor([0.5]), 0.25, 0, ember.qint8).int_repr()
    tensor([2], dtype=ember.int8)
    """
    if isinstance(input, (list, tuple)):
        return [quantize_per_tensor(x, s, z, dtype)
                for x, s, z in zip(input, scale, zero_point)]
    if isinstance(scale, Tensor):
        scale = scale.item()
    if isinstance(zero_point, Tensor):
        zero_point = int(zero_point.item())
    _check_quantized_dtype(dtype)
    _check_float_input(input)
    _check_zero_point(zero_point, dtype, "quantize_tensor_per_tensor_affine")
    xp = get_array_module(input._data)
    q = _quantize_array(input.detach()._data, xp.float32(scale), zero_point, dtype)
    return _make(Tensor._make(q), dtype, per_tensor_affine, float(scale), int(zero_point))


def quantize_per_channel(input, scales, zero_points, axis, dtype):
    """Quantize a float32 tensor with one scale and zero point per index along ``axis``
    (kept as float64 scales and int64 zero points, as PyTorch).

    >>> import ember
    >>> q = ember.quantize_per_channel(ember.tensor([[1.0, 1.0]]), ember.tensor([0.1, 0.5]),
    ...                                ember.tensor([0, 0]), 1, ember.qint8)
    >>> q.int_repr()
    tensor([[10,  2]], dtype=ember.int8)
    """
    _check_quantized_dtype(dtype)
    _check_float_input(input)
    if dtype.name in _PACKED_BITS:
        raise NotImplementedError(f"\"quantize_tensor_per_channel_affine\" not implemented for "
                                  f"'{dtype.scalar_name}'")
    if not 0 <= axis < input.dim():
        raise RuntimeError("Channel axis out of range in per channel affine quantization. "
                           f"Got: {axis}Expected: [0, {input.dim()})")
    if scales.numel() != input.shape[axis]:
        raise RuntimeError(f"length of scales must equal to channel, expected "
                           f"{input.shape[axis]} got, {scales.numel()}")
    if zero_points.numel() != input.shape[axis]:
        raise RuntimeError(f"length of zero_points must equal to channel expected "
                           f"{input.shape[axis]} got, {zero_points.numel()}")
    scales = scales.detach().to(float64).contiguous()
    zero_points = zero_points.detach().to(int64).contiguous()
    for zp in zero_points.tolist():
        _check_zero_point(zp, dtype, "quantize_tensor_per_channel_affine")
    d = input.detach()._data
    xp = get_array_module(d)
    shape = [1] * d.ndim
    shape[axis] = -1
    scale32 = scales._data.astype(xp.float32).reshape(shape)
    q = _quantize_array(d, scale32, zero_points._data.reshape(shape), dtype)
    return _make(Tensor._make(q), dtype, per_channel_affine, scales, zero_points, axis)


def _dequantize_array(q):
    int_repr, _, qscheme, scale, zero_point, axis = _parts(q)
    d = int_repr._data
    xp = get_array_module(d)
    if axis is None:  # float32 arithmetic, as PyTorch's per-tensor kernel
        return (d.astype(xp.int64) - zero_point).astype(xp.float32) * xp.float32(scale)
    shape = [1] * d.ndim
    shape[axis] = -1
    s = scale._data.reshape(shape)
    z = zero_point._data.reshape(shape)
    return ((d.astype(xp.int64) - z) * s).astype(xp.float32)


def dequantize(tensor):
    """The real values of a quantized tensor (float32); a dense tensor is returned as it is,
    a list gives a list.

    >>> import ember
    >>> q = ember.quantize_per_tensor(ember.tensor([0.3]), 0.1, 0, ember.quint8)
    >>> ember.dequantize(q)
    tensor([0.3000])
    """
    if isinstance(tensor, (list, tuple)):
        return tuple(dequantize(t) for t in tensor)
    if not _is_quantized(tensor):
        return tensor
    return Tensor._make(_dequantize_array(tensor))


# ---- what a quantized tensor answers -------------------------------------------------------
handles = registrar(HANDLERS)


def _int_repr_of(q):
    return _parts(q)[0]


def _delegate(name):
    """A metadata call answered by the integer representation."""
    def answer(q, *args, **kwargs):
        target = getattr(type(_int_repr_of(q)), name)
        if isinstance(target, property):
            return target.fget(_int_repr_of(q))
        return target(_int_repr_of(q), *args, **kwargs)
    return answer


for _name in ("shape", "size", "dim", "ndimension", "ndim", "numel", "nelement", "device",
              "is_cuda", "is_cpu", "is_meta", "layout", "is_sparse", "element_size",
              "itemsize", "stride", "is_contiguous", "storage_offset", "data_ptr", "__len__",
              "is_leaf", "is_complex", "is_floating_point"):
    HANDLERS[_name] = _delegate(_name)
del _name


@handles("dtype")
def _dtype(q):
    return _parts(q)[1]


@handles("is_quantized")
def _is_quantized_property(q):
    return True


@handles("requires_grad")
def _requires_grad(q):
    return False


@handles("grad_fn", "grad")
def _none(q):
    return None


@handles("dequantize")
def _dequantize(q):
    return dequantize(q)


_PACKED_BITS = {"quint4x2": 4, "quint2x4": 2}


@handles("int_repr")
def _int_repr(q):
    """The integers; the sub-byte types packed as PyTorch stores them, low bits first,
    ``8 // bits`` values a byte (a 1-D uint8 tensor)."""
    int_repr, dtype = _parts(q)[:2]
    bits = _PACKED_BITS.get(dtype.name)
    if bits is None:
        return int_repr.clone()
    d = int_repr._data.reshape(-1)
    xp = get_array_module(d)
    per_byte = 8 // bits
    padded = xp.zeros(-(-d.size // per_byte) * per_byte, dtype=xp.uint8)
    padded[:d.size] = d
    lanes = padded.reshape(-1, per_byte).astype(xp.uint8)
    packed = xp.zeros(lanes.shape[0], dtype=xp.uint8)
    for lane in range(per_byte):
        packed |= lanes[:, lane] << xp.uint8(bits * lane)
    return Tensor._make(packed)


@handles("qscheme")
def _qscheme(q):
    return _parts(q)[2]


def _per_tensor_only(q):
    if _parts(q)[5] is not None:
        raise RuntimeError(f"Expected quantizer->qscheme() == kPerTensorAffine {_ENHANCE}")


def _per_channel_only(q):
    if _parts(q)[5] is None:
        raise RuntimeError("Expected quantizer->qscheme() == kPerChannelAffine || "
                           "quantizer->qscheme() == kPerChannelAffineFloatQParams "
                           f"{_ENHANCE}")


@handles("q_scale")
def _q_scale(q):
    _per_tensor_only(q)
    return _parts(q)[3]


@handles("q_zero_point")
def _q_zero_point(q):
    _per_tensor_only(q)
    return _parts(q)[4]


@handles("q_per_channel_scales")
def _q_per_channel_scales(q):
    _per_channel_only(q)
    return _parts(q)[3].clone()


@handles("q_per_channel_zero_points")
def _q_per_channel_zero_points(q):
    _per_channel_only(q)
    return _parts(q)[4].clone()


@handles("q_per_channel_axis")
def _q_per_channel_axis(q):
    _per_channel_only(q)
    return _parts(q)[5]


def _with_int_repr(q, int_repr):
    _, dtype, qscheme, scale, zero_point, axis = _parts(q)
    return _make(int_repr, dtype, qscheme, scale, zero_point, axis)


@handles("clone")
def _clone(q, *, memory_format=None):
    if memory_format is not None:
        raise NotImplementedError("clone of a quantized tensor with memory_format")
    return _with_int_repr(q, _int_repr_of(q).clone())


@handles("detach", "contiguous")
def _detach(q):
    return _with_int_repr(q, _int_repr_of(q))


@handles("__deepcopy__")
def _deepcopy(q, memo):
    if id(q) not in memo:
        int_repr, dtype, qscheme, scale, zero_point, axis = _parts(q)
        memo[id(q)] = _make(int_repr.clone(), dtype, qscheme, copy.deepcopy(scale, memo),
                            copy.deepcopy(zero_point, memo), axis)
    return memo[id(q)]


def _shape_op(name):
    """A view (reshape, transpose, ...) of a per-tensor quantized tensor: the same view of
    its integers; per channel the axis would have to follow (not done: NotImplementedError)."""
    def view(q, *args, **kwargs):
        if _parts(q)[5] is not None:
            raise NotImplementedError(f"{name} of a per-channel quantized tensor")
        if _parts(q)[1].name in _PACKED_BITS:
            raise NotImplementedError(f"{name} of a {_parts(q)[1].name} tensor")
        return _with_int_repr(q, getattr(_int_repr_of(q), name)(*args, **kwargs))
    return view


for _name in ("reshape", "view", "flatten", "t", "transpose", "permute", "squeeze",
              "unsqueeze"):
    HANDLERS[_name] = _shape_op(_name)
del _name


@handles("equal")
def _equal(a, b):
    if not (_is_quantized(a) and _is_quantized(b)):
        raise no_quantized_kernel("equal")
    pa, pb = _parts(a), _parts(b)
    if pa[1] is not pb[1] or pa[2] is not pb[2] or pa[0].shape != pb[0].shape:
        return False
    if pa[5] is None:
        same_qparams = pa[3] == pb[3] and pa[4] == pb[4]
    else:
        same_qparams = pa[5] == pb[5] and bool((pa[3] == pb[3]).all()) and \
            bool((pa[4] == pb[4]).all())
    return same_qparams and bool((pa[0] == pb[0]).all())


# ---- printing ------------------------------------------------------------------------------
def _add_suffixes(text, suffixes, indent):
    """PyTorch's layout of a repr's trailing ``key=value`` parts: on the line while it fits
    ``linewidth``, else on a new line at ``indent``."""
    pieces = [text]
    last_line = len(text) - text.rfind("\n") + 1
    for suffix in suffixes:
        if last_line + len(suffix) + 2 > PRINT_OPTS.linewidth:
            pieces.append(",\n" + " " * indent + suffix)
            last_line = indent + len(suffix)
        else:
            pieces.append(", " + suffix)
            last_line += len(suffix) + 2
    return "".join(pieces) + ")"


@handles("__repr__", "__str__")
def _repr(q, *args, **kwargs):
    int_repr, dtype, qscheme, scale, zero_point, axis = _parts(q)
    body = tensor_repr(Tensor._make(_dequantize_array(q)))[:-1]  # float32: no suffixes
    suffixes = [f"size={tuple(int_repr.shape)}", f"dtype={dtype!r}",
                f"quantization_scheme={qscheme!r}"]
    if axis is None:
        suffixes += [f"scale={scale}", f"zero_point={zero_point}"]
    else:
        suffixes += [f"scale={tensor_repr(scale)}", f"zero_point={tensor_repr(zero_point)}",
                     f"axis={axis}"]
    return _add_suffixes(body, suffixes, len("tensor("))


@handles("__format__")
def _format(q, format_spec):
    return format(_repr(q), format_spec)


# ---- the methods dense tensors have for these calls --------------------------------------
def _dense_refusal(name):
    def refuse(self):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could "
            "be because the operator doesn't exist for this backend, or was omitted during "
            "the selective/custom build process (if using custom build).")
    refuse.__name__ = name
    return refuse


def _dense_dequantize(self):
    """A dense tensor's values are already real: the tensor itself (PyTorch's)."""
    return self


_dense_dequantize.__name__ = "dequantize"
_QUANTIZED_METHODS = ("int_repr", "q_scale", "q_zero_point", "q_per_channel_scales",
                      "q_per_channel_zero_points", "q_per_channel_axis", "qscheme")
for _name in _QUANTIZED_METHODS:
    setattr(Tensor, _name, _dense_refusal(_name))  # a dense tensor refuses them, as PyTorch
    setattr(QuantizedTensor, _name, HANDLERS[_name])  # plain methods: no dispatch to reach
del _name
Tensor.dequantize = _dense_dequantize
QuantizedTensor.dequantize = _dequantize
