"""Graph objects: nodes, leaf accumulators and saved tensors.

The engine (``engine.py``) knows only this interface:

* ``node.next_functions``: a tuple of ``(node or None, input_nr)`` edges, one
  per differentiable input of the forward call;
* ``node._apply(grad_outputs)``: list of gradients (one per forward output,
  ``None`` where none arrived) -> tuple of gradients, one per edge;
* ``node._release()``: drop what was saved for backward;
* hooks: ``_pre_hooks`` (``fn(grad_outputs)``), ``_tensor_pre_hooks``
  (``{output_nr: [fn(grad)]}``, from ``Tensor.register_hook``) and ``_hooks``
  (``fn(grad_inputs, grad_outputs)``).

``gradient_edge(t)`` is where a tensor meets the graph: the ``(node, input_nr)``
its gradients flow into.

Nothing here knows about any specific op.
"""
import itertools
import re
import threading
import typing
import weakref

from .._tensor import Tensor
from ..backend import get_array_module, is_writeable
from ..backend.memory_layout import copy_in_layout_of
from ..backend.dtypes import from_numpy_dtype, legacy_type_name as _dtype_legacy_name
from ..backend.sparse_data import SparseCOOData
from . import grad_mode
from . import dispatch as _dispatch
from .dispatch import active as _dispatch_active, is_dispatch_subclass
from .saved_hooks import (saved_tensors_hooks, save_on_cpu,  # noqa: F401  (public here, as torch)
                          disable_saved_tensors_hooks, current_hooks as _current_saved_hooks)
from ._graph_extras import (  # noqa: F401  (public here, as torch)
    allow_mutation_on_saved_tensors, region_activation_memory_budget,
    set_override_stale_capture_stream, set_warn_on_accumulate_grad_stream_mismatch)

