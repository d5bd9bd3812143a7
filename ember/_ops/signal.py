"""Signal processing: the short-time Fourier transform and its inverse (``stft``, ``istft``),
numerical derivatives (``gradient``) and n-dimensional histograms (``histogramdd``).

``stft`` and ``istft`` are composed of differentiable ops -- padding (an index gather or a
concatenation), framing (``unfold``), the window product, the transforms of ``fft_ops`` and,
for the inverse, overlap-add (``index_add``) divided by the window's envelope -- so their
gradients, complex ones included, need no code of their own. ``gradient`` is slices and
arithmetic; ``histogramdd`` counts on the array module (integer bins, no gradient).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._creation import beside, tensor
from .._tensor import Tensor, _wrap_dim
from .._typing import Number, Sequence
from ..backend import dtypes, get_array_module
from ..backend.meta import is_meta
from .. import return_types
from ..autograd.batching import per_sample_under_vmap
from .basics import unfold
from .complex_ops import ViewAsReal
from .fft_ops import FftC2C, FftC2R, FftR2C
from .shape import Cat
from .statistics import _cpp_number, _not_implemented
from .statistics_counts import _linspace

_PAD_HELP = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known "
              "to cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set "
              "`window=torch.ones(n_fft, device=<device>)`.")
_NO_WINDOW_INVERSE = ("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.")
_REAL_OUTPUT_DEPRECATED = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format.")


def _shape_text(shape):
    return ", ".join(str(s) for s in shape)


def _flag(value):
    return "None" if value is None else str(int(bool(value)))


def _window_text(window):
    return "None" if window is None else f"{window.type()}{{[{_shape_text(window.shape)}]}}"


# ---- padding the signal for a centred stft (PyTorch pads in F.pad's 3-D form) -------------
def _pad_positions(size, pad, mode):
    """Where each padded position reads from (host indices, PyTorch's padding rules)."""
    j = np.arange(-pad, size + pad)
    if mode == "reflect":
        period = 2 * (size - 1)
        j = np.abs(j) % period if period else np.zeros_like(j)
        return np.where(j >= size, period - j, j)
    if mode == "replicate":
        return np.clip(j, 0, size - 1)
    return j % size  # circular


def _pad_signal(x, pad, mode):
    """``x`` (at least 3-D) padded by ``pad`` on both ends of its last dim."""
    shape = list(x.shape)
    if mode == "constant":
        if pad == 0:
            return x
        zeros = x.new_zeros(shape[:-1] + [pad])
        return Cat.apply(x.ndim - 1, zeros, x, zeros)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if x.ndim != 3:
        raise NotImplementedError(f"Padding size 2 is not supported for {x.ndim}D input "
                                  f"tensor.\n{_PAD_HELP}")
    size = shape[-1]
    if mode != "circular" and 0 in shape[1:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: {shape}")
    if mode == "reflect" and pad >= size:
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({pad}, {pad}) at dimension 2 "
                           f"of input {shape}")
    if mode == "circular" and pad > size:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    index = beside(tensor(_pad_positions(size, pad, mode).astype(np.int64)), x)
    return x.index_select(2, index)


def _centre(input, n_fft, pad_mode):
    """The signal padded by ``n_fft // 2`` on each side, as PyTorch's stft pads it: viewed as
    3-D (a 0-d signal stays 3-D, a 3-D one keeps its shape and is refused later)."""
    ndim = input.ndim
    x = input.reshape([1] * (3 - ndim) + list(input.shape))
    x = _pad_signal(x, n_fft // 2, pad_mode)
    return x.reshape(x.shape[-ndim:]) if ndim else x


def _centred_window(window, n_fft, win_length, like, dtype=None):
    """The window (ones of ``like``'s dtype or ``dtype`` when None) zero-padded on both sides
    to ``n_fft`` points."""
    if window is None:
        window = like.new_ones(win_length, dtype=dtype)
    left = (n_fft - win_length) // 2
    if win_length == n_fft:
        return window
    zeros = window.new_zeros
    return Cat.apply(0, zeros(left), window, zeros(n_fft - win_length - left))


# ---- stft ---------------------------------------------------------------------------------
def _stft_checks(x, n_fft, hop, win, window, normalized, onesided, return_complex, align):
    def fail(message):
        raise RuntimeError(
            f"stft({x.type()}[{_shape_text(x.shape)}], n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_text(window)}, normalized={_flag(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={_flag(return_complex)}, "
            f"align_to_window={_flag(align)}) : {message}")
    if x.ndim not in (1, 2):
        fail("expected a 1D or 2D tensor")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        fail("expected a tensor of floating point or complex values")
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        fail(f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size [{_shape_text(window.shape)}]")


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: the spectrum of each ``n_fft``-point frame,
    ``hop_length`` apart (default ``n_fft // 4``), times ``window`` (``win_length`` points,
    centred; rectangular when None), as a ``(freq, frames)`` tensor (batched for 2-D input).
    ``center``: the signal padded by ``n_fft // 2`` on each side (``pad_mode``); ``onesided``
    (default for real input and window): the ``n_fft // 2 + 1`` non-negative frequencies;
    ``normalized``: scaled by ``n_fft ** -0.5``.

    >>> import ember
    >>> ember.stft(ember.tensor([1.0, 2.0, 3.0, 4.0]), 4, window=ember.ones(4),
    ...            center=False, return_complex=True)
    tensor([[10.+0.j],
            [-2.+2.j],
            [-2.+0.j]])
    """
    for name, value in (("n_fft", n_fft), ("hop_length", hop_length),
                        ("win_length", win_length)):
        if not isinstance(value, int) and (value is not None or name == "n_fft"):
            raise TypeError(f"stft(): argument '{name}' must be int, not "
                            f"{type(value).__name__}")
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        input = _centre(input, n_fft, pad_mode)
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    complex_given = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if return_complex is None and not complex_given:
        raise RuntimeError("stft requires the return_complex parameter be given for real "
                           "inputs, and will further require that return_complex=True in a "
                           "future PyTorch release.")
    return_complex = complex_given if return_complex is None else bool(return_complex)
    if not return_complex:
        warnings.warn(_REAL_OUTPUT_DEPRECATED, UserWarning, stacklevel=2)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    _stft_checks(input, n_fft, hop, win, window, normalized, onesided, return_complex,
                 align_to_window)
    if align_to_window:
        raise NotImplementedError("ember's stft does not support align_to_window=True")
    x = input if input.ndim == 2 else input.unsqueeze(0)
    frames = unfold(x, 1, n_fft, hop)  # (batch, frames, n_fft)
    if window is not None or win < n_fft:
        frames = frames * _centred_window(window, n_fft, win, input)
    if frames.dtype in (dtypes.float16, dtypes.bfloat16):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: "
                           f"{frames.dtype.scalar_name}")
    is_complex = frames.dtype.is_complex
    onesided = not is_complex if onesided is None else onesided
    norm = "ortho" if normalized else "backward"
    if is_complex and onesided:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    if onesided:
        out = FftR2C.apply(frames, 2, norm)
    else:  # a real signal's full spectrum: the complex transform (its gradient the real part)
        out = FftC2C.apply(frames, (2,), norm, True)
    out = out.transpose(1, 2)
    if input.ndim == 1:
        out = out.squeeze(0)
    return out if return_complex else ViewAsReal.apply(out)


# ---- istft --------------------------------------------------------------------------------
def _overlap_add(frames, hop, length):
    """Frames ``(batch, count, n)`` added into signals of ``length`` points at ``hop`` steps."""
    batch, count, n = frames.shape
    where = (np.arange(count)[:, None] * hop + np.arange(n)).reshape(-1)
    out = frames.new_zeros((batch, length))
    return out.index_add(1, beside(tensor(where), frames), frames.reshape(batch, count * n))


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of ``stft``: the signal whose short-time transform is the complex
    ``input`` (``(freq, frames)`` or batched), by overlap-add of the inverse transforms of
    the frames, each times ``window``, divided by the sum of the squared windows.
    ``length``: trim or zero-pad the result to that many points.

    >>> import ember
    >>> x = ember.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    >>> spec = ember.stft(x, 4, window=ember.hann_window(4), return_complex=True)
    >>> ember.istft(spec, 4, window=ember.hann_window(4), length=8)
    tensor([1., 2., 3., 4., 5., 6., 7., 8.])
    """
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    prefix = (f"istft({input.device.type.upper()}{input.dtype.scalar_name}Type"
              f"[{_shape_text(input.shape)}], n_fft={n_fft}, hop_length={hop}, "
              f"win_length={win}, window={_window_text(window)}, center={_flag(center)}, "
              f"normalized={_flag(normalized)}, onesided={_flag(onesided)}, "
              f"length={'None' if length is None else length}, "
              f"return_complex={_flag(return_complex)})")
    x = _istft_checks(input, n_fft, hop, win, window, onesided, prefix)
    onesided = x.shape[1] != n_fft if onesided is None else onesided
    if window is None:
        warnings.warn(_NO_WINDOW_INVERSE, UserWarning, stacklevel=2)
    frames = x.transpose(1, 2)  # (batch, frames, freq)
    norm = "ortho" if normalized else "backward"
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = FftC2C.apply(frames, (2,), norm, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            frames = frames.narrow(2, 0, n_fft // 2 + 1)
        frames = FftC2R.apply(frames, 2, n_fft, norm)
    full = _centred_window(window, n_fft, win, frames, input.dtype.to_real())
    count = frames.shape[1]
    expected = n_fft + hop * (count - 1)
    signal = _overlap_add(frames * full, hop, expected)
    envelope = _overlap_add((full * full).expand(1, count, n_fft), hop, expected)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (
        expected - n_fft // 2 if center else expected)
    signal = signal[:, start:max(end, start)]
    envelope = envelope[:, start:max(end, start)]
    if not is_meta(envelope._data) and bool((envelope.abs().min() < 1e-11).item()):
        raise RuntimeError(f"{prefix} window overlap add min: 1\n[ CPUBoolType{{}} ]")
    signal = signal / envelope
    if input.ndim == 2:
        signal = signal.squeeze(0)
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        zeros = signal.new_zeros(tuple(signal.shape[:-1]) + (end - expected,))
        signal = Cat.apply(signal.ndim - 1, signal, zeros)
    return signal


def _istft_checks(input, n_fft, hop, win, window, onesided, prefix):
    """PyTorch's checks, in its order; the input as ``(batch, freq, frames)``."""
    def fail(message):
        raise RuntimeError(f"{prefix} : {message}")
    if input.numel() == 0:
        fail("input tensor cannot be empty.")
    if input.ndim not in (2, 3):  # PyTorch counts the real view's last dim of 2
        fail(f"expected a tensor with 3 or 4 dimensions, but got {input.ndim + 1}")
    freq = input.shape[-2]
    onesided = freq != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != freq:
        fail(f"expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft / 2 + 1 when onesided=True, but got {freq}")
    if not onesided and n_fft != freq:
        fail(f"expected the frequency dimension (3rd to the last) of the input tensor to match "
             f"n_fft when onesided=False, but got {freq}")
    if not 0 < hop <= win:
        fail("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail("expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail("Invalid window shape. window has to be 1D and length of `win_length`")
    return input if input.ndim == 3 else input.unsqueeze(0)


# ---- gradient -----------------------------------------------------------------------------
def _gradient_dims(input, dim):
    if dim is None:
        return None, list(range(input.ndim))
    if isinstance(dim, int):
        return [_wrap_dim(dim, input.ndim)], [_wrap_dim(dim, input.ndim)]
    return list(dim), list(dim)


def _gradient_checks(input, count, given_dims, dims, edge_order):
    """PyTorch's checks, in its order (``count``: the length of a list ``spacing``)."""
    if input.dtype is dtypes.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if count is not None and given_dims is None and count != input.ndim:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {input.ndim}', since dim "
                           f"argument was not given, but got a list of length {count}")
    if count is not None and given_dims is not None and count != len(given_dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                           f"it's spacing and dim arguments to have the same length, but got a "
                           f"spacing argument of length {count} and a dim argument of length "
                           f"{len(given_dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    wrapped = [_wrap_dim(d, input.ndim) for d in dims]
    for d in wrapped:
        if wrapped.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    for d in wrapped:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    return wrapped


def _joined(d, first, middle, last):
    """``first``, ``middle``, ``last`` concatenated along ``d`` in their promoted dtype."""
    parts = (first, middle, last)
    dt = dtypes.result_type(*parts)
    return Cat.apply(d, *(p if p.dtype is dt else p.to(dt) for p in parts))


def _uniform_derivative(x, d, h, edge_order):
    """The derivative along ``d`` for samples ``h`` apart: central differences inside, one-
    sided ones of ``edge_order`` at the ends."""
    n = x.shape[d]

    def at(start, length=1):
        return x.narrow(d, start, length)
    middle = (at(2, n - 2) - at(0, n - 2)) / h / 2
    if edge_order == 1:
        first, last = (at(1) - at(0)) / h, (at(n - 1) - at(n - 2)) / h
    else:
        first = (-1.5 * at(0) + 2 * at(1) - 0.5 * at(2)) / h
        last = (0.5 * at(n - 3) - 2 * at(n - 2) + 1.5 * at(n - 1)) / h
    return _joined(d, first, middle, last)


def _coordinate_derivative(x, d, coordinates, edge_order):
    """The derivative along ``d`` for samples at ``coordinates`` (second-order differences
    on the uneven grid inside, one-sided ones of ``edge_order`` at the ends)."""
    n = x.shape[d]
    shape = [1] * x.ndim
    shape[d] = -1
    step = coordinates[1:] - coordinates[:-1]
    h1, h2 = step[:-1], step[1:]

    def at(start, length=1):
        return x.narrow(d, start, length)
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    middle = a * at(0, n - 2) + b * at(1, n - 2) + c * at(2, n - 2)
    s0, s1, e1, e2 = step[0], step[-1], step[-1], step[-2]
    if edge_order == 1:
        first, last = (at(1) - at(0)) / s0, (at(n - 1) - at(n - 2)) / s1
    else:
        s1 = step[1]
        first = (-(2.0 * s0 + s1) / (s0 * (s0 + s1)) * at(0) + (s0 + s1) / (s0 * s1) * at(1)
                 + -s0 / (s1 * (s0 + s1)) * at(2))
        last = (e1 / (e2 * (e1 + e2)) * at(n - 3) - (e1 + e2) / (e1 * e2) * at(n - 2)
                + (2 * e1 + e2) / (e1 * (e1 + e2)) * at(n - 1))
    return _joined(d, first, middle, last)


def gradient(input: Tensor, *, spacing: Number | Sequence = 1,
             dim: int | Sequence[int] | None = None, edge_order: int = 1) -> tuple[Tensor, ...]:
    """Estimates of ``input``'s derivative along each of ``dim`` (default: every dim), one
    tensor per dim: central differences inside, one-sided ones of ``edge_order`` (1 or 2) at
    the ends. ``spacing``: the samples' distance (a scalar, or one per dim) or their
    coordinates (one 1-D tensor per dim).

    >>> import ember
    >>> ember.gradient(ember.tensor([1.0, 4.0, 9.0, 16.0]))
    (tensor([3., 4., 6., 7.]),)
    """
    if isinstance(spacing, Tensor) or isinstance(dim, float):
        raise TypeError(f"gradient() received an invalid combination of arguments - got "
                        f"spacing={type(spacing).__name__}, dim={type(dim).__name__}")
    given_dims, dims = _gradient_dims(input, dim)
    is_list = isinstance(spacing, (list, tuple))
    coordinates = is_list and any(isinstance(s, Tensor) for s in spacing)
    if coordinates and not all(isinstance(s, Tensor) for s in spacing):
        bad = next(i for i, s in enumerate(spacing) if not isinstance(s, Tensor))
        raise TypeError(f"expected Tensor as element {bad} in argument 1, but got "
                        f"{type(spacing[bad]).__name__}")
    wrapped = _gradient_checks(input, len(spacing) if is_list else None, given_dims, dims,
                               edge_order)
    if not is_list:
        spacing = [spacing] * len(wrapped)
    result = []
    for d, h in zip(wrapped, spacing):
        if coordinates:
            if h.ndim != 1:
                raise RuntimeError(f"torch.gradient expected each element of spacing to have "
                                   f"one dimension, but got an element with {h.ndim} "
                                   f"dimensions!")
            result.append(_coordinate_derivative(input, d, h, edge_order))
        else:
            result.append(_uniform_derivative(input, d, h, edge_order))
    return tuple(result)


# ---- histogramdd --------------------------------------------------------------------------
def _histogramdd_edges(sample, d, bins, lo_hi):
    """The edges along dimension ``d`` of the histogram (``bins``: a count or the edges)."""
    xp = get_array_module(sample)
    if isinstance(bins, Tensor):
        if bins.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {bins.ndim} dimensions in the bins tensor for dimension "
                               f"{d}")
        if bins.dtype.np != sample.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype "
                               f"{dtypes.from_numpy_dtype(sample.dtype).cpp_name} and bins for "
                               f"dimension {d} with dtype {bins.dtype.cpp_name}")
        if bins.shape[0] < 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, "
                               f"but got {bins.shape[0]} elements in the bins tensor for "
                               f"dimension {d}")
        if bins.shape[0] == 1:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got 0 for dimension "
                               f"{d}")
        return bins._data.copy()
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension "
                           f"{d}")
    if lo_hi is not None:
        lo, hi = lo_hi
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_cpp_number(lo)} max {_cpp_number(hi)} for dimension {d}")
    elif sample.shape[0] and not is_meta(sample):
        column = sample[:, d]
        lo, hi = float(column.min()), float(column.max())
    else:
        lo, hi = 0.0, 1.0
    if not (math.isfinite(lo) and math.isfinite(hi)):
        shown = ["nan" if math.isnan(v) else _cpp_number(v) for v in (lo, hi)]
        raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{shown[0]}, "
                           f"{shown[1]}] is not finite")
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    return _linspace(xp, lo, hi, bins + 1, sample.dtype)


