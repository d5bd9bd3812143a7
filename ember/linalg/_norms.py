"""Norms and products of ``ember.linalg`` (compositions of ember ops, so their gradients
come from the ops they are made of), and the diagonal ops."""
from __future__ import annotations

from .._tensor import Tensor, _wrap_dim
from ..backend import dtypes, get_array_module, promote_types
from .._typing import Number, Sequence, dtype
from .._ops import diagonals as DG
from .._ops import reduction as R
from .._ops.linalg import matmul as _matmul
from .._ops.shape import roll
from .._ops.decompositions import check_float, check_matrix, check_square
from ._decompositions import inv, svdvals

_INF = float("inf")


def _float_arg(x, name):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{name}(): argument 'ord' must be Number, not {type(x).__name__}")
    return float(x)


def vector_norm(x: Tensor, ord: Number = 2, dim: int | Sequence[int] | None = None,
                keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
    """The vector ``ord``-norm over ``dim`` (all dims when None): ``inf``/``-inf`` the
    largest/smallest magnitude, 0 the count of non-zeros, else ``sum(|x|^ord)^(1/ord)``.

    >>> import ember
    >>> ember.linalg.vector_norm(ember.tensor([3., -4.]))
    tensor(5.)
    """
    ord = _float_arg(ord, "linalg_vector_norm")
    if dtype is not None:
        if not dtype.is_floating_point:
            raise RuntimeError(f"linalg.vector_norm: dtype should be floating point or complex, "
                               f"but got {dtype.scalar_name}")
        if x.is_floating_point() and promote_types(x.dtype, dtype) is not dtype:
            raise RuntimeError(f"linalg.vector_norm: the dtype of the input "
                               f"({x.dtype.scalar_name}) should be convertible without narrowing "
                               f"to the specified dtype ({dtype.scalar_name})")
        x = x.to(dtype)
    if isinstance(dim, (tuple, list)) and len(dim) == 0:
        dim = None
    if (ord < 0 or ord == float("inf")) and x.numel() == 0:
        _check_empty_reduction(x, ord, dim)
    return R.Norm.apply(x, ord, dim, keepdim)


def _check_empty_reduction(x, ord, dim):
    """A min/max-like norm (negative or infinite ``ord``) has no identity: PyTorch refuses
    it over an empty tensor or an empty reduced dim."""
    if dim is None:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on an empty "
                           "tensor because the operation does not have an identity")
    for d in (dim if isinstance(dim, (tuple, list)) else (dim,)):
        if x.shape[_wrap_dim(d, x.dim())] == 0:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {ord:g} norm on the "
                               f"dimension {d}because this dimension is empty and the "
                               "operation does not have an identity")


def _matrix_dims(A, dim):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        shown = " ".join(str(d) for d in dim) if isinstance(dim, (tuple, list)) else dim
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {shown}")
    n = A._data.ndim
    d0, d1 = _wrap_dim(dim[0], n), _wrap_dim(dim[1], n)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, "
                           f"{dim[1]})")
    return d0, d1


def matrix_norm(A: Tensor, ord: Number | str = "fro", dim: Sequence[int] = (-2, -1),
                keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
    """The matrix norm over the two dims ``dim``: 'fro', 'nuc' (sum of singular values),
    2/-2 (largest/smallest singular value), 1/-1 (max/min column sum of magnitudes),
    inf/-inf (max/min row sum).

    >>> import ember
    >>> ember.linalg.matrix_norm(ember.tensor([[1., -2.], [3., 4.]]), ord=1)
    tensor(6.)
    """
    if isinstance(ord, str):  # the order is checked first, as PyTorch does
        if ord not in ("fro", "nuc"):
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord not in (1, -1, 2, -2, _INF, -_INF):
        raise RuntimeError(f"linalg.matrix_norm: Order {_format_ord(ord)} not supported.")
    check_matrix(A, "linalg.matrix_norm")
    d0, d1 = _matrix_dims(A, dim)
    if dtype is not None:
        A = A.to(dtype)
    check_float(A, "linalg.matrix_norm")
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    if ord in ("nuc", 2, -2):
        perm = [i for i in range(A.dim()) if i not in (d0, d1)] + [d0, d1]
        s = svdvals(A.permute(perm))
        reduce = s.sum if ord == "nuc" else s.amax if ord == 2 else s.amin
        if not keepdim:
            return reduce(-1)
        # as PyTorch: the kept dims put back by the inverse permutation
        back = [perm.index(i) for i in range(A.dim())]
        return reduce(-1, keepdim=True).unsqueeze(-1).permute(back)
    # 1/-1: reduce rows (dim 0) by sum, then columns by max/min; inf/-inf the other way
    sum_dim, ext_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
    sums = A.abs().sum(sum_dim, keepdim=True)
    out = sums.amax(ext_dim, keepdim=True) if ord > 0 else sums.amin(ext_dim, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))


def _format_ord(ord):
    return int(ord) if float(ord).is_integer() else ord


