"""``ember.utils._pytree``: PyTorch's pytree API over ember's node registry
(``ember._functorch.pytree``): flattening and mapping nested containers, key paths,
registering container types, and ``TreeSpec`` JSON in PyTorch's format (protocol 1), so
specs written by one load in the other.

>>> from ember.utils._pytree import tree_map, tree_structure, treespec_dumps, treespec_loads
>>> tree_map(lambda v: v * 10, ((1, 2), {'k': [3]}))
((10, 20), {'k': [30]})
>>> spec = tree_structure({'a': (1, 2)})
>>> treespec_loads(treespec_dumps(spec)) == spec
True
"""
import dataclasses
import enum
import functools
import importlib
import json
import types
import typing

from .._functorch.pytree import (  # noqa: F401  (PyTorch's names beside __all__)
    NO_SERIALIZED_TYPE_NAME_FOUND, SERIALIZED_TYPE_TO_PYTHON_TYPE, SUPPORTED_NODES,
    SUPPORTED_SERIALIZED_TYPES, GetAttrKey, LeafSpec, MappingKey, SequenceKey, TreeSpec,
    LEAF_SPEC, is_namedtuple, is_namedtuple_class, is_namedtuple_instance, is_structseq,
    is_structseq_class, is_structseq_instance, key_get, keystr, register_node,
    register_pytree_node, tree_flatten, tree_flatten_with_path, tree_is_leaf, tree_iter,
    tree_leaves, tree_leaves_with_path, tree_map, tree_map_, tree_map_with_path,
    tree_structure, tree_unflatten, _namedtuple_deserialize, _namedtuple_serialize)

__all__ = ["PyTree", "Context", "FlattenFn", "UnflattenFn", "DumpableContext",
           "ToDumpableContextFn", "FromDumpableContextFn", "PyTreeSpec", "TreeSpec", "LeafSpec",
           "keystr", "key_get", "register_pytree_node", "tree_is_leaf", "tree_flatten",
           "tree_flatten_with_path", "tree_unflatten", "tree_iter", "tree_leaves",
           "tree_leaves_with_path", "tree_structure", "tree_map", "tree_map_with_path",
           "tree_map_", "tree_map_only", "tree_map_only_", "tree_all", "tree_any",
           "tree_all_only", "tree_any_only", "treespec_dumps", "treespec_loads",
           "treespec_pprint", "is_namedtuple", "is_namedtuple_class", "is_namedtuple_instance",
           "is_structseq", "is_structseq_class", "is_structseq_instance"]

# the type aliases PyTorch exports (annotations only)
Context = typing.Any
PyTree = typing.Any
FlattenFn = typing.Callable[[PyTree], typing.Tuple[typing.List[typing.Any], Context]]
UnflattenFn = typing.Callable[[typing.Iterable[typing.Any], Context], PyTree]
DumpableContext = typing.Any
ToDumpableContextFn = typing.Callable[[Context], DumpableContext]
FromDumpableContextFn = typing.Callable[[DumpableContext], Context]
KeyEntry = typing.Any
KeyPath = typing.Tuple[KeyEntry, ...]
FlattenWithKeysFn = typing.Callable[[PyTree], typing.Tuple[typing.List[typing.Tuple[KeyEntry,
                                                                                   typing.Any]],
                                                           typing.Any]]
PyTreeSpec = TreeSpec
DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL = 1


def _register_namedtuple(cls, *, serialized_type_name):
    """Give namedtuple class ``cls`` a name, so specs holding it can be serialized."""
    register_node(cls, lambda t: (list(t), type(t)), lambda v, c: c(*v),
                  serialized_type_name=serialized_type_name,
                  to_dumpable_context=_namedtuple_serialize,
                  from_dumpable_context=_namedtuple_deserialize,
                  flatten_with_keys_fn=lambda t: ([(GetAttrKey(f), v) for f, v in
                                                   zip(type(t)._fields, t)], type(t)))


def _deregister_pytree_node(cls):
    """Remove ``cls`` from the node registry."""
    del SUPPORTED_NODES[cls]
    entry = SUPPORTED_SERIALIZED_TYPES.pop(cls)
    SERIALIZED_TYPE_TO_PYTHON_TYPE.pop(entry.serialized_type_name, None)


