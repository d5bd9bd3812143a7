"""Jacobians, Hessians and their products of functions of tensors (PyTorch's
``torch.autograd.functional``), on reverse-mode autograd.

Inputs are a tensor or a tuple of tensors, and results take the same form. Results are
detached unless ``create_graph=True``, which keeps them differentiable (connected to inputs
that require grad). ``strict=True`` raises where a result would be identically zero, with
the message of the step that found it.
"""
from .._creation import ones_like, zeros_like
from .._tensor import Tensor
from .. import _functions as F
from .backprop import grad as _autograd_grad_raw
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from . import forward_ad as fwAD
from .._functorch.eager_transforms import _basis_chunk
from .._functorch.vmap import vmap


def _as_tuple(value, what, fn_name):
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for i, v in enumerate(values):
        if not isinstance(v, Tensor):
            if is_tuple:
                raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a "
                                f"tuple of Tensors but the value at index {i} has type "
                                f"{type(v)}.")
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the given {what} has type {type(value)}.")
    return is_tuple, values


def _untuple(is_tuple, values):
    return values if is_tuple else values[0]


def _preprocess(tensors, create_graph, need_graph):
    """What the function sees: aliases keeping the caller's graph under ``create_graph``,
    else detached tensors (requiring grad where ``need_graph``)."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in tensors)


def _postprocess(values, create_graph):
    return tuple(v if create_graph else v.detach() for v in values)


def _check_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for o, vi in zip(other, v):
        if o.shape != vi.shape:
            raise RuntimeError(f"v has invalid size: should be {o.shape} but got {vi.shape}.")


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None,
          is_grads_batched=False):
    """Per input the gradient, or None where it does not depend on the outputs (outputs
    that do not require grad are left out)."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _autograd_grad_raw([o for o, _ in pairs], inputs, [g for _, g in pairs],
                              allow_unused=True, create_graph=create_graph,
                              retain_graph=retain_graph, is_grads_batched=is_grads_batched)


_NOT_DIFFERENTIABLE = {
    "outputs": ("Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when running "
                "in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided "
                 "function with respect to input {i} is independent of the input. This is not "
                 "allowed in strict mode. You should ensure that your function is twice "
                 "differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should ensure "
                "that your function is thrice differentiable and that the hessian depends on the "
                "inputs."),
    "grad_inputs": ("The gradient with respect to input {i} is independent of the inputs of the "
                    "user-provided function. This is not allowed in strict mode."),
}


def _check_requires_grad(values, kind, strict):
    if not strict:
        return
    for i, v in enumerate(values):
        if v is None:
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if not v.requires_grad:
            raise RuntimeError(_NOT_DIFFERENTIABLE[kind].format(i=i))


