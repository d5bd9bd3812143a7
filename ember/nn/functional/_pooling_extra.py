"""Power-average pooling (``lp_pool1d/2d/3d``) and the partial inverse of max pooling
(``max_unpool1d/2d/3d``), composed of ember ops as in ``torch.nn.functional``."""
import math

from ... import _creation, _functions as _F
from ...backend import dtypes as _dt
from ...backend.dtypes import SCALAR_NAMES as _TYPE_NAMES
from ...backend.meta import is_meta as _is_meta
from ._pooling import avg_pool1d, avg_pool2d, avg_pool3d, max_pool1d, max_pool2d, max_pool3d

__all__ = ["lp_pool1d", "lp_pool2d", "lp_pool3d", "max_unpool1d", "max_unpool2d",
           "max_unpool3d"]

_INF = float("inf")


def _ntuple(value, nd):
    if isinstance(value, (tuple, list)):
        return tuple(value)
    return (value,) * nd


def _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, nd, avg, mx):
    if isinstance(norm_type, (int, float)) and abs(norm_type) == _INF:
        if norm_type > 0:
            return mx(input.abs(), kernel_size, stride, 0, 1, ceil_mode)
        return -mx(-input.abs(), kernel_size, stride, 0, 1, ceil_mode)
    if stride is not None:
        out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    else:
        out = avg(input.pow(norm_type), kernel_size, padding=0, ceil_mode=ceil_mode)
    # the average times the window size is the sum; negative sums (odd powers) become 0
    count = math.prod(_ntuple(kernel_size, nd))
    return (_F.sign(out) * _F.relu(_F.abs(out))).mul(count).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x**p) ** (1/p)`` over the last dim of (N, C, L) or (C, L).

    >>> import ember, ember.nn.functional as F
    >>> F.lp_pool1d(ember.tensor([[3.0, 4.0, 1.0, 0.0]]), 2, 2)
    tensor([[5., 1.]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 1, avg_pool1d, max_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x**p) ** (1/p)`` over the last two dims; ``p`` may be
    ``inf`` (max pooling of ``|x|``).

    >>> import ember, ember.nn.functional as F
    >>> F.lp_pool2d(ember.tensor([[[3.0, 0.0], [0.0, 4.0]]]), 2, 2)
    tensor([[[5.]]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 2, avg_pool2d, max_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """``(sum over each window of x**p) ** (1/p)`` over the last three dims.

    >>> import ember, ember.nn.functional as F
    >>> F.lp_pool3d(ember.ones(1, 2, 2, 2), 1, 2)
    tensor([[[[8.]]]])
    """
    return _lp_pool(input, norm_type, kernel_size, stride, ceil_mode, 3, avg_pool3d, max_pool3d)


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _unpool_output_size(input, ksize, stride, padding, output_size):
    """The spatial output size: the pooled input's size by default, or ``output_size`` (its
    spatial dims, or all of them) when it is within one stride of that."""
    nd = len(ksize)
    default = [(input.shape[-nd + d] - 1) * stride[d] + ksize[d] - 2 * padding[d]
               for d in range(nd)]
    if output_size is None:
        size = default
    else:
        if len(output_size) == nd + 2:
            output_size = output_size[2:]
        if len(output_size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < output_size[d] < hi:
                raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be '
                                 f'between {lo} and {hi})')
        size = list(output_size)
    for d in range(nd):
        if size[d] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{d}]={size[d]}")
    return [int(s) for s in size]


def _unpool(input, indices, out_size, nd):
    """Each value of ``input`` written at its flat spatial index into zeros of
    ``out_size`` (the gradient gathers from those places)."""
    dim = input.dim()
    if dim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {dim} dimensions.")
    if indices.dtype is not _dt.int64:
        name = _TYPE_NAMES.get(indices.dtype.name, indices.dtype.name)
        raise RuntimeError(f"elements in indices should be type int64 but got: {name}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError("Expected shape of indices to be same as that of the input tensor "
                           f"({_sizes(input.shape)}) but got indices tensor with shape: "
                           f"{_sizes(indices.shape)}")
    for d in range(dim - nd - 1, dim):
        if input.shape[d] == 0:
            raise RuntimeError(f"max_unpooling{nd}d_forward_out_cpu(): Expected input to have "
                               "non-zero size for non-batch dimensions, but got "
                               f"{_sizes(input.shape)} with dimension {d} being empty.")
    lead = tuple(input.shape[:-nd])
    plane = math.prod(out_size)
    flat = indices.reshape(lead + (-1,))
    if not _is_meta(flat._data) and flat.numel():
        bad = (flat < 0) | (flat >= plane)
        if bool(_F.any(bad)):
            # PyTorch's kernel reports the last bad index it meets
            last = flat.reshape(-1)[bad.reshape(-1).nonzero()[-1, 0]].item()
            raise RuntimeError(f"Found an invalid max index: {last} (output volumes are of "
                               f"size {'x'.join(map(str, out_size))})")
    zeros = _creation.zeros(lead + (plane,), dtype=input.dtype, device=input.device)
    return zeros.scatter(-1, flat, input.reshape(lead + (-1,))).reshape(lead + tuple(out_size))


def _unpool_args(kernel_size, stride, padding, nd):
    ksize = _ntuple(kernel_size, nd)
    return ksize, ksize if stride is None else _ntuple(stride, nd), _ntuple(padding, nd)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool1d``: its outputs put back where its ``indices`` say,
    zeros elsewhere.

    >>> import ember, ember.nn.functional as F
    >>> out, idx = F.max_pool1d(ember.tensor([[1.0, 3.0, 4.0, 2.0]]), 2, return_indices=True)
    >>> F.max_unpool1d(out, idx, 2)
    tensor([[0., 3., 4., 0.]])
    """
    ksize, stride, padding = _unpool_args(kernel_size, stride, padding, 1)
    size = _unpool_output_size(input, ksize, stride, padding, output_size)
    # as PyTorch, the 2-D unpooling of (..., L, 1)
    return _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), size + [1], 2).squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool2d``: its outputs put back where its ``indices`` say,
    zeros elsewhere; ``output_size`` picks among the sizes that pool to the input's.

    >>> import ember, ember.nn.functional as F
    >>> x = ember.tensor([[[1.0, 2.0], [4.0, 3.0]]])
    >>> out, idx = F.max_pool2d(x, 2, return_indices=True)
    >>> F.max_unpool2d(out, idx, 2)
    tensor([[[0., 0.],
             [4., 0.]]])
    """
    ksize, stride, padding = _unpool_args(kernel_size, stride, padding, 2)
    size = _unpool_output_size(input, ksize, stride, padding, output_size)
    return _unpool(input, indices, size, 2)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Partial inverse of ``max_pool3d``: its outputs put back where its ``indices`` say.

    >>> import ember, ember.nn.functional as F
    >>> out, idx = F.max_pool3d(ember.arange(8.0).view(1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(out, idx, 2).flatten()
    tensor([0., 0., 0., 0., 0., 0., 0., 7.])
    """
    ksize, stride, padding = _unpool_args(kernel_size, stride, padding, 3)
    size = _unpool_output_size(input, ksize, stride, padding, output_size)
    return _unpool(input, indices, size, 3)
