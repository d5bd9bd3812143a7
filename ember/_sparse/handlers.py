"""What sparse COO tensors answer: the calls ``SparseTensor.__torch_function__`` routes here,
by name (a call not listed raises PyTorch's "Could not run 'aten::<op>' with arguments from
the 'SparseCPU' backend").

Each handler takes the call's arguments as the public function or method got them (the
tensor first for a method; for a function or an operator any argument may be the sparse
one). Results follow PyTorch's layouts: sparse + sparse and sparse * anything are sparse,
dense + sparse and products with a dense operand are dense, reductions over every element
are dense 0-d tensors, and ops that map zero to zero (``abs``, ``sqrt``, ``sin``, ...) run
on the values of the coalesced tensor.
"""
from __future__ import annotations

import numbers

from .._torch_function import registrar
from .. import _functions as F
from .._creation import zeros
from .._tensor import Size, Tensor, _wrap_dim
from .._tensor_repr import tensor_repr
from .._ops.sparse_ops import SpMM
from ..backend.dtypes import get_default_dtype, int64
from .tensor import (HANDLERS, SparseTensor, accumulate_, coalesce, dense_to_sparse,
                     indices_of, is_coalesced,
                     is_sparse, make_sparse, numel, shape_of, sparse_coo, sparse_dim,
                     to_dense, unravel, linear_index, values_of, with_values)

handles = registrar(HANDLERS)


def _sparse_only(name):
    return RuntimeError(f"{name} expected sparse coordinate tensor layout but got Strided")


_ADD_SPARSE_DENSE = "add(sparse, dense) is not supported. Use add(dense, sparse) instead."


# ---- metadata ----------------------------------------------------------------------------
@handles("shape")
def _shape(s):
    return Size(shape_of(s))


@handles("size")
def _size(s, dim=None):
    shape = shape_of(s)
    if dim is None:
        return Size(shape)
    return shape[_wrap_dim(dim, len(shape))]


@handles("dim", "ndimension")
def _dim(s):
    return len(shape_of(s))


@handles("ndim")
def _ndim(s):
    return len(shape_of(s))


@handles("numel", "nelement")
def _numel(s):
    return numel(s)


@handles("dtype")
def _dtype(s):
    return values_of(s).dtype


@handles("device")
def _device(s):
    return values_of(s).device


@handles("is_cuda")
def _is_cuda(s):
    return values_of(s).is_cuda


@handles("is_cpu")
def _is_cpu(s):
    return values_of(s).is_cpu


@handles("is_meta")
def _is_meta(s):
    return False


@handles("layout")
def _layout(s):
    return sparse_coo


@handles("is_sparse")
def _is_sparse(s):
    return True


@handles("element_size", "itemsize")
def _element_size(s):
    return values_of(s).element_size()


@handles("is_floating_point")
def _is_floating_point(s):
    return values_of(s).is_floating_point()


@handles("is_complex")
def _is_complex(s):
    return values_of(s).is_complex()


@handles("is_contiguous")
def _is_contiguous(s, memory_format=None):
    return False


@handles("data_ptr")
def _data_ptr(s):
    raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


@handles("numpy")
def _numpy(s, *, force=False):
    raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() first.")


@handles("__len__")
def _len(s):
    if not shape_of(s):
        raise TypeError("len() of a 0-d tensor")
    return shape_of(s)[0]


@handles("item")
def _item(s):
    if numel(s) != 1:
        raise RuntimeError(f"a Tensor with {numel(s)} elements cannot be converted to Scalar")
    return to_dense(s).item()


# ---- autograd metadata: the values carry it -----------------------------------------------
@handles("requires_grad")
def _requires_grad(s):
    return values_of(s).requires_grad


@handles("is_leaf")
def _is_leaf(s):
    return values_of(s).is_leaf


@handles("grad_fn")
def _grad_fn(s):
    return values_of(s).grad_fn


