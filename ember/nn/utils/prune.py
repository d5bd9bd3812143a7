"""Pruning as in ``torch.nn.utils.prune``: a pruned tensor ``name`` of a module becomes the
parameter ``name + '_orig'`` times the buffer ``name + '_mask'``, recomputed by a forward
pre-hook (the pruning method itself) before every forward. Pruning the same tensor again
composes the masks (a ``PruningContainer`` holds the methods); ``remove`` makes the pruned
values permanent.

>>> import ember
>>> from ember.nn.utils import prune
>>> layer = ember.nn.Linear(3, 1, bias=False)
>>> with ember.no_grad():
...     _ = layer.weight.copy_(ember.tensor([[0.5, -2.0, 0.1]]))
>>> _ = prune.l1_unstructured(layer, "weight", amount=1)
>>> layer.weight
tensor([[ 0.5000, -2.0000,  0.0000]], grad_fn=<MulBackward0>)
>>> [name for name, _ in layer.named_parameters()], [name for name, _ in layer.named_buffers()]
(['weight_orig'], ['weight_mask'])
>>> _ = prune.remove(layer, "weight")
>>> layer.weight
Parameter containing:
tensor([[ 0.5000, -2.0000,  0.0000]], requires_grad=True)
"""
from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, Optional

from ... import _creation, _functions as _fn
from ..._tensor import Tensor
from ..modules.module import Module
from .convert_parameters import parameters_to_vector


class BasePruningMethod(ABC):
    """Base of the pruning methods: a subclass sets ``PRUNING_TYPE`` (``'unstructured'``,
    ``'structured'`` with a ``dim`` attribute, or ``'global'``) and implements
    ``compute_mask(t, default_mask)``, the new mask given the importance scores ``t`` and
    the current mask. An applied method is the module's forward pre-hook.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> class Negatives(prune.BasePruningMethod):
    ...     PRUNING_TYPE = "unstructured"
    ...     def compute_mask(self, t, default_mask):
    ...         return default_mask * (t >= 0)
    >>> layer = ember.nn.Linear(2, 1, bias=False)
    >>> with ember.no_grad():
    ...     _ = layer.weight.copy_(ember.tensor([[1.0, -1.0]]))
    >>> _ = Negatives.apply(layer, "weight")
    >>> layer.weight_mask
    tensor([[1., 0.]])
    """
    _tensor_name: str
    PRUNING_TYPE: str

    def __call__(self, module: Module, inputs: Any) -> None:
        """The forward pre-hook: recompute the pruned tensor from ``_orig`` and ``_mask``."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The mask for importance scores ``t`` on top of ``default_mask``."""

    def apply_mask(self, module: Module) -> Tensor:
        """``module.<name>_orig`` times ``module.<name>_mask`` (the mask in orig's dtype)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        orig = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module: Module, name: str, *args: Any,
              importance_scores: Optional[Tensor] = None, **kwargs: Any) -> "BasePruningMethod":
        """Prune ``module.<name>`` with ``cls(*args, **kwargs)``, on top of any pruning
        already applied to it (the two then share a ``PruningContainer``); returns the
        method now hooked on the module. ``importance_scores`` (``name``'s shape) rank the
        entries instead of the tensor's values."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        orig = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != orig.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {orig.shape}")
        else:
            importance_scores = orig
        first = not isinstance(method, PruningContainer)
        if first:  # the tensor moves to <name>_orig; <name> becomes the hook's product
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
            default_mask = _creation.ones_like(orig)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone()
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first:  # leave the module as it was
                orig = getattr(module, name + "_orig")
                module.register_parameter(name, orig)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t: Tensor, default_mask: Optional[Tensor] = None,
              importance_scores: Optional[Tensor] = None) -> Tensor:
        """``t`` times its mask (computed from ``importance_scores`` if given), without
        touching any module."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(f"importance_scores should have the same shape as tensor "
                                     f"t, got {importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else _creation.ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module: Module) -> None:
        """Make the pruning permanent: ``<name>`` becomes a parameter holding the pruned
        values; ``<name>_orig`` and ``<name>_mask`` go (the hook is removed by the caller,
        ``prune.remove``)."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned before pruning can be "
                                 "removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _composite_method(cls: type, module: Module, name: str, *args: Any,
                      **kwargs: Any) -> BasePruningMethod:
    """A new ``cls(*args, **kwargs)`` for ``name``, combined with the pruning hook already on
    ``name`` (whose hook entry is taken off the module; ``apply`` hooks the result)."""
    old_method = None
    keys = []
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            keys.append(key)
    if len(keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} of "
                             f"module {module}. Use a PruningContainer.")
    for key in keys:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        method = old_method
    elif old_method is not None:
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        method = container
    return method