def _histogramdd_arguments(input, bins, range, weight):
    """PyTorch's checks; the samples as rows ``(N, D)`` and the bins as a list of D."""
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise _not_implemented("histogramdd", input)
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    dims = input.shape[-1]
    if isinstance(bins, (Tensor, float)):
        raise TypeError(f"histogramdd() received an invalid combination of arguments - got "
                        f"(Tensor, {type(bins).__name__}), but expected an int, a tuple of ints "
                        f"or a tuple of Tensors as bins")
    if isinstance(bins, int):
        bins = [bins] * dims
    bins = list(bins)
    tensors = bool(bins) and isinstance(bins[0], Tensor)
    for i, b in enumerate(bins):
        if tensors and not isinstance(b, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                            f"{type(b).__name__}")
        if not tensors and not isinstance(b, int):
            raise TypeError(f"histogramdd(): argument 'bins' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(b).__name__}\"")
    if len(bins) != dims:
        if tensors:
            raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for "
                               f"a {dims}-dimensional histogram but got {len(bins)}")
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if range is not None:
        range = [float(v) for v in range]
        if len(range) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range "
                               f"should have {2 * dims} elements, but got {len(range)}")
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have "
                               f"the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(input.shape)} and "
                               f"weight with shape {list(weight.shape)}")
        if weight.dtype is not input.dtype:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor "
                               f"and weight tensor should have the same dtype, but got "
                               f"input({input.dtype.cpp_name}), and weight("
                               f"{weight.dtype.cpp_name})")
    return bins, range


