"""``ember.nn.functional``: the functional forms of the layers, activations and losses.

Each private file exports its functions through ``__all__``; the tensor math
lives in ``ember._ops`` (nn knows nothing about NumPy).
"""
from ..._ops.nn_ops import softmax, log_softmax  # noqa: F401
from ..._functions import relu, sigmoid, tanh  # noqa: F401
from ._activation import *  # noqa: F401,F403
from ._linear import *  # noqa: F401,F403
from ._dropout import *  # noqa: F401,F403
from ._sparse import *  # noqa: F401,F403
from ._misc import *  # noqa: F401,F403  pad, one_hot, normalize
from ._loss import *  # noqa: F401,F403
from ._conv import *  # noqa: F401,F403
from ._pooling import *  # noqa: F401,F403
from ._normalization import *  # noqa: F401,F403
from ._vision import *  # noqa: F401,F403  interpolate
from ._attention import *  # noqa: F401,F403  scaled_dot_product_attention
from ._fold import *  # noqa: F401,F403  fold, unfold
from ._grid import *  # noqa: F401,F403  grid_sample, affine_grid
from ._distance import *  # noqa: F401,F403  cosine_similarity, pairwise_distance, pdist
from ._loss_extra import *  # noqa: F401,F403  margin, embedding, triplet and NLL losses
from ._pooling_extra import *  # noqa: F401,F403  lp_pool, max_unpool
from ._misc_extra import *  # noqa: F401,F403  local_response_norm, channel_shuffle, gumbel
from ._loss_ctc import *  # noqa: F401,F403  ctc_loss
from ._pooling_fractional import *  # noqa: F401,F403  fractional_max_pool2d/3d
from ._linear_cross_entropy import *  # noqa: F401,F403

from ..._torch_function import wrap_namespace as _wrap_namespace  # noqa: E402
from . import (_activation, _linear, _dropout, _sparse, _misc, _loss, _conv,  # noqa: E402
               _pooling, _normalization, _vision, _attention, _fold, _grid, _distance,
               _loss_extra, _pooling_extra, _misc_extra, _loss_ctc, _pooling_fractional,
               _linear_cross_entropy)

# Every public function is an entry point of __torch_function__ (reported as
# ember.nn.functional.<name>), as PyTorch's are. Most of PyTorch's are Python functions,
# whose overrides get plain Tensor in ``types`` too and whose error says "no implementation
# found"; these are its C++ builtins, which do neither.
_BUILTINS = {"adaptive_avg_pool1d", "avg_pool1d", "avg_pool2d", "avg_pool3d", "bilinear",
             "celu_", "channel_shuffle", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
             "conv_transpose2d", "conv_transpose3d", "cosine_similarity", "elu_", "gelu",
             "hardshrink", "hardtanh_", "leaky_relu_", "linear", "logsigmoid", "one_hot",
             "pairwise_distance", "pdist", "pixel_shuffle", "pixel_unshuffle", "prelu",
             "relu_", "rrelu_", "scaled_dot_product_attention", "selu_", "softplus",
             "softshrink", "threshold_"}
_IN_TORCH_NN = {"avg_pool2d", "avg_pool3d", "elu_", "gelu", "hardtanh_", "leaky_relu_", "linear",
                "logsigmoid", "one_hot", "scaled_dot_product_attention", "softplus",
                "softshrink"}
_PUBLIC = ["softmax", "log_softmax", "relu", "sigmoid", "tanh"] + [
    name for m in (_activation, _linear, _dropout, _sparse, _misc, _loss, _conv, _pooling,
                   _normalization, _vision, _attention, _fold, _grid, _distance, _loss_extra,
                   _pooling_extra, _misc_extra, _loss_ctc, _pooling_fractional,
                   _linear_cross_entropy)
    for name in m.__all__]
# PyTorch's get_ignored_functions: these call another public function (or a method) and
# have no dispatch of their own; ember's run their code directly.
_IGNORED = {"hardsigmoid", "hardswish", "sigmoid", "tanh", "upsample", "upsample_bilinear",
            "upsample_nearest"}
for _name in _IGNORED:
    globals()[_name] = getattr(globals()[_name], "__ember_impl__", globals()[_name])
_wrap_namespace(globals(), [n for n in _PUBLIC if n not in _BUILTINS | _IGNORED],
                "ember.nn.functional", python_level=True)
_wrap_namespace(globals(), [n for n in _PUBLIC if n in _BUILTINS], "ember.nn.functional")
# the error messages of PyTorch's builtins name where they live (torch.nn.linear, torch.conv2d)
for _name in _BUILTINS & set(_PUBLIC):
    globals()[_name]._error_name = ("torch.nn." if _name in _IN_TORCH_NN else "torch.") + _name
