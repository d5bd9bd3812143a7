"""``nn.utils.parametrize``: a parameter or buffer seen through modules that compute it.

``register_parametrization(module, "weight", P())`` moves the tensor to
``module.parametrizations.weight.original`` (a ``ParametrizationList``) and makes
``module.weight`` a property that returns ``P()(original)`` each time it is read (once per
``cached()`` block). The module's class is replaced by a subclass made for it,
``Parametrized<Class>``, because a property lives on a class; removing the last
parametrization restores the original class.

>>> import ember
>>> from ember import nn
>>> from ember.nn.utils import parametrize
>>> class Symmetric(nn.Module):
...     def forward(self, X):
...         return X.triu() + X.triu(1).mT
>>> layer = nn.Linear(3, 3)
>>> _ = parametrize.register_parametrization(layer, "weight", Symmetric())
>>> type(layer).__name__, ember.equal(layer.weight, layer.weight.T)
('ParametrizedLinear', True)
>>> sorted(layer.state_dict())
['bias', 'parametrizations.weight.original']
"""
from __future__ import annotations

import collections.abc
import contextlib
import copy
import copyreg
from typing import Iterator, Optional, Sequence, Union

from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..parameter import Parameter

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

# open cached() blocks (they nest) and the values computed inside them, by
# (id(module), tensor name); emptied when the outermost block closes
_cache_enabled = 0
_cache: dict[tuple[int, str], Optional[Tensor]] = {}


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Within the block, each parametrized tensor is computed once, on its first read, and
    the same tensor is returned after that (useful when a weight is read several times in
    one forward, as an RNN's recurrent kernel).

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils import parametrize
    >>> layer = nn.Linear(2, 2)
    >>> _ = parametrize.register_parametrization(layer, "weight", nn.Tanh())
    >>> with parametrize.cached():
    ...     layer.weight is layer.weight
    True
    >>> layer.weight is layer.weight
    False
    """
    global _cache_enabled, _cache
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache = {}


def _register_parameter_or_buffer(module, name, value):
    if isinstance(value, Parameter):
        module.register_parameter(name, value)
    else:
        module.register_buffer(name, value)


def _set_in_place(dest, src):
    """``dest.set_(src)``: dest (the same object, so optimizers holding it still work)
    takes src's storage and shape."""
    if dest.dtype != src.dtype:
        raise RuntimeError(f"Could not set tensor of type {src.dtype.cpp_name} to a tensor of "
                           f"type {dest.dtype.cpp_name}")
    dest.data = src


def _right_inverses(modules, value, missing_is_identity):
    """``value`` through the ``right_inverse`` of ``modules`` in reverse order."""
    for module in reversed(list(modules)):
        if not hasattr(module, "right_inverse"):
            if missing_is_identity:
                continue
            raise RuntimeError(f"parametrization {type(module).__name__} does not implement "
                               "right_inverse.")
        try:
            value = module.right_inverse(value)
        except NotImplementedError:
            if not missing_is_identity:
                raise
    return value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (``module.parametrizations[name]``), in the order
    they were registered, holding the unconstrained tensor as ``original`` -- or as
    ``original0``, ``original1``, ... when the first parametrization's ``right_inverse``
    returns a sequence. Made by ``register_parametrization``, not by hand.

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils import parametrize
    >>> layer = nn.Linear(2, 2)
    >>> _ = parametrize.register_parametrization(layer, "weight", nn.Identity())
    >>> type(layer.parametrizations.weight).__name__
    'ParametrizationList'
    >>> layer.parametrizations.weight.original.shape
    ember.Size([2, 2])
    """

    original: Tensor
    unsafe: bool

    def __init__(self, modules: Sequence[Module], original: Union[Tensor, Parameter],
                 unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        original_shape, original_dtype = original.shape, original.dtype
        with no_grad():
            new = _right_inverses(self, original, missing_is_identity=True)
        if not isinstance(new, (Tensor, collections.abc.Sequence)):
            raise ValueError("'right_inverse' must return a Tensor or a Sequence of tensors "
                             f"(list, tuple...). Got {type(new).__name__}")
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if original.dtype != new.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 f"the dtype.\noriginal.dtype: {original.dtype}\n"
                                 f"right_inverse(original).dtype: {new.dtype}")
            with no_grad():
                _set_in_place(original, new)
            _register_parameter_or_buffer(self, "original", original)
        else:
            for i, tensor in enumerate(new):
                if not isinstance(tensor, Tensor):
                    raise ValueError("'right_inverse' must return a Tensor or a Sequence of "
                                     "tensors (list, tuple...). Got element "
                                     f"{i} of the sequence with type {type(tensor).__name__}.")
                if isinstance(original, Parameter):
                    tensor = Parameter(tensor, original.requires_grad)
                tensor.requires_grad_(original.requires_grad)
                _register_parameter_or_buffer(self, f"original{i}", tensor)
        if not self.unsafe:
            self._check_consistent(original_shape, original_dtype)

    def _check_consistent(self, shape, dtype):
        value = self()
        if not isinstance(value, Tensor):
            raise ValueError(f"A parametrization must return a tensor. Got "
                             f"{type(value).__name__}.")
        if value.dtype != dtype:
            raise ValueError("Registering a parametrization may not change the dtype of the "
                             "tensor, unless `unsafe` flag is enabled.\n"
                             f"unparametrized dtype: {dtype}\nparametrized dtype: {value.dtype}")
        if value.shape != shape:
            raise ValueError("Registering a parametrization may not change the shape of the "
                             "tensor, unless `unsafe` flag is enabled.\n"
                             f"unparametrized shape: {shape}\nparametrized shape: {value.shape}")

    def right_inverse(self, value: Tensor) -> None:
        """Store ``value`` as the unconstrained tensor(s): it goes through every
        ``right_inverse`` in reverse registration order (what assigning ``module.weight``
        runs).

        >>> import ember
        >>> from ember import nn
        >>> from ember.nn.utils import parametrize
        >>> layer = nn.Linear(2, 2)
        >>> _ = parametrize.register_parametrization(layer, "weight", nn.Identity())
        >>> layer.weight = ember.eye(2)  # Identity has no right_inverse
        Traceback (most recent call last):
          ...
        RuntimeError: parametrization Identity does not implement right_inverse.
        """
        with no_grad():
            value = _right_inverses(self, value, missing_is_identity=False)
            if self.is_tensor:
                self._store_one(value)
            else:
                self._store_several(value)

    def _store_one(self, value):
        if not isinstance(value, Tensor):
            raise ValueError(f"`right_inverse` should return a tensor. Got "
                             f"{type(value).__name__}")
        if value.dtype != self.original.dtype:
            raise ValueError(f"The tensor returned by `right_inverse` has dtype {value.dtype} "
                             f"while `original` has dtype {self.original.dtype}")
        _set_in_place(self.original, value)

    def _store_several(self, values):
        if not isinstance(values, collections.abc.Sequence):
            raise ValueError("'right_inverse' must return a sequence of tensors. Got "
                             f"{type(values).__name__}.")
        if len(values) != self.ntensors:
            raise ValueError("'right_inverse' must return a sequence of tensors of length "
                             f"{self.ntensors}. Got a sequence of length {len(values)}.")
        for i, tensor in enumerate(values):
            if not isinstance(tensor, Tensor):
                raise ValueError("'right_inverse' must return a sequence of tensors or "
                                 f"reference-type opaques. Got element {i} of type "
                                 f"{type(tensor).__name__}.")
            original_i = getattr(self, f"original{i}")
            if original_i.dtype != tensor.dtype:
                raise ValueError(f"Tensor {i} returned by `right_inverse` has dtype "
                                 f"{tensor.dtype} while `original{i}` has dtype "
                                 f"{original_i.dtype}")
            _set_in_place(original_i, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization on the original(s), each next
        one on the result before it."""
        first, *rest = list(self)
        if self.is_tensor:
            value = first(self.original)
        else:
            value = first(*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for parametrization in rest:
            value = parametrization(value)
        return value


# PyTorch's text, run together where its pieces lack spaces
_SUBCLASS_SET_FAILED = (
    "Calling remove_parametrizations() with leave_parametrized=True for a parameter that is an "
    "instance of a tensor subclass requires set_() to be implemented correctly for the tensor "
    "subclass.Alternatively, one can opt into the swap_tensors pathEither set "
    "leave_parametrized=False or provide a working implementationfor set_() in the tensor "
    "subclass or set torch.__future__.set_swap_module_params_on_conversion(True).")


def _copy_parametrized(self, memo):
    """``copy.deepcopy`` of a parametrized module: its attributes copied one by one (the
    default protocol would call ``__getstate__``, which refuses)."""
    done = memo.get(id(self))
    if done is not None:
        return done
    replica = self.__new__(type(self))
    memo[id(self)] = replica
    replica.__dict__ = copy.deepcopy(self.__dict__, memo)
    for slot in copyreg._slotnames(type(self)):
        if hasattr(self, slot):
            setattr(replica, slot, copy.deepcopy(getattr(self, slot), memo))
    return replica


def _refuse_pickling(self):
    raise RuntimeError("Serialization of parametrized modules is only supported through "
                       "state_dict(). See:\nhttps://pytorch.org/tutorials/beginner/"
                       "saving_loading_models.html#saving-loading-a-general-checkpoint-for-"
                       "inference-and-or-resuming-training")


def _give_own_class(module):
    """Swap the module's class for a subclass of its own, where properties can be added
    without touching other instances."""
    cls = type(module)
    namespace = {"__getstate__": _refuse_pickling}
    if not hasattr(cls, "__deepcopy__"):
        namespace["__deepcopy__"] = _copy_parametrized
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), namespace)


