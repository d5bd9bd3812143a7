"""Meta arrays: a shape and a dtype, no data (what ``device='meta'`` tensors hold).

A ``MetaArray`` is a NumPy array whose strides are all zero over a one-element buffer,
so it costs no memory whatever its shape, and code that reads it anyway (a view, a
NumPy method written in C) reads that one element and never past it. It is registered
as an array module of its own (``meta_module``): ops reach it through
``get_array_module`` like any other module, and their arrays made from nothing
(``xp.zeros``, ``xp.empty``) are meta too.

Nothing is computed on meta arrays where it would cost memory or time in the size of
the data: ufuncs (elementwise math, comparisons, ``matmul``, reductions) and the NumPy
functions ops use for products, joins and selections get their result's shape and dtype
by rule (``__array_ufunc__``, ``__array_function__``): the dtype from the same call on
one-element stand-ins, the shape from the inputs' shapes. Any other NumPy function runs
on zero-strided stand-ins and its result is replaced by a meta array of the same shape
and dtype (correct, but it allocates that result for a moment).

Anything that needs values (``bool(a)``, ``a.item()``, a boolean mask) raises, as
PyTorch does for meta tensors; mixing a meta array with a plain array of one element or
more raises PyTorch's device error. Writes into a meta array are dropped.

>>> from ember.backend.meta import meta_empty
>>> import numpy
>>> a = meta_empty((10000, 10000), numpy.float32)
>>> (a @ a).shape, a.sum(axis=0).dtype
((10000, 10000), dtype('float32'))
"""
import types

import numpy
from numpy.lib import stride_tricks as _stride_tricks

_ndarray = numpy.ndarray
_ONE = {}  # dtype -> its one-element buffer, which every meta array of the dtype shares

NO_DATA = "Cannot copy out of meta tensor; no data!"
NO_ITEM = "Tensor.item() cannot be called on meta tensors"
NO_NUMPY = ("can't convert meta device type tensor to numpy. Use Tensor.cpu() to copy the "
            "tensor to host memory first.")
DATA_DEPENDENT = ("{}: the result's shape depends on the values, which a meta tensor does "
                  "not have")


def device_mismatch(found, expected):
    """PyTorch's error for an op given tensors on two devices."""
    return RuntimeError(f"Tensor on device {found} is not on the expected device {expected}!")


class MetaArray(_ndarray):
    """A zero-strided array standing for data of its shape and dtype (see the module)."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        _check_devices(inputs)
        out = kwargs.pop("out", None)
        kwargs.pop("where", None)
        if method == "__call__":
            results = _call_rule(ufunc, inputs, kwargs)
        elif method == "reduce":
            results = (_reduce_rule(ufunc, inputs[0], kwargs),)
        elif method == "accumulate":
            a = inputs[0]
            tiny = numpy.ones((1,) * max(a.ndim, 1), a.dtype)
            dt = _dtype_probe(ufunc.accumulate, tiny, **kwargs).dtype
            results = (meta_empty(a.shape, dt),)
        elif method == "at":
            return None  # an in-place write: dropped
        else:  # outer, reduceat: rare in ops; computed on stand-ins
            results = _as_meta(getattr(ufunc, method)(*_stand_ins(inputs), **kwargs))
            results = results if isinstance(results, tuple) else (results,)
        if out is not None:
            for o in out:
                if o is not None and not isinstance(o, MetaArray):
                    raise NotImplementedError(NO_DATA)
            results = tuple(o if o is not None else r for o, r in zip(out, results))
        return results[0] if len(results) == 1 else results

    def __array_function__(self, func, types, args, kwargs):
        _check_devices(args)
        rule = _FUNCTION_RULES.get(func)
        if rule is not None:
            return rule(*args, **kwargs)
        return _as_meta(func(*_stand_ins(args), **_stand_ins(kwargs)))

    # ---- NumPy methods that would copy or compute (they do not dispatch) ---------------
    def copy(self, order="C"):
        return meta_empty(self.shape, self.dtype)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        return meta_empty(self.shape, numpy.dtype(dtype))

    def reshape(self, *shape, order="C"):
        # a zero-strided array reshapes as a view (NumPy copies nothing); kept meta
        return _ndarray.reshape(self, *shape, order=order)

    def ravel(self, order="C"):
        return _ndarray.reshape(self, -1)

    def flatten(self, order="C"):
        return meta_empty((self.size,), self.dtype)

    def fill(self, value):
        pass  # no data to fill

    def sort(self, axis=-1, kind=None, order=None):
        pass  # in place: no data to sort

    def argsort(self, axis=-1, kind=None, order=None, **kwargs):
        return meta_empty(self.shape if axis is not None else (self.size,), numpy.intp)

    def argmax(self, axis=None, out=None, *, keepdims=False):
        return _arg_reduce(self, axis, keepdims)

    def argmin(self, axis=None, out=None, *, keepdims=False):
        return _arg_reduce(self, axis, keepdims)

    def nonzero(self):
        raise NotImplementedError(DATA_DEPENDENT.format("nonzero"))

    def __getitem__(self, index):
        if _is_basic(index):
            return _ndarray.__getitem__(self, index)  # a view: nothing to read
        if _has_mask(index):
            raise NotImplementedError(DATA_DEPENDENT.format("boolean mask indexing"))
        return meta_empty(_shape_of(self, lambda s: s[_stand_ins(index)]), self.dtype)

    def __setitem__(self, index, value):
        pass  # a write into no data

    def tolist(self):
        raise NotImplementedError(NO_DATA)

    def item(self, *args):
        raise RuntimeError(NO_ITEM)

    def __bool__(self):
        raise RuntimeError(NO_ITEM)

    def __float__(self):
        raise RuntimeError(NO_ITEM)

    def __int__(self):
        raise RuntimeError(NO_ITEM)

    def __index__(self):
        raise RuntimeError(NO_ITEM)

    def __repr__(self):
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    __str__ = __repr__

    def __reduce__(self):
        return meta_empty, (self.shape, self.dtype)


def meta_empty(shape, dtype=numpy.float64):
    """A meta array of ``shape`` and ``dtype`` (no memory of that size)."""
    dtype = numpy.dtype(dtype)
    one = _ONE.get(dtype)
    if one is None:
        one = _ONE.setdefault(dtype, numpy.zeros(1, dtype))
    shape = (shape,) if isinstance(shape, (int, numpy.integer)) else tuple(shape)
    return _ndarray.__new__(MetaArray, shape, dtype, buffer=one, strides=(0,) * len(shape))


def is_meta(array):
    """Whether ``array`` is a meta array."""
    return isinstance(array, MetaArray)


# ---- helpers ---------------------------------------------------------------------------------
def _check_devices(operands):
    """PyTorch's error when meta arrays meet plain ones of one element or more (0-d plain
    arrays are allowed, as PyTorch allows CPU scalars beside any device's tensors)."""
    expected = None
    for a in _flat_arrays(operands):
        if isinstance(a, MetaArray):
            kind = "meta"
        elif a.ndim == 0:
            continue
        else:
            kind = "cpu"
        if expected is None:
            expected = kind
        elif kind != expected:
            raise device_mismatch(kind, expected)


def _flat_arrays(obj):
    if isinstance(obj, _ndarray):
        yield obj
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            yield from _flat_arrays(o)


def _stand_ins(obj):
    """``obj`` with each meta array replaced by a plain zero-strided view of it (what NumPy
    may read without touching memory beyond one element)."""
    if isinstance(obj, MetaArray):
        return obj.view(_ndarray)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_stand_ins(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _stand_ins(v) for k, v in obj.items()}
    return obj


def _as_meta(result):
    """A stand-in computation's result as meta arrays of its shapes and dtypes."""
    if isinstance(result, (_ndarray, numpy.generic)):
        return meta_empty(numpy.shape(result), result.dtype)
    if isinstance(result, tuple):
        return type(result)(*(_as_meta(r) for r in result)) if hasattr(result, "_fields") \
            else tuple(_as_meta(r) for r in result)
    if isinstance(result, list):
        return [_as_meta(r) for r in result]
    return result


def _tiny(a):
    """A one-element array (or scalar) of ``a``'s dtype, for working out a result dtype."""
    if isinstance(a, _ndarray):
        return numpy.ones((), a.dtype)
    return a


def _dtype_probe(fn, *args, **kwargs):
    with numpy.errstate(all="ignore"):
        return fn(*args, **kwargs)


