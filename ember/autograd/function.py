"""``Function``: the one mechanism behind every differentiable op.

Users subclass ``Function`` with static ``forward(ctx, ...)`` and
``backward(ctx, *grad_outputs)``; ember's built-in ops are subclasses too
(``ember._ops``), written the same way with forward and backward side by side.
Each subclass gets a node class named ``<Name>Backward`` made in
``__init_subclass__``: the ``ctx`` that forward fills in *is* the backward node
of the graph (as in PyTorch), so whatever forward stores on it is there in
backward.

>>> import ember
>>> class Square(ember.autograd.Function):
...     @staticmethod
...     def forward(ctx, x):
...         ctx.save_for_backward(x)
...         return x * x
...     @staticmethod
...     def backward(ctx, grad):
...         x, = ctx.saved_tensors
...         return 2 * x * grad
>>> x = ember.tensor([3.0], requires_grad=True)
>>> Square.apply(x).backward(); x.grad
tensor([6.])
"""
import functools
import inspect
import warnings

from .._tensor import Tensor
from ..backend.dtypes import _BY_NUMPY, is_float_np
from ..backend import get_array_module
from . import grad_mode
from . import anomaly
from . import forward_ad
from .graph import (Node, FREED_MESSAGE, _sequence, _OutputRecord, c_type_name,
                    gradient_edge, saved_tensors)
from .views import rebase_view
from .batching import hooks as _batching

_state = grad_mode._state
_fw_active = forward_ad.active  # non-empty while a forward AD level is open


