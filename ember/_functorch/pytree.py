"""Pytrees: nested containers (tuples, lists, dicts, namedtuples, OrderedDicts, defaultdicts,
deques, ``ember.Size``, ``ember.return_types`` and any type given to ``register_pytree_node``)
whose other values are leaves.

A tree is flattened into its leaves (depth first, dict keys in insertion order) and a
``TreeSpec`` that rebuilds it. The node registry is one table, shared by ``ember.func``'s
transforms, ``vmap`` and ``ember.utils._pytree``. A spec prints as PyTorch's do:
``repr(spec)`` in full (``TreeSpec(tuple, None, [*, ...])``), ``spec.pprint()`` as the tree
with ``*`` for its leaves.

>>> leaves, spec = tree_flatten({'a': 1, 'b': (2, 3)})
>>> leaves, spec.num_leaves, spec.num_nodes
([1, 2, 3], 3, 5)
"""
import collections
import dataclasses
import importlib
import threading
import typing
import warnings

from .. import return_types as _return_types
from .._tensor import Size
from ..fx.immutable_collections import immutable_dict, immutable_list

NO_SERIALIZED_TYPE_NAME_FOUND = "NO_SERIALIZED_TYPE_NAME_FOUND"


class NodeDef(typing.NamedTuple):
    """How one node type flattens (children and a context) and is rebuilt."""
    type: typing.Any
    flatten_fn: typing.Callable
    unflatten_fn: typing.Callable
    flatten_with_keys_fn: typing.Optional[typing.Callable]


class SerializeNodeDef(typing.NamedTuple):
    """The name a node type has in ``treespec_dumps``'s JSON and its context converters."""
    typ: typing.Any
    serialized_type_name: str
    to_dumpable_context: typing.Optional[typing.Callable]
    from_dumpable_context: typing.Optional[typing.Callable]


_REGISTRY_LOCK = threading.RLock()
SUPPORTED_NODES = {}
SUPPORTED_SERIALIZED_TYPES = {}
SERIALIZED_TYPE_TO_PYTHON_TYPE = {}


def register_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                  to_dumpable_context=None, from_dumpable_context=None,
                  flatten_with_keys_fn=None, overwrite_warning=True):
    """Add (or replace, with a warning) ``cls`` in the node registry."""
    with _REGISTRY_LOCK:
        if cls in SUPPORTED_NODES and overwrite_warning:
            warnings.warn(f"{cls} is already registered as pytree node. Overwriting the "
                          "previous registration.", stacklevel=3)
        SUPPORTED_NODES[cls] = NodeDef(cls, flatten_fn, unflatten_fn, flatten_with_keys_fn)
        if (to_dumpable_context is None) ^ (from_dumpable_context is None):
            raise ValueError(f"Both to_dumpable_context and from_dumpable_context for {cls} "
                             "must be None or registered.")
        if serialized_type_name is None:
            serialized_type_name = NO_SERIALIZED_TYPE_NAME_FOUND
        SUPPORTED_SERIALIZED_TYPES[cls] = SerializeNodeDef(
            cls, serialized_type_name, to_dumpable_context, from_dumpable_context)
        SERIALIZED_TYPE_TO_PYTHON_TYPE[serialized_type_name] = cls


def register_pytree_node(cls, flatten_fn, unflatten_fn, *, serialized_type_name=None,
                         to_dumpable_context=None, from_dumpable_context=None,
                         flatten_with_keys_fn=None):
    """Make ``cls`` a container: ``flatten_fn(obj) -> (children, context)``,
    ``unflatten_fn(children, context) -> obj``; ``flatten_with_keys_fn(obj) ->
    ([(key, child), ...], context)`` gives the key paths (``tree_flatten_with_path``);
    ``serialized_type_name`` (and the context converters) let ``treespec_dumps`` write it.

    >>> class Pair:
    ...     def __init__(self, a, b): self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ([p.a, p.b], None),
    ...                      lambda children, _: Pair(*children))
    >>> tree_flatten(Pair(1, [2]))[0]
    [1, 2]
    >>> _ = SUPPORTED_NODES.pop(Pair)
    """
    with _REGISTRY_LOCK:
        if cls in SUPPORTED_NODES:
            raise ValueError(f"{cls} is already registered as pytree node.")
        register_node(cls, flatten_fn, unflatten_fn, serialized_type_name=serialized_type_name,
                      to_dumpable_context=to_dumpable_context,
                      from_dumpable_context=from_dumpable_context,
                      flatten_with_keys_fn=flatten_with_keys_fn)


