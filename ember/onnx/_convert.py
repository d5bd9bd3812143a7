"""Turning the recorded ops (``_trace``) into an ONNX graph with the ``onnx`` package.

Each recorded op maps to one or a few ONNX nodes; see docs/onnx.md for the list. Tensors
that the recording did not produce become initializers: parameters and buffers under
their names in the model, anything else (a constant made inside ``forward``) under
``onnx::Constant_<n>``, holding its value at tracing time.
"""
import math

import numpy as np

from ..backend import to_host
from ._trace import value_key
from .errors import UnsupportedOperatorError


def _pair(v, n=2):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class GraphBuilder:
    def __init__(self, onnx, opset, named_tensors, batch_dynamic):
        self.onnx, self.helper, self.opset = onnx, onnx.helper, opset
        self.nodes, self.initializers = [], []
        self.names = {}          # value_key(tensor) -> ONNX value name
        self.keep = []           # tensors whose ids key ``names``: kept alive
        self.named_tensors = named_tensors  # id(parameter or buffer) -> its name in the model
        self.batch_dynamic = batch_dynamic
        self.counter = 0
        self.keys = {}           # id(tensor) -> value_key when the op being added ran

    # ---- values -------------------------------------------------------------------------------
    def fresh(self, hint):
        self.counter += 1
        return f"/{hint}_{self.counter}"

    def key(self, t):
        key = self.keys.get(id(t))
        return value_key(t) if key is None else key

    def bind(self, t, name):
        self.names[self.key(t)] = name
        self.keep.append(t)

    def constant(self, array, hint="onnx::Constant"):
        name = f"{hint}_{len(self.initializers)}"
        self.initializers.append(self.onnx.numpy_helper.from_array(np.asarray(array), name))
        return name

    def value(self, t):
        """The ONNX name of tensor ``t``'s current value (an initializer for a tensor no
        recorded op produced)."""
        key = self.key(t)
        name = self.names.get(key)
        if name is None:
            if key[0] == "node":  # computed from the inputs by an op not recorded
                node = type(t._grad_fn).__name__
                raise _unsupported(node[:-len("Backward0")] if node.endswith("Backward0")
                                   else node, node, self.opset)
            data = to_host(t._data)
            model_name = self.named_tensors.get(id(t))
            if model_name is not None:
                self.initializers.append(self.onnx.numpy_helper.from_array(data, model_name))
                name = model_name
            else:
                name = self.constant(data)
            self.bind(t, name)
        return name

    def operand(self, v, like):
        """A tensor or a Python number (as a constant of ``like``'s dtype)."""
        if hasattr(v, "_data"):
            return self.value(v)
        return self.constant(np.asarray(v, dtype=like._data.dtype))

    def int64s(self, values):
        return self.constant(np.asarray(values, dtype=np.int64))

    def node(self, op_type, inputs, n_outputs=1, **attrs):
        outputs = [self.fresh(op_type) for _ in range(n_outputs)]
        self.nodes.append(self.helper.make_node(op_type, list(inputs), outputs,
                                                name=outputs[0].replace("/", "/" + op_type + "_"),
                                                **attrs))
        return outputs[0] if n_outputs == 1 else outputs

    # ---- ops ----------------------------------------------------------------------------------
    def add_op(self, op):
        self.keys = op.keys
        if op.kind == "primitive":
            handler = PRIMITIVE_HANDLERS.get(op.target.__name__)
            if handler is None:
                raise _unsupported(op.target.__name__, op.target._backward_cls.__name__,
                                   self.opset)
            out_names = handler(self, op.args, op.outputs)
        else:
            out_names = FUNCTIONAL_HANDLERS[op.target](self, op.args, op.outputs)
        if isinstance(out_names, str):
            out_names = [out_names]
        for t, name in zip(op.outputs, out_names):
            self.bind(t, name)
        self.keys = {}


def _unsupported(op_name, node_name, opset):
    return UnsupportedOperatorError(
        f"Exporting the operator 'ember.{op_name}' (autograd node {node_name}) to ONNX opset "
        f"version {opset} is not supported by ember.onnx.export. The ops it exports are "
        "listed in docs/onnx.md.")


# ---- primitive ops ----------------------------------------------------------------------------
def _binary(op_type):
    def handler(b, args, outs):
        x, y = args[0], args[1]
        like = x if hasattr(x, "_data") else y
        return b.node(op_type, [b.operand(x, like), b.operand(y, like)])
    return handler


