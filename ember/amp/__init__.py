"""``ember.amp``: mixed-precision training helpers, as scripts import them.

``GradScaler`` scales the loss so small float16 gradients survive, unscales them
before the optimizer step and skips steps whose gradients overflowed; on the CPU
it really scales on the CPU (as PyTorch's ``GradScaler("cpu")`` does) and on a GPU;
for ``"cuda"`` without one it is disabled with PyTorch's warning. ``autocast`` for
``"cuda"`` without a GPU is a disabled no-op with PyTorch's warning; ember does not
run ops in a lower precision automatically, so enabling it (CPU or GPU) raises
NotImplementedError.
"""
from .grad_scaler import GradScaler
from .autocast_mode import autocast, is_autocast_available

__all__ = ["GradScaler", "autocast", "is_autocast_available"]
