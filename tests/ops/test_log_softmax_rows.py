"""log_softmax over the last dim of a large array runs in blocks of rows on the thread pool:
every row is computed as the unsplit NumPy formula computes it (the same bits, for any thread
count), forward and backward; other layouts take the unsplit path. float32 rows go through
the compiled AVX2 rows (``ember.backend._vector``) where built: within a few ulp of NumPy,
the same bits for any thread count, rows with a NaN or an infinity left to NumPy."""
import numpy as np
import pytest

import ember
from ember.backend import kernels
from ember.backend.parallel import get_num_threads, set_num_threads
from ember._ops import nn_ops

needs_rows = pytest.mark.skipif(kernels._rows is None,
                                reason="ember.backend._vector not built or no AVX2/FMA")


def _reference(x, g, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    out = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return out, g - np.exp(out) * g.sum(axis=axis, keepdims=True)


@pytest.fixture
def numpy_rows():
    """The NumPy code only (the compiled float32 rows are not bitwise NumPy's)."""
    previous = kernels.set_enabled(False)
    yield
    kernels.set_enabled(previous)


@pytest.fixture(params=[1, 2])
def threads(request):
    before = get_num_threads()
    set_num_threads(request.param)
    yield request.param
    set_num_threads(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,dim", [((300, 1100), -1), ((3, 70, 1300), 2),
                                       ((1100, 300), 0), ((4, 1300, 60), 1)])
def test_log_softmax_rows_give_the_unsplit_bits(threads, numpy_rows, dtype, shape, dim):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 5).astype(dtype)
    x.reshape(-1)[:3] = [-np.inf, 1e30 if dtype == np.float64 else 1e30, -1e30]
    g = rng.standard_normal(shape).astype(dtype)
    t = ember.tensor(x, requires_grad=True)
    y = ember.nn.functional.log_softmax(t, dim)
    y.backward(ember.tensor(g))
    with np.errstate(invalid="ignore", over="ignore"):
        out, grad = _reference(x, g, dim)
    np.testing.assert_array_equal(y.detach().numpy(), out)
    np.testing.assert_array_equal(t.grad.numpy(), grad)


def test_small_or_strided_inputs_take_the_unsplit_path(monkeypatch):
    calls = []
    real = nn_ops.parallel_for
    monkeypatch.setattr(nn_ops, "parallel_for", lambda *a, **k: calls.append(a) or real(*a, **k))
    x = ember.randn(8, 5, dtype=ember.float64)
    ember.nn.functional.log_softmax(x, 1)                            # small
    big = ember.randn(1100, 300, dtype=ember.float64)
    ember.nn.functional.log_softmax(big.t(), 1)                      # not contiguous
    ember.nn.functional.log_softmax(big, 0)                          # not the last dim
    assert calls == []
    ember.nn.functional.log_softmax(big, 1)
    assert len(calls) == 1


def _forward_backward(x, g, dim=-1):
    t = ember.tensor(x, requires_grad=True)
    y = ember.nn.functional.log_softmax(t, dim)
    y.backward(ember.tensor(g))
    return y.detach().numpy(), t.grad.numpy()


def _float64_reference(x, g):
    with np.errstate(invalid="ignore", over="ignore"):
        return _reference(x.astype(np.float64), g.astype(np.float64), -1)