def _add_sub(op_type):
    def handler(b, args, outs):
        x, y = args[0], args[1]
        alpha = args[2] if len(args) > 2 else 1
        like = x if hasattr(x, "_data") else y
        rhs = b.operand(y, like)
        if alpha != 1:
            rhs = b.node("Mul", [rhs, b.operand(alpha, like)])
        return b.node(op_type, [b.operand(x, like), rhs])
    return handler


def _div(b, args, outs):
    if len(args) > 2 and args[2] is not None:
        raise _unsupported(f"Div(rounding_mode={args[2]!r})", "DivBackward0", b.opset)
    return _binary("Div")(b, args, outs)


def _unary(op_type, **attrs):
    def handler(b, args, outs):
        return b.node(op_type, [b.value(args[0])], **attrs)
    return handler


def _rsqrt(b, args, outs):
    return b.node("Reciprocal", [b.node("Sqrt", [b.value(args[0])])])


def _silu(b, args, outs):
    x = b.value(args[0])
    return b.node("Mul", [x, b.node("Sigmoid", [x])])


def _leaky_relu(b, args, outs):
    return b.node("LeakyRelu", [b.value(args[0])], alpha=float(args[1]))


def _gelu(b, args, outs):
    x, approximate = args[0], (args[1] if len(args) > 1 else "none")
    if b.opset >= 20:
        return b.node("Gelu", [b.value(x)], approximate=approximate)
    xv, c = b.value(x), lambda v: b.operand(v, x)
    if approximate == "tanh":  # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        cube = b.node("Mul", [b.node("Mul", [xv, xv]), xv])
        inner = b.node("Add", [xv, b.node("Mul", [cube, c(0.044715)])])
        core = b.node("Tanh", [b.node("Mul", [inner, c(math.sqrt(2 / math.pi))])])
    else:  # 0.5 x (1 + erf(x / sqrt(2)))
        core = b.node("Erf", [b.node("Div", [xv, c(math.sqrt(2.0))])])
    return b.node("Mul", [b.node("Mul", [xv, c(0.5)]), b.node("Add", [core, c(1.0)])])


def _clip(lo_index, hi_index):
    def handler(b, args, outs):
        x = args[0]
        lo = args[lo_index] if len(args) > lo_index else None
        hi = args[hi_index] if len(args) > hi_index else None
        if b.opset < 11:  # bounds were attributes then
            bounds = {} if lo is None else {"min": float(lo)}
            bounds.update({} if hi is None else {"max": float(hi)})
            return b.node("Clip", [b.value(x)], **bounds)
        inputs = [b.value(x), "" if lo is None else b.operand(lo, x),
                  "" if hi is None else b.operand(hi, x)]
        while inputs[-1] == "":
            inputs.pop()
        return b.node("Clip", inputs)
    return handler


def _softmax(op_type):
    def handler(b, args, outs):
        if len(args) > 2 and args[2] is not None:
            raise _unsupported(f"{op_type}(dtype=...)", f"{op_type}Backward0", b.opset)
        x = args[0]
        axis = int(args[1]) % max(x.dim(), 1)
        if b.opset >= 13 or axis == x.dim() - 1:
            return b.node(op_type, [b.value(x)], axis=axis)
        # before opset 13 the op flattened the input to 2-D at axis: move the axis last
        perm = [d for d in range(x.dim()) if d != axis] + [axis]
        back = [perm.index(d) for d in range(x.dim())]
        moved = b.node("Transpose", [b.value(x)], perm=perm)
        return b.node("Transpose", [b.node(op_type, [moved], axis=x.dim() - 1)], perm=back)
    return handler


def _reshape(b, args, outs):
    """Every view-like op (view, reshape, flatten, squeeze, unsqueeze) as a Reshape to the
    output's shape; a leading size kept from the input is written 0 (copied at run time), a
    changed one -1 when the batch is dynamic, so a dynamic batch size carries through."""
    return _reshape_value(b, b.value(args[0]), list(args[0].shape), list(outs[0].shape))


def _reshape_value(b, value, in_shape, out_shape):
    if out_shape and in_shape and out_shape[0] == in_shape[0]:
        out_shape[0] = 0
    elif out_shape and b.batch_dynamic and -1 not in out_shape:
        out_shape[0] = -1
    return b.node("Reshape", [value, b.int64s(out_shape)])


