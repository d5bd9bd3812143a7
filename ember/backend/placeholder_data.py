"""The base of what a tensor kind without one dense array keeps in its ``_data`` slot.

Sparse, compressed and quantized tensors hold their contents in ordinary dense tensors
beside the slot; the slot gets a ``PlaceholderData``, which answers the metadata an array
answers (``shape``, ``dtype``, ``ndim``, ``size``, ``itemsize``) and refuses everything
else -- attributes, NumPy functions and ufuncs, indexing, arithmetic -- with the error of
its kind's ``no_kernel(name)`` (PyTorch's "Could not run 'aten::<name>' ... backend").

>>> import numpy
>>> from ember.backend.sparse_data import SparseCOOData
>>> d = SparseCOOData((2, 3), numpy.dtype("float32"))
>>> d.shape, d.ndim, d.size
((2, 3), 2, 6)
"""
import math


class PlaceholderData:
    """Metadata only; a subclass names its error: ``no_kernel = staticmethod(fn)``, ``fn(name)``
    returning the exception for an op ``name`` without a kernel of its kind."""
    __slots__ = ("shape", "dtype")
    base = None  # never a view of another array

    @staticmethod
    def no_kernel(name):
        return NotImplementedError(f"no kernel for {name}")

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
        raise self.no_kernel(name.strip("_"))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise self.no_kernel(ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        raise self.no_kernel(func.__name__)

    def _refuse(name):
        def refuse(self, *args, **kwargs):
            raise self.no_kernel(name)
        return refuse

    __getitem__, __setitem__ = _refuse("index"), _refuse("index_put_")
    __iter__, __len__, __bool__ = _refuse("unbind"), _refuse("size"), _refuse("is_nonzero")
    __add__ = __radd__ = __iadd__ = _refuse("add")
    __mul__ = __rmul__ = __imul__ = _refuse("mul")
    del _refuse
