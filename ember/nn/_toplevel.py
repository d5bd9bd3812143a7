"""PyTorch's top-level forms of functional ops (``torch.conv2d``, ``torch.layer_norm``,
``torch.dropout``, ...), which ``ember/__init__`` re-exports: each calls
``ember.nn.functional``'s op with the top-level signature's arguments.

Those signatures are ATen's, and differ from ``F``'s: required ``train``/``training`` flags,
``batch_norm``'s weight and bias before the running statistics, ``embedding(weight,
indices)``, losses taking ``reduction`` as an int (0 none, 1 mean, 2 sum; none unless
given, as PyTorch's top-level losses default to), pooling's
``stride=()`` meaning "the kernel size", and ``cudnn_enabled`` flags (nothing to do on a
CPU: accepted and unused, as PyTorch's CPU kernels do).
"""
from __future__ import annotations

from . import functional as F
from .._tensor import Tensor
from .._typing import Any, Number, Sequence
from ._embedding_bag import embedding_bag  # noqa: F401  (ATen's form, with its four results)

__all__ = [
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "avg_pool1d", "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
    "adaptive_avg_pool1d", "adaptive_max_pool1d", "dropout", "dropout_", "alpha_dropout",
    "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_", "layer_norm",
    "group_norm", "batch_norm", "instance_norm", "embedding", "pixel_shuffle",
    "pixel_unshuffle", "channel_shuffle", "prelu", "celu", "celu_", "selu", "selu_", "rrelu",
    "rrelu_", "threshold", "threshold_", "hardshrink", "bilinear", "cosine_similarity",
    "pairwise_distance", "pdist", "kl_div", "binary_cross_entropy_with_logits",
    "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss",
    "poisson_nll_loss", "triplet_margin_loss", "constant_pad_nd", "embedding_bag",
]

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(value, name, position):
    """ATen's int reduction as F's string."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name}(): argument 'reduction' (position {position}) must be int, "
                        f"not {type(value).__name__}")
    if value not in _REDUCTIONS:
        raise ValueError(f"{value} is not a valid value for reduction")
    return _REDUCTIONS[value]


def _check_p(p):
    """ATen's dropout check: a RuntimeError where F's is a ValueError."""
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def _stride(stride):
    """ATen's pooling stride: empty means the kernel size (F's None)."""
    return None if stride is None or (isinstance(stride, (tuple, list)) and not stride) \
        else stride


# ---- convolution ------------------------------------------------------------------------------
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: int | Sequence[int] = 1, padding: int | Sequence[int] | str = 0,
           dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    """``F.conv1d`` as ``torch.conv1d``.

    >>> import ember
    >>> ember.conv1d(ember.ones(1, 1, 4), ember.ones(1, 1, 2))
    tensor([[[2., 2., 2.]]])
    """
    return F.conv1d(input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: int | Sequence[int] = 1, padding: int | Sequence[int] | str = 0,
           dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    """``F.conv2d`` as ``torch.conv2d``.

    >>> import ember
    >>> ember.conv2d(ember.ones(1, 1, 3, 3), ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 1, 2, 2])
    """
    return F.conv2d(input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
           stride: int | Sequence[int] = 1, padding: int | Sequence[int] | str = 0,
           dilation: int | Sequence[int] = 1, groups: int = 1) -> Tensor:
    """``F.conv3d`` as ``torch.conv3d``.

    >>> import ember
    >>> ember.conv3d(ember.ones(1, 1, 2, 2, 2), ember.ones(1, 1, 2, 2, 2))
    tensor([[[[[8.]]]]])
    """
    return F.conv3d(input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                     output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """``F.conv_transpose1d`` as ``torch.conv_transpose1d``.

    >>> import ember
    >>> ember.conv_transpose1d(ember.ones(1, 1, 2), ember.ones(1, 1, 2))
    tensor([[[1., 2., 1.]]])
    """
    return F.conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                     output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """``F.conv_transpose2d`` as ``torch.conv_transpose2d``.

    >>> import ember
    >>> ember.conv_transpose2d(ember.ones(1, 1, 2, 2), ember.ones(1, 1, 2, 2)).shape
    ember.Size([1, 1, 3, 3])
    """
    return F.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,
                     stride: int | Sequence[int] = 1, padding: int | Sequence[int] = 0,
                     output_padding: int | Sequence[int] = 0, groups: int = 1,
                     dilation: int | Sequence[int] = 1) -> Tensor:
    """``F.conv_transpose3d`` as ``torch.conv_transpose3d``.

    >>> import ember
    >>> ember.conv_transpose3d(ember.ones(1, 1, 1, 1, 1), ember.ones(1, 2, 1, 1, 1)).shape
    ember.Size([1, 2, 1, 1, 1])
    """
    return F.conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                              dilation)


# ---- pooling ----------------------------------------------------------------------------------
def avg_pool1d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
    """``F.avg_pool1d`` as ``torch.avg_pool1d`` (``stride=()``: the kernel size).

    >>> import ember
    >>> ember.avg_pool1d(ember.tensor([[1.0, 3.0, 5.0, 7.0]]), 2)
    tensor([[2., 6.]])
    """
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


def max_pool1d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool1d`` as ``torch.max_pool1d`` (values only).

    >>> import ember
    >>> ember.max_pool1d(ember.tensor([[1.0, 3.0, 5.0, 2.0]]), 2)
    tensor([[3., 5.]])
    """
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input: Tensor, kernel_size: int | Sequence[int],
                            stride: int | Sequence[int] = (),
                            padding: int | Sequence[int] = 0,
                            dilation: int | Sequence[int] = 1,
                            ceil_mode: bool = False) -> tuple[Tensor, Tensor]:
    """``F.max_pool1d(..., return_indices=True)`` as ``torch.max_pool1d_with_indices``.

    >>> import ember
    >>> ember.max_pool1d_with_indices(ember.tensor([[1.0, 3.0, 5.0, 2.0]]), 2)[1]
    tensor([[1, 2]])
    """
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode,
                        return_indices=True)


