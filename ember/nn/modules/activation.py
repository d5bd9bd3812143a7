"""Activation layers: thin Modules over ``ember.nn.functional``."""
from ... import _creation
from ...autograd.grad_mode import no_grad
from ..parameter import Parameter
from .module import Module
from .transformer import MultiheadAttention  # noqa: F401  (PyTorch defines it in activation)
from .. import functional as F


def _inplace_str(inplace):
    return "inplace=True" if inplace else ""


class ReLU(Module):
    """``max(x, 0)``; ``inplace=True`` overwrites the input."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class Hardtanh(Module):
    """Clamp to ``[min_val, max_val]``."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__()
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"min_val={self.min_val}, max_val={self.max_val}{inplace}"


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class LeakyReLU(Module):
    """``x if x > 0 else negative_slope * x``."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace}"


class ELU(Module):
    """``x if x > 0 else alpha * (exp(x) - 1)``."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class GELU(Module):
    """Gaussian error linear unit; ``approximate='tanh'`` for the tanh form."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class Mish(Module):
    """``x * tanh(softplus(x))``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_str(self.inplace)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    """Hyperbolic tangent."""

    def forward(self, input):
        return F.tanh(input)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``."""

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Softmax(Module):
    """Softmax along ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels (dim -3) at every location of (N, C, H, W) or (C, H, W)
    input.

    >>> import ember, ember.nn as nn
    >>> nn.Softmax2d()(ember.zeros(2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)


class LogSoftmax(Softmax):
    """Log of the softmax along ``dim``, computed stably."""

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)


class _InplaceActivation(Module):
    """An activation with only an ``inplace`` flag; subclasses name their function."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return _inplace_str(self.inplace)


class SELU(_InplaceActivation):
    """``scale * elu(x, alpha)`` with the self-normalizing constants.

    >>> import ember, ember.nn as nn
    >>> nn.SELU()(ember.tensor([1.0]))
    tensor([1.0507])
    """

    def forward(self, input):
        return F.selu(input, self.inplace)


class Hardswish(_InplaceActivation):
    """``x * relu6(x + 3) / 6``.

    >>> import ember, ember.nn as nn
    >>> nn.Hardswish()(ember.tensor([1.0]))
    tensor([0.6667])
    """

    def forward(self, input):
        return F.hardswish(input, self.inplace)

    def extra_repr(self):
        return ""


class Hardsigmoid(_InplaceActivation):
    """``relu6(x + 3) / 6``.

    >>> import ember, ember.nn as nn
    >>> nn.Hardsigmoid()(ember.tensor([0.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)

    def extra_repr(self):
        return ""


class LogSigmoid(Module):
    """``log(sigmoid(x))``, computed stably.

    >>> import ember, ember.nn as nn
    >>> nn.LogSigmoid()(ember.tensor([0.0]))
    tensor([-0.6931])
    """

    def forward(self, input):
        return F.logsigmoid(input)


class Softmin(Module):
    """Softmax of ``-x`` along ``dim``.

    >>> import ember, ember.nn as nn
    >>> nn.Softmin(dim=0)(ember.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    >>> import ember, ember.nn as nn
    >>> nn.CELU(alpha=2.0)(ember.tensor([3.0]))
    tensor([3.])
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace}"


class Softsign(Module):
    """``x / (1 + |x|)``.

    >>> import ember, ember.nn as nn
    >>> nn.Softsign()(ember.tensor([1.0]))
    tensor([0.5000])
    """

    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    >>> import ember, ember.nn as nn
    >>> nn.Tanhshrink()(ember.tensor([0.0]))
    tensor([0.])
    """

    def forward(self, input):
        return F.tanhshrink(input)


class Threshold(Module):
    """``x`` where it exceeds ``threshold``, else ``value``.

    >>> import ember, ember.nn as nn
    >>> nn.Threshold(0.5, 9.0)(ember.tensor([0.1, 1.0]))
    tensor([9., 1.])
    """

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace}"


class GLU(Module):
    """Gated linear unit along ``dim``: ``a * sigmoid(b)`` for the halves ``a, b``.

    >>> import ember, ember.nn as nn
    >>> nn.GLU()(ember.tensor([2.0, 0.0]))
    tensor([1.])
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0.

    >>> import ember, ember.nn as nn
    >>> nn.Hardshrink()(ember.tensor([0.2, 1.0]))
    tensor([0., 1.])
    """

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """Shrink towards 0 by ``lambd``, 0 inside ``[-lambd, lambd]``.

    >>> import ember, ember.nn as nn
    >>> nn.Softshrink()(ember.tensor([0.2, 1.0]))
    tensor([0.0000, 0.5000])
    """

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class PReLU(Module):
    """Leaky ReLU whose negative slope is learnt: one (``num_parameters=1``) or one per
    channel, all starting at ``init``.

    >>> import ember, ember.nn as nn
    >>> nn.PReLU()(ember.tensor([-2.0, 1.0])).tolist()
    [-0.5, 1.0]
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, dtype=dtype, device=device))
        self.reset_parameters()

    def reset_parameters(self):
        """Every slope back to ``init``."""
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) in training, their mean in
    evaluation.

    >>> import ember, ember.nn as nn
    >>> nn.RReLU(0.1, 0.3).eval()(ember.tensor([-1.0]))
    tensor([-0.2000])
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


__all__ = ["ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
           "Hardtanh", "Softplus", "Softmax", "LogSoftmax", "SELU", "Hardswish", "Hardsigmoid",
           "LogSigmoid", "Softmin", "CELU", "Softsign", "Tanhshrink", "Threshold", "GLU",
           "Hardshrink", "Softshrink", "PReLU", "RReLU", "Softmax2d"]
