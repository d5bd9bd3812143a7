"""Max, average and adaptive pooling (1-D, 2-D and 3-D) with PyTorch's checks and wording."""
from ..._ops.pooling import max_pool, adaptive_max_pool, avg_pool, adaptive_avg_pool
from ..._ops.pooling import pool_out_size
from ...backend.dtypes import refuse_limited_unsigned

__all__ = ["max_pool1d", "max_pool2d", "max_pool1d_with_indices", "max_pool2d_with_indices",
           "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool1d_with_indices",
           "adaptive_max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices",
           "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices"]


def _tuple(value, nd, name, allow_none=False, either="either "):
    if value is None and allow_none:
        return None
    if isinstance(value, int):
        return (value,) * nd
    value = tuple(value)
    if len(value) == 1:
        return value * nd
    if len(value) != nd:
        raise RuntimeError(f"{name} must {either}be a single int, or a tuple of "
                           f"{('one', 'two', 'three')[nd - 1]} ints")
    return value


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _check_geometry(input, ksize, stride, padding, dilation, ceil_mode, name):
    if any(s == 0 for s in stride):
        raise RuntimeError("stride should not be zero")
    for k, p, d in zip(ksize, padding, dilation):
        if p > (d * (k - 1) + 1) // 2:
            if name == "max_pool1d":
                raise RuntimeError(f"max_pool1d() padding should be at most half of kernel "
                                   f"size, but got padding={p} and kernel_size={k}")
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    spatial = tuple(input.shape[-len(ksize):])
    out = tuple(pool_out_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in
                zip(spatial, ksize, stride, padding, dilation))
    if any(o <= 0 for o in out):
        if name == "max_pool1d":
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {out[0]}")
        c = input.shape[-len(ksize) - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + spatial))}). "
                           f"Calculated output size: ({'x'.join(map(str, (c,) + out))}). "
                           f"Output size is too small")


def _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, nd, name,
              need_indices=True):
    dim = input.dim()
    # PyTorch: the batch dim (of a batched input) may be 0, no other dim may
    empty = any(n == 0 for n in input.shape[1 if dim == nd + 2 else 0:])
    if dim not in (nd + 1, nd + 2) or empty:
        if nd == 1:
            raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional "
                               f"0 dim batch size for input, but got:{_sizes(input.shape)}")
        if dim not in (nd + 1, nd + 2):
            raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected "
                               f"for input")
        if nd == 3:
            _empty_3d(input, "max_pool3d_with_indices_out_cpu_template()")
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{_sizes(input.shape)}")
    pre = "max_pool3d" if nd == 3 else "max_pool2d"
    ksize = _tuple(kernel_size, nd, f"{pre}: kernel_size")
    stride = ksize if stride is None or stride == [] or stride == () else \
        _tuple(stride, nd, f"{pre}: stride")
    padding = _tuple(padding, nd, f"{pre}: padding")
    dilation = _tuple(dilation, nd, f"{pre}: dilation")
    if nd == 3 and any(d <= 0 for d in dilation):
        raise RuntimeError("dilation should be greater than zero, but got dilationT: {} "
                           "dilationH: {} dilationW: {}".format(*dilation))
    _check_geometry(input, ksize, stride, padding, dilation, ceil_mode, name)
    # PyTorch's pooling kernels have no uint16/32/64 form (1-D with indices: the 2-D one's)
    if nd > 1 or not need_indices:
        refuse_limited_unsigned(input._data.dtype, f"max_pool{nd}d" if nd > 1 else
                                "max_pool1d_impl")
    if nd == 1:  # as PyTorch: a 2-D pool over (..., 1, L), so the graph names match
        out, idx = _max_pool(input.unsqueeze(-2), (1,) + ksize, (1,) + stride,
                             (0,) + padding, (1,) + dilation, ceil_mode, 2, name,
                             need_indices)
        return out.squeeze(-2), None if idx is None else idx.squeeze(-2)
    return max_pool(input, ksize, stride, padding, dilation, ceil_mode, need_indices)


