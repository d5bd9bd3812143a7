"""``ember.fft``: PyTorch's ``torch.fft`` (discrete Fourier transforms and their helpers).

The transforms run on the array module's FFT (NumPy's on the CPU, CuPy's on the GPU), return
PyTorch's dtypes (float32 in, complex64 out; integers as the default float type) and are
differentiable, complex inputs included (the ops are in ``_ops/fft_ops.py``).

>>> import ember
>>> ember.fft.fft(ember.tensor([1.0, 0.0, 0.0, 0.0]))
tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
"""
from __future__ import annotations

import math

from .._tensor import Tensor
from .._creation import arange
from ..backend.dtypes import get_default_dtype
from .._registry import write_out
from .._torch_function import wrap_namespace as _wrap_namespace
from .._typing import Sequence, dtype
from .. import _functions as _F
from .._ops import fft_ops as _O


def _finish(result, out, name):
    if out is None:
        return result
    if result.is_complex() and not out.is_complex():
        raise RuntimeError(f"{name} expects a complex output tensor, but got "
                           f"{out.dtype.scalar_name}")
    if not result.is_complex() and out.is_complex() and name not in ("fftfreq", "rfftfreq"):
        raise RuntimeError(f"{name} expects a floating point output tensor, but got "
                           f"{out.dtype.scalar_name}")
    return write_out(result, out, "fft_" + name)


def _one_dim(input, n, dim, name):
    """The dim and size of a 1-D transform (PyTorch's checks)."""
    d = _O.one_dim(input, dim)
    n = input.shape[d] if n is None else n
    _O.check_size(n)
    return d, n


# ---- one dimension ---------------------------------------------------------------------------
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:
    """The discrete Fourier transform along ``dim`` (``n``: trim or zero-pad to n points;
    ``norm``: "backward" (no scaling), "ortho" (1/sqrt(n)) or "forward" (1/n)).

    >>> import ember
    >>> ember.fft.fft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
    """
    norm = _O.check_norm(norm)
    d, n = _one_dim(input, n, dim, "fft")
    return _finish(_O.c2c(input, [d], [n], norm, True, "fft"), out, "fft")


