"""``BatchedTensor``: one sample's view of a batch, and the stack of vmap levels.

A BatchedTensor at level ``L`` wraps a *physical* tensor ``_value`` whose dim 0 is the
batch dim of level L (always at the front: the rules need no bookkeeping of where it
is). ``_value`` may itself be a BatchedTensor of a lower level (nested vmap). The
wrapper's ``_data`` is the first sample of the physical array -- a view that gives
shape, dtype and ndim their per-sample (logical) values to the code that checks
arguments; every op on it is sent to a batching rule (``batch_rules``) before any
forward reads that array.
"""
import threading
import warnings

from .._creation import keyword_sizes
from .._tensor import Tensor
from ..autograd import forward_ad
from ..autograd.batching import INPLACE_BERNOULLI
from ..backend import get_array_module
from .._torch_function import _disabled_torch_function_impl

ERROR_MSG = ("vmap: called random operation while in randomness error mode. Please either "
             "use the 'same' or 'different' randomness flags on vmap or perform the "
             "randomness operation out of vmap")
_DATA_DEPENDENT = ("vmap: It looks like you're attempting to use a Tensor in some "
                   "data-dependent control flow. We don't support that yet, please file an "
                   "issue at https://github.com/pytorch/pytorch/issues .")
_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
         "calling .item() on a Tensor, please try to rewrite what you're doing with other "
         "operations. If error is occurring somewhere inside PyTorch internals, please file a "
         "bug report.")


_SAME_WITH_BATCHED = ("Vmap does not currently support same randomness with a batched tensor "
                      "input. Please file an issue with functorch")


class Level:
    """One active vmap: its batch size and randomness mode."""
    __slots__ = ("number", "size", "randomness", "expanded", "filling", "lifting")

    def __init__(self, number, size, randomness):
        self.number, self.size, self.randomness = number, size, randomness
        self.filling = False  # a batched tensor's own fill runs on its physical tensor
        self.lifting = True  # expand plain tensors requiring grad (batch_rules.expanded)
        self.expanded = {}  # id(plain tensor) -> (tensor, its batched expansion)


class _LevelStack(threading.local):
    """The active vmaps of this thread, outermost first; level numbers count from 1.
    (vmap is per thread, as PyTorch's: another thread's ops and draws are not batched.)"""

    def __init__(self):
        self.stack = []

    def __iter__(self):
        return iter(self.stack)

    def __getitem__(self, k):
        return self.stack[k]

    def __len__(self):
        return len(self.stack)

    def append(self, level):
        self.stack.append(level)

    def remove(self, level):
        self.stack.remove(level)


levels = _LevelStack()


def level_of(number):
    for lv in levels:
        if lv.number == number:
            return lv
    return None


def wrap(value, level):
    """A BatchedTensor of ``value`` (batch dim 0) at ``level`` (its number)."""
    t = object.__new__(BatchedTensor)
    t._value = value
    t._level = level
    data = value._data
    t._data = data[0, ...] if data.shape[0] else first_sample(data)
    t._vc = value._vc
    t._base = None
    return t


def first_sample(data):
    """The per-sample array a BatchedTensor shows: sample 0 of its physical array (a
    view), or zeros of the per-sample shape when the batch is empty."""
    if data.shape[0]:
        return data[0, ...]
    return get_array_module(data).zeros(data.shape[1:], dtype=data.dtype)


