"""Quantization schemes (PyTorch's ``torch.qscheme`` objects): how a quantized tensor maps
its integers to real numbers -- one scale and zero point for the whole tensor or one per
channel, affine or symmetric.

>>> import ember
>>> ember.per_tensor_affine
ember.per_tensor_affine
"""


class qscheme:
    """One quantization scheme; the five instances are unique (compare with ``is``)."""
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "ember." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


per_tensor_affine = qscheme("per_tensor_affine")
per_channel_affine = qscheme("per_channel_affine")
per_tensor_symmetric = qscheme("per_tensor_symmetric")
per_channel_symmetric = qscheme("per_channel_symmetric")
per_channel_affine_float_qparams = qscheme("per_channel_affine_float_qparams")
_ALL = {q.name: q for q in (per_tensor_affine, per_channel_affine, per_tensor_symmetric,
                            per_channel_symmetric, per_channel_affine_float_qparams)}


def _by_name(name):
    return _ALL[name]
