"""Window functions of ``torch.signal.windows``, composed of ember's differentiable ops
(``linspace`` then elementwise math), so ``requires_grad=True`` gives a window whose
gradient flows back to the sample positions, as PyTorch's does.

Every window takes ``M`` (its length) and the keywords ``sym`` (True: symmetric, for filter
design; False: periodic, one sample of an ``M + 1`` window dropped, for spectral analysis),
``dtype`` (float32 or float64; default: the default dtype), ``layout`` (strided only),
``device`` and ``requires_grad``.

>>> import ember
>>> ember.signal.windows.hann(4, sym=False)
tensor([0.0000, 0.5000, 1.0000, 0.5000])
"""
from __future__ import annotations

import math
from collections.abc import Iterable

from ... import _creation
from ... import _functions as F
from ..._tensor import Tensor
from ...backend import dtypes

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

_STRIDED = _creation.STRIDED


def _checked_dtype(name, M, dtype, layout):
    """The window's dtype, after PyTorch's checks of M, layout and dtype (in that order)."""
    if dtype is None:
        dtype = dtypes.get_default_dtype()
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout != _STRIDED:
        shown = f"torch.{layout}" if isinstance(layout, str) else layout
        raise ValueError(f"{name} is implemented for strided tensors only, got: {shown}")
    if dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: torch.{dtype.name}")
    return dtype


def _trivial(M, dtype, device, requires_grad):
    """The windows of length 0 and 1 (a leaf, as PyTorch returns it), else None."""
    if M == 0:
        return _creation.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return _creation.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _positions(start, end, M, dtype, device, requires_grad):
    if not hasattr(M, "__index__"):  # PyTorch's linspace takes no float steps
        raise TypeError(f"linspace() received an invalid combination of arguments - got "
                        f"(steps={type(M).__name__}, ...), but expected (Number start, "
                        f"Number end, int steps)")
    return _creation.linspace(start, end, M, dtype=dtype, device=device,
                              requires_grad=requires_grad)


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=_STRIDED, device=None, requires_grad: bool = False) -> Tensor:
    """The exponential (Poisson) window ``exp(-|n - center| / tau)``; ``center`` (periodic
    windows only) defaults to the middle.

    >>> import ember
    >>> ember.signal.windows.exponential(3, tau=1.0)
    tensor([0.3679, 1.0000, 0.3679])
    """
    dtype = _checked_dtype("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    rate = 1 / tau
    k = _positions(-center * rate, (-center + (M - 1)) * rate, M, dtype, device, requires_grad)
    return F.exp(-F.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=_STRIDED, device=None,
           requires_grad: bool = False) -> Tensor:
    """The cosine (sine) window ``sin(pi (n + 1/2) / M)``.

    >>> import ember
    >>> ember.signal.windows.cosine(2)
    tensor([0.7071, 0.7071])
    """
    dtype = _checked_dtype("cosine", M, dtype, layout)
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    step = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _positions(0.5 * step, (0.5 + (M - 1)) * step, M, dtype, device, requires_grad)
    return F.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=_STRIDED,
             device=None, requires_grad: bool = False) -> Tensor:
    """The Gaussian window ``exp(-(n - c)^2 / (2 std^2))`` around the middle ``c``.

    >>> import ember
    >>> ember.signal.windows.gaussian(3, std=1.0)
    tensor([0.6065, 1.0000, 0.6065])
    """
    dtype = _checked_dtype("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _trivial(M, dtype, device, requires_grad)
    first = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _positions(first * scale, (first + (M - 1)) * scale, M, dtype, device, requires_grad)
    return F.exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=_STRIDED,
           device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window ``I0(beta sqrt(1 - x^2)) / I0(beta)`` for ``x`` from -1 to 1.

    >>> import ember
    >>> ember.signal.windows.kaiser(3, beta=0.0)
    tensor([1., 1., 1.])
    """
    dtype = _checked_dtype("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    # the ends in the window's dtype (on the host: a meta window has no values to read), as
    # their rounding decides sqrt's argument at the ends
    b = _creation.tensor(beta, dtype=dtype, device="cpu")
    step = 2.0 * b / (M if not sym else M - 1)
    end = F.minimum(b, -b + (M - 1) * step)
    k = _positions((-b).item(), end.item(), M, dtype, device, requires_grad)
    b = _creation.tensor(beta, dtype=dtype, device=k.device)
    return F.i0(F.sqrt(b * b - F.pow(k, 2))) / F.i0(b)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=_STRIDED, device=None,
            requires_grad: bool = False) -> Tensor:
    """The Hamming window: ``general_hamming`` with ``alpha=0.54``.

    >>> import ember
    >>> ember.signal.windows.hamming(3)
    tensor([0.0800, 1.0000, 0.0800])
    """
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=_STRIDED, device=None,
         requires_grad: bool = False) -> Tensor:
    """The Hann window: ``general_hamming`` with ``alpha=0.5``.

    >>> import ember
    >>> ember.signal.windows.hann(5)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=_STRIDED, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Blackman window: ``general_cosine`` with ``a=[0.42, 0.5, 0.08]``.

    >>> import ember
    >>> ember.signal.windows.blackman(3, dtype=ember.float64)
    tensor([-1.3878e-17,  1.0000e+00, -1.3878e-17], dtype=ember.float64)
    """
    dtype = _checked_dtype("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=_STRIDED, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular, zero at the ends) window ``1 - |x|``, ``x`` from -1.

    >>> import ember
    >>> ember.signal.windows.bartlett(4, sym=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    dtype = _checked_dtype("bartlett", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    step = 2 / (M if not sym else M - 1)
    k = _positions(-1, -1 + (M - 1) * step, M, dtype, device, requires_grad)
    return 1 - F.abs(k)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=_STRIDED,
                   device=None, requires_grad: bool = False) -> Tensor:
    """The sum of cosines ``sum_i (-1)^i a[i] cos(2 pi i n / N)`` (``N = M - 1``, or ``M``
    when periodic).

    >>> import ember
    >>> ember.signal.windows.general_cosine(3, a=[0.5, 0.5])
    tensor([0., 1., 0.])
    """
    dtype = _checked_dtype("general_cosine", M, dtype, layout)
    if M <= 1:
        return _trivial(M, dtype, device, requires_grad)
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / (M if not sym else M - 1)
    k = _positions(0, (M - 1) * step, M, dtype, device, requires_grad)
    coefficients = _creation.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                                    device=device, requires_grad=requires_grad)
    order = _creation.arange(coefficients.shape[0], dtype=dtype, device=coefficients.device,
                             requires_grad=requires_grad)
    return (coefficients.unsqueeze(-1) * F.cos(order.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=_STRIDED,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The generalized Hamming window ``alpha - (1 - alpha) cos(2 pi n / N)``.

    >>> import ember
    >>> ember.signal.windows.general_hamming(3, alpha=0.6)
    tensor([0.2000, 1.0000, 0.2000])
    """
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=_STRIDED, device=None,
            requires_grad: bool = False) -> Tensor:
    """Nuttall's minimum 4-term Blackman-Harris window (``general_cosine`` with
    ``a=[0.3635819, 0.4891775, 0.1365995, 0.0106411]``).

    >>> import ember
    >>> ember.signal.windows.nuttall(3)
    tensor([3.6280e-04, 1.0000e+00, 3.6280e-04])
    """
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
