"""What compressed sparse tensors (CSR, CSC, BSR, BSC) answer: the calls
``SparseCompressedTensor.__torch_function__`` routes here by name (a call not listed raises
PyTorch's "Could not run 'aten::<op>' with arguments from the 'SparseCsrCPU' backend").

Results follow PyTorch's layouts: products with a dense operand, sums of every element and
``compressed + dense`` are dense; scalar products, ``neg`` and the ops that keep zero zero
(``abs``, ``sin``, ``relu``, ...) keep the indices; ``t()`` of a CSR tensor is the CSC
tensor of the same indices. Each is written with ordinary differentiable ember ops on the
values (products: ``_ops.sparse_ops.SpMM`` on the expanded rows).
"""
from __future__ import annotations

import numbers

from .._torch_function import registrar
from .. import _functions as F
from .._creation import zeros
from .._tensor import Size, Tensor, _wrap_dim
from .._tensor_repr import (PRINT_OPTS, _format_array, _formatter, _summarized_values,
                            _with_suffixes)
from ..backend import to_host
from ..backend.dtypes import _BY_NUMPY
from ..backend.sparse_data import no_sparse_kernel
from . import compressed as C
from . import tensor as _coo
from .compressed import (BLOCK_LAYOUTS, COMPRESSED_HANDLERS, ROW_LAYOUTS, is_compressed,
                         layout_name, layout_of, shape_of, values_of, with_values)
from .compressed_factory import convert, to_coo
from .compressed_products import addmm, matmul, mv


handles = registrar(COMPRESSED_HANDLERS)


def _unsupported_layout(t):
    return RuntimeError(f"unsupported tensor layout: {layout_name(t)}")


# ---- metadata ----------------------------------------------------------------------------
@handles("shape")
def _shape(t):
    return Size(shape_of(t))


@handles("size")
def _size(t, dim=None):
    shape = shape_of(t)
    if dim is None:
        return Size(shape)
    return shape[_wrap_dim(dim, len(shape))]


@handles("dim", "ndimension", "ndim")
def _dim(t):
    return len(shape_of(t))


@handles("numel", "nelement")
def _numel(t):
    return C.numel(t)


_FROM_VALUES = ("dtype", "device", "is_cuda", "is_cpu", "is_floating_point", "is_complex",
                "requires_grad", "is_leaf", "grad_fn")


def _from_values(name):
    def read(t):
        attr = getattr(values_of(t), name)
        return attr() if name.startswith("is_f") or name == "is_complex" else attr
    return read


for _name in _FROM_VALUES:
    COMPRESSED_HANDLERS[_name] = _from_values(_name)


@handles("element_size", "itemsize")
def _element_size(t):
    return values_of(t).element_size()


@handles("is_meta", "is_sparse")
def _false(t):
    return False


@handles("layout")
def _layout(t):
    return layout_of(t)


@handles("is_sparse_csr")
def _is_sparse_csr(t):
    return layout_of(t) == C.sparse_csr


@handles("is_contiguous")
def _is_contiguous(t, memory_format=None):
    raise RuntimeError(f"Sparse {layout_of(t)[7:].upper()} tensors do not have is_contiguous")


@handles("stride")
def _stride(t, dim=None):
    raise RuntimeError(f"Sparse {layout_of(t)[7:].upper()} tensors do not have strides")


@handles("reshape")
def _reshape(t, *shape):
    raise RuntimeError(f"Sparse {layout_of(t)[7:].upper()} tensors do not have is_contiguous")


@handles("data_ptr")
def _data_ptr(t):
    raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")


@handles("numpy")
def _numpy(t, *, force=False):
    raise TypeError(f"can't convert {layout_name(t)} layout tensor to numpy. Use Tensor.to_dense() "
                    f"first.")


@handles("__len__")
def _len(t):
    if not shape_of(t):
        raise TypeError("len() of a 0-d tensor")
    return shape_of(t)[0]


