"""The matmul family built from the products of ``linalg`` (``Mm``, ``Bmm``, ``Matmul``) and
element-wise ops, so that their gradients (double backward included) are those ops' own:
``addmm``, ``baddbmm``, ``addbmm``, ``addmv``, ``addr`` (``beta * input + alpha * product``,
``input`` broadcast to the product), ``chain_matmul``, ``tensordot``, ``inner``, ``kron``, and
the in-place ``x.addmm_``, ``x.baddbmm_``, ``x.addmv_``, ``x.addr_`` with PyTorch's checks.

Each follows PyTorch's order of checks and its messages: shapes first (``input`` is expanded
to the product's shape, with ``expand``'s own errors), then dtypes (the same dtype for all
tensors; ``addr`` and ``kron`` promote instead). ``beta == 0`` reads nothing of ``input``, so
NaN and inf there do not reach the result, yet ``input`` gets a (zero) gradient. For integer
tensors ``beta`` and ``alpha`` are truncated to integers, as PyTorch's kernels convert them.

>>> import ember
>>> ember.addmv(ember.ones(2), ember.ones(2, 3), ember.ones(3), beta=2)
tensor([5., 5.])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from .._tensor import Tensor
from .._typing import Number
from ..backend import dtypes, get_array_module
from .linalg import Mm, Bmm, Matmul


# ---- shared ---------------------------------------------------------------------------------
def _tensor_args(name, *args):
    """PyTorch's TypeError for an argument that is no tensor (``(arg_name, value)`` pairs,
    in position order)."""
    for position, (arg, value) in enumerate(args, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, "
                            f"not {type(value).__name__}")


def _size(t, dim):
    """``t.size(dim)`` with PyTorch's IndexError, a 0-d tensor's included."""
    if t.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return t.size(dim)


def _expand(input, shape):
    """``input`` broadcast to ``shape`` (PyTorch's ``expand_size``: expand's errors)."""
    return input if tuple(input.shape) == tuple(shape) else input.expand(shape)


def _no_bool(t, kernel):
    """PyTorch's error for a product kernel it lacks for ``t``'s dtype (bool, uint16/32/64)."""
    dt = t.dtype
    if dt is dtypes.bool_ or dt in dtypes.LIMITED_UNSIGNED:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{dt.scalar_name}'")


#: the C++ type PyTorch names when a scalar does not fit a dtype
_C_TYPES = {"float16": "float", "bfloat16": "float", "float32": "float", "float64": "double",
            "int64": "int64_t", "int32": "int", "int16": "int16_t", "int8": "int8_t",
            "uint8": "uint8_t"}


def _number(value):
    """A Scalar argument as a Python number (a 0-d tensor or a NumPy scalar gives its value)."""
    if isinstance(value, (Tensor, np.generic)):
        value = value.item()
    return int(value) if isinstance(value, bool) else value


def _scalar(value, dt):
    """``beta``/``alpha`` as a kernel of dtype ``dt`` reads it: truncated for an integer
    dtype; a complex value only for a complex dtype (or with no imaginary part)."""
    value = _number(value)
    if dt.is_complex:
        return value
    if isinstance(value, complex):
        if value.imag != 0:
            raise RuntimeError(f"value cannot be converted to type "
                               f"{_C_TYPES.get(dt.name, dt.name)} without overflow")
        value = value.real
    if not dt.is_floating_point and isinstance(value, float):
        return int(value)  # toward zero, as C++ converts
    return value


def _combine(input, prod, beta, alpha):
    """``beta * input + alpha * prod`` (``input`` of ``prod``'s shape). ``beta == 0`` reads
    nothing of ``input`` (NaN and inf included); it still gets a (zero) gradient."""
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        if not input.requires_grad:
            return prod
        everywhere = get_array_module(input._data).ones(input._data.shape, bool)
        return prod + input.masked_fill(Tensor._make(everywhere), 0)
    return prod + (input if beta == 1 else input * beta)


def _rounded_once(product, input, a, b, beta, alpha):
    """``beta * input + alpha * product(a, b)`` in float32 for half-precision and float8 host
    tensors, rounded once to their dtype (PyTorch's CPU addmm/baddbmm accumulate and combine
    in float32); other dtypes and device tensors combine directly."""
    dt = a.dtype
    low = dt in (dtypes.float16, dtypes.bfloat16) or (dt.itemsize == 1 and dt.is_floating_point)
    if dt is dtypes.float8_e8m0fnu:  # no products of exponents only, as PyTorch's kernel
        dtypes.refuse_float8(a._data.dtype, "addmm_impl_cpu_")
    if not low or type(a._data) is not np.ndarray:
        return _combine(input, product(a, b), _scalar(beta, dt), _scalar(alpha, dt))
    f32 = dtypes.float32
    combined = _combine(input.to(f32), product(a.to(f32), b.to(f32)), _scalar(beta, f32),
                        _scalar(alpha, f32))
    return combined.to(dt)


def _inplace(self, meta, fn, args, names, beta, alpha):
    """``self.<fn>_(*args)``: the op's own checks (``meta``, which returns the result's
    shape), PyTorch's error when the result would not have self's shape, then the op
    written into self. ``names``: the arguments' names (for a TypeError, which counts the
    arguments after self)."""
    _tensor_args(fn.__name__ + "_", *zip(names, args))
    shape = meta(self, *args)
    if tuple(self.shape) != tuple(shape):
        raise RuntimeError(f"Bad in-place call: input tensor size {list(self.shape)} and output "
                           f"tensor size {list(shape)} should match")
    return self._inplace(lambda s, *a: fn(s, *a, beta=beta, alpha=alpha), *args)


# ---- addmm ----------------------------------------------------------------------------------
def _addmm_dtypes(input, mat1, mat2):
    """PyTorch's addmm kernel's dtype checks (addbmm reaches the same kernel)."""
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{input.dtype.scalar_name} and {mat2.dtype.scalar_name}")
    if mat1.dtype is not mat2.dtype:
        raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got "
                           f"{mat1.dtype.scalar_name} and {mat2.dtype.scalar_name}")


def _addmm_meta(input, mat1, mat2):
    _tensor_args("addmm", ("input", input), ("mat1", mat1), ("mat2", mat2))
    _addmm_dtypes(input, mat1, mat2)
    for arg, t in (("mat1", mat1), ("mat2", mat2)):
        if t.dim() != 2:
            raise RuntimeError(f"{arg} must be a matrix, got {t.dim()}-D tensor")
    (n, k), (k2, m) = mat1.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({n}x{k} and {k2}x{m})")
    return n, m


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1,
          alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product.

    >>> import ember
    >>> ember.addmm(ember.ones(2), ember.ones(3, 2), ember.ones(2, 2), alpha=2)
    tensor([[5., 5.],
            [5., 5.],
            [5., 5.]])
    """
    shape = _addmm_meta(input, mat1, mat2)
    input = _expand(input, shape)
    _no_bool(mat1, "addmm_impl_cpu_")
    return _rounded_once(Mm.apply, input, mat1, mat2, beta, alpha)


