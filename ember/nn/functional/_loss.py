"""Loss functions: mse, l1, smooth_l1, huber, nll, cross_entropy, binary cross
entropy (on probabilities and on logits) and kl_div, as in ``torch.nn.functional``.

The losses PyTorch records as one graph node (mse, smooth_l1, huber, binary cross entropy on
probabilities and on logits, nll -- and so cross_entropy, ``NllLossBackward0`` on
``LogSoftmaxBackward0``) run a Primitive of ``ember._ops.loss_nodes`` with the reduction inside
it, so ``loss.grad_fn`` has PyTorch's name; the others (l1, kl_div, cross entropy with
probabilities or label smoothing, the ``weight`` forms of mse/l1/huber) are composed of ember
ops as in PyTorch.
"""
import warnings

from ... import _functions as _F
from ..._ops import loss_nodes as _nodes
from ..._ops.nn_ops import log_softmax as _log_softmax
from ...backend import dtypes as _dt
from ...backend.dtypes import SCALAR_NAMES as _TYPE_NAMES

_REDUCTIONS = ("none", "mean", "sum")


def _legacy_get_string(size_average, reduce, emit_warning=True):
    """PyTorch's mapping of the deprecated ``size_average``/``reduce`` to a reduction."""
    warning = "size_average and reduce args will be deprecated, please use reduction='{}' instead."
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn(warning.format(ret), stacklevel=3)
    return ret


def _resolve(reduction, size_average=None, reduce=None, allowed=_REDUCTIONS):
    if size_average is not None or reduce is not None:
        return _legacy_get_string(size_average, reduce, emit_warning=False)
    if reduction not in allowed:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.mean()


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size "
            f"({input.shape}). This will likely lead to incorrect results due to broadcasting. "
            "Please ensure they have the same size.", stacklevel=3)


def _broadcast(input, target):
    """``input`` and ``target`` broadcast to one shape (no view when they have it already)."""
    if input.shape == target.shape:
        return input, target
    return _F.broadcast_tensors(input, target)


def _weighted(loss, weight, input, reduction, mean_by_weight=True):
    """MSE/L1/Huber with per-element ``weight`` (PyTorch's Python fallback)."""
    if weight.shape != input.shape:
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return _F.sum(loss)
    return _F.sum(loss) / _F.sum(weight) if mean_by_weight else loss.mean()


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target)**2``, reduced."""
    _warn_size(input, target)
    if input.dtype in _dt.FLOAT8 and input.dtype is target.dtype:  # no float8 kernel
        raise NotImplementedError(f"\"mse_cpu\" not implemented for '{input.dtype.scalar_name}'")
    reduction = _resolve(reduction, size_average, reduce)
    x, y = _broadcast(input, target)
    if weight is not None:
        return _weighted(_F.square(x - y), weight, input, reduction)
    return _nodes.mse_loss(x, y, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced."""
    _warn_size(input, target)
    reduction = _resolve(reduction, size_average, reduce)
    x, y = _broadcast(input, target)
    loss = _F.abs(x - y)
    if weight is not None:
        return _weighted(loss, weight, input, reduction)
    return _reduce(loss, reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta``."""
    _warn_size(input, target)
    reduction = _resolve(reduction, size_average, reduce)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    x, y = _broadcast(input, target)
    if beta == 0:  # PyTorch computes l1_loss then
        return _reduce(_F.abs(x - y), reduction)
    return _nodes.smooth_l1_loss(x, y, reduction, float(beta))


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d**2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``."""
    _warn_size(input, target)
    reduction = _resolve(reduction)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    x, y = _broadcast(input, target)
    if weight is None and x.dtype is not y.dtype and x.is_floating_point():
        # PyTorch's kernel writes into a tensor like the input: a wider target is
        # computed with, then the loss is rounded to the input's dtype before reducing
        loss = _nodes.huber_loss(x, y, "none", float(delta)).to(x.dtype)
        return _reduce(loss, reduction)
    if weight is None:
        return _nodes.huber_loss(x, y, reduction, float(delta))
    d = x - y
    ad = _F.abs(d)
    loss = _F.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    return _weighted(loss, weight, input, reduction, mean_by_weight=False)


def _nll_check(input, target, weight):
    """PyTorch's checks of nll_loss's arguments; the class dim and the targets as int64."""
    dim = input.dim()
    if dim < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {dim})")
    if target.dtype not in (_dt.int64, _dt.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{_TYPE_NAMES.get(target.dtype.name, target.dtype.name)}")
    if dim != 1 and target.dim() >= 1 and input.shape[0] != target.shape[0]:
        raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                         f"batch_size ({target.shape[0]}).")
    cdim = 1 if dim > 1 else 0
    n_classes = input.shape[cdim]
    if dim <= 2:
        if target.dim() > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if dim == 2 and target.dim() != 1:
            raise ValueError(f"Expected input batch_size ({input.shape[0]}) to match target "
                             f"batch_size ({target.shape[0] if target.dim() else 0}).")
    else:
        expected = [input.shape[0]] + list(input.shape[2:])
        if dim == 4 and target.dim() != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {target.dim()}")
        if list(target.shape) != expected:
            raise RuntimeError(f"Expected target size {expected}, got {list(target.shape)}")
    if weight is not None and weight.numel() != n_classes:
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    return cdim, target.long()


def _nll(input, target, weight, ignore_index, reduction):
    """The ``NllLossBackward0`` node of log-probabilities ``input`` at ``target``."""
    cdim, t = _nll_check(input, target, weight)
    if getattr(t, "_vmap_level", None) is not None:  # a batched target (inside vmap)
        return _nll_by_gather(input, t, weight, ignore_index, reduction, cdim), cdim, t
    w = None if weight is None else weight.detach()._data
    return _nodes.nll_loss(input, t._data, w, ignore_index, reduction, cdim), cdim, t