def batch_size(t):
    return t._value._data.shape[0]


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: per-sample shape outside, the whole batch inside."""
    # vmap reaches the ops through autograd/batching.py, not through __torch_function__
    __torch_function__ = _disabled_torch_function_impl

    @property
    def _vmap_level(self):
        """The vmap level (lower layers test for it without importing this class)."""
        return self._level

    @property
    def _requires_grad(self):
        return self._value._requires_grad

    @_requires_grad.setter
    def _requires_grad(self, value):
        self._value._requires_grad = value

    @property
    def _output_nr(self):
        return self._value._output_nr

    @_output_nr.setter
    def _output_nr(self, value):
        self._value._output_nr = value

    @property
    def _grad_fn(self):
        return self._value._grad_fn

    @_grad_fn.setter
    def _grad_fn(self, value):
        self._value._grad_fn = value

    # ---- forward AD: the tangent is the physical tensor's (ops run there), batched alike --
    @property
    def _fw_grad(self):
        tangent = forward_ad.tangent_of(self._value) if forward_ad._open else None
        if tangent is None:
            return None
        with forward_ad.suspended():
            return forward_ad._open[0], hide(tangent, self._level)

    def _set_tangent(self, tangent):
        """``forward_ad.set_tangent`` of a BatchedTensor: the tangent goes to the physical
        tensor, its batch dim of this level in front (an unbatched one expanded); a
        tangent also batched at a later vmap (jacfwd's columns) stays batched there."""
        if tangent is not None:
            with forward_ad.suspended():
                tangent = expose(tangent, self._level, batch_size(self), self.shape)
        forward_ad.set_tangent(self._value, tangent)

    def requires_grad_(self, requires_grad=True):
        self._value.requires_grad_(requires_grad)
        return self

    def detach(self):
        return wrap(self._value.detach(), self._level)

    @property
    def data(self):
        return wrap(self._value.data, self._level)

    def item(self):
        raise RuntimeError(_ITEM)

    def __bool__(self):
        raise RuntimeError(_DATA_DEPENDENT)

    __float__ = __int__ = __index__ = __bool__

    def tolist(self):
        raise RuntimeError(_DATA_DEPENDENT)

    def __array__(self, *args, **kwargs):
        raise RuntimeError(_DATA_DEPENDENT)  # its array would be one sample's

    def numpy(self, *, force=False):
        raise RuntimeError("vmap: numpy() is not supported on a tensor being vmapped over")

    def __repr__(self):
        return f"BatchedTensor(lvl={self._level}, bdim=0, value=\n{self._value!r}\n)"

    __str__ = __repr__

    def _made_like(self, factory, *args, **kwargs):
        """``zeros_like(self)`` and the like: batched as self, as in PyTorch."""
        return wrap(factory(self._value, *args, **kwargs), self._level)

    # ---- in place: the result is written into the whole physical tensor -----------------
    def _inplace(self, fn, *args):
        out = fn(self, *args)
        phys = _as_physical(out, self._level, batch_size(self), self.shape)
        if phys.dtype is not self._value.dtype:
            phys = phys.to(self._value.dtype)
        self._value._inplace(_take_second, phys)
        self._data = first_sample(self._value._data)
        return self

    # ---- new tensors: batched like self, as PyTorch's new_* on a BatchedTensor -----------
    def _new_batched(self, name, size_args, *args, **kwargs):
        size = size_args
        if "size" in kwargs:  # x.new_zeros(size=...): PyTorch's keyword of *size
            size = keyword_sizes(size_args, kwargs.pop("size"), name, "size")
        size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) \
            else tuple(size)
        made = getattr(self._value, name)((batch_size(self),) + size, *args, **kwargs)
        return wrap(made, self._level)

    def new_empty(self, *size, **kwargs):
        return self._new_batched("new_empty", size, **kwargs)

    def new_zeros(self, *size, **kwargs):
        return self._new_batched("new_zeros", size, **kwargs)

    def new_ones(self, *size, **kwargs):
        return self._new_batched("new_ones", size, **kwargs)

    def new_full(self, size, fill_value, **kwargs):
        return self._new_batched("new_full", (size,), fill_value, **kwargs)

    # ---- random fills: per sample ("different") or one draw for all ("same") -------------
    def _random_fill(self, name, *args, **kwargs):
        lv = level_of(self._level)
        mode = lv.randomness if lv is not None else "different"
        if mode == "error":
            raise RuntimeError(ERROR_MSG)
        if mode == "different":
            lv.filling = True
            try:
                getattr(self._value, name)(*args, **kwargs)
            finally:
                lv.filling = False
        else:
            one = getattr(self._value[0].detach().clone(), name)(*args, **kwargs)
            self._value._inplace(_take_second, one.expand(self._value.shape))
        self._data = first_sample(self._value._data)
        return self

    def uniform_(self, *args, **kwargs):
        return self._random_fill("uniform_", *args, **kwargs)

    def normal_(self, *args, **kwargs):
        return self._random_fill("normal_", *args, **kwargs)

    def bernoulli_(self, p=0.5, *, generator=None):
        if isinstance(p, Tensor) and p._vmap_level is not None:
            # a batched p: its physical tensor, as this array holds sample 0 only
            lv = level_of(self._level)
            if p._vmap_level > self._level:
                raise RuntimeError(INPLACE_BERNOULLI)
            if lv is not None and lv.randomness == "same":
                raise RuntimeError(_SAME_WITH_BATCHED)
            p = _as_physical(p, self._level, batch_size(self), self.shape)
        return self._random_fill("bernoulli_", p, generator=generator)

    def random_(self, *args, **kwargs):
        return self._random_fill("random_", *args, **kwargs)


def expose(t, level, size, shape):
    """``t`` (per-sample ``shape``) with the batch dim of vmap ``level`` made a logical dim
    in front (expanded where ``t`` is not batched there), still batched at the vmaps after
    ``level``: what a physical tensor of ``level`` pairs with."""
    if type(t) is BatchedTensor and t._level > level:
        return wrap(expose(t._value, level, size, (t._value.shape[0],) + tuple(shape))
                    .movedim(0, 1), t._level)
    if type(t) is BatchedTensor and t._level == level:
        value = t._value
        return value if tuple(t.shape) == tuple(shape) else value.expand((size,) + tuple(shape))
    return t.expand((size,) + tuple(shape))


def hide(t, level):
    """The inverse of ``expose``: ``t``'s logical dim 0 becomes the batch dim of ``level``,
    below the vmaps after it that ``t`` is batched at."""
    if type(t) is BatchedTensor and t._level > level:
        return wrap(hide(t._value.movedim(1, 0), level), t._level)
    return wrap(t, level)


def _take_second(_, new):
    """The out-of-place op behind writing ``new`` over a tensor: its values, as a copy."""
    return new.clone()


def _as_physical(t, level, size, logical_shape=None):
    """``t`` as a physical tensor with the batch dim of ``level`` in front (unbatched
    tensors are expanded), broadcast to ``logical_shape`` when given."""
    if isinstance(t, BatchedTensor) and t._level == level:
        value = t._value
        if logical_shape is not None and tuple(t.shape) != tuple(logical_shape):
            value = value.expand((size,) + tuple(logical_shape))
        return value
    shape = tuple(logical_shape) if logical_shape is not None else tuple(t.shape)
    return t.expand((size,) + shape)


def warn_once(seen, name):
    if name not in seen:
        seen.add(name)
        warnings.warn(f"There is a performance drop because we have not yet implemented the "
                      f"batching rule for {name}. Please file us an issue on GitHub so that "
                      f"we can prioritize its implementation.", UserWarning, stacklevel=4)
