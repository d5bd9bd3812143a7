"""F.grid_sample and F.affine_grid (2-D and 3-D), with PyTorch's checks and wording.

grid_sample is written with differentiable ember ops: the grid is mapped to pixel
coordinates (with the padding mode's clamping or reflection), each of the 2^d corners of the
sampling cell is gathered from the flattened input, and the corners are weighted (bilinear)
or the nearest one is taken; bicubic weighs the 4x4 taps around the source position.
Gradients w.r.t. input (through gather) and grid (through the weights and the coordinate
maps) come from autograd, so they are twice differentiable.
"""
import warnings

from ... import _creation, _functions as _fn
from ...backend import dtypes as _dtypes

__all__ = ["grid_sample", "affine_grid"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _pixel(coord, size, align_corners):
    """Normalized [-1, 1] coordinates -> pixel coordinates along a dim of ``size``."""
    if align_corners:
        return (coord + 1) / 2 * (size - 1)
    return ((coord + 1) * size - 1) / 2


def _reflect(coord, twice_low, twice_high):
    """Reflect ``coord`` into [twice_low / 2, twice_high / 2] (as often as needed)."""
    if twice_low == twice_high:
        return coord * 0
    low = twice_low / 2
    span = (twice_high - twice_low) / 2
    dist = (coord - low).abs()
    extra = dist.fmod(span)
    flips = (dist / span).floor()
    even = flips.fmod(2) == 0
    return _fn.where(even, extra + low, span - extra + low)


def _source(coord, size, padding_mode, align_corners):
    coord = _pixel(coord, size, align_corners)
    if padding_mode == "border":
        return coord.clamp(0, size - 1)
    if padding_mode == "reflection":
        if align_corners:
            coord = _reflect(coord, 0, 2 * (size - 1))
        else:
            coord = _reflect(coord, -1, 2 * size - 1)
        return coord.clamp(0, size - 1)
    return coord


def _gather(flat, indices, sizes):
    """flat (N, C, prod(sizes)) at the integer pixel ``indices`` (one (N, *out) per dim)."""
    n, c = flat.shape[:2]
    linear = indices[0]
    for idx, size in zip(indices[1:], sizes[1:]):
        linear = linear * size + idx
    out_shape = tuple(linear.shape[1:])
    linear = linear.reshape(n, 1, -1).expand(n, c, -1)
    return flat.gather(2, linear).reshape((n, c) + out_shape)


def _inside(idx, size):
    return (idx >= 0) & (idx <= size - 1)


def _check_grid_sample(input, grid, mode, padding_mode):
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {_dtypes.SCALAR_NAMES[input.dtype.name]} but "
                           f"found {_dtypes.SCALAR_NAMES[grid.dtype.name]}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {_sizes(input.shape)} and grid with sizes "
                           f"{_sizes(grid.shape)}")
    nd = input.dim() - 2
    if grid.shape[-1] != nd:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {nd} in last dimension, "
                           f"but got grid with sizes {_sizes(grid.shape)}")
    rank = 4 if input.dim() == 4 else 5  # PyTorch's 2-d kernel, else its 3-d one
    if input.dim() != rank or grid.dim() != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number "
                           f"of dimensions, but got input with sizes {_sizes(input.shape)} and "
                           f"grid with sizes {_sizes(grid.shape)}")
    for i in range(2, input.dim()):
        if input.shape[i] == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {_sizes(input.shape)} with "
                               f"dimension {i} being empty")
    if mode == "bicubic" and nd != 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


_CUBIC_A = -0.75  # PyTorch's cubic convolution coefficient (as in interpolate's bicubic)


def _cubic_weights(t):
    """The four cubic-convolution weights of the taps at floor - 1 .. floor + 2, for the
    fractional position ``t`` (differentiable in t)."""
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return far(t + 1), near(t), near(1 - t), far(2 - t)


