"""ember.autocast without PyTorch: the CUDA op policy (on the stand-in cuda module), the
per-thread state, the hook's life cycle, casts' gradients, custom_fwd/custom_bwd, and the
deprecated spellings. The CPU policy is compared with PyTorch's in tests/parity/amp."""
import threading
import warnings

import numpy as np
import pytest

import ember
from ember import _torch_function, nn
import ember.nn.functional as F


def test_lower_precision_ops_and_float32_gradients_on_the_cpu():
    x = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
    w = ember.ones(4, 2, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.float16):
        y = x @ w
        assert y.dtype is ember.float16
        loss = F.mse_loss(y, ember.zeros(3, 2, dtype=ember.float16))  # float32 list
    assert loss.dtype is ember.float32
    loss.backward()
    assert w.grad.dtype is ember.float32
    # d/dw mean((x w)^2) = 2/6 x^T (x w); the float16 product of these values is exact
    expected = 2 / 6 * x.numpy().T @ (x.numpy() @ np.ones((4, 2), np.float32))
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=2e-3)


def test_the_hook_is_removed_after_the_region_and_tensor_members_stay_plain():
    # (an earlier test may have defined a dispatching Tensor subclass: ACTIVE stays on then)
    active, members_plain = _torch_function.ACTIVE[0], \
        not _torch_function.is_entry(ember.Tensor.size)
    assert _torch_function.AUTOCAST[0] is None
    with ember.autocast("cpu"):
        assert _torch_function.AUTOCAST[0] is not None and _torch_function.ACTIVE[0]
        ember.ones(2, 2).mm(ember.ones(2, 2))
    assert _torch_function.AUTOCAST[0] is None and _torch_function.ACTIVE[0] is active
    # no lasting slow path: Tensor's own members are not made entry points for autocast
    assert members_plain == (not _torch_function.is_entry(ember.Tensor.size))


def test_the_state_is_per_thread():
    seen = {}

    def other():
        seen["enabled"] = ember.is_autocast_enabled("cpu")
        seen["dtype"] = (ember.ones(2, 2) @ ember.ones(2, 2)).dtype

    with ember.autocast("cpu"):
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert seen == {"enabled": False, "dtype": ember.float32}


def test_decorator_and_nesting():
    @ember.autocast("cpu")
    def f(a, b):
        return a @ b

    assert f(ember.ones(2, 2), ember.ones(2, 2)).dtype is ember.bfloat16
    with ember.autocast("cpu"):
        with ember.autocast("cpu", enabled=False):
            assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.float32
        assert (ember.ones(2, 2) @ ember.ones(2, 2)).dtype is ember.bfloat16


def test_backward_inside_a_region_runs_in_the_forward_dtypes():
    w = ember.ones(3, 3, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.float16):
        y = ember.ones(2, 3) @ w
        y.float().sum().backward()
        assert ember.is_autocast_enabled("cpu")  # restored after the backward pass
    np.testing.assert_array_equal(w.grad.numpy(), np.full((3, 3), 2.0, np.float32))


def test_composite_python_functions_cast_their_pieces():
    # F.multi_head_attention_forward is Python in PyTorch: its linear layers run in the
    # lower precision, its output comes out in it
    mha = nn.MultiheadAttention(4, 2)
    x = ember.randn(3, 2, 4)
    with ember.autocast("cpu", dtype=ember.float16):
        out, weights = mha(x, x, x)
    assert out.dtype is ember.float16 and weights.dtype is ember.float16


def test_unknown_device_types():
    with pytest.raises(RuntimeError, match="unsupported scalarType"):
        ember.autocast("meta")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ember.autocast(ember.device("cpu"))
    assert not ember.amp.is_autocast_available("meta")


def test_deprecated_spellings_warn():
    with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)"):
        with ember.cpu.amp.autocast():
            assert ember.is_autocast_enabled("cpu")
    with pytest.warns(DeprecationWarning, match="is_autocast_cpu_enabled"):
        assert ember.is_autocast_cpu_enabled() is False
    with pytest.warns(FutureWarning, match="custom_fwd"):
        ember.cuda.amp.custom_fwd(cast_inputs=ember.float32)


