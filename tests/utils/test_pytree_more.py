"""ember.utils._pytree beyond tree_map: the node registry, key paths, TreeSpec's API,
JSON round trips, the predicates, and registered types inside ember.func and vmap."""
import collections
import dataclasses
import os

import pytest

import ember
import ember.utils._pytree as pytree

Point = collections.namedtuple("Point", "x y")


class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b


def _pair_keys(p):
    return [(pytree.GetAttrKey("a"), p.a), (pytree.GetAttrKey("b"), p.b)], None


@pytest.fixture
def pair_registered():
    pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], None),
                                lambda children, _: Pair(*children),
                                serialized_type_name="tests.Pair",
                                flatten_with_keys_fn=_pair_keys)
    yield
    pytree._deregister_pytree_node(Pair)


def test_flatten_unflatten_all_builtin_nodes():
    tree = {"n": Point(1, [2, 3]), "t": (4,), "o": collections.OrderedDict(z=5),
            "d": collections.defaultdict(list, q=6), "e": collections.deque([7], maxlen=3),
            "s": ember.Size([8, 9])}
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4, 5, 6, 7, 8, 9]
    back = pytree.tree_unflatten(leaves, spec)
    assert back == tree and type(back["o"]) is collections.OrderedDict
    assert back["d"].default_factory is list and back["e"].maxlen == 3
    assert type(back["s"]) is ember.Size and type(back["n"]) is Point
    assert spec.num_leaves == 9 and spec.num_nodes == 17 and spec.num_children == 6


def test_treespec_api():
    spec = pytree.tree_structure([1, (2, 3), {"k": 4}])
    assert spec.type is list and spec.context is None
    assert spec.child(2).context == ["k"] and len(spec.children()) == 3
    with pytest.warns(FutureWarning, match="children_specs` is deprecated"):
        assert spec.children_specs[1] == pytree.tree_structure((0, 0))
    with pytest.warns(FutureWarning, match="isinstance\\(treespec, LeafSpec\\)` is deprecated"):
        leaf = pytree.LeafSpec()
    assert leaf == pytree.tree_structure(1) and leaf.is_leaf() and repr(leaf) == "*"
    assert isinstance(pytree.tree_structure(1), pytree.LeafSpec)
    assert spec.unflatten("abcd") == ["a", ("b", "c"), {"k": "d"}]
    assert hash(spec) == hash(pytree.tree_structure([0, (0, 0), {"k": 0}]))
    with pytest.raises(ValueError, match="`leaves` has length 1 but the spec refers"):
        spec.unflatten([1])


def test_flatten_up_to_and_multi_tree_map():
    spec = pytree.tree_structure((1, 2))
    assert spec.flatten_up_to(([1, 2], {"k": 3})) == [[1, 2], {"k": 3}]
    assert pytree.tree_map(lambda x, y: x + y, [1, (2, 3)], [10, (20, 30)]) == [11, (22, 33)]
    with pytest.raises(ValueError, match="Node type mismatch; expected <class 'tuple'>"):
        pytree.tree_map(lambda x, y: x, [1, (2, 3)], [10, [20, 30]])
    with pytest.raises(ValueError, match=r"Node keys mismatch; missing key\(s\): \{'a'\}"):
        pytree.tree_map(lambda x, y: x, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError, match="Node arity mismatch; expected 2, but got 1"):
        pytree.tree_map(lambda x, y: x, [1, 2], [1])


def test_key_paths():
    tree = {"a": Point(1, [2, 3]), "b": (4,)}
    pairs = pytree.tree_leaves_with_path(tree)
    assert [pytree.keystr(p) for p, _ in pairs] == ["['a'].x", "['a'].y[0]", "['a'].y[1]",
                                                    "['b'][0]"]
    assert all(pytree.key_get(tree, p) == v for p, v in pairs)
    path, _ = pytree.tree_flatten_with_path(tree)[0][1]
    assert path == (pytree.MappingKey("a"), pytree.GetAttrKey("y"), pytree.SequenceKey(0))
    doubled = pytree.tree_map_with_path(lambda p, v: (pytree.keystr(p), 2 * v), tree)
    assert doubled["a"].y[1] == ("['a'].y[1]", 6)


def test_only_forms_and_predicates():
    tree = [1, "a", (2.5, 3)]
    assert pytree.tree_map_only(int, lambda v: -v, tree) == [-1, "a", (2.5, -3)]
    assert pytree.tree_map_only((int, float), lambda v: 0, tree) == [0, "a", (0, 0)]
    seen = []
    assert pytree.tree_map_only_(str, seen.append, tree) is tree and seen == ["a"]
    assert pytree.tree_all(lambda v: v is not None, tree)
    assert pytree.tree_any(lambda v: v == "a", tree)
    assert pytree.tree_all_only(int, lambda v: v > 0, tree)
    assert not pytree.tree_any_only(float, lambda v: v > 3, tree)
    assert pytree.tree_is_leaf(1) and not pytree.tree_is_leaf([1])
    assert pytree.tree_is_leaf((1,), is_leaf=lambda t: isinstance(t, tuple))
    assert pytree.tree_leaves([1, (2, 3)], is_leaf=lambda t: isinstance(t, tuple)) == [1, (2, 3)]
    assert list(pytree.tree_iter({"a": [1, 2]})) == [1, 2]