def addmm_(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Number = 1,
           alpha: Number = 1) -> Tensor:
    return _inplace(self, _addmm_meta, addmm, (mat1, mat2), ("mat1", "mat2"), beta, alpha)


# ---- baddbmm --------------------------------------------------------------------------------
def _baddbmm_meta(input, batch1, batch2):
    _tensor_args("baddbmm", ("input", input), ("batch1", batch1), ("batch2", batch2))
    shape = (_size(batch1, 0), _size(batch1, 1), _size(batch2, 2))
    _expand(input, shape)  # PyTorch expands input first: its errors come first
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {input.dtype.cpp_name}, "
                           f"batch1: {batch1.dtype.cpp_name}, batch2: {batch2.dtype.cpp_name}")
    for arg, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{arg} must be a 3D tensor")
    b, _, k = batch1.shape
    if batch2.shape[0] != b or batch2.shape[1] != k:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{b}, {k}] but got: [{batch2.shape[0]}, {batch2.shape[1]}].")
    return shape


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
            alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2)``, ``input`` broadcast to the product.

    >>> import ember
    >>> ember.baddbmm(ember.ones(1), ember.ones(2, 1, 3), ember.ones(2, 3, 1)).shape
    ember.Size([2, 1, 1])
    """
    input = _expand(input, _baddbmm_meta(input, batch1, batch2))
    _no_bool(batch1, "baddbmm")
    dtypes.refuse_float8(batch1._data.dtype, "baddbmm")  # addmm computes float8; this not
    if batch2.dtype is not batch1.dtype:
        raise RuntimeError(f"expected scalar type {batch1.dtype.scalar_name} but found "
                           f"{batch2.dtype.scalar_name}")
    return _rounded_once(Bmm.apply, input, batch1, batch2, beta, alpha)


def baddbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
             alpha: Number = 1) -> Tensor:
    return _inplace(self, _baddbmm_meta, baddbmm, (batch1, batch2), ("batch1", "batch2"), beta,
                    alpha)


# ---- addbmm ---------------------------------------------------------------------------------
def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Number = 1,
           alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * bmm(batch1, batch2).sum(0)``, ``input`` broadcast to the
    sum; the sum over the batch is part of one matrix product.

    >>> import ember
    >>> ember.addbmm(ember.zeros(1), ember.ones(4, 2, 3), ember.ones(4, 3, 2))
    tensor([[12., 12.],
            [12., 12.]])
    """
    _tensor_args("addbmm", ("input", input), ("batch1", batch1), ("batch2", batch2))
    input = _expand(input, (_size(batch1, 1), _size(batch2, 2)))
    for arg, t in (("batch1", batch1), ("batch2", batch2)):
        if t.dim() != 3:
            raise RuntimeError(f"{arg} must be a 3D tensor")
    (b, n, k), (b2, k2, m) = batch1.shape, batch2.shape
    if b != b2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {b} and "
                           f"{b2}")
    if k != k2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({n}x{k} and {k2}x{m})")
    dt = input.dtype
    if b == 0:  # PyTorch adds no product at all: no dtype is checked
        prod = Mm.apply(batch1.reshape(n, 0), batch2.reshape(0, m))
        prod = prod if prod.dtype is dt else prod.to(dt)
    else:
        _addmm_dtypes(input, batch1, batch2)
        _no_bool(batch1, "addmm_impl_cpu_")
        # sum_b A_b @ B_b is [A_0 ... A_b] @ [B_0; ...; B_b]: one product
        prod = Mm.apply(batch1.transpose(0, 1).reshape(n, b * k), batch2.reshape(b * k, m))
    return _combine(input, prod, _scalar(beta, dt), _scalar(alpha, dt))


