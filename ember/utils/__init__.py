"""``ember.utils``: helpers around the core (``ember.utils.data`` for datasets and loaders)."""
from . import data  # noqa: F401
from . import checkpoint  # noqa: F401
from . import dlpack  # noqa: F401
from . import hooks  # noqa: F401
from ._swap import swap_tensors  # noqa: F401
