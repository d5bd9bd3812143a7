"""``ember.ops.aten``: one overload object per built-in op, ATen-named, callable."""
import numpy as np
import pytest

import ember
import ember.ops.aten as aten
from ember._ops.primitive import Primitive
from ember.autograd import dispatch


def _primitives():
    found, stack = [], [Primitive]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                stack.append(sub)
    return [c for c in found if not c.__name__.startswith("_")]


def test_every_primitive_has_an_overload_of_its_own():
    overloads = {}
    for cls in _primitives():
        assert cls in dispatch.routes, cls
    for packet in vars(aten).values():
        if isinstance(packet, aten.OpOverloadPacket):
            for name in packet.overloads():
                ov = getattr(packet, name)
                assert isinstance(ov, aten.OpOverload) and ov.overloadpacket is packet
                overloads[str(ov)] = ov.primitive
    assert len(overloads) >= len(_primitives())
    assert overloads["aten.add.Tensor"].__name__ == "Add"
    assert overloads["aten.sum.default"].__name__ == "SumAll"
    assert overloads["aten.sum.dim_IntList"].__name__ == "Sum"


def test_overload_names():
    f = aten.add.Tensor
    assert (str(f), f.__name__, f.name(), f._overloadname, f.namespace) == \
        ("aten.add.Tensor", "add.Tensor", "aten::add.Tensor", "Tensor", "aten")
    assert repr(f) == "<OpOverload(op='aten.add', overload='Tensor')>"
    assert repr(aten.add) == "<OpOverloadPacket(op='aten.add')>" and str(aten.add) == "aten.add"
    assert aten.add.__name__ == "add" and aten.add._qualified_op_name == "aten::add"
    assert f._schema == "aten::add.Tensor(a, b, alpha=1)"
    assert aten.max.default._schema == "aten::max.default(x)"  # the flag is the overload's


def test_unknown_names_raise_attribute_error():
    with pytest.raises(AttributeError, match="The underlying op of 'aten.add' has no overload "
                                             "name 'nope'"):
        aten.add.nope
    with pytest.raises(AttributeError):
        aten.no_such_op


def test_calling_overloads_runs_the_op():
    a, b = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 5.0])
    np.testing.assert_allclose(aten.add.Tensor(a, b, alpha=2).numpy(), [7.0, 12.0])
    np.testing.assert_allclose(aten.mul(a, b).numpy(), [3.0, 10.0])  # the packet: 1st overload
    np.testing.assert_allclose(aten.sin.default(a).numpy(), np.sin([1.0, 2.0]), rtol=1e-6)
    np.testing.assert_allclose(aten.mm.default(a.view(1, 2), b.view(2, 1)).numpy(), [[13.0]])


def test_calling_conventions_translated_from_aten():
    a, b = ember.tensor([1.0, 2.0]), ember.tensor([3.0, 5.0])
    np.testing.assert_allclose(aten.cat.default([a, b], 0).numpy(), [1.0, 2.0, 3.0, 5.0])
    np.testing.assert_allclose(aten.cat.default([a, b]).numpy(), [1.0, 2.0, 3.0, 5.0])
    np.testing.assert_allclose(aten.einsum.default("i,i->", [a, b]).numpy(), 13.0)
    np.testing.assert_allclose(aten.pow.Scalar(2, a).numpy(), [2.0, 4.0])
    assert aten.max.default(b).item() == 5.0 and aten.min.default(b).item() == 3.0
    np.testing.assert_allclose(aten.std.correction(b, None, 1, False).numpy(), np.std([3, 5],
                                                                                     ddof=1))
    m = ember.ones(2, 2)
    np.testing.assert_allclose(aten.triu.default(m, 0).numpy(), np.triu(np.ones((2, 2))))


def test_a_mode_sees_aten_arguments_for_translated_ops():
    from ember.utils._python_dispatch import TorchDispatchMode
    seen = []

    class Spy(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((str(func), args))
            return func(*args, **(kwargs or {}))
    a, b = ember.ones(2), ember.zeros(2)
    with Spy():
        c = ember.cat([a, b])
        m = a.max()
        p = 2 ** a
    assert seen[0][0] == "aten.cat.default" and seen[0][1][0] == [a, b]
    assert seen[0][1][1] == 0
    assert seen[1] == ("aten.max.default", (a,))
    assert seen[2][0] == "aten.pow.Scalar" and seen[2][1][0] == 2 and seen[2][1][1] is a
    np.testing.assert_allclose(c.numpy(), [1, 1, 0, 0])
    assert m.item() == 1.0 and p.tolist() == [2.0, 2.0]


def test_overload_chosen_from_the_arguments():
    x = ember.ones(2)
    route = dispatch.route_of
    assert str(route(ember._ops.elementwise.Pow)((x, 2))[0]) == "aten.pow.Tensor_Scalar"
    assert str(route(ember._ops.elementwise.Pow)((x, x))[0]) == "aten.pow.Tensor_Tensor"
    assert str(route(ember._ops.elementwise.Gt)((x, 0))[0]) == "aten.gt.Scalar"
    assert str(route(ember._ops.elementwise.Gt)((x, x))[0]) == "aten.gt.Tensor"


def test_primitive_defined_later_gets_a_name():
    class ScaleByThree(Primitive):
        @staticmethod
        def forward(ctx, x):
            return x._data * 3

        @staticmethod
        def backward(ctx, grad):
            return grad * 3
    ov, args = dispatch.route_of(ScaleByThree)((ember.ones(1),))
    assert str(ov) == "aten.scale_by_three.default" and aten.scale_by_three.default is ov
    assert ov(ember.ones(1)).item() == 3.0
