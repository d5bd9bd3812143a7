"""Random kernels behind ``ember.nn.init`` that need more than a uniform/normal fill:
the truncated normal (inverse-CDF sampling, as PyTorch does) and the orthogonal
matrix (QR of a Gaussian matrix, signs fixed by ``diag(R)``). No autograd: the
callers fill tensors under ``no_grad``.
"""
import math

import numpy as np

from .._tensor import Tensor
from ..backend import get_array_module
from ..random import rng


def _erfinv(y):
    try:
        from scipy.special import erfinv
    except ImportError:
        return _erfinv_numpy(y)
    return erfinv(y)


def _erfinv_numpy(y):
    """erfinv without SciPy: Giles' approximation, then two Newton steps on erf."""
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = _erfinv_newton(y)
    return np.where(np.abs(y) == 1, np.copysign(np.inf, y), x)


def _erfinv_newton(y):
    w = -np.log((1.0 - y) * (1.0 + y))
    small = w < 5.0
    ws = w - 2.5
    p = 2.81022636e-08
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
              -0.00125372503, -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * ws
    wl = np.sqrt(np.maximum(w, 5.0)) - 3.0
    q = -0.000200214257
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
              -0.0076224613, 0.00943887047, 1.00167406, 2.83297682):
        q = c + q * wl
    x = np.where(small, p, q) * y
    erf = np.vectorize(math.erf, otypes=[np.float64])
    for _ in range(2):
        x = x - (erf(x) - y) / (2 / math.sqrt(math.pi) * np.exp(-x * x))
    return x


def trunc_normal_array(shape, mean, std, a, b, generator=None):
    """Samples of N(mean, std^2) truncated to [a, b], as a float64 array."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    lo = norm_cdf((a - mean) / std)
    hi = norm_cdf((b - mean) / std)
    u = rng(generator).uniform(2 * lo - 1, 2 * hi - 1, shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = _erfinv(u) * (std * math.sqrt(2.0)) + mean
    return np.clip(x, a, b)


def orthogonal_array(rows, cols, generator=None):
    """A (rows, cols) float64 matrix with orthonormal rows or columns (whichever fewer)."""
    flat = rng(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return q


def _fill(tensor, array):
    """Copy the host array ``array`` into ``tensor`` (through its array module)."""
    d = tensor._data
    values = get_array_module(d).asarray(array.reshape(d.shape).astype(d.dtype))
    return tensor.copy_(Tensor._make(values))


def trunc_normal_fill_(tensor, mean, std, a, b, generator=None):
    """Fill ``tensor`` with truncated-normal samples; returns it."""
    if tensor.is_meta:  # no data to fill: nothing is drawn (nor by PyTorch's generator)
        return tensor
    return _fill(tensor, trunc_normal_array(tensor._data.shape, mean, std, a, b, generator))


def orthogonal_fill_(tensor, generator=None):
    """Fill ``tensor`` (viewed as ``(size(0), -1)``) with a (semi-)orthogonal matrix."""
    if tensor.is_meta:
        return tensor
    rows = tensor._data.shape[0]
    cols = tensor._data.size // rows
    return _fill(tensor, orthogonal_array(rows, cols, generator))


__all__ = ["trunc_normal_array", "orthogonal_array", "trunc_normal_fill_", "orthogonal_fill_"]
