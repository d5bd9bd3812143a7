"""Declarations of the storage family (``_ops/storage.py``: storages, ``set_``,
``is_set_to``), ``nonzero_static`` (``_ops/nonzero_static.py``), the limited-support unsigned
dtypes (``backend/dtypes.py``) and the in-place functions ``ember.addmv_`` and
``ember.as_strided_``."""
from __future__ import annotations

from .._ops import nonzero_static as _NZ, storage as _ST
from .._registry import op, method as _method
from .._tensor import Tensor
from .._torch_function import dispatching as _dispatching
from .._typing import Number, Sequence
from ..backend.dtypes import uint16, uint32, uint64  # noqa: F401  (ember/__init__ imports them)

nonzero_static = op(_NZ.nonzero_static, out=True)
is_storage = op(_ST.is_storage, method=False)
_method(_ST.untyped_storage)
_method(_ST.storage)
_method(_ST.is_set_to)
_method(_ST.set_)


@op
def is_signed(self: Tensor) -> bool:
    """Whether the tensor's dtype is signed (every dtype but bool and the unsigned ones).

    >>> import ember
    >>> ember.zeros(1).is_signed(), ember.zeros(1, dtype=ember.uint8).is_signed()
    (True, False)
    """
    return self.dtype.is_signed


# Tensor-only in-place methods PyTorch also has as functions: plain entry points, as basics'
# fill_ and zero_ (a declaration cannot hold them: the method's name is taken)
def addmv_(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1,
           alpha: Number = 1) -> Tensor:
    """``input.addmv_(mat, vec)`` as a function: ``beta * input + alpha * (mat @ vec)``,
    written into ``input``.

    >>> import ember
    >>> ember.addmv_(ember.zeros(2), ember.ones(2, 3), ember.ones(3), beta=2, alpha=3)
    tensor([9., 9.])
    """
    return input.addmv_(mat, vec, beta=beta, alpha=alpha)


def as_strided_(input: Tensor, size: Sequence[int], stride: Sequence[int],
                storage_offset: int | None = None) -> Tensor:
    """``input.as_strided_(size, stride, storage_offset)`` as a function: ``input`` becomes
    that view of its own memory.

    >>> import ember
    >>> x = ember.arange(6.0)
    >>> ember.as_strided_(x, (2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    return input.as_strided_(size, stride, storage_offset)


addmv_, as_strided_ = (_dispatching(_fn, name=_fn.__name__, module="ember")
                       for _fn in (addmv_, as_strided_))
for _fn in (addmv_, as_strided_):
    _fn._public_module = "ember"
del _fn

# not declarations (ember/__init__ imports them by name, with addmv_ and as_strided_)
UntypedStorage, TypedStorage = _ST.UntypedStorage, _ST.TypedStorage

__all__ = ["nonzero_static", "is_storage", "is_signed"]
