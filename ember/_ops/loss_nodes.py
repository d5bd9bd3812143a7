"""Losses that are one node in PyTorch's graph: ``MseLossBackward0``, ``SmoothL1LossBackward0``,
``HuberLossBackward0``, ``BinaryCrossEntropyBackward0``,
``BinaryCrossEntropyWithLogitsBackward0`` and ``NllLossBackward0``.

Each is a ``Primitive``: forward computes the element-wise loss and its reduction on arrays;
backward is written with ember ops, so double backward works. The reduction is part of the
op (as in PyTorch), so ``loss.grad_fn`` names the loss whatever the reduction. Inputs reach
these ops with equal shapes (``nn.functional`` broadcasts first).
"""
import numpy as np

from .loss_ops import log_sigmoid as _log_sigmoid
from .primitive import Primitive
from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.dtypes import from_numpy_dtype, promote_types
from ..backend.meta import is_meta

_make = Tensor._make


def _accumulator(d):
    """float32 for bfloat16 losses: summed in it as PyTorch does, the total rounded once
    (NumPy would add in bfloat16, where a count stops growing at 256)."""
    return "float32" if d.dtype.kind == "V" else None


def _reduced(loss, reduction, dtype):
    if reduction == "none":
        return loss
    xp, acc = get_array_module(loss), _accumulator(loss)
    total = loss.sum(dtype=acc) if reduction == "sum" else loss.mean(dtype=acc) if loss.size \
        else xp.nan
    return xp.asarray(total, dtype)


def _grad_scale(ctx, grad):
    """The incoming gradient as each element's share: itself ('none'), broadcast ('sum'),
    divided by the element count ('mean')."""
    if ctx.reduction == "mean":
        return grad / ctx.numel
    return grad


class _ElementwiseLoss(Primitive):
    """Shared forward of a reduced element-wise loss of ``(x, y)``: subclasses give
    ``elementwise(xp, d)`` of the difference ``d = x - y`` and ``slope(d)``, its derivative."""

    @staticmethod
    def elementwise(xp, d, param):
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, x, y, reduction, param=None):
        xd, yd = x._data, y._data
        xp = get_array_module(xd)
        ctx.save_for_backward(x, y)
        ctx.reduction, ctx.numel, ctx.param = reduction, xd.size, param
        dtype = xd.dtype
        if yd.dtype != dtype:  # PyTorch's promotion (float32 with int64 stays float32), and
            # the operands cast to it before the difference, as its kernel does
            dtype = promote_types(from_numpy_dtype(dtype), from_numpy_dtype(yd.dtype)).np
            xd, yd = xd.astype(dtype, copy=False), yd.astype(dtype, copy=False)
        loss = cls.elementwise(xp, xd - yd, param).astype(dtype, copy=False)
        return _reduced(loss, reduction, dtype)

    @classmethod
    def backward(cls, ctx, grad):
        x, y = ctx.saved_tensors
        g = cls.slope(x - y, ctx.param) * _grad_scale(ctx, grad)
        return (g if ctx.needs_input_grad[0] else None,
                -g if ctx.needs_input_grad[1] else None, None, None)


class MseLoss(_ElementwiseLoss):
    """``(x - y)**2``, reduced."""
    _backward_name = "MseLossBackward0"

    @staticmethod
    def elementwise(xp, d, param):
        return d * d

    @staticmethod
    def slope(d, param):
        return 2 * d


