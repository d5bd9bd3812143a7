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
from ..nn.functional import pad
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


euler_constant = 0.57721566490153286060  # Euler-Mascheroni constant


def _tril_positions(n, diag):
    """Row-major flat positions (in an n x n matrix) of the entries on or below ``diag``."""
    return [i * n + j for i in range(n) for j in range(n) if j <= i + diag]


def tril_matrix_to_vec(mat, diag=0):
    """The entries of ``mat`` on or below diagonal ``diag``, row by row, as a vector.

    >>> import ember
    >>> tril_matrix_to_vec(ember.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([1., 3., 4.])
    """
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    index = beside(tensor(_tril_positions(n, diag), dtype=dtypes.int64), mat)
    return mat.reshape(tuple(mat.shape[:-2]) + (n * n,))[..., index]


def vec_to_tril_matrix(vec, diag=0):
    """The lower-triangular (below diagonal ``diag``) matrix whose entries, row by row, are
    ``vec``; zeros elsewhere.

    >>> import ember
    >>> vec_to_tril_matrix(ember.tensor([1.0, 3.0, 4.0]))
    tensor([[1., 0.],
            [3., 4.]])
    """
    m = vec.shape[-1]
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * m + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > float(finfo(vec.dtype).eps):
        raise ValueError(f"The size of last dimension is {m} which cannot be expressed as "
                         f"the lower triangular part of a square D x D matrix.")
    n = round(n)
    positions = _tril_positions(n, diag)
    if len(positions) != m:
        batch = list(vec.shape[:-1])
        raise RuntimeError(f"shape mismatch: value tensor of shape {batch + [m]} cannot be "
                           f"broadcast to indexing result of shape {batch + [len(positions)]}")
    # every position reads from vec, the ones above the diagonal from an appended zero
    table = [m] * (n * n)
    for k, position in enumerate(positions):
        table[position] = k
    padded = pad(vec, [0, 1], value=0.0)
    index = beside(tensor(table, dtype=dtypes.int64), vec)
    return padded[..., index].reshape(tuple(vec.shape[:-1]) + (n, n))


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
           "finfo", "xlogy", "euler_constant", "tril_matrix_to_vec", "vec_to_tril_matrix"]


def expand_probs_or_logits(source, new, shape):
    """Sets on ``new`` (an instance being expanded) whichever of ``probs``/``logits``
    ``source`` holds -- given, or computed since -- expanded to ``shape``; ``_param`` names
    the last one set, as the distributions parametrised either way read it."""
    if "probs" in source.__dict__:
        new.probs = source.probs.expand(shape)
        new._param = new.probs
    if "logits" in source.__dict__:
        new.logits = source.logits.expand(shape)
        new._param = new.logits


class BinaryProbsLogits:
    """Mixin of the distributions given ``probs`` or ``logits`` of one event (Bernoulli,
    Binomial, Geometric, ...): the other is derived on first use (log-odds / sigmoid)."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self):
        return self._param.shape


class CategoricalProbsLogits:
    """Mixin of the distributions given ``probs`` or ``logits`` over categories (the last
    dim): the other is derived on first use (log-probabilities / softmax)."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits)

    @property
    def param_shape(self):
        return self._param.shape
