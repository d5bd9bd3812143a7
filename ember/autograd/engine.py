"""The backward engine: runs graph nodes once each, in dependency order.

No recursion anywhere (Chainer's lesson, and micrograd's pitfall): a
depth-first walk with an explicit stack counts how many edges reach each node,
then a ready queue ordered by sequence number (latest-created first, like
PyTorch) runs each node as soon as every gradient flowing into it has arrived.

The engine knows nothing of specific ops: it calls ``node._apply``.

Without ``create_graph`` a gradient in flight may be a bare array rather than a
tensor: built-in nodes compute on arrays (``Primitive.backward_arrays``) and
take arrays (``node._accepts_arrays``); everything else -- user Functions,
hooks, ``autograd.grad``'s results -- sees tensors, wrapped on the way in.

Note [gradient ownership]
A leaf's first gradient becomes its ``.grad`` without a copy when the engine
owns that array: a built-in node (``_fresh_outputs``) computed it in this pass,
as a new array -- not one of the gradients the node was given (passed on),
not returned for two inputs, not a view -- or the engine summed it from two
gradients. Nothing else can refer to such an array. The engine hands it to the
leaf's AccumulateGrad in an ``OwnedGrads`` list; gradients from user
Functions, the caller, hooks and ``autograd.grad`` captures arrive in a plain
list (wrapping them for user code makes a new one) and are copied, since user
code may hold them. No reference counting is involved.
"""
import heapq

from .. import _autocast
from .._tensor import Tensor
from ..backend import numpy_ndarray as _ndarray
from ..backend.sparse_data import SparseCOOData
from . import anomaly, grad_mode
from .dispatch import active as _dispatch_active
from .graph import (AccumulateGrad, OwnedGrads, check_hook_result, check_hook_results,
                    _task_state)

try:  # the loop below in C (optional, built by setup.py): same steps, same order
    from . import _engine_loop as _native
except ImportError:  # built without a C compiler
    _native = None
_native_enabled = [_native is not None]


def set_native_loop(flag):
    """Run the plain backward pass (no ``inputs``, ``create_graph`` or anomaly mode) with
    the compiled loop when it was built, or always with the Python one; returns the
    previous setting. Both give the same gradients in the same order (tests run both).

    >>> from ember.autograd import engine
    >>> previous = engine.set_native_loop(False)  # the Python loop from here on
    >>> _ = engine.set_native_loop(previous)
    """
    previous = _native_enabled[0]
    _native_enabled[0] = bool(flag) and _native is not None
    return previous


class _Capture:
    """Where ``autograd.grad`` collects the gradient of one input."""
    __slots__ = ("node", "nr", "grad")

    def __init__(self, node, nr):
        self.node, self.nr, self.grad = node, nr, None


def _walk(roots, want_order):
    """Dependency counts (and, if asked, a children-first order) of reachable nodes."""
    if not want_order and _native_enabled[0]:
        return _native.walk(roots), None
    deps = {}
    roots = set(roots)
    stack = list(roots)
    while stack:
        node = stack.pop()
        for child, _ in node.next_functions:
            if child is not None:
                n = deps.get(child)
                if n is None:
                    deps[child] = 1
                    if child not in roots:  # each node is expanded once
                        stack.append(child)
                else:
                    deps[child] = n + 1
    return deps, (_postorder(roots) if want_order else None)


