"""Matrix products: mm, matmul (1-D, 2-D, batched, broadcasting), bmm, dot,
mv, outer, linear, einsum (addmm and the rest of the family: ``matmul_family``)."""
from __future__ import annotations

import math

from .._tensor import Tensor
from ..backend import dtypes, get_array_module, broadcast_shapes
from ..backend.float8 import cast_float8
from .primitive import Primitive, sum_to as _sum_to
from .complex_ops import cj
from ..autograd.grad_mode import _state as _grad_state
from ..autograd.dispatch import active as _dispatch_active
from ..backend.gemm import (matmul as _gemm, matmul_add as _gemm_add, matmul_pair as _gemm_pair,
                            widened_on_host as _widened_on_host)
from .._typing import Sequence


def _dims(shape):
    return "x".join(map(str, shape))


# ---- PyTorch's checks, per kernel ------------------------------------------------------------
# ``matmul`` lands in one of four kernels (dot, mv, mm, bmm), each with its own wording and order
# of checks. The checks take shapes and ember dtypes, so that ``matmul`` can check the shapes
# PyTorch hands the kernel (a folded or expanded operand). Bool and uint16/32/64 products:
# PyTorch's CPU kernels have none (they refuse after the shape checks, unless the result is
# empty or the contraction has no terms).
def _refuse_bool(kernel, dt=dtypes.bool_):
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


#: PyTorch's product kernels that have float8 forms (mm's: all but float8_e8m0fnu's)
_FLOAT8_PRODUCTS = {"addmm_impl_cpu_": ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                                        "float8_e5m2fnuz")}


def _no_kernel(dt, kernel=""):
    """Whether PyTorch's CPU product ``kernel`` lacks ``dt`` (bool, uint16/32/64, most
    float8 ones)."""
    return dt is dtypes.bool_ or dt in dtypes.LIMITED_UNSIGNED or (
        dt.itemsize == 1 and dt in dtypes.FLOAT8 and
        dt.name not in _FLOAT8_PRODUCTS.get(kernel, ()))


def _mm_checks(sa, sb, ta, tb):
    """``mm`` of shapes ``sa``, ``sb`` (2-D) and dtypes ``ta``, ``tb``."""
    if sa[1] != sb[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({_dims(sa)} and "
                           f"{_dims(sb)})")
    if ta is not tb:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {ta.cpp_name} "
                           f"!= {tb.cpp_name}")
    if _no_kernel(ta, "addmm_impl_cpu_") and sa[0] * sb[1] and sa[1]:
        _refuse_bool("addmm_impl_cpu_", ta)


def _mv_checks(sm, sv, tm, tv):
    """``mv`` of a matrix of shape ``sm`` and a vector of shape ``sv``."""
    if sm[1] != sv[0]:
        raise RuntimeError(f"size mismatch, got input ({sm[0]}), mat ({_dims(sm)}), vec "
                           f"({sv[0]})")
    if tm is not tv:  # the result (vec's dtype), mat, vec
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{tv.scalar_name}, {tm.scalar_name}, and {tv.scalar_name}")
    if _no_kernel(tm, "addmv_impl_cpu") and sm[0] * sm[1]:
        _refuse_bool("addmv_impl_cpu", tm)


def _dot_checks(n1, n2, t1, t2):
    """``dot`` of vectors of ``n1`` and ``n2`` elements (the dtypes are checked first)."""
    if t1 is not t2:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{t1.scalar_name} and {t2.scalar_name}")
    if n1 != n2:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n1}] and src [{n2}] to "
                           f"have the same number of elements, but got {n1} and {n2} elements "
                           f"respectively")
    if _no_kernel(t1, "dot"):  # even empty
        _refuse_bool("dot", t1)


