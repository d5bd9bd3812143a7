"""``ember.utils.dlpack``: tensors to and from DLPack capsules, as ``torch.utils.dlpack``.

``to_dlpack(t)`` gives a capsule sharing ``t``'s memory; ``from_dlpack`` takes a capsule or
any object with ``__dlpack__`` (a NumPy or CuPy array, a PyTorch tensor). A capsule can be
consumed once.

>>> import ember
>>> from ember.utils.dlpack import to_dlpack, from_dlpack
>>> t = ember.arange(3); u = from_dlpack(to_dlpack(t)); u[0] = 7; t
tensor([7, 1, 2])
"""
from ..backend.dlpack import DLDeviceType  # noqa: F401  (torch.utils.dlpack.DLDeviceType)
from .._creation import from_dlpack
from .._tensor import Tensor

__all__ = ["to_dlpack", "from_dlpack", "DLDeviceType"]


def to_dlpack(tensor):
    """A DLPack capsule (unversioned, "dltensor") sharing ``tensor``'s memory; unlike
    ``__dlpack__`` it takes tensors that require grad too (as PyTorch's does).

    >>> import ember
    >>> ember.utils.dlpack.to_dlpack(ember.zeros(2))  # doctest: +ELLIPSIS
    <capsule object "dltensor" at ...>
    """
    if not isinstance(tensor, Tensor):
        raise TypeError(f"_to_dlpack(): argument 'data' (position 1) must be Tensor, not "
                        f"{type(tensor).__name__}")
    return tensor.detach().__dlpack__()
