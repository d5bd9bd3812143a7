"""``nn.Parameter``: a Tensor that a Module registers as a learnable parameter.

>>> import ember
>>> p = ember.nn.Parameter(ember.zeros(2))
>>> p.requires_grad, isinstance(p, ember.Tensor)
(True, True)
"""
from __future__ import annotations

import weakref
from typing import Any, Optional

from .._tensor import Tensor
from .._torch_function import (_disabled_torch_function_impl, hold_dispatch,
                               DisableTorchFunctionSubclass)
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


# ---- uninitialized parameters and buffers (lazy modules) -------------------------------------
def _allowed_functions():
    """The calls an uninitialized tensor accepts (PyTorch's list): metadata and conversions.
    Looked up when first needed, once Tensor's members are entry points (the objects that
    overrides receive)."""
    names = ("size", "copy_", "is_complex", "is_floating_point", "half", "float", "double",
             "char", "short", "int", "long", "cuda", "cpu", "to", "get_device")
    return {getattr(Tensor, n) for n in names if hasattr(Tensor, n)}


_ALLOWED = []  # [set]: filled on first dispatch


class UninitializedTensorMixin:
    """What UninitializedParameter and UninitializedBuffer share: no shape until
    ``materialize``; every op but a few conversions refuses them.

    >>> import ember
    >>> b = ember.nn.UninitializedBuffer()
    >>> isinstance(b, ember.nn.parameter.UninitializedTensorMixin), b.float() is b
    (True, True)
    >>> b.shape
    Traceback (most recent call last):
    ...
    RuntimeError: Can't access the shape of an uninitialized parameter or buffer. ...
    """

    cls_to_become: type = Tensor
    # dispatch is on only while an instance lives (see _torch_function.hold_dispatch)
    _dispatch_while_alive = True

    def _hold(self) -> None:
        hold_dispatch(1)
        self.__dict__["_uninitialized_release"] = weakref.finalize(self, hold_dispatch, -1)

    def materialize(self, shape: Any, device: Any = None, dtype: Any = None) -> None:
        """Give the tensor data of ``shape`` (uninitialized memory) on its device and dtype
        (or the ones given); it becomes a ``Parameter`` (a buffer: a plain Tensor), the same
        object.

        >>> import ember
        >>> p = ember.nn.UninitializedParameter()
        >>> p.materialize((2, 3))
        >>> type(p).__name__, p.shape
        ('Parameter', ember.Size([2, 3]))
        """
        if device is None:
            device = self.device
        if dtype is None:
            dtype = self.dtype
        if isinstance(shape, int):
            shape = (shape,)
        self._data = empty(tuple(shape), device=device, dtype=dtype)._data
        self.__class__ = self.cls_to_become
        release = self.__dict__.pop("_uninitialized_release", None)
        if release is not None:
            release()

    @property
    def shape(self) -> Any:
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self) -> Any:
        raise RuntimeError(
            "Can't share memory on an uninitialized parameter or buffer. Call `forward` to "
            "initialize the parameters before calling `module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto: Any) -> tuple[Any, ...]:
        return (type(self), (self.requires_grad,))

    @classmethod
    def __torch_function__(cls, func: Any, types: tuple, args: tuple = (),
                           kwargs: Optional[dict] = None) -> Any:
        if not _ALLOWED:
            _ALLOWED.append(_allowed_functions())
        # a property getter is a method-wrapper (``Tensor.dtype.__get__``): metadata is allowed
        if func in _ALLOWED[0] or type(func).__name__ == "method-wrapper":
            return cls._run_allowed(func, types, args, kwargs or {})
        raise ValueError(
            f"Attempted to use an uninitialized parameter in {func}. This error happens when "
            f"you are using a `LazyModule` or explicitly manipulating "
            f"`torch.nn.parameter.{cls.__name__}` objects. When using LazyModules Call "
            f"`forward` with a dummy batch to initialize the parameters before calling torch "
            f"functions")


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer.

    >>> import ember
    >>> ember.nn.parameter.is_lazy(ember.nn.UninitializedParameter())
    True
    """
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A Parameter whose shape is not known yet (a lazy module's, until its first forward);
    ``materialize(shape)`` makes it a Parameter. Only conversions (``to``, ``float``, ...),
    ``size``, ``copy_`` and metadata (dtype, device, requires_grad) are allowed before that.

    >>> import ember
    >>> p = ember.nn.UninitializedParameter(dtype=ember.float64)
    >>> p, p.dtype, p.requires_grad
    (<UninitializedParameter>, ember.float64, True)
    >>> p + 1
    Traceback (most recent call last):
    ...
    ValueError: Attempted to use an uninitialized parameter in ...
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device: Any = None,
                dtype: Any = None) -> UninitializedParameter:
        p = cls._make(empty(0, device=device, dtype=dtype)._data, bool(requires_grad))
        p._hold()
        return p

    def __init__(self, requires_grad: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        pass

    @staticmethod
    def _run_allowed(func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
        return _disabled_torch_function_impl(func, types, args, kwargs)  # plain results

    def __deepcopy__(self, memo: dict[int, Any]) -> UninitializedParameter:
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer whose shape is not known yet; ``materialize(shape)`` makes it a plain
    Tensor. Conversions keep it uninitialized; other ops refuse it.

    >>> import ember
    >>> b = ember.nn.UninitializedBuffer()
    >>> b.materialize(3)
    >>> type(b).__name__, b.shape, b.requires_grad
    ('Tensor', ember.Size([3]), False)
    """

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                persistent: bool = True) -> UninitializedBuffer:
        b = cls._make(empty(0, device=device, dtype=dtype)._data, bool(requires_grad))
        b.persistent = persistent
        b._hold()
        return b

    def __init__(self, requires_grad: bool = False, device: Any = None, dtype: Any = None,
                 persistent: bool = True) -> None:
        pass

    @classmethod
    def _run_allowed(cls, func: Any, types: tuple, args: tuple, kwargs: dict) -> Any:
        # as PyTorch's (a Tensor subclass): tensors come back as uninitialized buffers
        with DisableTorchFunctionSubclass():
            ret = func(*args, **kwargs)
        if isinstance(ret, Tensor) and not isinstance(ret, cls):
            ret.__class__ = cls
            ret.persistent = getattr(args[0], "persistent", True) if args else True
            ret._hold()
        return ret
