"""What a sparse tensor holds where a dense one holds its array: a shape and a dtype.

A sparse COO tensor (``ember._sparse``) keeps its data in two dense tensors, its indices
and its values; the ``_data`` slot every tensor has gets a ``SparseCOOData``, which
answers the metadata an array answers (``shape``, ``dtype``, ``ndim``, ``size``) and
refuses everything else with PyTorch's error for an op that has no sparse kernel. Calls
on sparse tensors reach their own code through ``__torch_function__``; this object is
what internal code that reads ``_data`` directly meets (the autograd engine checks for
it by type).

>>> import numpy
>>> d = SparseCOOData((2, 3), numpy.dtype("float32"))
>>> d.shape, d.ndim, d.size
((2, 3), 2, 6)
>>> d.sum()
Traceback (most recent call last):
...
NotImplementedError: Could not run 'aten::sum' with arguments from the 'SparseCPU' backend. \
This could be because the operator doesn't exist for this backend.
"""
import math


def no_sparse_kernel(name, backend="SparseCPU"):
    """PyTorch's error for an op that has no kernel for sparse (COO) tensors."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This "
        f"could be because the operator doesn't exist for this backend.")


class SparseCOOData:
    """The ``_data`` of a sparse COO tensor: metadata only (see the module)."""
    __slots__ = ("shape", "dtype")
    base = None  # never a view of another array

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
        raise no_sparse_kernel(name.strip("_"))

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise no_sparse_kernel(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        raise no_sparse_kernel(func.__name__)

    def _refuse(name):
        def refuse(self, *args, **kwargs):
            raise no_sparse_kernel(name)
        return refuse

    __getitem__, __setitem__ = _refuse("index"), _refuse("index_put_")
    __iter__, __len__, __bool__ = _refuse("unbind"), _refuse("size"), _refuse("is_nonzero")
    __add__ = __radd__ = __iadd__ = _refuse("add")
    __mul__ = __rmul__ = __imul__ = _refuse("mul")
    del _refuse
