"""``ember.fx.passes.shape_prop``: ShapeProp records each node's shape and dtype.

>>> import ember
>>> from ember.fx import symbolic_trace
>>> from ember.fx.passes.shape_prop import ShapeProp
>>> gm = symbolic_trace(lambda x: ember.flatten(x, 1))
>>> _ = ShapeProp(gm).propagate(ember.zeros(2, 3, 4))
>>> gm.graph.nodes.__iter__().__next__().next.meta["tensor_meta"].shape
ember.Size([2, 12])
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ... import _tensor
from ..interpreter import Interpreter
from ..node import Node, ember_namespace, map_aggregate


class TensorMetadata(NamedTuple):
    """What ShapeProp records of a tensor value (the fields of torch.fx's)."""
    shape: Any
    dtype: Any
    requires_grad: bool
    stride: tuple
    memory_format: Any
    is_quantized: bool
    qparams: dict


def _extract_tensor_metadata(result: Any) -> TensorMetadata:
    memory_format = None
    if result.is_contiguous():
        memory_format = _contiguous_format()
    elif result.dim() in (4, 5):  # a channels-last layout, as torch.fx names it
        namespace = ember_namespace()
        for fmt in (namespace.channels_last, namespace.channels_last_3d):
            if result.is_contiguous(memory_format=fmt):
                memory_format = fmt
    return TensorMetadata(result.shape, result.dtype, result.requires_grad, result.stride(),
                          memory_format, False, {})


def _contiguous_format() -> Any:
    return ember_namespace().contiguous_format


class ShapeProp(Interpreter):
    """Runs the graph on example inputs and stores, per node, ``meta['tensor_meta']``
    (TensorMetadata, or a structure of them for tuple results) and ``meta['type']``."""

    def __init__(self, gm: Any, fake_mode: Any = None) -> None:
        if fake_mode is not None:
            raise NotImplementedError("ShapeProp: ember has no fake tensors (fake_mode)")
        super().__init__(gm)

    def run_node(self, n: Node) -> Any:
        """Evaluate ``n`` and record its result's metadata."""
        try:
            result = super().run_node(n)
        except Exception as e:
            raise RuntimeError(f"ShapeProp error for: node={n.format_node()} with "
                               f"meta={n.meta}") from e
        found_tensor = [False]

        def extract(obj: Any) -> Any:
            if isinstance(obj, _tensor.Tensor):
                found_tensor[0] = True
                return _extract_tensor_metadata(obj)
            return obj
        meta = map_aggregate(result, extract)
        if found_tensor[0]:
            n.meta["tensor_meta"] = meta
        n.meta["type"] = type(result)
        return result

    def propagate(self, *args: Any) -> Any:
        """Run the graph on ``args``, filling in the metadata; the graph's result."""
        return super().run(*args)
