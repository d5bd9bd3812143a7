"""softmax and log_softmax along a dim, each one numerically stable node."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np  # the float32 dtype bfloat16 data is computed in

from .._tensor import _wrap_dim
from ..backend import dtypes, get_array_module, kernels
from ..backend.parallel import host_work, parallel_for
from ..backend.dtypes import refuse_float8
from .primitive import Primitive
from .activation_ops import float32_formula
from .._typing import dtype

if TYPE_CHECKING:  # annotations only
    from .._tensor import Tensor


def _prepare(x, dim, dtype):
    d = x._data
    if dtype is not None:
        d = d.astype(dtype.np)
    elif d.dtype.kind == "V":  # bfloat16 (ml_dtypes): computed in float32 (see _rounded)
        d = d.astype(np.float32)
    elif d.dtype.kind != "f":
        raise NotImplementedError(f"\"softmax_lastdim_kernel_impl\" not implemented for "
                                  f"'{x.dtype.scalar_name}'")
    if dim is None:
        dim = 0 if d.ndim in (0, 1, 3) else 1  # PyTorch's legacy implicit choice
    return d, _wrap_dim(dim, d.ndim)


def _rounded(out, x, dtype):
    """A bfloat16 input's result (computed in float32) rounded back to bfloat16."""
    if dtype is None and x._data.dtype.kind == "V":
        return out.astype(x._data.dtype)
    return out


class Softmax(Primitive):
    _backward_name = "SoftmaxBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        if dtype is None and x._data.itemsize == 1:  # float8: no kernel in PyTorch
            refuse_float8(x._data.dtype, "softmax_lastdim_kernel_impl")
        d, dim = _prepare(x, dim, dtype)
        ctx.dim = dim
        xp = get_array_module(d)
        if d.ndim == 0:
            return xp.ones_like(d)
        if d.size == 0:  # nothing to normalize (NumPy's max has no identity to start from)
            return xp.empty_like(d)
        with xp.errstate(invalid="ignore"):  # a slice of all -inf gives nan, like PyTorch
            e = xp.exp(d - d.max(axis=dim, keepdims=True))
            return _rounded(e / e.sum(axis=dim, keepdims=True), x, dtype)

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        if out.dim() == 0:
            return grad * 0, None, None
        return float32_formula(lambda grad, out: out * (grad - (grad * out).sum(
            ctx.dim, keepdim=True)), grad, out), None, None


#: a log_softmax over the last dim of at least this many bytes runs in blocks of rows on the
#: thread pool (a language model's (tokens, vocabulary) logits)
_ROWS_MIN_BYTES = 1 << 20
#: each thread takes its rows in runs of about this many bytes per array, so that the formula's
#: passes (max, subtract, exp, sum, ...) after the first find the run in the core's cache:
#: 700 x 10000 float32, one thread, forward 6.9 -> 5.8 ms, backward 7.0 -> 5.4 ms
_ROWS_RUN_BYTES = 1 << 20


def _by_rows(d, dim, fn, *others, native=None):
    """``fn(rows, *other_rows, out_rows)`` over blocks of rows of the C-contiguous 2-D-or-more
    NumPy float array ``d`` reduced along its last dim, on the thread pool; the result (a
    fresh array), or None when the layout does not allow it. Each row is computed as the
    whole array's would be (the same bits, whatever the thread count).

    ``native``: the compiled version of ``fn`` (``kernels.log_softmax_rows``...), used when
    ``kernels.rows_native_for`` takes the arrays; it returns the rows it left (a NaN or an
    infinity in them), which ``fn`` then computes."""
    arrays = (d,) + others
    if (dim != d.ndim - 1 or d.ndim < 2 or d.nbytes < _ROWS_MIN_BYTES or
            any(type(a) is not np.ndarray or not a.flags.c_contiguous or a.shape != d.shape
                or a.dtype != d.dtype for a in arrays)):
        return None
    n = d.shape[-1]
    flat = [a.reshape(-1, n) for a in arrays]
    out = np.empty(d.shape, d.dtype)
    out_flat = out.reshape(-1, n)
    if native is not None and not kernels.rows_native_for(*flat):
        native = None

    run = max(1, _ROWS_RUN_BYTES // (n * d.itemsize))

    def block(lo, hi):
        with np.errstate(invalid="ignore"):
            if native is not None:
                left = native(*(f[lo:hi] for f in flat), out_flat[lo:hi])
                if left is not None and len(left):
                    rows = left + lo
                    part = np.empty((len(rows), n), d.dtype)
                    fn(*(f[rows] for f in flat), part)
                    out_flat[rows] = part
                return
            for start in range(lo, hi, run):
                stop = min(hi, start + run)
                fn(*(f[start:stop] for f in flat), out_flat[start:stop])
    parallel_for(out_flat.shape[0], block, host_work(d, 3 * d.nbytes))
    return out


def _log_softmax_rows(rows, out):
    np.subtract(rows, rows.max(axis=1, keepdims=True), out=out)
    np.subtract(out, np.log(np.exp(out).sum(axis=1, keepdims=True)), out=out)


def _log_softmax_grad_rows(out, grad, res):
    e = np.exp(out)
    e *= grad.sum(axis=1, keepdims=True)
    np.subtract(grad, e, out=res)


class LogSoftmax(Primitive):
    _backward_name = "LogSoftmaxBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        if dtype is None and x._data.itemsize == 1:  # float8: no kernel in PyTorch
            refuse_float8(x._data.dtype, "log_softmax_lastdim_kernel_impl")
        d, dim = _prepare(x, dim, dtype)
        ctx.dim = dim
        xp = get_array_module(d)
        if d.ndim == 0:
            return xp.zeros_like(d)
        if d.size == 0:
            return xp.empty_like(d)
        if dtype is None and d is x._data:
            out = _by_rows(d, dim, _log_softmax_rows, native=kernels.log_softmax_rows)
            if out is not None:
                return out
        with xp.errstate(invalid="ignore"):
            shifted = d - d.max(axis=dim, keepdims=True)
            return _rounded(shifted - xp.log(xp.exp(shifted).sum(axis=dim, keepdims=True)),
                            x, dtype)

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        if out.dim() == 0:
            return grad * 0, None, None
        return float32_formula(lambda grad, out: grad - out.exp() * grad.sum(
            ctx.dim, keepdim=True), grad, out), None, None

    @staticmethod
    def backward_arrays(ctx, grad):
        out, = ctx.saved_arrays
        if grad.dtype.kind == "V":  # bfloat16: in float32, rounded once (as PyTorch)
            res = _log_softmax_grad(out.astype(np.float32), grad.astype(np.float32), ctx.dim)
            return res.astype(grad.dtype), None, None
        return _log_softmax_grad(out, grad, ctx.dim), None, None


def _log_softmax_grad(out, grad, dim):
    res = _by_rows(out, dim, _log_softmax_grad_rows, grad,
                   native=kernels.log_softmax_grad_rows) if grad.shape == out.shape else None
    if res is not None:
        return res
    if out.ndim == 0:
        return grad * 0
    xp = get_array_module(out, grad)
    return grad - xp.exp(out) * grad.sum(axis=dim, keepdims=True)


def softmax(x: Tensor, dim: int | None = None, dtype: dtype | None = None,
            _stacklevel: int = 3) -> Tensor:
    return Softmax.apply(x, dim, dtype)


def log_softmax(x: Tensor, dim: int | None = None, dtype: dtype | None = None,
                _stacklevel: int = 3) -> Tensor:
    return LogSoftmax.apply(x, dim, dtype)


__all__ = ["softmax", "log_softmax", "dtypes"]