@handles("item")
def _item(t):
    if C.numel(t) != 1:
        raise RuntimeError(f"a Tensor with {C.numel(t)} elements cannot be converted to Scalar")
    return C.to_dense(t).item()


@handles("_nnz")
def _nnz(t):
    return C.nnz_of(t)


@handles("sparse_dim")
def _sparse_dim(t):
    return 2


@handles("dense_dim")
def _dense_dim(t):
    return C.dense_dims(t)


def _index_reader(name, rows):
    kind = "row compressed" if rows else "column compressed"
    compressed = name in ("crow_indices", "ccol_indices")

    def read(t):
        if not is_compressed(t) or (layout_of(t) in ROW_LAYOUTS) != rows:
            raise C.layout_error(name, kind, layout_of(t) if is_compressed(t) else "strided")
        return C.compressed_of(t) if compressed else C.plain_of(t)
    return read


COMPRESSED_HANDLERS["crow_indices"] = _index_reader("crow_indices", True)
COMPRESSED_HANDLERS["col_indices"] = _index_reader("col_indices", True)
COMPRESSED_HANDLERS["ccol_indices"] = _index_reader("ccol_indices", False)
COMPRESSED_HANDLERS["row_indices"] = _index_reader("row_indices", False)


@handles("values")
def _values(t):
    return values_of(t)


def _coo_only(name):
    def refuse(t, *args, **kwargs):
        raise C.layout_error(name, "coordinate", layout_of(t))
    return refuse


for _name in ("indices", "coalesce", "is_coalesced"):
    COMPRESSED_HANDLERS[_name] = _coo_only(_name)


# ---- autograd metadata: the values carry it -----------------------------------------------
@handles("grad")
def _grad(t):
    """The gradient at the specified elements, with ``t``'s indices (PyTorch's layout for
    ``to_dense``, ``sparse.mm``, scalar products, ``neg`` and the other index-keeping ops)."""
    g = values_of(t).grad
    return None if g is None else with_values(t, g)


@handles("requires_grad_")
def _requires_grad_(t, requires_grad=True):
    vals = values_of(t)
    if vals.grad_fn is None and vals._base is not None:
        # a reshaped view of the conversion's gather: the leaf is the values themselves
        vals = t.__dict__["_cs_values"] = vals.detach()
    vals.requires_grad_(requires_grad)
    return t


@handles("detach", "data")
def _detach(t):
    return with_values(t, values_of(t).detach())


@handles("clone")
def _clone(t, *, memory_format=None):
    return C.make_compressed(layout_of(t), C.compressed_of(t).clone(), C.plain_of(t).clone(),
                             values_of(t).clone(), shape_of(t))


@handles("copy_")
def _copy_(t, src, non_blocking=False):
    """Copies ``src``'s indices and values into ``t`` (one layout, one number of elements)."""
    if not is_compressed(t) or not is_compressed(src) or layout_of(t) != layout_of(src):
        raise RuntimeError(f"torch.copy_: copy of sparse compressed tensors having different "
                           f"layouts is not supported. self layout is {layout_name(t)} and src "
                           f"layout is {layout_name(src)}")
    if C.nnz_of(t) != C.nnz_of(src) or shape_of(t) != shape_of(src):
        raise RuntimeError("torch.copy_: only sparse compressed tensors with the same number "
                           "of specified elements are supported.")
    C.compressed_of(t).copy_(C.compressed_of(src))
    C.plain_of(t).copy_(C.plain_of(src))
    values_of(t).copy_(values_of(src))
    return t


@handles("__deepcopy__", "__reduce_ex__")
def _deepcopy(t, *args, **kwargs):
    raise NotImplementedError("Cannot access storage of SparseCsrTensorImpl")


