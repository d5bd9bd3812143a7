"""Numerically stable log-sigmoid, a ``Primitive`` whose backward is written with ember
ops (twice differentiable). The losses that are one node in PyTorch's graph are in
``loss_nodes``."""
from .primitive import Primitive
from ..backend import get_array_module


class LogSigmoid(Primitive):
    """``log(sigmoid(x)) = -(max(-x, 0) + log1p(exp(-|x|)))``, stable for any x."""
    _backward_name = "LogSigmoidBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        d = x._data
        xp = get_array_module(d)
        with xp.errstate(over="ignore"):
            return -(xp.maximum(-d, 0) + xp.log1p(xp.exp(-xp.abs(d))))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * (-x).sigmoid()


def log_sigmoid(x):
    """Stable ``log(sigmoid(x))``."""
    return LogSigmoid.apply(x)


__all__ = ["log_sigmoid"]
