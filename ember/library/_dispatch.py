"""The operator registry behind ``ember.library`` and ``ember.ops``.

Each defined operator overload (``"ns::name.overload"``) has one ``OperatorEntry``: its
schema, its kernels by dispatch key, its fake (meta) implementation, its autograd formula
and its vmap rule. ``OpOverload`` is the callable; calling it picks what runs, in the order
PyTorch's dispatcher would for ember's one backend:

1. under vmap with batched arguments: the vmap rule (or a loop over the samples),
2. with an autograd formula (``register_autograd``; every ``custom_op`` has one, which
   raises in backward until one is registered): an autograd ``Function`` whose forward
   runs the kernel below,
3. an ``Autograd``/``AutogradCPU`` kernel registered with ``Library.impl``,
4. the backend kernel: ``CPU``, then ``CompositeExplicitAutograd``, then
   ``CompositeImplicitAutograd``. A Python kernel runs with grad mode as the caller has
   it, so a kernel made of ember ops records its own graph.

>>> import ember
>>> from ember.library import Library
>>> lib = Library("dispatchdoc", "DEF")
>>> _ = lib.define("twice(Tensor x) -> Tensor")
>>> lib.impl("twice", lambda x: x * 2, "CPU")
>>> ember.ops.dispatchdoc.twice(ember.tensor([1., 2.]))
tensor([2., 4.])
"""
import threading
import warnings

from .. import _autocast
from .._tensor import Tensor
from .._functions import stack
from .._functorch.batched import BatchedTensor
from ..autograd import grad_mode
from ..autograd.batching import hooks as _batching
from ..autograd.function import Function
from . import _schema

BACKEND_KEYS = ("CPU", "CompositeExplicitAutograd", "CompositeImplicitAutograd")
AUTOGRAD_KEYS = ("Autograd", "AutogradCPU")
# Dispatch keys Library.impl accepts (PyTorch's names; the ones ember never reaches are
# stored and listed, never run).
KNOWN_KEYS = frozenset(BACKEND_KEYS + AUTOGRAD_KEYS + (
    "Meta", "CUDA", "XPU", "MPS", "AutogradCUDA", "AutogradXPU", "AutogradMPS", "AutogradOther",
    "FuncTorchBatched", "Functionalize", "ADInplaceOrView", "BackendSelect", "Python",
    "PythonDispatcher", "PreDispatch", "Conjugate", "Negative", "ZeroTensor", "Sparse",
    "SparseCPU", "QuantizedCPU", "Autocast", "AutocastCPU", "AutocastCUDA",
    "CompositeExplicitAutogradNonFunctional", "Undefined"))

_entries = {}           # "ns::name.overload" (overload "" -> "default") -> OperatorEntry
_namespaces = {}        # ns -> {name: OpOverloadPacket}
_lock = threading.RLock()
_below_autograd = threading.local()  # entries whose Autograd kernel is running
# PyTorch's autograd fallback mode for ops with no autograd kernel: "warn" (outputs get a
# node that warns in backward) or "nothing" (what opcheck's registration test runs with)
autograd_fallback_mode = ["warn"]


def _key(qualname, overload):
    return f"{qualname}.{overload or 'default'}"


