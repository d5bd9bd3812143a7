"""Forward-mode AD: tangents of ops against finite differences (float64), levels,
views and in-place ops, custom Function.jvp, gradcheck(check_forward_ad) and errors."""
import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck, GradcheckError


def _rand(*shape, positive=False, seed=0):
    a = np.random.default_rng(seed + len(shape)).standard_normal(shape)
    if positive:
        a = np.abs(a) + 0.5
    return ember.tensor(a, requires_grad=True)


def _forward_check(fn, *inputs):
    assert gradcheck(fn, inputs, check_forward_ad=True, check_backward_ad=False)


CASES = {
    "arithmetic": (lambda a, b: (a * b - a / b + 2 * a - b ** 2) / 3, [(3, 4), (4,)], True),
    "unary": (lambda a: a.exp() + a.log() + a.sqrt() + a.sin() + a.tanh() + a.sigmoid()
              + a.reciprocal() + a.abs() + a.rsqrt(), [(5,)], True),
    "matmul": (lambda a, b: a @ b, [(3, 4), (4, 2)], False),
    "linear": (lambda x, w, b: F.linear(x, w, b), [(2, 3), (4, 3), (4,)], False),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, padding=1), [(1, 2, 4, 4), (3, 2, 3, 3),
                                                                (3,)], False),
    "softmax": (lambda a: F.softmax(a, 1) + F.log_softmax(a, 0), [(3, 4)], False),
    "activations": (lambda a: F.relu(a) + F.gelu(a) + F.silu(a) + F.elu(a) + F.softplus(a),
                    [(6,)], False),
    "reductions": (lambda a: a.sum(0) + a.mean(1).sum() + a.prod(0) + a.var(0) + a.amax(0),
                   [(3, 4)], False),
    "views": (lambda a: a.t().reshape(2, 6)[:, 1:4].permute(1, 0).expand(2, 3, 2).flip(0),
              [(3, 4)], False),
    "indexing": (lambda a: a[[0, 2]] * a.gather(1, ember.tensor([[1], [3]])), [(3, 4)],
                 False),
    "losses": (lambda a, b: F.mse_loss(a, b) + F.cross_entropy(a, ember.tensor([0, 2, 1]))
               + F.smooth_l1_loss(a, b), [(3, 4), (3, 4)], False),
    "linalg": (lambda a: ember.linalg.inv(a) + ember.det(a), [(3, 3)], True),
    "cat": (lambda a, b: ember.cat([a, b], 1).cumsum(1), [(2, 3), (2, 2)], False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_tangent_matches_finite_differences(name):
    fn, shapes, positive = CASES[name]
    inputs = [_rand(*s, positive=positive, seed=i) for i, s in enumerate(shapes)]
    if name == "linalg":
        inputs = [(inputs[0] + 3 * ember.eye(3, dtype=ember.float64)).detach()
                  .requires_grad_()]
    _forward_check(fn, *inputs)


def test_nn_modules_under_forward_ad():
    ember.manual_seed(0)
    net = ember.nn.Sequential(ember.nn.Conv2d(1, 2, 3), ember.nn.Tanh(), ember.nn.Flatten(),
                              ember.nn.Linear(8, 3)).double()
    x = _rand(2, 1, 4, 4)
    _forward_check(lambda x: F.cross_entropy(net(x), ember.tensor([0, 2])), x)


def test_unpack_and_level_lifetime():
    x = ember.tensor([1.0, 2.0])
    with fwAD.dual_level():
        d = fwAD.make_dual(x, ember.tensor([3.0, 4.0]))
        primal, tangent = fwAD.unpack_dual(d)
        assert isinstance(fwAD.unpack_dual(d), fwAD.UnpackedDualTensor)
        assert primal.tolist() == [1.0, 2.0] and tangent.tolist() == [3.0, 4.0]
        assert fwAD.unpack_dual(x).tangent is None  # the primal itself gets no tangent
        assert fwAD.unpack_dual(primal).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None
    assert fwAD.unpack_dual(d).tangent is None  # dropped with the level


def test_enter_exit_functions():
    level = fwAD.enter_dual_level()
    try:
        assert level == 0
        d = fwAD.make_dual(ember.ones(2), ember.ones(2), level=level)
        assert fwAD.unpack_dual(d * 2, level=level).tangent.tolist() == [2.0, 2.0]
    finally:
        fwAD.exit_dual_level(level=level)
    with pytest.raises(RuntimeError, match="Dual level must be a positive number"):
        fwAD.exit_dual_level()


def test_tangent_through_views_and_inplace():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.tensor([1.0, 2.0, 3.0]), ember.tensor([1.0, 1.0, 1.0]))
        y = d.clone()
        view = y[1:]
        view.mul_(2)  # writes into y's tangent too
        assert fwAD.unpack_dual(y).tangent.tolist() == [1.0, 2.0, 2.0]
        z = ember.zeros(3)
        z[:2] = d[1:]  # a tensor without tangent gets one from the copied region
        assert fwAD.unpack_dual(z).tangent.tolist() == [1.0, 1.0, 0.0]
        base = ember.zeros(3)
        late_view = base[1:]
        dual_base = fwAD.make_dual(base, ember.tensor([5.0, 6.0, 7.0]))
        assert fwAD.unpack_dual(dual_base[1:]).tangent.tolist() == [6.0, 7.0]
        assert fwAD.unpack_dual(late_view).tangent is None


