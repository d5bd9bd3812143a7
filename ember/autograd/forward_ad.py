"""Forward-mode automatic differentiation (dual tensors), as ``torch.autograd.forward_ad``.

Inside a ``dual_level``, ``make_dual(primal, tangent)`` makes a tensor that carries a
tangent; every op applied to it computes the tangent of its result too (a
Jacobian-vector product), and ``unpack_dual`` reads it back.

>>> import ember
>>> import ember.autograd.forward_ad as fwAD
>>> x = ember.tensor([1.0, 2.0])
>>> with fwAD.dual_level():
...     y = fwAD.make_dual(x, ember.tensor([1.0, 0.0])) ** 2
...     fwAD.unpack_dual(y).tangent
tensor([2., 0.])

How ops get their tangents: a built-in op (``ember._ops.Primitive``) runs its ``jvp``
rule when one is written (``ember/_ops/jvp_rules.py``), otherwise a generic rule that
obtains the JVP from the op's backward formula (see ``_jvp_from_backward``). A user
``Function`` runs its ``jvp`` staticmethod. A tangent is stored in the tensor's
instance dict (``Tensor._fw_grad``: level token and tangent), so a tensor outside
forward AD pays nothing, and an op checks one list (``active``) to know whether a
level is open at all. Under vmap, a BatchedTensor keeps its tangent on its physical
tensor (``_functorch/batched.py``), where the batching rules run the ops; a tangent may
itself be batched (jacfwd's columns), its formulas then running under vmap.
"""
import weakref
from collections import namedtuple

from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.dtypes import is_float_np
from . import grad_mode
from .backprop import grad as autograd_grad

#: The open level's token while one is open, else empty. Ops test ``if active:`` (one
#: check); the list is emptied while a tangent is being computed, so the arithmetic of
#: a JVP rule does not itself compute tangents.
active = []
_open = []       # the open level's token, even while ``active`` is suspended
_holders = []    # weak references to the tensors given a tangent at the open level
_prune_at = [1024]

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = """``unpack_dual``'s result: the primal and its tangent (None if
it has none).

>>> import ember, ember.autograd.forward_ad as fwAD
>>> fwAD.unpack_dual(ember.ones(1))
UnpackedDualTensor(primal=tensor([1.]), tangent=None)
"""


class _Level:
    """The token of one level: tangents recorded under a closed level's token are stale
    (a copy of a dual tensor may outlive its level)."""
    __slots__ = ("open",)

    def __init__(self):
        self.open = True


def enter_dual_level():
    """Open a forward AD level and return its index (always 0: levels do not nest).

    >>> import ember.autograd.forward_ad as fwAD
    >>> level = fwAD.enter_dual_level(); fwAD.exit_dual_level(level=level); level
    0
    """
    if _open:
        raise RuntimeError("Nested forward mode AD is not supported at the moment")
    token = _Level()
    _open.append(token)
    active.append(token)
    return 0


def exit_dual_level(*, level=None):
    """Close the open level; every tangent made in it is dropped.

    >>> import ember.autograd.forward_ad as fwAD
    >>> fwAD.exit_dual_level(level=fwAD.enter_dual_level())
    """
    if level is None:
        if not _open:
            raise RuntimeError("Dual level must be a positive number.")
        level = 0
    if level != 0 or not _open:
        raise RuntimeError("Trying to exit a forward AD level that was not the last one that "
                           "was created. This is not supported.")
    token = _open.pop()
    token.open = False
    active.clear()
    for ref in _holders:
        t = ref()
        if t is not None and t.__dict__.get("_fw_grad", (None,))[0] is token:
            del t.__dict__["_fw_grad"]
    _holders.clear()


class dual_level:
    """Context manager of one forward AD level: ``with dual_level(): ...``.

    >>> import ember, ember.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(ember.tensor([3.0]), ember.tensor([1.0]))
    ...     fwAD.unpack_dual(x.exp()).tangent.allclose(ember.tensor([3.0]).exp())
    True
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, *exc):
        exit_dual_level()


def _check_level(level, what):
    if not _open:
        raise RuntimeError(f"Trying to {what} for forward AD but no level exists, make sure "
                           "to enter_dual_level() first.")
    if level is not None and level != 0:
        raise RuntimeError("Invalid level given to _make_dual" if what.startswith("create")
                           else "Invalid level given to _unpack_dual")


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` that carries ``tangent`` as its forward gradient.

    The tangent must have the primal's size; ``tensor`` itself is left without one.

    >>> import ember, ember.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([0.5, 0.5]))
    ...     fwAD.unpack_dual(x * 3).tangent
    tensor([1.5000, 1.5000])
    """
    _check_level(level, "create a dual Tensor")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tangent.is_complex() and not tensor.is_complex():
        raise NotImplementedError("ember does not support a complex tangent of a real tensor "
                                  "in forward-mode AD")
    if tangent._data.shape != tensor._data.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor._data.shape)} while the given forward gradient is of size "
            f"{list(tangent._data.shape)}.")
    with suspended():
        dual = tensor.view_as(tensor)  # a view, so backward through it reaches tensor
    set_tangent(dual, tangent)
    return dual


