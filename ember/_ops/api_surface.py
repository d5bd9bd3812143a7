"""The remaining everyday API surface: the ``*_copy`` forms of the view ops (the view, then
a copy: differentiable through both), the ``unsafe_*`` splits, ``as_strided_scatter``,
``fill``, ``adjoint``, ``hardshrink``/``prelu`` as methods and small tensor queries
(``is_same_size``, ``get_device``); Tensor-only extras are in ``tensor_extras``.

Everything here is composed of existing ops, so autograd, forward-mode AD and vmap come with
them.

>>> import ember
>>> ember.permute_copy(ember.arange(6.).reshape(2, 3), (1, 0)).is_contiguous()
True
"""
from __future__ import annotations

import warnings

import numpy as np

from .._creation import beside, tensor
from .._tensor import Tensor
from .._typing import Any, Number, Sequence
from ..autograd.batching import per_sample_under_vmap
from ..backend.meta import is_meta
from . import shape as S
from .basics import _check_strided, _positions, storage_geometry
from .scatter_family import index_put, slice_index


def _copy(t: Tensor) -> Tensor:
    """A fresh, contiguous copy of ``t`` (differentiable): what turns a view into a *_copy."""
    return S.Clone.apply(t)


def _tensor_arg(value, name, arg, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                        f"not {type(value).__name__}")


def _int_arg(value, name, arg, position):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be int, not "
                        f"{type(value).__name__}")


# ---- the view ops' copies -----------------------------------------------------------------
def view_copy(input: Tensor, size: Sequence[int] | Any) -> Tensor:
    """``input.view(size)`` (or ``input.view(dtype)``) as a new tensor (an input whose
    layout a view cannot take is copied first, as PyTorch does).

    >>> import ember
    >>> ember.view_copy(ember.arange(4.), (2, 2))
    tensor([[0., 1.],
            [2., 3.]])
    """
    if isinstance(size, (tuple, list)) or hasattr(size, "__index__"):
        return _copy(input.reshape(size))  # as PyTorch's: any layout, as reshape
    return _copy(input.view(size))


def permute_copy(input: Tensor, dims: Sequence[int]) -> Tensor:
    """``input.permute(dims)`` as a new (contiguous) tensor.

    >>> import ember
    >>> ember.permute_copy(ember.tensor([[1, 2]]), (1, 0))
    tensor([[1],
            [2]])
    """
    return _copy(input.permute(dims))


def transpose_copy(input: Tensor, dim0: int, dim1: int) -> Tensor:
    """``input.transpose(dim0, dim1)`` as a new tensor.

    >>> import ember
    >>> ember.transpose_copy(ember.tensor([[1, 2]]), 0, 1)
    tensor([[1],
            [2]])
    """
    return _copy(input.transpose(dim0, dim1))


def t_copy(input: Tensor) -> Tensor:
    """``input.t()`` as a new tensor.

    >>> import ember
    >>> ember.t_copy(ember.tensor([[1, 2]]))
    tensor([[1],
            [2]])
    """
    return _copy(input.t())


