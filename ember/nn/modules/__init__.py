"""Built-in modules. Each file exports its classes through ``__all__``."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .linear import *  # noqa: F401,F403  Identity, Linear, Bilinear
from .activation import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403  Flatten, Unflatten
from .dropout import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403  Embedding, EmbeddingBag
from .distance import *  # noqa: F401,F403  CosineSimilarity, PairwiseDistance
from .loss import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403  MultiheadAttention, TransformerEncoderLayer
