"""Nested (ragged) tensors: the type, its two layouts and the moves between them.

A nested tensor is a batch of tensors whose sizes differ along some dims. ember keeps one
of PyTorch's two layouts in each ``NestedTensor``:

- ``strided`` (``ember.strided``, PyTorch's default nested tensor): a list of ordinary
  tensors, the *components*, all of one dim; any of their dims may differ.
- ``jagged`` (``ember.jagged``, PyTorch's NJT): one packed ``values`` tensor and the int64
  ``offsets`` (``B + 1`` of them) that cut its ragged dim into the ``B`` components, and
  optionally ``lengths`` (a non-contiguous NJT: component ``i`` is ``lengths[i]`` rows from
  ``offsets[i]``). The nested dims are ``(B, *values.shape)`` with the ragged dim of the
  values (its ``ragged_idx - 1``) standing for the nested dim ``ragged_idx``.

Every computation is an ordinary dense op on the components or the values, so autograd,
gradcheck and devices come from the dense ops. Calls reach the nested code through
``__torch_function__`` (``handlers.py``); dispatch is held on only while a nested tensor
lives, so dense programs pay nothing for the type existing.

>>> import ember
>>> nt = ember.nested.nested_tensor([ember.ones(2, 3), ember.ones(1, 3)])
>>> [tuple(c.shape) for c in nt.unbind()]
[(2, 3), (1, 3)]
"""
from __future__ import annotations

import itertools
import weakref

from .. import _layouts
from .._creation import tensor as _tensor
from .._functions import cat
from .._tensor import Tensor
from .._torch_function import called_name, hold_dispatch

strided = _layouts.strided
jagged = _layouts.jagged  # the layout object (ember.jagged)

#: call name -> the code a nested tensor runs for it (filled by handlers.py); each takes
#: the public function first, then the call's arguments
HANDLERS = {}

_NESTED_INT_COUNTER = itertools.count(1)


class NestedInt:
    """The size of a jagged tensor's ragged dim: PyTorch's symbolic ``j1``, one number per
    offsets tensor (NJTs sharing offsets share it, so they may meet in binary ops)."""
    __slots__ = ("number",)

    def __init__(self):
        self.number = next(_NESTED_INT_COUNTER)

    def __repr__(self):
        return f"j{self.number}"

    __str__ = __repr__

    def __mul__(self, other):
        return _ScaledNestedInt(self, other)

    __rmul__ = __mul__


class _ScaledNestedInt:
    """A stride of a jagged tensor (``4*j1``): printing only."""
    __slots__ = ("base", "factor")

    def __init__(self, base, factor):
        self.base, self.factor = base, factor

    def __repr__(self):
        return f"{self.factor}*{self.base}"


def nested_int_of(offsets: Tensor) -> NestedInt:
    """The ragged size of the jagged tensors cut by ``offsets``: one ``NestedInt`` per
    offsets tensor, kept on it (PyTorch caches its symbol on the offsets the same way)."""
    j = offsets.__dict__.get("_nested_int")
    if j is None:
        j = offsets.__dict__["_nested_int"] = NestedInt()
    return j


def no_nested_kernel(name: str) -> NotImplementedError:
    """PyTorch's error for an op a strided nested tensor has no kernel for."""
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'NestedTensorCPU' backend. "
        f"This could be because the operator doesn't exist for this backend, or was omitted "
        f"during the selective/custom build process (if using custom build).")


def no_jagged_kernel(name: str) -> NotImplementedError:
    """PyTorch's error for an op a jagged nested tensor has no rule for."""
    return NotImplementedError(f"aten.{name}.default")


class NestedData:
    """The ``_data`` of a nested tensor: it has no one array; everything refuses."""
    __slots__ = ("layout",)
    base = None

    def __init__(self, layout):
        self.layout = layout

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                           "file an issue.")

    def __array__(self, *args, **kwargs):
        raise RuntimeError("Internal error: NestedTensorImpl doesn't support sizes. Please "
                           "file an issue.")


