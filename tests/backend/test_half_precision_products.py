"""Products of half-precision tensors (float16, bfloat16) on the host: one float32 product,
rounded once to the operands' dtype (``gemm.widened_on_host``), for matmul, linear and
convolutions, forward and backward; device arrays keep their own half-precision call.

The inputs are small integers, so that every float32 sum here is exact (far below 2**24)
whatever the order of its terms, while the results are too large for the half-precision
dtype to hold exactly (float16 holds integers up to 2048, bfloat16 up to 256): the expected
values are the exact sums (NumPy in float64) rounded once to the dtype. Rounding more than
once (a float16 accumulation, a bias added to the rounded product) gives other values."""
import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import ember
import ember.nn.functional as F
from ember.backend import gemm

HALF = ["float16", "bfloat16"]

#: integers up to this size: their products' sums exceed the dtype's exact integers
_RANGE = {"float16": 32, "bfloat16": 16}


def _needs(name):
    if name == "bfloat16" and not getattr(ember.bfloat16, "is_floating_point", False):
        pytest.skip("bfloat16 needs ml_dtypes")


def _ints(shape, name, seed):
    """float64 integers in [-range, range]."""
    r = _RANGE[name]
    return np.random.default_rng(seed).integers(-r, r + 1, size=shape).astype(np.float64)


def _tensor(a, name, requires_grad=False):
    t = ember.tensor(a.astype(np.float32)).to(getattr(ember, name))  # exact: small integers
    return t.requires_grad_(requires_grad)


def _rounded(exact, name):
    """The exact float64 values rounded once to dtype ``name``, as float64."""
    return _tensor(exact, name).double().numpy()


def _assert_rounded_once(got, exact, name):
    assert got.dtype is getattr(ember, name)
    np.testing.assert_array_equal(got.detach().double().numpy(), _rounded(exact, name))


def test_the_inputs_need_rounding():
    """The cases below tell one rounding from more: the exact results are not all
    representable, and rounding twice moves some."""
    a, b, c = _ints((40, 96), "float16", 0), _ints((96, 24), "float16", 1), _ints(24, "float16", 2)
    exact = a @ b + c
    assert (_rounded(exact, "float16") != exact).mean() > 0.3
    assert (_rounded(_rounded(a @ b, "float16") + c, "float16") != _rounded(exact, "float16")).any()


MATMUL_SHAPES = [
    ((40, 96), (96, 24)),
    ((192, 256), (256, 160)),      # large enough for the threaded bands
    ((96,), (96,)),
    ((40, 96), (96,)),
    ((96,), (96, 24)),
    ((3, 40, 96), (3, 96, 24)),
    ((2, 1, 40, 96), (3, 96, 24)),  # broadcast batch dims
    ((3, 40, 96), (96, 24)),        # a stack times one matrix
]


@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("shapes", MATMUL_SHAPES, ids=str)
def test_matmul_is_the_exact_product_rounded_once(name, shapes, transposed):
    _needs(name)
    a, b = _ints(shapes[0], name, 3), _ints(shapes[1], name, 4)
    ta, tb = _tensor(a, name), _tensor(b, name)
    if transposed:  # the same values read through transposes (non-contiguous operands)
        ta = _tensor(np.swapaxes(a, -1, -2).copy(), name).transpose(-1, -2) if a.ndim > 1 else ta
        tb = _tensor(np.swapaxes(b, -1, -2).copy(), name).transpose(-1, -2) if b.ndim > 1 else tb
    _assert_rounded_once(ember.matmul(ta, tb), np.matmul(a, b), name)


@pytest.mark.parametrize("name", HALF)
def test_einsum_is_the_exact_product_rounded_once(name):
    _needs(name)
    a, b = _ints((3, 40, 96), name, 5), _ints((3, 96, 24), name, 6)
    got = ember.einsum("bij,bjk->bik", _tensor(a, name), _tensor(b, name))
    _assert_rounded_once(got, np.einsum("bij,bjk->bik", a, b), name)


