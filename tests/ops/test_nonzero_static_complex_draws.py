"""nonzero_static, the in-place functions addmv_ / as_strided_, and complex random draws."""
import math

import pytest

import ember
from ember._functions.storage_dtypes import addmv_, as_strided_


# ---- nonzero_static -------------------------------------------------------------------------
def test_nonzero_static_pads_and_cuts():
    x = ember.tensor([[0, 1], [2, 0]])
    assert ember.nonzero_static(x, size=4).tolist() == [[0, 1], [1, 0], [-1, -1], [-1, -1]]
    assert ember.nonzero_static(x, size=1, fill_value=7).tolist() == [[0, 1]]
    assert x.nonzero_static(size=2, fill_value=0).tolist() == [[0, 1], [1, 0]]
    assert ember.nonzero_static(x.t(), size=3).tolist() == [[0, 1], [1, 0], [-1, -1]]
    assert ember.nonzero_static(x, size=3, fill_value=2 ** 40).tolist()[2] == [2 ** 40] * 2
    r = ember.nonzero_static(x, size=0)
    assert r.shape == (0, 2) and r.dtype is ember.int64


def test_nonzero_static_edge_cases():
    assert ember.nonzero_static(ember.tensor(3.0), size=2).shape == (2, 0)
    assert ember.nonzero_static(ember.tensor([]), size=2).tolist() == [[-1], [-1]]
    assert ember.nonzero_static(ember.zeros(2, 0, 3), size=2).tolist() == [[-1, -1, -1]] * 2
    assert ember.nonzero_static(ember.tensor([True, False]), size=2).tolist() == [[0], [-1]]
    assert ember.nonzero_static(ember.tensor([1 + 1j, 0]), size=1).tolist() == [[0]]
    meta = ember.nonzero_static(ember.ones(2, 2, device="meta"), size=3)
    assert meta.is_meta and meta.shape == (3, 2)
    r = ember.nonzero_static(ember.tensor([1.0, 0.0], requires_grad=True), size=1)
    assert not r.requires_grad


def test_nonzero_static_out_and_errors():
    x = ember.tensor([[0, 1], [2, 0]])
    out = ember.empty(0, dtype=ember.int64)
    assert ember.nonzero_static(x, size=3, out=out) is out
    assert out.tolist() == [[0, 1], [1, 0], [-1, -1]]
    with pytest.raises(RuntimeError, match="nonzero_static: Expected out tensor to have scalar "
                                           "type Long but got scalar typeInt"):
        ember.nonzero_static(x, size=3, out=ember.empty(3, 2, dtype=ember.int32))
    with pytest.raises(RuntimeError, match="'size' must be an non-negative integer"):
        ember.nonzero_static(x, size=-1)
    for bad, name in [(dict(size=2.0), "size"), (dict(size=True), "size"),
                      (dict(size=2, fill_value=2.5), "fill_value"),
                      (dict(size=2, fill_value=None), "fill_value")]:
        with pytest.raises(TypeError, match=f"argument '{name}' must be int"):
            ember.nonzero_static(x, **bad)


# ---- in-place functions ---------------------------------------------------------------------
def test_addmv_and_as_strided_functions():
    x = ember.zeros(2)
    assert addmv_(x, ember.ones(2, 3), ember.ones(3), beta=2, alpha=3) is x
    assert x.tolist() == [9.0, 9.0]
    y = ember.arange(6.0)
    assert as_strided_(y, (2, 2), (1, 2), 1) is y
    assert y.tolist() == [[1.0, 3.0], [2.0, 4.0]]


# ---- complex random draws -------------------------------------------------------------------
N = 20000


def _parts(t):
    r = ember.view_as_real(t)
    return r[..., 0], r[..., 1]


def _close(value, expected, tol):
    return abs(float(value) - expected) < tol