def _empty_3d(input, name):
    """PyTorch's error for a 3-D pooling input with an empty non-batch dim."""
    raise RuntimeError(f"{name}: Expected input's non-batch dimensions to have positive length, "
                       f"but input has a shape of {_sizes(input.shape)} and non-batch dimension "
                       f"0 has length zero!")


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1-D max pooling returning (values, indices)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2-D max pooling returning (values, indices flattened per channel as h * W + w)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d")


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """1-D max pooling over (N, C, L) or (C, L); with ``return_indices`` also the argmax."""
    out = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 1, "max_pool1d",
                    return_indices)
    return out if return_indices else out[0]


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling over (N, C, H, W) or (C, H, W); stride defaults to kernel_size."""
    out = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 2, "max_pool2d",
                    return_indices)
    return out if return_indices else out[0]


def _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, nd, name):
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {dim}-dimensional tensor "
                               f"for argument #1 'self' (while checking arguments for "
                               f"avg_pool1d)")
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           f"input")
    pre, either = ("avg_pool3d", "") if nd == 3 else ("avg_pool2d", "either ")
    ksize = _tuple(kernel_size, nd, f"{pre}: kernel_size", either=either)
    stride = ksize if stride is None or stride == [] or stride == () else \
        _tuple(stride, nd, f"{pre}: stride", either=either)
    padding = _tuple(padding, nd, f"{pre}: padding", either=either)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    if nd == 3:
        if any(s == 0 for s in stride):
            raise RuntimeError("stride should not be zero")
        if any(n == 0 for n in input.shape[dim - 4:]):
            _empty_3d(input, "avg_pool3d()")
        spatial = tuple(input.shape[-3:])
        if any(n < k for n, k in zip(spatial, ksize)):
            raise RuntimeError("input image (T: {} H: {} W: {}) smaller than kernel size "
                               "(kT: {} kH: {} kW: {})".format(*spatial, *ksize))
    _check_geometry(input, ksize, stride, padding, (1,) * nd, ceil_mode, name)
    refuse_limited_unsigned(input._data.dtype, "avg_pool3d_out_frame" if nd == 3 else
                            "avg_pool2d")
    if nd == 1:  # as PyTorch: a 2-D pool over (..., 1, L)
        return _avg_pool(input.unsqueeze(-2), (1,) + ksize, (1,) + stride, (0,) + padding,
                         ceil_mode, count_include_pad, divisor_override, 2, name).squeeze(-2)
    return avg_pool(input, ksize, stride, padding, ceil_mode, count_include_pad,
                    divisor_override)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling over (N, C, L) or (C, L)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad, None,
                     1, "avg_pool1d")


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling over (N, C, H, W) or (C, H, W)."""
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 2, "avg_pool2d")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3-D max pooling returning (values, indices flattened per channel as (t * H + h) * W + w)."""
    return _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3, "max_pool3d")


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """3-D max pooling over (N, C, D, H, W) or (C, D, H, W); stride defaults to kernel_size.

    >>> import ember
    >>> ember.nn.functional.max_pool3d(ember.arange(8.).reshape(1, 1, 2, 2, 2), 2).flatten()
    tensor([7.])
    """
    out = _max_pool(input, kernel_size, stride, padding, dilation, ceil_mode, 3, "max_pool3d",
                    return_indices)
    return out if return_indices else out[0]


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling over (N, C, D, H, W) or (C, D, H, W).

    >>> import ember
    >>> ember.nn.functional.avg_pool3d(ember.arange(8.).reshape(1, 1, 2, 2, 2), 2).flatten()
    tensor([3.5000])
    """
    return _avg_pool(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, 3, "avg_pool3d")


