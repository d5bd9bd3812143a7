"""``MaskedTensor``: a dense tensor and a boolean mask of the same shape (PyTorch's prototype
``torch.masked.MaskedTensor``).

The type is a Tensor subclass that holds two ordinary tensors, its data (which carries
autograd: a leaf's ``.grad`` is the data's gradient under the leaf's mask) and its mask, and
answers calls through ``__torch_function__`` by name (``_handlers.py``). Dispatch is held on
only while a MaskedTensor lives (``hold_dispatch``), so dense programs pay nothing for it.
Every construction warns, as PyTorch's does, that the API is a prototype.

>>> import warnings, ember
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     mt = ember.masked.masked_tensor(ember.tensor([1.0, 2.0, 3.0]),
...                                     ember.tensor([True, False, True]))
...     total = mt.sum()
>>> total.get_data()
tensor(4.)
"""
from __future__ import annotations

import warnings
import weakref

from .._tensor import Tensor
from .._torch_function import called_name, hold_dispatch
from ..backend import dtypes

__all__ = ["MaskedTensor", "is_masked_tensor", "masked_tensor", "as_masked_tensor"]

_PROTOTYPE_WARNING = ("The PyTorch API of MaskedTensors is in prototype stage and will change "
                      "in the near future. Please open a Github issue for features requests "
                      "and see our documentation on the torch.masked module for further "
                      "information about the project.")
_REQUIRES_GRAD_WARNING = ("It is not recommended to create a MaskedTensor with a tensor that "
                          "requires_grad. To avoid this, you can use data.detach().clone()")
_SUPPORTED_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64, dtypes.bool_,
                     dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64)

#: call name -> the code a MaskedTensor runs for it (filled by _handlers.py)
HANDLERS = {}


#: the ATen names PyTorch's message gives where they differ from the call's
_ATEN_NAMES = {"log_softmax": "_log_softmax", "T": "permute", "mT": "permute"}


def not_implemented(name: str) -> TypeError:
    """PyTorch's warning and error for a call MaskedTensor has no rule for."""
    name = _ATEN_NAMES.get(name, name)
    warnings.warn(f"{name} is not implemented in __torch_dispatch__ for MaskedTensor.\n"
                  "If you would like this operator to be supported, please file an issue for "
                  "a feature request at https://github.com/pytorch/maskedtensor/issues with a "
                  "minimal reproducible code snippet.\nIn the case that the semantics for the "
                  "operator are not trivial, it would be appreciated to also include a proposal "
                  "for the semantics.", UserWarning, stacklevel=4)
    return TypeError(f"Multiple dispatch failed for 'torch._ops.aten.{name}.default'; all "
                     "__torch_dispatch__ handlers returned NotImplemented:\n\n  - tensor "
                     "subclass <class 'ember.masked.MaskedTensor'>\n\nFor "
                     "more information, try re-running with TORCH_LOGS=not_implemented")


def is_masked_tensor(obj) -> bool:
    """Whether ``obj`` is a MaskedTensor.

    >>> import ember
    >>> ember.masked.is_masked_tensor(ember.ones(2))
    False
    """
    return isinstance(obj, MaskedTensor)


def _validate(data, mask) -> None:
    if not isinstance(data, Tensor) or isinstance(data, MaskedTensor):
        raise TypeError("data must be a Tensor")
    if not isinstance(mask, Tensor) or isinstance(mask, MaskedTensor):
        raise TypeError("mask must be a Tensor")
    if data.layout != mask.layout:
        raise TypeError("data and mask must have the same layout.")
    if data.layout != "strided":
        raise NotImplementedError("ember.masked: MaskedTensor of sparse data")
    if mask.dtype != dtypes.bool_:
        raise TypeError("mask must have dtype bool.")
    if data.dtype not in _SUPPORTED_DTYPES:
        raise TypeError(f"{data.dtype} is not supported in MaskedTensor.")
    if data.dim() != mask.dim():
        raise ValueError("data.dim() must equal mask.dim()")
    if data.size() != mask.size():
        raise ValueError("data.size() must equal mask.size()")


def wrap(data: Tensor, mask: Tensor) -> MaskedTensor:
    """A MaskedTensor holding ``data`` (its autograd history kept) and ``mask`` as they are
    (the ops' results; warns as every construction does)."""
    warnings.warn(_PROTOTYPE_WARNING, UserWarning, stacklevel=3)
    _validate(data, mask)
    t = object.__new__(MaskedTensor)
    t._data = data._data  # shape, dtype and device read off the data's array
    t._requires_grad = False  # the data carries autograd (the engine reads this slot)
    t._grad_fn = None
    t._output_nr = 0
    t._vc = data._vc
    t._base = None
    state = t.__dict__
    state["_masked_data"] = data
    state["_masked_mask"] = mask
    hold_dispatch(1)
    weakref.finalize(t, hold_dispatch, -1)
    return t


