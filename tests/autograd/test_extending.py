"""Behaviour of ember's extension API, ember + NumPy only.

Custom ``autograd.Function`` (static/ctx style, setup_context style, the
pre-0.4 legacy style), ctx methods, error paths, memory (no leaks, deep
chains), higher order, ``once_differentiable``, graph objects, ``Variable``,
``gradcheck``/``gradgradcheck`` and anomaly detection. Expected values are
derived by hand / NumPy; error texts are PyTorch's (checked against torch in
tests/parity/test_function_parity.py).
"""
import gc
import os
import re
import warnings
import weakref

import numpy as np
import pytest

import ember
from ember.autograd import Function, Variable, gradcheck, gradgradcheck, GradcheckError
from ember.autograd.function import once_differentiable

FREED = "Trying to backward through the graph a second time"


def t64(a, requires_grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


class Square(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


# ============================================================================================
# 1. new-style Function: apply, kwargs, setup_context, non-tensor args and outputs
# ============================================================================================
class Affine(Function):
    @staticmethod
    def forward(ctx, x, scale=2.0, shift=0.0):
        ctx.scale = scale
        return x * scale + shift

    @staticmethod
    def backward(ctx, g):
        return g * ctx.scale, None, None


def test_apply_positional_and_defaults():
    x = t64([1.0, 2.0])
    np.testing.assert_allclose(Affine.apply(x).detach().numpy(), [2.0, 4.0])
    np.testing.assert_allclose(Affine.apply(x, 3.0, 1.0).detach().numpy(), [4.0, 7.0])


def test_apply_kwargs_bound_through_forward_signature_with_defaults():
    x = t64([1.0, 2.0])
    y = Affine.apply(x, shift=1.0)           # scale keeps its default 2.0
    np.testing.assert_allclose(y.detach().numpy(), [3.0, 5.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])
    x.grad = None
    y = Affine.apply(x=x, scale=-1.0)
    np.testing.assert_allclose(y.detach().numpy(), [-1.0, -2.0])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, -1.0])


def test_apply_kwargs_errors():
    x = t64([1.0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'bias'"):
        Affine.apply(x, bias=1.0)
    with pytest.raises(TypeError, match="multiple values for argument 'scale'"):
        Affine.apply(x, 2.0, scale=3.0)


class ScaleSC(Function):
    """setup_context style: forward has no ctx."""

    @staticmethod
    def forward(x, k=3.0):
        return x * k

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, k = inputs
        ctx.k = k
        ctx.save_for_backward(x, output)

    @staticmethod
    def backward(ctx, g):
        x, out = ctx.saved_tensors
        np.testing.assert_allclose(out.detach().numpy(), x.detach().numpy() * ctx.k)
        return g * ctx.k, None


def test_setup_context_style():
    x = t64([1.0, 2.0])
    y = ScaleSC.apply(x, 4.0)
    np.testing.assert_allclose(y.detach().numpy(), [4.0, 8.0])
    assert y.grad_fn.name() == "ScaleSCBackward"
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4.0, 4.0])
    x.grad = None
    ScaleSC.apply(x, k=5.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])


def test_setup_context_inputs_include_defaults():
    x = t64([1.0, 2.0])
    y = ScaleSC.apply(x)
    np.testing.assert_allclose(y.detach().numpy(), [3.0, 6.0])


def test_non_tensor_arguments_of_any_type():
    class Weird(Function):
        @staticmethod
        def forward(ctx, x, n, name, opts, fn):
            ctx.info = (n, name, opts, fn)
            return fn(x) * n

        @staticmethod
        def backward(ctx, g):
            n, name, opts, fn = ctx.info
            assert (n, name, opts) == (3, "abc", {"k": [1, 2]})
            return g * n, None, None, None, None

    x = t64([1.0, -2.0])
    y = Weird.apply(x, 3, "abc", {"k": [1, 2]}, lambda t: t * 2)
    np.testing.assert_allclose(y.detach().numpy(), [6.0, -12.0])
    assert y.grad_fn.needs_input_grad == (True, False, False, False, False)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0])


def test_tensors_inside_lists_are_not_tracked():
    class FromList(Function):
        @staticmethod
        def forward(ctx, xs):
            return xs[0] * 2

        @staticmethod
        def backward(ctx, g):
            raise AssertionError("never called")

    x = t64([1.0])
    y = FromList.apply([x])
    assert not y.requires_grad and y.grad_fn is None