def test_namedtuple_and_structseq_predicates():
    assert pytree.is_namedtuple(Point) and pytree.is_namedtuple_instance(Point(1, 2))
    assert not pytree.is_namedtuple((1, 2)) and not pytree.is_structseq(Point)
    assert pytree.is_structseq(os.stat_result) and pytree.is_structseq_class(os.stat_result)
    # ember.return_types stand for torch.return_types: structseqs, not namedtuples
    result = ember.max(ember.randn(3, 2), 0)
    assert pytree.is_structseq_instance(result) and not pytree.is_namedtuple(result)
    leaves, spec = pytree.tree_flatten(result)
    assert repr(spec).startswith("TreeSpec(max, None, [*")
    assert type(pytree.tree_unflatten(leaves, spec)) is ember.return_types.max


def test_pprint_and_repr():
    spec = pytree.tree_structure({"a": Point(1, [2]), "b": (3,)})
    assert pytree.treespec_pprint(spec) == "{'a': Point(x=*, y=[*]), 'b': (*,)}"
    assert repr(spec) == ("TreeSpec(dict, ['a', 'b'], [TreeSpec(namedtuple, "
                          f"{Point!r}, [*,\n    TreeSpec(list, None, [*])]),\n"
                          "  TreeSpec(tuple, None, [*])])")


def test_json_round_trips():
    tree = {"l": [1, (2,)], "o": collections.OrderedDict(z=5), "e": collections.deque([7]),
            "d": collections.defaultdict(list, q=6), "s": ember.Size([1])}
    spec = pytree.tree_structure(tree)
    text = pytree.treespec_dumps(spec)
    assert text.startswith('[1, {"type": "builtins.dict", "context": "[\\"l\\"')
    assert pytree.treespec_loads(text) == spec
    with pytest.raises(NotImplementedError, match="because we didn't register a serializ"):
        pytree.treespec_dumps(pytree.tree_structure(Point(1, 2)))
    with pytest.raises(ValueError, match="Unknown protocol 2"):
        pytree.treespec_dumps(spec, protocol=2)
    with pytest.raises(NotImplementedError, match="No registered serialization name"):
        pytree.treespec_dumps(pytree.tree_structure(ember.max(ember.ones(2), 0)))


def test_registered_type(pair_registered):
    with pytest.raises(ValueError, match="is already registered as pytree node"):
        pytree.register_pytree_node(Pair, None, None)
    tree = Pair(1, [2, Pair(3, 4)])
    leaves, spec = pytree.tree_flatten(tree)
    assert leaves == [1, 2, 3, 4]
    assert pytree.tree_map(lambda v: v * 10, tree).b[1].b == 40
    assert pytree.keystr(pytree.tree_leaves_with_path(tree)[2][0]) == ".b[1].a"
    spec2 = pytree.treespec_loads(pytree.treespec_dumps(spec))
    assert spec2 == spec and '"type": "tests.Pair"' in pytree.treespec_dumps(spec)


def test_registered_type_without_keys():
    class Box:
        def __init__(self, v):
            self.v = v
    pytree.register_pytree_node(Box, lambda b: ([b.v], None), lambda c, _: Box(c[0]))
    try:
        assert pytree.tree_leaves(Box([1, 2])) == [1, 2]
        with pytest.raises(ValueError, match="Did not find a flatten_with_keys_fn"):
            pytree.tree_leaves_with_path(Box(1))
    finally:
        pytree._deregister_pytree_node(Box)


def test_registered_type_in_transforms(pair_registered):
    x = ember.randn(4, 3, dtype=ember.float64)
    y = ember.randn(4, 3, dtype=ember.float64)
    out = ember.vmap(lambda p: p.a * p.b)(Pair(x, y))
    assert ember.allclose(out, x * y)
    both = ember.vmap(lambda p: Pair(p.a.sum(), p.b), in_dims=(0,))(Pair(x, y))
    assert isinstance(both, Pair) and both.a.shape == (4,)
    grads = ember.func.grad(lambda p: (p.a * p.b).sum())(Pair(x, y))
    assert isinstance(grads, Pair) and ember.allclose(grads.a, y) and ember.allclose(grads.b, x)
    jac = ember.func.jacrev(lambda p: p.a.sin())(Pair(x[0], y[0]))
    assert isinstance(jac, Pair) and ember.allclose(jac.a, ember.diag(x[0].cos()))


def test_register_dataclass():
    @dataclasses.dataclass
    class Cfg:
        w: object
        b: object

    pytree.register_dataclass(Cfg)
    try:
        assert pytree.tree_leaves(Cfg(1, [2])) == [1, 2]
        assert pytree.tree_map(lambda v: -v, Cfg(1, 2)) == Cfg(-1, -2)
    finally:
        pytree._deregister_pytree_node(Cfg)
