"""The hook-based ``nn.utils.spectral_norm`` / ``remove_spectral_norm``: the weight moves
to ``<name>_orig``, the power-iteration vectors are the buffers ``<name>_u`` / ``<name>_v``,
and a forward pre-hook sets ``module.<name> = W / sigma`` (one power step per forward in
training mode). State dicts carry a ``spectral_norm`` version in their metadata; one saved
before versions existed (with the normalized weight instead of ``<name>_v``) is converted
on load."""
from __future__ import annotations

from typing import Any, Optional, TypeVar

from ... import _functions as _fn, linalg
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from .. import functional as F
from ..parameter import Parameter

# nn.modules imports nn.utils, so the Module type is not imported here (not even for hints)
Module = Any

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]

_TRANSPOSED_CONVS = {"ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"}


def default_dim(module: Module) -> int:
    """The output dim of the weight: 1 for transposed convolutions, else 0. (The classes are
    matched by name: nn.modules imports nn.utils, so nn.utils cannot import them.)"""
    for cls in type(module).__mro__:
        if cls.__name__ in _TRANSPOSED_CONVS and cls.__module__ == "ember.nn.modules.conv":
            return 1
    return 0


class SpectralNorm:
    """The forward pre-hook that sets ``module.<name>`` to the spectrally normalized
    ``<name>_orig``."""

    _version: int = 1
    name: str
    dim: int
    n_power_iterations: int
    eps: float

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim()) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            # in place (out=): the buffers stay the same tensors
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = F.normalize(_fn.mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = F.normalize(_fn.mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                # copies, so that the next power step leaves this graph's u, v alone
                u, v = u.clone(), v.clone()
        sigma = _fn.dot(u, _fn.mv(weight_mat, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # the v with u = W v / ||W v|| (least squares), scaled so that u^T W v = sigma
        v = linalg.multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(),
                                  u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / _fn.dot(u, _fn.mv(weight_mat, v)))

    @staticmethod
    def apply(module: Module, name: str, n_power_iterations: int, dim: int,
              eps: float) -> SpectralNorm:
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).shape
            u = F.normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = F.normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # a plain attribute until the first forward (the hook replaces it then)
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Converts a state dict saved before spectral_norm had a version (holding the
    normalized ``<name>`` and no ``<name>_v``) on load."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs) -> None:
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if (version is None and weight_key not in state_dict
                and all(weight_key + s in state_dict for s in ("_orig", "_u", "_v"))):
            return  # a current state dict whose metadata was dropped
        missing = [weight_key + s for s in ("_orig", "", "_u") if weight_key + s not in state_dict]
        if missing:
            if strict:
                missing_keys.extend(missing)
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Records ``spectral_norm``'s version in the state dict's metadata."""

    def __init__(self, fn: SpectralNorm) -> None:
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata) -> None:
        versions = local_metadata.setdefault("spectral_norm", {})
        key = self.fn.name + ".version"
        if key in versions:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        versions[key] = self.fn._version


T_module = TypeVar("T_module")


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: Optional[int] = None) -> T_module:
    """Divide ``module.<name>`` by its largest singular value, estimated by power iteration
    (``<name>_u``, ``<name>_v``), recomputed before each forward. ``dim``: the output dim
    (1 for ConvTranspose, else 0). The parametrization form is
    ``nn.utils.parametrizations.spectral_norm``.

    >>> from ember import nn
    >>> m = nn.utils.spectral_norm(nn.Linear(20, 40))
    >>> m.weight_u.shape, m.weight_orig.shape
    (ember.Size([40]), ember.Size([40, 20]))
    """
    if dim is None:
        dim = default_dim(module)
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module: T_module, name: str = "weight") -> T_module:
    """Undo ``spectral_norm``: ``module.<name>`` is a Parameter again, holding the current
    normalized weight.

    >>> from ember import nn
    >>> m = nn.utils.remove_spectral_norm(nn.utils.spectral_norm(nn.Linear(2, 3)))
    >>> sorted(dict(m.named_parameters()))
    ['bias', 'weight']
    """
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for hooks, cls in ((module._state_dict_hooks, SpectralNormStateDictHook),
                       (module._load_state_dict_pre_hooks, SpectralNormLoadStateDictPreHook)):
        for key, hook in hooks.items():
            if isinstance(hook, cls) and hook.fn.name == name:
                del hooks[key]
                break
    return module
