"""``CosineSimilarity`` and ``PairwiseDistance``: Modules over ``F.cosine_similarity`` and
``F.pairwise_distance``."""
from .module import Module
from .. import functional as F

__all__ = ["CosineSimilarity", "PairwiseDistance"]


class CosineSimilarity(Module):
    """Cosine similarity of ``x1`` and ``x2`` along ``dim``.

    >>> import ember, ember.nn as nn
    >>> nn.CosineSimilarity(dim=0)(ember.tensor([1.0, 0.0]), ember.tensor([0.0, 2.0]))
    tensor(0.)
    """

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dimension.

    >>> import ember, ember.nn as nn
    >>> nn.PairwiseDistance(p=1.0, eps=0.0)(ember.tensor([[1.0, 2.0]]), ember.tensor([[0.0, 0.0]]))
    tensor([3.])
    """

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
