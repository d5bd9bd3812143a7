"""The names of ember's namespace that the quantization library uses, gathered from their
layers (a library may not import the package ``ember`` itself); the library's modules
import this as ``ember``."""
from ..._creation import (tensor, zeros, zeros_like, ones_like, rand, ones,  # noqa: F401
                          arange, linspace)
from ..._functions.core import (min, max, where, round, clamp, any, sum,  # noqa: F401,A004
                                cumsum, div, repeat_interleave)
from ..._ops.statistics_counts import histc, bincount  # noqa: F401
from ..._ops.sets import bucketize  # noqa: F401
from ..._ops.statistics import aminmax  # noqa: F401
from ..._ops.shape import flatten  # noqa: F401
from ..._ops.fake_quant import (fake_quantize_per_tensor_affine,  # noqa: F401
                                fake_quantize_per_channel_affine)
from ...backend.dtypes import (iinfo, float, int, long, int8, int16, int32, int64,  # noqa: F401,E501
                               uint8,
                               uint16, float8_e5m2, float8_e4m3fn, quint8, qint8, qint32,
                               quint4x2, QUANTIZED, float32)
from ..._quantized.qscheme import (per_tensor_affine, per_channel_affine,  # noqa: F401
                                   per_tensor_symmetric, per_channel_symmetric,
                                   per_channel_affine_float_qparams)
