"""Margin, embedding, triplet and likelihood losses: ``margin_ranking_loss``,
``hinge_embedding_loss``, ``soft_margin_loss``, ``cosine_embedding_loss``,
``triplet_margin_loss``, ``triplet_margin_with_distance_loss``, ``poisson_nll_loss``,
``gaussian_nll_loss``, ``multi_margin_loss``, ``multilabel_margin_loss`` and
``multilabel_soft_margin_loss``, as in ``torch.nn.functional``.

All are composed of ember ops (gradients, double backward and forward-mode AD come from
autograd), so their ``grad_fn`` is that of the last op (PyTorch records a fused node for
``soft_margin_loss``, ``multi_margin_loss`` and ``multilabel_margin_loss``).
"""
import math

from ... import _creation, _functions as _F
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad, is_grad_enabled
from ...backend import dtypes as _dt
from ...backend.dtypes import SCALAR_NAMES as _TYPE_NAMES
from ...backend.meta import is_meta as _is_meta
from ._activation import logsigmoid as _logsigmoid
from ._distance import pairwise_distance as _pairwise_distance, _broadcast_pair
from ._loss import _legacy_get_string, _reduce, _REDUCTIONS

__all__ = ["margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
           "cosine_embedding_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
           "poisson_nll_loss", "gaussian_nll_loss", "multi_margin_loss",
           "multilabel_margin_loss", "multilabel_soft_margin_loss"]

# added to the squared norms in cosine_embedding_loss, as PyTorch does
_COS_EPS = 1e-12


def _reduction(reduction, size_average, reduce):
    """The reduction the (deprecated) ``size_average``/``reduce`` or ``reduction`` name; the
    deprecated pair warns as in PyTorch."""
    if size_average is not None or reduce is not None:
        return _legacy_get_string(size_average, reduce)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _type_name(dtype):
    return _TYPE_NAMES.get(dtype.name, dtype.name)


def _values_known(t):
    """False for meta tensors: their data-dependent checks are skipped, as PyTorch's are."""
    return not _is_meta(t._data)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -target * (input1 - input2) + margin)``, reduced; the three tensors need the
    same number of dimensions and broadcast.

    >>> import ember, ember.nn.functional as F
    >>> F.margin_ranking_loss(ember.tensor([1.0, 2.0]), ember.tensor([2.0, 1.0]),
    ...                       ember.tensor([1.0, 1.0]), reduction="none")
    tensor([1., 0.])
    """
    reduction = _reduction(reduction, size_average, reduce)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got sizes: "
            f"input1: {input1.size()}, input2: {input2.size()}, target: {target.size()} ")
    return _reduce(_F.clamp_min(-target * (input1 - input2) + margin, 0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``input`` where ``target`` is 1, ``max(0, margin - input)`` where it is -1 (other
    target values add both), reduced.

    >>> import ember, ember.nn.functional as F
    >>> F.hinge_embedding_loss(ember.tensor([0.3, 2.0]), ember.tensor([1.0, -1.0]),
    ...                        reduction="none")
    tensor([0.3000, 0.0000])
    """
    reduction = _reduction(reduction, size_average, reduce)
    _broadcast_pair(target, input)  # PyTorch's message when the shapes do not broadcast
    zeros = _creation.zeros_like(input)
    margin_part = _F.where(target != 1, _F.clamp_min(margin - input, 0), zeros)
    self_part = _F.where(target != -1, input, zeros)
    return _reduce(margin_part + self_part, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-target * input))``, reduced; ``target`` broadcasts to ``input``'s shape.

    >>> import ember, ember.nn.functional as F
    >>> F.soft_margin_loss(ember.tensor([0.0, 2.0]), ember.tensor([1.0, -1.0]),
    ...                    reduction="none")
    tensor([0.6931, 2.1269])
    """
    reduction = _reduction(reduction, size_average, reduce)
    if target.requires_grad and is_grad_enabled():
        raise RuntimeError("The function 'soft_margin_loss' is not differentiable with respect "
                           "to argument 'target'. This input cannot have requires_grad True.")
    prod = -input * target
    if tuple(prod.shape) != tuple(input.shape):  # PyTorch writes into a tensor like input
        raise RuntimeError(f"output with shape {_sizes(input.shape)} doesn't match the "
                           f"broadcast shape {_sizes(prod.shape)}")
    loss = _F.log1p(_F.exp(prod))
    if loss.dtype is not input.dtype:  # PyTorch writes the loss into a tensor like input
        loss = loss.to(input.dtype)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(input1, input2)`` where ``target`` is 1, ``max(0, cos - margin)`` where it is
    -1 (0 elsewhere), the cosine taken along the last dim; (N, D) inputs with (N,) targets, or
    (D,) inputs with a 0-d target.

    >>> import ember, ember.nn.functional as F
    >>> a = ember.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> b = ember.tensor([[0.0, 1.0], [1.0, 1.0]])
    >>> F.cosine_embedding_loss(a, b, ember.tensor([1.0, -1.0]), reduction="none")
    tensor([1., 1.])
    """
    reduction = _reduction(reduction, size_average, reduce)
    tdim = target.dim()
    if tdim not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if tdim == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{tdim}D target tensor expects {want}D input tensors, but found "
                           f"inputs with sizes {_sizes(input1.shape)} and "
                           f"{_sizes(input2.shape)}.")
    dot = (input1 * input2).sum(tdim)
    sq1 = (input1 * input1).sum(tdim) + _COS_EPS
    sq2 = (input2 * input2).sum(tdim) + _COS_EPS
    cos = dot / _F.sqrt(sq1 * sq2)
    _broadcast_pair(target, cos)
    zeros = _creation.zeros_like(cos)
    pos = _F.where(target == 1, 1 - cos, zeros)
    neg = _F.where(target == -1, _F.clamp_min(cos - margin, 0), zeros)
    return _reduce(pos + neg, reduction)


