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
``differentiable = False`` (comparisons and other ops with no gradient),
``complex_grad = True`` (backward is right for complex tensors, PyTorch's convention: the
gradient of a real loss is the conjugate Wirtinger derivative; an op without it refuses
complex inputs or results that need a gradient, see ``_refuse_complex``).
"""

from ..backend import as_array as _asarray, numpy_ndarray as _ndarray, get_array_module, \
    move_array, is_array, numpy_scalar_type, numpy_scalar_to_array
from ..device import device_of, device_out_of_memory as _device_out_of_memory

from ..autograd import grad_mode, anomaly as _anomaly, forward_ad as _forward_ad
from ..autograd.batching import hooks as _batching
from ..autograd import dispatch as _dispatch
from ..autograd.function import Function, BackwardFunction
from ..autograd.graph import (SavedTensor, FREED_MESSAGE, _sequence, _raise_modified,
                              gradient_edge)
from .._tensor import Tensor
from ..backend.dtypes import _BY_NUMPY, is_float_np as _is_float_np
from ..autograd.saved_hooks import _state as _saved_hooks_state
from .saved_hooks import pack_node as _pack_saved
from .._torch_function import (OperandTypeError as _OperandTypeError, ACTIVE as _tf_active,
                               PASS as _TF_PASS, dispatch as _tf_dispatch,
                               dispatch_failed as _tf_dispatch_failed,
                               AUTOCAST as _tf_autocast, DISPATCHING as _tf_dispatching)
from .._autocast import cast_operands as _autocast_operands

try:  # the plain case of apply in C (optional, built by setup.py; set up at the end)
    from . import _apply as _native
except ImportError:  # built without a C compiler: the Python apply runs
    _native = None



def set_native_apply(flag):
    """Run built-in ops' plain case with the compiled apply when it was built, or always
    with the Python one; returns the previous setting. Both give the same tensors, nodes
    and errors (tests run both).

    >>> from ember._ops import primitive
    >>> previous = primitive.set_native_apply(False)  # the Python apply from here on
    >>> _ = primitive.set_native_apply(previous)
    """
    if _native is None:
        return False
    return _native.set_enabled(flag)


_state = grad_mode._state
_dispatch_active = _dispatch.active  # true while __torch_dispatch__ may see ops
_fw_active = _forward_ad.active  # non-empty while a forward AD level is open
_anomaly_state = _anomaly._state
_ONE_OUTPUT = (None,)
_new = object.__new__
_make = Tensor._make


class PrimitiveNode(BackwardFunction):
    """Node of a built-in op: trusted, so saving skips validation and freeing
    drops only the saved tensors (built-ins keep nothing else that is large).

    Saved inputs are kept as the tuple forward passed plus their versions (no
    per-tensor SavedTensor objects on the hot path); a saved output is one
    SavedTensor, which stores data rather than the tensor (no reference cycle).
    """
    _versions = ()
    _saved_output = None  # SavedTensor of output 0 when it is a view (see _save_output)
    _out_data = None      # output 0 saved as its array and version counter (no tensor: no cycle)
    _plain_grads = True  # backward's gradients need no filtering or casting (see _connect)

    _output_meta = _ONE_OUTPUT  # set per node only for several outputs

    def save_for_backward(self, *tensors):
        self._saved = tensors  # their versions are recorded by _connect, if a graph is built

    def _saved_inputs(self):
        """The tensors forward saved, checked for in-place changes since."""
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        for k, (t, v) in enumerate(zip(saved, self._versions)):
            if t is not None and t._vc[0] != v and self._reads_saved(k):
                _raise_modified(t, v, t._vc[0], t._grad_fn, t._output_nr)
        return saved

    def _reads_saved(self, k):
        """Whether a wanted gradient reads saved tensor ``k`` (``saved_needed_for``)."""
        readers = self._forward_cls.saved_needed_for
        if readers is None:
            return True
        needs = self.needs_input_grad
        return any(needs[i] for i in readers[k])

    @property
    def saved_tensors(self):
        saved = self._saved_inputs()
        if self._out_data is not None:
            return saved + (self._output_tensor(),)
        if self._saved_output is None:
            return saved
        out = self._saved_output.unpack(self)
        if _fw_active:
            _forward_ad.reattach_output_tangent(self, out, 0)
        return saved + (out,)

    def _output_tensor(self):
        vc = self._out_vc
        if vc[0] != self._out_version:
            _raise_modified(Tensor._make(self._out_data), self._out_version, vc[0], self, 0)
        t = _make(self._out_data, True)
        t._vc = vc
        t._grad_fn = self
        if _fw_active:
            _forward_ad.reattach_output_tangent(self, t, 0)
        return t

    @property
    def saved_arrays(self):
        """``saved_tensors`` as arrays, for ``backward_arrays`` (same checks, no tensors)."""
        arrays = [None if t is None else t._data for t in self._saved_inputs()]
        if self._out_data is not None:
            if self._out_vc[0] != self._out_version:
                self._output_tensor()  # raises the in-place modification error
            arrays.append(self._out_data)
        elif self._saved_output is not None:
            arrays.append(self._saved_output.unpack_data(self))
        return arrays

    def _release(self):
        self._saved = None
        self._saved_output = None
        self._out_data = None

    _accepts_arrays = True  # gradients may arrive as bare arrays (see engine.py)
    # Built-in backward formulas return new arrays or pass on the ones they were given;
    # none keeps or shares what it returns (Note [gradient ownership] in engine.py).
    _fresh_outputs = True

    def _apply(self, grad_outputs, create_graph=False):
        if len(grad_outputs) == 1:  # the common case, kept free of generic work
            grad = grad_outputs[0]
            if grad is None:
                return [None] * len(self.next_functions)
            cls = self._forward_cls
            # Under dispatch, backward runs the tensor formula: its ops are dispatched too.
            if create_graph or cls.backward_arrays is None or _dispatch_active[0]:
                if not isinstance(grad, Tensor):
                    grad = _make(grad)
                grads = cls.backward(self, grad)
                if type(grads) is not tuple and type(grads) is not list:
                    grads = (grads,)
            else:  # arrays in, arrays out: the engine carries them (no graph to record)
                grads = cls.backward_arrays(self, grad._data if isinstance(grad, Tensor) else grad)
                if type(grads) is not tuple:
                    grads = (grads,)
                if not self._plain_grads:
                    grads = [None if g is None else _make(g) for g in grads]
            if self._plain_grads:
                return grads
            return cls._check_grads(self, grads)
        for g in grad_outputs:
            if g is not None:
                grad_outputs = [g if g is None or isinstance(g, Tensor) else _make(g)
                                for g in grad_outputs]
                return BackwardFunction._apply(self, grad_outputs, create_graph)
        # No gradient arrived at all: built-ins pass "no gradient" on, not zeros.
        return [None] * len(self.next_functions)


class Primitive(Function):
    """Base of the built-in ops: ``forward`` on arrays, ``backward`` on tensors.

    ``backward_arrays(ctx, grad)`` (optional) is the same formula on NumPy
    arrays: with no graph to record (``create_graph=False``, the usual
    ``loss.backward()``) the node calls it instead of ``backward`` and skips
    building a tensor and a ctx for every intermediate of the gradient formula.
    It returns one array (or None) per forward argument, like ``backward``;
    ``ctx.saved_arrays`` is ``ctx.saved_tensors`` as arrays.
    tests/autograd/test_backward_arrays.py checks every op's two formulas against each other.
    """
    _node_base = PrimitiveNode
    _validate_grads = False
    saves_output = False
    is_view = False
    differentiable = True
    #: Backward is right for complex inputs and results (``grad * conj(f'(z))`` for a
    #: holomorphic op); without it the op raises NotImplementedError on them. Checked only
    #: off the real-dtype fast path (``_connect`` with a dtype change or a complex result).
    complex_grad = False
    #: Python scalars among the arguments get a ``(None, 0)`` edge, as PyTorch's binary
    #: arithmetic shows (``(x * 2).grad_fn.next_functions``); other ops drop them.
    scalar_edges = False
    backward_arrays = None
    #: For each tensor forward saves, the argument positions whose gradients read its
    #: values (``Mul``: ``((1,), (0,))`` -- a's values matter only for b's gradient).
    #: Backward checks a saved tensor for in-place changes only when one of those
    #: gradients is wanted, as PyTorch saves it only then. None: every one is read.
    saved_needed_for = None
    #: Forward-mode rule ``jvp(ctx, args, tangents, out)``: the tangent of the output
    #: (a tuple of them for several outputs) given the forward arguments, their tangents
    #: (None where an argument has none) and the output(s); ctx is forward's. None (or
    #: NotImplemented returned): the rule is derived from ``backward``
    #: (autograd/forward_ad.py). Rules: _ops/jvp_rules.py.
    jvp = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # ``apply`` is a plain function made per op (not a classmethod): operators and
        # methods bind a copy of it (``Primitive.entry``), one Python call per op.
        cls.apply = staticmethod(_make_apply(cls))

    @classmethod
    def entry(cls, name, *, operator=False):
        """A copy of ``apply`` to bind as ``Tensor.<name>``: the same op, but a public entry
        point, which ``__torch_function__`` overrides see as itself (or as what
        ``entry._tf_report[0]`` is set to: ``Tensor.__add__`` reports ``Tensor.add``), and
        which dispatches duck types when the op fails on them. ``operator``: a binary
        operator, which returns NotImplemented where no override handles the call."""
        fn = _make_apply(cls, entry=(name, operator))
        fn.__name__ = name
        fn.__qualname__ = f"Tensor.{name}"
        return fn

    @staticmethod
    def _check_grads(ctx, grads):
        """Drop the gradients of non-tensor arguments; cast each to its input's dtype."""
        if ctx._plain_grads:  # tensors of the output's dtype only: nothing to drop or cast
            return list(grads)
        mask = ctx._tensor_mask
        if mask is not None:
            grads = [g for is_tensor, g in zip(mask, grads) if is_tensor]
        out = []
        for dt, g in zip(ctx._input_meta, grads):
            if g is not None and dt is not None and g._data.dtype != dt:
                if g._data.dtype.kind == "c" and dt.kind != "c":
                    g = _real_part(g)  # a real input's gradient: the real part (PyTorch)
                if g._data.dtype != dt:
                    g = g.to(_BY_NUMPY[dt]) if _is_float_np(dt) or dt.kind == "c" else None
            out.append(g)
        return out


