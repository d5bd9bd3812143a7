"""Making nested tensors: ``ember.nested``'s factories (``nested_tensor``,
``as_nested_tensor``, ``nested_tensor_from_jagged``, ``narrow``, ``masked_select``) and
``to_padded_tensor``, with PyTorch's argument checks and errors.

>>> import ember
>>> nt = ember.nested.nested_tensor([ember.ones(1, 2), ember.zeros(2, 2)], layout=ember.jagged)
>>> nt.offsets()
tensor([0, 1, 3])
"""
from __future__ import annotations

from .. import _functions as F
from .._creation import arange, tensor as _tensor
from .._tensor import Tensor
from ..backend.dtypes import int64
from .handlers import to_padded_tensor as _to_padded
from .tensor import (NestedTensor, is_nested, jagged, jagged_from_lengths, layout_of,
                     make_jagged, make_strided, strided)
from .ops import _narrow


def _check_layout(layout):
    if layout is None:
        return strided
    if layout not in (strided, jagged):
        raise RuntimeError(f"Specified layout is unsupported for nested tensors: {layout}")
    return layout


def _as_tensors(tensor_list, dtype, device, layout):
    if layout == jagged and not hasattr(tensor_list, "__iter__"):
        raise TypeError(f"'{type(tensor_list).__name__}' object is not iterable")
    if not isinstance(tensor_list, list):
        raise TypeError("Only lists (List[Tensor] and List[List...[Scalar]]) are accepted in "
                        "nested_tensor")
    return [t if isinstance(t, Tensor) else _tensor(t, dtype=dtype, device=device)
            for t in tensor_list]


def _check_jagged(tensors):
    if any(t.dim() == 0 for t in tensors):
        raise RuntimeError("Cannot construct a nested tensor from a list of zero-dim tensors")
    if len({t.dim() for t in tensors}) > 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have "
                           "the same dim")
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError("When constructing a nested tensor, all tensors in list must have "
                           "the same dtype")
    if len({tuple(t.shape[1:]) for t in tensors}) > 1:
        raise RuntimeError("Cannot represent given tensor list as a nested tensor with the "
                           "jagged layout. Note that the jagged layout only allows for a single "
                           "ragged dimension. For example: (B, *, D_0, D_1, ..., D_N), with "
                           "ragged * dim.")


def _check_strided(tensors):
    for i, t in enumerate(tensors[1:], 1):
        if t.dim() != tensors[0].dim():
            raise RuntimeError(f"All Tensors given to nested_tensor must have the same "
                               f"dimension. Found dimension {t.dim()} for Tensor at index {i} "
                               f"and dimension {tensors[0].dim()} for Tensor at index 0.")


def _build(tensors, dtype, device, layout, copy):
    """The nested tensor of ``tensors`` (detached copies when ``copy``)."""
    if layout == jagged:
        _check_jagged(tensors)
        if dtype is not None or device is not None:
            tensors = [t.to(dtype=dtype, device=device) for t in tensors]
        if copy:
            tensors = [t.detach() for t in tensors]
        if not tensors:
            raise RuntimeError("Cannot construct a nested tensor from an empty tensor list")
        values = F.cat(tensors, 0)
        return jagged_from_lengths(values, [t.shape[0] for t in tensors])
    _check_strided(tensors)
    if tensors:
        dtype = dtype if dtype is not None else tensors[0].dtype
        tensors = [t.to(dtype=dtype, device=device) for t in tensors]
    if copy:
        tensors = [t.detach().clone() for t in tensors]
    return make_strided(tensors)


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False) -> NestedTensor:
    """A nested tensor holding copies of ``tensor_list`` (tensors, or lists of numbers);
    a leaf when ``requires_grad``.

    >>> import ember
    >>> nt = ember.nested.nested_tensor([ember.ones(2), ember.zeros(1)])
    >>> nt
    nested_tensor([
      tensor([1., 1.]),
      tensor([0.])
    ])
    """
    if pin_memory:
        raise NotImplementedError("pin_memory=True: ember has no pinned host memory")
    layout = _check_layout(layout)
    tensors = _as_tensors(tensor_list, dtype, device, layout)
    nt = _build(tensors, dtype, device, layout, copy=True)
    if requires_grad:
        nt.requires_grad_(True)
    return nt