# ---- key paths -----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """A child of a sequence by position: prints as ``[0]``."""
    __slots__ = ("idx",)
    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"

    def get(self, sequence):
        """``sequence[idx]``."""
        return sequence[self.idx]


@dataclasses.dataclass(frozen=True)
class MappingKey:
    """A child of a mapping by key: prints as ``['a']``."""
    __slots__ = ("key",)
    key: typing.Any

    def __str__(self):
        return f"[{self.key!r}]"

    def get(self, mapping):
        """``mapping[key]``."""
        return mapping[self.key]


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """A child by attribute name (namedtuple fields): prints as ``.name``."""
    __slots__ = ("name",)
    name: str

    def __str__(self):
        return f".{self.name}"

    def get(self, obj):
        """``getattr(obj, name)``."""
        return getattr(obj, self.name)


# ---- namedtuples and structseqs -------------------------------------------------------------
# ember.return_types are namedtuple subclasses playing the part of PyTorch's structseqs
# (torch.return_types): the predicates answer for them as PyTorch does for its own.
_STRUCTSEQ_TYPES = {cls for cls in vars(_return_types).values()
                    if isinstance(cls, type) and issubclass(cls, tuple)
                    and cls.__module__ == _return_types.__name__}
_BASETYPE_FLAG = 1 << 10  # CPython's Py_TPFLAGS_BASETYPE


def is_namedtuple_class(cls):
    """Whether ``cls`` is a namedtuple class (``ember.return_types`` are not: they are
    structseqs, as ``torch.return_types`` are).

    >>> is_namedtuple_class(collections.namedtuple('P', 'x y'))
    True
    """
    return (isinstance(cls, type) and issubclass(cls, tuple) and cls not in _STRUCTSEQ_TYPES
            and isinstance(getattr(cls, "_fields", None), tuple)
            and all(type(field) is str for field in cls._fields)
            and callable(getattr(cls, "_make", None))
            and callable(getattr(cls, "_asdict", None)))


def is_namedtuple(obj):
    """Whether ``obj`` (a class or an instance) is a namedtuple."""
    return is_namedtuple_class(obj if isinstance(obj, type) else type(obj))


def is_namedtuple_instance(obj):
    """Whether ``obj`` is a namedtuple instance."""
    return is_namedtuple_class(type(obj))


def is_structseq_class(cls):
    """Whether ``cls`` is a C struct sequence (``os.stat_result``) or one of
    ``ember.return_types``.

    >>> import os, ember
    >>> is_structseq_class(os.stat_result), is_structseq_class(ember.return_types.max)
    (True, True)
    """
    if cls in _STRUCTSEQ_TYPES:
        return True
    return (isinstance(cls, type) and cls.__bases__ == (tuple,)
            and isinstance(getattr(cls, "n_fields", None), int)
            and isinstance(getattr(cls, "n_sequence_fields", None), int)
            and isinstance(getattr(cls, "n_unnamed_fields", None), int)
            and not cls.__flags__ & _BASETYPE_FLAG)


def is_structseq(obj):
    """Whether ``obj`` (a class or an instance) is a structseq."""
    return is_structseq_class(obj if isinstance(obj, type) else type(obj))


def is_structseq_instance(obj):
    """Whether ``obj`` is a structseq instance."""
    return is_structseq_class(type(obj))


# ---- the built-in nodes ----------------------------------------------------------------------
def _sequence_keys(values):
    return [(SequenceKey(i), v) for i, v in enumerate(values)]


def _mapping_keys(keys, values):
    return [(MappingKey(k), v) for k, v in zip(keys, values)]


def _namedtuple_serialize(context):
    entry = SUPPORTED_SERIALIZED_TYPES.get(context)
    if entry is None:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we didn't "
            "register a serializated_type_name. Please register using `_register_namedtuple`.")
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"Can't serialize TreeSpec of namedtuple class {context} because we couldn't find "
            "a serializated_type_name. Please register using `_register_namedtuple`.")
    return entry.serialized_type_name


def _namedtuple_deserialize(name):
    if name not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Can't deserialize TreeSpec of namedtuple class {name} "
                                  "because we couldn't find a serializated name.")
    return SERIALIZED_TYPE_TO_PYTHON_TYPE[name]


