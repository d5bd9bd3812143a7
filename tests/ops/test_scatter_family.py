"""The scatter family (select/slice/diagonal_scatter, index_put, put, masked_scatter,
index_fill, fill_diagonal_, scatter_reduce, index_reduce) with ember and NumPy only: values
against NumPy loops, gradients of both inputs by ``gradcheck``/``gradgradcheck`` in float64
(max/min ties and product zeros included), in-place forms (version counters, graphs, views
of leaves), meta tensors, and error texts (from PyTorch 2.x)."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def t(a, grad=False):
    return ember.tensor(a, requires_grad=grad)


# ---- region writes --------------------------------------------------------------------------
def test_region_scatters_values():
    x, s = randn(3, 4), randn(3, seed=1)
    expected = x.copy()
    expected[:, 2] = s
    np.testing.assert_array_equal(ember.select_scatter(t(x), t(s), 1, -2).numpy(), expected)
    expected = x.copy()
    expected[1::2] = randn(1, 4, seed=2)
    got = ember.slice_scatter(t(x), t(randn(1, 4, seed=2)), 0, 1, None, 2)
    np.testing.assert_array_equal(got.numpy(), expected)
    expected = x.copy()
    np.einsum("ii->i", expected[:, 1:])[...] = s
    np.testing.assert_array_equal(ember.diagonal_scatter(t(x), t(s), 1).numpy(), expected)
    assert ember.select_scatter(t(x), t(s), 1, 0).grad_fn is None


def test_region_scatters_gradients():
    x = t(randn(3, 4), grad=True)
    s1, s2 = t(randn(4, seed=1), grad=True), t(randn(3, 2, seed=2), grad=True)
    s3 = t(randn(2, seed=3), grad=True)
    for fn, src in ((lambda x, s: ember.select_scatter(x, s, 0, 1), s1),
                    (lambda x, s: ember.slice_scatter(x, s, 1, 1, 4, 2), s2),
                    (lambda x, s: ember.diagonal_scatter(x, s, -1), s3)):
        assert gradcheck(fn, (x, src))
        assert gradgradcheck(fn, (x, src))
    assert type(ember.select_scatter(x, s1, 0, 1).grad_fn).__name__ == "SelectScatterBackward0"


# ---- index_put, put ---------------------------------------------------------------------------
def test_index_put_values():
    x = randn(3, 4)
    rows, cols = np.array([0, 2, 0]), np.array([1, 1, 1])
    expected = x.copy()
    np.add.at(expected, (rows, cols), [1.0, 2.0, 3.0])
    got = ember.index_put(t(x), (t(rows), t(cols)), t(np.array([1.0, 2.0, 3.0])), True)
    np.testing.assert_array_equal(got.numpy(), expected)
    mask = np.array([True, False, True])
    expected = x.copy()
    expected[mask] = 7.0
    got = ember.index_put(t(x), [t(mask)], t(np.array(7.0)))
    np.testing.assert_array_equal(got.numpy(), expected)
    expected = x.copy()
    np.add.at(expected, (np.array([0, 2]), np.array([3, 3])), 1.0)
    got = ember.index_put(t(x), (t(mask), t(np.array([3, 3]))), t(np.array(1.0)), True)
    np.testing.assert_array_equal(got.numpy(), expected)


def test_index_put_gradients_and_inplace():
    idx = (t(np.array([0, 2, 0])),)
    x, v = t(randn(3, 2), grad=True), t(randn(2, seed=1), grad=True)
    # without accumulate a repeated index keeps one write, yet PyTorch's gradient of values
    # reads every index: gradcheck with distinct ones
    assert gradcheck(lambda x, v: ember.index_put(x, (t(np.array([2, 0])),), v), (x, v))
    assert gradcheck(lambda x, v: ember.index_put(x, idx, v, True), (x, v))
    assert gradgradcheck(lambda x, v: ember.index_put(x, idx, v, True), (x, v))
    y = x * 1
    version = y._version
    assert y.index_put_(idx, v, accumulate=True) is y
    assert y._version > version and y.grad_fn is not None
    y.sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [3.0, 3.0])  # three rows get v


def test_put():
    x = randn(2, 3)
    expected = x.copy().reshape(-1)
    np.add.at(expected, [0, 5, 0], [1.0, 2.0, 3.0])
    got = ember.put(t(x), t(np.array([0, -1, 0])), t(np.array([1.0, 2.0, 3.0])), True)
    np.testing.assert_array_equal(got.numpy(), expected.reshape(2, 3))
    xs, s = t(x, grad=True), t(randn(2, seed=1), grad=True)
    for acc in (False, True):
        assert gradcheck(lambda x, s: ember.put(x.t(), t(np.array([4, 1])), s, acc), (xs, s))
    y = ember.zeros(2, 3).t()  # a view: the base sees the write
    y.put_(t(np.array([1])), ember.tensor([5.0]))
    assert y[0, 1].item() == 5.0 and y._base[1, 0].item() == 5.0
    with pytest.raises(IndexError, match="out of range: tried to access index 6 on a tensor "
                                         "of 6 elements."):
        ember.put(t(x), t(np.array([6])), ember.tensor([1.0], dtype=ember.float64))


# ---- masked_scatter, index_fill, fill_diagonal_ --------------------------------------------------
def test_masked_scatter():
    x, s = randn(2, 3), randn(7, seed=1)
    mask = np.array([[True, False, True], [False, True, True]])
    expected = x.copy()
    expected[mask] = s[:mask.sum()]
    np.testing.assert_array_equal(ember.masked_scatter(t(x), t(mask), t(s)).numpy(), expected)
    xs, ss = t(x, grad=True), t(s, grad=True)
    assert gradcheck(lambda x, s: ember.masked_scatter(x, t(mask[0]), s), (xs, ss))
    assert gradcheck(lambda x, s: ember.masked_scatter(x[0], t(mask), s), (xs, ss))
    y = xs * 1
    assert y.masked_scatter_(t(mask[1]), ss) is y
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones in "
                                           "mask"):
        ember.masked_scatter(t(x), t(mask), t(s[:2]))


def test_index_fill():
    x = randn(2, 4)
    expected = x.copy()
    expected[:, [0, 3]] = -1.0
    got = ember.index_fill(t(x), 1, t(np.array([0, -1, 0])), -1.0)
    np.testing.assert_array_equal(got.numpy(), expected)
    xs, v = t(x, grad=True), t(np.array(2.0), grad=True)
    assert gradcheck(lambda x, v: ember.index_fill(x, 1, t(np.array([2, 2, 1])), v), (xs, v))
    ember.index_fill(xs, 1, t(np.array([2, 2, 1])), v).sum().backward()
    assert v.grad.item() == 4.0  # two columns of two rows, each counted once
    i = ember.zeros(3, dtype=ember.int32)
    assert i.index_fill_(0, t(np.array([1])), 2.9).tolist() == [0, 2, 0]
    with pytest.raises(IndexError, match=r"index_fill_\(\): Expected dtype int64 for index."):
        ember.index_fill(t(x), 0, ember.tensor([0], dtype=ember.int32), 1)


def test_fill_diagonal():
    for shape, wrap in (((5, 3), False), ((7, 3), True), ((3, 5), True), ((3, 3, 3), False)):
        a = np.zeros(shape)
        if len(shape) == 2:
            np.fill_diagonal(a, 4.0, wrap=wrap)
        else:
            a[np.arange(3), np.arange(3), np.arange(3)] = 4.0
        x = ember.zeros(shape, dtype=ember.float64)
        assert x.fill_diagonal_(4.0, wrap) is x
        np.testing.assert_array_equal(x.numpy(), a)
    leaf = t(randn(3, 3), grad=True)
    y = leaf * 2
    y.fill_diagonal_(0.0)
    y.sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), 2 * (1 - np.eye(3)))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf.fill_diagonal_(1.0)
    with pytest.raises(RuntimeError, match="all dimensions of input must be of equal length"):
        ember.zeros(2, 3, 2).fill_diagonal_(1)


# ---- scatter_reduce, index_reduce ----------------------------------------------------------------
def _scatter_reduce_np(x, index, src, reduce, include_self):
    out = x.copy()
    groups = {}
    for i, s in zip(index, src):
        groups.setdefault(i, []).append(s)
    fn = {"sum": np.sum, "prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}
    for i, vals in groups.items():
        vals = ([x[i]] if include_self else []) + vals
        out[i] = fn[reduce](vals)
    return out


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
def test_scatter_reduce_values_and_gradients(reduce):
    x, src = randn(4), randn(6, seed=1)
    index = np.array([0, 1, 0, 1, 2, 0])
    for include_self in (True, False):
        got = ember.scatter_reduce(t(x), 0, t(index), t(src), reduce, include_self=include_self)
        np.testing.assert_allclose(got.numpy(),
                                   _scatter_reduce_np(x, index, src, reduce, include_self))
        xs, ss = t(x, grad=True), t(src, grad=True)
        fn = lambda x, s: ember.scatter_reduce(x, 0, t(index), s, reduce,  # noqa: E731
                                               include_self=include_self)
        assert gradcheck(fn, (xs, ss))
        assert gradgradcheck(fn, (xs, ss))


def test_scatter_reduce_ties_zeros_and_larger_src():
    x = t(np.array([1.0, 0.0, 3.0]), grad=True)
    src = t(np.array([3.0, 3.0, 0.0, 0.0, 2.0, 7.0]), grad=True)
    index = t(np.array([0, 0, 1, 1, 2, 2]))
    ember.scatter_reduce(x, 0, index, src, "amax").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 1 / 3, 0.0])
    np.testing.assert_allclose(src.grad.numpy(), [0.5, 0.5, 1 / 3, 1 / 3, 0.0, 1.0])
    x.grad = src.grad = None
    ember.scatter_reduce(x, 0, index, src, "prod").sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [9.0, 0.0, 14.0])
    np.testing.assert_allclose(src.grad.numpy(), [3.0, 3.0, 0.0, 0.0, 21.0, 6.0])
    big = t(randn(3, 5), grad=True)
    out = ember.scatter_reduce(ember.zeros(2, 3, dtype=ember.float64), 1,
                               t(np.array([[0, 0], [2, 1]])), big, "sum")
    out.sum().backward()  # src larger than index: the rest gets a zero gradient
    np.testing.assert_array_equal(big.grad.numpy()[:2, :2], np.ones((2, 2)))
    assert big.grad.numpy()[2:].sum() == 0 and big.grad.numpy()[:, 2:].sum() == 0


def test_scatter_reduce_max_alias_and_inplace():
    x, s = t(np.array([1.0, 5.0]), grad=True), t(np.array([3.0, 2.0]))
    y = ember.scatter_reduce(x, 0, t(np.array([0, 0])), s, "max")
    assert y.tolist() == [3.0, 5.0]
    with pytest.raises(RuntimeError, match="Expected 'reduce' to be one of 'sum', 'prod', "
                                           "'mean', 'amax', 'amin' but got max."):
        y.sum().backward()
    z = ember.tensor([1, 2, 3])
    z.scatter_reduce_(0, t(np.array([0, 0, 2])), ember.tensor([4, 5, 6]), "mean",
                      include_self=False)
    assert z.tolist() == [4, 2, 6]  # integer mean: floor division


def test_index_reduce():
    x, src = randn(3, 2), randn(4, 2, seed=1)
    index = np.array([0, 2, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for reduce, fn in (("prod", np.prod), ("mean", np.mean), ("amax", np.max),
                           ("amin", np.min)):
            for include_self in (True, False):
                expected = x.copy()
                for i in set(index):
                    rows = ([x[i]] if include_self else []) + list(src[index == i])
                    expected[i] = fn(np.stack(rows), axis=0)
                got = ember.index_reduce(t(x), 0, t(index), t(src), reduce,
                                         include_self=include_self)
                np.testing.assert_allclose(got.numpy(), expected)
                f = lambda a, b: ember.index_reduce(a, 0, t(index), b, reduce,  # noqa: E731
                                                    include_self=include_self)
                assert gradcheck(f, (t(x, grad=True), t(src, grad=True)))
        with pytest.raises(RuntimeError, match="Expected reduce to be one of prod, mean, amax "
                                               "or amin but got sum."):
            ember.index_reduce(t(x), 0, t(index), t(src), "sum")
        with pytest.raises(IndexError, match="index out of range in self"):
            ember.index_reduce(t(x), 0, t(np.array([0, 3, 0, 0])), t(src), "prod")


def test_meta_tensors():
    m = ember.empty(3, 4, device="meta")
    assert ember.select_scatter(m, ember.empty(4, device="meta"), 0, 0).shape == (3, 4)
    assert ember.diagonal_scatter(m, ember.empty(3, device="meta")).device.type == "meta"
    index = ember.zeros(2, 4, dtype=ember.int64, device="meta")
    assert ember.scatter_reduce(m, 0, index, m, "amax").shape == (3, 4)
