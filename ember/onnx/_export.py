"""Putting the ONNX model together: inputs, traced ops, outputs, opset, checks."""
from .._tensor import Tensor
from ..autograd import grad_mode
from ._convert import GraphBuilder
from ._trace import trace


def _example_inputs(args):
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args)
    for a in args:
        if not isinstance(a, Tensor):
            raise NotImplementedError(f"ember.onnx.export takes tensors as inputs, not "
                                      f"{type(a).__name__}")
    # fresh leaves: floating inputs require grad, so every op that reads them is recorded
    with grad_mode.no_grad():
        return tuple(a.detach().clone().requires_grad_(a.is_floating_point()) for a in args)


def _flat_outputs(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)) and all(isinstance(o, Tensor) for o in out):
        return list(out)
    raise NotImplementedError("ember.onnx.export exports models returning a tensor or a "
                              f"tuple/list of tensors, not {type(out).__name__}")


def _names(given, count, default):
    names = list(given or [])
    if len(names) > count:
        raise ValueError(f"{len(names)} names given for {count} {default}s")
    if count == 1 and not names:
        return [default]
    return names + [f"{default}_{i}" for i in range(len(names), count)]


def _dynamic_dims(dynamic_axes, name, ndim):
    axes = dynamic_axes.get(name)
    if axes is None:
        return {}
    if isinstance(axes, dict):
        return {int(k) % ndim: str(v) for k, v in axes.items()}
    return {int(k) % ndim: f"{name}_dynamic_axes_{int(k) % ndim + 1}" for k in axes}


def _value_info(onnx, name, t, dynamic_axes):
    dims = _dynamic_dims(dynamic_axes, name, max(t.dim(), 1))
    shape = [dims.get(i, s) for i, s in enumerate(t.shape)]
    elem = onnx.helper.np_dtype_to_tensor_dtype(t._data.dtype)
    return onnx.helper.make_tensor_value_info(name, elem, shape)


def build_model(onnx, model, args, kwargs, input_names, output_names, dynamic_axes, opset):
    inputs = _example_inputs(args)
    in_names = _names(input_names, len(inputs), "input")
    unknown = set(dynamic_axes) - set(in_names) - set(output_names or [])
    if unknown:
        raise ValueError(f"dynamic_axes names {sorted(unknown)} are neither input_names nor "
                         "output_names")
    named = {}
    was_training = getattr(model, "training", None)
    if hasattr(model, "named_parameters"):
        named.update({id(p): n for n, p in model.named_parameters()})
        named.update({id(t): n for n, t in model.named_buffers()})
        model.eval()
    try:
        ops, out = trace(model, inputs, kwargs)
    finally:
        if was_training:
            model.train()
    outputs = _flat_outputs(out)
    out_names = _names(output_names, len(outputs), "output")
    batch_dynamic = any(0 in _dynamic_dims(dynamic_axes, n, max(t.dim(), 1))
                        for n, t in zip(in_names, inputs))
    builder = GraphBuilder(onnx, opset, named, batch_dynamic)
    for name, t in zip(in_names, inputs):
        builder.bind(t, name)
    for op in ops:
        builder.add_op(op)
    _name_outputs(onnx, builder, [builder.value(t) for t in outputs], out_names)
    graph = onnx.helper.make_graph(
        builder.nodes, getattr(type(model), "__name__", "main_graph"),
        [_value_info(onnx, n, t, dynamic_axes) for n, t in zip(in_names, inputs)],
        [_value_info(onnx, n, t, dynamic_axes) for n, t in zip(out_names, outputs)],
        initializer=builder.initializers)
    proto = onnx.helper.make_model(graph, producer_name="ember",
                                   opset_imports=[onnx.helper.make_opsetid("", opset)])
    proto.ir_version = min(proto.ir_version, _max_ir_version(onnx, opset))
    onnx.checker.check_model(proto)
    return proto


def _name_outputs(onnx, builder, values, out_names):
    """Give the graph outputs their names: the node making a value is renamed where it can
    be (its value is no input, initializer or other output), else an Identity is added."""
    made_by_nodes = {o for n in builder.nodes for o in n.output}
    renames, used = {}, set()
    for value, name in zip(values, out_names):
        if value in made_by_nodes and value not in used:
            renames[value] = name
        else:
            builder.nodes.append(onnx.helper.make_node("Identity", [renames.get(value, value)],
                                                       [name], name=f"/Identity_{name}"))
        used.add(value)
    for n in builder.nodes:
        for field in (n.input, n.output):
            for i, v in enumerate(field):
                if v in renames:
                    field[i] = renames[v]


def _max_ir_version(onnx, opset):
    """The IR version of the onnx release that brought ``opset`` (runtimes reject files of
    an IR newer than they know)."""
    for _, ir, op, *_ in onnx.helper.VERSION_TABLE:
        if op == opset:
            return ir
    return onnx.IR_VERSION
