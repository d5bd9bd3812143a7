"""The same custom Functions built against ``torch`` or ``ember``, and helpers that run
code on both libraries and compare, for the Function parity tests in this folder.

Each test builds its Functions against ``lib.autograd.Function`` for
``lib in (torch, ember)`` and compares outputs, gradients, higher derivatives,
version counters, what backward receives, and error types and messages (with
'torch' read as 'ember' where the texts differ only by the library's name).
"""
import numpy as np
import torch

import ember
from tests.parity.compare import error_of


def to_numpy(t):
    return None if t is None else t.detach().numpy()


def on_both(fn):
    """fn(lib) for torch and ember -> (torch result, ember result)."""
    return fn(torch), fn(ember)


def assert_same_arrays(a, b, rtol=1e-12, atol=0.0):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if x is None or y is None:
            assert x is None and y is None
        else:
            np.testing.assert_allclose(y, x, rtol=rtol, atol=atol)


def assert_same_error(fn, normalize=None):
    """Run fn(lib) on both; same exception type name and message (torch -> ember)."""
    t, e = error_of(lambda: fn(torch)), error_of(lambda: fn(ember))
    assert t is not None, "torch raised nothing"
    assert e is not None, f"ember raised nothing; torch raised {t}"
    t_msg = t[1].replace("torch", "ember")
    e_msg = e[1]
    if normalize:
        t_msg, e_msg = normalize(t_msg), normalize(e_msg)
    assert e[0] == t[0], (e, t)
    assert e_msg == t_msg
    return t, e


def t64(lib, a, requires_grad=True):
    return lib.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# ---- Functions, built per library -----------------------------------------------------------
def linear_function(lib):
    class LinearFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, input, weight, bias=None):
            ctx.save_for_backward(input, weight, bias)
            output = input.mm(weight.t())
            if bias is not None:
                output += bias.unsqueeze(0).expand_as(output)
            return output

        @staticmethod
        def backward(ctx, grad_output):
            input, weight, bias = ctx.saved_tensors
            grad_input = grad_weight = grad_bias = None
            if ctx.needs_input_grad[0]:
                grad_input = grad_output.mm(weight)
            if ctx.needs_input_grad[1]:
                grad_weight = grad_output.t().mm(input)
            if bias is not None and ctx.needs_input_grad[2]:
                grad_bias = grad_output.sum(0).squeeze(0)
            return grad_input, grad_weight, grad_bias
    return LinearFunction


def mul_constant(lib):
    class MulConstant(lib.autograd.Function):
        @staticmethod
        def forward(ctx, tensor, constant):
            ctx.constant = constant
            return tensor * constant

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.constant, None
    return MulConstant


def exp_saving_output(lib):
    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.exp()
            ctx.save_for_backward(out)
            return out

        @staticmethod
        def backward(ctx, g):
            out, = ctx.saved_tensors
            return g * out
    return Exp


def square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    return Square


def add_one_inplace(lib):
    class AddOneInplace(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g * 1
    return AddOneInplace


RNG = np.random.default_rng(0)
X, W, B = RNG.standard_normal((4, 3)), RNG.standard_normal((5, 3)), RNG.standard_normal(5)
G = RNG.standard_normal((4, 5))
A3, B3 = RNG.standard_normal(3), RNG.standard_normal(3)


def make_function(lib, forward, backward):
    """A Function class of ``lib`` with the given static forward and backward."""
    return type("F", (lib.autograd.Function,), {"forward": staticmethod(forward),
                                                "backward": staticmethod(backward)})
