"""Numerical gradient checking: ``gradcheck`` and ``gradgradcheck``.

``gradcheck`` compares the Jacobian that backward computes (analytical) with
central finite differences (numerical), as a pipeline of small checks, each
raising ``GradcheckError`` with a message that says what went wrong:

1. some input requires grad (ValueError otherwise); a warning if one is not float64;
2. analytical vs numerical Jacobian, per output and input: on a mismatch, a short
   table of the worst elements and a hint when the pattern is recognizable
   (backward returned nothing, a constant factor, a transpose);
3. backward scales with grad_output (a random cotangent, not only one-hot ones);
4. backward is reentrant (the same call twice gives the same result, within nondet_tol);
5. backward copes with undefined (None/zero) output gradients.

``fast_mode=True`` replaces step 2 by a random projection ``v^T J u``.

This module is callable, so the oldest seed's ``gradcheck.gradcheck(...)`` and
the usual ``gradcheck(...)`` both work after ``from ember.autograd import gradcheck``.

>>> import ember
>>> from ember.autograd import gradcheck
>>> x = ember.randn(3, dtype=ember.float64, requires_grad=True)
>>> gradcheck(lambda t: (t * t).sum(), (x,))
True
"""
import sys
import types
import warnings

import numpy as np

from .._tensor import Tensor
from ..backend import get_array_module, to_host
from . import batching, grad_mode, forward_ad
from .backprop import grad as autograd_grad
from .function import BackwardFunction


class GradcheckError(RuntimeError):
    """Raised by gradcheck when a check fails."""


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _differentiable_outputs(outputs):
    return [o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad]


def _float_outputs(outputs):
    return [o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.is_floating_point()]


def _run(func, inputs):
    # Not under no_grad: gradgradcheck's function itself calls autograd.grad.
    return [to_host(o._data).astype(np.float64).reshape(-1)
            for o in _float_outputs(func(*inputs))]


# ---- step 1: inputs ----------------------------------------------------------------------
def _check_inputs(inputs):
    diff = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of them have requires_grad=True.")
    for i in diff:
        if inputs[i].dtype.name not in ("float64", "complex128"):
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating "
                          "point. This check will likely fail if all the inputs are not of "
                          "double precision floating point.", UserWarning, stacklevel=3)
    return diff


# ---- Jacobians ---------------------------------------------------------------------------
def _numerical_jacobians(func, inputs, diff, eps):
    """J[out][inp]: (n_out_elements, n_in_elements) by central differences."""
    base = _run(func, inputs)
    jac = [[np.zeros((o.size, inputs[j].numel())) for j in diff] for o in base]
    for col, j in enumerate(diff):
        data = inputs[j]._data
        flat_index = list(np.ndindex(data.shape))
        for k, idx in enumerate(flat_index):
            orig = data[idx].copy()
            data[idx] = orig + eps
            plus = _run(func, inputs)
            data[idx] = orig - eps
            minus = _run(func, inputs)
            data[idx] = orig
            for r, (p, m) in enumerate(zip(plus, minus)):
                jac[r][col][:, k] = (p - m) / (2 * eps)
    return jac


def _vjp(outputs, out_index, v, inputs, diff):
    out = outputs[out_index]
    grads = autograd_grad(out, [inputs[j] for j in diff], out.new_tensor(v.reshape(out.shape)),
                          retain_graph=True, allow_unused=True)
    return [np.zeros(inputs[j].numel()) if g is None else
            to_host(g._data).astype(np.float64).reshape(-1) for g, j in zip(grads, diff)]


def _analytical_jacobians(outputs, inputs, diff):
    jac = []
    for r, out in enumerate(outputs):
        n = out.numel()
        rows = [np.zeros((n, inputs[j].numel())) for j in diff]
        for k in range(n):
            v = np.zeros(n)
            v[k] = 1.0
            for col, g in enumerate(_vjp(outputs, r, v, inputs, diff)):
                rows[col][k] = g
        jac.append(rows)
    return jac


