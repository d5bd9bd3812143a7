"""The seam through which ``ember._functorch`` (vmap) sees ops while a vmap runs.

vmap sits in a higher layer than the ops and autograd, so it installs its dispatcher
here while a vmap is active: ``hooks[0]`` is None otherwise, and every op pays one test
of it. The dispatcher has three entry points: ``primitive(cls, args)`` (built-in ops),
``function(cls, args, kwargs)`` (user ``autograd.Function``s) and
``grad(outputs, inputs, grad_outputs, ...)`` (``autograd.grad``); each returns
``NotImplemented`` when no batched tensor takes part.
"""
import functools
import importlib

from .dispatch import active as _dispatch_active, refuse_wrappers as _refuse_wrappers

hooks = [None]

#: PyTorch's error for ``x.bernoulli_(p)`` with ``p`` batched by a vmap that ``x`` is not.
INPLACE_BERNOULLI = (
    "vmap: inplace bernoulli(self, *extra_args) is not possible because there exists a "
    "Tensor `other` in extra_args that has more elements than `self`. This happened due to "
    "`other` being vmapped over but `self` not being vmapped over in a vmap. Please try to "
    "use out-of-place operators instead of inplace bernoulli. If said operator is being "
    "called inside the PyTorch framework, please file a bug report instead.")

#: ``ember._functorch.vmap`` itself, registered when it is imported: ``autograd.grad``'s
#: ``is_grads_batched`` and gradcheck's ``check_batched_grad`` run through it.
vmap_function = [None]


def get_vmap():
    """``vmap``, importing it on first use: ``import ember`` loads ember.func lazily, and
    the autograd layer below it must not import it at module level.

    >>> from ember.autograd.batching import get_vmap
    >>> get_vmap().__name__
    'vmap'
    """
    if vmap_function[0] is None:
        importlib.import_module("ember._functorch.vmap")
    return vmap_function[0]


def per_sample_under_vmap(fn):
    """For a function that reads its inputs' arrays outside a Primitive (sort's indices,
    unique, isclose, ...): under vmap it runs once per sample (and warns once), as a
    batched tensor's array holds one sample only."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        hook = hooks[0]
        if hook is not None:
            out = hook.per_sample(wrapper, args, kwargs)
            if out is not NotImplemented:
                return out
        if _dispatch_active[0]:
            _refuse_wrappers(fn, (*args, *kwargs.values()))
        return fn(*args, **kwargs)
    return wrapper


def fold_batch_under_vmap(fn):
    """For a function of a batch ``x`` (N, ...) whose samples are independent (pooling):
    under vmap the vmapped dim is folded into N, one call for all."""
    @functools.wraps(fn)
    def wrapper(x, *args, **kwargs):
        hook = hooks[0]
        if hook is not None:
            out = hook.fold(wrapper, x, args, kwargs)
            if out is not NotImplemented:
                return out
        if _dispatch_active[0]:
            _refuse_wrappers(fn, (x, *args, *kwargs.values()))
        return fn(x, *args, **kwargs)
    return wrapper


def index_under_vmap(fn):
    """``getitem``/``setitem``: an index tensor that is batched holds one sample in its
    array, so under vmap such an index runs sample by sample."""
    @functools.wraps(fn)
    def wrapper(x, index, *value):
        hook = hooks[0]
        if hook is not None:
            out = hook.index(wrapper, x, index, value)
            if out is not NotImplemented:
                return out
        if _dispatch_active[0]:  # an index's values are read here; x's only in ops
            _refuse_wrappers(fn, (index,))
        return fn(x, index, *value)
    return wrapper
