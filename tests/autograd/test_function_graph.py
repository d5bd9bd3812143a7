"""The graph a custom Function records: when it records none, ``grad_fn`` names,
``next_functions`` and ``saved_tensors``, hooks on ``grad_fn``, a forward returning its
input, and Functions missing ``forward`` or ``backward``."""
import numpy as np
import pytest

import ember
from ember.autograd import Function

from tests.autograd.custom_functions import AddOneInplace, MulConstant, Square, t64


def test_inputs_not_requiring_grad_give_no_graph():
    y = Square.apply(t64([1.0], requires_grad=False))
    assert not y.requires_grad and y.grad_fn is None
    y = MulConstant.apply(ember.tensor([1, 2]), 3)
    assert not y.requires_grad and y.grad_fn is None


def test_nothing_recorded_under_no_grad():
    x = t64([1.0])
    with ember.no_grad():
        y = Square.apply(x)
    assert not y.requires_grad and y.grad_fn is None
    with ember.no_grad():
        a = x * 1
    assert AddOneInplace.apply(a) is a and a.grad_fn is None


def test_integer_outputs_do_not_require_grad():
    class ArgmaxAndDouble(Function):
        @staticmethod
        def forward(ctx, x):
            return x.argmax(), x * 2

        @staticmethod
        def backward(ctx, g_idx, g):
            return g * 2

    x = t64([1.0, 5.0, 2.0])
    idx, y = ArgmaxAndDouble.apply(x)
    assert int(idx) == 1 and not idx.requires_grad and idx.grad_fn is None
    assert y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


def test_grad_fn_name_next_functions_saved_tensors():
    class MyFunction(Function):
        @staticmethod
        def forward(ctx, a, k, b):
            ctx.save_for_backward(a, b)
            return a * b * k

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, None, g * a

    a = t64([1.0, 2.0])
    b = t64([3.0, 4.0], requires_grad=False)
    c = a * 2
    y = MyFunction.apply(a, 5, c)
    node = y.grad_fn
    assert node.name() == "MyFunctionBackward"
    assert type(node).__name__ == "MyFunctionBackward"
    assert "MyFunctionBackward" in repr(y)
    (n0, i0), (n1, i1) = node.next_functions
    assert n0.name() == "torch::autograd::AccumulateGrad" and i0 == 0  # as PyTorch spells it
    assert type(n0).__name__ == "AccumulateGrad" and repr(n0).startswith("<AccumulateGrad object")
    assert n0.variable is a
    assert n1 is c.grad_fn and i1 == 0
    saved = node.saved_tensors
    assert saved[0] is a
    np.testing.assert_allclose(saved[1].detach().numpy(), [2.0, 4.0])
    z = MyFunction.apply(b, 1, a)
    assert z.grad_fn.next_functions[0] == (None, 0)


def test_grad_fn_register_hook_and_prehook():
    calls = []
    x = t64([1.0, 2.0])
    y = Square.apply(x)
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", [g.tolist() for g in go])))
    y.grad_fn.register_hook(lambda gi, go: calls.append(
        ("post", [g.tolist() for g in gi], [g.tolist() for g in go])))
    y.backward(ember.tensor([1.0, 10.0], dtype=ember.float64))
    assert calls == [("pre", [[1.0, 10.0]]), ("post", [[2.0, 40.0]], [[1.0, 10.0]])]


def test_grad_fn_hooks_can_replace_gradients():
    x = t64([1.0, 2.0])
    y = Square.apply(x)
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,))
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [21.0, 41.0])


def test_hook_handle_remove():
    calls = []
    x = t64([1.0])
    y = Square.apply(x)
    h = y.grad_fn.register_hook(lambda gi, go: calls.append(1))
    h.remove()
    y.sum().backward()
    assert calls == []


def test_forward_returning_its_input_still_routes_through_backward():
    class Ident(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 10

    x = t64([1.0, 2.0])
    y = Ident.apply(x)
    assert y is not x
    assert y.grad_fn.name() == "IdentBackward"
    assert x.grad_fn is None and x.is_leaf
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [10.0, 10.0])


def test_function_without_forward_raises_at_apply():
    class NoForward(Function):
        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(NotImplementedError, match="You must implement the forward function "
                                                  "for custom autograd.Function"):
        NoForward.apply(t64([1.0]))


def test_function_without_backward_raises_at_backward():
    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    y = NoBackward.apply(t64([1.0]))
    assert y.grad_fn.name() == "NoBackwardBackward"
    with pytest.raises(NotImplementedError, match="You must implement either the backward or "
                                                  "vjp method for your custom "
                                                  "autograd.Function"):
        y.sum().backward()