@per_sample_under_vmap  # counts on the host arrays, sample by sample
def histogramdd(input: Tensor, bins: int | Sequence[int] | Sequence[Tensor], *,
                range: Sequence[float] | None = None, weight: Tensor | None = None,
                density: bool = False) -> tuple[Tensor, tuple[Tensor, ...]]:
    """The histogram of the points in ``input``'s rows (its last dim: their coordinates):
    ``bins`` per dim (a count over ``range`` -- the data's range by default -- or the
    edges), each point counted (or its ``weight`` added) in the bin it falls in; a point on
    the last edge falls in the last bin. Returns (hist, bin_edges).

    >>> import ember
    >>> ember.histogramdd(ember.tensor([[0.0, 0.0], [1.0, 1.0], [0.5, 0.2]]), bins=2).hist
    tensor([[1., 0.],
            [1., 1.]])
    """
    bins, range = _histogramdd_arguments(input, bins, range, weight)
    dims = input.shape[-1]
    xp = get_array_module(input._data)
    if dims == 0:  # points with no coordinates: PyTorch counts nothing
        return return_types.histogramdd(Tensor._make(xp.zeros((), input._data.dtype)), ())
    sample = input._data.reshape(-1, dims)
    edges = [_histogramdd_edges(sample, d, b, None if range is None else range[2 * d:2 * d + 2])
             for d, b in enumerate(bins)]
    counts = [e.shape[0] - 1 for e in edges]
    inside = xp.ones(sample.shape[0], dtype=bool)
    flat = xp.zeros(sample.shape[0], dtype=xp.int64)
    for d, e in enumerate(edges):
        column = sample[:, d]
        inside &= (column >= e[0]) & (column <= e[-1])  # NaN is outside
        # an edge equal to a point opens its bin; the last edge closes the last one
        pos = xp.minimum(xp.searchsorted(e, column, side="right") - 1, counts[d] - 1)
        flat = flat * counts[d] + xp.maximum(pos, 0)
    w = None if weight is None else weight._data.reshape(-1)[inside].astype(xp.float64)
    total = math.prod(counts)
    hist = xp.bincount(flat[inside], weights=w, minlength=total)[:total]
    hist = hist.astype(sample.dtype).reshape(counts)
    if density:
        hist = hist / hist.sum()
        for d, e in enumerate(edges):
            shape = [1] * dims
            shape[d] = counts[d]
            hist = hist / (e[1:] - e[:-1]).reshape(shape)
    return return_types.histogramdd(Tensor._make(hist), tuple(Tensor._make(e) for e in edges))
