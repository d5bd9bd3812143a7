"""PyTorch's module path for the batch norm layers (``torch.nn.modules.batchnorm``); they
live in ``normalization.py`` here.

>>> from ember.nn.modules.batchnorm import _BatchNorm, BatchNorm1d
>>> issubclass(BatchNorm1d, _BatchNorm)
True
"""
from .normalization import (_NormBase, _BatchNorm, BatchNorm1d, BatchNorm2d,  # noqa: F401
                            BatchNorm3d, _LazyNormBase, LazyBatchNorm1d, LazyBatchNorm2d,
                            LazyBatchNorm3d)

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
           "LazyBatchNorm3d"]
