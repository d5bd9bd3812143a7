"""``nn.Parameter``: a Tensor that a Module registers as a learnable parameter.

>>> import ember
>>> p = ember.nn.Parameter(ember.zeros(2))
>>> p.requires_grad, isinstance(p, ember.Tensor)
(True, True)
"""
from .._tensor import Tensor
from .._creation import empty


class Parameter(Tensor):
    """A leaf tensor that requires grad (by default) and marks itself for Modules.

    ``Parameter(t)`` shares ``t``'s storage, like PyTorch's.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor, got {type(data).__name__}")
        p = cls._make(data._data)
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # everything happens in __new__ (Tensor.__init__ would read sizes)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self._data.copy(), self._requires_grad))

    def __deepcopy__(self, memo):
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
    """Marker for tensors to register as buffers: ``self.x = nn.Buffer(t)``."""

    def __new__(cls, data, *, persistent=True):
        b = cls._make(data._data)
        b.persistent = persistent
        return b

    def __init__(self, data, *, persistent=True):
        pass