_INT64_MAX = 2 ** 63 - 1


def _basic_index(b, args, outs):
    """``x[ints, slices, None, ...]``: a Slice over the indexed axes, then a Reshape to the
    result's shape (dropping the int axes, adding the None ones)."""
    x, index = args[0], tuple(args[1])
    if Ellipsis in index:
        at = index.index(Ellipsis)
        used = sum(1 for i in index if i is not None and i is not Ellipsis)
        index = index[:at] + (slice(None),) * (x.dim() - used) + index[at + 1:]
    starts, ends, axes, steps = [], [], [], []
    axis = 0
    for item in index:
        if item is None:
            continue
        if isinstance(item, slice):
            step = 1 if item.step is None else item.step
            if (item.start, item.stop, step) != (None, None, 1):
                starts.append(0 if item.start is None else item.start)
                ends.append(_INT64_MAX if item.stop is None else item.stop)
                axes.append(axis)
                steps.append(step)
        else:  # an int: one element, its axis dropped by the reshape
            i = int(item)
            starts.append(i)
            ends.append(_INT64_MAX if i == -1 else i + 1)
            axes.append(axis)
            steps.append(1)
        axis += 1
    value = b.value(x)
    if axes:
        value = b.node("Slice", [value, b.int64s(starts), b.int64s(ends), b.int64s(axes),
                                 b.int64s(steps)])
    sliced_shape = list(x.shape)
    for a, st, en, sp in zip(axes, starts, ends, steps):
        sliced_shape[a] = len(range(*slice(st, min(en, x.shape[a] + 1), sp).indices(x.shape[a])))
    if sliced_shape == list(outs[0].shape):
        return value if axes else b.node("Identity", [value])
    return _reshape_value(b, value, sliced_shape, list(outs[0].shape))


def _permute(b, args, outs):
    x, dims = args[0], list(args[1])
    return b.node("Transpose", [b.value(x)], perm=[d % x.dim() for d in dims])


def _expand(b, args, outs):
    return b.node("Expand", [b.value(args[0]), b.int64s(list(outs[0].shape))])


def _cat(b, args, outs):
    dim, tensors = args[0], args[1:]
    return b.node("Concat", [b.value(t) for t in tensors], axis=int(dim))


def _linear_nodes(b, x, w, bias):
    if x.dim() == 2:
        inputs = [b.value(x), b.value(w)] + ([] if bias is None else [b.value(bias)])
        return b.node("Gemm", inputs, transB=1)
    out = b.node("MatMul", [b.value(x), b.node("Transpose", [b.value(w)], perm=[1, 0])])
    return out if bias is None else b.node("Add", [out, b.value(bias)])


def _reduce(op_type):
    def handler(b, args, outs):
        x = args[0]
        dim = args[1] if len(args) > 1 else None
        keepdim = bool(args[2]) if len(args) > 2 else False
        if len(args) > 3 and args[3] is not None:
            raise _unsupported(f"{op_type}(dtype=...)", f"{op_type}Backward0", b.opset)
        axes = list(range(x.dim())) if dim is None else \
            [d % x.dim() for d in (dim if isinstance(dim, (tuple, list)) else (dim,))]
        return _reduce_node(b, "ReduceMean" if op_type == "Mean" else "ReduceSum", b.value(x),
                            axes, keepdim)
    return handler


def _reduce_node(b, onnx_op, value, axes, keepdim):
    # axes became an input: ReduceSum in opset 13, the other reductions in opset 18
    if b.opset >= (13 if onnx_op == "ReduceSum" else 18):
        return b.node(onnx_op, [value, b.int64s(axes)], keepdims=int(keepdim))
    return b.node(onnx_op, [value], axes=list(axes), keepdims=int(keepdim))


