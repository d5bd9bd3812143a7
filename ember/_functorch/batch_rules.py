"""Batching rules: how a built-in op runs once on a whole batch.

``dispatch(cls, args)`` is called by every ``Primitive.apply`` while a vmap runs. It finds
the highest vmap level among the arguments, unwraps the BatchedTensors of that level to
their physical tensors (batch dim 0), and runs the op's rule, which calls the op again on
the physical tensors with its arguments adjusted (dims shifted by one, shapes prefixed by
the batch size, the batch folded into an existing batch dim). Autograd records the
physical ops, so gradients need no rules of their own. An op without a rule runs once
per sample (``_fallback``) and warns once, naming the op.

A plain tensor that requires grad and meets a batched one is first expanded to the batch
(one ``expand`` per tensor and level, cached): its gradient then arrives per sample, which
is what ``autograd.grad`` inside vmap returns (see ``vmap._batched_grad``).
"""
from ..autograd import forward_ad
from ..autograd.grad_mode import _state as _grad_state
from .._ops import (activation_ops as A, conv as C, decompositions as D, elementwise as E,
                    embedding_ops as EM, indexing as I, linalg as L, loss_nodes as LN,
                    matrix_exp as ME,
                    loss_ops as LO, nn_ops as NN, pooling as P, reduction as R, shape as S,
                    special as SP, trig as TR, vision_ops as V)
from .._ops import elementwise_extra as EX, special_functions as SPF, diagonals as DG
from .._ops import basics as BA
from .._ops.grad_link import LINKS as _ZERO_GRAD_LINKS
from .._ops.primitive import Primitive
from .._tensor import Tensor as _Tensor
from .._creation import arange as _arange
from .._tensor_methods import ToDtype, Overwrite
from ..backend import get_array_module
from .batched import BatchedTensor, wrap, level_of, warn_once, _DATA_DEPENDENT

_RULES = {}
_fw_active = forward_ad.active  # non-empty while a forward AD level computes tangents
_warned = set()


def rule(*classes):
    def register(fn):
        for cls in classes:
            _RULES[cls] = fn
        return fn
    return register


# ---- dispatch ------------------------------------------------------------------------
def _top_level(args):
    top = 0
    for a in args:
        if type(a) is BatchedTensor:
            if a._level > top:
                top = a._level
        elif type(a) in (tuple, list):
            for b in a:
                if type(b) is BatchedTensor and b._level > top:
                    top = b._level
    return top


def _level_info(number):
    return level_of(number)


def expanded(t, lv):
    """``t`` (plain, requires grad) as a batched tensor of level ``lv``: one expand per
    tensor and level, so every use shares the node its per-sample gradient arrives at."""
    key = id(t)
    hit = lv.expanded.get(key)
    if hit is None or hit[0] is not t:
        hit = (t, wrap(t.expand((lv.size,) + tuple(t.shape)), lv.number))
        lv.expanded[key] = hit
    return hit[1]


def _lift_grad_inputs(args, lv):
    """Tensors not batched at level ``lv`` that require grad (plain ones, or batched at an
    outer level), replaced by their expansion at ``lv``; also inside list arguments."""
    def wants(a):
        return isinstance(a, _Tensor) and a._requires_grad and not _batched(a, lv.number)
    out = None
    for k, a in enumerate(args):
        if wants(a):
            out = list(args) if out is None else out
            out[k] = expanded(a, lv)
        elif type(a) in (tuple, list) and any(wants(b) for b in a):
            out = list(args) if out is None else out
            out[k] = type(a)(expanded(b, lv) if wants(b) else b for b in a)
    return args if out is None else tuple(out)


def _lifted(args, top):
    """``args`` with plain tensors requiring grad expanded, where a graph is recorded."""
    lv = _level_info(top)
    if _grad_state.enabled and lv.lifting:
        return _lift_grad_inputs(tuple(args), lv)
    return tuple(args)