# ---- printing ------------------------------------------------------------------------------
def _body(t, indent):
    """PyTorch's ``_tensor_str`` of a dense component: the nested lists, no suffixes."""
    a = to_host(t.detach()._data)
    if a.size == 0:
        return f"[], size={tuple(a.shape)}"  # PyTorch names an empty component's shape
    summarize = a.size > PRINT_OPTS.threshold
    fmt = _formatter(_summarized_values(a, summarize), _BY_NUMPY[a.dtype])
    return _format_array(a, fmt, indent, summarize)


@handles("__repr__", "__str__")
def _repr(t, *args, **kwargs):
    rows = layout_of(t) in ROW_LAYOUTS
    cname, pname = ("crow", "col") if rows else ("ccol", "row")
    pad = " " * len("tensor(")
    comp_prefix, plain_prefix = f"{cname}_indices=tensor(", f"{pname}_indices=tensor("
    text = ("tensor(" + comp_prefix + _body(C.compressed_of(t), 7 + len(comp_prefix)) +
            "),\n" + pad + plain_prefix + _body(C.plain_of(t), 7 + len(plain_prefix)) +
            "),\n" + pad + "values=tensor(" + _body(values_of(t), 7 + len("values=tensor(")) +
            ")")
    vals = values_of(t)
    suffixes = [f"size={tuple(shape_of(t))}", f"nnz={C.nnz_of(t)}"]
    if not C.values_dtype_default(vals.dtype):
        suffixes.append(f"dtype={vals.dtype!r}")
    suffixes.append(f"layout=torch.{layout_of(t)}")
    if vals.grad_fn is not None:
        suffixes.append(f"grad_fn=<{vals.grad_fn.name()}>")
    elif vals.requires_grad:
        suffixes.append("requires_grad=True")
    return _with_suffixes(text, suffixes, 7)


@handles("__format__")
def _format(t, format_spec):
    return format(_repr(t), format_spec)


# ---- conversions ---------------------------------------------------------------------------
@handles("to_dense")
def _to_dense(t, dtype=None, *, masked_grad=None):
    if dtype is not None:
        raise RuntimeError("dtype argument is not supported by sparse_csr_to_dense")
    return C.to_dense(t)


@handles("to_sparse")
def _to_sparse(t, *args, layout=None, blocksize=None, dense_dim=None):
    if args:
        if layout is not None or blocksize is not None or dense_dim is not None:
            raise TypeError("to_sparse() received an invalid combination of arguments")
        return _to_sparse_coo(t, *args)
    if layout in (None, _coo.sparse_coo):
        if blocksize is not None:
            raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {layout_name(t)} to "
                               f"Sparse with blocksize argument given is not supported")
        return _to_sparse_coo(t)
    return convert(t, layout, blocksize, dense_dim)


@handles("to_sparse_coo")
def _to_sparse_coo(t, sparse_dim=None):
    if sparse_dim is not None and sparse_dim != 2:
        raise RuntimeError(f"sparse_compressed_to_sparse: conversion from {layout_name(t)} to "
                           f"Sparse with sparse_dim argument !=2 is not supported")
    return to_coo(t)


@handles("to_sparse_csr")
def _to_sparse_csr(t, dense_dim=None):
    return convert(t, C.sparse_csr, None, dense_dim, "sparse_compressed_to_sparse_csr")


@handles("to_sparse_csc")
def _to_sparse_csc(t, dense_dim=None):
    return convert(t, C.sparse_csc, None, dense_dim, "sparse_compressed_to_sparse_csc")


@handles("to_sparse_bsr")
def _to_sparse_bsr(t, blocksize, dense_dim=None):
    return convert(t, C.sparse_bsr, blocksize, dense_dim, "sparse_compressed_to_sparse_bsr")


@handles("to_sparse_bsc")
def _to_sparse_bsc(t, blocksize, dense_dim=None):
    return convert(t, C.sparse_bsc, blocksize, dense_dim, "sparse_compressed_to_sparse_bsc")


