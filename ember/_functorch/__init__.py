"""Function transforms: ``vmap`` (batching rules over the built-in ops)."""
from .vmap import vmap, VmapInfo

__all__ = ["vmap", "VmapInfo"]
