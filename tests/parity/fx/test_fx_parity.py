"""ember.fx against torch.fx: the same model definitions traced by both libraries give the
same nodes (op, name, target, argument structure), the same numbers and gradients (weights
copied over), the same Transformer result, ShapeProp metadata and tracing errors."""
import operator

import numpy as np
import pytest
import torch
import torch.fx
from torch.fx.node import _get_qualified_name as torch_qualified_name
from torch.fx.passes.shape_prop import ShapeProp as TorchShapeProp

import ember
import ember.fx
from ember.fx.node import _qualified_name as ember_qualified_name
from ember.fx.passes.shape_prop import ShapeProp as EmberShapeProp

LIBS = {"torch": (torch, torch.fx), "ember": (ember, ember.fx)}


def first_columns(x, n):
    return x[:, :n] * 2


torch.fx.wrap("first_columns")
ember.fx.wrap("first_columns")


def models(lib):
    """The same model definitions, on ``lib`` (torch or ember)."""
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 8)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(8, 3)

        def forward(self, x):
            return F.relu(self.fc2(self.act(self.fc1(x))))

    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(2, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.pool = nn.MaxPool2d(2)
            self.features = nn.Sequential(nn.Conv2d(4, 4, 3), nn.ReLU())
            self.avg = nn.AdaptiveAvgPool2d(1)
            self.head = nn.Linear(4, 5)

        def forward(self, x):
            y = self.pool(F.relu(self.bn(self.conv(x))))
            y = self.avg(self.features(y))
            return self.head(lib.flatten(y, 1))

    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 6)
            self.gain = nn.Parameter(lib.linspace(0.5, 1.5, 6))

        def forward(self, x):
            return lib.tanh(self.lin(x)) * self.gain

    class Mixed(nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = Inner()
            self.register_buffer("offset", lib.arange(6.0) / 10)

        def forward(self, x):
            y = self.inner(x) + self.offset
            n = x.shape[0]
            z = y.view(n, 2, 3).transpose(1, 2).reshape(n, -1)
            z = z - z.mean(dim=1, keepdim=True)
            w = lib.cat([z[:, 1:], first_columns(y, 1)], dim=1) / 2
            v = lib.sigmoid(w) @ y.t()
            return F.relu(v ** 2 - 0.1), w.sum(), x.size(1)

    class Flagged(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(6, 2)

        def forward(self, x, double=True):
            y = self.lin(x)
            if double:
                y = y * 2
            return y

    return {"mlp": (MLP, (4, 6)), "cnn": (SmallCNN, (2, 2, 8, 8)), "mixed": (Mixed, (3, 6)),
            "flagged": (Flagged, (3, 6))}


CONCRETE = {"flagged": {"double": False}}


def describe(value, qualified_name):
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [describe(v, qualified_name) for v in value]
    if isinstance(value, dict):
        return type(value).__name__, {k: describe(v, qualified_name) for k, v in value.items()}
    if hasattr(value, "op") and hasattr(value, "users"):
        return "node", value.name
    return repr(value)


def node_table(gm, qualified_name):
    rows = []
    for node in gm.graph.nodes:
        target = qualified_name(node.target) if node.op == "call_function" else node.target
        target = target.replace("ember.fx._symbolic_trace._assert", "torch._assert")
        if target.startswith("_operator."):  # torch's helper names the C module
            target = target[1:]
        if node.op == "call_function" and "." not in target:  # str(graph): builtins.getattr
            target = f"builtins.{target}"
        # torch's F.gelu is the C function torch._C._nn.gelu; ember's is F.gelu itself
        target = target.replace("torch._C._nn.", "torch.nn.functional.")
        rows.append((node.op, node.name, target, describe(node.args, qualified_name),
                     describe(node.kwargs, qualified_name)))
    return rows


def build(name, dtype_name="float32"):
    """The model on both libraries with the same weights (torch's copied into ember's)."""
    torch.manual_seed(0)
    torch_cls, shape = models(torch)[name]
    ember_cls, _ = models(ember)[name]
    torch_model = torch_cls().to(getattr(torch, dtype_name))
    ember_model = ember_cls().to(getattr(ember, dtype_name))
    state = {k: ember.tensor(v.detach().numpy()) for k, v in torch_model.state_dict().items()}
    ember_model.load_state_dict(state)
    x = np.random.default_rng(1).standard_normal(shape).astype(dtype_name)
    return torch_model, ember_model, x


def trace_both(name, torch_model, ember_model):
    concrete = CONCRETE.get(name)
    return (torch.fx.symbolic_trace(torch_model, concrete_args=concrete),
            ember.fx.symbolic_trace(ember_model, concrete_args=concrete))


def as_numpy(value):
    if isinstance(value, (tuple, list)):
        return [as_numpy(v) for v in value]
    if hasattr(value, "detach"):
        return value.detach().numpy()
    return value


def assert_same_values(actual, expected, tol):
    if isinstance(expected, list):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same_values(a, e, tol)
    elif isinstance(expected, np.ndarray):
        np.testing.assert_allclose(actual, expected, rtol=tol, atol=tol)
    else:
        assert actual == expected


@pytest.mark.parametrize("name", ["mlp", "cnn", "mixed", "flagged"])
def test_same_nodes_and_code(name):
    torch_model, ember_model, _ = build(name)
    torch_gm, ember_gm = trace_both(name, torch_model, ember_model)
    assert node_table(ember_gm, ember_qualified_name) == \
        node_table(torch_gm, torch_qualified_name)
    if name != "flagged":  # torch._assert is ember.fx's own _assert there
        assert ember_gm.code == torch_gm.code
        assert str(ember_gm.graph) == str(torch_gm.graph)


@pytest.mark.parametrize("dtype_name,tol", [("float32", 1e-4), ("float64", 1e-10)])
@pytest.mark.parametrize("name", ["mlp", "cnn", "mixed", "flagged"])
def test_outputs_and_gradients(name, dtype_name, tol):
    torch_model, ember_model, x = build(name, dtype_name)
    torch_gm, ember_gm = trace_both(name, torch_model, ember_model)
    tx = torch.tensor(x, requires_grad=True)
    ex = ember.tensor(x, requires_grad=True)
    extra = (False,) if name == "flagged" else ()
    torch_out, ember_out = torch_gm(tx, *extra), ember_gm(ex, *extra)
    assert_same_values(as_numpy(ember_out), as_numpy(torch_out), tol)
    assert_same_values(as_numpy(ember_model(ex, *extra)), as_numpy(torch_out), tol)
    first = (lambda out: out[0]) if isinstance(torch_out, tuple) else (lambda out: out)
    (first(torch_out) ** 2).sum().backward()
    (first(ember_out) ** 2).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=tol, atol=tol)
    torch_grads = {k: p.grad.numpy() for k, p in torch_gm.named_parameters()
                   if p.grad is not None}
    ember_grads = {k: p.grad.numpy() for k, p in ember_gm.named_parameters()
                   if p.grad is not None}
    assert set(ember_grads) == set(torch_grads)
    for key, grad in torch_grads.items():
        np.testing.assert_allclose(ember_grads[key], grad, rtol=tol, atol=tol)


def relu_to_gelu(fx_module, lib):
    class ReluToGelu(fx_module.Transformer):
        def call_function(self, target, args, kwargs):
            if target is lib.nn.functional.relu:
                return super().call_function(lib.nn.functional.gelu, args[:1], {})
            return super().call_function(target, args, kwargs)

        def call_module(self, target, args, kwargs):
            if isinstance(self.fetch_attr(target), lib.nn.ReLU):
                return super().call_function(lib.nn.functional.gelu, args, {})
            return super().call_module(target, args, kwargs)
    return ReluToGelu


@pytest.mark.parametrize("name", ["mlp", "cnn", "mixed"])
def test_transformer_relu_to_gelu(name):
    torch_model, ember_model, x = build(name)
    torch_gm, ember_gm = trace_both(name, torch_model, ember_model)
    torch_new = relu_to_gelu(torch.fx, torch)(torch_gm).transform()
    ember_new = relu_to_gelu(ember.fx, ember)(ember_gm).transform()
    assert node_table(ember_new, ember_qualified_name) == \
        node_table(torch_new, torch_qualified_name)
    assert ember_new.code == torch_new.code.replace("torch._C._nn.", "torch.nn.functional.")
    assert_same_values(as_numpy(ember_new(ember.tensor(x))),
                       as_numpy(torch_new(torch.tensor(x))), 1e-4)


def meta_table(gm):
    def one(meta):
        if isinstance(meta, (tuple, list)) and not hasattr(meta, "_fields"):
            return [one(m) for m in meta]
        if meta is None or not hasattr(meta, "_fields"):
            return repr(meta)
        return (tuple(meta.shape), str(meta.dtype).split(".")[-1], meta.requires_grad,
                tuple(meta.stride), str(meta.memory_format).split(".")[-1],
                meta.is_quantized, meta.qparams)
    return [(n.name, one(n.meta.get("tensor_meta")), n.meta["type"].__name__)
            for n in gm.graph.nodes]


@pytest.mark.parametrize("name", ["mlp", "cnn", "mixed"])
def test_shape_prop_metadata(name):
    torch_model, ember_model, x = build(name)
    torch_gm, ember_gm = trace_both(name, torch_model, ember_model)
    TorchShapeProp(torch_gm).propagate(torch.tensor(x))
    EmberShapeProp(ember_gm).propagate(ember.tensor(x))
    assert meta_table(ember_gm) == meta_table(torch_gm)


def test_feature_extraction_pattern():
    results = {}
    for label, (lib, fx_module) in LIBS.items():
        torch_model, ember_model, x = build("cnn")
        model = torch_model if lib is torch else ember_model
        gm = fx_module.symbolic_trace(model)
        pool = [n for n in gm.graph.nodes if n.name == "pool"][0]
        output = [n for n in gm.graph.nodes if n.op == "output"][0]
        output.args = ({"pooled": pool},)
        gm.graph.eliminate_dead_code()
        gm.recompile()
        results[label] = (gm(lib.tensor(x))["pooled"].detach().numpy(),
                          [n.name for n in gm.graph.nodes], gm.code)
    np.testing.assert_allclose(results["ember"][0], results["torch"][0], rtol=1e-4, atol=1e-5)
    assert results["ember"][1:] == results["torch"][1:]


def control_flow(x):
    if x.sum() > 0:
        return x
    return x + 1


def iterate(x):
    total = 0
    for row in x:
        total = total + row
    return total


def unpack(x):
    a, b = x
    return a * b


def length(x):
    return x * len(x)


@pytest.mark.parametrize("fn", [control_flow, iterate, length])
def test_tracing_errors(fn):
    with pytest.raises(Exception) as torch_error:
        torch.fx.symbolic_trace(fn)
    with pytest.raises(Exception) as ember_error:
        ember.fx.symbolic_trace(fn)
    assert type(ember_error.value).__name__ == type(torch_error.value).__name__
    assert isinstance(ember_error.value, type(torch_error.value).__mro__[1]) or \
        isinstance(ember_error.value, RuntimeError)
    assert str(ember_error.value) == str(torch_error.value)


def test_unpacking_records_getitems():
    tables = [node_table(torch.fx.symbolic_trace(unpack), torch_qualified_name),
              node_table(ember.fx.symbolic_trace(unpack), ember_qualified_name)]
    assert tables[1] == tables[0]


def test_operator_targets_on_handmade_graphs():
    texts = []
    for _, fx_module in LIBS.values():
        graph = fx_module.Graph()
        x = graph.placeholder("x")
        a = graph.call_function(operator.neg, (x,))
        b = graph.call_method("size", (a, 0))
        graph.output(graph.call_function(operator.truediv, (a, b)))
        graph.eliminate_dead_code()
        texts.append((str(graph), graph.python_code("self").src))
    assert texts[0] == texts[1]


def rewrite_target(lib):
    def target(x, y):
        a = lib.relu(x + y) * 2
        s = x * y
        b = lib.relu(a + s)
        return a + b, s

    def pattern(p, q):
        return lib.relu(p + q)

    def replacement(p, q):
        return lib.clamp(p - (-q), min=0.0)
    return target, pattern, replacement


def test_replace_pattern():
    from torch.fx.subgraph_rewriter import replace_pattern as torch_replace

    from ember.fx.subgraph_rewriter import replace_pattern as ember_replace
    outcome = {}
    for label, (lib, fx_module), replace in (("torch", LIBS["torch"], torch_replace),
                                             ("ember", LIBS["ember"], ember_replace)):
        target, pattern, replacement = rewrite_target(lib)
        gm = fx_module.symbolic_trace(target)
        matches = replace(gm, pattern, replacement)
        qualified = torch_qualified_name if lib is torch else ember_qualified_name
        x = np.linspace(-1, 1, 6).astype("float32")
        result = as_numpy(gm(lib.tensor(x), lib.tensor(x[::-1].copy())))
        outcome[label] = (node_table(gm, qualified),
                          [(m.anchor.name, sorted((k.name, v.name)
                                                  for k, v in m.nodes_map.items()))
                           for m in matches], result)
    assert outcome["ember"][:2] == outcome["torch"][:2]
    assert_same_values(outcome["ember"][2], outcome["torch"][2], 1e-6)


def test_insertion_points_and_graph_api():
    outcome = []
    for _, fx_module in LIBS.values():
        graph = fx_module.Graph()
        x = graph.placeholder("x")
        y = graph.placeholder("y", default_value=3)
        out = graph.output(x)
        with graph.inserting_after(x):
            graph.call_function(operator.neg, (x,))
            graph.call_function(operator.abs, (x,))
        with graph.inserting_before(None):
            graph.call_function(operator.pos, (1,))
        with graph.inserting_before(out):
            first = graph.call_function(operator.mul, (x, y))
            graph.call_method("sum", (first,), {"dim": 0})
        last = list(graph.nodes)[-2]
        out.args = (last,)
        removed = graph.eliminate_dead_code()
        outcome.append(([n.name for n in graph.nodes], removed, str(graph),
                         graph.python_code("self").src,
                         [(n.name, sorted(u.name for u in n.users)) for n in graph.nodes]))
    assert outcome[1] == outcome[0]


@pytest.mark.parametrize("name", ["mixed", "cnn"])
def test_retrace_and_copies(name):
    import copy
    torch_model, ember_model, x = build(name)
    outcome = []
    for lib, fx_module, model, qualified in (
            (torch, torch.fx, torch_model, torch_qualified_name),
            (ember, ember.fx, ember_model, ember_qualified_name)):
        gm = fx_module.symbolic_trace(model)
        again = fx_module.symbolic_trace(gm)
        deep, shallow = copy.deepcopy(gm), copy.copy(gm)
        outcome.append((node_table(again, qualified), again.code,
                        type(gm).__name__, type(deep).__name__, type(shallow).__name__,
                        sorted(deep.state_dict()), deep.code == gm.code,
                        as_numpy(deep(lib.tensor(x)))))
    assert outcome[1][:-1] == outcome[0][:-1]
    assert_same_values(outcome[1][-1], outcome[0][-1], 1e-4)


@pytest.mark.parametrize("name", ["mixed", "cnn"])
def test_pickle_round_trip(name):
    import pickle
    torch_model, ember_model, x = build(name)
    outcome = []
    for lib, fx_module, model, qualified in (
            (torch, torch.fx, torch_model, torch_qualified_name),
            (ember, ember.fx, ember_model, ember_qualified_name)):
        gm = fx_module.symbolic_trace(model)
        loaded = pickle.loads(pickle.dumps(gm))
        outcome.append((type(loaded).__name__, loaded.code, node_table(loaded, qualified),
                        as_numpy(loaded(lib.tensor(x)))))
    assert outcome[1][:-1] == outcome[0][:-1]
    assert_same_values(outcome[1][-1], outcome[0][-1], 1e-4)