class OperatorEntry:
    """Everything registered for one operator overload."""

    def __init__(self, qualname, overload):
        self.qualname, self.overload = qualname, overload or ""
        self.ns, self.name = qualname.split("::", 1)
        self.schema = None
        self.kernels = {}          # dispatch key -> Python callable
        self.fake = None           # register_fake
        self.backward = None       # register_autograd
        self.setup_context = None
        self.vmap = None           # register_vmap
        self.autocast = None       # register_autocast: (device type, dtype)
        self.custom_op = None      # the CustomOpDef, for ops made by custom_op
        self.define_site = None
        self.tags = ()
        self._function = None      # the autograd Function made for it (rebuilt on change)
        self._fallback_warned = False

    @property
    def full_name(self):
        return f"{self.ns}.{self.name}.{self.overload or 'default'}"

    def has_autograd_function(self):
        """Whether calls go through the op's autograd Function: custom ops always (their
        backward raises until a formula is registered), defined ops once they have a
        formula, and, while a vmap runs, ops whose kernel is not a composite of ember ops
        (the Function's vmap rule is theirs, or a loop over samples)."""
        if self.custom_op is not None or self.backward is not None:
            return True
        return _batching[0] is not None and "CompositeImplicitAutograd" not in self.kernels

    def fake_impl(self):
        """The fake implementation: register_fake's, else a kernel at the Meta key."""
        return self.fake if self.fake is not None else self.kernels.get("Meta")

    def differentiable_schema(self):
        """Whether autograd can see the op: it mutates nothing and returns only Tensors."""
        schema = self.schema
        return not schema.is_mutable() and bool(schema.returns) and \
            all(r.type in ("Tensor", "Tensor[]") for r in schema.returns) and \
            not (len(schema.returns) > 1 and any(r.type == "Tensor[]" for r in schema.returns))

    def backend_kernel(self):
        for key in BACKEND_KEYS:
            kernel = self.kernels.get(key)
            if kernel is not None:
                return kernel
        return None

    def not_implemented(self):
        registered = sorted(self.kernels) + (["Meta"] if self.fake is not None else [])
        return NotImplementedError(
            f"Could not run '{self.qualname}' with arguments from the 'CPU' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build). "
            f"'{self.qualname}' is only available for these backends: [{', '.join(registered)}].")


def entry(qualname, overload="", create=False):
    """The entry of ``ns::name`` (overload ``""`` is the default one)."""
    with _lock:
        found = _entries.get(_key(qualname, overload))
        if found is None and create:
            found = _entries[_key(qualname, overload)] = OperatorEntry(qualname, overload)
        return found


def define(schema, site=None):
    """Record a parsed schema (``schema.name`` qualified); the duplicate error is PyTorch's."""
    with _lock:
        e = entry(schema.name, schema.overload_name, create=True)
        if e.schema is not None:
            raise RuntimeError(
                f"Tried to register an operator ({schema}) with the same name and overload name "
                "multiple times. Each overload's schema should only be registered with a single "
                "call to def(). Duplicate registration: registered at "
                f"{site}. Original registration: registered at {e.define_site}")
        e.schema, e.define_site = schema, site
        e._function = None
        ns, name = schema.name.split("::", 1)
        packets = _namespaces.setdefault(ns, {})
        packet = packets.get(name)
        if packet is None:
            packet = packets[name] = OpOverloadPacket(ns, name)
        packet._add(e)
        return e


def undefine(e):
    """Remove a definition (Library._destroy)."""
    with _lock:
        e.schema = None
        _entries.pop(_key(e.qualname, e.overload), None)
        packets = _namespaces.get(e.ns, {})
        packet = packets.get(e.name)
        if packet is not None:
            packet._remove(e)
            if not packet._overloads:
                del packets[e.name]


def lookup_packet(ns, name):
    with _lock:
        return _namespaces.get(ns, {}).get(name)


def namespace_names(ns):
    with _lock:
        return sorted(_namespaces.get(ns, {}))


def has_namespace(ns):
    with _lock:
        return bool(_namespaces.get(ns))


def find_entry(op):
    """The entry of ``op``: "ns::name[.overload]", an OpOverload, a packet (its default
    overload) or a CustomOpDef. Raises as PyTorch does for an unknown name."""
    if isinstance(op, OpOverload):
        return op._entry
    if isinstance(op, OpOverloadPacket):
        return op.default._entry
    inner = getattr(op, "_opoverload", None)
    if isinstance(inner, OpOverload):
        return inner._entry
    if not isinstance(op, str):
        raise ValueError(f"Expected op to be a string, OpOverload or CustomOpDef, got {op!r}")
    if "::" not in op:
        raise ValueError(f"Expected there to be a namespace in {op}, i.e. The "
                         "operator name should look something like ns::foo")
    qualname, _, overload = op.partition(".")
    found = entry(qualname, overload)
    if found is None or found.schema is None:
        ns, name = qualname.split("::", 1)
        raise AttributeError(f"'_OpNamespace' '{ns}' object has no attribute '{name}'")
    return found