@needs_rows
@pytest.mark.parametrize("n", [1, 7, 8, 9, 15, 16, 17, 23, 1000, 10000])
def test_compiled_rows_match_numpy_within_ulps(n):
    """Every row length (tails of 0-7 and 8-15 entries included): the compiled rows are as
    close to the float64 result as NumPy's formula is, up to a few float32 ulps."""
    rng = np.random.default_rng(n)
    rows = max(2, (3 << 20) // (4 * n))  # ~3 MiB: large enough for the row blocks
    x = (rng.standard_normal((rows, n)) * 8).astype(np.float32)
    g = rng.standard_normal((rows, n)).astype(np.float32)
    out, grad = _forward_backward(x, g)
    ref_out, ref_grad = _float64_reference(x, g)
    previous = kernels.set_enabled(False)
    try:
        np_out, np_grad = _forward_backward(x, g)
    finally:
        kernels.set_enabled(previous)
    eps = np.finfo(np.float32).eps
    for got, numpy_got, ref in ((out, np_out, ref_out), (grad, np_grad, ref_grad)):
        scale = np.abs(ref).max(axis=1, keepdims=True) + 1
        err = np.abs(got - ref) / scale
        numpy_err = np.abs(numpy_got - ref) / scale
        assert err.max() <= numpy_err.max() + 4 * eps, (err.max(), numpy_err.max())


@needs_rows
def test_compiled_rows_leave_nonfinite_rows_to_numpy(threads):
    """Rows holding NaN, +inf or -inf (one entry, or all of them) are NumPy's, bit for bit,
    forward and backward; the other rows are the compiled ones'."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((400, 1000)) * 4).astype(np.float32)
    x[3, 5], x[10, 0], x[11, 999], x[12, :] = np.nan, np.inf, -np.inf, -np.inf
    x[13, :] = np.inf
    g = rng.standard_normal((400, 1000)).astype(np.float32)
    g[20, 7] = np.inf  # an infinite gradient in a finite row: the compiled path's arithmetic
    out, grad = _forward_backward(x, g)
    with np.errstate(invalid="ignore", over="ignore"):
        numpy_out, numpy_grad = _reference(x, g, -1)
        numpy_grad_of_out = g - np.exp(out) * g.sum(axis=-1, keepdims=True)
    special = [3, 10, 11, 12, 13]
    np.testing.assert_array_equal(out[special], numpy_out[special])
    np.testing.assert_array_equal(np.isfinite(grad), np.isfinite(numpy_grad_of_out))
    np.testing.assert_array_equal(grad[special], numpy_grad_of_out[special])
    # row 20: sum inf, so -inf everywhere but inf - inf = nan where the inf is, as NumPy
    np.testing.assert_array_equal(grad[20], numpy_grad_of_out[20])
    assert np.isnan(grad[20, 7]) and np.isneginf(np.delete(grad[20], 7)).all()


@needs_rows
def test_compiled_rows_bits_do_not_depend_on_the_threads():
    rng = np.random.default_rng(4)
    x = (rng.standard_normal((700, 3000)) * 6).astype(np.float32)
    g = rng.standard_normal((700, 3000)).astype(np.float32)
    before = get_num_threads()
    try:
        results = []
        for n in (1, 2, 3):
            set_num_threads(n)
            results.append(_forward_backward(x, g))
    finally:
        set_num_threads(before)
    for out, grad in results[1:]:
        np.testing.assert_array_equal(out, results[0][0])
        np.testing.assert_array_equal(grad, results[0][1])


@needs_rows
def test_compiled_exponential_over_its_whole_range():
    """The vector exp seen through the gradient: with grad = (1, 0, ..., 0) a row's sum is 1
    and res[j] = -exp(out[j]) for j > 0. Normal results within 2 ulp of the correctly rounded
    value, denormals within one denormal step, 0 below, inf above float32's range."""
    from ember.backend import _vector as _softmax
    xs = np.concatenate([np.linspace(-110, 90, 200_001), [-103.97, 88.72, 88.73]])
    xs = xs.astype(np.float32)
    n = 1001
    rows = -(-len(xs) // (n - 1))
    out = np.full((rows, n), -1.0, np.float32)
    padded = np.full(rows * (n - 1), -1.0, np.float32)
    padded[:len(xs)] = xs
    out[:, 1:] = padded.reshape(rows, n - 1)
    grad = np.zeros_like(out)
    grad[:, 0] = 1
    res = np.empty_like(out)
    skipped = np.zeros(rows, np.uint8)
    assert _softmax.log_softmax_backward(out, grad, res, n, skipped) == 0
    got = -res[:, 1:].reshape(-1)[:len(xs)]
    with np.errstate(over="ignore"):
        exact = np.exp(xs.astype(np.float64))
        rounded = exact.astype(np.float32)
    tiny = np.finfo(np.float32).tiny
    normal = (rounded >= tiny) & np.isfinite(rounded)
    ulp = np.spacing(rounded[normal])
    assert (np.abs(got[normal] - rounded[normal]) <= 2 * ulp).all()
    sub = rounded < tiny
    if np.float32(1e-45) * np.float32(1) == 0:  # the process flushes denormals to zero
        assert (got[sub] == 0).all()
    else:
        assert (np.abs(got[sub].astype(np.float64) - exact[sub]) <= 2.0 ** -149).all()
    assert (got[xs < -104] == 0).all()
    assert np.isinf(got[np.isinf(rounded)]).all()


@needs_rows
def test_compiled_rows_check_their_buffers():
    from ember.backend import _vector as _softmax
    x = np.zeros((4, 10), np.float32)
    with pytest.raises(ValueError, match="whole rows"):
        _softmax.log_softmax(x, np.empty_like(x), 3, np.zeros(4, np.uint8))
    with pytest.raises(ValueError, match="one skip flag per row"):
        _softmax.log_softmax(x, np.empty_like(x), 10, np.zeros(3, np.uint8))
    with pytest.raises(ValueError, match="different sizes"):
        _softmax.log_softmax_backward(x, x, np.empty((4, 9), np.float32), 10,
                                      np.zeros(4, np.uint8))
