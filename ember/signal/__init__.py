"""``ember.signal``: signal-processing helpers (``torch.signal``); so far the window
functions of ``ember.signal.windows``.

>>> import ember
>>> ember.signal.windows.hann(3)
tensor([0., 1., 0.])
"""
from . import windows

__all__ = ["windows"]
