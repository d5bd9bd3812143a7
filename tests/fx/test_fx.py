"""ember.fx behaviour: tracing, graph editing, codegen, GraphModule, Interpreter/Transformer,
ShapeProp (tests/parity/fx/ compares the same against torch.fx)."""
import copy
import operator

import pytest

import ember
import ember.fx as fx
import ember.nn as nn
import ember.nn.functional as F
from ember.fx.passes.shape_prop import ShapeProp


def scaled_sum(x, scale):
    return (x * scale).sum()


fx.wrap("scaled_sum")


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return F.relu(self.lin(x))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.out = nn.Linear(4, 2)
        self.scale = nn.Parameter(ember.ones(4))

    def forward(self, x):
        y = self.block(x) * self.scale
        return self.out(y) + x.shape[0]


def names(gm):
    return [n.name for n in gm.graph.nodes]


def test_trace_names_ops_and_run():
    net = Net()
    gm = fx.symbolic_trace(net)
    assert names(gm) == ["x", "block_lin", "relu", "scale", "mul", "out", "getattr_1",
                         "getitem", "add", "output"]
    assert [n.op for n in gm.graph.nodes][:4] == ["placeholder", "call_module",
                                                 "call_function", "get_attr"]
    x = ember.randn(3, 4)
    ember.testing.assert_close(gm(x), net(x))
    assert "relu = torch.nn.functional.relu(block_lin, inplace = False)" in gm.code
    assert type(gm).__name__ == "Net"


def test_graph_str_format():
    gm = fx.symbolic_trace(lambda x: ember.relu(x) + 1)
    assert str(gm.graph) == (
        "graph():\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    %relu : [num_users=1] = call_function[target=torch.relu](args = (%x,), "
        "kwargs = {})\n"
        "    %add : [num_users=1] = call_function[target=operator.add](args = (%relu, 1), "
        "kwargs = {})\n"
        "    return add")