@handles("to")
def _to(t, *args, **kwargs):
    vals = values_of(t).to(*args, **kwargs)
    comp, plain = C.compressed_of(t), C.plain_of(t)
    if vals.device != plain.device:
        comp, plain = comp.to(vals.device), plain.to(vals.device)
    if vals is values_of(t) and plain is C.plain_of(t):
        return t
    return C.make_compressed(layout_of(t), comp, plain, vals, shape_of(t))


def _caster(name):
    def cast(t, *args, **kwargs):
        if name in ("cpu", "cuda"):
            return _to(t, name if not args else f"cuda:{args[0]}")
        return _to(t, getattr(values_of(t)[:0], name)().dtype)
    return cast


for _name in ("double", "float", "half", "bfloat16", "long", "int", "bool", "cpu", "cuda"):
    COMPRESSED_HANDLERS[_name] = _caster(_name)


@handles("type")
def _type(t, dtype=None, non_blocking=False, **kwargs):
    raise RuntimeError("Unimplemented backend SparseCsrCPU")


# ---- elementwise ---------------------------------------------------------------------------
def _is_scalar(x):
    return isinstance(x, numbers.Number) or (isinstance(x, Tensor) and type(x) is Tensor
                                             and x.dim() == 0)


def _pick(d, t):
    """The elements of the dense ``d`` (``t``'s shape) at ``t``'s specified ones, laid out
    as ``t``'s values."""
    if tuple(d.shape) != shape_of(t):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(d.shape)} but mask has size {list(shape_of(t))}")
    if layout_of(t) in BLOCK_LAYOUTS:
        raise RuntimeError(f"empty_sparse_compressed expected sparse compressed (non-block) "
                           f"tensor layout but got {layout_name(t)}")
    if layout_of(t) != C.sparse_csr:
        raise RuntimeError("Expected result Tensor to be of format CSR")
    if C.batch_dims(t) or C.dense_dims(t):
        raise NotImplementedError("mul of a batched or hybrid CSR tensor by a tensor")
    _, rows, cols, _ = C.element_entries(t)
    return d[rows, cols]


def _structure(o):
    """A dense 0/1 tensor marking the elements the sparse ``o`` specifies."""
    if is_compressed(o):
        return C.to_dense(with_values(o, values_of(o).detach().new_ones(values_of(o).shape)))
    vals = _coo.values_of(o).detach()
    return _coo.to_dense(_coo.with_values(o, vals.new_ones(vals.shape)))


@handles("mul")
def _mul(input, other, *, out=None):
    if out is not None:
        raise NotImplementedError("mul(out=) of compressed sparse tensors")
    t, o = (input, other) if is_compressed(input) else (other, input)
    if _is_scalar(o):
        return with_values(t, values_of(t) * o)
    if not isinstance(o, Tensor):
        raise _unsupported_layout(t)
    if is_compressed(o) or _coo.is_sparse(o):
        # the elements both specify (PyTorch's sparse-sparse product)
        other_dense = C.to_dense(o) if is_compressed(o) else _coo.to_dense(o)
        present = _pick(_structure(o), t) != 0
        keep = present.nonzero().flatten()
        _, rows, cols, vals = C.element_entries(t)
        vals = (vals * _pick(other_dense, t))[keep]
        return C.from_entries(C.sparse_csr, rows[keep] * 0, rows[keep], cols[keep], vals,
                              shape_of(t), 0, C.compressed_of(t).dtype, sort=False)
    return with_values(t, values_of(t) * _pick(o, t))


@handles("mul_", "__imul__")
def _mul_(t, other):
    if not _is_scalar(other):
        other = _pick(C.to_dense(other) if is_compressed(other) else other, t)
    values_of(t).mul_(other)
    return t


@handles("neg", "negative")
def _neg(t):
    return with_values(t, -values_of(t))


