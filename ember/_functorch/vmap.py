"""``vmap``: run a per-sample function once on a whole batch.

Each call pushes a level (``batched.levels``), wraps the mapped inputs as BatchedTensors
of it and runs the function; the ops inside go to their batching rules
(``batch_rules.dispatch``) through the hooks of ``ember.autograd.batching``, which are
installed only while some vmap runs. ``autograd.grad`` and user ``autograd.Function``s
take their own paths here (``_batched_grad``, ``_batched_function``).
"""
import collections
import functools
import threading

from .. import random as _random
from ..autograd import batching as _hooks
from ..autograd import backprop
from ..autograd.function import Function, _bind_kwargs
from ..autograd.grad_mode import _state as _grad_state
from .._tensor import Tensor
from .._ops.shape import cat as _cat, stack
from .._creation import ones_like
from . import batch_rules as _rules
from .batched import BatchedTensor, Level, levels, wrap, expose, hide, ERROR_MSG
from .pytree import SUPPORTED_NODES

_RANDOMNESS = ("error", "different", "same")


# ---- pytrees (tuples, lists, dicts), with PyTorch's TreeSpec text --------------------------
class _Spec:
    def __init__(self, kind, context, children, rebuild=None):
        self.kind, self.context, self.children = kind, context, children
        self.rebuild = rebuild  # a registered container's unflatten_fn (ember.utils._pytree)

    def __eq__(self, other):
        return (isinstance(other, _Spec) and self.kind is other.kind
                and self.context == other.context and self.children == other.children)

    def text(self, indent=0):
        if self.kind is None:
            return "*"
        head = f"TreeSpec({self.kind.__name__}, {self.context}, ["
        inner = ""
        if self.children:
            indent += 2
            inner = self.children[0].text(indent)
            if len(self.children) > 1:
                inner += "," + ",".join("\n" + " " * indent + c.text(indent)
                                        for c in self.children[1:])
        return head + inner + "])"


_LEAF = _Spec(None, None, [])
_NODES = SUPPORTED_NODES
_PLAIN = (tuple, list, dict)


def tree_flatten(tree):
    node = _NODES.get(type(tree))
    if node is not None and type(tree) not in _PLAIN:  # a registered container type
        children, context = node.flatten_fn(tree)
        leaves, specs = [], []
        for child in children:
            sub, spec = tree_flatten(child)
            leaves += sub
            specs.append(spec)
        return leaves, _Spec(type(tree), context, specs, node.unflatten_fn)
    if isinstance(tree, (tuple, list)):
        leaves, children = [], []
        for item in tree:
            sub, spec = tree_flatten(item)
            leaves += sub
            children.append(spec)
        return leaves, _Spec(type(tree), None, children)
    if isinstance(tree, dict):
        leaves, children = [], []
        for key in tree:
            sub, spec = tree_flatten(tree[key])
            leaves += sub
            children.append(spec)
        return leaves, _Spec(dict, list(tree), children)
    return [tree], _LEAF


def tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(s):
        if s.kind is None:
            return next(it)
        items = [build(c) for c in s.children]
        if s.rebuild is not None:
            return s.rebuild(items, s.context)
        if s.kind is dict:
            return dict(zip(s.context, items))
        if s.kind not in (tuple, list):  # a named result (ember.max(x, 0), linalg.qr, ...)
            return s.kind(*items)
        return s.kind(items)
    return build(spec)