@handles("grad")
def _grad(s):
    """The gradient at the specified elements, each once (a duplicated index's entries all
    got the same gradient): PyTorch's layout for the gradient of a sparse leaf from
    ``to_dense``, ``sparse.mm``, ``sparse.sum`` (its ``mm``, ``@`` and ``sum`` give a dense
    gradient, which has values off the specified elements too)."""
    g = values_of(s).grad
    if g is None:
        return None
    if is_coalesced(s):
        return with_values(s, g)
    idx = indices_of(s)
    lin = linear_index(idx, shape_of(s)[:idx.shape[0]])
    unique, inverse = F.unique(lin, sorted=True, return_inverse=True)
    once = zeros((unique.shape[0],) + tuple(g.shape[1:]), dtype=g.dtype,
                 device=g.device).index_copy(0, inverse, g)
    return make_sparse(unravel(unique, shape_of(s)[:idx.shape[0]]), once, shape_of(s), True)


@handles("requires_grad_")
def _requires_grad_(s, requires_grad=True):
    values_of(s).requires_grad_(requires_grad)
    return s


@handles("detach")
def _detach(s):
    return with_values(s, values_of(s).detach())


@handles("data")
def _data(s):
    return _detach(s)


@handles("__deepcopy__")
def _deepcopy(s, memo):
    if id(s) not in memo:
        memo[id(s)] = make_sparse(indices_of(s).clone(), values_of(s).detach().clone(),
                                  shape_of(s), is_coalesced(s)).requires_grad_(
            values_of(s).requires_grad)
    return memo[id(s)]


@handles("__reduce_ex__")
def _reduce_ex(s, proto):
    """Pickles as its indices, values and shape (``rebuild_sparse`` makes it again)."""
    return rebuild_sparse, (indices_of(s).detach(), values_of(s).detach(), shape_of(s),
                            is_coalesced(s), values_of(s).requires_grad)


def rebuild_sparse(indices, values, shape, coalesced, requires_grad):
    values = values.requires_grad_(True) if requires_grad else values
    return make_sparse(indices, values, shape, coalesced)


# ---- printing ------------------------------------------------------------------------------
@handles("__format__")
def _format(s, format_spec):
    return format(_repr(s), format_spec)


@handles("__repr__", "__str__")
def _repr(s, *args, **kwargs):
    pad = " " * len("tensor(indices=")
    ind = tensor_repr(indices_of(s)).replace("\n", "\n" + pad)
    vals = values_of(s)
    pad_v = " " * len("       values=")
    val_text = tensor_repr(vals.detach()).replace("\n", "\n" + pad_v)
    extra = ""
    if vals.dtype != get_default_dtype() and vals.dtype not in (int64,) and \
            not vals.dtype.is_complex:
        extra = f", dtype={vals.dtype}"
    tail = f"size={tuple(shape_of(s))}, nnz={indices_of(s).shape[1]}{extra}, " \
           f"layout=torch.sparse_coo"
    if vals.grad_fn is not None:
        tail += f", grad_fn=<{type(vals.grad_fn).__name__}>"
    elif vals.requires_grad:
        tail += ", requires_grad=True"
    return f"tensor(indices={ind},\n       values={val_text},\n       {tail})"


# ---- structure ---------------------------------------------------------------------------
@handles("coalesce")
def _coalesce(s):
    if not is_sparse(s):
        raise _sparse_only("coalesce")
    return coalesce(s)


@handles("is_coalesced")
def _is_coalesced(s):
    if not is_sparse(s):
        raise _sparse_only("is_coalesced")
    return is_coalesced(s)


@handles("_coalesced_")
def _coalesced_(s, coalesced):
    s.__dict__["_sp_coalesced"] = bool(coalesced)
    return s


@handles("indices")
def _indices(s):
    if not is_sparse(s):
        raise _sparse_only("indices")
    if not is_coalesced(s):
        raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return indices_of(s)


@handles("values")
def _values(s):
    if not is_sparse(s):
        raise _sparse_only("values")
    if not is_coalesced(s):
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return values_of(s)


@handles("_indices")
def _raw_indices(s):
    return indices_of(s)


@handles("_values")
def _raw_values(s):
    return values_of(s)


