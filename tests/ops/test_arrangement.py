"""The arrangement ops (tensor_split, h/v/dsplit, atleast_nd, the stacks, block_diag,
cartesian_prod, combinations, rot90, flips, diagflat, argwhere, vander, tril/triu_indices)
with ember and NumPy only: values against NumPy or itertools, views where PyTorch returns
views, gradients by ``gradcheck`` in float64 (vander's included, which PyTorch 2.x cannot
compute), forward-mode AD, meta tensors and error texts (from PyTorch 2.x)."""
import itertools

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(a, grad=False):
    return ember.tensor(a, requires_grad=grad)


def test_tensor_split_values_and_views():
    x = ember.arange(7.0)
    parts = ember.tensor_split(x, [2, -2, 10])
    assert [p.tolist() for p in parts] == [[0.0, 1.0], [2.0, 3.0, 4.0], [5.0, 6.0], []]
    parts[0][0] = 9.0  # a view: writes reach the input
    assert x[0].item() == 9.0
    assert [p.shape[1] for p in x.reshape(1, 7).tensor_split(3, dim=1)] == [3, 2, 2]
    assert [p.numel() for p in ember.tensor_split(ember.zeros(2), 4)] == [1, 1, 0, 0]


def test_splits_gradients():
    x = t(randn(4, 6), grad=True)
    assert gradcheck(lambda x: ember.hsplit(x, [1, 4]), (x,))
    assert gradcheck(lambda x: ember.vsplit(x, 2), (x,))
    assert gradcheck(lambda x: ember.dsplit(x.reshape(2, 2, 6), 3), (x,))
    assert gradcheck(lambda x: ember.tensor_split(x, ember.tensor([1, 3]), 1), (x,))


def test_split_errors():
    with pytest.raises(RuntimeError, match="number of sections must be larger than 0, got -1"):
        ember.tensor_split(ember.zeros(3), -1)
    with pytest.raises(RuntimeError, match=r"torch.vsplit attempted to split along dimension 0, "
                                           r"but the size of the dimension 3 is not divisible "
                                           r"by the split_size 2!"):
        ember.vsplit(ember.zeros(3, 2), 2)
    with pytest.raises(RuntimeError, match="dtype of long, but got Int"):
        ember.tensor_split(ember.zeros(3), ember.tensor([1], dtype=ember.int32))


def test_atleast_and_stacks():
    assert ember.atleast_3d(ember.zeros(2, 3)).shape == (2, 3, 1)
    a, b = ember.atleast_2d(ember.tensor(1.0), [ember.zeros(3)][0])
    assert a.shape == (1, 1) and b.shape == (1, 3)
    x, y = randn(2, 3), randn(2, 3, seed=1)
    np.testing.assert_array_equal(ember.hstack([t(x), t(y)]).numpy(), np.hstack([x, y]))
    np.testing.assert_array_equal(ember.vstack([t(x), t(y[0])]).numpy(), np.vstack([x, y[0]]))
    np.testing.assert_array_equal(ember.dstack([t(x), t(y)]).numpy(), np.dstack([x, y]))
    np.testing.assert_array_equal(ember.column_stack([t(x[0]), t(y.T)]).numpy(),
                                  np.column_stack([x[0], y.T]))
    xs = [t(randn(3, seed=i), grad=True) for i in range(2)]
    assert gradcheck(lambda a, b: ember.column_stack([a, b]), xs)
    assert gradcheck(lambda a, b: ember.row_stack((a, b)), xs)


def test_block_diag_values_and_gradient():
    a, b = randn(2, 2), randn(1, 3, seed=1)
    got = ember.block_diag(t(a), t(b), ember.tensor(5.0, dtype=ember.float64))
    expected = np.zeros((4, 6))
    expected[:2, :2], expected[2:3, 2:5], expected[3, 5] = a, b, 5.0
    np.testing.assert_array_equal(got.numpy(), expected)
    assert ember.block_diag(ember.tensor([True]), ember.tensor([2])).dtype is ember.int64
    ins = (t(a, grad=True), t(b, grad=True))
    assert gradcheck(lambda a, b: ember.block_diag(a, b), ins)
    assert gradgradcheck(lambda a, b: ember.block_diag(a, b), ins)