def max_pool2d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool2d`` as ``torch.max_pool2d`` (values only).

    >>> import ember
    >>> ember.max_pool2d(ember.arange(16.0).reshape(1, 4, 4), 2)
    tensor([[[ 5.,  7.],
             [13., 15.]]])
    """
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input: Tensor, kernel_size: int | Sequence[int],
               stride: int | Sequence[int] = (), padding: int | Sequence[int] = 0,
               dilation: int | Sequence[int] = 1, ceil_mode: bool = False) -> Tensor:
    """``F.max_pool3d`` as ``torch.max_pool3d`` (values only).

    >>> import ember
    >>> ember.max_pool3d(ember.arange(8.0).reshape(1, 2, 2, 2), 2)
    tensor([[[[7.]]]])
    """
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def adaptive_avg_pool1d(input: Tensor, output_size: int | Sequence[int]) -> Tensor:
    """``F.adaptive_avg_pool1d`` as ``torch.adaptive_avg_pool1d``.

    >>> import ember
    >>> ember.adaptive_avg_pool1d(ember.tensor([[1.0, 3.0, 5.0, 7.0]]), 1)
    tensor([[4.]])
    """
    return F.adaptive_avg_pool1d(input, output_size)


def adaptive_max_pool1d(input: Tensor, output_size: int | Sequence[int]
                        ) -> tuple[Tensor, Tensor]:
    """``torch.adaptive_max_pool1d``: values and indices (always both, unlike ``F``'s).

    >>> import ember
    >>> ember.adaptive_max_pool1d(ember.tensor([[1.0, 3.0, 5.0, 2.0]]), 1)
    (tensor([[5.]]), tensor([[2]]))
    """
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


# ---- dropout: ``train`` is required -----------------------------------------------------------
def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.dropout(input, p, training=train)``.

    >>> import ember
    >>> ember.dropout(ember.ones(3), 0.5, False)
    tensor([1., 1., 1.])
    """
    _check_p(p)
    return F.dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.dropout(input, p, train, inplace=True)``: input changed and returned.

    >>> import ember
    >>> x = ember.ones(3); ember.dropout_(x, 0.5, False) is x
    True
    """
    _check_p(p)
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.alpha_dropout(input, p, training=train)``.

    >>> import ember
    >>> ember.alpha_dropout(ember.ones(2), 0.5, False)
    tensor([1., 1.])
    """
    _check_p(p)
    return F.alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.alpha_dropout(input, p, train, inplace=True)``.

    >>> import ember
    >>> x = ember.ones(2); ember.alpha_dropout_(x, 0.5, False) is x
    True
    """
    _check_p(p)
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.feature_alpha_dropout(input, p, training=train)``.

    >>> import ember
    >>> ember.feature_alpha_dropout(ember.ones(1, 2), 0.5, False)
    tensor([[1., 1.]])
    """
    _check_p(p)
    return F.feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    """``F.feature_alpha_dropout(input, p, train, inplace=True)``.

    >>> import ember
    >>> x = ember.ones(1, 2); ember.feature_alpha_dropout_(x, 0.5, False) is x
    True
    """
    _check_p(p)
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# ---- normalization ----------------------------------------------------------------------------
def layer_norm(input: Tensor, normalized_shape: Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    """``F.layer_norm`` as ``torch.layer_norm``.

    >>> import ember
    >>> ember.layer_norm(ember.tensor([[1.0, 3.0]]), [2])
    tensor([[-1.0000,  1.0000]])
    """
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    """``F.group_norm`` as ``torch.group_norm``.

    >>> import ember
    >>> ember.group_norm(ember.tensor([[1.0, 3.0]]), 1)
    tensor([[-1.0000,  1.0000]])
    """
    return F.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
               running_mean: Tensor | None, running_var: Tensor | None, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    """``torch.batch_norm``: ``F.batch_norm`` with weight and bias before the running
    statistics, every argument given.

    >>> import ember
    >>> ember.batch_norm(ember.tensor([[1.0], [3.0]]), None, None, None, None, True, 0.1,
    ...                  1e-5, False)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input: Tensor, weight: Tensor | None, bias: Tensor | None,
                  running_mean: Tensor | None, running_var: Tensor | None,
                  use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """``torch.instance_norm``: ``F.instance_norm`` with weight and bias before the running
    statistics, every argument given.

    >>> import ember
    >>> ember.instance_norm(ember.tensor([[[1.0, 3.0]]]), None, None, None, None, True, 0.1,
    ...                     1e-5, False)
    tensor([[[-1.0000,  1.0000]]])
    """
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


# ---- embedding, shuffles, activations ---------------------------------------------------------
def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """``torch.embedding(weight, indices)``: the rows of ``weight`` at ``indices``; a
    negative ``padding_idx`` is none (ATen's convention), others get no gradient.

    >>> import ember
    >>> ember.embedding(ember.tensor([[1.0], [2.0]]), ember.tensor([1, 0]))
    tensor([[2.],
            [1.]])
    """
    return F.embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """``F.pixel_shuffle`` as ``torch.pixel_shuffle``.

    >>> import ember
    >>> ember.pixel_shuffle(ember.arange(4.0).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    return F.pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """``F.pixel_unshuffle`` as ``torch.pixel_unshuffle``.

    >>> import ember
    >>> ember.pixel_unshuffle(ember.arange(4.0).reshape(1, 1, 2, 2), 2).shape
    ember.Size([1, 4, 1, 1])
    """
    return F.pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """``F.channel_shuffle`` as ``torch.channel_shuffle``.

    >>> import ember
    >>> ember.channel_shuffle(ember.arange(4.0).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    return F.channel_shuffle(input, groups)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """``F.prelu`` as ``torch.prelu``.

    >>> import ember
    >>> ember.prelu(ember.tensor([-2.0, 2.0]), ember.tensor([0.5]))
    tensor([-1.,  2.])
    """
    return F.prelu(input, weight)


def celu(input: Tensor, alpha: Number = 1.0) -> Tensor:
    """``F.celu`` as ``torch.celu``.

    >>> import ember
    >>> ember.celu(ember.tensor([1.0]))
    tensor([1.])
    """
    return F.celu(input, alpha)


def celu_(input: Tensor, alpha: Number = 1.0) -> Tensor:
    """``F.celu_`` as ``torch.celu_``.

    >>> import ember
    >>> x = ember.tensor([1.0]); ember.celu_(x) is x
    True
    """
    return F.celu_(input, alpha)


def selu(input: Tensor) -> Tensor:
    """``F.selu`` as ``torch.selu``.

    >>> import ember
    >>> ember.selu(ember.tensor([0.0]))
    tensor([0.])
    """
    return F.selu(input)


def selu_(input: Tensor) -> Tensor:
    """``F.selu_`` as ``torch.selu_``.

    >>> import ember
    >>> x = ember.tensor([0.0]); ember.selu_(x) is x
    True
    """
    return F.selu_(input)


def _no_generator(generator, name):
    if generator is not None:
        raise NotImplementedError(f"ember's {name} takes no generator: it draws from the "
                                  f"default one")


def rrelu(input: Tensor, lower: Number = 0.125, upper: Number = 1.0 / 3.0,
          training: bool = False, generator: Any = None) -> Tensor:
    """``F.rrelu`` as ``torch.rrelu`` (``generator`` is not supported).

    >>> import ember
    >>> ember.rrelu(ember.tensor([-8.0, 1.0]), 0.25, 0.25)
    tensor([-2.,  1.])
    """
    _no_generator(generator, "rrelu")
    return F.rrelu(input, lower, upper, training)


def rrelu_(input: Tensor, lower: Number = 0.125, upper: Number = 1.0 / 3.0,
           training: bool = False, generator: Any = None) -> Tensor:
    """``F.rrelu_`` as ``torch.rrelu_`` (``generator`` is not supported).

    >>> import ember
    >>> x = ember.tensor([-8.0, 1.0]); ember.rrelu_(x, 0.25, 0.25) is x
    True
    """
    _no_generator(generator, "rrelu_")
    return F.rrelu_(input, lower, upper, training)


def threshold(input: Tensor, threshold: Number, value: Number) -> Tensor:
    """``F.threshold`` as ``torch.threshold``.

    >>> import ember
    >>> ember.threshold(ember.tensor([0.5, 2.0]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return F.threshold(input, threshold, value)


def threshold_(input: Tensor, threshold: Number, value: Number) -> Tensor:
    """``F.threshold_`` as ``torch.threshold_``.

    >>> import ember
    >>> x = ember.tensor([0.5, 2.0]); ember.threshold_(x, 1.0, -1.0) is x
    True
    """
    return F.threshold_(input, threshold, value)


def hardshrink(input: Tensor, lambd: Number = 0.5) -> Tensor:
    """``F.hardshrink`` as ``torch.hardshrink``.

    >>> import ember
    >>> ember.hardshrink(ember.tensor([0.25, -1.0]))
    tensor([ 0., -1.])
    """
    return F.hardshrink(input, lambd)


# ---- products, distances ------------------------------------------------------------------------
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """``F.bilinear`` as ``torch.bilinear``.

    >>> import ember
    >>> ember.bilinear(ember.ones(1, 2), ember.ones(1, 3), ember.ones(4, 2, 3)).shape
    ember.Size([1, 4])
    """
    return F.bilinear(input1, input2, weight, bias)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-08) -> Tensor:
    """``F.cosine_similarity`` as ``torch.cosine_similarity``.

    >>> import ember
    >>> ember.cosine_similarity(ember.tensor([[1.0, 0.0]]), ember.tensor([[2.0, 0.0]]))
    tensor([1.])
    """
    return F.cosine_similarity(x1, x2, dim, eps)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-06,
                      keepdim: bool = False) -> Tensor:
    """``F.pairwise_distance`` as ``torch.pairwise_distance``.

    >>> import ember
    >>> ember.pairwise_distance(ember.tensor([[3.0, 0.0]]), ember.tensor([[0.0, 4.0]]), eps=0)
    tensor([5.])
    """
    return F.pairwise_distance(x1, x2, p, eps, keepdim)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    """``F.pdist`` as ``torch.pdist``.

    >>> import ember
    >>> ember.pdist(ember.tensor([[0.0, 0.0], [3.0, 4.0]]))
    tensor([5.])
    """
    return F.pdist(input, p)


def constant_pad_nd(input: Tensor, pad: Sequence[int], value: Number = 0) -> Tensor:
    """``F.pad(input, pad, value=value)`` as ``torch.constant_pad_nd``.

    >>> import ember
    >>> ember.constant_pad_nd(ember.tensor([1.0]), [1, 1])
    tensor([0., 1., 0.])
    """
    return F.pad(input, pad, "constant", value)


# ---- losses: ``reduction`` is an int (0 none, 1 mean, 2 sum), none by default ----------------
def kl_div(input: Tensor, target: Tensor, reduction: int = 0, *,
           log_target: bool = False) -> Tensor:
    """``F.kl_div`` as ``torch.kl_div`` (no reduction unless given).

    >>> import ember
    >>> ember.kl_div(ember.tensor([0.0, 0.0]), ember.tensor([1.0, 1.0]), 2)
    tensor(0.)
    """
    return F.kl_div(input, target, reduction=_reduction(reduction, "kl_div", 3),
                    log_target=log_target)


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor,
                                     weight: Tensor | None = None,
                                     pos_weight: Tensor | None = None,
                                     reduction: int = 0) -> Tensor:
    """``F.binary_cross_entropy_with_logits`` as its ``torch.`` form.

    >>> import ember
    >>> ember.binary_cross_entropy_with_logits(ember.tensor([0.0]), ember.tensor([1.0]))
    tensor([0.6931])
    """
    reduction = _reduction(reduction, "binary_cross_entropy_with_logits", 5)
    return F.binary_cross_entropy_with_logits(input, target, weight, reduction=reduction,
                                              pos_weight=pos_weight)


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor,
                          margin: float = 0.0, reduction: int = 0) -> Tensor:
    """``F.cosine_embedding_loss`` as ``torch.cosine_embedding_loss``.

    >>> import ember
    >>> ember.cosine_embedding_loss(ember.tensor([[1.0, 0.0]]), ember.tensor([[1.0, 0.0]]),
    ...                             ember.tensor([1.0]), 0.0, 1)
    tensor(0.)
    """
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction(reduction, "cosine_embedding_loss", 5))


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = 0) -> Tensor:
    """``F.hinge_embedding_loss`` as ``torch.hinge_embedding_loss``.

    >>> import ember
    >>> ember.hinge_embedding_loss(ember.tensor([0.25]), ember.tensor([-1.0]))
    tensor([0.7500])
    """
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction(reduction, "hinge_embedding_loss", 4))


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 0) -> Tensor:
    """``F.margin_ranking_loss`` as ``torch.margin_ranking_loss``.

    >>> import ember
    >>> ember.margin_ranking_loss(ember.tensor([1.0]), ember.tensor([2.0]), ember.tensor([1.0]))
    tensor([1.])
    """
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction(reduction, "margin_ranking_loss", 5))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    """``torch.poisson_nll_loss``: ``F.poisson_nll_loss`` with every argument given.

    >>> import ember
    >>> ember.poisson_nll_loss(ember.tensor([0.0]), ember.tensor([1.0]), True, False, 1e-8, 1)
    tensor(1.)
    """
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction(reduction, "poisson_nll_loss", 6))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor,
                        margin: float = 1.0, p: float = 2.0, eps: float = 1e-06,
                        swap: bool = False, reduction: int = 0) -> Tensor:
    """``F.triplet_margin_loss`` as ``torch.triplet_margin_loss``.

    >>> import ember
    >>> ember.triplet_margin_loss(ember.zeros(1, 2), ember.zeros(1, 2), ember.ones(1, 2) * 3)
    tensor([0.])
    """
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction(reduction, "triplet_margin_loss", 8))