def dispatch(cls, args):
    top = _top_level(args)
    if not top:
        return NotImplemented
    lv = _level_info(top)
    if _grad_state.enabled and cls.differentiable and lv.lifting:
        args = _lift_grad_inputs(args, lv)
    if _fw_active and cls.differentiable:
        args = _lift_batched_tangents(args, lv)
    fn = _RULES.get(cls)
    if fn is not None:
        out = fn(cls, args, top, lv.size)
        if out is not NotImplemented:
            return out
    return _fallback(cls, args, top, lv.size)


# ---- forward AD: tangents batched at this level on tensors that are not ------------------
def _lift_batched_tangents(args, lv):
    """Tensors not batched at level ``lv`` whose tangent is (a jvp's primal inside vmap,
    its tangent batched): expanded to the batch, the tangent moved onto the physical
    tensor, so that the op's physical run pairs each sample with its own tangent."""
    out = None
    for k, a in enumerate(args):
        if isinstance(a, _Tensor) and not _batched(a, lv.number):
            tangent = forward_ad.tangent_of(a)
            if tangent is not None and _has_level(tangent, lv.number):
                out = list(args) if out is None else out
                with forward_ad.suspended():
                    lifted = wrap(a.expand((lv.size,) + tuple(a.shape)), lv.number)
                lifted._set_tangent(tangent)
                out[k] = lifted
    return args if out is None else tuple(out)


def _has_level(t, number):
    """Whether ``t`` is batched at vmap level ``number`` (wrappers nest outermost-last)."""
    while type(t) is BatchedTensor and t._level >= number:
        if t._level == number:
            return True
        t = t._value
    return False


def _rewrap(out, level):
    if type(out) is tuple:
        return tuple(wrap(o, level) for o in out)
    return wrap(out, level)


def _batched(a, level):
    return type(a) is BatchedTensor and a._level == level


def _phys(a, level):
    """The physical tensor of ``a`` at ``level``, or ``a`` itself when not batched there."""
    return a._value if type(a) is BatchedTensor and a._level == level else a


def _to_batch(a, level, size):
    """``a`` as a physical tensor of ``level`` (an unbatched one is expanded)."""
    if _batched(a, level):
        return a._value
    return a.expand((size,) + tuple(a.shape))


# ---- the loop fallback -----------------------------------------------------------------
def _sample(a, level, b):
    """Sample ``b`` of ``a`` at ``level``; ``b = None`` (an empty batch): a stand-in sample
    of zeros, run only to learn the shapes of the results."""
    if _batched(a, level):
        return a._value[b] if b is not None else a._value.new_zeros(tuple(a.shape))
    if type(a) in (tuple, list):
        return type(a)(_sample(x, level, b) for x in a)
    return a


def _samples(size):
    """The sample indices a loop runs: an empty batch runs the stand-in sample once."""
    return range(size) if size else (None,)


def _runner(cls):
    """How to run op ``cls`` in full: ``jvp_rerun`` where the op's callers do more than
    ``apply`` (the linalg ops that keep their outputs, and shapes, for backward)."""
    return getattr(cls, "jvp_rerun", None) or cls.apply


def _fallback(cls, args, level, size):
    warn_once(_warned, cls.__name__)
    run = _runner(cls)
    outs = [run(*[_sample(a, level, b) for a in args]) for b in _samples(size)]
    if type(outs[0]) is tuple:
        return tuple(wrap(_stacked([o[k] for o in outs], size), level)
                     for k in range(len(outs[0])))
    return wrap(_stacked(outs, size), level)


def _stacked(rows, size):
    """The rows stacked on a new dim 0; none of them for an empty batch (its stand-in
    row gives the shape)."""
    out = S.stack(rows)
    return out if size else out.narrow(0, 0, 0)


def _stack_rows(rows, level, size):
    first = rows[0]
    if isinstance(first, _Tensor):
        return wrap(_stacked(rows, size), level)
    if isinstance(first, tuple):
        parts = [_stack_rows([r[k] for r in rows], level, size) for k in range(len(first))]
        return type(first)(*parts) if type(first) is not tuple else tuple(parts)
    raise RuntimeError(_DATA_DEPENDENT)