def _nll_by_gather(input, t, weight, ignore_index, reduction, cdim):
    """nll_loss made of ops, for targets whose values differ per vmapped sample: the fused
    node reads the target's array, which holds one sample only."""
    valid = t != ignore_index
    safe = _F.where(valid, t, 0)
    picked = -input.gather(cdim, safe.unsqueeze(cdim)).squeeze(cdim)
    w = valid.to(input.dtype)
    if weight is not None:
        w = w * weight.detach().to(input.dtype).gather(0, safe.reshape(-1)).view(safe.shape)
    loss = picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log likelihood of log-probabilities ``input`` (class at dim 1) at ``target``."""
    reduction = _resolve(reduction, size_average, reduce)
    return _nll(input, target, weight, ignore_index, reduction)[0]


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """``nll_loss(log_softmax(input, 1), target)``; ``target`` holds class indices or, with
    the input's shape, class probabilities. Supports ``weight``, ``ignore_index`` and
    ``label_smoothing``."""
    reduction = _resolve(reduction, size_average, reduce)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    cdim = 0 if input.dim() == 1 else 1
    if input.dim() == 0:
        raise ValueError("Expected 1 or more dimensions (got 0)")
    logp = _log_softmax(input, cdim)
    n_classes = input.shape[cdim]
    wshape = [1] * input.dim()
    wshape[cdim] = n_classes
    if input.shape == target.shape:  # class probabilities
        if not target.is_floating_point():
            raise RuntimeError("Expected floating point type for target with class "
                               f"probabilities, got {_TYPE_NAMES.get(target.dtype.name)}")
        if label_smoothing > 0.0:
            target = target * (1 - label_smoothing) + (label_smoothing / n_classes)
        prod = logp * target
        if weight is not None:
            prod = prod * weight.detach().view(wshape)
        if reduction == "none":
            return -prod.sum(cdim)
        if reduction == "sum":
            return -prod.sum()
        if input.numel() == 0:
            return -prod.sum() * float("nan")
        return -prod.sum() / (input.numel() / n_classes)
    nll, cdim, t = _nll(logp, target, weight, ignore_index, reduction)
    if label_smoothing <= 0.0:
        return nll
    valid = t != ignore_index
    if weight is not None:
        w = _F.where(valid, weight.detach().reshape(-1)[_F.where(valid, t, 0)].to(input.dtype),
                     0.0)
        smooth = -(logp * weight.detach().view(wshape)).sum(cdim)
    else:
        smooth = -logp.sum(cdim)
    smooth = smooth.masked_fill(~valid, 0.0)
    if reduction == "none":
        ret = smooth
    elif reduction == "sum":
        ret = smooth.sum()
    else:
        ret = smooth.sum() / (w.sum() if weight is not None else valid.sum())
    return (1 - label_smoothing) * nll + ret * (label_smoothing / n_classes)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """Binary cross entropy of probabilities ``input``; logs are clamped at -100."""
    reduction = _resolve(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected "
                           f"{input.dtype.scalar_name}")
    if weight is not None:
        weight = weight.detach().expand(_F.broadcast_shapes(target.shape, weight.shape))
    return _nodes.binary_cross_entropy(input, target, weight, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    """Sigmoid + binary cross entropy in one stable expression:
    ``(1 - t) x - (1 + (pos_weight - 1) t) log_sigmoid(x)``."""
    reduction = _resolve(reduction, size_average, reduce)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    _check_logits_target(input, target)
    return _nodes.binary_cross_entropy_with_logits(
        input, target, None if weight is None else weight.detach(),
        None if pos_weight is None else pos_weight.detach(), reduction)


def _check_logits_target(input, target):
    """PyTorch builds the logits loss in place on ``1 - target``: a bool target fails the
    subtraction, an integer one cannot hold the floating loss."""
    if target.dtype is _dt.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if not (target.is_floating_point() or target.is_complex()):
        result = _dt.promote_types(input.dtype, target.dtype)
        raise RuntimeError(f"result type {result.scalar_name} can't be cast to the desired "
                           f"output type {target.dtype.scalar_name}")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Pointwise KL divergence ``target * (log target - input)`` with ``input`` in log space
    (``target`` too when ``log_target``); ``reduction='batchmean'`` divides by the batch size."""
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce, emit_warning=False)
    else:
        if reduction == "mean":
            warnings.warn(
                "reduction: 'mean' divides the total loss by both the batch size and the support "
                "size.'batchmean' divides only by the batch size, and aligns with the KL div math "
                "definition.'mean' will be changed to behave the same as 'batchmean' in the next "
                "major release.", stacklevel=2)
        if reduction not in _REDUCTIONS + ("batchmean",):
            raise ValueError(f"{reduction} is not a valid value for reduction")
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if not (input.is_floating_point() and target.is_floating_point()):
        raise RuntimeError("kl_div: Integral inputs not supported.")
    if log_target:
        loss = _F.exp(target) * (target - input)
    else:
        zero = target == 0
        xlogy = (target * target.masked_fill(zero, 1.0).log()).masked_fill(zero, 0.0)
        loss = xlogy - target * input
    if reduction == "batchmean":
        total = loss.sum()
        return total / input.shape[0] if input.dim() != 0 else total
    return _reduce(loss, reduction)


__all__ = ["mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss", "cross_entropy",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div"]
