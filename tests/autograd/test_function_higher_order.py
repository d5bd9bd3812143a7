"""Higher-order gradients through custom Functions whose backward is written with ember ops,
and ``once_differentiable`` (backward under no_grad, double backward refused)."""
import numpy as np
import pytest

import ember
from ember.autograd import Function
from ember.autograd.function import once_differentiable

from tests.autograd.custom_functions import MulConstant, Square, t64


class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g


def test_higher_order_through_backward_written_with_ember_ops():
    a = np.array([0.5, -2.0, 1.5])
    x = t64(a)
    expected = [3 * a ** 2, 6 * a, 6 * np.ones_like(a), np.zeros_like(a)]
    g = Cube.apply(x).sum()
    for k in range(3):
        g, = ember.autograd.grad(g.sum(), x, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), expected[k])
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), expected[3])


def test_autograd_grad_inside_a_loop_of_custom_functions():
    x = t64([0.3])
    for step in range(5):
        y = MulConstant.apply(Square.apply(x), 0.5)        # x^2 / 2
        g, = ember.autograd.grad(y.sum(), x, create_graph=True)
        gg, = ember.autograd.grad(g.sum(), x)
        np.testing.assert_allclose(g.detach().numpy(), x.detach().numpy())
        np.testing.assert_allclose(gg.numpy(), [1.0])


class CubeOnce(Function):
    grad_mode_in_backward = None

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        CubeOnce.grad_mode_in_backward = ember.is_grad_enabled()
        x, = ctx.saved_tensors
        return 3 * x ** 2 * g


def test_once_differentiable_runs_backward_under_no_grad():
    x = t64([1.0, 2.0])
    CubeOnce.apply(x).sum().backward()
    assert CubeOnce.grad_mode_in_backward is False
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 12.0])
    g, = ember.autograd.grad(CubeOnce.apply(x).sum(), x, create_graph=True)
    assert CubeOnce.grad_mode_in_backward is False
    np.testing.assert_allclose(g.detach().numpy(), [3.0, 12.0])


def test_once_differentiable_double_backward_raises():
    x = t64([1.0, 2.0])
    y = CubeOnce.apply(x) ** 2              # grad_output reaching backward requires grad
    g, = ember.autograd.grad(y.sum(), x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 6 * np.array([1.0, 2.0]) ** 5)
    assert g.requires_grad
    with pytest.raises(RuntimeError, match="^trying to differentiate twice a function that "
                                           "was marked with @once_differentiable$"):
        g.sum().backward()


def test_once_differentiable_with_plain_grad_output_gives_constant_gradient():
    # The grad_output is ones (no graph): the gradient does not depend on x through
    # once_differentiable's backward, so create_graph gives a tensor without history there.
    x = t64([1.0, 2.0])
    g, = ember.autograd.grad(CubeOnce.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad
