"""The "cuda" device on real CuPy: skipped unless CuPy imports and sees a GPU.

The same behaviour as tests/backend/test_cuda_device.py checks on the stand-in module,
here on device memory, plus DLPack with CuPy and a training step against the CPU's."""
import numpy as np
import pytest

cupy = pytest.importorskip("cupy")
try:
    _GPUS = cupy.cuda.runtime.getDeviceCount()
except Exception:  # no driver or no device
    _GPUS = 0
if _GPUS < 1:
    pytest.skip("CuPy sees no GPU", allow_module_level=True)

import ember  # noqa: E402
from ember import nn  # noqa: E402


def test_cupy_is_the_cuda_module():
    assert ember.cuda.is_available() and ember.cuda.device_count() == _GPUS
    x = ember.arange(4.0, device="cuda")
    assert type(x._data) is cupy.ndarray and x.device == ember.device("cuda", 0) and x.is_cuda
    assert isinstance(ember.cuda.get_device_name(), str)
    ember.cuda.synchronize()
    assert x.sum().item() == 6.0 and x.cpu().numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert repr(x) == "tensor([0., 1., 2., 3.], device='cuda:0')"


def test_errors_like_pytorch():
    x = ember.ones(2, 3, device="cuda")
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        x.numpy()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but "
                                           "found at least two devices, cuda:0 and cpu!"):
        x + ember.ones(2, 3)
    assert (x * ember.tensor(2.0)).tolist() == [[2.0] * 3] * 2  # a 0-d CPU tensor joins


def test_dlpack_with_cupy_shares_memory():
    a = cupy.arange(6, dtype=cupy.float32).reshape(2, 3)
    t = ember.from_dlpack(a)
    assert t.is_cuda and t.shape == (2, 3)
    t[0, 0] = 42.0
    assert float(a[0, 0]) == 42.0
    back = cupy.from_dlpack(t)
    back[1, 2] = -1.0
    assert t[1, 2].item() == -1.0


def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))


def test_mlp_training_step_matches_cpu():
    def train(device):
        model = _mlp().to(device)
        opt = ember.optim.Adam(model.parameters(), lr=0.01)
        ember.manual_seed(1)
        x, y = ember.randn(32, 8).to(device), ember.randint(0, 4, (32,)).to(device)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().cpu().numpy() for p in model.parameters()]
    cpu_losses, cpu_params = train("cpu")
    gpu_losses, gpu_params = train("cuda")
    np.testing.assert_allclose(gpu_losses, cpu_losses, rtol=1e-4)
    for a, b in zip(gpu_params, cpu_params):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_conv_net_forward_backward_matches_cpu():
    ember.manual_seed(0)
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 2))
    x = ember.randn(2, 3, 8, 8)
    cpu_out = net(x)
    cpu_out.sum().backward()
    cpu_grads = [p.grad.numpy().copy() for p in net.parameters()]
    net.zero_grad()
    net.cuda()
    gpu_out = net(x.cuda())
    gpu_out.sum().backward()
    np.testing.assert_allclose(gpu_out.detach().cpu().numpy(), cpu_out.detach().numpy(),
                               rtol=1e-4, atol=1e-5)
    for p, g in zip(net.parameters(), cpu_grads):
        np.testing.assert_allclose(p.grad.cpu().numpy(), g, rtol=1e-3, atol=1e-4)


def test_cpp_extensions_see_cuda_tensors():
    from ember.utils.cpp_extension import load_inline
    m = load_inline("cupy_tensor_probe", cpp_sources="""
#include <torch/extension.h>
std::vector<int64_t> layout(torch::Tensor t) {
  std::vector<int64_t> out(t.sizes().begin(), t.sizes().end());
  for (auto s : t.strides()) out.push_back(s);
  out.push_back(t.numel());
  out.push_back(t.is_cuda());
  return out;
}
int64_t address(torch::Tensor t) { return reinterpret_cast<int64_t>(t.data_ptr<float>()); }
int64_t ndim_of_array(torch::Tensor t) { return t.array().ndim(); }
""", functions=["layout", "address", "ndim_of_array"])
    x = ember.zeros(2, 3, device="cuda")
    assert m.layout(x) == [2, 3, 3, 1, 6, 1] and m.layout(x.t()) == [3, 2, 1, 3, 6, 1]
    assert m.address(x) == x.data_ptr() == cupy.from_dlpack(x).data.ptr
    with pytest.raises(RuntimeError, match="its data is device memory, not a NumPy array"):
        m.ndim_of_array(x)


