"""bfloat16 takes part in autograd as PyTorch's does: bfloat16 leaves require grad, casts to
and from it record ``ToCopyBackward0`` (the gradient comes back in the source's dtype), ops on
bfloat16 data record their nodes (under the compiled apply and the Python one), a small MLP
trains in bfloat16, and reductions accumulate in float32 (a bfloat16 running sum stalls at
256). Expected values come from NumPy (bfloat16 rounding from ml_dtypes); integer tensors
keep PyTorch's errors. Parity with PyTorch itself: tests/parity/ops/test_bfloat16_parity.py.
"""
import warnings

import numpy as np
import pytest

import ember
from ember._ops import primitive

ml_dtypes = pytest.importorskip("ml_dtypes")  # ember's bfloat16 arrays

BF16 = np.dtype(ml_dtypes.bfloat16)


def bf16(a):
    """``a`` rounded to bfloat16, as float32 (the values a bfloat16 tensor holds)."""
    return np.asarray(a, np.float32).astype(BF16).astype(np.float32)


def values(t):
    return t.detach().float().numpy()


@pytest.fixture(params=[True, False], ids=["native-apply", "python-apply"])
def apply_path(request):
    """Each test under the compiled apply (ember/_ops/_apply.c) and the Python one."""
    old = primitive.set_native_apply(request.param)
    yield request.param
    primitive.set_native_apply(old)


# ---- leaves ------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: ember.ones(2, 3, dtype=ember.bfloat16, requires_grad=True),
    lambda: ember.zeros(4, dtype=ember.bfloat16, requires_grad=True),
    lambda: ember.empty(4, dtype=ember.bfloat16, requires_grad=True),
    lambda: ember.full((2,), 1.5, dtype=ember.bfloat16, requires_grad=True),
    lambda: ember.tensor([1.0, 2.0], dtype=ember.bfloat16, requires_grad=True),
    lambda: ember.randn(3, dtype=ember.bfloat16, requires_grad=True),
    lambda: ember.rand(3, dtype=ember.bfloat16, requires_grad=True),
    lambda: ember.ones(3, dtype=ember.bfloat16).requires_grad_(),
    lambda: ember.zeros_like(ember.ones(3), dtype=ember.bfloat16, requires_grad=True),
], ids=["ones", "zeros", "empty", "full", "tensor", "randn", "rand", "requires_grad_",
        "zeros_like"])
def test_bfloat16_leaves_require_grad(make):
    x = make()
    assert x.dtype is ember.bfloat16
    assert x.requires_grad and x.is_leaf and x.grad_fn is None


def test_requires_grad_setter_and_clearing():
    x = ember.ones(2, dtype=ember.bfloat16)
    x.requires_grad = True
    assert x.requires_grad
    x.requires_grad_(False)
    assert not x.requires_grad


def test_parameter_of_bfloat16():
    p = ember.nn.Parameter(ember.ones(3, dtype=ember.bfloat16))
    assert p.requires_grad and p.dtype is ember.bfloat16


# ---- casts -------------------------------------------------------------------------------
def test_cast_to_bfloat16_records_tocopy_and_grad_comes_back_float32(apply_path):
    a = ember.tensor([0.1, 1.7, -3.3], requires_grad=True)
    b = a.to(ember.bfloat16)
    assert b.dtype is ember.bfloat16 and b.requires_grad
    assert type(b.grad_fn).__name__ == "ToCopyBackward0"
    np.testing.assert_array_equal(values(b), bf16([0.1, 1.7, -3.3]))
    (b * 3).sum().backward()
    assert a.grad.dtype is ember.float32
    np.testing.assert_array_equal(a.grad.numpy(), np.full(3, 3.0, np.float32))


@pytest.mark.parametrize("cast", [lambda t: t.bfloat16(), lambda t: t.type(ember.bfloat16),
                                  lambda t: t.to(dtype=ember.bfloat16)],
                         ids=["bfloat16()", "type", "to(dtype=)"])
def test_every_spelling_of_the_cast_records_it(cast):
    a = ember.ones(2, dtype=ember.float64, requires_grad=True)
    b = cast(a)
    assert type(b.grad_fn).__name__ == "ToCopyBackward0"
    b.sum().backward()
    assert a.grad.dtype is ember.float64