def unpack_dual(tensor, *, level=None):
    """``(primal, tangent)`` of ``tensor``: a view of it without tangent, and its tangent.

    >>> import ember, ember.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(ember.tensor([2.0]), ember.tensor([1.0]))
    ...     primal, tangent = fwAD.unpack_dual(x.sin())
    ...     tangent.allclose(ember.tensor([2.0]).cos())
    True
    """
    if not isinstance(tensor, Tensor):
        return UnpackedDualTensor(tensor, None)
    tangent = tangent_of(tensor) if _open and level in (None, 0) else None
    if tangent is None:
        return UnpackedDualTensor(tensor, None)
    with suspended():
        primal = tensor.view_as(tensor)
    return UnpackedDualTensor(primal, tangent)


# ---- storage ------------------------------------------------------------------------------
def tangent_of(t):
    """The tangent ``t`` carries at the open level, or None.

    A view whose base got a tangent after the view was made reads it through the base
    (its view ops replayed on the base's tangent), as PyTorch does.
    """
    fw = t._fw_grad
    token = _open[0] if _open else None
    if fw is not None:
        return fw[1] if fw[0] is token else None
    base = t._base
    if base is None or t._view_fn is None or token is None:
        return None
    fw = base._fw_grad
    if fw is None or fw[0] is not token:
        return None
    with suspended():
        tangent = t._view_fn(fw[1])
    set_tangent(t, tangent)
    return tangent


def set_tangent(t, tangent):
    """Give ``t`` a tangent at the open level (None removes it)."""
    if t._vmap_level is not None:  # a BatchedTensor: on its physical tensor
        t._set_tangent(tangent)
        return
    if tangent is None:
        t.__dict__.pop("_fw_grad", None)
        return
    if tangent._data.dtype != t._data.dtype and is_float_np(t._data.dtype) and \
            not is_float_np(tangent._data.dtype):
        tangent = tangent.to(t.dtype)
    t.__dict__["_fw_grad"] = (_open[0], tangent)
    _holders.append(weakref.ref(t))
    if len(_holders) >= _prune_at[0]:  # a long level: forget the tensors already gone
        _holders[:] = [ref for ref in _holders if ref() is not None]
        _prune_at[0] = max(1024, 2 * len(_holders))


def has_tangent(args):
    """Whether any tensor among ``args`` carries a tangent (views through their base too)."""
    for a in args:
        if isinstance(a, Tensor) and (a._fw_grad is not None or a._base is not None):
            if tangent_of(a) is not None:
                return True
    return False


class suspended:
    """Within it, ops compute no tangents (the arithmetic of a JVP rule itself)."""
    __slots__ = ("_saved",)

    def __enter__(self):
        self._saved = active[:]
        active.clear()

    def __exit__(self, *exc):
        active[:] = self._saved


# ---- built-in ops --------------------------------------------------------------------------
def primitive_jvp(cls, ctx, args, outs):
    """Give the outputs of built-in op ``cls`` (already computed from ``args``) tangents.

    Called by ``Primitive.apply`` while a level is open; ``outs`` is a tuple.
    """
    if not cls.differentiable or not has_tangent(args):
        return
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    if not cls.is_view and _complex_unsupported(cls, args, tangents, outs):
        # the rules are written for real numbers: no silently wrong complex tangent
        raise NotImplementedError(f"ember does not support forward-mode AD for {cls.__name__} "
                                  f"on complex tensors yet")
    with suspended():
        result = NotImplemented
        if cls.jvp is not None:
            result = cls.jvp(ctx, args, tangents, outs[0] if len(outs) == 1 else outs)
        elif cls.is_view:  # a view of the tangent: in-place changes reach both ways
            result = cls.apply(tangents[0], *args[1:])
        if result is NotImplemented:
            result = _jvp_from_backward(cls, args, tangents, outs)
    if not isinstance(result, (tuple, list)):
        result = (result,)
    given = []
    for o, t in zip(outs, result):
        if t is not None and (is_float_np(o._data.dtype) or o._data.dtype.kind == "c"):
            if t._data.shape != o._data.shape:
                with suspended():
                    t = t.expand(o._data.shape).contiguous()
            elif not cls.is_view and _aliases(t, tangents):
                with suspended():
                    t = t.clone()  # a new tensor's tangent is its own, as in PyTorch
            if t._data.dtype != o._data.dtype:
                with suspended():
                    t = t.to(o.dtype)
            set_tangent(o, t)
        given.append(tangent_of(o))
    # Backward rebuilds saved outputs from their data: it reattaches these
    # (reattach_output_tangent), so forward-over-reverse sees them.
    ctx.__dict__["_fw_outputs"] = (_open[0], given)


