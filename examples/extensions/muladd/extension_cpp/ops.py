"""The operators' Python side: wrappers, fake implementations and autograd.

Written for PyTorch; only the import differs (``import torch`` runs it on PyTorch against the
library torch builds from the same ``csrc/muladd.cpp``).
"""
import ember as torch
from ember import Tensor

__all__ = ["mymuladd", "mymul", "myadd_out"]


def mymuladd(a: Tensor, b: Tensor, c: float) -> Tensor:
    """``a * b + c`` elementwise, for float32 tensors of one shape (differentiable in a, b)."""
    return torch.ops.extension_cpp.mymuladd.default(a, b, c)


def mymul(a: Tensor, b: Tensor) -> Tensor:
    """``a * b`` elementwise, for float32 tensors of one shape."""
    return torch.ops.extension_cpp.mymul.default(a, b)


def myadd_out(a: Tensor, b: Tensor, out: Tensor) -> None:
    """Writes ``a + b`` into ``out`` (float32, contiguous, same shape)."""
    torch.ops.extension_cpp.myadd_out.default(a, b, out)


# What the outputs look like (shape, dtype, device) without computing them: what tracing
# and opcheck's fake-tensor test run.
@torch.library.register_fake("extension_cpp::mymuladd")
def _(a, b, c):
    torch._check(a.shape == b.shape)
    torch._check(a.dtype == torch.float)
    torch._check(b.dtype == torch.float)
    torch._check(a.device == b.device)
    return torch.empty_like(a)


@torch.library.register_fake("extension_cpp::mymul")
def _(a, b):
    torch._check(a.shape == b.shape)
    torch._check(a.dtype == torch.float and b.dtype == torch.float)
    torch._check(a.device == b.device)
    return torch.empty_like(a)


# d(a * b + c)/da = b, d/db = a: saved only for the inputs that need a gradient
def _setup_context(ctx, inputs, output):
    a, b, c = inputs
    ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                          b if ctx.needs_input_grad[0] else None)


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    grad_a = mymul(grad, b) if ctx.needs_input_grad[0] else None
    grad_b = mymul(grad, a) if ctx.needs_input_grad[1] else None
    return grad_a, grad_b, None


torch.library.register_autograd("extension_cpp::mymuladd", _backward,
                                setup_context=_setup_context)
