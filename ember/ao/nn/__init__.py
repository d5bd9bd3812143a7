"""``ember.ao.nn``: the quantized counterparts of ``nn`` modules (PyTorch's ``torch.ao.nn``);
so far the dynamically quantized Linear."""
from . import quantized  # noqa: F401