def _complex_unsupported(cls, args, tangents, outs):
    """Complex numbers meet op ``cls``'s tangents (complex tangents, outputs, or complex
    inputs carrying one) and its rule is not known right for them: it must have a
    complex-aware backward (``complex_grad``) and derive its tangent from it, or a rule
    marked ``complex_ok`` (jvp_rules.py)."""
    if not (any(t is not None and t._data.dtype.kind == "c" for t in tangents)
            or any(o._data.dtype.kind == "c" for o in outs)
            or any(t is not None and a._data.dtype.kind == "c" for a, t in zip(args, tangents))):
        return False
    if not cls.complex_grad:
        return True
    return cls.jvp is not None and not getattr(cls.jvp, "complex_ok", False)


def _aliases(t, tangents):
    """Whether tangent ``t`` shares memory with one of the input tangents (a rule such as
    reshape's may return a view of one; an in-place op on the output would then write
    into the input's tangent)."""
    d = t._data
    if d.base is None:
        return any(t is u for u in tangents)
    xp = get_array_module(d)
    return any(isinstance(u, Tensor) and xp.may_share_memory(d, u._data) for u in tangents)


def reattach_output_tangent(node, t, nr):
    """Give ``t``, output ``nr`` of ``node`` rebuilt from saved data, its tangent again."""
    fw = node.__dict__.get("_fw_outputs")
    if fw is not None and _open and fw[0] is _open[0] and nr < len(fw[1]) and \
            fw[1][nr] is not None and t._fw_grad is None:
        set_tangent(t, fw[1][nr])
    return t


def _jvp_from_backward(cls, args, tangents, outs):
    """JVP of an op without a rule, from its backward (the double-backward trick).

    Backward computes ``vjp(v) = v^T J``, linear in ``v``; so ``<vjp(v), u>`` is a
    linear function of ``v`` whose gradient with respect to ``v`` is ``J u``. The op is
    run again (inputs that need no gradient detached, so the caller's graph only grows
    where it must), backward is recorded with ``create_graph`` from a symbolic ``v``, and
    one more backward gives ``J u``. When a gradient is wanted (grad mode on and a
    primal or tangent requiring grad), that last backward records a graph too, so the
    tangent can itself be differentiated.
    """
    keep_graph = grad_mode._state.enabled and any(
        isinstance(x, Tensor) and x._requires_grad for x in list(args) + list(tangents))
    leaves, wrt, us = [], [], []
    for a, u in zip(args, tangents):
        if not isinstance(a, Tensor):
            leaves.append(a)
            continue
        # an alias of its own per argument: arguments can depend on each other (maximum(x,
        # 0.3 * x)), and the gradient with respect to x itself would sum over both
        leaf = a.view_as(a) if keep_graph and a._requires_grad else a.detach()
        if u is not None and (is_float_np(a._data.dtype) or a._data.dtype.kind == "c"):
            if not leaf._requires_grad:
                leaf.requires_grad_(True)
            wrt.append(leaf)
            us.append(u)
        leaves.append(leaf)
    with grad_mode.enable_grad():
        run = getattr(cls, "jvp_rerun", None) or cls.apply
        result = run(*leaves)
        results = result if isinstance(result, tuple) else (result,)
        diff = [r for r in results if isinstance(r, Tensor) and r._requires_grad]
        if not diff:
            return tuple(None for _ in outs)
        vs = [r.new_zeros(r._data.shape).requires_grad_(True) for r in diff]
        grads = autograd_grad(diff, wrt, vs, create_graph=True, allow_unused=True)
        inner = None
        for g, u in zip(grads, us):
            if g is None:
                continue
            if not g._requires_grad:
                raise NotImplementedError(
                    f"{cls.__name__}: its backward is not differentiable, so ember cannot "
                    "derive a forward-mode rule from it; the op needs a jvp rule")
            if g._data.dtype.kind == "c" or u._data.dtype.kind == "c":
                # Re <vjp(v), u> = Re <v, J u>: its gradient in v is J u (conjugate
                # Wirtinger convention), so the pairing conjugates the gradient
                term = (g.conj() * u).real.sum()
            else:
                term = (g * u.to(g.dtype)).sum()
            inner = term if inner is None else inner + term
        if inner is None:
            jv = [None] * len(vs)
        else:
            jv = autograd_grad(inner, vs, retain_graph=True, create_graph=keep_graph,
                               allow_unused=True)
    tangent_by_id = {}
    for r, j in zip(diff, jv):
        if j is None:
            j = r.new_zeros(r._data.shape)
        tangent_by_id[id(r)] = j if keep_graph else j.detach()
    return tuple(tangent_by_id.get(id(r)) for r in results)


