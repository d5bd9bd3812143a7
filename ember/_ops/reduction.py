"""Reductions: sum, mean, prod, max/min (with and without dim), var/std,
logsumexp, norm, all/any, cumsum/cumprod, argmax/argmin."""
import math

from .._tensor import Tensor, _wrap_dim
from ..backend import dtypes, get_array_module
from .elementwise import Maximum, Minimum
from .primitive import Primitive, unbroadcast
from .complex_ops import cj
from .shape import cat
from .. import return_types


def reduce_dims(dim, ndim):
    """``dim`` (None, int, or sequence) as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (tuple, list)):
        if len(dim) == 0:
            return tuple(range(ndim))
        dims = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"dim {dims[0]} appears multiple times in the list of dims")
        return dims
    return (_wrap_dim(dim, ndim),)


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def expand_back(grad, in_shape, dims, keepdim):
    """Broadcast a reduced gradient back over the reduced dims (differentiable)."""
    return ExpandBack.apply(grad, in_shape, dims, keepdim)


class ExpandBack(Primitive):
    """The gradient of a reduction spread over the input's shape, as one fresh array.

    A gradient is private to the engine, so a copy is fine here, and it is far
    cheaper than reshape + expand (two view nodes and ``np.broadcast_to``).
    """
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, grad, in_shape, dims, keepdim):
        d = grad._data
        ctx.grad_shape, ctx.dims = d.shape, dims
        if not keepdim:
            d = d.reshape(_kept_shape(in_shape, dims))
        out = get_array_module(d).empty(in_shape, d.dtype)
        out[...] = d
        return out

    @staticmethod
    def backward(ctx, gg):
        return Sum.apply(gg, ctx.dims, True).reshape(ctx.grad_shape), None, None, None


def _np_axis(dims, ndim):
    if ndim == 0:
        return None
    return dims


def accumulator(d):
    """The dtype to sum (multiply, average) ``d``'s elements in: float32 for bfloat16 and
    float16, as PyTorch accumulates them, the result rounded once (NumPy would add in
    bfloat16, where a running sum stops growing at 256 when adding ones); None (d's own)
    for other data."""
    return "float32" if d.dtype.kind == "V" or d.dtype.char == "e" else None


def _rounded(xp, out, d, acc):
    """A reduction's result accumulated in ``acc`` back in ``d``'s dtype."""
    return out if acc is None else xp.asarray(out).astype(d.dtype)


class Sum(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "SumBackward1"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        d = x._data
        if dtype is None and d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "sum_cpu")
        dims = reduce_dims(dim, d.ndim)
        ctx.in_shape, ctx.dims, ctx.keepdim = d.shape, dims, keepdim
        if dtype is not None:  # PyTorch casts first, then sums in the given dtype
            d = d.astype(dtype.np, copy=False)
        acc = accumulator(d)
        out = d.sum(axis=_np_axis(dims, d.ndim), keepdims=keepdim, dtype=acc)
        if dtype is not None:
            return get_array_module(d).asarray(out).astype(dtype.np, copy=False)
        if d.dtype.kind in "iub":
            xp = get_array_module(d)
            return xp.asarray(out).astype(xp.int64, copy=False)
        return _rounded(get_array_module(d), out, d, acc)

    @staticmethod
    def backward(ctx, grad):
        return expand_back(grad, ctx.in_shape, ctx.dims, ctx.keepdim), None, None, None

    @staticmethod
    def backward_arrays(ctx, grad):
        return _spread(grad, ctx), None, None, None


def _spread(grad, ctx):
    """ExpandBack's forward on arrays: ``grad`` over the reduction's input shape, fresh."""
    if not ctx.keepdim and grad.ndim:  # (a 0-d gradient broadcasts as it is)
        grad = grad.reshape(_kept_shape(ctx.in_shape, ctx.dims))
    out = get_array_module(grad).empty(ctx.in_shape, grad.dtype)
    out[...] = grad
    return out


class SumAll(Sum):
    """``x.sum()`` over every element: PyTorch names its node SumBackward0."""
    _backward_name = "SumBackward0"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        d = x._data
        if dtype is None and d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "sum_cpu")
        if dim is not None or keepdim or dtype is not None or d.dtype.kind in "iubV" or \
                d.dtype.char == "e":
            return Sum.forward(ctx, x, dim, keepdim, dtype)  # (half types: an accumulator)
        # the common ``loss.sum()``: no dims to normalise
        ctx.in_shape, ctx.dims, ctx.keepdim = d.shape, tuple(range(d.ndim)), False
        return d.sum()


class Mean(Primitive):
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    _backward_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        d = x._data
        if dtype is None and d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "sum_cpu")
        if dtype is not None:
            d = d.astype(dtype.np)
        elif d.dtype.kind in "biu":
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {x.dtype.scalar_name}")
        dims = reduce_dims(dim, d.ndim)
        ctx.in_shape, ctx.dims, ctx.keepdim = d.shape, dims, keepdim
        ctx.count = math.prod(d.shape[i] for i in dims) if d.ndim else 1
        xp, acc = get_array_module(d), accumulator(d)
        with xp.errstate(invalid="ignore", divide="ignore"):
            return _rounded(xp, d.mean(axis=_np_axis(dims, d.ndim), keepdims=keepdim, dtype=acc),
                            d, acc)

    @staticmethod
    def backward(ctx, grad):
        return expand_back(grad, ctx.in_shape, ctx.dims, ctx.keepdim) / ctx.count, None, None, \
            None

    @staticmethod
    def backward_arrays(ctx, grad):
        out = _spread(grad, ctx)
        out /= ctx.count  # as the tensor formula's division (the count is a weak scalar)
        return out, None, None, None


class MeanAll(Mean):
    """``x.mean()`` over every element: PyTorch names its node MeanBackward0."""
    _backward_name = "MeanBackward0"


class Prod(Primitive):
    _backward_name = "ProdBackward1"
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    saves_output = True

    @staticmethod
    def forward(ctx, x, dim=None, keepdim=False, dtype=None):
        d = x._data
        if dtype is None and d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "prod_out_cpu")
        ctx.save_for_backward(x)
        ctx.dim_given = dim is not None
        ctx.keepdim = keepdim
        acc = accumulator(d)
        if dim is None:
            out = d.prod(dtype=acc)
            ctx.dims = tuple(range(d.ndim))
        else:
            ctx.dims = reduce_dims(dim, d.ndim)
            out = d.prod(axis=_np_axis(ctx.dims, d.ndim), keepdims=keepdim, dtype=acc)
        xp = get_array_module(d)
        if dtype is None:
            out = _rounded(xp, out, d, acc)
        if d.dtype.kind in "iub" and dtype is None:
            out = xp.asarray(out).astype(xp.int64)
        return out if dtype is None else xp.asarray(out).astype(dtype.np)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape = x._data.shape
        g = expand_back(grad, shape, ctx.dims, ctx.keepdim)
        if not (x == 0).any():
            if x._data.dtype.kind == "c":  # grad * conj(d out / d x)
                return g * cj(expand_back(out, shape, ctx.dims, ctx.keepdim) / x), \
                    None, None, None
            return g * expand_back(out, shape, ctx.dims, ctx.keepdim) / x, None, None, None
        # With zeros, divide-by-x fails: take the product of all *other* elements
        # along the reduced dim from exclusive cumulative products both ways.
        if ctx.dim_given:
            dim = ctx.dims[0]
            return g * cj(_prod_of_others(x, dim)), None, None, None
        flat = x.reshape(-1)
        return g * cj(_prod_of_others(flat, 0)).reshape(shape), None, None, None


def _prod_of_others(x, dim):
    n = x._data.shape[dim]
    ones_shape = list(x._data.shape)
    ones_shape[dim] = 1
    one = Tensor._make(get_array_module(x._data).ones(ones_shape, x._data.dtype))
    left = x.narrow(dim, 0, n - 1)
    right = x.narrow(dim, 1, n - 1)
    excl_left = cat([one, left.cumprod(dim)], dim)
    excl_right = cat([right.flip(dim).cumprod(dim).flip(dim), one], dim)
    return excl_left * excl_right


def _check_empty_reduction(name, shape, dim, hint, as_given=False):
    """PyTorch's errors for max/min/amax/amin/argmax/argmin of an empty tensor: a dim must be
    given (RuntimeError; IndexError for the arg- ops, which say it without the hint) and every
    reduced dim, checked in the order given, must be non-empty (amax/amin name it as given,
    the others wrapped)."""
    dims = () if dim is None else tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if not dims:
        message = f"{name}(): Expected reduction dim to be specified for input.numel() == 0."
        if hint:
            raise RuntimeError(message + " Specify the reduction dim with the 'dim' argument.")
        raise IndexError(message)
    for given in dims:
        d = _wrap_dim(given, len(shape))
        if shape and shape[d] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {given if as_given else d} to "
                             f"have non-zero size.")


class ExtremeAll(Primitive):
    """``max()``/``min()`` over all elements; ties share the gradient evenly."""
    _backward_name = "MaxBackward1"
    saves_output = True

    @staticmethod
    def forward(ctx, x, largest):
        d = x._data
        if d.size == 0:
            _check_empty_reduction("max" if largest else "min", d.shape, None, True)
        ctx.save_for_backward(x)
        return d.max() if largest else d.min()

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        hit = (x == out)
        if out._data != out._data:  # nan is the result: the gradient goes to the nans
            hit = x.isnan()
        hit = hit.to(grad.dtype)
        return grad * hit / hit.sum(), None


class ExtremeDim(Primitive):
    """``max(dim)``/``min(dim)``: (values, indices); gradient to the chosen index."""
    _backward_name = "MaxBackward0"

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        d = x._data
        dim = _wrap_dim(dim, d.ndim)
        if d.size == 0:
            _check_empty_reduction("max" if largest else "min", d.shape, dim, True)
        axis = dim if d.ndim else None
        xp = get_array_module(d)
        idx = (xp.argmax if largest else xp.argmin)(d, axis=axis, keepdims=True) \
            if d.ndim else xp.zeros((), xp.int64)
        values = xp.take_along_axis(d, idx, axis) if d.ndim else d.copy()
        if not keepdim and d.ndim:
            values, idx = values.squeeze(dim), idx.squeeze(dim)
        ctx.in_shape, ctx.dim, ctx.keepdim = d.shape, dim, keepdim
        ctx.indices = idx.astype(xp.int64)
        return values, ctx.indices

    @staticmethod
    def backward(ctx, grad, grad_indices):
        if not ctx.in_shape:
            return grad, None, None, None
        idx = Tensor._make(ctx.indices)
        if not ctx.keepdim:
            grad, idx = grad.unsqueeze(ctx.dim), idx.unsqueeze(ctx.dim)
        zeros = grad.new_zeros(ctx.in_shape)
        return zeros.scatter(ctx.dim, idx, grad), None, None, None


class Amax(Primitive):
    """amax/amin over dims; gradient shared evenly between ties."""
    _backward_name = "AmaxBackward0"
    saves_output = True

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        d = x._data
        dtypes.refuse_limited_unsigned(d.dtype, "max_values_cpu" if largest else "min_values_cpu")
        dims = reduce_dims(dim, d.ndim)
        if d.size == 0:
            _check_empty_reduction("amax" if largest else "amin", d.shape, dim, True, True)
        ctx.save_for_backward(x)
        ctx.dims, ctx.keepdim = dims, keepdim
        xp = get_array_module(d)
        fn = xp.max if largest else xp.min
        return fn(d, axis=_np_axis(dims, d.ndim), keepdims=keepdim)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape = x._data.shape
        hit = (x == expand_back(out, shape, ctx.dims, ctx.keepdim)).to(grad.dtype)
        count = hit.sum(ctx.dims, keepdim=True) if shape else hit
        return expand_back(grad, shape, ctx.dims, ctx.keepdim) * hit / count, None, None, None


class ArgExtreme(Primitive):
    differentiable = False

    @staticmethod
    def forward(ctx, x, dim, keepdim, largest):
        d = x._data
        dtypes.refuse_limited_unsigned(d.dtype, "argmax_cpu" if largest else "argmin_cpu")
        if d.size == 0:
            _check_empty_reduction("argmax" if largest else "argmin", d.shape, dim, False)
        xp = get_array_module(d)
        fn = xp.argmax if largest else xp.argmin
        if dim is None:
            out = fn(d)
            return xp.asarray(out, xp.int64).reshape((1,) * d.ndim if keepdim else ())
        dim = _wrap_dim(dim, d.ndim)
        return fn(d, axis=dim if d.ndim else None, keepdims=keepdim).astype(xp.int64)


def _widen_bfloat16(xp, d):
    """bfloat16 data (ml_dtypes, NumPy kind "V", which NumPy's reductions do not all take)
    as float32, and the dtype to round the result back to (None for other data)."""
    if d.dtype.kind == "V":
        return d.astype(xp.float32), d.dtype
    return d, None


def _narrow(out, low):
    return out if low is None else out.astype(low)


class Var(Primitive):
    """Variance or std; of a complex tensor the mean of ``|x - mean|**2`` (real), whose
    gradient ``2 (x - mean) / (n - correction)`` has the real formula's form."""
    _backward_name = "VarBackward0"
    complex_grad = True  # backward right for complex tensors (complex_ops.py)

    @staticmethod
    def forward(ctx, x, dim, correction, keepdim, take_sqrt):
        d = x._data
        if d.itemsize == 1 and d.dtype in dtypes.FLOAT8_NP:
            raise RuntimeError(f"std_var_all: Unsupported dtype {x.dtype.scalar_name}")
        if d.dtype.kind not in "fcV":
            raise RuntimeError("std and var only support floating point and complex dtypes")
        dims = reduce_dims(dim, d.ndim)
        ctx.save_for_backward(x)
        ctx.dims, ctx.correction, ctx.keepdim, ctx.sqrt = dims, correction, keepdim, take_sqrt
        xp = get_array_module(d)
        d, low = _widen_bfloat16(xp, d)
        with xp.errstate(divide="ignore", invalid="ignore"):
            v = xp.var(d, axis=_np_axis(dims, d.ndim), ddof=correction, keepdims=keepdim)
            return _narrow(xp.sqrt(v) if take_sqrt else v, low)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        shape = x._data.shape
        n = math.prod(shape[i] for i in ctx.dims) if shape else 1
        centered = x - x.mean(ctx.dims, keepdim=True) if shape else x - x
        g = expand_back(grad, shape, ctx.dims, ctx.keepdim)
        if ctx.sqrt:
            std = x.std(ctx.dims, correction=ctx.correction, keepdim=True) if shape else None
            if std is None:
                return g * centered, None, None, None, None
            # PyTorch: 0 (not nan) where the std is 0
            gx = g * centered / (std * (n - ctx.correction))
            return gx.masked_fill(std == 0, 0.0), None, None, None, None
        return g * 2 * centered / (n - ctx.correction), None, None, None, None


class LogSumExp(Primitive):
    _backward_name = "LogsumexpBackward0"
    saves_output = True
    complex_grad = True  # grad * conj(softmax(z)): right for complex tensors

    @staticmethod
    def forward(ctx, x, dim, keepdim):
        d = x._data
        if d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "max_values_cpu")
        xp = get_array_module(d)
        d, low = _widen_bfloat16(xp, d)
        if d.dtype.kind not in "fc":  # integers: the default float (complex stays complex)
            d = d.astype(dtypes.get_default_dtype().np)
        dims = reduce_dims(dim, d.ndim)
        ctx.save_for_backward(x)
        ctx.dims, ctx.keepdim = dims, keepdim
        axis = _np_axis(dims, d.ndim)
        if d.size == 0:
            return _narrow(xp.log(xp.exp(d).sum(axis=axis, keepdims=keepdim)), low)
        m = xp.max(d.real, axis=axis, keepdims=True)  # the shift: the largest real part
        m = xp.where(xp.isfinite(m), m, 0)
        with xp.errstate(divide="ignore"):
            out = xp.log(xp.exp(d - m).sum(axis=axis, keepdims=True)) + m
        out = out if keepdim else out.reshape([s for i, s in enumerate(d.shape)
                                               if i not in dims])
        return _narrow(out, low)

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        shape = x._data.shape
        g = expand_back(grad, shape, ctx.dims, ctx.keepdim)
        return g * cj((x - expand_back(out, shape, ctx.dims, ctx.keepdim)).exp()), None, None


class Norm(Primitive):
    """Vector p-norm over dims: p = 2 (default), 1, inf, -inf, 0, or any float."""
    _backward_name = "LinalgVectorNormBackward0"
    saves_output = True
    complex_grad = True  # real result; norm_grad uses sgn for complex tensors

    @staticmethod
    def forward(ctx, x, p, dim, keepdim):
        d = x._data
        if d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "norm_cpu")
        if d.dtype.kind not in "fcV":
            raise RuntimeError("linalg.vector_norm: Expected a floating point or complex "
                               f"tensor as input. Got {x.dtype.scalar_name}")
        dims = reduce_dims(dim, d.ndim)
        ctx.save_for_backward(x)
        ctx.p, ctx.dims, ctx.keepdim = p, dims, keepdim
        xp = get_array_module(d)
        d, low = _widen_bfloat16(xp, d)
        return _narrow(_vector_norm(xp, d, p, _np_axis(dims, d.ndim), keepdim), low)

    @staticmethod
    def backward(ctx, grad):
        return _norm_backward(ctx, grad)


