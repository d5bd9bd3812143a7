"""Connectionist temporal classification: ``CtcLoss`` (one node, ``CtcLossBackward0``) and
its gradient ``CtcLossGrad``, both Primitives.

The forward (alpha) and backward (beta) recursions run in log space over the extended
target ``blank, l1, blank, l2, ..., blank`` of every sample at once: each time step is one
vectorised update of an ``(N, 2S+1)`` array, so only time is looped over. Samples shorter
than the batch's longest input or target are masked, never sliced.

As in PyTorch, the gradient given for ``log_probs`` is ``exp(log_probs) - posterior``: the
gradient with respect to the logits that a ``log_softmax`` turned into ``log_probs`` (not the
plain derivative by ``log_probs``), zero past each sample's input length.
"""
import numpy as np

from .primitive import Primitive
from .._tensor import Tensor
from ..backend import get_array_module, to_host
from ..backend.meta import is_meta

_NEG_INF = float("-inf")
_make = Tensor._make


def _lse(xp, *terms):
    """log(sum(exp(terms))) elementwise, -inf where every term is -inf."""
    m = terms[0]
    for t in terms[1:]:
        m = xp.maximum(m, t)
    safe = xp.where(xp.isneginf(m), 0, m)
    total = xp.exp(terms[0] - safe)
    for t in terms[1:]:
        total = total + xp.exp(t - safe)
    return xp.log(total) + safe


def _shift(xp, a, k):
    """``a`` moved ``k`` places along its last dim (right for k > 0, left for k < 0), -inf
    filling the places vacated."""
    out = xp.full(a.shape, _NEG_INF, dtype=a.dtype)
    if k > 0:
        out[..., k:] = a[..., :-k]
    else:
        out[..., :k] = a[..., -k:]
    return out


class _Geometry:
    """The extended targets of a batch and the masks the recursions need, in the data's
    module: ``ext`` (N, L) class per position, ``valid`` (positions within 2 * target
    length + 1), ``skip`` (a step from s - 2 allowed: its class differs from s's)."""

    def __init__(self, xp, labels, il, tl, num_classes, blank):
        n, s_max = labels.shape
        length = 2 * s_max + 1
        ext = np.full((n, length), blank, dtype=np.int64)
        ext[:, 1::2] = np.clip(labels, 0, num_classes - 1)
        pos = np.arange(length)
        skip = np.zeros((n, length), dtype=bool)
        skip[:, 2:] = ext[:, 2:] != ext[:, :-2]
        self.il, self.tl, self.length = il, tl, length
        self.ext = xp.asarray(ext)
        self.valid = xp.asarray(pos[None, :] < 2 * tl[:, None] + 1)
        self.skip = xp.asarray(skip)
        self.batch = xp.asarray(np.arange(n)[:, None])


def _alphas(xp, lpe, geom):
    """log alpha (T, N, L): every prefix path's log probability ending at (t, s)."""
    steps, n, length = lpe.shape
    alpha = xp.full(lpe.shape, _NEG_INF, dtype=lpe.dtype)
    first = xp.full((n, length), _NEG_INF, dtype=lpe.dtype)
    first[:, 0] = lpe[0, :, 0]
    if length > 1:
        first[:, 1] = xp.where(xp.asarray(geom.tl > 0), lpe[0, :, 1], _NEG_INF)
    alpha[0] = xp.where(geom.valid, first, _NEG_INF)
    skip = geom.skip
    for t in range(1, steps):
        prev = alpha[t - 1]
        two = xp.where(skip, _shift(xp, prev, 2), _NEG_INF)
        step = _lse(xp, prev, _shift(xp, prev, 1), two) + lpe[t]
        alpha[t] = xp.where(geom.valid, step, _NEG_INF)
    return alpha


