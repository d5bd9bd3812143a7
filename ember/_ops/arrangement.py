"""Arranging tensors without new arithmetic: splitting (``tensor_split``, ``hsplit``,
``vsplit``, ``dsplit``), raising the rank (``atleast_1d/2d/3d``), stacking
(``hstack``, ``vstack``, ``dstack``, ``column_stack``), ``block_diag``,
``cartesian_prod``, ``combinations``, ``rot90``, ``flipud``/``fliplr``, ``diagflat``,
``argwhere``, ``vander`` and the index factories ``tril_indices``/``triu_indices``.

All are compositions of existing ops (views, ``cat``, ``flip``, ``index_select``,
``cumprod``, ``DiagEmbed``), so gradients, forward-mode AD and meta tensors come from
those. Index lists that depend only on sizes (``combinations``, ``tril_indices``) are
computed on the host and moved beside the data.

>>> import ember
>>> [t.tolist() for t in ember.tensor_split(ember.arange(7), 3)]
[[0, 1, 2], [3, 4], [5, 6]]
"""
from __future__ import annotations

import itertools
import operator

import numpy as np

from .._creation import tensor, beside
from .._tensor import Tensor, _wrap_dim
from .._typing import Any, Sequence, dtype
from ..backend import dtypes, to_host
from . import shape as S
from .indexing import index_select, nonzero
from .diagonals import DiagEmbed
from .reduction import Cumprod


def _sizes(shape):
    return f"[{', '.join(map(str, shape))}]"


# ---- splitting ------------------------------------------------------------------------------
def _split_points(indices_or_sections):
    """(sections, None) or (None, indices) from an int, a sequence or a long tensor."""
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.dtype is not dtypes.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have dtype "
                               f"of long, but got {arg.dtype.scalar_name}")
        if arg.dim() > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {arg.dim()} dims")
        values = to_host(arg._data).tolist()  # split points: host integers
        return (int(values), None) if arg.dim() == 0 else (None, [int(v) for v in values])
    if isinstance(arg, (list, tuple)):
        return None, [operator.index(v) for v in arg]
    return operator.index(arg), None


def tensor_split(input: Tensor, indices_or_sections: Tensor | int | Sequence[int],
                 dim: int = 0) -> tuple[Tensor, ...]:
    """Views of ``input`` split along ``dim`` into ``sections`` nearly equal parts (the first
    ``size % sections`` one longer), or at the given indices (as Python slices: negative
    indices count from the end, out-of-range ones clip).

    >>> import ember
    >>> [t.tolist() for t in ember.tensor_split(ember.arange(7), [1, 5])]
    [[0], [1, 2, 3, 4], [5, 6]]
    """
    if input.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    sections, indices = _split_points(indices_or_sections)
    dim = _wrap_dim(dim, input.dim())
    size = input.shape[dim]
    if sections is not None:
        if sections <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
        base, extra = divmod(size, sections)
        bounds, start = [], 0
        for i in range(sections):
            length = base + (1 if i < extra else 0)
            bounds.append((start, length))
            start += length
    else:
        bounds, start = [], 0
        for stop in indices + [size]:
            lo, hi, _ = slice(start, stop).indices(size)
            bounds.append((lo, max(hi - lo, 0)))
            start = stop
    return tuple(S.narrow(input, dim, lo, length) for lo, length in bounds)


