"""Helpers of the distributions: broadcasting parameters, probabilities <-> logits, and the
``lazy_property`` that computes a derived parameter once, on first use.

>>> import ember
>>> from ember.distributions.utils import broadcast_all, probs_to_logits
>>> [t.shape for t in broadcast_all(ember.zeros(2, 1), 1.0)]
[ember.Size([2, 1]), ember.Size([2, 1])]
>>> probs_to_logits(ember.tensor([0.5]), is_binary=True)
tensor([0.])
"""
from __future__ import annotations

from numbers import Number

from .._creation import beside, tensor
from .._tensor import Tensor
from .._functions import broadcast_shapes, log, log1p, sigmoid, softmax
from ..autograd.grad_mode import enable_grad
from ..backend import dtypes


def finfo(dtype):
    """NumPy's float metadata (eps, tiny, min, max) of an ember dtype."""
    return dtypes._np_finfo(dtype.np)  # bfloat16's from ml_dtypes


def broadcast_all(*values):
    """The values as tensors of one broadcast shape; numbers take the dtype of the first
    tensor among them (the default dtype when there is none)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of numbers.Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        like = next((v for v in values if isinstance(v, Tensor)), None)
        dtype = like.dtype if like is not None else dtypes.get_default_dtype()
        values = [v if isinstance(v, Tensor) else tensor(v, dtype=dtype) if like is None
                  else beside(tensor(v, dtype=dtype), like) for v in values]
    shape = broadcast_shapes(*[v.shape for v in values])
    # a tensor already of the shape is returned itself (no view: it keeps requires_grad
    # even under no_grad, as PyTorch's broadcast_tensors does)
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def clamp_probs(probs):
    """Probabilities kept eps away from 0 and 1 (so their logits are finite)."""
    eps = float(finfo(probs.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Logits of probabilities: log-odds when ``is_binary``, else log-probabilities."""
    clamped = clamp_probs(probs)
    if is_binary:
        return log(clamped) - log1p(-clamped)
    return log(clamped)


def logits_to_probs(logits, is_binary=False):
    """Probabilities of logits: sigmoid when ``is_binary``, else softmax over the last dim."""
    if is_binary:
        return sigmoid(logits)
    return softmax(logits, dim=-1)


def xlogy(x, y):
    """``x * log(y)``, 0 where ``x == 0`` (also its gradients there)."""
    zero = x == 0
    return (x * log(y.masked_fill(zero, 1.0))).masked_fill(zero, 0.0)


class lazy_property:
    """A property computed on first access (with gradients recorded) and then stored on the
    instance, so a distribution made from ``probs`` computes its ``logits`` only if used."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__
        self.__name__ = wrapped.__name__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _LazyPropertyAndProperty(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _LazyPropertyAndProperty(lazy_property, property):
    """What the class attribute reads as: a lazy_property that is also a property."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)
        lazy_property.__init__(self, wrapped)


__all__ = ["broadcast_all", "clamp_probs", "probs_to_logits", "logits_to_probs", "lazy_property",
           "finfo", "xlogy"]
