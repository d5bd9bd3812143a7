"""The array backend: which array module (``xp``) holds tensor data.

Only NumPy exists today. Everything above this package asks
``get_array_module(array)`` (Chainer's pattern) instead of importing numpy, so
a CuPy backend can be slotted in later without touching the ops.

>>> from ember.backend import get_array_module
>>> import numpy
>>> get_array_module(numpy.zeros(2)) is numpy
True
"""
import warnings

import numpy

from .dtypes import (dtype, float16, float32, float64, int8, int16, int32, int64,
                     uint8, bool_, half, float, double, short, int, long,
                     get_default_dtype, set_default_dtype, from_numpy_dtype, to_numpy_dtype,
                     result_type, promote_types, scalar_dtype)

xp = numpy  # the default array module

# PyTorch computes inf and nan silently; NumPy warns ("overflow encountered in multiply").
# np.errstate around every small op costs more than the op, so NumPy's floating-point
# RuntimeWarnings are filtered instead, only where ember's own code made the NumPy call
# (the warning's module is then an ember module); the user's NumPy code still warns.
warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"ember(\.|$)",
                        message=r".*(encountered in|divide by zero)")


def _prime_malloc():
    """Let glibc keep big freed arrays in its heap, as it does once a program has freed a
    big block.

    glibc serves allocations above its mmap threshold (128 KiB at start) with fresh pages
    and adapts: freeing an mmap'd block raises the threshold to that block's size and the
    heap's trim threshold to twice it. A training step allocates and frees the same big
    activation arrays every time; with the thresholds a few MiB high the heap is trimmed and
    re-faulted at every step (~2,500 page faults, ~15% of a small-CNN step here). Freeing
    one block just under glibc's 32 MiB cap at import moves the thresholds to where a
    program that once freed such a block has them; an explicit M_MMAP_THRESHOLD or
    GLIBC_TUNABLES setting turns the adaptation, and so this, off.
    """
    import os
    try:
        if not os.confstr("CS_GNU_LIBC_VERSION"):
            return
    except (AttributeError, ValueError, OSError):  # not glibc
        return
    block = numpy.empty(31 << 20, dtype=numpy.uint8)  # mmap'd, then freed at once
    del block


_prime_malloc()


def get_array_module(*arrays):
    """The array module (numpy, later cupy) that owns ``arrays``."""
    return numpy