def per_sample(fn, args, kwargs):
    """Run ``fn`` (a function that reads its inputs' arrays) once per sample."""
    top = _top_level(tuple(args) + tuple(kwargs.values()))
    if not top:
        return NotImplemented
    out = _along_dim(fn, args, kwargs, top)
    if out is not NotImplemented:
        return out
    warn_once(_warned, fn.__name__)
    args = _lifted(args, top)
    size = _level_info(top).size
    rows = [fn(*[_sample(a, top, b) for a in args],
               **{k: _sample(v, top, b) for k, v in kwargs.items()})
            for b in _samples(size)]
    return _stack_rows(rows, top, size)


def _along_dim(fn, args, kwargs, top):
    """sort, argsort, topk of a batched tensor along a dim: one call on the physical
    tensor, the dim shifted past the batch dim."""
    pos = _ALONG_DIM.get(fn)
    if pos is None or not args or not _batched(args[0], top):
        return NotImplemented
    x, args, kwargs = args[0], list(args[1:]), dict(kwargs)
    n = x.dim()
    if n == 0 or any(isinstance(a, _Tensor) for a in args + list(kwargs.values())):
        return NotImplemented
    given = args[pos - 1] if len(args) >= pos else kwargs.get("dim", -1)
    if not isinstance(given, int) or not -n <= given < n:
        return NotImplemented  # the per-sample call raises the error
    if len(args) >= pos:
        args[pos - 1] = given % n + 1
    else:
        kwargs["dim"] = given % n + 1
    out = fn(_lifted((x,), top)[0]._value, *args, **kwargs)
    if isinstance(out, tuple):
        return type(out)(*[wrap(o, top) for o in out])
    return wrap(out, top)


_ALONG_DIM = {I.sort: 1, I.argsort: 1, I.topk: 2}  # the position of their dim argument


def fold(fn, x, args, kwargs):
    """Run ``fn`` of a batch ``x`` (N, ...) once, the vmapped dim folded into N."""
    top = _top_level((x,) + tuple(args) + tuple(kwargs.values()))
    if not top:
        return NotImplemented
    if not _batched(x, top) or _top_level(tuple(args) + tuple(kwargs.values())) == top:
        return per_sample(fn, (x,) + tuple(args), kwargs)
    size, n = _level_info(top).size, x.shape[0]
    args = _lifted(args, top)
    out = fn(x._value.reshape((size * n,) + tuple(x.shape[1:])), *args, **kwargs)

    def unfold(o):
        if isinstance(o, _Tensor):
            return wrap(o.reshape((size, n) + tuple(o.shape[1:])), top)
        if isinstance(o, tuple):
            return type(o)(unfold(p) for p in o)
        return o
    return unfold(out)


def index(fn, x, index, value):
    """``x[index]`` (or ``x[index] = value``) with batched index tensors: per sample."""
    items = index if type(index) is tuple else (index,)
    top = _top_level(items)
    if not top or top < _top_level((x,) + tuple(value)):
        return NotImplemented
    size = _level_info(top).size
    if value:  # setitem: each sample's slice of x is written in place
        if not _batched(x, top):
            raise RuntimeError(_INPLACE_UNBATCHED)
        warn_once(_warned, "index_put_")
        for b in range(size):
            fn(x._value[b], _sample(index, top, b), _sample(value[0], top, b))
        return None
    warn_once(_warned, "index")
    x = _lifted((x,), top)[0]
    return _stack_rows([fn(_sample(x, top, b), _sample(index, top, b))
                        for b in _samples(size)], top, size)


_INPLACE_UNBATCHED = (
    "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to use "
    "out-of-place operators instead of inplace arithmetic. If said operator is being called "
    "inside the PyTorch framework, please file a bug report instead.")


def check_inplace(target, result):
    """An in-place op on a tensor that is not batched cannot take a batched result."""
    level = getattr(result, "_vmap_level", None)
    if level is not None and level > (getattr(target, "_vmap_level", None) or 0):
        raise RuntimeError(_INPLACE_UNBATCHED)


# ---- elementwise and broadcasting ops --------------------------------------------------
def _elementwise(cls, args, level, size):
    n = max(a.dim() for a in args if isinstance(a, _Tensor))
    new = []
    for a in args:
        if _batched(a, level):
            v = a._value
            pad = n - a.dim()
            if pad:
                v = v.reshape((size,) + (1,) * pad + tuple(a.shape))
            new.append(v)
        else:
            new.append(a)
    return _rewrap(cls.apply(*new), level)


def _primitives_of(*modules):
    return [c for m in modules for c in vars(m).values()
            if isinstance(c, type) and issubclass(c, Primitive) and c.__module__ == m.__name__]


# Every op of these modules maps elements (broadcasting its tensor arguments).
rule(*_primitives_of(E, A, TR, SP, LO, EX, SPF), ToDtype, S.Clone, BA.Log10)(_elementwise)


def _padded(value, level, size, rank):
    """A batched ``value``'s physical tensor with 1s inserted up to ``rank`` logical dims;
    anything else as it is (it broadcasts from the right)."""
    if not _batched(value, level):
        return value
    pad = rank - value.dim()
    v = value._value
    return v.reshape((size,) + (1,) * pad + tuple(value.shape)) if pad > 0 else v


@rule(Overwrite)
def _overwrite(cls, args, level, size):
    x, value = args
    return wrap(Overwrite.apply(_to_batch(x, level, size), _padded(value, level, size, x.dim())),
                level)


@rule(I.IndexPut)
def _index_put(cls, args, level, size):
    x, value, index = args
    if not _prefixable(index) or (isinstance(value, _Tensor) and not _batched(value, level)
                                  and value._requires_grad):
        return NotImplemented
    target = x._data[index].ndim  # the indexed region's rank, per sample
    index = index if type(index) is tuple else (index,)
    return wrap(I.IndexPut.apply(_to_batch(x, level, size), _padded(value, level, size, target),
                                 (slice(None),) + index), level)


# ---- dims: reductions, softmax, scans ----------------------------------------------------
def _shift(dim, n):
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):  # () too: all dims
        return tuple(range(1, n + 1))
    if isinstance(dim, (tuple, list)):
        return tuple(d % n + 1 for d in dim)
    return dim % n + 1


def _dim_rule(pos):
    def dims(cls, args, level, size):
        x = args[0]
        n = x.dim()
        if not _batched(x, level) or any(_batched(a, level) for a in args[1:]):
            return NotImplemented
        if n == 0:
            return _of_scalar_samples(cls, args, level, size, pos)
        new = list(args)
        new[0] = x._value
        dim = args[pos] if len(args) > pos else None
        if dim is None and cls in _FLATTENED:  # over all elements: over each flat sample
            keepdim = len(args) > 2 and args[2]
            out = cls.apply(x._value.reshape(size, -1), 1, False, *args[3:])
            return wrap(out.reshape((size,) + (1,) * n) if keepdim else out, level)
        if dim is None and cls in _INT_DIM_ONLY:
            return NotImplemented
        if len(new) <= pos:
            new.extend([None] * (pos + 1 - len(new)))
        new[pos] = _shift(dim, n)
        return _rewrap(cls.apply(*new), level)
    return dims


def _of_scalar_samples(cls, args, level, size, pos):
    """A reduction or scan of 0-dim samples: each sample's element on a dim of its own
    (physical ``(B, 1)``), reduced or scanned there, and that dim dropped again."""
    if cls not in _SCALAR_SAMPLES:
        return NotImplemented
    new = list(args) + [None] * (pos + 1 - len(args))
    new[0] = args[0]._value.unsqueeze(1)
    new[pos] = 1 if new[pos] is None and cls in _INT_DIM_ONLY else _shift(new[pos], 1)
    out = cls.apply(*new)
    if type(out) is tuple:
        return tuple(wrap(o.reshape(size), level) for o in out)
    return wrap(out.reshape(size), level)


_SCALAR_SAMPLES = {R.Sum, R.SumAll, R.Mean, R.MeanAll, R.Prod, R.Amax, R.ExtremeDim,
                   R.ArgExtreme, R.LogSumExp, R.AllAny, R.Cumsum, R.Cumprod, NN.Softmax,
                   NN.LogSoftmax, R.Norm}
_FLATTENED = {R.Prod, R.ArgExtreme}
_INT_DIM_ONLY = {R.Prod, R.ArgExtreme, R.ExtremeDim, R.Cumsum, R.Cumprod, NN.Softmax,
                 NN.LogSoftmax}
