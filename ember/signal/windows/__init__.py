"""``ember.signal.windows``: window functions (``torch.signal.windows``), defined in
``ember.signal.windows.windows`` as PyTorch's are.

>>> import ember
>>> ember.signal.windows.bartlett(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
from .windows import (bartlett, blackman, cosine, exponential, gaussian, general_cosine,
                      general_hamming, hamming, hann, kaiser, nuttall)

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]