def _vector_norm(xp, d, p, axis, keepdim):
    """The p-norm of the data ``d`` over ``axis``."""
    a = xp.abs(d)
    if p == float("inf"):
        return a.max(axis=axis, keepdims=keepdim)
    if p == float("-inf"):
        return a.min(axis=axis, keepdims=keepdim)
    if p == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdim).astype(a.dtype)
    if p == 1:
        return a.sum(axis=axis, keepdims=keepdim)
    if p == 2:
        if d.dtype.kind == "c":  # |z|^2 from the parts: real, no complex square
            return xp.sqrt((d.real * d.real + d.imag * d.imag).sum(axis=axis,
                                                                     keepdims=keepdim))
        return xp.sqrt((d * d).sum(axis=axis, keepdims=keepdim))
    with xp.errstate(divide="ignore"):  # p < 0 at a zero: |0|^p = inf, the norm 0
        return (a ** p).sum(axis=axis, keepdims=keepdim) ** (1.0 / p)


def _norm_backward(ctx, grad):
    x, out = ctx.saved_tensors
    return norm_grad(x, out, grad, ctx.p, ctx.dims, ctx.keepdim), None, None, None


def norm_grad(x, out, grad, p, dims, keepdim):
    """The gradient of ``out = vector_norm(x, p, dims, keepdim)`` for ``grad`` (None for
    p = 0)."""
    shape = x._data.shape
    if p == 0:  # PyTorch 2.13: an undefined gradient (the input's .grad stays None)
        return None
    g = expand_back(grad, shape, dims, keepdim)
    n = expand_back(out, shape, dims, keepdim)
    sign = x.sgn() if x._data.dtype.kind == "c" else x.sign()  # d|x|/dx, conjugated
    if p == 1:
        return g * sign
    if p in (float("inf"), float("-inf")):
        hit = (x.abs() == n).to(g.dtype)
        count = hit.sum(dims, keepdim=True) if shape else hit
        return g * sign * hit / count
    # PyTorch's values, and its subgradient 0 where the norm (or, p < 1, an entry) is 0;
    # the divisions see 1 there so that no step divides by zero
    norm_zero = n == 0
    if p < 1:
        x_zero = x == 0
        scaled = sign * x.abs().masked_fill(x_zero, 1.0) ** (p - 1)
        return scaled.masked_fill(x_zero, 0.0) * g * n ** (1 - p)
    if p == 2:
        return x * (g / n.masked_fill(norm_zero, 1.0)).masked_fill(norm_zero, 0.0)
    scaled = sign * x.abs() ** (p - 1) if p < 2 else x * x.abs() ** (p - 2)
    scale = (g / n.masked_fill(norm_zero, 1.0) ** (p - 1)).masked_fill(norm_zero, 0.0)
    return scaled * scale


