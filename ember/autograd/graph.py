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
import weakref

from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.dtypes import from_numpy_dtype, legacy_type_name as _dtype_legacy_name
from . import grad_mode

_sequence = itertools.count()


class RemovableHandle:
    """Returned by ``register_hook``; ``remove()`` takes the hook out again."""
    __slots__ = ("_container", "_key")

    def __init__(self, container, key):
        self._container = container
        self._key = key

    def remove(self):
        c = self._container
        if isinstance(c, dict):
            c.pop(self._key, None)
        else:
            try:
                c.remove(self._key)
            except ValueError:
                pass

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
        return ()

    def _accumulate(self, grad, create_graph, owned):
        var = self.variable
        current = var._grad
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


_accumulate_lock = threading.Lock()


class OwnedGrads(list):
    """Gradients the engine made and alone refers to (Note [gradient ownership])."""
    __slots__ = ()


def _first_grad(data, like, owned):
    """The first gradient of a leaf as storage the leaf owns: ``data`` itself when the
    engine owns it (and it is a whole, writeable, C-ordered array of the leaf's shape and
    dtype, as PyTorch steals a gradient nobody else holds), else a copy."""
    if data.dtype == like.dtype and data.shape == like.shape:
        if owned and data.base is None and data.flags.c_contiguous and data.flags.writeable:
            return Tensor._make(data)
        return Tensor._make(data.copy(order="C"))
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
