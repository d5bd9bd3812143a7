"""Padding layers: Zero/Constant/Reflection/Replication/CircularPad in 1-D, 2-D and 3-D.

Each holds ``padding`` as a tuple of 2 * d ints (an int is repeated), last dim first as
``F.pad`` takes it, and runs ``F.pad`` with its mode.
"""
from .. import functional as F
from .module import Module

__all__ = ["ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d",
           "CircularPad2d", "CircularPad3d"]


def _padding_tuple(padding, nd):
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * (2 * nd)


class _PadNd(Module):
    """A padding layer of ``_nd`` spatial dims and F.pad mode ``_mode``."""
    _nd = 1
    _mode = "constant"

    def __init__(self, padding):
        super().__init__()
        self.padding = _padding_tuple(padding, self._nd)

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pad the last dim with ``value``: ``padding`` an int or (left, right).

    >>> import ember
    >>> ember.nn.ConstantPad1d((1, 2), 9.0)(ember.zeros(1, 2))
    tensor([[9., 0., 0., 9., 9.]])
    """
    _nd = 1


class ConstantPad2d(_ConstantPadNd):
    """Pad the last two dims with ``value``: ``padding`` an int or (left, right, top, bottom).

    >>> import ember
    >>> ember.nn.ConstantPad2d(1, 2.0)(ember.zeros(1, 1, 2)).shape
    ember.Size([1, 3, 4])
    """
    _nd = 2


class ConstantPad3d(_ConstantPadNd):
    """Pad the last three dims with ``value``: ``padding`` an int or a 6-tuple.

    >>> import ember
    >>> ember.nn.ConstantPad3d(1, 2.0)(ember.zeros(1, 1, 1, 1)).shape
    ember.Size([1, 3, 3, 3])
    """
    _nd = 3


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPadNd, ConstantPad1d):
    """Pad the last dim with zeros.

    >>> import ember
    >>> ember.nn.ZeroPad1d(1)(ember.ones(1, 2))
    tensor([[0., 1., 1., 0.]])
    """


class ZeroPad2d(_ZeroPadNd, ConstantPad2d):
    """Pad the last two dims with zeros: ``padding`` an int or (left, right, top, bottom).

    >>> import ember
    >>> ember.nn.ZeroPad2d((1, 0, 0, 1))(ember.ones(1, 1, 1))
    tensor([[[0., 1.],
             [0., 0.]]])
    """


class ZeroPad3d(_ZeroPadNd, ConstantPad3d):
    """Pad the last three dims with zeros.

    >>> import ember
    >>> ember.nn.ZeroPad3d(1)(ember.ones(1, 1, 1, 1)).sum()
    tensor(1.)
    """


class ReflectionPad1d(_PadNd):
    """Pad the last dim with its reflection (the edge not repeated); padding < the dim size.

    >>> import ember
    >>> ember.nn.ReflectionPad1d(2)(ember.arange(3.).reshape(1, 3))
    tensor([[2., 1., 0., 1., 2., 1., 0.]])
    """
    _nd, _mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Pad the last two dims with their reflection.

    >>> import ember
    >>> ember.nn.ReflectionPad2d(1)(ember.ones(1, 2, 2)).shape
    ember.Size([1, 4, 4])
    """
    _nd, _mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Pad the last three dims with their reflection.

    >>> import ember
    >>> ember.nn.ReflectionPad3d(1)(ember.ones(1, 2, 2, 2)).shape
    ember.Size([1, 4, 4, 4])
    """
    _nd, _mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Pad the last dim by repeating its edge values.

    >>> import ember
    >>> ember.nn.ReplicationPad1d((2, 1))(ember.arange(3.).reshape(1, 3))
    tensor([[0., 0., 0., 1., 2., 2.]])
    """
    _nd, _mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Pad the last two dims by repeating their edge values.

    >>> import ember
    >>> ember.nn.ReplicationPad2d(1)(ember.ones(1, 2, 2)).shape
    ember.Size([1, 4, 4])
    """
    _nd, _mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Pad the last three dims by repeating their edge values.

    >>> import ember
    >>> ember.nn.ReplicationPad3d(1)(ember.ones(1, 2, 2, 2)).shape
    ember.Size([1, 4, 4, 4])
    """
    _nd, _mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        lo, hi = self._nd + 1, self._nd + 2
        if input.dim() not in (lo, hi):
            raise ValueError(f"expected {lo}D or {hi}D input (got {input.dim()}D input)")
        return F.pad(input, self.padding, "circular")


class CircularPad1d(_CircularPadNd):
    """Pad the last dim by wrapping around (the other end's values).

    >>> import ember
    >>> ember.nn.CircularPad1d(1)(ember.arange(3.).reshape(1, 3))
    tensor([[2., 0., 1., 2., 0.]])
    """
    _nd = 1


class CircularPad2d(_CircularPadNd):
    """Pad the last two dims by wrapping around.

    >>> import ember
    >>> ember.nn.CircularPad2d(1)(ember.ones(1, 2, 2)).shape
    ember.Size([1, 4, 4])
    """
    _nd = 2


class CircularPad3d(_CircularPadNd):
    """Pad the last three dims by wrapping around.

    >>> import ember
    >>> ember.nn.CircularPad3d(1)(ember.ones(1, 2, 2, 2)).shape
    ember.Size([1, 4, 4, 4])
    """
    _nd = 3