_UNUSED = {
    "back": ("The output of the user-provided function is independent of input {i}. This is "
             "not allowed in strict mode."),
    "back_trick": ("The gradient with respect to the input is independent of entry {i} in the "
                   "grad_outputs when using the double backward trick to compute forward mode "
                   "gradients. This is not allowed in strict mode."),
    "double_back": ("The jacobian of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."),
    "double_back_trick": ("The hessian of the user-provided function is independent of entry "
                          "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                          "prevents from using the double backward trick to replace forward "
                          "mode AD."),
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    """Zeros for the gradients that are None (an error under ``strict``)."""
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_UNUSED[stage].format(i=i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        out.append(g)
    return tuple(out)


def _v_or_ones(v, reference, is_reference_tuple, fn_name, create_graph, none_message):
    if v is None:
        if len(reference) != 1 or reference[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _preprocess(v, create_graph, need_graph=False)
    _check_v(v, reference, is_reference_tuple)
    return v


_V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a single "
                  "Tensor with a single element.")
_V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is "
                 "a single Tensor with a single element.")


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``.

    >>> import ember
    >>> from ember.autograd.functional import vjp
    >>> vjp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "vjp")
        _check_requires_grad(outputs, "outputs", strict)
        v = _v_or_ones(v, outputs, is_outputs_tuple, "vjp", create_graph, _V_NONE_OUTPUT)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph)
        grads = _fill_in_zeros(grads, inputs, strict, create_graph, "back")
    return (_untuple(is_outputs_tuple, _postprocess(outputs, create_graph)),
            _untuple(is_inputs_tuple, _postprocess(grads, create_graph)))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``, by differentiating a vector-Jacobian product with respect to
    its vector (exact: the product is linear in it).

    >>> import ember
    >>> from ember.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.tensor([1., 0.]))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        v = _v_or_ones(v, inputs, is_inputs_tuple, "jvp", create_graph, _V_NONE_INPUT)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jvp")
        _check_requires_grad(outputs, "outputs", strict)
        dummies = tuple(zeros_like(o).requires_grad_() for o in outputs)
        pulled = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(pulled, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        products = _grad(pulled, dummies, v, create_graph)
        products = _fill_in_zeros(products, outputs, strict, create_graph, "back_trick")
    return (_untuple(is_outputs_tuple, _postprocess(outputs, create_graph)),
            _untuple(is_outputs_tuple, _postprocess(products, create_graph)))


_STRATEGY_HINT = (
    'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
    'function has more outputs than inputs, "forward-mode" tends to be more performant. '
    'Otherwise, prefer to use "reverse-mode".')


def _identity_blocks(tensors):
    """The identity of size ``sum(numel)`` cut column-wise into one ``(total, numel)``
    block per tensor, in the tensor's dtype."""
    numels = [t.numel() for t in tensors]
    return _basis_chunk(tensors, numels, 0, sum(numels))


def _unpack(res, is_outputs_tuple, is_inputs_tuple):
    """Undo the tupling of outputs (outer) and inputs (inner), leaving the rest as is."""
    if not is_inputs_tuple:
        res = tuple(row[0] for row in res)
    return res if is_outputs_tuple else res[0]


def _jacfwd(func, inputs, strict, vectorize):
    """The forward-mode Jacobian: one vmapped forward-mode jvp over the identity."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and '
                           '`strategy="forward-mode"` are not supported together (yet). Please '
                           'either set `strict=False` or `strategy="reverse-mode"`.')
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    numels = [t.numel() for t in inputs]
    seen = {}

    def column_products(*tangents):
        with fwAD.dual_level():
            duals = tuple(fwAD.make_dual(t, tan.view_as(t)) for t, tan in zip(inputs, tangents))
            seen["is_tuple"], outs = _as_tuple(func(*duals), "outputs", "jacobian")
            unpacked = [fwAD.unpack_dual(o) for o in outs]
            seen["outputs"] = [u.primal for u in unpacked]
            return tuple(zeros_like(u.primal) if u.tangent is None else u.tangent
                         for u in unpacked)

    stacked = vmap(column_products)(*_identity_blocks(inputs))
    # the batch dim runs over the inputs' entries: it goes last, after the output's dims
    res = [[jac.permute(*range(1, jac.dim()), 0).reshape(tuple(out.shape) + tuple(t.shape))
            for jac, t in zip(full.split(numels, 0), inputs)]
           for full, out in zip(stacked, seen["outputs"])]
    # lists, not tuples, where nothing is unpacked: what torch returns on this path
    return _unpack(res, seen["is_tuple"], is_inputs_tuple)


def _vectorized_jacobian(outputs, inputs, create_graph):
    """All the vjps of the identity rows in one ``grad(..., is_grads_batched=True)``;
    per output a tuple of blocks, one per input."""
    numels = [o.numel() for o in outputs]
    total = sum(numels)
    grads = _grad(tuple(o.reshape(-1) for o in outputs), inputs, tuple(_identity_blocks(outputs)),
                  create_graph=create_graph, is_grads_batched=True)
    per_input = [zeros_like(t).expand((total,) + tuple(t.shape)) if g is None else g
                 for g, t in zip(grads, inputs)]
    split = [full.split(numels, 0) for full in per_input]
    return [tuple(split[j][i].view(tuple(out.shape) + tuple(t.shape))
                  for j, t in enumerate(inputs))
            for i, out in enumerate(outputs)]


def _jacobian_of_output(i, out, inputs, create_graph, strict):
    """d out / d inputs[j] for each j, shaped ``out.shape + inputs[j].shape``."""
    rows = [[] for _ in inputs]
    flat = out.reshape(-1)
    for k in range(flat.numel()):
        grads = _grad((flat[k],), inputs, (ones_like(flat[k]),), create_graph,
                      retain_graph=True)
        for j, (g, t) in enumerate(zip(grads, inputs)):
            if g is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {j}. This is not allowed in "
                                       "strict mode.")
                g = zeros_like(t)
            elif strict and create_graph and not g.requires_grad:
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")
            rows[j].append(g)
    return tuple((F.stack(r) if r else zeros_like(t).reshape(0, *t.shape)).reshape(
        tuple(out.shape) + tuple(t.shape)) for r, t in zip(rows, inputs))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: a tensor ``out.shape + in.shape``, or tuples
    of them (outputs outer, inputs inner) where ``func`` returns or takes tuples.

    >>> import ember
    >>> from ember.autograd.functional import jacobian
    >>> jacobian(lambda x: x ** 2, ember.tensor([1., 2.]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_HINT)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and '
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacfwd(func, inputs, strict, vectorize)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _preprocess(inputs, create_graph, need_graph=True)
        outputs = func(*inputs)
        is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                              "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                               "`vectorized=True` are not supported together. Please either set "
                               "`strict=False` or `vectorize=False`.")
        if vectorize:
            blocks = _vectorized_jacobian(outputs, inputs, create_graph)
        else:
            blocks = [_jacobian_of_output(i, out, inputs, create_graph, strict)
                      for i, out in enumerate(outputs)]
    blocks = [_untuple(is_inputs_tuple, _postprocess(row, create_graph)) for row in blocks]
    return _untuple(is_outputs_tuple, tuple(blocks))


def _single_output(func, inputs, fn_name, strict):
    out = func(*inputs)
    is_tuple, outputs = _as_tuple(out, "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if is_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if out.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return out


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False,
            outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function with a single-element output: a tensor, or for a tuple of
    inputs a tuple of tuples of blocks ``in_i.shape + in_j.shape``.

    >>> import ember
    >>> from ember.autograd.functional import hessian
    >>> hessian(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def gradient(*inp):  # the Jacobian of the single output: the function differentiated
        if outer_jacobian_strategy == "forward-mode":  # dual inputs: keep them, not copies
            inp = tuple(t.requires_grad_(True) for t in inp)
        jac = jacobian(lambda *a: _single_output(func, a, "hessian", strict).squeeze(), inp,
                       create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    result = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return result if is_inputs_tuple else result[0][0]


def _gradient_for_products(func, inputs, v, create_graph, strict, fn_name):
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _preprocess(inputs, create_graph, need_graph=True)
    v = _v_or_ones(v, inputs, is_inputs_tuple, fn_name, create_graph, _V_NONE_INPUT)
    out = _single_output(func, inputs, fn_name, strict)
    jac = _grad((out,), inputs, create_graph=True)
    _check_requires_grad(jac, "jacobian", strict)
    return is_inputs_tuple, inputs, v, out, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` of a function with a single-element output.

    >>> import ember
    >>> from ember.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, out, jac = _gradient_for_products(
            func, inputs, v, create_graph, strict, "vhp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        products = _grad(jac, inputs, v, create_graph)
        products = _fill_in_zeros(products, inputs, strict, create_graph, "double_back")
    return (_postprocess((out,), create_graph)[0],
            _untuple(is_inputs_tuple, _postprocess(products, create_graph)))


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` of a function with a single-element output (computed as the
    derivative of ``v^T H`` with respect to ``v``).

    >>> import ember
    >>> from ember.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs, v, out, jac = _gradient_for_products(
            func, inputs, v, create_graph, strict, "hvp")
        dummies = tuple(zeros_like(t).requires_grad_() for t in inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        products = _grad(double_back, dummies, v, create_graph)
        products = _fill_in_zeros(products, inputs, strict, create_graph, "double_back_trick")
    return (_postprocess((out,), create_graph)[0],
            _untuple(is_inputs_tuple, _postprocess(products, create_graph)))
