"""grad, vjp, jacrev, hessian, jvp and jacfwd of ``ember.func``.

``vjp`` runs the function once on inputs wrapped by a ``Level`` and returns a function
that backpropagates cotangents through that graph (kept, so it can run many times).
``jvp`` runs the function once inside a forward-mode AD level (``forward_ad``) on dual
inputs and reads the tangents of the outputs, as torch.func does; ``jacfwd`` vmaps one
such ``jvp`` over the identity's columns. ember's forward AD has a single level, so a
``jvp`` started while one is open (``jvp(jvp(f))``, ``jacfwd(jacfwd(f))``) computes its
product with the double-vjp identity instead: ``g(u) = J^T u`` is linear in ``u``, so the
gradient of ``<g(u), t>`` with respect to ``u`` is ``J t``, exactly. Its reverse passes
run with the outer level open, so the outer tangents flow through them.
"""
import functools

from .. import _functions as F
from .._creation import eye, ones_like, zeros, zeros_like
from .._tensor import Tensor
from ..autograd.backprop import grad as autograd_grad
from ..autograd import forward_ad
from ..autograd.grad_mode import enable_grad, is_grad_enabled
from .levels import Level, carries_tangents
from .pytree import tree_flatten, tree_unflatten, tree_map
from .vmap import vmap


# ---------------------------------------------------------------- argument checks

def _check_argnums(argnums, num_args):
    if isinstance(argnums, int):
        if not -num_args <= argnums < num_args:
            raise RuntimeError(f"Got argnum={argnums}, but only {num_args} positional inputs")
        return argnums % num_args
    if not isinstance(argnums, tuple) or not all(isinstance(a, int) for a in argnums):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    if not argnums:
        raise RuntimeError("argnums must be non-empty")
    if len(set(argnums)) != len(argnums):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(_check_argnums(a, num_args) for a in argnums)


def _selected(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[a] for a in argnums)


def _replaced(args, argnums, values):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = values
    else:
        for a, v in zip(argnums, values):
            args[a] = v
    return tuple(args)


def _check_tensor_leaves(tree):
    for leaf in tree_flatten(tree)[0]:
        if not isinstance(leaf, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")


def _split_aux(output, has_aux, api):
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) "
                           "if has_aux is True")
    return output


def _check_output_leaves(leaves, api, what):
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: expected {what} to return only tensors, got unsupported "
                               f"type {type(leaf)}")


# ---------------------------------------------------------------- vjp

class _VjpGraph:
    """A function's recorded graph: its flat outputs and the inputs it was wrapped at."""

    def __init__(self, level, inputs, outputs, spec, outer_grad):
        self.level, self.inputs, self.outputs, self.spec = level, inputs, outputs, spec
        self.outer_grad = outer_grad
        self.outputs_reach_outside = outer_grad and level.reaches_outside(outputs)
        # an enclosing forward-mode level's tangents flow through recorded passes only
        self.tangents = carries_tangents(list(inputs) + list(outputs))

    def backward(self, cotangents):
        """Flat gradients (one per input, zeros where unused) of ``<outputs, cotangents>``."""
        for i, (out, cot) in enumerate(zip(self.outputs, cotangents)):
            if cot.shape != out.shape:
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{cot.shape} and output[{i}] has a shape of {out.shape}.")
        pairs = [(o, c) for o, c in zip(self.outputs, cotangents) if o.requires_grad]
        if not pairs:
            return [zeros_like(t) for t in self.inputs]
        with self.level, enable_grad():
            keep = self.tangents or carries_tangents([c for _, c in pairs]) or (
                self.outer_grad and (self.outputs_reach_outside or
                                     self.level.reaches_outside([c for _, c in pairs])))
            grads = autograd_grad([o for o, _ in pairs], self.inputs, [c for _, c in pairs],
                                  retain_graph=True, create_graph=keep, allow_unused=True)
        grads = [zeros_like(t) if g is None else g for t, g in zip(self.inputs, grads)]
        if keep:
            grads = [self.level.release(g) for g in grads]
        return grads


