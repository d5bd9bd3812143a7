"""``nonzero_static``: the indices of the nonzero elements in a result of a fixed number of
rows (cut, or padded with ``fill_value``), so its shape does not depend on the data."""
from __future__ import annotations

from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.meta import is_meta
from .primitive import Primitive


class NonzeroStatic(Primitive):
    differentiable = False

    @staticmethod
    def forward(ctx, x, size, fill_value):
        d = x._data
        if d.dtype.kind == "u" and d.dtype.itemsize > 1:  # PyTorch's limited unsigned types
            raise NotImplementedError(f"\"nonzero_count_cpu\" not implemented for "
                                      f"'{x.dtype.scalar_name}'")
        xp = get_array_module(d)
        out = xp.full((size, d.ndim), fill_value, dtype=xp.int64)
        if is_meta(d):  # the shape is known without reading the data
            return out
        found = xp.argwhere(d)
        n = min(size, found.shape[0])
        out[:n] = found[:n]
        return out


def _check_int(value, name):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"nonzero_static(): argument '{name}' must be int, not "
                        f"{type(value).__name__}")


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The indices of ``input``'s nonzero elements (as ``nonzero``), in exactly ``size``
    rows: the first ``size`` when there are more, rows of ``fill_value`` after them when
    there are fewer.

    >>> import ember
    >>> ember.nonzero_static(ember.tensor([[0, 1], [2, 0]]), size=3)
    tensor([[ 0,  1],
            [ 1,  0],
            [-1, -1]])
    """
    _check_int(size, "size")
    _check_int(fill_value, "fill_value")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    return NonzeroStatic.apply(input, size, fill_value)
