"""``Primitive``: how ember's built-in ops use the Function mechanism.

A built-in op is a ``Function`` subclass like any user's, with ``forward`` and
``backward`` side by side, the same ctx, the same ``<Name>Backward`` node and
the same engine. Two differences buy speed on the hot path:

* ``forward(ctx, *args)`` receives the input tensors themselves (not detached
  copies) and returns *arrays* (``x._data`` math); ``apply`` wraps them;
* the op is trusted: backward's result is not validated, only cast to the
  input's dtype where promotion changed it.

``backward`` is written with differentiable ember ops on tensors, so with
``create_graph=True`` every built-in op is twice differentiable for free.

Class attributes an op may set: ``saves_output`` (output 0 is appended to
``saved_tensors``), ``is_view`` (output shares the first input's memory),
``differentiable = False`` (comparisons and other ops with no gradient).
"""
import numpy as np

from ..autograd import grad_mode
from ..autograd.function import Function, gradient_edge
from ..autograd.graph import SavedTensor, _sequence
from .._tensor import Tensor

_state = grad_mode._state
_new = object.__new__


class Primitive(Function):
    _validate_grads = False
    saves_output = False
    is_view = False
    differentiable = True

    @classmethod
    def apply(cls, *args):
        ctx = _new(cls._backward_cls)
        record = False
        if _state.enabled and cls.differentiable:
            for a in args:
                if isinstance(a, Tensor) and a._requires_grad:
                    record = True
                    break
        out = cls.forward(ctx, *args)
        if type(out) is tuple:
            outs = tuple(Tensor._make(o) for o in out)
            if record:
                _connect(ctx, cls, args, outs)
            return outs
        t = Tensor._make(out)
        if cls.is_view:
            _link_view(t, cls, args)
        if record and t._data.dtype.kind == "f":
            _connect(ctx, cls, args, (t,))
        return t

    @staticmethod
    def _check_grads(ctx, grads):
        out = []
        dtypes = iter(ctx._input_meta)
        for is_tensor, g in zip(ctx._tensor_mask, grads):
            if is_tensor:
                dt = next(dtypes)
                if g is not None and g._data.dtype != dt:
                    g = g.to(_BY_NUMPY[dt]) if dt.kind == "f" else None
                out.append(g)
        return out


def _connect(ctx, cls, args, outs):
    mask = tuple(isinstance(a, Tensor) for a in args)
    inputs = [a for a, m in zip(args, mask) if m]
    ctx._tensor_mask = mask
    ctx.needs_input_grad = tuple(m and a._requires_grad for a, m in zip(args, mask))
    ctx.next_functions = tuple(gradient_edge(a) for a in inputs)
    ctx._input_meta = tuple(a._data.dtype for a in inputs)
    ctx._sequence_nr = next(_sequence)
    meta = []
    for nr, t in enumerate(outs):
        float_out = t._data.dtype.kind == "f"
        meta.append((t._data.shape, t.dtype) if float_out else None)
        if float_out:
            t._requires_grad = True
            t._grad_fn = ctx
            t._output_nr = nr
    ctx._output_meta = tuple(meta)
    saved = [None if s is None else SavedTensor(s) for s in ctx._to_save]
    if cls.saves_output:
        saved.append(SavedTensor(outs[0], 0))
    ctx._saved = saved
    ctx._to_save = ()


def _link_view(t, cls, args):
    """Make ``t`` (a view of ``args[0]``) share its version counter and base."""
    src = args[0]
    t._vc = src._vc
    t._base = base = src._base if src._base is not None else src
    t._view_version = base._vc[0]
    rest = args[1:]
    parent_fn = src._view_fn
    if parent_fn is None:
        t._view_fn = lambda b: cls.apply(b, *rest)
    else:
        t._view_fn = lambda b: cls.apply(parent_fn(b), *rest)


from ..backend.dtypes import _BY_NUMPY  # noqa: E402


def unbroadcast(grad, shape):
    """Sum ``grad`` down to ``shape`` (undo broadcasting); differentiable."""
    if grad._data.shape == shape:
        return grad
    return grad.sum_to_size(shape)


def as_array(x, like):
    """A Python scalar or tensor as an array usable with ``like``'s data."""
    if isinstance(x, Tensor):
        return x._data
    return x


__all__ = ["Primitive", "unbroadcast", "np"]
