"""``ember.nested``: nested (ragged) tensors in PyTorch's two layouts, ``ember.strided``
(a list of tensors) and ``ember.jagged`` (packed values and offsets), as ``torch.nested``.

>>> import ember
>>> nt = ember.nested.nested_tensor([ember.ones(2, 4), ember.ones(3, 4)], layout=ember.jagged)
>>> nt.shape[0], nt.shape[2], nt.relu().values().shape
(2, 4, ember.Size([5, 4]))
"""
from __future__ import annotations

from .._nested import (as_nested_tensor, masked_select, narrow, nested_tensor,
                       nested_tensor_from_jagged, to_padded_tensor)
from .._torch_function import dispatching

# plain entry points, so that modes and overrides reach them
to_padded_tensor = dispatching(to_padded_tensor)

__all__ = ["nested_tensor", "as_nested_tensor", "nested_tensor_from_jagged", "narrow",
           "to_padded_tensor", "masked_select"]
