"""``ember.onnx.export``: write a model as an ONNX file, as ``torch.onnx.export`` does.

The model runs once on the example inputs while its ops are recorded (``_trace``); each
recorded op becomes ONNX nodes (``_convert``) and the ``onnx`` package writes the file.
The ``onnx`` package (and ``onnxruntime`` to run the file) come with the ``onnx`` extra:
``pip install ember[onnx]``. The ops covered are listed in docs/onnx.md; any other op
raises :class:`~ember.onnx.errors.UnsupportedOperatorError` naming it.
"""
import enum

from . import errors
from ._export import build_model
from ._trace import is_in_onnx_export
from .errors import OnnxExporterError, UnsupportedOperatorError

__all__ = ["export", "is_in_onnx_export", "errors", "OnnxExporterError",
           "UnsupportedOperatorError", "TrainingMode"]


class TrainingMode(enum.IntEnum):
    """The mode a model is exported in (``export(training=...)``): ember exports EVAL, and
    PRESERVE of a model in eval mode.

    >>> import ember
    >>> ember.onnx.TrainingMode.EVAL
    <TrainingMode.EVAL: 0>
    """
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2

DEFAULT_OPSET = 18
MIN_OPSET = 10

# arguments of torch.onnx.export that select among torch's own exporters or tune them:
# accepted with these values (ember has one exporter); any other value raises
_TORCH_EXPORTER_CHOICES = {"dynamo": (True, False), "external_data": (True, False),
                           "optimize": (True, False), "report": (False,), "verify": (False,),
                           "profile": (False,), "dump_exported_program": (False,),
                           "export_params": (True,), "keep_initializers_as_inputs": (False,),
                           "do_constant_folding": (True,), "custom_opsets": (None,),
                           "export_modules_as_functions": (False,), "autograd_inlining": (True,),
                           "dynamic_shapes": (None,), "custom_translation_table": (None,)}


def export(model, args=(), f=None, *, kwargs=None, verbose=None, input_names=None,
           output_names=None, opset_version=None, dynamic_axes=None, training=None,
           **options):
    """Export ``model`` (an ``nn.Module`` or a function of tensors) to ONNX.

    ``args`` is a tensor or a tuple of tensors (the example inputs; ``kwargs`` more inputs by
    keyword, not graph inputs); the model runs once on them in eval mode (its mode is
    restored after). The graph is written to ``f`` (a path or a binary file object) when
    given; the ``onnx.ModelProto`` is returned either way. ``input_names`` /
    ``output_names`` name the graph's inputs and outputs; ``dynamic_axes`` maps such a name
    to the axes (a list, or a dict axis -> name) left symbolic, e.g. ``{"x": {0: "batch"}}``;
    ``opset_version`` defaults to 18 (10 or more). Parameters and buffers are stored as
    initializers under their ``state_dict`` names; other tensors the model makes from
    constants are folded in. ``torch.onnx.export``'s switches between its own exporters
    (``dynamo``, ``optimize``, ``external_data``) are accepted, its other tuning arguments
    at their defaults only (else NotImplementedError); ``training`` other
    than eval (``TrainingMode.EVAL``, or PRESERVE of a model in eval mode) raises
    NotImplementedError.

    >>> import io, ember
    >>> model = ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU())
    >>> proto = ember.onnx.export(model, (ember.randn(1, 3),), io.BytesIO(),
    ...                           input_names=["x"], output_names=["y"])
    >>> [n.op_type for n in proto.graph.node]
    ['Gemm', 'Relu']
    """
    try:
        import onnx
    except ImportError:
        raise ImportError("ember.onnx.export needs the onnx package: "
                          "pip install 'ember[onnx]' (onnx and onnxruntime)") from None
    for key, value in options.items():
        allowed = _TORCH_EXPORTER_CHOICES.get(key)
        if allowed is None:
            raise TypeError(f"export() got an unexpected keyword argument '{key}'")
        if not any(value is a or value == a for a in allowed):
            raise NotImplementedError(f"ember.onnx.export supports {key}={allowed[0]!r} only")
    mode = TrainingMode(int(training)) if training is not None else TrainingMode.EVAL
    if mode is TrainingMode.TRAINING or (mode is TrainingMode.PRESERVE
                                         and getattr(model, "training", False)):
        raise NotImplementedError("ember.onnx.export exports in eval mode only "
                                  "(training=TrainingMode.EVAL)")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    max_opset = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= max_opset:
        raise ValueError(f"Unsupported ONNX opset version: {opset_version} (ember.onnx.export "
                         f"writes opsets {MIN_OPSET} to {max_opset})")
    proto = build_model(onnx, model, args, kwargs or {}, input_names, output_names,
                        dynamic_axes or {}, opset)
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if f is not None:
        onnx.save_model(proto, f)
    return proto
