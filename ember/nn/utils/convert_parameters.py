"""Flatten parameters into one vector and back."""
from ..._tensor import Tensor
from ... import _functions as _fn
from ...autograd.grad_mode import no_grad


def parameters_to_vector(parameters):
    """Concatenate the flattened ``parameters`` into one 1-D tensor."""
    return _fn.cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D ``vec`` into ``parameters``."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__module__}."
                        f"{type(vec).__qualname__}" if type(vec).__module__ != "builtins"
                        else f"expected torch.Tensor, but got: {type(vec).__qualname__}")
    pointer = 0
    with no_grad():
        for param in parameters:
            n = param.numel()
            param.copy_(vec[pointer:pointer + n].view_as(param))
            pointer += n


__all__ = ["parameters_to_vector", "vector_to_parameters"]
