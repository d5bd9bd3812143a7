"""``ember.fx``: symbolic tracing of modules into graphs, graph editing, and GraphModules
that run the edited graphs (torch.fx's core). See docs/fx.md.

>>> import ember
>>> from ember.fx import symbolic_trace
>>> gm = symbolic_trace(ember.nn.Sequential(ember.nn.Linear(3, 2), ember.nn.ReLU()))
>>> [node.op for node in gm.graph.nodes]
['placeholder', 'call_module', 'call_module', 'output']
"""
from . import passes
from ._symbolic_trace import Tracer, symbolic_trace, wrap
from .graph import Graph, PythonCode
from .graph_module import GraphModule
from .interpreter import Interpreter, Transformer
from .node import Node, map_aggregate, map_arg
from .proxy import Attribute, Proxy, TraceError, TracerBase

__all__ = ["Attribute", "Graph", "GraphModule", "Interpreter", "Node", "Proxy", "PythonCode",
           "TraceError", "Tracer", "TracerBase", "Transformer", "map_aggregate", "map_arg",
           "passes", "symbolic_trace", "wrap"]