# ---- addmv ----------------------------------------------------------------------------------
def _addmv_meta(input, mat, vec):
    _tensor_args("addmv", ("input", input), ("mat", mat), ("vec", vec))
    if mat.dim() != 2 or vec.dim() != 1 or input.dim() > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.dim()}, {mat.dim()}, "
                           f"{vec.dim()}")
    (n, k), numel = mat.shape, input.numel()
    if k != vec.shape[0] or (n != numel and numel != 1):
        raise RuntimeError(f"size mismatch, got input ({_size(input, 0)}), mat ({n}x{k}), vec "
                           f"({vec.shape[0]})")
    return (n,)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1,
          alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``; ``input`` has the product's length, or one
    element.

    >>> import ember
    >>> ember.addmv(ember.tensor([1., 2.]), ember.ones(2, 3), ember.ones(3), alpha=-1)
    tensor([-2., -1.])
    """
    shape = _addmv_meta(input, mat, vec)
    if input.dtype is not mat.dtype or mat.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{input.dtype.scalar_name}, {mat.dtype.scalar_name}, and "
                           f"{vec.dtype.scalar_name}")
    _no_bool(mat, "addmv_impl_cpu")
    dt = mat.dtype
    return _combine(_expand(input, shape), Matmul.apply(mat, vec), _scalar(beta, dt),
                    _scalar(alpha, dt))


def addmv_(self: Tensor, mat: Tensor, vec: Tensor, *, beta: Number = 1,
           alpha: Number = 1) -> Tensor:
    return _inplace(self, _addmv_meta, addmv, (mat, vec), ("mat", "vec"), beta, alpha)


# ---- addr -----------------------------------------------------------------------------------
def _addr_vectors(vec1, vec2):
    for arg, t in (("vec1", vec1), ("vec2", vec2)):
        if t.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {arg}, but got {t.dim()}-D")
    return vec1.shape[0], vec2.shape[0]


def _addr_scalar(value, dt, arg):
    """PyTorch's checks of addr's ``beta``/``alpha`` against the result's dtype."""
    if isinstance(value, bool) and dt is not dtypes.bool_:
        raise RuntimeError(f"Boolean {arg} only supported for Boolean results.")
    value = _number(value)
    if not (dt.is_floating_point or dt.is_complex) and not isinstance(value, int):
        raise RuntimeError(f"For integral input tensors, argument {arg} must not be a floating "
                           f"point number.")
    return _scalar(value, dt)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1,
         alpha: Number = 1) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``, ``input`` broadcast to the outer product;
    the three tensors promote to one dtype (bool: ``(beta and input) or (alpha and vec1 and
    vec2)``).

    >>> import ember
    >>> ember.addr(ember.zeros(2, 2), ember.tensor([1., 2.]), ember.tensor([1., 3.]))
    tensor([[1., 3.],
            [2., 6.]])
    """
    _tensor_args("addr", ("input", input), ("vec1", vec1), ("vec2", vec2))
    input = _expand(input, _addr_vectors(vec1, vec2))
    dt = dtypes.promote_types(dtypes.promote_types(input.dtype, vec1.dtype), vec2.dtype)
    beta, alpha = _addr_scalar(beta, dt, "beta"), _addr_scalar(alpha, dt, "alpha")
    vec1, vec2, input = (t if t.dtype is dt else t.to(dt) for t in (vec1, vec2, input))
    if dt is dtypes.bool_:
        prod = vec1.reshape(-1, 1).logical_and(vec2)
        if not alpha:
            prod = Tensor._make(get_array_module(prod._data).zeros(prod._data.shape, bool))
        return prod.logical_or(input) if beta else prod
    return _combine(input, vec1.reshape(-1, 1) * vec2, beta, alpha)


def addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Number = 1,
          alpha: Number = 1) -> Tensor:
    _tensor_args("addr_", ("vec1", vec1), ("vec2", vec2))
    n, m = _addr_vectors(vec1, vec2)
    if self.dim() != 2:
        raise RuntimeError(f"2D tensor expected, got {self.dim()}D tensor for input")
    if tuple(self.shape) != (n, m):
        raise RuntimeError(f"size mismatch, input: {list(self.shape)}, v1: {list(vec1.shape)}, "
                           f"v2: {list(vec2.shape)}")
    dt = dtypes.promote_types(dtypes.promote_types(self.dtype, vec1.dtype), vec2.dtype)
    if dt.category > self.dtype.category:
        raise RuntimeError(f"result type {dt.scalar_name} can't be cast to the desired output "
                           f"type {self.dtype.scalar_name}")
    return self._inplace(lambda s, *a: addr(s, *a, beta=beta, alpha=alpha), vec1, vec2)


# ---- chain_matmul ---------------------------------------------------------------------------
_CHAIN_MATMUL_DEPRECATED = (
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters.")


def chain_matmul(*matrices: Tensor) -> Tensor:
    """The product of two or more matrices (deprecated in PyTorch for
    ``linalg.multi_dot``); one matrix gives a copy of it.

    >>> import ember, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     ember.chain_matmul(ember.ones(2, 3), ember.ones(3, 1))
    tensor([[3.],
            [3.]])
    """
    for i, t in enumerate(matrices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    warnings.warn(_CHAIN_MATMUL_DEPRECATED, UserWarning, stacklevel=4)
    for t in matrices:
        if t.dim() != 2:
            raise RuntimeError(f"Tensor dimension is {t.dim()}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        return matrices[0].clone()
    first = matrices[0]
    for i in range(1, len(matrices)):  # linalg.multi_dot's checks and words
        m = matrices[i]
        if m.dtype is not first.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {first.dtype.cpp_name} and tensor {i} {m.dtype.cpp_name}")
        if matrices[i - 1].shape[1] != m.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i - 1} and {i} with shapes "
                               f"{list(matrices[i - 1].shape)} and {list(m.shape)} cannot be "
                               f"multiplied")
    _no_bool(first, "addmm_impl_cpu_")
    return _chain_product(matrices, _chain_order(matrices))


def _chain_order(matrices):
    """The cheapest order of a chain of products (the textbook dynamic programme, as
    PyTorch's multi_dot): ``split[i][j]`` is where the product of ``i..j`` splits."""
    dims = [m.shape[0] for m in matrices] + [matrices[-1].shape[1]]
    n = len(matrices)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    if n == 3:  # PyTorch's rule for three: (AB)C unless A(BC) is strictly cheaper
        a, b, c, d = dims
        split[0][2] = 0 if a * c * (b + d) > b * d * (a + c) else 1
    return split


def _chain_product(matrices, split, i=0, j=None):
    j = len(matrices) - 1 if j is None else j
    if i == j:
        return matrices[i]
    k = split[i][j]
    return Mm.apply(_chain_product(matrices, split, i, k),
                    _chain_product(matrices, split, k + 1, j))


# ---- tensordot, inner, kron -----------------------------------------------------------------
def _int_list(value, arg, position):
    """A list of dims as PyTorch's argument parser reads ``int[]`` (0-d integer tensors
    count as ints)."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"tensordot(): argument '{arg}' (position {position}) must be tuple of "
                        f"ints, not {type(value).__name__}")
    out = []
    for i, v in enumerate(value):
        if isinstance(v, Tensor) and v.dim() == 0 and not v.is_floating_point():
            v = v.item()
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"tensordot(): argument '{arg}' (position {position}) must be tuple "
                            f"of ints, but found element of type {type(v).__name__} at pos {i}")
        out.append(v)
    return out


def _wrapped_dims(dims, ndim):
    """``dims`` wrapped into ``[0, ndim)``, each once (PyTorch's ``dim_list_to_bitset``)."""
    seen = []
    for d in dims:
        d = d + max(ndim, 1) if d < 0 else d
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.append(d)
    return seen


def tensordot(a: Tensor, b: Tensor,
              dims: int | tuple[list[int], list[int]] | list[list[int]] | Tensor = 2) -> Tensor:
    """The contraction of ``a`` and ``b`` over ``dims``: the last ``dims`` dimensions of ``a``
    with the first ``dims`` of ``b``, or the dimensions listed in ``dims = (dims_a, dims_b)``
    (a size-1 dimension of one is summed first, a broadcast), as one matrix product.

    >>> import ember
    >>> ember.tensordot(ember.ones(2, 3, 4), ember.ones(4, 3), dims=([1, 2], [1, 0]))
    tensor([12., 12.])
    """
    if isinstance(a, Tensor) and a.dtype in dtypes.FLOAT8:  # PyTorch contracts with dot/mm
        # kernels float8 lacks
        raise NotImplementedError(f"\"dot\" not implemented for '{a.dtype.scalar_name}'")
    if not isinstance(dims, (tuple, list, Tensor, int)):
        raise RuntimeError(f"tensordot expects dims to be int or tuple[list[int], list[int]] or "
                           f"list[list[int]] containing two lists, but got dims={dims}")
    dims_a, dims_b = [], []
    if isinstance(dims, (tuple, list)):
        dims_a, dims_b = dims
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            if dims.shape[0] != 2:
                raise AssertionError(f"dims tensor must have size 2 in first dimension, got "
                                     f"{dims.shape[0]}")
            dims_a, dims_b = dims[0].tolist(), dims[1].tolist()
        else:
            count = int(dims.item())
            if count < 0:
                raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
            dims_a, dims_b = list(range(-count, 0)), list(range(count))
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.dim(), b.dim()):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        dims_a, dims_b = list(range(-dims, 0)), list(range(dims))
    _tensor_args("tensordot", ("input", a), ("other", b))
    dims_a, dims_b = _int_list(dims_a, "dims_self", 3), _int_list(dims_b, "dims_other", 4)
    return _contract(a, b, dims_a, dims_b)


def _contract(a, b, dims_a, dims_b):
    """PyTorch's ``at::tensordot``: the checks, then permute, reshape and one ``mm``."""
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    t1, t2, csize = a, b, 1
    for d1, d2 in zip(dims_a, dims_b):
        s1, s2 = _size(a, d1), _size(b, d2)
        if s2 == 1:  # a broadcast dimension is summed right away
            t1 = t1.sum(d1, keepdim=True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = t2.sum(d2, keepdim=True, dtype=t2.dtype)
        elif s1 != s2:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} in "
                               f"dim {d1} and second has size {s2} in dim {d2}")
        else:
            csize *= s1
    cdims_a, cdims_b = _wrapped_dims(dims_a, a.dim()), _wrapped_dims(dims_b, b.dim())
    keep_a = [i for i in range(a.dim()) if i not in cdims_a]
    keep_b = [i for i in range(b.dim()) if i not in cdims_b]
    rows = [t1.shape[i] for i in keep_a]
    cols = [t2.shape[i] for i in keep_b]
    if not rows and not cols:  # a full contraction: PyTorch's dot (which refuses bool always)
        _no_bool(a, "dot")
    elif math.prod(rows) * math.prod(cols) and csize:  # its mm: an empty product is computed
        _no_bool(a, "addmm_impl_cpu_")
    t1 = t1.permute(keep_a + cdims_a).reshape(math.prod(rows), csize)
    t2 = t2.permute(cdims_b + keep_b).reshape(csize, math.prod(cols))
    return Mm.apply(t1, t2).reshape(rows + cols)