# ---- user Functions ------------------------------------------------------------------------
class _JvpCtx:
    """``ctx`` as ``Function.jvp`` sees it: ``saved_tensors`` are the tensors given to
    ``save_for_forward``; everything else is the forward's ctx."""
    __slots__ = ("_ctx",)

    def __init__(self, ctx):
        object.__setattr__(self, "_ctx", ctx)

    @property
    def saved_tensors(self):
        return tuple(getattr(self._ctx, "_saved_for_forward", ()))

    def __getattr__(self, name):
        return getattr(self._ctx, name)

    def __setattr__(self, name, value):
        setattr(self._ctx, name, value)


def function_jvp(cls, ctx, args, outputs, dirty=(), non_differentiable=()):
    """Run user Function ``cls``'s ``jvp`` and give its outputs their tangents; returns
    the outputs (an input returned as is replaced by an alias of it)."""
    tangents = [tangent_of(a) if isinstance(a, Tensor) else None for a in args]
    with suspended():  # jvp sees zeros for float inputs without a tangent, as in PyTorch
        tangents = [a.new_zeros(a._data.shape)
                    if t is None and isinstance(a, Tensor) and (
                        is_float_np(a._data.dtype) or a._data.dtype.kind == "c")
                    else t for a, t in zip(args, tangents)]
    dirty_ids = {id(t) for t in dirty}
    input_tangents = {id(a): t for a, t in zip(args, tangents) if isinstance(a, Tensor)}
    with suspended():
        result = cls.jvp(_JvpCtx(ctx), *tangents)
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    input_tensors = [a for a in args if isinstance(a, Tensor)]
    if any(o is a for o in outs for a in input_tensors if id(o) not in dirty_ids):
        # an input returned as is: the output is a new alias carrying its own tangent
        with suspended(), grad_mode.no_grad():
            outs = tuple(o.view_as(o) if isinstance(o, Tensor) and id(o) not in dirty_ids and
                         any(o is a for a in args) else o for o in outs)
        outputs = outs[0] if single else outs
    bases = {id(a._base if a._base is not None else a) for a in input_tensors}
    views = {id(o) for o in outs if isinstance(o, Tensor) and id(o) not in dirty_ids and
             o._base is not None and id(o._base) in bases}
    if not isinstance(result, tuple):
        result = (result,)
    if len(result) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(result)})")
    non_diff = {id(t) for t in non_differentiable}
    for o, t in zip(outs, result):
        if not isinstance(o, Tensor) or t is None or id(o) in non_diff:
            continue
        if not is_float_np(o._data.dtype) and o._data.dtype.kind != "c":
            continue
        if id(o) in views and t._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                               "as-is) but the jvp is not returning a view.")
        if t._data.shape != o._data.shape:
            raise RuntimeError(
                "Trying to set a forward gradient that has a different size than that of the "
                f"original Tensor, this is not supported. Tensor is of size "
                f"{list(o._data.shape)} while the given forward gradient is of size "
                f"{list(t._data.shape)}.")
        if id(o) in dirty_ids and tangent_of(o) is not None:
            if t is not input_tangents.get(id(o)):
                raise RuntimeError(
                    "An inplace custom Function is not modifying the forward mode gradients "
                    "inplace. If the forward is modifying an input inplace, then the jvp "
                    "function must modify the corresponding gradient inplace.")
            continue  # the tangent it already has, modified in place by jvp
        set_tangent(o, t)
    return outputs


# ---- in-place ops --------------------------------------------------------------------------
def inplace_result(self, out):
    """``self`` was overwritten in place by ``out``'s values: carry ``out``'s tangent over.

    The tangent is written into self's existing tangent (so views sharing it see the
    change); a view without one gets a slice of a (new, zero) tangent of its base.
    """
    new = tangent_of(out)
    if new is None:
        return
    old = tangent_of(self)
    with suspended():
        if old is None and self._base is not None and self._view_fn is not None:
            base = self._base
            base_tangent = tangent_of(base)
            if base_tangent is None:
                base_tangent = base.new_zeros(base._data.shape)
                set_tangent(base, base_tangent)
            old = self._view_fn(base_tangent)
            set_tangent(self, old)
        if old is None:
            set_tangent(self, new if new._data.dtype == self._data.dtype else new.to(self.dtype))
            return
        if old._vmap_level is not None or new._vmap_level is not None:
            # tangents batched by vmap (jacfwd's columns): their arrays hold one sample
            if (new._vmap_level or 0) > (old._vmap_level or 0):
                set_tangent(self, new.to(self.dtype))  # batched further: a new tangent
            else:
                old.copy_(new)  # written through vmap's in-place path
            return
        old._data[...] = new._data


__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]
