"""``ember.compile`` runs eagerly: the compiled module or function computes exactly what the
original does (values and gradients, bit for bit), modules are wrapped, not copied."""
import numpy as np
import pytest

import ember


def test_compiled_module_shares_parameters_and_numbers():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.ReLU(), ember.nn.Linear(4, 1))
    compiled = ember.compile(model, mode="max-autotune", fullgraph=True)
    assert isinstance(compiled, ember.compiler.OptimizedModule)
    assert [p for p in compiled.parameters()] == [p for p in model.parameters()]
    x = ember.randn(5, 3)
    compiled(x).sum().backward()
    grads = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    model(x).sum().backward()
    for g, p in zip(grads, model.parameters()):
        assert np.array_equal(g, p.grad.numpy())
    compiled.load_state_dict(compiled.state_dict())  # its own keys round-trip


def test_hooks_of_the_original_run():
    model = ember.nn.Linear(2, 2)
    seen = []
    model.register_forward_hook(lambda m, i, o: seen.append(o.shape))
    ember.compile(model)(ember.ones(1, 2))
    assert seen == [ember.Size([1, 2])]


def test_callable_backend_is_not_implemented():
    with pytest.raises(NotImplementedError, match="captures no FX graph"):
        ember.compile(ember.nn.ReLU(), backend=lambda gm, example_inputs: gm)


def test_invalid_backend_is_a_runtime_error_naming_it():
    with pytest.raises(RuntimeError, match="Invalid backend: 'tvm2'"):
        ember.compile(ember.nn.ReLU(), backend="tvm2")
