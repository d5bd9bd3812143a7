"""Activation functions: ``F.relu``, ``F.gelu``, ``F.softplus``, ... (PyTorch's signatures)."""
import warnings

from ... import _functions as _fn
from ..._ops import activation_ops as _act
from ..._ops.nn_ops import softmax as _softmax, log_softmax as _log_softmax


def _maybe_inplace(x, inplace, op, *args):
    if inplace:
        return x._inplace(op, *args)
    return op(x, *args)


def relu(input, inplace=False):
    """``max(input, 0)`` element-wise."""
    return input.relu_() if inplace else _fn.relu(input)


def relu_(input):
    """In-place ``relu``."""
    return input.relu_()


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """Clamp to ``[min_val, max_val]``; zero gradient outside the open interval."""
    return _maybe_inplace(input, inplace, _act.hardtanh, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place ``hardtanh``."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """``min(max(input, 0), 6)``."""
    return hardtanh(input, 0.0, 6.0, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``input if input > 0 else negative_slope * input``."""
    return _maybe_inplace(input, inplace, _act.leaky_relu, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """In-place ``leaky_relu``."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """``input if input > 0 else alpha * (exp(input) - 1)``."""
    return _maybe_inplace(input, inplace, _act.elu, alpha)


def elu_(input, alpha=1.0):
    """In-place ``elu``."""
    return elu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """Gaussian error linear unit, exact (``'none'``) or with the tanh approximation."""
    return _act.gelu(input, approximate)


def silu(input, inplace=False):
    """``input * sigmoid(input)``."""
    return _maybe_inplace(input, inplace, _act.silu)


def mish(input, inplace=False):
    """``input * tanh(softplus(input))``."""
    return _maybe_inplace(input, inplace, _act.mish)


def softplus(input, beta=1.0, threshold=20.0):
    """``log(1 + exp(beta * input)) / beta``; linear where ``beta * input > threshold``."""
    return _act.softplus(input, beta, threshold)


def sigmoid(input):
    """``1 / (1 + exp(-input))``."""
    return _fn.sigmoid(input)


def tanh(input):
    """Hyperbolic tangent."""
    return _fn.tanh(input)


def _implicit_dim_warning(name, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", stacklevel=stacklevel)


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(input) / sum(exp(input), dim)``, computed stably."""
    if dim is None:
        _implicit_dim_warning("softmax", _stacklevel)
    return _softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``log(softmax(input, dim))``, computed stably."""
    if dim is None:
        _implicit_dim_warning("log_softmax", _stacklevel)
    return _log_softmax(input, dim, dtype)


__all__ = ["relu", "relu_", "relu6", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_",
           "elu", "elu_", "gelu", "silu", "mish", "softplus", "sigmoid", "tanh", "softmax",
           "log_softmax"]
