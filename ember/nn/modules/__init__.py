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
from .batchnorm import *  # noqa: F401,F403  (BatchNorm1d/2d/3d and their lazy forms)
from .rnn import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403  MultiheadAttention, TransformerEncoderLayer
from .padding import *  # noqa: F401,F403  ZeroPad2d, ReflectionPad1d, ...
from .pixelshuffle import *  # noqa: F401,F403  PixelShuffle, PixelUnshuffle
from .upsampling import *  # noqa: F401,F403  Upsample, UpsamplingNearest2d, ...
from .instancenorm import *  # noqa: F401,F403  InstanceNorm1d/2d/3d
from .fold import *  # noqa: F401,F403  Fold, Unfold
from .channelshuffle import *  # noqa: F401,F403  ChannelShuffle
from .adaptive import *  # noqa: F401,F403  AdaptiveLogSoftmaxWithLoss
from .legacy import *  # noqa: F401,F403  CrossMapLRN2d, NLLLoss2d, Container
from .linear_cross_entropy import *  # noqa: F401,F403  LinearCrossEntropyLoss
