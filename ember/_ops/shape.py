"""Shape ops. Views (``is_view = True``) return NumPy views of their input and
so share memory and the version counter; the rest copy."""
from __future__ import annotations

import math

from .._tensor import Tensor, _wrap_dim
from .._creation import keyword_sizes
from ..backend import get_array_module, reshaped_view
from ..autograd.function import _expandable
from ..backend.dtypes import SCALAR_NAMES, FLOAT8_NP, dtype as _dtype, result_type, \
    refuse_limited_unsigned, refuse_float8
from .indexing import BasicIndex, SelectIndex
from .primitive import Primitive, unbroadcast, sum_to
from .._typing import Any, Sequence


def infer_shape(shape, numel):
    """Resolve a single -1 in ``shape``; PyTorch's error when sizes don't fit."""
    shape = tuple(int(s) for s in shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if any(s < -1 for s in shape):
        raise RuntimeError(f"invalid shape dimension {min(shape)}")
    known = 1
    for s in shape:
        if s != -1:
            known *= s
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of "
                               f"size {numel}")
        shape = shape[:neg[0]] + (numel // known,) + shape[neg[0] + 1:]
    elif known != numel:
        raise RuntimeError(f"shape '[{', '.join(map(str, shape))}]' is invalid for input of size "
                           f"{numel}")
    return shape


def parse_sizes(sizes):
    """``f(2, 3)`` and ``f((2, 3))`` / ``f([2, 3])`` / ``f(Size)`` alike."""
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        return tuple(sizes[0])
    return tuple(int(s) for s in sizes)


_try_view = reshaped_view  # a view of d with shape, or None


class View(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "ViewBackward0"
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x._data.shape
        out = _try_view(x._data, shape)
        if out is None:
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None

    @staticmethod
    def backward_arrays(ctx, grad):
        return grad.reshape(ctx.in_shape), None


class Unsqueeze(View):
    _backward_name = "UnsqueezeBackward0"


class Squeeze(View):
    _backward_name = "SqueezeBackward0"


class SqueezeDim(View):
    _backward_name = "SqueezeBackward1"


class SqueezeDims(View):
    _backward_name = "SqueezeBackward2"


class ReshapeCopy(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x._data.shape
        return x._data.reshape(shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.in_shape), None


class ViewDtype(Primitive):
    """``x.view(dtype)``: the same bytes read as another dtype (not differentiable)."""
    is_view = True
    differentiable = False

    @staticmethod
    def forward(ctx, x, np_dtype):
        d = x._data
        if d.itemsize != np_dtype.itemsize:
            what = (f"to view {SCALAR_NAMES[d.dtype.name]} as {SCALAR_NAMES[np_dtype.name]} "
                    "(different element sizes)")
            if d.ndim == 0:
                raise RuntimeError(f"self.dim() cannot be 0 {what}")
            if d.strides[-1] != d.itemsize and d.shape[-1] != 1:
                raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got "
                                   f"{d.strides[-1] // d.itemsize}")
            ratio = np_dtype.itemsize // d.itemsize
            if ratio > 1 and d.shape[-1] % ratio:
                raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                                   f"{d.shape[-1]}")
        return d.view(np_dtype)


def _view_keywords(positional, size, dtype):
    """``x.view(size=...)`` / ``x.view(dtype=...)`` as the positional form."""
    if dtype is None:
        return keyword_sizes(positional, size, "view", "size")
    if positional or size is not None or not isinstance(dtype, _dtype):
        raise TypeError("view() received an invalid combination of arguments - expected "
                        "one of: (torch.dtype dtype) or (tuple of ints size)")
    return (dtype,)


def view(x: Tensor, *shape: int | Sequence[int], size: Sequence[int] | None = None,
         dtype: Any = None) -> Tensor:
    if size is not None or dtype is not None:  # PyTorch's keyword forms
        shape = _view_keywords(shape, size, dtype)
    if len(shape) == 1 and not isinstance(shape[0], (int, tuple, list)):
        if isinstance(shape[0], _dtype):
            return ViewDtype.apply(x, shape[0].np)
    shape = infer_shape(parse_sizes(shape), x._data.size)
    return View.apply(x, shape)


def reshape(x: Tensor, *shape_args: int | Sequence[int],
            shape: Sequence[int] | None = None) -> Tensor:
    shape = shape_args if shape is None else keyword_sizes(shape_args, shape, "reshape", "shape")
    shape = infer_shape(parse_sizes(shape), x._data.size)
    if shape == x._data.shape or getattr(x._data, "flags", None) is not None and \
            x._data.flags.c_contiguous:  # a view for certain: no trial reshape
        return View.apply(x, shape)
    if _try_view(x._data, shape) is not None:
        return View.apply(x, shape)
    return ReshapeCopy.apply(x, shape)


def flatten(x: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    n = x._data.ndim
    if n == 0:
        return reshape(x, 1)
    s, e = _wrap_dim(start_dim, n), _wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = x._data.shape
    return reshape(x, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


def unflatten(x: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    n = x._data.ndim
    dim = _wrap_dim(dim, n)
    shape = x._data.shape
    sizes = tuple(int(s) for s in sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = infer_shape(sizes, shape[dim])
    except RuntimeError as e:
        if "inferred" in str(e):
            raise
        raise RuntimeError(f"unflatten: Provided sizes [{', '.join(map(str, sizes))}] don't "
                           f"multiply up to the size of dim {dim} ({shape[dim]}) in the input "
                           "tensor") from None
    return view(x, shape[:dim] + sizes + shape[dim + 1:])


def squeeze(x: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    shape = x._data.shape
    if dim is None:
        new = tuple(s for s in shape if s != 1)
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        dims = {_wrap_dim(d, len(shape)) for d in dims} if shape else set()
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
        return (SqueezeDims if isinstance(dim, (tuple, list)) else SqueezeDim).apply(x, new)
    return Squeeze.apply(x, new)


def unsqueeze(x: Tensor, dim: int) -> Tensor:
    shape = x._data.shape
    dim = _wrap_dim(dim, len(shape) + 1)
    return Unsqueeze.apply(x, shape[:dim] + (1,) + shape[dim:])


class Permute(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "PermuteBackward0"
    is_view = True

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        return x._data.transpose(dims)

    @staticmethod
    def backward(ctx, grad):
        dims = ctx.dims  # the inverse permutation
        return grad.permute(tuple(sorted(range(len(dims)), key=dims.__getitem__))), None

    @staticmethod
    def backward_arrays(ctx, grad):
        dims = ctx.dims
        return grad.transpose(tuple(sorted(range(len(dims)), key=dims.__getitem__))), None


class Transpose(Permute):
    _backward_name = "TransposeBackward0"


class T(Permute):
    _backward_name = "TBackward0"


def permute(x: Tensor, *dim_args: int | Sequence[int],
            dims: Sequence[int] | None = None) -> Tensor:
    dims = parse_sizes(dim_args if dims is None else
                       keyword_sizes(dim_args, dims, "permute", "dims"))
    n = x._data.ndim
    if len(dims) != n:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
            f"to len(dims) = {len(dims)}")
    dims = tuple(_wrap_dim(d, n) for d in dims)
    if len(set(dims)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return Permute.apply(x, dims)


def transpose(x: Tensor, dim0: int, dim1: int) -> Tensor:
    n = x._data.ndim
    if n == 0:
        return View.apply(x, ())
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    perm = list(range(n))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return Transpose.apply(x, tuple(perm))


def t(x: Tensor) -> Tensor:
    n = x._data.ndim
    if n > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {n}D")
    return T.apply(x, (1, 0) if n == 2 else tuple(range(n)))


def mT(x):
    if x._data.ndim < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. "
                           f"Got {x._data.ndim}-D tensor.")
    return transpose(x, -2, -1)


class Expand(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "ExpandBackward0"
    is_view = True

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x._data.shape
        d = x._data
        return get_array_module(d).broadcast_to(d, shape)

    @staticmethod
    def backward(ctx, grad):
        return grad.sum_to_size(ctx.in_shape), None


def _type_label(x):
    """How PyTorch's C++ errors name a tensor's type: ``torch.FloatTensor``, or
    ``CPUBoolType`` for the dtypes without a legacy tensor class."""
    name = x.dtype.scalar_name
    if name in ("Bool", "BFloat16") or x.dtype.is_complex:
        return f"CPU{name}Type"
    return f"torch.{name}Tensor"


def expand(x: Tensor, *sizes: int | Sequence[int], size: Sequence[int] | None = None,
           implicit: bool = False) -> Tensor:
    # implicit only marks the expansion as broadcasting for ATen's tracer: no effect here
    sizes = parse_sizes(sizes if size is None else keyword_sizes(sizes, size, "expand", "size"))
    shape = x._data.shape
    if len(sizes) < len(shape):
        raise RuntimeError(
            f"expand({_type_label(x)}{{[{', '.join(map(str, shape))}]}}, "
            f"size=[{', '.join(map(str, sizes))}]): the number of sizes provided "
            f"({len(sizes)}) must be greater or equal to the number of dimensions in the "
            f"tensor ({len(shape)})")
    lead = len(sizes) - len(shape)
    target = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):  # PyTorch checks (and reports) from the last dim
        s = sizes[i]
        if i < lead:
            if s < 0:
                raise RuntimeError(f"The expanded size of the tensor ({s}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            target[i] = s
            continue
        cur = shape[i - lead]
        if s == -1:
            s = cur
        if cur != s and cur != 1:
            raise RuntimeError(
                f"The expanded size of the tensor ({s}) must match the existing size ({cur}) at "
                f"non-singleton dimension {i}.  Target sizes: [{', '.join(map(str, sizes))}].  "
                f"Tensor sizes: [{', '.join(map(str, shape))}]")
        target[i] = s
    target = tuple(target)
    if target == shape:
        return View.apply(x, shape)
    return Expand.apply(x, target)


class SumToSize(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "SumToSizeBackward0"

    @staticmethod
    def forward(ctx, x, shape):
        ctx.in_shape = x._data.shape
        refuse_float8(x._data.dtype, "sum_cpu")
        return sum_to(x._data, tuple(shape))

    @staticmethod
    def backward(ctx, grad):
        return grad.expand(ctx.in_shape), None


def sum_to_size(x: Tensor, *size_args: int | Sequence[int],
                size: Sequence[int] | None = None) -> Tensor:
    size = parse_sizes(size_args if size is None else
                       keyword_sizes(size_args, size, "sum_to_size", "size"))
    if tuple(size) == x._data.shape:
        return x
    if not _expandable(size, x._data.shape):
        raise RuntimeError(f"size {{{list(size)}}} is not expandable to size "
                           f"{{{list(x._data.shape)}}}.")
    return SumToSize.apply(x, tuple(size))


class Clone(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, x):
        d = x._data
        return get_array_module(d).array(d, copy=True, order="C")

    @staticmethod
    def backward(ctx, grad):
        return grad


def contiguous(x: Tensor, memory_format: Any = None) -> Tensor:
    return x if x._data.flags.c_contiguous else Clone.apply(x)


class Cat(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        arrays = [t._data for t in tensors]
        ctx.sizes = [a.shape[dim] for a in arrays]
        ctx.dim = dim
        return get_array_module(*arrays).concatenate(arrays, axis=dim)

    @staticmethod
    def backward(ctx, grad):
        out, start = [None], 0
        for size in ctx.sizes:
            out.append(grad.narrow(ctx.dim, start, size))
            start += size
        return tuple(out)

    @staticmethod
    def backward_arrays(ctx, grad):
        out, start, lead = [None], 0, (slice(None),) * ctx.dim
        for size in ctx.sizes:
            out.append(grad[lead + (slice(start, start + size),)])
            start += size
        return tuple(out)


def _result_dtype_arrays(tensors):
    return result_type(*tensors)


def _tensor_list(tensors, name):
    """``tensors`` as a list, with PyTorch's argument-parsing TypeErrors for anything other
    than a list or tuple of Tensors."""
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    return list(tensors)


def cat(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    # legacy rule: 1-D empty tensors are skipped
    nonempty = [t for t in tensors if not (t._data.ndim == 1 and t._data.shape[0] == 0)]
    if not nonempty:
        return tensors[0].clone()
    ref = nonempty[0]
    if ref._data.ndim == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    dim = _wrap_dim(dim, ref._data.ndim)
    dt = nonempty[0].dtype
    for i, tt in enumerate(tensors):
        if tt._data.ndim == 1 and tt._data.shape[0] == 0:
            continue
        if tt._data.ndim != ref._data.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got "
                               f"{ref._data.ndim} and {tt._data.ndim}")
        for d in range(ref._data.ndim):
            if d != dim and tt._data.shape[d] != ref._data.shape[d]:
                raise RuntimeError(
                    f"Sizes of tensors must match except in dimension {dim}. Expected size "
                    f"{ref._data.shape[d]} but got size {tt._data.shape[d]} for tensor number "
                    f"{i} in the list.")
        if tt.dtype is not dt:
            dt = None
    if dt is None:
        target = _result_dtype_arrays(nonempty)
        nonempty = [tt.to(target) for tt in nonempty]
    return Cat.apply(dim, *nonempty)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    shape = tensors[0]._data.shape
    for i, tt in enumerate(tensors):
        if tt._data.shape != shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"[{', '.join(map(str, shape))}] at entry 0 and "
                               f"[{', '.join(map(str, tt._data.shape))}] at entry {i}")
    dim = _wrap_dim(dim, len(shape) + 1)
    return cat([unsqueeze(tt, dim) for tt in tensors], dim)


def _flip_needs_dtype_kernel(x, dims):
    """Whether PyTorch's flip runs its per-dtype kernel (which the limited unsigned types
    lack) rather than moving whole elements: when the innermost dimension in memory (of
    those longer than 1) is flipped or is not contiguous."""
    long = [(x.stride(i), i) for i, n in enumerate(x._data.shape) if n > 1]
    if not long:
        return False
    stride, innermost = min(long, key=lambda p: (p[0], -p[1]))
    return innermost in dims or stride != 1


class Flip(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, x, dims):
        ctx.dims = dims
        d = x._data
        if (d.dtype.kind == "u" and d.itemsize > 1 or d.dtype in FLOAT8_NP) and d.size and \
                _flip_needs_dtype_kernel(x, dims):
            refuse_limited_unsigned(d.dtype, "flip_cpu")
        return get_array_module(d).flip(d, dims).copy() if dims else d.copy()

    @staticmethod
    def backward(ctx, grad):
        return Flip.apply(grad, ctx.dims), None


def flip(x: Tensor, *dim_args: int | Sequence[int], dims: Sequence[int] | None = None) -> Tensor:
    dims = parse_sizes(dim_args if dims is None else keyword_sizes(dim_args, dims, "flip", "dims"))
    n = x._data.ndim
    return Flip.apply(x, tuple(_wrap_dim(d, n) for d in dims))


class Roll(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "RollBackward0"

    @staticmethod
    def forward(ctx, x, shifts, dims):
        ctx.shifts, ctx.dims = shifts, dims
        d = x._data
        return get_array_module(d).roll(d, shifts, dims)

    @staticmethod
    def backward(ctx, grad):
        neg = tuple(-s for s in ctx.shifts) if isinstance(ctx.shifts, tuple) else -ctx.shifts
        return Roll.apply(grad, neg, ctx.dims), None, None


def roll(x: Tensor, shifts: int | Sequence[int],
         dims: int | Sequence[int] | None = None) -> Tensor:
    if isinstance(shifts, list):
        shifts = tuple(shifts)
    if isinstance(dims, list):
        dims = tuple(dims)
    if dims is None:
        return Roll.apply(x.reshape(-1), shifts, 0).view(x._data.shape)
    return Roll.apply(x, shifts, dims)


class Repeat(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, x, reps):
        d = x._data
        lead = len(reps) - d.ndim
        ctx.in_shape = d.shape
        ctx.reps = reps
        return get_array_module(d).tile(d.reshape((1,) * lead + d.shape), reps)

    @staticmethod
    def backward(ctx, grad):
        reps, in_shape = ctx.reps, ctx.in_shape
        lead = len(reps) - len(in_shape)
        full = (1,) * lead + tuple(in_shape)
        split = []
        for r, s in zip(reps, full):
            split += [r, s]
        g = grad.reshape(tuple(split)).sum(tuple(range(0, len(split), 2)))
        return g.reshape(in_shape), None


def repeat(x: Tensor, *reps: int | Sequence[int],
           repeats: Sequence[int] | None = None) -> Tensor:
    reps = parse_sizes(reps if repeats is None else
                       keyword_sizes(reps, repeats, "repeat", "repeats"))
    if len(reps) < x._data.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    return Repeat.apply(x, tuple(reps))


def tile(x: Tensor, *reps: int | Sequence[int], dims: Sequence[int] | None = None) -> Tensor:
    reps = parse_sizes(reps if dims is None else keyword_sizes(reps, dims, "tile", "dims"))
    reps = (1,) * (x._data.ndim - len(reps)) + tuple(reps)
    return Repeat.apply(x, reps)


class Tri(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, x, diagonal, lower):
        if x._data.ndim < 2:
            raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least "
                               "2 dimensions")
        ctx.diagonal, ctx.lower = diagonal, lower
        d = x._data
        xp = get_array_module(d)
        return (xp.tril if lower else xp.triu)(d, diagonal)

    @staticmethod
    def backward(ctx, grad):
        return Tri.apply(grad, ctx.diagonal, ctx.lower), None, None


def narrow(x: Tensor, dim: int, start: int | Tensor, length: int) -> Tensor:
    n = x._data.ndim
    if n == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, n)
    size = x._data.shape[dim]
    if isinstance(start, Tensor):
        start = int(start)
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    idx = (slice(None),) * dim + (slice(start, start + length),)
    return BasicIndex.apply(x, idx)


def select(x: Tensor, dim: int, index: int) -> Tensor:
    n = x._data.ndim
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, n)
    size = x._data.shape[dim]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"[{', '.join(map(str, x._data.shape))}] at dimension {dim}")
    idx = (slice(None),) * dim + (index % size,)
    return SelectIndex.apply(x, idx)


def unbind(x: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    dim = _wrap_dim(dim, x._data.ndim)
    return tuple(select(x, dim, i) for i in range(x._data.shape[dim]))


def split(x: Tensor, split_size_or_sections: int | Sequence[int],
          dim: int = 0) -> tuple[Tensor, ...]:
    dim = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[dim]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        sizes = [min(step, size - s) for s in range(0, size, step)] if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {dim}), but got "
                               f"split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(x, dim, start, s))
        start += s
    return tuple(out)


def chunk(x: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    dim = _wrap_dim(dim, x._data.ndim)
    size = x._data.shape[dim]
    if size == 0:  # PyTorch: `chunks` empty pieces
        return tuple(narrow(x, dim, 0, 0) for _ in range(chunks))
    return split(x, -(-size // chunks), dim)


__all__ = ["unbroadcast"]
