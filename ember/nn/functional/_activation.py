"""Activation functions: ``F.relu``, ``F.gelu``, ``F.softplus``, ... (PyTorch's signatures)."""
import warnings

from ... import _functions as _fn
from ..._ops import activation_ops as _act
from ...backend import dtypes as _dtypes
from ..._ops.nn_ops import softmax as _softmax, log_softmax as _log_softmax
from ..._ops.api_surface import prelu as _prelu


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


# ---- composite activations: made of ember ops, so autograd needs nothing more ----

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _composite(input, inplace, fn, *args):
    if inplace:
        return input._inplace(fn, *args)
    return fn(input, *args)


def _selu(x):
    return _act.elu(x, _SELU_ALPHA) * _SELU_SCALE


def selu(input, inplace=False):
    """``scale * elu(input, alpha)`` with the self-normalizing constants of Klambauer et al.

    >>> import ember, ember.nn.functional as F
    >>> F.selu(ember.tensor([0.0, 1.0]))
    tensor([0.0000, 1.0507])
    """
    return _composite(input, inplace, _selu)


def selu_(input):
    """In-place ``selu``."""
    return selu(input, inplace=True)


def _celu(x, alpha):
    return _act.elu(x * (1.0 / alpha), 1.0) * alpha


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import ember, ember.nn.functional as F
    >>> F.celu(ember.tensor([-1.0, 2.0]), alpha=2.0)
    tensor([-0.7869,  2.0000])
    """
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _composite(input, inplace, _celu, alpha)


def celu_(input, alpha=1.0):
    """In-place ``celu``."""
    return celu(input, alpha, inplace=True)


def _hardsigmoid(x):
    return _act.hardtanh(x + 3.0, 0.0, 6.0) * (1.0 / 6.0)


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``: 0 below -3, 1 above 3, linear between.

    >>> import ember, ember.nn.functional as F
    >>> F.hardsigmoid(ember.tensor([-4.0, 0.0, 1.5]))
    tensor([0.0000, 0.5000, 0.7500])
    """
    return _composite(input, inplace, _hardsigmoid)


def _hardswish(x):
    return x * _hardsigmoid(x)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6`` (MobileNetV3).

    >>> import ember, ember.nn.functional as F
    >>> F.hardswish(ember.tensor([-4.0, 1.0, 4.0]))
    tensor([-0.0000, 0.6667, 4.0000])
    """
    return _composite(input, inplace, _hardswish)


def logsigmoid(input):
    """``log(sigmoid(x))``, computed as ``min(x, 0) - log1p(exp(-|x|))`` so it stays finite.

    >>> import ember, ember.nn.functional as F
    >>> F.logsigmoid(ember.tensor([0.0, -200.0]))
    tensor([  -0.6931, -200.0000])
    """
    return input.clamp(max=0.0) - _fn.log1p(_fn.exp(-input.abs()))


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-input, dim)``.

    >>> import ember, ember.nn.functional as F
    >>> F.softmin(ember.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        _implicit_dim_warning("softmin", _stacklevel)
    return _softmax(-input, dim, dtype)


def softsign(input):
    """``x / (1 + |x|)``.

    >>> import ember, ember.nn.functional as F
    >>> F.softsign(ember.tensor([1.0, -3.0]))
    tensor([ 0.5000, -0.7500])
    """
    return input / (input.abs() + 1.0)


def tanhshrink(input):
    """``x - tanh(x)``.

    >>> import ember, ember.nn.functional as F
    >>> F.tanhshrink(ember.tensor([0.0]))
    tensor([0.])
    """
    return input - _fn.tanh(input)


def _threshold(x, threshold, value):
    # replaced where ``x <= threshold``: NaN compares false and stays NaN, as in PyTorch
    _dtypes.refuse_limited_unsigned(x._data.dtype, "threshold_cpu")
    return _fn.where(x <= threshold, x.new_full((), value), x)


def threshold(input, threshold, value, inplace=False):
    """``input`` where it exceeds ``threshold``, else ``value``.

    >>> import ember, ember.nn.functional as F
    >>> F.threshold(ember.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _composite(input, inplace, _threshold, threshold, value)


def threshold_(input, threshold, value):
    """In-place ``threshold``."""
    return _composite(input, True, _threshold, threshold, value)


def glu(input, dim=-1):
    """Gated linear unit: halves ``a, b`` of ``input`` along ``dim``, ``a * sigmoid(b)``.

    >>> import ember, ember.nn.functional as F
    >>> F.glu(ember.tensor([2.0, 0.0]))
    tensor([1.])
    """
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    size = input.size(dim)
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.dim()} is size {size}")
    a, b = input.chunk(2, dim)
    return a * _fn.sigmoid(b)


def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0.

    >>> import ember, ember.nn.functional as F
    >>> F.hardshrink(ember.tensor([0.2, -1.0]))
    tensor([ 0., -1.])
    """
    return input * (input.abs() > lambd).to(input.dtype)


def _float_max(dtype):
    return {"float16": "65504", "float32": "3.40282e+38",
            "float64": "1.79769e+308"}.get(dtype.name, "inf")


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, 0 between.

    >>> import ember, ember.nn.functional as F
    >>> F.softshrink(ember.tensor([0.2, -1.0, 2.0]))
    tensor([ 0.0000, -0.5000,  1.5000])
    """
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {_float_max(input.dtype)}] for input "
                           f"dtype {_LEGACY_NAMES.get(input.dtype.name, input.dtype.name)}, "
                           f"but found {lambd}")
    return input - input.clamp(-lambd, lambd)


_LEGACY_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double"}


def prelu(input, weight):
    """``x`` where positive, else ``weight * x``; ``weight`` has one slope or one per
    channel (dimension 1).

    >>> import ember, ember.nn.functional as F
    >>> F.prelu(ember.tensor([[-2.0, 3.0]]), ember.tensor([0.25]))
    tensor([[-0.5000,  3.0000]])
    """
    return _prelu(input, weight)  # Tensor.prelu's: PyTorch's checks, one slope or per channel


def _rrelu(x, lower, upper, training):
    if not training:
        return _act.leaky_relu(x, (lower + upper) / 2.0)
    slopes = x.detach().new_empty(x.shape).uniform_(lower, upper)
    return _fn.where(x >= 0, x, x * slopes)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: in training each negative element gets a slope drawn from
    U(lower, upper) (ember's generator); otherwise the slope is ``(lower + upper) / 2``.

    >>> import ember, ember.nn.functional as F
    >>> F.rrelu(ember.tensor([-1.0, 2.0]), 0.1, 0.3)
    tensor([-0.2000,  2.0000])
    """
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    return _composite(input, inplace, _rrelu, lower, upper, training)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place ``rrelu``."""
    return rrelu(input, lower, upper, training, inplace=True)


__all__ = ["relu", "relu_", "relu6", "hardtanh", "hardtanh_", "leaky_relu", "leaky_relu_",
           "elu", "elu_", "gelu", "silu", "mish", "softplus", "sigmoid", "tanh", "softmax",
           "log_softmax", "selu", "selu_", "celu", "celu_", "hardsigmoid", "hardswish",
           "logsigmoid", "softmin", "softsign", "tanhshrink", "threshold", "threshold_", "glu",
           "hardshrink", "softshrink", "prelu", "rrelu", "rrelu_"]
