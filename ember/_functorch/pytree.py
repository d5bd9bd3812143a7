"""Pytrees: nested tuples, lists, dicts (and namedtuples) whose other values are leaves.

A tree is flattened into its leaves (depth first, dict keys in insertion order) and a spec
that rebuilds it. A spec prints as PyTorch's do: ``str(spec)`` in full
(``TreeSpec(tuple, None, [*, ...])``), ``spec.pprint()`` compactly (``(*, *)``, ``{'a': *}``).
"""


class TreeSpec:
    """The shape of a pytree: its container type, keys and child specs (``None`` for a leaf)."""

    __slots__ = ("kind", "keys", "children", "num_leaves")

    def __init__(self, kind, keys, children):
        self.kind, self.keys, self.children = kind, keys, children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind == other.kind
                and self.keys == other.keys and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.keys, tuple(self.children)))

    def __repr__(self, indent=0):
        if self.kind is None:
            return "*"
        context = list(self.keys) if self.kind is dict else None
        inner = ""
        if self.children:
            indent += 2
            inner = self.children[0].__repr__(indent) + ("," if len(self.children) > 1 else "")
            inner += ",".join("\n" + " " * indent + c.__repr__(indent)
                              for c in self.children[1:])
        return f"TreeSpec({self.kind.__name__}, {context}, [{inner}])"

    __str__ = __repr__

    def pprint(self):
        """The compact form: ``*`` for a leaf, containers as Python writes them."""
        if self.kind is None:
            return "*"
        inner = [c.pprint() for c in self.children]
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c}" for k, c in zip(self.keys, inner)) + "}"
        if self.kind is list:
            return "[" + ", ".join(inner) + "]"
        if self.kind is tuple:
            return "(" + ", ".join(inner) + ("," if len(inner) == 1 else "") + ")"
        return f"{self.kind.__name__}(" + ", ".join(inner) + ")"


LEAF = TreeSpec(None, None, [])


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(type(x), "_fields")


def tree_flatten(tree):
    """``(leaves, spec)`` of ``tree``.

    >>> leaves, spec = tree_flatten({'a': 1, 'b': (2, 3)})
    >>> leaves, spec.pprint()
    ([1, 2, 3], "{'a': *, 'b': (*, *)}")
    """
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    if isinstance(tree, dict):
        keys = list(tree)
        return TreeSpec(dict, tuple(keys), [_flatten(tree[k], leaves) for k in keys])
    if isinstance(tree, (list, tuple)):
        kind = type(tree) if _is_namedtuple(tree) else (list if isinstance(tree, list) else tuple)
        return TreeSpec(kind, None, [_flatten(v, leaves) for v in tree])
    leaves.append(tree)
    return LEAF


def tree_unflatten(leaves, spec):
    """The tree of ``spec`` holding ``leaves``.

    >>> leaves, spec = tree_flatten([1, (2, 3)])
    >>> tree_unflatten([x * 10 for x in leaves], spec)
    [10, (20, 30)]
    """
    it = iter(leaves)
    return _unflatten(it, spec)


def _unflatten(it, spec):
    if spec.kind is None:
        return next(it)
    values = [_unflatten(it, c) for c in spec.children]
    if spec.kind is dict:
        return dict(zip(spec.keys, values))
    if spec.kind is list:
        return values
    if spec.kind is tuple:
        return tuple(values)
    return spec.kind(*values)  # a namedtuple


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to each leaf.

    >>> tree_map(lambda v: v + 1, (1, [2]))
    (2, [3])
    """
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(v) for v in leaves], spec)