@handles("_nnz")
def _nnz(s):
    return indices_of(s).shape[1]


@handles("sparse_dim")
def _sparse_dim(s):
    return sparse_dim(s)


@handles("dense_dim")
def _dense_dim(s):
    return values_of(s).dim() - 1


@handles("to_dense")
def _to_dense(s, dtype=None, *, masked_grad=None):
    return to_dense(s, dtype)


@handles("to_sparse", "to_sparse_coo")
def _to_sparse(s, *args, **kwargs):
    if args and args[0] is not None and args[0] != sparse_dim(s):
        raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                           "argument !=self.sparse_dim() is not supported")
    layout = kwargs.get("layout")
    if layout not in (None, sparse_coo):
        raise NotImplementedError(f"ember has no {layout} layout: only sparse_coo")
    return s


@handles("sparse_mask")
def _sparse_mask(t, mask):
    """The elements of ``t`` at ``mask``'s indices, as a sparse tensor of them."""
    if not is_sparse(mask):
        raise RuntimeError("sparse_mask expects mask to be sparse")
    if tuple(t.shape) != shape_of(mask):
        raise RuntimeError("sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(t.shape)} but mask has size {list(shape_of(mask))}")
    dense = to_dense(t) if is_sparse(t) else t
    idx = indices_of(mask)
    vals = dense[tuple(idx[d] for d in range(idx.shape[0]))]
    return make_sparse(idx, vals, shape_of(mask), is_coalesced(mask))


# ---- conversions and copies ----------------------------------------------------------------
@handles("clone")
def _clone(s, *, memory_format=None):
    return make_sparse(indices_of(s).clone(), values_of(s).clone(), shape_of(s),
                       is_coalesced(s))


@handles("to")
def _to(s, *args, **kwargs):
    vals = values_of(s).to(*args, **kwargs)
    idx = indices_of(s)
    if vals.device != idx.device:
        idx = idx.to(vals.device)
    if vals is values_of(s) and idx is indices_of(s):
        return s
    return make_sparse(idx, vals, shape_of(s), is_coalesced(s))


def _caster(name):
    def cast(s, *args, **kwargs):
        if name in ("cpu", "cuda"):
            return _to(s, name if not args else f"cuda:{args[0]}")
        return _to(s, getattr(values_of(s)[:0], name)().dtype)
    return cast


for _name in ("double", "float", "half", "bfloat16", "long", "int", "bool", "cpu", "cuda"):
    HANDLERS[_name] = _caster(_name)


@handles("type")
def _type(s, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return values_of(s).type().replace("torch.", "torch.sparse.")
    return _to(s, values_of(s).type(dtype).dtype)


@handles("zero_")
def _zero_(s):
    state = s.__dict__
    state["_sp_indices"] = indices_of(s)[:, :0]
    state["_sp_values"] = values_of(s)[:0].detach().clone().requires_grad_(
        values_of(s).requires_grad and values_of(s).is_leaf)
    state["_sp_coalesced"] = True
    return s


# ---- arithmetic ----------------------------------------------------------------------------
def _cat_sparse(a, b, alpha=1):
    """a + alpha * b for two sparse tensors of one shape: their entries side by side."""
    if shape_of(a) != shape_of(b):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(shape_of(a))} while other has size "
                           f"{list(shape_of(b))} (FYI: dense-sparse addition does not "
                           f"currently support broadcasting)")
    if sparse_dim(a) != sparse_dim(b):
        raise RuntimeError("add: expected 'self' and 'other' to have same sparse dims")
    vb = values_of(b) if alpha == 1 else values_of(b) * alpha
    va = values_of(a)
    dtype = F.promote_types(va.dtype, vb.dtype)
    return make_sparse(F.cat([indices_of(a), indices_of(b)], 1),
                       F.cat([va.to(dtype), vb.to(dtype)], 0), shape_of(a), False)


