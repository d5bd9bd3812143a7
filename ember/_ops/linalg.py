"""Matrix products: mm, matmul (1-D, 2-D, batched, broadcasting), bmm, dot,
mv, outer, linear, einsum (addmm and the rest of the family: ``matmul_family``)."""
from __future__ import annotations

import math

from .._tensor import Tensor
from ..backend import get_array_module, broadcast_shapes
from .primitive import Primitive
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.dispatch import active as _dispatch_active
from ..backend.gemm import (matmul as _gemm, matmul_add as _gemm_add, matmul_pair as _gemm_pair,
                            widened_on_host as _widened_on_host)
from .._typing import Sequence


def _dims(shape):
    return "x".join(map(str, shape))


def _check_same_dtype(a, b, name):
    """PyTorch's wording differs with the kernel that a product lands in."""
    if a._data.dtype != b._data.dtype:
        if name == "mm":
            msg = (f"expected m1 and m2 to have the same dtype, but got: {a.dtype.cpp_name} != "
                   f"{b.dtype.cpp_name}")
        elif name == "dot":
            msg = (f"dot : expected both vectors to have same dtype, but found "
                   f"{a.dtype.scalar_name} and {b.dtype.scalar_name}")
        elif name == "mv":
            msg = (f"addmv input tensors must have the same dtype, but got {b.dtype.scalar_name}, "
                   f"{a.dtype.scalar_name}, and {b.dtype.scalar_name}")
        else:
            msg = f"expected scalar type {a.dtype.scalar_name} but found {b.dtype.scalar_name}"
        raise RuntimeError(msg)


class Matmul(Primitive):
    """NumPy's matmul semantics, which are PyTorch's; backward undoes the 1-D
    promotion and the batch broadcasting."""
    _backward_name = "MmBackward0"
    saved_needed_for = ((1,), (0,))

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _gemm(a._data, b._data)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        a_shape, b_shape = a._data.shape, b._data.shape
        a2 = a.unsqueeze(0) if len(a_shape) == 1 else a
        b2 = b.unsqueeze(-1) if len(b_shape) == 1 else b
        sa, sb = a2._data.shape, b2._data.shape
        g = grad.reshape(broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1]))
        ga = gb = None
        if ctx.needs_input_grad[0]:
            ga = matmul(g, b2.mT).sum_to_size(a2._data.shape).reshape(a_shape)
        if ctx.needs_input_grad[1]:
            if len(sb) == 2 and len(sa) > 2 and g._data.shape[:-2] == sa[:-2]:
                # a stack times one matrix: the stack's rows as one product, not a product
                # per matrix and a sum over the stack
                k = sa[-1]
                gb = matmul(a2.reshape(-1, k).mT, g.reshape(-1, sb[-1])).reshape(b_shape)
            else:
                gb = matmul(a2.mT, g).sum_to_size(b2._data.shape).reshape(b_shape)
        return ga, gb


class Mm(Matmul):
    _backward_name = "MmBackward0"


class Bmm(Matmul):
    _backward_name = "BmmBackward0"


def mm(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if a._data.shape[1] != b._data.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({_dims(a._data.shape)} and {_dims(b._data.shape)})")
    _check_same_dtype(a, b, "mm")
    return Mm.apply(a, b)


def bmm(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    sa, sb = a._data.shape, b._data.shape
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")
    _check_same_dtype(a, b, "bmm")
    return Bmm.apply(a, b)


def matmul(a: Tensor, b: Tensor) -> Tensor:
    sa, sb = a._data.shape, b._data.shape
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    if a._data.dtype != b._data.dtype:
        _check_same_dtype(a, b, ("dot" if len(sa) == 1 else "mv") if len(sb) == 1 else
                          "mm" if len(sb) == 2 else "bmm")
    if len(sa) == 1 and len(sb) == 1:
        if sa[0] != sb[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{sa[0]}] and src "
                               f"[{sb[0]}] to have the same number of elements, but got "
                               f"{sa[0]} and {sb[0]} elements respectively")
    elif len(sa) <= 2 and len(sb) <= 2:
        inner_a = sa[-1]
        inner_b = sb[0] if len(sb) == 1 else sb[-2]
        if inner_a != inner_b:
            ra = sa if len(sa) == 2 else (1,) + sa
            rb = sb if len(sb) == 2 else sb + (1,)
            if len(sa) == 2 and len(sb) == 1:
                raise RuntimeError(f"size mismatch, got input ({sa[0]}), mat ({_dims(sa)}), "
                                   f"vec ({sb[0]})")
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({_dims(ra)} and {_dims(rb)})")
    else:
        inner_b = sb[0] if len(sb) == 1 else sb[-2]
        if sa[-1] != inner_b:
            raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                               f"[{math.prod(sa[:-2]) if len(sa) > 2 else 1}, {sa[-1]}] "
                               f"but got: [{math.prod(sb[:-2]) if len(sb) > 2 else 1}, "
                               f"{inner_b}].")
        try:
            broadcast_shapes(sa[:-2], sb[:-2])
        except ValueError:
            raise RuntimeError(f"The size of tensor a ({sa[-3] if len(sa) > 2 else 1}) must "
                               f"match the size of tensor b ({sb[-3] if len(sb) > 2 else 1}) at "
                               f"non-singleton dimension 0") from None
    return Matmul.apply(a, b)


