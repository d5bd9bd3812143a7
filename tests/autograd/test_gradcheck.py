"""``gradcheck`` / ``gradgradcheck`` on custom Functions: True on correct ones, the report
for each kind of wrong backward (None, zeros, a constant factor, a sign flip, a transposed
gradient), fast mode, non-reentrant backward, undefined output grads and a wrong double
backward."""
import re

import numpy as np
import pytest

import ember
from ember.autograd import Function, gradcheck, gradgradcheck, GradcheckError

from tests.autograd.custom_functions import MulConstant, random_pair as _pair, t64


class Mul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


class MM(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a.mm(b)

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g.mm(b.t()), a.t().mm(g)


def _bad(backward):
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a.mm(b) if a.dim() == 2 else a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return backward(g, a, b)
    return Bad


def test_gradcheck_true_on_correct_functions():
    assert gradcheck(Mul.apply, _pair()) is True
    assert gradcheck(MM.apply, _pair((3, 4), (4, 2))) is True
    assert gradcheck(MM.apply, _pair((3, 4), (4, 2)), fast_mode=True) is True
    assert gradcheck(MulConstant.apply, (_pair()[0], 2.5)) is True
    assert gradcheck.gradcheck(Mul.apply, _pair(), eps=1e-6, atol=1e-4) is True


def test_gradcheck_only_some_inputs_require_grad():
    a, b = _pair((2, 3), (3, 3))
    b.requires_grad_(False)
    assert gradcheck(MM.apply, (a, b)) is True


def test_gradcheck_multiple_outputs():
    class SinCos(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sin(), x.cos()

        @staticmethod
        def backward(ctx, gs, gc):
            x, = ctx.saved_tensors
            return gs * x.cos() - gc * x.sin()

    assert gradcheck(SinCos.apply, (_pair()[0],)) is True


def test_gradcheck_no_input_requires_grad_raises_value_error():
    with pytest.raises(ValueError, match="gradcheck expects at least one input tensor to "
                                         "require gradient"):
        gradcheck(Mul.apply, (t64([1.0], False), t64([2.0], False)))


def test_gradcheck_warns_for_non_double_inputs():
    x = ember.tensor([1.0, 2.0], requires_grad=True)
    with pytest.warns(UserWarning, match="Input #0 requires gradient and is not a double "
                                         "precision floating point"):
        gradcheck(lambda t: t * 2, (x,), raise_exception=False)


def test_gradcheck_error_is_runtime_error():
    assert issubclass(GradcheckError, RuntimeError)


def _gradcheck_message(fn, inputs, **kw):
    with pytest.raises(GradcheckError) as info:
        gradcheck(fn, inputs, **kw)
    return str(info.value)


def test_gradcheck_report_backward_returning_none():
    bad = _bad(lambda g, a, b: (g * b, None))
    msg = _gradcheck_message(bad.apply, _pair())
    lines = msg.splitlines()
    assert lines[0] == "Jacobian mismatch for output 0 with respect to input 1,"
    assert re.match(r"worst elements \(of 9; tolerance atol=1e-05, rtol=0.001\):", lines[1])
    assert lines[2].split() == ["input", "index", "output", "index", "analytical", "numerical",
                                "abs", "err", "rel", "err"]
    assert lines[-1] == ("hint: every analytical value is 0: backward returned nothing (None "
                         "or zeros) here")
    # the table rows: analytical 0, numerical = a (d(a*b)/db on the diagonal)
    a = _pair()[0].detach().numpy()
    rows = [ln.split() for ln in lines[3:-1]]
    assert len(rows) == 3
    for row in rows:
        i = int(row[0].strip("[]"))
        assert row[1] == row[0]                # only diagonal elements are off
        assert float(row[2]) == 0.0
        assert float(row[3]) == pytest.approx(a[i], rel=1e-4)


def test_gradcheck_report_backward_returning_zeros():
    bad = _bad(lambda g, a, b: (ember.zeros_like(a), g * a))
    msg = _gradcheck_message(bad.apply, _pair())
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert msg.endswith("hint: every analytical value is 0: backward returned nothing (None or "
                        "zeros) here")


def test_gradcheck_report_constant_factor():
    bad = _bad(lambda g, a, b: (g * b, 2 * g * a))
    msg = _gradcheck_message(bad.apply, _pair())
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 1,")
    assert msg.splitlines()[-1] == ("hint: analytical = 2 x numerical everywhere: a constant "
                                    "factor is missing or extra in backward")


def test_gradcheck_report_sign_flip():
    bad = _bad(lambda g, a, b: (-g * b, g * a))
    msg = _gradcheck_message(bad.apply, _pair())
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,")
    assert "analytical = -1 x numerical everywhere" in msg and "(the sign is flipped)" in msg


def test_gradcheck_report_transposed_gradient():
    bad = _bad(lambda g, a, b: (g.mm(b.t()), a.t().mm(g).t()))
    msg = _gradcheck_message(bad.apply, _pair((3, 3), (3, 3)))
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 1,")
    assert msg.splitlines()[-1].startswith("hint: ")
    assert "transpose" in msg.splitlines()[-1]


def test_gradcheck_raise_exception_false_returns_false():
    bad = _bad(lambda g, a, b: (g * b, None))
    assert gradcheck(bad.apply, _pair(), raise_exception=False) is False
    bad_fast = _bad(lambda g, a, b: (g * b, 2 * g * a))
    assert gradcheck(bad_fast.apply, _pair(), raise_exception=False, fast_mode=True) is False


def test_gradcheck_fast_mode_detects_wrong_backward():
    bad = _bad(lambda g, a, b: (g * b, 2 * g * a))
    msg = _gradcheck_message(bad.apply, _pair(), fast_mode=True)
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 1")


def test_gradcheck_detects_non_reentrant_backward():
    rng = np.random.default_rng(0)

    class Noisy(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2 + ember.tensor(rng.standard_normal(tuple(g.shape)) * 1e-9)

    msg = _gradcheck_message(Noisy.apply, (_pair()[0],))
    assert msg.startswith("Backward is not reentrant, i.e., running backward with same input "
                          "and grad_output multiple times gives different values")
    # within nondet_tol the reentrancy check passes
    assert gradcheck(Noisy.apply, (_pair()[0],), nondet_tol=1e-6,
                     check_undefined_grad=False) is True


def test_gradcheck_detects_backward_ignoring_grad_output():
    bad = _bad(lambda g, a, b: (b * 1, a * 1))
    msg = _gradcheck_message(bad.apply, _pair())
    assert msg.startswith("Jacobian mismatch for output 0 with respect to input 0,")


def test_gradcheck_detects_backward_nonlinear_in_grad_output():
    # Right for one-hot grad_outputs (so the Jacobians match), wrong for a random one.
    bad = _bad(lambda g, a, b: (g.abs() * b, g.abs() * a))
    msg = _gradcheck_message(bad.apply, _pair())
    assert msg.startswith("Backward is not linear in grad_output")


def test_gradcheck_detects_backward_that_fails_on_undefined_grads():
    class Picky(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.set_materialize_grads(False)
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2           # fails when g is None

    msg = _gradcheck_message(Picky.apply, (_pair()[0],))
    assert "to handle undefined output grads" in msg
    assert gradcheck(Picky.apply, (_pair()[0],), check_undefined_grad=False) is True


class CubeTwice(Function):
    """Cube whose backward is itself a custom Function (twice differentiable)."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return CubeGrad.apply(x, g)


class CubeGrad(Function):
    wrong = False

    @staticmethod
    def forward(ctx, x, g):
        ctx.save_for_backward(x, g)
        return 3 * x * x * g

    @staticmethod
    def backward(ctx, gg):
        x, g = ctx.saved_tensors
        factor = 5 if CubeGrad.wrong else 6
        return factor * x * g * gg, 3 * x * x * gg


def test_double_backward_via_nested_custom_function():
    a = np.array([0.5, -1.5])
    x = t64(a)
    g, = ember.autograd.grad(CubeTwice.apply(x).sum(), x, create_graph=True)
    assert g.grad_fn.name() == "CubeGradBackward"
    gg, = ember.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.numpy(), 6 * a)


def test_gradgradcheck_true_on_twice_differentiable_function():
    assert gradgradcheck(CubeTwice.apply, (_pair()[0],)) is True
    assert gradgradcheck(Mul.apply, _pair()) is True
    assert gradgradcheck(lambda t: (t ** 3).sum(), (_pair()[0],)) is True


def test_gradgradcheck_fails_for_wrong_double_backward():
    CubeGrad.wrong = True
    try:
        with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect "
                                                 "to input 0"):
            gradgradcheck(CubeTwice.apply, (_pair()[0],))
        assert gradgradcheck(CubeTwice.apply, (_pair()[0],), raise_exception=False) is False
    finally:
        CubeGrad.wrong = False


class _CastsItsGradient(ember.autograd.Function):
    """backward returns float32 for a float64 input: the engine casts it back, as
    PyTorch's does, so the gradient that reaches the input has the input's dtype."""

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, grad):
        return (grad * 2).float()


def test_check_grad_dtypes_sees_the_gradient_that_reaches_the_input():
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(_CastsItsGradient.apply, (x,), check_grad_dtypes=True,
                                    atol=1e-3, rtol=1e-3)


def test_check_grad_dtypes_rejects_a_gradient_of_another_dtype(monkeypatch):
    from ember.autograd import gradcheck as gc
    x = ember.randn(3, dtype=ember.float64, requires_grad=True)
    real_grad = gc.autograd_grad

    def float32_grads(*args, **kwargs):
        return tuple(None if g is None else g.float() for g in real_grad(*args, **kwargs))
    monkeypatch.setattr(gc, "autograd_grad", float32_grads)
    with pytest.raises(GradcheckError, match="Gradient has dtype mismatch"):
        gc._check_grad_dtypes([x * 2], (x,), [0])


def test_check_batched_forward_grad():
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda a, b: ((a * b).tanh().sum(1), a.softmax(0)), (x, w),
                                    check_forward_ad=True, check_batched_forward_grad=True)
    with pytest.raises(AssertionError, match="requires check_forward_ad to be True"):
        ember.autograd.gradcheck(lambda t: t * 2, (x,), check_batched_forward_grad=True)

    class ReadsScalar(ember.autograd.Function):  # its jvp is not batch-safe
        generate_vmap_rule = True

        @staticmethod
        def forward(t):
            return t * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, g):
            return g * 2

        @staticmethod
        def jvp(ctx, t):
            return t * 2 + float(t.sum()) * 0
    with pytest.raises(GradcheckError, match="While computing batched gradients"):
        ember.autograd.gradcheck(ReadsScalar.apply, (x,), check_forward_ad=True,
                                 check_batched_forward_grad=True)