rule(R.Sum, R.SumAll, R.Mean, R.MeanAll, R.Prod, R.Amax, R.ExtremeDim, R.ArgExtreme, R.Var,
     R.LogSumExp, R.AllAny, R.Cumsum, R.Cumprod, NN.Softmax, NN.LogSoftmax, S.Flip,
     I.IndexSelect)(_dim_rule(1))
rule(R.Norm, S.Roll)(_dim_rule(2))


@rule(R.ExtremeAll)
def _extreme_all(cls, args, level, size):
    x, largest = args
    if x.dim() == 0:
        return NotImplemented
    return wrap(R.Amax.apply(x._value, _shift(None, x.dim()), False, largest), level)


@rule(S.Cat)
def _cat(cls, args, level, size):
    dim, tensors = args[0], args[1:]
    n = tensors[0].dim()
    return wrap(S.Cat.apply(dim % n + 1, *[_to_batch(t, level, size) for t in tensors]), level)


@rule(I.Gather)
def _gather(cls, args, level, size):
    x, dim, index = args
    n = max(x.dim(), 1)
    return wrap(I.Gather.apply(_to_batch(x, level, size), dim % n + 1,
                               _to_batch(index, level, size)), level)


@rule(I.Scatter, I.ScatterAdd)
def _scatter(cls, args, level, size):
    x, dim, index, src = args
    n = max(x.dim(), 1)
    src = _to_batch(src, level, size) if isinstance(src, _Tensor) else src
    return wrap(cls.apply(_to_batch(x, level, size), dim % n + 1,
                          _to_batch(index, level, size), src), level)


@rule(I.IndexAdd)
def _index_add(cls, args, level, size):
    x, dim, index, source = args[:4]
    if _batched(index, level) or x.dim() == 0:
        return NotImplemented
    return wrap(I.IndexAdd.apply(_to_batch(x, level, size), dim % x.dim() + 1, index,
                                 _to_batch(source, level, size), *args[4:]), level)


# ---- shapes and views --------------------------------------------------------------------
@rule(S.View, S.Unsqueeze, S.Squeeze, S.SqueezeDim, S.SqueezeDims, S.ReshapeCopy)
def _view(cls, args, level, size):
    x, shape = args
    return wrap(cls.apply(x._value, (size,) + tuple(shape)), level)


@rule(S.Permute, S.Transpose, S.T)
def _permute(cls, args, level, size):
    x, dims = args
    n = x.dim()
    return wrap(cls.apply(x._value, (0,) + tuple(d % n + 1 for d in dims)), level)


@rule(S.Expand)
def _expand(cls, args, level, size):
    x, target = args
    v, shape = x._value, tuple(x.shape)
    pad = len(target) - len(shape)
    if pad:
        v = v.reshape((size,) + (1,) * pad + shape)
    return wrap(S.Expand.apply(v, (size,) + tuple(target)), level)


@rule(S.SumToSize)
def _sum_to_size(cls, args, level, size):
    x, target = args
    target = tuple(target)
    pad = x.dim() - len(target)
    out = S.SumToSize.apply(x._value, (size,) + (1,) * pad + target)
    return wrap(out.reshape((size,) + target) if pad else out, level)


@rule(S.Repeat)
def _repeat(cls, args, level, size):
    x, reps = args
    v, shape = x._value, tuple(x.shape)
    pad = len(reps) - len(shape)
    if pad:
        v = v.reshape((size,) + (1,) * pad + shape)
    return wrap(S.Repeat.apply(v, (1,) + tuple(reps)), level)


@rule(S.Tri)
def _tri(cls, args, level, size):
    return wrap(S.Tri.apply(args[0]._value, *args[1:]), level)


@rule(R.ExpandBack)
def _expand_back(cls, args, level, size):
    grad, in_shape, dims, keepdim = args
    if not _batched(grad, level):
        return NotImplemented
    return wrap(R.ExpandBack.apply(grad._value, (size,) + tuple(in_shape),
                                   tuple(d + 1 for d in dims), keepdim), level)


