"""Helpers shared by the optimizers (state tensors, scalar steps)."""
from .._creation import tensor, zeros_like, full_like  # noqa: F401
from .._functions import maximum  # noqa: F401
from ..backend.dtypes import get_default_dtype, float64, float32


def new_step():
    """The per-parameter step counter: a 0-dim float tensor, as PyTorch stores it."""
    dt = float64 if get_default_dtype() == float64 else float32
    return tensor(0.0, dtype=dt)


def check_positive(name, value, label=None):
    if not 0.0 <= value:
        raise ValueError(f"Invalid {label or name} value: {value}")


def _lr_check(lr):
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {lr}")


def _eps_check(eps):
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
