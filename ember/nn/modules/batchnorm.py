"""PyTorch's module path for the batch norm layers (``torch.nn.modules.batchnorm``); they
live in ``normalization.py`` here, except ``SyncBatchNorm``.

>>> from ember.nn.modules.batchnorm import _BatchNorm, BatchNorm1d
>>> issubclass(BatchNorm1d, _BatchNorm)
True
"""
from ... import distributed as _dist
from ...autograd import grad_mode
from .normalization import (_NormBase, _BatchNorm, BatchNorm1d, BatchNorm2d,  # noqa: F401
                            BatchNorm3d, _LazyNormBase, LazyBatchNorm1d, LazyBatchNorm2d,
                            LazyBatchNorm3d)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d", "SyncBatchNorm"]


class SyncBatchNorm(_BatchNorm):
    """Batch normalization whose training statistics would be reduced over a process group.

    As in PyTorch, without an initialized process group of more than one process (the usual
    CPU case) it is plain batch normalization over any input of 2 or more dims. With one,
    PyTorch requires accelerator input (CPU input raises its ValueError here too); ember does
    not synchronize the statistics and raises NotImplementedError rather than computing
    per-process ones.

    >>> import ember
    >>> with ember.no_grad():
    ...     ember.nn.SyncBatchNorm(2)(ember.tensor([[1.0, 2.0], [3.0, 6.0]]))
    tensor([[-1.0000, -1.0000],
            [ 1.0000,  1.0000]])
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        if bn_training and self.training and _dist.is_available() and _dist.is_initialized():
            if input.device.type not in ("cuda", "hpu", "xpu", "privateuseone"):
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or "
                                 "privateuseone")
            group = self.process_group or _dist.group.WORLD
            if _dist.get_world_size(group) > 1:
                raise NotImplementedError(
                    "SyncBatchNorm: ember does not synchronize batch statistics across "
                    "processes; use BatchNorm (per-process statistics) instead")
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every batch norm layer in it replaced by a ``SyncBatchNorm`` that
        shares its parameters and running statistics (a batch norm given itself is returned
        as a new module).

        >>> import ember
        >>> net = ember.nn.Sequential(ember.nn.Linear(2, 2), ember.nn.BatchNorm1d(2))
        >>> ember.nn.SyncBatchNorm.convert_sync_batchnorm(net)[1]
        SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        """
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(module.num_features, module.eps, module.momentum, module.affine,
                            module.track_running_stats, process_group,
                            bias=module.bias is not None)
            if module.affine:
                with grad_mode.no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return converted
