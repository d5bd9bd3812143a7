"""PixelShuffle and PixelUnshuffle (sub-pixel rearrangement of channels into space)."""
from .. import functional as F
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r) with r = ``upscale_factor``.

    >>> import ember
    >>> ember.nn.PixelShuffle(2)(ember.ones(1, 8, 3, 3)).shape
    ember.Size([1, 2, 6, 6])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W) with r = ``downscale_factor``.

    >>> import ember
    >>> ember.nn.PixelUnshuffle(2)(ember.ones(1, 2, 6, 6)).shape
    ember.Size([1, 8, 3, 3])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return F.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
