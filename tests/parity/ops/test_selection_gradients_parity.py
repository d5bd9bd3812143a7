"""Selections send exact zeros to the side not chosen, even under inf/NaN gradients (where,
masked_fill's value, clamp with tensor bounds); reductions that take one dim refuse a tuple
with PyTorch's TypeError; return types are built from one sequence as PyTorch's structseqs."""
import numpy as np
import torch

import ember
from tests.parity.compare import error_of

BAD = [1.0, float("inf"), float("nan"), 2.0]


def _grads(lib):
    a = lib.ones(4, requires_grad=True)
    b = lib.ones(4, requires_grad=True)
    cond = lib.tensor([True, False, True, False])
    lib.where(cond, a, b).backward(lib.tensor(BAD))
    v = lib.tensor(2.0, requires_grad=True)
    x = lib.ones(4, requires_grad=True)
    x.masked_fill(cond, v).backward(lib.tensor(BAD))
    lo = lib.zeros(4, requires_grad=True)
    hi = lib.full((4,), 0.5, requires_grad=True)
    y = lib.tensor([-1.0, 1.0, 0.2, -3.0], requires_grad=True)
    y.clamp(min=lo, max=hi).backward(lib.tensor(BAD))
    return [t.grad.numpy() for t in (a, b, v, x, lo, hi, y)]


def test_selection_gradients_ignore_the_unchosen_side():
    for e, t in zip(_grads(ember), _grads(torch)):
        np.testing.assert_array_equal(e, t)


def test_single_dim_reductions_refuse_tuples():
    for name in ("argmax", "argmin"):
        e = error_of(lambda: getattr(ember.ones(2, 3), name)((0, 1)))
        t = error_of(lambda: getattr(torch.ones(2, 3), name)((0, 1)))
        assert e == t
    assert error_of(lambda: ember.ones(2, 3).prod((0, 1)))[0] == \
        error_of(lambda: torch.ones(2, 3).prod((0, 1)))[0] == "TypeError"


def test_return_types_take_one_sequence():
    for lib in (torch, ember):
        r = lib.max(lib.tensor([[1.0, 3.0], [4.0, 2.0]]), 1)
        rebuilt = type(r)((r.values * 2, r.indices))
        assert rebuilt.values.tolist() == [6.0, 8.0] and rebuilt.indices.tolist() == [1, 0]
    text = repr(ember.max(ember.tensor([[1.0, 3.0]]), 1))
    assert text == repr(torch.max(torch.tensor([[1.0, 3.0]]), 1)).replace("torch.", "ember.")
