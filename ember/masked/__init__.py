"""``ember.masked``: PyTorch's ``torch.masked`` -- reductions and normalizations that skip
masked-out elements (``_ops.py``) and the prototype ``MaskedTensor`` (``_core.py``, the calls
it answers in ``_handlers.py``). See docs/masked.md.

>>> import ember
>>> x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
>>> ember.masked.mean(x, 1, mask=ember.tensor([[True, False], [True, True]]))
tensor([1.0000, 3.5000])
"""
from ._ops import (sum, prod, cumsum, cumprod, amax, amin, argmax, argmin, mean,  # noqa: A004
                   median, logsumexp, logaddexp, norm, var, std, softmax, log_softmax, softmin,
                   normalize)
from ._core import MaskedTensor, is_masked_tensor, masked_tensor, as_masked_tensor
from . import _handlers  # noqa: F401  (fills the table MaskedTensor answers from)

__all__ = ["amax", "amin", "argmax", "argmin", "as_masked_tensor", "cumprod", "cumsum",
           "is_masked_tensor", "log_softmax", "logaddexp", "logsumexp", "masked_tensor",
           "MaskedTensor", "mean", "median", "norm", "normalize", "prod", "softmax", "softmin",
           "std", "sum", "var"]