def _make_apply(cls, entry=None):
    """``cls.apply``: run forward on the arguments, wrap the arrays, record the node.

    The op's class attributes are read once here (they are fixed at class creation).
    ``entry``: (name, operator) for a public copy (``Primitive.entry``).
    """
    forward = cls.forward
    node_cls = cls._backward_cls
    is_view = cls.is_view
    differentiable = cls.differentiable
    report = [None]  # the function __torch_function__ overrides are given (apply itself)

    def apply(*args):
        if _tf_active[0]:  # a mode, a dispatching subclass or autocast (_torch_function.py)
            if _tf_dispatching[0]:
                out = _overridden(report[0], args, entry)
                if out is not _TF_PASS:
                    return out
            if entry is not None and _tf_autocast[0] is not None:  # x.mm(y) in a region
                args = _autocast_operands(report[0], args)
        if _batching[0] is not None:  # a vmap runs: batched arguments go to their rule
            out = _batching[0].primitive(cls, args)
            if out is not NotImplemented:
                return out
        if _dispatch_active[0]:  # a dispatch mode or subclass may take the call
            out = _dispatch_call(cls, args)
            if out is not NotImplemented:
                return out
        ctx = _new(node_cls)
        try:
            out = forward(ctx, *args)
        except Exception as error:
            return failed(args, error)
        return finish(ctx, args, out)

    def failed(args, error):
        """What a call whose forward raised gives: the op on one device, an entry point's
        override's answer, or the error."""
        # Only a failed op looks at devices (the CPU path pays nothing): tensors on two
        # devices raise PyTorch's error; 0-d CPU tensors join a device's op, as there.
        moved = _across_devices(args)
        if moved is not None:
            return apply(*moved)
        if isinstance(error, MemoryError):  # a device's: PyTorch's OutOfMemoryError
            on_device = _device_out_of_memory(error)
            if on_device is not None:
                raise on_device from None
        if entry is None:
            raise error
        out = _overridden(report[0], args, entry, failed=True)
        if out is _TF_PASS:
            if entry[1] and isinstance(error, _OperandTypeError):
                return NotImplemented  # Python's reflected operator or its TypeError next
            raise error
        return out

    def finish(ctx, args, out):
        """Wrap what forward returned as tensors and record the node."""
        if type(out) is tuple:
            outs = tuple(_make(o) for o in out)
            if differentiable and _state.enabled and _any_requires_grad(args):
                _connect(ctx, cls, args, outs)
            if _fw_active:
                _forward_ad.primitive_jvp(cls, ctx, args, outs)
            return outs
        if type(out) is not _ndarray:
            out = _asarray(out)
        t = _new(Tensor)  # Tensor._make, inlined: every op result passes here
        t._data = out
        t._requires_grad = False
        t._grad_fn = None
        t._output_nr = 0
        t._vc = [0]
        t._base = None
        if is_view:
            _link_view(t, cls, args)
        if differentiable and _state.enabled:
            if _is_float_np(out.dtype):
                for a in args:
                    if isinstance(a, Tensor) and a._requires_grad:
                        _connect(ctx, cls, args, (t,))
                        break
            elif out.dtype.kind == "c" and _any_requires_grad(args):
                _connect(ctx, cls, args, (t,))  # refuses ops without complex_grad
        if _fw_active:
            _forward_ad.primitive_jvp(cls, ctx, args, (t,))
        return t

    apply.__qualname__ = f"{cls.__qualname__}.apply"
    apply.__module__ = cls.__module__  # where pickle finds it by name
    apply.__doc__ = f"Apply {cls.__name__} (a built-in op) to the arguments."
    apply._tf_report = report
    apply._primitive = cls
    report[0] = apply
    if _native is not None and not is_view:
        # The compiled apply: the plain case in C, everything else handed to ``apply``.
        report[0] = _native.Apply(apply, failed, finish, forward,
                                  node_cls, cls, cls.scalar_edges, cls.saves_output,
                                  differentiable)
    return report[0]


