"""The connectionist temporal classification loss (``ctc_loss``); the recursions are the
``CtcLoss`` op in ``ember._ops.ctc``."""
from ... import _functions as _F
from ..._ops.ctc import ctc_loss_per_sample as _per_sample
from ..._tensor import Tensor as _Tensor
from ._loss import _resolve

__all__ = ["ctc_loss"]


def _lengths_kind(value):
    if isinstance(value, _Tensor):
        return "Tensor"
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool)
                                                for v in value):
        return "tuple of ints"
    return type(value).__name__


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The CTC loss of ``log_probs`` (T, N, C) or (T, C) against ``targets``, padded (N, S)
    or concatenated (sum(target_lengths),). 'mean' divides each sample's loss by its target
    length (at least 1) before averaging over the batch.

    >>> import ember, ember.nn.functional as F
    >>> lp = ember.zeros(2, 1, 2).log_softmax(2)
    >>> F.ctc_loss(lp, ember.tensor([[1]]), (2,), (1,), reduction="sum")
    tensor(0.2877)
    """
    kinds = (_lengths_kind(input_lengths), _lengths_kind(target_lengths))
    if kinds not in (("Tensor", "Tensor"), ("tuple of ints", "tuple of ints")):
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got "
                        f"input_lengths of type {kinds[0]} and target_lengths of type "
                        f"{kinds[1]}, but expected both Tensors or both tuples of ints")
    reduction = _resolve(reduction)
    nll, tl = _per_sample(log_probs, targets, input_lengths, target_lengths, blank,
                          zero_infinity)
    if zero_infinity:
        nll = _F.where(nll == float("inf"), nll.new_zeros(()), nll)
    if reduction == "none":
        return nll
    if reduction == "sum":
        return nll.sum()
    divisor = nll.new_tensor([max(v, 1) for v in tl]).reshape(nll.shape)
    return (nll / divisor).mean()
