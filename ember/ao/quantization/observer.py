"""Observers: modules that watch the tensors passing through them (the running minimum and
maximum, per tensor or per channel, plain or as a moving average) and turn what they saw
into quantization parameters (``calculate_qparams()``: scale and zero point), as PyTorch's
``torch.ao.quantization.observer``.

>>> import ember
>>> from ember.ao.quantization import MinMaxObserver
>>> obs = MinMaxObserver()
>>> _ = obs(ember.tensor([-1.0, 3.0]))
>>> obs.calculate_qparams()
(tensor([0.0157]), tensor([64], dtype=ember.int32))
"""
from __future__ import annotations

import warnings
from functools import partial

from . import _ember as ember
from ... import nn

_F32_EPS = 1.1920928955078125e-07  # ember.finfo(ember.float32).eps


class _PartialWrapper:
    """A constructor with some keyword arguments bound (what ``with_args`` gives): calling
    it makes a fresh instance each time."""

    def __init__(self, p):
        self.p = p
        self.callable_args = {}

    def __call__(self, *args, **keywords):
        for name, make in self.callable_args.items():
            if name not in keywords:
                keywords = {**keywords, name: make()}
        return self.p(*args, **keywords)

    def __repr__(self):
        return repr(self.p) + repr(self.callable_args)

    def with_args(self, **kwargs):
        return _with_args(self, **kwargs)

    def with_callable_args(self, **kwargs):
        result = _PartialWrapper(self.p)
        result.callable_args = {**self.callable_args, **kwargs}
        return result


def _with_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self, **kwargs))


def _with_callable_args(cls_or_self, **kwargs):
    return _PartialWrapper(partial(cls_or_self)).with_callable_args(**kwargs)


def is_per_tensor(qscheme):
    return qscheme in (ember.per_tensor_affine, ember.per_tensor_symmetric)


def is_per_channel(qscheme):
    return qscheme in (ember.per_channel_affine, ember.per_channel_affine_float_qparams,
                       ember.per_channel_symmetric)


def _allowed_dtypes():
    return (ember.qint8, ember.quint8, ember.quint4x2, ember.qint32, ember.int8, ember.uint8,
            ember.int16, ember.int32, ember.float8_e5m2, ember.float8_e4m3fn, ember.uint16)


def validate_qmin_qmax(quant_min, quant_max):
    """PyTorch's checks of a user-given quantization range (AssertionError)."""
    if not quant_min <= 0 <= quant_max:
        raise AssertionError("Used-specified quantization range must include 0.")
    if quant_min >= quant_max:
        raise AssertionError(
            "qmin must be strictly less than qmax for user-specified quantization range.")


def calculate_qmin_qmax(quant_min, quant_max, has_customized_qrange, dtype, reduce_range):
    """The quantization range an observer uses: the given one (halved by ``reduce_range``)
    or the dtype's 8-bit (7-bit with ``reduce_range``) default."""
    if has_customized_qrange:
        span = quant_max - quant_min + 1
        if dtype in (ember.qint8, ember.int8) and not 0 < span <= 256:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=256).")
        if dtype in (ember.qint32, ember.int32) and not 0 < span <= 2 ** 32:
            raise AssertionError("quantization range should be positive and not exceed the "
                                 "maximum bit range (=4294967296).")
        if reduce_range:
            quant_min, quant_max = quant_min // 2, quant_max // 2
        return quant_min, quant_max
    if dtype in (ember.qint8, ember.int8):
        return (-64, 63) if reduce_range else (-128, 127)
    if dtype in (ember.quint8, ember.uint8):
        return (0, 127) if reduce_range else (0, 255)
    if dtype in (ember.qint32, ember.int32):
        return -(2 ** 31), 2 ** 31 - 1
    if dtype == ember.uint16:
        return 0, 2 ** 16 - 1
    if dtype == ember.int16:
        return -(2 ** 15), 2 ** 15 - 1
    return 0, 15


