"""The hook-based ``nn.utils.weight_norm`` / ``remove_weight_norm`` (deprecated in PyTorch
for ``nn.utils.parametrizations.weight_norm``, still found in many programs): the weight is
replaced by the parameters ``<name>_g`` and ``<name>_v`` and recomputed, as a plain
attribute, by a forward pre-hook before each forward."""
from __future__ import annotations

import warnings
from typing import Any, Optional, TypeVar

from ... import linalg
from ..._tensor import Tensor
from ..._ops.weight_norm import WeightNormInterface
from ..parameter import Parameter

# nn.modules imports nn.utils, so the Module type is not imported here (not even for hints)
Module = Any

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v: Tensor, pow: float = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``dim=-1``:
    over all of ``v``, as one number).

    >>> import ember
    >>> from ember.nn.utils.weight_norm import norm_except_dim
    >>> norm_except_dim(ember.tensor([[3., 4.], [0., 1.]]), 2, 0)
    tensor([[5.],
            [1.]])
    """
    if dim == -1:
        return v.norm(pow)
    others = [d for d in range(v.ndim) if d != dim % v.ndim]
    return linalg.vector_norm(v, pow, others, keepdim=True)


def weight_norm_value(v: Tensor, g: Tensor, dim: int = 0) -> Tensor:
    """``v * (g / ||v||)``, the norm taken over every dim but ``dim`` (PyTorch's
    ``_weight_norm``: one fused op when ``dim`` is the first or the last dim)."""
    if v.ndim and dim in (0, v.ndim - 1):
        return WeightNormInterface.apply(v, g, dim)
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``module.<name>`` from ``<name>_g`` and
    ``<name>_v``."""

    name: str
    dim: int

    def __init__(self, name: str, dim: Optional[int]) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module: Module) -> Any:
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return weight_norm_value(v, g, self.dim)

    @staticmethod
    def apply(module: Module, name: str, dim: Optional[int]) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning,
                      stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(norm_except_dim(weight, 2,
                                                                         fn.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module: Module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


T_module = TypeVar("T_module")


def weight_norm(module: T_module, name: str = "weight", dim: Optional[int] = 0) -> T_module:
    """Replace ``module.<name>`` by ``g * v / ||v||`` with parameters ``<name>_g`` (the
    norms over every dim but ``dim``; ``None``: the whole tensor) and ``<name>_v``,
    recomputed before each forward. Deprecated in PyTorch (a FutureWarning) for
    ``nn.utils.parametrizations.weight_norm``.

    >>> import warnings
    >>> from ember import nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     m = nn.utils.weight_norm(nn.Linear(20, 40))
    >>> m.weight_g.shape, m.weight_v.shape
    (ember.Size([40, 1]), ember.Size([40, 20]))
    """
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``weight_norm``: ``module.<name>`` is a Parameter again, holding the current
    ``g * v / ||v||``.

    >>> import warnings
    >>> from ember import nn
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", FutureWarning)
    ...     m = nn.utils.weight_norm(nn.Linear(2, 3))
    >>> sorted(dict(nn.utils.remove_weight_norm(m).named_parameters()))
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