def _shape_of(a, fn):
    """The shape ``fn`` gives on a stand-in of ``a`` with a zero-byte dtype: NumPy works
    out shapes (and raises its errors) without allocating any data."""
    empty = _ndarray.__new__(_ndarray, a.shape, numpy.dtype([]), buffer=b"",
                             strides=(0,) * a.ndim)
    return fn(empty).shape


def _is_basic(index):
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, numpy.integer, slice))
               and not isinstance(i, (bool, numpy.bool_)) for i in items)


def _has_mask(index):
    items = index if isinstance(index, tuple) else (index,)
    for i in items:
        if isinstance(i, (bool, numpy.bool_)) and isinstance(i, MetaArray):
            return True
        if isinstance(i, _ndarray) and i.dtype == bool and isinstance(i, MetaArray):
            return True
    return False


def _normalize_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for ax in axes:
        ax = int(ax)
        if not -max(ndim, 1) <= ax < max(ndim, 1):
            raise numpy.exceptions.AxisError(ax, ndim)
        out.append(ax % max(ndim, 1))
    return tuple(out)


def _reduced_shape(shape, axes, keepdims):
    return tuple(1 if i in axes else s for i, s in enumerate(shape)) if keepdims else \
        tuple(s for i, s in enumerate(shape) if i not in axes)


def _arg_reduce(a, axis, keepdims):
    if a.size == 0:
        raise ValueError("attempt to get argmax of an empty sequence")
    axes = _normalize_axes(axis, a.ndim)
    if axis is None and not keepdims:
        return meta_empty((), numpy.intp)
    return meta_empty(_reduced_shape(a.shape, axes, keepdims), numpy.intp)


# ---- ufunc rules -------------------------------------------------------------------------
def _call_rule(ufunc, inputs, kwargs):
    if ufunc is numpy.matmul:
        return (_matmul_rule(*inputs, **kwargs),)
    if ufunc.signature is not None:  # other generalized ufuncs: computed on stand-ins
        r = _as_meta(ufunc(*_stand_ins(inputs), **kwargs))
        return r if isinstance(r, tuple) else (r,)
    shape = numpy.broadcast_shapes(*(numpy.shape(a) for a in inputs
                                     if isinstance(a, _ndarray)))
    probe = _dtype_probe(ufunc, *(_tiny(a) for a in inputs), **kwargs)
    probe = probe if isinstance(probe, tuple) else (probe,)
    return tuple(meta_empty(shape, p.dtype) for p in probe)


def _matmul_rule(a, b, **kwargs):
    a_shape, b_shape = numpy.shape(a), numpy.shape(b)
    if not a_shape or not b_shape:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a_shape if len(a_shape) == 1 else a_shape
    b2 = b_shape + (1,) if len(b_shape) == 1 else b_shape
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, "
                         f"with gufunc signature (n?,k),(k,m?)->(n?,m?) (size {b2[-2]} is "
                         f"different from {a2[-1]})")
    batch = numpy.broadcast_shapes(a2[:-2], b2[:-2])
    shape = batch + (a2[-2],) * (len(a_shape) > 1) + (b2[-1],) * (len(b_shape) > 1)
    probe = _dtype_probe(numpy.matmul, numpy.ones((1, 1), numpy.result_type(a)),
                         numpy.ones((1, 1), numpy.result_type(b)), **kwargs)
    return meta_empty(shape, probe.dtype)


def _reduce_rule(ufunc, a, kwargs):
    axis = kwargs.pop("axis", 0)
    keepdims = kwargs.get("keepdims", False)
    axes = _normalize_axes(axis, a.ndim)
    # the same reduction over a stand-in with every size cut to at most one: NumPy's dtype,
    # and its error for an empty reduction without an identity
    tiny = numpy.ones(tuple(min(s, 1) for s in a.shape), a.dtype)
    probe = _dtype_probe(ufunc.reduce, tiny, axis=axis, **kwargs)
    return meta_empty(_reduced_shape(a.shape, axes, keepdims), probe.dtype)


# ---- function rules ----------------------------------------------------------------------
def _result_dtype(*arrays):
    return numpy.result_type(*(a.dtype if isinstance(a, _ndarray) else a for a in arrays))


def _dot(a, b, out=None):
    a_shape, b_shape = numpy.shape(a), numpy.shape(b)
    if not a_shape or not b_shape:
        return numpy.multiply(a, b, out=out)
    if a_shape[-1] != b_shape[-2 if len(b_shape) > 1 else 0]:
        raise ValueError(f"shapes {a_shape} and {b_shape} not aligned")
    shape = a_shape[:-1] + b_shape[:-2] + b_shape[-1:] if len(b_shape) > 1 else a_shape[:-1]
    r = meta_empty(shape, _result_dtype(a, b))
    return r if out is None else out


def _tensordot(a, b, axes=2):
    if isinstance(axes, (int, numpy.integer)):
        a_axes = tuple(range(a.ndim - axes, a.ndim))
        b_axes = tuple(range(axes))
    else:
        a_axes, b_axes = (tuple(x) if isinstance(x, (list, tuple)) else (x,) for x in axes)
    a_axes = tuple(x % a.ndim for x in a_axes)
    b_axes = tuple(x % b.ndim for x in b_axes)
    if [a.shape[i] for i in a_axes] != [b.shape[i] for i in b_axes]:
        raise ValueError("shape-mismatch for sum")
    shape = tuple(s for i, s in enumerate(a.shape) if i not in a_axes) + \
        tuple(s for i, s in enumerate(b.shape) if i not in b_axes)
    return meta_empty(shape, _result_dtype(a, b))


def _einsum(subscripts, *operands, out=None, dtype=None, **kwargs):
    if not isinstance(subscripts, str):
        raise NotImplementedError("einsum on meta arrays takes a subscripts string")
    spec = subscripts.replace(" ", "")
    inputs, _, output = spec.partition("->")
    terms = inputs.split(",")
    sizes, batch = {}, ()
    for term, op in zip(terms, operands):
        shape = numpy.shape(op)
        if "..." in term:
            head, tail = term.split("...")
            n_ell = len(shape) - len(head) - len(tail)
            batch = numpy.broadcast_shapes(batch, shape[len(head):len(head) + n_ell])
            letters = head + tail
            dims = shape[:len(head)] + shape[len(head) + n_ell:]
        else:
            letters, dims = term, shape
        for c, s in zip(letters, dims):
            if sizes.get(c, s) != s and 1 not in (s, sizes[c]):
                raise ValueError(f"operands could not be broadcast together for subscript {c}")
            sizes[c] = max(sizes.get(c, s), s)
    if not _:  # implicit output: the letters seen once, in order, after the batch dims
        letters = "".join(c for c in inputs.replace("...", "").replace(",", "")
                          if inputs.count(c) == 1)
        output = ("..." if "..." in inputs else "") + "".join(sorted(letters))
    head, ell, tail = output.partition("...")
    shape = tuple(sizes[c] for c in head) + (batch if ell else ()) + \
        tuple(sizes[c] for c in tail)
    dt = numpy.dtype(dtype) if dtype is not None else _result_dtype(*operands)
    return meta_empty(shape, dt) if out is None else out


