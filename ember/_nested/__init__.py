"""Nested (ragged) tensors, as ``torch.nested``'s: the type and its layouts (``tensor.py``),
what they answer (``handlers.py``: metadata, autograd, printing, padding; ``ops.py``: the
ops) and the factories (``creation.py``). ``ember.nested`` is the public namespace.
"""
from . import handlers, ops, ops_shape  # noqa: F401  (fill HANDLERS)
from .creation import (as_nested_tensor, masked_select, narrow, nested_tensor,  # noqa: F401
                       nested_tensor_from_jagged, to_padded_tensor)
from .tensor import NestedTensor, jagged  # noqa: F401
