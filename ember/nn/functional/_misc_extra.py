"""``local_response_norm``, ``channel_shuffle`` and ``gumbel_softmax``, composed of ember ops
as in ``torch.nn.functional``."""
import operator
import warnings

from ... import _creation
from ..._ops.nn_ops import softmax as _softmax
from ...autograd.grad_mode import no_grad
from ._misc import pad as _pad
from ._pooling import avg_pool2d as _avg_pool2d, avg_pool3d as _avg_pool3d

__all__ = ["local_response_norm", "channel_shuffle", "gumbel_softmax"]


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """``x / (k + alpha / size * sum of x**2 over ``size`` neighbouring channels) ** beta``,
    the channels at dim 1 (zero-padded at both ends).

    >>> import ember, ember.nn.functional as F
    >>> F.local_response_norm(ember.tensor([[[1.0], [2.0]]]), 2, alpha=1.0, beta=1.0)
    tensor([[[0.6667],
             [0.5714]]])
    """
    dim = input.dim()
    if dim < 3:
        # PyTorch's message has the indentation of its source inside it
        raise ValueError(f"Expected 3D or higher dimensionality{' ' * 26}input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input.mul(input)
    before, after = size // 2, (size - 1) // 2
    if dim == 3:
        div = _pad(sq.unsqueeze(1), (0, 0, before, after))
        div = _avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        shape = input.shape
        div = _pad(sq.view(shape[0], 1, shape[1], shape[2], -1), (0, 0, 0, 0, before, after))
        div = _avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).view(shape)
    return input / div.mul(alpha).add(k).pow(beta)


def channel_shuffle(input, groups):
    """Split the channels (dim 1) into ``groups`` and interleave them: channel ``g * n + i``
    moves to ``i * groups + g``.

    >>> import ember, ember.nn.functional as F
    >>> F.channel_shuffle(ember.arange(6.0).view(1, 6, 1), 2).flatten()
    tensor([0., 3., 1., 4., 2., 5.])
    """
    if isinstance(groups, bool) or not hasattr(groups, "__index__"):
        raise TypeError("channel_shuffle(): argument 'groups' (position 2) must be int, not "
                        f"{type(groups).__name__}")
    groups = operator.index(groups)
    if input.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes [{', '.join(map(str, input.shape))}]")
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{groups}")
    shape = tuple(input.shape)
    c = shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")
    grouped = input.reshape(shape[:1] + (groups, c // groups) + shape[2:])
    return grouped.transpose(1, 2).reshape(shape)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution, ``softmax((logits + g) / tau)`` with
    ``g`` standard Gumbel noise; ``hard`` returns its one-hot argmax whose gradient is the soft
    sample's (straight-through).

    >>> import ember, ember.nn.functional as F
    >>> y = F.gumbel_softmax(ember.zeros(2, 3), hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    with no_grad():
        # -log(Exp(1)) is standard Gumbel; Exp(1) as -log(1 - U), U uniform in [0, 1)
        noise = -(-(-_creation.empty_like(logits).uniform_()).log1p()).log()
    y_soft = _softmax((logits + noise) / tau, dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft
