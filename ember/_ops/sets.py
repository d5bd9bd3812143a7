"""unique, unique_consecutive, multinomial, bernoulli, bucketize/searchsorted: ops with no
gradient, on arrays. Random draws come from ember's Generator (host NumPy numbers), so they
follow PyTorch's distributions, not its exact numbers.
"""
from __future__ import annotations

import math

import numpy as np  # host-side index arithmetic and random draws (see random.py)

from .._tensor import Tensor, _wrap_dim
from ..backend import dtypes, get_array_module, to_host
from ..random import rng
from ..autograd.batching import per_sample_under_vmap
from .._typing import Any


def _int64(xp, a):
    return xp.asarray(a).astype(np.int64)


@per_sample_under_vmap
def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None
           ) -> Tensor | tuple[Tensor, ...]:
    """The distinct values (sorted), with the inverse indices and counts if asked;
    ``dim``: the distinct slices along ``dim``.

    >>> import ember
    >>> ember.unique(ember.tensor([3, 1, 3]), return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
    """
    dtypes.refuse_float8(input._data.dtype, "unique")
    d = input._data
    xp = get_array_module(d)
    if dim is None:
        values, inverse, counts = xp.unique(d.reshape(-1), return_inverse=True,
                                            return_counts=True)
        inverse = inverse.reshape(d.shape)
    else:
        dim, moved, rows = _slices_along(xp, d, dim)
        _, first, inverse, counts = xp.unique(rows, axis=0, return_index=True,
                                              return_inverse=True, return_counts=True)
        values = xp.moveaxis(moved[first], 0, dim)
        inverse = inverse.reshape(-1)
    return _results(values, inverse, counts, return_inverse, return_counts)


def _slices_along(xp, d, dim):
    """``dim`` wrapped, ``d`` with it moved first, and that as rows (one slice a row),
    after PyTorch's checks of a 0-d input and of empty dims."""
    if d.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    dim = _wrap_dim(dim, d.ndim)
    empty_dims = [i for i, n in enumerate(d.shape) if n == 0]
    if len(empty_dims) > 1:
        raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot "
                           "be applied ")
    if empty_dims and empty_dims[0] != dim:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique "
                           "cannot be applied")
    moved = xp.moveaxis(d, dim, 0)
    return dim, moved, moved.reshape(moved.shape[0], math.prod(moved.shape[1:]))


def _results(values, inverse, counts, return_inverse, return_counts):
    xp = get_array_module(values)
    out = [Tensor._make(xp.ascontiguousarray(values))]
    if return_inverse:
        out.append(Tensor._make(_int64(xp, inverse)))
    if return_counts:
        out.append(Tensor._make(_int64(xp, counts)))
    return out[0] if len(out) == 1 else tuple(out)