def check_min_max_valid(min_val, max_val):
    """Whether an observer has seen data (warns if not); AssertionError if min > max."""
    if min_val.numel() == 0 or max_val.numel() == 0:
        warnings.warn("must run observer before calling calculate_qparams. Returning default "
                      "values.", stacklevel=2)
        return False
    if min_val.dim() == 0 or max_val.dim() == 0:
        if min_val == float("inf") and max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams. Returning "
                          "default values.", stacklevel=2)
            return False
        if min_val > max_val:
            raise AssertionError(f"min {min_val} should be less than max {max_val}")
    elif ember.any(min_val > max_val):
        raise AssertionError(f"min {min_val} should be less than max {max_val}")
    return True


class ObserverBase(nn.Module):
    """Base of the observers: ``forward`` records statistics, ``calculate_qparams`` turns
    them into a scale and a zero point."""

    def __init__(self, dtype, is_dynamic=False):
        super().__init__()
        self.dtype = dtype
        self.is_dynamic = is_dynamic

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    with_args = classmethod(_with_args)
    with_callable_args = classmethod(_with_callable_args)


class UniformQuantizationObserverBase(ObserverBase):
    """Observers of a uniform (affine or symmetric) quantization: the range, ``eps`` and
    the shared scale/zero-point formula."""

    def __init__(self, dtype=None, qscheme=None, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=_F32_EPS, is_dynamic=False,
                 **kwargs):
        dtype = ember.quint8 if dtype is None else dtype
        qscheme = ember.per_tensor_affine if qscheme is None else qscheme
        factory_kwargs = factory_kwargs or {}
        super().__init__(dtype=dtype, is_dynamic=is_dynamic, **kwargs)
        self.qscheme = qscheme
        if reduce_range:
            warnings.warn("Please use quant_min and quant_max to specify the range for "
                          "observers.                     reduce_range will be deprecated in "
                          "a future release of PyTorch.", stacklevel=2)
        self.reduce_range = reduce_range
        self.register_buffer("eps", ember.tensor([eps], **factory_kwargs))
        if not (is_per_tensor(qscheme) or is_per_channel(qscheme)):
            raise AssertionError(
                "Default Observer only works for per_tensor_affine, per_tensor_symmetric, "
                "per_channel_affine, per_channel_symmetric and per_channel_float_qparams "
                "quantization scheme")
        if self.dtype not in _allowed_dtypes():
            raise AssertionError(f"Default Observer only works for {_allowed_dtypes()} data "
                                 "type")
        self.has_customized_qrange = quant_min is not None and quant_max is not None
        if self.has_customized_qrange:
            validate_qmin_qmax(quant_min, quant_max)
        self.quant_min, self.quant_max = calculate_qmin_qmax(
            quant_min, quant_max, self.has_customized_qrange, self.dtype, self.reduce_range)

    def _calculate_qparams(self, min_val, max_val):
        """Scale(s) and zero point(s) of the range ``[min_val, max_val]`` (made to include
        zero), by the observer's scheme."""
        if not check_min_max_valid(min_val, max_val):
            return ember.tensor([1.0]), ember.tensor([0])
        quant_min, quant_max = self.quant_min, self.quant_max
        min_val_neg = ember.min(min_val, ember.zeros_like(min_val))
        max_val_pos = ember.max(max_val, ember.zeros_like(max_val))
        zero_point = ember.zeros(min_val_neg.size(), dtype=ember.int64)
        if self.qscheme in (ember.per_tensor_symmetric, ember.per_channel_symmetric):
            max_val_pos = ember.max(-min_val_neg, max_val_pos)
            scale = max_val_pos / (float(quant_max - quant_min) / 2)
            scale = ember.max(scale, self.eps)
            if self.dtype in (ember.quint8, ember.uint8):
                middle = (quant_min + quant_max) // 2 if self.has_customized_qrange else 128
                zero_point = zero_point.new_full(zero_point.size(), middle)
            elif self.dtype == ember.uint16:
                zero_point = zero_point.new_full(zero_point.size(), 2 ** 15)
        elif self.qscheme == ember.per_channel_affine_float_qparams:
            scale = (max_val - min_val) / float(quant_max - quant_min)
            scale = ember.where(scale > self.eps, scale, ember.ones_like(scale))
            zero_point = -1 * min_val / scale
        else:
            scale = (max_val_pos - min_val_neg) / float(quant_max - quant_min)
            scale = ember.max(scale, self.eps)
            zero_point = quant_min - ember.round(min_val_neg / scale).to(ember.int)
            zero_point = ember.clamp(zero_point, quant_min, quant_max)
        if scale.dim() == 0:  # per tensor: one-element tensors, as FakeQuantize's buffers
            scale = ember.tensor([float(scale)], dtype=scale.dtype)
        if zero_point.dim() == 0:
            if self.qscheme == ember.per_channel_affine_float_qparams:
                zero_point = ember.tensor([float(zero_point)], dtype=zero_point.dtype)
            else:
                zero_point = ember.tensor([int(zero_point)], dtype=zero_point.dtype)
        return scale, zero_point

    def reset_min_max_vals(self):
        raise NotImplementedError("Cannot reset min/max values in the given observer.")


