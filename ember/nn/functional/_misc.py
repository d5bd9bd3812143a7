"""``F.pad`` (constant, reflect, replicate, circular), ``F.one_hot`` and ``F.normalize``."""
from ... import _functions as _fn
from ...backend import dtypes as _dtypes
from ...backend.float8 import check_fits as _check_float8_fits
from ..._ops.indexing import index_select_any as _index_select_any

_NON_CONSTANT_HELP = (
    "Supported combinations for non-constant padding:\n"
    "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
    "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
    "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad_constant(input, pairs, value):
    out = input
    for dim, (left, right) in pairs:
        size = out.shape[dim]
        if left < 0 or right < 0:
            start = -left if left < 0 else 0
            length = size - start - (-right if right < 0 else 0)
            if length < 0:
                raise RuntimeError("narrow(): length must be non-negative.")
            out = out.narrow(dim, start, length)
        parts = []
        for n in (left, right):
            if n > 0:
                shape = list(out.shape)
                shape[dim] = n
                parts.append(out.new_full(shape, value))
            else:
                parts.append(None)
        if parts[0] is not None or parts[1] is not None:
            out = _fn.cat([p for p in (parts[0], out, parts[1]) if p is not None], dim)
    return out


def _source_index(j, size, mode, crop=(0, 0)):
    if mode == "reflect":
        j = abs(j)
        period = 2 * (size - 1)
        j = j % period if period else 0
        return period - j if j >= size else j
    if mode == "replicate":
        return min(max(j, 0), size - 1)
    # circular: a negative pad crops first and the other side wraps around what is left
    lo, kept = crop[0], size - crop[0] - crop[1]
    return lo + (j - lo) % kept if kept > 0 else j % size


def _pad_indexed(input, pairs, mode):
    out = input
    shape = list(input.shape)
    for dim, (left, right) in pairs:
        size = out.shape[dim]
        if mode == "reflect" and (left >= size or right >= size):
            raise RuntimeError(
                f"Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({left}, {right}) at dimension "
                f"{dim % len(shape)} of input {shape}")
        if mode == "circular" and (left > size or right > size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if mode == "replicate" and size == 0 and (left > 0 or right > 0):
            raise RuntimeError(f"padding: input tensor must have a non-zero size at dimension "
                               f"{dim % len(shape)}")
        crop = (max(-left, 0), max(-right, 0))
        index = [_source_index(j, size, mode, crop) for j in range(-left, size + right)]
        index = out.new_tensor(index, dtype=_dtypes.int64)
        # (uint16/32/64: PyTorch's circular padding, unlike index_select, takes them)
        out = _index_select_any(out, dim, index) if out.dtype in _dtypes.LIMITED_UNSIGNED \
            else out.index_select(dim, index)
    return out


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev, ...)``.

    Modes: ``'constant'`` (``value``, default 0; negative padding crops), ``'reflect'``,
    ``'replicate'``, ``'circular'``.
    """
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2 != 0:
        raise RuntimeError("Padding length must be divisible by 2")
    ndim = input.dim()
    if len(pad) // 2 > ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of "
                           f"dimension {ndim}")
    pairs = [(ndim - 1 - k, (pad[2 * k], pad[2 * k + 1])) for k in range(len(pad) // 2)]
    if mode == "constant":
        if input.dtype in _dtypes.FLOAT8:  # PyTorch's fill of the result checks the number
            _check_float8_fits(0 if value is None else value, input.dtype)
        return _pad_constant(input, pairs, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    k = len(pad) // 2
    if k not in (1, 2, 3) or ndim not in (k + 1, k + 2):
        raise NotImplementedError(f"Padding size {len(pad)} is not supported for {ndim}D input "
                                  f"tensor.\n{_NON_CONSTANT_HELP}")
    if mode != "circular" and any(n == 0 for n in input.shape[ndim - k - 1 if ndim == k + 2
                                                              else 0:]):
        # reflect and replicate: only the batch dim of a batched input may be empty
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"[{', '.join(map(str, input.shape))}]")
    if mode != "circular":
        _dtypes.refuse_limited_unsigned(input._data.dtype, (
            "reflection_pad" if mode == "reflect" else "replication_pad") + f"{k}d")
    return _pad_indexed(input, pairs, mode)


def one_hot(tensor, num_classes=-1):
    """int64 tensor of shape ``(*tensor.shape, num_classes)`` with a 1 at each class index;
    ``num_classes=-1`` infers ``max + 1``."""
    if tensor.dtype is not _dtypes.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    elif getattr(tensor, "_vmap_level", None) is not None and num_classes != -1:
        pass  # inside vmap the values can't be checked (PyTorch's batched one_hot skips it)
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = int(tensor.max())
        if num_classes == -1:
            num_classes = top + 1
        elif top >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    # zeros with a 1 scattered in (PyTorch's kernel), made beside ``tensor`` (its array module)
    out = tensor.new_zeros(tuple(tensor.shape) + (num_classes,), dtype=_dtypes.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1).long(), 1)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p along dim, eps)``."""
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    return _fn.div(input, denom, out=out)


__all__ = ["pad", "one_hot", "normalize"]