def _bmm_checks(sa, sb, ta, tb, operands=()):
    """``bmm`` of shapes ``sa``, ``sb`` (3-D). PyTorch's result takes batch2's dtype, and its
    CPU kernel depends on the size of each product: under 400 multiply-adds, one loop on
    batch1's dtype (a bool batch1 refused first); else MKL's batched gemm for a float or
    complex result whose matrices are contiguous or transposed (those of ``operands``); else
    one ``mm`` per matrix. Each reports mixed dtypes in its own words."""
    if sb[0] != sa[0] or sb[1] != sa[2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{sa[0]}, {sa[2]}] but got: [{sb[0]}, {sb[1]}].")
    if not (sa[0] * sa[1] * sb[2] and sa[2]) or sa[1] * sa[2] * sb[2] < 400:
        if _no_kernel(ta, "bmm") and sa[0] * sa[1] * sb[2] and sa[2]:
            _refuse_bool("bmm", ta)
        if ta is not tb:
            raise RuntimeError(f"expected scalar type {ta.scalar_name} but found "
                               f"{tb.scalar_name}")
    elif (tb.is_complex or tb.is_floating_point and tb.itemsize > 2) and \
            all(_blas_ready(t) for t in operands):
        if ta is not tb:
            raise RuntimeError(f"expected scalar type {tb.scalar_name} but found "
                               f"{ta.scalar_name}")
    else:
        if ta.itemsize == 1 and ta in dtypes.FLOAT8:
            _refuse_bool("baddbmm_with_gemm", ta)
        _mm_checks(sa[1:], sb[1:], ta, tb)


def _blas_ready(t):
    """Whether the matrices of ``t`` (its last two dims) are contiguous or transposed, as
    PyTorch's batched gemm wants them (a 1-D operand is one row or column: it is)."""
    if t._data.ndim < 2:
        return True
    (rows, cols), (row_stride, col_stride) = t._data.shape[-2:], t.stride()[-2:]
    return (col_stride == 1 and row_stride >= cols) or (row_stride == 1 and col_stride >= rows)


def _batch_shape(ba, bb):
    """The broadcast batch dims of matmul's operands, with PyTorch's ``infer_size`` error
    (which reports the last mismatched dim first)."""
    n = max(len(ba), len(bb))
    out = [0] * n
    for i in range(n - 1, -1, -1):
        ja, jb = i - n + len(ba), i - n + len(bb)
        x = ba[ja] if ja >= 0 else 1
        y = bb[jb] if jb >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out[i] = y if x == 1 else x
    return tuple(out)


def _folds(a, b):
    """Whether PyTorch's matmul folds the batch dims of the operand with 3 or more dims into
    the rows of one ``mm``/``mv`` (its ``should_fold``): when the other operand has 1 or 2
    dims, and either operand requires grad, or the larger one (``b`` transposed when it is
    ``b``) is empty or its leading dims collapse without a copy. A 2-D ``a`` with a larger
    ``b`` folds only when grad is wanted."""
    na, nb = a._data.ndim, b._data.ndim
    if na >= nb:
        shape, strides, small = a._data.shape, a.stride(), nb
    else:
        shape, strides = b._data.shape, b.stride()
        shape = shape[:-2] + (shape[-1], shape[-2])
        strides = strides[:-2] + (strides[-1], strides[-2])
        small = na
    if len(shape) < 3 or small > 2:
        return False
    if a.requires_grad or b.requires_grad:
        return True
    if na == 2:
        return False
    if 0 in shape:
        return True
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(len(shape) - 1))


def _fits(sa, sb):
    """Whether shapes ``sa`` and ``sb`` (1-D or more) multiply: the inner sizes agree and the
    batch dims broadcast."""
    if sa[-1] != (sb[0] if len(sb) == 1 else sb[-2]):
        return False
    return all(x == y or x == 1 or y == 1 for x, y in zip(sa[-3::-1], sb[-3::-1]))


