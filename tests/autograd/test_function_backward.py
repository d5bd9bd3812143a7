"""What a custom Function's ``backward`` may return (a bare gradient, extra ``None``s,
broadcastable shapes) and the errors for what it may not; non-contiguous gradients in and
out; exceptions raised in backward reach the caller unchanged. Error texts are PyTorch's
(checked against torch in tests/parity/autograd/)."""
import numpy as np
import pytest

import ember
from ember.autograd import Function

from tests.autograd.custom_functions import Square, t64


def test_trailing_extra_nones_accepted():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2, None, None

    x = t64([1.0, 2.0])
    F.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_single_gradient_may_be_returned_bare():
    x = t64([1.0, 2.0])
    Square.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 4.0])


@pytest.mark.parametrize("returned, n_args, got", [
    ("one", 2, 1), ("two_non_none", 1, 2), ("three", 2, 3)])
def test_wrong_number_of_gradients(returned, n_args, got):
    class Wrong(Function):
        @staticmethod
        def forward(ctx, *args):
            return args[0] * 1

        @staticmethod
        def backward(ctx, g):
            if returned == "one":
                return g
            if returned == "two_non_none":
                return g, g
            return g, None, g

    x = t64([1.0])
    args = (x,) * n_args
    with pytest.raises(RuntimeError, match=rf"^function WrongBackward returned an incorrect "
                                           rf"number of gradients \(expected {n_args}, got "
                                           rf"{got}\)$"):
        Wrong.apply(*args).sum().backward()


def test_wrong_gradient_shape_names_function_index_and_shapes():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, x, y):
            return (x * y).sum()

        @staticmethod
        def backward(ctx, g):
            return None, ember.ones(3, dtype=ember.float64)

    x, y = t64(np.ones((2, 2))), t64(np.ones((2, 2)))
    with pytest.raises(RuntimeError, match=r"^Function BadShapeBackward returned an invalid "
                                           r"gradient at index 1 - got \[3\] but expected shape "
                                           r"compatible with \[2, 2\]$"):
        BadShape.apply(x, y).backward()


def test_wrong_gradient_shape_index_counts_tensor_inputs_only():
    class BadShape(Function):
        @staticmethod
        def forward(ctx, k, x):
            return x.sum() * k

        @staticmethod
        def backward(ctx, g):
            return None, ember.ones(3, dtype=ember.float64)

    x = t64(np.ones((2, 2)))
    with pytest.raises(RuntimeError, match=r"^Function BadShapeBackward returned an invalid "
                                           r"gradient at index 0 - got \[3\] but expected shape "
                                           r"compatible with \[2, 2\]$"):
        BadShape.apply(2.0, x).backward()


def test_broadcastable_gradient_is_summed_to_input_shape():
    # PyTorch accepts a gradient that the input's shape broadcasts to, and sums it back.
    class Wide(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g.expand(2, 3)

    x = t64([1.0, 2.0, 3.0])
    Wide.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_gradient_for_non_tensor_input_raises():
    class F(Function):
        @staticmethod
        def forward(ctx, x, c):
            return x * c

        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    with pytest.raises(RuntimeError, match="^function FBackward returned a gradient different "
                                           "than None at position 2, but the corresponding "
                                           "forward input was not a Variable$"):
        F.apply(t64([1.0]), 2.0).sum().backward()


def test_backward_receives_non_contiguous_gradients():
    seen = {}

    class Copy(Function):
        @staticmethod
        def forward(ctx, x):
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            seen["contiguous"] = g.is_contiguous()
            seen["shape"] = tuple(g.shape)
            return g.view(-1).view(g.shape) if g.is_contiguous() else g * 1

    a = np.arange(6.0).reshape(2, 3)
    w = np.arange(6.0).reshape(3, 2) + 1
    x = t64(a)
    (Copy.apply(x).t() * ember.tensor(w)).sum().backward()
    assert seen["shape"] == (2, 3)
    assert seen["contiguous"] is False     # the gradient of .t() is a transposed view
    np.testing.assert_allclose(x.grad.numpy(), w.T)


def test_backward_making_a_non_contiguous_gradient_contiguous():
    # .view() needs a contiguous gradient: .contiguous() first works on the transposed one.
    class Flat(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape = tuple(x.shape)
            return x.clone()

        @staticmethod
        def backward(ctx, g):
            return g.contiguous().view(-1).view(ctx.shape)

    x = t64(np.ones((2, 3)))
    (Flat.apply(x).t() * ember.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.arange(6.0).reshape(3, 2).T)


def test_exception_in_backward_reaches_caller_unchanged():
    err = KeyError("custom failure")

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise err

    y = Boom.apply(t64([1.0])) * 3
    with pytest.raises(KeyError) as info:
        y.sum().backward()
    assert info.value is err


def test_exception_in_backward_through_autograd_grad():
    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ZeroDivisionError("in backward")

    x = t64([1.0])
    with pytest.raises(ZeroDivisionError, match="^in backward$"):
        ember.autograd.grad(Boom.apply(x).sum(), x)