def dot(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a._data.ndim}D and {b._data.ndim}D "
                           "tensors")
    if a._data.shape != b._data.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a._data.shape[0]}] and "
                           f"src [{b._data.shape[0]}] to have the same number of elements, but "
                           f"got {a._data.shape[0]} and {b._data.shape[0]} elements respectively")
    _check_same_dtype(a, b, "dot")
    return Matmul.apply(a, b)


def mv(a: Tensor, v: Tensor) -> Tensor:
    if a._data.ndim != 2 or v._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a._data.ndim}, "
                           f"{v._data.ndim}")
    return matmul(a, v)


def outer(a: Tensor, b: Tensor) -> Tensor:
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError("outer: expected 1D tensors")
    return a.reshape(-1, 1) * b.reshape(1, -1)


class Linear(Primitive):
    """``x @ w.T + b`` for a 2-D ``x``, one node: the product reads ``w`` through its
    transpose (no copy), the bias is added in place, and backward computes
    ``dx = g @ w``, ``dw = g.T @ x`` (already in ``w``'s layout) and ``db = g.sum(0)``."""
    _backward_name = "AddmmBackward0"
    saved_needed_for = ((1,), (0,))

    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return _gemm_add(x._data, w._data.T, b._data)

    @staticmethod
    def backward(ctx, grad):
        return _linear_grads(ctx, grad, True)


class LinearNoBias(Primitive):
    """``x @ w.T`` for a 2-D ``x`` (``Linear`` without the bias)."""
    _backward_name = "MmBackward0"
    saved_needed_for = ((1,), (0,))

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return _gemm(x._data, w._data.T)

    @staticmethod
    def backward(ctx, grad):
        return _linear_grads(ctx, grad, False)


def _linear_grads(ctx, grad, bias):
    x, w = ctx.saved_tensors
    needs = ctx.needs_input_grad
    # no graph to record: plain NumPy, no wrappers; under dispatch its ops must be seen
    if not _grad_state.enabled and not _dispatch_active[0]:
        g = grad._data
        if needs[0] and needs[1]:
            gx, gw = _gemm_pair(g, w._data, g.T, x._data)
            gx, gw = Tensor._make(gx), Tensor._make(gw)
        else:
            gx = Tensor._make(_gemm(g, w._data)) if needs[0] else None
            gw = Tensor._make(_gemm(g.T, x._data)) if needs[1] else None
        if bias:
            return gx, gw, Tensor._make(_column_sums(g)) if needs[2] else None
        return gx, gw
    gx = mm(grad, w) if needs[0] else None
    gw = mm(grad.t(), x) if needs[1] else None
    if bias:
        return gx, gw, grad.sum(0) if needs[2] else None
    return gx, gw


def _column_sums(g):
    """``g.sum(0)``, a bias gradient. Half precision on the host is summed in float32 and
    rounded once, as PyTorch sums it: NumPy adds float16 rows in float16, rounding at every
    add (measured: a few units in the last place off over a few hundred rows)."""
    if _widened_on_host(g):
        return g.sum(0, dtype=get_array_module(g).float32).astype(g.dtype)
    return g.sum(0)


def linear(x, w, b=None):
    """``x @ w.T (+ b)`` for a 2-D ``x``, ``w`` of shape ``(out, in)``, ``b`` of shape
    ``(out,)``, all of one dtype (the caller checks)."""
    if b is None:
        return LinearNoBias.apply(x, w)
    return Linear.apply(x, w, b)


