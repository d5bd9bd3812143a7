"""Fake-quantize modules for quantization-aware training: an observer watches the input,
its qparams are kept in the ``scale`` and ``zero_point`` buffers, and the input is
fake-quantized with them (PyTorch's ``torch.ao.quantization.fake_quantize``).

>>> import ember
>>> from ember.ao.quantization import default_fake_quant
>>> fq = default_fake_quant()
>>> fq(ember.tensor([0.0, 0.3, 1.0]))
tensor([0.0000, 0.2992, 1.0000])
"""
from __future__ import annotations


from . import _ember as ember
from ... import nn

from ..._quantized.qparams import choose_qparams as _choose_qparams
from .observer import (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver,
                       _with_args, is_per_channel, is_per_tensor)


class FakeQuantizeBase(nn.Module):
    """Base of the fake-quantize modules: the ``fake_quant_enabled`` and
    ``observer_enabled`` switches (uint8 buffers) and their toggles."""

    def __init__(self):
        super().__init__()
        self.register_buffer("fake_quant_enabled", ember.tensor([1], dtype=ember.uint8))
        self.register_buffer("observer_enabled", ember.tensor([1], dtype=ember.uint8))

    def forward(self, x):
        raise NotImplementedError

    def calculate_qparams(self, **kwargs):
        raise NotImplementedError

    def enable_fake_quant(self, enabled=True):
        self.fake_quant_enabled[0] = 1 if enabled else 0

    def disable_fake_quant(self):
        self.enable_fake_quant(False)

    def enable_observer(self, enabled=True):
        self.observer_enabled[0] = 1 if enabled else 0

    def disable_observer(self):
        self.enable_observer(False)

    @classmethod
    def with_args(cls, **kwargs):
        return _with_args(cls, **kwargs)


def _iinfo_of(dtype):
    """The integer range of an observer dtype (quantized ones by their representation)."""
    if dtype in ember.QUANTIZED:
        lo_hi = {"quint8": (0, 255), "qint8": (-128, 127), "qint32": (-2 ** 31, 2 ** 31 - 1),
                 "quint4x2": (0, 15), "quint2x4": (0, 3)}
        return lo_hi[dtype.name]
    info = ember.iinfo(dtype)
    return info.min, info.max


class FakeQuantize(FakeQuantizeBase):
    """Observe (while ``observer_enabled``), then fake-quantize with the observer's qparams
    (while ``fake_quant_enabled``), per tensor or per channel as the observer's qscheme.

    >>> import ember
    >>> fq = FakeQuantize(quant_min=0, quant_max=255)
    >>> _ = fq(ember.tensor([-1.0, 1.0]))
    >>> fq.scale, fq.zero_point
    (tensor([0.0078]), tensor([127], dtype=ember.int32))
    """

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=None, quant_max=None,
                 is_dynamic=False, **observer_kwargs):
        super().__init__()
        if quant_min is not None and quant_max is not None:
            if quant_min > quant_max:
                raise AssertionError("quant_min must be less than or equal to quant_max")
            dtype = observer_kwargs.get("dtype", ember.quint8)
            if hasattr(observer, "p"):
                dtype = getattr(getattr(observer, "p", {}), "keywords", {}).get("dtype", dtype)
            lo, hi = _iinfo_of(dtype)
            if lo > quant_min:
                raise AssertionError("quant_min out of bound")
            if quant_max > hi:
                raise AssertionError("quant_max out of bound")
            observer_kwargs.update({"quant_min": quant_min, "quant_max": quant_max})
        observer_kwargs["is_dynamic"] = is_dynamic
        self.activation_post_process = observer(**observer_kwargs)
        self.quant_min = self.activation_post_process.quant_min
        self.quant_max = self.activation_post_process.quant_max
        self.is_dynamic = self.activation_post_process.is_dynamic
        float_qparams = self.activation_post_process.qscheme == \
            ember.per_channel_affine_float_qparams
        self.register_buffer("scale", ember.tensor([1.0], dtype=ember.float))
        self.register_buffer("zero_point", ember.tensor(
            [0], dtype=ember.float if float_qparams else ember.int))
        self.dtype = self.activation_post_process.dtype
        self.qscheme = self.activation_post_process.qscheme
        self.ch_axis = getattr(self.activation_post_process, "ch_axis", -1)
        if not (is_per_channel(self.qscheme) or is_per_tensor(self.qscheme)):
            raise AssertionError("Only per channel and per tensor quantization are supported "
                                 f"in fake quantize got qscheme: {self.qscheme}")
        self.is_per_channel = is_per_channel(self.qscheme)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        if self.observer_enabled[0] == 1:
            self.activation_post_process(X.detach())
            scale, zero_point = self.calculate_qparams()
            if self.scale.shape != scale.shape:
                self.scale.resize_(scale.shape)
                self.zero_point.resize_(zero_point.shape)
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point)
        if self.fake_quant_enabled[0] == 1:
            observer = self.activation_post_process
            if self.is_per_channel:
                X = ember.fake_quantize_per_channel_affine(
                    X, self.scale, self.zero_point, self.ch_axis, observer.quant_min,
                    observer.quant_max)
            else:
                X = ember.fake_quantize_per_tensor_affine(
                    X, self.scale, self.zero_point, observer.quant_min, observer.quant_max)
        return X

    def extra_repr(self):
        observer = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, quant_min={observer.quant_min}, "
                f"quant_max={observer.quant_max}, dtype={self.dtype}, qscheme={self.qscheme}, "
                f"ch_axis={self.ch_axis}, scale={self.scale}, zero_point={self.zero_point}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        # the buffers take the saved shapes (per-channel qparams grow from one element)
        for name in ("scale", "zero_point"):
            key = prefix + name
            if key in state_dict:
                getattr(self, name).resize_(state_dict[key].shape)
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)


