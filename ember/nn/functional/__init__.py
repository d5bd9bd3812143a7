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

from ..._torch_function import wrap_namespace as _wrap_namespace  # noqa: E402
from . import (_activation, _linear, _dropout, _sparse, _misc, _loss, _conv,  # noqa: E402
               _pooling, _normalization, _vision, _attention, _fold, _grid, _distance)

# Every public function is an entry point of __torch_function__ (reported as
# ember.nn.functional.<name>), as PyTorch's are.
_wrap_namespace(globals(), ["softmax", "log_softmax", "relu", "sigmoid", "tanh"] + [
    name for m in (_activation, _linear, _dropout, _sparse, _misc, _loss, _conv, _pooling,
                   _normalization, _vision, _attention, _fold, _grid, _distance)
    for name in m.__all__], "ember.nn.functional", python_level=True)
