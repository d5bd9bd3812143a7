"""Variable-length sequences for the recurrent layers: PackedSequence and the functions
that pad, pack and unpack, as ``torch.nn.utils.rnn``.

A packed batch keeps the sequences sorted by decreasing length and stores them time step
by time step: ``data`` holds step 0 of every sequence, then step 1 of those still running,
and so on; ``batch_sizes[t]`` says how many sequences run at step ``t``. Everything here is
made of differentiable ops, so gradients flow through packing and unpacking.

>>> import ember
>>> from ember.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> packed = pack_sequence([ember.tensor([1., 2., 3.]), ember.tensor([4., 5.])])
>>> packed.data, packed.batch_sizes
(tensor([1., 4., 2., 5., 3.]), tensor([2, 2, 1]))
>>> pad_packed_sequence(packed, batch_first=True)
(tensor([[1., 2., 3.],
        [4., 5., 0.]]), tensor([3, 2]))
"""
from collections import namedtuple

from ... import _functions as _F
from ...backend import dtypes
from ..._creation import beside as _beside, tensor as _tensor
from ..._tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]

_PackedSequenceFields = namedtuple("PackedSequence_",
                                   ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _int64(values):
    """Host int64 values (batch sizes, lengths: on the CPU whatever the default device)."""
    return _tensor(list(values), dtype=dtypes.int64, device="cpu")


def invert_permutation(permutation):
    """The permutation that undoes ``permutation`` (None stays None).

    >>> import ember
    >>> from ember.nn.utils.rnn import invert_permutation
    >>> invert_permutation(ember.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    return _F.argsort(permutation)


class PackedSequence(_PackedSequenceFields):
    """A packed batch of sequences (a named tuple): ``data``, ``batch_sizes`` (int64 on the
    CPU), ``sorted_indices`` (the batch order used, or None when the input was sorted) and
    ``unsorted_indices`` (its inverse). Make one with :func:`pack_padded_sequence` or
    :func:`pack_sequence`, not by hand.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_sequence
    >>> pack_sequence([ember.tensor([1., 2.]), ember.tensor([3.])]).batch_sizes
    tensor([2, 1])
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # the (data, batch_sizes) pair of the packing kernel
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never "
                "be created manually. They should be instantiated by functions like "
                "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """``data.to(...)``; the index tensors follow ``data``'s device. Returns ``self``
        when ``data`` is unchanged."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        extra = {k: v for k, v in kwargs.items() if k not in ("device", "dtype")}
        sorted_indices, unsorted_indices = (
            None if t is None else t.to(data.device, **extra)
            for t in (self.sorted_indices, self.unsorted_indices))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cpu(self, *args, **kwargs):
        """This sequence on the CPU."""
        return self.to(*args, device="cpu", **kwargs)

    def cuda(self, *args, **kwargs):
        """This sequence on a CUDA device (fails as ``Tensor.cuda`` does without one)."""
        data = self.data.cuda(*args, **kwargs)
        return self.to(device=data.device)

    def double(self):
        """``data`` as float64."""
        return self.to(dtype=dtypes.float64)

    def float(self):
        """``data`` as float32."""
        return self.to(dtype=dtypes.float32)

    def half(self):
        """``data`` as float16."""
        return self.to(dtype=dtypes.float16)

    def long(self):
        """``data`` as int64."""
        return self.to(dtype=dtypes.int64)

    def int(self):
        """``data`` as int32."""
        return self.to(dtype=dtypes.int32)

    def short(self):
        """``data`` as int16."""
        return self.to(dtype=dtypes.int16)

    def char(self):
        """``data`` as int8."""
        return self.to(dtype=dtypes.int8)

    def byte(self):
        """``data`` as uint8."""
        return self.to(dtype=dtypes.uint8)

    @property
    def is_cuda(self):
        """Whether ``data`` lives on a CUDA device."""
        return self.data.is_cuda

    def is_pinned(self):
        """Whether ``data`` is in pinned memory."""
        return self.data.is_pinned()


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        if lengths.dim() != 1:
            raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                               f"{lengths.dim()}D {lengths.device.type} "
                               f"{_legacy_name(lengths.dtype)} tensor")
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _legacy_name(dtype):
    names = {"int64": "Long", "int32": "Int", "float32": "Float", "float64": "Double",
             "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
             "float16": "Half", "bfloat16": "BFloat16"}
    return names.get(dtype.name, dtype.name)