# ---- indexing ------------------------------------------------------------------------------
@rule(I.BasicIndex, I.SelectIndex, I.UnsqueezeIndex, I.AliasIndex)
def _basic_index(cls, args, level, size):
    x, index = args
    return wrap(cls.apply(x._value, (slice(None),) + tuple(index)), level)


@rule(I.AdvancedIndex)
def _advanced_index(cls, args, level, size):
    x, index = args
    if not _prefixable(index):
        return NotImplemented  # separated index arrays move to the front: loop instead
    index = index if type(index) is tuple else (index,)
    return wrap(I.AdvancedIndex.apply(x._value, (slice(None),) + index), level)


@rule(I.IndexGrad)
def _index_grad(cls, args, level, size):
    grad, shape, index, accumulate = args
    if not _batched(grad, level) or not _prefixable(index):
        return NotImplemented
    index = index if type(index) is tuple else (index,)
    return wrap(I.IndexGrad.apply(grad._value, (size,) + tuple(shape), (slice(None),) + index,
                                  accumulate), level)


def _prefixable(index):
    """Whether ``(slice(None),) + index`` indexes each sample as ``index`` does: index
    arrays kept together (separated ones would move to the front)."""
    index = index if type(index) is tuple else (index,)
    if any(isinstance(k, _Tensor) for k in index):
        return False
    if all(item is None or item is Ellipsis or isinstance(item, (slice, int))
           for item in index):
        return True  # basic indexing
    arrays = [k for k, item in enumerate(index)  # with arrays, ints index as arrays too
              if not (item is None or item is Ellipsis or isinstance(item, slice))]
    return arrays[-1] - arrays[0] + 1 == len(arrays)


# ---- products ------------------------------------------------------------------------------
@rule(L.Matmul, L.Mm, L.Bmm)
def _matmul(cls, args, level, size):
    a, b = args
    na, nb = a.dim(), b.dim()
    if nb == 2 and not _batched(b, level):  # (..., k) @ (k, m): one product for all rows
        v = a._value
        out = L.Matmul.apply(v.reshape(-1, b.shape[0]), b)
        return wrap(out.reshape(tuple(v.shape[:-1]) + (b.shape[1],)), level)
    pa, pb = _phys(a, level), _phys(b, level)
    if na == 1:
        pa = pa.unsqueeze(-2)
    if nb == 1:
        pb = pb.unsqueeze(-1)
    la, lb = max(na, 2), max(nb, 2)
    rank = max(la, lb)
    if _batched(a, level) and la < rank:
        pa = pa.reshape((size,) + (1,) * (rank - la) + tuple(pa.shape[1:]))
    if _batched(b, level) and lb < rank:
        pb = pb.reshape((size,) + (1,) * (rank - lb) + tuple(pb.shape[1:]))
    out = L.Matmul.apply(pa, pb)
    if nb == 1:
        out = out.squeeze(-1)
    if na == 1:
        out = out.squeeze(-1 if nb == 1 else -2)
    return wrap(out, level)


@rule(L.Einsum)
def _einsum(cls, args, level, size):
    """The batch gets a subscript of its own, on the batched operands and the output."""
    spec, operands = args[0], args[1:]
    if "->" not in spec:
        return NotImplemented
    letter = next(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  if c not in spec)
    ins, out = spec.split("->")
    subs = [letter + sub.strip() if _batched(o, level) else sub.strip()
            for sub, o in zip(ins.split(","), operands)]
    new_spec = ",".join(subs) + "->" + letter + out.strip()
    return wrap(L.Einsum.apply(new_spec, *[_phys(o, level) for o in operands]), level)


@rule(L.Linear, L.LinearNoBias)
def _linear(cls, args, level, size):
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    if not _batched(w, level) and not _batched(bias, level):
        return wrap(cls.apply(x._value, *args[1:]), level)
    out = x.matmul(w.transpose(-1, -2))  # each runs its own rule
    return out if bias is None else out + bias


