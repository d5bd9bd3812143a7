"""Jacobians, Hessians and their products of functions of tensors (PyTorch's
``torch.autograd.functional``), on reverse-mode autograd.

Inputs are a tensor or a tuple of tensors, and results take the same form. Results are
detached unless ``create_graph=True``, which keeps them differentiable (connected to inputs
that require grad). ``strict=True`` raises where a result would be identically zero.
"""
from .._creation import ones_like, zeros_like
from .._tensor import Tensor
from .. import _functions as F
from .backprop import grad as _autograd_grad
from .grad_mode import enable_grad


def _as_tuple(value, what, fn_name):
    is_tuple = isinstance(value, tuple)
    values = value if is_tuple else (value,)
    for v in values:
        if not isinstance(v, Tensor):
            if is_tuple:
                raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a "
                                f"tuple of Tensors but the value at index {values.index(v)} "
                                f"has type {type(v)}.")
            raise TypeError(f"The {what} given to {fn_name} must be either a Tensor or a tuple "
                            f"of Tensors but the given {what} has type {type(value)}.")
    return is_tuple, values


def _prepare_inputs(inputs, create_graph, need_graph=True):
    """Inputs the function sees: aliases keeping the user's graph under ``create_graph``,
    else fresh leaves."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad
                 else t.detach().requires_grad_(need_graph) for t in inputs)


def _finish(values, create_graph):
    return tuple(v if create_graph or v is None else v.detach() for v in values)


def _untuple(is_tuple, values):
    return values if is_tuple else values[0]


def _check_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got "
                               f"{len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for o, vi in zip(other, v):
        if o.shape != vi.shape:
            raise RuntimeError(f"v has invalid size: should be {o.shape} but got {vi.shape}.")


def _grad(outputs, inputs, grad_outputs, create_graph, retain_graph=None):
    """Per input the gradient, or None where it does not depend on the outputs."""
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return _autograd_grad([o for o, _ in pairs], inputs, [g for _, g in pairs],
                          allow_unused=True, create_graph=create_graph,
                          retain_graph=retain_graph)


def _fill(grads, like, strict, message):
    out = []
    for i, (g, t) in enumerate(zip(grads, like)):
        if g is None:
            if strict:
                raise RuntimeError(message.format(i))
            g = zeros_like(t)
        out.append(g)
    return tuple(out)


_INDEPENDENT = ("The output of the user-provided function is independent of input {}. This is "
                "not allowed in strict mode.")


def _call(func, inputs, fn_name):
    outputs = func(*inputs)
    return _as_tuple(outputs, "outputs of the user-provided function", fn_name)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``.

    >>> import ember
    >>> from ember.autograd.functional import vjp
    >>> vjp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.ones(2))
    (tensor([1., 4.]), tensor([2., 4.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _prepare_inputs(inputs, create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp")
        if v is None:
            if len(outputs) != 1 or outputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the user-provided function "
                                   "returns a single Tensor with a single element.")
            v = (ones_like(outputs[0]),)
        else:
            _, v = _as_tuple(v, "v", "vjp")
            _check_v(v, outputs, is_outputs_tuple)
        grads = _grad(outputs, inputs, v, create_graph)
        grads = _fill(grads, inputs, strict, _INDEPENDENT)
    return (_untuple(is_outputs_tuple, _finish(outputs, create_graph)),
            _untuple(is_inputs_tuple, _finish(grads, create_graph)))


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)``, by differentiating a vector-Jacobian product (exact).

    >>> import ember
    >>> from ember.autograd.functional import jvp
    >>> jvp(lambda x: x ** 2, ember.tensor([1., 2.]), ember.tensor([1., 0.]))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jvp")
        inputs = _prepare_inputs(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            v = (ones_like(inputs[0]),)
        else:
            _, v = _as_tuple(v, "v", "jvp")
            _check_v(v, inputs, is_inputs_tuple)
        is_outputs_tuple, outputs = _call(func, inputs, "jvp")
        dummies = tuple(zeros_like(o).requires_grad_() for o in outputs)
        pulled = _grad(outputs, inputs, dummies, create_graph=True)
        pulled = _fill(pulled, inputs, strict, _INDEPENDENT)
        products = _grad(pulled, dummies, v, create_graph)
        products = _fill(products, outputs, strict,
                         "The gradient with respect to the input is independent of entry {} in "
                         "the grad_outputs when using the double backward trick to compute "
                         "forward mode gradients. This is not allowed in strict mode.")
    return (_untuple(is_outputs_tuple, _finish(outputs, create_graph)),
            _untuple(is_outputs_tuple, _finish(products, create_graph)))


def _jacobian_blocks(outputs, inputs, create_graph, strict, message):
    """``blocks[i][j]``: d outputs[i] / d inputs[j], shaped ``out.shape + in.shape``."""
    blocks = []
    for i, out in enumerate(outputs):
        flat = out.reshape(-1)
        if strict and not out.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")
        rows = [[] for _ in inputs]
        for k in range(flat.numel()):
            grads = (_grad((flat[k],), inputs, (ones_like(flat[k]),), create_graph,
                           retain_graph=True) if flat.requires_grad else (None,) * len(inputs))
            for j, (g, t) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(message.format(i=i, j=j))
                    g = zeros_like(t)
                rows[j].append(g)
        blocks.append(tuple(
            (F.stack(r) if r else zeros_like(t).reshape(0, *t.shape)).reshape(
                tuple(out.shape) + tuple(t.shape)) for r, t in zip(rows, inputs)))
    return blocks


def _check_strategy(strategy, vectorize, strict):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". '
                             'Hint: If your function has more outputs than inputs, '
                             '"forward-mode" tends to be more performant. Otherwise, prefer to '
                             'use "reverse-mode".')
    if strict and vectorize:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    if strategy == "forward-mode" and not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse "
                                  "Hessian isonly implemented for `vectorize=True`.")
    if vectorize:
        raise NotImplementedError("jacobian: vectorize=True needs vmap, which ember does not "
                                  "have yet")


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
    _check_strategy(strategy, vectorize, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare_inputs(inputs, create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian")
        blocks = _jacobian_blocks(outputs, inputs, create_graph, strict,
                                  "Output {i} of the user-provided function is independent of "
                                  "input {j}. This is not allowed in strict mode.")
    blocks = [_untuple(is_inputs_tuple, _finish(row, create_graph)) for row in blocks]
    return _untuple(is_outputs_tuple, tuple(blocks))


_HESSIAN_INDEPENDENT = ("While computing the hessian, found that the jacobian of the "
                        "user-provided function with respect to input {} is independent of the "
                        "input. This is not allowed in strict mode. You should ensure that your "
                        "function is twice differentiable and that the jacobian depends on the "
                        "inputs (this would be violated by a linear function for example).")


def _scalar_output(func, inputs, fn_name):
    _, outputs = _call(func, inputs, fn_name)
    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           "contain a single element")
    return outputs[0].reshape(())


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
    _check_strategy(outer_jacobian_strategy, vectorize, strict)
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
        inputs = _prepare_inputs(inputs, create_graph)
        out = _scalar_output(func, inputs, "hessian")
        grads = _grad((out,), inputs, (ones_like(out),), create_graph=True)
        if strict:
            _fill(grads, inputs, strict, _HESSIAN_INDEPENDENT)
        grads = tuple(zeros_like(t) if g is None else g for g, t in zip(grads, inputs))
        blocks = _jacobian_blocks(grads, inputs, create_graph, strict,
                                  "The hessian of the user-provided function with respect to "
                                  "input {i} is independent of input {j}. This is not allowed "
                                  "in strict mode.")
    blocks = [_untuple(is_inputs_tuple, _finish(row, create_graph)) for row in blocks]
    return _untuple(is_inputs_tuple, tuple(blocks))


def _second_order_product(func, inputs, v, create_graph, strict, fn_name):
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
        inputs = _prepare_inputs(inputs, create_graph)
        if v is None:
            if len(inputs) != 1 or inputs[0].numel() != 1:
                raise RuntimeError("The vector v can only be None if the input to the "
                                   "user-provided function is a single Tensor with a single "
                                   "element.")
            v = (ones_like(inputs[0]),)
        else:
            _, v = _as_tuple(v, "v", fn_name)
            _check_v(v, inputs, is_inputs_tuple)
        out = _scalar_output(func, inputs, fn_name)
        grads = _grad((out,), inputs, (ones_like(out),), create_graph=True)
        grads = _fill(grads, inputs, strict, _INDEPENDENT)
        # the Hessian is symmetric: H v = v^T H; both are one more vjp of the gradient
        products = _grad(grads, inputs, v, create_graph)
        products = _fill(products, inputs, strict, _HESSIAN_INDEPENDENT)
    return (_finish((out,), create_graph)[0],
            _untuple(is_inputs_tuple, _finish(products, create_graph)))


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` of a function with a single-element output.

    >>> import ember
    >>> from ember.autograd.functional import vhp
    >>> vhp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    return _second_order_product(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` of a function with a single-element output.

    >>> import ember
    >>> from ember.autograd.functional import hvp
    >>> hvp(lambda x: (x ** 3).sum(), ember.tensor([1., 2.]), ember.ones(2))
    (tensor(9.), tensor([ 6., 12.]))
    """
    return _second_order_product(func, inputs, v, create_graph, strict, "hvp")