# ---- calling ------------------------------------------------------------------------------
def _tensor_args(values):
    for v in values:
        if isinstance(v, Tensor):
            yield v
        elif isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, Tensor):
                    yield item


def run_backend(e, values):
    """The backend kernel of ``e`` on bound values (what runs below autograd)."""
    kernel = e.backend_kernel()
    if kernel is None:
        raise e.not_implemented()
    args, kwargs = _schema.kernel_arguments(e.schema, values)
    if kernel is fallthrough_kernel:
        raise e.not_implemented()
    result = kernel(*args, **kwargs)
    _bump_mutated(e, values)
    return result


def _bump_mutated(e, values):
    """Inputs the schema marks as written get a new version, as an in-place op gives them
    (a NumPy kernel writing through ``.numpy()`` cannot bump it itself)."""
    for arg, value in zip(e.schema.arguments, values):
        if arg.is_write:
            for t in ([value] if isinstance(value, Tensor) else value or ()):
                if isinstance(t, Tensor):
                    t._vc[0] += 1


def call(e, args, kwargs):
    rule = e.autocast  # register_autocast: inputs cast, the op run with autocast off
    if rule is not None and _autocast.is_enabled(rule[0]) and not _autocast.is_suspended():
        device_type, dtype = rule
        args, kwargs = _autocast.cast_floating((args, kwargs), device_type, dtype)
        _autocast.set_enabled(device_type, False)
        try:
            return _call(e, args, kwargs)
        finally:
            _autocast.set_enabled(device_type, True)
    return _call(e, args, kwargs)


def _call(e, args, kwargs):
    values = _schema.bind(e.schema, args, kwargs)
    if e.has_autograd_function() and e.differentiable_schema():
        return _apply_function(e, values)
    autograd_kernel = e.kernels.get("AutogradCPU") or e.kernels.get("Autograd")
    if autograd_kernel is fallthrough_kernel:  # declared not differentiable
        with grad_mode.no_grad():
            return run_backend(e, values)
    if autograd_kernel is not None:
        running = getattr(_below_autograd, "entries", None)
        if running is None:
            running = _below_autograd.entries = set()
        if e not in running:
            running.add(e)
            try:
                a, kw = _schema.kernel_arguments(e.schema, values)
                return autograd_kernel(*a, **kw)
            finally:
                running.discard(e)
    if _batching[0] is not None and "CompositeImplicitAutograd" not in e.kernels and \
            any(isinstance(t, BatchedTensor) for t in _tensor_args(values)):
        # a kernel would see one sample's array; the per-sample loop can't write inputs back
        raise RuntimeError(f"Batching rule not implemented for {e.qualname}; the fallback path "
                           "doesn't work on out= or view ops.")
    if e.custom_op is not None:  # mutating or non-Tensor results: no autograd, as PyTorch
        with grad_mode.no_grad():
            return run_backend(e, values)
    out = run_backend(e, values)
    if autograd_fallback_mode[0] == "warn" and grad_mode.is_grad_enabled() and \
            "CompositeImplicitAutograd" not in e.kernels and \
            any(t.requires_grad for t in _tensor_args(values)):
        out = _warn_in_backward(e, values, out)
    return out


class _AutogradNotImplemented(Function):
    """The node PyTorch's autograd fallback gives the outputs of an operator with no
    autograd kernel: backward warns and passes no gradient on."""

    @staticmethod
    def forward(ctx, e, outputs, *inputs):
        ctx.entry = e
        return tuple(o.detach() for o in outputs)

    @staticmethod
    def backward(ctx, *grads):
        warnings.warn(
            f"{ctx.entry.qualname}: an autograd kernel was not registered to the Autograd "
            "key(s) but we are trying to backprop through it. This may lead to silently "
            "incorrect behavior. This behavior is deprecated and will be removed in a future "
            "version of PyTorch. If your operator is differentiable, please ensure you have "
            "registered an autograd kernel to the correct Autograd key (e.g. "
            "DispatchKey::Autograd, DispatchKey::CompositeImplicitAutograd). If your operator "
            "is not differentiable, or to squash this warning and use the previous behavior, "
            "please register torch::CppFunction::makeFallthrough() to DispatchKey::Autograd.",
            UserWarning, stacklevel=2)
        return (None, None) + (None,) * len(ctx.needs_input_grad[2:])


