"""The public functional API (``ember.add``, ``ember.exp``, ...): one declaration per public
name (``_registry``) makes the function, the Tensor method and the in-place ``x.op_`` form.

The declarations live by family: ``core`` (arithmetic, comparisons, reductions, shape,
indexing, linear algebra, dtypes, trigonometry, complex numbers, ...) and one module per later
family, each listing its public names in its own ``__all__``. ``_tensor_methods`` binds the
methods.

>>> import ember
>>> ember.add(ember.ones(2), 1, alpha=2)
tensor([3., 3.])
"""
# imported in this order: a family may use the names of those before it
from . import core, arrangement, basics, elementwise_extra, special_names, shared_memory
from . import lu_forms, signal, storage_dtypes, api_surface, aten_forms, surface_extra
from . import foreach

__all__: list[str] = []
for _family in (core, arrangement, basics, elementwise_extra, special_names, shared_memory,
                lu_forms, signal, storage_dtypes, api_surface, aten_forms, surface_extra,
                foreach):
    globals().update((name, getattr(_family, name)) for name in _family.__all__)
    __all__ += _family.__all__
del _family

# plain entry points (not declarations): ember/__init__ imports them by name
from .basics import fill_, zero_, resize_as_, _INPLACE_FUNCTIONS  # noqa: E402,F401