def _forward_jacobians(func, inputs, diff):
    """J[out][inp] by forward mode: one dual run per input element (tangent e_k)."""
    columns = []  # per diff input: per element: the output tangents, flattened
    for j in diff:
        n = inputs[j].numel()
        per_element = []
        for k in range(n):
            with forward_ad.dual_level():
                args = list(inputs)
                for i in diff:
                    tangent = inputs[i].detach().new_zeros(inputs[i].shape)
                    if i == j:
                        tangent.view(-1)[k] = 1.0
                    args[i] = forward_ad.make_dual(inputs[i], tangent)
                outs = _float_outputs(func(*args))
                per_element.append([
                    np.zeros(o.numel()) if t is None else
                    to_host(t._data).astype(np.float64).reshape(-1)
                    for o, t in ((o, forward_ad.unpack_dual(o).tangent) for o in outs)])
        columns.append(per_element)
    n_outs = len(columns[0][0]) if columns and columns[0] else 0
    return [[np.stack([elem[r] for elem in per_element], axis=1)
             for per_element in columns] for r in range(n_outs)]


def _compare_forward_jacobians(analytical, numerical, outputs, inputs, diff, atol, rtol):
    for r, (a_rows, n_rows) in enumerate(zip(analytical, numerical)):
        for col, (a, n) in enumerate(zip(a_rows, n_rows)):
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                message = _mismatch_message(r, diff[col], a, n, tuple(outputs[r].shape),
                                            tuple(inputs[diff[col]].shape), atol, rtol)
                message = message.replace("in backward", "in the forward-mode rule (jvp)")
                raise GradcheckError("Jacobian computed with forward mode mismatch"
                                     + message[len("Jacobian mismatch"):])


# ---- step 2: comparing, with a readable failure ------------------------------------------
def _index_str(flat, shape):
    if not shape:
        return "[]"
    return "[" + ", ".join(str(i) for i in np.unravel_index(flat, shape)) + "]"


def _hint(a, n, in_shape):
    if not np.any(a) and np.any(n):
        return "every analytical value is 0: backward returned nothing (None or zeros) here"
    mask = np.abs(n) > 1e-8
    if mask.any() and np.all(np.abs(a[~mask]) < 1e-8):
        ratios = a[mask] / n[mask]
        c = np.median(ratios)
        if abs(c - 1) > 1e-3 and np.allclose(ratios, c, rtol=1e-3, atol=1e-6):
            return (f"analytical = {c:.4g} x numerical everywhere: a constant factor is missing "
                    "or extra in backward" + (" (the sign is flipped)" if np.isclose(c, -1)
                                               else ""))
    if a.shape[0] == a.shape[1] and np.allclose(a, n.T, atol=1e-5, rtol=1e-3):
        return ("analytical equals the transposed numerical Jacobian: a transpose is missing "
                "or extra")
    if len(in_shape) == 2 and in_shape[0] == in_shape[1]:
        swapped = a.reshape((-1,) + tuple(in_shape)).transpose(0, 2, 1).reshape(a.shape)
        if np.allclose(swapped, n, atol=1e-5, rtol=1e-3):
            return ("the gradient has the input's dimensions swapped: a .t()/transpose is "
                    "missing or extra in backward")
    return None


def _mismatch_message(r, j, a, n, out_shape, in_shape, atol, rtol, worst=5):
    err = np.abs(a - n)
    excess = err - (atol + rtol * np.abs(n))
    order = np.argsort(excess, axis=None)[::-1][:worst]
    lines = [f"Jacobian mismatch for output {r} with respect to input {j},",
             f"worst elements (of {a.size}; tolerance atol={atol}, rtol={rtol}):",
             f"  {'input index':>14} {'output index':>14} {'analytical':>14} {'numerical':>14} "
             f"{'abs err':>10} {'rel err':>10}"]
    for flat in order:
        o, i = np.unravel_index(flat, a.shape)
        if excess[o, i] <= 0:
            break
        rel = err[o, i] / abs(n[o, i]) if n[o, i] else float("inf")
        lines.append(f"  {_index_str(i, in_shape):>14} {_index_str(o, out_shape):>14} "
                     f"{a[o, i]:>14.6g} {n[o, i]:>14.6g} {err[o, i]:>10.3g} {rel:>10.3g}")
    hint = _hint(a, n, in_shape)
    if hint:
        lines.append("hint: " + hint)
    return "\n".join(lines)