_sequence = itertools.count()


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again.

    ``RemovableHandle(hooks_dict, *, extra_dict=None)`` (PyTorch's form, no key) draws a
    fresh ``id`` for the caller to store its hook under; ``extra_dict`` (a dict or a list
    of dicts) holds entries under the same id that ``remove()`` deletes too."""
    __slots__ = ("_container", "_key", "_extra")
    next_id = 0  # the id the next keyless handle gets

    def __init__(self, container, key=None, *, extra_dict=None):
        self._container = container
        if key is None:
            key = RemovableHandle.next_id
            RemovableHandle.next_id += 1
        self._key = key
        extra = [] if extra_dict is None else extra_dict
        self._extra = extra if isinstance(extra, list) else [extra]

    @property
    def id(self):
        return self._key

    def remove(self):
        c = self._container
        if isinstance(c, dict):
            c.pop(self._key, None)
        else:
            try:
                c.remove(self._key)
            except ValueError:
                pass
        for d in self._extra:
            d.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class Node:
    """A backward step of the graph. Subclasses implement ``_apply``."""
    _pre_hooks = ()
    _hooks = ()
    _tensor_pre_hooks = None
    _sequence_nr = 0
    next_functions = ()
    _output_meta = (None,)  # one entry per forward output (gradient slot)
    _has_hooks = False      # set when any hook is registered: the engine checks only this
    _accepts_arrays = False  # _apply takes bare arrays as gradients too (see engine.py)
    _fresh_outputs = False   # backward returns new arrays, bar the ones it passes on (engine.py)

    def name(self):
        return type(self).__name__

    def __repr__(self):
        # PyTorch's C++ nodes are named "torch::autograd::X" but print as "<X object ...>"
        return f"<{self.name().rsplit('::', 1)[-1]} object at {id(self):#x}>"

    def register_hook(self, fn):
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new grad_inputs."""
        if not isinstance(self._hooks, list):
            self._hooks = []
        self._hooks.append(fn)
        self._has_hooks = True
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn):
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        if not isinstance(self._pre_hooks, list):
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        self._has_hooks = True
        return RemovableHandle(self._pre_hooks, fn)

    def _add_tensor_pre_hook(self, output_nr, fn):
        self._has_hooks = True
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        hooks = self._tensor_pre_hooks.setdefault(output_nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def _release(self):
        pass

    @property
    def metadata(self):
        d = self.__dict__.get("_metadata")
        if d is None:
            d = self.__dict__["_metadata"] = {}
        return d


class AccumulateGrad(Node):
    """The sink for a leaf tensor: sums incoming gradients into ``variable.grad``."""
    _accepts_arrays = True
    _post_accumulate_hooks = ()  # fn(variable), after .grad is updated

    def name(self):
        return "torch::autograd::AccumulateGrad"  # PyTorch's (C++) node name, verbatim

    def __init__(self, variable):
        self.variable = variable
        self._sequence_nr = 2 ** 62 + next(_sequence)  # leaves run as soon as they are ready

    def _apply(self, grad_outputs, create_graph=False):
        """Sum ``grad_outputs[0]`` into ``.grad``. When the engine hands it in an
        ``OwnedGrads`` list, nothing else refers to that array (Note [gradient ownership]
        in engine.py), so a first gradient becomes ``.grad``'s storage without a copy."""
        grad = grad_outputs[0]
        if grad is None:
            return ()
        # Backward may run in several threads at once (one graph each, a shared leaf):
        # reading, summing and storing ``.grad`` is one step, or updates get lost.
        with _accumulate_lock:
            self._accumulate(grad, create_graph, type(grad_outputs) is OwnedGrads)
        if self._post_accumulate_hooks:
            run_post_accumulate_hooks(self)
        return ()

    def _accumulate(self, grad, create_graph, owned):
        var = self.variable
        current = var._grad
        if type(getattr(grad, "_data", None)) is SparseCOOData or (
                current is not None and type(current._data) is SparseCOOData):
            _accumulate_sparse(var, current, grad)
            return
        if _dispatch_active[0] and not create_graph:
            if current is None:  # PyTorch's engine detaches a first gradient: an op
                grad = _dispatch.detach[0](grad if isinstance(grad, Tensor) else
                                           Tensor._make(grad))
            if _is_dispatch_instance(grad) or _is_dispatch_instance(current):
                # A __torch_dispatch__ subclass: its array is not its value; sum as tensors.
                var.grad = grad if current is None else current + grad
                return
            if current is not None and not current._requires_grad:
                current.add_(grad if isinstance(grad, Tensor) else Tensor._make(grad))
                return  # in place, as an op (PyTorch's add_)
        array = getattr(grad, "_data", None)
        if current is None:
            if create_graph:
                var.grad = grad
            else:
                var._grad = _first_grad(grad if array is None else array, var._data, owned)
        elif create_graph or current._requires_grad or (array is not None and
                                                         grad._requires_grad):
            var.grad = current + (grad if array is not None else Tensor._make(grad))
        else:
            # In place, in NumPy: no graph to record, only the version to bump.
            data = current._data
            data += grad if array is None else array
            current._vc[0] += 1


def _accumulate_sparse(var, current, grad):
    """A sparse gradient (``nn.Embedding(sparse=True)``'s) into ``var.grad``, as PyTorch's
    engine does: the first is kept as it is; sparse + sparse lists both gradients' entries
    (uncoalesced); a sparse one adds into a dense ``.grad`` in place."""
    grad = grad.detach() if isinstance(grad, Tensor) else Tensor._make(grad)
    if current is None:
        var._grad = grad
    elif type(current._data) is SparseCOOData:
        var._grad = current + grad if type(grad._data) is SparseCOOData else \
            grad + current.to_dense()
    else:
        current.add_(grad)


_accumulate_lock = threading.Lock()


def _is_dispatch_instance(t):
    return t is not None and type(t) is not Tensor and is_dispatch_subclass(type(t))


def run_post_accumulate_hooks(node):
    """Call ``fn(tensor)`` for each post-accumulate-grad hook of a leaf's accumulator."""
    for fn in list(node._post_accumulate_hooks):
        result = fn(node.variable)
        if result is not None:
            if not isinstance(result, Tensor):
                raise TypeError(f"expected Variable, but hook returned '{c_type_name(result)}'")
            raise RuntimeError("Tensor post accumulate grad hooks should return None.")


def add_post_accumulate_grad_hook(tensor, hook):
    """``Tensor.register_post_accumulate_grad_hook``: ``hook(tensor)`` runs after ``.grad``
    of the leaf ``tensor`` is updated."""
    if not tensor._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if tensor._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    node = accumulator_of(tensor)
    tensor._leaf_hooks = node  # keeps the accumulator (and its hooks) alive
    if not isinstance(node._post_accumulate_hooks, list):
        node._post_accumulate_hooks = []
    node._post_accumulate_hooks.append(hook)
    return RemovableHandle(node._post_accumulate_hooks, hook)


class _TaskState(threading.local):
    """The backward passes running in this thread, innermost last (set by the engine)."""
    tasks = ()


_task_state = _TaskState()


def current_graph_task():
    """The backward pass running in this thread (innermost), or None."""
    tasks = _task_state.tasks
    return tasks[-1] if tasks else None


def _grad_fn_or_accumulator(t):
    if not t._requires_grad:
        raise AssertionError("Expected gradient function to be set")
    return gradient_edge(t)[0]


class _MultiHandle:
    """The handle of a multi-grad hook: ``remove()`` takes out all of its parts."""
    __slots__ = ("handles",)

    def __init__(self, handles):
        self.handles = handles

    def remove(self):
        for handle in self.handles:
            handle.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call ``fn`` once per backward pass for gradients of several tensors.

    ``mode="all"``: after the gradient of every tensor the pass computes has arrived,
    ``fn(grads)`` with one entry per tensor (None for those it does not reach).
    ``mode="any"``: ``fn(grad)`` with the first of them to arrive.

    >>> import ember
    >>> from ember.autograd.graph import register_multi_grad_hook
    >>> a = ember.ones(2, requires_grad=True); b = ember.ones(2, requires_grad=True)
    >>> h = register_multi_grad_hook((a, b), lambda gs: print([g is not None for g in gs]))
    >>> (a * 2).sum().backward()
    [True, False]
    >>> h.remove()
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of {('all', 'any')} but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        fired = weakref.WeakKeyDictionary()

        def any_hook(grad):
            task = current_graph_task()
            with lock:
                if fired.get(task):
                    return
                fired[task] = True
            fn(grad)
        return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors
                                  if t._requires_grad))
    nodes = [_grad_fn_or_accumulator(t) for t in tensors]
    pending = weakref.WeakKeyDictionary()  # per pass: [calls still expected, grads]

    def make_hook(index):
        def all_hook(grad):
            task = current_graph_task()
            with lock:
                entry = pending.get(task)
                if entry is None:
                    expected = sum(1 for n in nodes if task.will_execute(n))
                    entry = pending[task] = [expected, [None] * len(nodes)]
                entry[1][index] = grad
                entry[0] -= 1
                done = entry[0] == 0
            if done:
                del pending[task]
                fn(entry[1])
        return all_hook
    return _MultiHandle(tuple(t.register_hook(make_hook(i)) for i, t in enumerate(tensors)))


