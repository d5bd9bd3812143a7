"""ember.testing: PyTorch's test helpers, ``assert_close`` (closeness of tensors, arrays,
numbers and containers of them, with PyTorch's messages) and ``make_tensor`` (random tensors
in PyTorch's value ranges); ``assert_allclose`` is the deprecated older check.

>>> import ember
>>> from ember.testing import assert_close, make_tensor
>>> x = make_tensor(2, 2, dtype=ember.float64, device="cpu")
>>> assert_close(x * 1.0, x)
"""
from ._comparison import assert_allclose, assert_close
from ._creation import make_tensor

__all__ = ["assert_close", "make_tensor", "assert_allclose"]
