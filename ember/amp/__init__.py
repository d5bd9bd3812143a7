"""``ember.amp``: mixed-precision training, as scripts import it.

``autocast(device_type)`` runs the ops on PyTorch's lists in bfloat16 (CPU) or float16
(CUDA) and the precision-sensitive ones in float32; ``GradScaler`` scales the loss so
small float16 gradients survive, unscales them before the optimizer step and skips
steps whose gradients overflowed (on the CPU too, as PyTorch's ``GradScaler("cpu")``).
For ``"cuda"`` without a GPU both are disabled with PyTorch's warnings.
``custom_fwd`` / ``custom_bwd`` make custom Functions autocast-aware.
"""
from .grad_scaler import GradScaler
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd", "is_autocast_available"]