def _broadcast_to_spec(dims, spec):
    """Flat per-leaf dims of ``dims`` (an int/None, or a tree a prefix of ``spec``), or
    None when the structures don't match."""
    # a registered container of dims for an input of its type (ember.utils._pytree)
    registered = spec.rebuild is not None and type(dims) is spec.kind \
        and not isinstance(dims, dict)
    if not registered and not isinstance(dims, (tuple, list, dict)):
        return [dims] * _count(spec)  # one dim (checked later) for the subtree
    if spec.kind is None:
        return None
    is_dict = isinstance(spec.kind, type) and issubclass(spec.kind, dict)
    if registered:
        dims = _NODES[spec.kind].flatten_fn(dims)[0]
        if len(dims) != len(spec.children):
            return None
    elif isinstance(dims, dict):
        keys = spec.context[1] if spec.kind is collections.defaultdict else spec.context
        if not is_dict or list(dims) != list(keys):
            return None
        dims = list(dims.values())
    elif not isinstance(dims, (tuple, list)) or is_dict or spec.rebuild is not None \
            or len(dims) != len(spec.children):
        return None
    out = []
    for d, child in zip(dims, spec.children):
        sub = _broadcast_to_spec(d, child)
        if sub is None:
            return None
        out += sub
    return out


def _count(spec):
    return 1 if spec.kind is None else sum(_count(c) for c in spec.children)


