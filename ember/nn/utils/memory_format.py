"""Converting convolution weights to a memory format, as PyTorch's ``nn.utils`` does.

The weight is copied into the layout (``Tensor.clone(memory_format=...)``): ``channels_last``
for 4-D weights, ``channels_last_3d`` for 5-D ones (another rank raises PyTorch's error).
"""
__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]


def _is_one_of(module, kinds):
    """isinstance by class name in ``nn.modules.conv`` (nn.modules imports nn.utils)."""
    return any(c.__name__ in kinds and c.__module__ == "ember.nn.modules.conv"
               for c in type(module).__mro__)


def _convert(module, memory_format, kinds):
    if _is_one_of(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Store the weights of every Conv2d / ConvTranspose2d in ``module`` (recursively) in
    ``memory_format``; returns ``module``.

    >>> import ember
    >>> m = ember.nn.Sequential(ember.nn.Conv2d(1, 2, 3))
    >>> ember.nn.utils.convert_conv2d_weight_memory_format(m, ember.contiguous_format) is m
    True
    """
    return _convert(module, memory_format, ("Conv2d", "ConvTranspose2d"))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Store the weights of every Conv3d / ConvTranspose3d in ``module`` (recursively) in
    ``memory_format``; returns ``module``.

    >>> import ember
    >>> m = ember.nn.Conv3d(1, 2, 3)
    >>> ember.nn.utils.convert_conv3d_weight_memory_format(m, ember.contiguous_format) is m
    True
    """
    return _convert(module, memory_format, ("Conv3d", "ConvTranspose3d"))
