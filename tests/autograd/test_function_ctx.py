"""What a custom Function's ``ctx`` offers: ``save_for_backward`` / ``saved_tensors`` /
``needs_input_grad``, arbitrary attributes, ``mark_dirty``, ``mark_non_differentiable`` and
``set_materialize_grads``. Error texts are PyTorch's (checked against torch in
tests/parity/autograd/)."""
import numpy as np
import pytest

import ember
from ember.autograd import Function

from tests.autograd.custom_functions import AddOneInplace, Square, t64

FREED = "Trying to backward through the graph a second time"


def test_save_for_backward_inputs_outputs_intermediates_and_none():
    class F(Function):
        @staticmethod
        def forward(ctx, x, y):
            inter = x.exp()
            out = inter * y
            ctx.save_for_backward(x, None, inter, out, y)
            return out

        @staticmethod
        def backward(ctx, g):
            x, none, inter, out, y = ctx.saved_tensors
            assert none is None
            np.testing.assert_allclose(inter.numpy(), np.exp(x.detach().numpy()))
            np.testing.assert_allclose(out.detach().numpy(), inter.numpy() * y.detach().numpy())
            return g * out, g * inter

    a, b = np.array([0.1, 0.5]), np.array([2.0, -3.0])
    x, y = t64(a), t64(b)
    out = F.apply(x, y)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(a) * b)
    np.testing.assert_allclose(y.grad.numpy(), np.exp(a))


@pytest.mark.parametrize("bad, index, typename", [
    ((3,), 0, "int"), (("x", "t"), 1, "list"), ((None, 2.5), 1, "float"),
    (("x", None, (1,)), 2, "tuple")])
def test_save_for_backward_rejects_non_tensors(bad, index, typename):
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            args = [x if b == "x" else ([x] if b == "t" else b) for b in bad]
            ctx.save_for_backward(*args)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(TypeError, match=f"^save_for_backward can only save variables, but "
                                        f"argument {index} is of type {typename}$"):
        F.apply(t64([1.0]))


def test_saved_tensors_after_graph_freed_raises():
    x = t64([1.0, 2.0])
    y = Square.apply(x)
    node = y.grad_fn
    np.testing.assert_allclose(node.saved_tensors[0].detach().numpy(), [1.0, 2.0])
    y.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        node.saved_tensors
    with pytest.raises(RuntimeError, match=FREED):
        y.sum().backward()


def test_retain_graph_keeps_saved_tensors():
    x = t64([1.0, 2.0])
    y = Square.apply(x)
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 8.0])


def test_saved_variables_is_a_deprecated_alias():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_variables
            return g * 3

    x = t64([1.0])
    with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated"):
        F.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0])


def test_saved_input_modified_in_place_is_detected():
    x = t64([1.0, 2.0])
    a = x * 1
    y = Square.apply(a)
    a.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_needs_input_grad():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, a, b, c, k):
            seen.append(("forward", ctx.needs_input_grad))
            return a * b * c * k

        @staticmethod
        def backward(ctx, g):
            seen.append(("backward", ctx.needs_input_grad))
            a_g = g if ctx.needs_input_grad[0] else None
            return a_g, None, g, None

    a, b, c = t64([1.0]), t64([2.0], requires_grad=False), t64([3.0])
    y = F.apply(a, b, c, 4)
    y.sum().backward()
    flags = (True, False, True, False)
    assert seen == [("forward", flags), ("backward", flags)]
    assert y.grad_fn.needs_input_grad == flags


def test_arbitrary_ctx_attributes():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.shape_before = tuple(x.shape)
            ctx.note = {"a": 1}
            return x.sum()

        @staticmethod
        def backward(ctx, g):
            assert ctx.note == {"a": 1}
            return g.expand(ctx.shape_before)

    x = t64(np.ones((2, 3)))
    F.apply(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((2, 3)))