def _lstm_layer(b, args, outs):
    """One fused LSTM layer direction (``_ops.rnn_ops.LSTMLayer``) as ONNX's ``LSTM``, whose
    gates come in the order i, o, f, c (PyTorch's: i, f, g, o) with a direction axis in
    front of the weights, biases and states."""
    x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse = args
    hidden = w_hh.shape[1]
    rows = b.int64s(np.concatenate([np.arange(k * hidden, (k + 1) * hidden)
                                    for k in (0, 3, 1, 2)]))

    def gates(t):
        return b.node("Gather", [b.value(t), rows], axis=0)

    def with_direction(value, shape):
        return b.node("Reshape", [value, b.int64s(shape)])
    w = with_direction(gates(w_ih), [1, 4 * hidden, -1])
    r = with_direction(gates(w_hh), [1, 4 * hidden, hidden])
    bias = "" if b_ih is None else with_direction(
        b.node("Concat", [gates(b_ih), gates(b_hh)], axis=0), [1, 8 * hidden])
    states = [with_direction(b.value(t), [1, -1, hidden]) for t in (h0, c0)]
    y, y_h, y_c = b.node("LSTM", [b.value(x), w, r, bias, ""] + states, n_outputs=3,
                         hidden_size=hidden, direction="reverse" if reverse else "forward")
    # Y is (steps, 1, batch, hidden), Y_h and Y_c (1, batch, hidden): the axis dropped
    return [b.node("Reshape", [y, b.int64s([0, -1, hidden])]),
            b.node("Reshape", [y_h, b.int64s([-1, hidden])]),
            b.node("Reshape", [y_c, b.int64s([-1, hidden])])]


PRIMITIVE_HANDLERS = {
    "Add": _add_sub("Add"), "Sub": _add_sub("Sub"), "Mul": _binary("Mul"), "Div": _div,
    "Pow": _binary("Pow"), "Maximum": _binary("Max"), "Minimum": _binary("Min"),
    "Matmul": _binary("MatMul"), "Mm": _binary("MatMul"), "Bmm": _binary("MatMul"),
    "Linear": lambda b, a, o: _linear_nodes(b, a[0], a[1], a[2]),
    "LinearNoBias": lambda b, a, o: _linear_nodes(b, a[0], a[1], None),
    "Neg": _unary("Neg"), "Exp": _unary("Exp"), "Log": _unary("Log"), "Sqrt": _unary("Sqrt"),
    "Abs": _unary("Abs"), "Reciprocal": _unary("Reciprocal"), "Rsqrt": _rsqrt,
    "Sin": _unary("Sin"), "Cos": _unary("Cos"), "Erf": _unary("Erf"),
    "Floor": _unary("Floor"), "Ceil": _unary("Ceil"), "Sign": _unary("Sign"),
    "Relu": _unary("Relu"), "Sigmoid": _unary("Sigmoid"), "Tanh": _unary("Tanh"),
    "Silu": _silu, "LeakyRelu": _leaky_relu, "Gelu": _gelu,
    "Hardtanh": _clip(1, 2), "Clamp": _clip(1, 2),
    "Softmax": _softmax("Softmax"), "LogSoftmax": _softmax("LogSoftmax"),
    "Clone": _unary("Identity"),
    "View": _reshape, "ReshapeCopy": _reshape, "Unsqueeze": _reshape, "Squeeze": _reshape,
    "SqueezeDim": _reshape, "SqueezeDims": _reshape, "UnsqueezeIndex": _basic_index,
    "BasicIndex": _basic_index, "SelectIndex": _basic_index, "AliasIndex": _basic_index,
    "Permute": _permute, "Transpose": _permute, "T": _permute,
    "Expand": _expand, "Cat": _cat,
    "Mean": _reduce("Mean"), "MeanAll": _reduce("Mean"), "Sum": _reduce("Sum"),
    "SumAll": _reduce("Sum"), "LSTMLayer": _lstm_layer,
}