# ---- the _only forms and predicates ----------------------------------------------------------
def map_only(type_or_types_or_pred):
    """A decorator: the function applies to values of the given type(s) (or passing the
    predicate) and returns others unchanged."""
    if isinstance(type_or_types_or_pred, (type, tuple, types.UnionType)):
        def pred(x):
            return isinstance(x, type_or_types_or_pred)
    elif callable(type_or_types_or_pred):
        pred = type_or_types_or_pred
    else:
        raise TypeError("Argument must be a type, a tuple of types, or a callable.")

    def wrapper(func):
        @functools.wraps(func)
        def wrapped(x):
            return func(x) if pred(x) else x
        return wrapped
    return wrapper


def tree_map_only(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """``tree`` with ``func`` applied to the leaves of the given type(s) (or passing the
    predicate).

    >>> tree_map_only(int, lambda v: -v, (1, 'a', [2.5, 3]))
    (-1, 'a', [2.5, -3])
    """
    return tree_map(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_map_only_(type_or_types_or_pred, /, func, tree, is_leaf=None):
    """``tree_map_`` on the leaves of the given type(s) (or passing the predicate)."""
    return tree_map_(map_only(type_or_types_or_pred)(func), tree, is_leaf=is_leaf)


def tree_all(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf.

    >>> tree_all(lambda v: v > 0, [1, (2, 3)])
    True
    """
    return all(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_any(pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf."""
    return any(map(pred, tree_iter(tree, is_leaf=is_leaf)))


def tree_all_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for every leaf of the given type(s).

    >>> tree_all_only(int, lambda v: v > 0, [1, 'a', -2.0])
    True
    """
    return all(pred(x) for x in tree_iter(tree, is_leaf=is_leaf)
               if isinstance(x, type_or_types))


def tree_any_only(type_or_types, /, pred, tree, is_leaf=None):
    """Whether ``pred`` holds for some leaf of the given type(s)."""
    return any(pred(x) for x in tree_iter(tree, is_leaf=is_leaf)
               if isinstance(x, type_or_types))


def _broadcast_to_and_flatten(tree, treespec, is_leaf=None):
    """``tree`` (a prefix of ``treespec``'s trees) repeated over each leaf below it,
    flat; None when it is not a prefix."""
    full = tree_unflatten([0] * treespec.num_leaves, treespec)
    out = []
    try:
        tree_map_(lambda x, sub: out.extend([x] * tree_structure(sub, is_leaf).num_leaves),
                  tree, full, is_leaf=is_leaf)
    except ValueError:
        return None
    return out


# ---- JSON ------------------------------------------------------------------------------------
class _EnumEncoder(json.JSONEncoder):
    """JSON for enum members in contexts, in PyTorch's form (``__enum__``, ``fqn``, ``name``)."""

    def default(self, o):
        if isinstance(o, enum.Enum):
            return {"__enum__": True, "fqn": f"{type(o).__module__}:{type(o).__qualname__}",
                    "name": o.name}
        return super().default(o)


def _enum_object_hook(obj):
    if "__enum__" in obj:
        module_name, _, qualname = obj["fqn"].partition(":")
        cls = importlib.import_module(module_name)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        return cls[obj["name"]]
    return obj


def _to_json(spec):
    if spec.is_leaf():
        return {"type": None, "context": None, "children_spec": []}
    if spec.type not in SUPPORTED_SERIALIZED_TYPES:
        raise NotImplementedError(f"Serializing {spec.type} in pytree is not registered.")
    entry = SUPPORTED_SERIALIZED_TYPES[spec.type]
    if entry.serialized_type_name == NO_SERIALIZED_TYPE_NAME_FOUND:
        raise NotImplementedError(
            f"No registered serialization name for {spec.type} found. Please update your "
            "_register_pytree_node call with a `serialized_type_name` kwarg.")
    if entry.to_dumpable_context is None:
        try:
            context = json.dumps(spec.context, cls=_EnumEncoder)
        except TypeError as e:
            raise TypeError("Unable to serialize context. Please make the context json "
                            "dump-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = entry.to_dumpable_context(spec.context)
    return {"type": entry.serialized_type_name, "context": context,
            "children_spec": [_to_json(c) for c in spec.children()]}


def _from_json(schema):
    if schema["type"] is None and schema["context"] is None and not schema["children_spec"]:
        return LEAF_SPEC
    if schema["type"] not in SERIALIZED_TYPE_TO_PYTHON_TYPE:
        raise NotImplementedError(f"Deserializing {schema['type']} in pytree is not "
                                  "registered.")
    cls = SERIALIZED_TYPE_TO_PYTHON_TYPE[schema["type"]]
    entry = SUPPORTED_SERIALIZED_TYPES[cls]
    if entry.from_dumpable_context is None:
        try:
            context = json.loads(schema["context"], object_hook=_enum_object_hook)
        except TypeError as e:
            raise TypeError("Unable to deserialize context. Please make the context json "
                            "load-able, or register a custom serializer using "
                            "_register_pytree_node.") from e
    else:
        context = entry.from_dumpable_context(schema["context"])
    return TreeSpec(cls, context, [_from_json(c) for c in schema["children_spec"]])


_PROTOCOLS = {1: (_to_json, _from_json)}


def treespec_dumps(treespec, protocol=None):
    """``treespec`` as JSON text (PyTorch's protocol 1: ``[1, {"type": ..., "context": ...,
    "children_spec": [...]}]``).

    >>> treespec_dumps(tree_structure((1,)))
    '[1, {"type": "builtins.tuple", "context": "null", "children_spec": [{"type": null, \
"context": null, "children_spec": []}]}]'
    """
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"Expected `treespec` to be an instance of PyTreeSpec but got item of "
                        f"type {type(treespec)}.")
    if protocol is None:
        protocol = DEFAULT_TREESPEC_SERIALIZATION_PROTOCOL
    if protocol not in _PROTOCOLS:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: "
                         f"{list(_PROTOCOLS)}")
    return json.dumps((protocol, _PROTOCOLS[protocol][0](treespec)), cls=_EnumEncoder)


@functools.lru_cache
def treespec_loads(serialized):
    """The ``TreeSpec`` that ``treespec_dumps`` wrote as ``serialized``."""
    protocol, schema = json.loads(serialized)
    if protocol not in _PROTOCOLS:
        raise ValueError(f"Unknown protocol {protocol}. Available protocols: "
                         f"{list(_PROTOCOLS)}")
    return _PROTOCOLS[protocol][1](schema)


def treespec_pprint(treespec):
    """The tree of ``treespec`` with ``*`` for its leaves.

    >>> treespec_pprint(tree_structure({'a': [1, 2], 'b': (3,)}))
    "{'a': [*, *], 'b': (*,)}"
    """
    return treespec.pprint()


def treespec_leaf():
    """The spec of a leaf."""
    return LEAF_SPEC


def treespec_tuple(iterable=(), /):
    """A tuple spec of the given child specs."""
    children = list(iterable)
    if any(not isinstance(c, TreeSpec) for c in children):
        raise ValueError(f"Expected a tuple of TreeSpec values, got: {children!r}.")
    return TreeSpec(tuple, None, children)


def treespec_dict(mapping=(), /, **kwargs):
    """A dict spec of the given child specs."""
    specs = dict(mapping, **kwargs)
    if any(not isinstance(c, TreeSpec) for c in specs.values()):
        raise ValueError(f"Expected a dictionary of TreeSpec values, got: {specs!r}.")
    return TreeSpec(dict, list(specs), list(specs.values()))


def register_dataclass(cls, *, field_names=None, drop_field_names=None,
                       serialized_type_name=None):
    """Make dataclass ``cls`` a container whose children are its fields (all of them, or
    ``field_names``; ``drop_field_names`` must then be None or default-valued)."""
    if drop_field_names is None:
        drop_field_names = []
    if field_names is None:
        if not dataclasses.is_dataclass(cls):
            raise ValueError(f"field_names must be specified with a list of all fields used "
                             f"to initialize {cls}, as it is not a dataclass.")
        field_names = [f.name for f in dataclasses.fields(cls)
                       if f.init and f.name not in drop_field_names]
    field_names = list(field_names)

    def flatten(obj):
        return [getattr(obj, name) for name in field_names], None

    def unflatten(values, _):
        return cls(**dict(zip(field_names, values)))

    def flatten_with_keys(obj):
        return [(GetAttrKey(name), getattr(obj, name)) for name in field_names], None

    register_pytree_node(cls, flatten, unflatten, serialized_type_name=serialized_type_name,
                         flatten_with_keys_fn=flatten_with_keys)

