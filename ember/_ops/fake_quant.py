"""Fake quantization: round to a quantized grid and back, in floating point (PyTorch's
``fake_quantize_per_tensor_affine``, ``fake_quantize_per_channel_affine`` and the learnable
LSQ forms ``_fake_quantize_learnable_per_{tensor,channel}_affine``).

``y = (clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale``,
rounding half to even, with PyTorch's arithmetic step for step so the values are
bit-identical: per tensor, ``x`` is multiplied by ``1 / scale`` taken in float32 and the
result formed in float32 (then cast to ``x``'s dtype); per channel, ``x`` is divided by
the float32 scales in ``x``'s dtype (float32 for half types). The gradient with respect to
``x`` is straight-through: ``grad`` where the rounded value fell inside
``[quant_min, quant_max]``, zero elsewhere. The learnable forms also give gradients for
``scale`` and ``zero_point`` (LSQ, scaled by ``grad_factor``), computed in float32 as
PyTorch does (their backward takes float32 gradients only).

>>> import ember
>>> x = ember.tensor([0.25, 0.35, -0.25, 30.0])
>>> ember.fake_quantize_per_tensor_affine(x, 0.1, 3, 0, 255)
tensor([ 0.2000,  0.4000, -0.2000, 25.2000])
"""
from __future__ import annotations

import numbers

from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.dtypes import _BY_NUMPY, is_float_np
from ..autograd.grad_mode import is_grad_enabled
from .primitive import Primitive

_QUANT_RANGE = "`quant_min` should be less than or         equal to `quant_max`."
_ZERO_POINT_RANGE = "`zero_point` must be between `quant_min` and `quant_max`."
_LEARNABLE_GRAD_DTYPE = ("Expected dY_.scalar_type() == ScalarType::Float to be true, but got "
                         "false.  (Could this error message be improved?  If so, please report "
                         "an enhancement request to PyTorch.)")


def _scalar_name(np_dtype):
    return _BY_NUMPY[np_dtype].scalar_name


def _compute_dtype(d, xp):
    """The dtype PyTorch's CPU kernels compute in: double for double, float otherwise."""
    return d.dtype if d.dtype == xp.float64 else xp.dtype(xp.float32)


def _check_float_input(x, kernel):
    if not is_float_np(x._data.dtype):
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{_scalar_name(x._data.dtype)}'")


def per_tensor_arrays(d, scale, zero_point, quant_min, quant_max):
    """``(output, in_range)`` of per-tensor fake quantization of the array ``d``.

    NaN lands on ``quant_min`` and infinities on the nearer bound, as in PyTorch.
    """
    xp = get_array_module(d)
    wide = _compute_dtype(d, xp)
    scale32 = xp.float32(scale)
    inv_scale = xp.float32(1.0) / scale32
    q = xp.rint(d.astype(wide, copy=False) * wide.type(inv_scale)) + wide.type(zero_point)
    in_range = (q >= quant_min) & (q <= quant_max)
    clamped = xp.fmin(xp.fmax(q, quant_min), quant_max)
    out = (clamped - zero_point).astype(xp.float32) * scale32
    return out.astype(d.dtype, copy=False), in_range


def _channel_view(v, ndim, axis):
    """A 1-D per-channel array shaped to broadcast along ``axis`` of an ``ndim``-d array."""
    shape = [1] * ndim
    shape[axis] = v.shape[0]
    return v.reshape(shape)


def per_channel_arrays(d, scale, zero_point, axis, quant_min, quant_max):
    """``(output, in_range)`` of per-channel fake quantization of the array ``d`` (``scale``
    and ``zero_point`` 1-D arrays along ``axis``; a float ``zero_point`` is added before
    rounding, an integer one after, as in PyTorch)."""
    xp = get_array_module(d)
    wide = _compute_dtype(d, xp)
    s = _channel_view(scale, d.ndim, axis).astype(wide)
    z = _channel_view(zero_point, d.ndim, axis)
    x = d.astype(wide, copy=False)
    if is_float_np(zero_point.dtype) and d.dtype == xp.float32:
        # PyTorch's vectorized float kernel: round(fma(x, 1 / scale, zero_point)) in float32,
        # then (q - zero_point) * scale in double; the float32 product is exact in double
        inv_scale = (xp.float32(1.0) / s).astype(xp.float64)
        z = z.astype(xp.float64)
        q = xp.rint((x.astype(xp.float64) * inv_scale + z).astype(xp.float32))
        s = s.astype(xp.float64)
    elif is_float_np(zero_point.dtype):
        z = z.astype(wide)
        q = xp.rint(x / s + z)
    else:
        z = z.astype(xp.int64)
        # x times 1 / scale (taken in float32), as PyTorch: a tie x / scale = k + 0.5 can
        # round the other way than the quotient would
        inv_scale = (xp.float32(1.0) / _channel_view(scale, d.ndim, axis).astype(xp.float32))
        q = xp.rint(x * inv_scale.astype(wide)) + z
    # PyTorch's per-channel kernel converts to int64 before clamping: NaN, infinities and
    # values past int64's range become int64's minimum (x86's conversion), so quant_min
    q = xp.where(xp.abs(q) < 2.0 ** 63, q, -(2.0 ** 63))
    in_range = (q >= quant_min) & (q <= quant_max)
    clamped = xp.fmin(xp.fmax(q, quant_min), quant_max)
    out = (clamped - z) * s
    return out.astype(d.dtype, copy=False), in_range


class FakeQuantizePerTensor(Primitive):
    """Per-tensor fake quantization with float qparams; straight-through gradient."""
    _backward_name = "FakeQuantizePerTensorAffineCachemaskBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max):
        out, in_range = per_tensor_arrays(x._data, scale, zero_point, quant_min, quant_max)
        ctx.in_range = in_range
        return out

    @staticmethod
    def backward(ctx, grad):
        return _pass_in_range(grad, ctx.in_range), None, None, None, None


class FakeQuantizePerTensorTensorQparams(FakeQuantizePerTensor):
    """The same op reached with tensor qparams (PyTorch names its node apart)."""
    _backward_name = "FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0"


class FakeQuantizePerChannel(Primitive):
    """Per-channel fake quantization; straight-through gradient."""
    _backward_name = "FakeQuantizePerChannelAffineCachemaskBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, axis, quant_min, quant_max):
        out, in_range = per_channel_arrays(x._data, scale._data, zero_point._data, axis,
                                           quant_min, quant_max)
        ctx.in_range = in_range
        return out

    @staticmethod
    def backward(ctx, grad):
        return _pass_in_range(grad, ctx.in_range), None, None, None, None, None


def _pass_in_range(grad, in_range):
    """``grad`` where ``in_range``, zero elsewhere (the straight-through estimator)."""
    return grad * Tensor._make(in_range.astype(grad._data.dtype))


def _check_range(quant_min, quant_max):
    if quant_min > quant_max:
        raise RuntimeError(_QUANT_RANGE)