class SmoothL1Loss(_ElementwiseLoss):
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``beta > 0``)."""
    _backward_name = "SmoothL1LossBackward0"

    @staticmethod
    def elementwise(xp, d, beta):
        ad = xp.abs(d)
        return xp.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)

    @staticmethod
    def slope(d, beta):
        return (d / beta).clamp(-1, 1)


class HuberLoss(_ElementwiseLoss):
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    _backward_name = "HuberLossBackward0"

    @staticmethod
    def elementwise(xp, d, delta):
        ad = xp.abs(d)
        return xp.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))

    @staticmethod
    def slope(d, delta):
        return d.clamp(-delta, delta)


class BinaryCrossEntropy(Primitive):
    """``-w (t log x + (1 - t) log(1 - x))`` with each log clamped at -100, reduced; PyTorch's
    gradient ``w (x - t) / max(x (1 - x), 1e-12)``. ``weight`` is a tensor of the input's
    shape or None (it gets no gradient, as in PyTorch)."""
    _backward_name = "BinaryCrossEntropyBackward0"

    @staticmethod
    def forward(ctx, x, t, weight, reduction):
        xd, td = x._data, t._data
        xp = get_array_module(xd)
        if xd.size and ((xd < 0) | (xd > 1)).any():
            raise RuntimeError("all elements of input should be between 0 and 1")
        ctx.save_for_backward(x, t)
        ctx.weight, ctx.reduction, ctx.numel = weight, reduction, xd.size
        dtype = np.result_type(xd.dtype, td.dtype)
        with np.errstate(divide="ignore"):
            log_x = xp.maximum(xp.log(xd), -100)
            log_1mx = xp.maximum(xp.log1p(-xd), -100)
        loss = ((td - 1) * log_1mx - td * log_x).astype(dtype, copy=False)
        if weight is not None:
            loss = (loss * weight._data).astype(dtype, copy=False)
        return _reduced(loss, reduction, dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        g = _grad_scale(ctx, grad)
        if ctx.weight is not None:
            g = g * ctx.weight
        gx = gt = None
        if ctx.needs_input_grad[0]:
            gx = g * (x - t) / (x * (1 - x)).clamp_min(1e-12)
        if ctx.needs_input_grad[1]:
            gt = g * ((-x).log1p().clamp_min(-100) - x.log().clamp_min(-100))
        return gx, gt, None, None


def _log_sigmoid_array(xp, d):
    with np.errstate(over="ignore"):
        return -(xp.maximum(-d, 0) + xp.log1p(xp.exp(-xp.abs(d))))


class BinaryCrossEntropyWithLogits(Primitive):
    """``w ((1 - t) x - (1 + (p - 1) t) log_sigmoid(x))`` for logits ``x``, targets ``t``,
    ``weight`` w and ``pos_weight`` p (tensors broadcastable to x, or None; they get no
    gradient), reduced."""
    _backward_name = "BinaryCrossEntropyWithLogitsBackward0"

    @staticmethod
    def forward(ctx, x, t, weight, pos_weight, reduction):
        xd, td = x._data, t._data
        xp = get_array_module(xd)
        ctx.save_for_backward(x, t)
        ctx.weight, ctx.pos_weight = weight, pos_weight
        ctx.reduction, ctx.numel = reduction, xd.size
        log_sig = _log_sigmoid_array(xp, xd)
        if pos_weight is not None:
            log_sig = log_sig * ((pos_weight._data - 1) * td + 1)
        loss = (1 - td) * xd - log_sig
        if weight is not None:
            loss = loss * weight._data
        # PyTorch builds the loss in place on (1 - target): the target's (floating) dtype
        dtype = td.dtype
        return _reduced(loss.astype(dtype, copy=False), reduction, dtype)

    @staticmethod
    def backward(ctx, grad):
        x, t = ctx.saved_tensors
        g = _grad_scale(ctx, grad)
        if ctx.weight is not None:
            g = g * ctx.weight
        pw = ctx.pos_weight
        gx = gt = None
        if ctx.needs_input_grad[0]:
            if pw is None:
                gx = g * (x.sigmoid() - t)
            else:  # d/dx = (1 + (p - 1) t) sigmoid(x) - p t
                gx = g * (((pw - 1) * t + 1) * x.sigmoid() - pw * t)
        if ctx.needs_input_grad[1]:
            if pw is None:
                gt = -g * x
            else:  # d/dt = -x - (p - 1) log_sigmoid(x)
                gt = -g * (x + (pw - 1) * _log_sigmoid(x))
        return gx, gt, None, None, None


class NllLoss(Primitive):
    """``-w[t] x[t]`` picked along the class dim ``cdim`` of log-probabilities ``x`` at the
    class indices ``t`` (an int64 array), 0 where ``t == ignore_index``, reduced ('mean'
    divides by the picked weights' sum). ``weight`` is an array of class weights or None."""
    _backward_name = "NllLossBackward0"

    @staticmethod
    def forward(ctx, x, t, weight, ignore_index, reduction, cdim):
        d = x._data
        xp = get_array_module(d)
        n_classes = d.shape[cdim]
        valid = t != ignore_index
        safe = xp.where(valid, t, 0)
        bad = valid & ((t < 0) | (t >= n_classes))
        if not is_meta(bad) and bad.any():  # meta targets have no values to check
            raise IndexError(f"Target {t[bad].reshape(-1)[0]} is out of bounds.")
        w = valid.astype(d.dtype) if weight is None else \
            xp.where(valid, weight.reshape(-1)[safe], 0).astype(d.dtype, copy=False)
        index = xp.expand_dims(safe, cdim)
        losses = -xp.take_along_axis(d, index, cdim).squeeze(cdim) * w
        ctx.save_for_backward(x)
        ctx.w, ctx.index, ctx.cdim, ctx.reduction = w, index, cdim, reduction
        if reduction == "none":
            return losses
        acc = _accumulator(d)
        if reduction == "sum":
            return xp.asarray(losses.sum(dtype=acc), d.dtype)
        ctx.total = total = w.sum(dtype=acc)
        with np.errstate(invalid="ignore", divide="ignore"):
            return xp.asarray(losses.sum(dtype=acc) / total, d.dtype)

    @staticmethod
    def _picks(ctx):
        """The gradient for a unit incoming gradient: -w (over the total for 'mean') at each
        picked class, 0 elsewhere; the gradient is linear in the incoming one."""
        d = ctx.saved_arrays[0]  # raises if the graph was freed
        xp = get_array_module(d)
        w = ctx.w
        if ctx.reduction == "mean":
            with np.errstate(invalid="ignore", divide="ignore"):
                w = w / ctx.total
        picks = xp.zeros(d.shape, d.dtype)
        xp.put_along_axis(picks, ctx.index, xp.expand_dims(-w, ctx.cdim), ctx.cdim)
        return picks

    @staticmethod
    def backward(ctx, grad):
        if not ctx.needs_input_grad[0]:
            return None, None, None, None, None, None
        if ctx.reduction == "none":
            grad = grad.unsqueeze(ctx.cdim)
        return _make(NllLoss._picks(ctx)) * grad, None, None, None, None, None

    @staticmethod
    def backward_arrays(ctx, grad):
        if not ctx.needs_input_grad[0]:
            return None, None, None, None, None, None
        if ctx.reduction == "none":
            grad = grad.reshape(grad.shape[:ctx.cdim] + (1,) + grad.shape[ctx.cdim:])
        return NllLoss._picks(ctx) * grad, None, None, None, None, None


class NllLoss2d(NllLoss):
    """``NllLoss`` of inputs with spatial dims ``(N, C, H, W)``: PyTorch's name for it."""
    _backward_name = "NllLoss2DBackward0"


def mse_loss(x, y, reduction):
    return MseLoss.apply(x, y, reduction)


def smooth_l1_loss(x, y, reduction, beta):
    return SmoothL1Loss.apply(x, y, reduction, beta)


def huber_loss(x, y, reduction, delta):
    return HuberLoss.apply(x, y, reduction, delta)


def binary_cross_entropy(x, t, weight, reduction):
    return BinaryCrossEntropy.apply(x, t, weight, reduction)


def binary_cross_entropy_with_logits(x, t, weight, pos_weight, reduction):
    return BinaryCrossEntropyWithLogits.apply(x, t, weight, pos_weight, reduction)


def nll_loss(x, t, weight, ignore_index, reduction, cdim):
    """``NllLoss`` of ``x`` (C), (N, C) or (N, C, H, W); other spatial ranks are viewed as
    4-D (and a 'none' result back), as PyTorch does."""
    if x.dim() <= 2:
        return NllLoss.apply(x, t, weight, ignore_index, reduction, cdim)
    if x.dim() == 4:
        return NllLoss2d.apply(x, t, weight, ignore_index, reduction, cdim)
    n, c = x.shape[:2]
    loss = NllLoss2d.apply(x.reshape(n, c, 1, -1), t.reshape(n, 1, -1), weight, ignore_index,
                           reduction, cdim)
    return loss.view(t.shape) if reduction == "none" else loss


__all__ = ["mse_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "nll_loss"]
