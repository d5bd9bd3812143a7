"""``nn.Parameter``: a Tensor that a Module registers as a learnable parameter.

>>> import ember
>>> p = ember.nn.Parameter(ember.zeros(2))
>>> p.requires_grad, isinstance(p, ember.Tensor)
(True, True)
"""
from __future__ import annotations

from typing import Any, Optional

from .._tensor import Tensor
from .._torch_function import _disabled_torch_function_impl
from .._creation import empty


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and marks itself for Modules.

    ``Parameter(t)`` shares ``t``'s storage, like PyTorch's.

    >>> import ember
    >>> t = ember.zeros(2)
    >>> p = ember.nn.Parameter(t)
    >>> p.is_leaf, p.requires_grad
    (True, True)
    >>> _ = t.add_(1.0)  # same storage
    >>> p
    Parameter containing:
    tensor([1., 1.], requires_grad=True)
    """

    # ops on a Parameter return plain tensors (PyTorch's Parameter does the same)
    __torch_function__ = _disabled_torch_function_impl
    _repr_as_tensor = True

    def __new__(cls, data: Optional[Tensor] = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor, got {type(data).__name__}")
        p = cls._make(data._data)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data: Optional[Tensor] = None, requires_grad: bool = True) -> None:
        pass  # everything happens in __new__ (Tensor.__init__ would read sizes)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto: Any) -> tuple[Any, ...]:
        return (_rebuild_parameter, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]
        new = Parameter(Tensor._make(self._data.copy()), self._requires_grad)
        if self._grad is not None:
            new._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = new
        return new


def _rebuild_parameter(array, requires_grad):
    return Parameter(Tensor._make(array), requires_grad)


class Buffer(Tensor):
    """Marker for tensors to register as buffers: ``self.x = nn.Buffer(t)``.

    >>> import ember
    >>> from ember import nn
    >>> m = nn.Module()
    >>> m.mean = nn.Buffer(ember.zeros(2))
    >>> m.scratch = nn.Buffer(ember.zeros(2), persistent=False)
    >>> [name for name, _ in m.named_buffers()], list(m.state_dict())
    (['mean', 'scratch'], ['mean'])
    """

    __torch_function__ = _disabled_torch_function_impl  # as Parameter's
    _repr_as_tensor = True

    def __new__(cls, data: Tensor, *, persistent: bool = True) -> Buffer:
        b = cls._make(data._data)
        b.persistent = persistent
        return b

    def __init__(self, data: Tensor, *, persistent: bool = True) -> None:
        pass
