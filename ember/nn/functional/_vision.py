"""F.interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear, area) with
size= or scale_factor=, and F.pixel_shuffle / F.pixel_unshuffle."""
import math
import warnings

from ... import _creation
from ...backend.dtypes import bfloat16 as _bfloat16, FLOAT8 as _FLOAT8
from ..._ops.interpolate import nearest_index, linear_matrix
from ..._ops.vision_ops import antialias_matrix, cubic_matrix, nearest_exact_index
from ._pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear", "pixel_shuffle",
           "pixel_unshuffle"]

_NEEDS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}
_AXES = {1: "W", 2: "HW", 3: "DHW"}
_INT64_MAX = 2 ** 63 - 1


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resize (N, C, *S) input to ``size`` or by ``scale_factor``.

    Modes: 'nearest', 'nearest-exact' and 'area' (3-D, 4-D or 5-D input), 'linear' (3-D),
    'bilinear' and 'bicubic' (4-D), 'trilinear' (5-D); ``align_corners`` (False or True)
    only with the last four. ``antialias=True`` (bilinear, bicubic) filters as PyTorch
    does when downsampling: every input pixel contributes, weighted by the stretched filter;
    'lanczos' (4-D, antialias=True only) uses the 3-lobe Lanczos window.

    >>> import ember
    >>> x = ember.arange(4.).reshape(1, 1, 2, 2)
    >>> ember.nn.functional.interpolate(x, scale_factor=2, mode="bicubic").shape
    ember.Size([1, 1, 4, 4])
    """
    dim = input.dim()
    nd = dim - 2
    if input.dtype in _FLOAT8 and mode in ("nearest", "nearest-exact", "linear"):
        kind = "linear" if mode == "linear" else "nearest"  # PyTorch's index tables refuse it
        raise NotImplementedError(f"\"compute_indices_weights_{kind}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and dim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
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
    if mode == "area" and out is None:  # PyTorch computes area's sizes in Python
        out = [math.floor(float(n) * s) for n, s in zip(input.shape[2:], scales)]
        scales = (None,) * nd
    if mode in ("nearest", "nearest-exact", "area"):
        if dim not in (3, 4, 5):
            raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                      f"(got {dim}D) for the modes: nearest | linear | bilinear "
                                      f"| bicubic | trilinear | lanczos | area | nearest-exact "
                                      f"(got {mode})")
        if mode == "area":
            pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[nd - 1]
            return pool(input, out)
        exact = mode == "nearest-exact"
        op = f"_upsample_nearest_exact{nd}d" if exact else f"upsample_nearest{nd}d"
        out = _output_size(input, out, scales, op)
        return _allocating(input, out, lambda: _nearest(input, out, scales, exact))
    if mode in _NEEDS:
        need = _NEEDS[mode]
        if dim != need:
            if dim not in (3, 4, 5) or mode == "bicubic":
                raise NotImplementedError(
                    f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {dim}D) for "
                    f"the modes: nearest | linear | bilinear | bicubic | trilinear | lanczos | "
                    f"area | nearest-exact (got {mode})")
            raise NotImplementedError(f"Got {dim}D input, but {mode} mode needs {need}D input")
        out = _output_size(input, out, scales, f"upsample_{mode}{nd}d")
        cubic = mode == "bicubic"
        return _allocating(input, out, lambda: _separable(input, out, scales, align_corners,
                                                           cubic, antialias))
    if dim == 4 and mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
        out = _output_size(input, out, scales, "_upsample_lanczos2d_aa")
        return _allocating(input, out, lambda: _separable(input, out, scales, False, False,
                                                           "lanczos"))
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                              f"(got {dim}D) for the modes: nearest | linear | bilinear | "
                              f"bicubic | trilinear | lanczos | area | nearest-exact "
                              f"(got {mode})")


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


def _nearest(input, out, scales, exact=False):
    x = input
    for i, (n, o, s) in enumerate(zip(input.shape[2:], out, scales)):
        if exact:
            x = x.index_select(2 + i, nearest_exact_index(input, n, o, s))
        elif n != o:
            x = x.index_select(2 + i, nearest_index(n, o, s, input))
    return x if x is not input else input.clone()


def _separable(input, out, scales, align_corners, cubic, antialias=False):
    """Interpolation by one (out, in) matrix per spatial dim: linear or bicubic weights, or
    the anti-aliasing filter's."""
    if input.dtype is _bfloat16:  # in float32, rounded once (as PyTorch's kernels compute it)
        return _separable(input.float(), out, scales, align_corners, cubic,
                          antialias).to(_bfloat16)
    if antialias:
        kind = antialias if isinstance(antialias, str) else ("bicubic" if cubic else "bilinear")
        mats = [antialias_matrix(input, n, o, s, align_corners, kind)
                for n, o, s in zip(input.shape[2:], out, scales)]
    elif cubic:
        mats = [cubic_matrix(input, n, o, s, align_corners)
                for n, o, s in zip(input.shape[2:], out, scales)]
    else:
        mats = [linear_matrix(n, o, s, align_corners, input.dtype.np, input)
                for n, o, s in zip(input.shape[2:], out, scales)]
    if input.dim() == 3:
        return input @ mats[0].mT
    if input.dim() == 4:
        return mats[0] @ input @ mats[1].mT
    # depth: (Do, D) applied to the input seen as (N, C, D, Ho * Wo)
    lead = tuple(input.shape[:2])
    planes = (mats[1] @ input @ mats[2].mT).reshape(lead + (input.shape[2], -1))
    return (mats[0] @ planes).reshape(lead + tuple(out))


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of ``interpolate``.

    >>> import ember
    >>> ember.nn.functional.upsample(ember.ones(1, 1, 2), scale_factor=2).shape
    ember.Size([1, 1, 4])
    """
    _deprecated("upsample")
    return interpolate(input, size, scale_factor, mode, align_corners)


def _deprecated(name):
    warnings.warn(f"`nn.functional.{name}` is deprecated. Use `nn.functional.interpolate` "
                  f"instead.", stacklevel=3)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')``.

    >>> import ember
    >>> ember.nn.functional.upsample_nearest(ember.ones(1, 1, 2, 2), scale_factor=2).shape
    ember.Size([1, 1, 4, 4])
    """
    _deprecated("upsample_nearest")
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='bilinear',
    align_corners=True)``.

    >>> import ember
    >>> ember.nn.functional.upsample_bilinear(ember.ones(1, 1, 2, 2), size=3).shape
    ember.Size([1, 1, 3, 3])
    """
    _deprecated("upsample_bilinear")
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


def _factor(value, fn, name):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' (position 2) must be int, not "
                        f"{type(value).__name__}")
    if value <= 0:
        raise RuntimeError(f"{fn} expects a positive {name}, but got {value}")
    return value


def pixel_shuffle(input, upscale_factor):
    """Rearrange (*, C * r^2, H, W) into (*, C, H * r, W * r) (r = ``upscale_factor``).

    >>> import ember
    >>> ember.nn.functional.pixel_shuffle(ember.arange(4.).reshape(4, 1, 1), 2)
    tensor([[[0., 1.],
             [2., 3.]]])
    """
    r = _factor(upscale_factor, "pixel_shuffle", "upscale_factor")
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    k = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)  # C, H, r, W, r
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input, downscale_factor):
    """Rearrange (*, C, H * r, W * r) into (*, C * r^2, H, W) (the inverse of pixel_shuffle).

    >>> import ember
    >>> ember.nn.functional.pixel_unshuffle(ember.arange(4.).reshape(1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    r = _factor(downscale_factor, "pixel_unshuffle", "downscale_factor")
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.dim()} dimension(s)")
    *lead, c, h, w = input.shape
    for name, size, d in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by "
                               f"downscale_factor, but input.size({d})={size} is not divisible "
                               f"by {r}")
    k = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)  # C, r, r, H, W
    return x.reshape(*lead, c * r * r, h // r, w // r)
