"""Conv1d/2d/3d, ConvTranspose1d/2d/3d with PyTorch's parameters, init and repr."""
import math

from ... import _creation
from ...autograd import grad_mode
from ...device import check_device
from ..parameter import Parameter, UninitializedParameter
from .. import functional as F
from .lazy import LazyModuleMixin
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d",
           "ConvTranspose3d", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
           "LazyConvTranspose2d", "LazyConvTranspose3d"]


def _ntuple(value, n):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * n


class _ConvNd(Module):
    """Shared state of the convolution layers (PyTorch's ``_ConvNd``)."""
    _nd = 2

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        check_device(device)  # 'cpu' or 'meta': refuse any other
        n = self._nd
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid_padding_strings}")
            if padding == "same" and any(s != 1 for s in _ntuple(stride, n)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError(f"padding_mode must be one of {valid_padding_modes}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _ntuple(kernel_size, n)
        self.stride = _ntuple(stride, n)
        self.padding = padding if isinstance(padding, str) else _ntuple(padding, n)
        self.dilation = _ntuple(dilation, n)
        self.transposed = transposed
        self.output_padding = _ntuple(output_padding, n)
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * n
            if padding == "same":
                for d, k, i in zip(self.dilation, self.kernel_size, range(n - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(self.padding)
                                                     for _ in range(2)]
        kw = {"device": device} if dtype is None else {"dtype": dtype, "device": device}
        if transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        self.weight = Parameter(_creation.empty(*shape, **kw))
        if bias:
            self.bias = Parameter(_creation.empty(out_channels, **kw))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """PyTorch's init: kaiming_uniform_(a=sqrt(5)) for the weight (bound 1/sqrt(fan_in))
        and uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
        w = self.weight
        receptive = 1
        for k in w.shape[2:]:
            receptive *= k
        fan_in = w.shape[1] * receptive
        with grad_mode.no_grad():
            # kaiming_uniform_(a=sqrt(5)): gain sqrt(2/6), bound = gain*sqrt(3/fan_in)
            gain = math.sqrt(2.0 / (1 + 5))
            bound = gain * math.sqrt(3.0 / fan_in) if fan_in else 0.0
            w.uniform_(-bound, bound)
            if self.bias is not None:
                b = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
                self.bias.uniform_(-b, b)

    def extra_repr(self):
        n = self._nd
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * n:
            s += ", padding={padding}"
        if self.dilation != (1,) * n:
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * n:
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         False, 0, groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        fn = (F.conv1d, F.conv2d, F.conv3d)[self._nd - 1]
        if self.padding_mode != "zeros":
            return fn(F.pad(input, self._reversed_padding_repeated_twice,
                            mode=self.padding_mode), weight, bias, self.stride, 0,
                      self.dilation, self.groups)
        return fn(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) input: weight (C_out, C_in/groups, k)."""
    _nd = 1


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) input: weight (C_out, C_in/groups, kh, kw)."""
    _nd = 2


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) input: weight (C_out, C_in/groups, kd, kh, kw).

    >>> import ember
    >>> ember.nn.Conv3d(2, 4, 3, padding=1)(ember.ones(1, 2, 4, 4, 4)).shape
    ember.Size([1, 4, 4, 4, 4])
    """
    _nd = 3


class _ConvTranspose(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation,
                         True, output_padding, groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size):
        if output_size is None:
            return self.output_padding
        n = self._nd
        non_spatial = 2 if input.dim() == n + 2 else 1
        if len(output_size) == non_spatial + n:
            output_size = output_size[non_spatial:]
        if len(output_size) != n:
            raise ValueError(f"ConvTranspose{n}D: for {input.dim()}D input, output_size must "
                             f"have {n} or {non_spatial + n} elements (got {len(output_size)})")
        spatial = input.shape[-n:]
        min_sizes = [(spatial[d] - 1) * self.stride[d] - 2 * self.padding[d]
                     + self.dilation[d] * (self.kernel_size[d] - 1) + 1 for d in range(n)]
        max_sizes = [min_sizes[d] + self.stride[d] - 1 for d in range(n)]
        for d in range(n):
            if not min_sizes[d] <= output_size[d] <= max_sizes[d]:
                # PyTorch's wording, down to the input's sizes from dim 2 on
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {min_sizes} to {max_sizes} (for an input of "
                                 f"{input.size()[2:]})")
        return tuple(output_size[d] - min_sizes[d] for d in range(n))

    def forward(self, input, output_size=None):
        op = self._output_padding(input, output_size)
        fn = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[self._nd - 1]
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                  self.dilation)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution: weight (C_in, C_out/groups, k)."""
    _nd = 1


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution: weight (C_in, C_out/groups, kh, kw)."""
    _nd = 2


class ConvTranspose3d(_ConvTranspose):
    """3-D transposed convolution: weight (C_in, C_out/groups, kd, kh, kw).

    >>> import ember
    >>> ember.nn.ConvTranspose3d(2, 1, 2, stride=2)(ember.ones(1, 2, 2, 2, 2)).shape
    ember.Size([1, 1, 4, 4, 4])
    """
    _nd = 3


# ---- lazy convolutions: in_channels from the first input -------------------------------------
class _LazyConvXdMixin(LazyModuleMixin):
    """Shared by the lazy convolutions: the eager class is built with zero channels and
    uninitialized parameters, which the first input sizes."""

    def _lazy_init(self, out_channels, bias, device, dtype):
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        """Materialize the weight (and bias) for ``input``'s channels, then initialize."""
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            if self.transposed:
                shape = (self.in_channels, self.out_channels // self.groups)
            else:
                shape = (self.out_channels, self.in_channels // self.groups)
            self.weight.materialize(shape + tuple(self.kernel_size))
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()

    def _get_in_channels(self, input):
        unbatched = self._nd + 1
        if input.dim() not in (unbatched, unbatched + 1):
            raise RuntimeError(f"Expected {unbatched}D (unbatched) or {unbatched + 1}D (batched) "
                               f"input to {type(self).__name__}, but got input of size: "
                               f"{input.shape}")
        return input.shape[1] if input.dim() == unbatched + 1 else input.shape[0]


class _LazyConv(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, dilation, groups, False,
                         padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class _LazyConvTranspose(_LazyConvXdMixin):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__(0, 0, kernel_size, stride, padding, output_padding, groups, False,
                         dilation, padding_mode, device=device, dtype=dtype)
        self._lazy_init(out_channels, bias, device, dtype)


class LazyConv1d(_LazyConv, Conv1d):
    """A Conv1d whose ``in_channels`` comes from its first input (dim 1, or 0 unbatched).

    >>> import ember
    >>> m = ember.nn.LazyConv1d(4, 3)
    >>> m(ember.ones(2, 5, 8)).shape, m
    (ember.Size([2, 4, 6]), Conv1d(5, 4, kernel_size=(3,), stride=(1,)))
    """
    cls_to_become = Conv1d


class LazyConv2d(_LazyConv, Conv2d):
    """A Conv2d whose ``in_channels`` comes from its first input (dim 1, or 0 unbatched).

    >>> import ember
    >>> m = ember.nn.LazyConv2d(4, 3)
    >>> m
    LazyConv2d(0, 4, kernel_size=(3, 3), stride=(1, 1))
    >>> m(ember.ones(3, 5, 5)).shape, m
    (ember.Size([4, 3, 3]), Conv2d(3, 4, kernel_size=(3, 3), stride=(1, 1)))
    """
    cls_to_become = Conv2d


class LazyConv3d(_LazyConv, Conv3d):
    """A Conv3d whose ``in_channels`` comes from its first input (dim 1, or 0 unbatched).

    >>> import ember
    >>> ember.nn.LazyConv3d(2, 2)(ember.ones(1, 3, 3, 3, 3)).shape
    ember.Size([1, 2, 2, 2, 2])
    """
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTranspose, ConvTranspose1d):
    """A ConvTranspose1d whose ``in_channels`` comes from its first input.

    >>> import ember
    >>> ember.nn.LazyConvTranspose1d(2, 3, stride=2)(ember.ones(1, 4, 5)).shape
    ember.Size([1, 2, 11])
    """
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTranspose, ConvTranspose2d):
    """A ConvTranspose2d whose ``in_channels`` comes from its first input.

    >>> import ember
    >>> m = ember.nn.LazyConvTranspose2d(2, 3)
    >>> m(ember.ones(1, 4, 5, 5)).shape, m
    (ember.Size([1, 2, 7, 7]), ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(1, 1)))
    """
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTranspose, ConvTranspose3d):
    """A ConvTranspose3d whose ``in_channels`` comes from its first input.

    >>> import ember
    >>> ember.nn.LazyConvTranspose3d(2, 2)(ember.ones(3, 2, 2, 2)).shape
    ember.Size([2, 3, 3, 3])
    """
    cls_to_become = ConvTranspose3d
