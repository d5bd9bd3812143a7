"""Numerically stable loss kernels: log-sigmoid and binary cross entropy.

Each is a ``Primitive`` whose forward works on NumPy arrays and whose backward
is written with ember ops, so the losses built on them are twice
differentiable. Everything else in ``nn.functional``'s losses is composed of
ordinary ember ops.
"""
from .nn_ops import log_softmax
from .primitive import Primitive
from .._tensor import Tensor
from ..backend import get_array_module
from ..autograd.grad_mode import _state as _grad_state


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
        xp = get_array_module(xd, td)
        with xp.errstate(divide="ignore"):
            log_x = xp.maximum(xp.log(xd), -100)
            log_1mx = xp.maximum(xp.log1p(-xd), -100)
        return ((td - 1) * log_1mx - td * log_x).astype(xp.result_type(xd, td), copy=False)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        gx = gt = None
        if ctx.needs_input_grad[0]:
            gx = grad * (x - t) / (x * (1 - x)).clamp_min(1e-12)
        if ctx.needs_input_grad[1]:
            gt = grad * ((-x).log1p().clamp_min(-100) - x.log().clamp_min(-100))
        return gx, gt


class CrossEntropy(Primitive):
    """``nll_loss(log_softmax(x, 1), t)`` for ``x`` of shape ``(N, C)`` and class indices
    ``t``, fused: one pass for the log-sum-exp, and a backward of
    ``(softmax(x) - onehot(t)) * w`` scaled by the reduction. With ``create_graph`` the
    backward is built from ember ops (``log_softmax``), so it is twice differentiable."""
    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, t, weight, ignore_index, reduction):
        d = x._data
        n, c = d.shape
        xp = get_array_module(d)
        valid = t != ignore_index
        all_valid = valid.all()
        safe = t if all_valid else xp.where(valid, t, 0)
        if n and (safe.min() < 0 or safe.max() >= c):
            bad = valid & ((t < 0) | (t >= c))
            raise IndexError(f"Target {t[bad][0]} is out of bounds.")
        if weight is None:
            w = xp.ones(n, d.dtype) if all_valid else valid.astype(d.dtype)
        else:
            w = weight[safe].astype(d.dtype, copy=False)
            if not all_valid:
                w = w * valid
        rows = xp.arange(n)
        shifted = d - d.max(axis=1, keepdims=True) if c else d.copy()
        e = xp.exp(shifted)
        s = e.sum(axis=1, keepdims=True)
        losses = (xp.log(s[:, 0]) - shifted[rows, safe]) * w
        e /= s  # softmax, kept for backward
        ctx.save_for_backward(x)
        ctx.softmax, ctx.w, ctx.rows, ctx.safe, ctx.reduction = e, w, rows, safe, reduction
        if reduction == "none":
            return losses
        if reduction == "sum":
            return xp.asarray(losses.sum(), d.dtype)
        ctx.total = total = w.sum()
        with xp.errstate(invalid="ignore", divide="ignore"):
            return xp.asarray(losses.sum() / total, d.dtype)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors  # raises if the graph was freed
        if not ctx.needs_input_grad[0]:
            return None, None, None, None, None
        w, reduction = ctx.w, ctx.reduction
        xp = get_array_module(w)
        if reduction == "mean":
            with xp.errstate(invalid="ignore", divide="ignore"):
                w = w / ctx.total
        if not _grad_state.enabled:  # no graph to record: NumPy on the saved softmax
            coef = w * grad._data
            gx = ctx.softmax * coef[:, None]
            gx[ctx.rows, ctx.safe] -= coef
            return Tensor._make(gx), None, None, None, None
        onehot = xp.zeros(x._data.shape, x._data.dtype)
        onehot[ctx.rows, ctx.safe] = 1
        coef = grad * Tensor._make(w)
        gx = (log_softmax(x, 1).exp() - Tensor._make(onehot)) * coef.unsqueeze(1)
        return gx, None, None, None, None


def cross_entropy_indices(x, target, weight, ignore_index, reduction):
    """Fused cross entropy of logits ``x`` ``(N, C)`` at class indices ``target`` ``(N,)``;
    ``weight`` is an array of ``C`` class weights or None."""
    return CrossEntropy.apply(x, target, weight, ignore_index, reduction)


def log_sigmoid(x):
    """Stable ``log(sigmoid(x))``."""
    return LogSigmoid.apply(x)


def binary_cross_entropy_elementwise(x, t):
    """Unreduced, unweighted binary cross entropy of probabilities ``x``."""
    return BinaryCrossEntropy.apply(x, t)


__all__ = ["log_sigmoid", "binary_cross_entropy_elementwise", "cross_entropy_indices"]
