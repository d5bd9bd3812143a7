"""``LazyModuleMixin``: modules whose parameters get their shapes from the first input.

A lazy module holds ``UninitializedParameter``/``UninitializedBuffer`` entries until its
first call: a forward pre-hook runs ``initialize_parameters(*args, **kwargs)`` (which
materializes them and runs the target class's ``reset_parameters``), removes itself and
turns the module into its ``cls_to_become`` (``LazyLinear`` becomes ``Linear``). Loading a
state_dict into a lazy module materializes its entries with the loaded shapes first.

>>> import ember
>>> from ember import nn
>>> net = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(1))
>>> net[0]
LazyLinear(in_features=0, out_features=4, bias=True)
>>> net(ember.ones(2, 3)).shape
ember.Size([2, 1])
>>> net[0]
Linear(in_features=3, out_features=4, bias=True)
"""
import itertools
from typing import Any, Optional

from ...autograd import grad_mode
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mix in before a Module class to build it lazily (PyTorch's ``LazyModuleMixin``).

    A subclass creates its inferable parameters as ``UninitializedParameter``s, implements
    ``initialize_parameters(*args, **kwargs)`` and names its ``cls_to_become``.

    >>> import ember
    >>> from ember import nn
    >>> class LazyScale(nn.modules.lazy.LazyModuleMixin, nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = nn.UninitializedParameter()
    ...     def initialize_parameters(self, x):
    ...         if self.has_uninitialized_params():
    ...             with ember.no_grad():
    ...                 self.scale.materialize(x.shape[-1:])
    ...                 self.scale.fill_(2.0)
    ...     def forward(self, x):
    ...         return x * self.scale
    >>> m = LazyScale()
    >>> m.has_uninitialized_params()
    True
    >>> m(ember.ones(3))
    tensor([2., 2., 2.], grad_fn=<MulBackward0>)
    >>> m.has_uninitialized_params()
    False
    """

    #: the class the module becomes once initialized (None: it keeps its class)
    cls_to_become: Optional[type] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        # uninitialized entries are saved as they are (they refuse detach)
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if is_lazy(param) or keep_vars \
                    else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if is_lazy(buf) or keep_vars else buf.detach()

    def _lazy_load_hook(self, state_dict: dict, prefix: str, local_metadata: dict,
                        strict: bool, missing_keys: list, unexpected_keys: list,
                        error_msgs: list) -> None:
        """Materialize each uninitialized entry that ``state_dict`` holds initialized, with
        the loaded shape (the copy that follows fills it)."""
        for name, param in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and param is not None:
                value = state_dict[key]
                if is_lazy(param) and not is_lazy(value):
                    with grad_mode.no_grad():
                        param.materialize(value.shape)

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Infer the uninitialized parameters' shapes from the first input and initialize
        them (each lazy module defines it)."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {self.__class__.__name__}")

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module (not its children) is still
        uninitialized.

        >>> from ember import nn
        >>> nn.LazyLinear(2).has_uninitialized_params()
        True
        """
        entries = itertools.chain(self._parameters.values(), self._buffers.values())
        return any(is_lazy(t) for t in entries)

    def _infer_parameters(self, module: Any, args: tuple, kwargs: Optional[dict] = None) -> None:
        """The forward pre-hook: initialize from this first input, then stop being lazy."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self) -> None:
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")
