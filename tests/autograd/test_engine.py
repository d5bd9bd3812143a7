"""The autograd engine: ordering, accumulation, hooks, grad modes, saved
tensors, version counters, higher order, and the error paths (ember + NumPy only)."""
import gc
import threading
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import grad as autograd_grad


def test_backward_accumulates_into_leaves():
    x = ember.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.array([1.0, 2.0, 3.0]) + 3)


def test_each_node_runs_once_after_all_inputs_arrive():
    x = ember.tensor([2.0], requires_grad=True)
    a = x * 3
    calls = []
    a.grad_fn.register_hook(lambda gi, go: calls.append(go[0].item()))
    # a feeds three branches that join again: a's node must run once, with the summed grad
    y = a * a + a.exp() + a
    y.sum().backward()
    assert len(calls) == 1
    a6 = 6.0
    np.testing.assert_allclose(calls[0], 2 * a6 + np.exp(a6) + 1)
    np.testing.assert_allclose(x.grad.numpy(), [3 * (2 * a6 + np.exp(a6) + 1)])


def test_deep_chain_has_no_recursion_limit():
    x = ember.ones(3, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y + 1.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones(3))
    del y
    gc.collect()


def test_gradient_argument_and_nonscalar_error():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        y.backward()
    y.backward(ember.tensor([1.0, 10.0]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 20.0])


def test_backward_without_grad_fn_errors():
    x = ember.tensor([1.0, 2.0])
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and "
                                           "does not have a grad_fn"):
        x.sum().backward()


def test_int_tensor_cannot_require_grad():
    with pytest.raises(RuntimeError, match="(?i)only Tensors of floating point and complex "
                                           "dtype can require gradients"):
        ember.tensor([1, 2], requires_grad=True)
    with pytest.raises(RuntimeError, match="only Tensors of floating point"):
        ember.arange(3).requires_grad_()


def test_second_backward_through_freed_graph_errors():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                           "time"):
        y.backward()


def test_retain_graph_allows_second_backward():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_saved_tensors_are_released_after_backward():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    ref = weakref.ref(h)
    y = (h * h).sum()     # saves h
    del h
    assert ref() is not None
    y.backward()
    gc.collect()
    assert ref() is None


def test_inplace_modification_of_saved_tensor_errors():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 1
    y = h.exp()          # saves its output
    y.add_(1)            # ... which is then changed in place
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient "
                                           r"computation has been modified by an inplace "
                                           r"operation: \[ember.FloatTensor \[2\]\], which is "
                                           r"output 0 of Exp, is at version 1; "
                                           r"expected version 0 instead"):
        y.sum().backward()


def test_version_counter_shared_by_views():
    x = ember.zeros(4)
    v = x[1:3]
    assert x._version == 0
    v.add_(1)
    assert x._version == 1 and v._version == 1
    x.mul_(2)
    assert v._version == 2
    np.testing.assert_allclose(x.numpy(), [0, 2, 2, 0])


def test_inplace_on_leaf_requiring_grad_errors():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                           "in an in-place operation."):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation."):
        x[0].mul_(2)
    with ember.no_grad():
        x.add_(1)  # fine without recording
    np.testing.assert_allclose(x.detach().numpy(), [2.0, 2.0])


def test_inplace_on_view_reaches_base_graph():
    a = ember.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = ember.tensor([10.0, 20.0], requires_grad=True)
    b = a * 1
    b[:, 1].mul_(w)          # b[:, 1] = a[:, 1] * w
    b.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[1.0, 10.0], [1.0, 20.0]])
    np.testing.assert_allclose(w.grad.numpy(), [2.0, 4.0])
    assert b.grad_fn.name() == "torch::autograd::CopySlices"


def test_hooks_replace_gradients():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.register_hook(lambda g: seen.append(g.numpy().copy()))
    handle = x.register_hook(lambda g: g * 10)
    y.sum().backward()
    np.testing.assert_allclose(seen[0], [1.0, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 30.0])
    handle.remove()
    x.grad = None
    y = x * 3
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_retain_grad_on_non_leaf():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * x
    h.retain_grad()
    (h * 5).sum().backward()
    np.testing.assert_allclose(h.grad.numpy(), [5.0, 5.0])
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 20.0])


def test_non_leaf_grad_is_none_with_warning():
    x = ember.tensor([1.0], requires_grad=True)
    h = x * 2
    h.sum().backward()
    with pytest.warns(UserWarning, match="not a leaf Tensor"):
        assert h.grad is None