def test_cast_from_bfloat16_gives_a_bfloat16_gradient(apply_path):
    x = ember.tensor([1.0, -2.0, 0.5], dtype=ember.bfloat16, requires_grad=True)
    y = x.float()
    assert type(y.grad_fn).__name__ == "ToCopyBackward0" and y.dtype is ember.float32
    (y * ember.tensor([0.25, 0.5, 4.0])).sum().backward()
    assert x.grad.dtype is ember.bfloat16
    np.testing.assert_array_equal(values(x.grad), [0.25, 0.5, 4.0])


def test_mixed_dtype_op_sends_each_input_its_own_dtype(apply_path):
    x = ember.tensor([1.5, 2.0], dtype=ember.bfloat16, requires_grad=True)
    w = ember.tensor([3.0, -1.0], requires_grad=True)  # float32: the product is float32
    y = x * w
    assert y.dtype is ember.float32
    y.sum().backward()
    assert x.grad.dtype is ember.bfloat16 and w.grad.dtype is ember.float32
    np.testing.assert_array_equal(values(x.grad), [3.0, -1.0])
    np.testing.assert_array_equal(w.grad.numpy(), [1.5, 2.0])


# ---- ops on bfloat16 record their nodes -----------------------------------------------------
def test_ops_on_bfloat16_record_nodes(apply_path):
    x = ember.tensor([0.5, -1.25, 2.0], dtype=ember.bfloat16, requires_grad=True)
    y = x * x
    assert y.requires_grad and type(y.grad_fn).__name__ == "MulBackward0"
    z = y.exp().sum()
    assert type(z.grad_fn).__name__ == "SumBackward0"
    z.backward()
    assert x.grad.dtype is ember.bfloat16
    xs = np.array([0.5, -1.25, 2.0], np.float32)
    # exp(x^2) (rounded to bfloat16) times 2x: each op's result is rounded once
    expected = bf16(bf16(np.exp(bf16(xs * xs))) * bf16(2 * xs))
    np.testing.assert_allclose(values(x.grad), expected, rtol=2 ** -7)


def test_multi_output_and_view_ops(apply_path):
    x = ember.arange(6, dtype=ember.float32).reshape(2, 3).bfloat16().requires_grad_()
    values_, indices = x.max(1)
    assert values_.requires_grad and not indices.requires_grad
    parts = x.split(1, dim=1)
    assert all(p.requires_grad for p in parts)
    (values_.sum() + parts[0].sum() + x.t().sum()).backward()
    np.testing.assert_array_equal(values(x.grad), [[2, 1, 2], [2, 1, 2]])


def test_ops_under_a_dispatch_mode_record_nodes():
    from ember.utils._python_dispatch import TorchDispatchMode

    class PassThrough(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    xs = np.array([0.5, 1.0, 2.0], np.float32)
    x = ember.tensor(xs, dtype=ember.bfloat16, requires_grad=True)
    with PassThrough():
        y = x.sin()
        assert y.requires_grad and type(y.grad_fn).__name__ == "SinBackward0"
        y.sum().backward()
    np.testing.assert_array_equal(values(x.grad), bf16(np.cos(xs)))


def test_no_grad_records_nothing():
    x = ember.ones(3, dtype=ember.bfloat16, requires_grad=True)
    with ember.no_grad():
        y = x * 2
    assert not y.requires_grad and y.grad_fn is None


def test_implicit_gradient_of_a_bfloat16_scalar():
    x = ember.tensor([1.0, 2.0, 3.0], dtype=ember.bfloat16, requires_grad=True)
    loss = (x * x).sum()
    loss.backward()  # the implicit 1 is bfloat16 too
    assert x.grad.dtype is ember.bfloat16
    np.testing.assert_array_equal(values(x.grad), [2.0, 4.0, 6.0])


def test_gradients_accumulate_in_bfloat16():
    x = ember.tensor([1.0, 2.0], dtype=ember.bfloat16, requires_grad=True)
    for _ in range(3):
        (x * 0.5).sum().backward()
    assert x.grad.dtype is ember.bfloat16
    np.testing.assert_array_equal(values(x.grad), [1.5, 1.5])


def test_autograd_grad_and_double_backward():
    x = ember.tensor([0.5, 1.5, -2.0], dtype=ember.bfloat16, requires_grad=True)
    g, = ember.autograd.grad((x * x * x).sum(), x, create_graph=True)
    assert g.requires_grad and g.dtype is ember.bfloat16
    gg, = ember.autograd.grad(g.sum(), x)
    xs = np.array([0.5, 1.5, -2.0], np.float32)
    np.testing.assert_allclose(values(g), bf16(3 * xs * xs), rtol=2 ** -7)
    np.testing.assert_allclose(values(gg), bf16(6 * xs), rtol=2 ** -7)


def test_custom_function_outputs_of_bfloat16_require_grad():
    class Cube(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x * x

    x = ember.tensor([1.0, -2.0], dtype=ember.bfloat16, requires_grad=True)
    y = Cube.apply(x)
    assert y.requires_grad and type(y.grad_fn).__name__ == "CubeBackward"
    y.sum().backward()
    np.testing.assert_array_equal(values(x.grad), [3.0, 12.0])


def test_forward_ad_through_bfloat16():
    import ember.autograd.forward_ad as fwAD
    x = ember.tensor([0.5, 1.0, 2.0], dtype=ember.bfloat16)
    with fwAD.dual_level():
        dual = fwAD.make_dual(x, ember.ones(3, dtype=ember.bfloat16))
        out = fwAD.unpack_dual(dual * dual)
    assert out.tangent is not None and out.tangent.dtype is ember.bfloat16
    np.testing.assert_array_equal(values(out.tangent), [1.0, 2.0, 4.0])


def test_anomaly_mode_finds_nan_in_bfloat16_gradients():
    x = ember.tensor([0.0, 1.0], dtype=ember.bfloat16, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ember.autograd.detect_anomaly():
            y = (x.sqrt() * 0.0).sum()
            with pytest.raises(RuntimeError, match="returned nan values"):
                y.backward()


# ---- reductions accumulate in float32 ---------------------------------------------------------
def test_sum_and_mean_accumulate_in_float32():
    ones = ember.ones(4096, dtype=ember.bfloat16)
    assert ones.sum().item() == 4096.0  # a bfloat16 running sum would stop at 256
    assert ones.reshape(8, 512).sum(1).float().numpy().tolist() == [512.0] * 8
    assert ones.mean().item() == 1.0
    assert ones.cumsum(0)[-1].item() == 4096.0


def test_broadcast_gradient_sums_in_float32(apply_path):
    x = ember.zeros(1024, 4, dtype=ember.bfloat16, requires_grad=True)
    b = ember.zeros(4, dtype=ember.bfloat16, requires_grad=True)
    (x + b).sum().backward()
    np.testing.assert_array_equal(values(b.grad), [1024.0] * 4)


def test_cross_entropy_mean_over_many_rows():
    n = 1024
    logits = ember.zeros(n, 4, dtype=ember.bfloat16, requires_grad=True)
    target = ember.tensor(np.arange(n) % 4)
    loss = ember.nn.functional.cross_entropy(logits, target)
    assert loss.dtype is ember.bfloat16
    np.testing.assert_allclose(loss.item(), bf16(np.log(4.0)), rtol=2 ** -7)  # not 4x it
    loss.backward()
    np.testing.assert_allclose(values(logits.grad).sum(), 0.0, atol=1e-6)


# ---- a small MLP in bfloat16 -------------------------------------------------------------------
def _mlp_reference(x, w1, b1, w2, b2, y):
    """Loss and gradients of mean((relu(x w1^T + b1) w2^T + b2 - y)^2), in float64."""
    h_pre = x @ w1.T + b1
    h = np.maximum(h_pre, 0)
    out = h @ w2.T + b2
    diff = out - y
    loss = (diff ** 2).mean()
    g_out = 2 * diff / diff.size
    g_w2, g_b2 = g_out.T @ h, g_out.sum(0)
    g_h = g_out @ w2 * (h_pre > 0)
    return loss, {"0.weight": g_h.T @ x, "0.bias": g_h.sum(0), "2.weight": g_w2, "2.bias": g_b2}


def test_mlp_trains_in_bfloat16(apply_path):
    ember.manual_seed(0)
    rng = np.random.default_rng(0)
    model = ember.nn.Sequential(ember.nn.Linear(8, 16), ember.nn.ReLU(),
                                ember.nn.Linear(16, 3)).to(ember.bfloat16)
    x = ember.tensor(rng.standard_normal((32, 8)).astype(np.float32)).bfloat16()
    y = ember.tensor(rng.standard_normal((32, 3)).astype(np.float32)).bfloat16()
    out = model(x)
    assert out.dtype is ember.bfloat16 and type(out.grad_fn).__name__ == "AddmmBackward0"
    loss = ember.nn.functional.mse_loss(out, y)
    assert loss.dtype is ember.bfloat16
    loss.backward()
    params = dict(model.named_parameters())
    ref_loss, ref_grads = _mlp_reference(
        values(x).astype(np.float64), *(values(params[k]).astype(np.float64) for k in
                                        ("0.weight", "0.bias", "2.weight", "2.bias")),
        values(y).astype(np.float64))
    # bfloat16 keeps 8 significant bits (2**-8 relative): against a float64 computation on
    # the same bfloat16 inputs, each result is off by a few roundings, scaled by the largest
    np.testing.assert_allclose(loss.item(), ref_loss, rtol=2 ** -7)
    for name, p in params.items():
        assert p.grad is not None and p.grad.dtype is ember.bfloat16, name
        assert p.grad.shape == p.shape
        g = values(p.grad)
        assert np.isfinite(g).all(), name
        ref = ref_grads[name]
        np.testing.assert_allclose(g, ref, rtol=2 ** -6, atol=2 ** -7 * np.abs(ref).max(),
                                   err_msg=name)
    before = values(params["0.weight"]).copy()
    ember.optim.SGD(model.parameters(), lr=0.5).step()
    assert params["0.weight"].dtype is ember.bfloat16
    assert not np.array_equal(values(params["0.weight"]), before)


def test_mlp_with_gelu_softmax_and_cross_entropy(apply_path):
    ember.manual_seed(1)
    model = ember.nn.Sequential(ember.nn.Linear(6, 12), ember.nn.GELU(), ember.nn.Linear(12, 5),
                                ember.nn.LogSoftmax(dim=1)).to(ember.bfloat16)
    x = ember.randn(10, 6, dtype=ember.bfloat16)
    loss = ember.nn.functional.nll_loss(model(x), ember.tensor([0, 1, 2, 3, 4] * 2))
    loss.backward()
    for name, p in model.named_parameters():
        assert p.grad.dtype is ember.bfloat16 and np.isfinite(values(p.grad)).all(), name
    # each row's log-softmax gradient sums to zero; the last bias sees exactly that sum
    np.testing.assert_allclose(values(model[2].bias.grad).sum(), 0.0, atol=2 ** -6)


# ---- random fills of bfloat16 -------------------------------------------------------------------
def test_random_fills_of_bfloat16():
    x = ember.empty(1000, dtype=ember.bfloat16)
    assert ((values(x.uniform_(-1, 1)) >= -1) & (values(x) <= 1)).all()
    assert x.normal_().dtype is ember.bfloat16
    drawn = values(x.random_())  # PyTorch's [0, 2**8] for bfloat16: every integer exact
    assert drawn.min() >= 0 and drawn.max() <= 256 and (drawn == np.round(drawn)).all()


# ---- errors of integer tensors are unchanged -----------------------------------------------------
@pytest.mark.parametrize("dtype", [ember.int64, ember.int32, ember.uint8, ember.bool])
def test_integer_tensors_still_cannot_require_grad(dtype):
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype "
                                           "can require gradients$"):
        ember.ones(2, dtype=dtype, requires_grad=True)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point dtype can require "
                                           "gradients$"):
        ember.ones(2, dtype=dtype).requires_grad_()
    t = ember.ones(2, dtype=dtype)
    with pytest.raises(RuntimeError, match="^only Tensors of floating point and complex dtype "
                                           "can require gradients$"):
        t.requires_grad = True


def test_integer_results_of_bfloat16_inputs_record_nothing():
    x = ember.tensor([1.5, -2.5], dtype=ember.bfloat16, requires_grad=True)
    assert not x.argmax().requires_grad
    assert not (x > 0).requires_grad
    assert not x.to(ember.int64).requires_grad
