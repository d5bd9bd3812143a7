"""A leaf's first gradient is taken without a copy only when the engine owns it
(Note [gradient ownership] in ember/autograd/engine.py); anything user code may hold
is copied."""
import numpy as np

import ember
from ember.autograd import graph


def _first_grads(monkeypatch):
    """Record, per first gradient, whether the leaf took the engine's array."""
    taken = []
    original = graph._first_grad

    def spy(data, like, owned):
        result = original(data, like, owned)
        taken.append(result._data is data)
        return result
    monkeypatch.setattr(graph, "_first_grad", spy)
    return taken


def test_fresh_product_gradient_is_taken(monkeypatch):
    taken = _first_grads(monkeypatch)
    w = ember.randn(64, requires_grad=True)
    (w * ember.randn(64)).sum().backward()
    assert taken == [True]


def test_gradient_passed_to_two_leaves_is_copied_for_each():
    x = ember.randn(4, requires_grad=True)
    y = ember.randn(4, requires_grad=True)
    (x * 3 + y * 0 + x * 0 + y).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())


def test_gradient_a_tensor_hook_kept_is_copied():
    kept = []
    x = ember.randn(5, requires_grad=True)
    x.register_hook(lambda g: kept.append(g))
    (x * ember.randn(5)).sum().backward()
    assert not np.shares_memory(x.grad.numpy(), kept[0].numpy())
    expected = x.grad.numpy().copy()
    kept[0].add_(1.0)
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_gradient_a_node_post_hook_kept_is_copied():
    kept = []
    x = ember.randn(5, requires_grad=True)
    y = x * ember.randn(5)
    y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: kept.append(grad_inputs[0]))
    y.sum().backward()
    assert not np.shares_memory(x.grad.numpy(), kept[0].numpy())


def test_retained_intermediate_gradient_is_not_shared_with_the_leaf():
    x = ember.randn(5, requires_grad=True)
    y = x * 2
    y.retain_grad()
    z = y.exp()
    z.sum().backward()
    assert not np.shares_memory(x.grad.numpy(), y.grad.numpy())


def test_caller_supplied_gradient_is_copied():
    x = ember.randn(3, requires_grad=True)
    g = ember.ones(3)
    x.backward(g)
    assert not np.shares_memory(x.grad.numpy(), g.numpy())
    y = ember.randn(3, requires_grad=True)
    g2 = ember.ones(3)
    (y * 1).backward(g2)
    assert not np.shares_memory(y.grad.numpy(), g2.numpy())


def test_summed_gradient_is_taken(monkeypatch):
    taken = _first_grads(monkeypatch)
    x = ember.randn(8, requires_grad=True)
    (x * 2 + x * 3).sum().backward()  # two fresh gradients summed by the engine
    assert taken == [True]
    np.testing.assert_allclose(x.grad.numpy(), np.full(8, 5.0, np.float32))


def test_user_function_gradient_is_copied(monkeypatch):
    taken = _first_grads(monkeypatch)

    class Double(ember.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = ember.randn(3, requires_grad=True)
    Double.apply(x).sum().backward()
    assert taken == [False]


def test_no_reference_counting_decides_ownership():
    import inspect
    from ember.autograd import engine
    for module in (graph, engine):
        assert "getrefcount" not in inspect.getsource(module)
