"""``ember.ao``: architecture optimization (PyTorch's ``torch.ao``); so far its
``quantization`` library and ``nn``'s dynamically quantized Linear."""
from . import quantization, nn  # noqa: F401
