"""The array backend: which array module (``xp``) holds tensor data.

Only NumPy exists today. Everything above this package asks
``get_array_module(array)`` (Chainer's pattern) instead of importing numpy, so
a CuPy backend can be slotted in later without touching the ops.

>>> from ember.backend import get_array_module
>>> import numpy
>>> get_array_module(numpy.zeros(2)) is numpy
True
"""
import numpy

from .dtypes import (dtype, float16, float32, float64, int8, int16, int32, int64,
                     uint8, bool_, half, float, double, short, int, long,
                     get_default_dtype, set_default_dtype, from_numpy_dtype, to_numpy_dtype,
                     result_type, promote_types, scalar_dtype)

xp = numpy  # the default array module

def get_array_module(*arrays):
    """The array module (numpy, later cupy) that owns ``arrays``."""
    return numpy