# ops that map 0 to 0 which PyTorch runs on compressed tensors (on their values)
_ZERO_PRESERVING = ("abs", "sqrt", "sin", "tan", "tanh", "sinh", "asin", "asinh", "atan",
                    "atanh", "relu", "log1p", "expm1", "sign", "sgn", "erf", "erfinv", "floor",
                    "ceil", "round", "trunc", "frac", "deg2rad", "rad2deg", "signbit", "isnan",
                    "isinf", "isposinf", "isneginf", "angle", "conj", "positive")


def _unary(name):
    def apply(t, *args, **kwargs):
        return with_values(t, getattr(F, name)(values_of(t), *args, **kwargs))
    return apply


def _unary_(name):
    def apply(t, *args, **kwargs):
        getattr(values_of(t), name)(*args, **kwargs)  # in place on the values: autograd's
        return t                                        # checks of in-place ops apply
    return apply


for _name in _ZERO_PRESERVING:
    COMPRESSED_HANDLERS[_name] = _unary(_name)
    if _name not in ("signbit", "isnan", "isinf", "isposinf", "isneginf", "angle", "conj",
                     "positive"):
        COMPRESSED_HANDLERS[_name + "_"] = _unary_(_name + "_")
COMPRESSED_HANDLERS["neg_"] = COMPRESSED_HANDLERS["negative_"] = _unary_("neg_")


@handles("zero_")
def _zero_(t):
    state = t.__dict__
    comp, plain, vals = C.compressed_of(t), C.plain_of(t), values_of(t)
    nb = C.batch_dims(t)
    state["_cs_compressed"] = comp.new_zeros(comp.shape)
    state["_cs_plain"] = plain.new_zeros(tuple(plain.shape[:-1]) + (0,))
    state["_cs_values"] = vals.detach().new_zeros(tuple(vals.shape[:nb]) + (0,) +
                                                  tuple(vals.shape[nb + 1:]))
    return t


def _layout_refusal(t, *args, **kwargs):
    culprit = t if is_compressed(t) else next(a for a in args if is_compressed(a))
    raise _unsupported_layout(culprit)


# elementwise ops whose result would not keep the zeros: PyTorch refuses the layout
for _name in ("exp", "cos", "sigmoid", "square", "pow", "div", "true_divide", "sub",
              "__rsub__", "log", "cosh", "reciprocal", "rsqrt", "eq", "ne", "lt", "le", "gt",
              "ge", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "exp_", "cos_",
              "sigmoid_", "square_", "pow_", "div_", "sub_", "log_"):
    COMPRESSED_HANDLERS[_name] = _layout_refusal


@handles("nan_to_num", "nan_to_num_")
def _nan_to_num(t, *args, **kwargs):
    raise no_sparse_kernel("nan_to_num.out", C.BACKEND)


@handles("T")
def _T_refused(t):
    raise no_sparse_kernel("as_strided", C.BACKEND)


@handles("add")
def _add(input, other, *, alpha=1, out=None):
    if out is not None:
        raise NotImplementedError("add(out=) of compressed sparse tensors")
    if is_compressed(input) and is_compressed(other):
        return _add_compressed(input, other, alpha)
    t, o = (input, other) if is_compressed(input) else (other, input)
    if _coo.is_sparse(o) or not isinstance(o, (Tensor, numbers.Number)):
        raise _unsupported_layout(t)
    o_shape = list(o.shape) if isinstance(o, Tensor) else []
    if tuple(o_shape) != shape_of(t):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {o_shape} while other has size {list(shape_of(t))} (FYI: "
                           f"op2-sparse addition does not currently support broadcasting)")
    a = C.to_dense(input) if is_compressed(input) else input
    b = C.to_dense(other) if is_compressed(other) else other
    return a + b * alpha if alpha != 1 else a + b


@handles("add_", "__iadd__")
def _add_(t, other, *, alpha=1):
    if not is_compressed(t) or not is_compressed(other):
        raise _unsupported_layout(t if is_compressed(t) else other)
    result = _add(t, other, alpha=alpha)
    state = t.__dict__
    state["_cs_compressed"], state["_cs_plain"] = C.compressed_of(result), C.plain_of(result)
    state["_cs_values"] = values_of(result)
    return t


