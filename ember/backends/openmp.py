"""``ember.backends.openmp``: ember's parallel kernels use their own thread pool, not
OpenMP."""


def is_available():
    return False