def _defaultdict_serialize(context):
    factory, keys = context
    return {"default_factory_module": factory.__module__,
            "default_factory_name": factory.__qualname__, "dict_context": keys}


def _defaultdict_deserialize(dumpable):
    module = importlib.import_module(dumpable["default_factory_module"])
    return [getattr(module, dumpable["default_factory_name"]), dumpable["dict_context"]]


def _register_builtins():
    seq_keys = (lambda t: (_sequence_keys(t), None))
    register_node(tuple, lambda t: (list(t), None), lambda v, _: tuple(v),
                  serialized_type_name="builtins.tuple", flatten_with_keys_fn=seq_keys)
    register_node(list, lambda t: (t, None), lambda v, _: list(v),
                  serialized_type_name="builtins.list", flatten_with_keys_fn=seq_keys)
    register_node(dict, lambda d: (list(d.values()), list(d.keys())),
                  lambda v, keys: dict(zip(keys, v)), serialized_type_name="builtins.dict",
                  flatten_with_keys_fn=lambda d: (_mapping_keys(d, d.values()), list(d)))
    register_node(collections.namedtuple, lambda t: (list(t), type(t)),
                  lambda v, cls: cls(*v), serialized_type_name="collections.namedtuple",
                  to_dumpable_context=_namedtuple_serialize,
                  from_dumpable_context=_namedtuple_deserialize,
                  flatten_with_keys_fn=lambda t: ([(GetAttrKey(f), v) for f, v in
                                                   zip(type(t)._fields, t)], type(t)))
    register_node(collections.OrderedDict, lambda d: (list(d.values()), list(d.keys())),
                  lambda v, keys: collections.OrderedDict(zip(keys, v)),
                  serialized_type_name="collections.OrderedDict",
                  flatten_with_keys_fn=lambda d: (_mapping_keys(d, d.values()), list(d)))
    register_node(collections.defaultdict,
                  lambda d: (list(d.values()), [d.default_factory, list(d.keys())]),
                  lambda v, ctx: collections.defaultdict(ctx[0], zip(ctx[1], v)),
                  serialized_type_name="collections.defaultdict",
                  to_dumpable_context=_defaultdict_serialize,
                  from_dumpable_context=_defaultdict_deserialize,
                  flatten_with_keys_fn=lambda d: (_mapping_keys(d, d.values()),
                                                  [d.default_factory, list(d)]))
    register_node(collections.deque, lambda d: (list(d), d.maxlen),
                  lambda v, maxlen: collections.deque(v, maxlen=maxlen),
                  serialized_type_name="collections.deque",
                  flatten_with_keys_fn=lambda d: (_sequence_keys(d), d.maxlen))
    # ember's names are PyTorch's, so treespec JSON moves between the two
    register_node(Size, lambda s: (list(s), None), lambda v, _: Size(v),
                  serialized_type_name="torch.Size", flatten_with_keys_fn=seq_keys)
    # fx's node argument containers, under PyTorch's names
    register_node(immutable_list, lambda t: (list(t), None), lambda v, _: immutable_list(v),
                  serialized_type_name="torch.fx.immutable_collections.immutable_list",
                  flatten_with_keys_fn=seq_keys)
    register_node(immutable_dict, lambda d: (list(d.values()), list(d.keys())),
                  lambda v, keys: immutable_dict(zip(keys, v)),
                  serialized_type_name="torch.fx.immutable_collections.immutable_dict",
                  flatten_with_keys_fn=lambda d: (_mapping_keys(d, d.values()), list(d)))
    for cls in sorted(_STRUCTSEQ_TYPES, key=lambda c: c.__name__):
        register_node(cls, lambda t: (list(t), None),
                      (lambda c: lambda v, _: c(tuple(v)))(cls), flatten_with_keys_fn=seq_keys)


_register_builtins()
BUILTIN_TYPES = frozenset({tuple, list, dict, collections.namedtuple, collections.OrderedDict,
                           collections.defaultdict, collections.deque})
STANDARD_DICT_TYPES = frozenset({dict, collections.OrderedDict, collections.defaultdict})