class FunctionCtx:
    """Methods available on ``ctx`` inside ``forward`` (or ``setup_context``).

    ``ctx`` is the backward node of the call, so whatever ``forward`` stores on it --
    saved tensors, plain attributes such as ``ctx.scale = 2`` -- is there in
    ``backward``. Each method says where it may be called.
    """

    def save_for_backward(self, *tensors: "Tensor | None") -> None:
        """Save tensors for ``backward``, which reads them as ``ctx.saved_tensors``.

        Call it at most once, from ``forward`` (or ``setup_context``), with inputs,
        outputs or None. Saved tensors are checked when read: modifying one in place
        after saving it makes ``saved_tensors`` raise. Non-tensor values belong on
        ``ctx`` as attributes instead.

        >>> import ember
        >>> class Mul(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x, y):
        ...         ctx.save_for_backward(x, y)
        ...         return x * y
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         x, y = ctx.saved_tensors
        ...         return grad * y, grad * x
        >>> a = ember.tensor([2.0], requires_grad=True)
        >>> Mul.apply(a, ember.tensor([5.0])).backward(); a.grad
        tensor([5.])
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{i} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors: "Tensor | None") -> None:
        """Save tensors for a forward-mode derivative (``jvp``); call from ``forward``.

        >>> import ember
        >>> class Id(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_forward(x)
        ...         return x.clone()
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad
        >>> Id.apply(ember.ones(2, requires_grad=True)).shape
        ember.Size([2])
        """
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; you "
                                     "should save non-tensors as attributes on ctx.")
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: "Tensor") -> None:
        """Declare the inputs ``forward`` modified in place; call from ``forward``.

        Every such tensor must also be returned. Their version counters move on, and
        their graph history now starts at this call.

        >>> import ember
        >>> class AddOne_(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         x.add_(1)
        ...         ctx.mark_dirty(x)
        ...         return x
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad
        >>> a = ember.ones(2, requires_grad=True)
        >>> b = a * 1
        >>> AddOne_.apply(b) is b, b.grad_fn.name()
        (True, 'AddOne_Backward')
        """
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: "Tensor") -> None:
        """Declare outputs that have no gradient (indices, masks); call from ``forward``.

        They get ``requires_grad=False``; ``backward`` still receives one gradient per
        output, zeros for these.

        >>> import ember
        >>> class SortWithIndices(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         values, indices = x.sort()
        ...         ctx.mark_non_differentiable(indices)
        ...         ctx.save_for_backward(indices)
        ...         return values, indices
        ...     @staticmethod
        ...     def backward(ctx, grad_values, grad_indices):
        ...         (indices,) = ctx.saved_tensors
        ...         return ember.zeros_like(grad_values).scatter(0, indices, grad_values)
        >>> values, indices = SortWithIndices.apply(ember.tensor([3.0, 1.0], requires_grad=True))
        >>> values.requires_grad, indices.requires_grad
        (True, False)
        """
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether missing output gradients reach ``backward`` as zeros (True, the
        default) or as None (False, so ``backward`` can skip work). Call from ``forward``.

        >>> import ember
        >>> class Pair(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.set_materialize_grads(False)
        ...         return x.clone(), x.clone()
        ...     @staticmethod
        ...     def backward(ctx, g1, g2):
        ...         return g1 if g2 is None else g1 + g2
        >>> x = ember.ones(2, requires_grad=True)
        >>> first, _ = Pair.apply(x)
        >>> first.sum().backward(); x.grad
        tensor([1., 1.])
        """
        self._materialize_grads = bool(value)


class BackwardFunction(Node, FunctionCtx):
    """The graph node of one ``Function.apply`` call; also its ``ctx``."""
    _forward_cls = None
    _saved = ()
    _to_save = ()
    _dirty = ()
    _non_differentiable = ()
    _materialize_grads = True
    _output_meta = ()
    _input_meta = ()
    _tensor_mask = None   # per forward argument: True where it is a tensor (None: all are)
    needs_input_grad = ()

    @property
    def saved_tensors(self) -> "tuple[Tensor | None, ...]":
        """The tensors given to ``save_for_backward``; read it in ``backward``.

        Raises if one of them was modified in place since it was saved, or if the graph
        was already freed by an earlier backward (``retain_graph=False``). See
        ``save_for_backward`` for an example.
        """
        saved = self._saved
        if saved is None:
            raise RuntimeError(FREED_MESSAGE)
        if saved is _CLEARED_ON_ACCESS:
            raise RuntimeError(_CLEARED_MESSAGE)
        if self._forward_cls.clear_saved_tensors_on_access:
            self._saved = _CLEARED_ON_ACCESS  # what is returned is all that keeps them
        return tuple(None if s is None else s.unpack(self) for s in saved)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    def apply(self, *grad_outputs):
        """Call this node's backward directly (``y.grad_fn.apply(grad)``), unchecked."""
        legacy = self.__dict__.get("_legacy")
        if legacy is not None:
            legacy._legacy_node = self
            return legacy.backward(*grad_outputs)
        return _call_backward(self._forward_cls, self, grad_outputs)

    def _release(self):
        self._saved = None
        # Attributes users stash on ctx (outputs included) go with the graph.
        d = self.__dict__
        for k in [k for k in d if k[0] != "_" and k not in _CTX_KEEP]:
            del d[k]
        d.pop("_stashed_outputs", None)

    def _apply(self, grad_outputs, create_graph=False):
        if self._materialize_grads:
            for g in grad_outputs:
                if g is None:
                    xp = _xp(grad_outputs)
                    grad_outputs = [_zeros_like_meta(meta, xp) if g is None and meta is not None
                                    else g for g, meta in zip(grad_outputs, self._output_meta)]
                    break
        cls = self._forward_cls
        legacy = self.__dict__.get("_legacy")
        if legacy is not None:  # pre-0.4 style: backward is a method of the Function object
            legacy._legacy_node = self  # one object may have been called several times
            legacy.needs_input_grad = self.needs_input_grad
            grads = legacy.backward(*grad_outputs)
        else:
            grads = _call_backward(cls, self, grad_outputs)
        if not isinstance(grads, tuple):
            grads = (grads,)
        return cls._check_grads(self, grads)


class _ClearedOnAccess(tuple):
    """``ctx._saved`` once ``clear_saved_tensors_on_access`` handed the tensors out."""
    __slots__ = ()


_CLEARED_ON_ACCESS = _ClearedOnAccess()
_CLEARED_MESSAGE = ("saved_tensors can only be accessed once when "
                    "clear_saved_tensors_on_access=True is set on the autograd.Function. Either "
                    "access saved_tensors only once, or set clear_saved_tensors_on_access=False.")


def _call_backward(cls, ctx, grad_outputs):
    """Run the user's ``backward`` -- or ``vjp``, its other name -- on ``grad_outputs``
    (as one list when the Function sets ``boxed_grads_call``)."""
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                           "not allowed. You should only implement one of them.")
    user_fn = vjp if vjp is not Function.vjp else backward
    if cls.boxed_grads_call:
        return user_fn(ctx, list(grad_outputs))
    return user_fn(ctx, *grad_outputs)


class _StashingBackwardFunction(BackwardFunction):
    """Node of a user Function: ``ctx.out = output`` in forward is kept as data +
    metadata (see _stash_outputs), which avoids the cycle output -> node -> output;
    reading the attribute rebuilds the tensor. (A separate class because defining
    ``__getattr__`` slows every attribute access: built-in ops' nodes don't have it.)
    """

    def __getattr__(self, name):
        stash = self.__dict__.get("_stashed_outputs")
        if stash is not None and name in stash:
            record, nr = stash[name]
            return record.rebuild(self, nr)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


_CTX_KEEP = ("needs_input_grad", "next_functions")


def _zeros_like_meta(meta, xp):
    shape, dtype = meta
    t = Tensor._make(xp.zeros(shape, dtype.np))
    return t


def _xp(grads):
    """The array module of the gradients that arrived (the default one when none did)."""
    return get_array_module(*[getattr(g, "_data", g) for g in grads if g is not None])


class Function(FunctionCtx):
    """Base class for differentiable operations; see the module docstring.

    Subclasses define ``forward`` and ``backward`` as staticmethods and are
    called through ``apply``. ``forward(ctx, *args)`` runs with graph
    recording off; ``backward(ctx, *grads)`` returns one gradient per forward
    argument (None where there is none).

    The pre-0.4 style also runs: ``forward(self, ...)``/``backward(self, ...)``
    as ordinary methods, called as ``MyFunction(params)(inputs...)``, with
    ``self.save_for_backward``/``self.saved_tensors``/``self.needs_input_grad``.
    """
    _backward_cls = _StashingBackwardFunction
    _node_base = _StashingBackwardFunction  # what the generated <Name>Backward node derives from
    _legacy_node = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("_backward_name", cls.__name__ + "Backward")
        cls._backward_cls = type(name, (cls._node_base,), {"_forward_cls": cls,
                                                           "__module__": cls.__module__})
        # Decided once per class rather than on every apply (hot path).
        cls._is_legacy_style = _is_legacy(cls)
        cls._setup_style = _uses_setup_context(cls)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    vjp = backward  # the same method under its other name: a Function may define either

    #: When True, reading ``ctx.saved_tensors`` lets go of them: only the returned tuple
    #: keeps them (less memory during backward), and a second read raises.
    clear_saved_tensors_on_access = False
    #: When True, ``backward(ctx, grads)`` gets the output gradients as one list it may
    #: empty as it goes (so each can be freed early), instead of ``*grads``.
    boxed_grads_call = False

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward-mode derivative: one tangent per output, given one per forward argument
        (zeros for a tensor input without one, None for other arguments);
        ``ctx.saved_tensors`` here are the tensors given to ``ctx.save_for_forward``.
        Used inside ``forward_ad.dual_level``.

        >>> import ember, ember.autograd.forward_ad as fwAD
        >>> class Square(ember.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_forward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def jvp(ctx, x_t):
        ...         x, = ctx.saved_tensors
        ...         return 2 * x * x_t
        >>> with fwAD.dual_level():
        ...     y = Square.apply(fwAD.make_dual(ember.tensor([3.0]), ember.tensor([1.0])))
        ...     fwAD.unpack_dual(y).tangent
        tensor([6.])
        """
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward and record a ``<Name>Backward`` node for backward.

        Keyword arguments are bound through forward's signature (defaults included).
        """
        if cls._is_legacy_style:
            raise RuntimeError(f"{cls.__name__} has a non-static forward (the pre-0.4 style): "
                               f"call it as {cls.__name__}(...)(inputs), not .apply(...)")
        if _batching[0] is not None:  # a vmap runs: batched arguments take its rule
            out = _batching[0].function(cls, args, kwargs)
            if out is not NotImplemented:
                return out
        setup_style = cls._setup_style
        if kwargs or setup_style:  # setup_context sees the inputs with defaults filled in
            args = _bind_kwargs(cls, args, kwargs)
        ctx = cls._backward_cls()
        mask, needs, record = _inspect_args(args)
        ctx.needs_input_grad = needs
        prev = _state.enabled
        _state.enabled = False  # forward runs without recording (no_grad, inlined)
        fw_level = None
        if _fw_active:  # nor computing tangents: jvp gives the outputs theirs
            fw_level = _fw_active[:]
            _fw_active.clear()
        try:
            if setup_style:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            _state.enabled = prev
            if fw_level:
                _fw_active[:] = fw_level
        output = _wrap_outputs(ctx, args, mask, output, record)
        if fw_level and forward_ad.has_tangent(args):
            output = forward_ad.function_jvp(cls, ctx, args, output, ctx._dirty,
                                             ctx._non_differentiable)
        return output

    def __call__(self, *args):
        """The pre-0.4 call: ``Linear()(input, weight, bias)`` runs ``self.forward``."""
        cls = type(self)
        if not cls._is_legacy_style:
            raise RuntimeError(
                "Legacy autograd function with non-static forward method is deprecated. Please "
                f"use new-style autograd function with static forward method: call "
                f"{cls.__name__}.apply(...)")
        node = cls._backward_cls()
        node._legacy = self
        self._legacy_node = node
        self._to_save, self._dirty, self._non_differentiable = (), (), ()
        mask, needs, record = _inspect_args(args)
        self.needs_input_grad = needs
        with grad_mode.no_grad():
            output = self.forward(*args)
        node.needs_input_grad = needs
        node._to_save, node._dirty = self._to_save, self._dirty
        node._non_differentiable = self._non_differentiable
        node._materialize_grads = self.__dict__.get("_materialize_grads", True)
        return _wrap_outputs(node, args, mask, output, record)

    @property
    def saved_tensors(self):
        """Legacy style: the tensors this Function object saved in its last call."""
        if self._legacy_node is None:
            raise RuntimeError("saved_tensors is only available after the Function was called")
        return self._legacy_node.saved_tensors

    @property
    def saved_variables(self):
        return self._legacy_node.saved_variables

    @staticmethod
    def _check_grads(ctx, grads):
        """Validate backward's result; keep one gradient per tensor input."""
        mask = ctx._tensor_mask
        n_args = len(mask)
        if len(grads) != n_args:
            if len(grads) > n_args and all(g is None for g in grads[n_args:]):
                grads = grads[:n_args]
            else:
                raise RuntimeError(
                    f"function {ctx.name()} returned an incorrect number of gradients "
                    f"(expected {n_args}, got {len(grads)})")
        out = []
        meta = iter(ctx._input_meta)
        for i, (is_tensor, g) in enumerate(zip(mask, grads)):
            if not is_tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {ctx.name()} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        "Variable")
                continue
            shape, dtype = next(meta)
            if g is not None:  # PyTorch counts tensor inputs only in this message
                g = _validate_grad(ctx, len(out), g, shape, dtype)
            out.append(g)
        return tuple(out)


def _is_legacy(cls):
    """True when ``forward`` is an ordinary method (the pre-0.4 style)."""
    for klass in cls.__mro__:
        if "forward" in klass.__dict__:
            return klass is not Function and not isinstance(klass.__dict__["forward"],
                                                             (staticmethod, classmethod))
    return False


def _inspect_args(args):
    """(tensor mask, needs_input_grad, whether to record) for the arguments of a call."""
    mask, needs = [], []
    wanted = False
    for a in args:
        if isinstance(a, Tensor):
            mask.append(True)
            needs.append(a._requires_grad)
            wanted = wanted or a._requires_grad
        else:
            mask.append(False)
            needs.append(False)
    return mask, tuple(needs), wanted and _state.enabled


def _validate_grad(ctx, i, g, shape, dtype):
    if not isinstance(g, Tensor):
        # PyTorch's message and class (its C++ check on what backward returned)
        raise RuntimeError(f"expected Variable or None (got {c_type_name(g)})")
    if g._data.shape != shape:
        if not _expandable(shape, g._data.shape):
            raise RuntimeError(
                f"Function {ctx.name()} returned an invalid gradient at index {i} - got "
                f"{list(g._data.shape)} but expected shape compatible with {list(shape)}")
        g = g.sum_to_size(shape)
    if _BY_NUMPY.get(g._data.dtype) is not dtype:
        g = g.to(dtype)
    return g


def _expandable(target, shape):
    """True when ``target`` broadcasts to ``shape`` (so summing back is allowed)."""
    if len(target) > len(shape):
        return False
    for t, s in zip(reversed(target), reversed(shape)):
        if t != s and t != 1:
            return False
    return True


def _uses_setup_context(cls):
    for klass in cls.__mro__:
        if "setup_context" in klass.__dict__:
            return klass is not Function
        if "forward" in klass.__dict__ and klass is not Function:
            return False
    return False


def _bind_kwargs(cls, args, kwargs):
    params = list(inspect.signature(cls.forward).parameters.values())
    if not _uses_setup_context(cls):
        params = params[1:]  # ctx
    bound = inspect.Signature(params).bind(*args, **kwargs)
    bound.apply_defaults()
    out = []
    for p in params:
        value = bound.arguments[p.name]
        if p.kind is p.VAR_POSITIONAL:
            out.extend(value)
        elif p.kind is p.VAR_KEYWORD:
            if value:
                raise TypeError(f"{cls.__name__}.apply: **kwargs of forward can't be passed "
                                "through apply")
        else:
            out.append(value)
    return tuple(out)


def _wrap_outputs(ctx, args, tensor_mask, output, record):
    """Give the outputs of a user forward their graph identity (the general path)."""
    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    dirty = {id(t) for t in ctx._dirty} if ctx._dirty else ()
    if dirty:
        _check_dirty_returned(ctx, dirty, outputs)
        for o in outputs:
            if id(o) in dirty:
                if record and o._grad_fn is None and o._requires_grad and o._base is None:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
                o._vc[0] += 1
    if not record:
        ctx._to_save = ()
        return output
    # (plain loops rather than generator expressions: this runs on every user Function call)
    inputs, input_meta, edges = [], [], []
    for is_tensor, t in zip(tensor_mask, args):
        if is_tensor:
            inputs.append(t)
            input_meta.append((t._data.shape, _BY_NUMPY[t._data.dtype]))
            edges.append(gradient_edge(t))
    ctx._tensor_mask = tensor_mask
    ctx._input_meta = tuple(input_meta)
    ctx.next_functions = tuple(edges)
    ctx._sequence_nr = next(_sequence)
    if anomaly._state.enabled:
        anomaly.record_forward_trace(ctx)
    non_diff = {id(t) for t in ctx._non_differentiable} if ctx._non_differentiable else ()
    wrapped, meta = [], []
    nr = -1
    for o in outputs:
        nr += 1
        if not isinstance(o, Tensor):
            wrapped.append(o)
            meta.append(None)
            continue
        if dirty and id(o) in dirty:
            _rebase_dirty(ctx, o, nr)
        else:
            for t in inputs:
                if o is t:  # an input returned as is: a fresh alias carries the node
                    prev = _state.enabled
                    _state.enabled = False
                    o = o.view_as(o)
                    _state.enabled = prev
                    break
            data = o._data
            o._requires_grad = wants = (is_float_np(data.dtype) or data.dtype.kind == "c") \
                and id(o) not in non_diff
            o._grad_fn = ctx if wants else None
            o._output_nr = nr
        data = o._data
        meta.append((data.shape, _BY_NUMPY[data.dtype]))
        wrapped.append(o)
    ctx._output_meta = tuple(meta)
    if ctx._to_save:
        ctx._saved = _save(ctx, ctx._to_save, wrapped)
        ctx._to_save = ()
    _stash_outputs(ctx, wrapped)
    return tuple(wrapped) if is_tuple else wrapped[0]


def _check_dirty_returned(ctx, dirty, outputs):
    if dirty and not dirty <= {id(o) for o in outputs}:
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all "
                           "be outputs of the Function.")


def _rebase_dirty(ctx, t, nr):
    """An input modified in place by forward becomes output ``nr`` of ``ctx``."""
    if t._base is not None:
        rebase_view(t, (ctx, nr))
        return
    t._requires_grad = True
    t._grad_fn = ctx
    t._output_nr = nr


def _save(ctx, to_save, outputs):
    # output number of each saved output (its first place): one dict, not a scan per tensor
    output_nr = {}
    for i, o in enumerate(outputs):
        output_nr.setdefault(id(o), i)
    return saved_tensors(to_save, output_nr)


def _stash_outputs(ctx, outputs):
    """Replace ctx attributes that hold this node's outputs by data records."""
    d = ctx.__dict__
    stash = None
    for name, value in d.items():  # (changed only after the loop)
        if isinstance(value, Tensor) and name[0] != "_":
            for nr, o in enumerate(outputs):
                if o is value:
                    if stash is None:
                        stash = {}
                    stash[name] = (_OutputRecord(value), nr)
                    break
    if stash:
        for name in stash:
            del d[name]
        d["_stashed_outputs"] = stash


class _DelayedErrorNode(Node):
    """Stands in for a backward that must not be differentiated again."""

    def __init__(self, message, edges, n_outputs):
        self._message = message
        self.next_functions = tuple(edges)
        self._output_meta = (None,) * n_outputs
        self._sequence_nr = next(_sequence)

    def name(self):
        return "torch::autograd::DelayedError"  # PyTorch's (C++) node name, verbatim

    def _apply(self, grads, create_graph=False):
        raise RuntimeError(self._message)


def once_differentiable(backward):
    """Decorate a Function's ``backward`` that is not itself differentiable.

    It runs under ``no_grad``; a gradient computed through it with
    ``create_graph=True`` raises if one tries to differentiate it again.

    >>> import ember
    >>> from ember.autograd.function import once_differentiable
    >>> class Cube(ember.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x); return x ** 3
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, g):
    ...         x, = ctx.saved_tensors; return 3 * x ** 2 * g
    """
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with grad_mode.no_grad():
            outputs = backward(ctx, *grads)
        if not _state.enabled:
            return outputs
        tensors = [g for g in grads if isinstance(g, Tensor) and g._requires_grad]
        if not tensors:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        node = _DelayedErrorNode("trying to differentiate twice a function that was marked "
                                 "with @once_differentiable", [gradient_edge(g) for g in tensors],
                                 len(outs))
        wrapped = []
        for nr, o in enumerate(outs):
            if isinstance(o, Tensor):
                o = o.detach()
                o._requires_grad, o._grad_fn, o._output_nr = True, node, nr
            wrapped.append(o)
        return wrapped[0] if single else tuple(wrapped)
    return wrapper
