"""ember.jit: script/trace wrappers that run eagerly, their bookkeeping, checks and errors."""
import typing
import warnings

import numpy as np
import pytest

import ember
from ember import jit, nn

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _net():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU(), nn.Linear(4, 2))


def test_script_function_runs_eagerly_with_wrapper_bookkeeping():
    def scale(x, k: float = 2.0):
        return x * k
    f = jit.script(scale)
    assert isinstance(f, jit.ScriptFunction) and f.name == "scale"
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    y = f(x, 3.0)
    assert y.tolist() == [3.0, -6.0]
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]
    assert jit.script(f) is f
    for attr in ("code", "graph", "schema"):
        with pytest.raises(NotImplementedError, match="TorchScript IR"):
            getattr(f, attr)


def test_script_warns_deprecation_as_torch_2_13():
    with pytest.warns(DeprecationWarning, match="`torch.jit.script` is deprecated"):
        jit.script(nn.ReLU())
    with pytest.warns(DeprecationWarning, match="`torch.jit.trace` is deprecated"):
        jit.trace(nn.ReLU(), ember.ones(2))
    with pytest.warns(FutureWarning, match="`optimize` is deprecated"):
        jit.script(nn.ReLU(), optimize=True)


def test_scripted_module_shares_state_and_training_mode():
    net = _net()
    s = jit.script(net)
    assert isinstance(s, jit.RecursiveScriptModule) and isinstance(s, nn.Module)
    assert s.original_name == "Sequential" and s[0].original_name == "Linear"
    assert list(s.state_dict()) == list(net.state_dict())
    assert all(a is b for a, b in zip(s.parameters(), net.parameters()))
    assert s[0].weight is net[0].weight and len(s) == 4
    s.eval()
    assert not net.training and not net[1].training and not s[1].training
    x = ember.randn(5, 3)
    assert ember.equal(s(x), net(x))
    s.train()
    assert net[1].training
    # loading through the wrapper reaches the original (BatchNorm's own loader included)
    sd = {k: v.clone() + 1 for k, v in net.state_dict().items()}
    s.load_state_dict(sd)
    assert ember.equal(net[0].bias, sd["0.bias"])
    assert repr(s).splitlines()[:3] == ["RecursiveScriptModule(", "  original_name=Sequential",
                                        "  (0): RecursiveScriptModule(original_name=Linear)"]


def test_script_module_attributes_methods_and_decorators():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = 3.0
            self.lin = nn.Linear(2, 2)

        def forward(self, x):
            return self.helper(x) + self.lin(x)

        @jit.ignore
        def helper(self, x):
            return x * self.scale

        @jit.export
        def other(self, x):
            return x - 1

        @jit.unused
        def unused_method(self, x):
            return x

    m = M()
    s = jit.script(m)
    x = ember.ones(1, 2)
    assert ember.equal(s(x), m(x))
    assert s.other(x).tolist() == [[0.0, 0.0]]
    assert s.unused_method(x) is x
    s.scale = 5.0  # a plain attribute lands on the original
    assert m.scale == 5.0


def test_script_class_lambda_and_builtin():
    class Point:
        def __init__(self, x: int):
            self.x = x
    assert jit.script(Point) is Point
    with pytest.raises(RuntimeError, match="must be new-style classes"):
        jit.script(int)
    with pytest.raises(RuntimeError, match="does not support inheritance yet"):
        jit.script(type("Sub", (Point,), {}))
    with pytest.raises(TypeError, match="<class 'int'> is a built-in class"):
        jit.script(3)
    with pytest.raises(RuntimeError, match="Expected a single top-level function"):
        jit.script(lambda x: x)


def test_trace_function_and_module():
    seen = []

    def f(x, y):
        seen.append(jit.is_tracing())
        return x * y + 1
    t = jit.trace(f, (ember.ones(2), ember.full((2,), 3.0)), check_trace=False)
    assert seen == [True] and not jit.is_tracing()
    assert isinstance(t, jit.ScriptFunction) and t.name == "f"
    assert t(ember.tensor([1.0, 2.0]), ember.tensor([3.0, 4.0])).tolist() == [4.0, 9.0]
    net = _net().eval()
    tm = jit.trace(net, ember.randn(4, 3))
    assert type(tm) is jit.TopLevelTracedModule and tm.original_name == "Sequential"
    assert repr(tm).splitlines()[:3] == ["Sequential(", "  original_name=Sequential",
                                         "  (0): Linear(original_name=Linear)"]
    x = ember.randn(6, 3)
    assert ember.equal(tm(x), net(x))
    with pytest.raises(TypeError, match="not subscriptable"):
        tm[0]
    assert jit.trace(lambda x: x + 1, ember.ones(1)).name == "_lambda"
    traced = jit.trace(nn.Linear(2, 2), example_kwarg_inputs={"input": ember.ones(1, 2)})
    assert traced(ember.ones(1, 2)).shape == (1, 2)