def _check_triplet_dims(anchor, positive, negative):
    a, p, n = anchor.dim(), positive.dim(), negative.dim()
    if not a == p == n:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {p}D, and "
                           f"negative {n}D inputs")


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))`` with ``d`` the
    ``pairwise_distance`` of norm ``p``; ``swap`` takes the smaller of ``d(a, n)`` and
    ``d(p, n)``.

    >>> import ember, ember.nn.functional as F
    >>> F.triplet_margin_loss(ember.tensor([[0.0, 0.0]]), ember.tensor([[1.0, 0.0]]),
    ...                       ember.tensor([[3.0, 0.0]]), eps=0.0)
    tensor(0.)
    """
    reduction = _reduction(reduction, size_average, reduce)
    _check_triplet_dims(anchor, positive, negative)
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _F.minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return _reduce(_F.clamp_min(margin + d_pos - d_neg, 0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``triplet_margin_loss`` with any ``distance_function(x, y)`` (default
    ``pairwise_distance``); ``margin`` must be positive.

    >>> import ember, ember.nn.functional as F
    >>> F.triplet_margin_with_distance_loss(
    ...     ember.tensor([[0.0]]), ember.tensor([[1.0]]), ember.tensor([[1.5]]),
    ...     distance_function=lambda x, y: (x - y).abs().sum(-1))
    tensor(0.5000)
    """
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    dist = _pairwise_distance if distance_function is None else distance_function
    d_pos = dist(anchor, positive)
    d_neg = dist(anchor, negative)
    if swap:
        d_neg = _F.minimum(d_neg, dist(positive, negative))
    return _reduce(_F.clamp_min(margin + d_pos - d_neg, 0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """Poisson negative log likelihood: ``exp(input) - target * input`` (``log_input``) or
    ``input - target * log(input + eps)``; ``full`` adds Stirling's term for targets above 1.

    >>> import ember, ember.nn.functional as F
    >>> F.poisson_nll_loss(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 2.0]),
    ...                    reduction="none")
    tensor([1.0000, 0.7183])
    """
    reduction = _reduction(reduction, size_average, reduce)
    if log_input:
        loss = _F.exp(input) - target * input
    else:
        loss = input - target * _F.log(input + eps)
    if full:
        stirling = target * _F.log(target) - target + 0.5 * _F.log(2 * math.pi * target)
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return _reduce(loss, reduction)


def _gaussian_var(input, var):
    """``var`` checked and shaped to broadcast with ``input``, as PyTorch does."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return var * _creation.ones_like(input)
    if not isinstance(var, Tensor):  # PyTorch's check calls torch.any on a Python bool
        raise TypeError(
            "any() received an invalid combination of arguments - got (bool), but expected one "
            "of:\n * (Tensor input, *, Tensor out = None)\n * (Tensor input, tuple of ints dim = "
            "None, bool keepdim = False, *, Tensor out = None)\n * (Tensor input, int dim, bool "
            "keepdim = False, *, Tensor out = None)\n")
    if _values_known(var) and bool(_F.any(var < 0)):
        raise ValueError("var has negative entry/entries")
    if tuple(var.shape) == tuple(input.shape):
        return var
    if tuple(input.shape[:-1]) == tuple(var.shape):
        return var.unsqueeze(-1)
    if input.dim() == var.dim() and \
            sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Gaussian negative log likelihood ``0.5 (log var + (input - target)**2 / var)``; ``var``
    (a tensor like ``input``, one dim short, broadcastable with one differing dim, or a
    float) is clamped at ``eps`` without affecting its gradient; ``full`` adds
    ``0.5 log(2 pi)``.

    >>> import ember, ember.nn.functional as F
    >>> F.gaussian_nll_loss(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 4.0]),
    ...                     ember.tensor([1.0, 2.0]), reduction="none")
    tensor([0.0000, 1.3466])
    """
    var = _gaussian_var(input, var)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid")
    var = var.clone()
    with no_grad():  # the clamp is invisible to autograd, as in PyTorch
        var.clamp_(min=eps)
    loss = 0.5 * (_F.log(var) + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def _check_class_input(input):
    """(N, C) or (C,) input with C > 0 (a 0-d input is one sample of one class)."""
    dim = input.dim()
    if not ((dim <= 1 and input.numel() != 0) or (dim == 2 and input.shape[1] != 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {_sizes(input.shape)}")
    n = input.shape[0] if dim == 2 else 1
    c = input.shape[-1] if dim else 1
    return n, c


def _check_long(target):
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {_type_name(target.dtype)}")


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Multi-class hinge loss: per sample, ``sum_{j != y} max(0, margin - x[y] + x[j])**p
    * weight[y] / C`` for class indices ``y`` (``p`` is 1 or 2).

    >>> import ember, ember.nn.functional as F
    >>> F.multi_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]), ember.tensor([3]))
    tensor(0.3250)
    """
    reduction = _reduction(reduction, size_average, reduce)
    if p != 1 and p != 2:
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    n, c = _check_class_input(input)
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to "
                           "the number of input samples (batch size). Expected target size "
                           f"[{n}], but got {_sizes(target.shape)}. Input has shape "
                           f"{_sizes(input.shape)}.")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"inconsistent weight size, expected {c} but got "
                           f"{_sizes(weight.shape)}")
    _check_long(target)
    t = target.reshape(n, 1)
    if _values_known(t) and n and bool(_F.any((t < 0) | (t >= c))):
        raise RuntimeError("target out of range")
    x = input.reshape(n, c)
    z = _F.clamp_min(margin - x.gather(1, t) + x, 0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.detach().to(x.dtype).gather(0, t.reshape(-1)).reshape(n, 1)
    others = _creation.arange(c, device=x.device) != t
    loss = (_F.where(others, z, _creation.zeros_like(z)).sum(1) / c).reshape(target.shape)
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Multi-label hinge loss: ``target`` holds each sample's class indices, ended by the
    first -1; per sample, ``sum_{j target, i not} max(0, 1 - (x[j] - x[i])) / C``.

    >>> import ember, ember.nn.functional as F
    >>> F.multilabel_margin_loss(ember.tensor([[0.1, 0.2, 0.4, 0.8]]),
    ...                          ember.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _reduction(reduction, size_average, reduce)
    n, c = _check_class_input(input)
    _check_long(target)
    if (input.dim() <= 1 and (target.dim() > 1 or target.numel() != c)) or \
            (input.dim() == 2 and tuple(target.shape) != tuple(input.shape)):
        raise RuntimeError(f"inconsistent target size: {_sizes(target.shape)} for input of "
                           f"size: {_sizes(input.shape)}")
    t = target.reshape(n, c)
    if _values_known(t) and n and bool(_F.any((t < -1) | (t >= c))):
        raise RuntimeError("argument #2 'target' is out of range")
    listed = _F.cumprod(t != -1, 1) != 0  # positions before the first -1
    safe = _F.where(listed, t, 0)
    classes = _creation.arange(c, device=input.device)
    is_target = ((safe.unsqueeze(2) == classes) & listed.unsqueeze(2)).any(1)
    x = input.reshape(n, c)
    z = _F.clamp_min(1 - x.gather(1, safe).unsqueeze(2) + x.unsqueeze(1), 0)
    pairs = listed.unsqueeze(2) & ~is_target.unsqueeze(1)
    loss = _F.where(pairs, z, _creation.zeros_like(z)).sum((1, 2)) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """One-vs-all logistic loss ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))``, optionally
    weighted per class, averaged over the last (class) dim, then reduced.

    >>> import ember, ember.nn.functional as F
    >>> F.multilabel_soft_margin_loss(ember.tensor([[0.0, 2.0]]), ember.tensor([[1.0, 0.0]]))
    tensor(1.4100)
    """
    if size_average is not None or reduce is not None:
        reduction = _legacy_get_string(size_average, reduce)
    loss = -(target * _logsigmoid(input) + (1 - target) * _logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(dim=class_dim) / input.size(class_dim)
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not valid")
    return _reduce(loss, reduction)