def _overridden(func, args, entry, failed=False):
    """The ``__torch_function__`` result of an op call, or ``_TF_PASS``; a binary
    operator that no override handles returns NotImplemented (Python then tries the
    reflected operator and raises its own TypeError, as PyTorch's operators do)."""
    try:
        if failed:
            return _tf_dispatch_failed(func, args, None)
        return _tf_dispatch(func, args, None)
    except TypeError:
        if entry is not None and entry[1]:
            return NotImplemented
        raise


# ---- __torch_dispatch__ (the state is in autograd/dispatch.py) ----------------------------
# A dispatched call records its node here, above the handler, as PyTorch's autograd sits
# above its dispatch: the handler runs with grad mode off and its result gets the node.
# The node's ctx is filled by forward. When the handler runs the op itself on the same
# arguments (a mode passing the call on), that run fills the pending ctx; otherwise
# (a wrapper subclass unwrapped its arguments) forward runs once more on the call's own
# arguments, for what it saves.


def _dispatch_call(cls, args):
    """Hand a call to the innermost dispatch mode, else to the dispatch subclasses among
    its arguments; NotImplemented when neither takes part (the op runs as usual)."""
    types = _dispatch_types(args)
    modes = _dispatch.mode_stack()
    pending = _dispatch.pending_calls()  # [cls, args, ctx, filled] of calls in a handler
    if not modes and not types:
        if pending and _same_call(pending[-1], cls, args):
            return _run_pending(pending[-1], cls, args)
        return NotImplemented
    record = (cls.differentiable and _state.enabled and _any_requires_grad(args))
    if pending and _same_call(pending[-1], cls, args):
        entry, owner = pending[-1], False  # a mode below the one passing this call on
    else:
        ctx = _new(cls._backward_cls) if record else None
        entry, owner = [cls, args, ctx, False], True
        pending.append(entry)
    prev = _state.enabled
    _state.enabled = False  # the handler runs below autograd
    try:
        out = _call_handlers(cls, args, types, modes)
    finally:
        _state.enabled = prev
        if owner:
            pending.pop()
    if owner:
        _attach(cls, args, out, entry, record)
        if _fw_active:
            _dispatch_jvp(cls, args, out, entry)
    return out


