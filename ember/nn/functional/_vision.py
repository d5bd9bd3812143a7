"""F.interpolate: 'nearest', 'linear' (3-D) and 'bilinear' (4-D) with size= or scale_factor=."""
import math

from ... import _creation
from ..._ops.interpolate import nearest_index, linear_matrix

__all__ = ["interpolate", "upsample"]

_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_AXES = {1: "W", 2: "HW", 3: "DHW"}
_INT64_MAX = 2 ** 63 - 1


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, *S) input to ``size`` or by ``scale_factor`` with mode 'nearest' (3-D, 4-D
    or 5-D input), 'linear' (3-D) or 'bilinear' (4-D; ``align_corners`` False or True)."""
    dim = input.dim()
    nd = dim - 2
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != nd:
                raise ValueError(f"Input and output must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and output size of {size}. "
                                 f"Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                                 f"and output size in (o1, o2, ...,oK) format.")
            out = [int(s) for s in size]
        else:
            out = [int(size)] * nd
        scales = (None,) * nd
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != nd:
                raise ValueError(f"Input and scale_factor must have the same number of spatial "
                                 f"dimensions, but got input with spatial dimensions of "
                                 f"{list(input.shape[2:])} and scale_factor of shape "
                                 f"{scale_factor}. Please provide input tensor in (N, C, "
                                 f"d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) "
                                 f"format.")
            scales = tuple(float(s) for s in scale_factor)
        else:
            scales = (float(scale_factor),) * nd
        out = None  # computed by the op from the scales, as PyTorch's kernels do
        if recompute_scale_factor:  # PyTorch computes these sizes in Python
            out = [math.floor(float(n) * s) for n, s in zip(input.shape[2:], scales)]
            scales = (None,) * nd
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "nearest":
        if dim not in (3, 4, 5):
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                      f"(got {dim}D) for the modes: nearest | linear | bilinear "
                                      f"| bicubic | trilinear | lanczos | area | nearest-exact "
                                      f"(got {mode})")
        out = _output_size(input, out, scales, f"upsample_nearest{nd}d")
        return _allocating(input, out, lambda: _nearest(input, out, scales))
    if mode in ("linear", "bilinear"):
        need = _NEEDS[mode]
        if dim != need:
            got = f"Got {dim}D input, but {mode} mode needs {need}D input"
            raise NotImplementedError(got)
        out = _output_size(input, out, scales, f"upsample_{mode}{nd}d")
        return _allocating(input, out, lambda: _linear(input, out, scales, align_corners))
    raise NotImplementedError(f"Input Error: interpolate mode '{mode}' is not implemented in "
                              f"ember (nearest, linear and bilinear are)")


def _output_size(input, out, scales, op_name):
    """The spatial output size with the op's checks: PyTorch's int64 conversion of the size
    (given or computed from the scales), then every input and output size above 0 and a
    non-empty (but for the batch) input."""
    in_sizes = list(input.shape[2:])
    if out is None:
        out = []
        for n, s in zip(in_sizes, scales):
            value = n * s
            if not -2.0 ** 63 <= value < 2.0 ** 63:  # also nan
                raise RuntimeError("value cannot be converted to type int64_t without overflow")
            out.append(int(value))
    else:
        for pos, o in enumerate(out, 1):
            if not -_INT64_MAX - 1 <= o <= _INT64_MAX:
                raise TypeError(f"{op_name}(): argument 'output_size' failed to unpack the "
                                f"object at pos {pos} with error \"Overflow when unpacking "
                                f"long long\"")
    if min(in_sizes + out) <= 0:
        axes = _AXES[len(in_sizes)]
        given = ", ".join(f"{a}: {n}" for a, n in zip(axes, in_sizes))
        wanted = ", ".join(f"{a}: {o}" for a, o in zip(axes, out))
        joint = " and output" if len(in_sizes) == 1 else " output"
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({given}){joint} ({wanted})")
    if input.numel() == 0 and math.prod(input.shape[1:]) == 0:
        raise RuntimeError(f"Non-empty {input.dim()}D data tensor expected but got a tensor "
                           f"with sizes [{', '.join(map(str, input.shape))}]")
    return out


def _allocating(input, out, compute):
    """``compute()`` with PyTorch's errors for an output too large to allocate."""
    shape = tuple(input.shape[:2]) + tuple(out)
    return _creation.allocate(compute, shape, input.dtype.np)


def _nearest(input, out, scales):
    x = input
    for i, (n, o, s) in enumerate(zip(input.shape[2:], out, scales)):
        if n != o:
            x = x.index_select(2 + i, nearest_index(n, o, s, input))
    return x if x is not input else input.clone()


def _linear(input, out, scales, align_corners):
    mats = [linear_matrix(n, o, s, align_corners, input.dtype.np, input)
            for n, o, s in zip(input.shape[2:], out, scales)]
    if input.dim() == 3:
        return input @ mats[0].mT
    return mats[0] @ input @ mats[1].mT


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)
