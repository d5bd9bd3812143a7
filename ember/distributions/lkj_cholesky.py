"""``LKJCholesky(dim, concentration=1.0)``: the LKJ distribution over correlation matrices,
on their lower Cholesky factors (Lewandowski, Kurowicka and Joe, 2009); sampled by the onion
method.

>>> import ember
>>> from ember.distributions import LKJCholesky
>>> d = LKJCholesky(3, ember.tensor(2.0))
>>> d.log_prob(ember.eye(3))
tensor(-0.6155)
>>> d.sample((4,)).shape
ember.Size([4, 3, 3])
"""
from __future__ import annotations

import math

from .._creation import arange, beside, randn
from .._functions import cat, diag_embed, lgamma, mvlgamma
from .._tensor import Size
from ..autograd.grad_mode import no_grad
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all, finfo


class LKJCholesky(Distribution):
    """``dim`` x ``dim`` factors (``dim`` >= 2) with density proportional to
    ``det(L L^T)^(concentration - 1)``; concentration 1 is uniform over correlation
    matrices."""
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        self.concentration, = broadcast_all(concentration)
        marginal = self.concentration + 0.5 * (self.dim - 2)
        offset = beside(arange(self.dim - 1, dtype=self.concentration.dtype),
                        self.concentration)
        offset = cat([offset.new_zeros((1,)), offset])
        # the onion method: the squared norm of row i's off-diagonal part is
        # Beta(i / 2, concentration + (dim - 1 - i) / 2). PyTorch 2.13 passes offset + 0.5
        # (not offset / 2 + 0.5) as the first parameter, which biases its draws for dim >= 3
        # (correlations more spread than LKJ's); these draws follow LKJ (and log_prob).
        self._beta = Beta(0.5 * offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new.concentration = self.concentration.expand(batch_shape)
        new._beta = self._beta.expand(tuple(batch_shape) + (self.dim,))
        super(LKJCholesky, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=Size()):
        with no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            shape = self._extended_shape(sample_shape)
            u = beside(randn(shape, dtype=y.dtype), y).tril(-1)
            # rows uniform on the sphere (the first row has no off-diagonal part: 0/0 there,
            # replaced by zeros)
            sphere = u / u.norm(dim=-1, keepdim=True)
            first_row = beside(arange(self.dim), y).view(-1, 1) == 0
            sphere = sphere.masked_fill(first_row, 0.0)
            w = y.sqrt() * sphere
            tiny = float(finfo(w.dtype).tiny)
            diag = (1 - w.pow(2).sum(-1)).clamp(min=tiny).sqrt()
            return w + diag_embed(diag)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = beside(arange(2, self.dim + 1), self.concentration)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = (0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1)
                      - lgamma(alpha) * dm1)
        return unnormalized - normalizer


__all__ = ["LKJCholesky"]
