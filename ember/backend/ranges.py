"""``linspace``'s values as PyTorch's CPU kernel rounds them, so that grids built from
them (``affine_grid``, ``meshgrid`` of linspaces) sit on the same floats: the first half
counts up from ``start``, the second half down from ``end``, each point one fused
multiply-add (float32, float64, integers) or, for the half-precision types, one rounding per
operation. NumPy's ``linspace`` differs from it in the last bit at many points."""
import numpy as np

from .dtypes import is_float_np

__all__ = ["linspace_array"]

_SPLIT = 134217729.0  # 2**27 + 1: splits a float64 into two halves of 26 bits


def _two_product(a, b):
    """``a * b`` rounded, and its rounding error (exact, by Dekker's splitting)."""
    p = a * b

    def split(x):
        c = _SPLIT * x
        hi = c - (c - x)
        return hi, x - hi
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _fma64(a, b, c):
    """``a * b + c`` in float64 with (almost always) a single rounding, as an FMA gives."""
    p, p_err = _two_product(a, b)
    s = p + c
    v = s - p
    s_err = (p - (s - v)) + (c - v)
    return s + (s_err + p_err)


def linspace_array(xp, start, end, steps, np_dtype):
    """``steps`` evenly spaced values from ``start`` to ``end`` of ``np_dtype`` (real
    floating or integer; complex and bool take NumPy's ``linspace``) as an array of ``xp``.

    >>> import numpy as np
    >>> linspace_array(np, -1, 1, 20, np.dtype(np.float32))[2]
    np.float32(-0.78947365)
    """
    np_dtype = np.dtype(np_dtype)
    if not (is_float_np(np_dtype) or np_dtype.kind in "iu") or steps <= 1:
        return xp.linspace(start, end, steps).astype(np_dtype)
    idx = xp.arange(steps, dtype=np.float64)
    back = (steps - 1) - idx
    if np_dtype.kind in "iu":  # the step is a double; the values are truncated
        s, e = float(int(start)), float(int(end))
        step = (e - s) / (steps - 1)
        up, down = _fma64(step, idx, s), _fma64(-step, back, e)
    elif np_dtype.itemsize >= 4:
        s, e = np_dtype.type(start), np_dtype.type(end)
        step = float((e - s) / np_dtype.type(steps - 1))
        s, e = float(s), float(e)
        if np_dtype.itemsize == 4:  # a float32 product is exact in float64: one rounding
            up, down = s + step * idx, e - step * back
        else:
            up, down = _fma64(step, idx, s), _fma64(-step, back, e)
    else:  # float16, bfloat16: every operation rounds to the type
        def r(x):
            return xp.asarray(x, dtype=np.float64).astype(np_dtype).astype(np.float64)
        s, e = r(start), r(end)
        step = r(r(e - s) / r(steps - 1))
        up, down = r(s + r(step * r(idx))), r(e - r(step * r(back)))
    return xp.where(idx < steps // 2, up, down).astype(np_dtype)