class FusedMovingAvgObsFakeQuantize(FakeQuantize):
    """PyTorch's fused observer + fake quant module, run unfused here: the same moving
    average observer and fake quantization, its switches int64 buffers as there."""

    def __init__(self, observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255,
                 **observer_kwargs):
        super().__init__(observer, quant_min, quant_max, **observer_kwargs)
        if not isinstance(self.activation_post_process,
                          (MovingAverageMinMaxObserver, MovingAveragePerChannelMinMaxObserver)):
            raise AssertionError("Fused observer+fake_quant module only works with "
                                 "MovingAverageMinMaxObserver")
        self.register_buffer("fake_quant_enabled", ember.tensor([1], dtype=ember.long))
        self.register_buffer("observer_enabled", ember.tensor([1], dtype=ember.long))
        self.is_symmetric_quant = self.qscheme in (ember.per_tensor_symmetric,
                                                   ember.per_channel_symmetric)

    def calculate_qparams(self):
        return self.activation_post_process.calculate_qparams()

    def forward(self, X):
        observer = self.activation_post_process
        if self.observer_enabled[0] == 1:
            observer(X.detach())  # the same running min/max as the fused kernel's
            mins = observer.min_val.reshape(-1).tolist()
            maxs = observer.max_val.reshape(-1).tolist()
            qparams = [_choose_qparams(lo, hi, observer.quant_min, observer.quant_max,
                                       self.is_symmetric_quant) for lo, hi in zip(mins, maxs)]
            scale = ember.tensor([q[0] for q in qparams], dtype=ember.float)
            zero_point = ember.tensor([q[1] for q in qparams], dtype=self.zero_point.dtype)
            if self.scale.shape != scale.shape:
                self.scale.resize_(scale.shape)
                self.zero_point.resize_(zero_point.shape)
            self.scale.copy_(scale)
            self.zero_point.copy_(zero_point)
        if self.fake_quant_enabled[0] != 1:
            return X.clone()
        if self.is_per_channel:
            return ember.fake_quantize_per_channel_affine(
                X, self.scale, self.zero_point, self.ch_axis, observer.quant_min,
                observer.quant_max)
        return ember.fake_quantize_per_tensor_affine(X, self.scale, self.zero_point,
                                                     observer.quant_min, observer.quant_max)

    def extra_repr(self):
        observer = self.activation_post_process
        return (f"fake_quant_enabled={self.fake_quant_enabled}, "
                f"observer_enabled={self.observer_enabled}, scale={self.scale}, "
                f"zero_point={self.zero_point}, dtype={self.dtype}, "
                f"quant_min={observer.quant_min}, quant_max={observer.quant_max}, "
                f"qscheme={self.qscheme}, reduce_range={observer.reduce_range}")


default_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=ember.quint8,
    qscheme=ember.per_tensor_affine, reduce_range=True)
default_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_tensor_symmetric, reduce_range=False)
default_per_channel_weight_fake_quant = FakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric, reduce_range=False, ch_axis=0)
default_fused_act_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=0, quant_max=255, dtype=ember.quint8)
default_fused_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAverageMinMaxObserver, quant_min=-128, quant_max=127, dtype=ember.qint8,
    qscheme=ember.per_tensor_symmetric)
default_fused_per_channel_wt_fake_quant = FusedMovingAvgObsFakeQuantize.with_args(
    observer=MovingAveragePerChannelMinMaxObserver, quant_min=-128, quant_max=127,
    dtype=ember.qint8, qscheme=ember.per_channel_symmetric)


def disable_fake_quant(mod):
    """``mod.apply(disable_fake_quant)`` turns fake quantization off in every submodule."""
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_fake_quant()


def enable_fake_quant(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_fake_quant()


def disable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.disable_observer()


def enable_observer(mod):
    if isinstance(mod, FakeQuantizeBase):
        mod.enable_observer()
