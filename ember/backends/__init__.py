"""``ember.backends``: the switches scripts set for PyTorch's compute libraries.

On ember they describe a CPU-only NumPy build: ``cudnn`` and ``mps`` are not
available, their flags can be read and set (``cudnn.benchmark = True`` is
harmless: ember has no autotuner, and results stay deterministic), ``openmp`` /
``mkldnn`` report what ember does not use.

>>> import ember
>>> ember.backends.cudnn.benchmark = True
>>> ember.backends.mps.is_available()
False
>>> ember.backends.cudnn.benchmark = False  # (the default again)
"""
from . import cuda, cudnn, mkldnn, mps, openmp  # noqa: F401
