"""ChannelShuffle: interleave the channel groups (ShuffleNet's shuffle)."""
from .. import functional as F
from .module import Module

__all__ = ["ChannelShuffle"]


class ChannelShuffle(Module):
    """Split the channels (dim 1) into ``groups`` and interleave them.

    >>> import ember, ember.nn as nn
    >>> nn.ChannelShuffle(2)(ember.arange(4.0).view(1, 4, 1)).flatten()
    tensor([0., 2., 1., 3.])
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