class OwnedGrads(list):
    """Gradients the engine made and alone refers to (Note [gradient ownership])."""
    __slots__ = ()


def _first_grad(data, like, owned):
    """The first gradient of a leaf as storage the leaf owns: ``data`` itself when the
    engine owns it (and it is a whole, writeable, C-ordered array of the leaf's shape and
    dtype, as PyTorch steals a gradient nobody else holds), else a copy."""
    if data.dtype == like.dtype and data.shape == like.shape:
        if owned and data.base is None and data.flags.c_contiguous \
                and is_writeable(data):
            return Tensor._make(data)
        if like.flags.c_contiguous:
            return Tensor._make(data.copy(order="C"))
        # PyTorch's gradient layout contract: a channels-last leaf gets a channels-last .grad
        return Tensor._make(copy_in_layout_of(data, like))
    if data.dtype != like.dtype:
        data = data.astype(like.dtype)
    return Tensor._make((data + _zeros(like)).copy())


def _zeros(like):
    return get_array_module(like).zeros(like.shape, like.dtype)


def accumulator_of(tensor):
    """The (cached) AccumulateGrad node of a leaf tensor that requires grad."""
    ref = tensor._accumulator
    node = ref() if ref is not None else None
    if node is None:
        node = AccumulateGrad(tensor)
        tensor._accumulator = weakref.ref(node)
    return node


def gradient_edge(t):
    """The (node, input_nr) that gradients for tensor ``t`` flow into."""
    if t._base is not None and t._view_version != t._vc[0]:
        refresh_view_grad_fn(t)
    fn = t._grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (accumulator_of(t), 0)
    return (None, 0)


def refresh_view_grad_fn(view):
    """Re-derive a view's grad_fn from its base after the base changed in place, by
    replaying its view ops on the base (``views.py`` says when)."""
    base = view._base
    view._view_version = view._vc[0]
    if not base._requires_grad or view._view_fn is None:
        return
    with grad_mode.enable_grad():
        fresh = view._view_fn(base)
    view._grad_fn = fresh._grad_fn
    view._output_nr = fresh._output_nr
    view._requires_grad = True