@pytest.mark.parametrize("dtype", [ember.complex64, ember.complex128])
def test_randn_complex_parts_have_variance_one_half(dtype):
    ember.manual_seed(0)
    for t in (ember.randn(N, dtype=dtype), ember.randn_like(ember.zeros(N, dtype=dtype)),
              ember.empty(N, dtype=dtype).normal_()):
        assert t.dtype is dtype
        for part in _parts(t):
            assert _close(part.mean(), 0.0, 0.03)
            assert _close(part.std(), math.sqrt(0.5), 0.03)


def test_normal_complex_mean_and_std():
    ember.manual_seed(0)
    t = ember.zeros(N, dtype=ember.complex64).normal_(1.0, 2.0)
    for part in _parts(t):  # the mean added to both parts, std / sqrt(2) each
        assert _close(part.mean(), 1.0, 0.05) and _close(part.std(), math.sqrt(2), 0.05)
    t = ember.normal(1.0, 2.0, (N,), dtype=ember.complex64)
    for part in _parts(t):
        assert _close(part.mean(), 1.0, 0.05) and _close(part.std(), math.sqrt(2), 0.05)
    t = ember.normal(ember.full((N,), 1 + 2j), 2.0)
    re, im = _parts(t)
    assert t.dtype is ember.complex64
    assert _close(re.mean(), 1.0, 0.05) and _close(im.mean(), 2.0, 0.05)
    assert _close(re.std(), math.sqrt(2), 0.05) and _close(im.std(), math.sqrt(2), 0.05)
    t = ember.normal(ember.full((N,), 1 + 2j), ember.full((N,), 2.0))
    assert t.dtype is ember.complex64 and _close(_parts(t)[1].mean(), 2.0, 0.05)
    with pytest.raises(RuntimeError, match="normal expects standard deviation to be "
                                           "non-complex"):
        ember.normal(ember.zeros(2), ember.ones(2, dtype=ember.complex64))
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0, but found std -1"):
        ember.zeros(2, dtype=ember.complex64).normal_(0, -1.0)


@pytest.mark.parametrize("dtype", [ember.complex64, ember.complex128])
def test_rand_complex_parts_are_uniform(dtype):
    ember.manual_seed(0)
    for t in (ember.rand(N, dtype=dtype), ember.rand_like(ember.zeros(N, dtype=dtype))):
        for part in _parts(t):
            assert 0.0 <= float(part.min()) and float(part.max()) < 1.0
            assert _close(part.mean(), 0.5, 0.02)
    t = ember.zeros(N, dtype=dtype).uniform_(1, 3)
    for part in _parts(t):
        assert 1.0 <= float(part.min()) and float(part.max()) < 3.0
    with pytest.raises(RuntimeError, match="uniform_ expects to return a \\[from, to\\) range, "
                                           "but found from=2 > to=1"):
        ember.zeros(2, dtype=dtype).uniform_(2, 1)


def test_complex_draws_refused_as_pytorch():
    c = ember.zeros(2, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="check_random_bounds handles only integral, "
                                           "floating-point and boolean types"):
        ember.randint(0, 5, (2,), dtype=ember.complex64)
    with pytest.raises(NotImplementedError, match="\"random_kernel_cpu\" not implemented for "
                                                  "'ComplexFloat'"):
        c.random_()
    with pytest.raises(NotImplementedError, match="\"geometric_cpu\" not implemented for "
                                                  "'ComplexFloat'"):
        c.geometric_(0.5)
    with pytest.raises(NotImplementedError, match="\"randperm\" not implemented for "
                                                  "'ComplexFloat'"):
        ember.randperm(3, dtype=ember.complex64)


def test_complex_draws_on_meta_and_with_grad():
    m = ember.randn(2, 3, dtype=ember.complex64, device="meta")
    assert m.is_meta and m.dtype is ember.complex64
    t = ember.randn(2, dtype=ember.cfloat, requires_grad=True)
    assert t.requires_grad and t.dtype is ember.complex64


# ---- torch.embedding_bag (ATen's form) ------------------------------------------------------
def _weight():
    w = ember.arange(12.0, dtype=ember.float64).reshape(4, 3)
    w[3] = ember.tensor([100.0, -5.0, 0.0], dtype=ember.float64)
    return w