def _betas(xp, lpe, geom):
    """log beta (T, N, L), PyTorch's convention: includes the emission at t itself."""
    steps, n, length = lpe.shape
    beta = xp.full(lpe.shape, _NEG_INF, dtype=lpe.dtype)
    pos = xp.asarray(np.arange(length))
    tl = xp.asarray(geom.tl)
    last = (pos[None, :] == 2 * tl[:, None]) | (pos[None, :] == 2 * tl[:, None] - 1)
    il = xp.asarray(geom.il)[:, None]
    skip_ahead = _shift(xp, geom.skip.astype(lpe.dtype), -2) > 0
    nxt = xp.full((n, length), _NEG_INF, dtype=lpe.dtype)
    for t in range(steps - 1, -1, -1):
        two = xp.where(skip_ahead, _shift(xp, nxt, -2), _NEG_INF)
        step = _lse(xp, nxt, _shift(xp, nxt, -1), two) + lpe[t]
        start = xp.where(last, lpe[t], _NEG_INF)
        cur = xp.where(il - 1 == t, start, xp.where(il - 1 > t, step, _NEG_INF))
        nxt = beta[t] = xp.where(geom.valid, cur, _NEG_INF)
    return beta


class CtcLoss(Primitive):
    """Per-sample negative log likelihood (N,) of the targets under ``log_probs`` (T, N, C)."""
    _backward_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, geom, zero_infinity):
        d = log_probs._data
        xp = get_array_module(d)
        ctx.save_for_backward(log_probs)
        ctx.geom, ctx.zero_infinity = geom, zero_infinity
        if is_meta(d):
            return xp.zeros(d.shape[1:2], dtype=d.dtype)
        lpe = d[:, geom.batch, geom.ext]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            alpha = _alphas(xp, lpe, geom)
            t_end = xp.asarray(np.maximum(geom.il - 1, 0))
            rows = alpha[t_end, xp.asarray(np.arange(d.shape[1]))]
            tl = geom.tl
            ends = xp.asarray(np.stack([2 * tl, np.maximum(2 * tl - 1, 0)], axis=1))
            pair = xp.take_along_axis(rows, ends, axis=1)
            single = xp.asarray(tl == 0)
            nll = -_lse(xp, pair[:, 0], xp.where(single, _NEG_INF, pair[:, 1]))
            nll = xp.where(xp.asarray(geom.il == 0), float("inf"), nll)
        ctx.alpha, ctx.lpe, ctx.nll = alpha, lpe, nll
        # zero_infinity's zeroed values are a ``where`` after this node (as in PyTorch); the
        # gradients of those samples are zeroed here
        return nll.astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, grad):
        log_probs, = ctx.saved_tensors
        return CtcLossGrad.apply(grad, log_probs, ctx), None, None


class CtcLossGrad(Primitive):
    """``(exp(log_probs) - posterior) * grad`` per sample; PyTorch has no derivative of it."""
    _backward_name = "CtcLossBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, log_probs, fwd):
        d, g = log_probs._data, grad._data
        xp = get_array_module(d)
        if is_meta(d):
            return xp.zeros(d.shape, dtype=d.dtype)
        geom, lpe, nll = fwd.geom, fwd.lpe, fwd.nll
        steps, n, classes = d.shape
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            beta = _betas(xp, lpe, geom)
            post = xp.exp(fwd.alpha + beta + nll[None, :, None] - lpe)
            cells = (xp.asarray(np.arange(steps))[:, None, None] * n + geom.batch[None]) \
                * classes + geom.ext[None]
            gamma = xp.zeros(steps * n * classes, dtype=d.dtype)
            xp.add.at(gamma, cells.reshape(-1), post.reshape(-1).astype(d.dtype, copy=False))
            out = (xp.exp(d) - gamma.reshape(d.shape)) * g[None, :, None]
            # an impossible alignment (infinite loss) has a NaN gradient for every class
            out = xp.where(xp.isinf(nll)[None, :, None], float("nan"), out)
        keep = xp.asarray(np.arange(steps)[:, None] < geom.il[None, :])
        if fwd.zero_infinity:
            keep = keep & ~xp.isinf(nll)[None, :]
        return xp.where(keep[:, :, None], out, 0).astype(d.dtype, copy=False)

    @staticmethod
    def backward(ctx, gg):
        raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