def _compare_jacobians(analytical, numerical, outputs, inputs, diff, atol, rtol):
    for r, (a_rows, n_rows) in enumerate(zip(analytical, numerical)):
        for col, (a, n) in enumerate(zip(a_rows, n_rows)):
            if not np.allclose(a, n, atol=atol, rtol=rtol):
                raise GradcheckError(_mismatch_message(
                    r, diff[col], a, n, tuple(outputs[r].shape), tuple(inputs[diff[col]].shape),
                    atol, rtol))


# ---- steps 3-5 ---------------------------------------------------------------------------
def _check_scaling(outputs, inputs, diff, numerical, atol, rtol, rng):
    for r, out in enumerate(outputs):
        v = rng.standard_normal(out.numel()) * 2.5
        got = _vjp(outputs, r, v, inputs, diff)
        for col, g in enumerate(got):
            expected = v @ numerical[r][col]
            if not np.allclose(g, expected, atol=atol * max(1.0, np.abs(v).sum()), rtol=rtol):
                raise GradcheckError(
                    f"Backward is not linear in grad_output for output {r} with respect to "
                    f"input {diff[col]}: with a random grad_output the gradient is off by up to "
                    f"{np.max(np.abs(g - expected)):.3g} (does backward multiply by "
                    "grad_output?)")


def _check_reentrant(outputs, inputs, diff, nondet_tol, rng):
    for r, out in enumerate(outputs):
        v = rng.standard_normal(out.numel())
        first = _vjp(outputs, r, v, inputs, diff)
        second = _vjp(outputs, r, v, inputs, diff)
        for a, b in zip(first, second):
            if np.max(np.abs(a - b), initial=0.0) > nondet_tol:
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient. The tolerance for nondeterminism was "
                    f"{nondet_tol}.")


def _check_undefined_grad(outputs):
    seen = set()
    for out in outputs:
        node = out.grad_fn
        if not isinstance(node, BackwardFunction) or node in seen:
            continue
        seen.add(node)
        try:
            with grad_mode.no_grad():
                grads = node._apply([None] * len(node._output_meta))
        except Exception as e:
            raise GradcheckError(
                f"Expected backward function ({node.name()}) to handle undefined output grads "
                f"(None, or zeros when materialized), but it raised {type(e).__name__}: {e}") \
                from e
        for g in grads:
            if g is not None and bool(g._data.any()):
                raise GradcheckError(
                    f"Expected all input grads of {node.name()} to be undefined or zero when "
                    "all output grads are undefined or zero.")


