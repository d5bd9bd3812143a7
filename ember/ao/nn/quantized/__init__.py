"""``ember.ao.nn.quantized``: quantized modules; ``dynamic`` holds the dynamically quantized
ones (weights quantized ahead, activations at each call)."""
from . import dynamic  # noqa: F401
