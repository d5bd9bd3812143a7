"""ember.nn.utils: gradient clipping, parameter/vector conversion, weight and spectral
normalization (hook-based; ``parametrize`` / ``parametrizations`` hold the current forms)."""
from .clip_grad import (clip_grad_norm_, clip_grad_value_, get_total_norm,  # noqa: F401
                        clip_grads_with_norm_, clip_grad_norm)
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval,  # noqa: F401
                     fuse_linear_bn_weights)
from .memory_format import (convert_conv2d_weight_memory_format,  # noqa: F401
                            convert_conv3d_weight_memory_format)
from . import stateless  # noqa: F401
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .init import skip_init
from .weight_norm import weight_norm, remove_weight_norm
from .spectral_norm import spectral_norm, remove_spectral_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "parameters_to_vector", "vector_to_parameters", "skip_init", "weight_norm",
           "remove_weight_norm", "spectral_norm", "remove_spectral_norm", "clip_grad_norm",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format"]
from . import rnn  # noqa: F401,E402  PackedSequence, pack_padded_sequence, pad_sequence, ...
