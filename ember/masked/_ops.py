"""The masked reductions and normalizations of ``ember.masked`` (PyTorch's ``torch.masked``).

Each function takes a dense ``input`` and a boolean ``mask`` broadcastable to it (None: every
element is in). Masked-out elements are replaced by the operation's identity (0 for sums, 1
for products, -inf for maxima and softmax, +inf for minima, nan for medians) with ``where``,
then the ordinary ember op runs, so gradients are the ops' own and masked-out elements get
none. A slice with nothing in gives what the identity gives there: ``amax`` -inf, ``sum`` 0,
``mean``/``var``/``median``/``softmax`` nan. A ``MaskedTensor`` input brings its own mask.

>>> import ember
>>> x = ember.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
>>> m = ember.tensor([[True, False, True], [False, False, False]])
>>> ember.masked.sum(x, 1, mask=m)
tensor([4., 0.])
>>> ember.masked.amax(x, 1, mask=m)
tensor([3., -inf])
"""
from __future__ import annotations

import math

from .. import _functions as F
from .._creation import ones
from .._tensor import Tensor, _wrap_dim
from ..backend import dtypes
from ..linalg import vector_norm
from ..nn import functional as NF

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]

_SMALL_INTEGERS = (dtypes.uint8, dtypes.bool_, dtypes.int8, dtypes.int16, dtypes.int32)


# ---- helpers -------------------------------------------------------------------------------
def _is_masked(t) -> bool:
    return getattr(type(t), "_is_masked_tensor", False)


def _identity(op: str, input: Tensor, ord=None):
    """The value masked-out elements take for ``op`` (a Python number), or None."""
    dtype = input.dtype
    if op in ("sum", "cumsum"):
        return 0
    if op in ("prod", "cumprod"):
        return 1
    if op == "norm":
        return math.inf if ord == -math.inf else 0
    if op == "median":
        return math.nan
    if op in ("amax", "argmax", "logaddexp", "logsumexp", "amin", "argmin"):
        largest = op in ("amin", "argmin")
        if dtype.is_floating_point:
            return math.inf if largest else -math.inf
        if dtype.is_signed or dtype == dtypes.uint8:
            info = dtypes.iinfo(dtype)
            return info.max if largest else info.min
        return None
    raise NotImplementedError(f"identity of {op} on {dtype} input")


def _canonical_dim(dim, ndim: int) -> tuple:
    """``dim`` as a sorted tuple of non-negative dims (None or (): all of them)."""
    if dim == () or dim is None:
        return tuple(range(ndim))
    ndim = max(ndim, 1)
    seen = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in seen:
            raise RuntimeError(f"dim={d} appears multiple times in the list of dims")
        seen.append(_wrap_dim(d, ndim))
    return tuple(sorted(seen))


def _data_of(input):
    return input._masked_data if _is_masked(input) else input


def _input_mask(input, mask) -> Tensor:
    """``mask`` broadcast to ``input``'s shape, as bool."""
    data = _data_of(input)
    if mask.shape != data.shape:
        if mask.ndim > data.ndim:
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality "
                             "higher than of the input)")
        mask = F.broadcast_to(mask.clone(), data.shape)
    return mask.to(dtype=dtypes.bool_)


def _combine(op: str, input, mask, ord=None) -> Tensor:
    """``input`` with its masked-out elements replaced by ``op``'s identity (a MaskedTensor
    input uses its own mask)."""
    if _is_masked(input):
        data, mask = input._masked_data, input._masked_mask
    else:
        data = input
        if data.layout != "strided" or (mask is not None and mask.layout != "strided"):
            raise NotImplementedError("ember.masked: sparse inputs and masks")
        if mask is None:
            return data
    # masked_fill, not where: its gradient is exactly 0 where masked out, even where the
    # incoming gradient is inf or nan (fully masked-out slices of mean, var, softmax)
    return data.masked_fill(~_input_mask(data, mask), _identity(op, data, ord))