class PruningContainer(BasePruningMethod):
    """The sequence of pruning methods applied to one tensor, in order; its mask is the last
    method's, computed on what the earlier ones left (the entries still at 1 for an
    unstructured method, the channels not yet all zero for a structured one).

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = ember.nn.Linear(4, 1, bias=False)
    >>> with ember.no_grad():
    ...     _ = layer.weight.copy_(ember.tensor([[4.0, -3.0, 2.0, 1.0]]))
    >>> _ = prune.l1_unstructured(layer, "weight", amount=1)
    >>> _ = prune.l1_unstructured(layer, "weight", amount=0.5)  # round(1.5) = 2 of the 3 left
    >>> layer.weight_mask
    tensor([[1., 0., 0., 0.]])
    >>> [type(m).__name__ for m in layer._forward_pre_hooks.values()]
    ['PruningContainer']
    """

    def __init__(self, *args: BasePruningMethod) -> None:
        self._pruning_methods: tuple[BasePruningMethod, ...] = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method: BasePruningMethod) -> None:
        """Append ``method``, which must prune the same tensor."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError("Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, idx: int) -> BasePruningMethod:
        return self._pruning_methods[idx]

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        """The last method's mask, computed on the part of ``t`` the current mask keeps."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            slc = default_mask == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            n_dims = t.dim()
            dim = method.dim + n_dims if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {n_dims}")
            # channels already entirely pruned are left out
            keep = default_mask.sum(dim=[d for d in range(n_dims) if d != dim]) != 0
            slc = tuple(keep if d == dim else slice(None) for d in range(n_dims))
        elif kind == "global":
            slc = (slice(None),) * len(t.shape)
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind}")
        partial = method.compute_mask(t[slc], default_mask=default_mask[slc])
        new_mask[slc] = partial.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing (the mask stays all ones): the reparametrization alone."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        return default_mask

    @classmethod
    def apply(cls, module: Module, name: str) -> "BasePruningMethod":  # type: ignore[override]
        """Reparametrize ``module.<name>`` with an all-ones mask."""
        return super().apply(module, name)


