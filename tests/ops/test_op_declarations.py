"""One definition per op, one declaration per public name (``ember/_registry.py``), and the
Tensor stub written from them (``tools/gen_tensor_stub.py``)."""
import collections
import importlib.util
import typing
from pathlib import Path

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _functions
from ember._ops import activation_ops, elementwise
from ember._ops.primitive import Primitive
from ember._registry import DECLARED, op, method

ROOT = Path(__file__).resolve().parents[2]


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_tensor_stub",
                                                  ROOT / "tools" / "gen_tensor_stub.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GEN = _load_generator()


# ---- relu: one op behind every entry point ------------------------------------------------
RELU_ENTRIES = {
    "ember.relu": lambda t: ember.relu(t),
    "Tensor.relu": lambda t: t.relu(),
    "Tensor.relu_": lambda t: t.clone().relu_(),
    "F.relu": lambda t: F.relu(t),
    "F.relu(inplace=True)": lambda t: F.relu(t.clone(), inplace=True),
    "F.relu_": lambda t: F.relu_(t.clone()),
    "nn.ReLU": lambda t: ember.nn.ReLU()(t),
    "nn.ReLU(inplace=True)": lambda t: ember.nn.ReLU(inplace=True)(t.clone()),
}


@pytest.mark.parametrize("name", list(RELU_ENTRIES))
@pytest.mark.parametrize("n", [5, 3 * 4096 + 7])  # the plain and the row-split kernel
def test_every_relu_entry_runs_the_one_relu_op(name, n):
    x = ember.tensor(np.linspace(-2, 2, n).astype(np.float32), requires_grad=True)
    with ember.no_grad():
        x[0] = -0.0
    y = RELU_ENTRIES[name](x)
    assert type(y.grad_fn).__name__ == "ReluBackward0"
    assert type(y.grad_fn)._forward_cls is activation_ops.Relu
    assert np.signbit(y.detach().numpy()[0])  # relu(-0.0) is -0.0, as in PyTorch
    y.sum().backward()
    assert np.array_equal(x.grad.numpy(), (x.detach().numpy() > 0).astype(np.float32))


def test_relu_is_defined_once():
    assert ember.Tensor.relu._primitive is activation_ops.Relu  # a copy of Relu.apply
    assert not hasattr(elementwise, "Relu")
    relus = [c for c in _all_primitives() if getattr(c, "_backward_name", None) == "ReluBackward0"]
    assert relus == [activation_ops.Relu]


def _all_primitives():
    found, stack = [], [Primitive]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub.__module__.startswith("ember.") and sub not in found:
                found.append(sub)
                stack.append(sub)
    return found


# Node names shared by ops that are not the same op: PyTorch gives these calls one backward
# name, and ember runs different math for each (different inputs, or a kernel for one case).
SHARED_NODE_NAMES = {
    "ConvolutionBackward0": {"ConvForward", "ConvInputGrad",    # conv, transposed conv,
                             "PerSampleConv"},                  # conv of batched weights
    "ExpandBackward0": {"Expand", "ExpandBack"},                # view; reduction grad as a copy
    "GatherBackward0": {"Gather", "TiledGather"},               # gather; pooling windows
    "IndexPutBackward0": {"IndexPut", "IndexGrad",               # x[i] = v; gathers' grads;
                          "IndexPutAccumulate"},                # index_put(accumulate=True)
    "MaxPool2DWithIndicesBackward0": {"MaxPoolGather", "TiledMax"},
    # max pools' gradients, and their zero-gradient links under create_graph (grad_link.py)
    "MaxPool2DWithIndicesBackwardBackward0": {"MaxPoolScatter", "TiledScatter",
                                              "MaxPool2DWithIndicesBackwardLink"},
    "MaxPool3DWithIndicesBackward0": {"MaxPool3DGather", "TiledMax3D"},
    "MaxPool3DWithIndicesBackwardBackward0": {"MaxPool3DScatter", "TiledScatter3D",
                                              "MaxPool3DWithIndicesBackwardLink"},
    "AdaptiveMaxPool2DBackwardBackward0": {"AdaptiveMaxPool2DScatter",
                                           "AdaptiveMaxPool2DBackwardLink"},
    "AdaptiveMaxPool3DBackwardBackward0": {"AdaptiveMaxPool3DScatter",
                                           "AdaptiveMaxPool3DBackwardLink"},
    "MmBackward0": {"Matmul", "Mm", "LinearNoBias"},
    "UnsqueezeBackward0": {"Unsqueeze", "UnsqueezeIndex"},      # x.unsqueeze(d), x[None]
    "ToCopyBackward0": {"ToDtype", "ToMeta", "ToDevice",        # x.to(dtype / "meta" / "cuda"
                        "ToCopyInFormat"},                      # / memory_format=)
    "CloneBackward0": {"Clone", "CloneInFormat"},               # clone(memory_format=)
    "NotImplemented": {"Heaviside", "Binomial"},  # PyTorch's node for ops with no derivative
}


def test_no_op_is_defined_twice():
    by_node = collections.defaultdict(set)
    for cls in _all_primitives():
        if cls.__dict__.get("_backward_name"):
            by_node[cls._backward_name].add(cls.__name__)
    shared = {name: classes for name, classes in by_node.items() if len(classes) > 1}
    assert shared == SHARED_NODE_NAMES


# ---- declarations ---------------------------------------------------------------------------
def test_all_is_the_declared_functions():
    declared = {name for name, d in DECLARED.items() if d.function is not None}
    assert set(_functions.__all__) == declared
    assert len(_functions.__all__) == len(declared)
    for name in declared:
        assert getattr(ember, name) is DECLARED[name].function is getattr(_functions, name)