def _fast_check(func, outputs, inputs, diff, eps, atol, rtol, rng):
    us = {j: rng.standard_normal(inputs[j].numel()) for j in diff}
    for r, out in enumerate(outputs):
        v = rng.standard_normal(out.numel())
        analytical = _vjp(outputs, r, v, inputs, diff)
        for col, j in enumerate(diff):
            data = inputs[j]._data
            orig = data.copy()
            step = get_array_module(data).asarray(
                (eps * us[j]).reshape(data.shape).astype(data.dtype))
            data[...] = orig + step
            plus = _run(func, inputs)[r]
            data[...] = orig - step
            minus = _run(func, inputs)[r]
            data[...] = orig
            numerical = v @ ((plus - minus) / (2 * eps))
            got = analytical[col] @ us[j]
            if not np.isclose(got, numerical, atol=atol, rtol=rtol):
                raise GradcheckError(
                    f"Jacobian mismatch for output {r} with respect to input {j} (fast mode: "
                    f"v^T J u is {got:.6g} analytically but {numerical:.6g} numerically). Run "
                    "with fast_mode=False to see the worst elements.")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check backward of ``func`` against finite differences at ``inputs``
    (``check_forward_ad=True``: the forward-mode Jacobian too; ``check_backward_ad=False``:
    only that one).

    Returns True, or raises ``GradcheckError`` (False with ``raise_exception=False``).
    """
    func, inputs = _realified(func, _as_tuple(inputs))
    diff = _check_inputs(inputs)
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")
    # masked only changes how sparse inputs are compared: ember's tensors are dense
    try:
        if check_forward_ad:
            _check_forward(func, inputs, diff, eps, atol, rtol)
            if check_batched_forward_grad:
                _check_batched_forward(func, inputs, diff)
            if not check_backward_ad:
                return True
        elif not check_backward_ad:
            raise ValueError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
        outputs = _differentiable_outputs(func(*inputs))
        if not outputs:
            return _no_outputs_check(func, inputs, diff, eps, atol, rtol)
        rng = np.random.default_rng(0)
        if fast_mode:
            _fast_check(func, outputs, inputs, diff, eps, atol, rtol, rng)
        else:
            numerical = _numerical_jacobians(func, inputs, diff, eps)
            analytical = _analytical_jacobians(outputs, inputs, diff)
            _compare_jacobians(analytical, numerical, outputs, inputs, diff, atol, rtol)
            _check_scaling(outputs, inputs, diff, numerical, atol, rtol, rng)
        _check_reentrant(outputs, inputs, diff, nondet_tol, rng)
        if check_grad_dtypes:
            _check_grad_dtypes(outputs, inputs, diff)
        if check_undefined_grad:
            _check_undefined_grad(outputs)
        if check_batched_grad:
            _check_batched_grad(outputs, inputs, diff, atol, rtol, rng)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _realified(func, inputs):
    """``func`` and ``inputs`` with complex numbers as pairs of reals: each complex input
    that requires grad becomes two real leaves (its real and imaginary parts), each complex
    output its two parts. The real Jacobian of that map holds what PyTorch's Wirtinger checks
    compare (the conjugate Wirtinger derivative is half of d/dx + i d/dy), so a complex
    backward is checked entry by entry; real inputs and outputs pass as they are."""
    if not any(isinstance(t, Tensor) and t.requires_grad and t.is_complex() for t in inputs):
        layout, parts = None, inputs
    else:
        layout, parts = [], []
        for t in inputs:
            split = isinstance(t, Tensor) and t.requires_grad and t.is_complex()
            layout.append(split)
            parts += ([t.real.detach().clone().requires_grad_(),
                       t.imag.detach().clone().requires_grad_()] if split else [t])

    def realified(*args):
        if layout is not None:
            it, rebuilt = iter(args), []
            for split in layout:
                rebuilt.append(next(it) + next(it) * 1j if split else next(it))
            args = rebuilt
        outputs = func(*args)
        if not any(isinstance(o, Tensor) and o.is_complex() for o in _as_tuple(outputs)):
            return outputs
        split = []
        for o in _as_tuple(outputs):
            split += [o.real, o.imag] if isinstance(o, Tensor) and o.is_complex() else [o]
        return tuple(split)
    return realified, tuple(parts)


def _check_grad_dtypes(outputs, inputs, diff):
    """Each input's gradient has the input's dtype (``check_grad_dtypes``). The forward-mode
    half of PyTorch's check compares complex-ness only, which ember's real-only forward AD
    cannot break."""
    for out in outputs:
        grads = autograd_grad(out, [inputs[j] for j in diff], out.new_ones(out.shape),
                              retain_graph=True, allow_unused=True)
        for g, j in zip(grads, diff):
            if g is not None and g.dtype is not inputs[j].dtype:
                raise GradcheckError("Gradient has dtype mismatch")


def _check_forward(func, inputs, diff, eps, atol, rtol):
    """Forward-mode Jacobian (``check_forward_ad``) against the numerical one."""
    outputs = _float_outputs(func(*inputs))
    numerical = _numerical_jacobians(func, inputs, diff, eps)
    forward = _forward_jacobians(func, inputs, diff)
    _compare_forward_jacobians(forward, numerical, outputs, inputs, diff, atol, rtol)


def _check_batched_forward(func, inputs, diff):
    """Per input, the output tangents of two random tangents taken at once (one jvp under
    vmap, the tangents batched) must equal those taken one by one."""
    vmap = batching.get_vmap()
    for j in diff:
        def output_tangents(tangent, j=j):
            with forward_ad.dual_level():
                args = [a.detach() if isinstance(a, Tensor) else a for a in inputs]
                args[j] = forward_ad.make_dual(args[j], tangent)
                outs = _float_outputs(func(*args))
                return tuple(o.new_zeros(()).expand(o.shape) if t is None else t
                             for o, t in (forward_ad.unpack_dual(o) for o in outs))
        draws = np.random.default_rng(j).standard_normal((2,) + tuple(inputs[j].shape))
        primal = inputs[j].detach()
        expected = [output_tangents(primal.new_tensor(d)) for d in draws]
        try:
            got = vmap(output_tangents)(primal.new_tensor(draws))
        except RuntimeError as e:
            raise GradcheckError(f"While computing batched gradients, got: {e}") from e
        for k, many in enumerate(got):
            want = np.stack([to_host(one[k]._data) for one in expected])
            if not np.allclose(to_host(many._data), want):
                raise GradcheckError(
                    f"For output {k} and input {j}:\nWhile computing batched gradients, "
                    f"got: {to_host(many._data)}\nExpected: {want}")


def _check_batched_grad(outputs, inputs, diff, atol, rtol, rng):
    """The vector-Jacobian products of a batch of grad_outputs taken at once under vmap
    (``is_grads_batched``) must equal the products taken one by one."""
    wrt = [inputs[j] for j in diff]
    for k, out in enumerate(outputs):
        vectors = out.new_tensor(rng.standard_normal((2,) + tuple(out.shape)))
        batched = autograd_grad(out, wrt, vectors, retain_graph=True, allow_unused=True,
                                is_grads_batched=True)
        for b in range(2):
            single = autograd_grad(out, wrt, vectors[b], retain_graph=True, allow_unused=True)
            for j, (many, one) in zip(diff, zip(batched, single)):
                if many is None and one is None:
                    continue
                got = np.zeros(tuple(inputs[j].shape)) if many is None else to_host(many[b]._data)
                want = np.zeros(got.shape) if one is None else to_host(one._data)
                if not np.allclose(got, want, rtol=rtol, atol=atol):
                    raise GradcheckError(
                        f"For output {k} and input {j}:\nWhile computing batched gradients, "
                        f"got: {got}\nExpected: {want}")


def _no_outputs_check(func, inputs, diff, eps, atol, rtol):
    """No output requires grad: the numerical Jacobian must then be zero."""
    for rows in _numerical_jacobians(func, inputs, diff, eps):
        for n in rows:
            if not np.allclose(n, 0, atol=atol):
                raise GradcheckError("Numerical gradient for function expected to be zero")
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of the function ``inputs -> grads``.

    ``grad_outputs`` default to random float64 tensors that require grad.
    """
    inputs = _as_tuple(inputs)
    diff = _check_inputs(inputs)
    outputs = _differentiable_outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(1)
        grad_outputs = tuple(o.new_tensor(rng.standard_normal(tuple(o.shape)), requires_grad=True)
                             for o in outputs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def first_derivatives(*args):
        ins, gos = args[:n_in], args[n_in:]
        outs = _differentiable_outputs(func(*ins))
        grads = autograd_grad(outs, [ins[j] for j in diff], gos, create_graph=True,
                              allow_unused=True)
        return tuple(g for g in grads if g is not None)

    return gradcheck(first_derivatives, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad, fast_mode=fast_mode,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)


class _CallableModule(types.ModuleType):
    """Lets ``gradcheck`` be both this module and the function it holds."""

    def __call__(self, *args, **kwargs):
        return gradcheck(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
