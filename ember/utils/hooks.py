"""``ember.utils.hooks``: the hook handle and the serialization-warning helpers.

``RemovableHandle`` is the handle every ember ``register_*hook`` returns. PyTorch's
``BackwardHook`` (the machinery behind ``Module.register_full_backward_hook``) is not
provided: ember's modules run full backward hooks their own way.

>>> import ember
>>> from collections import OrderedDict
>>> hooks = OrderedDict()
>>> handle = ember.utils.hooks.RemovableHandle(hooks)
>>> hooks[handle.id] = print
>>> handle.remove(); len(hooks)
0
"""
import warnings

from ..autograd.graph import RemovableHandle

__all__ = ["RemovableHandle", "unserializable_hook", "warn_if_has_hooks"]


def unserializable_hook(f):
    """Mark hook ``f`` as one that need not be saved: ``warn_if_has_hooks`` skips it.

    >>> import ember
    >>> @ember.utils.hooks.unserializable_hook
    ... def hook(grad): return grad
    >>> hook.__torch_unserializable__
    True
    """
    f.__torch_unserializable__ = True
    return f


def _tensor_hooks(tensor):
    """The hooks registered on ``tensor`` with ``register_hook``, oldest first."""
    node = tensor._grad_fn
    if node is None and tensor._accumulator is not None:
        node = tensor._accumulator()
    hooks = getattr(node, "_tensor_pre_hooks", None) if node is not None else None
    return list(hooks.get(tensor._output_nr if tensor._grad_fn is not None else 0, ())
                ) if hooks else []


def warn_if_has_hooks(tensor):
    """Warn for each hook on ``tensor`` (``register_hook``) that saving it would drop, bar
    those marked with ``unserializable_hook``.

    >>> import ember, warnings
    >>> x = ember.ones(1, requires_grad=True)
    >>> h = x.register_hook(lambda g: g)
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     ember.utils.hooks.warn_if_has_hooks(x)
    >>> "will not be serialized" in str(w[0].message)
    True
    """
    for hook in _tensor_hooks(tensor):
        if not hasattr(hook, "__torch_unserializable__"):
            warnings.warn(f"backward hook {hook!r} on tensor will not be serialized.  If this "
                          "is expected, you can decorate the function with "
                          "@torch.utils.hooks.unserializable_hook to suppress this warning",
                          stacklevel=2)