def as_nested_tensor(ts, dtype=None, device=None, layout=None) -> NestedTensor:
    """A nested tensor of ``ts`` (a list of tensors, or a dense tensor's rows) that keeps
    the autograd history: gradients flow back to ``ts``.

    >>> import ember
    >>> ember.nested.as_nested_tensor(ember.ones(2, 3), layout=ember.jagged).offsets()
    tensor([0, 3, 6])
    """
    layout = _check_layout(layout)
    if is_nested(ts):
        if layout_of(ts) != layout:
            raise RuntimeError("as_nested_tensor(): converting between nested layouts is "
                               "not supported")
        return ts if dtype is None and device is None else ts.to(dtype=dtype, device=device)
    if isinstance(ts, Tensor):
        if ts.dim() < 1:
            raise RuntimeError("as_nested_tensor(): Expected tensor argument to have dim() > 1")
        if layout == jagged:
            t = ts.to(dtype=dtype, device=device) if dtype or device else ts
            if t.dim() == 1:
                raise RuntimeError("Cannot construct a nested tensor from a list of zero-dim "
                                   "tensors")
            values = t.flatten(0, 1)
            return jagged_from_lengths(values, [t.shape[1]] * t.shape[0])
        ts = list(ts.unbind(0))
    if not isinstance(ts, (list, tuple)) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError("as_nested_tensor(): Expected first argument to be a tensor or a list "
                        "/ tuple of tensors ")
    return _build(list(ts), dtype, device, layout, copy=False)


def nested_tensor_from_jagged(values, offsets=None, lengths=None, jagged_dim=None,
                              min_seqlen=None, max_seqlen=None) -> NestedTensor:
    """A jagged nested tensor viewing ``values``: component ``i`` is rows
    ``offsets[i]:offsets[i + 1]`` (or ``lengths[i]`` rows from ``offsets[i]``) of its dim
    ``jagged_dim - 1``.

    >>> import ember
    >>> nt = ember.nested.nested_tensor_from_jagged(ember.arange(5.0), ember.tensor([0, 2, 5]))
    >>> [c.tolist() for c in nt.unbind()]
    [[0.0, 1.0], [2.0, 3.0, 4.0]]
    """
    if offsets is None:
        if lengths is None:
            raise RuntimeError("nested_tensor_from_jagged(): At least one of offsets or "
                               "lengths is required.")
        offsets = F.cat([lengths.new_zeros(1), F.cumsum(lengths, 0)]).to(int64)
        lengths = None
    ragged_idx = 1 if jagged_dim is None else int(jagged_dim)
    if not 1 <= ragged_idx <= values.dim():
        raise RuntimeError(f"nested_tensor_from_jagged(): jagged_dim {ragged_idx} is out of "
                           f"range for values of dim {values.dim()}")
    return make_jagged(values, offsets, lengths, ragged_idx)


def narrow(tensor, dim, start, length, layout=None) -> NestedTensor:
    """The nested tensor of ``tensor``'s rows, each narrowed along ``dim`` from ``start``
    for ``length`` (per row when they are tensors; jagged layout only).

    >>> import ember
    >>> nt = ember.nested.narrow(ember.arange(6.0).reshape(2, 3), 1, ember.tensor([0, 1]),
    ...                          ember.tensor([1, 2]), layout=ember.jagged)
    >>> [c.tolist() for c in nt.unbind()]
    [[0.0], [4.0, 5.0]]
    """
    layout = _check_layout(layout)
    if layout == strided:
        if isinstance(start, Tensor) or isinstance(length, Tensor):
            raise RuntimeError("start and length must be integers for the strided layout NT "
                               "impl")
        nt = as_nested_tensor(tensor, layout=strided)
        return _narrow(None, nt, dim, start, length)
    if dim != 1:
        raise RuntimeError("jagged layout only supports dim=1")
    batch, rows = tensor.shape[0], tensor.shape[1]
    starts = start if isinstance(start, Tensor) else \
        _tensor([int(start)] * batch, device=tensor.device)
    lengths = length if isinstance(length, Tensor) else \
        _tensor([int(length)] * batch, device=tensor.device)
    begins = arange(batch, device=tensor.device) * rows + starts.to(int64)
    offsets = F.cat([begins, (begins[-1:] + lengths[-1:].to(int64))])
    return make_jagged(tensor.flatten(0, 1), offsets, lengths.to(int64), 1)


def to_padded_tensor(input, padding, output_size=None) -> Tensor:
    """The dense tensor of a nested tensor, its components padded with ``padding`` to the
    largest size on each dim (or to ``output_size``).

    >>> import ember
    >>> nt = ember.nested.nested_tensor([ember.ones(1), ember.ones(2)])
    >>> ember.nested.to_padded_tensor(nt, 0.0)
    tensor([[1., 0.],
            [1., 1.]])
    """
    if not is_nested(input):
        raise RuntimeError("to_padded_tensor(): expected a nested tensor")
    return _to_padded(None, input, padding, output_size)


def masked_select(tensor, mask) -> NestedTensor:
    """The jagged nested tensor of each row's elements where ``mask`` is True.

    >>> import ember
    >>> x = ember.arange(4.0).reshape(2, 2)
    >>> ember.nested.masked_select(x, ember.tensor([[True, False], [True, True]])).offsets()
    tensor([0, 1, 3])
    """
    if tensor.dim() != 2 or tuple(mask.shape) != tuple(tensor.shape):
        raise RuntimeError("masked_select(): expected a 2-d tensor and a mask of its shape")
    values = tensor[mask]
    lengths = [int(n) for n in mask.sum(1).tolist()]
    return jagged_from_lengths(values, lengths)