def test_tuple_output_mixing_tensors_and_non_tensors():
    seen = {}

    class Mixed(Function):
        @staticmethod
        def forward(ctx, x, n):
            return x * n, n, "label", x * 0 + 1

        @staticmethod
        def backward(ctx, g, g_n, g_label, g_ones):
            seen["grads"] = (g, g_n, g_label, g_ones)
            return g * ctx.needs_input_grad[0] * 2, None

    x = t64([1.0, 2.0])
    out = Mixed.apply(x, 2)
    assert isinstance(out, tuple) and len(out) == 4
    assert out[1] == 2 and out[2] == "label"
    assert out[0].requires_grad and out[3].requires_grad
    out[0].sum().backward()
    g, g_n, g_label, g_ones = seen["grads"]
    np.testing.assert_allclose(g.numpy(), [1.0, 1.0])
    assert g_n is None and g_label is None
    np.testing.assert_allclose(g_ones.numpy(), [0.0, 0.0])   # unused tensor output: zeros
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# ============================================================================================
# 2. ctx: save_for_backward / saved_tensors / needs_input_grad
# ============================================================================================
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
# 3. mark_dirty / mark_non_differentiable / set_materialize_grads
# ============================================================================================
class AddOneInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


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


# ============================================================================================
# 4. what backward returns
# ============================================================================================
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


# ============================================================================================
# 5. memory: no leaks, no early frees, deep chains
# ============================================================================================
class StashOutput(Function):
    @staticmethod
    def forward(ctx, x):
        out = x * 2
        ctx.out = out          # the pattern that leaks in PyTorch (a reference cycle)
        return out

    @staticmethod
    def backward(ctx, g):
        assert ctx.out.shape == g.shape
        return g * 2


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_stash_output_on_ctx_keeps_rss_flat_over_10000_iterations():
    x = ember.randn(20000, requires_grad=True)      # 80 KB per output: a leak shows at once
    was_enabled = gc.isenabled()
    gc.disable()                                    # no help from the cycle collector
    try:
        for _ in range(200):                        # warm up allocator and caches
            StashOutput.apply(x).sum().backward()
        before = _rss_bytes()
        for _ in range(10000):
            y = StashOutput.apply(x)
            y.sum().backward()
        grown = _rss_bytes() - before
    finally:
        if was_enabled:
            gc.enable()
    # a leak of the outputs alone would be 10000 * 80 KB = 800 MB
    assert grown < 30 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB"
    np.testing.assert_allclose(x.grad.numpy()[:3], [2.0 * 10200] * 3)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc")
def test_stash_output_without_backward_keeps_rss_flat():
    x = ember.randn(20000, requires_grad=True)
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(100):
            StashOutput.apply(x)
        before = _rss_bytes()
        for _ in range(5000):
            y = StashOutput.apply(x)
            del y
        grown = _rss_bytes() - before
    finally:
        if was_enabled:
            gc.enable()
    assert grown < 30 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB"


@pytest.mark.parametrize("fn", [StashOutput, Square])
def test_weakref_to_output_dies_when_user_drops_it(fn):
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        x = t64([1.0, 2.0])
        y = fn.apply(x)
        ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
        del y
        assert ref() is None and node_ref() is None
        # after backward too
        y = fn.apply(x)
        z = y * 3
        ref, node_ref = weakref.ref(y), weakref.ref(y.grad_fn)
        z.sum().backward()
        del y, z
        assert ref() is None and node_ref() is None
        # alive while the graph still needs it (no early free)
        y = fn.apply(x)
        z = y * 3
        node_ref = weakref.ref(y.grad_fn)
        del y
        assert node_ref() is not None
        z.sum().backward()
        del z
        assert node_ref() is None
    finally:
        if was_enabled:
            gc.enable()


def test_saved_output_survives_until_backward():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * out

    x = t64([0.0, 1.0])
    z = Exp.apply(x) * 1          # the user drops the output itself
    gc.collect()
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.0, 1.0]))


class AddOne(Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return g


def test_chain_of_150000_functions_backprops_and_frees():
    x = t64([0.0])
    y = x
    for _ in range(150000):
        y = AddOne.apply(y)
    np.testing.assert_allclose(y.detach().numpy(), [150000.0])
    ref = weakref.ref(y.grad_fn)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0])
    del y
    assert ref() is None