def _add_into_dense(d, s, alpha=1):
    """dense + alpha * sparse, dense (PyTorch's add(dense, sparse))."""
    if tuple(d.shape) != shape_of(s):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(d.shape)} while other has size {list(shape_of(s))} "
                           f"(FYI: dense-sparse addition does not currently support "
                           f"broadcasting)")
    vals = values_of(s) if alpha == 1 else values_of(s) * alpha
    idx = indices_of(s)
    return d.index_put(tuple(idx[k] for k in range(idx.shape[0])),
                       vals.to(F.promote_types(d.dtype, vals.dtype)), accumulate=True)


@handles("add")
def _add(input, other, *, alpha=1, out=None):
    if out is not None:
        raise NotImplementedError("add(out=) of sparse tensors")
    if is_sparse(input):
        if not is_sparse(other):
            raise RuntimeError(_ADD_SPARSE_DENSE)
        return _cat_sparse(input, other, alpha)
    d = input
    if d.dtype != values_of(other).dtype:
        d = d.to(F.promote_types(d.dtype, values_of(other).dtype))
    return _add_into_dense(d, other, alpha)


@handles("sub")
def _sub(input, other, *, alpha=1, out=None):
    return _add(input, other, alpha=-alpha, out=out)


@handles("__rsub__")
def _rsub(s, other):
    raise RuntimeError(_ADD_SPARSE_DENSE)


@handles("add_", "__iadd__")
def _add_(input, other, *, alpha=1):
    if is_sparse(input):
        if not is_sparse(other):
            raise RuntimeError(_ADD_SPARSE_DENSE)
        result = _cat_sparse(input, other, alpha)
        state = input.__dict__
        state["_sp_indices"], state["_sp_values"] = indices_of(result), values_of(result)
        state["_sp_coalesced"] = False
        return input
    vals = values_of(other) if alpha == 1 else values_of(other) * alpha
    if tuple(input.shape) != shape_of(other):
        _add_into_dense(input, other)  # raises the size error
    return accumulate_(input, indices_of(other), vals)


@handles("sub_", "__isub__")
def _sub_(input, other, *, alpha=1):
    return _add_(input, other, alpha=-alpha)


def _scalar(x):
    return isinstance(x, numbers.Number) or (isinstance(x, Tensor) and not is_sparse(x)
                                             and x.dim() == 0)


@handles("mul")
def _mul(input, other, *, out=None):
    s, o = (input, other) if is_sparse(input) else (other, input)
    if _scalar(o):
        return with_values(s, values_of(s) * o)
    if is_sparse(o):
        if shape_of(s) != shape_of(o):
            raise RuntimeError("mul(sparse, sparse): operands must have the same size")
        a, b = coalesce(s), coalesce(o)
        la = linear_index(indices_of(a), shape_of(a)[:sparse_dim(a)])
        lb = linear_index(indices_of(b), shape_of(b)[:sparse_dim(b)])
        common = F.isin(la, lb)
        ia, ib = common.nonzero().flatten(), F.isin(lb, la).nonzero().flatten()
        vals = values_of(a)[ia] * values_of(b)[ib]
        return make_sparse(indices_of(a)[:, ia], vals, shape_of(a), True)
    if tuple(o.shape) != shape_of(s):
        raise RuntimeError(f"mul(sparse, dense): the dense operand's shape {list(o.shape)} "
                           f"must be the sparse one's, {list(shape_of(s))}")
    idx = indices_of(s)
    picked = o[tuple(idx[k] for k in range(idx.shape[0]))]
    return with_values(s, values_of(s) * picked)


@handles("mul_", "__imul__")
def _mul_(s, other):
    result = _mul(s, other)
    state = s.__dict__
    state["_sp_indices"], state["_sp_values"] = indices_of(result), values_of(result)
    state["_sp_coalesced"] = is_coalesced(result)
    return s


@handles("div", "true_divide")
def _div(s, other, *, rounding_mode=None):
    if not is_sparse(s) or not _scalar(other):
        raise RuntimeError("div(): only a sparse tensor divided by a scalar is supported "
                           "for sparse tensors")
    if rounding_mode is not None:
        return with_values(coalesce(s), F.div(values_of(coalesce(s)), other,
                                              rounding_mode=rounding_mode))
    return with_values(s, values_of(s) / other)