def node_type_of(tree):
    """The registry key of ``tree``'s node type (``collections.namedtuple`` for every
    namedtuple, as in PyTorch)."""
    cls = type(tree)
    if cls is not tuple and issubclass(cls, tuple) and is_namedtuple_class(cls):
        return collections.namedtuple
    return cls


def tree_is_leaf(tree, is_leaf=None):
    """Whether ``tree`` is a leaf: not a registered container (or ``is_leaf`` says so).

    >>> tree_is_leaf(1), tree_is_leaf([1]), tree_is_leaf((1,), is_leaf=lambda t: True)
    (True, False, True)
    """
    if is_leaf is not None and is_leaf(tree):
        return True
    return node_type_of(tree) not in SUPPORTED_NODES


# ---- TreeSpec ------------------------------------------------------------------------------
class TreeSpec:
    """The shape of a pytree: its node ``type`` (None for a leaf), ``context`` (what
    rebuilding it needs: dict keys, a namedtuple class, ...) and its children's specs.

    >>> spec = tree_structure([1, (2, 3)])
    >>> spec.num_leaves, spec.num_children, spec.child(1).type is tuple
    (3, 2, True)
    >>> spec.unflatten(['a', 'b', 'c'])
    ['a', ('b', 'c')]
    """

    __slots__ = ("type", "_context", "_children", "num_nodes", "num_leaves", "num_children")

    def __init__(self, type, context, children_specs):
        self.type, self._context, self._children = type, context, children_specs
        if type is None:
            if context is not None:
                raise AssertionError("leaf node should not have a context")
            if children_specs:
                raise AssertionError("leaf node should not have children")
            self.num_nodes = self.num_leaves = 1
        else:
            self.num_nodes = 1 + sum(c.num_nodes for c in children_specs)
            self.num_leaves = sum(c.num_leaves for c in children_specs)
        self.num_children = len(children_specs)

    def __setattr__(self, name, value):
        if hasattr(self, "num_children"):  # frozen once built, as PyTorch's dataclass
            raise dataclasses.FrozenInstanceError(f"cannot assign to field '{name}'")
        object.__setattr__(self, name, value)

    def __repr__(self, indent=0):
        if self.type is None:
            return "*"
        inner = ""
        if self._children:
            indent += 2
            inner = self._children[0].__repr__(indent) + ("," if self.num_children > 1 else "")
            inner += ",".join("\n" + " " * indent + c.__repr__(indent)
                              for c in self._children[1:])
        return f"TreeSpec({self.type.__name__}, {self._context}, [{inner}])"

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, TreeSpec):
            return NotImplemented
        return (str(self.type) == str(other.type) and self._context == other._context
                and self._children == other._children)

    def __hash__(self):
        kind, ctx = self.type, self._context
        if kind is collections.defaultdict:
            ctx = (ctx[0], tuple(ctx[1]))
        elif kind in (dict, collections.OrderedDict):
            ctx = tuple(ctx)
        elif kind is not None and kind not in BUILTIN_TYPES:
            ctx = None  # a user context may not be hashable: equal specs still hash alike
        return hash((kind, ctx, tuple(self._children)))

    @property
    def context(self):
        """What rebuilding the node needs (dict keys, the namedtuple class, ...)."""
        return self._context

    @property
    def children_specs(self):
        """The children's specs (deprecated in PyTorch: use ``children()``)."""
        warnings.warn("`treespec.children_specs` is deprecated. Use `treespec.child(index)` "
                      "to access a single child, or `treespec.children()` to get all "
                      "children.", FutureWarning, stacklevel=2)
        return self._children

    def is_leaf(self):
        """Whether this spec is a single leaf."""
        return self.num_nodes == 1 and self.num_leaves == 1

    def children(self):
        """A copy of the children's specs."""
        return list(self._children)

    def child(self, index):
        """The spec of child ``index``."""
        return self._children[index]

    def flatten_up_to(self, tree):
        """The subtrees of ``tree`` at this spec's leaves (``tree`` must have this spec as
        a prefix).

        >>> tree_structure((1, 2)).flatten_up_to(([1, 2], {'k': 3}))
        [[1, 2], {'k': 3}]
        """
        subtrees = []
        _flatten_up_to(self, tree, subtrees)
        return subtrees

    def unflatten(self, leaves):
        """The tree of this spec holding ``leaves``."""
        if not isinstance(leaves, (list, tuple)):
            leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} "
                             f"but the spec refers to a pytree that holds {self.num_leaves} "
                             f"items ({self}).")
        return _unflatten(iter(leaves), self)

    def pprint(self):
        """The tree with ``*`` for each leaf (``treespec_pprint``)."""
        return repr(self.unflatten([_ASTERISK] * self.num_leaves))


