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
from .placeholder_data import PlaceholderData


def no_sparse_kernel(name, backend="SparseCPU"):
    """PyTorch's error for an op that has no kernel for sparse (COO) tensors."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the '{backend}' backend. This "
        f"could be because the operator doesn't exist for this backend.")


class SparseCOOData(PlaceholderData):
    """The ``_data`` of a sparse COO tensor: metadata only (see the module)."""
    __slots__ = ()
    no_kernel = staticmethod(no_sparse_kernel)

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")