def _bicubic(flat, coords, sizes, padding_mode, align_corners):
    """4x4 taps around each (unpadded) source position; each tap's own coordinate goes
    through the padding mode (out-of-range taps read 0 with 'zeros'), as PyTorch's kernel."""
    lows = [coord.detach().floor() for coord in coords]
    weights = [_cubic_weights(coord - low) for coord, low in zip(coords, lows)]
    taps = []  # per dim: four (index, inside) pairs
    for low, size in zip(lows, sizes):
        per_dim = []
        for k in range(4):
            tap = low + (k - 1)
            if padding_mode == "border":
                tap = tap.clamp(0, size - 1)
            elif padding_mode == "reflection":
                twice = (0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)
                tap = _reflect(tap, *twice).clamp(0, size - 1)
            idx = tap.long()
            per_dim.append((idx.clamp(0, size - 1), _inside(idx, size)))
        taps.append(per_dim)
    out = None
    for i in range(4):
        (yi, y_ok), wy = taps[0][i], weights[0][i]
        for j in range(4):
            (xj, x_ok), wx = taps[1][j], weights[1][j]
            weight = wy * wx * (y_ok & x_ok).to(wy.dtype)
            term = _gather(flat, [yi, xj], sizes) * weight.unsqueeze(1)
            out = term if out is None else out + term
    return out


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample (N, C, H, W) input at the (N, Ho, Wo, 2) grid of normalized (x, y) positions in
    [-1, 1] (or (N, C, D, H, W) at (N, Do, Ho, Wo, 3) (x, y, z)); ``mode`` 'bilinear',
    'nearest' or 'bicubic' (4-D only), ``padding_mode`` 'zeros', 'border' or 'reflection'.

    >>> import ember
    >>> x = ember.arange(4.).reshape(1, 1, 2, 2)
    >>> grid = ember.zeros(1, 1, 1, 2)
    >>> ember.nn.functional.grid_sample(x, grid, align_corners=False)
    tensor([[[[1.5000]]]])
    """
    _check_grid_sample(input, grid, mode, padding_mode)
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    nd = input.dim() - 2
    sizes = tuple(input.shape[2:])
    n, c = input.shape[:2]
    flat = input.reshape(n, c, -1)
    if mode == "bicubic":  # the taps are padded, not the source position
        coords = [_pixel(grid[..., 1 - i], sizes[i], align_corners) for i in range(2)]
        return _bicubic(flat, coords, sizes, padding_mode, align_corners)
    # grid[..., 0] is x (the last dim), grid[..., 1] y, grid[..., 2] z
    coords = [_source(grid[..., nd - 1 - i], sizes[i], padding_mode, align_corners)
              for i in range(nd)]
    if mode == "nearest":
        picked = [coord.detach().round().long() for coord in coords]
        inside = None
        for idx, size in zip(picked, sizes):
            ok = _inside(idx, size)
            inside = ok if inside is None else inside & ok
        clamped = [idx.clamp(0, size - 1) for idx, size in zip(picked, sizes)]
        out = _gather(flat, clamped, sizes) * inside.unsqueeze(1).to(input.dtype)
        # the grid gets a zero gradient, as in PyTorch (where() passes none to its input)
        no_flow = _fn.where(_creation.zeros_like(grid, dtype=_dtypes.bool_), grid, 0.0)
        return out + no_flow.sum(-1).unsqueeze(1)
    lows = [coord.detach().floor() for coord in coords]
    fracs = [coord - low for coord, low in zip(coords, lows)]
    lows = [low.long() for low in lows]
    out = None
    for corner in range(2 ** nd):
        weight, indices, inside = None, [], None
        for i in range(nd):
            upper = (corner >> (nd - 1 - i)) & 1
            idx = lows[i] + upper
            w = fracs[i] if upper else 1 - fracs[i]
            weight = w if weight is None else weight * w
            ok = _inside(idx, sizes[i])
            inside = ok if inside is None else inside & ok
            indices.append(idx.clamp(0, sizes[i] - 1))
        weight = weight * inside.to(weight.dtype)
        term = _gather(flat, indices, sizes) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _base_coords(steps, align_corners, like):
    """The normalized positions of ``steps`` pixel centres (corners when aligned)."""
    if steps <= 1:
        return like.new_zeros(max(steps, 0))
    base = _creation.beside(_creation.linspace(-1, 1, steps, dtype=like.dtype), like)
    # two roundings, as PyTorch scales them: (base * (steps - 1)) / steps
    return base if align_corners else base * (steps - 1) / steps


def affine_grid(theta, size, align_corners=None):
    """Sampling grid (N, H, W, 2) of ``theta`` (N, 2, 3) applied to the normalized (x, y, 1)
    positions of an output of ``size`` (N, C, H, W); 3-D: theta (N, 3, 4), size
    (N, C, D, H, W), grid (N, D, H, W, 3).

    >>> import ember
    >>> theta = ember.tensor([[[1., 0., 0.], [0., 1., 0.]]])
    >>> ember.nn.functional.affine_grid(theta, (1, 1, 1, 2), align_corners=True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{str(theta.dtype).replace('ember', 'torch')}")
    size = tuple(size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    nd = len(size) - 2
    if theta.dim() != 3 or tuple(theta.shape[-2:]) != (nd, nd + 1):
        raise ValueError(f"Expected a batch of {nd}D affine matrices of shape Nx{nd}x{nd + 1} "
                         f"for size {size}. Got {theta.shape}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = size[0]
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {nd + 1}] but got: [{theta.shape[0]}, {nd + 1}].")
    spatial = size[2:]
    # per spatial dim, its coordinate broadcast over the output; x runs along the last dim
    axes = []
    for i, steps in enumerate(spatial):
        shape = [1] * nd
        shape[i] = steps
        axes.append(_base_coords(steps, align_corners, theta).reshape(shape).expand(*spatial))
    ones = theta.new_ones(spatial)
    base = _fn.stack(axes[::-1] + [ones], -1).reshape(1, -1, nd + 1)   # (1, P, nd + 1)
    grid = base @ theta.transpose(1, 2)                                  # (N, P, nd)
    return grid.reshape((n,) + tuple(spatial) + (nd,))