def test_grad_returns_without_accumulating():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    y = ember.tensor([3.0, 4.0], requires_grad=True)
    z = (x * y).sum()
    gx, gy = autograd_grad(z, (x, y))
    np.testing.assert_allclose(gx.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(gy.numpy(), [1.0, 2.0])
    assert x.grad is None and y.grad is None


def test_grad_allow_unused():
    x = ember.tensor([1.0], requires_grad=True)
    unused = ember.tensor([1.0], requires_grad=True)
    z = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd_grad(z, (x, unused), retain_graph=True)
    gx, gu = autograd_grad(z, (x, unused), allow_unused=True)
    assert gu is None
    np.testing.assert_allclose(gx.numpy(), [2.0])


def test_grad_of_non_leaf_input():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    h = x * 2
    z = (h * h).sum()
    (gh,) = autograd_grad(z, h)
    np.testing.assert_allclose(gh.numpy(), [4.0, 8.0])


def test_backward_inputs_restricts_accumulation():
    x = ember.tensor([1.0], requires_grad=True)
    y = ember.tensor([2.0], requires_grad=True)
    (x * y).sum().backward(inputs=[x])
    np.testing.assert_allclose(x.grad.numpy(), [2.0])
    assert y.grad is None


def test_create_graph_second_and_third_derivatives():
    x = ember.tensor([0.5, -1.0], requires_grad=True)
    y = (x ** 4).sum()
    (g1,) = autograd_grad(y, x, create_graph=True)          # 4x^3
    (g2,) = autograd_grad(g1.sum(), x, create_graph=True)   # 12x^2
    (g3,) = autograd_grad(g2.sum(), x)                       # 24x
    xs = np.array([0.5, -1.0])
    np.testing.assert_allclose(g1.detach().numpy(), 4 * xs ** 3)
    np.testing.assert_allclose(g2.detach().numpy(), 12 * xs ** 2)
    np.testing.assert_allclose(g3.numpy(), 24 * xs)


def test_grad_in_a_loop_with_create_graph():
    x = ember.tensor([1.5], requires_grad=True)
    total = 0.0
    for _ in range(5):
        y = (x.sin() * x).sum()
        (g,) = autograd_grad(y, x, create_graph=True)
        (gg,) = autograd_grad(g.sum(), x)
        total += gg.item()
    v = 1.5
    np.testing.assert_allclose(total, 5 * (2 * np.cos(v) - v * np.sin(v)))


def test_no_grad_and_enable_grad_and_decorators():
    x = ember.ones(2, requires_grad=True)
    with ember.no_grad():
        assert not (x * 2).requires_grad
        with ember.enable_grad():
            assert (x * 2).requires_grad
    with ember.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert ember.is_grad_enabled()

    @ember.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    with ember.inference_mode():
        assert not (x * 2).requires_grad
        assert ember.is_inference_mode_enabled()
    assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    x = ember.ones(2, requires_grad=True)
    result = {}

    def worker():
        result["other_thread"] = (x * 2).requires_grad

    with ember.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert result["other_thread"] is True


def test_detach_and_detach_inplace_and_requires_grad_():
    x = ember.ones(2, requires_grad=True)
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None
    d[0] = 5.0          # shares storage
    assert y[0].item() == 5.0
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad
    z = ember.zeros(2).requires_grad_()
    assert z.requires_grad and z.is_leaf
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables"):
        (z * 2).requires_grad_(False)


def test_requires_grad_propagation_and_leaves():
    a = ember.ones(2)
    b = ember.ones(2, requires_grad=True)
    c = a * b
    assert c.requires_grad and not c.is_leaf and c.grad_fn.name() == "MulBackward0"
    assert (a * 2).grad_fn is None and (a * 2).is_leaf
    assert len(c.grad_fn.next_functions) == 2
    assert c.grad_fn.next_functions[0][0] is None
    assert type(c.grad_fn.next_functions[1][0]).__name__ == "AccumulateGrad"


def test_gradient_shape_mismatch_error():
    x = ember.ones(3, requires_grad=True)
    y = x * 2
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        y.backward(ember.ones(2))


def test_broadcast_gradients_reduce_to_input_shape():
    a = ember.ones(3, 1, requires_grad=True)
    b = ember.ones(4, requires_grad=True)
    (a * b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_allclose(b.grad.numpy(), np.full(4, 3.0))


def test_mixed_dtype_gradient_comes_back_in_input_dtype():
    a = ember.ones(2, dtype=ember.float32, requires_grad=True)
    b = ember.ones(2, dtype=ember.float64, requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype is ember.float32 and b.grad.dtype is ember.float64


def test_leaf_grad_does_not_alias_between_leaves():
    a = ember.ones(2, requires_grad=True)
    b = ember.ones(2, requires_grad=True)
    (a + b).sum().backward()
    a.grad.add_(1)
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 1.0])
