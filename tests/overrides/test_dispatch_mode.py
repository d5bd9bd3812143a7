"""TorchDispatchMode: every built-in op run inside the mode reaches its handler,
forward and backward; ``func(*args)`` runs the op below the mode."""
import numpy as np
import pytest

import ember
from ember.autograd import dispatch
from ember.utils._python_dispatch import (
    TorchDispatchMode, _disable_current_modes, _get_current_dispatch_mode,
    _get_current_dispatch_mode_stack, _len_torch_dispatch_stack, _pop_mode, _push_mode)
from tests.helpers import check_grad
from tests.overrides.dispatch_helpers import logging_mode

LoggingMode = logging_mode(ember, TorchDispatchMode)


def test_mode_sees_forward_and_backward_ops():
    x = ember.tensor([0.5, 1.0, 2.0], requires_grad=True)
    with LoggingMode() as mode:
        x.sin().sum().backward()
    assert mode.ops == ["aten.sin.default", "aten.sum.default", "aten.ones_like.default",
                        "aten.expand_back.default", "aten.cos.default", "aten.mul.Tensor",
                        "aten.detach.default"]
    np.testing.assert_allclose(x.grad.numpy(), np.cos([0.5, 1.0, 2.0]), rtol=1e-6)


def test_gradient_sums_and_accumulation_are_ops_under_a_mode():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    x.grad = ember.tensor([10.0, 10.0])
    with LoggingMode() as mode:
        (x * x).sum().backward()
    # x reaches Mul twice: the two gradients are summed, then added into .grad
    assert mode.ops[-2:] == ["aten.add.Tensor", "aten.add.Tensor"]
    np.testing.assert_allclose(x.grad.numpy(), [12.0, 14.0])


def test_results_and_gradients_are_unchanged_by_a_mode():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 2))

    def fn(x, y):
        return ((x @ y).tanh() * 2 - y.sum(0, keepdim=True)).exp().mean()
    with LoggingMode():
        check_grad(fn, a, b)
        out = fn(ember.tensor(a), ember.tensor(b))
    np.testing.assert_allclose(out.item(), np.mean(np.exp(
        np.tanh(a @ b) * 2 - b.sum(0, keepdims=True))), rtol=1e-12)


def test_double_backward_under_a_mode():
    x = ember.tensor([0.3, 0.7], dtype=ember.float64, requires_grad=True)
    with LoggingMode() as mode:
        (g,) = ember.autograd.grad(x.pow(3).sum(), x, create_graph=True)
        g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.array([0.3, 0.7]))
    assert "aten.pow.Tensor_Scalar" in mode.ops


def test_func_runs_below_the_mode_and_its_result_is_returned():
    class Doubling(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))  # not seen by this mode again
            return out * 2 if func is ember.ops.aten.neg.default else out
    x = ember.tensor([1.0, -2.0], requires_grad=True)
    with Doubling():
        y = -x
    np.testing.assert_allclose(y.detach().numpy(), [-2.0, 4.0])
    y.sum().backward()  # the node recorded above the mode is Neg's
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, -1.0])
    assert y.grad_fn.name() == "NegBackward0"


def test_forward_runs_once_when_the_mode_passes_the_call_on():
    calls = []
    forward = ember._ops.elementwise.Sin.forward

    class Counting(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args)
    ember._ops.elementwise.Sin.forward = staticmethod(
        lambda ctx, x: calls.append(1) or forward(ctx, x))
    try:
        x = ember.tensor([1.0], requires_grad=True)
        with Counting():
            y = x.sin()
        assert len(calls) == 1
        y.backward()
    finally:
        ember._ops.elementwise.Sin.forward = staticmethod(forward)
    np.testing.assert_allclose(x.grad.numpy(), np.cos([1.0]))


