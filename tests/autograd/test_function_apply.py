"""Custom ``autograd.Function``, new style: ``apply`` with positional, default and keyword
arguments, the ``setup_context`` style, non-tensor arguments and mixed tuple outputs.
Expected values are derived by hand / NumPy; error texts are PyTorch's (checked against
torch in tests/parity/autograd/)."""
import numpy as np
import pytest

from ember.autograd import Function

from tests.autograd.custom_functions import t64


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
