"""ember.nn.utils: gradient clipping, parameter/vector conversion, weight and spectral
normalization (hook-based; ``parametrize`` / ``parametrizations`` hold the current forms)."""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_
from .convert_parameters import parameters_to_vector, vector_to_parameters
from .init import skip_init
from .weight_norm import weight_norm, remove_weight_norm
from .spectral_norm import spectral_norm, remove_spectral_norm

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "clip_grads_with_norm_",
           "parameters_to_vector", "vector_to_parameters", "skip_init", "weight_norm",
           "remove_weight_norm", "spectral_norm", "remove_spectral_norm"]
from . import rnn  # noqa: F401,E402  PackedSequence, pack_padded_sequence, pad_sequence, ...
