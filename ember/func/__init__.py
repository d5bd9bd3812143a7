"""``ember.func``: composable function transforms, as ``torch.func``."""
from .._functorch.vmap import vmap

__all__ = ["vmap"]