def _warn_in_backward(e, values, out):
    """Outputs a kernel made without recording a graph get the warning node."""
    outs = out if isinstance(out, tuple) else (out,)
    if not all(isinstance(o, Tensor) for o in outs) or \
            any(o.requires_grad or not o.is_floating_point() for o in outs):
        return out
    inputs = [t for t in _tensor_args(values) if t.requires_grad]
    wrapped = _AutogradNotImplemented.apply(e, outs, *inputs)
    if not isinstance(wrapped, tuple):
        wrapped = (wrapped,)
    return wrapped if isinstance(out, tuple) else wrapped[0]


def _returns_list(e):
    return len(e.schema.returns) == 1 and e.schema.returns[0].type.startswith("Tensor[")


def _check_no_alias(e, values, out):
    outs = out if isinstance(out, (tuple, list)) else (out,)
    inputs = list(_tensor_args(values))
    seen = []
    for o in outs:
        if not isinstance(o, Tensor):
            continue
        if any(o is t or _shares_memory(o, t) for t in inputs + seen):
            fn = e.custom_op._init_fn if e.custom_op is not None else None
            module = getattr(fn, "__module__", "?")
            raise RuntimeError(
                f"{e.name} (with implementation in <module '{module}'>): The output of this "
                "custom operator (1) must not also be an input to this custom operator and "
                "(2) may not alias any inputs to this custom operator or other returns. The "
                "most common way to trigger this error is if we have y = custom_op(x) and y "
                "and x are the same Tensor. Please instead return a clone of the offending "
                "output tensor(s) (e.g. return x.clone()) or refactor the custom operator to "
                "not return y.")
        seen.append(o)


def _shares_memory(a, b):
    da, db = a._data, b._data
    base_a = da if getattr(da, "base", None) is None else da.base
    base_b = db if getattr(db, "base", None) is None else db.base
    if base_a is not base_b:
        return False
    return da.size > 0 and db.size > 0


class _NoAutogradFormula(Function):
    """Base of the Functions made per operator (their names are PyTorch's node names)."""


class _Packed:
    """What the per-operator Function gets after the flat tensors: how to rebuild the
    positional arguments (Tensor lists are passed element by element, so each element
    gets its gradient) and the keyword-only arguments."""

    def __init__(self, layout, keyword_only):
        self.layout, self.keyword_only = layout, keyword_only

    def rebuild(self, flat):
        args, i = [], 0
        for count in self.layout:
            if count is None:
                args.append(flat[i])
                i += 1
            else:
                args.append(list(flat[i:i + count]))
                i += count
        return args

    def flatten(self, per_argument, fill=None):
        """Per-argument values (a list for a Tensor list) back to one per flat slot."""
        flat = []
        for count, value in zip(self.layout, per_argument):
            if count is None:
                flat.append(value)
            elif value is None:
                flat.extend([fill] * count)
            else:
                flat.extend(value)
        return flat


def _pack(e, values):
    """(flat positional values, _Packed) for the Function of ``e``."""
    layout, flat, keyword_only = [], [], {}
    for arg, value in zip(e.schema.arguments, values):
        if arg.kwarg_only:
            keyword_only[arg.name] = value
        elif arg.is_tensor_list and isinstance(value, (list, tuple)):
            layout.append(len(value))
            flat.extend(value)
        else:
            layout.append(None)
            flat.append(value)
    return flat, _Packed(layout, keyword_only)


def _apply_function(e, values):
    function = e._function or _make_function(e)
    flat, packed = _pack(e, values)
    out = function.apply(*flat, packed)
    return list(out) if _returns_list(e) and isinstance(out, tuple) else out


