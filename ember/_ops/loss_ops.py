"""Numerically stable loss kernels: log-sigmoid and binary cross entropy.

Each is a ``Primitive`` whose forward works on NumPy arrays and whose backward
is written with ember ops, so the losses built on them are twice
differentiable. Everything else in ``nn.functional``'s losses is composed of
ordinary ember ops.
"""
import numpy as np

from .primitive import Primitive


class LogSigmoid(Primitive):
    """``log(sigmoid(x)) = -(max(-x, 0) + log1p(exp(-|x|)))``, stable for any x."""
    _backward_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        d = x._data
        with np.errstate(over="ignore"):
            return -(np.maximum(-d, 0) + np.log1p(np.exp(-np.abs(d))))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (-x).sigmoid()


class BinaryCrossEntropy(Primitive):
    """Element-wise ``-(t log x + (1 - t) log(1 - x))`` with each log clamped at -100,
    and PyTorch's gradient ``(x - t) / max(x (1 - x), 1e-12)``."""
    _backward_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, t):
        xd, td = x._data, t._data
        if xd.size and ((xd < 0) | (xd > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
        ctx.save_for_backward(x, t)
        with np.errstate(divide="ignore"):
            log_x = np.maximum(np.log(xd), -100)
            log_1mx = np.maximum(np.log1p(-xd), -100)
        return ((td - 1) * log_1mx - td * log_x).astype(np.result_type(xd, td), copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        gx = gt = None
        if ctx.needs_input_grad[0]:
            gx = grad * (x - t) / (x * (1 - x)).clamp_min(1e-12)
        if ctx.needs_input_grad[1]:
            gt = grad * ((-x).log1p().clamp_min(-100) - x.log().clamp_min(-100))
        return gx, gt


def log_sigmoid(x):
    """Stable ``log(sigmoid(x))``."""
    return LogSigmoid.apply(x)


def binary_cross_entropy_elementwise(x, t):
    """Unreduced, unweighted binary cross entropy of probabilities ``x``."""
    return BinaryCrossEntropy.apply(x, t)


__all__ = ["log_sigmoid", "binary_cross_entropy_elementwise"]
