"""F.interpolate: 'nearest', 'linear' (3-D) and 'bilinear' (4-D) with size= or scale_factor=."""
import math

from ..._ops.interpolate import nearest_index, linear_matrix

__all__ = ["interpolate", "upsample"]

_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


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
            out = tuple(int(s) for s in size)
        else:
            out = (int(size),) * nd
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
        out = tuple(int(math.floor(float(n) * s)) for n, s in zip(input.shape[2:], scales))
        if recompute_scale_factor:
            scales = (None,) * nd
    else:
        raise ValueError("either size or scale_factor should be defined")
    if mode == "nearest":
        if dim not in (3, 4, 5):
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                      f"(got {dim}D) for the modes: nearest | linear | bilinear "
                                      f"| bicubic | trilinear | area | nearest-exact (got "
                                      f"{mode})")
        x = input
        for i, (n, o, s) in enumerate(zip(input.shape[2:], out, scales)):
            if n != o:
                x = x.index_select(2 + i, nearest_index(n, o, s))
        return x if x is not input else input.clone()
    if mode in ("linear", "bilinear"):
        need = _NEEDS[mode]
        if dim != need:
            got = f"Got {dim}D input, but {mode} mode needs {need}D input"
            raise NotImplementedError(got)
        mats = [linear_matrix(n, o, s, align_corners, input.dtype.np)
                for n, o, s in zip(input.shape[2:], out, scales)]
        if mode == "linear":
            return input @ mats[0].mT
        return mats[0] @ input @ mats[1].mT
    raise NotImplementedError(f"Input Error: interpolate mode '{mode}' is not implemented in "
                              f"ember (nearest, linear and bilinear are)")


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate``."""
    return interpolate(input, size, scale_factor, mode, align_corners)
