"""Discrete Fourier transforms (``ember.fft``) on the array module's ``fft``: NumPy's
pocketfft on the CPU, cuFFT through CuPy on the GPU.

Three Primitives carry the math: ``FftC2C`` (complex to complex over several dims),
``FftR2C`` (a real signal's one-sided spectrum along one dim) and ``FftC2R`` (its inverse).
Everything else (``n``/``s`` padding and trimming, the n-d real transforms, hfft, shifts) is
composed from them and other differentiable ops. Gradients follow PyTorch's complex
convention: a transform's backward is its adjoint, the transform in the other direction with
the dual normalization; the one-sided transforms handle the half spectrum as PyTorch does
(R2C's gradient is the zero-padded full spectrum transformed back, real part; C2R's is the
R2C of the gradient with the bins that stand for two doubled).
"""

import math

from .._tensor import Tensor, _wrap_dim
from ..backend import dtypes, get_array_module
from .primitive import Primitive
from .complex_ops import RealPart
from .shape import Cat

#: the normalization whose transform is the adjoint's scale (the backward's)
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _complex_of(real_np_dtype):
    return "complex128" if real_np_dtype.itemsize == 8 and real_np_dtype.kind == "f" or \
        real_np_dtype == "complex128" else "complex64"


def _real_of(np_dtype):
    return "float64" if np_dtype.itemsize >= 8 and np_dtype != "complex64" else "float32"


class FftC2C(Primitive):
    """A complex transform over ``dims`` (forward: e^-2pi i..., else the inverse) scaled by
    ``norm``; a real input is transformed as complex (its gradient: the real part)."""
    _backward_name = "FftC2CBackward0"
    complex_grad = True

    @staticmethod
    def forward(ctx, x, dims, norm, forward):
        ctx.plan = dims, norm, forward
        d = x._data
        fft = get_array_module(d).fft
        out = (fft.fftn if forward else fft.ifftn)(d, axes=dims, norm=norm)
        return out.astype(_complex_of(d.dtype), copy=False)

    @staticmethod
    def backward(ctx, grad):
        dims, norm, forward = ctx.plan
        return FftC2C.apply(grad, dims, _DUAL[norm], not forward), None, None, None


class FftR2C(Primitive):
    """The one-sided spectrum (``n // 2 + 1`` bins) of a real signal along ``dim``."""
    _backward_name = "FftR2CBackward0"
    complex_grad = True

    @staticmethod
    def forward(ctx, x, dim, norm):
        d = x._data
        ctx.plan = dim, norm, d.shape[dim]
        out = get_array_module(d).fft.rfft(d, axis=dim, norm=norm)
        return out.astype(_complex_of(d.dtype), copy=False)

    @staticmethod
    def backward(ctx, grad):
        dim, norm, n = ctx.plan
        # the adjoint of keeping the first bins: the rest of the full spectrum is zero
        full = FftC2C.apply(resize(grad, dim, n), (dim,), _DUAL[norm], False)
        return RealPart.apply(full), None, None


class FftC2R(Primitive):
    """The real signal of length ``n`` along ``dim`` whose one-sided spectrum is ``x``
    (``n // 2 + 1`` bins; the imaginary parts of the bins standing for themselves -- 0 and,
    for even ``n``, n/2 -- are ignored)."""
    _backward_name = "FftC2RBackward0"
    complex_grad = True

    @staticmethod
    def forward(ctx, x, dim, n, norm):
        d = x._data
        ctx.plan = dim, n, norm
        out = get_array_module(d).fft.irfft(d, n=n, axis=dim, norm=norm)
        return out.astype(_real_of(d.dtype), copy=False)

    @staticmethod
    def backward(ctx, grad):
        dim, n, norm = ctx.plan
        g = FftR2C.apply(grad, dim, _DUAL[norm])
        bins = n // 2 + 1
        twice = n - bins  # bins 1..twice stand for themselves and their mirror images
        if twice <= 0:
            return g, None, None, None
        xp = get_array_module(grad._data)
        weight = xp.ones(bins, grad._data.dtype)
        weight[1:1 + twice] = 2
        shape = [1] * g.ndim
        shape[dim] = bins
        return g * Tensor._make(weight.reshape(shape)), None, None, None


