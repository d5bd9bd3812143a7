"""Fractional max pooling (Graham, 2014): max pooling over windows of a fixed size placed
pseudo-randomly so the output has any size between the input's and the input's over the
kernel's. The windows' maxima are found by ``ember._ops.fractional_pool``; the values are a
gather of the input at them, so the gradient reaches each window's maximum."""
from ... import _functions as _F
from ..._creation import rand as _rand
from ..._ops.fractional_pool import fractional_max_indices as _indices
from ..._tensor import Tensor as _Tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices",
           "fractional_max_pool3d", "fractional_max_pool3d_with_indices"]

_DIM_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _tuple(value, nd):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * nd


def _sizes(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def _fractional(input, kernel_size, output_size, output_ratio, samples, nd):
    name = f"fractional_max_pool{nd}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an "
                         "output_ratio")
    where = name + ("()" if nd == 2 else "_out()")
    if output_size is None:
        if nd == 2:
            # as in PyTorch's F: a 2-d ratio must have a length (a bare float raises)
            if len(output_ratio) > 2:
                raise ValueError(f"{name} requires output_ratio to either be a single Int or "
                                 "tuple of Ints.")
            ratio = output_ratio
        else:
            ratio = _tuple(output_ratio, nd)
        output_size = [int(input.size(-nd + d) * ratio[d]) for d in range(nd)]
    if samples is None:  # drawn before the shape checks, as PyTorch's F does
        batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = _rand(batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    kernel, output = _tuple(kernel_size, nd), _tuple(output_size, nd)
    for label, value in (("kernel_size", kernel), ("output_size", output)):
        if len(value) not in (1, nd):
            raise RuntimeError(f"{name}: {label} must either be a single Int or tuple of Ints")
    kernel, output = kernel * nd if len(kernel) == 1 else kernel, \
        output * nd if len(output) == 1 else output
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{_sizes(input.shape)}")
    unbatched = input.ndim == nd + 1
    x = input.unsqueeze(0) if unbatched else input
    spatial = x.shape[2:]
    for d in range(nd):
        fits = output[d] + kernel[d] - 1 <= spatial[d] if nd == 2 else \
            output[d] + kernel[d] - 1 < spatial[d]
        if not fits:
            dim = _DIM_NAMES[nd][d]
            raise RuntimeError(f"{where}: pool {dim} {kernel[d]} too large relative to input "
                               f"{dim} {spatial[d]}")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if samples.shape[0] < x.shape[0]:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != x.shape[1]:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    idx = _Tensor._make(_indices(x, samples, kernel, output))
    flat = x.flatten(2)
    values = _F.gather(flat, 2, idx.flatten(2)).reshape(idx.shape)
    if unbatched:
        return values.squeeze(0), idx.squeeze(0)
    return values, idx


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Fractional max pooling over (N, C, H, W) or (C, H, W), returning the values and the
    flat in-plane positions of the maxima.

    >>> import ember, ember.nn.functional as F
    >>> x = ember.arange(16.).reshape(1, 1, 4, 4)
    >>> F.fractional_max_pool2d_with_indices(x, 2, output_size=2,
    ...                                      _random_samples=ember.full((1, 1, 2), 0.5))[0]
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, H, W) or (C, H, W); ``output_size`` or
    ``output_ratio`` sets the output's size, ``_random_samples`` (N, C, 2) in [0, 1) the
    windows (drawn from ember's generator when not given).

    >>> import ember, ember.nn.functional as F
    >>> x = ember.arange(16.).reshape(1, 1, 4, 4)
    >>> F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5),
    ...                         _random_samples=ember.full((1, 1, 2), 0.5))
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return out if return_indices else out[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W), returning the values and
    the flat in-volume positions of the maxima.

    >>> import ember, ember.nn.functional as F
    >>> x = ember.arange(27.).reshape(1, 1, 3, 3, 3)
    >>> F.fractional_max_pool3d_with_indices(x, 2, output_size=1,
    ...                                      _random_samples=ember.zeros(1, 1, 3))[1]
    tensor([[[[[26]]]]])
    """
    return _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """Fractional max pooling over (N, C, T, H, W) or (C, T, H, W); ``_random_samples`` is
    (N, C, 3).

    >>> import ember, ember.nn.functional as F
    >>> x = ember.arange(27.).reshape(1, 1, 3, 3, 3)
    >>> F.fractional_max_pool3d(x, 2, output_size=1, _random_samples=ember.zeros(1, 1, 3))
    tensor([[[[[26.]]]]])
    """
    out = _fractional(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return out if return_indices else out[0]