# ---- nn.functional ops ------------------------------------------------------------------------
def _conv(nd):
    def handler(b, a, outs):
        x, w = a["input"], a["weight"]
        if x.dim() != nd + 2:
            raise _unsupported(f"conv{nd}d on an unbatched input", "ConvolutionBackward0",
                               b.opset)
        kernel = list(w.shape[2:])
        stride, dilation = _pair(a["stride"], nd), _pair(a["dilation"], nd)
        padding = a["padding"]
        if padding == "valid":
            pads = [0] * (2 * nd)
        elif padding == "same":  # the odd pixel goes after, as PyTorch pads
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            pads = [t // 2 for t in total] + [t - t // 2 for t in total]
        else:
            pads = list(_pair(padding, nd)) * 2
        inputs = [b.value(x), b.value(w)] + ([] if a["bias"] is None else [b.value(a["bias"])])
        return b.node("Conv", inputs, kernel_shape=kernel, strides=list(stride), pads=pads,
                      dilations=list(dilation), group=int(a["groups"]))
    return handler


def _max_pool2d(b, a, outs):
    if a["return_indices"]:
        raise _unsupported("max_pool2d(return_indices=True)",
                           "MaxPool2DWithIndicesBackward0", b.opset)
    kernel = _pair(a["kernel_size"])
    stride = kernel if a["stride"] in (None, (), []) else _pair(a["stride"])
    return b.node("MaxPool", [b.value(a["input"])], kernel_shape=list(kernel),
                  strides=list(stride), pads=list(_pair(a["padding"])) * 2,
                  dilations=list(_pair(a["dilation"])), ceil_mode=int(a["ceil_mode"]))


def _avg_pool2d(b, a, outs):
    if a["divisor_override"] is not None:
        raise _unsupported("avg_pool2d(divisor_override=...)", "AvgPool2DBackward0", b.opset)
    kernel = _pair(a["kernel_size"])
    stride = kernel if a["stride"] in (None, (), []) else _pair(a["stride"])
    return b.node("AveragePool", [b.value(a["input"])], kernel_shape=list(kernel),
                  strides=list(stride), pads=list(_pair(a["padding"])) * 2,
                  ceil_mode=int(a["ceil_mode"]), count_include_pad=int(a["count_include_pad"]))


def _adaptive_avg_pool2d(b, a, outs):
    x = a["input"]
    out_hw = list(outs[0].shape[-2:])
    if out_hw == [1, 1]:
        return b.node("GlobalAveragePool", [b.value(x)])
    in_hw = list(x.shape[-2:])
    if any(i % o for i, o in zip(in_hw, out_hw)):
        raise _unsupported("adaptive_avg_pool2d with an output size that does not divide the "
                           "input size", "AdaptiveAvgPool2DBackward0", b.opset)
    kernel = [i // o for i, o in zip(in_hw, out_hw)]
    return b.node("AveragePool", [b.value(x)], kernel_shape=kernel, strides=kernel)


def _batch_norm(b, a, outs):
    x = a["input"]
    if a["training"] or a["running_mean"] is None:
        raise _unsupported("batch_norm in training mode (batch statistics)",
                           "NativeBatchNormBackward0", b.opset)
    c = x.shape[1]
    dtype = x._data.dtype
    scale = b.constant(np.ones(c, dtype)) if a["weight"] is None else b.value(a["weight"])
    shift = b.constant(np.zeros(c, dtype)) if a["bias"] is None else b.value(a["bias"])
    return b.node("BatchNormalization", [b.value(x), scale, shift, b.value(a["running_mean"]),
                                         b.value(a["running_var"])], epsilon=float(a["eps"]))


def _layer_norm(b, a, outs):
    x = a["input"]
    shape = a["normalized_shape"]
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dtype = x._data.dtype
    scale = b.constant(np.ones(shape, dtype)) if a["weight"] is None else b.value(a["weight"])
    if b.opset >= 17:
        inputs = [b.value(x), scale] + ([] if a["bias"] is None else [b.value(a["bias"])])
        return b.node("LayerNormalization", inputs, axis=-len(shape), epsilon=float(a["eps"]))
    # before opset 17: (x - mean) / sqrt(biased variance + eps) * weight + bias
    axes = list(range(x.dim() - len(shape), x.dim()))
    centered = b.node("Sub", [b.value(x), _reduce_node(b, "ReduceMean", b.value(x), axes, True)])
    var = _reduce_node(b, "ReduceMean", b.node("Mul", [centered, centered]), axes, True)
    std = b.node("Sqrt", [b.node("Add", [var, b.constant(np.asarray(a["eps"], dtype))])])
    out = b.node("Mul", [b.node("Div", [centered, std]), scale])
    return out if a["bias"] is None else b.node("Add", [out, b.value(a["bias"])])


def _embedding(b, a, outs):
    if a["max_norm"] is not None:
        raise _unsupported("embedding(max_norm=...)", "EmbeddingBackward0", b.opset)
    return b.node("Gather", [b.value(a["weight"]), b.value(a["input"])], axis=0)


FUNCTIONAL_HANDLERS = {
    "linear": lambda b, a, o: _linear_nodes(b, a["input"], a["weight"], a["bias"]),
    "conv1d": _conv(1), "conv2d": _conv(2), "max_pool2d": _max_pool2d,
    "avg_pool2d": _avg_pool2d, "adaptive_avg_pool2d": _adaptive_avg_pool2d,
    "batch_norm": _batch_norm, "layer_norm": _layer_norm, "embedding": _embedding,
}