def _concatenate(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    dt = numpy.dtype(dtype) if dtype is not None else _result_dtype(*arrays)
    if axis is None:
        return meta_empty((sum(a.size for a in arrays),), dt)
    first = numpy.shape(arrays[0])
    ax = _normalize_axes(axis, len(first))[0]
    for a in arrays[1:]:
        s = numpy.shape(a)
        if len(s) != len(first) or s[:ax] + s[ax + 1:] != first[:ax] + first[ax + 1:]:
            raise ValueError("all the input array dimensions except for the concatenation "
                             "axis must match exactly")
    shape = first[:ax] + (sum(numpy.shape(a)[ax] for a in arrays),) + first[ax + 1:]
    return meta_empty(shape, dt) if out is None else out


def _stack(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
    arrays = list(arrays)
    first = numpy.shape(arrays[0])
    if any(numpy.shape(a) != first for a in arrays):
        raise ValueError("all input arrays must have the same shape")
    ax = _normalize_axes(axis, len(first) + 1)[0]
    dt = numpy.dtype(dtype) if dtype is not None else _result_dtype(*arrays)
    return meta_empty(first[:ax] + (len(arrays),) + first[ax:], dt) if out is None else out


def _where(condition, *values):
    if not values:
        raise NotImplementedError(DATA_DEPENDENT.format("nonzero"))
    x, y = values
    shape = numpy.broadcast_shapes(*(numpy.shape(v) for v in (condition, x, y)))
    probe = numpy.where(True, _tiny(x), _tiny(y))
    return meta_empty(shape, probe.dtype)


def _like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return meta_empty(numpy.shape(a) if shape is None else shape,
                      numpy.result_type(a) if dtype is None else dtype)


def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like(a, dtype, shape=shape)


def _copyto(dst, src, casting="same_kind", where=True):
    if not isinstance(dst, MetaArray):
        raise NotImplementedError(NO_DATA)


def _view_of(func):
    """A NumPy function that returns a view: run on the stand-in (a zero-strided view
    reads nothing), the result kept meta."""
    def rule(*args, **kwargs):
        r = func(*_stand_ins(args), **_stand_ins(kwargs))
        if isinstance(r, (tuple, list)):
            return type(r)(x.view(MetaArray) for x in r)
        return r.view(MetaArray)
    return rule


def _data_dependent(name):
    def rule(*args, **kwargs):
        raise NotImplementedError(DATA_DEPENDENT.format(name))
    return rule


def _no_data(*args, **kwargs):
    raise RuntimeError(NO_ITEM)


def _cumulative(func):
    def rule(a, axis=None, dtype=None, out=None):
        tiny = numpy.ones((1,), a.dtype)
        dt = func(tiny, dtype=dtype).dtype
        return meta_empty(a.shape if axis is not None else (a.size,), dt)
    return rule


def _arg_rule(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(a, axis, keepdims)


def _sort_rule(a, axis=-1, kind=None, order=None, **kwargs):
    return meta_empty(a.shape if axis is not None else (a.size,), a.dtype)


def _argsort_rule(a, axis=-1, kind=None, order=None, **kwargs):
    return meta_empty(a.shape if axis is not None else (a.size,), numpy.intp)


def _take_along_axis(arr, indices, axis, **kwargs):
    if axis is None:
        return meta_empty(numpy.shape(indices), arr.dtype)
    ax = _normalize_axes(axis, arr.ndim)[0]
    a_shape = arr.shape[:ax] + (1,) + arr.shape[ax + 1:]
    i_shape = numpy.shape(indices)
    shape = numpy.broadcast_shapes(a_shape, i_shape[:ax] + (1,) + i_shape[ax + 1:])
    return meta_empty(shape[:ax] + (i_shape[ax],) + shape[ax + 1:], arr.dtype)


def _take(a, indices, axis=None, out=None, mode="raise"):
    i_shape = numpy.shape(indices)
    if axis is None:
        return meta_empty(i_shape, a.dtype)
    ax = _normalize_axes(axis, a.ndim)[0]
    return meta_empty(a.shape[:ax] + i_shape + a.shape[ax + 1:], a.dtype)


def _pad(array, pad_width, mode="constant", **kwargs):
    widths = numpy.broadcast_to(numpy.asarray(pad_width, dtype=numpy.intp), (array.ndim, 2))
    return meta_empty(tuple(s + int(lo) + int(hi) for s, (lo, hi) in zip(array.shape, widths)),
                      array.dtype)


def _repeat(a, repeats, axis=None):
    if isinstance(repeats, MetaArray):
        raise NotImplementedError(DATA_DEPENDENT.format("repeat_interleave"))
    return meta_empty(_shape_of(a, lambda s: numpy.repeat(s, repeats, axis)), a.dtype)


def _tile(a, reps):
    return meta_empty(_shape_of(a, lambda s: numpy.tile(s, reps)), a.dtype)


_FUNCTION_RULES = {
    numpy.dot: _dot,
    numpy.tensordot: _tensordot,
    numpy.einsum: _einsum,
    numpy.concatenate: _concatenate,
    numpy.stack: _stack,
    numpy.where: _where,
    numpy.zeros_like: _like,
    numpy.ones_like: _like,
    numpy.empty_like: _like,
    numpy.full_like: _full_like,
    numpy.copyto: _copyto,
    numpy.cumsum: _cumulative(numpy.cumsum),
    numpy.cumprod: _cumulative(numpy.cumprod),
    numpy.argmax: _arg_rule,
    numpy.argmin: _arg_rule,
    numpy.sort: _sort_rule,
    numpy.argsort: _argsort_rule,
    numpy.take_along_axis: _take_along_axis,
    numpy.take: _take,
    numpy.pad: _pad,
    numpy.repeat: _repeat,
    numpy.tile: _tile,
    numpy.nonzero: _data_dependent("nonzero"),
    numpy.argwhere: _data_dependent("nonzero"),
    numpy.flatnonzero: _data_dependent("nonzero"),
    numpy.unique: _data_dependent("unique"),
    numpy.count_nonzero: _data_dependent("count_nonzero"),
    numpy.array_equal: _no_data,
    numpy.allclose: _no_data,
}
for _f in (numpy.broadcast_to, numpy.broadcast_arrays, numpy.transpose, numpy.moveaxis,
           numpy.swapaxes, numpy.expand_dims, numpy.squeeze, numpy.diagonal, numpy.flip,
           numpy.reshape, numpy.ravel, numpy.atleast_1d, numpy.atleast_2d, numpy.real,
           numpy.imag, _stride_tricks.sliding_window_view):
    _FUNCTION_RULES[_f] = _view_of(_f)
del _f


# ---- the array module ------------------------------------------------------------------------
def _shape_arg(shape):
    return (int(shape),) if isinstance(shape, (int, numpy.integer)) else tuple(shape)


def _empty(shape, dtype=float, order="C", **kwargs):
    return meta_empty(_shape_arg(shape), dtype)


def _full(shape, fill_value, dtype=None, order="C", **kwargs):
    dt = numpy.dtype(dtype) if dtype is not None else numpy.asarray(fill_value).dtype
    return meta_empty(_shape_arg(shape), dt)


def _eye(N, M=None, k=0, dtype=float, **kwargs):
    return meta_empty((N, N if M is None else M), dtype)


def _asarray(a, dtype=None, order=None, copy=None, **kwargs):
    if isinstance(a, MetaArray):
        return a if dtype is None or numpy.dtype(dtype) == a.dtype else a.astype(dtype)
    if isinstance(a, _ndarray) and a.ndim:
        # host data handed to the meta module (index lists, tables beside meta data)
        return meta_empty(a.shape, a.dtype if dtype is None else dtype)
    host = numpy.asarray(a, dtype=dtype)
    return meta_empty(host.shape, host.dtype)


def _ascontiguousarray(a, dtype=None, **kwargs):
    return _asarray(a, dtype)


def _from_host(func):
    """A creation function whose result is small (index grids): made on the host, kept
    as its shape and dtype."""
    def make(*args, **kwargs):
        return _as_meta(func(*args, **kwargs))
    return make


def _as_strided(x, shape=None, strides=None, subok=False, writeable=True):
    # strides computed from a meta array's strides are zero: the view reads nothing
    return _stride_tricks.as_strided(x, shape, strides, subok=True, writeable=writeable)


def _no_host_copy(array):
    raise NotImplementedError(NO_DATA)


class _MetaModule(types.ModuleType):
    """The array module of meta arrays: NumPy's functions (which dispatch to the rules
    above when given meta arrays), with arrays made from nothing made meta."""

    def __getattr__(self, name):
        return getattr(numpy, name)


meta_module = _MetaModule("ember.backend.meta_module")
for _name, _fn in {
        "empty": _empty, "zeros": _empty, "ones": _empty, "full": _full, "eye": _eye,
        "identity": lambda n, dtype=float, **kw: meta_empty((n, n), dtype),
        "asarray": _asarray, "array": _asarray, "asanyarray": _asarray,
        "ascontiguousarray": _ascontiguousarray, "asfortranarray": _ascontiguousarray,
        "arange": _from_host(numpy.arange), "linspace": _from_host(numpy.linspace),
        "tri": _from_host(numpy.tri), "indices": _from_host(numpy.indices),
        "asnumpy": _no_host_copy}.items():
    setattr(meta_module, _name, _fn)
meta_module.lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(
    as_strided=_as_strided, sliding_window_view=_FUNCTION_RULES[
        _stride_tricks.sliding_window_view]))
del _name, _fn

__all__ = ["MetaArray", "meta_empty", "meta_module", "is_meta", "device_mismatch", "NO_DATA",
           "NO_ITEM", "NO_NUMPY"]
