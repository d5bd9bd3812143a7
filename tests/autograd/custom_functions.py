"""Small custom Functions and float64 tensor makers shared by the Function tests in this folder.

Expected gradients in the tests are derived by hand from these definitions."""
import numpy as np

import ember
from ember.autograd import Function


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



class AddOneInplace(Function):
    @staticmethod
    def forward(ctx, x):
        x.add_(1)
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g



def random_pair(shape_a=(3,), shape_b=(3,), seed=0):
    """Two float64 tensors requiring grad, drawn from one seeded generator."""
    rng = np.random.default_rng(seed)
    return t64(rng.standard_normal(shape_a)), t64(rng.standard_normal(shape_b))
