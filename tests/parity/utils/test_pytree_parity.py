"""ember.utils._pytree against torch.utils._pytree: specs print, pretty-print and
serialize alike, each side loads the other's JSON, key paths and errors match."""
import collections

import pytest
import torch
import torch.utils._pytree as tp

import ember
import ember.fx.immutable_collections  # noqa: F401  (mod.fx.immutable_collections below)
import ember.utils._pytree as ep
import torch.fx.immutable_collections  # noqa: F401

Point = collections.namedtuple("Point", "x y")


def _trees(mod):
    return [
        [1, (2, 3), {"k": 4}],
        {"n": Point(1, [2, 3]), "t": (4,), "o": collections.OrderedDict(z=5)},
        {"d": collections.defaultdict(list, q=6), "e": collections.deque([7], maxlen=3)},
        (mod.Size([2, 3]), [], {}, ()),
        {"b": 1, "a": [None, 2.5]},
        [mod.fx.immutable_collections.immutable_list([1, 2]),
         mod.fx.immutable_collections.immutable_dict(a=3)],
    ]


@pytest.mark.parametrize("i", range(6))
def test_specs_print_alike(i):
    e_tree, t_tree = _trees(ember)[i], _trees(torch)[i]
    e_leaves, e_spec = ep.tree_flatten(e_tree)
    t_leaves, t_spec = tp.tree_flatten(t_tree)
    assert e_leaves == t_leaves
    assert repr(e_spec) == repr(t_spec)
    if i != 3:  # torch.Size of '*'s prints as a tuple, ember.Size as ember.Size([...])
        assert ep.treespec_pprint(e_spec) == tp.treespec_pprint(t_spec)
    assert (e_spec.num_nodes, e_spec.num_leaves, e_spec.num_children) == \
        (t_spec.num_nodes, t_spec.num_leaves, t_spec.num_children)
    e_paths = [(ep.keystr(p), v) for p, v in ep.tree_leaves_with_path(e_tree)]
    t_paths = [(tp.keystr(p), v) for p, v in tp.tree_leaves_with_path(t_tree)]
    assert e_paths == t_paths


@pytest.mark.parametrize("i", [0, 2, 3, 4, 5])
def test_json_crosses_over(i):
    e_spec = ep.tree_structure(_trees(ember)[i])
    t_spec = tp.tree_structure(_trees(torch)[i])
    e_text, t_text = ep.treespec_dumps(e_spec), tp.treespec_dumps(t_spec)
    assert e_text == t_text
    assert repr(tp.treespec_loads(e_text)) == repr(t_spec)
    assert ep.treespec_loads(t_text) == e_spec


def test_structseq_results():
    x = torch.randn(3, 2)
    e_res, t_res = ember.max(ember.tensor(x.numpy()), 0), torch.max(x, 0)
    assert repr(ep.tree_structure(e_res)) == repr(tp.tree_structure(t_res))
    assert ep.is_structseq(e_res) == tp.is_structseq(t_res)
    assert ep.is_namedtuple(e_res) == tp.is_namedtuple(t_res)
    assert [ep.keystr(p) for p, _ in ep.tree_leaves_with_path(e_res)] == \
        [tp.keystr(p) for p, _ in tp.tree_leaves_with_path(t_res)]


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return type(info.value), str(info.value)


@pytest.mark.parametrize("case", range(6))
def test_errors_alike(case):
    def run(p):
        return [
            lambda: p.tree_map(lambda a, b: a, [1, (2, 3)], [1, [2, 3]]),
            lambda: p.tree_map(lambda a, b: a, {"a": 1, "c": 2}, {"b": 1, "c": 2}),
            lambda: p.tree_map(lambda a, b: a, [1, 2], [1]),
            lambda: p.tree_unflatten([1], p.tree_structure((1, 2))),
            lambda: p.treespec_dumps(p.tree_structure(Point(1, 2))),
            lambda: p.treespec_dumps(p.tree_structure([1]), protocol=3),
        ][case]()
    assert _message(lambda: run(ep)) == _message(lambda: run(tp))


def test_registered_type_everywhere():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

    def keys(p, mod):
        return [(mod.GetAttrKey("a"), p.a), (mod.GetAttrKey("b"), p.b)], ["ctx"]

    for mod in (ep, tp):
        mod.register_pytree_node(Pair, lambda p: ([p.a, p.b], ["ctx"]),
                                 lambda c, _: Pair(*c), serialized_type_name="tests.Pair",
                                 flatten_with_keys_fn=lambda p, m=mod: keys(p, m))
    try:
        tree = {"p": Pair(1, [2, 3])}
        e_spec, t_spec = ep.tree_structure(tree), tp.tree_structure(tree)
        assert repr(e_spec) == repr(t_spec)
        assert ep.treespec_dumps(e_spec) == tp.treespec_dumps(t_spec)
        assert [ep.keystr(p) for p, _ in ep.tree_leaves_with_path(tree)] == \
            [tp.keystr(p) for p, _ in tp.tree_leaves_with_path(tree)]
        assert _message(lambda: ep.register_pytree_node(Pair, None, None)) == \
            _message(lambda: tp.register_pytree_node(Pair, None, None))
        # through the transforms: values and gradients match torch.func's
        x = torch.randn(4, 3, dtype=torch.float64)
        y = torch.randn(4, 3, dtype=torch.float64)
        ex, ey = ember.tensor(x.numpy()), ember.tensor(y.numpy())
        for dtype in (torch.float32, torch.float64):
            edt = getattr(ember, str(dtype).split(".")[1])
            t_out = torch.vmap(lambda p: (p.a * p.b.sin()).sum())(Pair(x.to(dtype), y.to(dtype)))
            e_out = ember.vmap(lambda p: (p.a * p.b.sin()).sum())(Pair(ex.to(edt), ey.to(edt)))
            assert ember.allclose(e_out, ember.tensor(t_out.numpy()))
            t_g = torch.func.grad(lambda p: (p.a * p.b.sin()).sum())(Pair(x.to(dtype), y.to(dtype)))
            e_g = ember.func.grad(lambda p: (p.a * p.b.sin()).sum())(Pair(ex.to(edt), ey.to(edt)))
            assert ember.allclose(e_g.a, ember.tensor(t_g.a.numpy()))
            assert ember.allclose(e_g.b, ember.tensor(t_g.b.numpy()))
    finally:
        ep._deregister_pytree_node(Pair)
        tp._deregister_pytree_node(Pair)


def test_public_names():
    assert ep.__all__ == tp.__all__
    assert all(hasattr(ep, name) for name in tp.__all__)
    for name in ("SequenceKey", "MappingKey", "GetAttrKey", "register_dataclass",
                 "treespec_leaf", "treespec_tuple", "treespec_dict", "map_only"):
        assert hasattr(ep, name) and hasattr(tp, name)
