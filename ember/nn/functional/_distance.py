"""Distances and similarities: ``F.cosine_similarity``, ``F.pairwise_distance``, ``F.pdist``,
composed of ember ops (their gradients come from autograd)."""
from ... import _creation, _functions as _fn

__all__ = ["cosine_similarity", "pairwise_distance", "pdist"]

_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                  "donot_use_mm_for_euclid_dist")
_LEGACY_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char",
                 "uint8": "Byte", "bool": "Bool"}


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``x1 . x2 / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim`` of the broadcast
    shape. As in PyTorch each norm is clamped on its own, and the clamp is invisible to
    autograd: the gradient flows through the unclamped norm.

    >>> import ember, ember.nn.functional as F
    >>> F.cosine_similarity(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 1.0]]))
    tensor([0.7071])
    """
    x1, x2 = _broadcast_pair(x1, x2)
    n1 = _clamped_norm(x1, dim, eps)
    n2 = _clamped_norm(x2, dim, eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def _broadcast_pair(a, b):
    """``a`` and ``b`` expanded to their common shape (PyTorch's message when there is none)."""
    if tuple(a.shape) == tuple(b.shape):
        return a, b
    ndim = max(a.dim(), b.dim())
    sa = (1,) * (ndim - a.dim()) + tuple(a.shape)
    sb = (1,) * (ndim - b.dim()) + tuple(b.shape)
    shape = []
    for i, (m, n) in enumerate(zip(sa, sb)):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(f"The size of tensor a ({m}) must match the size of tensor b "
                               f"({n}) at non-singleton dimension {i}")
        shape.append(n if m == 1 else m)
    return a.expand(*shape), b.expand(*shape)


def _clamped_norm(x, dim, eps):
    norm = _fn.norm(x, 2, dim, keepdim=True)
    return norm + (norm.detach().clamp_min(eps) - norm.detach())


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` along the last dimension.

    >>> import ember, ember.nn.functional as F
    >>> F.pairwise_distance(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0]]), eps=0.0)
    tensor([5.])
    """
    last = max(x1.dim(), x2.dim()) - 1
    diff = x1 - x2 + eps
    if last < 0:  # two scalars: the distance is |x1 - x2 + eps|
        return diff.abs()
    return _fn.norm(diff, p, last, keepdim=keepdim)


def pdist(input, p=2):
    """The ``p``-norm distances between every pair of rows ``i < j`` of a 2-D ``input``,
    in row-major order of the pairs: ``N * (N - 1) / 2`` values.

    >>> import ember, ember.nn.functional as F
    >>> F.pdist(ember.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.size(0)
    first = [i for i in range(n) for _ in range(i + 1, n)]
    second = [j for i in range(n) for j in range(i + 1, n)]
    if not first:
        return input.new_zeros(0)
    rows_i = input.index_select(0, _creation.beside(_creation.tensor(first), input))
    rows_j = input.index_select(0, _creation.beside(_creation.tensor(second), input))
    return _fn.norm(rows_i - rows_j, p, 1)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """``p``-norm distances between each row of ``x1`` (``(*, P, M)``) and each row of
    ``x2`` (``(*, R, M)``): shape ``(*, P, R)``, batch dimensions broadcast (``torch.cdist``).
    Every ``compute_mode`` computes the differences directly.

    >>> import ember
    >>> ember.cdist(ember.tensor([[0.0, 0.0]]), ember.tensor([[3.0, 4.0], [0.0, 1.0]]))
    tensor([[5., 1.]])
    """
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.dim()}D")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_LEGACY_NAMES.get(x.dtype.name, x.dtype.scalar_name)}")
    if x1.size(-1) != x2.size(-1):
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: "
                           f"{x1.size(-1)} X2: {x2.size(-1)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (*, P, R, M)
    if p == 0:  # the count of differing coordinates: a zero (not a missing) gradient
        return (diff != 0).to(diff.dtype).sum(-1) + (diff * 0).sum(-1)
    return _fn.norm(diff, p, -1)