def _wide_dtype(input, dtype):
    """sum's and prod's default result dtype: small integers and bool widen to int64."""
    if dtype is not None:
        return dtype
    return dtypes.int64 if input.dtype in _SMALL_INTEGERS else input.dtype


# ---- reductions ----------------------------------------------------------------------------
def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Sum of the masked-in elements over ``dim`` (identity 0).

    >>> import ember
    >>> ember.masked.sum(ember.tensor([1.0, 2.0, 3.0]), mask=ember.tensor([True, False, True]))
    tensor(4.)
    """
    dtype = _wide_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    return F.sum(_combine("sum", input, mask), dims, bool(keepdim), dtype=dtype)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Product of the masked-in elements over ``dim`` (identity 1).

    >>> import ember
    >>> ember.masked.prod(ember.tensor([2.0, 5.0, 3.0]), mask=ember.tensor([True, False, True]))
    tensor(6.)
    """
    dtype = _wide_dtype(input, dtype)
    dims = _canonical_dim(dim, input.ndim)
    result = _combine("prod", input, mask).to(dtype=dtype)
    for d in reversed(dims):  # one dim at a time: prod takes a single dim
        result = result.prod(dim=d, keepdim=bool(keepdim))
    return result


def cumsum(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Cumulative sum along ``dim``, masked-out elements counting as 0.

    >>> import ember
    >>> ember.masked.cumsum(ember.tensor([1.0, 2.0, 3.0]), 0,
    ...                     mask=ember.tensor([True, False, True]))
    tensor([1., 1., 4.])
    """
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return F.cumsum(_combine("sum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Cumulative product along ``dim``, masked-out elements counting as 1.

    >>> import ember
    >>> ember.masked.cumprod(ember.tensor([2.0, 5.0, 3.0]), 0,
    ...                      mask=ember.tensor([True, False, True]))
    tensor([2., 2., 6.])
    """
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return F.cumprod(_combine("prod", input, mask), d, dtype=dtype).to(dtype=dtype)


def _extreme(op, reduce):
    def function(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
        dtype = input.dtype if dtype is None else dtype
        masked_input = _combine(op, input, mask)
        dims = _canonical_dim(dim, masked_input.ndim)
        return reduce(masked_input, dims, bool(keepdim)).to(dtype=dtype)
    function.__name__ = function.__qualname__ = op
    return function


amax = _extreme("amax", F.amax)
amax.__doc__ = """Maximum of the masked-in elements over ``dim`` (a fully masked slice: -inf,
or the dtype's minimum for integers).

>>> import ember
>>> ember.masked.amax(ember.tensor([1.0, 9.0, 3.0]), mask=ember.tensor([True, False, True]))
tensor(3.)
"""
amin = _extreme("amin", F.amin)
amin.__doc__ = """Minimum of the masked-in elements over ``dim`` (a fully masked slice: inf,
or the dtype's maximum for integers).

>>> import ember
>>> ember.masked.amin(ember.tensor([1.0, 0.0, 3.0]), mask=ember.tensor([True, False, True]))
tensor(1.)
"""


def _arg_extreme(op, reduce):
    def function(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
        # PyTorch casts the index to ``dtype``, which defaults to the input's dtype
        dtype = input.dtype if dtype is None else dtype
        return reduce(_combine(op, input, mask), dim, bool(keepdim)).to(dtype=dtype)
    function.__name__ = function.__qualname__ = op
    return function


argmax = _arg_extreme("argmax", F.argmax)
argmax.__doc__ = """Index of the largest masked-in element along ``dim`` (None: of the
flattened input), cast to ``dtype`` (default: the input's, as in PyTorch).

>>> import ember
>>> ember.masked.argmax(ember.tensor([1.0, 9.0, 3.0]), mask=ember.tensor([True, False, True]))
tensor(2.)
"""
argmin = _arg_extreme("argmin", F.argmin)
argmin.__doc__ = """Index of the smallest masked-in element along ``dim`` (None: of the
flattened input), cast to ``dtype`` (default: the input's, as in PyTorch).

>>> import ember
>>> ember.masked.argmin(ember.tensor([1.0, 0.0, 3.0]), mask=ember.tensor([True, False, True]))
tensor(0.)
"""


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Mean of the masked-in elements over ``dim`` (nothing in: nan).

    >>> import ember
    >>> ember.masked.mean(ember.tensor([1.0, 9.0, 3.0]), mask=ember.tensor([True, False, True]))
    tensor(2.)
    """
    source = "Optional"
    if dtype is None:
        dtype, source = input.dtype, "Input"
    if not (dtype.is_floating_point or dtype.is_complex):
        raise ValueError(f"mean(): Could not infer output dtype. {source} dtype must be either "
                         f"a floating point or complex dtype. Got: {dtype}")
    if mask is None:
        count = sum(ones(input.shape, dtype=dtypes.int64, device=input.device), dim,
                    keepdim=keepdim)
        total = sum(input, dim, keepdim=keepdim, dtype=dtype)
    else:
        inmask = _input_mask(input, mask)
        count = inmask.sum(dim=dim, keepdim=bool(keepdim))
        total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=inmask)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Median of the masked-in elements along one ``dim`` (nothing in: nan; the lower of the
    two middle values for an even count, as ``nanmedian``).

    >>> import ember
    >>> ember.masked.median(ember.tensor([1.0, 9.0, 3.0, 4.0]),
    ...                     mask=ember.tensor([True, False, True, True]))
    tensor(3.)
    """
    if _is_masked(input):
        input, mask = input._masked_data, input._masked_mask
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    is_float = input.dtype.is_floating_point
    if not is_float:
        input = input.to(dtype=dtypes.float32)
    output = F.nanmedian(_combine("median", input, mask), d, keepdim).values
    if is_float:
        return output
    if not bool(F.isnan(output).any()):
        return output.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating "
                     "point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """``log(sum(exp))`` of the masked-in elements over ``dim`` (nothing in: -inf).

    >>> import ember
    >>> ember.masked.logsumexp(ember.tensor([0.0, 9.0, 0.0]),
    ...                        mask=ember.tensor([True, False, True]))
    tensor(0.6931)
    """
    dtype = input.dtype if dtype is None else dtype
    dims = _canonical_dim(dim, input.ndim)
    return F.logsumexp(_combine("logsumexp", input, mask), dims,
                       keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None) -> Tensor:
    """``logaddexp`` of two tensors, each one's masked-out elements taken as -inf.

    >>> import ember
    >>> m = ember.tensor([True, False])
    >>> ember.masked.logaddexp(ember.tensor([-100.0, -200.0]), ember.tensor([-1.0, -2.0]),
    ...                        input_mask=m, other_mask=m)
    tensor([-1., -inf])
    """
    dtype = input.dtype if dtype is None else dtype
    return F.logaddexp(_combine("logaddexp", input, input_mask),
                       _combine("logaddexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None) -> Tensor:
    """Vector ``ord``-norm of the masked-in elements over ``dim`` (identity 0; inf for
    ``ord=-inf``).

    >>> import ember
    >>> ember.masked.norm(ember.tensor([3.0, 9.0, 4.0]), 2.0,
    ...                   mask=ember.tensor([True, False, True]))
    tensor(5.)
    """
    dtype = input.dtype if dtype is None else dtype
    masked_input = _combine("norm", input, mask, ord)
    dims = _canonical_dim(dim, input.ndim)
    return vector_norm(masked_input, ord, dims, bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, correction_opt, keepdim, dtype, mask, take_sqrt):
    if unbiased is not None and correction_opt is not None:
        raise AssertionError("Only one of unbiased and correction may be given")
    correction = 1.0
    if unbiased is not None:
        correction = 1.0 if unbiased else 0.0
    if correction_opt is not None:
        correction = float(correction_opt)
    if dtype is None:
        dtype = input.dtype
        if not (dtype.is_floating_point or dtype.is_complex):
            dtype = dtypes.float32
    compute_dtype = dtype
    if not (compute_dtype.is_floating_point or compute_dtype.is_complex):
        compute_dtype = dtypes.float32
    if mask is None and not _is_masked(input):
        inmask = None
        count = sum(ones(input.shape, dtype=dtypes.int64, device=input.device), dim,
                    keepdim=True)
    else:
        inmask = _input_mask(input, input._masked_mask if _is_masked(input) else mask)
        input = _data_of(input)
        count = inmask.sum(dim=dim, keepdim=True)
    sample_mean = F.divide(sum(input, dim, keepdim=True, dtype=dtype, mask=inmask), count)
    x = F.subtract(input, sample_mean)
    total = sum(x * x.conj(), dim, keepdim=keepdim, dtype=compute_dtype, mask=inmask)
    if not keepdim:
        count = count.reshape(total.shape)
    if correction != 0:
        real_dtype = compute_dtype.to_real() if compute_dtype.is_complex \
            else compute_dtype
        count = F.subtract(count.to(real_dtype), correction)
        count = F.maximum(count, count.new_zeros([]))
    output = F.divide(total, count).to(dtype=dtype)
    return F.sqrt(output) if take_sqrt else output


def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """Variance of the masked-in elements over ``dim`` (``correction`` default 1; too few
    elements in: nan).

    >>> import ember
    >>> ember.masked.var(ember.tensor([1.0, 9.0, 3.0]), mask=ember.tensor([True, False, True]))
    tensor(2.)
    """
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=False)


def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None) -> Tensor:
    """Standard deviation of the masked-in elements over ``dim`` (see ``var``).

    >>> import ember
    >>> ember.masked.std(ember.tensor([1.0, 9.0, 3.0]), correction=0,
    ...                  mask=ember.tensor([True, False, True]))
    tensor(1.)
    """
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt=True)


# ---- normalizations ------------------------------------------------------------------------
def softmax(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Softmax along ``dim`` over the masked-in elements (masked-out ones get 0; a slice with
    nothing in: nan).

    >>> import ember
    >>> ember.masked.softmax(ember.tensor([1.0, 9.0, 1.0]), 0,
    ...                      mask=ember.tensor([True, False, True]))
    tensor([0.5000, 0.0000, 0.5000])
    """
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return NF.softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Log-softmax along ``dim`` over the masked-in elements (masked-out ones get -inf).

    >>> import ember
    >>> ember.masked.log_softmax(ember.tensor([1.0, 9.0, 1.0]), 0,
    ...                          mask=ember.tensor([True, False, True]))
    tensor([-0.6931,    -inf, -0.6931])
    """
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return NF.log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None) -> Tensor:
    """Softmin along ``dim`` over the masked-in elements (masked-out ones get 0).

    >>> import ember
    >>> ember.masked.softmin(ember.tensor([1.0, -9.0, 1.0]), 0,
    ...                      mask=ember.tensor([True, False, True]))
    tensor([0.5000, 0.0000, 0.5000])
    """
    dtype = input.dtype if dtype is None else dtype
    d = _canonical_dim(dim, input.ndim)[0]
    return NF.softmin(_combine("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None) -> Tensor:
    """``input`` divided by its masked ``ord``-norm along ``dim`` (at least ``eps``);
    masked-out elements become 0.

    >>> import ember
    >>> ember.masked.normalize(ember.tensor([3.0, 9.0, 4.0]), 2.0, 0,
    ...                        mask=ember.tensor([True, False, True]))
    tensor([0.6000, 0.0000, 0.8000])
    """
    dtype = input.dtype if dtype is None else dtype
    masked_input = _combine("sum", input, mask)
    nrm = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return F.divide(masked_input, F.maximum(nrm, nrm.new_full([], eps)))