@per_sample_under_vmap
def unique_consecutive(input: Tensor, return_inverse: bool = False,
                       return_counts: bool = False, dim: int | None = None
                       ) -> Tensor | tuple[Tensor, ...]:
    """Each run of equal consecutive values (slices along ``dim``) collapsed to one.

    >>> import ember
    >>> ember.unique_consecutive(ember.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    dtypes.refuse_float8(input._data.dtype, "unique")
    d = input._data
    xp = get_array_module(d)
    if dim is None:
        moved, shape = d.reshape(-1), d.shape
        rows = moved.reshape(-1, 1)
    else:
        dim, moved, rows = _slices_along(xp, d, dim)
        shape = None
    n = moved.shape[0]
    starts = xp.ones(n, dtype=bool)
    if n > 1:
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    first = xp.nonzero(starts)[0]
    counts = xp.diff(xp.concatenate([first, xp.asarray([n])]))
    inverse = xp.cumsum(starts) - 1
    values = moved[first]
    if dim is not None:
        values = xp.moveaxis(values, 0, dim)
    elif shape is not None:
        inverse = inverse.reshape(shape)
    return _results(values, inverse, counts, return_inverse, return_counts)


# ---- sampling -----------------------------------------------------------------------------
@per_sample_under_vmap
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Any = None) -> Tensor:
    """Indices drawn from each row's (unnormalized) probabilities.

    >>> import ember
    >>> ember.multinomial(ember.tensor([0.0, 1.0, 0.0]), 2, replacement=True)
    tensor([1, 1])
    """
    d = input._data
    dtypes.refuse_float8(d.dtype, "aminmax_cpu")  # PyTorch first checks the range
    if not input.is_floating_point():
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.scalar_name}")
    if d.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = d.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    probs = to_host(d).reshape(-1, n).astype(np.float64)
    if not np.all(np.isfinite(probs)) or np.any(probs < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = probs.sum(axis=1)
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    gen = rng(generator)
    rows = [_draw_row(gen, p / t, num_samples, replacement) for p, t in zip(probs, totals)]
    out = np.stack(rows) if rows else np.empty((0, num_samples), np.int64)
    out = out.reshape(d.shape[:-1] + (num_samples,))
    return Tensor._make(get_array_module(d).asarray(out.astype(np.int64)))


def _draw_row(gen, p, num_samples, replacement):
    if replacement:  # inverse CDF; scaled by the total so rounding never picks a p=0 tail
        cdf = np.cumsum(p)
        return np.searchsorted(cdf, gen.random(num_samples) * cdf[-1], side="right") \
            .clip(max=len(p) - 1)
    # without replacement: the num_samples largest of u^(1/p) (exponential-race sampling);
    # zero-probability categories come last, as they cannot be drawn before the others
    keys = np.where(p > 0, np.log(gen.random(len(p))) / np.where(p > 0, p, 1), -np.inf)
    order = np.argsort(-keys, kind="stable")
    return order[:num_samples]


@per_sample_under_vmap
def bernoulli(input: Tensor, p: float | None = None, *, generator: Any = None) -> Tensor:
    """1 with probability ``input`` (or ``p``, in input's shape), else 0; input's dtype.

    >>> import ember
    >>> ember.bernoulli(ember.tensor([0.0, 1.0]))
    tensor([0., 1.])
    """
    d = input._data
    if input.is_complex():  # PyTorch's kernels (one for p the input, one for a number p)
        kernel = "bernoulli_tensor_cpu_self_" if p is None else "bernoulli_scalar_cpu_"
        if p is not None:
            check_probability(p)
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{input.dtype.scalar_name}'")
    if p is None:
        if not input.is_floating_point():
            raise NotImplementedError(f"\"bernoulli_tensor_cpu_p_\" not implemented for "
                                      f"'{input.dtype.scalar_name}'")
        prob = to_host(d).astype(np.float64)
        if np.any((prob < 0) | (prob > 1)) or np.any(np.isnan(prob)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                               "(Could this error message be improved?  If so, please report "
                               "an enhancement request to PyTorch.)")
    else:
        prob = check_probability(p)
    draws = rng(generator).random(d.shape) < prob  # drawn on the host, then moved to input's module
    return Tensor._make(get_array_module(d).asarray(draws.astype(d.dtype)))


def check_probability(p):
    """A scalar ``p`` of bernoulli/bernoulli_, checked as PyTorch does."""
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return p


# ---- sorted search ------------------------------------------------------------------------
@per_sample_under_vmap
def searchsorted(sorted_sequence: Tensor, input: Tensor | float, *, out_int32: bool = False,
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None
                 ) -> Tensor:
    """Where each value would go in the sorted innermost dimension of ``sorted_sequence``.

    >>> import ember
    >>> ember.searchsorted(ember.tensor([1, 3, 5]), ember.tensor([3, 6]))
    tensor([1, 3])
    """
    dtypes.refuse_float8(sorted_sequence._data.dtype, "searchsorted_out_cpu")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    seq = sorted_sequence._data
    xp = get_array_module(seq)
    values = input._data if isinstance(input, Tensor) else xp.asarray(input)
    if seq.dtype.kind == "u" or values.dtype.kind == "u":  # PyTorch's promotion, kernel
        common = dtypes.result_type(sorted_sequence, input).np
        if values.size:
            dtypes.refuse_limited_unsigned(common, "searchsorted_out_cpu")
    if sorter is not None:
        seq = xp.take_along_axis(seq, sorter._data, axis=-1)
    how = "right" if right else "left"
    if seq.ndim == 1:
        found = xp.searchsorted(seq, values, side=how)
    else:
        if seq.shape[:-1] != values.shape[:-1]:
            raise RuntimeError(
                f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
                f"dimensions of boundaries tensor and input value tensor must match, but we got "
                f"boundaries tensor {list(seq.shape)} and input value tensor "
                f"{list(values.shape)}")
        flat_seq = seq.reshape(-1, seq.shape[-1])
        flat_val = values.reshape(-1, values.shape[-1])
        found = xp.stack([xp.searchsorted(s, v, side=how) for s, v in zip(flat_seq, flat_val)])
        found = found.reshape(values.shape)
    return Tensor._make(xp.asarray(found).astype(np.int32 if out_int32 else np.int64))


@per_sample_under_vmap
def bucketize(input: Tensor | float, boundaries: Tensor, *, out_int32: bool = False,
              right: bool = False) -> Tensor:
    """The bucket of each value among 1-D ``boundaries`` (``right``: boundaries[i-1] <= x <
    boundaries[i] instead of boundaries[i-1] < x <= boundaries[i]).

    >>> import ember
    >>> ember.bucketize(ember.tensor([1, 4, 9]), ember.tensor([2, 4, 8]))
    tensor([0, 1, 3])
    """
    if boundaries._data.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._data.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


__all__ = ["unique", "unique_consecutive", "multinomial", "bernoulli", "check_probability",
           "searchsorted", "bucketize"]
