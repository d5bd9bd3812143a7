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
import math


def no_quantized_kernel(name):
    """PyTorch's error for an op that has no kernel for quantized tensors."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'QuantizedCPU' backend. This "
        "could be because the operator doesn't exist for this backend, or was omitted during "
        "the selective/custom build process (if using custom build).")


class QuantizedData:
    """The ``_data`` of a quantized tensor: metadata only (see the module)."""
    __slots__ = ("shape", "dtype")
    base = None

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def itemsize(self):
        return self.dtype.itemsize

    def __getattr__(self, name):
        if name.startswith("__"):  # protocols NumPy probes for (it then calls __array__)
            raise AttributeError(name)
        raise no_quantized_kernel(name.strip("_"))

    def __array__(self, *args, **kwargs):
        raise no_quantized_kernel("numpy")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise no_quantized_kernel(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        raise no_quantized_kernel(func.__name__)

    def _refuse(name):
        def refuse(self, *args, **kwargs):
            raise no_quantized_kernel(name)
        return refuse

    __getitem__, __setitem__ = _refuse("index"), _refuse("index_put_")
    __iter__, __len__, __bool__ = _refuse("unbind"), _refuse("size"), _refuse("is_nonzero")
    __add__ = __radd__ = __iadd__ = _refuse("add")
    __mul__ = __rmul__ = __imul__ = _refuse("mul")
    del _refuse