class Dist(Primitive):
    """``vector_norm(a - b, p)`` over all dims, a and b broadcast (and of one dtype)."""
    _backward_name = "DistBackward0"
    saves_output = True
    complex_grad = True  # real result; norm_grad uses sgn for complex tensors (as Norm)

    @staticmethod
    def forward(ctx, a, b, p):
        ctx.save_for_backward(a, b)
        ctx.p = p
        diff = a._data - b._data
        return _vector_norm(get_array_module(diff), diff, p, None, False)

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        diff = a - b
        g = norm_grad(diff, out, grad, ctx.p, reduce_dims(None, diff.ndim), False)
        if g is None:
            return None, None, None
        ga = unbroadcast(g, a._data.shape) if ctx.needs_input_grad[0] else None
        gb = -unbroadcast(g, b._data.shape) if ctx.needs_input_grad[1] else None
        return ga, gb, None


class AllAny(Primitive):
    differentiable = False

    @staticmethod
    def forward(ctx, x, dim, keepdim, is_all):
        d = x._data
        xp = get_array_module(d)
        fn = xp.all if is_all else xp.any
        if dim is None:
            return xp.asarray(fn(d))
        dims = reduce_dims(dim, d.ndim)
        return fn(d, axis=_np_axis(dims, d.ndim), keepdims=keepdim)


