"""``backward()`` and ``grad()``: check their arguments, make the root gradients and
run the engine (``engine.run_backward``)."""
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
        raise RuntimeError("grad can be implicitly created only for scalar outputs"
                           if not grads else
                           f"Mismatch in number of gradients: got {len(grads)} gradients for "
                           f"{len(outputs)} outputs")
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
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if isinstance(inputs, GradientEdge) else _as_tuple(inputs)
    if allow_unused is None:
        allow_unused = materialize_grads
    for t in inputs:
        if not isinstance(t, GradientEdge) and not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_grads(outputs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    edges = _root_edges(outputs)
    result = run_backward(edges, grads, retain_graph, create_graph,
                          inputs=[(t.node, t.output_nr) if isinstance(t, GradientEdge)
                                  else gradient_edge(t) for t in inputs])
    out = []
    for t, g in zip(inputs, result):
        if g is None:
            if not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
            if materialize_grads and isinstance(t, GradientEdge):
                raise RuntimeError("materialize_grads cannot be used when the given input is "
                                   "a GradientEdge")
            if materialize_grads:
                g = zeros_like(t)
        out.append(g)
    del single
    return tuple(out)


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
