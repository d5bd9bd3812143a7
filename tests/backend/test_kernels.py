"""The compiled loops of ember.backend.kernels against the NumPy code they replace.

Every check runs the same computation with the kernels on and off
(``kernels.set_enabled``): im2col must give the same bits, col2im the same sums (the same
terms added in the same order; the matmul in front of it may round differently), ReLU the
same bits including NaN, inf and -0.0.
"""
import numpy as np
import pytest

from ember.backend import kernels
from ember._ops import conv as C
from ember._ops.activation_ops import relu_array, relu_grad_array

pytestmark = pytest.mark.skipif(not kernels.available(),
                                reason="ember.backend._kernels was not built")


@pytest.fixture
def numpy_path():
    """Run the block with the compiled kernels off."""
    class Switch:
        def __enter__(self):
            self.previous = kernels.set_enabled(False)

        def __exit__(self, *exc):
            kernels.set_enabled(self.previous)
    return Switch()


def _geom(stride, dilation, pad, in_size, groups=1):
    return C._Geom(stride, dilation, pad, in_size, groups)


# (x shape, kernel size, stride, dilation, padding (lo, hi) per dim, groups)
GEOMETRIES = [
    ((3, 8, 11, 9), (3, 3), (1, 1), (1, 1), ((1, 1), (1, 1)), 1),
    ((2, 8, 12, 12), (3, 3), (2, 2), (1, 1), ((1, 1), (1, 1)), 1),
    ((2, 12, 10, 7), (3, 2), (2, 1), (2, 1), ((2, 0), (0, 1)), 3),
    ((4, 6, 9, 9), (5, 5), (1, 3), (1, 2), ((3, 2), (4, 4)), 2),
    ((2, 10, 17), (4,), (2,), (3,), ((2, 5),), 1),
    ((3, 16, 5, 6), (1, 1), (1, 1), (1, 1), ((0, 0), (0, 0)), 4),
]


def _out_size(shape, ksize, stride, dilation, pad):
    return tuple((s + lo + hi - d * (k - 1) - 1) // st + 1
                 for s, k, st, d, (lo, hi) in zip(shape[2:], ksize, stride, dilation, pad))


@pytest.mark.parametrize("case", GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_im2col_rows_is_the_window_copy(case, dtype, numpy_path):
    shape, ksize, stride, dilation, pad, groups = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    out = _out_size(shape, ksize, stride, dilation, pad)
    lo = tuple(p[0] for p in pad)
    got = kernels.im2col_rows(x, ksize, out, stride, dilation, lo, groups)
    geom = _geom(stride, dilation, pad, shape[2:], groups)
    with numpy_path:
        win = C._window_last(x, ksize, out, geom)          # n, *out, *k, C
    nd = len(ksize)
    win = win.reshape(win.shape[:-1] + (groups, shape[1] // groups))
    perm = (1 + 2 * nd, 0) + tuple(range(1, 1 + 2 * nd)) + (2 + 2 * nd,)
    expected = win.transpose(perm).reshape(groups, shape[0] * int(np.prod(out)), -1)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("case", GEOMETRIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_convolution_gradients_match_the_numpy_path(case, dtype, numpy_path):
    shape, ksize, stride, dilation, pad, groups = case
    rng = np.random.default_rng(1)
    x = rng.standard_normal(shape).astype(dtype)
    w = rng.standard_normal((2 * groups, shape[1] // groups) + ksize).astype(dtype)
    geom = _geom(stride, dilation, pad, shape[2:], groups)
    gy = rng.standard_normal((shape[0], w.shape[0]) + geom.out_size(ksize)).astype(dtype)
    got = C.conv_backward(x, w, gy, geom, need=(True, True, True))
    y = C.conv_forward(x, w, geom)
    with numpy_path:
        expected = C.conv_backward(x, w, gy, geom, need=(True, True, True))
        y_numpy = C.conv_forward(x, w, geom)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(got + (y,), expected + (y_numpy,)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_col2im_adds_the_offsets_in_order():
    # cols holding powers of two per kernel offset: the sums come out exact, and equal the
    # NumPy path's slab additions term for term
    n, c, h, w = 1, 2, 4, 4
    ksize, out, stride, dil, lo = (2, 2), (3, 3), (1, 1), (1, 1), (0, 0)
    k, p = 4, 9
    cols = np.zeros((1, n * p, k * c), dtype=np.float64)
    for j in range(k):
        cols[0, :, j * c:(j + 1) * c] = 2.0 ** j
    dst = np.empty((n, c, h, w))
    strides = (n * p * k * c, p * k * c, k * c, c, 1)
    kernels.col2im(cols, strides, dst, ksize, out, stride, dil, lo, 1)
    # each input pixel (y, x) receives offset (ky, kx) when 0 <= y - ky < 3 and likewise x
    expected = np.zeros((h, w))
    for ky in range(2):
        for kx in range(2):
            expected[ky:ky + 3, kx:kx + 3] += 2.0 ** (ky * 2 + kx)
    np.testing.assert_array_equal(dst[0, 0], expected)
    np.testing.assert_array_equal(dst[0, 1], expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_loops_keep_pytorch_semantics(dtype, numpy_path):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(40_000).astype(dtype)
    x[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.0, -1e-30]
    g = rng.standard_normal(40_000).astype(dtype)
    g[6:9] = [np.nan, np.inf, -np.inf]
    out = relu_array(x)
    grad = relu_grad_array(g, out)
    with numpy_path:
        out_numpy = relu_array(x)
        grad_numpy = relu_grad_array(g, out_numpy)
    # the same bits: NaN stays NaN, -0.0 stays -0.0 (x < 0 is false), a NaN output passes
    # its gradient, an inf gradient where the output is <= 0 gives +0
    np.testing.assert_array_equal(out.view(f"u{out.itemsize}"),
                                  out_numpy.view(f"u{out.itemsize}"))
    np.testing.assert_array_equal(grad.view(f"u{grad.itemsize}"),
                                  grad_numpy.view(f"u{grad.itemsize}"))
    assert np.signbit(out[3]) and np.isnan(out[0]) and out[2] == 0
    assert grad[0] == g[0]


def test_native_for_refuses_what_the_loops_cannot_take():
    a = np.ones((4, 4), np.float32)
    assert kernels.native_for(a)
    assert not kernels.native_for(a.T)                         # not C-contiguous
    assert not kernels.native_for(a, a.astype(np.float64))     # mixed dtypes
    assert not kernels.native_for(a.astype(np.int32))          # not a float (ReLU, col2im)
    assert kernels.native_for(a.astype(np.int32), floats_only=False)  # a copy moves bits
    assert not kernels.native_for(np.ones(4, np.complex64), floats_only=False)
    previous = kernels.set_enabled(False)
    try:
        assert not kernels.native_for(a)
    finally:
        kernels.set_enabled(previous)


def test_buffers_too_small_raise_instead_of_writing_past_them():
    x = np.ones((1, 1, 4, 4), np.float32)
    dims = (1, 1, 4, 4, 1, 2, 2, 3, 3, 1, 1, 1, 1, 0, 0)
    with pytest.raises(ValueError, match="buffer too small"):
        kernels._native.im2col(x, np.empty(5, np.float32), 4, dims, (36, 36, 4, 1, 1))
    with pytest.raises(ValueError, match="buffer too small"):
        kernels._native.col2im(np.empty(5, np.float32), np.empty((1, 1, 4, 4), np.float32),
                               False, dims, (36, 36, 4, 1, 1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lr", [0.0137, 1, 1e-30])
def test_sub_scaled_gives_numpys_bits(dtype, lr):
    rng = np.random.default_rng(3)
    p = rng.standard_normal(10007).astype(dtype)
    g = rng.standard_normal(10007).astype(dtype)
    g[:3] = [np.inf, np.nan, -0.0]
    expected = p.copy()
    expected -= lr * g
    got = p.copy()
    kernels.sub_scaled_(got, lr, g)
    np.testing.assert_array_equal(got.view(np.uint8), expected.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [10007, 1 << 20])  # one call; split over the thread pool
def test_sgd_momentum_gives_numpys_bits(dtype, size):
    import ember
    rng = np.random.default_rng(4)
    p, g, buf = (rng.standard_normal(size).astype(dtype) for _ in range(3))
    g[:3] = [np.inf, np.nan, -0.0]
    lr, momentum = 0.0137, 0.9
    expected_p, expected_buf = p.copy(), buf.copy()
    expected_buf *= momentum
    expected_buf += g
    expected_p -= lr * expected_buf
    previous = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        kernels.sgd_momentum_(p, g, buf, lr, momentum)
        bigger = rng.standard_normal(size).astype(dtype)
        expected_sub = bigger.copy()
        expected_sub -= lr * g
        kernels.sub_scaled_(bigger, lr, g)
    finally:
        ember.set_num_threads(previous)
    np.testing.assert_array_equal(p.view(np.uint8), expected_p.view(np.uint8))
    np.testing.assert_array_equal(buf.view(np.uint8), expected_buf.view(np.uint8))
    np.testing.assert_array_equal(bigger.view(np.uint8), expected_sub.view(np.uint8))


@pytest.mark.parametrize("options", [dict(momentum=0.9), dict(momentum=0.9, weight_decay=1e-3),
                                     dict(momentum=0.9, nesterov=True),
                                     dict(momentum=0.5, dampening=0.1)])
def test_sgd_update_is_the_same_with_and_without_the_loops(options):
    import ember
    results = []
    for native in (True, False):
        previous = kernels.set_enabled(native)
        try:
            ember.manual_seed(0)
            model = ember.nn.Linear(64, 32)
            opt = ember.optim.SGD(model.parameters(), lr=0.05, **options)
            for _ in range(3):
                opt.zero_grad()
                model(ember.ones(8, 64)).square().sum().backward()
                opt.step()
            results.append([p.detach().numpy().copy() for p in model.parameters()]
                           + [opt.state[p]["momentum_buffer"].numpy().copy()
                              for p in model.parameters()])
        finally:
            kernels.set_enabled(previous)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 4, 8, 6), (2, 3, 7, 5)])  # covered; an uncovered tail
def test_max_pool_gradient_matches_the_numpy_path(dtype, shape, numpy_path):
    from ember._ops import pooling as P
    rng = np.random.default_rng(5)
    x = rng.choice([np.nan, -0.0, 0.0, 1.0, -1.0, 2.0, np.inf], size=shape).astype(dtype)
    out = (shape[2] // 2, shape[3] // 2)
    geom = P._TileGeom((2, 2), out, shape)
    _, geom.code, _ = P.tiled_max(x, geom)
    grads = [rng.standard_normal(geom.code.shape).astype(dtype),
             np.full(geom.code.shape, -np.inf, dtype),                 # non-finite: NaN
             np.array(2.5, dtype=dtype)]                               # a broadcast gradient
    for g in grads:
        fast = P.tiled_scatter(g, geom)
        with numpy_path:
            slow = P.tiled_scatter(g, geom)
        np.testing.assert_array_equal(fast, slow)
        assert np.array_equal(np.signbit(fast), np.signbit(slow))  # -0.0 where g < 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
# covered; uncovered tails; rows of 4k windows, of fewer than 4, of 4k + 3 (overlapping blocks)
@pytest.mark.parametrize("shape", [(3, 4, 8, 16), (2, 3, 7, 5), (2, 2, 6, 6), (2, 3, 9, 14),
                                   (1, 2, 1, 8)])
def test_max_pool_forward_matches_the_numpy_path(dtype, shape, numpy_path):
    from ember._ops import pooling as P
    rng = np.random.default_rng(6)
    out = (shape[2] // 2, shape[3] // 2)
    geom = P._TileGeom((2, 2), out, shape)
    # few distinct values: ties everywhere, -0.0 against 0.0 (np.maximum keeps the later one)
    x = rng.choice([-0.0, 0.0, 1.0, -1.0, 2.0, np.inf, -np.inf], size=shape).astype(dtype)
    fast_vals, fast_code, fast_nan = P.tiled_max(x, geom)
    with numpy_path:
        slow_vals, slow_code, slow_nan = P.tiled_max(x, geom)
    assert fast_nan is False and slow_nan is None  # the NumPy path leaves NaNs to its caller
    np.testing.assert_array_equal(fast_vals, slow_vals)
    assert np.array_equal(np.signbit(fast_vals), np.signbit(slow_vals))
    np.testing.assert_array_equal(fast_code, slow_code)
    # a NaN is reported exactly when it lies in a window (the tail is not pooled)
    for flat in rng.integers(0, x.size, 12):
        y = x.copy()
        y.flat[flat] = np.nan
        n, c, r, col = np.unravel_index(flat, shape)
        covered = bool(r < 2 * out[0] and col < 2 * out[1])
        assert P.tiled_max(y, geom)[2] is covered


def test_max_pool_with_nan_takes_the_nan_index_on_either_path(numpy_path):
    import ember
    x = np.arange(2 * 3 * 8 * 8, dtype=np.float32).reshape(2, 3, 8, 8)
    x[1, 2, 4, 5] = np.nan
    fast = ember.nn.functional.max_pool2d(ember.tensor(x), 2, return_indices=True)
    with numpy_path:
        slow = ember.nn.functional.max_pool2d(ember.tensor(x), 2, return_indices=True)
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert np.isnan(fast[0].numpy()[1, 2, 2, 2]) and fast[1].numpy()[1, 2, 2, 2] == 4 * 8 + 5


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_add_rows_gives_np_add_at_bits(dtype):
    """Targets repeated more than the rounds take go through the compiled loop: the same
    additions in the same order as np.add.at (so its bits), whatever the repeats."""
    from ember._ops.indexing import add_rows, _ADD_ROWS_MAX_REPEATS
    rng = np.random.default_rng(0)
    index = rng.integers(0, 5, size=40 * _ADD_ROWS_MAX_REPEATS)
    rows = rng.standard_normal((index.size, 3, 4)).astype(dtype)
    base = rng.standard_normal((5, 3, 4)).astype(dtype)
    expected, got = base.copy(), base.copy()
    np.add.at(expected, index, rows)
    add_rows(got, index, rows)
    assert np.array_equal(got, expected)


def test_add_rows_refuses_indices_out_of_range():
    out = np.zeros((3, 2))
    with pytest.raises(IndexError, match="index 3 out of range"):
        kernels.add_rows(out, np.array([0, 3]), np.ones((2, 2)))
    with pytest.raises(IndexError, match="index -1 out of range"):
        kernels.add_rows(out, np.array([-1]), np.ones((1, 2)))