def _matmul_checks(a, b):
    """PyTorch's errors for ``matmul(a, b)``: those of the kernel it lands in, on the shapes
    it hands that kernel."""
    sa, sb = a._data.shape, b._data.shape
    na, nb = len(sa), len(sb)
    ta, tb = a.dtype, b.dtype
    if na == 1 and nb == 1:
        _dot_checks(sa[0], sb[0], ta, tb)
    elif na == 2 and nb == 1:
        _mv_checks(sa, sb, ta, tb)
    elif na == 1 and nb == 2:
        _mm_checks((1, sa[0]), sb, ta, tb)
    elif na == 2 and nb == 2:
        _mm_checks(sa, sb, ta, tb)
    elif _folds(a, b):
        if na >= nb:  # a's rows folded: (prod(a[:-1]), k) @ b
            rows = (math.prod(sa[:-1]), sa[-1])
            (_mm_checks if nb == 2 else _mv_checks)(rows, sb, ta, tb)
        else:  # b transposed and folded: (prod(b[:-2]) * p, k) @ a.T (or @ a)
            rows = (math.prod(sb[:-2]) * sb[-1], sb[-2])
            if na == 2:
                _mm_checks(rows, (sa[1], sa[0]), tb, ta)
            else:
                _mv_checks(rows, sa, tb, ta)
    else:  # both expanded to the broadcast batch, flattened, then one bmm
        batch = math.prod(_batch_shape(sa[:-2], sb[:-2]))
        _bmm_checks((batch, sa[-2] if na > 1 else 1, sa[-1]),
                    (batch, sb[-2] if nb > 1 else sb[0], sb[-1] if nb > 1 else 1), ta, tb,
                    (a, b))


class Matmul(Primitive):
    """NumPy's matmul semantics, which are PyTorch's; backward undoes the 1-D
    promotion and the batch broadcasting."""
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "MmBackward0"
    saved_needed_for = ((1,), (0,))

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        if a._data.itemsize == 1 and a._data.dtype in dtypes.FLOAT8_NP:
            # float8: PyTorch sums in float32 and rounds once
            return cast_float8(_gemm(a._data.astype("float32"), b._data.astype("float32")),
                               a._data.dtype)
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
            ga = matmul(g, cj(b2).mT).sum_to_size(a2._data.shape).reshape(a_shape)
        if ctx.needs_input_grad[1]:
            if len(sb) == 2 and len(sa) > 2 and g._data.shape[:-2] == sa[:-2]:
                # a stack times one matrix: the stack's rows as one product, not a product
                # per matrix and a sum over the stack
                k, rows = sa[-1], math.prod(sa[:-1])  # (rows named: -1 is ambiguous if k == 0)
                gb = matmul(cj(a2).reshape(rows, k).mT,
                            g.reshape(rows, sb[-1])).reshape(b_shape)
            else:
                gb = matmul(cj(a2).mT, g).sum_to_size(b2._data.shape).reshape(b_shape)
        return ga, gb

    @staticmethod
    def backward_arrays(ctx, grad):
        """``backward`` on arrays (the same products in the same order): no reshape,
        transpose or product nodes for the gradient of every linear layer."""
        a, b = ctx.saved_arrays
        a_shape, b_shape = a.shape, b.shape
        a2 = a[None] if len(a_shape) == 1 else a
        b2 = b[:, None] if len(b_shape) == 1 else b
        sa, sb = a2.shape, b2.shape
        g = grad.reshape(broadcast_shapes(sa[:-2], sb[:-2]) + (sa[-2], sb[-1]))
        needs = ctx.needs_input_grad
        ga = gb = None
        if needs[0]:
            ga = _shaped(_sum_to(_gemm(g, _conj(b2).swapaxes(-1, -2)), sa), a_shape)
        if needs[1]:
            if len(sb) == 2 and len(sa) > 2 and g.shape[:-2] == sa[:-2]:
                k, rows = sa[-1], math.prod(sa[:-1])
                gb = _shaped(_gemm(_conj(a2).reshape(rows, k).T, g.reshape(rows, sb[-1])),
                             b_shape)
            else:
                gb = _shaped(_sum_to(_gemm(_conj(a2).swapaxes(-1, -2), g), sb), b_shape)
        return ga, gb