@rule(C.ConvForward)
def _conv(cls, args, level, size):
    x, w, geom = args[:3]
    bias = args[3] if len(args) > 3 else None
    rest = args[3:]
    if not _batched(w, level) and not _batched(bias, level):
        # The batch joins the samples of the convolution's own batch dim.
        n = x.shape[0]
        v = x._value.reshape((size * n,) + tuple(x.shape[1:]))
        out = C.ConvForward.apply(v, w, geom, *rest)
        return wrap(out.reshape((size, n) + tuple(out.shape[1:])), level)
    # Batched weights (a plain weight requiring grad is expanded, so that its gradient
    # arrives per sample): one convolution per sample, each with its own weight.
    extra = () if bias is None else (_to_batch(bias, level, size),)
    out = C.PerSampleConv.apply(_to_batch(x, level, size), _to_batch(w, level, size), geom,
                                *extra)
    return wrap(out, level)


@rule(C.PerSampleConv)
def _per_sample_conv(cls, args, level, size):
    """Nested vmap: the outer batch joins the per-sample dim B."""
    b = args[0].shape[0]
    joined = [_to_batch(a, level, size) if isinstance(a, _Tensor) else a for a in args]
    joined = [a.reshape((size * b,) + tuple(a.shape[2:])) if isinstance(a, _Tensor) else a
              for a in joined]
    out = C.PerSampleConv.apply(*joined)
    return wrap(out.reshape((size, b) + tuple(out.shape[1:])), level)


# average pooling (the 2-D classes and their 3-D subclasses, forward and adjoint) and fold:
# the geometry and the divisor do not depend on N (nor on a leading channel dim)
@rule(P.AvgPool, P.AvgPoolT, P._AVG[3], P._AVG[3]._adjoint, P.AdaptiveAvgPool,
      P.AdaptiveAvgPoolT, P._ADAPTIVE_AVG[3], P._ADAPTIVE_AVG[3]._adjoint, V.Im2Col, V.Col2Im)
def _fold_into_n(cls, args, level, size):
    """Ops of a batch (N, C, *S) whose geometry does not depend on N: one call."""
    x = args[0]
    if not _batched(x, level) or any(_batched(a, level) for a in args[1:]):
        return NotImplemented
    n = x.shape[0]
    out = cls.apply(x._value.reshape((size * n,) + tuple(x.shape[1:])), *args[1:])
    return wrap(out.reshape((size, n) + tuple(out.shape[1:])), level)


@rule(*_ZERO_GRAD_LINKS)  # (pooling.py has made the max pools' links on import)
def _zero_grad_link(cls, args, level, size):
    """A gradient formula tied to its op's input by a zero gradient (_ops/grad_link.py):
    recorded on the physical tensors; an unbatched formula needs no link of this level."""
    value, anchor = args
    if not _batched(value, level):
        return value
    return wrap(cls.apply(value._value, _to_batch(anchor, level, size)), level)


@rule(EM.Embedding)
def _embedding(cls, args, level, size):
    weight, indices, rest = args[0], args[1], args[2:]
    if not _batched(weight, level):
        return wrap(EM.Embedding.apply(weight, indices._value, *rest), level)
    if rest and rest[0] is not None and rest[0] >= 0:
        return NotImplemented  # padding_idx: one row per sample, not one of the joined table
    # Batched tables: joined into one, each sample's indices offset into its own rows.
    rows = weight.shape[0]
    table = weight._value.reshape((size * rows,) + tuple(weight.shape[1:]))
    idx = _to_batch(indices, level, size)
    offsets = _arange(size).to(idx.dtype).reshape((size,) + (1,) * (idx.dim() - 1)) * rows
    return wrap(EM.Embedding.apply(table, idx + offsets, *rest), level)


def _to_groups(t, level, size):
    """(N, C, *S) per sample -> (N, B*C, *S): the batch joins the channels."""
    p = _to_batch(t, level, size)
    p = p.permute((1, 0) + tuple(range(2, p.dim())))
    return p.reshape((t.shape[0], size * t.shape[1]) + tuple(t.shape[2:]))


