"""ATen's functional forms of nn ops that programs call from the ``torch`` namespace
(``torch.native_layer_norm``, ``torch.convolution``, ``torch.grid_sampler``, ...), which
``ember/__init__`` re-exports. Each checks its ATen arguments and runs ``ember.nn.functional``'s
op, so values and gradients are F's; the extra results (the normalization statistics, the
dropout mask) are computed beside it.

They live in nn, not in ``_functions``, because they compose F's ops (a later layer).
ATen's integer enums are read as F's strings: ``grid_sampler``'s interpolation (0
bilinear, 1 nearest, 2 bicubic) and padding (0 zeros, 1 border, 2 reflection), ``ctc_loss``'s
reduction (0 none, 1 mean, 2 sum).
"""
from __future__ import annotations

from .._creation import _type_name
from .._tensor import Tensor
from .._torch_function import wrap_namespace as _wrap_namespace
from .._typing import Sequence
from ..autograd.grad_mode import no_grad
from ..backend import dtypes as _dtypes
from . import functional as F
from ._toplevel import _check_p, _reduction
from .functional import _dropout as _D, _grid, _normalization as _N
from .utils.weight_norm import norm_except_dim as _norm_except_dim

__all__ = ["native_layer_norm", "native_batch_norm", "native_group_norm", "native_dropout",
           "native_channel_shuffle", "feature_dropout", "feature_dropout_", "convolution",
           "conv_tbc", "grid_sampler", "grid_sampler_2d", "grid_sampler_3d",
           "affine_grid_generator", "ctc_loss", "norm_except_dim"]


# ---- normalization: F's result and the statistics ATen returns beside it ----------------------
def _stats_dtype(x, *params):
    """The statistics' dtype: float32 for a float16/bfloat16 input with float32 parameters
    (PyTorch's "mixed" kernels), else the input's."""
    mixed = x.dtype in _N._REDUCED and any(p is not None and p.dtype is _dtypes.float32
                                           for p in params)
    return _dtypes.float32 if mixed else x.dtype


def _stats(x, dims, eps, dtype):
    """Mean and 1 / sqrt(biased variance + eps) of ``x`` over ``dims`` (kept), computed in
    float32 for float16/bfloat16 (PyTorch's opmath) and returned in ``dtype``."""
    xc = x.to(_dtypes.float32) if x.dtype in _N._REDUCED else x
    mean = xc.mean(dims, keepdim=True)
    centered = xc - mean
    rstd = ((centered * centered).mean(dims, keepdim=True) + eps).rsqrt()
    return mean.to(dtype), rstd.to(dtype)


def native_layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None,
                      bias: Tensor | None, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``F.layer_norm`` with its statistics: ``(out, mean, rstd)``, mean and rstd of shape
    ``input.shape[:-k] + (1,) * k`` (no gradient flows through them, as in PyTorch).

    >>> import ember
    >>> out, mean, rstd = ember.native_layer_norm(ember.tensor([[1., 3.]]), [2], None, None, 0.)
    >>> out, mean, rstd
    (tensor([[-1.,  1.]]), tensor([[2.]]), tensor([[1.]]))
    """
    out = F.layer_norm(input, _N._normalized_shape(normalized_shape, "native_layer_norm"),
                       weight, bias, eps)
    k = len(normalized_shape)
    with no_grad():
        mean, rstd = _stats(input, tuple(range(input.dim() - k, input.dim())), eps,
                            _stats_dtype(input, weight, bias))
    return out, mean, rstd


def native_batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                      running_mean: Tensor | None, running_var: Tensor | None, training: bool,
                      momentum: float, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``F.batch_norm`` (running statistics updated in training) with ``(save_mean,
    save_invstd)``: the batch's per-channel mean and 1 / sqrt(biased var + eps) in training,
    empty tensors in evaluation (no gradient flows through them, as in PyTorch).

    >>> import ember
    >>> out, mean, invstd = ember.native_batch_norm(ember.tensor([[1.], [3.]]), None, None,
    ...                                             None, None, True, 0.1, 0.)
    >>> out.flatten(), mean, invstd
    (tensor([-1.,  1.]), tensor([2.]), tensor([1.]))
    """
    c = input.shape[1] if input.dim() >= 2 else 0
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    if not training and (running_mean is None or running_var is None):
        which = "running_mean" if running_mean is None else "running_var"
        raise RuntimeError(f"{which} must be defined in evaluation mode")
    # F.batch_norm's own checks (eps, one value per channel) are Python-level ones ATen lacks
    out = _N._in_opmath(_N._opmath(input, weight, bias, running_mean, running_var),
                        _N._batch_norm, input, weight, bias, running_mean, running_var,
                        training, momentum, eps)
    dtype = _stats_dtype(input, weight, bias, running_mean, running_var)
    if not training:
        return out, input.new_empty(0, dtype=dtype), input.new_empty(0, dtype=dtype)
    with no_grad():
        dims = (0,) + tuple(range(2, input.dim()))
        mean, invstd = _stats(input, dims, eps, dtype)
    return out, mean.reshape(c), invstd.reshape(c)