# ---- argument handling: PyTorch's checks and the composed transforms ----------------------
def resize(x, dim, n):
    """``x`` trimmed or zero-padded at the end of ``dim`` to length ``n`` (differentiable)."""
    size = x.shape[dim]
    if n == size:
        return x
    if n < size:
        return x.narrow(dim, 0, n)
    shape = list(x.shape)
    shape[dim] = n - size
    return Cat.apply(dim, x, x.new_zeros(shape))


def check_norm(norm):
    if norm is None:
        return "backward"
    if norm not in _DUAL:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def promote(x, name, real_only=False, complex_only=False):
    """``x`` as a transform takes it: integers and bool as the default float type, complex
    refused where the transform wants a real signal, half types unsupported (CPU)."""
    dt = x.dtype
    if dt.is_complex:
        if real_only:
            raise RuntimeError(f"{name} expects a real input tensor, but got {dt.scalar_name}")
        return x
    if dt.is_floating_point:
        if dt.np.itemsize < 4 or dt.np.kind == "V":
            raise RuntimeError(f"Unsupported dtype {dt.scalar_name}")
        return x.to(dt.to_complex()) if complex_only else x
    target = dtypes.get_default_dtype()
    return x.to(target.to_complex() if complex_only else target)


def check_size(n):
    if n is not None and n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def one_dim(x, dim):
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, x.ndim)


def plan_dims(x, s, dim, default_all=True):
    """The dims and sizes of an n-d transform (PyTorch's rules for ``s`` and ``dim``)."""
    ndim = x.ndim
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        if ndim == 0 and dims:
            raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
        dims = [_wrap_dim(d, ndim) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{ndim} dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim)) if default_all else []
    sizes = [x.shape[d] if s is None or s[i] == -1 else s[i] for i, d in enumerate(dims)]
    for n in sizes:
        check_size(n)
    return dims, sizes


def c2c(x, dims, sizes, norm, forward, name):
    if not dims:  # nothing to transform: the input as complex, a copy
        return promote(x, name, complex_only=True).clone()
    x = promote(x, name)
    for d, n in zip(dims, sizes):
        x = resize(x, d, n)
    return FftC2C.apply(x, tuple(dims), norm, forward)


def r2c(x, dims, sizes, norm, name, onesided=True):
    """The real-to-complex n-d transform: one-sided along the last of ``dims``."""
    x = promote(x, name, real_only=True)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    for d, n in zip(dims, sizes):
        x = resize(x, d, n)
    out = FftR2C.apply(x, dims[-1], norm)
    if len(dims) > 1:
        out = FftC2C.apply(out, tuple(dims[:-1]), norm, True)
    return out


def c2r(x, dims, sizes, norm, name):
    """The complex-to-real n-d transform: ``sizes[-1]`` is the real output's last length."""
    x = promote(x, name, complex_only=True)
    if not dims:
        raise RuntimeError(f"{name} must transform at least one axis")
    last = sizes[-1]
    for d, n in zip(dims[:-1], sizes[:-1]):
        x = resize(x, d, n)
    x = resize(x, dims[-1], last // 2 + 1)
    if len(dims) > 1:
        x = FftC2C.apply(x, tuple(dims[:-1]), norm, False)
    return FftC2R.apply(x, dims[-1], last, norm)


def c2r_sizes(x, s, dim):
    """Dims and output sizes of irfftn: the last length defaults to 2 * (m - 1)."""
    dims, sizes = plan_dims(x, s, dim)
    if dims and (s is None or s[-1] == -1):
        sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
        check_size(sizes[-1])
    return dims, sizes


def wrapped_frequencies(k, n):
    """``k`` (0 .. n-1, a tensor) with the negative frequencies: k - n for k >= ceil(n / 2)."""
    d = k._data
    xp = get_array_module(d)
    return Tensor._make(xp.where(d >= math.ceil(n / 2), d - n, d).astype(d.dtype, copy=False))


def shift_amounts(x, dim, inverse):
    """The dims and per-dim shifts of fftshift (``inverse``: ifftshift)."""
    if dim is None:
        dims = list(range(x.ndim))
    else:
        dims = [_wrap_dim(d, x.ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    shifts = [-(x.shape[d] // 2) if inverse else x.shape[d] // 2 for d in dims]
    return dims, shifts
