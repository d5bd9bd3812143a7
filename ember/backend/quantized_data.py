"""What a quantized tensor holds where a dense one holds its array: a shape and the NumPy
dtype of its integer representation, refusing every other use with PyTorch's error for an
op that has no quantized kernel (the integers themselves live beside it, see
``ember._quantized.tensor``).

>>> import numpy
>>> d = QuantizedData((2, 3), numpy.dtype("uint8"))
>>> d.shape, d.ndim, d.size
((2, 3), 2, 6)
>>> d.sum()
Traceback (most recent call last):
...
NotImplementedError: Could not run 'aten::sum' with arguments from the 'QuantizedCPU' \
backend. This could be because the operator doesn't exist for this backend, or was omitted \
during the selective/custom build process (if using custom build).
"""
from .placeholder_data import PlaceholderData


def no_quantized_kernel(name):
    """PyTorch's error for an op that has no kernel for quantized tensors."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'QuantizedCPU' backend. This "
        "could be because the operator doesn't exist for this backend, or was omitted during "
        "the selective/custom build process (if using custom build).")


class QuantizedData(PlaceholderData):
    """The ``_data`` of a quantized tensor: metadata only (see the module)."""
    __slots__ = ()
    no_kernel = staticmethod(no_quantized_kernel)

    def __array__(self, *args, **kwargs):
        raise no_quantized_kernel("numpy")