class Cumsum(Primitive):
    _backward_name = "CumsumBackward0"
    complex_grad = True  # backward right for complex tensors (complex_ops.py)

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        d = x._data
        if dtype is None and d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "cumsum_out_cpu")
        ctx.dim = dim = _wrap_dim(dim, d.ndim)
        xp = get_array_module(d)
        if dtype is not None:
            d = d.astype(dtype.np)
        elif d.dtype.kind in "iub":
            d = d.astype(xp.int64)
        acc = accumulator(d)
        return _rounded(xp, xp.cumsum(d, axis=dim, dtype=acc), d, acc) if d.ndim else d.copy()

    @staticmethod
    def backward(ctx, grad):
        if grad.dim() == 0:
            return grad, None, None
        return grad.flip(ctx.dim).cumsum(ctx.dim).flip(ctx.dim), None, None


class Cumprod(Primitive):
    _backward_name = "CumprodBackward0"
    complex_grad = True  # backward right for complex tensors (complex_ops.py)
    saves_output = True

    @staticmethod
    def forward(ctx, x, dim, dtype=None):
        d = x._data
        if dtype is None and d.itemsize == 1:  # float8: PyTorch has no kernel
            dtypes.refuse_float8(d.dtype, "cumprod_out_cpu")
        ctx.save_for_backward(x)
        ctx.dim = dim = _wrap_dim(dim, d.ndim)
        xp = get_array_module(d)
        if dtype is not None:
            d = d.astype(dtype.np)
        elif d.dtype.kind in "iub":
            d = d.astype(xp.int64)
        acc = accumulator(d)
        return _rounded(xp, xp.cumprod(d, axis=dim, dtype=acc), d, acc) if d.ndim else d.copy()

    @staticmethod
    def backward(ctx, grad):
        x, out = ctx.saved_tensors
        if x.dim() == 0:
            return grad, None, None
        dim = ctx.dim
        if not (x == 0).any():
            return (grad * cj(out)).flip(dim).cumsum(dim).flip(dim) / cj(x), None, None
        # d out_j / d x_i = prod_{k<=j, k!=i} x_k: build it per i (only when zeros occur)
        n = x.shape[dim]
        shape = [1] * x.dim()
        shape[dim] = n
        cols = []
        xp = get_array_module(x._data)
        for i in range(n):
            keep = xp.ones(shape, x._data.dtype)
            keep.reshape(-1)[i] = 0
            keep = Tensor._make(keep)
            with_one = x * keep + (1 - keep)  # x with element i replaced by 1
            partial = with_one.cumprod(dim).narrow(dim, i, n - i)
            cols.append((grad.narrow(dim, i, n - i) * cj(partial)).sum(dim, keepdim=True))
        return cat(cols, dim), None, None


def max_min(x, dim=None, keepdim=False, *, largest, other=None):
    """``ember.max``/``ember.min`` in all their call forms."""
    if isinstance(dim, Tensor):
        other = dim
    if other is not None:
        dtypes.refuse_limited_unsigned(dtypes.result_type(x, other).np,
                                       "maximum_cpu" if largest else "minimum_cpu")
        return (Maximum if largest else Minimum).apply(x, other)
    kind = ("max" if largest else "min") + ("_all" if dim is None else "_cpu")
    dtypes.refuse_limited_unsigned(x._data.dtype, kind)
    if dim is None:
        return ExtremeAll.apply(x, largest)
    values, indices = ExtremeDim.apply(x, dim, keepdim, largest)
    cls = return_types.max if largest else return_types.min
    return cls(values, indices)