def _adaptive_out(input, output_size, nd, name):
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        if nd == 1:
            raise RuntimeError(f"Expected 2 to 3 dimensions, but got {dim}-dimensional tensor "
                               f"for argument #1 'self' (while checking arguments for {name})")
        sep = ": " if "max" in name else " "
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}"
                           f"{_sizes(input.shape)}")
    if isinstance(output_size, int):
        output_size = (output_size,) * nd
    output_size = tuple(output_size)
    if len(output_size) != nd:
        if nd == 3 and "max" in name:
            raise RuntimeError(f"{name}(): internal error: output_size.size() must be 3")
        raise RuntimeError(f"{name}: output_size must be {nd}")
    if nd == 3:
        for i in range(dim - 3, dim):
            if input.shape[i] == 0:
                raise RuntimeError(f"{name}(): Expected input to have non-zero size for "
                                   f"non-batch dimensions, but input has sizes "
                                   f"{_sizes(input.shape)} with dimension {i} being empty")
    spatial = input.shape[-nd:]
    return tuple(s if o is None else int(o) for o, s in zip(output_size, spatial))


def _adaptive_avg(input, output_size, nd, name):
    out = _adaptive_out(input, output_size, nd, name)
    if nd == 1:  # as PyTorch: a 2-D pool over (..., 1, L)
        return _adaptive_avg(input.unsqueeze(-2), (1,) + out, 2, name).squeeze(-2)
    if all(o == 1 for o in out):  # PyTorch takes the mean here
        return input.mean(dim=tuple(range(-nd, 0)), keepdim=True)
    refuse_limited_unsigned(input._data.dtype, "adaptive_avg_pool3d_cpu" if nd == 3 else
                            "adaptive_avg_pool2d")
    return adaptive_avg_pool(input, out)


def adaptive_avg_pool1d(input, output_size):
    """1-D adaptive average pooling to ``output_size`` positions."""
    return _adaptive_avg(input, output_size, 1, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """2-D adaptive average pooling; ``output_size`` an int or pair (None keeps the size)."""
    return _adaptive_avg(input, output_size, 2, "adaptive_avg_pool2d")


def _adaptive_max(input, output_size, nd, name):
    out = _adaptive_out(input, output_size, nd, name)
    if nd == 1:  # as PyTorch: a 2-D pool over (..., 1, L)
        vals, idx = _adaptive_max(input.unsqueeze(-2), (1,) + out, 2, name)
        return vals.squeeze(-2), idx.squeeze(-2)
    refuse_limited_unsigned(input._data.dtype, "adaptive_max_pool3d_cpu" if nd == 3 else
                            "adaptive_max_pool2d")
    return adaptive_max_pool(input, out)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """1-D adaptive max pooling returning (values, indices)."""
    return _adaptive_max(input, output_size, 1, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """2-D adaptive max pooling returning (values, indices)."""
    return _adaptive_max(input, output_size, 2, "adaptive_max_pool2d")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """1-D adaptive max pooling; with ``return_indices`` also the argmax."""
    out = _adaptive_max(input, output_size, 1, "adaptive_max_pool1d")
    return out if return_indices else out[0]


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """2-D adaptive max pooling; with ``return_indices`` also the argmax."""
    out = _adaptive_max(input, output_size, 2, "adaptive_max_pool2d")
    return out if return_indices else out[0]


def adaptive_avg_pool3d(input, output_size):
    """3-D adaptive average pooling; ``output_size`` an int or triple (None keeps the size).

    >>> import ember
    >>> ember.nn.functional.adaptive_avg_pool3d(ember.ones(1, 2, 3, 4, 5), 1).shape
    ember.Size([1, 2, 1, 1, 1])
    """
    return _adaptive_avg(input, output_size, 3, "adaptive_avg_pool3d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """3-D adaptive max pooling returning (values, indices)."""
    return _adaptive_max(input, output_size, 3, "adaptive_max_pool3d")


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """3-D adaptive max pooling; with ``return_indices`` also the argmax.

    >>> import ember
    >>> ember.nn.functional.adaptive_max_pool3d(ember.arange(8.).reshape(1, 2, 2, 2), 1)
    tensor([[[[7.]]]])
    """
    out = _adaptive_max(input, output_size, 3, "adaptive_max_pool3d")
    return out if return_indices else out[0]