class MinMaxObserver(UniformQuantizationObserverBase):
    """Records the running minimum and maximum of every tensor it sees (per tensor).

    >>> import ember
    >>> obs = MinMaxObserver(dtype=ember.qint8, qscheme=ember.per_tensor_symmetric)
    >>> _ = obs(ember.tensor([-2.0, 1.0]))
    >>> obs.calculate_qparams()
    (tensor([0.0157]), tensor([0]))
    """

    def __init__(self, dtype=None, qscheme=None, reduce_range=False, quant_min=None,
                 quant_max=None, factory_kwargs=None, eps=_F32_EPS, is_dynamic=False,
                 **kwargs):
        qscheme = ember.per_tensor_affine if qscheme is None else qscheme
        dtype = ember.quint8 if dtype is None else dtype
        if not is_per_tensor(qscheme):
            raise NotImplementedError(
                "MinMaxObserver's qscheme only support torch.per_tensor_symmetric "
                "                    and torch.per_tensor_affine.")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = factory_kwargs or {}
        self.register_buffer("min_val", ember.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", ember.tensor(float("-inf"), **factory_kwargs))
        if qscheme == ember.per_tensor_symmetric and reduce_range and dtype == ember.quint8:
            raise NotImplementedError("Cannot reduce range for symmetric                     "
                                      "                   quantization for quint8")

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_cur, max_cur = ember.aminmax(x)
        self.min_val.copy_(ember.min(min_cur, self.min_val))
        self.max_val.copy_(ember.max(max_cur, self.max_val))
        return x_orig

    def calculate_qparams(self):
        """``(scale, zero_point)`` of the range seen so far."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def reset_min_max_vals(self):
        self.min_val.copy_(ember.tensor(float("inf")))
        self.max_val.copy_(ember.tensor(float("-inf")))


class MovingAverageMinMaxObserver(MinMaxObserver):
    """Keeps ``min += c * (min(x) - min)`` (and the same for max), ``c`` the
    ``averaging_constant``; the first tensor sets both outright."""

    def __init__(self, averaging_constant=0.01, dtype=None, qscheme=None,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_F32_EPS,
                 is_dynamic=False, **kwargs):
        qscheme = ember.per_tensor_affine if qscheme is None else qscheme
        if not is_per_tensor(qscheme):
            raise NotImplementedError(
                "MovingAverageMinMaxObserver's qscheme only support                 "
                "torch.per_tensor_symmetric and torch.per_tensor_affine.                 "
                f"but got: {qscheme}")
        self.averaging_constant = averaging_constant
        if is_dynamic and averaging_constant != 1:
            raise NotImplementedError(
                "MovingAverageMinMaxObserver doesn't support dynamic quantization for "
                f"averaging constant of {averaging_constant}")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max, eps=eps,
                         is_dynamic=is_dynamic, **kwargs)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach().to(self.min_val.dtype)
        min_val, max_val = self.min_val, self.max_val
        if min_val == float("inf") and max_val == float("-inf"):
            min_val, max_val = ember.aminmax(x)
        else:
            min_cur, max_cur = ember.aminmax(x)
            min_val = min_val + self.averaging_constant * (min_cur - min_val)
            max_val = max_val + self.averaging_constant * (max_cur - max_val)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig


def _channels_first(x, ch_axis):
    """``x`` with ``ch_axis`` swapped to the front and the rest flattened: (C, N)."""
    order = list(range(x.dim()))
    order[ch_axis], order[0] = 0, ch_axis
    return ember.flatten(x.permute(order), start_dim=1)


class PerChannelMinMaxObserver(UniformQuantizationObserverBase):
    """Records the running minimum and maximum of each channel along ``ch_axis``."""

    def __init__(self, ch_axis=0, dtype=None, qscheme=None, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_F32_EPS,
                 is_dynamic=False, **kwargs):
        qscheme = ember.per_channel_affine if qscheme is None else qscheme
        dtype = ember.quint8 if dtype is None else dtype
        if not is_per_channel(qscheme):
            raise NotImplementedError(
                "PerChannelMinMaxObserver's qscheme only support                     "
                "torch.per_channel_symmetric, torch.per_channel_affine and "
                "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError(
                "PerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = factory_kwargs or {}
        self.ch_axis = ch_axis
        self.register_buffer("min_val", ember.tensor([], **factory_kwargs))
        self.register_buffer("max_val", ember.tensor([], **factory_kwargs))
        if qscheme == ember.per_channel_symmetric and reduce_range and dtype == ember.quint8:
            raise NotImplementedError(
                "Cannot reduce range for symmetric quantization for quint8")

    def _update(self, min_cur, max_cur):
        """The new running (min, max) given this batch's per-channel ones."""
        return ember.min(min_cur, self.min_val), ember.max(max_cur, self.max_val)

    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        y = _channels_first(x_orig.detach(), self.ch_axis).to(self.min_val.dtype)
        min_cur, max_cur = ember.aminmax(y, dim=1)
        if self.min_val.numel() == 0 or self.max_val.numel() == 0:
            min_val, max_val = min_cur, max_cur
        else:
            min_val, max_val = self._update(min_cur, max_cur)
        self.min_val.resize_(min_val.shape)
        self.max_val.resize_(max_val.shape)
        self.min_val.copy_(min_val)
        self.max_val.copy_(max_val)
        return x_orig

    def calculate_qparams(self):
        """``(scales, zero_points)``: one per channel."""
        return self._calculate_qparams(self.min_val, self.max_val)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        # the buffers take the saved shapes (they start empty)
        for name in ("min_val", "max_val"):
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(state_dict[key].shape)
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False,
                                      missing_keys, unexpected_keys, error_msgs)

    def reset_min_max_vals(self):
        self.min_val = ember.rand(0)
        self.max_val = ember.rand(0)


