"""Tensors, views, shape and indexing ops with ember and NumPy only: finite-difference
gradient checks (float64), second derivatives, view semantics and PyTorch's error wording
(the expected messages were checked against PyTorch 2.13)."""
import re

import numpy as np
import pytest

import ember
from tests.helpers import check_grad, check_second_grad


def arr(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def distinct(*shape, seed=0):
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.37 - 1.3).reshape(shape)


def idx(v):
    return ember.tensor(v)


# ---- finite-difference checks of every differentiable shape/indexing op ---------------------
def _setitem(index, value_from=None):
    def fn(x, *v):
        y = x * 1
        y[index] = v[0] if v else 2.0
        return y
    return fn


def _inplace_view(x, w):
    b = x * 1
    b[:, 1].mul_(w)
    b.view(-1)[2:5].add_(w.sum())
    b.t()[0].zero_()
    return b


GRAD_CASES = {
    "view": (lambda x: x.view(6, 2), [(3, 4)]),
    "view_neg1": (lambda x: x.view(-1, 3), [(3, 4)]),
    "view_as": (lambda x: x.view_as(ember.ones(2, 6)), [(3, 4)]),
    "reshape": (lambda x: x.reshape(2, -1), [(3, 4)]),
    "reshape_noncontig": (lambda x: x.t().reshape(-1), [(3, 4)]),
    "flatten": (lambda x: x.flatten(1), [(2, 3, 2)]),
    "unflatten": (lambda x: x.unflatten(1, (2, -1)), [(3, 4)]),
    "transpose": (lambda x: x.transpose(0, 2), [(2, 3, 2)]),
    "t": (lambda x: x.t(), [(3, 4)]),
    "T": (lambda x: x.T, [(3, 4)]),
    "mT": (lambda x: x.mT, [(2, 3, 2)]),
    "permute": (lambda x: x.permute(1, 2, 0), [(2, 3, 2)]),
    "squeeze": (lambda x: x.squeeze(), [(1, 3, 1)]),
    "squeeze_dim": (lambda x: x.squeeze(0), [(1, 3, 1)]),
    "unsqueeze": (lambda x: x.unsqueeze(1), [(3, 4)]),
    "expand": (lambda x: x.expand(2, 3, 4), [(3, 1)]),
    "expand_as": (lambda x: x.expand_as(ember.ones(3, 4)), [(1, 4)]),
    "narrow": (lambda x: x.narrow(1, 1, 2), [(3, 4)]),
    "select": (lambda x: x.select(0, -1), [(3, 4)]),
    "unbind": (lambda x: ember.stack(x.unbind(1)[::-1]), [(3, 4)]),
    "chunk": (lambda x: x.chunk(2, 1)[1] * x.chunk(2, 1)[0], [(3, 4)]),
    "split_int": (lambda x: x.split(2)[1], [(5, 2)]),
    "split_sizes": (lambda x: x.split([1, 3], 1)[1].exp(), [(2, 4)]),
    "cat": (lambda x, y: ember.cat([x, y, x], -1), [(2, 3), (2, 1)]),
    "stack": (lambda x, y: ember.stack([x, y], 1), [(2, 3), (2, 3)]),
    "flip": (lambda x: x.flip(0, 1), [(3, 4)]),
    "roll": (lambda x: x.roll(1, 1), [(3, 4)]),
    "roll_flat": (lambda x: x.roll(-2), [(3, 4)]),
    "repeat": (lambda x: x.repeat(2, 1, 3), [(2, 2)]),
    "tile": (lambda x: x.tile(2), [(2, 3)]),
    "tril": (lambda x: x.tril(-1), [(3, 4)]),
    "triu": (lambda x: x.triu(1), [(3, 4)]),
    "clone": (lambda x: x.clone(), [(3, 4)]),
    "contiguous": (lambda x: x.t().contiguous(), [(3, 4)]),
    "getitem_basic": (lambda x: x[None, 1:, ::2, ...], [(3, 4)]),
    "getitem_int": (lambda x: x[-1, 2], [(3, 4)]),
    "getitem_mask": (lambda x: x[x > 0], [(3, 4)]),
    "getitem_rows_mask": (lambda x: x[idx([True, False, True])], [(3, 4)]),
    "getitem_repeated": (lambda x: x[[0, 0, 2, 0]], [(3, 4)]),
    "getitem_pairs": (lambda x: x[[0, 2, 0], [1, 1, 1]], [(3, 4)]),
    "getitem_mixed": (lambda x: x[1:, [3, 0, 3]], [(3, 4)]),
    "setitem_scalar": (_setitem((slice(None), 1)), [(3, 4)]),
    "setitem_tensor_bcast": (_setitem(slice(1, None)), [(3, 4), (4,)]),
    "setitem_mask": (_setitem(idx([[True, False, True, False]] * 3)), [(3, 4), (6,)]),
    "setitem_index": (_setitem(idx([2, 0])), [(3, 4), (2, 1)]),
    "inplace_views": (_inplace_view, [(3, 4), (3,)]),
    "gather": (lambda x: x.gather(1, idx([[0, 0], [3, 1], [2, 2]])), [(3, 4)]),
    "scatter": (lambda x, s: x.scatter(0, idx([[2, 0, 1, 0]]), s), [(3, 4), (1, 4)]),
    "scatter_value": (lambda x: x.scatter(1, idx([[1], [0], [3]]), 1.5), [(3, 4)]),
    "scatter_add": (lambda x, s: x.scatter_add(0, idx([[0, 0, 1, 0], [0, 2, 1, 0]]), s),
                    [(3, 4), (2, 4)]),
    "index_select": (lambda x: x.index_select(1, idx([3, 0, 3])), [(3, 4)]),
    "index_add": (lambda x, s: x.index_add(0, idx([2, 2]), s, alpha=-2), [(3, 4), (2, 4)]),
    "masked_select": (lambda x: x.masked_select(idx([True, False, True, True])), [(3, 4)]),
    "take_along_dim": (lambda x: x.take_along_dim(idx([[1], [3], [0]]), 1), [(3, 4)]),
    "take_along_dim_flat": (lambda x: x.take_along_dim(idx([11, 0, 11])), [(3, 4)]),
    "sort": (lambda x: x.sort(1, descending=True).values, [(3, 4)]),
    "topk": (lambda x: x.topk(2, 0, largest=False).values, [(3, 4)]),
    "to_dtype": (lambda x: x.to(ember.float64) * x.double(), [(3,)]),
    "copy_": (lambda x, s: (x * 1).copy_(s) * x, [(2, 3), (3,)]),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_finite_difference(name):
    fn, shapes = GRAD_CASES[name]
    make = distinct if name in ("sort", "topk", "getitem_mask") else arr
    check_grad(fn, *[make(*s, seed=i) for i, s in enumerate(shapes)])


SECOND = {
    "expand_mul": (lambda x: x.expand(2, 3) * x.t().expand(3, 3)[:2], [(1, 3)]),
    "getitem_square": (lambda x: x[[0, 0, 2]] ** 2, [(3, 2)]),
    "gather_exp": (lambda x: x.gather(0, idx([[1, 0], [1, 1]])).exp(), [(2, 2)]),
    "cat_mul": (lambda x, y: ember.cat([x * y, y]).sin(), [(2, 2), (2, 2)]),
    "setitem_sq": (lambda x, v: (lambda y: (y.__setitem__(0, v * v), y * x)[1])(x * 1),
                   [(2, 3), (3,)]),
    "index_select_cube": (lambda x: x.index_select(0, idx([1, 1])) ** 3, [(2, 2)]),
    "transpose_matmul": (lambda x: x.t() @ x, [(3, 2)]),
    "scatter_add_sq": (lambda x, s: x.scatter_add(1, idx([[0, 0]]), s * s) * x, [(1, 2), (1, 2)]),
}


@pytest.mark.parametrize("name", list(SECOND))
def test_second_derivative(name):
    fn, shapes = SECOND[name]
    check_second_grad(fn, *[arr(*s, seed=i) for i, s in enumerate(shapes)])


# ---- view semantics -------------------------------------------------------------------------
def test_view_shares_storage_and_version():
    x = ember.zeros(2, 3)
    v = x.t()[1]
    v[0] = 5.0
    assert x[0, 1].item() == 5.0
    assert x._version == v._version == 1
    assert v._base is x
    assert np.shares_memory(x.numpy(), v.numpy())
    r = x.t().reshape(-1)  # non-contiguous: a copy
    assert not np.shares_memory(x.numpy(), r.numpy())
    assert x.reshape(-1)._base is x


def test_inplace_view_updates_autograd():
    a = ember.tensor(arr(3, 4), requires_grad=True)
    w = ember.tensor(arr(3, seed=1), requires_grad=True)
    b = a * 1
    b[:, 1].mul_(w)
    b.sum().backward()
    expected = np.ones((3, 4))
    expected[:, 1] = w.detach().numpy()
    np.testing.assert_allclose(a.grad.numpy(), expected)
    np.testing.assert_allclose(w.grad.numpy(), a.detach().numpy()[:, 1])
    assert b.grad_fn.name() == "torch::autograd::CopySlices"


def test_detach_shares_version_data_does_not():
    x = ember.ones(3)
    d, dd = x.detach(), x.data
    x.add_(1)
    assert d._version == 1 and dd._version == 0
    assert d.tolist() == [2.0] * 3 and dd.tolist() == [2.0] * 3


def test_legacy_constructor_types():
    t = ember.Tensor(2, 3)
    assert t.shape == (2, 3) and t.dtype is ember.float32
    assert ember.Tensor([1, 2]).tolist() == [1.0, 2.0]
    assert isinstance(ember.LongTensor([1]), ember.LongTensor)
    assert not isinstance(ember.ones(1), ember.LongTensor)


# ---- error paths in PyTorch's wording --------------------------------------------------------
ERRORS = [
    (lambda: ember.ones(3)[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: ember.ones(3)[-4], IndexError,
     "index -4 is out of bounds for dimension 0 with size 3"),
    (lambda: ember.ones(2, 3)[:, 3], IndexError,
     "index 3 is out of bounds for dimension 1 with size 3"),
    (lambda: ember.ones(2, 3)[[0, 2]], IndexError,
     "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: ember.ones(2, 3)[0, 0, 0], IndexError, "too many indices for tensor of dimension 2"),
    (lambda: ember.ones(3)[::-1], ValueError, "step must be greater than zero"),
    (lambda: ember.ones(3)[::0], ValueError, "step must be greater than zero"),
    (lambda: ember.ones(3)[1.5], IndexError,
     "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
     "indices (got float)"),
    (lambda: ember.ones(3)[ember.tensor([1.0])], IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: ember.ones(2, 3)[ember.tensor([True, False, True])], IndexError,
     "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor "
     "[2, 3] at index 0"),
    (lambda: ember.ones(6).view(5), RuntimeError, "shape '[5]' is invalid for input of size 6"),
    (lambda: ember.ones(2, 3).view(-1, 4), RuntimeError,
     "shape '[-1, 4]' is invalid for input of size 6"),
    (lambda: ember.ones(2, 3).view(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda: ember.ones(2, 3).t().view(6), RuntimeError,
     "view size is not compatible with input tensor's size and stride (at least one dimension "
     "spans across two contiguous subspaces). Use .reshape(...) instead."),
    (lambda: ember.ones(2, 3).expand(3, 3), RuntimeError,
     "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
     "dimension 0.  Target sizes: [3, 3].  Tensor sizes: [2, 3]"),
    (lambda: ember.ones(2, 3).expand(4, 3, 4), RuntimeError,
     "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
     "dimension 2.  Target sizes: [4, 3, 4].  Tensor sizes: [2, 3]"),
    (lambda: ember.ones(2, 3).expand(3), RuntimeError,
     "expand(torch.FloatTensor{[2, 3]}, size=[3]): the number of sizes provided (1) must be "
     "greater or equal to the number of dimensions in the tensor (2)"),
    (lambda: ember.cat([ember.ones(2, 3), ember.ones(2, 4)]), RuntimeError,
     "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 for "
     "tensor number 1 in the list."),
    (lambda: ember.cat([ember.ones(2, 3), ember.ones(2, 3), ember.ones(3, 4)], dim=-1),
     RuntimeError, "Sizes of tensors must match except in dimension 1. Expected size 2 but got "
     "size 3 for tensor number 2 in the list."),
    (lambda: ember.cat([ember.ones(2, 3), ember.ones(2)]), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 1"),
    (lambda: ember.cat([]), ValueError, "torch.cat(): expected a non-empty list of Tensors"),
    (lambda: ember.cat([ember.tensor(1.0), ember.tensor(2.0)]), RuntimeError,
     "zero-dimensional tensor (at position 0) cannot be concatenated"),
    (lambda: ember.stack([ember.ones(2, 3), ember.ones(3, 2)]), RuntimeError,
     "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] at "
     "entry 1"),
    (lambda: ember.tensor([1, 2], requires_grad=True), RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    (lambda: ember.zeros(2, dtype=ember.int64, requires_grad=True), RuntimeError,
     "Only Tensors of floating point and complex dtype can require gradients"),
    (lambda: ember.ones(2).item(), RuntimeError,
     "a Tensor with 2 elements cannot be converted to Scalar"),
    (lambda: ember.ones(2, requires_grad=True).numpy(), RuntimeError,
     "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."),
    (lambda: ember.ones(2, 3).gather(0, ember.zeros(2, 3)), RuntimeError,
     "gather(): Expected dtype int32/int64 for index"),
    (lambda: ember.ones(2, 3).gather(0, ember.full((2, 3), 5)), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 2"),
    (lambda: ember.ones(2, 3).gather(1, ember.full((2, 3), -4)), RuntimeError,
     "index -4 is out of bounds for dimension 1 with size 3"),
    (lambda: ember.ones(2, 3).gather(0, ember.zeros(2, dtype=ember.int64)), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    (lambda: ember.ones(2, 3).scatter(0, ember.full((1, 3), 2), 1.0), RuntimeError,
     "index 2 is out of bounds for dimension 0 with size 2"),
    (lambda: ember.ones(2, 3).index_select(0, idx([2])), IndexError, "index out of range in self"),
    (lambda: ember.ones(2, 3).index_select(0, idx([0.0])), RuntimeError,
     "index_select(): Expected dtype int32 or int64 for index"),
    (lambda: ember.ones(2, 3).narrow(1, 2, 2), RuntimeError,
     "start (2) + length (2) exceeds dimension size (3)."),
    (lambda: ember.ones(2, 3).select(1, 3), IndexError,
     "select(): index 3 out of range for tensor of size [2, 3] at dimension 1"),
    (lambda: ember.ones(2, 3).permute(0, 0), RuntimeError,
     "permute(): duplicate dims are not allowed."),
    (lambda: ember.ones(2, 3).squeeze(3), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 3)"),
    (lambda: ember.ones(2, 3).unflatten(1, (2, 2)), RuntimeError,
     "unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 (3) in the input "
     "tensor"),
    (lambda: ember.ones(2, 3).flatten(1, 0), RuntimeError,
     "flatten() has invalid args: start_dim cannot come after end_dim"),
    (lambda: ember.ones(3).t().mT, RuntimeError,
     "tensor.mT is only supported on matrices or batches of matrices. Got 1-D tensor."),
    (lambda: ember.ones(2, 3, 4).t(), RuntimeError,
     "t() expects a tensor with <= 2 dimensions, but self is 3D"),
    (lambda: ember.ones(2, 3).repeat(2), RuntimeError,
     "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
     "tensor"),
    (lambda: ember.ones(3).tril(), RuntimeError, "tril: input tensor must have at least 2 "
                                                 "dimensions"),
    (lambda: ember.ones(2, 3).topk(4), RuntimeError, "selected index k out of range"),
    (lambda: ember.ones(2, 3).split([1, 2]), RuntimeError,
     "split_with_sizes expects split_sizes to sum exactly to 2 (input tensor's size at "
     "dimension 0), but got split_sizes=[1, 2]"),
    (lambda: ember.ones(3).chunk(0), RuntimeError,
     "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda: ember.zeros(-1), RuntimeError, "zeros: Dimension size must be non-negative."),
    (lambda: ember.ones(2, -1), RuntimeError,
     "Trying to create tensor with negative dimension -1: [2, -1]"),
    (lambda: ember.arange(0, -5, 1), RuntimeError,
     "upper bound and lower bound inconsistent with step sign"),
    (lambda: ember.ones(2, 3).view(ember.float64), RuntimeError,
     "self.size(-1) must be divisible by 2 to view Float as Double (different element sizes), "
     "but got 3"),
    (lambda: ember.ones(2, 3).__setitem__(0, ember.ones(2)), RuntimeError,
     "The expanded size of the tensor (3) must match the existing size (2) at non-singleton "
     "dimension 0.  Target sizes: [3].  Tensor sizes: [2]"),
    (lambda: ember.ones(2, 3).__setitem__([0, 1], ember.ones(2)), RuntimeError,
     "shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape "
     "[2, 3]"),
    (lambda: ember.ones(1).resize_(2) if False else ember.ones(2, requires_grad=True).resize_(3),
     RuntimeError, "cannot resize variables that require grad"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_error_messages(i):
    fn, exc, msg = ERRORS[i]
    with pytest.raises(exc, match="^" + re.escape(msg)):
        fn()


def test_requires_grad_method_int_message():
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require "
                                           "gradients$"):
        ember.tensor([1, 2]).requires_grad_()


def test_requires_grad_setter_int_message():
    # torch words the setter differently from requires_grad_()
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex dtype "
                                           "can require gradients$"):
        ember.tensor([1, 2]).requires_grad = True


def test_add_rows_is_np_add_at_bit_for_bit():
    """index_add's row scatter (rounds of distinct targets) against np.add.at: repeated
    indices, many repeats (np.add.at itself), empty, 1-D rows."""
    from ember._ops.indexing import add_rows
    rng = np.random.default_rng(4)
    for n, m, width in [(40, 7, 3), (700, 10000, 16), (30, 2, 5), (0, 3, 2), (9, 4, None)]:
        index = rng.integers(0, m, n)
        rows = rng.standard_normal((n,) if width is None else (n, width)).astype(np.float32)
        start = rng.standard_normal((m,) if width is None else (m, width)).astype(np.float32)
        expected, got = start.copy(), start.copy()
        np.add.at(expected, index, rows)
        add_rows(got, index, rows)
        np.testing.assert_array_equal(got, expected)