def test_cartesian_prod_and_combinations():
    a, b = [1, 2, 3], [4, 5]
    got = ember.cartesian_prod(ember.tensor(a), ember.tensor(b))
    assert got.tolist() == [list(p) for p in itertools.product(a, b)]
    x = ember.tensor([3, 1, 4, 1])
    for r in range(4):
        for rep, fn in ((False, itertools.combinations),
                        (True, itertools.combinations_with_replacement)):
            expected = [list(c) for c in fn(x.tolist(), r)] if r else []
            assert ember.combinations(x, r, rep).tolist() == expected
    v = t(randn(4), grad=True)
    assert gradcheck(lambda v: ember.combinations(v, 3, True), (v,))
    assert gradcheck(lambda v: ember.cartesian_prod(v, v[:2] * 2), (v,))


def test_rot90_and_flips():
    a = randn(2, 3, 4)
    for k in range(-2, 6):
        np.testing.assert_array_equal(ember.rot90(t(a), k, (2, 0)).numpy(),
                                      np.rot90(a, k, (2, 0)))
    np.testing.assert_array_equal(ember.flipud(t(a)).numpy(), np.flipud(a))
    np.testing.assert_array_equal(t(a).fliplr().numpy(), np.fliplr(a))
    x = t(a, grad=True)
    assert gradcheck(lambda x: ember.rot90(x, 3, [1, 2]), (x,))
    with pytest.raises(RuntimeError, match="expected rotation dims to be different, but got "
                                           "dim0 = 1 and dim1 = -2"):
        ember.rot90(x, 1, [1, -2])


def test_diagflat_argwhere():
    a = randn(2, 2)
    np.testing.assert_array_equal(ember.diagflat(t(a), -1).numpy(), np.diagflat(a, -1))
    assert gradcheck(lambda x: ember.diagflat(x, 2), (t(a, grad=True),))
    m = np.array([[0, 2], [3, 0]])
    np.testing.assert_array_equal(ember.argwhere(t(m)).numpy(), np.argwhere(m))
    assert ember.argwhere(t(m)).dtype is ember.int64


def test_vander_values_and_gradient():
    x = np.array([0.0, 1.5, -2.0])
    for n in (None, 1, 4):
        for increasing in (False, True):
            np.testing.assert_allclose(ember.vander(t(x), n, increasing).numpy(),
                                       np.vander(x, n, increasing))
    assert ember.vander(ember.tensor([True, False])).dtype is ember.int64
    v = t(x, grad=True)
    assert gradcheck(lambda v: ember.vander(v, 4), (v,))
    assert gradgradcheck(lambda v: ember.vander(v, 3, True), (v,))


def test_triangle_indices():
    for row, col, off in [(3, 3, 0), (4, 2, 1), (2, 5, -1), (0, 3, 0)]:
        np.testing.assert_array_equal(ember.tril_indices(row, col, off).numpy(),
                                      np.stack(np.tril_indices(row, off, col)))
        np.testing.assert_array_equal(ember.triu_indices(row, col, off).numpy(),
                                      np.stack(np.triu_indices(row, off, col)))
    assert ember.triu_indices(3, 3, dtype=ember.int32).dtype is ember.int32
    assert ember.tril_indices(3, 3, device="meta").device.type == "meta"
    with pytest.raises(RuntimeError, match="row must be non-negative, got-1"):
        ember.tril_indices(-1, 2)
    with pytest.raises(NotImplementedError, match="\"triu_indices\" not implemented for 'Float'"):
        ember.triu_indices(2, 2, dtype=ember.float32)


def test_forward_ad_and_meta():
    import ember.autograd.forward_ad as fwAD
    x, tx = randn(3, 4), randn(3, 4, seed=1)
    with fwAD.dual_level():
        dual = fwAD.make_dual(t(x), t(tx))
        out = fwAD.unpack_dual(ember.rot90(ember.block_diag(dual, dual[:1]), 1)).tangent
    np.testing.assert_allclose(out.numpy(), np.rot90(_block(tx, tx[:1])))
    m = ember.empty(5, 2, device="meta")
    assert ember.vander(m[:, 0]).shape == (5, 5)
    assert [p.shape for p in ember.hsplit(m, 2)] == [(5, 1), (5, 1)]
    assert ember.column_stack([m, m]).shape == (5, 4)


def _block(a, b):
    out = np.zeros((a.shape[0] + b.shape[0], a.shape[1] + b.shape[1]))
    out[:a.shape[0], :a.shape[1]], out[a.shape[0]:, a.shape[1]:] = a, b
    return out