@handles("div_", "true_divide_", "__itruediv__")
def _div_(s, other, *, rounding_mode=None):
    result = _div(s, other, rounding_mode=rounding_mode)
    state = s.__dict__
    state["_sp_indices"], state["_sp_values"] = indices_of(result), values_of(result)
    state["_sp_coalesced"] = is_coalesced(result)
    return s


@handles("neg", "negative")
def _neg(s):
    return with_values(s, -values_of(s))


@handles("neg_", "negative_")
def _neg_(s):
    s.__dict__["_sp_values"] = -values_of(s)
    return s


# ops that map 0 to 0 (or False): applied to the values of the coalesced tensor
_ZERO_PRESERVING = ("abs", "sqrt", "sin", "tanh", "relu", "log1p", "square", "sign", "expm1",
                    "asin", "asinh", "atan", "atanh", "sinh", "tan", "floor", "ceil", "round",
                    "trunc", "frac", "sgn", "erf", "erfinv", "deg2rad", "rad2deg", "signbit",
                    "isnan", "isinf", "nan_to_num")


def _unary(name):
    def apply(s, *args, **kwargs):
        c = coalesce(s)
        return with_values(c, getattr(F, name)(values_of(c), *args, **kwargs), True)
    return apply


for _name in _ZERO_PRESERVING:
    HANDLERS[_name] = _unary(_name)


@handles("pow")
def _pow(s, exponent):
    if not is_sparse(s) or not _scalar(exponent):
        raise RuntimeError("pow(): only sparse tensors to a scalar power are supported")
    if float(exponent) <= 0:
        raise RuntimeError("pow: the exponent must be positive for a sparse tensor (zeros "
                           "would not stay zero)")
    c = coalesce(s)
    return with_values(c, values_of(c) ** exponent, True)


# ---- reductions ----------------------------------------------------------------------------
@handles("sum")
def _sum(s, dim=None, keepdim=False, *, dtype=None):
    if dim is None:
        vals = values_of(s)
        return vals.sum(dtype=dtype) if dtype is not None else vals.sum()
    return sparse_sum(s, dim, dtype)


def sparse_sum(s, dim=None, dtype=None):
    """``ember.sparse.sum``: over ``dim`` (a sparse result while sparse dims remain)."""
    vals = values_of(s)
    if dtype is not None:
        vals = vals.to(dtype)
    if dim is None:
        return vals.sum()
    nd = len(shape_of(s))
    dims = sorted({d % nd for d in ((dim,) if isinstance(dim, int) else dim)})
    k = sparse_dim(s)
    sparse_dims = [d for d in dims if d < k]
    dense_dims = [d - k + 1 for d in dims if d >= k]
    if dense_dims:
        vals = vals.sum(dense_dims)
    keep = [d for d in range(k) if d not in sparse_dims]
    shape = tuple(n for d, n in enumerate(shape_of(s)) if d not in dims)
    if not keep:
        return vals.sum(0)  # every sparse dim summed: the dense remainder
    idx = indices_of(s)[keep]
    return coalesce(make_sparse(idx, vals, shape, False))


@handles("norm")
def _norm(s, p="fro", dim=None, keepdim=False, dtype=None):
    if dim is not None:
        raise NotImplementedError("norm(dim=) of sparse tensors")
    vals = values_of(coalesce(s))
    if p == "fro":
        p = 2
    return vals.norm(p)


# ---- products ------------------------------------------------------------------------------
def _spmm(s, d):
    """sparse (m, k) @ dense (k, n) -> dense (m, n), differentiable w.r.t. both."""
    if sparse_dim(s) != 2 or values_of(s).dim() != 1:
        raise RuntimeError("addmm: matrices expected, got "
                           f"{len(shape_of(s))}D tensor")
    if d.dim() != 2:
        raise RuntimeError(f"mm: expected 2D dense tensor, got {d.dim()}D tensor")
    m, k = shape_of(s)
    if d.shape[0] != k:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and "
                           f"{d.shape[0]}x{d.shape[1]})")
    rows, cols = indices_of(s)[0], indices_of(s)[1]
    vals = values_of(s)
    dtype = F.promote_types(vals.dtype, d.dtype)
    return SpMM.apply(vals.to(dtype), d.to(dtype), rows, cols, m)


