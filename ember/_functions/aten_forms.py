"""Declarations of ATen's functional forms that programs call from the ``torch`` namespace:
the deprecated norms (``frobenius_norm``, ``nuclear_norm``, ``native_norm``: ``ember.linalg``'s
norms under ATen's signatures), ``segment_reduce`` and the eager control-flow operators
``cond``/``while_loop`` (ops in ``_ops/aten_forms.py``). The forms of nn ops
(``native_layer_norm``, ``lstm``, ``convolution``, ...) compose ``nn.functional`` and live in
``ember/nn/_aten_forms.py`` and ``ember/nn/_aten_rnn.py``."""
from __future__ import annotations

import warnings

from .._ops import aten_forms as _AF
from .._registry import op
from .._tensor import Tensor
from .._typing import Number, Sequence, dtype as _dtype
from ..linalg import _norms as _LN

_DEPRECATED = ("at::{name} is deprecated and it is just left for JIT compatibility. It will be "
               "removed in a future PyTorch release. Please use `{use}` instead")


@op(method=False, out=True)
def frobenius_norm(input: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    """The 2-norm of ``input`` over ``dim`` (at most two dims; none: all of them), as
    ``linalg.vector_norm(input, 2, dim, keepdim)``, which PyTorch's warning recommends.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.frobenius_norm(ember.tensor([[3., 4.], [0., 0.]]), [1])
    tensor([5., 0.])
    """
    warnings.warn(_DEPRECATED.format(name="frobenius_norm",
                                     use="linalg.vector_norm(A, 2., dim, keepdim)"),
                  UserWarning, stacklevel=3)
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dims) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dims)} dimensions "
                           f"instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {input.dtype.scalar_name} instead.")
    return _LN.vector_norm(input, 2, dims if dims else None, keepdim)


@op(method=False, out=True)
def nuclear_norm(input: Tensor, dim: Sequence[int] | bool | None = None,
                 keepdim: bool = False) -> Tensor:
    """The sum of the singular values over the matrices of ``dim`` (the last two dims by
    default); ``nuclear_norm(input, keepdim)`` is ATen's other overload.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.nuclear_norm(ember.tensor([[3., 0.], [0., -4.]]))
    tensor(7.)
    """
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = None, dim
    warnings.warn(_DEPRECATED.format(name="nuclear_norm",
                                     use="linalg.matrix_norm(A, 'nuc', dim, keepdim)"),
                  UserWarning, stacklevel=3)
    return _LN.matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


_NO_KERNEL = ("Could not run 'aten::native_norm' with arguments from the '{backend}' "
              "backend. 'aten::native_norm' is only available for sparse tensors.")


@op(method=False)
def native_norm(input: Tensor, p: Number | None = 2, dim: Sequence[int] | None = None,
                keepdim: bool = False, dtype: _dtype | None = None) -> Tensor:
    """ATen's norm kernel of sparse tensors; PyTorch has none for dense ones, and neither has
    ember for either (NotImplementedError): ``linalg.vector_norm`` is the norm to call.

    >>> import ember
    >>> ember.native_norm(ember.ones(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    NotImplementedError: Could not run 'aten::native_norm' with arguments from the 'CPU' ...
    """
    raise NotImplementedError(_NO_KERNEL.format(backend=input.device.type.upper()))


segment_reduce = op(_AF.segment_reduce, method=False)  # no out=: PyTorch's binding has none
cond = op(_AF.cond, method=False)
while_loop = op(_AF.while_loop, method=False)

__all__ = ["frobenius_norm", "nuclear_norm", "native_norm", "segment_reduce", "cond",
           "while_loop"]