def inner(input: Tensor, other: Tensor) -> Tensor:
    """The dot products of ``input``'s and ``other``'s last dimensions, all pairs (a 0-d
    operand multiplies).

    >>> import ember
    >>> ember.inner(ember.ones(2, 3), ember.ones(4, 3)).shape
    ember.Size([2, 4])
    """
    _tensor_args("inner", ("input", input), ("other", other))
    if input.dtype in dtypes.FLOAT8 and input.dim() and other.dim():
        raise NotImplementedError(f"\"dot\" not implemented for '{input.dtype.scalar_name}'")
    if input.dim() == 0 or other.dim() == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input.shape)} and {list(other.shape)}")
    return _contract(input, other, [-1], [-1])


def kron(input: Tensor, other: Tensor) -> Tensor:
    """The Kronecker product: every element of ``input`` times all of ``other``, the
    shorter shape padded with leading 1s; dtypes promote as ``mul``'s.

    >>> import ember
    >>> ember.kron(ember.tensor([1., 2.]), ember.tensor([1., 10.]))
    tensor([ 1., 10.,  2., 20.])
    """
    _tensor_args("kron", ("input", input), ("other", other))
    ndim = max(input.dim(), other.dim())
    sa = (1,) * (ndim - input.dim()) + tuple(input.shape)
    sb = (1,) * (ndim - other.dim()) + tuple(other.shape)
    a = input.reshape([s for size in sa for s in (size, 1)])
    b = other.reshape([s for size in sb for s in (1, size)])
    return (a * b).reshape([x * y for x, y in zip(sa, sb)])


__all__ = ["addmm", "addmm_", "baddbmm", "baddbmm_", "addbmm", "addmv", "addmv_", "addr",
           "addr_", "chain_matmul", "tensordot", "inner", "kron"]