class NestedTensor(Tensor):
    """A nested tensor (see the module). Made by ``ember.nested.nested_tensor`` and the
    other ``ember.nested`` factories; ``type(nt)`` is this class for both layouts."""
    _dispatch_while_alive = True
    _repr_as_tensor = True

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = called_name(func)
        handler = HANDLERS.get(name)
        if handler is None:
            raise unsupported(name, args, kwargs)
        return handler(func, *args, **(kwargs or {}))

    # the jagged layout's own methods (a dense tensor has none of them)
    def offsets(self):
        """The ``B + 1`` offsets cutting a jagged tensor's values (None for strided)."""
        return HANDLERS["offsets"](None, self)

    def lengths(self):
        """The lengths of a non-contiguous jagged tensor's components (else None)."""
        return HANDLERS["lengths"](None, self)

    def to_padded_tensor(self, padding, output_size=None):
        """The dense tensor, shorter components padded (``ember.nested.to_padded_tensor``)."""
        return HANDLERS["to_padded_tensor"](None, self, padding, output_size)


# the ATen overloads PyTorch names in its errors where they differ from the call's name
_STRIDED_ATEN = {"var": "var.correction", "std": "std.correction", "norm":
                 "linalg_vector_norm", "slice": "slice.Tensor"}
_JAGGED_ATEN = {"var": "var.correction", "std": "std.correction", "norm": "norm.ScalarOpt_dim"}


def unsupported(name, args, kwargs=None):
    """The error for a call nested tensors do not answer, in the layout's wording."""
    name = name.strip("_")
    for a in itertools.chain(args, (kwargs or {}).values()):
        if isinstance(a, (list, tuple)):
            a = next((x for x in a if is_nested(x)), None)
        if is_nested(a):
            if layout_of(a) == jagged:
                return NotImplementedError(f"aten.{_JAGGED_ATEN.get(name, name + '.default')}")
            return no_nested_kernel(_STRIDED_ATEN.get(name, name))
    return no_nested_kernel(name)



def _new(layout, state) -> NestedTensor:
    t = object.__new__(NestedTensor)
    t._data = NestedData(layout)
    t._requires_grad = False  # the components / values carry autograd
    t._grad_fn = None
    t._output_nr = 0
    t._vc = [0]
    t._base = None
    t.__dict__.update(state)
    hold_dispatch(1)
    weakref.finalize(t, hold_dispatch, -1)
    return t


def make_strided(components) -> NestedTensor:
    """A strided-layout nested tensor of ``components`` as they are (one dim, dtype)."""
    return _new(strided, {"_nt_layout": strided, "_nt_components": list(components)})


def make_jagged(values: Tensor, offsets: Tensor, lengths: Tensor | None = None,
                ragged_idx: int = 1, bounds=None) -> NestedTensor:
    """A jagged-layout nested tensor of ``values`` cut by ``offsets`` (and ``lengths``)
    along its dim ``ragged_idx - 1``; ``bounds``: the host (start, length) pairs if known."""
    if bounds is None:
        starts = [int(o) for o in offsets.tolist()]
        if lengths is None:
            bounds = [(s, e - s) for s, e in zip(starts[:-1], starts[1:])]
        else:
            bounds = list(zip(starts[:-1], [int(n) for n in lengths.tolist()]))
    return _new(jagged, {"_nt_layout": jagged, "_nt_values": values, "_nt_offsets": offsets,
                         "_nt_lengths": lengths, "_nt_ragged_idx": ragged_idx,
                         "_nt_bounds": bounds})


def is_nested(t) -> bool:
    return type(t) is NestedTensor


def layout_of(nt: NestedTensor) -> str:
    return nt.__dict__["_nt_layout"]


def is_jagged(nt) -> bool:
    return type(nt) is NestedTensor and nt.__dict__["_nt_layout"] == jagged


