"""The statistics family with ember and NumPy only: values against NumPy or worked by hand,
gradients and second derivatives by ``ember.autograd.gradcheck``/``gradgradcheck`` in
float64, forward-mode AD, vmap, the fake device module, and error paths in PyTorch's words
(texts taken from PyTorch 2.x)."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

NAN = float("nan")


def randn(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def distinct(*shape, seed=0):
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n) * 0.37 - n * 0.1).reshape(shape)


def t(a, grad=False):
    return ember.tensor(a, requires_grad=grad)


# ---- values ---------------------------------------------------------------------------------
def test_bincount_and_histograms():
    assert ember.bincount(t([1, 2, 2, 5])).tolist() == [0, 1, 2, 0, 0, 1]
    w = ember.bincount(t([0, 0, 3]), t([0.5, 0.25, 2.]), minlength=5)
    assert w.dtype is ember.float32 and w.tolist() == [0.75, 0., 0., 2., 0.]
    x = randn(50, seed=1)
    np.testing.assert_array_equal(ember.histc(t(x), 7, -1, 1).numpy(),
                                  np.histogram(x, 7, (-1, 1))[0])
    hist, edges = ember.histogram(t(x), 6)
    np_hist, np_edges = np.histogram(x, 6)
    np.testing.assert_array_equal(hist.numpy(), np_hist)
    np.testing.assert_allclose(edges.numpy(), np_edges)
    b = np.array([-3., -0.5, 0., 0.2, 3.])
    dens = ember.histogram(t(x), t(b), density=True).hist.numpy()
    np.testing.assert_allclose(dens, np.histogram(x, b, density=True)[0])


def test_running_extremes_take_the_later_tie_and_keep_nan():
    v, i = ember.cummax(t([1., 3., 3., 2., NAN, 1., NAN]), 0)
    assert i.tolist() == [0, 1, 2, 2, 4, 4, 6]
    assert np.isnan(v.numpy()[4:]).all() and v.tolist()[:4] == [1., 3., 3., 3.]
    v, i = ember.cummin(t([[2, 2, 1, 1, 3]]), 1)
    assert v.tolist() == [[2, 2, 1, 1, 1]] and i.tolist() == [[0, 1, 2, 3, 3]]


def test_logcumsumexp_is_stable():
    x = np.array([-1000., 0., 1000., 999.])
    got = ember.logcumsumexp(t(x), 0).numpy()
    np.testing.assert_allclose(got, np.logaddexp.accumulate(x))
    y = randn(3, 4, seed=2)
    np.testing.assert_allclose(ember.logcumsumexp(t(y), 0).numpy(),
                               np.log(np.cumsum(np.exp(y), 0)))


def test_nan_reductions():
    x = np.array([[1., NAN, 3.], [NAN, NAN, NAN]])
    np.testing.assert_allclose(ember.nansum(t(x), 1).numpy(), [4., 0.])
    np.testing.assert_allclose(ember.nanmean(t(x), 1).numpy(), [2., NAN])
    assert ember.nansum(t([1, 2])).dtype is ember.int64
    assert ember.nanmedian(t([1., NAN, 3., 2.])).item() == 2.
    assert math.isnan(ember.median(t([1., NAN, 3., 2.])).item())
    v, i = ember.nanmedian(t([[4., NAN, 1., 2.], [NAN, 3., 0., 5.]]), 1)
    assert v.tolist() == [2., 3.] and i.tolist() == [3, 1]
    v, i = ember.median(t([[4., NAN, 1., NAN]]), 1)
    assert math.isnan(v.item()) and i.item() == 1  # the first NaN


def test_quantiles_against_numpy():
    x = randn(4, 7, seed=3)
    q = np.array([0., 0.1, 0.5, 0.77, 1.])
    for mode in ["linear", "lower", "higher", "midpoint", "nearest"]:
        got = ember.quantile(t(x), t(q), 1, interpolation=mode).numpy()
        np.testing.assert_allclose(got, np.quantile(x, q, 1, method=mode), rtol=1e-12)
    x[0, 2] = NAN
    got = ember.nanquantile(t(x), t(q), 1, keepdim=True).numpy()
    np.testing.assert_allclose(got, np.nanquantile(x, q, 1, keepdims=True), rtol=1e-12)
    assert ember.quantile(t(x), 0.5, 1, keepdim=True).shape == (4, 1)
    assert ember.quantile(t(x), t(q), keepdim=True).shape == (5, 1, 1)


def test_selections():
    x = distinct(3, 5, seed=4)
    v, i = ember.kthvalue(t(x), 2, 1)
    np.testing.assert_array_equal(v.numpy(), np.sort(x, 1)[:, 1])
    np.testing.assert_array_equal(i.numpy(), np.argsort(x, 1)[:, 1])
    v, i = ember.mode(t([[3, 1, 2, 1, 3, 0]]), 1)
    assert v.tolist() == [1] and i.tolist() == [3]  # smallest of the most frequent, last seen
    mn, mx = ember.aminmax(t(x), dim=0, keepdim=True)
    np.testing.assert_array_equal(mn.numpy(), x.min(0, keepdims=True))
    np.testing.assert_array_equal(mx.numpy(), x.max(0, keepdims=True))
    assert ember.count_nonzero(t([[0., NAN], [1., 0.]]), 1).tolist() == [1, 1]
    np.testing.assert_array_equal(ember.msort(t(x)).numpy(), np.sort(x, 0))
    assert ember.isin(t([1, 2, 3]), 2.).tolist() == [False, True, False]
    assert ember.isin(3, t([1, 3])).item() is True


def test_cov_corrcoef_trapezoid_renorm():
    x = randn(3, 6, seed=5)
    f, a = np.array([1, 2, 0, 3, 1, 1]), np.abs(randn(6, seed=6))
    np.testing.assert_allclose(ember.cov(t(x)).numpy(), np.cov(x))
    np.testing.assert_allclose(ember.cov(t(x), correction=0, fweights=t(f), aweights=t(a)).numpy(),
                               np.cov(x, ddof=0, fweights=f, aweights=a))
    np.testing.assert_allclose(ember.cov(t(x), fweights=t(f), aweights=t(a)).numpy(),
                               np.cov(x, fweights=f, aweights=a))
    np.testing.assert_allclose(ember.corrcoef(t(x)).numpy(), np.corrcoef(x))
    y, s = randn(2, 5, seed=7), np.sort(randn(5, seed=8))
    np.testing.assert_allclose(ember.trapezoid(t(y), t(s)).numpy(), np.trapezoid(y, s)
                               if hasattr(np, "trapezoid") else np.trapz(y, s))
    np.testing.assert_allclose(ember.trapz(t(y), dx=0.5, dim=0).numpy(),
                               0.5 * (y[0] + y[1]) / 2)
    np.testing.assert_allclose(ember.cumulative_trapezoid(t(y), t(s))[:, -1].numpy(),
                               ember.trapezoid(t(y), t(s)).numpy())
    r = ember.renorm(t([[3., 4.], [0.3, 0.4]]), 2, 0, 1.).numpy()
    np.testing.assert_allclose(r, [[3 / (5 + 1e-7), 4 / (5 + 1e-7)], [0.3, 0.4]])
    z = t([[3., 4.], [0.3, 0.4]])
    assert z.renorm_(2, 0, 1.) is z and abs(z[0].norm().item() - 1) < 1e-6


# ---- gradients ------------------------------------------------------------------------------
GRADCHECKED = {
    "cummax": lambda x: ember.cummax(x, 1).values,
    "cummin": lambda x: ember.cummin(x, 0).values,
    "logcumsumexp": lambda x: ember.logcumsumexp(x, 1),
    "nansum": lambda x: ember.nansum(x, 0),
    "nanmean": lambda x: ember.nanmean(x, 1, keepdim=True),
    "median": lambda x: ember.median(x),
    "median_dim": lambda x: ember.median(x, 1).values,
    "nanmedian_dim": lambda x: ember.nanmedian(x, 0).values,
    "quantile": lambda x: ember.quantile(x, ember.tensor([0.2, 0.5], dtype=x.dtype), 1),
    "nanquantile": lambda x: ember.nanquantile(x, 0.7, 0, interpolation="midpoint"),
    "aminmax": lambda x: ember.aminmax(x, dim=1)[1],
    "kthvalue": lambda x: ember.kthvalue(x, 2, 0).values,
    "mode": lambda x: ember.mode(x, 1).values,
    "msort": lambda x: ember.msort(x),
    "cov": lambda x: ember.cov(x),
    "corrcoef": lambda x: ember.corrcoef(x),
    "trapezoid": lambda x: ember.trapezoid(x, dim=0),
    "cumulative_trapezoid": lambda x: ember.cumulative_trapezoid(x, dx=0.5),
    "renorm": lambda x: ember.renorm(x, 2, 0, 1.),
}


@pytest.mark.parametrize("name", list(GRADCHECKED))
def test_gradcheck(name):
    x = t(distinct(3, 4, seed=9) * 0.3, grad=True)
    assert gradcheck(GRADCHECKED[name], (x,))
    if name not in ("median", "mode", "kthvalue", "msort", "aminmax"):  # piecewise linear
        assert gradgradcheck(GRADCHECKED[name], (x,))


def test_gradcheck_weights_and_sample_points():
    x = t(randn(2, 5, seed=10), grad=True)
    a = t(np.abs(randn(5, seed=11)) + 0.1, grad=True)
    assert gradcheck(lambda x, a: ember.cov(x, aweights=a), (x, a))
    s = t(np.sort(randn(5, seed=12)), grad=True)
    assert gradcheck(lambda x, s: ember.trapezoid(x, s), (x, s))
    assert gradcheck(lambda x, s: ember.cumulative_trapezoid(x, s), (x, s))


def test_whole_tensor_median_shares_its_gradient():
    x = t([1., 2., 2., 5.], grad=True)
    ember.median(x).backward()
    assert x.grad.tolist() == [0., 0.5, 0.5, 0.]
    x = t([1., NAN, NAN, 5.], grad=True)
    ember.median(x).backward()
    assert x.grad.tolist() == [0., 0.5, 0.5, 0.]


def test_forward_mode_and_vmap():
    import ember.autograd.forward_ad as fwAD
    x, v = randn(3, 4, seed=13), randn(3, 4, seed=14)
    with fwAD.dual_level():
        d = fwAD.make_dual(t(x), t(v))
        tangent = fwAD.unpack_dual(ember.logcumsumexp(d, 1)).tangent
    eps = 1e-6
    fd = (ember.logcumsumexp(t(x + eps * v), 1) - ember.logcumsumexp(t(x - eps * v), 1)) / (
        2 * eps)
    np.testing.assert_allclose(tangent.numpy(), fd.numpy(), rtol=1e-5, atol=1e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = ember.vmap(lambda r: ember.quantile(r, 0.3))(t(x))
        got_mode = ember.vmap(lambda r: ember.cummax(r, 0).indices)(t(x))
    np.testing.assert_allclose(got.numpy(), np.quantile(x, 0.3, 1))
    batch = randn(2, 3, 5, seed=15)
    np.testing.assert_allclose(ember.vmap(ember.cov)(t(batch)).numpy(),
                               np.stack([np.cov(b) for b in batch]))
    np.testing.assert_array_equal(got_mode.numpy(), ember.cummax(t(x), 1).indices.numpy())


def test_results_without_gradients():
    x = t([1., 2., 2.], grad=True)
    assert not ember.histc(x, 3).requires_grad
    assert not ember.histogram(x, 3).hist.requires_grad
    assert not ember.count_nonzero(x).requires_grad
    assert not ember.isin(x, x).requires_grad
    assert not ember.cummax(x, 0).indices.requires_grad


# ---- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("fn,kind,message", [
    (lambda: ember.bincount(t([1, -2])), RuntimeError,
     "bincount only supports 1-d non-negative integral inputs."),
    (lambda: ember.bincount(t([1., 2.])), NotImplementedError,
     "\"bincount_cpu\" not implemented for 'Float'"),
    (lambda: ember.histc(t([1, 2])), NotImplementedError,
     "\"histogram_cpu\" not implemented for 'Long'"),
    (lambda: ember.histc(t([1., 2.]), bins=4, min=3, max=1), RuntimeError,
     "torch.histc: max must be larger than min"),
    (lambda: ember.histogram(t([1., 2.]), 0), RuntimeError,
     "torch.histogram(): bins must be > 0, but got 0 for dimension 0"),
    (lambda: ember.logcumsumexp(t([1, 2]), 0), NotImplementedError,
     "\"logcumsumexp_out_cpu\" not implemented for 'Long'"),
    (lambda: ember.nanmean(t([1, 2])), RuntimeError,
     "nanmean(): expected input to have floating point or complex dtype but got Long"),
    (lambda: ember.nanmedian(ember.zeros(0, 3), 0), IndexError,
     "median(): Expected reduction dim 0 to have non-zero size."),
    (lambda: ember.quantile(t([1., 2.]), 1.5), RuntimeError,
     "quantile() q must be in the range [0, 1] but got 1.5"),
    (lambda: ember.quantile(t([1., 2.]), 0.5, interpolation="x"), RuntimeError,
     "quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, but "
     "got x"),
    (lambda: ember.aminmax(ember.zeros(0)), RuntimeError,
     "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
     "identity."),
    (lambda: ember.kthvalue(t([1., 2.]), 3), RuntimeError,
     "kthvalue(): selected number k out of range for dimension 0"),
    (lambda: ember.mode(ember.zeros(0)), IndexError,
     "mode(): Expected reduction dim 0 to have non-zero size."),
    (lambda: ember.isin(t([True]), t([1])), RuntimeError,
     "Unsupported input type encountered for isin(): Bool"),
    (lambda: ember.cov(ember.zeros(2, 2, 2)), RuntimeError,
     "cov(): expected input to have two or fewer dimensions but got an input with 3 "
     "dimensions"),
    (lambda: ember.cov(ember.ones(2, 3), fweights=t([1, -1, 1])), RuntimeError,
     "cov(): fweights cannot be negative"),
    (lambda: ember.trapezoid(ember.ones(2, 3), t([0., 1.])), RuntimeError,
     "trapezoid: There must be one `x` value for each sample point"),
    (lambda: ember.renorm(ember.ones(2, 2), 0, 0, 1), RuntimeError,
     "renorm: non-positive-norm not supported"),
    (lambda: ember.renorm(ember.ones(2), 2, 0, 1), RuntimeError,
     "renorm: input needs at least 2 dimensions, got 1 dimensions"),
])
def test_errors(fn, kind, message):
    with pytest.raises(kind) as info:
        fn()
    assert str(info.value) == message


def test_trapezoid_overloads():
    with pytest.raises(TypeError, match=r"trapezoid\(\) received an invalid combination"):
        ember.trapezoid(ember.ones(3), 2.)
    with pytest.raises(TypeError, match=r"isin\(\) received an invalid combination"):
        ember.isin(1, 2)


def test_cov_warns_without_degrees_of_freedom():
    with pytest.warns(UserWarning, match="degrees of freedom is <= 0"):
        c = ember.cov(t([[1., 2.]]), correction=2)
    assert math.isinf(c.item()) or math.isnan(c.item())