@pytest.mark.parametrize("name", HALF)
def test_linear_adds_the_bias_before_the_one_rounding(name):
    _needs(name)
    x, w, b = _ints((40, 96), name, 7), _ints((24, 96), name, 8), _ints(24, name, 9)
    got = F.linear(_tensor(x, name), _tensor(w, name), _tensor(b, name))
    _assert_rounded_once(got, x @ w.T + b, name)


def test_float16_linear_gradients_are_rounded_once():
    name = "float16"
    x, w, b = _ints((40, 96), name, 10), _ints((24, 96), name, 11), _ints(24, name, 12)
    g = _ints((40, 24), name, 13)
    tx, tw, tb = (_tensor(v, name, True) for v in (x, w, b))
    F.linear(tx, tw, tb).backward(_tensor(g, name))
    _assert_rounded_once(tx.grad, g @ w, name)
    _assert_rounded_once(tw.grad, g.T @ x, name)
    _assert_rounded_once(tb.grad, g.sum(0), name)


def test_float16_linear_bias_gradient_is_summed_once():
    """The bias gradient sums the output gradient's rows in float32 (float16 running sums of
    these rows would round at every add past 2048)."""
    name = "float16"
    g = np.random.default_rng(24).integers(-1000, 1001, size=(40, 24)).astype(np.float64)
    tx, tw, tb = (_tensor(np.zeros(shape), name, True) for shape in ((40, 96), (24, 96), 24))
    F.linear(tx, tw, tb).backward(_tensor(g, name))
    _assert_rounded_once(tb.grad, g.sum(0), name)


def test_float16_matmul_gradients_are_rounded_once():
    name = "float16"
    a, b, g = _ints((40, 96), name, 14), _ints((96, 24), name, 15), _ints((40, 24), name, 16)
    ta, tb = _tensor(a, name, True), _tensor(b, name, True)
    (ta @ tb).backward(_tensor(g, name))
    _assert_rounded_once(ta.grad, g @ b.T, name)
    _assert_rounded_once(tb.grad, a.T @ g, name)