class _Square(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_forward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        return grad

    @staticmethod
    def jvp(ctx, x_t):
        x, = ctx.saved_tensors
        return 2 * x * x_t


class _WrongSquare(_Square):
    @staticmethod
    def jvp(ctx, x_t):
        x, = ctx.saved_tensors
        return 3 * x * x_t


def test_function_jvp():
    with fwAD.dual_level():
        d = fwAD.make_dual(ember.tensor([3.0]), ember.tensor([1.0]))
        assert fwAD.unpack_dual(_Square.apply(d)).tangent.tolist() == [6.0]
    _forward_check(_Square.apply, _rand(3))


def test_wrong_jvp_fails_gradcheck():
    x = _rand(3)
    with pytest.raises(GradcheckError, match="Jacobian computed with forward mode mismatch "
                                             "for output 0 with respect to input 0"):
        gradcheck(_WrongSquare.apply, (x,), check_forward_ad=True, check_backward_ad=False)
    assert not gradcheck(_WrongSquare.apply, (x,), check_forward_ad=True,
                         check_backward_ad=False, raise_exception=False)


def test_function_without_jvp():
    class Twice(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    with fwAD.dual_level():
        with pytest.raises(NotImplementedError, match="does not implement|must implement the jvp"):
            Twice.apply(fwAD.make_dual(ember.ones(2), ember.ones(2)))
        assert Twice.apply(ember.ones(2)).tolist() == [2.0, 2.0]  # no tangent: no jvp needed


def test_gradgradcheck_forward_over_reverse():
    assert gradgradcheck(lambda x: (x * x).sin().sum(), (_rand(3),), check_fwd_over_rev=True)


def test_errors():
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(ember.ones(2), ember.ones(2))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match=r"Tensor is of size \[2\] while the given "
                                               r"forward gradient is of size \[3\]\."):
            fwAD.make_dual(ember.ones(2), ember.ones(3))
        with pytest.raises(RuntimeError, match="Nested forward mode AD is not supported"):
            fwAD.enter_dual_level()
        with pytest.raises(ValueError, match="floating point or complex"):
            fwAD.make_dual(ember.ones(2, dtype=ember.int64), ember.ones(2))
        with pytest.raises(NotImplementedError, match="complex tangent of a real tensor"):
            fwAD.make_dual(ember.ones(2), ember.ones(2, dtype=ember.complex64))
    with pytest.raises(ValueError, match="at least one of check_forward_ad"):
        gradcheck(lambda x: x, (_rand(2),), check_backward_ad=False)


def test_no_tangent_no_cost():
    """Outside a level, op results carry nothing extra in their instance dict."""
    y = _rand(3) * 2
    assert "_fw_grad" not in y.__dict__
