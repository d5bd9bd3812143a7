"""Casts to and from PyTorch's float8 types, bit for bit as its CPU kernels.

ml_dtypes gives the arrays and most of the rounding; where PyTorch 2.13 differs, it is
followed: every source goes through float32 first (a float64 is rounded twice, as there);
float8_e4m3fn saturates finite values and infinities to +-448 (ml_dtypes: NaN);
float8_e4m3fn and float8_e5m2 write NaN as 0x7F with the input's sign; float8_e8m0fnu
takes float32's exponent field, ignores the sign, rounds the mantissa to nearest-even
on the implied bit (float32 subnormals go to 0x00, 2 ** -127) and maps inf and NaN to 0xFF.
A float8 source is widened to float32 first (ml_dtypes has no casts between its float8
types).

>>> import numpy as np, ember
>>> cast_float8(np.array([500.0, np.inf, 1.0], np.float32), ember.float8_e4m3fn.np).view(np.uint8)
array([126, 126,  56], dtype=uint8)
"""
import math

import numpy as np

from . import get_array_module
from .dtypes import FLOAT8, FLOAT8_NP, finfo, float8_e4m3fn, float8_e5m2, float8_e8m0fnu, \
    refuse_float8

_E4M3FN, _E5M2, _E8M0 = (float8_e4m3fn.np, float8_e5m2.np, float8_e8m0fnu.np) if FLOAT8_NP \
    else (None, None, None)


def involves_float8(source, target):
    """Whether a cast from NumPy dtype ``source`` to ``target`` has a float8 end."""
    return (source.itemsize == 1 and source in FLOAT8_NP) or \
        (target.itemsize == 1 and target in FLOAT8_NP)


def cast_float8(array, target):
    """``array`` cast to NumPy dtype ``target``, one of them float8, as PyTorch casts."""
    target = np.dtype(target)
    source = array.dtype
    if source.kind == "c":
        array = array.real
    if source.itemsize == 1 and source in FLOAT8_NP:
        wide = array.astype(np.float32)
        if source.name.endswith("fnuz") or source == _E8M0:
            # their one NaN widens to PyTorch's 0x7F800001 (ml_dtypes: a negative NaN), and
            # becomes 0 as an integer
            xp = get_array_module(wide)
            nan = xp.isnan(wide)
            fill = 0 if target.kind in "iu" else np.uint32(0x7F800001).view(np.float32)
            wide = xp.where(nan, np.float32(fill), wide)
            if target == np.float16:  # PyTorch's half of that NaN: the canonical one
                return xp.where(nan, np.float16(np.nan), wide.astype(np.float16))
        elif source == _E4M3FN or source == _E5M2:  # NaN payloads widened as PyTorch's
            xp = get_array_module(wide)
            b = array.view(np.uint8).astype(np.uint32)
            payload = (b & np.uint32(7)) << np.uint32(20) if source == _E4M3FN else \
                (b & np.uint32(3)) << np.uint32(21)
            bits = ((b & np.uint32(0x80)) << np.uint32(24)) | np.uint32(0x7FC00000) | payload
            wide = xp.where(xp.isnan(wide), bits.view(np.float32), wide)
        if target == np.float32:
            return wide
        array, source = wide, wide.dtype
        if target.name == "bfloat16":  # PyTorch's bfloat16 of a float8 NaN: +NaN, no payload
            xp = get_array_module(wide)
            return xp.where(xp.isnan(wide), np.float32(np.nan), wide).astype(target)
        if target not in FLOAT8_NP:
            return array.astype(target)
    if source != np.float32:
        with np.errstate(over="ignore", invalid="ignore"):
            array = array.astype(np.float32)
    xp = get_array_module(array)
    if target == _E8M0:
        return _to_e8m0(array)
    with np.errstate(over="ignore", invalid="ignore"):
        out = array.astype(target)
    if target == _E4M3FN:
        nan_in = xp.isnan(array)
        big = xp.isnan(out.astype(np.float32)) & ~nan_in  # overflow: +-448, not NaN
        bits = out.view(np.uint8)
        sign = (array.view(np.uint32) >> 24).astype(np.uint8) & np.uint8(0x80)
        bits = xp.where(big, sign | np.uint8(0x7E), bits)
        bits = xp.where(nan_in, sign | np.uint8(0x7F), bits)
        return bits.view(target)
    if target == _E5M2:
        nan_in = xp.isnan(array)
        sign = (array.view(np.uint32) >> 24).astype(np.uint8) & np.uint8(0x80)
        return xp.where(nan_in, sign | np.uint8(0x7F), out.view(np.uint8)).view(target)
    return out


def _to_e8m0(array):
    """float32 ``array`` as float8_e8m0fnu, from its bits (array methods only)."""
    bits = array.view(np.uint32)
    exponent = (bits >> 23) & np.uint32(0xFF)
    guard = (bits & np.uint32(0x400000)) != 0
    rest = (bits & np.uint32(0x3FFFFF)) != 0
    lsb = exponent > 0  # the implied bit: 0 for float32 subnormals
    up = guard & (rest | lsb) & (exponent < 255)
    out = (exponent + up.astype(np.uint32)).astype(np.uint8)  # 254 rounded up: 255, NaN
    return out.view(_E8M0)


#: PyTorch's kernels of the unary ops, which refuse float8 (None: it computes), by ember's
#: op (its Primitive's name, lower case); an op missing here refuses as "<name>_cpu"
UNARY_KERNELS = {"abs": None, "sign": "sign_cpu", "exp2": "exp2", "rsqrt": "rsqrt_cpu",
                 "reciprocal": "reciprocal_cpu", "sigmoid": "sigmoid_cpu_reduced_float",
                 "neg": "neg_cpu", "frac": "frac_cpu", "digamma": "digamma",
                 **{n: n + "_vml_cpu" for n in (
                     "log10", "exp", "log", "log2", "log1p", "expm1", "sqrt", "sin", "cos",
                     "tan", "tanh", "floor", "ceil", "trunc", "erf", "i0", "erfc", "round",
                     "asin", "acos", "atan", "erfinv", "lgamma")}}


def refuse_op(np_dtype, op):
    """Raise PyTorch's NotImplementedError for the unary op ``op`` (ember's Primitive name) on
    float8 data of NumPy dtype ``np_dtype``, unless its kernel computes (``abs``; but not
    float8_e8m0fnu's)."""
    name = op.lower()
    kernel = UNARY_KERNELS.get(name, name + "_cpu")
    if name == "abs" and np_dtype == _E8M0:
        kernel = "abs_cpu"
    if kernel is not None:
        refuse_float8(np_dtype, kernel)


FLOAT8_DTYPES = frozenset(FLOAT8)
_LIMITS = {d.name: (finfo(d).min, finfo(d).max) for d in FLOAT8}


def check_fits(value, dt):
    """PyTorch's checked conversion of a Python number to float8 dtype ``dt`` (``fill_``,
    ``full``, ``pad``'s value): RuntimeError past its largest finite value (or below
    float8_e8m0fnu's smallest), and for an infinity where the type has none; NaN passes."""
    if dt not in FLOAT8_DTYPES or isinstance(value, complex):
        return
    v = float(value)
    if math.isnan(v):
        return
    info = _LIMITS[dt.name]
    if math.isinf(v) and dt.name == "float8_e5m2" or info[0] <= v <= info[1]:
        return
    raise RuntimeError(f"value cannot be converted to type {dt.cpp_name} without overflow")
