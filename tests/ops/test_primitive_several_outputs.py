"""A built-in op (``Primitive``) with several outputs passes its gradients on, whether its
arguments are plain tensors, include non-tensors, or need a dtype cast."""
import numpy as np

import ember
from ember._ops.primitive import Primitive
from tests.helpers import check_grad


class _SumAndDifference(Primitive):
    """``(a + b, a - b)``; an optional non-tensor ``scale`` multiplies both."""
    _backward_name = "SumAndDifferenceBackward0"

    @staticmethod
    def forward(ctx, a, b, scale=None):
        ctx.scale = 1.0 if scale is None else scale
        return (a._data + b._data) * ctx.scale, (a._data - b._data) * ctx.scale

    @staticmethod
    def backward(ctx, grad_sum, grad_difference):
        return ((grad_sum + grad_difference) * ctx.scale,
                (grad_sum - grad_difference) * ctx.scale, None)


class _PlainSumAndDifference(_SumAndDifference):
    _backward_name = "PlainSumAndDifferenceBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _SumAndDifference.forward(ctx, a, b)

    @staticmethod
    def backward(ctx, grad_sum, grad_difference):
        return _SumAndDifference.backward(ctx, grad_sum, grad_difference)[:2]


R = np.random.default_rng(0)
A, B = R.standard_normal((2, 3)), R.standard_normal((2, 3))


def test_plain_tensor_arguments_get_gradients():
    a = ember.tensor(A, requires_grad=True)
    b = ember.tensor(B, requires_grad=True)
    s, d = _PlainSumAndDifference.apply(a, b)
    (2 * s + 3 * d).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 5.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.full((2, 3), -1.0))


def test_one_output_used():
    a = ember.tensor(A, requires_grad=True)
    b = ember.tensor(B, requires_grad=True)
    ga, gb = ember.autograd.grad(_PlainSumAndDifference.apply(a, b)[1].sum(), (a, b))
    np.testing.assert_array_equal(ga.numpy(), np.ones((2, 3)))
    np.testing.assert_array_equal(gb.numpy(), -np.ones((2, 3)))


def test_gradients_by_finite_differences():
    check_grad(lambda a, b: _PlainSumAndDifference.apply(a, b)[0] * _PlainSumAndDifference.apply(
        a, b)[1], A, B)
    check_grad(lambda a, b: _SumAndDifference.apply(a, b, 0.5)[1].exp(), A, B)


def test_non_tensor_argument_and_cast():
    a = ember.tensor(A.astype(np.float32), requires_grad=True)
    b = ember.tensor(B, requires_grad=True)  # float64: output float64, a's gradient cast back
    s, d = _SumAndDifference.apply(a, b, 2.0)
    (s + d).sum().backward()
    assert a.grad.dtype == ember.float32 and b.grad.dtype == ember.float64
    np.testing.assert_array_equal(a.grad.numpy(), np.full((2, 3), 4.0))
    np.testing.assert_array_equal(b.grad.numpy(), np.zeros((2, 3)))