def _invalid_combination(args):
    got = ", ".join(type(a).__name__ if not isinstance(a, Tensor) else "Tensor" for a in args)
    return TypeError(
        "fake_quantize_per_tensor_affine() received an invalid combination of arguments - got "
        f"({got}), but expected one of:\n"
        " * (Tensor input, Tensor scale, Tensor zero_point, int quant_min, int quant_max)\n"
        " * (Tensor input, float scale, int zero_point, int quant_min, int quant_max)\n")


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """Fake-quantize ``input`` with one ``scale`` and ``zero_point`` (floats, or tensors of
    one element); the gradient passes where the value was not clamped.

    >>> import ember
    >>> ember.fake_quantize_per_tensor_affine(ember.tensor([0.25, -1.0]), 0.1, 0, -5, 5)
    tensor([ 0.2000, -0.5000])
    """
    args = (input, scale, zero_point, quant_min, quant_max)
    if not (_is_int(quant_min) and _is_int(quant_max)) or not isinstance(input, Tensor):
        raise _invalid_combination(args)
    if isinstance(scale, Tensor) and isinstance(zero_point, Tensor):
        return _per_tensor_tensor_qparams(input, scale, zero_point, quant_min, quant_max)
    if not (isinstance(scale, numbers.Real) and _is_int(zero_point)):
        raise _invalid_combination(args)
    _check_range(quant_min, quant_max)
    if not quant_min <= zero_point <= quant_max:
        raise RuntimeError(_ZERO_POINT_RANGE)
    _check_float_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    return FakeQuantizePerTensor.apply(input, float(scale), int(zero_point), quant_min,
                                       quant_max)


def _per_tensor_tensor_qparams(input, scale, zero_point, quant_min, quant_max):
    if is_grad_enabled():
        for name, t in (("scale", scale), ("zero_point", zero_point)):
            if t.requires_grad:
                raise RuntimeError(
                    "The function '_fake_quantize_per_tensor_affine_cachemask_tensor_qparams' is "
                    f"not differentiable with respect to argument '{name}'. This input cannot "
                    "have requires_grad True.")
    _check_range(quant_min, quant_max)
    scale_value = float(scale.item())
    zero_point_value = int(zero_point.item())  # a float zero point is truncated, as there
    _check_float_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    return FakeQuantizePerTensorTensorQparams.apply(input, scale_value, zero_point_value,
                                                    quant_min, quant_max)