def test_embedding_bag_results_and_bookkeeping():
    w, i = _weight(), ember.tensor([0, 2, 1, 3, 3])
    out, offset2bag, bag_size, max_indices = ember.embedding_bag(w, i, ember.tensor([0, 2, 2]),
                                                                  False, 2)
    # bags [0, 2], [], [1, 3, 3]: per column the row of the first maximum, 0 when empty
    assert out.tolist() == [[6.0, 7.0, 8.0], [0.0, 0.0, 0.0], [100.0, 4.0, 5.0]]
    assert offset2bag.tolist() == [0, 0, 2, 2, 2] and bag_size.tolist() == [2, 0, 3]
    assert max_indices.tolist() == [[2, 2, 2], [0, 0, 0], [3, 1, 1]]
    out, offset2bag, bag_size, max_indices = ember.embedding_bag(w, i, ember.tensor([0, 2]),
                                                                  False, 1, False, None, False, 3)
    assert out.tolist() == [[3.0, 4.0, 5.0], [3.0, 4.0, 5.0]]  # padding rows left out
    assert bag_size.tolist() == [2, 1] and max_indices.tolist() == [2, 1]
    # sum of a float32 weight (PyTorch's fast path: no offset2bag), one zero per offset
    out, offset2bag, bag_size, max_indices = ember.embedding_bag(
        w.float(), i, ember.tensor([0, 2, 5]), False, 0, False, None, True)
    assert out.tolist() == [[6.0, 8.0, 10.0], [203.0, -6.0, 5.0]]
    assert offset2bag.tolist() == [] and bag_size.tolist() == [0, 0, 0]
    # float64 (no fast path): offset2bag filled; a weight wanting a gradient: one per bag
    _, offset2bag, bag_size, _ = ember.embedding_bag(
        w.requires_grad_(), i, ember.tensor([0, 2, 5]), False, 0, False, None, True)
    assert offset2bag.tolist() == [0, 0, 1, 1, 1] and bag_size.tolist() == [0, 0]
    r = ember.embedding_bag(w, i.int(), ember.tensor([0, 2]).int(), False, 1)
    assert [t.dtype for t in r[1:]] == [ember.int32] * 3


def test_embedding_bag_gradients():
    i, offsets = ember.tensor([0, 2, 1, 3, 3]), ember.tensor([0, 2])
    for mode in (0, 1, 2):
        w = _weight().requires_grad_()
        assert ember.autograd.gradcheck(
            lambda w: ember.embedding_bag(w, i, offsets, False, mode)[0], (w,))
    psw = ember.rand(5, dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(
        lambda w, p: ember.embedding_bag(w, i, offsets, False, 0, False, p)[0],
        (_weight().requires_grad_(), psw))


def test_embedding_bag_errors():
    w, i, offsets = _weight(), ember.tensor([0, 2, 1]), ember.tensor([0, 2])
    with pytest.raises(RuntimeError, match="`mode` must be sum, mean, or max."):
        ember.embedding_bag(w, i, offsets, False, 3)
    with pytest.raises(TypeError, match="argument 'mode' \\(position 5\\) must be int, not str"):
        ember.embedding_bag(w, i, offsets, False, "sum")
    with pytest.raises(TypeError, match="argument 'offsets' \\(position 3\\) must be Tensor"):
        ember.embedding_bag(w, i, None)
    with pytest.raises(RuntimeError, match="per_sample_weights only supported with "
                                           "mode='sum'"):
        ember.embedding_bag(w, i, offsets, False, 1, False, ember.ones(3))
    with pytest.raises(NotImplementedError, match="scale_grad_by_freq"):
        ember.embedding_bag(w, i, offsets, True, 0)
    with pytest.raises(NotImplementedError, match="1-D indices"):
        ember.embedding_bag(w, i.reshape(1, 3), offsets, False, 0)
