"""``ember.fx.subgraph_rewriter``: ``replace_pattern`` finds every occurrence of a pattern
graph in a GraphModule's graph and puts a replacement graph in its place.

The pattern and the replacement are functions (traced) or GraphModules with the same
inputs; a pattern input matches any value, other nodes match nodes of the same kind and
target whose arguments match in turn. Matches do not overlap, and a match whose inner values
are used outside it is skipped (replacing it would lose them).

>>> import ember
>>> from ember.fx import symbolic_trace
>>> from ember.fx.subgraph_rewriter import replace_pattern
>>> gm = symbolic_trace(lambda x, y: ember.relu(x + y) * 2)
>>> matches = replace_pattern(gm, lambda a, b: ember.relu(a + b),
...                           lambda a, b: ember.clamp(a + b, min=0))
>>> [n.name for n in gm.graph.nodes]
['x', 'y', 'add_1', 'clamp', 'mul', 'output']
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from ._symbolic_trace import symbolic_trace
from .graph_module import GraphModule
from .node import Node


class Match(NamedTuple):
    """One replaced occurrence: the pattern's output node (``anchor``, as torch.fx reports
    it) and each pattern node's matched node (``nodes_map``)."""
    anchor: Node
    nodes_map: dict


def _graph_of(fn: Callable | GraphModule) -> Any:
    return fn.graph if isinstance(fn, GraphModule) else symbolic_trace(fn).graph


class _Matcher:
    def __init__(self, pattern_graph: Any) -> None:
        self.placeholders = [n for n in pattern_graph.nodes if n.op == "placeholder"]
        output = [n for n in pattern_graph.nodes if n.op == "output"][0]
        if not isinstance(output.args[0], Node):
            raise NotImplementedError("replace_pattern: patterns with several outputs")
        self.pattern_anchor = output.args[0]

    def match_at(self, node: Node) -> dict | None:
        nodes_map: dict = {}
        if not self._match_node(self.pattern_anchor, node, nodes_map):
            return None
        inner = {n for p, n in nodes_map.items() if p.op != "placeholder"}
        for p, n in nodes_map.items():
            if p.op == "placeholder" or n is node:
                continue
            if any(user not in inner for user in n.users):
                return None  # an inner value is used outside the match
        return nodes_map

    def _match_node(self, pn: Node, gn: Node, nodes_map: dict) -> bool:
        if pn in nodes_map:
            return nodes_map[pn] is gn
        if pn.op == "placeholder":
            nodes_map[pn] = gn
            return True
        if pn.op != gn.op or pn.target != gn.target or gn.op in ("placeholder", "output"):
            return False
        nodes_map[pn] = gn
        saved = dict(nodes_map)
        if self._match_args(pn.args, gn.args, nodes_map) and \
                self._match_args(pn.kwargs, gn.kwargs, nodes_map):
            return True
        nodes_map.clear()
        nodes_map.update(saved)
        del nodes_map[pn]
        return False

    def _match_args(self, pa: Any, ga: Any, nodes_map: dict) -> bool:
        if isinstance(pa, Node):
            return isinstance(ga, Node) and self._match_node(pa, ga, nodes_map)
        if isinstance(pa, (list, tuple)):
            return isinstance(ga, (list, tuple)) and len(pa) == len(ga) and all(
                self._match_args(p, g, nodes_map) for p, g in zip(pa, ga))
        if isinstance(pa, dict):
            return isinstance(ga, dict) and pa.keys() == ga.keys() and all(
                self._match_args(pa[k], ga[k], nodes_map) for k in pa)
        return not isinstance(ga, Node) and type(pa) is type(ga) and pa == ga


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule,
                    replacement: Callable | GraphModule) -> list:
    """Replace each occurrence of ``pattern`` in ``gm`` by ``replacement`` (recompiling
    ``gm``); returns the Matches."""
    matcher = _Matcher(_graph_of(pattern))
    replacement_graph = _graph_of(replacement)
    for node in replacement_graph.nodes:
        if node.op in ("get_attr", "call_module"):
            raise NotImplementedError("replace_pattern: replacements that use module "
                                      "attributes or submodules")
    graph = gm.graph
    matches, taken = [], set()
    for node in list(graph.nodes):
        nodes_map = matcher.match_at(node)
        if nodes_map is None:
            continue
        inner = [n for p, n in nodes_map.items() if p.op != "placeholder"]
        if any(n in taken for n in inner):
            continue
        taken.update(inner)
        matches.append(Match(matcher.pattern_anchor, nodes_map))
    replacement_inputs = [n for n in replacement_graph.nodes if n.op == "placeholder"]
    if len(replacement_inputs) != len(matcher.placeholders):
        raise ValueError("replace_pattern: the pattern and the replacement take different "
                         "numbers of inputs")
    for match in matches:
        val_map = {r: match.nodes_map[p]
                   for r, p in zip(replacement_inputs, matcher.placeholders)}
        anchor = match.nodes_map[match.anchor]
        with graph.inserting_before(anchor):
            result = graph.graph_copy(replacement_graph, val_map)
        anchor.replace_all_uses_with(result)
        for pattern_node in reversed(list(matcher.pattern_anchor.graph.nodes)):
            matched = match.nodes_map.get(pattern_node)
            if matched is not None and pattern_node.op != "placeholder" and not matched.users:
                graph.erase_node(matched)
    gm.recompile()
    return matches