def norm(A: Tensor, ord: Number | str | None = None, dim: int | Sequence[int] | None = None,
         keepdim: bool = False, *, dtype: dtype | None = None) -> Tensor:
    """A vector norm (``dim`` an int, or a 1-D input) or a matrix norm (``dim`` a pair, or a
    2-D input); with neither ``ord`` nor ``dim``, the 2-norm of all elements.

    >>> import ember
    >>> ember.linalg.norm(ember.tensor([[3., 0.], [0., 4.]]))
    tensor(5.)
    """
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                               f"Got [{', '.join(str(d) for d in dims)}]")
    elif ord is not None:
        if A.dim() not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {A.dim()}D.")
        dims = tuple(range(A.dim()))
    else:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if len(dims) == 2 or isinstance(ord, str):
        return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dims, keepdim, dtype=dtype)


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (batch dims broadcast).

    >>> import ember
    >>> ember.linalg.cross(ember.tensor([1., 0., 0.]), ember.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    sa, sb = input._data.shape, other._data.shape
    na, nb = len(sa), len(sb)
    if na != nb:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    size_a = sa[_wrap_dim(dim, na)] if na else 1
    size_b = sb[_wrap_dim(dim, nb)] if nb else 1
    if size_a != 3 or size_b != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{size_a} and {size_b}")
    dtypes.refuse_limited_unsigned(dtypes.result_type(input, other).np, "cross")
    a, b = input, other
    if sa != sb:
        shape = _check_shapes_broadcast(sa, sb)
        a, b = a.expand(shape), b.expand(shape)
    dim = _wrap_dim(dim, a.dim())
    # (a x b)_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}
    return roll(a, -1, dim) * roll(b, -2, dim) - roll(a, -2, dim) * roll(b, -1, dim)


def _check_shapes_broadcast(sa, sb):
    n = max(len(sa), len(sb))
    pa, pb = (1,) * (n - len(sa)) + tuple(sa), (1,) * (n - len(sb)) + tuple(sb)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                               f"({y}) at non-singleton dimension {i}")
        out.append(max(x, y) if x and y else 0)
    return tuple(out)


def matmul(input: Tensor, other: Tensor) -> Tensor:
    """``ember.matmul`` (the matrix product with NumPy's shape rules).

    >>> import ember
    >>> ember.linalg.matmul(ember.eye(2), ember.tensor([1., 2.]))
    tensor([1., 2.])
    """
    return _matmul(input, other)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonals of the matrices of ``A`` (a view), as ``ember.diagonal``.

    >>> import ember
    >>> ember.linalg.diagonal(ember.eye(2))
    tensor([1., 1.])
    """
    n = A._data.ndim
    DG.diagonal_dims(n, offset, dim1, dim2)
    return DG.Diagonal.apply(A, offset, _wrap_dim(dim1, n), _wrap_dim(dim2, n))


def multi_dot(tensors: Sequence[Tensor]) -> Tensor:
    """The product of a chain of matrices; the first may be a row vector and the last a
    column vector (1-D), which the result then drops.

    >>> import ember
    >>> ember.linalg.multi_dot([ember.tensor([1., 2.]), ember.eye(2), ember.tensor([3., 4.])])
    tensor(11.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first, last = tensors[0].dim(), tensors[-1].dim()
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i, t in enumerate(tensors[1:-1], 1):
        if t.dim() != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.dim()}D")
    mats = [tensors[0].unsqueeze(0) if first == 1 else tensors[0]] + tensors[1:-1] + \
        [tensors[-1].unsqueeze(-1) if last == 1 else tensors[-1]]
    for i in range(len(mats) - 1):
        if mats[i + 1].dtype is not mats[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {mats[0].dtype.cpp_name} and tensor {i + 1} "
                               f"{mats[i + 1].dtype.cpp_name}")
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise RuntimeError(
                f"multi_dot(): tensors {i} and {i + 1} with shapes "
                f"[{', '.join(map(str, tensors[i].shape))}] and "
                f"[{', '.join(map(str, tensors[i + 1].shape))}] cannot be multiplied")
    out = mats[0]
    for m in mats[1:]:
        out = _matmul(out, m)
    if first == 1:
        out = out.squeeze(0)
    if last == 1:
        out = out.squeeze(-1)
    return out


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of vectors along ``dim`` (batch dims broadcast).

    >>> import ember
    >>> ember.linalg.vecdot(ember.tensor([1., 2.]), ember.tensor([3., 4.]))
    tensor(11.)
    """
    for t in (x, y):
        check_float(t, "linalg.vecdot")
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype.scalar_name} and y of type "
                           f"{y.dtype.scalar_name} instead")
    return (x.conj() * y).sum(dim)  # x conjugated, as PyTorch


def matrix_power(A: Tensor, n: int) -> Tensor:
    """``A`` to the integer power ``n`` (0: identity, negative: of the inverse), by
    repeated squaring.

    >>> import ember
    >>> ember.linalg.matrix_power(ember.tensor([[1., 1.], [0., 1.]]), 3)
    tensor([[1., 3.],
            [0., 1.]])
    """
    check_square(A, "linalg.matrix_power")
    if n == 0:
        xp = get_array_module(A._data)
        eye = Tensor._make(xp.eye(A._data.shape[-1], dtype=A._data.dtype))
        if not A.requires_grad:
            return eye.expand(A.shape).clone()
        # connected to A (a zero gradient, as PyTorch), whatever A holds (NaN included)
        return A.masked_fill(Tensor._make(xp.ones(A._data.shape, dtype=bool)), 0) + eye
    if n < 0:
        A, n = inv(A), -n
    result, power = None, A
    while n:
        if n & 1:
            result = power if result is None else _matmul(result, power)
        n >>= 1
        if n:
            power = _matmul(power, power)
    return result.clone() if result is A else result


__all__ = ["vector_norm", "matrix_norm", "norm", "cross", "matmul", "diagonal", "multi_dot",
           "vecdot", "matrix_power"]