class SavedTensor:
    """A tensor saved for backward, with the version it had when saved.

    Outputs of the node that saves them are kept as bare data plus metadata
    (not the tensor object), so ``output -> grad_fn -> saved output`` forms no
    reference cycle; unpacking rebuilds a tensor whose grad_fn is the node.
    """
    __slots__ = ("tensor", "version", "output_nr")

    def __init__(self, tensor, output_nr=None):
        self.version = tensor._vc[0]
        self.output_nr = output_nr
        self.tensor = tensor if output_nr is None else _OutputRecord(tensor)

    def unpack(self, node):
        t = self.tensor
        if self.output_nr is not None:
            if t.vc[0] != self.version:
                _raise_modified(t, self.version, t.vc[0], node, self.output_nr)
            return t.rebuild(node, self.output_nr)
        if t._vc[0] != self.version:
            _raise_modified(t, self.version, t._vc[0], t.grad_fn, t._output_nr)
        return t

    def unpack_data(self, node):
        """Like ``unpack`` but only the array (what array-level backward formulas use)."""
        t = self.tensor
        if self.output_nr is not None:
            if t.vc[0] != self.version:
                _raise_modified(t, self.version, t.vc[0], node, self.output_nr)
            return t.data
        if t._vc[0] != self.version:
            _raise_modified(t, self.version, t._vc[0], t.grad_fn, t._output_nr)
        return t._data


def saved_tensor(tensor, output_nr=None):
    """A ``SavedTensor`` for ``tensor``, or a ``HookedSavedTensor`` when
    ``saved_tensors_hooks`` are active."""
    hooks = _current_saved_hooks()
    if hooks is None:
        return SavedTensor(tensor, output_nr)
    return HookedSavedTensor(tensor, output_nr, hooks)


def saved_tensors(tensors, output_nrs):
    """``saved_tensor`` of each of ``tensors`` (None stays None), the hooks looked up once;
    ``output_nrs``: ``{id(tensor): output number}`` for the node's own outputs."""
    hooks = _current_saved_hooks()
    if hooks is None:
        return tuple(None if t is None else SavedTensor(t, output_nrs.get(id(t)))
                     for t in tensors)
    return tuple(None if t is None else HookedSavedTensor(t, output_nrs.get(id(t)), hooks)
                 for t in tensors)