def test_dlpack_with_torch_cuda_tensors():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("this torch has no CUDA")
    a = torch.arange(6.0, device="cuda").reshape(2, 3)
    t = ember.from_dlpack(a)
    assert t.is_cuda and t.tolist() == a.tolist()
    t[0, 0] = 7.0
    assert a[0, 0].item() == 7.0  # shared memory
    b = torch.from_dlpack(ember.ones(3, device="cuda"))
    assert b.is_cuda and b.sum().item() == 3.0


def test_out_of_memory_is_pytorchs():
    with pytest.raises(ember.OutOfMemoryError, match=r"^CUDA out of memory\. Tried to allocate "
                                                     r"131072\.00 GiB\. GPU 0 has a total"):
        ember.empty(1 << 45, dtype=ember.float32, device="cuda")
    assert ember.zeros(2, device="cuda").sum().item() == 0.0  # and the device still works


def test_load_inline_cuda_sources_runs_a_kernel():
    from ember.utils.cpp_extension._cuda import find_toolkit
    if find_toolkit() is None:
        pytest.skip("no CUDA toolkit (nvcc)")
    from ember.utils.cpp_extension import load_inline
    from tests.utils.axpb_cuda import AXPB_CUDA, AXPB_DECLARATIONS
    m = load_inline("cupy_axpb", cpp_sources=AXPB_DECLARATIONS, cuda_sources=AXPB_CUDA,
                    functions=["axpb", "device_count"])
    assert m.device_count() >= 1
    for dtype in (ember.float32, ember.float64):
        x = ember.randn(1000, dtype=dtype, device="cuda")
        y = m.axpb(x, 3.0, -1.0)
        assert y.is_cuda and y.dtype == dtype
        np.testing.assert_allclose(y.cpu().numpy(), 3.0 * x.cpu().numpy() - 1.0, rtol=1e-6)


def test_linalg_errors_as_on_the_cpu():
    """CuPy returns NaN for a singular or not positive-definite matrix unless asked to
    raise; ember raises PyTorch's errors there as on the CPU."""
    singular = ember.zeros(2, 2, device="cuda")
    with pytest.raises(RuntimeError, match="linalg.inv: The diagonal element 1 is zero"):
        ember.linalg.inv(singular)
    with pytest.raises(RuntimeError, match="linalg.cholesky: The factorization could not be "
                                           "completed because the input is not positive-definite"):
        ember.linalg.cholesky(-ember.eye(2, device="cuda"))
    with pytest.raises(RuntimeError, match="The solver failed because the input matrix is "
                                           "singular"):
        ember.linalg.solve(singular, ember.ones(2, device="cuda"))
    a = ember.randn(3, 4, 4, dtype=ember.float64)
    b = ember.randn(4, dtype=ember.float64)
    np.testing.assert_allclose(ember.linalg.solve(a.cuda(), b.cuda()).cpu().numpy(),
                               ember.linalg.solve(a, b).numpy(), rtol=1e-10)


def test_events_time_work_on_a_stream():
    s = ember.cuda.Stream()
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        start.record()
        y = (ember.randn(512, 512, device="cuda") @ ember.randn(512, 512, device="cuda")).sum()
        end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0.0 and s.query()
    assert ember.cuda.current_stream() == ember.cuda.default_stream()
    assert isinstance(y.item(), float)
    p = ember.cuda.get_device_properties(0)
    assert p.name == ember.cuda.get_device_name() and p.total_memory > 1 << 30
    assert (p.major, p.minor) == ember.cuda.get_device_capability()


def test_autocast_mixed_precision_step_on_the_gpu():
    # cuBLAS float16 products under autocast("cuda"); the float32 master weights and the
    # scaled float16 gradients stay on the GPU; the loss is close to the float32 step's
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10)).cuda()
    x = ember.randn(256, 64, device="cuda")
    y = ember.randint(0, 10, (256,), device="cuda")
    with ember.autocast("cuda"):
        logits = model(x)
        loss = nn.functional.cross_entropy(logits, y)
    assert logits.dtype is ember.float16 and type(logits._data) is cupy.ndarray
    assert loss.dtype is ember.float32
    full = nn.functional.cross_entropy(model(x), y)
    assert abs(loss.item() - full.item()) < 1e-2
    scaler = ember.amp.GradScaler("cuda")
    scaler.scale(loss).backward()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    scaler.step(opt)
    scaler.update()
    assert all(p.dtype is ember.float32 and p.grad.is_cuda for p in model.parameters())