def _same_call(entry, cls, args):
    """Whether a pending call is ``cls`` on these very arguments, its ctx still empty."""
    if entry[0] is not cls or entry[2] is None or entry[3] or len(entry[1]) != len(args):
        return False
    for a, b in zip(entry[1], args):
        if a is not b:
            return False
    return True


def _run_pending(entry, cls, args):
    """Run the op (no mode or subclass left) filling the ctx of the dispatched call."""
    entry[3] = True
    out = cls.forward(entry[2], *args)
    if type(out) is tuple:
        return tuple(_make(o) for o in out)
    t = _make(out)
    if cls.is_view:
        _link_view(t, cls, args)
    return t


def _attach(cls, args, out, entry, record):
    """Give the handler's result the view link and the graph node of the call."""
    outs = out if type(out) is tuple else (out,)
    if not all(isinstance(o, Tensor) for o in outs):
        return
    first = outs[0]
    if cls.is_view and first._base is None and first is not args[0]:
        _link_view(first, cls, args)
    if not record or not (_is_float_np(first._data.dtype) or first._data.dtype.kind == "c"):
        return
    ctx = entry[2]
    if not entry[3]:
        _fill_ctx(cls, ctx, args)
        entry[3] = True
    _connect(ctx, cls, args, outs)
    if ctx._out_data is not None and type(first) is not Tensor:
        # A subclass's own array is no stand-in for it: keep the output itself.
        ctx._out_data = None
        ctx._saved_output = _KeptOutput(first)