class Einsum(Primitive):
    _backward_name = "EinsumBackward0"

    @staticmethod
    def forward(ctx, spec, *operands):
        ctx.spec = spec
        ctx.save_for_backward(*operands)
        arrays = [o._data for o in operands]
        xp = get_array_module(*arrays)
        if arrays and (all(a.dtype.kind == "V" for a in arrays) or _widened_on_host(*arrays)):
            # bfloat16 (ml_dtypes, NumPy kind "V"): einsum has no loop for it; float16: its
            # loops are slow and round as they go. Accumulate in float32 and round once, as
            # PyTorch's half-precision products do
            out = xp.einsum(spec, *[a.astype(xp.float32) for a in arrays],
                            optimize=len(operands) > 2)
            return xp.asarray(out).astype(arrays[0].dtype)
        return xp.asarray(xp.einsum(spec, *arrays, optimize=len(operands) > 2))

    @staticmethod
    def backward(ctx, grad):
        ops = ctx.saved_tensors
        ins, out = ctx.spec.split("->")
        subs = ins.split(",")
        grads = [None]
        for i, s in enumerate(subs):
            if not ctx.needs_input_grad[i + 1]:
                grads.append(None)
                continue
            others = [subs[j] for j in range(len(subs)) if j != i]
            available = set(out).union(*others) if others else set(out)
            first = [k for k, c in enumerate(s) if s.index(c) == k]  # first occurrences
            kept = "".join(s[k] for k in first if s[k] in available)
            spec = ",".join([out] + others) + "->" + kept
            g = einsum(spec, grad, *[ops[j] for j in range(len(ops)) if j != i])
            shape = ops[i]._data.shape
            own = tuple(shape[s.index(c)] for c in kept)
            if g._data.shape != own:  # a size-1 dim broadcast against the other operands
                g = g.sum_to_size(own)
            if len(first) != len(s) or len(kept) != len(s):
                # letters only this operand has: broadcast over them; a repeated letter
                # (a diagonal, "ii->i"): the gradient lives on that diagonal only
                g = g.reshape(tuple(shape[k] if k in first and s[k] in available else 1
                                    for k in range(len(s))))
                g = g.expand(shape)
                if len(first) != len(s):
                    g = g * Tensor._make(_diagonal_mask(get_array_module(g._data), s, shape,
                                                        g._data.dtype))
            grads.append(g)
        return tuple(grads)


def _diagonal_mask(xp, sub, shape, dtype):
    """1 where every repeated subscript letter takes equal indices, else 0."""
    mask = xp.ones(shape, bool)
    # open index grids (NumPy's indices(sparse=True), which CuPy lacks)
    grids = [xp.arange(n).reshape((1,) * k + (n,) + (1,) * (len(shape) - k - 1))
             for k, n in enumerate(shape)]
    for k, c in enumerate(sub):
        j = sub.index(c)
        if j != k:
            mask = mask & (grids[j] == grids[k])
    return mask.astype(dtype)


def _expand_ellipsis(spec, operands):
    """Replace '...' by explicit letters (unused ones), as NumPy and PyTorch align them:
    the broadcast dims are right-aligned across operands."""
    ins, arrow, out = spec.partition("->")
    subs = ins.split(",")
    if len(subs) != len(operands):
        return spec  # reported by the operand-count check
    used = set(spec) - {".", ",", "-", ">"}
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in used]
    n = 0
    for s, o in zip(subs, operands):
        if "..." in s:
            n = max(n, o._data.ndim - (len(s) - 3))
    ell = "".join(free[:n])
    new = []
    for s, o in zip(subs, operands):
        if "..." in s:
            k = o._data.ndim - (len(s) - 3)
            s = s.replace("...", ell[n - k:] if k > 0 else "")
        new.append(s)
    if arrow:
        out = out.replace("...", ell)
    else:  # implicit output: the ellipsis dims first, then the letters used once
        letters = "".join(new)
        out = ell + "".join(sorted(c for c in set(letters) if letters.count(c) == 1
                                   and c not in ell))
    return ",".join(new) + "->" + out


def _normalize_spec(spec, operands):
    spec = spec.replace(" ", "")
    if "..." in spec:
        spec = _expand_ellipsis(spec, operands)
    if "->" not in spec:
        ins = spec.split(",")
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
        spec = spec + "->" + out
    ins = spec.split("->")[0].split(",")
    if len(ins) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(operands) > len(ins) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    for i, (s, o) in enumerate(zip(ins, operands)):
        if len(s) != o._data.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(s)}) "
                               f"does not match the number of dimensions ({o._data.ndim}) for "
                               f"operand {i} and no ellipsis was given")
    return spec


def einsum(spec: str, *operands: Tensor | Sequence[Tensor]) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    spec = _normalize_spec(spec, operands)
    first = operands[0].dtype
    for o in operands[1:]:
        if o.dtype is not first:  # PyTorch does not promote einsum operands
            raise RuntimeError(f"expected scalar type {first.scalar_name} but found "
                               f"{o.dtype.scalar_name}")
    return Einsum.apply(spec, *operands)


__all__ = ["Tensor"]
