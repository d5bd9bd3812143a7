"""InstanceNorm1d/2d/3d: per-sample, per-channel normalization (PyTorch's defaults: no affine,
no running statistics)."""
import warnings

from .. import functional as F
from .normalization import _NormBase, _LazyNormBase

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class _InstanceNorm(_NormBase):
    _nd = 1  # spatial dims; an input of _nd + 1 dims has no batch dim

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input):
        lo, hi = self._nd + 1, self._nd + 2
        if input.dim() not in (lo, hi):
            raise ValueError(f"expected {lo}D or {hi}D input (got {input.dim()}D input)")

    def _normalized(self, input):
        return F.instance_norm(input, self.running_mean, self.running_var, self.weight,
                               self.bias, self.training or not self.track_running_stats,
                               0.0 if self.momentum is None else self.momentum, self.eps)

    def forward(self, input):
        self._check_input_dim(input)
        channel_dim = input.dim() - (self._nd + 1)
        if input.shape[channel_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={channel_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[channel_dim]}.")
            warnings.warn(f"input's size at dim={channel_dim} does not match num_features. You "
                          f"can silence this warning by not passing in num_features, which is "
                          f"not used because affine=False", stacklevel=2)
        if input.dim() == self._nd + 1:  # unbatched
            return self._normalized(input.unsqueeze(0)).squeeze(0)
        return self._normalized(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization over (N, C, L) or (C, L) input.

    >>> import ember
    >>> ember.nn.InstanceNorm1d(1)(ember.tensor([[[1., 3.]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    _nd = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization over (N, C, H, W) or (C, H, W) input.

    >>> import ember
    >>> ember.nn.InstanceNorm2d(2, affine=True)(ember.randn(1, 2, 3, 3)).shape
    ember.Size([1, 2, 3, 3])
    """
    _nd = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization over (N, C, D, H, W) or (C, D, H, W) input.

    >>> import ember
    >>> ember.nn.InstanceNorm3d(2)(ember.randn(2, 2, 2, 2)).shape
    ember.Size([2, 2, 2, 2])
    """
    _nd = 3


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm1d whose ``num_features`` is its first input's dim 1 (PyTorch's
    defaults for the lazy norms: affine, with running statistics).

    >>> import ember
    >>> m = ember.nn.LazyInstanceNorm1d()
    >>> m(ember.tensor([[[1., 3.]]])).detach()
    tensor([[[-1.0000,  1.0000]]])
    >>> m
    InstanceNorm1d(1, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """
    cls_to_become = InstanceNorm1d
    _nd = 1


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm2d whose ``num_features`` is its first input's dim 1.

    >>> import ember
    >>> ember.nn.LazyInstanceNorm2d(affine=False)(ember.randn(2, 3, 4, 4)).shape
    ember.Size([2, 3, 4, 4])
    """
    cls_to_become = InstanceNorm2d
    _nd = 2


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An InstanceNorm3d whose ``num_features`` is its first input's dim 1.

    >>> import ember
    >>> ember.nn.LazyInstanceNorm3d()(ember.randn(2, 3, 2, 2, 2)).shape
    ember.Size([2, 3, 2, 2, 2])
    """
    cls_to_become = InstanceNorm3d
    _nd = 3