def _conj(d):
    return d.conj() if d.dtype.kind == "c" else d


def _shaped(d, shape):
    """``d`` in ``shape``; ``d`` itself when it has it (a new array stays one the engine may
    hand to a leaf without a copy)."""
    return d if d.shape == shape else d.reshape(shape)


class Mm(Matmul):
    _backward_name = "MmBackward0"


class Bmm(Matmul):
    _backward_name = "BmmBackward0"


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    if input._data.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2._data.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    _mm_checks(input._data.shape, mat2._data.shape, input.dtype, mat2.dtype)
    return Mm.apply(input, mat2)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    if input._data.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2._data.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _bmm_checks(input._data.shape, mat2._data.shape, input.dtype, mat2.dtype, (input, mat2))
    return Bmm.apply(input, mat2)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    sa, sb = input._data.shape, other._data.shape
    if not sa or not sb:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{len(sa)}D and {len(sb)}D")
    if input._data.dtype != other._data.dtype or input._data.dtype.kind in "bu" \
            or input._data.itemsize == 1 or not _fits(sa, sb):
        _matmul_checks(input, other)  # an error (or an empty bool product)
    return Matmul.apply(input, other)


def dot(input: Tensor, tensor: Tensor) -> Tensor:
    if input._data.ndim != 1 or tensor._data.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input._data.ndim}D and "
                           f"{tensor._data.ndim}D tensors")
    _dot_checks(input._data.shape[0], tensor._data.shape[0], input.dtype, tensor.dtype)
    return Matmul.apply(input, tensor)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    if input._data.ndim != 2 or vec._data.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input._data.ndim}, "
                           f"{vec._data.ndim}")
    _mv_checks(input._data.shape, vec._data.shape, input.dtype, vec.dtype)
    return Matmul.apply(input, vec)


def outer(input: Tensor, vec2: Tensor, name: str = "outer", method: bool = False) -> Tensor:
    """The outer product of two 1-D tensors (``ger``: its deprecated name; ``method``: called
    as ``x.outer(vec2)``, whose arguments PyTorch counts after self)."""
    args = [("vec2", vec2)] if method else [("input", input), ("vec2", vec2)]
    for position, (arg, value) in enumerate(args, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")
    for arg, value in (("self", input), ("vec2", vec2)):
        if value._data.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {arg}, but got "
                               f"{value._data.ndim}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


class Linear(Primitive):
    """``x @ w.T + b`` for a 2-D ``x``, one node: the product reads ``w`` through its
    transpose (no copy), the bias is added in place, and backward computes
    ``dx = g @ w``, ``dw = g.T @ x`` (already in ``w``'s layout) and ``db = g.sum(0)``."""
    _backward_name = "AddmmBackward0"
    saved_needed_for = ((1,), (0,))
    complex_grad = True  # _linear_grads conjugates x and w

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
    complex_grad = True  # _linear_grads conjugates x and w

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
    if x._data.dtype.kind == "c" or w._data.dtype.kind == "c":
        x, w = cj(x), cj(w)  # conjugate slopes (complex_grad)
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
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
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
            g = einsum(spec, grad, *[cj(ops[j]) for j in range(len(ops)) if j != i])
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
    if (first in dtypes.LIMITED_UNSIGNED or first in dtypes.FLOAT8) and _contracts(spec):
        _refuse_bool("bmm", first)  # PyTorch contracts pairs of operands with bmm
    return Einsum.apply(spec, *operands)


def _contracts(spec):
    """Whether an explicit einsum ``spec`` sums over a subscript shared by two operands."""
    ins, out = spec.split("->")
    terms = [set(t) for t in ins.split(",")]
    return any(sum(c in t for t in terms) > 1 for c in set().union(*terms) - set(out))


__all__ = ["Tensor"]
