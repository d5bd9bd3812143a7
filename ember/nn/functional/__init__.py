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