_NUMEL_MESSAGE = ("Expected X.numel() == N * C * HxW to be true, but got false.  (Could this "
                  "error message be improved?  If so, please report an enhancement request to "
                  "PyTorch.)")


def native_group_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None, N: int, C: int,
                      HxW: int, group: int, eps: float) -> tuple[Tensor, Tensor, Tensor]:
    """``F.group_norm`` with each (sample, group)'s mean and rstd, both ``(N, group)`` and,
    as in PyTorch, differentiable.

    >>> import ember
    >>> out, mean, rstd = ember.native_group_norm(ember.tensor([[1., 3.]]), None, None,
    ...                                           1, 2, 1, 1, 0.)
    >>> out, mean, rstd
    (tensor([[-1.,  1.]]), tensor([[2.]]), tensor([[1.]]))
    """
    if input.numel() != N * C * HxW:
        raise RuntimeError(_NUMEL_MESSAGE)
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _stats(input.reshape(N, group, -1), (2,), eps,
                        _stats_dtype(input, weight, bias))
    return out, mean.reshape(N, group), rstd.reshape(N, group)


# ---- dropout ----------------------------------------------------------------------------------
def native_dropout(input: Tensor, p: float, train: bool | None) -> tuple[Tensor, Tensor]:
    """Dropout with its mask: ``(input * mask / (1 - p), mask)``, mask a bool tensor of kept
    elements. ``train`` False (None counts as True) keeps all: a differentiable copy of input
    and an all-True mask.

    >>> import ember
    >>> ember.native_dropout(ember.ones(2), 0.5, False)
    (tensor([1., 1.]), tensor([True, True]))
    """
    if input.numel() == 0:  # PyTorch's kernel then returns a float32 mask
        return input.clone(), input.new_empty(input.shape, dtype=_dtypes.float32)
    if train is False:
        return input.clone(), input.new_ones(input.shape, dtype=_dtypes.bool_)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype.scalar_name}")
    with no_grad():
        if p < 1.0:  # drawn in the real dtype: a complex input's mask is real too
            draw = input.new_empty(input.shape, dtype=input.dtype.to_real())
            mask = draw.bernoulli_(1 - p).to(_dtypes.bool_)
        else:
            mask = input.new_zeros(input.shape, dtype=_dtypes.bool_)
    scale = 0.0 if p == 1.0 else 1.0 / (1.0 - p)
    return input * mask * scale, mask


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Zero whole channels (dim 1) of input with at least 2 dims with probability ``p`` in
    training, scaling the rest by 1 / (1 - p) (``F.dropout2d`` & co. for any rank).

    >>> import ember
    >>> ember.feature_dropout(ember.ones(1, 2, 2), 0.5, False)
    tensor([[[1., 1.],
             [1., 1.]]])
    """
    _check_p(p)
    return _D._feature_dropout(input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``feature_dropout`` in place: input changed and returned.

    >>> import ember
    >>> x = ember.ones(1, 2, 2); ember.feature_dropout_(x, 0.5, True) is x
    True
    """
    _check_p(p)
    _D._feature_dropout(input, p, train, True)
    return input


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``channel_shuffle``'s kernel: channels (dim 1) in ``groups`` groups, interleaved.

    >>> import ember
    >>> ember.native_channel_shuffle(ember.arange(4.).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    return F.channel_shuffle(input, groups)


# ---- convolution ------------------------------------------------------------------------------
def _int_list(value, name, position, nd):
    """ATen's ``SymInt[]`` argument of ``convolution``: a list or tuple of ints, one per
    spatial dim or a single one for all of them."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"convolution(): argument '{name}' (position {position}) must be tuple "
                        f"of ints, not {_type_name(value)}")
    for pos, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"convolution(): argument '{name}' (position {position}) must be "
                            f"tuple of ints, but found element of type {_type_name(v)} at pos "
                            f"{pos}")
    if len(value) not in (1, nd):
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {nd} "
                           f"values to match the convolution dimensions, but got {name}="
                           f"{list(value)}")
    return tuple(value) * nd if len(value) == 1 else tuple(value)


_CONV = {1: (F.conv1d, F.conv_transpose1d), 2: (F.conv2d, F.conv_transpose2d),
         3: (F.conv3d, F.conv_transpose3d)}


def convolution(input: Tensor, weight: Tensor, bias: Tensor | None, stride: Sequence[int],
                padding: Sequence[int], dilation: Sequence[int], transposed: bool,
                output_padding: Sequence[int], groups: int) -> Tensor:
    """The convolution every ``conv*d`` and ``conv_transpose*d`` is: 1, 2 or 3 spatial dims
    as the weight has, transposed or not; every list argument holds one value per spatial dim
    or one for all. The input must be batched.

    >>> import ember
    >>> ember.convolution(ember.ones(1, 1, 4), ember.ones(1, 1, 2), None, [1], [0], [1],
    ...                   False, [0], 1)
    tensor([[[2., 2., 2.]]])
    """
    nd = weight.dim() - 2
    lists = [_int_list(v, name, pos, max(nd, 1)) for v, name, pos in (
        (stride, "stride", 4), (padding, "padding", 5), (dilation, "dilation", 6),
        (output_padding, "output_padding", 8))]
    if nd not in _CONV:
        raise RuntimeError(f"expected a weight of 3, 4 or 5 dimensions (1, 2 or 3 spatial "
                           f"ones), but got weight of size {list(weight.shape)}")
    if input.dim() != weight.dim():
        raise RuntimeError(f"Expected {weight.dim()}-dimensional input for {weight.dim()}-"
                           f"dimensional weight {list(weight.shape)}, but got {input.dim()}-"
                           f"dimensional input of size {list(input.shape)} instead")
    stride, padding, dilation, output_padding = lists
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    conv, conv_transpose = _CONV[nd]
    if transposed:
        return conv_transpose(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)
    return conv(input, weight, bias, stride, padding, dilation, groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """A 1-d convolution over time of (time, batch, in_channels) input with a
    (kernel_width, in_channels, out_channels) weight, ``pad`` steps of zeros (negative:
    steps cut) at both ends; the result is (time, batch, out_channels).

    >>> import ember
    >>> ember.conv_tbc(ember.ones(3, 1, 1), ember.ones(2, 1, 1), ember.zeros(1)).flatten()
    tensor([2., 2.])
    """
    if not isinstance(bias, Tensor):
        raise TypeError(f"conv_tbc(): argument 'bias' (position 3) must be Tensor, not "
                        f"{_type_name(bias)}")
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    if pad < 0:  # F.conv1d takes no negative padding: cut those steps first
        input = input[-pad:input.shape[0] + pad]
        pad = 0
    t, b = input.shape[0], input.shape[1]
    if t + 2 * pad < weight.shape[0]:  # no full window: an empty result, as PyTorch's
        out = (input.sum() * 0 + weight.sum() * 0 + bias.sum() * 0).expand(0, b,
                                                                          weight.shape[2])
        return out.contiguous()
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1).contiguous()


# ---- sampling grids ---------------------------------------------------------------------------
_INTERPOLATION = {0: "bilinear", 1: "nearest", 2: "bicubic"}
_PADDING = {0: "zeros", 1: "border", 2: "reflection"}


def _sampler(input, grid, interpolation_mode, padding_mode, align_corners, nd=None):
    if interpolation_mode not in _INTERPOLATION:
        raise RuntimeError(f"grid_sampler(): expected interpolation_mode to be 0 (bilinear), "
                           f"1 (nearest) or 2 (bicubic), but got {interpolation_mode}")
    if padding_mode not in _PADDING:
        raise RuntimeError(f"grid_sampler(): expected padding_mode to be 0 (zeros), 1 (border) "
                           f"or 2 (reflection), but got {padding_mode}")
    mode, padding = _INTERPOLATION[interpolation_mode], _PADDING[padding_mode]
    if nd is not None:  # PyTorch's common checks first, then the rank of the 2-d or 3-d kernel
        _grid._check_grid_sample(input, grid, mode, padding)
        if input.dim() != nd or grid.dim() != nd:
            raise RuntimeError(f"grid_sampler(): expected {nd}D input and grid with same number "
                               f"of dimensions, but got input with sizes {list(input.shape)} "
                               f"and grid with sizes {list(grid.shape)}")
    return F.grid_sample(input, grid, mode, padding, bool(align_corners))


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``F.grid_sample`` with ATen's integer modes: interpolation 0 bilinear, 1 nearest,
    2 bicubic; padding 0 zeros, 1 border, 2 reflection.

    >>> import ember
    >>> x = ember.arange(4.).reshape(1, 1, 2, 2)
    >>> ember.grid_sampler(x, ember.zeros(1, 1, 1, 2), 0, 0, False)
    tensor([[[[1.5000]]]])
    """
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of 4-D input and grid only.

    >>> import ember
    >>> x = ember.arange(4.).reshape(1, 1, 2, 2)
    >>> ember.grid_sampler_2d(x, ember.full((1, 1, 1, 2), 0.5), 1, 0, True)
    tensor([[[[3.]]]])
    """
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners, 4)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """``grid_sampler`` of 5-D input and grid only (no bicubic).

    >>> import ember
    >>> x = ember.ones(1, 1, 2, 2, 2)
    >>> ember.grid_sampler_3d(x, ember.zeros(1, 1, 1, 1, 3), 0, 0, False).flatten()
    tensor([1.])
    """
    return _sampler(input, grid, interpolation_mode, padding_mode, align_corners, 5)


def affine_grid_generator(theta: Tensor, size: Sequence[int], align_corners: bool) -> Tensor:
    """``F.affine_grid``: the (N, *spatial, 2 or 3) grid of ``theta`` (N, 2, 3) or (N, 3, 4)
    for an output of ``size`` (N, C, H, W) or (N, C, D, H, W).

    >>> import ember
    >>> theta = ember.tensor([[[1., 0., 0.], [0., 1., 0.]]])
    >>> ember.affine_grid_generator(theta, [1, 1, 1, 2], True)
    tensor([[[[-1.,  0.],
              [ 1.,  0.]]]])
    """
    size = tuple(size)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    nd = len(size) - 2
    # PyTorch multiplies the base grid by theta^T in one batched product: its error
    if theta.dim() == 3 and (theta.shape[0] != size[0] or theta.shape[2] != nd + 1):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{theta.shape[0]}, "
                           f"{theta.shape[2]}].")
    return F.affine_grid(theta, size, bool(align_corners))


# ---- losses and norms -------------------------------------------------------------------------
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: int = 0,
             zero_infinity: bool = False) -> Tensor:
    """``F.ctc_loss`` with ATen's integer reduction (0 none, 1 mean, 2 sum). ATen's schema
    says mean by default, but PyTorch's top-level function returns the per-sample losses
    unless given one, as its other top-level losses do: so does this.

    >>> import ember
    >>> lp = ember.zeros(2, 1, 2).log_softmax(2)
    >>> ember.ctc_loss(lp, ember.tensor([[1]]), [2], [1], 0, 2)
    tensor(0.2877)
    """
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      _reduction(reduction, "ctc_loss", 6), zero_infinity)


def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0) -> Tensor:
    """The ``pow``-norm of ``v`` over every dim but ``dim``, kept as size-1 dims (``dim=-1``:
    over all of ``v``, as one number); weight normalization's norm.

    >>> import ember
    >>> ember.norm_except_dim(ember.tensor([[3., 4.], [0., 1.]]), 2, 0)
    tensor([[5.],
            [1.]])
    """
    for name, value, position in (("pow", pow, 2), ("dim", dim, 3)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"norm_except_dim(): argument '{name}' (position {position}) must "
                            f"be int, not {_type_name(value)}")
    if dim != -1:
        v.size(dim)  # PyTorch's IndexError for a dim out of range
    return _norm_except_dim(v, pow, dim)


_wrap_namespace(globals(), __all__, "ember")