def squeeze_copy(input: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """``input.squeeze(dim)`` as a new tensor.

    >>> import ember
    >>> ember.squeeze_copy(ember.zeros(1, 2, 1), 0).shape
    ember.Size([2, 1])
    """
    return _copy(input.squeeze() if dim is None else input.squeeze(dim))


def unsqueeze_copy(input: Tensor, dim: int) -> Tensor:
    """``input.unsqueeze(dim)`` as a new tensor.

    >>> import ember
    >>> ember.unsqueeze_copy(ember.zeros(2), 1).shape
    ember.Size([2, 1])
    """
    return _copy(input.unsqueeze(dim))


def expand_copy(input: Tensor, size: Sequence[int], *, implicit: bool = False) -> Tensor:
    """``input.expand(size)`` as a new tensor (every element its own memory).
    ``implicit`` is accepted, as in PyTorch, and changes nothing.

    >>> import ember
    >>> ember.expand_copy(ember.tensor([1, 2]), (2, 2))
    tensor([[1, 2],
            [1, 2]])
    """
    return _copy(input.expand(size))


def select_copy(input: Tensor, dim: int, index: int) -> Tensor:
    """``input.select(dim, index)`` as a new tensor.

    >>> import ember
    >>> ember.select_copy(ember.tensor([[1, 2], [3, 4]]), 1, -1)
    tensor([2, 4])
    """
    return _copy(S.select(input, dim, index))


def slice_copy(input: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
               step: int = 1) -> Tensor:
    """``input[start:end:step]`` along ``dim`` as a new tensor (bounds clamped, as slicing).

    >>> import ember
    >>> ember.slice_copy(ember.arange(6), 0, 1, None, 2)
    tensor([1, 3, 5])
    """
    return _copy(input[slice_index(input, dim, start, end, step)])


def diagonal_copy(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """``input.diagonal(offset, dim1, dim2)`` as a new tensor.

    >>> import ember
    >>> ember.diagonal_copy(ember.tensor([[1, 2], [3, 4]]))
    tensor([1, 4])
    """
    return _copy(input.diagonal(offset, dim1, dim2))


def detach_copy(input: Tensor) -> Tensor:
    """``input.detach()`` as a new tensor (no graph, its own memory).

    >>> import ember
    >>> ember.detach_copy(ember.ones(2, requires_grad=True))
    tensor([1., 1.])
    """
    return _copy(input.detach())


def alias_copy(input: Tensor) -> Tensor:
    """A copy of ``input`` (PyTorch's alias op, followed by a copy; differentiable).

    >>> import ember
    >>> x = ember.tensor([1, 2])
    >>> ember.alias_copy(x) is x
    False
    """
    return _copy(input)


def as_strided_copy(input: Tensor, size: Sequence[int], stride: Sequence[int],
                    storage_offset: int | None = None) -> Tensor:
    """``input.as_strided(size, stride, storage_offset)`` as a new tensor.

    >>> import ember
    >>> ember.as_strided_copy(ember.arange(5.), (2, 2), (1, 2), 1)
    tensor([[1., 3.],
            [2., 4.]])
    """
    return _copy(input.as_strided(size, stride, storage_offset))


def unfold_copy(input: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """``input.unfold(dimension, size, step)`` as a new tensor.

    >>> import ember
    >>> ember.unfold_copy(ember.arange(5.), 0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    return _copy(input.unfold(dimension, size, step))


# ---- splits: with sizes, unsafe forms, copies ---------------------------------------------
def split_with_sizes(input: Tensor, split_sizes: Sequence[int],
                     dim: int = 0) -> tuple[Tensor, ...]:
    """``input`` split along ``dim`` into pieces of the given sizes (views; the sizes must
    add up to the dimension's size).

    >>> import ember
    >>> [p.tolist() for p in ember.split_with_sizes(ember.arange(5), [2, 3])]
    [[0, 1], [2, 3, 4]]
    """
    if isinstance(split_sizes, int) or isinstance(split_sizes, Tensor):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' (position 2) must be "
                        f"tuple of ints, not {type(split_sizes).__name__}")
    return S.split(input, [int(s) for s in split_sizes], dim)


def unsafe_split(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``input.split(split_size, dim)`` (PyTorch's form free of the in-place checks on
    views; ember's views need none).

    >>> import ember
    >>> [p.tolist() for p in ember.unsafe_split(ember.arange(5), 2)]
    [[0, 1], [2, 3], [4]]
    """
    _int_arg(split_size, "unsafe_split", "split_size", 2)
    return S.split(input, split_size, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``input.chunk(chunks, dim)`` (PyTorch's form free of the in-place checks on views).

    >>> import ember
    >>> [p.tolist() for p in ember.unsafe_chunk(ember.arange(5), 2)]
    [[0, 1, 2], [3, 4]]
    """
    return S.chunk(input, chunks, dim)


def unsafe_split_with_sizes(input: Tensor, split_sizes: Sequence[int],
                            dim: int = 0) -> tuple[Tensor, ...]:
    """``split_with_sizes`` (PyTorch's form free of the in-place checks on views).

    >>> import ember
    >>> [p.tolist() for p in ember.unsafe_split_with_sizes(ember.arange(3), [1, 2])]
    [[0], [1, 2]]
    """
    return split_with_sizes(input, split_sizes, dim)


def split_copy(input: Tensor, split_size: int, dim: int = 0) -> tuple[Tensor, ...]:
    """``input.split(split_size, dim)``, each piece a new tensor.

    >>> import ember
    >>> [p.tolist() for p in ember.split_copy(ember.arange(3), 2)]
    [[0, 1], [2]]
    """
    _int_arg(split_size, "split_copy", "split_size", 2)
    return tuple(_copy(p) for p in S.split(input, split_size, dim))


def split_with_sizes_copy(input: Tensor, split_sizes: Sequence[int],
                          dim: int = 0) -> tuple[Tensor, ...]:
    """``split_with_sizes``, each piece a new tensor.

    >>> import ember
    >>> [p.tolist() for p in ember.split_with_sizes_copy(ember.arange(3), [1, 2])]
    [[0], [1, 2]]
    """
    return tuple(_copy(p) for p in split_with_sizes(input, split_sizes, dim))


def unbind_copy(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """``input.unbind(dim)``, each slice a new tensor.

    >>> import ember
    >>> ember.unbind_copy(ember.tensor([[1, 2], [3, 4]]), 1)
    (tensor([1, 3]), tensor([2, 4]))
    """
    return tuple(_copy(p) for p in S.unbind(input, dim))


# ---- as_strided_scatter, fill, adjoint -----------------------------------------------------
@per_sample_under_vmap  # positions from the input's strides: per sample under vmap
def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int], stride: Sequence[int],
                       storage_offset: int | None = None) -> Tensor:
    """A copy of ``input`` whose elements that ``input.as_strided(size, stride,
    storage_offset)`` would view hold ``src`` instead (positions in input's own storage;
    ``storage_offset`` None: input's offset).

    >>> import ember
    >>> ember.as_strided_scatter(ember.zeros(4), ember.ones(2), (2,), (2,), 1)
    tensor([0., 1., 0., 1.])
    """
    _tensor_arg(src, "as_strided_scatter", "src", 2)
    size, stride = [int(s) for s in size], [int(s) for s in stride]
    offset = input.storage_offset() if storage_offset is None else int(storage_offset)
    d = input._data
    if not is_meta(d):
        _check_strided(size, stride, offset, d.itemsize, storage_geometry(input)[2])
    if list(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {size}")
    # which element of input each src element lands on (storage positions: host-side index
    # arithmetic on sizes and strides, moved beside the data)
    element_at = {p: i for i, p in enumerate(
        _positions(d.shape, input.stride(), input.storage_offset()).reshape(-1).tolist())}
    pairs = [(element_at[p], j) for j, p in enumerate(
        _positions(size, stride, offset).reshape(-1).tolist()) if p in element_at]
    flat = input.reshape(-1)
    if not pairs:
        return _copy(input)
    targets, sources = (beside(tensor(np.array(k, dtype=np.int64)), input) for k in zip(*pairs))
    values = src.reshape(-1).index_select(0, sources).to(input.dtype)
    return index_put(flat, (targets,), values).reshape(d.shape)


def fill(input: Tensor, value: Tensor | Number) -> Tensor:
    """A new tensor shaped as ``input`` (its dtype and device) holding ``value`` everywhere
    (``input.clone().fill_(value)``; a tensor ``value`` must be 0-d).

    >>> import ember
    >>> ember.fill(ember.zeros(2, dtype=ember.int64), 7)
    tensor([7, 7])
    """
    return _copy(input).fill_(value)


def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dimensions (a view): ``x.transpose(-2, -1)``,
    conjugated for complex tensors.

    >>> import ember
    >>> ember.adjoint(ember.tensor([[1 + 1j, 2]]))
    tensor([[1.-1.j],
            [2.-0.j]])
    """
    n = input.dim()
    if n == 0:
        warnings.warn("adjoint() is deprecated on 0-D tensors. Consider using x.conj().",
                      UserWarning, stacklevel=3)
        return input.conj()
    if n == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of "
                           "matrices. Got 1-D tensor.")
    return input.transpose(-2, -1).conj()


def hardshrink(self: Tensor, lambd: Number = 0.5) -> Tensor:
    """``self`` where ``|self| > lambd``, else 0 (``F.hardshrink``).

    >>> import ember
    >>> ember.tensor([0.2, -1.0]).hardshrink()
    tensor([ 0., -1.])
    """
    return self * (self.abs() > lambd).to(self.dtype)


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    """``self`` where positive, else ``weight * self`` (``F.prelu``: one slope, or one per
    channel of dimension 1).

    >>> import ember
    >>> ember.tensor([[-2.0, 3.0]]).prelu(ember.tensor([0.25]))
    tensor([[-0.5000,  3.0000]])
    """
    if weight.dtype is not self.dtype:  # one dtype in PyTorch's kernel: no promotion
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{self.dtype.scalar_name} and {weight.dtype.scalar_name}")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    channels = self.size(1) if self.dim() >= 2 else 1
    if weight.numel() != 1 and weight.numel() != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {weight.numel()} and channel size = {channels}.")
    slope = weight
    if weight.numel() > 1:  # one slope per channel, broadcast along dimension 1
        slope = weight.reshape((weight.numel(),) + (1,) * (self.dim() - 2))
    elif weight.dim() == 1 and self.dim() == 0:
        slope = weight.reshape(())
    return self.where(self > 0, self * slope)


# ---- small tensor queries ------------------------------------------------------------------
def is_same_size(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have the same shape.

    >>> import ember
    >>> ember.is_same_size(ember.zeros(2, 3), ember.ones(2, 3))
    True
    """
    _tensor_arg(other, "is_same_size", "other", 2)
    return tuple(input.shape) == tuple(other.shape)


def is_same_size_method(self: Tensor, other: Tensor) -> bool:
    """``x.is_same_size(other)``: whether the two tensors have the same shape.

    >>> import ember
    >>> ember.zeros(2).is_same_size(ember.zeros(3))
    False
    """
    _tensor_arg(other, "is_same_size", "other", 1)  # the method counts from other
    return tuple(self.shape) == tuple(other.shape)


def resolve_neg(input: Tensor) -> Tensor:
    """``input`` itself: ember keeps no lazy negation bit, so nothing is to be resolved.

    >>> import ember
    >>> x = ember.ones(2)
    >>> ember.resolve_neg(x) is x
    True
    """
    return input


def is_neg(input: Tensor) -> bool:
    """False: ember keeps no lazy negation bit (negations are computed at once).

    >>> import ember
    >>> ember.is_neg(-ember.ones(2))
    False
    """
    return False


def is_inference(input: Tensor) -> bool:
    """False: ember's ``inference_mode`` turns gradient recording off (as ``no_grad``) and
    marks no tensor as an inference tensor.

    >>> import ember
    >>> ember.is_inference(ember.ones(2))
    False
    """
    return False


def is_distributed(input: Tensor) -> bool:
    """False, as PyTorch answers for every tensor.

    >>> import ember
    >>> ember.is_distributed(ember.ones(2))
    False
    """
    return False


def get_device(input: Tensor) -> int:
    """The tensor's device index: -1 for a CPU (or meta) tensor, the GPU's index for a CUDA
    one.

    >>> import ember
    >>> ember.get_device(ember.ones(2))
    -1
    """
    device = input.device
    if device.type != "cuda":
        return -1
    return 0 if device.index is None else device.index


__all__ = ["view_copy", "permute_copy", "transpose_copy", "t_copy", "squeeze_copy",
           "unsqueeze_copy", "expand_copy", "select_copy", "slice_copy", "diagonal_copy",
           "detach_copy", "alias_copy", "as_strided_copy", "unfold_copy", "split_with_sizes",
           "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes", "split_copy",
           "split_with_sizes_copy", "unbind_copy", "as_strided_scatter", "fill", "adjoint",
           "hardshrink", "prelu", "is_same_size", "is_same_size_method", "resolve_neg",
           "is_neg", "is_inference", "is_distributed", "get_device"]
