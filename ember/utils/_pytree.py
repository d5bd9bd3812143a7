"""``ember.utils._pytree``: PyTorch's pytree helpers (nested tuples, lists, dicts and
namedtuples; anything else is a leaf), as ``__torch_dispatch__`` code uses them to
unwrap and rewrap the tensors in ``args`` and ``kwargs``.

>>> from ember.utils._pytree import tree_map
>>> tree_map(lambda v: v * 10, ((1, 2), {'k': [3]}))
((10, 20), {'k': [30]})
"""
from .._functorch.pytree import TreeSpec, tree_flatten, tree_map, tree_unflatten


def tree_map_only(type_or_types, fn, tree):
    """``tree`` with ``fn`` applied to the leaves that are instances of ``type_or_types``.

    >>> tree_map_only(int, lambda v: -v, (1, 'a', [2.5, 3]))
    (-1, 'a', [2.5, -3])
    """
    return tree_map(lambda v: fn(v) if isinstance(v, type_or_types) else v, tree)


def tree_leaves(tree):
    """The leaves of ``tree``, depth first.

    >>> tree_leaves({'a': (1, 2), 'b': 3})
    [1, 2, 3]
    """
    return tree_flatten(tree)[0]


__all__ = ["TreeSpec", "tree_flatten", "tree_unflatten", "tree_map", "tree_map_only",
           "tree_leaves"]