def _postorder(roots):
    order, done = [], set()
    stack = [(node, False) for node in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
        elif node not in done:
            done.add(node)
            stack.append((node, True))
            stack.extend((c, False) for c, _ in node.next_functions
                         if c is not None and c not in done)
    return order


def _needed_nodes(order, targets):
    """Nodes that must run so gradients reach some target: those with a target
    among their descendants (a target with none below it only captures)."""
    needed = set()
    for node in order:  # children come before parents
        for child, _ in node.next_functions:
            if child is not None and (child in targets or child in needed):
                needed.add(node)
                break
    return needed


class _GraphTask:
    """One backward pass: the gradients in flight, how many edges each node still
    waits for, the ready queue, and what ``autograd.grad`` captures."""
    __slots__ = ("buffers", "deps", "ready", "captures", "needed", "create_graph",
                 "retain_graph", "checked", "add", "roots", "callbacks", "__weakref__")

    def will_execute(self, node):
        """Whether this pass runs ``node`` (or, with ``inputs``, captures at it)."""
        if node not in self.deps and node not in self.roots:
            return False
        return self.needed is None or node in self.needed or node in self.captures


def _schedule(root_edges, root_grads, retain_graph, create_graph, inputs):
    """The graph task of a pass: root gradients buffered, dependencies counted, the
    nodes with no pending edge ready, and (for ``inputs``) the nodes that must run."""
    task = _GraphTask()
    task.buffers = buffers = {}
    roots = []
    for (node, nr), g in zip(root_edges, root_grads):
        if node is not None:
            _add_to_buffer(buffers, node, nr, g)
            roots.append(node)
    task.deps, order = _walk(roots, inputs is not None)
    task.roots = roots
    task.captures = {}
    task.needed = None
    if inputs is not None:
        for node, nr in inputs:
            if node is not None:
                task.captures.setdefault(node, []).append(_Capture(node, nr))
        task.needed = _needed_nodes(order, task.captures)
    task.ready = [(-n._sequence_nr, id(n), n) for n in set(roots) if n not in task.deps]
    heapq.heapify(task.ready)
    task.create_graph = create_graph
    task.retain_graph = retain_graph
    task.checked = anomaly._state.enabled
    if create_graph:
        task.add = _add_recorded
    elif _dispatch_active[0]:
        task.add = _add_dispatched  # a tensor sum, which dispatch sees as an op
    else:
        task.add = _add_grads
    task.callbacks = []
    return task


def queue_callback(callback):
    """Run ``callback()`` once the backward pass running in this thread has finished
    its graph (PyTorch's ``Variable._execution_engine.queue_callback``): what
    DistributedDataParallel uses to wait for its gradient reductions.

    >>> import ember
    >>> from ember.autograd.engine import queue_callback
    >>> w = ember.ones(2, requires_grad=True)
    >>> seen = []
    >>> h = w.register_hook(lambda g: queue_callback(lambda: seen.append(w.grad)))
    >>> (w * 3).sum().backward(); seen
    [tensor([3., 3.])]
    """
    tasks = _task_state.tasks
    if not tasks:
        raise RuntimeError("Final callbacks can only be installed during backward pass.")
    tasks[-1].callbacks.append(callback)


def run_backward(root_edges, root_grads, retain_graph=False, create_graph=False, inputs=None):
    """Propagate ``root_grads`` from ``root_edges`` through the graph.

    Without ``inputs`` every reachable leaf sums its gradient into ``.grad``.
    With ``inputs`` (a list of edges) nothing is accumulated: only the nodes on
    a path to an input run, and the gradients reaching each input are returned
    (None where none does).
    """
    task = _schedule(root_edges, root_grads, retain_graph, create_graph, inputs)
    autocast_state = _autocast.pause()  # backward ops run in their forward ops' dtypes
    state = grad_mode._state
    prev_enabled = state.enabled
    state.enabled = create_graph  # backward records a graph only for create_graph
    outer_tasks = _task_state.tasks
    _task_state.tasks = outer_tasks + (task,)
    try:
        if (_native_enabled[0] and inputs is None and task.add is _add_grads
                and not task.checked):
            _native.drain(task)
        else:
            _drain(task)
        callbacks = task.callbacks
        while callbacks:  # a callback may queue another
            callbacks.pop(0)()
    finally:
        state.enabled = prev_enabled
        _task_state.tasks = outer_tasks
        _autocast.resume(autocast_state)
    if inputs is None:
        return None
    result = []
    for node, nr in inputs:
        caps = task.captures.get(node, ())
        result.append(next((c.grad for c in caps if c.nr == nr), None))
    return result


def _drain(task):
    """Run the task's nodes until none is ready (the compiled loop does the same)."""
    ready, replace, pop = task.ready, heapq.heapreplace, heapq.heappop
    # The node to run next when it is known without the heap: in a chain, running a
    # node usually makes exactly one node ready, the one with the highest sequence
    # number; it skips the heap (same order: the heap's top is compared first).
    held = None
    while held is not None or ready:
        if held is not None:
            node = held
            if ready and ready[0][0] < -node._sequence_nr:
                node = replace(ready, (-node._sequence_nr, id(node), node))[2]
        else:
            node = pop(ready)[2]
        grads = task.buffers.pop(node, None)
        outputs, grads = _run_node(task, node, grads)
        held = _deliver(task, node, outputs, grads)
        outputs = grads = None  # hold no gradient past its node


def _run_node(task, node, grads):
    """Run one node on the gradients buffered for it: tensor hooks and pre-hooks,
    captures, ``_apply``, post-hooks. Returns its outputs (one per edge; ``()`` when
    it need not run) and the gradients it was given (``()`` once hooks saw them)."""
    captures = task.captures
    needed = task.needed
    if needed is not None and node not in needed and node not in captures:
        return (), grads  # off every path to an input: not run, no hooks (as PyTorch)
    if grads is None:
        grads = [None] * len(node._output_meta)
    elif not node._accepts_arrays or node._has_hooks or captures:
        grads = _as_tensors(grads)
    if node._has_hooks:
        grads = _run_pre_hooks(node, grads)
    if captures:
        for cap in captures.get(node, ()):
            cap.grad = grads[cap.nr]
    if task.needed is not None and node not in task.needed:
        return (), grads
    if task.checked:
        outputs = _apply_checked(node, grads, task.create_graph)
    else:
        outputs = node._apply(grads, task.create_graph)
    if node._has_hooks:
        outputs = _run_post_hooks(node, _as_tensors(outputs), grads)
        grads = ()  # hooks saw the gradients: none of them is fresh
    if not task.retain_graph:
        node._release()
    return outputs, grads


def _deliver(task, node, outputs, grads):
    """Add a node's outputs into its children's buffers and count the edge as done for
    each child. Returns the child to run next if one became ready (the others go to
    the ready queue), else None."""
    buffers, deps, ready = task.buffers, task.deps, task.ready
    held = None
    i = -1
    for child, nr in node.next_functions:
        i += 1
        if child is None:
            continue
        if outputs:
            g = outputs[i]
            if g is not None:
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * len(child._output_meta)
                    buf[nr] = g
                    if type(child) is AccumulateGrad and node._fresh_outputs and \
                            not task.create_graph and grads and _is_fresh(g, grads, outputs):
                        buffers[child] = OwnedGrads(buf)
                else:
                    prev = buf[nr]
                    if prev is None:
                        buf[nr] = g
                    else:
                        buf[nr] = task.add(prev, g)
                        if type(child) is AccumulateGrad and not task.create_graph:
                            buffers[child] = OwnedGrads(buf)  # a sum just made
        left = deps[child] - 1
        deps[child] = left
        if not left:
            if held is None:
                held = child
            elif child._sequence_nr > held._sequence_nr:
                heapq.heappush(ready, (-held._sequence_nr, id(held), held))
                held = child
            else:
                heapq.heappush(ready, (-child._sequence_nr, id(child), child))
    return held


def _is_fresh(g, given, outputs):
    """Whether a node output ``g`` is a new array of the node's own: not a view, not one
    of the gradients it was ``given``, and not returned twice."""
    data = g._data if isinstance(g, Tensor) else g
    if data.base is not None:
        return False
    for x in given:
        if x is not None and (x is data or getattr(x, "_data", None) is data):
            return False
    seen = 0
    for o in outputs:
        if o is not None and (o is data or getattr(o, "_data", None) is data):
            seen += 1
    return seen == 1


def _add_grads(a, b):
    """Sum two gradients (tensors or bare arrays) arriving at one slot, with no graph
    to record: arrays of one shape and dtype add as arrays, anything else as tensors."""
    x = a._data if isinstance(a, Tensor) else a
    y = b._data if isinstance(b, Tensor) else b
    if type(x) is SparseCOOData or type(y) is SparseCOOData:
        a, b = _as_tensors((a, b))  # sparse + dense is refused; dense + sparse is dense
        return b + a if type(y) is not SparseCOOData else a + b
    if x.shape == y.shape and x.dtype == y.dtype:
        return x + y
    return Tensor._make(x) + Tensor._make(y)


def _as_tensors(grads):
    """A list of gradients with bare arrays wrapped as tensors."""
    return [g if g is None or isinstance(g, Tensor) else Tensor._make(g) for g in grads]


def _add_recorded(a, b):
    return a + b


def _add_dispatched(a, b):
    a, b = _as_tensors((a, b))
    return a + b


def _add_to_buffer(buffers, node, nr, grad):
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * len(node._output_meta)
        buf[nr] = grad
        return
    prev = buf[nr]
    buf[nr] = grad if prev is None else prev + grad


def _run_pre_hooks(node, grads):
    hooks = node._tensor_pre_hooks
    if hooks:
        for nr, fns in hooks.items():
            for fn in list(fns):
                if grads[nr] is None:
                    break
                new = fn(grads[nr])
                if new is not None:
                    check_hook_result(fn, grads[nr], new)
                    grads[nr] = new
    for fn in node._pre_hooks:
        new = fn(tuple(grads))
        if new is not None:
            check_hook_results(fn, grads, new)
            grads = list(new)
    return grads


def _run_post_hooks(node, outputs, grads):
    for fn in node._hooks:
        new = fn(tuple(outputs), tuple(grads))
        if new is not None:
            check_hook_results(fn, outputs, new)
            outputs = tuple(new)
    return outputs


def _apply_checked(node, grads, create_graph):
    """``node._apply`` under anomaly detection: NaN check, forward traceback on error."""
    try:
        outputs = node._apply(grads, create_graph)
        anomaly.check_nan(node, outputs)
    except Exception:
        anomaly.warn_forward_trace(node)
        raise
    return outputs


if _native is not None:
    _native.setup(AccumulateGrad, OwnedGrads, _run_node, _is_fresh, _as_tensors, _ndarray, heapq)