# ============================================================================================
# mark_dirty / mark_non_differentiable / set_materialize_grads
# ============================================================================================

def test_mark_dirty_returns_same_object_bumps_version_sets_grad_fn():
    leaf = t64([1.0, 2.0])
    a = leaf * 3
    v = a._version
    r = AddOneInplace.apply(a)
    assert r is a
    assert a._version == v + 2          # the add_ itself and mark_dirty (as in PyTorch)
    assert a.grad_fn.name() == "AddOneInplaceBackward"
    np.testing.assert_allclose(a.detach().numpy(), [4.0, 7.0])
    (a * a).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), 3 * 2 * np.array([4.0, 7.0]))


def test_mark_dirty_on_leaf_requiring_grad_raises():
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad has been used "
                                           "in an in-place operation.$"):
        AddOneInplace.apply(t64([1.0]))


def test_mark_dirty_without_grad_just_bumps_version():
    a = t64([1.0], requires_grad=False)
    v = a._version
    assert AddOneInplace.apply(a) is a
    assert a._version == v + 2 and not a.requires_grad and a.grad_fn is None


def test_mark_dirty_not_returned_raises():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward "
                                           "method were not returned as output"):
        F.apply(t64([1.0]) * 1)


def test_mark_dirty_invalidates_earlier_saved_use():
    x = t64([1.0, 2.0])
    a = x * 1
    y = Square.apply(a)
    AddOneInplace.apply(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_mark_non_differentiable():
    seen = {}

    class SortWithIdx(Function):
        @staticmethod
        def forward(ctx, x):
            order = np.argsort(x.detach().numpy(), kind="stable")
            idx = ember.tensor(order)
            mask = ember.tensor((x.detach().numpy() > 0).astype(np.float64))
            ctx.mark_non_differentiable(idx, mask)
            ctx.save_for_backward(idx)
            return x[idx], idx, mask

        @staticmethod
        def backward(ctx, g, g_idx, g_mask):
            seen["g_mask"] = g_mask
            idx, = ctx.saved_tensors
            out = ember.zeros_like(g)
            out[idx] = g
            return out

    x = t64([3.0, -1.0, 2.0])
    vals, idx, mask = SortWithIdx.apply(x)
    assert vals.requires_grad
    assert not idx.requires_grad and idx.grad_fn is None
    assert not mask.requires_grad and mask.grad_fn is None
    vals.backward(ember.tensor([10.0, 20.0, 30.0], dtype=ember.float64))
    np.testing.assert_allclose(x.grad.numpy(), [30.0, 10.0, 20.0])
    assert isinstance(seen["g_mask"], ember.Tensor)
    np.testing.assert_allclose(seen["g_mask"].numpy(), [0.0, 0.0, 0.0])


class TwoOutputs(Function):
    seen = None

    @staticmethod
    def forward(ctx, x, materialize):
        ctx.set_materialize_grads(materialize)
        return x * 2, x * 3

    @staticmethod
    def backward(ctx, g1, g2):
        TwoOutputs.seen = (g1, g2)
        total = 0
        if g1 is not None:
            total = total + g1 * 2
        if g2 is not None:
            total = total + g2 * 3
        return total, None


def test_materialize_grads_default_gives_zeros():
    x = t64([1.0, 2.0])
    a, b = TwoOutputs.apply(x, True)
    a.sum().backward()
    g1, g2 = TwoOutputs.seen
    np.testing.assert_allclose(g1.numpy(), [1.0, 1.0])
    assert isinstance(g2, ember.Tensor)
    np.testing.assert_allclose(g2.numpy(), [0.0, 0.0])
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


def test_set_materialize_grads_false_gives_none():
    x = t64([1.0, 2.0])
    a, b = TwoOutputs.apply(x, False)
    b.sum().backward()
    g1, g2 = TwoOutputs.seen
    assert g1 is None
    np.testing.assert_allclose(g2.numpy(), [1.0, 1.0])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])