def _add_property(module, tensor_name):
    if hasattr(module, tensor_name):
        raise AssertionError(f"Module already has an attribute named '{tensor_name}'")

    def read(self):
        parametrization = self.parametrizations[tensor_name]
        if not _cache_enabled:
            return parametrization()
        key = (id(self), tensor_name)
        value = _cache.get(key)
        if value is None:
            value = _cache[key] = parametrization()
        return value

    def assign(self, value):
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(type(module), tensor_name, property(read, assign))


def _check_chained(module, tensor_name, parametrization):
    """Registering on an already parametrized tensor (safe mode): the new parametrization
    and its right_inverse must keep the tensor's dtype and shape."""
    current = getattr(module, tensor_name)
    result = parametrization(current)
    if not isinstance(result, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(result).__name__}.")
    where = f"module.{tensor_name}"
    if result.dtype != current.dtype:
        raise ValueError("Registering a parametrization may not change the dtype of the tensor,"
                         f" unless the `unsafe` flag is enabled.\n{where}.dtype: "
                         f"{current.dtype}\nparametrization({where}).dtype: {result.dtype}")
    if result.shape != current.shape:
        raise ValueError("Registering a parametrization may not change the shape of the tensor,"
                         f" unless the `unsafe` flag is enabled.\n{where}.shape: "
                         f"{current.shape}\nparametrization({where}).shape: {result.shape}")
    if not hasattr(parametrization, "right_inverse"):
        return
    try:
        back = parametrization.right_inverse(result)
    except NotImplementedError:
        return
    if not isinstance(back, Tensor):
        raise ValueError("parametrization.right_inverse must return a tensor. Got: "
                         f"{type(back).__name__}")
    if back.dtype != current.dtype:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the "
                         f"same dtype as {where}, unless the `unsafe` flag is enabled.\n"
                         f"{where}.dtype: {current.dtype}\nreturned dtype: {back.dtype}")
    if back.shape != current.shape:
        raise ValueError("The tensor returned by parametrization.right_inverse must have the "
                         f"same shape as {where}, unless the `unsafe` flag is enabled.\n"
                         f"{where}.shape: {current.shape}\nreturned shape: {back.shape}")