class MovingAveragePerChannelMinMaxObserver(PerChannelMinMaxObserver):
    """Per-channel moving averages of the minimum and maximum (see
    ``MovingAverageMinMaxObserver``)."""

    def __init__(self, averaging_constant=0.01, ch_axis=0, dtype=None, qscheme=None,
                 reduce_range=False, quant_min=None, quant_max=None, eps=_F32_EPS,
                 is_dynamic=False, **kwargs):
        qscheme = ember.per_channel_affine if qscheme is None else qscheme
        if not is_per_channel(qscheme):
            raise NotImplementedError(
                "MovingAveragePerChannelMinMaxObserver's qscheme only support                "
                "     torch.per_channel_symmetric, torch.per_channel_affine and "
                "torch.per_channel_affine_float_qparams.")
        if is_dynamic:
            raise NotImplementedError(
                "MovingAveragePerChannelMinMaxObserver doesn't support dynamic quantization")
        super().__init__(ch_axis=ch_axis, dtype=dtype, qscheme=qscheme,
                         reduce_range=reduce_range, quant_min=quant_min, quant_max=quant_max,
                         eps=eps, is_dynamic=is_dynamic, **kwargs)
        self.averaging_constant = averaging_constant

    def _update(self, min_cur, max_cur):
        c = self.averaging_constant
        return (self.min_val + c * (min_cur - self.min_val),
                self.max_val + c * (max_cur - self.max_val))


default_observer = MinMaxObserver.with_args(quant_min=0, quant_max=127)
default_weight_observer = MinMaxObserver.with_args(dtype=ember.qint8,
                                                   qscheme=ember.per_tensor_symmetric)
default_per_channel_weight_observer = PerChannelMinMaxObserver.with_args(
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric)