def _dispatch_jvp(cls, args, out, entry):
    """Forward-mode AD of a dispatched call: the op's rule on its filled ctx."""
    outs = out if type(out) is tuple else (out,)
    if not all(isinstance(o, Tensor) for o in outs):
        return
    if entry[2] is None:
        entry[2] = _new(cls._backward_cls)
    if not entry[3]:
        _fill_ctx(cls, entry[2], args)
        entry[3] = True
    _forward_ad.primitive_jvp(cls, entry[2], args, outs)


def _fill_ctx(cls, ctx, args):
    """Run forward on the call's arguments for what it saves on ctx (result dropped)."""
    xp = None
    for a in args:
        if isinstance(a, Tensor):
            xp = get_array_module(a._data)
            break
    errstate = getattr(xp, "errstate", None)
    try:
        if errstate is None:
            cls.forward(ctx, *args)
        else:
            with errstate(all="ignore"):  # a wrapper's placeholder values mean nothing
                cls.forward(ctx, *args)
    except Exception as e:
        raise NotImplementedError(
            f"ember: recording the gradient of {cls.__name__} for a __torch_dispatch__ call "
            f"runs its forward on the tensors' own arrays, which failed here ({e})") from e


class _KeptOutput:
    """A saved output that is a dispatch subclass instance, kept as the tensor itself."""
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    def unpack(self, node=None):
        return self.tensor

    def unpack_data(self, node=None):
        return self.tensor._data


def _dispatch_types(args):
    """The dispatch subclasses among the arguments (one level into lists and tuples),
    subclasses before their bases, else in order of appearance."""
    found = None
    for a in args:
        if type(a) in (list, tuple):
            for b in a:
                if isinstance(b, Tensor) and type(b) is not Tensor:
                    found = _add_type(found, type(b))
        elif isinstance(a, Tensor) and type(a) is not Tensor:
            found = _add_type(found, type(a))
    return () if found is None else tuple(found)


def _add_type(found, t):
    if not _dispatch.is_dispatch_subclass(t) or (found is not None and t in found):
        return found
    if found is None:
        return [t]
    for i, u in enumerate(found):
        if issubclass(t, u):
            found.insert(i, t)
            return found
    found.append(t)
    return found