def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = False) -> Module:
    """Make ``module.<tensor_name>`` read as ``parametrization(original)``.

    The first registration on a tensor moves it to
    ``module.parametrizations[tensor_name].original`` (after ``right_inverse``, when the
    parametrization has one; a ``right_inverse`` returning a sequence gives ``original0``,
    ``original1``, ... and a ``forward`` taking that many tensors); further registrations
    chain after it. Assigning ``module.<tensor_name> = X`` then stores ``right_inverse(X)``.
    ``unsafe=True`` skips the checks that the parametrization keeps the tensor's shape and
    dtype. The parametrization takes the module's training mode.

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils import parametrize
    >>> class Skew(nn.Module):
    ...     def forward(self, X):
    ...         A = X.triu(1)
    ...         return A - A.mT
    ...     def right_inverse(self, A):
    ...         return A.triu(1)
    >>> layer = parametrize.register_parametrization(nn.Linear(2, 2), "weight", Skew())
    >>> layer.weight = ember.tensor([[0., 1.], [-1., 0.]])
    >>> layer.weight
    tensor([[ 0.,  1.],
            [-1.,  0.]], grad_fn=<SubBackward0>)
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            _check_chained(module, tensor_name, parametrization)
        chain = module.parametrizations[tensor_name]
        chain.append(parametrization)
        chain.unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        chain = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _give_own_class(module)
            module.parametrizations = ModuleDict()
        _add_property(module, tensor_name)
        module.parametrizations[tensor_name] = chain
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def is_parametrized(module: Module, tensor_name: Optional[str] = None) -> bool:
    """Whether ``module`` has a parametrization (on ``tensor_name``, when given).

    >>> from ember import nn
    >>> from ember.nn.utils import parametrize
    >>> layer = nn.Linear(2, 2)
    >>> _ = parametrize.register_parametrization(layer, "weight", nn.Identity())
    >>> parametrize.is_parametrized(layer), parametrize.is_parametrized(layer, "bias")
    (True, False)
    """
    parametrizations = getattr(module, "parametrizations", None)
    if not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = True) -> Module:
    """Undo the parametrizations of ``module.<tensor_name>``: it becomes a plain parameter
    (or buffer) again, holding the current parametrized value (``leave_parametrized=True``)
    or the unconstrained ``original`` (only possible when there is one tensor). The same
    Parameter object stays registered, so an optimizer holding it keeps working.

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils import parametrize
    >>> class Double(nn.Module):
    ...     def forward(self, X):
    ...         return 2 * X
    >>> layer = nn.Linear(2, 2)
    >>> before = layer.weight.detach().clone()
    >>> _ = parametrize.register_parametrization(layer, "weight", Double())
    >>> _ = parametrize.remove_parametrizations(layer, "weight")
    >>> type(layer).__name__, ember.equal(layer.weight, 2 * before)
    ('Linear', True)
    """
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    chain = module.parametrizations[tensor_name]
    if chain.is_tensor:
        original = chain.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
                try:
                    _set_in_place(original, value)
                except RuntimeError as e:
                    if type(original) is Tensor:
                        raise
                    raise RuntimeError(_SUBCLASS_SET_FAILED) from e
    elif leave_parametrized:
        value = getattr(module, tensor_name)
        original = Parameter(value.detach()) if value.requires_grad else value
    else:
        raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a tensor "
                         "that is parametrized in terms of a sequence of tensors.")
    delattr(type(module), tensor_name)
    del module.parametrizations[tensor_name]
    _register_parameter_or_buffer(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = type(module).__bases__[0]
    return module


def type_before_parametrizations(module: Module) -> type:
    """The module's class as it was before it was parametrized.

    >>> from ember import nn
    >>> from ember.nn.utils import parametrize
    >>> layer = nn.Linear(2, 2)
    >>> _ = parametrize.register_parametrization(layer, "weight", nn.Identity())
    >>> parametrize.type_before_parametrizations(layer).__name__
    'Linear'
    """
    if is_parametrized(module):
        return type(module).__bases__[0]
    return type(module)


def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: Optional[str] = None) -> Module:
    """Register ``from_module``'s parametrizations (the same parametrization modules) on
    ``to_module`` and make its originals the same tensors; all of them, or only those of
    ``tensor_name``. A tensor ``to_module`` lacks is created first. Nothing happens when
    ``from_module`` is not parametrized.

    >>> import ember
    >>> from ember import nn
    >>> from ember.nn.utils import parametrize
    >>> a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    >>> _ = parametrize.register_parametrization(a, "weight", nn.Identity())
    >>> _ = parametrize.transfer_parametrizations_and_params(a, b)
    >>> b.parametrizations.weight.original is a.parametrizations.weight.original
    True
    """
    if not is_parametrized(from_module):
        return to_module
    names = list(from_module.parametrizations) if tensor_name is None else [tensor_name]
    for name in names:
        if not hasattr(to_module, name):
            setattr(to_module, name, Parameter(getattr(from_module, name).detach()))
        source = from_module.parametrizations[name]
        for parametrization in source:
            register_parametrization(to_module, name, parametrization)
        target = to_module.parametrizations[name]
        if hasattr(source, "original"):
            target.original = source.original
        else:
            i = 0
            while hasattr(source, f"original{i}"):
                setattr(target, f"original{i}", getattr(source, f"original{i}"))
                i += 1
    return to_module

