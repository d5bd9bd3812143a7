"""The legacy (pre-0.4) Function API -- instances with ``__init__`` parameters, ``self`` as
ctx, reuse of one instance -- and ``Variable`` with its deprecated ``volatile`` flag.
Error and warning texts are PyTorch's (checked against torch in tests/parity/autograd/)."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import Function, Variable, gradcheck

from tests.autograd.custom_functions import Square, t64


class LegacyScale(Function):
    def __init__(self, k):
        super().__init__()
        self.k = k

    def forward(self, x):
        return x * self.k

    def backward(self, g):
        return g * self.k


def test_legacy_init_parameters():
    x = t64([1.0, 2.0])
    y = LegacyScale(3.0)(x)
    np.testing.assert_allclose(y.detach().numpy(), [3.0, 6.0])
    assert y.grad_fn.name() == "LegacyScaleBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_legacy_save_for_backward_and_needs_input_grad():
    class LMul(Function):
        def forward(self, x, w):
            self.save_for_backward(x, w)
            return x * w

        def backward(self, g):
            x, w = self.saved_tensors
            assert self.needs_input_grad == (True, False)
            return g * w, None

    x, w = t64([1.0, 2.0]), t64([3.0, 4.0], requires_grad=False)
    LMul()(x, w).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_legacy_mark_dirty_on_self():
    class LAddOne(Function):
        def forward(self, x):
            x.add_(1)
            self.mark_dirty(x)
            return x

        def backward(self, g):
            return g * 1

    leaf = t64([1.0, 2.0])
    a = leaf * 2
    v = a._version
    r = LAddOne()(a)
    assert r is a and a._version == v + 2 and a.grad_fn.name() == "LAddOneBackward"
    (a * 3).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), [6.0, 6.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        LAddOne()(t64([1.0]))


def test_legacy_mark_non_differentiable_on_self():
    seen = {}

    class LPos(Function):
        def forward(self, x):
            mask = (x > 0).to(x.dtype)
            self.mark_non_differentiable(mask)
            return x * 2, mask

        def backward(self, g, g_mask):
            seen["g_mask"] = g_mask
            return g * 2

    x = t64([-1.0, 2.0])
    out, mask = LPos()(x)
    assert out.requires_grad and not mask.requires_grad and mask.grad_fn is None
    out.sum().backward()
    np.testing.assert_allclose(seen["g_mask"].numpy(), [0.0, 0.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_legacy_reuse_of_one_instance():
    f = LegacyScale(2.0)
    x = t64([1.0, 2.0])
    y1 = f(x)
    y2 = f(x * 3)
    (y1.sum() + y2.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 8.0])


def test_legacy_reuse_saved_tensors_belong_to_their_call():
    class LMul(Function):
        def forward(self, x, w):
            self.save_for_backward(x, w)
            return x * w

        def backward(self, g):
            x, w = self.saved_tensors
            return g * w, g * x

    f = LMul()
    x = t64([1.0, 2.0])
    w1, w2 = t64([3.0, 4.0]), t64([5.0, 7.0])
    y1, y2 = f(x, w1), f(x, w2)
    y1.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(w1.grad.numpy(), [1.0, 2.0])
    y2.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 11.0])


def test_legacy_reuse_needs_input_grad_belongs_to_its_call():
    class LMul(Function):
        def forward(self, x, w):
            self.save_for_backward(x, w)
            return x * w

        def backward(self, g):
            x, w = self.saved_tensors
            gx = gw = None
            if self.needs_input_grad[0]:
                gx = g * w
            if self.needs_input_grad[1]:
                gw = g * x
            return gx, gw

    f = LMul()
    x, w = t64([1.0, 2.0]), t64([3.0, 4.0], requires_grad=False)
    x2, w2 = t64([5.0, 6.0], requires_grad=False), t64([7.0, 8.0])
    y1 = f(x, w)
    f(x2, w2)
    y1.sum().backward()
    assert x.grad is not None
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_legacy_function_through_apply_raises_clear_error():
    with pytest.raises(RuntimeError, match=r"LegacyScale has a non-static forward"):
        LegacyScale.apply(t64([1.0]))


def test_new_style_function_called_as_instance_raises():
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward "
                                           "method is deprecated"):
        Square()(t64([1.0]))


def test_legacy_saved_tensors_before_call_raises():
    with pytest.raises(RuntimeError):
        LegacyScale(1.0).saved_tensors


def test_legacy_gradcheck_on_instance():
    assert gradcheck(LegacyScale(1.5), (t64(np.random.default_rng(0).standard_normal(4)),),
                     eps=1e-6, atol=1e-4) is True


# ============================================================================================
# Variable
# ============================================================================================
def test_variable_returns_the_tensor():
    t = ember.ones(2)
    v = Variable(t)
    assert isinstance(v, ember.Tensor) and v is t and not v.requires_grad
    v = Variable(ember.ones(2), requires_grad=True)
    assert v.requires_grad and v.is_leaf


def test_variable_volatile_warns_and_is_ignored():
    with pytest.warns(UserWarning, match=r"volatile was removed and now has no effect. Use "
                                         r"`with ember.no_grad\(\):` instead."):
        v = Variable(ember.ones(2), volatile=True)
    assert isinstance(v, ember.Tensor)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Variable(ember.ones(2), volatile=False)       # no warning


def test_volatile_attribute_reads_false_with_warning():
    with pytest.warns(UserWarning, match=r"volatile was removed \(Variable.volatile is always "
                                         r"False\)"):
        assert ember.ones(2).volatile is False