def _call_handlers(cls, args, types, modes):
    overload, handler_args = _dispatch.route_of(cls)(args)
    tried = []
    if modes:
        mode = _dispatch.pop_mode()  # the op called inside the handler runs below it
        try:
            out = mode.__torch_dispatch__(overload, types, handler_args, {})
        finally:
            _dispatch.push_mode(mode)
        if out is not NotImplemented:
            return out
        tried.append(f"mode object {mode!r}")
    for t in types:
        out = t.__torch_dispatch__(overload, types, handler_args, {})
        if out is not NotImplemented:
            return out
        tried.append(f"tensor subclass {t!r}")
    listed = "".join(f"  - {what}\n" for what in tried)
    raise TypeError(f"Multiple dispatch failed for 'ember.ops.aten.{overload.__name__}'; all "
                    f"__torch_dispatch__ handlers returned NotImplemented:\n\n{listed}")


class OnesLike(Primitive):
    """Ones of ``x``'s shape and dtype: the engine's implicit gradient under dispatch."""
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return get_array_module(x._data).ones(x._data.shape, x._data.dtype)


class Detach(Primitive):
    """``x``'s values cut from the graph: what a leaf's first gradient goes through under
    dispatch (shares the array, as ``Tensor.detach``)."""
    differentiable = False

    @staticmethod
    def forward(ctx, x):
        return x._data


_dispatch.ones_like[0] = OnesLike.apply
_dispatch.detach[0] = Detach.apply


def _data_in(args):
    """``(argument, array)`` for the tensors and raw arrays among ``args`` and inside the
    lists and tuples among them."""
    for a in args:
        if isinstance(a, Tensor):
            yield a, a._data
        elif type(a) in (list, tuple):
            yield from _data_in(a)
        elif is_array(a):
            yield a, a


def devices_differ(first, second):
    """PyTorch's error for an op given data on two devices (``first`` the one met first)."""
    return RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                        f"two devices, {first} and {second}!")


def _across_devices(args):
    """For an op that failed: ``args`` with their 0-d CPU tensors (and arrays) copied to
    the one other device the data is on, None when it is all on one device (or some is on
    'meta', which raises its own error); PyTorch's RuntimeError when data of more than one
    element is on two devices."""
    data = [d for _, d in _data_in(args)]
    if all(type(d) is _ndarray for d in data):
        return None
    found, scalars = None, False
    for d in data:
        where = device_of(d)
        if where.type == "meta":
            return None
        if where.type == "cpu" and d.ndim == 0:
            scalars = True
        elif found is None:
            found = where
        elif where != found:
            raise devices_differ(found, where)
    if not scalars or found is None or found.type == "cpu":
        return None

    def moved(a):
        if type(a) in (list, tuple):
            return type(a)(moved(t) for t in a)
        if isinstance(a, Tensor):
            if a._data.ndim == 0 and a.device.type == "cpu":
                return ToDevice.apply(a, found, None)
        elif is_array(a) and a.ndim == 0 and device_of(a).type == "cpu":
            return move_array(a, found.type)
        return a
    return tuple(moved(a) for a in args)


def _any_requires_grad(args):
    for a in args:
        if isinstance(a, Tensor) and a._requires_grad:
            return True
    return False


_NO_EDGE = (None, 0)