def _batch_sizes(sorted_lengths):
    """How many of the (decreasing) lengths exceed each time step."""
    sizes, count = [], len(sorted_lengths)
    for t in range(sorted_lengths[0] if sorted_lengths else 0):
        while count and sorted_lengths[count - 1] <= t:
            count -= 1
        sizes.append(count)
    return sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) whose
    sequences have the given ``lengths``. With ``enforce_sorted=True`` the lengths must
    decrease; otherwise the batch is sorted here and the order kept in the result.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_padded_sequence
    >>> padded = ember.tensor([[1., 2., 0.], [3., 4., 5.]])
    >>> p = pack_padded_sequence(padded, [2, 3], batch_first=True, enforce_sorted=False)
    >>> p.data, p.sorted_indices
    (tensor([3., 1., 4., 2., 5.]), tensor([1, 0]))
    """
    lengths = _lengths_list(lengths)
    batch_dim = 0 if batch_first else 1
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
        sorted_lengths = lengths
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])  # stable, as torch
        sorted_indices = _beside(_int64(order), input)  # indexes input: in its module
        sorted_lengths = [lengths[i] for i in order]
        if len(lengths) == input.size(batch_dim):
            input = input.index_select(batch_dim, sorted_indices)
    data, batch_sizes = _pack(input, sorted_lengths, batch_first)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _pack(input, sorted_lengths, batch_first):
    if batch_first:
        input = input.transpose(0, 1)
    if len(sorted_lengths) != input.size(1):
        raise RuntimeError("Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{len(sorted_lengths)} (batch_size={input.size(1)})")
    if sorted_lengths and sorted_lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if sorted_lengths and sorted_lengths[0] > input.size(0):
        raise RuntimeError(f"Expected all lengths to be at most the sequence length "
                           f"{input.size(0)}, but found a length of {sorted_lengths[0]}")
    sizes = _batch_sizes(sorted_lengths)
    steps = [input[t, :size] for t, size in enumerate(sizes)]
    return _F.cat(steps, 0), _int64(sizes)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo :func:`pack_padded_sequence`: ``(padded, lengths)`` with ``padded`` of shape
    ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``), ``T`` the longest length or
    ``total_length``, in the batch order the sequences were packed from.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_sequence, pad_packed_sequence
    >>> p = pack_sequence([ember.tensor([1., 2.]), ember.tensor([3.])])
    >>> pad_packed_sequence(p, total_length=3)[0]
    tensor([[1., 3.],
            [2., 0.],
            [0., 0.]])
    """
    data, batch_sizes = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    max_len = len(batch_sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and "
                             f"max sequence length being {max_len}")
    else:
        total_length = max_len
    batch = batch_sizes[0] if batch_sizes else 0
    feature_shape = tuple(data.shape[1:])
    rows, start = [], 0
    for size in batch_sizes:
        step = data[start:start + size]
        start += size
        if size < batch:
            step = _F.cat([step, data.new_full((batch - size,) + feature_shape,
                                               padding_value)], 0)
        rows.append(step)
    if total_length > max_len:
        fill = data.new_full((batch,) + feature_shape, padding_value)
        rows.extend([fill] * (total_length - max_len))
    padded = _F.stack(rows, 1 if batch_first else 0)
    lengths = [sum(1 for size in batch_sizes if size > b) for b in range(batch)]
    if sequence.unsorted_indices is not None:
        order = [int(i) for i in sequence.unsorted_indices.tolist()]
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = [lengths[i] for i in order]
    return padded, _int64(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with
    ``batch_first``), filling with ``padding_value`` on the ``padding_side``.

    >>> import ember
    >>> from ember.nn.utils.rnn import pad_sequence
    >>> pad_sequence([ember.tensor([1, 2]), ember.tensor([3])], batch_first=True)
    tensor([[1, 2],
            [3, 0]])
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        missing = max_len - s.size(0)
        if missing:
            fill = s.new_full((missing,) + tuple(s.shape[1:]), padding_value)
            s = _F.cat([s, fill] if padding_side == "right" else [fill, s], 0)
        padded.append(s)
    return _F.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of its sequences, cut to ``lengths``.

    >>> import ember
    >>> from ember.nn.utils.rnn import unpad_sequence
    >>> unpad_sequence(ember.tensor([[1, 2], [3, 0]]), [2, 1], batch_first=True)
    [tensor([1, 2]), tensor([3])]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:length] for seq, length in zip(padded_sequences, _lengths_list(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors of shapes ``(L_i, *)``; with ``enforce_sorted=True`` their
    lengths must decrease.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_sequence
    >>> pack_sequence([ember.tensor([1]), ember.tensor([2, 3])], enforce_sorted=False).data
    tensor([2, 1, 3])
    """
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences a PackedSequence holds, in their original order.

    >>> import ember
    >>> from ember.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> unpack_sequence(pack_sequence([ember.tensor([1]), ember.tensor([2, 3])],
    ...                               enforce_sorted=False))
    [tensor([1]), tensor([2, 3])]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