class HookedSavedTensor:
    """A saved tensor kept as what the active pack hook returned.

    Unpacking calls the unpack hook and gives its result the saved tensor's place in
    the graph (``requires_grad``, ``grad_fn`` or the leaf's accumulator), as PyTorch
    does. Versions are not checked: the hooks may keep anything.
    """
    __slots__ = ("packed", "unpack_hook", "requires_grad", "output_nr", "edge")

    def __init__(self, tensor, output_nr, hooks):
        pack_hook, self.unpack_hook = hooks
        version = tensor._vc[0]
        state = grad_mode._state
        prev, state.enabled = state.enabled, False  # PyTorch packs with grad mode off
        try:
            self.packed = pack_hook(tensor)
        finally:
            state.enabled = prev
        if tensor._vc[0] != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.")
        self.requires_grad = tensor._requires_grad
        self.output_nr = output_nr
        # An output's node is the one unpacking it; anything else keeps its edge (a leaf's
        # accumulator is held here, as the rebuilt tensor is a different object).
        self.edge = gradient_edge(tensor) if output_nr is None and self.requires_grad else None

    def unpack(self, node):
        data = self.unpack_hook(self.packed)
        if not isinstance(data, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {c_type_name(data)}")
        t = Tensor._make(data._data, self.requires_grad)
        t._vc = data._vc
        if self.requires_grad:
            fn, nr = (node, self.output_nr) if self.edge is None else self.edge
            if type(fn) is AccumulateGrad:
                t._accumulator = weakref.ref(fn)
            else:
                t._grad_fn, t._output_nr = fn, nr
        return t

    def unpack_data(self, node):
        return self.unpack(node)._data


class _OutputRecord:
    __slots__ = ("data", "vc", "requires_grad", "base", "view_fn")

    def __init__(self, t):
        self.data = t._data
        self.vc = t._vc
        self.requires_grad = t._requires_grad
        self.base = t._base
        self.view_fn = t._view_fn

    def rebuild(self, node, output_nr):
        t = Tensor._make(self.data, self.requires_grad)
        t._vc = self.vc
        t._base = self.base
        t._view_fn = self.view_fn
        if self.requires_grad:
            t._grad_fn = node
            t._output_nr = output_nr
        return t

    @property
    def shape(self):
        return self.data.shape


def legacy_type_name(data):
    """``ember.FloatTensor`` and the like, for an array (PyTorch's legacy type names)."""
    return f"ember.{_dtype_legacy_name(from_numpy_dtype(data.dtype))}"


def type_description(data):
    return f"[{legacy_type_name(data)} [{', '.join(str(s) for s in data.shape)}]]"


def _raise_modified(t, expected, actual, grad_fn, output_nr):
    data = t.data if isinstance(t, _OutputRecord) else t._data
    where = ""
    if grad_fn is not None:  # PyTorch names the forward op: "output 0 of Exp"
        op = re.sub(r"Backward\d*$", "", grad_fn.name())
        where = f", which is output {output_nr} of {op},"
    raise RuntimeError(
        "one of the variables needed for gradient computation has been modified by an inplace "
        f"operation: {type_description(data)}{where} is at version {actual}; expected version "
        f"{expected} instead. Hint: enable anomaly detection to find the operation that failed "
        "to compute its gradient, with ember.autograd.set_detect_anomaly(True, "
        "check_nan=False).")


def c_type_name(obj):
    """The type name PyTorch's C++ checks print: ``float``, ``str``, ``numpy.ndarray``.

    That is CPython's ``tp_name``: the bare name for classes defined in Python and for
    built-ins, the dotted module path for other C types.
    """
    cls = type(obj)
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class created by a class statement


def hook_name(fn):
    """How PyTorch names a hook in its errors: the function's name or ``<unknown>``."""
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def check_hook_result(fn, value, result):
    """Validate what a gradient hook returned in place of ``value`` (PyTorch's checks):
    a tensor of the same size and type; None means 'keep it' and is handled by the caller."""
    if not isinstance(result, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{c_type_name(result)}'")
    if value is None:
        return
    old = value._data if isinstance(value, Tensor) else value
    new = result._data
    if new.shape != old.shape:
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the size of value")
    if new.dtype != old.dtype:
        raise RuntimeError(f"hook '{hook_name(fn)}' has changed the type of value (was "
                           f"{legacy_type_name(old)} got {legacy_type_name(new)})")


def check_hook_results(fn, values, results):
    """Validate a tuple a node hook returned: as many entries as ``values``, each checked."""
    if len(results) != len(values):
        raise RuntimeError(f"hook '{hook_name(fn)}' has returned an incorrect number of values "
                           f"(got {len(results)}, but expected {len(values)})")
    for value, result in zip(values, results):
        if result is not None:
            check_hook_result(fn, value, result)


FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


class GradientEdge(typing.NamedTuple):
    """Where a tensor's gradient enters the graph, as ``get_gradient_edge`` returns it;
    ``autograd.grad`` takes one as an input (the gradient flowing into that edge)."""
    node: Node
    output_nr: int
    ownership_token: object = None  # PyTorch's keeps C++ graphs alive; Python's refcounts do


def get_gradient_edge(tensor):
    """The GradientEdge of ``tensor``: its grad_fn (a leaf: its AccumulateGrad node) and
    output number.

    >>> import ember
    >>> x = ember.ones(2, requires_grad=True)
    >>> edge = ember.autograd.graph.get_gradient_edge(x * 2)
    >>> edge.node.name(), edge.output_nr
    ('MulBackward0', 0)
    """
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, output_nr = gradient_edge(tensor)
    return GradientEdge(node, output_nr)


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor of an iterable), as an
    in-place change autograd did not see would: saved copies of it then fail to unpack.

    >>> import ember
    >>> x = ember.ones(2)
    >>> ember.autograd.graph.increment_version(x); x._version
    1
    """
    if isinstance(tensor, Tensor):
        tensor = (tensor,)
    try:
        tensors = list(tensor)
    except TypeError:
        raise RuntimeError("increment_version expect a Iterable[Tensor] as input") from None
    for t in tensors:
        if not isinstance(t, Tensor):
            raise RuntimeError("increment_version expect a Iterable[Tensor] as input")
        t._vc[0] += 1
