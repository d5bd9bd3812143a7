"""``ember.amp``: mixed-precision training helpers, as scripts import them.

``GradScaler`` scales the loss so small float16 gradients survive, unscales them
before the optimizer step and skips steps whose gradients overflowed; on the CPU
it really scales (as PyTorch's ``GradScaler("cpu")`` does), for ``"cuda"`` it is
disabled with PyTorch's warning. ``autocast`` for an unavailable device is a
disabled no-op with PyTorch's warning; ember does not run ops in a lower
precision automatically, so enabling it on the CPU raises NotImplementedError.
"""
from .grad_scaler import GradScaler
from .autocast_mode import autocast, is_autocast_available

__all__ = ["GradScaler", "autocast", "is_autocast_available"]
