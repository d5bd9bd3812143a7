"""``x[index] = value`` with autograd, and ``copy_``'s shape errors, vs PyTorch.

PyTorch writes a basic index (ints, slices, None, Ellipsis) through the view -- ``copy_`` or
``fill_`` on ``x[index]`` -- so the result's grad_fn is CopySlices and a leaf gets the "view of
a leaf" error; an advanced index (tensors, lists) goes through ``index_put_``."""
import math

import numpy as np
import pytest
import torch

import ember

from tests.parity.compare import error_of

BASIC = [0, -1, (slice(None), 1), (slice(1, None), 2), (Ellipsis, 3), (0, slice(None, None, 2)),
         (None, 1)]
ADVANCED = [[0, 2], (slice(None), [1, 3])]


def _value(lib, shape, requires_grad):
    if shape is None:
        return 2.5
    n = max(1, math.prod(shape))
    return lib.tensor(np.arange(1.0, n + 1).reshape(shape), requires_grad=requires_grad)


def _run(lib, index, vshape, value_grad):
    base = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
    y = base * 1.0
    v = _value(lib, vshape, value_grad)
    y[index] = v
    (y * lib.tensor(np.linspace(-1.0, 2.0, 12).reshape(3, 4))).sum().backward()
    return (y.grad_fn.name(), y.detach().numpy(), base.grad.numpy(),
            None if vshape is None or not value_grad else v.grad.numpy())


@pytest.mark.parametrize("index", BASIC + ADVANCED, ids=str)
@pytest.mark.parametrize("vshape,value_grad", [(None, False), ((), True), ((1,), True),
                                                ((), False)])
def test_setitem_graph_values_and_gradients(index, vshape, value_grad):
    want = _run(torch, index, vshape, value_grad)
    got = _run(ember, index, vshape, value_grad)
    assert got[0] == want[0]
    for w, g in zip(want[1:], got[1:]):
        if w is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, w)


def test_setitem_broadcast_value_with_leading_ones():
    for lib in (torch, ember):
        y = lib.ones(3, 4, requires_grad=True) * 1
        y[0] = lib.arange(4.0).reshape(1, 1, 4)
        assert y.grad_fn.name() == "torch::autograd::CopySlices"
        np.testing.assert_array_equal(y.detach().numpy()[0], [0, 1, 2, 3])


@pytest.mark.parametrize("call", [
    lambda lib: lib.ones(3, requires_grad=True).__setitem__(0, 5.0),            # view of a leaf
    lambda lib: lib.ones(3, requires_grad=True).__setitem__(lib.tensor([0]), 5.0),  # a leaf
    lambda lib: (lib.ones(3, 4, requires_grad=True) * 1).__setitem__(0, lib.ones(5)),
    lambda lib: (lib.ones(3, 4, requires_grad=True) * 1).__setitem__(0, lib.ones(2, 4)),
    lambda lib: (lib.ones(3, 4, requires_grad=True) * 1).__setitem__((Ellipsis, 2),
                                                                      lib.ones(3, 1)),
    lambda lib: lib.ones(4).copy_(lib.ones(2, 4)),
    lambda lib: lib.ones(2, 4).copy_(lib.ones(3, 1)),
    lambda lib: lib.ones(3, 1).copy_(lib.ones(3, 4)),
    lambda lib: lib.ones(2, 3, 4).copy_(lib.ones(5, 4)),
])
def test_setitem_and_copy_errors(call):
    expected = error_of(lambda: call(torch))
    assert expected is not None
    assert error_of(lambda: call(ember)) == expected