def test_trace_argument_and_output_checks():
    with pytest.raises(RuntimeError, match=r"Type 'Tuple\[Tensor, int\]' cannot be traced"):
        jit.trace(lambda x, k: x * k, (ember.ones(1), 2))
    with pytest.raises(TypeError, match="'int' object is not iterable"):
        jit.trace(lambda x: x, 3)
    with pytest.raises(RuntimeError, match="didn't return any values"):
        jit.trace(lambda x: None, ember.ones(1))
    with pytest.raises(RuntimeError, match="Only tensors, lists, tuples of tensors"):
        jit.trace(lambda x: (x, 3), ember.ones(1))
    with pytest.raises(RuntimeError, match="Encountering a dict at the output"):
        jit.trace(lambda x: {"a": x}, ember.ones(1))
    assert jit.trace(lambda x: {"a": x}, ember.ones(1), strict=False)(ember.ones(1))["a"] == 1
    with pytest.warns(jit.TracerWarning, match="Encountering a list"):
        jit.trace(lambda x: [x, x], ember.ones(1))
    with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
        jit.trace(nn.ReLU())
    with pytest.raises(RuntimeError, match="Could not get name of python class object"):
        jit.trace(3, ember.ones(1))


def test_check_trace_warns_on_nondeterministic_code():
    with pytest.warns(jit.TracerWarning, match="Output nr 1. of the traced function"):
        jit.trace(lambda x: x + ember.rand(1), ember.ones(1))
    with warnings.catch_warnings():
        warnings.simplefilter("error", jit.TracerWarning)
        jit.trace(lambda x: x * 2, ember.ones(3), check_inputs=[(ember.ones(5),)])


def test_trace_module_checks():
    lin = nn.Linear(2, 2)
    tm = jit.trace_module(lin, {"forward": ember.ones(1, 2)})
    assert tm.weight is lin.weight
    with pytest.raises(AttributeError, match="expected a dictionary of"):
        jit.trace_module(lin, ember.ones(1, 2))
    with pytest.raises(AttributeError, match="expected torch.nn.Module as the first"):
        jit.trace_module(lambda x: x, {"forward": ember.ones(1)})
    with pytest.raises(AttributeError, match="nope"):
        jit.trace_module(lin, {"nope": ember.ones(1, 2)})


def test_freeze_and_optimize_for_inference():
    net = _net()
    s = jit.script(net)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        jit.freeze(s)
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        jit.freeze(net.eval())
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule"):
        jit.optimize_for_inference(net)
    s.eval()
    frozen = jit.freeze(s)
    assert list(frozen.state_dict()) == [] and list(frozen.parameters()) == []
    assert repr(frozen) == "RecursiveScriptModule(original_name=Sequential)"
    x = ember.randn(3, 3)
    expected = net(x)
    out = frozen(x)
    assert ember.equal(out, expected) and not out.requires_grad
    with ember.no_grad():  # weights are constants: later changes do not reach them
        net[0].weight.add_(1)
    assert ember.equal(frozen(x), expected)
    fast = jit.optimize_for_inference(jit.script(nn.Linear(2, 2)))
    assert list(fast.state_dict()) == []


def test_save_and_load_refuse_with_a_pointer_to_state_dict(tmp_path):
    for call in (lambda: jit.save(jit.script(nn.ReLU()), tmp_path / "m.pt"),
                 lambda: jit.load(tmp_path / "m.pt"),
                 lambda: jit.script(nn.ReLU()).save(tmp_path / "m.pt")):
        with pytest.raises(NotImplementedError, match=r"ember.save\(module.state_dict\(\)"):
            call()


def test_fork_wait_future_and_helpers():
    fut = jit.fork(ember.add, ember.ones(1), 2)
    assert isinstance(fut, jit.Future) and fut.done()
    assert jit.wait(fut).tolist() == [3.0] and fut.value().tolist() == [3.0]
    assert fut.then(lambda f: f.wait() * 2).wait().tolist() == [6.0]
    with pytest.raises(ZeroDivisionError):
        jit.fork(lambda: 1 / 0)
    with pytest.raises(TypeError, match="is not an instance of 'function'"):
        jit.fork(3)
    with pytest.raises(TypeError, match="incompatible function arguments"):
        jit.wait(3)
    assert not jit.is_scripting()
    assert jit.annotate(typing.List[int], []) == []
    assert jit.Final is typing.Final and jit.Attribute(3, int) == 3
    assert jit.isinstance([1, 2], typing.List[int]) and not jit.isinstance([1.0], typing.List[int])

    @jit.interface
    class Iface(nn.Module):
        def forward(self, x: ember.Tensor) -> ember.Tensor:
            pass
    assert Iface.__name__ == "Iface"

    @jit._overload
    def half(x: int) -> int: ...

    def half(x):  # noqa: F811  (the definition after the overloads)
        return x / 2
    assert half(3) == 1.5
    assert jit.ignore(drop=True)(abs)(-1) == 1
    with pytest.raises(RuntimeError, match="must be a bool or a function"):
        jit.ignore("yes")


def test_scripted_training_step_matches_eager():
    eager, scripted = _net(), jit.script(_net())
    x = np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32)
    for model in (eager, scripted):
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(2):
            opt.zero_grad()
            model(ember.tensor(x)).pow(2).mean().backward()
            opt.step()
    for a, b in zip(eager.state_dict().values(), scripted.state_dict().values()):
        assert ember.equal(a, b)