def test_control_flow_and_iteration_errors():
    def branch(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(fx.TraceError, match="symbolically traced variables cannot be used "
                                            "as inputs to control flow"):
        fx.symbolic_trace(branch)

    def loop(x):
        return [a for a in x]

    with pytest.raises(fx.TraceError, match="Proxy object cannot be iterated"):
        fx.symbolic_trace(loop)
    with pytest.raises(RuntimeError, match="'len' is not supported in symbolic tracing"):
        fx.symbolic_trace(lambda x: len(x))


def test_wrap_keeps_call_function():
    gm = fx.symbolic_trace(lambda x: scaled_sum(x, 2.0))
    node = [n for n in gm.graph.nodes if n.op == "call_function"][0]
    assert node.target is scaled_sum and node.name == "scaled_sum"
    assert float(gm(ember.ones(3))) == 6.0
    with pytest.raises(NotImplementedError, match="wrap must be called at the top level"):
        fx.wrap("scaled_sum")


def test_tracer_subclass_changes_leaves():
    class NoLeaves(fx.Tracer):
        def is_leaf_module(self, m, module_qualified_name):
            return False
    graph = NoLeaves().trace(Block())
    assert [n.op for n in graph.nodes] == ["placeholder", "get_attr", "get_attr",
                                           "call_function", "call_function", "output"]
    assert [n.target for n in graph.nodes if n.op == "get_attr"] == ["lin.weight", "lin.bias"]


def test_graph_editing_and_dead_code():
    gm = fx.symbolic_trace(lambda x: ember.relu(x) * 2)
    graph = gm.graph
    relu = [n for n in graph.nodes if n.name == "relu"][0]
    with graph.inserting_after(relu):
        sig = graph.call_function(ember.sigmoid, (relu.args[0],))
    relu.replace_all_uses_with(sig)
    assert not relu.users and list(sig.users)[0].name == "mul"
    with pytest.raises(RuntimeError, match="Tried to erase Node x but it still had 2 users"):
        graph.erase_node(list(graph.nodes)[0])
    assert graph.eliminate_dead_code()
    assert names(gm) == ["x", "sigmoid", "mul", "output"]
    graph.lint()
    gm.recompile()
    x = ember.randn(5)
    ember.testing.assert_close(gm(x), ember.sigmoid(x) * 2)
    with graph.inserting_before(sig):
        neg = graph.call_method("neg", (sig.args[0],))
    sig.args = (neg,)
    gm.recompile()
    ember.testing.assert_close(gm(x), ember.sigmoid(-x) * 2)
    assert sig.all_input_nodes == [neg]


def test_lint_catches_use_before_definition():
    graph = fx.Graph()
    x = graph.placeholder("x")
    y = graph.call_function(operator.neg, (x,))
    graph.output(y)
    x.prepend(y)
    with pytest.raises(RuntimeError, match="was used before it has been defined"):
        graph.lint()


def test_handmade_graph_codegen():
    graph = fx.Graph()
    x = graph.placeholder("x")
    s = graph.call_method("sum", (x,), {"dim": 0})
    graph.output((s, graph.call_function(operator.getitem, (x, 0))))
    gm = fx.GraphModule(nn.Module(), graph)
    assert gm.code == ("\n\n\ndef forward(self, x):\n    sum_1 = x.sum(dim = 0)\n"
                       "    getitem = x[0];  x = None\n    return (sum_1, getitem)\n    ")
    out = gm(ember.arange(6.0).reshape(2, 3))
    assert out[0].tolist() == [3.0, 5.0, 7.0] and out[1].tolist() == [0.0, 1.0, 2.0]


def test_graph_module_attributes_copy_state_dict_and_submodules():
    net = Net()
    gm = fx.symbolic_trace(net)
    assert gm.block.lin is net.block.lin and gm.scale is net.scale
    assert set(gm.state_dict()) == {"scale", "block.lin.weight", "block.lin.bias",
                                    "out.weight", "out.bias"}
    clone = copy.deepcopy(gm)
    assert clone.block.lin is not net.block.lin
    x = ember.randn(2, 4)
    ember.testing.assert_close(clone(x), gm(x))
    assert "def forward" in clone.code
    assert gm.add_submodule("extra.act", nn.Tanh())
    assert isinstance(gm.extra.act, nn.Tanh)
    assert gm.delete_submodule("extra.act") and not gm.delete_submodule("extra.act")


def test_feature_extraction_cut_at_intermediate_node():
    net = Net()
    gm = fx.symbolic_trace(net)
    relu = [n for n in gm.graph.nodes if n.name == "relu"][0]
    output = [n for n in gm.graph.nodes if n.op == "output"][0]
    output.args = ({"feat": relu},)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    gm.delete_all_unused_submodules()
    x = ember.randn(3, 4)
    ember.testing.assert_close(gm(x)["feat"], F.relu(net.block.lin(x)))
    assert not hasattr(gm, "out")


def test_gradients_through_graph_module():
    net = Net().double()
    gm = fx.symbolic_trace(net)
    x = ember.randn(2, 4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda t: gm(t), (x,))
    gm(x).sum().backward()
    assert net.block.lin.weight.grad is not None


def test_interpreter_and_transformer():
    net = Net()
    gm = fx.symbolic_trace(net)
    x = ember.randn(3, 4)
    ember.testing.assert_close(fx.Interpreter(gm).run(x), net(x))

    class ReluToGelu(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is F.relu:
                return super().call_function(F.gelu, args[:1], {})
            return super().call_function(target, args, kwargs)

    new = ReluToGelu(gm).transform()
    assert "gelu" in names(new) and "relu" not in names(new)
    expected = net.out(F.gelu(net.block.lin(x)) * net.scale) + 3
    ember.testing.assert_close(new(x), expected)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        fx.Interpreter(gm).run()


def test_shape_prop():
    gm = fx.symbolic_trace(Net())
    ShapeProp(gm).propagate(ember.randn(3, 4))
    meta = {n.name: n.meta.get("tensor_meta") for n in gm.graph.nodes}
    assert tuple(meta["mul"].shape) == (3, 4) and meta["mul"].dtype == ember.float32
    assert meta["mul"].requires_grad and meta["x"].stride == (4, 1)
    assert meta["getitem"] is None  # an int: no tensor metadata
    assert gm.graph.find_nodes(op="placeholder")[0].meta["type"] is ember.Tensor


def test_concrete_args_specialize():
    def f(x, flag=True):
        return x * 2 if flag else x
    gm = fx.symbolic_trace(f, concrete_args={"flag": False})
    assert names(gm) == ["x", "flag_1", "eq", "_assert", "output"]
    x = ember.ones(2)
    ember.testing.assert_close(gm(x, False), x)
    with pytest.raises(AssertionError, match="flag has been specialized to have value False"):
        gm(x, True)


def test_print_tabular_needs_tabulate():
    graph = fx.symbolic_trace(lambda x: x + 1).graph
    try:
        import tabulate  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            graph.print_tabular()


def test_lazy_attribute():
    assert ember.fx is fx and ember.fx.symbolic_trace is fx.symbolic_trace


def test_node_arguments_are_immutable():
    gm = fx.symbolic_trace(lambda x: ember.cat([x, x], dim=0))
    cat = [n for n in gm.graph.nodes if n.op == "call_function"][0]
    with pytest.raises(TypeError, match="'immutable_list' object does not support mutation"):
        cat.args[0].append(1)
    with pytest.raises(TypeError, match="'immutable_dict' object does not support mutation"):
        cat.kwargs["dim"] = 1
    cat.kwargs = {"dim": 0}
    cat.update_arg(0, [cat.args[0][0]])
    gm.recompile()
    assert gm(ember.ones(2)).shape == (2,)


def test_math_functions_are_recorded():
    import math
    gm = fx.symbolic_trace(lambda x: x * math.sqrt(x.size(1)))
    assert [n.name for n in gm.graph.nodes] == ["x", "size", "sqrt", "mul", "output"]
    assert 'torch.fx._symbolic_trace.wrap("math_sqrt")' in gm.code
    ember.testing.assert_close(gm(ember.ones(2, 4)), ember.full((2, 4), 2.0))
    assert math.sqrt(4.0) == 2.0  # the patch is gone after tracing


def test_abs_and_variadic_inputs():
    def f(x, *rest, scale=2, **extra):
        return abs(x) * scale + rest[0] - extra["shift"]
    gm = fx.symbolic_trace(f)
    assert [n.target for n in gm.graph.nodes if n.op == "placeholder"] == \
        ["x", "scale", "*rest", "**extra"]
    assert "abs_1 = _operator_abs(x)" in gm.code
    x = ember.tensor([-1.0, 2.0])
    assert gm(x, 3, 10, shift=1).tolist() == [12.0, 15.0]  # scale=3, rest=(10,)


def test_print_readable_and_interpreter_error_note():
    gm = fx.symbolic_trace(Block())
    text = gm.print_readable(print_output=False)
    assert text.startswith("class Block(torch.nn.Module):\n    def forward(self, x):\n"
                           "        # No stacktrace found for following nodes\n")
    with pytest.raises(RuntimeError, match=r"(?s)mat1 and mat2.*While executing %lin : "
                                           r"\[num_users=1\] = call_module\[target=lin\]"):
        fx.Interpreter(gm).run(ember.ones(2, 3))


def test_replace_pattern_rewrites_each_occurrence():
    from ember.fx.subgraph_rewriter import replace_pattern

    def program(x, y):
        return ember.relu(x + y) + ember.relu(x * 2 + y)

    gm = fx.symbolic_trace(program)
    matches = replace_pattern(gm, lambda a, b: ember.relu(a + b),
                              lambda a, b: ember.clamp(a + b, min=0.0))
    assert len(matches) == 2 and matches[0].anchor.name == "relu"
    assert not [n for n in gm.graph.nodes if n.target is ember.relu]
    gm.graph.lint()
    x, y = ember.randn(5), ember.randn(5)
    ember.testing.assert_close(gm(x, y), program(x, y))


def test_graph_module_from_dict_and_tracer_errors():
    graph = fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_module("act.fn", (x,)))
    gm = fx.GraphModule({"act.fn": nn.Sigmoid()}, graph)
    assert isinstance(gm.act.fn, nn.Sigmoid)
    with pytest.raises(RuntimeError, match="referenced target missing but that target was "
                                           "not provided"):
        g2 = fx.Graph()
        g2.output(g2.call_module("missing", (g2.placeholder("x"),)))
        fx.GraphModule({}, g2)
    foreign = nn.Parameter(ember.ones(2))

    class UsesForeign(nn.Module):
        def forward(self, x):
            return ember.add(x, foreign)
    with pytest.raises(NameError, match="parameter is not a member of this module"):
        fx.symbolic_trace(UsesForeign())
    with pytest.raises(NotImplementedError):
        fx.Tracer(param_shapes_constant=True)


def test_pickle_round_trip_retraces_the_code():
    import pickle
    net = Net()
    gm = fx.symbolic_trace(net)
    loaded = pickle.loads(pickle.dumps(gm))
    assert type(loaded).__name__ == "GraphModule" and loaded.code == gm.code
    x = ember.randn(2, 4)
    ember.testing.assert_close(loaded(x), gm(x))
    assert loaded.block.lin is not net.block.lin