class _UnstructuredPruning(BasePruningMethod):
    """Prunes ``amount`` entries (a count, or a fraction of the entries), the ones
    ``_pruned_positions`` picks among the flattened tensor."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount: float) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        tensor_size = t.nelement()
        nparams_toprune = _compute_nparams_toprune(self.amount, tensor_size)
        _validate_pruning_amount(nparams_toprune, tensor_size)
        mask = default_mask.clone()
        if nparams_toprune != 0:
            mask.view(-1)[self._pruned_positions(t, nparams_toprune)] = 0
        return mask


class RandomUnstructured(_UnstructuredPruning):
    """Prunes ``amount`` entries (a count, or a fraction of the entries) chosen at random."""

    @staticmethod
    def _pruned_positions(t, count):
        return _creation.rand_like(t).view(-1).topk(count).indices

    @classmethod
    def apply(cls, module: Module, name: str,  # type: ignore[override]
              amount: float) -> "BasePruningMethod":
        """Prune ``amount`` random entries of ``module.<name>``."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(_UnstructuredPruning):
    """Prunes the ``amount`` entries (a count, or a fraction) of smallest absolute value."""

    @staticmethod
    def _pruned_positions(t, count):
        return t.abs().view(-1).topk(count, largest=False).indices

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              importance_scores: Optional[Tensor] = None) -> "BasePruningMethod":
        """Prune the ``amount`` smallest entries of ``module.<name>`` (or of the scores)."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes ``amount`` whole channels (slices along ``dim``) chosen at random."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(nparams_toprune, nchannels)
        if nparams_toprune == 0:
            return default_mask
        prob = _creation.rand(nchannels, device=t.device)
        threshold = prob.kthvalue(nparams_toprune).values
        mask = _creation.zeros_like(t)
        mask[_channel_index(t, self.dim, prob > threshold)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float,  # type: ignore[override]
              dim: int = -1) -> "BasePruningMethod":
        """Prune ``amount`` random channels of ``module.<name>`` along ``dim``."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the ``amount`` channels (slices along ``dim``) of smallest ``n``-norm."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount: float, n: Any, dim: int = -1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        nchannels = t.shape[self.dim]
        nparams_toprune = _compute_nparams_toprune(self.amount, nchannels)
        _validate_pruning_amount(nparams_toprune, nchannels)
        kept = _compute_norm(t, self.n, self.dim).topk(nchannels - nparams_toprune,
                                                       largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = _creation.zeros_like(t)
        mask[_channel_index(t, self.dim, kept.indices)] = 1
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module: Module, name: str, amount: float, n: Any,  # type: ignore[override]
              dim: int, importance_scores: Optional[Tensor] = None) -> "BasePruningMethod":
        """Prune the ``amount`` channels of ``module.<name>`` of smallest ``n``-norm."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given ``mask`` is 0."""
    PRUNING_TYPE = "global"

    def __init__(self, mask: Tensor) -> None:
        self.mask = mask

    def compute_mask(self, t: Tensor, default_mask: Tensor) -> Tensor:
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module: Module, name: str,  # type: ignore[override]
              mask: Tensor) -> "BasePruningMethod":
        """Prune ``module.<name>`` where ``mask`` is 0."""
        return super().apply(module, name, mask=mask)


def _channel_index(t: Tensor, dim: int, index: Tensor) -> tuple[Any, ...]:
    return tuple(index if d == dim % t.dim() else slice(None) for d in range(t.dim()))


# ---- the functional forms --------------------------------------------------------------------
def identity(module: Module, name: str) -> Module:
    """Reparametrize ``module.<name>`` as ``<name>_orig * <name>_mask`` with an all-ones
    mask; returns ``module``.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = prune.identity(ember.nn.Linear(2, 3), "bias")
    >>> layer.bias_mask
    tensor([1., 1., 1.])
    """
    Identity.apply(module, name)
    return module