def test_every_declaration_is_bound_onto_tensor():
    for name, d in DECLARED.items():
        if d.method is not None:
            assert ember.Tensor.__dict__[name] is d.method, name
        if d.inplace:
            assert ember.Tensor.__dict__[name + "_"].__name__ == name + "_"
        elif d.method is not None and not name.endswith("_"):
            # no accidental x.op_: the only in-place forms are declared ones
            assert name + "_" not in DECLARED or DECLARED[name + "_"].function is None


def test_hot_paths_are_one_call():
    """Operators and one-op methods are copies of the ops' apply functions
    (``Primitive.entry``: public entry points of __torch_function__): no wrapper frame."""
    T = ember.Tensor
    assert T.__add__._primitive is T.__radd__._primitive is elementwise.Add
    assert T.__sub__._primitive is elementwise.Sub
    assert T.__mul__._primitive is T.__rmul__._primitive is elementwise.Mul
    for name in ("tanh", "sigmoid", "exp", "log", "sqrt", "neg", "relu", "abs", "absolute"):
        fn = getattr(T, name)
        assert fn.__qualname__ == f"Tensor.{name}", name
        assert fn.__code__ is fn._primitive.apply.__code__, name  # the op's own apply


def test_generated_functions_look_written_out():
    for name in ("exp", "logical_not", "bitwise_not", "eq", "relu"):
        fn = getattr(ember, name)
        assert fn.__name__ == fn.__qualname__ == name
        assert fn.__module__ == "ember._functions.core"


def test_inplace_forms_match_the_out_of_place_op():
    x = ember.tensor([[1.0, -2.0], [3.0, 0.5]])
    for name in ("add", "sub", "mul", "div", "clamp", "tril", "exp", "relu", "round"):
        args = {"add": (1.0,), "sub": (1.0,), "mul": (2.0,), "div": (4.0,),
                "clamp": (0.0, 1.0)}.get(name, ())
        expected = getattr(x, name)(*args)
        assert ember.equal(getattr(x.clone(), name + "_")(*args), expected), name
    y = x.clone()
    y.add_(x, alpha=2)
    assert ember.equal(y, x * 3)


def test_declaring_a_name_twice_fails():
    with pytest.raises(ValueError, match="declared twice"):
        op(lambda input: input, name="add")
    with pytest.raises(ValueError, match="declared twice"):
        method(lambda self: self, name="add_")  # the in-place form of add
    assert DECLARED["add"].function is ember.add


# ---- the Tensor stub ------------------------------------------------------------------------
def test_committed_stub_is_up_to_date():
    path = GEN.stub_path()
    assert path.exists(), "run python tools/gen_tensor_stub.py"
    assert path.read_text() == GEN.render(), (
        f"{path.name} is out of date: run python tools/gen_tensor_stub.py")


def _stub_namespace():
    """The stub run as Python, its annotations kept as strings (a stub refers to Tensor
    inside Tensor's own body)."""
    namespace = {}
    source = "from __future__ import annotations\n" + GEN.stub_path().read_text()
    exec(compile(source, "stub", "exec"), namespace)
    return namespace


def test_stub_names_every_public_tensor_attribute():
    stub_tensor = _stub_namespace()["Tensor"]
    public = {n for n in dir(ember.Tensor) if not n.startswith("_") or
              (n.endswith("__") and n in vars(ember.Tensor))}
    missing = public - set(vars(stub_tensor)) - GEN.SKIPPED
    assert not missing


def test_stub_annotations_resolve():
    """Every annotation in the stub names a type the stub imports (evaluated here)."""
    namespace = _stub_namespace()
    for cls in (namespace["Tensor"], namespace["Size"]):
        for name, member in vars(cls).items():
            fn = member.fget if isinstance(member, property) else member
            if callable(fn) and getattr(fn, "__annotations__", None):
                typing.get_type_hints(fn, namespace)  # raises on an unknown name


def test_stub_generator_wants_annotations():
    def unannotated(input, other):
        return input

    with pytest.raises(GEN.StubError, match="annotation"):
        GEN.Signature.of(unannotated, "unannotated")
    with pytest.raises(GEN.StubError, match="update its types"):
        GEN.Signature.parse("(self, dim: int) -> int", ember.Tensor.size, "Tensor.size")


def test_with_out_forwards_every_kind_of_parameter():
    import inspect
    from ember._registry import with_out

    def fn(a, b=2, /, c=3, *rest, d, e=5, **extra):
        return ember.tensor([float(a + b + c + sum(rest) + d + e + sum(extra.values()))])
    wrapped = with_out(fn, "fn")
    assert wrapped(1, d=4).tolist() == [15.0]
    assert wrapped(1, 9, 8, 7, 6, d=4, e=0, z=100).tolist() == [135.0]
    out = ember.zeros(1)
    assert wrapped(1, d=4, out=out) is out and out.tolist() == [15.0]
    assert list(inspect.signature(wrapped).parameters) == ["a", "b", "c", "rest", "d", "e",
                                                          "out", "extra"]
    with pytest.raises(TypeError, match=r"fn\(\) missing 1 required keyword-only argument"):
        wrapped(1)
    with pytest.raises(TypeError, match=r"fn\(\) missing 1 required positional argument: 'a'"):
        wrapped(a=1, d=4)  # positional-only: the keyword lands in **extra
    # the functions declared with out= call their computation directly, keywords as given
    assert ember.add(ember.ones(2), ember.ones(2), alpha=3).tolist() == [4.0, 4.0]
    with pytest.raises(TypeError, match="add"):
        ember.add(ember.ones(2), ember.ones(2), beta=3)