class MaskedTensor(Tensor):
    """A tensor whose elements are valid where ``mask`` is True (see the module).
    ``MaskedTensor(data, mask, requires_grad=False)`` copies both; ``masked_tensor`` is the
    same, ``as_masked_tensor`` keeps the data's autograd history.

    >>> import warnings, ember
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     mt = ember.masked.MaskedTensor(ember.tensor([1.0, 2.0]), ember.tensor([True, False]))
    >>> mt.get_mask()
    tensor([ True, False])
    """
    _dispatch_while_alive = True
    _is_masked_tensor = True

    def __new__(cls, data, mask, requires_grad=False):
        warnings.warn(_PROTOTYPE_WARNING, UserWarning, stacklevel=2)
        if isinstance(data, Tensor) and not isinstance(data, MaskedTensor) \
                and data.requires_grad:
            warnings.warn(_REQUIRES_GRAD_WARNING, UserWarning, stacklevel=2)
        _validate(data, mask)
        copy = data.detach().clone()
        if requires_grad:
            copy.requires_grad_(True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # warned once above, as PyTorch does
            return wrap(copy, mask.clone())

    def __init__(self, data, mask, requires_grad=False):
        pass  # __new__ built it

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = called_name(func)
        handler = HANDLERS.get(name)
        if handler is None:
            raise not_implemented(name)
        return handler(func, *args, **(kwargs or {}))

    def get_data(self) -> Tensor:
        """The data tensor (masked-out elements hold whatever they held), differentiable."""
        return self.__dict__["_masked_data"]

    def get_mask(self) -> Tensor:
        """The boolean mask (True: the element is valid)."""
        return self.__dict__["_masked_mask"]

    def to_tensor(self, value) -> Tensor:
        """A plain tensor: the data with masked-out elements set to ``value``.

        >>> import warnings, ember
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore")
        ...     mt = ember.masked.masked_tensor(ember.tensor([1.0, 2.0]),
        ...                                     ember.tensor([True, False]))
        >>> mt.to_tensor(0.0)
        tensor([1., 0.])
        """
        return self.get_data().masked_fill(~self.get_mask(), value)

    def is_sparse_coo(self) -> bool:
        return False

    def is_sparse_csr(self) -> bool:
        return False

    @property
    def is_sparse(self) -> bool:
        return False

    @property
    def requires_grad(self) -> bool:
        return self.__dict__["_masked_data"].requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.__dict__["_masked_data"].requires_grad = value

    @property
    def grad(self):
        """The data's gradient under this tensor's mask (one MaskedTensor per gradient)."""
        grad = self.__dict__["_masked_data"].grad
        if grad is None:
            return None
        cached = self.__dict__.get("_masked_grad")
        if cached is None or cached[0] is not grad:
            cached = self.__dict__["_masked_grad"] = (grad, wrap(grad, self.get_mask()))
        return cached[1]

    @grad.setter
    def grad(self, value) -> None:
        # ``p.grad = None`` (optimizers' zero_grad) clears the data's gradient
        data = self.__dict__["_masked_data"]
        data.grad = value.get_data() if isinstance(value, MaskedTensor) else value

    def _set_data_mask(self, data: Tensor, mask: Tensor) -> None:
        _validate(data, mask)
        self.__dict__["_masked_data"] = data
        self.__dict__["_masked_mask"] = mask
        self._data = data._data


def masked_tensor(data, mask, requires_grad=False) -> MaskedTensor:
    """A MaskedTensor of copies of ``data`` and ``mask`` (a leaf, as ``ember.tensor``).

    >>> import warnings, ember
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     mt = ember.masked.masked_tensor(ember.tensor([1.0, 2.0]),
    ...                                     ember.tensor([True, False]), requires_grad=True)
    >>> mt.requires_grad
    True
    """
    return MaskedTensor(data, mask, requires_grad)


def as_masked_tensor(data, mask) -> MaskedTensor:
    """A MaskedTensor over ``data`` that keeps its autograd history (as ``ember.as_tensor``):
    gradients flow back into ``data``.

    >>> import warnings, ember
    >>> x = ember.tensor([1.0, 2.0], requires_grad=True)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     mt = ember.masked.as_masked_tensor(x * 1, ember.tensor([True, False]))
    ...     mt.sum().backward()
    >>> x.grad
    tensor([1., 0.])
    """
    _validate(data, mask)
    return wrap(data, mask.clone())