def _check_aux(aux):
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def _record(func, args, diff_args, argnums, api, has_aux, what="f(*primals)",
            check_output=None):
    """Run ``func`` with ``diff_args`` (a pytree) wrapped; the recorded graph, the function's
    output as returned to the caller and its aux."""
    outer_grad = is_grad_enabled()
    level = Level()
    with level, enable_grad():
        flat_in, in_spec = tree_flatten(diff_args)
        wrapped = [level.wrap(t) for t in flat_in]
        call_args = _replaced(args, argnums, tree_unflatten(wrapped, in_spec))
        output, aux = _split_aux(func(*call_args), has_aux, api)
    if check_output is not None:
        check_output(output)
    if has_aux:
        _check_aux(aux)
    flat_out, out_spec = tree_flatten(output)
    _check_output_leaves(flat_out, api, what)
    graph = _VjpGraph(level, wrapped, flat_out, out_spec, outer_grad)
    with enable_grad() if outer_grad else _noop():
        released = tree_unflatten([level.release(o) for o in flat_out], out_spec)
        if aux is not None:
            aux = tree_map(level.release, aux)
    return graph, in_spec, released, aux


class _noop:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (and aux): ``vjp_fn(cotangents)`` gives the
    vector-Jacobian products, one per primal.

    >>> import ember
    >>> x = ember.tensor([1., 2.])
    >>> out, vjp_fn = ember.func.vjp(lambda x: x ** 2, x)
    >>> vjp_fn(ember.ones(2))
    (tensor([2., 4.]),)
    """
    api = "vjp(f, *primals)"
    _check_tensor_leaves(primals)
    argnums = tuple(range(len(primals)))
    graph, in_spec, output, aux = _record(func, primals, primals, argnums, api, has_aux)

    def vjp_fn(cotangents):
        flat, spec = tree_flatten(cotangents)
        if spec != graph.spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree "
                               "structure of outputs to the function. cotangents: "
                               f"{spec.pprint()}, primal output: {graph.spec.pprint()}")
        return tree_unflatten(graph.backward(flat), in_spec)

    return (output, vjp_fn, aux) if has_aux else (output, vjp_fn)


# ---------------------------------------------------------------- grad

def _check_scalar(api, out):
    if not isinstance(out, Tensor):
        raise RuntimeError(f"{api}: Expected f(*args) to return a Tensor, got {type(out)}")
    if out.dim() != 0:
        raise RuntimeError(f"{api}: Expected f(*args) to return a scalar Tensor, got tensor "
                           f"with {out.dim()} dims. Maybe you wanted to use the vjp or "
                           "jacrev APIs instead?")


def grad_and_value(func, argnums=0, has_aux=False):
    """The transform returning ``(gradient, value)`` (``(gradient, (value, aux))`` with
    ``has_aux``) of a function with a scalar output.

    >>> import ember
    >>> g, v = ember.func.grad_and_value(lambda x: (x ** 3).sum())(ember.tensor([1., 2.]))
    >>> g, v
    (tensor([ 3., 12.]), tensor(9.))
    """
    api = "grad_and_value(f)(*args)"

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        diff_args = _selected(args, nums)
        _check_tensor_leaves(diff_args)
        graph, in_spec, value, aux = _record(lambda *a: func(*a, **kwargs), args, diff_args,
                                             nums, api, has_aux,
                                             check_output=functools.partial(_check_scalar, api))
        out = graph.outputs[0]
        grads = tree_unflatten(graph.backward([ones_like(out)]), in_spec)
        return (grads, (value, aux)) if has_aux else (grads, value)

    return wrapper


def grad(func, argnums=0, has_aux=False):
    """The transform computing the gradient of a function with a scalar output with respect
    to the inputs ``argnums`` names; composable (``grad(grad(f))``).

    >>> import ember
    >>> ember.func.grad(ember.sin)(ember.tensor(0.))
    tensor(1.)
    >>> ember.func.grad(ember.func.grad(ember.sin))(ember.tensor(0.))
    tensor(-0.)
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = inner(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


# ---------------------------------------------------------------- jacobians

def _check_chunk_size(chunk_size, api):
    if chunk_size is not None and chunk_size <= 0:
        raise ValueError(f"{api}: `chunk_size` should be greater than 0.")


def _assemble(blocks, out_leaves, in_leaves, out_spec, in_spec):
    """``blocks[i][j]``: the Jacobian of output leaf i for input leaf j, as the output tree
    of input trees."""
    per_output = [tree_unflatten(row, in_spec) for row in blocks]
    return tree_unflatten(per_output, out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The transform computing the Jacobian with reverse mode: the vjps of all the rows of
    the identity run as one vmapped vjp (``chunk_size`` rows at a time; ``chunk_size=1``
    loops, free of vmap's limits). Each Jacobian has the shape ``output.shape + input.shape``.

    >>> import ember
    >>> ember.func.jacrev(lambda x: x ** 2)(ember.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    _check_chunk_size(chunk_size, "jacrev")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        diff_args = _selected(args, nums)
        _check_tensor_leaves(diff_args)
        _require_real(tree_flatten(diff_args)[0], "inputs", "jacrev")
        graph, in_spec, output, aux = _record(lambda *a: func(*a, **kwargs), args, diff_args,
                                              nums, "vjp(f, *primals)", has_aux)
        _require_real(graph.outputs, "outputs", "jacrev")
        per_input = _stacked_vjps(graph, chunk_size, _preallocate_and_copy)
        jac = _split_by_output(per_input, graph, in_spec)
        return (jac, aux) if has_aux else jac

    return wrapper


def _require_real(tensors, what, name):
    """PyTorch's refusal of complex inputs and outputs in jacrev/jacfwd (the Jacobian of a
    complex function is not the matrix these transforms build)."""
    for i, t in enumerate(tensors):
        if t.is_complex():
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def _basis_chunk(outputs, numels, lo, n):
    """Rows ``lo:lo+n`` of the identity of size ``sum(numels)``, cut into one block per
    output (``n x numel``, the output's dtype)."""
    blocks, start = [], 0
    for out, numel in zip(outputs, numels):
        block = zeros((n, numel), dtype=out.dtype)
        if n and numel:
            block.diagonal(lo - start).fill_(1)
        blocks.append(block)
        start += numel
    return blocks


def _vjps_of_chunk(graph, chunk, n):
    """Per input, the vjps of the ``n`` basis rows in ``chunk``, stacked on dim 0."""
    cotangents = [row.reshape((n,) + tuple(out.shape)) for row, out in zip(chunk, graph.outputs)]
    if n == 1:  # a plain loop step: vmap's limits do not apply
        return [g.unsqueeze(0) for g in graph.backward([c[0] for c in cotangents])]
    return list(vmap(lambda *cots: tuple(graph.backward(list(cots))))(*cotangents))


def _stacked_vjps(graph, chunk_size, preallocate):
    """Per input, the Jacobian of all the outputs flattened: ``(total, *input.shape)``."""
    outs, ins = graph.outputs, graph.inputs
    numels = [o.numel() for o in outs]
    total = sum(numels)
    if not total:
        return [zeros((0,) + tuple(t.shape), dtype=t.dtype) for t in ins]
    step = total if chunk_size is None or chunk_size >= total else chunk_size
    if step == total:
        return _vjps_of_chunk(graph, _basis_chunk(outs, numels, 0, total), total)
    results = ([zeros((total,) + tuple(t.shape), dtype=t.dtype) for t in ins]
               if preallocate else [[] for _ in ins])
    for lo in range(0, total, step):
        n = min(step, total - lo)
        for r, part in zip(results, _vjps_of_chunk(graph, _basis_chunk(outs, numels, lo, n),
                                                   n)):
            if preallocate:
                r[lo:lo + n].copy_(part)
            else:
                r.append(part)
    return results if preallocate else [F.cat(r) for r in results]


def _split_by_output(per_input, graph, in_spec):
    """The output tree of input trees of Jacobian blocks ``output.shape + input.shape``."""
    outs, ins = graph.outputs, graph.inputs
    numels = [o.numel() for o in outs]
    rows = [[] for _ in outs]
    for full, t in zip(per_input, ins):
        start = 0
        for row, out, numel in zip(rows, outs, numels):
            row.append(full[start:start + numel].reshape(tuple(out.shape) + tuple(t.shape)))
            start += numel
    return tree_unflatten([tree_unflatten(row, in_spec) for row in rows], graph.spec)


def hessian(func, argnums=0):
    """The Hessian of a scalar function: the Jacobian of its gradient, forward over reverse
    (``jacfwd(jacrev(func))``).

    >>> import ember
    >>> ember.func.hessian(lambda x: (x ** 3).sum())(ember.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)


# ---------------------------------------------------------------- forward products

def _check_jvp_args(primals, tangents, api):
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{api}: Expected primals to be a tuple. E.g. it should be valid to "
                           "call f(*primals).")
    flat_p, spec_p = tree_flatten(primals)
    flat_t, spec_t = tree_flatten(tangents)
    if spec_p != spec_t:
        raise RuntimeError(f"{api}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure {spec_p} and "
                           f"tangents with structure {spec_t}")
    if not flat_p:
        raise RuntimeError(f"{api}: Expected primals to contain at least one Tensor.")
    _check_tensor_leaves(primals)
    _check_tensor_leaves(tangents)
    for p, t in zip(flat_p, flat_t):
        if not (t.is_floating_point() or t.is_complex()):
            raise ValueError("Expected tangent to be floating point or complex, but got: "
                             f"{t.dtype}")
        if p.shape != t.shape:
            raise RuntimeError("Trying to set a forward gradient that has a different size than "
                               "that of the original Tensor, this is not supported. Tensor is "
                               f"of size {list(p.shape)} while the given forward gradient is "
                               f"of size {list(t.shape)}.")
    return flat_t


def _forward_level_unusable():
    """jvp/jacfwd take the reverse-mode path (differentiating a vjp with respect to its
    cotangent: exact) when ember's single forward level is held by an enclosing jvp.
    (Under vmap forward AD works: a BatchedTensor's tangent is its physical tensor's.)"""
    return bool(forward_ad._open)


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` (and aux): the Jacobian-vector product, computed
    with forward-mode AD (one run of ``func`` on dual tensors).

    >>> import ember
    >>> x = ember.tensor([1., 2.])
    >>> ember.func.jvp(lambda x: x ** 2, (x,), (ember.tensor([1., 0.]),))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    api = "jvp(f, primals, tangents)"
    flat_tangents = _check_jvp_args(primals, tangents, api)
    argnums = tuple(range(len(primals)))
    if _forward_level_unusable():
        output, products, aux = _jvp_by_double_vjp(func, primals, primals, argnums,
                                                   [flat_tangents], strict, has_aux)
        products = products[0]
    else:
        output, products, aux = _jvp_forward(func, primals, primals, argnums, flat_tangents,
                                             strict, has_aux)
    return (output, products, aux) if has_aux else (output, products)


_INDEPENDENT = ("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                "inputs. This is not allowed with strict=True.")
_API = "jvp(f, primals, tangents)"


def _jvp_forward(func, args, diff_args, argnums, flat_tangents, strict, has_aux):
    """``(output, J t, aux)`` of ``func(*args)`` for tangents of the ``argnums`` arguments
    (``diff_args``, a pytree of the same leaves as ``flat_tangents``), in a dual level."""
    flat_primals, spec = tree_flatten(diff_args)
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(p, t) for p, t in zip(flat_primals, flat_tangents)]
        output, aux = _split_aux(func(*_replaced(args, argnums, tree_unflatten(duals, spec))),
                                 has_aux, _API)
        if has_aux:
            _check_aux(aux)
        flat_out, out_spec = tree_flatten(output)
        _check_output_leaves(flat_out, _API, "f(*primals)")
        outs, products = [], []
        for o in flat_out:
            primal, tangent = forward_ad.unpack_dual(o)
            if tangent is None:
                if strict:
                    raise RuntimeError(_INDEPENDENT)
                tangent = zeros_like(primal)
            outs.append(primal)
            products.append(tangent)
    # closing the level dropped the tangents of the outputs and aux; their values remain
    return tree_unflatten(outs, out_spec), tree_unflatten(products, out_spec), aux


def _jvp_by_double_vjp(func, args, diff_args, argnums, tangent_sets, strict, has_aux):
    """``(output, [J t for t in tangent_sets], aux)`` from reverse passes only (each ``t`` a
    flat tangent list over ``diff_args``); used below an open forward level."""
    outer_grad = is_grad_enabled()
    level = Level()
    with level, enable_grad():
        graph, _, output, aux = _record(func, args, diff_args, argnums, _API, has_aux)
        products = _forward_products(level, graph, tangent_sets, outer_grad, strict)
    return output, [tree_unflatten(p, graph.spec) for p in products], aux


def _forward_products(level, graph, tangent_sets, outer_grad, strict=False):
    """For each flat tangent list, the flat list ``J t`` over the graph's outputs (``strict``:
    an error for an output that does not depend on the inputs)."""
    dummies = [level.wrap(zeros_like(o)) for o in graph.outputs]
    pulled = graph.backward(dummies)  # linear in the dummies, recorded
    used = [(g, i) for i, g in enumerate(pulled) if g.requires_grad]
    results = []
    for tangents in tangent_sets:
        pairs = [(g, tangents[i]) for g, i in used]
        if not pairs:
            if strict and graph.outputs:
                raise RuntimeError(_INDEPENDENT)
            results.append([zeros_like(o) for o in graph.outputs])
            continue
        ends = [g for g, _ in pairs] + [t for _, t in pairs]
        keep = graph.tangents or carries_tangents(ends) or (
            outer_grad and level.reaches_outside(ends))
        prods = autograd_grad([g for g, _ in pairs], dummies, [t for _, t in pairs],
                              retain_graph=True, create_graph=keep, allow_unused=True)
        if strict and any(p is None for p in prods):
            raise RuntimeError(_INDEPENDENT)
        prods = [zeros_like(o) if p is None else p for o, p in zip(graph.outputs, prods)]
        results.append([level.release(p) if keep else p.detach() for p in prods])
    return results


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The transform computing the Jacobian with forward mode: the Jacobian-vector
    products of all the columns of the identity as one vmapped ``jvp``.

    >>> import ember
    >>> ember.func.jacfwd(lambda x: x.sin())(ember.tensor([0., 0.]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        nums = _check_argnums(argnums, len(args))
        diff_args = _selected(args, nums)
        _check_tensor_leaves(diff_args)
        flat_in, in_spec = tree_flatten(diff_args)
        _require_real(flat_in, "inputs", "jacfwd")
        call = lambda *a: func(*a, **kwargs)  # noqa: E731
        if _forward_level_unusable():
            tangent_sets = _basis_tangents(flat_in)
            output, columns, aux = _jvp_by_double_vjp(call, args, diff_args, nums,
                                                      tangent_sets, False, has_aux)
            columns = [tree_flatten(c)[0] for c in columns]
            flat_out, out_spec = tree_flatten(output)
            _require_real(flat_out, "outputs", "jacfwd")
            jac = _assemble_columns(columns, flat_out, flat_in, out_spec, in_spec)
        else:
            jac, aux = _vmapped_jvps(call, args, diff_args, nums, flat_in, in_spec, has_aux,
                                     randomness)
        return (jac, aux) if has_aux else jac

    return wrapper


def _vmapped_jvps(call, args, diff_args, argnums, flat_in, in_spec, has_aux, randomness):
    """The Jacobian (and aux) from one forward-mode jvp vmapped over the identity's
    columns: the primals run once, their tangents carry the batch of columns."""
    sizes = [t.numel() for t in flat_in]
    total = sum(sizes)
    if not total:  # no columns: the output's shapes come from one jvp of zeros
        output, _, aux = _jvp_forward(call, args, diff_args, argnums,
                                      [zeros_like(t) for t in flat_in], False, has_aux)
        flat_out, out_spec = tree_flatten(output)
        _require_real(flat_out, "outputs", "jacfwd")
        return _assemble_columns([], flat_out, flat_in, out_spec, in_spec), aux
    blocks = [eye(total, dtype=t.dtype)[:, start:start + n].reshape((total,) + tuple(t.shape))
              for t, n, start in zip(flat_in, sizes, _starts(sizes))]
    kept = {}

    def one_column(*tangents):
        output, products, aux = _jvp_forward(call, args, diff_args, argnums, list(tangents),
                                             False, has_aux)
        flat_out, kept["spec"] = tree_flatten(output)
        kept["outputs"], kept["aux"] = flat_out, aux
        return tuple(tree_flatten(products)[0])

    columns = vmap(one_column, randomness=randomness)(*blocks)
    _require_real(kept["outputs"], "outputs", "jacfwd")
    jac = []
    for out, full in zip(kept["outputs"], columns):  # (total, *out.shape): columns last
        full = full.movedim(0, -1)
        jac.append([full[..., start:start + n].reshape(tuple(out.shape) + tuple(t.shape))
                    for t, n, start in zip(flat_in, sizes, _starts(sizes))])
    per_output = [tree_unflatten(row, in_spec) for row in jac]
    aux = kept["aux"]
    return tree_unflatten(per_output, kept["spec"]), aux


def _starts(sizes):
    starts, at = [], 0
    for n in sizes:
        starts.append(at)
        at += n
    return starts


def _basis_tangents(flat_in):
    """One flat tangent list per input element: the standard basis, split over the inputs."""
    sizes = [t.numel() for t in flat_in]
    total = sum(sizes)
    if not total:
        return []
    basis = eye(total, dtype=flat_in[0].dtype)
    tangent_sets = []
    for k in range(total):
        tangents, start = [], 0
        for t, n in zip(flat_in, sizes):
            tangents.append(basis[k, start:start + n].reshape(t.shape).to(t.dtype))
            start += n
        tangent_sets.append(tangents)
    return tangent_sets


def _assemble_columns(columns, outs, ins, out_spec, in_spec):
    """The Jacobian blocks (output shape + input shape) from the flat columns ``J e_k``."""
    sizes = [t.numel() for t in ins]
    blocks = []
    for i, o in enumerate(outs):
        full = (F.stack([c[i] for c in columns], dim=-1) if columns
                else zeros(tuple(o.shape) + (0,), dtype=o.dtype))
        row, start = [], 0
        for t, n in zip(ins, sizes):
            row.append(full[..., start:start + n].reshape(tuple(o.shape) + tuple(t.shape)))
            start += n
        blocks.append(row)
    return _assemble(blocks, outs, ins, out_spec, in_spec)
