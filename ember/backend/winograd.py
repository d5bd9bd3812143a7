"""3x3 convolutions of stride 1 by Winograd's F(2x2, 3x3) algorithm, on arrays.

A 3x3 convolution computes each 2x2 block of its output ("tile") from a 4x4 input patch.
Transformed, the patch and the kernel meet in 16 elementwise products per channel pair
instead of 36 multiply-adds, and the sum over input channels becomes 16 matrix products
(tiles x C) @ (C x O) for BLAS: 2.25x fewer multiply-adds than im2col's one product
(tiles*4 x 9C) @ (9C x O). The transforms themselves (``_winograd.c``) are additions only.
Both gradients are the forward pass's adjoint: with Z the output gradient's transformed
tiles (A gy A^T) and V the input's transformed patches, the input gradient adds each tile's
B (Z U^T) B^T back over its patch (U the transformed kernel) and the weight gradient is
G^T (sum over tiles of V^T Z) G.

Rounding: the transforms add and subtract up to nine inputs before the products (the
kernel's by halves), so float32 results differ from a direct convolution's by a few units
in the last place of the largest terms (~1e-6 relative), as cuDNN's and oneDNN's Winograd
kernels do; float64 agrees to ~1e-15. Blocks of samples depend on the shapes only and
their weight-gradient parts are summed in block order: the bits do not depend on the
thread count.

``applies(x, w, ...)`` says whether a convolution qualifies (2-D, 3x3 kernel, stride 1, no
dilation, one group, padding 0-2 on each side, at least ``MIN_CHANNELS`` channels in and out,
float32/float64 NumPy arrays, the compiled transforms built and ``ENABLED``);
``ember/_ops/conv.py`` uses it and keeps its im2col path for everything else.

>>> import numpy as np
>>> from ember.backend import winograd
>>> x = np.ones((1, 8, 4, 4)); w = np.ones((8, 8, 3, 3))
>>> not winograd.available() or float(winograd.forward(x, w, (1, 1))[0, 0, 1, 1]) == 72.0
True
"""
import math

import numpy as np

from .parallel import run_blocks as _run, sample_blocks, sum_parts

try:
    from . import _winograd as _native
except ImportError:  # built without a C compiler: convolutions take the im2col path
    _native = None

__all__ = ["available", "applies", "forward", "backward", "ENABLED", "MIN_CHANNELS"]

#: False: every convolution takes the im2col path (tests compare the two)
ENABLED = True
#: input and output channels a convolution needs for the transforms to pay: with few
#: channels the products are too short for BLAS and the transforms dominate
MIN_CHANNELS = 8
#: about this many bytes of transformed tiles (input and output side) per block of samples:
#: larger blocks make longer products; measured on a 64x32x14x14 -> 64 convolution, 1 MiB
#: blocks (24) ran the backward pass 1.3x slower on 2 threads than 2 MiB ones (12)
BLOCK_BYTES = 2 << 20

_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def available():
    """Whether the compiled transforms were built."""
    return _native is not None


def applies(x, w, stride, dilation, pads, groups):
    """Whether ``conv(x, w)`` runs here: see the module docstring. ``pads`` is
    ``((top, bottom), (left, right))``."""
    if not ENABLED or _native is None or x.ndim != 4 or w.shape[2:] != (3, 3):
        return False
    if tuple(stride) != (1, 1) or tuple(dilation) != (1, 1) or groups != 1:
        return False
    if any(not 0 <= p <= 2 for side in pads for p in side):
        return False
    if min(w.shape[0], w.shape[1]) < MIN_CHANNELS:
        return False
    return (type(x) is np.ndarray and type(w) is np.ndarray and x.dtype in _FLOATS
            and w.dtype == x.dtype)