def _directional_split(input, indices_or_sections, name, min_dims, dim):
    if input.dim() < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if not isinstance(indices_or_sections, (list, tuple)):
        sections = operator.index(indices_or_sections)
        size = input.shape[dim]
        if sections == 0 or size % sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                               f"size of the dimension {size} is not divisible by the split_size "
                               f"{sections}!")
        indices_or_sections = sections
    return tensor_split(input, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dim 1 (dim 0 of a 1-D tensor); a number of sections must
    divide the size.

    >>> import ember
    >>> [t.shape for t in ember.hsplit(ember.zeros(2, 4), 2)]
    [ember.Size([2, 2]), ember.Size([2, 2])]
    """
    return _directional_split(input, indices_or_sections, "hsplit", 1,
                              1 if input.dim() > 1 else 0)


def vsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dim 0 of a tensor of two or more dims.

    >>> import ember
    >>> [t.shape for t in ember.vsplit(ember.zeros(4, 2), [1])]
    [ember.Size([1, 2]), ember.Size([3, 2])]
    """
    return _directional_split(input, indices_or_sections, "vsplit", 2, 0)


def dsplit(input: Tensor, indices_or_sections: int | Sequence[int]) -> tuple[Tensor, ...]:
    """``tensor_split`` along dim 2 of a tensor of three or more dims.

    >>> import ember
    >>> [t.shape for t in ember.dsplit(ember.zeros(1, 2, 4), 2)]
    [ember.Size([1, 2, 2]), ember.Size([1, 2, 2])]
    """
    return _directional_split(input, indices_or_sections, "dsplit", 3, 2)


# ---- rank and stacking ------------------------------------------------------------------------
def _at_least(tensors, name, lift):
    """One tensor: its lifted view; several (or one sequence): a tuple of them."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
        single = False
    else:
        single = len(tensors) == 1
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            if single:
                kind = type(t).__name__
                raise TypeError(f"{name}() received an invalid combination of arguments - got "
                                f"({kind}), but expected one of:\n * (Tensor input)\n      "
                                f"didn't match because some of the arguments have invalid "
                                f"types: (!{kind}!)\n * (tuple of Tensors tensors)\n      didn't "
                                f"match because some of the arguments have invalid types: "
                                f"(!{kind}!)\n")
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    lifted = tuple(lift(t) for t in tensors)
    return lifted[0] if single else lifted


def _lift_1d(t):
    return S.reshape(t, (1,)) if t.dim() == 0 else t


def _lift_2d(t):
    if t.dim() == 0:
        return S.reshape(t, (1, 1))
    return S.unsqueeze(t, 0) if t.dim() == 1 else t


def _lift_3d(t):
    if t.dim() == 0:
        return S.reshape(t, (1, 1, 1))
    if t.dim() == 1:
        return S.unsqueeze(S.unsqueeze(t, 0), -1)
    return S.unsqueeze(t, -1) if t.dim() == 2 else t


def atleast_1d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor as a view of at least one dim (0-d becomes shape ``(1,)``).

    >>> import ember
    >>> ember.atleast_1d(ember.tensor(1.))
    tensor([1.])
    """
    return _at_least(tensors, "atleast_1d", _lift_1d)


def atleast_2d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor as a view of at least two dims (a 1-D one becomes one row).

    >>> import ember
    >>> ember.atleast_2d(ember.tensor([1., 2.]))
    tensor([[1., 2.]])
    """
    return _at_least(tensors, "atleast_2d", _lift_2d)


def atleast_3d(*tensors: Tensor | Sequence[Tensor]) -> Tensor | tuple[Tensor, ...]:
    """Each tensor as a view of at least three dims: ``(n,)`` becomes ``(1, n, 1)``,
    ``(m, n)`` becomes ``(m, n, 1)``.

    >>> import ember
    >>> ember.atleast_3d(ember.tensor([1., 2.])).shape
    ember.Size([1, 2, 1])
    """
    return _at_least(tensors, "atleast_3d", _lift_3d)


def _tensor_sequence(tensors, name):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return list(tensors)


def hstack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors joined column-wise: along dim 1, or dim 0 when they are 1-D (0-d ones
    count as 1-D).

    >>> import ember
    >>> ember.hstack([ember.tensor([1, 2]), ember.tensor([3])])
    tensor([1, 2, 3])
    """
    lifted = atleast_1d(_tensor_sequence(tensors, "hstack"))
    return S.cat(lifted, 0 if lifted[0].dim() == 1 else 1)


def vstack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors joined row-wise (along dim 0, 1-D ones as rows).

    >>> import ember
    >>> ember.vstack([ember.tensor([1, 2]), ember.tensor([3, 4])])
    tensor([[1, 2],
            [3, 4]])
    """
    return S.cat(atleast_2d(_tensor_sequence(tensors, "vstack")), 0)


def row_stack(tensors: Sequence[Tensor]) -> Tensor:
    """Another name of ``vstack``.

    >>> import ember
    >>> ember.row_stack([ember.tensor([1]), ember.tensor([2])])
    tensor([[1],
            [2]])
    """
    if not isinstance(tensors, (list, tuple)):
        _tensor_sequence(tensors, "row_stack")
    return vstack(tensors)


def dstack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors joined depth-wise (along dim 2, after ``atleast_3d``).

    >>> import ember
    >>> ember.dstack([ember.tensor([1, 2]), ember.tensor([3, 4])]).shape
    ember.Size([1, 2, 2])
    """
    return S.cat(atleast_3d(_tensor_sequence(tensors, "dstack")), 2)


def column_stack(tensors: Sequence[Tensor]) -> Tensor:
    """The tensors as columns: 0-d and 1-D ones become one column each, then ``hstack``.

    >>> import ember
    >>> ember.column_stack([ember.tensor([1, 2]), ember.tensor([3, 4])])
    tensor([[1, 3],
            [2, 4]])
    """
    tensors = _tensor_sequence(tensors, "column_stack")
    columns = [S.reshape(t, (t.numel(), 1)) if isinstance(t, Tensor) and t.dim() <= 1 else t
               for t in tensors]
    return hstack(columns)


# ---- building matrices ------------------------------------------------------------------------
def block_diag(*tensors: Tensor) -> Tensor:
    """A matrix with the tensors (0-d as 1x1, 1-D as one row) as blocks on its diagonal and
    zeros elsewhere, in their promoted dtype.

    >>> import ember
    >>> ember.block_diag(ember.tensor([[1, 2]]), ember.tensor(3))
    tensor([[1, 2, 0],
            [0, 0, 3]])
    """
    blocks = []
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
        if t.dim() > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {t.dim()} dimensions")
        blocks.append(_lift_2d(t))
    if not blocks:
        return tensor(np.zeros((1, 0), np.float32), dtype=dtypes.get_default_dtype())
    dt = blocks[0].dtype
    for b in blocks[1:]:
        dt = dtypes.promote_types(dt, b.dtype)
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        r, c = b.shape
        b = b if b.dtype is dt else b.to(dt)
        parts = [b.new_zeros((r, left)), b, b.new_zeros((r, width - left - c))]
        rows.append(S.cat(parts, 1))
        left += c
    return S.cat(rows, 0)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element from each 1-D tensor, one per row (a single tensor
    is returned as it is).

    >>> import ember
    >>> ember.cartesian_prod(ember.tensor([1, 2]), ember.tensor([3, 4]))
    tensor([[1, 3],
            [1, 4],
            [2, 3],
            [2, 4]])
    """
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_sizes(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if any(t.dtype is not tensors[0].dtype for t in tensors):
        raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    shape = [t.shape[0] for t in tensors]
    columns = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = -1
        columns.append(S.reshape(S.expand(S.reshape(t, view), shape), (-1,)))
    return S.stack(columns, 1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """The length-``r`` combinations of the elements of 1-D ``input`` (as
    ``itertools.combinations``, or ``combinations_with_replacement``), one per row.

    >>> import ember
    >>> ember.combinations(ember.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_sizes(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r and input._data.size:  # PyTorch picks the rows by masked_select
        dtypes.refuse_limited_unsigned(input._data.dtype, "masked_select")
    if r == 0:
        return input.new_empty((0,))
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = list(pick(range(input.shape[0]), r))
    index = np.array(rows, dtype=np.int64).reshape(-1)  # index list from sizes: on the host
    taken = index_select(input, 0, beside(tensor(index), input))
    return S.reshape(taken, (len(rows), r))


def rot90(input: Tensor, k: int = 1, dims: Sequence[int] = (0, 1)) -> Tensor:
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first
    towards the second.

    >>> import ember
    >>> ember.rot90(ember.tensor([[1, 2], [3, 4]]))
    tensor([[2, 4],
            [1, 3]])
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    n = input.dim()
    if n < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {n}")
    d0, d1 = _wrap_dim(dims[0], n), _wrap_dim(dims[1], n)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return S.transpose(S.flip(input, d1), d0, d1)
    if k == 2:
        return S.flip(input, [d0, d1])
    if k == 3:
        return S.transpose(S.flip(input, d0), d0, d1)
    return S.Clone.apply(input)


def flipud(input: Tensor) -> Tensor:
    """``input`` upside down (dim 0 reversed).

    >>> import ember
    >>> ember.flipud(ember.tensor([1, 2, 3]))
    tensor([3, 2, 1])
    """
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return S.flip(input, 0)


def fliplr(input: Tensor) -> Tensor:
    """``input`` mirrored left to right (dim 1 reversed).

    >>> import ember
    >>> ember.fliplr(ember.tensor([[1, 2], [3, 4]]))
    tensor([[2, 1],
            [4, 3]])
    """
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return S.flip(input, 1)


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """A square matrix with the flattened ``input`` on its ``offset``-th diagonal.

    >>> import ember
    >>> ember.diagflat(ember.tensor([1, 2]), 1)
    tensor([[0, 1, 0],
            [0, 0, 2],
            [0, 0, 0]])
    """
    return DiagEmbed.apply(S.reshape(input, (-1,)), offset, 0, 1)


def argwhere(input: Tensor) -> Tensor:
    """The indices of the non-zero elements, one row each (``nonzero``).

    >>> import ember
    >>> ember.argwhere(ember.tensor([0, 3, 0, 5]))
    tensor([[1],
            [3]])
    """
    return nonzero(input)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of 1-D ``x``: column j is ``x ** (N - 1 - j)`` (``x ** j``
    when ``increasing``); integer and bool inputs give int64.

    >>> import ember
    >>> ember.vander(ember.tensor([1, 2, 3]))
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x.shape[0]
    elif N < 0:
        raise RuntimeError("N must be non-negative.")
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        dtypes.promote_types(x.dtype, dtypes.int64)  # PyTorch's error for uint16/32/64
        x = x.to(dtypes.int64)
    n = x.shape[0]
    if N == 0:
        return x.new_empty((n, 0))
    columns = x.new_ones((n, 1))
    if N > 1:
        powers = Cumprod.apply(S.expand(S.unsqueeze(x, 1), (n, N - 1)), 1)
        columns = S.cat([columns, powers], 1)
    return columns if increasing else S.flip(columns, 1)


# ---- index factories ----------------------------------------------------------------------------
def _triangle_indices(name, lower, row, col, offset, dtype, device, layout):
    if dtype is None:
        dtype = dtypes.int64
    if layout is not None and str(layout) not in ("torch.strided", "ember.strided", "strided"):
        raise NotImplementedError(f"{name}: only the strided layout is supported")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if dtype not in (dtypes.int64, dtypes.int32):
        raise NotImplementedError(f"\"{name}\" not implemented for '{dtype.scalar_name}'")
    # the indices depend on sizes only: built on the host, then placed on the device
    rows, cols = (np.tril_indices if lower else np.triu_indices)(row, offset, col)
    return tensor(np.stack([rows, cols]).astype(np.int64).reshape(2, -1), dtype=dtype,
                  device=device)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype: dtype | None = None,
                 device: Any = None, layout: Any = None) -> Tensor:
    """The (row, column) indices of the lower triangle of a ``row`` x ``col`` matrix (the
    ``offset``-th diagonal and below), row by row, as a 2 x N tensor.

    >>> import ember
    >>> ember.tril_indices(3, 3)
    tensor([[0, 1, 1, 2, 2, 2],
            [0, 0, 1, 0, 1, 2]])
    """
    return _triangle_indices("tril_indices", True, row, col, offset, dtype, device, layout)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype: dtype | None = None,
                 device: Any = None, layout: Any = None) -> Tensor:
    """The (row, column) indices of the upper triangle of a ``row`` x ``col`` matrix (the
    ``offset``-th diagonal and above), row by row, as a 2 x N tensor.

    >>> import ember
    >>> ember.triu_indices(3, 3, 1)
    tensor([[0, 0, 1],
            [1, 2, 2]])
    """
    return _triangle_indices("triu_indices", False, row, col, offset, dtype, device, layout)
