"""``HistogramObserver``: a running histogram of the values seen (over their running range),
from which ``calculate_qparams`` picks the sub-range whose uniform quantization has the
least L2 error (a greedy search trimming the histogram's ends), as PyTorch's.

>>> import ember
>>> obs = HistogramObserver(bins=64)
>>> _ = obs(ember.linspace(-1.0, 1.0, 101))
>>> obs.calculate_qparams()[1]
tensor([130], dtype=ember.int32)
"""
from __future__ import annotations

import warnings

from . import _ember as ember
from .observer import _F32_EPS, UniformQuantizationObserverBase, is_per_tensor

_RANGE_BITS = {"quint8": 8, "qint8": 8, "qint32": 32, "quint4x2": 8, "uint8": 8, "int8": 8,
               "int16": 16, "int32": 32, "uint16": 16}


class HistogramObserver(UniformQuantizationObserverBase):
    """Records a ``bins``-bin histogram of the values over their running min/max; a
    widened range re-bins the old histogram (each bin split 16 ways, the pieces' centres
    assigned to the new bins)."""

    def __init__(self, bins=2048, dtype=None, qscheme=None, reduce_range=False,
                 quant_min=None, quant_max=None, factory_kwargs=None, eps=_F32_EPS,
                 is_dynamic=False, **kwargs):
        qscheme = ember.per_tensor_affine if qscheme is None else qscheme
        if not is_per_tensor(qscheme):
            raise NotImplementedError(
                "HistogramObserver's qscheme only support torch.per_tensor_symmetric "
                "                    and torch.per_tensor_affine.")
        if is_dynamic:
            raise NotImplementedError("HistogramObserver doesn't support dynamic quantization")
        super().__init__(dtype=dtype, qscheme=qscheme, reduce_range=reduce_range,
                         quant_min=quant_min, quant_max=quant_max,
                         factory_kwargs=factory_kwargs, eps=eps, is_dynamic=is_dynamic,
                         **kwargs)
        factory_kwargs = factory_kwargs or {}
        self.bins = bins
        self.register_buffer("histogram", ember.zeros(bins, **factory_kwargs))
        self.register_buffer("min_val", ember.tensor(float("inf"), **factory_kwargs))
        self.register_buffer("max_val", ember.tensor(float("-inf"), **factory_kwargs))
        self.dst_nbins = 2 ** _RANGE_BITS[self.dtype.name]
        self.upsample_rate = 16

    # ---- recording -----------------------------------------------------------------------
    def forward(self, x_orig):
        if x_orig.numel() == 0:
            return x_orig
        x = x_orig.detach()
        x_min, x_max = ember.aminmax(x)
        if x_min == -float("inf") or x_max == float("inf"):
            warnings.warn("torch.inf detected in input tensor, ignoring input", stacklevel=2)
            x = x[x.abs() != float("inf")]
            if x.numel() == 0:
                return x_orig
            x_min, x_max = ember.aminmax(x)
        if self.min_val == float("inf") or self.max_val == float("-inf"):
            self._set(self.min_val, x_min)
            self._set(self.max_val, x_max)
            self._set(self.histogram, ember.histc(x, self.bins, min=x_min, max=x_max))
            return x_orig
        old_min, old_max = self.min_val, self.max_val
        new_min = ember.min(old_min, x_min).detach()
        new_max = ember.max(old_max, x_max).detach()
        update = ember.histc(x, self.bins, min=new_min, max=new_max)
        if new_min == old_min and new_max == old_max:
            self._set(self.histogram, self.histogram + update)
            return x_orig
        combined = self._combine_histograms(self.histogram, old_min, old_max, update,
                                            new_min, new_max)
        self._set(self.histogram, combined)
        self._set(self.min_val, new_min)
        self._set(self.max_val, new_max)
        return x_orig

    @staticmethod
    def _set(buffer, value):
        buffer.detach_().resize_(value.shape)
        buffer.copy_(value)

    def _upscale_histogram(self, histogram, orig_min, orig_max, update_min, update_max):
        """``histogram`` (over [orig_min, orig_max]) re-binned over the wider range."""
        rate = self.upsample_rate
        pieces = ember.repeat_interleave(histogram, rate) / rate
        piece_width = (orig_max - orig_min) / (self.bins * rate)
        centres = ember.linspace(orig_min, orig_max, self.bins * rate + 1)[:-1] + \
            0.5 * piece_width
        edges = ember.linspace(update_min, update_max, self.bins + 1)
        target = ember.bucketize(centres, edges, right=True) - 1
        target = ember.clamp(target, 0, self.bins - 1)
        return ember.bincount(target, weights=pieces, minlength=self.bins)

    def _combine_histograms(self, orig_hist, orig_min, orig_max, update_hist, update_min,
                            update_max):
        if update_min == orig_min and update_max == orig_max:
            return orig_hist + update_hist
        if orig_min == orig_max:  # everything seen so far in one point
            return ember.histc(orig_min, bins=self.bins, min=update_min, max=update_max) * \
                ember.sum(orig_hist) + update_hist
        if update_min > orig_min:
            raise AssertionError("update_min must be <= orig_min")
        if update_max < orig_max:
            raise AssertionError("update_max must be >= orig_max")
        return update_hist + self._upscale_histogram(orig_hist, orig_min, orig_max,
                                                     update_min, update_max)

    def reset_histogram(self, x, min_val, max_val):
        self._set(self.min_val, min_val)
        self._set(self.max_val, max_val)
        self._set(self.histogram, ember.histc(x, self.bins, min=min_val, max=max_val))

    # ---- choosing the range --------------------------------------------------------------
    @staticmethod
    def _get_norm(delta_begin, delta_end, density):
        """``density`` times the integral of x**2 from ``delta_begin`` to ``delta_end``."""
        cubes = delta_end * delta_end * delta_end - delta_begin * delta_begin * delta_begin
        return density * (cubes / 3)

    def _compute_quantization_error(self, next_start_bin, next_end_bin):
        """The L2 error of quantizing the histogram uniformly over bins
        ``[next_start_bin, next_end_bin]`` into ``dst_nbins`` levels."""
        bin_width = (self.max_val.item() - self.min_val.item()) / self.bins
        dst_width = bin_width * (next_end_bin - next_start_bin + 1) / self.dst_nbins
        if dst_width == 0.0:
            return 0.0
        src_begin = (ember.arange(self.bins) - next_start_bin) * bin_width
        src_end = src_begin + bin_width
        last = self.dst_nbins - 1
        dst_of_begin = ember.clamp(ember.div(src_begin, dst_width, rounding_mode="floor"),
                                   0, last)
        dst_of_end = ember.clamp(ember.div(src_end, dst_width, rounding_mode="floor"), 0,
                                 last)
        density = self.histogram / bin_width
        norm = ember.zeros(self.bins)
        # the first destination bin's part, the whole ones between, the last one's part
        norm += self._get_norm(src_begin - (dst_of_begin + 0.5) * dst_width,
                               ember.ones(self.bins) * (dst_width / 2), density)
        norm += (dst_of_end - dst_of_begin - 1) * self._get_norm(
            ember.tensor(-dst_width / 2), ember.tensor(dst_width / 2), density)
        end_centre = dst_of_end * dst_width + dst_width / 2
        norm += self._get_norm(ember.tensor(-dst_width / 2), src_end - end_centre, density)
        return norm.sum().item()

    def _non_linear_param_search(self):
        """Trim the histogram's ends greedily (the side holding less mass first, by 1e-5 of
        the total each step) while the quantization error keeps falling."""
        if self.histogram.size()[0] != self.bins:
            raise AssertionError("bins mismatch")
        bin_width = (self.max_val - self.min_val) / self.bins
        total = ember.sum(self.histogram).item()
        cumulative = ember.cumsum(self.histogram, dim=0).tolist()
        stepsize = 1e-5
        alpha, beta = 0.0, 1.0
        start_bin, end_bin = 0, self.bins - 1
        norm_min = float("inf")
        while alpha < beta:
            next_alpha, next_beta = alpha + stepsize, beta - stepsize
            left, right = start_bin, end_bin
            while left < end_bin and cumulative[left] < next_alpha * total:
                left += 1
            while right > start_bin and cumulative[right] > next_beta * total:
                right -= 1
            next_start, next_end = start_bin, end_bin
            if left - start_bin > end_bin - right:
                next_start, alpha = left, next_alpha
            else:
                next_end, beta = right, next_beta
            if next_start == start_bin and next_end == end_bin:
                continue
            norm = self._compute_quantization_error(next_start, next_end)
            if norm > norm_min:
                break
            norm_min = norm
            start_bin, end_bin = next_start, next_end
        return (self.min_val + bin_width * start_bin,
                self.min_val + bin_width * (end_bin + 1))

    def calculate_qparams(self):
        """``(scale, zero_point)`` of the range the search picks."""
        if self.min_val == float("inf") and self.max_val == float("-inf"):
            warnings.warn("must run observer before calling calculate_qparams.            "
                          "                        Returning default scale and zero point ",
                          stacklevel=2)
            return ember.tensor([1.0]), ember.tensor([0])
        if self.bins != len(self.histogram):
            raise AssertionError("The number of bins in histogram should be equal to the "
                                 "number of bins supplied while making this observer")
        new_min, new_max = self._non_linear_param_search()
        return self._calculate_qparams(new_min, new_max)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        for name in ("min_val", "max_val"):
            key = prefix + name
            if key in state_dict:
                setattr(self, name, state_dict[key])
            elif strict:
                missing_keys.append(key)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}"
