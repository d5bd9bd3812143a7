"""conv1d/2d/3d, conv_transpose1d/2d/3d (PyTorch's argument checks and wording)."""
from ..._ops.conv import ConvForward, ConvInputGrad, _Geom
from ...backend.dtypes import SCALAR_NAMES as _TYPE, FLOAT8 as _FLOAT8

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]


def _tuple(value, nd, name):
    if isinstance(value, int):
        return (value,) * nd
    value = tuple(int(v) for v in value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(value)}")
    return value


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_common(input, weight, bias, nd, name):
    """Shape/dtype checks shared by conv and conv_transpose; returns (input, batched)."""
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{name}, but got input of size: {_sizes(input.shape)}")
    if weight.dim() != nd + 2:
        raise RuntimeError("weight should have at least three dimensions" if nd == 1 else
                           f"Expected {nd + 2}-dimensional input for {nd + 2}-dimensional weight "
                           f"{_sizes(weight.shape)}, but got {weight.dim()}-dimensional input "
                           f"of size {_sizes(input.shape)} instead")
    batched = dim == nd + 2
    if not batched:
        input = input.unsqueeze(0)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {_TYPE[input.dtype.name]} but found "
                           f"{_TYPE[weight.dtype.name]}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_TYPE[input.dtype.name].lower()}) and bias type "
                           f"({_TYPE[bias.dtype.name].lower()}) should be the same")
    return input, batched


def _check_params(stride, padding, dilation, groups):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")


def _add_bias(out, bias, nd):
    if bias is None:
        return out
    return out + bias.reshape((-1,) + (1,) * nd)


def _convnd(input, weight, bias, stride, padding, dilation, groups, nd, name):
    input, batched = _check_common(input, weight, bias, nd, name)
    if input.dtype in _FLOAT8:  # PyTorch's CPU convolutions have no float8 kernel
        raise NotImplementedError(f"\"slow_conv{3 if nd == 3 else 2}d_cpu\" not implemented "
                                  f"for '{input.dtype.scalar_name}'")
    stride = _tuple(stride, nd, "stride")
    dilation = _tuple(dilation, nd, "dilation")
    ksize = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pads = ((0, 0),) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            pads = []
            for d, k in zip(dilation, ksize):
                total = d * (k - 1)
                pads.append((total // 2, total - total // 2))
            pads = tuple(pads)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        _check_params(stride, (0,), dilation, groups)
    else:
        padding = _tuple(padding, nd, "padding")
        _check_params(stride, padding, dilation, groups)
        pads = tuple((p, p) for p in padding)
    c = input.shape[1]
    o = weight.shape[0]
    if c != weight.shape[1] * groups or o % groups:
        if o % groups:
            raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                               f"{groups} at dimension 0, but got weight of size "
                               f"{_sizes(weight.shape)} instead")
        raise RuntimeError(f"Given groups={groups}, weight of size {_sizes(weight.shape)}, "
                           f"expected input{_sizes(input.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {c} channels instead")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != o):
        raise RuntimeError(f"Given weight of size {_sizes(weight.shape)}, expected bias to be "
                           f"1-dimensional with {o} elements, but got bias of size "
                           f"{_sizes(bias.shape)} instead")
    spatial = tuple(input.shape[2:])
    padded = tuple(s + lo + hi for s, (lo, hi) in zip(spatial, pads))
    eff = tuple(d * (k - 1) + 1 for d, k in zip(dilation, ksize))
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(f"Calculated padded input size per channel: "
                           f"({' x '.join(map(str, padded))}). Kernel size: "
                           f"({' x '.join(map(str, eff))}). Kernel size can't be greater than "
                           f"actual input size")
    geom = _Geom(stride, dilation, pads, spatial, groups)
    if bias is None:
        out = ConvForward.apply(input, weight, geom)
    else:
        out = ConvForward.apply(input, weight, geom, bias)
    return out if batched else out.squeeze(0)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation) of (N, C, L) or (C, L) input with weight
    (O, C/groups, k)."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d")


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution (cross-correlation) of (N, C, H, W) or (C, H, W) input with weight
    (O, C/groups, kh, kw); padding may be an int, a pair, 'valid' or 'same'."""
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d")


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution (cross-correlation) of (N, C, D, H, W) or (C, D, H, W) input with weight
    (O, C/groups, kd, kh, kw); padding may be an int, a triple, 'valid' or 'same'.

    >>> import ember
    >>> ember.nn.functional.conv3d(ember.ones(1, 1, 3, 3, 3), ember.ones(1, 1, 2, 2, 2)).shape
    ember.Size([1, 1, 2, 2, 2])
    """
    return _convnd(input, weight, bias, stride, padding, dilation, groups, 3, "conv3d")


def _conv_transposend(input, weight, bias, stride, padding, output_padding, groups, dilation,
                      nd, name):
    input, batched = _check_common(input, weight, bias, nd, name)
    stride = _tuple(stride, nd, "stride")
    padding = _tuple(padding, nd, "padding")
    output_padding = _tuple(output_padding, nd, "output_padding")
    dilation = _tuple(dilation, nd, "dilation")
    _check_params(stride, padding, dilation, groups)
    if any(op < 0 for op in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    for op, s, d in zip(output_padding, stride, dilation):
        if op >= s and op >= d:
            names = ("depth", "height", "width")[3 - nd:]
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join(f"output_padding_{n}: {v}" for n, v in zip(names, output_padding))
                + " " + " ".join(f"stride_{n}: {v}" for n, v in zip(names, stride))
                + " " + " ".join(f"dilation_{n}: {v}" for n, v in zip(names, dilation)))
    c = input.shape[1]
    if weight.shape[0] != c or c % groups:
        raise RuntimeError(f"Given transposed=1, weight of size {_sizes(weight.shape)}, "
                           f"expected input{_sizes(input.shape)} to have {weight.shape[0]} "
                           f"channels, but got {c} channels instead")
    o = weight.shape[1] * groups
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != o):
        raise RuntimeError(f"Given transposed=1, weight of size {_sizes(weight.shape)}, "
                           f"expected bias to be 1-dimensional with {o} elements, but got bias "
                           f"of size {_sizes(bias.shape)} instead")
    ksize = tuple(weight.shape[2:])
    out_size = tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, s, p, d, k, op in
                     zip(input.shape[2:], stride, padding, dilation, ksize, output_padding))
    if any(n <= 0 for n in out_size):
        raise RuntimeError(f"Given input size per channel: "
                           f"({' x '.join(map(str, input.shape[2:]))}). Calculated output size "
                           f"per channel: ({' x '.join(map(str, out_size))}). Output size is "
                           f"too small")
    geom = _Geom(stride, dilation, tuple((p, p) for p in padding), out_size, groups)
    out = _add_bias(ConvInputGrad.apply(input, weight, geom), bias, nd)
    return out if batched else out.squeeze(0)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """1-D transposed convolution; weight (C_in, C_out/groups, k)."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 1, "conv_transpose1d")


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """2-D transposed convolution ("deconvolution"); weight (C_in, C_out/groups, kh, kw)."""
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 2, "conv_transpose2d")


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """3-D transposed convolution; weight (C_in, C_out/groups, kd, kh, kw).

    >>> import ember
    >>> w = ember.ones(1, 1, 2, 2, 2)
    >>> ember.nn.functional.conv_transpose3d(ember.ones(1, 1, 2, 2, 2), w, stride=2).shape
    ember.Size([1, 1, 4, 4, 4])
    """
    return _conv_transposend(input, weight, bias, stride, padding, output_padding, groups,
                             dilation, 3, "conv_transpose3d")
