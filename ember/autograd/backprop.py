"""``backward()`` and ``grad()``: check their arguments, make the root gradients and
run the engine (``engine.run_backward``)."""
import warnings
from collections.abc import Mapping

from .._creation import ones_like, zeros_like
from .._tensor import Tensor
from ..backend import get_array_module
from ..backend.dtypes import is_float_np
from . import dispatch as _dispatch
from .engine import run_backward
from .graph import gradient_edge, run_post_accumulate_hooks, GradientEdge
from .batching import hooks as _batching, get_vmap as _get_vmap


_dispatch_active = _dispatch.active


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, Tensor):
        return (x,)
    return tuple(x)


def _ones_for(out):
    """The implicit gradient of a scalar output: a 1 of its dtype."""
    data = out._data
    if data.size != 1:
        raise RuntimeError("grad can be implicitly created only for scalar outputs")
    if not is_float_np(data.dtype):
        raise RuntimeError("grad can be implicitly created only for real scalar outputs but "
                           f"got {out.dtype!r}")
    if _dispatch_active[0]:  # an op a dispatch mode or subclass sees, as in PyTorch
        return _dispatch.ones_like[0](out)
    # array(1) rather than ones(): one C call instead of two Python frames
    one = get_array_module(data).array(1, dtype=data.dtype)
    return Tensor._make(one if data.ndim == 0 else one.reshape(data.shape))


def _make_grads(outputs, grads):
    if grads is None and len(outputs) == 1 and outputs[0]._requires_grad:
        return [_ones_for(outputs[0])]  # the common ``loss.backward()``
    grads = _as_tuple(grads) if grads is not None else (None,) * len(outputs)
    if len(grads) != len(outputs):
        if len(grads) < len(outputs):  # PyTorch's engine's check, after pairing them by zip
            raise RuntimeError(f"got {len(outputs)} tensors and {len(grads)} gradients")
        grads = grads[:len(outputs)]  # zip drops the extra gradients, as PyTorch's does
    result = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if g is None:
            g = _ones_for(out) if out._requires_grad else ones_like(out)
        elif not isinstance(g, Tensor):
            raise TypeError("gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        elif g.shape != out.shape:
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} "
                               f"and output[{i}] has a shape of {out.shape}.")
        result.append(g)
    return result


def _root_edges(outputs):
    edges = []
    for i, t in enumerate(outputs):
        if not t._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have "
                               "a grad_fn")
        edges.append(gradient_edge(t))
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Sum the gradients of ``tensors`` into the ``.grad`` of the graph's leaves
    (or only of ``inputs``). Frees the graph unless ``retain_graph=True``."""
    if _batching[0] is not None and _batching[0].active():
        raise RuntimeError("backward() called inside a functorch transform. This is not "
                           "supported, please use functorch.grad or functorch.vjp instead or "
                           "call backward() outside of functorch transforms.")
    tensors = _as_tuple(tensors)
    if grad_tensors is None:
        grad_tensors = grad_variables
    if inputs is not None:
        inputs = _inputs_tuple(inputs, "backward")
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    grads = _make_grads(tensors, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(tensors)
    inputs = _as_tuple(inputs)
    if not inputs:
        run_backward(edges, grads, retain_graph, create_graph)
        return
    captured = run_backward(edges, grads, retain_graph, create_graph,
                            inputs=[gradient_edge(t) for t in inputs])
    for t, g in zip(inputs, captured):
        if g is None:
            continue
        if not create_graph:
            g = g.detach()
        t._grad = g.clone() if t._grad is None else t._grad + g
        ref = t._accumulator if t._grad_fn is None else None
        node = ref() if ref is not None else None
        if node is not None and node._post_accumulate_hooks:
            run_post_accumulate_hooks(node)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False, materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    With ``create_graph=True`` the result is itself differentiable, which gives
    higher-order derivatives.
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if type(inputs) is dict:  # a dict in, a dict out (PyTorch's)
        grads = grad(outputs, tuple(inputs.values()), grad_outputs, retain_graph, create_graph,
                     only_inputs, allow_unused, is_grads_batched, materialize_grads)
        return dict(zip(inputs, grads))
    if not only_inputs:
        warnings.warn("only_inputs argument is deprecated and is ignored now (defaults to "
                      "True). To accumulate gradient for other parts of the graph, please use "
                      "torch.autograd.backward.", FutureWarning, stacklevel=2)
    if is_grads_batched:
        return _grads_batched(outputs, inputs, grad_outputs, retain_graph, create_graph,
                              allow_unused, materialize_grads)
    if _batching[0] is not None:  # inside vmap: per-sample gradients of batched tensors
        out = _batching[0].grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                                allow_unused, materialize_grads)
        if out is not NotImplemented:
            return out
    return plain_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                      materialize_grads)


def plain_grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
               allow_unused=None, materialize_grads=False):
    """``grad`` without vmap's interception (vmap runs it with batched grad_outputs)."""
    outputs = _as_tuple(outputs)
    inputs = (inputs,) if isinstance(inputs, GradientEdge) else _inputs_tuple(inputs, "grad")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _make_grads(outputs, grad_outputs)  # its errors come first, as in PyTorch
    for t in inputs:
        if not isinstance(t, GradientEdge) and not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outputs)
    result = run_backward(edges, grads, retain_graph, create_graph,
                          inputs=[(t.node, t.output_nr) if isinstance(t, GradientEdge)
                                  else gradient_edge(t) for t in inputs])
    out = []
    for i, (t, g) in enumerate(zip(inputs, result)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is "
                                   "the desired behavior.")
            if materialize_grads and isinstance(t, GradientEdge):
                raise RuntimeError("materialize_grads cannot be used when the given input is "
                                   "a GradientEdge")
            if materialize_grads:
                g = zeros_like(t)
        out.append(g)
    return tuple(out)


def _inputs_tuple(inputs, caller):
    """``inputs`` of grad()/backward() as a tuple: a tensor, a sequence, or a dict's values
    (PyTorch refuses other mappings)."""
    if type(inputs) is dict:
        return tuple(inputs.values())
    if isinstance(inputs, Mapping):
        raise TypeError(f"`inputs` argument to `{caller}()` must be a dict, not "
                        f"{type(inputs).__name__}. Other Mapping types are not supported.")
    return _as_tuple(inputs)


def _grads_batched(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                   materialize_grads):
    """``grad(..., is_grads_batched=True)``: dim 0 of each grad_output is a batch of
    vectors; one vector-Jacobian product per vector, run under vmap."""
    vmap = _get_vmap()
    if vmap is None or grad_outputs is None:
        raise RuntimeError("is_grads_batched=True needs grad_outputs (and ember.func.vmap)")
    outputs, gos = _as_tuple(outputs), _as_tuple(grad_outputs)

    unused = []

    def one(*vectors):  # vmap returns tensors only: the inputs left unused pass as None
        grads = grad(outputs, inputs, vectors, retain_graph=True, create_graph=create_graph,
                     allow_unused=allow_unused, materialize_grads=materialize_grads)
        unused[:] = [g is None for g in grads]
        return tuple(g for g in grads if g is not None)
    used = iter(vmap(one)(*gos))
    return tuple(None if u else next(used) for u in unused)
