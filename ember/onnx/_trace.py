"""Recording the ops a model runs, for export.

The model runs once on the example inputs (made to require grad) with two recorders in
place, both installed only for that run and removed after it, so ordinary runs pay nothing:

* the autograd graph builder ``_ops.primitive._connect`` (which every built-in op calls
  when an input requires grad, once the compiled apply is switched off for the run) is
  wrapped to note each op: its Primitive class, its
  arguments (tensors and the op's parameters) and its output tensors;
* the ``nn.functional`` functions whose kernels are internal (convolution, pooling,
  normalization, embedding, linear) are wrapped to note one op per call, with the
  function's bound arguments; the primitives they run inside are not noted.

Values are named by their place in the autograd graph (``(grad_fn, output_nr)``), not by
tensor identity, so an in-place op (``relu_``), which gives the tensor a new node, reads as
a new value. Tensors the recording did not produce are model inputs, parameters and
buffers (named by the model) or constants (folded in with their values at tracing time).
"""
import inspect

from .._ops import primitive as _primitive
from ..autograd import grad_mode
from ..nn import functional as F

# nn.functional entry points recorded as one op each
FUNCTIONAL_OPS = ("linear", "conv1d", "conv2d", "max_pool2d", "avg_pool2d",
                  "adaptive_avg_pool2d", "batch_norm", "layer_norm", "embedding")

_active = []  # the Recorder of the export in progress (one at a time)


def is_in_onnx_export():
    """Whether an :func:`ember.onnx.export` is tracing a model right now.

    >>> import ember
    >>> ember.onnx.is_in_onnx_export()
    False
    """
    return bool(_active)


def value_key(t):
    """Where a tensor's value sits in the recorded graph: its autograd node and output
    number, or the tensor itself for a leaf."""
    fn = t._grad_fn
    return ("node", id(fn), t._output_nr) if fn is not None else ("tensor", id(t))


class Op:
    """One recorded op: ``kind`` is ``"primitive"`` (``target`` the Primitive class, ``args``
    its positional arguments) or ``"functional"`` (``target`` the function name, ``args``
    its bound arguments by name); ``outputs`` the tensors it produced. ``keys`` holds each
    tensor's ``value_key`` when the op ran (a later in-place op moves a tensor on)."""

    def __init__(self, kind, target, args, outputs):
        self.kind, self.target, self.args, self.outputs = kind, target, args, outputs
        values = args.values() if isinstance(args, dict) else args
        self.keys = {id(t): value_key(t) for t in (*values, *outputs) if hasattr(t, "_grad_fn")}
        # the nodes keyed by id stay alive as long as the record
        self.nodes = [t._grad_fn for t in (*values, *outputs) if hasattr(t, "_grad_fn")]


class Recorder:
    def __init__(self):
        self.ops = []
        self.depth = 0  # > 0 inside a recorded functional call
        self.saved = {}

    def __enter__(self):
        if _active:
            raise RuntimeError("ember.onnx.export is already tracing a model (exports can't "
                               "run concurrently)")
        _active.append(self)
        original_connect = _primitive._connect

        def connect(ctx, cls, args, outs):
            original_connect(ctx, cls, args, outs)
            if self.depth == 0:
                self.ops.append(Op("primitive", cls, args, outs))
        self.saved["_connect"] = original_connect
        _primitive._connect = connect
        # the compiled apply records nodes without calling _connect: the Python one does
        self.native_apply = _primitive.set_native_apply(False)
        for name in FUNCTIONAL_OPS:
            fn = getattr(F, name)
            self.saved[name] = fn
            setattr(F, name, self.recording(name, fn))
        return self

    def __exit__(self, *exc):
        _primitive._connect = self.saved.pop("_connect")
        _primitive.set_native_apply(self.native_apply)
        for name, fn in self.saved.items():
            setattr(F, name, fn)
        self.saved.clear()
        _active.remove(self)

    def recording(self, name, fn):
        signature = inspect.signature(fn)

        def wrapper(*args, **kwargs):
            if self.depth:
                return fn(*args, **kwargs)
            self.depth += 1
            try:
                out = fn(*args, **kwargs)
            finally:
                self.depth -= 1
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            outs = out if isinstance(out, tuple) else (out,)
            self.ops.append(Op("functional", name, dict(bound.arguments), outs))
            return out
        wrapper.__wrapped__ = fn
        return wrapper


def trace(model, args, kwargs):
    """Run ``model(*args, **kwargs)`` recording its ops: ``(ops, outputs)``."""
    with grad_mode.enable_grad(), Recorder() as recorder:
        out = model(*args, **kwargs)
    return recorder.ops, out
