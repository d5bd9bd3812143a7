"""``broadcast_tensors``, ``broadcast_shapes`` and ``Tensor.expand`` raise PyTorch's
exception types and messages (the first mismatching dim from the right, the argument's
index, the tensor's real type name), and agree with torch where they succeed."""
import numpy as np
import pytest
import torch

import ember
from tests.parity.compare import error_of

FAILING = [
    lambda L: L.broadcast_tensors(L.zeros(2, 3), L.zeros(2, 4)),
    lambda L: L.broadcast_tensors(L.zeros(3), L.zeros(4)),
    lambda L: L.broadcast_tensors(L.zeros(2, 3), L.zeros(1, 3), L.zeros(5, 1, 4)),
    lambda L: L.broadcast_tensors(L.zeros(2, 3, 1), L.zeros(4, 3, 5)),
    lambda L: L.broadcast_shapes((2, 3), (2, 4)),
    lambda L: L.broadcast_shapes(3, (4,)),
    lambda L: L.broadcast_shapes((2, 3), [4, 3]),
    lambda L: L.broadcast_shapes((2, 3), (1, 3), (5, 1, 4)),
    lambda L: L.broadcast_shapes((2, -1), (2, 3)),
    lambda L: L.broadcast_shapes((1,), (-2,)),
    lambda L: L.broadcast_shapes(2.5),
    lambda L: L.zeros(2, 3).expand(4, 3),
    lambda L: L.zeros(2, 3).expand(3),
    lambda L: L.zeros(2, 3).expand(-1, -1, 3),
    # where: condition, input and other broadcast in turn
    lambda L: L.where(L.ones(2, 3) > 0, L.ones(4), L.zeros(3)),
    lambda L: L.where(L.ones(2, 3) > 0, L.ones(3), L.zeros(4)),
    lambda L: L.where(L.ones(5) > 0, L.ones(3), L.zeros(3)),
    lambda L: L.where(L.ones(2, 1) > 0, L.ones(3, 4), L.zeros(4)),
    lambda L: L.where(L.ones(3) > 0, L.ones(3), 1.0).where(L.ones(4) > 0, 0.0),
]
TYPES = ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8", "bool",
         "complex64", "complex128"]


def _same_error(make):
    expected = error_of(lambda: make(torch))
    assert expected is not None
    got = error_of(lambda: make(ember))
    assert got == (expected[0], expected[1].replace("torch.Size", "ember.Size"))


@pytest.mark.parametrize("make", FAILING, ids=[str(i) for i in range(len(FAILING))])
def test_errors_match_torch(make):
    _same_error(make)


@pytest.mark.parametrize("dtype", TYPES)
def test_expand_names_the_tensor_type(dtype):
    _same_error(lambda L: L.zeros(2, 3, dtype=getattr(L, dtype)).expand(3))


@pytest.mark.parametrize("shapes", [((2,), (3, 1), (1, 1, 1)), ((), (2,)), ((2, 3), None),
                                    (3, (2, 1)), ((0,), (1,)), ((5, 0, 1), (7,)), ()])
def test_broadcast_shapes_match_torch(shapes):
    assert tuple(ember.broadcast_shapes(*shapes)) == tuple(torch.broadcast_shapes(*shapes))


def test_broadcast_tensors_match_torch():
    arrays = [np.arange(3.0), np.ones((2, 1)), np.full((1, 1, 1), 5.0)]
    outs = [lib.broadcast_tensors(*[lib.tensor(a) for a in arrays]) for lib in (torch, ember)]
    for t, e in zip(*outs):
        assert tuple(e.shape) == tuple(t.shape)
        np.testing.assert_array_equal(e.numpy(), t.numpy())