def _conv2d(x, w, pad):
    """Cross-correlation in float64 (NumPy): y[n, o] = sum over c, i, j of x * w."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(xp, w.shape[2:], axis=(2, 3))       # n, c, h, w, kh, kw
    return np.einsum("nchwij,ocij->nohw", windows, w)


def _conv2d_grads(x, w, g, pad):
    """The input and weight gradients of ``_conv2d`` for the output gradient ``g``."""
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    windows = sliding_window_view(xp, w.shape[2:], axis=(2, 3))
    gw = np.einsum("nohw,nchwij->ocij", g, windows)
    gxp = np.zeros_like(xp)
    h, wd = g.shape[2:]
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            gxp[:, :, i:i + h, j:j + wd] += np.einsum("nohw,oc->nchw", g, w[:, :, i, j])
    return gxp[:, :, pad:xp.shape[2] - pad, pad:xp.shape[3] - pad], gw


# 5x5 kernels: ember's Winograd path (3x3) transforms with fractions, so its float32 sums of
# integers are not exact, and an exact tie would round either way; it is compared with
# PyTorch on random values in tests/parity/ops/test_half_products.py
@pytest.mark.parametrize("name", HALF)
@pytest.mark.parametrize("channels", [1, 16], ids=["short-patch", "rows"])
def test_conv2d_is_the_exact_correlation_rounded_once(name, channels):
    _needs(name)
    x, w = _ints((6, channels, 9, 9), name, 17), _ints((8, channels, 5, 5), name, 18)
    got = F.conv2d(_tensor(x, name), _tensor(w, name), padding=2)
    _assert_rounded_once(got, _conv2d(x, w, 2), name)


@pytest.mark.parametrize("channels", [1, 16], ids=["short-patch", "rows"])
def test_float16_conv2d_gradients_are_rounded_once(channels):
    name = "float16"
    x, w = _ints((6, channels, 9, 9), name, 19), _ints((8, channels, 5, 5), name, 20)
    g = _ints((6, 8, 9, 9), name, 21) / 4  # smaller: the weight gradient sums 486 terms
    tx, tw = _tensor(x, name, True), _tensor(w, name, True)
    F.conv2d(tx, tw, padding=2).backward(_tensor(g, name))
    gx, gw = _conv2d_grads(x, w, g, 2)
    _assert_rounded_once(tx.grad, gx, name)
    _assert_rounded_once(tw.grad, gw, name)


def test_float16_conv_transpose2d_is_the_input_gradient_rounded_once():
    name = "float16"
    g, w = _ints((6, 8, 9, 9), name, 22), _ints((8, 16, 5, 5), name, 23)
    got = F.conv_transpose2d(_tensor(g, name), _tensor(w, name), padding=2)
    gx, _ = _conv2d_grads(np.zeros((6, 16, 9, 9)), w, g, 2)
    _assert_rounded_once(got, gx, name)


def test_widened_on_host_takes_numpy_half_arrays_of_one_dtype():
    f16, f32 = np.ones(3, np.float16), np.ones(3, np.float32)
    assert gemm.widened_on_host(f16, f16)
    assert not gemm.widened_on_host(f32, f32)
    assert not gemm.widened_on_host(f16, f32)
    assert not gemm.widened_on_host(np.ones(3, np.int16))
    meta = ember.ones(3, dtype=ember.float16, device="meta")._data
    assert not gemm.widened_on_host(meta, meta)  # meta arrays have no values to compute


def test_half_products_on_device_arrays_stay_in_half(fake_cuda, monkeypatch):
    """On a device module (a stand-in for CuPy here) the product is the module's own call
    on the float16 arrays (cuBLAS takes float16 itself), not a float32 copy."""
    from tests.backend import fake_cuda as fake
    seen = []
    module_matmul = fake.FAKE_CUDA.matmul

    def matmul(a, b, *args, **kwargs):
        seen.append((a.dtype, b.dtype))
        return module_matmul(a, b, *args, **kwargs)
    monkeypatch.setattr(fake.FAKE_CUDA, "matmul", matmul)
    a = ember.ones(4, 3, dtype=ember.float16, device="cuda")
    b = ember.ones(3, 2, dtype=ember.float16, device="cuda")
    out = a @ b
    assert out.dtype is ember.float16 and out.device.type == "cuda"
    assert seen == [(np.dtype(np.float16), np.dtype(np.float16))]


def test_bfloat16_products_on_device_arrays_stay_in_bfloat16(fake_cuda):
    """A module whose bfloat16 products come back float32 (ml_dtypes' NumPy loops, behind
    the stand-in here) gets them rounded to bfloat16, as PyTorch returns them."""
    a = ember.randn(4, 3, dtype=ember.float64).to(ember.bfloat16).to("cuda")
    b = ember.randn(3, 2, dtype=ember.float64).to(ember.bfloat16).to("cuda")
    for out in (a @ b, ember.addmm(b[:1].expand(4, 2), a, b),
                a.unsqueeze(0).expand(2, 4, 3) @ b):
        assert out.dtype is ember.bfloat16 and out.device.type == "cuda"
    expected = (a.cpu().float() @ b.cpu().float()).to(ember.bfloat16)
    assert ember.equal((a @ b).cpu(), expected)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_addmm_and_baddbmm_combine_in_float32_and_round_once(name):
    """PyTorch's CPU addmm/baddbmm accumulate and combine beta * input + alpha * product
    in float32; rounding the product, the scaling and the sum separately differs."""
    dt = getattr(ember, name)
    i, a, b = (ember.randn(16, 16, dtype=ember.float64).to(dt) for _ in range(3))
    expected = (0.7 * i.double() + 1.3 * (a.double() @ b.double())).float().to(dt)
    assert ember.equal(ember.addmm(i, a, b, beta=0.7, alpha=1.3), expected)
    got = ember.baddbmm(i[None], a[None], b[None], beta=0.7, alpha=1.3)[0]
    assert ember.equal(got, expected)
