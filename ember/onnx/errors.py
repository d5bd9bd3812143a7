"""The exceptions of :mod:`ember.onnx`, named as PyTorch's ``torch.onnx.errors``."""

__all__ = ["OnnxExporterError", "UnsupportedOperatorError"]


class OnnxExporterError(RuntimeError):
    """Errors raised by the ONNX exporter.

    >>> from ember.onnx.errors import OnnxExporterError
    >>> issubclass(OnnxExporterError, RuntimeError)
    True
    """


class UnsupportedOperatorError(OnnxExporterError):
    """The model ran an op that the exporter can't write as ONNX nodes.

    >>> from ember.onnx.errors import UnsupportedOperatorError
    >>> str(UnsupportedOperatorError("Exporting the operator 'ember.Cumsum' ..."))[:30]
    "Exporting the operator 'ember."
    """
