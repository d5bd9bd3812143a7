"""How PyTorch's C++ kernels choose a scale and zero point for a range (the fused
observer-fake-quant op and the dynamic quantized Linear's activations): float32 bounds,
double intermediates, a float32 scale -- which can differ from the Python observers'
formula in the scale's last bit, so it is written out apart.

>>> choose_qparams(-1.0, 3.0, 0, 255, False)
(0.01568627543747425, 64)
"""
import math
import struct


def f32(value):
    """``value`` rounded to the nearest float32 (as a Python float)."""
    return struct.unpack("f", struct.pack("f", value))[0]


_SMALL_SCALE = f32(6.1e-5)


def choose_qparams(lo, hi, quant_min, quant_max, symmetric):
    """PyTorch's C++ choice of (scale, zero_point) for the range [lo, hi] (the fused
    observer's; float32 bounds, double intermediates, a float32 scale), which can differ
    from the Python observers' formula in the scale's last bit."""
    if lo < 0 < hi and symmetric:
        sym_min, sym_max = -((quant_max - quant_min) // 2 + 1), (quant_max - quant_min) // 2
        max_scale = max(abs(lo / sym_min), abs(hi / sym_max))
        lo, hi = f32(max_scale * sym_min), f32(max_scale * sym_max)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / (quant_max - quant_min)
    if f32(scale) == 0.0 or math.isinf(_f32_reciprocal(scale)):
        scale = 0.1
    if scale < _SMALL_SCALE:
        original = scale
        scale = _SMALL_SCALE
        if lo == 0.0:
            hi = f32(_SMALL_SCALE * (quant_max - quant_min))
        elif hi == 0.0:
            lo = f32(-_SMALL_SCALE * (quant_max - quant_min))
        else:
            amplifier = f32(_SMALL_SCALE / original)
            lo, hi = f32(lo * amplifier), f32(hi * amplifier)
    from_min, from_max = quant_min - lo / scale, quant_max - hi / scale
    from_min_error = abs(quant_min) - abs(lo / scale)
    from_max_error = abs(quant_max) - abs(hi / scale)
    initial = from_min if from_min_error < from_max_error else from_max
    if lo < 0 < hi and symmetric:
        initial = (quant_min + quant_max) / 2
    if initial < quant_min:
        zero_point = quant_min
    elif initial > quant_max:
        zero_point = quant_max
    else:
        zero_point = int(round(initial))  # Python's round: half to even, as nearbyint
    return f32(scale), zero_point


def _f32_reciprocal(scale):
    try:
        return f32(1.0 / f32(scale))
    except OverflowError:  # 1 / a subnormal float32 overflows float32
        return math.inf