def values_of(nt: NestedTensor) -> Tensor:
    return nt.__dict__["_nt_values"]


def offsets_of(nt: NestedTensor) -> Tensor:
    return nt.__dict__["_nt_offsets"]


def lengths_of(nt: NestedTensor):
    return nt.__dict__["_nt_lengths"]


def ragged_idx_of(nt: NestedTensor) -> int:
    return nt.__dict__["_nt_ragged_idx"]


def bounds_of(nt: NestedTensor):
    return nt.__dict__["_nt_bounds"]


def components(nt: NestedTensor) -> list:
    """The ``B`` tensors of ``nt`` (a jagged tensor's: views of its values)."""
    if layout_of(nt) == strided:
        return nt.__dict__["_nt_components"]
    dim = ragged_idx_of(nt) - 1
    values = values_of(nt)
    return [values.narrow(dim, start, length) for start, length in bounds_of(nt)]


def batch_size(nt: NestedTensor) -> int:
    if layout_of(nt) == strided:
        return len(nt.__dict__["_nt_components"])
    return len(bounds_of(nt))


def nested_dim(nt: NestedTensor) -> int:
    if layout_of(nt) == strided:
        comps = nt.__dict__["_nt_components"]
        return comps[0].dim() + 1 if comps else 1
    return values_of(nt).dim() + 1


def first_tensor(nt: NestedTensor) -> Tensor | None:
    """A tensor holding ``nt``'s dtype and device (None for an empty strided one)."""
    if layout_of(nt) == jagged:
        return values_of(nt)
    comps = nt.__dict__["_nt_components"]
    return comps[0] if comps else None


def with_values(nt: NestedTensor, values: Tensor, ragged_idx: int | None = None):
    """``nt``'s offsets, lengths (and ragged-dim symbol) with other values."""
    return make_jagged(values, offsets_of(nt), lengths_of(nt),
                       ragged_idx_of(nt) if ragged_idx is None else ragged_idx, bounds_of(nt))


def like(nt: NestedTensor, comps, ragged_idx: int | None = None) -> NestedTensor:
    """A nested tensor of ``nt``'s layout made of ``comps`` (a jagged one is packed; it
    keeps ``nt``'s offsets where the lengths along the ragged dim did not change)."""
    if layout_of(nt) == strided:
        return make_strided(comps)
    r = ragged_idx_of(nt) if ragged_idx is None else ragged_idx
    values = cat(list(comps), r - 1)
    lengths = [c.shape[r - 1] for c in comps]
    if lengths_of(nt) is None and lengths == [n for _, n in bounds_of(nt)]:
        return make_jagged(values, offsets_of(nt), None, r, bounds_of(nt))
    return jagged_from_lengths(values, lengths, r)


def jagged_from_lengths(values: Tensor, lengths, ragged_idx: int = 1) -> NestedTensor:
    """A contiguous jagged tensor whose components have ``lengths`` along the ragged dim."""
    starts = list(itertools.accumulate(lengths, initial=0))
    offsets = _tensor(starts, device=values.device)
    bounds = [(s, n) for s, n in zip(starts[:-1], lengths)]
    return make_jagged(values, offsets, None, ragged_idx, bounds)


def nested_shape(nt: NestedTensor) -> tuple:
    """``nt``'s sizes, a ragged dim as None (strided) or its ``NestedInt`` (jagged)."""
    if layout_of(nt) == jagged:
        shape = [batch_size(nt)] + list(values_of(nt).shape)
        shape[ragged_idx_of(nt)] = nested_int_of(offsets_of(nt))
        return tuple(shape)
    comps = nt.__dict__["_nt_components"]
    shape = [len(comps)]
    for d in range(nested_dim(nt) - 1):
        sizes = {c.shape[d] for c in comps}
        shape.append(sizes.pop() if len(sizes) == 1 else None)
    return tuple(shape)