def _connect(ctx, cls, args, outs):
    """Give ``outs`` their node: edges to the inputs, saved tensors, metadata."""
    out_dtype = outs[0]._data.dtype
    cast = dropped = False
    needs, edges = [], []
    for a in args:
        if isinstance(a, Tensor):
            if a._requires_grad:
                needs.append(True)
                fn = a._grad_fn
                if a._base is not None:
                    edges.append(gradient_edge(a))  # a view: its grad_fn may need refreshing
                elif fn is not None:
                    edges.append((fn, a._output_nr))
                else:  # a leaf: its (cached) accumulator
                    ref = a._accumulator
                    acc = ref() if ref is not None else None
                    edges.append((acc, 0) if acc is not None else gradient_edge(a))
            else:
                needs.append(False)
                edges.append(_NO_EDGE)
            if a._data.dtype != out_dtype:
                cast = True
        else:
            needs.append(False)
            if cls.scalar_edges:
                edges.append(_NO_EDGE)
            else:
                dropped = True
    if (cast or out_dtype.kind == "c") and not cls.complex_grad:
        _refuse_complex(cls, args, out_dtype)
    if cast or dropped:
        ctx._plain_grads = False
        if dropped:
            ctx._tensor_mask = [isinstance(a, Tensor) for a in args]
            kept = [a for a in args if isinstance(a, Tensor)]
        else:
            kept = args
        ctx._input_meta = [a._data.dtype if isinstance(a, Tensor) else None for a in kept]
    ctx.needs_input_grad = needs
    ctx.next_functions = tuple(edges)
    ctx._sequence_nr = next(_sequence)
    if _anomaly_state.enabled:
        _anomaly.record_forward_trace(ctx)
    if len(outs) == 1:
        # One output: the node's own fast path never materializes a missing
        # gradient, so its slot needs no shape/dtype.
        t = outs[0]
        t._requires_grad = True
        t._grad_fn = ctx
    else:
        meta = []
        for nr, t in enumerate(outs):
            float_out = _is_float_np(t._data.dtype) or (
                cls.complex_grad and t._data.dtype.kind == "c")
            meta.append((t._data.shape, _BY_NUMPY[t._data.dtype]) if float_out else None)
            if float_out:
                t._requires_grad = True
                t._grad_fn = ctx
                t._output_nr = nr
        ctx._output_meta = tuple(meta)
    saved = ctx._saved
    if saved:
        ctx._versions = [None if t is None else t._vc[0] for t in saved]
    if cls.saves_output:
        out = outs[0]
        if out._base is None:
            ctx._out_data = out._data
            ctx._out_vc = vc = out._vc
            ctx._out_version = vc[0]
        else:  # a view: the rebuilt tensor needs its base and view function too
            ctx._saved_output = SavedTensor(out, 0)
    hooks = _saved_hooks_state.hooks
    if hooks is not None and (saved or cls.saves_output):
        _pack_saved(ctx, hooks, outs[0])


def _refuse_complex(cls, args, out_dtype):
    """PyTorch records complex gradients; an op whose backward is not known right for them
    (no ``complex_grad``) raises rather than return a wrong one."""
    complex_in = any(isinstance(a, Tensor) and a._requires_grad and a._data.dtype.kind == "c"
                     for a in args)
    if complex_in or out_dtype.kind == "c":
        raise NotImplementedError(f"ember does not support autograd for {cls.__name__} on "
                                  f"complex tensors yet")


#: the real part of a tensor, differentiably: complex_ops.RealPart.apply (set there)
real_part = [None]


def _real_part(g):
    return real_part[0](g)


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


def sum_to(array, shape):
    """Sum ``array`` down to ``shape`` (undo broadcasting) -- on arrays; no copy when equal."""
    if array.shape == shape:
        return array
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and array.shape[lead + i] != 1)
    if axes and array.dtype.kind == "V":  # bfloat16: summed in float32, rounded once
        return array.sum(axis=axes, keepdims=True, dtype="float32").astype(
            array.dtype).reshape(shape)
    out = array.sum(axis=axes, keepdims=True) if axes else array
    return out.reshape(shape)


def unbroadcast(grad, shape):
    """Sum ``grad`` down to ``shape`` (undo broadcasting); differentiable."""
    if grad._data.shape == shape:
        return grad
    return grad.sum_to_size(shape)


__all__ = ["Primitive", "PrimitiveNode", "unbroadcast", "sum_to"]


class ToDevice(Primitive):
    """A copy on another device (``.cuda()``, ``.cpu()``, ``.to("cuda")``), cast to
    ``dtype`` when one is given; the gradient goes back to the source device."""
    _backward_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, x, target, dtype):
        ctx.source = x.device
        d = move_array(x._data, target.type)
        return d if dtype is None or d.dtype == dtype.np else d.astype(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        return ToDevice.apply(grad, ctx.source, None), None, None


if _native is not None:
    # the common case of a built-in node's backward in C; the method above does the rest
    PrimitiveNode._apply = _native.NodeApply(PrimitiveNode._apply)
    _native.setup(Tensor, _ndarray, _asarray, _connect, gradient_edge, _sequence, _tf_active,
                  _batching, _dispatch_active, _fw_active, _state, _anomaly_state,
                  _saved_hooks_state, _NO_EDGE, numpy_scalar_type, numpy_scalar_to_array)