class LeafSpec(TreeSpec):
    """The spec of a leaf (PyTorch deprecates ``isinstance(spec, LeafSpec)``: use
    ``spec.is_leaf()``)."""

    __slots__ = ()

    def __init__(self):
        warnings.warn("`isinstance(treespec, LeafSpec)` is deprecated, use "
                      "`isinstance(treespec, TreeSpec) and treespec.is_leaf()` instead.",
                      FutureWarning, stacklevel=2)
        super().__init__(None, None, [])


class _Asterisk(str):
    """``*`` whose repr has no quotes: the leaves of ``pprint``."""
    __slots__ = ()

    def __repr__(self):
        return "*"


_ASTERISK = _Asterisk("*")
with warnings.catch_warnings():  # the one shared leaf spec: no deprecation to report
    warnings.simplefilter("ignore", FutureWarning)
    LEAF_SPEC = LeafSpec()


def _unflatten(it, spec):
    if spec.type is None:
        return next(it)
    children = [_unflatten(it, c) for c in spec._children]
    return SUPPORTED_NODES[spec.type].unflatten_fn(children, spec._context)


def _flatten_up_to(spec, node, subtrees):
    if spec.is_leaf():
        subtrees.append(node)
        return
    node_type = node_type_of(node)
    if spec.type not in BUILTIN_TYPES:
        if node_type != spec.type:
            raise ValueError(f"Type mismatch; expected {spec.type!r}, but got {node_type!r}.")
        children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
        if len(children) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                             f"{len(children)}.")
        if context != spec._context:
            raise ValueError(f"Node context mismatch for custom node type {spec.type!r}.")
    else:
        both_dicts = spec.type in STANDARD_DICT_TYPES and node_type in STANDARD_DICT_TYPES
        if not both_dicts and node_type != spec.type:
            raise ValueError(f"Node type mismatch; expected {spec.type!r}, but got "
                             f"{node_type!r}.")
        if len(node) != spec.num_children:
            raise ValueError(f"Node arity mismatch; expected {spec.num_children}, but got "
                             f"{len(node)}.")
        if both_dicts:
            keys = spec._context if spec.type is not collections.defaultdict else spec._context[1]
            got, expected = set(node), set(keys)
            if got != expected:
                message = ""
                if expected - got:
                    message += f"; missing key(s): {expected - got}"
                if got - expected:
                    message += f"; extra key(s): {got - expected}"
                raise ValueError(f"Node keys mismatch{message}.")
            children = [node[k] for k in keys]
        else:
            children, context = SUPPORTED_NODES[node_type].flatten_fn(node)
            if node_type is not collections.deque and context != spec._context:
                raise ValueError(f"Node context mismatch for node type {spec.type!r}; "
                                 f"expected {spec._context!r}, but got {context!r}.")
    for child, child_spec in zip(children, spec._children):
        _flatten_up_to(child_spec, child, subtrees)


# ---- flatten, unflatten, map ------------------------------------------------------------------
def tree_flatten(tree, is_leaf=None):
    """``(leaves, spec)`` of ``tree``.

    >>> leaves, spec = tree_flatten({'a': 1, 'b': (2, 3)})
    >>> leaves, spec.pprint()
    ([1, 2, 3], "{'a': *, 'b': (*, *)}")
    """
    leaves = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(node, leaves, is_leaf):
    if is_leaf is not None and is_leaf(node):
        leaves.append(node)
        return LEAF_SPEC
    node_type = node_type_of(node)
    entry = SUPPORTED_NODES.get(node_type)
    if entry is None:
        leaves.append(node)
        return LEAF_SPEC
    children, context = entry.flatten_fn(node)
    return TreeSpec(node_type, context, [_flatten(c, leaves, is_leaf) for c in children])


def tree_unflatten(leaves, treespec):
    """The tree of ``treespec`` holding ``leaves`` (the two may come in either order).

    >>> leaves, spec = tree_flatten([1, (2, 3)])
    >>> tree_unflatten([x * 10 for x in leaves], spec)
    [10, (20, 30)]
    """
    if not isinstance(treespec, TreeSpec):
        if not isinstance(leaves, TreeSpec):
            raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item "
                            f"of type {type(treespec)}.")
        leaves, treespec = treespec, leaves
    return treespec.unflatten(leaves)