def test_chain_of_150000_functions_freed_without_backward():
    x = t64([0.0])
    y = x
    for _ in range(150000):
        y = AddOne.apply(y)
    ref = weakref.ref(y.grad_fn)
    del y                       # freeing a deep graph must not recurse
    assert ref() is None


def test_repeated_create_graph_then_second_order_through_saved_output():
    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * out

    a = np.array([0.5, -1.0])
    x = t64(a)
    y = Exp.apply(x)
    for _ in range(3):
        g, = ember.autograd.grad(y.sum(), x, create_graph=True)
        np.testing.assert_allclose(g.detach().numpy(), np.exp(a))
    gg, = ember.autograd.grad(g.sum(), x, create_graph=True)
    np.testing.assert_allclose(gg.detach().numpy(), np.exp(a))
    ggg, = ember.autograd.grad(gg.sum(), x)
    np.testing.assert_allclose(ggg.numpy(), np.exp(a))


# ============================================================================================
# 6. higher order, once_differentiable
# ============================================================================================
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


# ============================================================================================
# 7. graph objects
# ============================================================================================
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


# ============================================================================================
# 8. the legacy (pre-0.4) API
# ============================================================================================
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
# 9. Variable
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


# ============================================================================================
# 10. gradcheck / gradgradcheck
# ============================================================================================
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


def _pair(shape_a=(3,), shape_b=(3,), seed=0):
    rng = np.random.default_rng(seed)
    return t64(rng.standard_normal(shape_a)), t64(rng.standard_normal(shape_b))


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


# ============================================================================================
# 11. anomaly detection
# ============================================================================================
class NaNBack(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * float("nan")


def _make_nan_output(x):
    return NaNBack.apply(x)          # the forward call the anomaly warning must point at


def _forward_line():
    import inspect
    src, start = inspect.getsourcelines(_make_nan_output)
    return start + 1


def test_detect_anomaly_nan_raises_and_warns_with_forward_traceback():
    x = t64([1.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            y = _make_nan_output(x)
            with pytest.raises(RuntimeError, match=r"^Function 'NaNBackBackward' returned nan "
                                                   r"values in its 0th output.$"):
                y.sum().backward()
    messages = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
    assert any(m.startswith("Anomaly Detection has been enabled.") for m in messages)
    trace = next(m for m in messages if m.startswith("Error detected in NaNBackBackward."))
    assert "Traceback of forward call that caused the error:" in trace
    assert f'File "{__file__}", line {_forward_line()}, in _make_nan_output' in trace
    assert "return NaNBack.apply(x)" in trace


def test_detect_anomaly_is_scoped():
    x = t64([1.0])
    with pytest.warns(UserWarning):
        with ember.autograd.detect_anomaly():
            assert ember.autograd.is_anomaly_enabled()
    assert not ember.autograd.is_anomaly_enabled()
    NaNBack.apply(x).sum().backward()              # no check outside: NaN passes through
    assert np.isnan(x.grad.numpy()).all()


def test_set_detect_anomaly_true():
    x = t64([1.0])
    ember.autograd.set_detect_anomaly(True)
    try:
        assert ember.autograd.is_anomaly_enabled()
        y = _make_nan_output(x)
        with pytest.warns(UserWarning, match="Error detected in NaNBackBackward"):
            with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
                y.sum().backward()
    finally:
        ember.autograd.set_detect_anomaly(False)
    assert not ember.autograd.is_anomaly_enabled()


def test_anomaly_nan_index_names_the_input():
    class SecondNaN(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g, g * float("nan")

    a, b = _pair()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            with pytest.raises(RuntimeError, match="^Function 'SecondNaNBackward' returned nan "
                                                   "values in its 1th output.$"):
                SecondNaN.apply(a, b).sum().backward()


def test_anomaly_mode_keeps_user_exceptions_unchanged():
    err = LookupError("from backward")

    class Boom(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise err

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with ember.autograd.detect_anomaly():
            with pytest.raises(LookupError) as info:
                Boom.apply(t64([1.0])).sum().backward()
    assert info.value is err
    assert any("Error detected in BoomBackward" in str(w.message) for w in caught)