def _transpose2(s):
    idx = indices_of(s)
    return make_sparse(idx.flip(0), values_of(s), tuple(shape_of(s)[::-1]), False)


def matmul(a, b):
    """Products with a sparse operand: sparse @ dense and dense @ sparse are dense,
    sparse @ sparse is sparse (coalesced)."""
    if is_sparse(a) and is_sparse(b):
        return dense_to_sparse(_spmm(a, to_dense(b)))
    if is_sparse(a):
        if b.dim() == 1:
            return _spmm(a, b[:, None])[:, 0]
        return _spmm(a, b)
    if a.dim() == 1:
        return _spmm(_transpose2(b), a[:, None])[:, 0]
    return _spmm(_transpose2(b), a.t()).t()


@handles("mm", "matmul", "spmm", "__matmul__")
def _mm(a, b, *, out=None):
    if out is not None:
        raise NotImplementedError("mm(out=) with sparse operands")
    return matmul(a, b)


@handles("__rmatmul__")
def _rmatmul(s, other):
    return matmul(other, s)


@handles("mv")
def _mv(s, v):
    return _spmm(s, v[:, None])[:, 0]


@handles("smm")
def _smm(s, d):
    return dense_to_sparse(_spmm(s, d))


@handles("addmm")
def _addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    product = matmul(mat1, mat2)
    if is_sparse(input):
        input = to_dense(input)
    if beta == 0:
        return product * alpha
    return input * beta + product * alpha


# ---- shape ---------------------------------------------------------------------------------
@handles("T", "mT")
def _T(s):
    if len(shape_of(s)) != 2:
        raise RuntimeError("T/mT of a sparse tensor: only 2-D sparse tensors")
    return _transpose(s, 0, 1)


@handles("t")
def _t(s):
    nd = len(shape_of(s))
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 sparse and 0 dense dimensions, "
                           f"but self is {sparse_dim(s)} sparse and "
                           f"{values_of(s).dim() - 1} dense")
    return s if nd < 2 else _transpose(s, 0, 1)


@handles("transpose", "swapaxes", "swapdims")
def _transpose(s, dim0, dim1):
    nd = len(shape_of(s))
    d0, d1 = dim0 % nd, dim1 % nd
    k = sparse_dim(s)
    if (d0 < k) != (d1 < k):
        raise RuntimeError("transpose(): cannot swap a sparse dimension with a dense one")
    shape = list(shape_of(s))
    shape[d0], shape[d1] = shape[d1], shape[d0]
    if d0 < k:
        order = list(range(k))
        order[d0], order[d1] = order[d1], order[d0]
        return make_sparse(indices_of(s)[order], values_of(s), tuple(shape), False)
    return make_sparse(indices_of(s), values_of(s).transpose(d0 - k + 1, d1 - k + 1),
                       tuple(shape), is_coalesced(s))


@handles("unsqueeze")
def _unsqueeze(s, dim):
    nd = len(shape_of(s))
    d = dim % (nd + 1)
    k = sparse_dim(s)
    shape = shape_of(s)[:d] + (1,) + shape_of(s)[d:]
    if d <= k:
        idx = indices_of(s)
        idx = F.cat([idx[:d], idx.new_zeros((1, idx.shape[1])), idx[d:]], 0)
        return make_sparse(idx, values_of(s), shape, is_coalesced(s))
    return make_sparse(indices_of(s), values_of(s).unsqueeze(d - k + 1), shape,
                       is_coalesced(s))


