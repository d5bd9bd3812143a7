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

from ..autograd import grad_mode, anomaly as _anomaly
from ..autograd.function import Function, BackwardFunction, gradient_edge
from ..autograd.graph import SavedTensor, FREED_MESSAGE, _sequence, _raise_modified
from .._tensor import Tensor

_state = grad_mode._state
_ONE_OUTPUT = (None,)
_new = object.__new__


class PrimitiveNode(BackwardFunction):
    """Node of a built-in op: trusted, so saving skips validation and freeing
    drops only the saved tensors (built-ins keep nothing else that is large).

    Saved inputs are kept as the tuple forward passed plus their versions (no
    per-tensor SavedTensor objects on the hot path); a saved output is one
    SavedTensor, which stores data rather than the tensor (no reference cycle).
    """
    _versions = ()
    _saved_output = None

    def save_for_backward(self, *tensors):
        self._to_save = tensors

    @property
    def saved_tensors(self):
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        for t, v in zip(saved, self._versions):
            if t is not None and t._vc[0] != v:
                _raise_modified(t, v, t._vc[0], t._grad_fn, t._output_nr)
        if self._saved_output is None:
            return saved
        return saved + (self._saved_output.unpack(self),)

    def _release(self):
        self._saved = None
        self._saved_output = None

    def _apply(self, grad_outputs, create_graph=False):
        if len(grad_outputs) == 1:  # the common case, kept free of generic work
            grad = grad_outputs[0]
            if grad is None:
                return [None] * len(self.next_functions)
            grads = self._forward_cls.backward(self, grad)
            if type(grads) is not tuple and type(grads) is not list:
                grads = (grads,)
            if self._tensor_mask is None:
                return grads
            return self._forward_cls._check_grads(self, grads)
        for g in grad_outputs:
            if g is not None:
                return BackwardFunction._apply(self, grad_outputs, create_graph)
        # No gradient arrived at all: built-ins pass "no gradient" on, not zeros.
        return [None] * len(self.next_functions)


class Primitive(Function):
    _node_base = PrimitiveNode
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
        mask = ctx._tensor_mask
        if mask is None:  # all arguments were tensors of the output's dtype
            return grads
        out = []
        dtypes = iter(ctx._input_meta)
        for is_tensor, g in zip(mask, grads):
            if is_tensor:
                dt = next(dtypes)
                if g is not None and g._data.dtype != dt:
                    g = g.to(_BY_NUMPY[dt]) if dt.kind == "f" else None
                out.append(g)
        return out


def _connect(ctx, cls, args, outs):
    """Give ``outs`` their node: edges to the inputs, saved tensors, metadata."""
    out_dtype = outs[0]._data.dtype
    plain = True  # every argument a tensor of the output's dtype: no filtering or casting
    needs, edges = [], []
    for a in args:
        if isinstance(a, Tensor):
            needs.append(a._requires_grad)
            fn = a._grad_fn
            if fn is not None and a._base is None:
                edges.append((fn, a._output_nr))
            else:
                edges.append(gradient_edge(a))
            if plain and a._data.dtype != out_dtype:
                plain = False
        else:
            needs.append(False)
            plain = False
    if not plain:
        ctx._tensor_mask = [isinstance(a, Tensor) for a in args]
        ctx._input_meta = [a._data.dtype for a in args if isinstance(a, Tensor)]
    ctx.needs_input_grad = needs
    ctx.next_functions = edges
    ctx._sequence_nr = next(_sequence)
    if _anomaly._state.enabled:
        _anomaly.record_forward_trace(ctx)
    if len(outs) == 1:
        # One output: the node's own fast path never materializes a missing
        # gradient, so its slot needs no shape/dtype.
        t = outs[0]
        ctx._output_meta = _ONE_OUTPUT
        t._requires_grad = True
        t._grad_fn = ctx
    else:
        meta = []
        for nr, t in enumerate(outs):
            float_out = t._data.dtype.kind == "f"
            meta.append((t._data.shape, _BY_NUMPY[t._data.dtype]) if float_out else None)
            if float_out:
                t._requires_grad = True
                t._grad_fn = ctx
                t._output_nr = nr
        ctx._output_meta = tuple(meta)
    to_save = ctx._to_save
    if to_save:
        ctx._saved = to_save
        ctx._versions = [None if t is None else t._vc[0] for t in to_save]
        ctx._to_save = ()
    if cls.saves_output:
        ctx._saved_output = SavedTensor(outs[0], 0)


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


__all__ = ["Primitive", "PrimitiveNode", "unbroadcast"]
