"""Tensors as PyTorch stores them: a 1-D storage plus (offset, size, stride) per tensor.

Saving: tensors whose memory overlaps are written as one storage and views of it, so an
expanded tensor (stride 0) takes the room of its base, not of its shape, and views of one
base are written once. Loading: every tensor becomes a NumPy view of its storage (checked to
lie inside it), so views of one storage share memory after loading, as in PyTorch.
"""
import numpy as np

from ..backend import contiguous_strides, strided_view


# ---- saving -----------------------------------------------------------------------------------
def _extent(a):
    """The byte range [lo, hi) that ``a`` touches, or None when ``a`` can't be described as a
    view of a storage with non-negative element strides."""
    item = a.itemsize
    if a.size == 0 or any(s < 0 or s % item for s in a.strides):
        return None
    lo = a.__array_interface__["data"][0]  # the lowest address, as no stride is negative
    return lo, lo + sum((n - 1) * s for n, s in zip(a.shape, a.strides)) + item


def plan_storages(arrays):
    """Lay ``arrays`` out as 1-D storages: returns ``(storages, placements)`` where
    ``placements[i] = (storage number, offset, stride)`` (in elements) rebuilds ``arrays[i]``.

    Arrays whose byte ranges overlap (chains of overlaps included) form one group, stored as
    the memory the group spans -- which lies inside one allocation, since distinct allocations
    can't overlap -- unless the span is larger than the arrays themselves (e.g. a column of a
    big matrix): then, as for arrays of differing dtypes, each array is stored on its own.
    Arrays in different groups share no element, so storing them apart loses nothing.
    """
    storages, placements = [], [None] * len(arrays)

    def store_alone(i):
        a = arrays[i]
        placements[i] = (len(storages), 0, contiguous_strides(a.shape))
        storages.append(np.ascontiguousarray(a).reshape(-1))

    def store_group(group, hi):
        lo = group[0][0]
        members = [arrays[i] for _, i in group]
        dtype, item = members[0].dtype, members[0].itemsize
        if (any(a.dtype != dtype for a in members) or any((start - lo) % item for start, _ in group)
                or hi - lo > sum(a.nbytes for a in members)):
            for _, i in group:
                store_alone(i)
            return
        first = arrays[group[0][1]]  # its data pointer is lo
        storage = strided_view(first, ((hi - lo) // item,), (item,), writeable=False)
        for start, i in group:
            placements[i] = (len(storages), (start - lo) // item,
                             tuple(s // item for s in arrays[i].strides))
        storages.append(storage)

    spans = []
    for i, a in enumerate(arrays):
        extent = _extent(a)
        if extent is None:
            store_alone(i)
        else:
            spans.append((extent[0], extent[1], i))
    spans.sort()
    group, group_hi = [], 0
    for lo, hi, i in spans:
        if group and lo < group_hi:
            group.append((lo, i))
            group_hi = max(group_hi, hi)
        else:
            if group:
                store_group(group, group_hi)
            group, group_hi = [(lo, i)], hi
    if group:
        store_group(group, group_hi)
    return storages, placements


# ---- loading ----------------------------------------------------------------------------------
def _ints(value, what, fail):
    if isinstance(value, (list, tuple)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    fail(f"{what} {str(value)[:80]} is not a sequence of integers")


def view_of_storage(storage, offset, size, stride, fail):
    """The elements of the 1-D array ``storage`` that ``offset``, ``size`` and ``stride`` (in
    elements) select, as a view sharing its memory; ``fail(message)`` raises for records that
    don't fit inside the storage. A view in which several elements share memory (a stride of 0,
    as ``expand`` makes) is read-only, as ember's own ``expand`` is."""
    size, stride = _ints(size, "size", fail), _ints(stride, "stride", fail)
    if not isinstance(offset, int) or isinstance(offset, bool):
        fail(f"storage offset {offset!r} is not an integer")
    if len(size) != len(stride):
        fail(f"size {list(size)} and stride {list(stride)} differ in length")
    if offset < 0 or any(n < 0 for n in size) or any(s < 0 for s in stride):
        fail(f"negative size, stride or storage offset (size {list(size)}, stride "
             f"{list(stride)}, offset {offset})")
    item = storage.itemsize
    try:
        if 0 in size:
            return np.empty(size, storage.dtype)
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.size:
            fail(f"a tensor of size {list(size)}, stride {list(stride)} and storage offset "
                 f"{offset} reaches past the end of its storage of {storage.size} elements")
        view = np.ndarray(size, storage.dtype, buffer=storage, offset=offset * item,
                          strides=tuple(s * item for s in stride))
    except (ValueError, OverflowError) as e:  # more elements than an array can index
        fail(f"a tensor of size {list(size)} is too big ({e})")
    if any(n > 1 and s == 0 for n, s in zip(size, stride)):
        view.flags.writeable = False
    return view