def tree_iter(tree, is_leaf=None):
    """An iterator over the leaves of ``tree``, depth first."""
    if tree_is_leaf(tree, is_leaf=is_leaf):
        yield tree
        return
    children, _ = SUPPORTED_NODES[node_type_of(tree)].flatten_fn(tree)
    for child in children:
        yield from tree_iter(child, is_leaf=is_leaf)


def tree_leaves(tree, is_leaf=None):
    """The leaves of ``tree``, depth first.

    >>> tree_leaves({'a': (1, 2), 'b': 3})
    [1, 2, 3]
    """
    return list(tree_iter(tree, is_leaf=is_leaf))


def tree_structure(tree, is_leaf=None):
    """The ``TreeSpec`` of ``tree``."""
    return tree_flatten(tree, is_leaf=is_leaf)[1]


def tree_map(func, tree, *rests, is_leaf=None):
    """``tree`` with ``func`` applied to each leaf; with ``rests``, ``func`` takes the
    matching subtree of each (``tree`` must be a prefix of them).

    >>> tree_map(lambda v: v + 1, (1, [2]))
    (2, [3])
    >>> tree_map(lambda x, y: [x] + y, [5, 6], [[7, 9], [1, 2]])
    [[5, 7, 9], [6, 1, 2]]
    """
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(map(func, *flat))


def tree_map_(func, tree, *rests, is_leaf=None):
    """Call ``func`` on each leaf (for its side effects) and return ``tree`` itself.

    >>> seen = []
    >>> tree_map_(seen.append, {'a': 1, 'b': [2]})
    {'a': 1, 'b': [2]}
    >>> seen
    [1, 2]
    """
    leaves, spec = tree_flatten(tree, is_leaf=is_leaf)
    flat = [leaves] + [spec.flatten_up_to(r) for r in rests]
    for _ in map(func, *flat):
        pass
    return tree


# ---- key paths -------------------------------------------------------------------------------
def tree_flatten_with_path(tree, is_leaf=None):
    """``([(key_path, leaf), ...], spec)``: each leaf with the keys that reach it.

    >>> tree_flatten_with_path({'a': [1]})[0]
    [((MappingKey(key='a'), SequenceKey(idx=0)), 1)]
    """
    _, spec = tree_flatten(tree, is_leaf)
    return list(_key_paths((), tree, is_leaf)), spec


def tree_leaves_with_path(tree, is_leaf=None):
    """``[(key_path, leaf), ...]`` of ``tree``."""
    return list(_key_paths((), tree, is_leaf))


def _key_paths(path, tree, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        yield path, tree
        return
    node_type = node_type_of(tree)
    entry = SUPPORTED_NODES.get(node_type)
    if entry is None:
        yield path, tree
        return
    if entry.flatten_with_keys_fn is None:
        raise ValueError(f"Did not find a flatten_with_keys_fn for type: {node_type}. Please "
                         "pass a flatten_with_keys_fn argument to register_pytree_node.")
    keyed, _ = entry.flatten_with_keys_fn(tree)
    for key, child in keyed:
        yield from _key_paths((*path, key), child, is_leaf)


def tree_map_with_path(func, tree, *rests, is_leaf=None):
    """``tree_map`` whose ``func`` also gets each leaf's key path first.

    >>> tree_map_with_path(lambda path, v: keystr(path), {'a': (1, 2)})
    {'a': ("['a'][0]", "['a'][1]")}
    """
    keyed, spec = tree_flatten_with_path(tree, is_leaf)
    columns = [[p for p, _ in keyed], [v for _, v in keyed]]
    columns += [spec.flatten_up_to(r) for r in rests]
    return spec.unflatten(func(*xs) for xs in zip(*columns))


def keystr(kp):
    """A key path as text: ``['a'].x[0]``."""
    return "".join(str(k) for k in kp)


def key_get(obj, kp):
    """The value of ``obj`` at key path ``kp``.

    >>> key_get({'a': [1, 2]}, (MappingKey('a'), SequenceKey(1)))
    2
    """
    for k in kp:
        obj = k.get(obj)
    return obj