def _add_compressed(a, b, alpha):
    for t in (a, b):
        if layout_of(t) != C.sparse_csr:
            raise C.layout_error("crow_indices", "row compressed", layout_of(t))
    if shape_of(a) != shape_of(b):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(shape_of(a))} while other has size "
                           f"{list(shape_of(b))}")
    ba, ra, ca, va = C.entries(a)
    bb, rb, cb, vb = C.entries(b)
    if alpha != 1:
        vb = vb * alpha
    dtype = F.promote_types(va.dtype, vb.dtype)
    nb = C.batch_dims(a)
    n_rows, n_cols = C.sparse_extent(shape_of(a), C.sparse_csr, nb, (1, 1))
    key = F.cat([(ba * n_rows + ra) * n_cols + ca, (bb * n_rows + rb) * n_cols + cb])
    unique, inverse = F.unique(key, sorted=True, return_inverse=True)
    vals = F.cat([va.to(dtype), vb.to(dtype)])
    summed = zeros((unique.shape[0],) + tuple(vals.shape[1:]), dtype=dtype,
                   device=vals.device).index_add(0, inverse, vals)
    cols = F.remainder(unique, n_cols)
    rest = F.div(unique, n_cols, rounding_mode="floor")
    return C.from_entries(C.sparse_csr, F.div(rest, n_rows, rounding_mode="floor"),
                          F.remainder(rest, n_rows), cols, summed, shape_of(a), nb,
                          C.compressed_of(a).dtype, sort=False)


# ---- reductions ----------------------------------------------------------------------------
@handles("sum")
def _sum(t, dim=None, keepdim=False, *, dtype=None):
    vals = values_of(t)
    if dim is None:
        return vals.sum(dtype=dtype) if dtype is not None else vals.sum()
    if layout_of(t) != C.sparse_csr:
        raise RuntimeError(f"Currently the only compressed sparse format supported for "
                           f"sum.dim_IntList is CSR, but got layout {layout_name(t)}")
    if not keepdim:
        raise RuntimeError("reduction operations on CSR tensors with keepdim=False is "
                           "unsupported")
    if C.batch_dims(t) or C.dense_dims(t):
        raise NotImplementedError("sum(dim) of a batched or hybrid CSR tensor")
    dims = {d % 2 for d in ((dim,) if isinstance(dim, int) else dim)}
    _, rows, cols, vals = C.entries(t)
    if dtype is not None:
        vals = vals.to(dtype)
    m, n = shape_of(t)
    rows = rows * 0 if 0 in dims else rows
    cols = cols * 0 if 1 in dims else cols
    shape = (1 if 0 in dims else m, 1 if 1 in dims else n)
    unique, inverse = F.unique(rows * shape[1] + cols, sorted=True, return_inverse=True)
    summed = zeros(unique.shape[0], dtype=vals.dtype,
                   device=vals.device).index_add(0, inverse, vals)
    return C.from_entries(C.sparse_csr, unique * 0, F.div(unique, shape[1],
                                                          rounding_mode="floor"),
                          F.remainder(unique, shape[1]), summed, shape, 0,
                          C.compressed_of(t).dtype, sort=False)


# ---- products (compressed_products.py) --------------------------------------------------
@handles("mm", "matmul", "__matmul__")
def _mm(a, b, *, out=None):
    if out is not None:
        raise NotImplementedError("mm(out=) with compressed sparse operands")
    return matmul(a, b)


@handles("__rmatmul__")
def _rmatmul(t, other):
    return matmul(other, t)


@handles("mv")
def _mv(t, v):
    return mv(t, v)


@handles("addmm")
def _addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    if out is not None:
        raise NotImplementedError("addmm(out=) with compressed sparse operands")
    return addmm(input, mat1, mat2, beta, alpha)