def random_unstructured(module: Module, name: str, amount: float) -> Module:
    """Prune ``amount`` random entries of ``module.<name>`` (a count, or a fraction of its
    entries); returns ``module``.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = prune.random_unstructured(ember.nn.Linear(4, 5), "weight", amount=0.25)
    >>> int((layer.weight_mask == 0).sum())
    5
    """
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module: Module, name: str, amount: float,
                    importance_scores: Optional[Tensor] = None) -> Module:
    """Prune the ``amount`` entries of ``module.<name>`` of smallest absolute value (or of
    smallest ``importance_scores``); returns ``module``.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = ember.nn.Linear(3, 1, bias=False)
    >>> scores = ember.tensor([[3.0, 1.0, 2.0]])
    >>> prune.l1_unstructured(layer, "weight", amount=2, importance_scores=scores).weight_mask
    tensor([[1., 0., 0.]])
    """
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module: Module, name: str, amount: float, dim: int) -> Module:
    """Prune ``amount`` random channels (slices along ``dim``) of ``module.<name>``;
    returns ``module``.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = prune.random_structured(ember.nn.Linear(3, 4), "weight", amount=2, dim=0)
    >>> layer.weight_mask.sum(dim=1).tolist().count(0.0)
    2
    """
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module: Module, name: str, amount: float, n: Any, dim: int,
                  importance_scores: Optional[Tensor] = None) -> Module:
    """Prune the ``amount`` channels (slices along ``dim``) of ``module.<name>`` of
    smallest ``n``-norm (``n`` as ``ember.norm``'s ``p``); returns ``module``.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = ember.nn.Linear(2, 3, bias=False)
    >>> with ember.no_grad():
    ...     _ = layer.weight.copy_(ember.tensor([[1.0, 1.0], [3.0, 0.0], [0.0, 2.0]]))
    >>> prune.ln_structured(layer, "weight", amount=1, n=2, dim=0).weight_mask
    tensor([[0., 0.],
            [1., 1.],
            [1., 1.]])
    """
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters: Iterable[tuple[Module, str]], pruning_method: type,
                        importance_scores: Optional[dict[tuple[Module, str], Tensor]] = None,
                        **kwargs: Any) -> None:
    """Prune the ``(module, name)`` tensors together: ``pruning_method(**kwargs)`` (an
    unstructured method) ranks all their entries as one vector, so the amount is spread
    over them by importance; each tensor then gets its share as a ``CustomFromMask``.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> a, b = ember.nn.Linear(2, 1, bias=False), ember.nn.Linear(2, 1, bias=False)
    >>> with ember.no_grad():
    ...     _ = a.weight.copy_(ember.tensor([[1.0, 2.0]]))
    ...     _ = b.weight.copy_(ember.tensor([[5.0, 0.5]]))
    >>> prune.global_unstructured([(a, "weight"), (b, "weight")],
    ...                           pruning_method=prune.L1Unstructured, amount=2)
    >>> a.weight_mask, b.weight_mask
    (tensor([[0., 1.]]), tensor([[1., 0.]]))
    """
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([
        getattr(module, name + "_mask", _creation.ones_like(getattr(module, name)))
        for module, name in parameters])
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    pointer = 0
    for module, name in parameters:
        param = getattr(module, name)
        num_param = param.numel()
        custom_from_mask(module, name,
                         mask=final_mask[pointer:pointer + num_param].view_as(param))
        pointer += num_param


def custom_from_mask(module: Module, name: str, mask: Tensor) -> Module:
    """Prune ``module.<name>`` where ``mask`` is 0; returns ``module``.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = prune.custom_from_mask(ember.nn.Linear(3, 1), "bias", ember.tensor([0.0]))
    >>> layer.bias
    tensor([0.], grad_fn=<MulBackward0>)
    """
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module: Module, name: str) -> Module:
    """Make the pruning of ``module.<name>`` permanent: ``<name>`` is a parameter again,
    holding the pruned values, and the hook, ``<name>_orig`` and ``<name>_mask`` go.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> layer = prune.identity(ember.nn.Linear(2, 1), "bias")
    >>> sorted(prune.remove(layer, "bias").state_dict())
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module: Module) -> bool:
    """Whether ``module`` or any submodule carries a pruning hook.

    >>> import ember
    >>> from ember.nn.utils import prune
    >>> model = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.ReLU())
    >>> prune.is_pruned(model)
    False
    >>> _ = prune.identity(model[0], "weight")
    >>> prune.is_pruned(model)
    True
    """
    for _, submodule in module.named_modules():
        for hook in submodule._forward_pre_hooks.values():
            if isinstance(hook, BasePruningMethod):
                return True
    return False


# ---- argument checks ---------------------------------------------------------------------------
def _validate_pruning_amount_init(amount: Any) -> None:
    """``amount``: a non-negative integer (a count) or a float in [0, 1] (a fraction)."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral)
            and (float(amount) > 1.0 or float(amount) < 0.0)):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount: Any, tensor_size: int) -> None:
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _validate_structured_pruning(t: Tensor) -> None:
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount: Any, tensor_size: int) -> int:
    """A count stays; a fraction of ``tensor_size`` is rounded (half to even)."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t: Tensor, dim: int) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t: Tensor, n: Any, dim: int) -> Tensor:
    """The ``n``-norm of each slice of ``t`` along ``dim`` (over all the other dims)."""
    dims = list(range(t.dim()))
    dims.remove(dims[dim])
    return _fn.norm(t, p=n, dim=dims)


__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]