def test_without_a_gpu_cuda_autocast_is_a_disabled_no_op():
    if ember.cuda.is_available():
        pytest.skip("a GPU is there")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        with ember.autocast("cuda"):
            assert not ember.is_autocast_enabled("cuda")


# ---- the CUDA policy, on the stand-in cuda module -------------------------------------------
def test_cuda_policy(fake_cuda):
    a = ember.randn(4, 4, device="cuda")
    h = a.half()
    with ember.autocast("cuda"):
        assert ember.get_autocast_dtype("cuda") is ember.float16
        assert (a @ a).dtype is ember.float16                       # lower precision
        assert F.linear(a, a).dtype is ember.float16
        assert F.softmax(h, -1).dtype is ember.float32               # float32, first argument
        assert h.sum().dtype is ember.float32
        assert h.sum(dtype=ember.float16).dtype is ember.float16     # an explicit dtype wins
        assert h.exp().dtype is ember.float32                        # float32
        assert F.layer_norm(h, (4,)).dtype is ember.float32
        assert (h ** 2).dtype is ember.float32
        assert ember.addcmul(a, h, h).dtype is ember.float32         # widest input
        assert ember.addcmul(h, h, h).dtype is ember.float16
        assert F.relu(h).dtype is ember.float16                      # not listed
        assert F.interpolate(h[None, None], scale_factor=2).dtype is ember.float32
        cpu = ember.ones(2, 2)
        assert (cpu @ cpu).dtype is ember.float32                    # other device: untouched
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(ember.sigmoid(a), ember.rand(4, 4, device="cuda"))
    with pytest.raises(RuntimeError, match="does not support bfloat16"):
        ember.autocast("cuda", dtype=ember.bfloat16)


def test_cpu_and_cuda_regions_side_by_side(fake_cuda):
    g = ember.ones(2, 2, device="cuda")
    c = ember.ones(2, 2)
    with ember.autocast("cuda"), ember.autocast("cpu"):
        assert (g @ g).dtype is ember.float16 and (c @ c).dtype is ember.bfloat16
    with ember.autocast("cuda"):
        assert (g @ g).dtype is ember.float16 and (c @ c).dtype is ember.float32


def test_recurrent_layers_follow_the_fused_kernels(fake_cuda):
    x = ember.randn(3, 2, 4)
    gru, cell = nn.GRU(4, 3), nn.LSTMCell(4, 3)
    with ember.autocast("cpu", dtype=ember.float16):
        assert gru(x)[0].dtype is ember.float32       # CPU: no fused GRU on the list
        assert cell(x[0])[0].dtype is ember.float32
    gru.cuda(), cell.cuda()
    with ember.autocast("cuda"):                     # CUDA: cuDNN's layers and the cells
        out, h = gru(x.cuda())
        assert out.dtype is ember.float16 and h.dtype is ember.float16
        assert cell(x[0].cuda())[0].dtype is ember.float16
    out.float().sum().backward()
    assert gru.weight_ih_l0.grad.dtype is ember.float32


def test_mixed_precision_training_on_the_gpu_stand_in(fake_cuda):
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).cuda()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler = ember.amp.GradScaler("cuda")
    x = ember.randn(32, 8, device="cuda")
    y = (x[:, :3].sum(1) > 0).long() + (x[:, 3] > 0).long()
    losses = []
    for _ in range(20):
        opt.zero_grad()
        with ember.autocast("cuda"):
            logits = model(x)
            assert logits.dtype is ember.float16
            loss = F.cross_entropy(logits, y)
            assert loss.dtype is ember.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert all(p.dtype is ember.float32 and p.device.type == "cuda"
               for p in model.parameters())
    assert losses[-1] < 0.8 * losses[0]


def test_custom_fwd_without_cast_inputs_runs_under_the_region():
    class Mm(ember.autograd.Function):
        @staticmethod
        @ember.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a @ b  # autocast on: bfloat16

        @staticmethod
        @ember.amp.custom_bwd(device_type="cpu")
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            assert ember.is_autocast_enabled("cpu")  # as forward ran
            return grad @ b.t(), a.t() @ grad

    a = ember.ones(2, 3, requires_grad=True)
    with ember.autocast("cpu", dtype=ember.float16):
        y = Mm.apply(a, ember.ones(3, 2))
    assert y.dtype is ember.float16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y.sum().backward()
    assert a.grad.dtype is ember.float32