def test_mode_that_does_not_run_the_op_still_gets_a_gradient():
    class Cached(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func is ember.ops.aten.exp.default:
                return ember.tensor([5.0, 6.0])
            return func(*args, **(kwargs or {}))
    x = ember.tensor([0.0, 1.0], requires_grad=True)
    with Cached():
        y = x.exp()
    np.testing.assert_allclose(y.detach().numpy(), [5.0, 6.0])
    assert y.requires_grad and y.grad_fn.name() == "ExpBackward0"
    y.sum().backward()  # exp's gradient reads its saved output: the mode's result
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 6.0])


def test_modes_nest_innermost_first():
    seen = []

    class Named(TorchDispatchMode):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((self.name, str(func), _len_torch_dispatch_stack()))
            return func(*args, **(kwargs or {}))
    with Named("outer"):
        with Named("inner"):
            ember.ones(2).neg()
    assert seen == [("inner", "aten.neg.default", 1), ("outer", "aten.neg.default", 0)]


def test_mode_stack_functions():
    a, b = TorchDispatchMode(), TorchDispatchMode()
    assert _get_current_dispatch_mode() is None and not dispatch.active[0]
    _push_mode(a)
    with b:
        assert _get_current_dispatch_mode() is b
        assert _get_current_dispatch_mode_stack() == [a, b]
        with _disable_current_modes() as taken:
            assert taken == [a, b] and _len_torch_dispatch_stack() == 0
        assert _len_torch_dispatch_stack() == 2
    assert _pop_mode() is a
    assert not dispatch.active[0]  # the op path is back to its one test
    with pytest.raises(RuntimeError, match="trying to pop from empty mode stack"):
        _pop_mode()


def test_args_are_the_tensors_and_types_is_empty_for_plain_tensors():
    got = []

    class Spy(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            got.append((func, types, args, kwargs))
            return func(*args, **(kwargs or {}))
    x, y = ember.ones(2), ember.zeros(2)
    with Spy():
        ember.add(x, y, alpha=3)
    func, types, args, kwargs = got[0]
    assert func is ember.ops.aten.add.Tensor and types == () and kwargs == {}
    assert args[0] is x and args[1] is y and args[2] == 3


def test_mode_returning_not_implemented_raises():
    class Refusing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return NotImplemented
    mode = Refusing()
    with pytest.raises(TypeError) as info, mode:
        ember.ones(2).exp()
    assert str(info.value).startswith(
        "Multiple dispatch failed for 'ember.ops.aten.exp.default'; all __torch_dispatch__ "
        f"handlers returned NotImplemented:\n\n  - mode object {mode!r}\n")
    assert not dispatch.active[0]


def test_base_mode_handler_is_abstract():
    with pytest.raises(NotImplementedError), TorchDispatchMode():
        ember.ones(1).neg()


def test_user_function_ops_are_dispatched():
    class Square(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return 2 * x * grad
    x = ember.tensor([3.0], requires_grad=True)
    with LoggingMode() as mode:
        Square.apply(x).backward()
    assert mode.ops.count("aten.mul.Tensor") == 3  # forward's one, backward's two
    np.testing.assert_allclose(x.grad.numpy(), [6.0])


def test_modes_are_per_thread():
    import threading
    other = []

    def work():
        other.append(_len_torch_dispatch_stack())
        ember.ones(2).exp()  # not seen by the main thread's mode
    with LoggingMode() as mode:
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        ember.ones(2).neg()
    assert other == [0] and mode.ops == ["aten.neg.default"]


def test_forward_ad_under_a_mode():
    import ember.autograd.forward_ad as fwAD
    with fwAD.dual_level():
        with LoggingMode() as mode:
            primal = fwAD.make_dual(ember.tensor([1.0, 2.0]), ember.tensor([1.0, 0.5]))
            y = primal.sin() * 3
        tangent = fwAD.unpack_dual(y).tangent
    np.testing.assert_allclose(tangent.numpy(), 3 * np.cos([1.0, 2.0]) * [1.0, 0.5],
                               rtol=1e-6)
    assert "aten.cos.default" in mode.ops  # the tangent rule's ops are seen too