def _tiles(out_h, out_w):
    return -(-out_h // 2), -(-out_w // 2)


def _kernel_transform(w):
    """(O, C, 3, 3) -> (16, C, O): G w G^T of every kernel, element e = 4 * row + col."""
    g = _G.astype(w.dtype)
    # two products over the flattened kernels (batched 4x3 @ 3x3 products are far slower)
    t = np.tensordot(w, g, axes=([3], [1]))                           # O, C, 3 (row), 4 (col)
    u = np.tensordot(t, g, axes=([2], [1]))                           # O, C, 4 (col), 4 (row)
    o, c = w.shape[:2]
    return np.ascontiguousarray(u.transpose(3, 2, 1, 0)).reshape(16, c, o)


def _kernel_gradient(u_grad, o, c, dtype):
    """(16, C, O) summed V^T Z -> the (O, C, 3, 3) weight gradient G^T U G."""
    g = _G.astype(dtype)
    u = u_grad.reshape(4, 4, c, o)                                    # row, col, C, O
    t = np.tensordot(g, u, axes=([0], [0]))                           # 3 (row), col, C, O
    k = np.tensordot(t, g, axes=([1], [0]))                           # 3 (row), C, O, 3 (col)
    return np.ascontiguousarray(k.transpose(2, 1, 0, 3))


def _blocks(n, per_sample):
    return sample_blocks(n, per_sample, BLOCK_BYTES)


def _convolve(src, u, pads, out_hw, dst, bias=None):
    """``dst = conv3x3(src, kernel) (+ bias)`` for one block: src (n, C, H, W) C-contiguous,
    ``u`` the transformed kernel (16, C, O), ``pads`` the padding before the image
    (top, left), dst (n, O, OH, OW) written."""
    n, c, h, w = src.shape
    th, tw = _tiles(*out_hw)
    tiles = n * th * tw
    is_double = src.dtype == np.float64
    v = np.empty((16, tiles, c), dtype=src.dtype)
    _native.input_transform(src, v, is_double, (n, c, h, w, pads[0], pads[1], th, tw))
    m = np.matmul(v, u)                                               # 16, tiles, O
    _native.output_transform(m, dst, bias, is_double,
                             (n, u.shape[2], out_hw[0], out_hw[1], th, tw))


def forward(x, w, pads, bias=None):
    """conv2d(x, w, padding) + bias for a 3x3 kernel, stride 1: x (N, C, H, W), w (O, C, 3, 3),
    ``pads`` (top, left) or ((top, bottom), (left, right))."""
    (top, bottom), (left, right) = _pad_pairs(pads)
    n, c, h, wd = x.shape
    o = w.shape[0]
    out_hw = (h + top + bottom - 2, wd + left + right - 2)
    x = np.ascontiguousarray(x)
    u = _kernel_transform(w)
    res = np.empty((n, o) + out_hw, dtype=x.dtype)
    if bias is not None:
        bias = np.ascontiguousarray(bias, dtype=x.dtype)
    tiles = math.prod(_tiles(*out_hw))
    blocks = _blocks(n, 16 * tiles * (c + o) * x.itemsize)  # (backward's are the same)

    def block(i, lo, hi):
        _convolve(x[lo:hi], u, (top, left), out_hw, res[lo:hi], bias)
    _run(blocks, block, x.nbytes + res.nbytes + n * 16 * tiles * (c + o) * x.itemsize)
    return res


def backward(x, w, gy, pads, need=(True, True, False)):
    """(gx, gw, gb) of ``forward(x, w, pads) (+ b)`` for the output gradient ``gy``; ``need``
    says which (the others are None)."""
    need_x, need_w, need_b = need
    (top, bottom), (left, right) = _pad_pairs(pads)
    n, c, h, wd = x.shape
    o = w.shape[0]
    out_hw = gy.shape[2:]
    dt = x.dtype
    is_double = dt == np.float64
    if need_w:  # (the input gradient never reads x: it may be a broadcast stand-in)
        x = np.ascontiguousarray(x)
    gy = np.ascontiguousarray(gy, dtype=dt)
    gx = np.empty(x.shape, dtype=dt) if need_x else None
    # the forward pass's adjoint, step by step: Z = A gy A^T per tile, Z U^T, then each
    # tile's B (Z U^T) B^T added back where the forward pass read its patch
    u_t = _kernel_transform(w).transpose(0, 2, 1) if need_x else None  # 16, O, C
    th, tw = _tiles(*out_hw)
    tiles = th * tw
    blocks = _blocks(n, 16 * tiles * (c + o) * dt.itemsize)
    wparts = [None] * len(blocks)
    bparts = [None] * len(blocks)

    def block(i, lo, hi):
        g = gy[lo:hi]
        k = hi - lo
        if need_x or need_w:
            z = np.empty((16, k * tiles, o), dtype=dt)
            _native.grad_transform(g, z, is_double, (k, o, out_hw[0], out_hw[1], th, tw))
        if need_x:
            _native.input_adjoint(np.matmul(z, u_t), gx[lo:hi], is_double,
                                  (k, c, h, wd, top, left, th, tw))
        if need_w:
            v = np.empty((16, k * tiles, c), dtype=dt)
            _native.input_transform(x[lo:hi], v, is_double, (k, c, h, wd, top, left, th, tw))
            wparts[i] = np.matmul(v.transpose(0, 2, 1), z)            # 16, C, O
        if need_b:
            bparts[i] = g.sum(axis=(0, 2, 3))
    work = (x.nbytes + gy.nbytes) * 2 + n * 16 * tiles * (c + o) * dt.itemsize * 2
    _run(blocks, block, work)
    gw = gb = None
    if need_w:
        gw = _kernel_gradient(sum_parts(wparts), o, c, dt) if blocks else np.zeros(w.shape, dt)
    if need_b:
        gb = sum_parts(bparts) if blocks else np.zeros(o, dtype=dt)
    return gx, gw, gb


def _pad_pairs(pads):
    if isinstance(pads[0], (tuple, list)):
        return tuple(tuple(p) for p in pads)
    return (pads[0], pads[0]), (pads[1], pads[1])