def _make_function(e):
    """The autograd Function an operator runs through (as PyTorch generates one per
    custom op): forward calls the backend kernel, setup_context and backward are the
    registered ones (backward gives one gradient per positional input; keyword-only
    inputs get none), vmap is the registered rule or a loop over samples."""
    schema = e.schema
    has_keyword_only = any(a.kwarg_only for a in schema.arguments)

    def forward(*flat):
        packed = flat[-1]
        args = packed.rebuild(flat[:-1])
        out = run_backend(e, _unpack_values(e, args, packed.keyword_only))
        if e.custom_op is not None:
            _check_no_alias(e, flat[:-1], out)
        return tuple(out) if isinstance(out, list) else out

    def setup_context(ctx, inputs, output):
        ctx._op_packed = packed = inputs[-1]
        if e.setup_context is None:
            return
        args = tuple(packed.rebuild(inputs[:-1]))
        output = list(output) if _returns_list(e) else output
        if has_keyword_only:
            e.setup_context(ctx=ctx, inputs=args, keyword_only_inputs=dict(packed.keyword_only),
                            output=output)
        else:
            e.setup_context(ctx=ctx, inputs=args, output=output)

    def backward(ctx, *grads):
        if e.backward is None:
            raise RuntimeError(f"Trying to backward through {e.full_name} but no autograd "
                               "formula was registered. Please use register_autograd to add one.")
        packed = ctx._op_packed
        needs = ctx.needs_input_grad
        ctx.needs_input_grad = tuple(packed.rebuild(list(needs[:-1])))
        try:
            if _returns_list(e):
                grads = (list(grads),)
            result = e.backward(ctx, *grads)
        finally:
            ctx.needs_input_grad = needs
        if not isinstance(result, tuple):
            result = (result,)
        if len(result) != len(packed.layout):  # counted as the node counts its inputs
            raise RuntimeError(
                f"function {type(ctx).__name__} returned an incorrect number of gradients "
                f"(expected {len(packed.layout) + 1}, got {len(result) + 1})")
        return tuple(packed.flatten(result)) + (None,)

    def vmap(info, in_dims, *flat):
        packed = flat[-1]
        if e.vmap is None:
            args = packed.rebuild(flat[:-1])
            dims = packed.rebuild(list(in_dims[:-1]))
            return _loop_over_samples(e, info, args, dims, packed.keyword_only)
        args = packed.rebuild(flat[:-1])
        dims = tuple(_list_dims(d) for d in packed.rebuild(list(in_dims[:-1])))
        out, out_dims = e.vmap(info, dims, *args, **packed.keyword_only)
        if isinstance(out, list):
            out = tuple(out)
            if isinstance(out_dims, list):
                out_dims = tuple(out_dims)
        return out, out_dims

    def jvp(ctx, *tangents):
        raise NotImplementedError(
            f"{e.qualname}: custom operators have no forward-mode AD formula in ember "
            "(register_autograd gives reverse mode only)")

    name = f"GeneratedBackwardFor_{e.ns}_{e.name}_{e.overload or 'default'}"
    cls = type(name, (_NoAutogradFormula,), {
        "forward": staticmethod(forward), "setup_context": staticmethod(setup_context),
        "backward": staticmethod(backward), "vmap": staticmethod(vmap),
        "jvp": staticmethod(jvp), "__module__": __name__})
    e._function = cls
    return cls


def _list_dims(dims):
    """A Tensor list's in_dims: one dim for the list when all elements agree."""
    if isinstance(dims, list):
        return dims[0] if dims and all(d == dims[0] for d in dims) else dims
    return dims


def _unpack_values(e, args, keyword_only):
    values, i = [], 0
    for arg in e.schema.arguments:
        if arg.kwarg_only:
            values.append(keyword_only[arg.name])
        else:
            values.append(args[i])
            i += 1
    return values