def _check_per_channel(input, scale, zero_point, axis, quant_min, quant_max,
                       int_zero_point_checked=True):
    """PyTorch's checks of a per-channel call, in its order."""
    if scale.dtype.name not in ("float32", "bfloat16"):
        raise RuntimeError(f"Scale must be Float or BFloat16, found {scale.dtype.scalar_name}")
    # the learnable form rounds its zero points to int32 first, so takes any dtype
    if int_zero_point_checked and zero_point.dtype.name not in ("int32", "float32",
                                                                 "float16"):
        raise RuntimeError("Zero-point must be Int32, Float or Half, found "
                           f"{zero_point.dtype.scalar_name}")
    if scale.dim() != 1:
        raise RuntimeError("scale should be a 1-D tensor")
    if zero_point.dim() != 1:
        raise RuntimeError("zero point should be a 1-D tensor")
    if scale.numel() != zero_point.numel():
        raise RuntimeError("scale and zero-point need to have the same dimensions")
    if input.dim() == 0:
        raise IndexError(f"Dimension specified as {axis} but tensor has no dimensions")
    if scale.numel() != input.size(axis):
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    _check_range(quant_min, quant_max)
    if int_zero_point_checked and not zero_point.dtype.is_floating_point \
            and zero_point.numel() > 0:
        zp = zero_point._data
        if int(zp.min()) < quant_min or int(zp.max()) > quant_max:
            raise RuntimeError(_ZERO_POINT_RANGE)
    if not 0 <= axis <= input.dim():
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """Fake-quantize ``input`` with one ``scale``/``zero_point`` per index along ``axis``
    (``scale`` float32, ``zero_point`` int32, float32 or float16).

    >>> import ember
    >>> x = ember.tensor([[0.25, 0.25]])
    >>> ember.fake_quantize_per_channel_affine(x, ember.tensor([0.1, 0.2]),
    ...     ember.tensor([0, 0], dtype=ember.int32), 1, -128, 127)
    tensor([[0.2000, 0.2000]])
    """
    for name, v in (("quant_min", quant_min), ("quant_max", quant_max), ("axis", axis)):
        if not _is_int(v):
            pos = {"axis": 4, "quant_min": 5, "quant_max": 6}[name]
            raise TypeError(f"fake_quantize_per_channel_affine(): argument '{name}' (position "
                            f"{pos}) must be int, not {type(v).__name__}")
    _check_per_channel(input, scale, zero_point, axis, quant_min, quant_max)
    _check_float_input(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    return FakeQuantizePerChannel.apply(input, scale.detach(), zero_point.detach(), axis,
                                        quant_min, quant_max)


# ---- learnable (LSQ) forms ---------------------------------------------------------------
def _lsq_grads(x, dy, scale, zero_point, quant_min, quant_max, grad_factor):
    """Per-element ``(dx, dscale, dzero_point)`` float32 arrays of PyTorch's LSQ kernel
    (``scale`` and ``zero_point`` float32 scalars or arrays broadcasting against ``x``)."""
    xp = get_array_module(x)
    f32 = xp.float32
    factor = f32(grad_factor)
    inv_scale = f32(1.0) / scale
    q = xp.rint(zero_point + x * inv_scale)
    in_range = (q >= quant_min) & (q <= quant_max)
    dx = dy * in_range.astype(f32)
    clamped = xp.fmin(xp.fmax(q, quant_min), quant_max)
    fake = ((clamped - zero_point) * scale).astype(f32)
    below = q < quant_min
    dscale_out = xp.where(below, dy * f32(quant_min - zero_point),
                          dy * f32(quant_max - zero_point)) * factor
    dscale_in = dy * (fake - x) * inv_scale * factor
    dscale = xp.where(in_range, dscale_in, dscale_out).astype(f32)
    dzero_point = xp.where(in_range, f32(0.0), dy * f32(-1.0) * scale * factor).astype(f32)
    return dx, dscale, dzero_point


class FakeQuantizeLearnablePerTensor(Primitive):
    """LSQ per-tensor fake quantization: gradients for ``x``, ``scale`` and
    ``zero_point``."""
    _backward_name = "FakeQuantizeLearnablePerTensorAffineBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, quant_min, quant_max, grad_factor):
        xp = get_array_module(x._data)
        scale_value = xp.float32(scale._data.reshape(-1)[0])
        zp = xp.float32(zero_point._data.reshape(-1)[0])
        zp_forward = int(min(max(float(xp.rint(zp)), quant_min), quant_max))
        ctx.save_for_backward(x)
        ctx.qparams = (scale_value, zp, quant_min, quant_max, grad_factor)
        ctx.shapes = (scale.shape, zero_point.shape)
        out, _ = per_tensor_arrays(x._data, scale_value, zp_forward, quant_min, quant_max)
        return out

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        if grad._data.dtype.name != "float32" or x._data.dtype.name != "float32":
            raise RuntimeError(_LEARNABLE_GRAD_DTYPE)
        scale_value, zp, quant_min, quant_max, grad_factor = ctx.qparams
        # backward rounds the zero point half up (truncating zp + 0.5), forward half to even
        zp_backward = float(int(min(max(float(zp + 0.5), quant_min), quant_max)))
        xp = get_array_module(x._data)
        dx, dscale, dzero_point = _lsq_grads(x._data, grad._data, scale_value,
                                             xp.float32(zp_backward), quant_min, quant_max,
                                             grad_factor)
        scale_shape, zp_shape = ctx.shapes
        dscale = dscale.sum(dtype=xp.float32).reshape(1)
        dzero_point = dzero_point.sum(dtype=xp.float32).reshape(1)
        return (Tensor._make(dx), Tensor._make(dscale), Tensor._make(dzero_point),
                None, None, None)


class FakeQuantizeLearnablePerChannel(Primitive):
    """LSQ per-channel fake quantization: gradients for ``x``, ``scale`` and
    ``zero_point`` (one per channel along ``axis``)."""
    _backward_name = "FakeQuantizeLearnablePerChannelAffineBackward0"

    @staticmethod
    def forward(ctx, x, scale, zero_point, axis, quant_min, quant_max, grad_factor):
        xp = get_array_module(x._data)
        zp_rounded = xp.clip(xp.rint(zero_point._data), quant_min, quant_max)
        ctx.save_for_backward(x, scale)
        ctx.rest = (zp_rounded, axis, quant_min, quant_max, grad_factor)
        out, _ = per_channel_arrays(x._data, scale._data, zp_rounded.astype(xp.int32), axis,
                                    quant_min, quant_max)
        return out

    @staticmethod
    def backward(ctx, grad):
        x, scale = ctx.saved_tensors
        if grad._data.dtype.name != "float32" or x._data.dtype.name != "float32":
            raise RuntimeError(_LEARNABLE_GRAD_DTYPE)
        zp_rounded, axis, quant_min, quant_max, grad_factor = ctx.rest
        xp = get_array_module(x._data)
        ndim = x._data.ndim
        s = _channel_view(scale._data.astype(xp.float32), ndim, axis)
        z = _channel_view(zp_rounded.astype(xp.float32), ndim, axis)
        dx, dscale, dzero_point = _lsq_grads(x._data, grad._data, s, z, quant_min, quant_max,
                                             grad_factor)
        others = tuple(d for d in range(ndim) if d != axis)
        dscale = dscale.sum(axis=others, dtype=xp.float32)
        dzero_point = dzero_point.sum(axis=others, dtype=xp.float32)
        return (Tensor._make(dx), Tensor._make(dscale), Tensor._make(dzero_point),
                None, None, None, None)


def _fake_quantize_learnable_per_tensor_affine(input, scale, zero_point, quant_min,
                                               quant_max, grad_factor=1.0):
    """LSQ fake quantization with learnable ``scale`` and ``zero_point`` (1-element
    tensors): the forward of ``fake_quantize_per_tensor_affine`` with the zero point
    rounded and clamped into range; backward gives all three gradients, the qparams'
    scaled by ``grad_factor`` (float32 gradients only, as PyTorch).

    >>> import ember
    >>> s = ember.tensor([0.1], requires_grad=True)
    >>> z = ember.tensor([0.0], requires_grad=True)
    >>> y = ember._fake_quantize_learnable_per_tensor_affine(ember.tensor([0.26]), s, z, 0, 9)
    >>> y.sum().backward(); s.grad
    tensor([0.4000])
    """
    _check_range(quant_min, quant_max)
    if scale.dim() == 0 or zero_point.dim() == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    _check_float_input(input, "fake_quantize_tensor_cachemask_kernel_type_handling")
    return FakeQuantizeLearnablePerTensor.apply(input, scale, zero_point, quant_min, quant_max,
                                                float(grad_factor))


def _fake_quantize_learnable_per_channel_affine(input, scale, zero_point, axis, quant_min,
                                                quant_max, grad_factor=1.0):
    """LSQ fake quantization per channel along ``axis`` with learnable ``scale`` and
    ``zero_point`` (1-D float tensors; the zero points rounded half to even and clamped in
    the forward). Gradients as the per-tensor form, summed per channel.

    >>> import ember
    >>> s = ember.tensor([0.1, 0.2], requires_grad=True)
    >>> z = ember.tensor([0.0, 1.0])
    >>> ember._fake_quantize_learnable_per_channel_affine(ember.ones(1, 2), s, z, 1, 0, 255)
    tensor([[1., 1.]], grad_fn=<FakeQuantizeLearnablePerChannelAffineBackward0>)
    """
    _check_per_channel(input, scale, zero_point, axis, quant_min, quant_max,
                       int_zero_point_checked=False)
    _check_float_input(input, "fake_quantize_channel_cachemask_cpu_type_handling")
    return FakeQuantizeLearnablePerChannel.apply(input, scale, zero_point, axis, quant_min,
                                                 quant_max, float(grad_factor))