def _lengths(value, name, batch):
    """Host int64 array of a lengths argument (a tensor or a sequence of ints)."""
    if isinstance(value, Tensor):
        if value.dtype.is_floating_point or value.dtype.is_complex:
            raise RuntimeError(f"{name} must be integral")
        arr = np.asarray(to_host(value._data)).astype(np.int64).reshape(-1)
    else:
        arr = np.asarray(list(value), dtype=np.int64).reshape(-1)
    if arr.shape[0] != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return arr


_WHERE = " (while checking arguments for ctc_loss_allocate_outputs)"


def ctc_loss_per_sample(log_probs, targets, input_lengths, target_lengths, blank,
                        zero_infinity):
    """Checks the arguments as PyTorch does and returns the per-sample losses (N,), or a 0-d
    one for unbatched ``log_probs`` (T, C), with ``target_lengths`` on the host (for 'mean').

    >>> import ember
    >>> lp = ember.zeros(2, 1, 2).log_softmax(2)
    >>> ctc_loss_per_sample(lp, ember.tensor([[1]]), (2,), (1,), 0, False)[0]
    tensor([0.2877])
    """
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        if targets.ndim == 1:
            targets = targets.unsqueeze(0)
    dt = log_probs.dtype
    if not dt.is_floating_point or dt.itemsize < 4:
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for '{dt.scalar_name}'")
    if log_probs.ndim != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {log_probs.ndim + 1}-"
                           f"dimensional tensor for argument #1 'log_probs'{_WHERE}")
    steps, batch, classes = log_probs.shape
    if blank < 0 or blank >= classes:
        raise RuntimeError("blank must be in label range")
    il = _lengths(input_lengths, "input_lengths", batch)
    tl = _lengths(target_lengths, "target_lengths", batch)
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    if targets.ndim not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional "
                           f"tensor for argument #2 'targets'{_WHERE}")
    for name, arr in (("target_lengths", tl), ("input_lengths", il)):
        if arr.size and arr.min() < 0:
            raise RuntimeError(f"Expected {name} to have value at least 0, but got value "
                               f"{arr.min()}{_WHERE}")
    s_max = int(tl.max()) if tl.size else 0
    host = np.asarray(to_host(targets._data)).astype(np.int64)
    if targets.ndim == 1:
        if host.shape[0] != tl.sum():
            raise RuntimeError(f"Expected tensor to have size {tl.sum()} at dimension 0, but "
                               f"got size {host.shape[0]} for argument #2 'targets'{_WHERE}")
        starts = np.cumsum(tl) - tl
        idx = np.minimum(starts[:, None] + np.arange(s_max)[None, :], max(host.shape[0] - 1, 0))
        labels = host[idx] if host.size else np.zeros((batch, s_max), dtype=np.int64)
    else:
        if host.shape[0] != batch:
            raise RuntimeError(f"Expected tensor to have size {batch} at dimension 0, but got "
                               f"size {host.shape[0]} for argument #2 'targets'{_WHERE}")
        if host.shape[1] < s_max:
            raise RuntimeError(f"Expected tensor to have size at least {s_max} at dimension 1, "
                               f"but got size {host.shape[1]} for argument #2 'targets'{_WHERE}")
        labels = host[:, :s_max]
    if il.max() > steps:
        raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got "
                           f"value {il.max()}{_WHERE}")
    xp = get_array_module(log_probs._data)
    geom = _Geometry(xp, labels, il, tl, classes, blank)
    nll = CtcLoss.apply(log_probs, geom, bool(zero_infinity))
    return (nll.squeeze(0) if unbatched else nll), [int(v) for v in tl]


__all__ = ["ctc_loss_per_sample"]