# ---- the public function ---------------------------------------------------------------------
def _name(func):
    return getattr(func, "__name__", repr(func))


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a dim of its inputs: ``func`` sees one sample, runs once.

    ``in_dims``/``out_dims``: the mapped dim of each input/output (an int, None for
    unmapped, or a tree matching the inputs/outputs); ``randomness``: "error",
    "different" (a draw per sample) or "same" (one draw for all); ``chunk_size`` runs
    the batch in chunks of that many samples. Nests; ``autograd.grad`` inside gives
    per-sample gradients.

    >>> import ember
    >>> x = ember.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> ember.vmap(lambda row: (row * row).sum())(x)
    tensor([ 5., 25.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and chunk_size < 1:
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def vmapped(*args, **kwargs):
        flat, spec, flat_dims, size = _check_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat, spec, flat_dims, size, out_dims, randomness, kwargs)
        pieces = []
        for lo in range(0, size, chunk_size):
            n = min(chunk_size, size - lo)
            part = [a if d is None else a.narrow(d, lo, n) for a, d in zip(flat, flat_dims)]
            pieces.append(_run(func, part, spec, flat_dims, n, out_dims, randomness, kwargs))
        flat_outs, out_spec = tree_flatten(pieces[0])
        columns = zip(*[tree_flatten(p)[0] for p in pieces])
        dims = _broadcast_to_spec(out_dims, out_spec)
        joined = [col[0] if d is None else _cat(list(col), d) for col, d in zip(columns, dims)]
        return tree_unflatten(joined, out_spec)
    return vmapped


_hooks.vmap_function[0] = vmap


def _check_inputs(func, in_dims, args):
    where = f"vmap({_name(func)}, in_dims={in_dims!r}, ...)(<inputs>)"
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(f"{where}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    if len(args) == 0:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         f"add inputs, or you are trying to vmap over a function with no "
                         f"inputs. The latter is unsupported.")
    flat, spec = tree_flatten(args)
    flat_dims = _broadcast_to_spec(in_dims, spec)
    if flat_dims is None:
        dims_spec = tree_flatten(in_dims)[1]
        raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                         f"in_dims has structure {dims_spec.text()} but inputs has structure "
                         f"{spec.text()}.")
    sizes = []
    for a, d in zip(flat, flat_dims):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{where}: Got in_dim={d} for an input but in_dim must be either "
                             f"an integer dimension or None.")
        if not isinstance(a, Tensor):
            raise ValueError(f"{where}: Got in_dim={d} for an input but the input is of type "
                             f"{type(a)}. We cannot vmap over non-Tensor arguments, please use "
                             f"None as the respective in_dim")
        n = a.dim()
        if not -n <= d < n:
            raise ValueError(f"{where}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {n} so expected in_dim to satisfy "
                             f"-{n} <= in_dim < {n}.")
        sizes.append(a.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return flat, spec, flat_dims, sizes[0]


def _run(func, flat, spec, flat_dims, size, out_dims, randomness, kwargs):
    level = _push(size, randomness)
    try:
        inputs = [a if d is None else wrap(a.movedim(d, 0) if d % a.dim() else a, level.number)
                  for a, d in zip(flat, flat_dims)]
        out = func(*tree_unflatten(inputs, spec), **kwargs)
        return _unwrap_outputs(func, out, out_dims, level)
    finally:
        _pop(level)


def _unwrap_outputs(func, out, out_dims, level):
    flat, spec = tree_flatten(out)
    if not isinstance(out_dims, (int, tuple, list)) and out_dims is not None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an "
                         f"int, None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")
    dims = _broadcast_to_spec(out_dims, spec)
    if dims is None:
        raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is "
                         f"not compatible with the structure of `outputs`. out_dims has "
                         f"structure {tree_flatten(out_dims)[1].text()} but outputs has "
                         f"structure {spec.text()}.")
    results = []
    for o, d in zip(flat, dims):
        batched = type(o) is BatchedTensor and o._level == level.number
        if d is None:
            if batched:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 f"BatchedTensor when out_dim is None")
            results.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` must only return "
                             f"Tensors, got type {type(o)}. Did you mean to set out_dims= to "
                             f"None for output?")
        phys = o._value if batched else o.unsqueeze(0).expand((level.size,) + tuple(o.shape))
        results.append(phys.movedim(0, d) if d else phys)
    return tree_unflatten(results, spec)


# ---- levels and the hooks ----------------------------------------------------------------------
_active = [0]  # levels open in all threads: the hooks stay while any is
_active_lock = threading.Lock()


def _push(size, randomness, number=None):
    if number is None:
        number = (levels[-1].number if levels else 0) + 1
    level = Level(number, size, randomness)
    levels.append(level)
    with _active_lock:
        _active[0] += 1
        _hooks.hooks[0] = _DISPATCHER
        _random.vmap_randomness = _RANDOMNESS_POLICY
    return level


def _pop(level):
    levels.remove(level)
    with _active_lock:
        _active[0] -= 1
        if not _active[0]:
            _hooks.hooks[0] = None
            _random.vmap_randomness = None


class _Randomness:
    """What random draws do inside vmap (``ember.random.vmap_randomness``)."""

    @staticmethod
    def check():
        if levels and levels[-1].randomness == "error":
            raise RuntimeError(ERROR_MSG)

    @staticmethod
    def batch_size():
        return levels[-1].size if levels and levels[-1].randomness == "different" else None

    @staticmethod
    def wrap(t):
        return wrap(t, levels[-1].number)

    @staticmethod
    def check_fill(target):
        lv = levels[-1] if levels else None
        if lv is None or lv.randomness != "different" or lv.filling:
            return
        if not (type(target) is BatchedTensor and target._level == lv.number):
            raise RuntimeError("vmap: Cannot ask for different inplace randomness on an "
                               "unbatched tensor. This will appear like same randomness. If "
                               "this is necessary for your usage, please file an issue with "
                               "functorch.")


_RANDOMNESS_POLICY = _Randomness()


class _Dispatcher:
    """The object ``ember.autograd.batching.hooks`` holds while a vmap runs."""

    @staticmethod
    def active():
        """Whether this thread is inside a vmap."""
        return len(levels) > 0

    @staticmethod
    def primitive(cls, args):
        return _rules.dispatch(cls, args)

    @staticmethod
    def function(cls, args, kwargs):
        return _batched_function(cls, args, kwargs)

    @staticmethod
    def grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
             materialize_grads):
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)


    @staticmethod
    def per_sample(fn, args, kwargs):
        return _rules.per_sample(fn, args, kwargs)

    @staticmethod
    def fold(fn, x, args, kwargs):
        return _rules.fold(fn, x, args, kwargs)

    @staticmethod
    def index(fn, x, index, value):
        return _rules.index(fn, x, index, value)

    @staticmethod
    def check_inplace(target, result):
        _rules.check_inplace(target, result)


_DISPATCHER = _Dispatcher()


def _tuple(x):
    if x is None:
        return ()
    return (x,) if isinstance(x, Tensor) else tuple(x)


# ---- autograd.grad inside vmap: per-sample gradients -----------------------------------------
def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads):
    """Per-sample gradients. A batched input's come straight from the physical graph. A
    plain input reaches the batched outputs only through the expansions made when a plain
    tensor requiring grad met a batched one (``batch_rules.expanded``): the gradients at
    those are per sample, and the plain graph between them and the input carries them on
    as batched vectors (``_vjp_of_batched_vectors``)."""
    outs, ins, gos = _tuple(outputs), _tuple(inputs), _tuple(grad_outputs)
    top = _rules._top_level(outs + ins + gos)
    if not top:
        return NotImplemented
    lv = _rules._level_info(top)
    size = lv.size
    for t in ins:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if gos and not any(_rules._batched(t, top) for t in outs + ins):
        return _vjp_of_batched_vectors(outs, ins, gos, allow_unused, materialize_grads,
                                       create_graph, lv)
    phys_outs = [_rules._to_batch(o, top, size) for o in outs]
    if not gos:
        for o in outs:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
        phys_gos = [ones_like(p) for p in phys_outs]
    else:
        phys_gos = [None if g is None else _rules._to_batch(g, top, size).expand(p.shape)
                    for g, p in zip(gos, phys_outs)]
    batched = [k for k, t in enumerate(ins) if _rules._batched(t, top)]
    plain_at = [k for k, t in enumerate(ins) if not _rules._batched(t, top)]
    plain = [ins[k] for k in plain_at]
    # Expansions that may lead to a plain input: the inputs' own, and those of tensors
    # computed from something (a leaf other than an input cannot depend on one).
    lifts = [(p, e) for p, e in lv.expanded.values()
             if p._grad_fn is not None or any(p is t for t in plain)] if plain else []
    targets = [ins[k]._value for k in batched] + [e._value for _, e in lifts]
    keep = retain_graph if retain_graph is not None else create_graph
    got = backprop.grad(phys_outs, targets, phys_gos, retain_graph=keep or bool(lifts),
                        create_graph=create_graph, allow_unused=True) if targets else ()
    grads = [None] * len(ins)
    for k, g in zip(batched, got):
        grads[k] = None if g is None else wrap(g, top)
    if plain:
        lifted = [(p, g) for (p, _), g in zip(lifts, got[len(batched):]) if g is not None]
        for k, g in zip(plain_at, _through_plain_graph(lifted, plain, top, create_graph)):
            grads[k] = g
    result = []
    for t, g in zip(ins, grads):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize_grads:
                g = wrap(_rules._to_batch(t.detach() * 0, top, size).clone(), top)
        result.append(g)
    return tuple(result)


def _through_plain_graph(lifted, plain, level, create_graph):
    """Per-sample gradients of the plain inputs from those at the expansions."""
    direct = [None] * len(plain)
    derived_outs, derived_grads = [], []
    for p, g in lifted:
        hit = [k for k, t in enumerate(plain) if t is p]
        if hit:
            direct[hit[0]] = wrap(g, level)
        else:
            derived_outs.append(p)
            derived_grads.append(wrap(g, level))
    if not derived_outs:
        return direct
    via = _vjp_of_batched_vectors(tuple(derived_outs), tuple(plain), tuple(derived_grads),
                                  True, False, create_graph, _rules._level_info(level))
    return [d if v is None else v if d is None else d + v for d, v in zip(direct, via)]


def _vjp_of_batched_vectors(outs, ins, gos, allow_unused, materialize_grads, create_graph, lv):
    """Plain outputs and inputs, batched grad_outputs (``is_grads_batched``): the backward
    formulas themselves run on the batched vectors (as tensor ops, hence through the
    batching rules), so a formula that is not batch-safe shows up here."""
    if any(isinstance(t, BatchedTensor) for t in outs + ins):
        return _vjp_under_outer_batch(outs, ins, gos, allow_unused, materialize_grads,
                                      create_graph, lv)
    lifting, lv.lifting = lv.lifting, create_graph  # no per-sample grads wanted of this pass
    try:
        grads = backprop.plain_grad(outs, ins, gos, retain_graph=True, create_graph=True,
                                    allow_unused=allow_unused,
                                    materialize_grads=materialize_grads)
    finally:
        lv.lifting = lifting
    if create_graph:
        return grads
    return tuple(None if g is None else g.detach() for g in grads)


def _vjp_under_outer_batch(outs, ins, gos, allow_unused, materialize_grads, create_graph, lv):
    """Outputs and inputs batched at an outer vmap, grad_outputs at this one (jacrev inside
    vmap): the outer batch dim becomes a logical dim of the grad_outputs (``expose``), the
    vector-Jacobian products run once on the outer level's physical graph, batched at this
    level, and the gradients get the outer batch dim back (``hide``)."""
    outer = _rules._top_level(outs + ins)
    if not all(_rules._batched(t, outer) for t in ins):
        # a plain input reaches the outer batch through expansions, and through the plain
        # graph between them (_batched_grad's business): one vjp per vector
        return _vjp_per_vector(outs, ins, gos, allow_unused, materialize_grads, create_graph,
                               lv)
    size = _rules._level_info(outer).size
    phys_ins = [t._value for t in ins]
    phys_outs = [_rules._to_batch(o, outer, size) for o in outs]
    phys_gos = [None if g is None else expose(g, outer, size, o.shape)
                for g, o in zip(gos, outs)]
    grads = backprop.grad(phys_outs, phys_ins, phys_gos, retain_graph=True,
                          create_graph=create_graph, allow_unused=allow_unused,
                          materialize_grads=materialize_grads)
    return tuple(None if g is None else hide(g, outer) for g in grads)


def _vjp_per_vector(outs, ins, gos, allow_unused, materialize_grads, create_graph, lv):
    """Outputs batched at an outer vmap, grad_outputs at this one (jacrev inside vmap): one
    vector-Jacobian product per vector, each through the outer level's own path."""
    _rules.warn_once(_rules._warned, "autograd.grad of outer-batched outputs")
    rows = [backprop.grad(outs, ins, [None if g is None else _rules._sample(g, lv.number, b)
                                      for g in gos],
                          retain_graph=True, create_graph=create_graph,
                          allow_unused=allow_unused, materialize_grads=materialize_grads)
            for b in range(lv.size)]
    return tuple(None if all(r[k] is None for r in rows) else
                 wrap(stack([r[k] if r[k] is not None else ins[k].detach() * 0 for r in rows]),
                      lv.number)
                 for k in range(len(ins)))


# ---- user autograd.Functions -------------------------------------------------------------------
class VmapInfo:
    """What a Function's ``vmap`` staticmethod is told: ``batch_size`` and ``randomness``."""

    def __init__(self, batch_size, randomness):
        self.batch_size, self.randomness = batch_size, randomness


class _InnerCtx:
    """The ctx a Function's setup_context and backward see under vmap."""

    def __init__(self, needs):
        self.needs_input_grad = needs
        self._saved = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self._saved = tensors

    @property
    def saved_tensors(self):
        return self._saved

    def mark_non_differentiable(self, *tensors):
        pass

    def mark_dirty(self, *tensors):
        pass

    def set_materialize_grads(self, value):
        self.materialize_grads = value


def _batched_function(cls, args, kwargs):
    top = _rules._top_level(tuple(args) + tuple(kwargs.values()))
    if not top:
        return NotImplemented
    if not cls._setup_style:
        raise RuntimeError("In order to use an autograd.Function with functorch transforms "
                           "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                           "staticmethod. For more details, please see "
                           "https://pytorch.org/docs/main/notes/extending.func.html")
    custom = getattr(cls, "vmap", None)
    if not getattr(cls, "generate_vmap_rule", False) and custom is None:
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           f"support. Please override and implement the vmap staticmethod or "
                           f"set generate_vmap_rule=True. For more details, please see "
                           f"https://pytorch.org/docs/main/notes/extending.func.html")
    if kwargs:
        args = _bind_kwargs(cls, args, kwargs)
    lv = _rules._level_info(top)
    args = _rules._lift_grad_inputs(tuple(args), lv) if _grad_enabled() else tuple(args)
    slots = [k for k, a in enumerate(args) if _rules._batched(a, top)]
    call = _FunctionCall(cls, args, slots, top, lv)
    physical = [args[k]._value for k in slots]
    if any(isinstance(p, BatchedTensor) for p in physical):
        # Nested vmap: the rule runs inline on the inner levels' batched tensors, and
        # autograd differentiates the ops it runs (the Function's backward is not used).
        return _vmap_rule(call, physical)
    outs = _PhysicalFunction.apply(call, *physical)
    if type(outs) is tuple:
        return tuple(wrap(o, top) for o in outs)
    return wrap(outs, top)


def _grad_enabled():
    return _grad_state.enabled


class _FunctionCall:
    def __init__(self, cls, args, slots, level, lv):
        self.cls, self.args, self.slots, self.level = cls, args, slots, level
        self.size, self.randomness = lv.size, lv.randomness
        self.ctx = None
        self.several = False


class _PhysicalFunction(Function):
    """A user Function under vmap, as seen by autograd on the physical tensors: forward
    runs the Function's vmap rule (its own, or its forward on BatchedTensors), backward
    runs its backward on BatchedTensors."""

    @staticmethod
    def forward(ctx, call, *physical):
        ctx._call = call
        return _vmap_rule(call, physical, setup=True)

    @staticmethod
    def backward(ctx, *grads):
        return _replay_backward(ctx._call, grads)


def _vmap_rule(call, physical, setup=False):
    """The Function's forward on the batch: its vmap staticmethod, or (generate_vmap_rule)
    its forward on BatchedTensors. With ``setup`` (under _PhysicalFunction) setup_context
    runs too and the outputs are physical; otherwise they stay batched."""
    cls, level = call.cls, call.level
    batched = list(call.args)
    for k, p in zip(call.slots, physical):
        batched[k] = wrap(p, level)
    custom = getattr(cls, "vmap", None)
    if getattr(cls, "generate_vmap_rule", False) or custom is None:
        out = cls.forward(*batched)
    else:
        in_dims = tuple(0 if k in call.slots else None for k in range(len(batched)))
        plain = [a._value if k in call.slots else a for k, a in enumerate(batched)]
        raw, out_dims = custom(VmapInfo(call.size, call.randomness), in_dims, *plain)
        out = _rewrap_custom(raw, out_dims, level)
    if not setup:
        return out
    inner = _InnerCtx([isinstance(a, Tensor) and a._requires_grad for a in batched])
    cls.setup_context(inner, tuple(batched), out)
    call.ctx = inner
    call.several = type(out) is tuple
    outs = out if call.several else (out,)
    phys = tuple(_rules._to_batch(o, level, call.size) for o in outs)
    return phys if call.several else phys[0]


def _rewrap_custom(raw, out_dims, level):
    several = type(raw) is tuple
    raws = raw if several else (raw,)
    dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(raws)
    outs = tuple(r if d is None else wrap(r.movedim(d, 0) if d else r, level)
                 for r, d in zip(raws, dims))
    return outs if several else outs[0]


def _replay_backward(call, grads):
    active = any(lv.number == call.level for lv in levels)
    level = None if active else _push(call.size, call.randomness, call.level)
    try:
        batched = [None if g is None else wrap(g, call.level) for g in grads]
        result = call.cls.backward(call.ctx, *batched)
        if not isinstance(result, tuple):
            result = (result,)
        out = [None]
        for k in call.slots:
            g = result[k] if k < len(result) else None
            out.append(None if g is None else _rules._to_batch(g, call.level, call.size))
        return tuple(out)
    finally:
        if level is not None:
            _pop(level)