# ---- shape ---------------------------------------------------------------------------------
_FLIPPED = {C.sparse_csr: C.sparse_csc, C.sparse_csc: C.sparse_csr,
            C.sparse_bsr: C.sparse_bsc, C.sparse_bsc: C.sparse_bsr}


def _dim_kind(t, d):
    nb = C.batch_dims(t)
    return "Batch" if d < nb else ("Sparse" if d < nb + 2 else "Dense")


@handles("transpose", "swapaxes", "swapdims")
def _transpose(t, dim0, dim1):
    nd = len(shape_of(t))
    d0, d1 = dim0 % nd, dim1 % nd
    kind0, kind1 = _dim_kind(t, d0), _dim_kind(t, d1)
    if kind0 != kind1:
        raise RuntimeError(f"transpose(): can only transpose dimensions of the same type "
                           f"(Batch, Sparse, Dense), got {d0}({kind0}) and {d1}({kind1})")
    if C.dense_dims(t):
        raise RuntimeError("transpose(): hybrid sparse compressed tensors with dense dimensions "
                           "are not supported")
    shape = list(shape_of(t))
    shape[d0], shape[d1] = shape[d1], shape[d0]
    comp, plain, vals = C.compressed_of(t), C.plain_of(t), values_of(t)
    layout = layout_of(t)
    nb = C.batch_dims(t)
    if d0 == d1:
        return t
    if kind0 == "Batch":
        comp, plain = comp.transpose(d0, d1), plain.transpose(d0, d1)
        vals = vals.transpose(d0, d1)
    elif kind0 == "Sparse":
        layout = _FLIPPED[layout]
        if layout in BLOCK_LAYOUTS:
            vals = vals.transpose(nb + 1, nb + 2)
    return C.make_compressed(layout, comp, plain, vals, tuple(shape))


@handles("t")
def _t(t):
    nd = len(shape_of(t))
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _transpose(t, 0, 1)


@handles("mT")
def _mT(t):
    return _transpose(t, -2, -1)


# ---- select: a COO result, as PyTorch's ----------------------------------------------------
@handles("select")
def _select(t, dim, index):
    return _coo.HANDLERS["select"](to_coo(t), dim, index)


@handles("__getitem__")
def _getitem(t, index):
    if isinstance(index, int):
        return _select(t, 0, index)
    raise NotImplementedError("indexing a compressed sparse tensor with anything but one "
                              "integer")


# ---- COO tensors' conversions to the compressed layouts (the COO table's entries) ---------
def _coo_converter(layout):
    def to_compressed(s, *args, **kwargs):
        return convert(s, layout, *args, **kwargs)
    return to_compressed


_coo.HANDLERS["to_sparse_csr"] = _coo_converter(C.sparse_csr)
_coo.HANDLERS["to_sparse_csc"] = _coo_converter(C.sparse_csc)
_coo.HANDLERS["to_sparse_bsr"] = _coo_converter(C.sparse_bsr)
_coo.HANDLERS["to_sparse_bsc"] = _coo_converter(C.sparse_bsc)
_coo_to_sparse = _coo.HANDLERS["to_sparse"]


def _coo_to_sparse_any(s, *args, layout=None, blocksize=None, dense_dim=None):
    """COO's ``to_sparse``, reaching the compressed layouts too."""
    if layout in C.COMPRESSED_LAYOUTS or layout == "strided":
        return convert(s, layout, blocksize, dense_dim)
    return _coo_to_sparse(s, *args, layout=layout)


_coo.HANDLERS["to_sparse"] = _coo_to_sparse_any


def _coo_product(name):
    coo_handler = _coo.HANDLERS[name]

    def product(a, b, *args, **kwargs):
        if is_compressed(a) or is_compressed(b):
            return matmul(a, b)
        return coo_handler(a, b, *args, **kwargs)
    return product


for _name in ("mm", "matmul", "__matmul__"):
    _coo.HANDLERS[_name] = _coo_product(_name)
