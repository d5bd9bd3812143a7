"""BatchNorm1d/2d/3d, LayerNorm, GroupNorm, RMSNorm with PyTorch's parameters, buffers, init
and repr. A float16/bfloat16 input with float32 parameters gives an output of the input's dtype
(see ``nn.functional._normalization``)."""
from ... import _creation
from ...autograd import grad_mode
from ...device import check_device
from ...backend import dtypes
from ..parameter import Parameter, UninitializedParameter, UninitializedBuffer
from .. import functional as F
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm", "GroupNorm", "RMSNorm",
           "LocalResponseNorm"]


class _NormBase(Module):
    """Parameters and running-statistics buffers shared by the batch norms."""

    # version 2 added num_batches_tracked: state_dicts without a version (or older) may lack it
    _version = 2

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        check_device(device)  # 'cpu' or 'meta': refuse any other
        kw = {"device": device} if dtype is None else {"dtype": dtype, "device": device}
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(_creation.empty(num_features, **kw))
            if bias:
                self.bias = Parameter(_creation.empty(num_features, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", _creation.zeros(num_features, **kw))
            self.register_buffer("running_var", _creation.ones(num_features, **kw))
            self.register_buffer("num_batches_tracked",
                                 _creation.tensor(0, dtype=_creation_long(), device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats \
                and key not in state_dict:
            state_dict[key] = self.num_batches_tracked if self.num_batches_tracked is not None \
                else _creation.tensor(0, dtype=_creation_long())
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)

    def reset_running_stats(self):
        """Zero the running mean, set the running variance to one, reset the batch count."""
        if self.track_running_stats:
            with grad_mode.no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self):
        """Running statistics reset; weight ones, bias zeros."""
        self.reset_running_stats()
        if self.affine:
            with grad_mode.no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def _check_input_dim(self, input):
        raise NotImplementedError

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


def _creation_long():
    return dtypes.int64


class _BatchNorm(_NormBase):
    def forward(self, input):
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with grad_mode.no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked.item())
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        track = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            bn_training, factor, self.eps)


class BatchNorm1d(_BatchNorm):
    """Batch normalization over (N, C) or (N, C, L) input."""

    def _check_input_dim(self, input):
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalization over (N, C, H, W) input."""

    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalization over (N, C, D, H, W) input.

    >>> import ember
    >>> ember.nn.BatchNorm3d(2)(ember.randn(3, 2, 2, 2, 2)).shape
    ember.Size([3, 2, 2, 2, 2])
    """

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """The lazy batch and instance norms: ``num_features`` is the first input's dim 1."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        kw = {"device": device, "dtype": dtype}
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(**kw)
            if bias:
                self.bias = UninitializedParameter(**kw)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(**kw)
            self.running_var = UninitializedBuffer(**kw)
            self.num_batches_tracked = _creation.tensor(0, dtype=_creation_long(),
                                                        device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """Materialize weight, bias and running statistics of size ``input.shape[1]``."""
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            shape = (self.num_features,)
            if self.affine:
                self.weight.materialize(shape)
                if self.bias is not None:
                    self.bias.materialize(shape)
            if self.track_running_stats:
                self.running_mean.materialize(shape)
                self.running_var.materialize(shape)
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """A BatchNorm1d whose ``num_features`` is its first input's dim 1.

    >>> import ember
    >>> m = ember.nn.LazyBatchNorm1d()
    >>> m(ember.ones(4, 3)).shape, m.running_mean
    (ember.Size([4, 3]), tensor([0.1000, 0.1000, 0.1000]))
    """
    cls_to_become = BatchNorm1d
    _check_input_dim = BatchNorm1d._check_input_dim


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """A BatchNorm2d whose ``num_features`` is its first input's dim 1.

    >>> import ember
    >>> m = ember.nn.LazyBatchNorm2d(affine=False)
    >>> m(ember.ones(2, 3, 2, 2)).shape
    ember.Size([2, 3, 2, 2])
    >>> m
    BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)
    """
    cls_to_become = BatchNorm2d
    _check_input_dim = BatchNorm2d._check_input_dim


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """A BatchNorm3d whose ``num_features`` is its first input's dim 1.

    >>> import ember
    >>> ember.nn.LazyBatchNorm3d()(ember.ones(2, 3, 2, 2, 2)).shape
    ember.Size([2, 3, 2, 2, 2])
    """
    cls_to_become = BatchNorm3d
    _check_input_dim = BatchNorm3d._check_input_dim


class LayerNorm(Module):
    """Layer normalization over the trailing ``normalized_shape`` dims."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        check_device(device)  # 'cpu' or 'meta': refuse any other
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        kw = {"device": device} if dtype is None else {"dtype": dtype, "device": device}
        if elementwise_affine:
            self.weight = Parameter(_creation.ones(*self.normalized_shape, **kw))
            if bias:
                self.bias = Parameter(_creation.zeros(*self.normalized_shape, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """Weight ones, bias zeros."""
        if self.elementwise_affine:
            with grad_mode.no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Group normalization: ``num_channels`` split into ``num_groups`` groups."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None,
                 *, bias=True):
        super().__init__()
        check_device(device)  # 'cpu' or 'meta': refuse any other
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        kw = {"device": device} if dtype is None else {"dtype": dtype, "device": device}
        if affine:
            self.weight = Parameter(_creation.ones(num_channels, **kw))
            if bias:
                self.bias = Parameter(_creation.zeros(num_channels, **kw))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def reset_parameters(self):
        """Weight ones, bias zeros."""
        if self.affine:
            with grad_mode.no_grad():
                self.weight.fill_(1)
                if self.bias is not None:
                    self.bias.zero_()

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalization over the trailing ``normalized_shape`` dims, times a
    learnt ``weight`` (ones at first) when ``elementwise_affine``; ``eps=None`` takes the
    machine epsilon of the dtype computed in (``F.rms_norm``).

    >>> import ember
    >>> m = ember.nn.RMSNorm(2)
    >>> m
    RMSNorm((2,), eps=None, elementwise_affine=True)
    >>> m(ember.tensor([[3.0, -3.0]]))
    tensor([[ 1., -1.]], grad_fn=<MulBackward0>)
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        check_device(device)  # 'cpu' or 'meta': refuse any other
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        kw = {"device": device} if dtype is None else {"dtype": dtype, "device": device}
        if elementwise_affine:
            self.weight = Parameter(_creation.empty(*self.normalized_shape, **kw))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Weight ones."""
        if self.elementwise_affine:
            with grad_mode.no_grad():
                self.weight.fill_(1)

    def forward(self, input):
        return F.rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Divides each value by ``(k + alpha / size * sum of squares over size neighbouring
    channels) ** beta``.

    >>> import ember, ember.nn as nn
    >>> nn.LocalResponseNorm(2)
    LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
