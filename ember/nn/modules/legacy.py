"""Legacy layers PyTorch still ships: ``CrossMapLRN2d`` (Lua Torch's cross-channel LRN),
and the deprecated ``NLLLoss2d`` and ``Container``.

``CrossMapLRN2d`` keeps PyTorch's numbers, which are not ``LocalResponseNorm``'s: its
forward sums squares over a running window ported from 1-based code, so from channel
``(size - 1) // 2 + 2`` on the window also keeps channel 0; its backward is the gradient of
the symmetric window (not of that forward), as PyTorch's is.
"""
import warnings

from ... import _creation, _functions as _F
from ...autograd.function import Function, once_differentiable
from .loss import NLLLoss
from .module import Module

__all__ = ["CrossMapLRN2d", "NLLLoss2d", "Container"]


def _forward_window(channels, size):
    """The 0/1 matrix ``W`` with ``scale[c] = sum_j W[c, j] * x[j]**2`` that PyTorch's running
    forward sum produces (entries added and removed as its loop does)."""
    pre_pad = int((size - 1) / 2 + 1)
    rows = [[0.0] * channels for _ in range(channels)]
    for j in range(min(pre_pad, channels)):
        rows[0][j] = 1.0
    for c in range(1, channels):
        rows[c] = list(rows[c - 1])
        if c < channels - pre_pad + 1:
            rows[c][c + pre_pad - 1] += 1.0
        if c > pre_pad:
            rows[c][c - pre_pad] -= 1.0
    return rows


def _backward_window(channels, size):
    """The 0/1 matrix ``B`` with ``accum[c] = sum_j B[c, j] * ratio[j]``: the window of
    ``size`` channels PyTorch's backward slides, ``inverse_pre_pad`` of them before ``c``."""
    inverse_pre_pad = int(size - (size - 1) / 2)
    return [[1.0 if c - inverse_pre_pad <= j <= c + size - 1 - inverse_pre_pad else 0.0
             for j in range(channels)] for c in range(channels)]


def _channel_mix(matrix, x):
    """``out[n, c] = sum_j matrix[c][j] * x[n, j]`` for ``x`` of shape (N, C, H, W)."""
    w = _creation.tensor(matrix, dtype=x.dtype, device=x.device)
    return _F.einsum("cj,njhw->nchw", w, x)


class _CrossMapLRN2dFunction(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(
                f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D instead.")
        channels = input.shape[1]
        scale = _channel_mix(_forward_window(channels, size), input * input)
        scale = scale * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.size, ctx.alpha, ctx.beta = size, alpha, beta
        ctx.save_for_backward(input, output, scale)
        return output

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        channels = input.shape[1]
        inverse_pre_pad = int(ctx.size - (ctx.size - 1) / 2)
        if inverse_pre_pad + channels > channels + ctx.size - 1:  # size 1: PyTorch's fails
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds "
                               f"dimension size ({channels + ctx.size - 1}).")
        ratio = grad_output * output / scale
        accum = _channel_mix(_backward_window(channels, ctx.size), ratio)
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / ctx.size
        grad_input = scale.pow(-ctx.beta) * grad_output - cache_ratio_value * input * accum
        return grad_input, None, None, None, None


class CrossMapLRN2d(Module):
    """Lua Torch's cross-channel local response normalization of (N, C, H, W) input.

    >>> import ember
    >>> CrossMapLRN2d(3)(ember.ones(1, 4, 2, 2)).shape
    ember.Size([1, 4, 2, 2])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return _CrossMapLRN2dFunction.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class NLLLoss2d(NLLLoss):
    """Deprecated: ``NLLLoss`` under its old name (warns as PyTorch does)."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class Container(Module):
    """Deprecated: a Module whose keyword arguments become its submodules."""

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.",
                      FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)