def _from_groups(out, size):
    """(N, B*C, *S) -> physical (B, N, C, *S)."""
    out = out.reshape((out.shape[0], size, out.shape[1] // size) + tuple(out.shape[2:]))
    return out.permute((1, 0) + tuple(range(2, out.dim())))


def _grouped(geom, size):
    return C._Geom(geom.stride, geom.dilation, geom.pad, geom.in_size, geom.groups * size)


@rule(C.ConvInputGrad)
def _conv_input_grad(cls, args, level, size):
    g, w, geom = args
    if not _batched(w, level):  # the batch joins N
        n = g.shape[0]
        out = C.ConvInputGrad.apply(g._value.reshape((size * n,) + tuple(g.shape[1:])), w,
                                    geom)
        return wrap(out.reshape((size, n) + tuple(out.shape[1:])), level)
    pw = w._value.reshape((size * w.shape[0],) + tuple(w.shape[1:]))
    out = C.ConvInputGrad.apply(_to_groups(g, level, size), pw, _grouped(geom, size))
    return wrap(_from_groups(out, size), level)


@rule(C.ConvWeightGrad)
def _conv_weight_grad(cls, args, level, size):
    x, g, ksize, geom = args
    out = C.ConvWeightGrad.apply(_to_groups(x, level, size), _to_groups(g, level, size),
                                 ksize, _grouped(geom, size))
    return wrap(out.reshape((size, out.shape[0] // size) + tuple(out.shape[1:])), level)


@rule(D.Inv, D.Det, D.Slogdet, D.Cholesky, D.Qr, D.Svd, D.Eigh, D.Pinv, ME.MatrixExp, ME.Geqrf)
def _matrix_batch(cls, args, level, size):
    """Matrix functions already map over leading dims: the batch is one more."""
    if any(isinstance(a, _Tensor) for a in args[1:]):
        return NotImplemented
    return _rewrap(_runner(cls)(args[0]._value, *args[1:]), level)


@rule(D.Solve, D.CholeskySolve)
def _solve(cls, args, level, size):
    """Solves broadcast their batch dims: the batched operands get theirs padded to a
    common rank, the vmapped dim in front."""
    first, second = args[0], args[1]
    rank = max(first.dim(), second.dim())
    return wrap(_runner(cls)(_padded(first, level, size, rank),
                             _padded(second, level, size, rank), *args[2:]), level)


@rule(DG.Diagonal, DG.DiagEmbed)
def _diagonal(cls, args, level, size):
    x, offset, dim1, dim2 = args
    n = x.dim() + (1 if cls is DG.DiagEmbed else 0)
    return wrap(cls.apply(x._value, offset, dim1 % n + 1, dim2 % n + 1), level)


# ---- losses ----------------------------------------------------------------------------------
def _loss_rule(pos):
    """A loss reduced over all elements: per element on the batch, then reduced per sample."""
    def loss(cls, args, level, size):
        x = args[0]
        n = x.dim()
        new = [(_to_batch(a, level, size) if k < 2 else _padded(a, level, size, n))
               if isinstance(a, _Tensor) else a for k, a in enumerate(args)]
        reduction = args[pos]
        new[pos] = "none"
        out = cls.apply(*new)
        if reduction == "none" or n == 0:
            return wrap(out, level)
        dims = tuple(range(1, n + 1))
        return wrap(out.sum(dims) if reduction == "sum" else out.mean(dims), level)
    return loss


rule(LN.MseLoss, LN.SmoothL1Loss, LN.HuberLoss)(_loss_rule(2))
rule(LN.BinaryCrossEntropy)(_loss_rule(3))
rule(LN.BinaryCrossEntropyWithLogits)(_loss_rule(4))


@rule(LN.NllLoss)
def _nll_loss(cls, args, level, size):
    x, target, weight, ignore_index, reduction, cdim = args
    if not _batched(x, level):
        return NotImplemented
    xp = get_array_module(target)
    picked = LN.NllLoss.apply(x._value, xp.broadcast_to(target, (size,) + target.shape), weight,
                              ignore_index, "none", cdim + 1)
    if reduction == "none":
        return wrap(picked, level)
    dims = tuple(range(1, picked.dim()))
    total = picked.sum(dims) if dims else picked
    if reduction == "sum":
        return wrap(total, level)
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    denom = (valid if weight is None else weight[safe] * valid).sum()
    return wrap(total / float(denom), level)