@handles("index_select")
def _index_select(s, dim, index):
    nd = len(shape_of(s))
    d = dim % nd
    k = sparse_dim(s)
    index = index.to(int64)
    shape = list(shape_of(s))
    shape[d] = index.numel()
    if d >= k:
        return make_sparse(indices_of(s), values_of(s).index_select(d - k + 1, index),
                           tuple(shape), is_coalesced(s))
    idx = indices_of(s)
    # entry j of the result holds element i of s when s's index along d is index[j]
    hits = (idx[d][:, None] == index[None, :]).nonzero()
    src, pos = hits[:, 0], hits[:, 1]
    new_idx = idx[:, src].clone()
    new_idx[d] = pos
    return make_sparse(new_idx, values_of(s)[src], tuple(shape), False)


@handles("select")
def _select(s, dim, index):
    nd = len(shape_of(s))
    d = dim % nd
    size = shape_of(s)[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(shape_of(s))} at dimension {dim}")
    index %= size
    k = sparse_dim(s)
    shape = shape_of(s)[:d] + shape_of(s)[d + 1:]
    if d >= k:
        return make_sparse(indices_of(s), values_of(s).select(d - k + 1, index), shape,
                           is_coalesced(s))
    idx = indices_of(s)
    keep = (idx[d] == index).nonzero().flatten()
    rows = [r for r in range(k) if r != d]
    vals = values_of(s)[keep]
    if not rows:
        return vals.sum(0)  # the last sparse dim selected: a dense result
    return make_sparse(idx[rows][:, keep], vals, shape, is_coalesced(s))


@handles("__getitem__")
def _getitem(s, index):
    if isinstance(index, int):
        return _select(s, 0, index)
    raise NotImplementedError("indexing a sparse tensor with anything but one integer")


@handles("cat", "concat", "concatenate")
def _cat(tensors, dim=0, *, out=None):
    tensors = list(tensors)
    if not all(is_sparse(t) for t in tensors):
        raise RuntimeError("cat(): all tensors must be sparse to concatenate sparse tensors")
    first = tensors[0]
    nd = len(shape_of(first))
    d = dim % nd
    k = sparse_dim(first)
    if d >= k:
        raise NotImplementedError("cat of sparse tensors along a dense dim")
    offset, idx_parts, val_parts = 0, [], []
    for t in tensors:
        idx = indices_of(t).clone()
        idx[d] += offset
        offset += shape_of(t)[d]
        idx_parts.append(idx)
        val_parts.append(values_of(t))
    shape = list(shape_of(first))
    shape[d] = offset
    return make_sparse(F.cat(idx_parts, 1), F.cat(val_parts, 0), tuple(shape), False)


# ---- ops whose sparse form lives in ember.sparse ---------------------------------------------
def sparse_softmax(s, dim, dtype=None, log=False):
    """Softmax along ``dim`` over the specified elements only (the others stay unspecified,
    as if minus infinity): ``ember.sparse.softmax`` / ``log_softmax``."""
    c = coalesce(s)
    nd = len(shape_of(c))
    d = dim % nd
    k = sparse_dim(c)
    vals = values_of(c)
    if dtype is not None:
        vals = vals.to(dtype)
    if d >= k:
        fn = F.log_softmax if log else F.softmax
        return with_values(c, fn(vals, d - k + 1), True)
    idx = indices_of(c)
    others = [r for r in range(k) if r != d]
    sizes = [shape_of(c)[r] for r in others]
    group = linear_index(idx[others], sizes) if others else idx.new_zeros(idx.shape[1])
    _, group = F.unique(group, return_inverse=True)
    n_groups = int(group.max()) + 1 if group.numel() else 0
    shape = (n_groups,) + tuple(vals.shape[1:])
    gidx = group.reshape((-1,) + (1,) * (vals.dim() - 1)).expand(vals.shape)
    top = zeros(shape, dtype=vals.dtype, device=vals.device).scatter_reduce(
        0, gidx, vals, "amax", include_self=False)
    shifted = vals - top[group]
    exp = shifted.exp()
    total = zeros(shape, dtype=vals.dtype, device=vals.device).index_add(0, group, exp)
    out = shifted - total[group].log() if log else exp / total[group]
    return with_values(c, out, True)


__all__ = ["HANDLERS", "matmul", "sparse_sum", "sparse_softmax", "unravel", "SparseTensor"]