def _loop_over_samples(e, info, args, in_dims, keyword_only):
    """No vmap rule: run the operator sample by sample and stack (PyTorch's fallback)."""
    if not e._fallback_warned:
        e._fallback_warned = True
        warnings.warn(
            "There is a performance drop because we have not yet implemented the batching "
            f"rule for {e.qualname}. Please file us an issue on GitHub so that we can "
            "prioritize its implementation.", UserWarning, stacklevel=4)
    overload = OpOverload(e)

    def sample(value, dim, i):
        if isinstance(value, list):
            return [sample(v, d, i) for v, d in zip(value, dim)]
        return value if dim is None else value.select(dim, i)
    results = [overload(*[sample(a, d, i) for a, d in zip(args, in_dims)], **keyword_only)
               for i in range(info.batch_size)]
    if isinstance(results[0], (tuple, list)):
        out = tuple(stack([r[k] for r in results]) for k in range(len(results[0])))
        return out, (0,) * len(out)
    return stack(results), 0


class _FallthroughKernel:
    """``ember.library.fallthrough_kernel``: registered for a key, the key is skipped."""

    def __repr__(self):
        return "fallthrough_kernel"

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("fallthrough_kernel is a marker, not a kernel")


fallthrough_kernel = _FallthroughKernel()


# ---- the objects ember.ops hands out -------------------------------------------------------
class OpOverload:
    """One overload of an operator (``ember.ops.ns.name.default``): call it like a
    function; ``_schema`` is its parsed schema."""

    def __init__(self, e):
        self._entry = e

    @property
    def _schema(self):
        return self._entry.schema

    @property
    def _overloadname(self):
        return self._entry.overload or "default"

    @property
    def __name__(self):
        return f"{self._entry.name}.{self._overloadname}"

    @property
    def overloadpacket(self):
        return lookup_packet(self._entry.ns, self._entry.name)

    @property
    def namespace(self):
        return self._entry.ns

    @property
    def tags(self):
        return list(self._entry.tags)

    def name(self):
        e = self._entry
        return e.qualname + (f".{e.overload}" if e.overload else "")

    def __call__(self, *args, **kwargs):
        return call(self._entry, args, kwargs)

    def __repr__(self):
        return f"<OpOverload(op='{self._entry.ns}.{self._entry.name}', " \
               f"overload='{self._overloadname}')>"

    def __str__(self):
        return self._entry.full_name

    def __eq__(self, other):
        return isinstance(other, OpOverload) and other._entry is self._entry

    def __hash__(self):
        return hash(id(self._entry))


class OpOverloadPacket:
    """All overloads of ``ns::name`` (``ember.ops.ns.name``): calling it calls the
    overload whose schema takes the arguments; ``.default``, ``.<overload>`` name one."""

    def __init__(self, ns, name):
        self._ns, self._name = ns, name
        self._qualified_op_name = f"{ns}::{name}"
        self._overloads = {}

    def _add(self, e):
        self._overloads[e.overload or "default"] = OpOverload(e)

    def _remove(self, e):
        self._overloads.pop(e.overload or "default", None)

    @property
    def __name__(self):
        return self._name

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.__dict__["_overloads"][name]
        except KeyError:
            raise AttributeError(
                f"The underlying op of '{self._ns}.{self._name}' has no overload name "
                f"'{name}'") from None

    def __call__(self, *args, **kwargs):
        overloads = list(self._overloads.values())
        if len(overloads) == 1:
            return overloads[0](*args, **kwargs)
        errors = []
        for overload in overloads:
            try:
                _schema.bind(overload._schema, args, kwargs)
            except RuntimeError as err:
                errors.append(str(err))
                continue
            return overload(*args, **kwargs)
        raise RuntimeError("Overloaded torch operator invoked from Python failed to match "
                           "any schema:\n" + "\n\n".join(errors))

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self._ns}.{self._name}')>"

    def __str__(self):
        return f"{self._ns}.{self._name}"


class OpNamespace:
    """``ember.ops.<ns>``: the operators defined in namespace ``ns``."""

    def __init__(self, ns):
        self.name = ns

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        packet = lookup_packet(self.name, op_name)
        if packet is None:
            raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute "
                                 f"'{op_name}'")
        return packet

    def __dir__(self):
        return namespace_names(self.name)

    def __iter__(self):
        return iter(namespace_names(self.name))

    def __repr__(self):
        return f"<module 'ember.ops.{self.name}' from 'ember.ops'>"
