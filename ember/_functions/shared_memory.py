"""Tensor.is_shared / share_memory_ (methods only)."""
from __future__ import annotations

from .._registry import method as _method
from .._tensor import Tensor

__all__: list[str] = []


@_method
def is_shared(self: Tensor) -> bool:
    """Whether the tensor's memory is shared between processes: CUDA memory is (as in
    PyTorch), ember's CPU tensors never are (``share_memory_`` is not supported there).

    >>> import ember
    >>> ember.ones(2).is_shared()
    False
    """
    return self.device.type == "cuda"


@_method
def share_memory_(self: Tensor) -> Tensor:
    """Moves the tensor's memory into memory shared between processes. A no-op on CUDA, as
    in PyTorch; on the CPU ember cannot move the memory of a tensor and of every view of it
    in place, so it raises NotImplementedError rather than sharing only this tensor.

    >>> import ember
    >>> ember.ones(2).share_memory_()
    Traceback (most recent call last):
        ...
    NotImplementedError: ember cannot move a CPU tensor and its views into shared memory
    """
    kind = self.device.type
    if kind == "cuda":
        return self
    if kind != "cpu":
        raise RuntimeError("_share_fd_: only available on CPU")
    raise NotImplementedError("ember cannot move a CPU tensor and its views into shared memory")