def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The inverse discrete Fourier transform along ``dim`` ("backward" norm: scaled by 1/n).

    >>> import ember
    >>> ember.fft.ifft(ember.tensor([4.0, 0.0, 0.0, 0.0]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    norm = _O.check_norm(norm)
    d, n = _one_dim(input, n, dim, "ifft")
    return _finish(_O.c2c(input, [d], [n], norm, False, "ifft"), out, "ifft")


def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The Fourier transform of a real signal: the ``n // 2 + 1`` non-negative frequencies.

    >>> import ember
    >>> ember.fft.rfft(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    tensor([10.+0.j, -2.+2.j, -2.+0.j])
    """
    norm = _O.check_norm(norm)
    d, n = _one_dim(input, n, dim, "rfft")
    return _finish(_O.r2c(input, [d], [n], norm, "rfft"), out, "rfft")


def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of ``rfft``: a real signal of ``n`` points (default ``2 * (m - 1)`` for
    ``m`` frequencies) from its one-sided spectrum.

    >>> import ember
    >>> ember.fft.irfft(ember.tensor([10.0 + 0j, -2 + 2j, -2 + 0j]))
    tensor([1., 2., 3., 4.])
    """
    norm = _O.check_norm(norm)
    d = _O.one_dim(input, dim)
    n = 2 * (input.shape[d] - 1) if n is None else n
    _O.check_size(n)
    return _finish(_O.c2r(input, [d], [n], norm, "irfft"), out, "irfft")


def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The Fourier transform of a Hermitian-symmetric signal given by its first half: a real
    spectrum of ``n`` points (default ``2 * (m - 1)``).

    >>> import ember
    >>> ember.fft.hfft(ember.tensor([1.0, 0.0, 0.0]))
    tensor([1., 1., 1., 1.])
    """
    norm = _O.check_norm(norm)
    d = _O.one_dim(input, dim)
    n = 2 * (input.shape[d] - 1) if n is None else n
    _O.check_size(n)
    x = _O.promote(input, "hfft", complex_only=True).conj()
    return _finish(_O.c2r(x, [d], [n], _O._DUAL[norm], "hfft"), out, "hfft")


def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of ``hfft``: the first half (``n // 2 + 1`` points) of the Hermitian
    signal whose transform is the real ``input``.

    >>> import ember
    >>> ember.fft.ihfft(ember.tensor([1.0, 1.0, 1.0, 1.0]))
    tensor([1.-0.j, 0.-0.j, 0.-0.j])
    """
    norm = _O.check_norm(norm)
    d, n = _one_dim(input, n, dim, "ihfft")
    x = _O.promote(input, "ihfft", real_only=True)
    return _finish(_O.r2c(x, [d], [n], _O._DUAL[norm], "ihfft").conj(), out, "ihfft")


# ---- several dimensions ----------------------------------------------------------------------
def fftn(input: Tensor, s: Sequence[int] | None = None, dim: int | Sequence[int] | None = None,
         norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """The n-dimensional Fourier transform over ``dim`` (default: the last ``len(s)`` dims,
    or all), each trimmed or zero-padded to ``s``.

    >>> import ember
    >>> ember.fft.fftn(ember.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    norm = _O.check_norm(norm)
    dims, sizes = _O.plan_dims(input, s, dim)
    return _finish(_O.c2c(input, dims, sizes, norm, True, "fftn"), out, "fftn")


def ifftn(input: Tensor, s: Sequence[int] | None = None, dim: int | Sequence[int] | None = None,
          norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """The n-dimensional inverse Fourier transform (``fftn``'s ``s`` and ``dim``).

    >>> import ember
    >>> ember.fft.ifftn(ember.tensor([[4.0, 0.0], [0.0, 0.0]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]])
    """
    norm = _O.check_norm(norm)
    dims, sizes = _O.plan_dims(input, s, dim)
    return _finish(_O.c2c(input, dims, sizes, norm, False, "ifftn"), out, "ifftn")


def rfftn(input: Tensor, s: Sequence[int] | None = None, dim: int | Sequence[int] | None = None,
          norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """The n-dimensional transform of a real signal, one-sided along the last of ``dim``.

    >>> import ember
    >>> ember.fft.rfftn(ember.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    norm = _O.check_norm(norm)
    dims, sizes = _O.plan_dims(input, s, dim)
    return _finish(_O.r2c(input, dims, sizes, norm, "rfftn"), out, "rfftn")


def irfftn(input: Tensor, s: Sequence[int] | None = None, dim: int | Sequence[int] | None = None,
           norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """The inverse of ``rfftn``: a real signal of shape ``s`` over ``dim`` (the last length
    defaults to ``2 * (m - 1)``).

    >>> import ember
    >>> ember.fft.irfftn(ember.tensor([[4.0 + 0j, 0j], [0j, 0j]]))
    tensor([[1., 1.],
            [1., 1.]])
    """
    norm = _O.check_norm(norm)
    dims, sizes = _O.c2r_sizes(input, s, dim)
    return _finish(_O.c2r(input, dims, sizes, norm, "irfftn"), out, "irfftn")


def fft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
         norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """``fftn`` over two dims (the last two by default).

    >>> import ember
    >>> ember.fft.fft2(ember.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return fftn(input, s, dim, norm, out=out)


def ifft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """``ifftn`` over two dims (the last two by default).

    >>> import ember
    >>> ember.fft.ifft2(ember.tensor([[4.0, 0.0], [0.0, 0.0]]))
    tensor([[1.+0.j, 1.+0.j],
            [1.+0.j, 1.+0.j]])
    """
    return ifftn(input, s, dim, norm, out=out)


def rfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """``rfftn`` over two dims (the last two by default).

    >>> import ember
    >>> ember.fft.rfft2(ember.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return rfftn(input, s, dim, norm, out=out)


def irfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
           norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """``irfftn`` over two dims (the last two by default).

    >>> import ember
    >>> ember.fft.irfft2(ember.tensor([[4.0 + 0j, 0j], [0j, 0j]]))
    tensor([[1., 1.],
            [1., 1.]])
    """
    return irfftn(input, s, dim, norm, out=out)


def hfftn(input: Tensor, s: Sequence[int] | None = None, dim: int | Sequence[int] | None = None,
          norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """The n-dimensional transform of a Hermitian-symmetric signal given by its half along
    the last of ``dim``: a real result whose last length defaults to ``2 * (m - 1)``.

    >>> import ember
    >>> ember.fft.hfftn(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[10., -2.],
            [-4.,  0.]])
    """
    norm = _O.check_norm(norm)
    dims, sizes = _O.c2r_sizes(input, s, dim)
    # the transform of a Hermitian signal is the inverse real transform of its conjugate,
    # with the scale moved to the other direction
    x = _O.promote(input, "hfftn", complex_only=True).conj()
    return _finish(_O.c2r(x, dims, sizes, _O._DUAL[norm], "hfftn"), out, "hfftn")


def ihfftn(input: Tensor, s: Sequence[int] | None = None, dim: int | Sequence[int] | None = None,
           norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """The inverse of ``hfftn``: the half (``n // 2 + 1`` points along the last of ``dim``)
    of the Hermitian signal whose n-dimensional transform is the real ``input``.

    >>> import ember
    >>> ember.fft.ihfftn(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([[ 2.5000-0.j, -0.5000-0.j],
            [-1.0000+0.j,  0.0000+0.j]])
    """
    norm = _O.check_norm(norm)
    if input.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{input.dtype.scalar_name}")
    dims, sizes = _O.plan_dims(input, s, dim)
    # the one-sided transform along the last dim, then the inverse over the others on its
    # conjugate (PyTorch's order: the same signs of zero)
    half = _O.r2c(input, dims[-1:], sizes[-1:], _O._DUAL[norm], "ihfftn").conj()
    if len(dims) == 1:
        return _finish(half, out, "ihfftn")
    result = _O.c2c(half, dims[:-1], sizes[:-1], norm, False, "ihfftn")
    return _finish(result, out, "ihfftn")


def hfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
          norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """``hfftn`` over two dims (the last two by default).

    >>> import ember
    >>> ember.fft.hfft2(ember.ones(2, 2))
    tensor([[4., 0.],
            [0., 0.]])
    """
    return hfftn(input, s, dim, norm, out=out)


def ihfft2(input: Tensor, s: Sequence[int] | None = None, dim: Sequence[int] = (-2, -1),
           norm: str | None = None, *, out: Tensor | None = None) -> Tensor:
    """``ihfftn`` over two dims (the last two by default).

    >>> import ember
    >>> ember.fft.ihfft2(ember.ones(2, 2))
    tensor([[1.-0.j, 0.-0.j],
            [0.+0.j, 0.+0.j]])
    """
    return ihfftn(input, s, dim, norm, out=out)


# ---- helpers ---------------------------------------------------------------------------------
def _frequencies(n, d, half, dtype, layout, device, requires_grad, out, name):
    if layout is not None and str(layout) not in ("torch.strided", "ember.strided", "strided"):
        raise NotImplementedError(f"ember's fft.{name} supports only the strided layout")
    dtype = dtype or (out.dtype if out is not None else get_default_dtype())
    if dtype.is_complex:  # PyTorch's arange refuses it too
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtype.scalar_name}\'')
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    k = arange(n // 2 + 1 if half else n, dtype=dtype, device=device)
    if not half:
        k = _O.wrapped_frequencies(k, n)
    step = n * d  # PyTorch multiplies by 1 / (n * d): inf when n is 0
    result = k * (1.0 / step if step else math.copysign(math.inf, d))
    if requires_grad:
        result.requires_grad_()
    return _finish(result, out, name)


def fftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype: dtype | None = None,
            layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point ``fft`` with sample spacing ``d``: 0, 1, ...,
    then the negative ones, divided by ``n * d``.

    >>> import ember
    >>> ember.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    return _frequencies(n, d, False, dtype, layout, device, requires_grad, out, "fftfreq")


def rfftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype: dtype | None = None,
             layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an ``n``-point ``rfft``: 0 .. n // 2, divided by ``n * d``.

    >>> import ember
    >>> ember.fft.rfftfreq(4)
    tensor([0.0000, 0.2500, 0.5000])
    """
    return _frequencies(n, d, True, dtype, layout, device, requires_grad, out, "rfftfreq")


def fftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The zero frequency moved to the middle of ``dim`` (default: every dim).

    >>> import ember
    >>> ember.fft.fftshift(ember.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    dims, shifts = _O.shift_amounts(input, dim, False)
    return _F.roll(input, shifts, dims) if dims else input.clone()


def ifftshift(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of ``fftshift``: the zero frequency back to index 0.

    >>> import ember
    >>> ember.fft.ifftshift(ember.tensor([-0.5, -0.25, 0.0, 0.25]))
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    dims, shifts = _O.shift_amounts(input, dim, True)
    return _F.roll(input, shifts, dims) if dims else input.clone()


__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2",
           "irfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq", "fftshift",
           "ifftshift"]

_wrap_namespace(globals(), __all__, "ember.fft")
