"""The "cuda" device on a stand-in array module (tests/backend/fake_cuda.py, installed by
the ``fake_cuda`` fixture): device reporting, moves and their gradients, factories,
cross-device errors, Module.to and training steps that give the CPU's numbers."""
import numpy as np
import pytest

import ember
from ember import nn
from tests.backend.fake_cuda import FakeCudaArray

CROSS = "Expected all tensors to be on the same device, but found at least two devices, {} and {}!"
NUMPY = ("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the "
         "tensor to host memory first.")


def _on_cuda(t):
    return type(t._data) is FakeCudaArray and t.device == ember.device("cuda", 0)


def test_cuda_queries_answer_from_the_runtime(fake_cuda):
    assert ember.cuda.is_available() and ember.cuda.is_initialized()
    assert ember.cuda.device_count() == 1 and ember.cuda.current_device() == 0
    assert ember.cuda.get_device_name() == ember.cuda.get_device_name(0) == "Fake CUDA device"
    assert ember.cuda.get_device_capability("cuda:0") == (9, 0)
    ember.cuda.synchronize()
    ember.cuda.synchronize(ember.device("cuda:0"))
    assert fake_cuda.synchronized == 2
    assert ember.cuda.memory_allocated() == 0 and ember.cuda.empty_cache() is None
    with ember.cuda.device(0):
        assert ember.cuda.current_device() == 0


def test_without_the_module_cuda_is_not_compiled(fake_cuda):
    from tests.backend import fake_cuda as fake
    fake.uninstall()
    try:
        if ember.cuda.is_available():
            pytest.skip("a real CUDA module (CuPy) is registered")
        assert ember.cuda.device_count() == 0
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
            ember.ones(2).cuda()
        with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
            ember.cuda.current_device()
    finally:
        fake.install()


@pytest.mark.parametrize("move", [lambda t: t.cuda(), lambda t: t.cuda(0),
                                  lambda t: t.to("cuda"), lambda t: t.to("cuda:0"),
                                  lambda t: t.to(device="cuda"), lambda t: t.to(0),
                                  lambda t: t.to(ember.device("cuda")),
                                  lambda t: t.to(ember.zeros(1, device="cuda"))])
def test_moves_report_cuda(fake_cuda, move):
    x = ember.arange(6.0).reshape(2, 3)
    y = move(x)
    assert _on_cuda(y) and y.is_cuda and not y.is_cpu
    assert str(y.device) == "cuda:0" and repr(y.device) == "device(type='cuda', index=0)"
    assert y.cpu().device == ember.device("cpu") and not x.is_cuda
    np.testing.assert_array_equal(y.cpu().numpy(), x.numpy())
    assert move(y) is y  # already there: no copy, as PyTorch
    assert y.cuda() is y and x.cpu() is x


def test_moves_copy_and_convert(fake_cuda):
    x = ember.arange(3.0)
    y = x.to("cuda", ember.float64)
    assert _on_cuda(y) and y.dtype is ember.float64
    y[0] = 5.0
    assert x[0].item() == 0.0  # a copy, not shared host memory
    assert y.to(ember.int32).dtype is ember.int32 and _on_cuda(y.to(ember.int32))
    assert y.to("meta").is_meta
    with pytest.raises(RuntimeError, match="^CUDA error: invalid device ordinal$"):
        x.to("cuda:1")
    with pytest.raises(RuntimeError, match="^Invalid device, must be cuda device$"):
        x.cuda("cpu")


def test_gradients_cross_back(fake_cuda):
    x = ember.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x.cuda()
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y * y).sum().backward()
    assert x.grad.device == ember.device("cpu")
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0, 6.0])
    w = ember.ones(3, device="cuda", requires_grad=True)
    (w.cpu() * 3).sum().backward()
    assert _on_cuda(w.grad) and w.grad.tolist() == [3.0, 3.0, 3.0]
    # double backward through the move
    z = ember.tensor([2.0], requires_grad=True)
    g, = ember.autograd.grad((z.cuda() ** 3).sum(), z, create_graph=True)
    g.sum().backward()
    assert z.grad.tolist() == [12.0]


@pytest.mark.parametrize("make", [
    lambda **kw: ember.zeros(2, 3, **kw), lambda **kw: ember.ones(2, **kw),
    lambda **kw: ember.empty(2, **kw), lambda **kw: ember.full((2,), 1.5, **kw),
    lambda **kw: ember.arange(5, **kw), lambda **kw: ember.linspace(0, 1, 5, **kw),
    lambda **kw: ember.eye(3, **kw), lambda **kw: ember.tensor([[1, 2], [3, 4]], **kw),
    lambda **kw: ember.rand(4, **kw), lambda **kw: ember.randn(2, 2, **kw),
    lambda **kw: ember.randint(0, 9, (4,), **kw), lambda **kw: ember.randperm(5, **kw),
    lambda **kw: ember.as_tensor([1.0, 2.0], **kw)])
def test_factories_place_on_cuda(fake_cuda, make):
    ember.manual_seed(3)
    on_cpu = make()
    ember.manual_seed(3)
    on_cuda = make(device="cuda")
    assert _on_cuda(on_cuda) and on_cuda.dtype is on_cpu.dtype
    if make.__code__.co_names[-1] != "empty":
        np.testing.assert_array_equal(on_cuda.cpu().numpy(), on_cpu.numpy())


def test_like_and_new_follow_the_tensor(fake_cuda):
    x = ember.ones(2, 3, device="cuda")
    for made in (ember.zeros_like(x), ember.ones_like(x), ember.empty_like(x),
                 ember.full_like(x, 2.0), ember.rand_like(x), ember.randn_like(x),
                 ember.randint_like(x, 5), x.new_zeros(2), x.new_ones(3), x.new_empty(2),
                 x.new_full((2,), 7.0), x.new_tensor([1.0, 2.0])):
        assert _on_cuda(made)
    assert ember.zeros_like(x, device="cpu").device == ember.device("cpu")
    assert _on_cuda(ember.zeros_like(ember.ones(2), device="cuda"))
    assert ember.tensor(x, device="cpu").device == ember.device("cpu")


def test_default_device_cuda(fake_cuda):
    try:
        ember.set_default_device("cuda")
        assert _on_cuda(ember.zeros(2)) and _on_cuda(ember.tensor([1.0]))
        with ember.device("cpu"):
            assert ember.ones(1).device == ember.device("cpu")
    finally:
        ember.set_default_device(None)
    assert ember.zeros(1).device == ember.device("cpu")
    with ember.device("cuda"):
        assert _on_cuda(ember.randn(2))
    assert ember.zeros(1).device == ember.device("cpu")


def test_copy_between_devices(fake_cuda):
    x = ember.zeros(3, device="cuda")
    x.copy_(ember.tensor([1.0, 2.0, 3.0]))
    assert _on_cuda(x) and x.tolist() == [1.0, 2.0, 3.0]
    y = ember.zeros(3)
    y.copy_(x * 2)
    assert y.device.type == "cpu" and y.tolist() == [2.0, 4.0, 6.0]


def test_host_conversions(fake_cuda):
    x = ember.tensor([[1.5, -2.0]], device="cuda")
    with pytest.raises(TypeError, match=f"^{NUMPY}$".replace("(", r"\(").replace(")", r"\)")):
        x.numpy()
    with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
        np.asarray(x)
    forced = x.numpy(force=True)
    assert type(forced) is np.ndarray and forced.tolist() == [[1.5, -2.0]]
    assert x[0, 0].item() == 1.5 and float(x[0, 1]) == -2.0 and x.tolist() == [[1.5, -2.0]]
    assert bool(x[0, 0]) and f"{x[0, 0]:.2f}" == "1.50"
    assert repr(x) == "tensor([[ 1.5000, -2.0000]], device='cuda:0')"
    assert repr(ember.tensor([1, 2], device="cuda", dtype=ember.int32)) == \
        "tensor([1, 2], device='cuda:0', dtype=ember.int32)"
    assert repr(ember.ones(2, device="cuda", requires_grad=True) * 2) == \
        "tensor([2., 2.], device='cuda:0', grad_fn=<MulBackward0>)"
    assert x.__dlpack_device__() == (ember.utils.dlpack.DLDeviceType.kDLCUDA, 0)


@pytest.mark.parametrize("op", [lambda a, b: a + b, lambda a, b: a * b,
                                lambda a, b: ember.matmul(a, b.t()),
                                lambda a, b: ember.cat([a, b]),
                                lambda a, b: ember.where(a > 0, a, b),
                                lambda a, b: a.add_(b),
                                lambda a, b: nn.functional.mse_loss(a, b),
                                lambda a, b: nn.functional.cross_entropy(a, b[:, 0].long()),
                                lambda a, b: nn.functional.linear(a, b)])
def test_two_devices_raise(fake_cuda, op):
    a, b = ember.ones(2, 3, device="cuda"), ember.ones(2, 3)
    with pytest.raises(RuntimeError, match="^" + CROSS.format("cuda:0", "cpu")):
        op(a, b)
    with pytest.raises(RuntimeError, match="^" + CROSS.format("cpu", "cuda:0")):
        op(b.clone(), a.clone())


def test_cpu_scalars_join_cuda_ops(fake_cuda):
    a = ember.tensor([1.0, 2.0], device="cuda", requires_grad=True)
    s = ember.tensor(3.0, requires_grad=True)
    out = a * s + ember.tensor(1.0)
    assert _on_cuda(out) and out.tolist() == [4.0, 7.0]
    out.sum().backward()
    assert s.grad.device == ember.device("cpu") and s.grad.item() == 3.0
    assert _on_cuda(a.grad) and a.grad.tolist() == [3.0, 3.0]
    assert ember.tensor([1, 2, 3], device="cuda")[ember.tensor(1)].item() == 2


def _mlp():
    ember.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))


def test_module_to_moves_parameters_buffers_and_grads(fake_cuda):
    model = _mlp()
    model(ember.randn(5, 4)).sum().backward()
    assert model.to("cuda") is model
    for t in list(model.parameters()) + list(model.buffers()):
        assert _on_cuda(t)
    assert all(_on_cuda(p.grad) for p in model.parameters())
    assert isinstance(model[0].weight, nn.Parameter)
    assert model.cpu() is model and all(p.device.type == "cpu" for p in model.parameters())
    assert model.cuda(0) is model and _on_cuda(model[1].running_mean)
    assert _on_cuda(model[3].bias)


@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_training_on_cuda_matches_cpu(fake_cuda, optimizer):
    def train(device):
        model = _mlp().to(device)
        opt = getattr(ember.optim, optimizer)(model.parameters(), lr=0.05)
        ember.manual_seed(1)
        x, y = ember.randn(16, 4).to(device), ember.randint(0, 3, (16,)).to(device)
        losses = []
        for _ in range(3):
            opt.zero_grad()
            loss = nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return losses, [p.detach().cpu().numpy() for p in model.parameters()], model
    cpu_losses, cpu_params, _ = train("cpu")
    cuda_losses, cuda_params, model = train("cuda")
    assert all(_on_cuda(p) for p in model.parameters())
    np.testing.assert_allclose(cuda_losses, cpu_losses, rtol=1e-6)
    for a, b in zip(cuda_params, cpu_params):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_state_dict_round_trip_through_cpu(fake_cuda):
    model = _mlp().cuda()
    state = {k: v.cpu() for k, v in model.state_dict().items()}
    fresh = _mlp()
    fresh.load_state_dict(state)
    np.testing.assert_array_equal(fresh[0].weight.detach().numpy(),
                                  model[0].weight.detach().cpu().numpy())


def test_save_and_load_keep_the_device(fake_cuda, tmp_path):
    model = _mlp().cuda()
    ember.save(model.state_dict(), tmp_path / "m.pt")
    loaded = ember.load(tmp_path / "m.pt")
    assert all(_on_cuda(v) for v in loaded.values())
    on_cpu = ember.load(tmp_path / "m.pt", map_location="cpu")
    assert all(v.device.type == "cpu" for v in on_cpu.values())
    np.testing.assert_array_equal(on_cpu["0.weight"].numpy(),
                                  model[0].weight.detach().cpu().numpy())


def test_accelerator_pinning_and_type_names(fake_cuda):
    assert ember.accelerator.is_available() and ember.accelerator.device_count() == 1
    assert ember.accelerator.current_accelerator() == ember.device("cuda")
    assert ember.accelerator.current_device_index() == 0
    x = ember.ones(2)
    pinned = x.pin_memory()
    assert pinned is not x and pinned.device.type == "cpu" and pinned.tolist() == [1.0, 1.0]
    assert _on_cuda(ember.tensor([1.0], pin_memory=True).cuda(non_blocking=True))
    with pytest.raises(RuntimeError, match="^cannot pin 'torch.cuda.FloatTensor' only dense CPU"):
        x.cuda().pin_memory()
    assert x.cuda().type() == "torch.cuda.FloatTensor" and x.type() == "torch.FloatTensor"


def test_uninstalling_a_stand_in_restores_the_module_before_it(fake_cuda):
    from ember import backend

    class Other(np.ndarray):
        pass
    before = backend.device_module("cuda")
    backend.register_array_module(Other, "other module", "cuda")
    assert backend.device_module("cuda") == "other module"
    backend.unregister_array_module(Other)
    assert backend.device_module("cuda") is before


def test_cpu_index_tensors_index_a_cuda_tensor(fake_cuda):
    # PyTorch copies CPU indices to the indexed tensor's device; the reverse is refused
    data = np.arange(12.0).reshape(3, 4)
    x = ember.tensor(data).cuda().requires_grad_()
    y = x[ember.tensor([2, 0])]
    assert y.device.type == "cuda"
    np.testing.assert_array_equal(y.cpu().detach().numpy(), data[[2, 0]])
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.cpu().numpy(), [[1] * 4, [0] * 4, [1] * 4])
    np.testing.assert_array_equal(x[ember.tensor([True, False, True])].cpu().detach().numpy(),
                                  data[[0, 2]])
    z = ember.zeros(3, device="cuda")
    z[ember.tensor([1])] = 5.0
    assert z.device.type == "cuda" and z.cpu().tolist() == [0.0, 5.0, 0.0]
    with pytest.raises(RuntimeError, match=r"indices should be either on cpu or on the same "
                                           r"device as the indexed tensor \(cpu\)"):
        ember.arange(3.0)[ember.tensor([0], device="cuda")]


def test_embedding_indices_on_another_device_are_refused(fake_cuda):
    weight = ember.randn(5, 3).cuda()
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but "
                                           "found at least two devices, cuda:0 and cpu!"):
        nn.functional.embedding(ember.tensor([0, 2]), weight)
    out = nn.functional.embedding(ember.tensor([0, 2]).cuda(), weight)
    assert out.device.type == "cuda" and out.shape == (2, 3)


def test_device_ops_run_whole_not_on_the_host_pool(fake_cuda, monkeypatch):
    """Device arrays' passes are kernel launches: ember's host thread pool (which splits
    large NumPy passes: matmul bands, conv blocks, pooling and ReLU slices) leaves them
    whole, as one library call each."""
    from ember.backend import parallel
    passes, run_pass = [], parallel._run_pass

    def recording(*args):
        passes.append(args[1])
        return run_pass(*args)
    monkeypatch.setattr(parallel, "_run_pass", recording)
    saved = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        ember.manual_seed(0)
        net = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                            nn.Flatten(), nn.Linear(32 * 16 * 16, 512), nn.ReLU(),
                            nn.Linear(512, 10))
        x = ember.randn(64, 3, 32, 32)
        net(x).sum().backward()  # on the host: large enough to use the pool
        assert passes
        passes.clear()
        net.zero_grad()
        net.to("cuda")
        net(x.to("cuda")).sum().backward()
        assert passes == [] and isinstance(net[0].weight.grad._data, FakeCudaArray)
    finally:
        ember.set_num_threads(saved)


def test_device_out_of_memory_reads_as_pytorchs(fake_cuda):
    """A device allocation that fails raises PyTorch's OutOfMemoryError (a RuntimeError),
    worded as its CUDA allocator's, from factories and from ops alike."""
    assert ember.cuda.OutOfMemoryError is ember.OutOfMemoryError
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert ember.cuda.mem_get_info() == (3 << 30, 80 << 30)
    with pytest.raises(ember.OutOfMemoryError, match=r"^CUDA out of memory\. Tried to allocate "
                       r"4096\.00 GiB\. GPU 0 has a total capacity of 80\.00 GiB of which "
                       r"3\.00 GiB is free\.$"):
        ember.empty(1 << 40, dtype=ember.float32, device="cuda")
    x = ember.ones(1, device="cuda")
    with pytest.raises(ember.OutOfMemoryError, match=r"Tried to allocate 4096\.00 GiB"):
        x.expand(1 << 40).contiguous()
    # on the host, the CPU allocator's words as before
    with pytest.raises(RuntimeError, match="DefaultCPUAllocator: can't allocate memory"):
        ember.empty(1 << 40, dtype=ember.float32)


def test_format_size_as_the_cuda_allocator():
    from ember.device import _format_size
    assert [_format_size(n) for n in (512, 1024, 1536, 5 << 20, 3 << 30)] == \
        ["512 bytes", "1024 bytes", "1.50 KiB", "5.00 MiB", "3.00 GiB"]


_CPP_PROBE = """
#include <torch/extension.h>
std::vector<int64_t> layout(torch::Tensor t) {
  TORCH_CHECK(t.is_cuda(), "expected a CUDA tensor");
  std::vector<int64_t> out(t.sizes().begin(), t.sizes().end());
  for (auto s : t.strides()) out.push_back(s);
  out.push_back(t.numel());
  out.push_back(t.element_size());
  out.push_back(t.scalar_type() == torch::kFloat32);
  out.push_back(t.is_contiguous());
  out.push_back(t.size(-1));
  out.push_back(t.stride(0));
  return out;
}
int64_t address(torch::Tensor t) { return reinterpret_cast<int64_t>(t.data_ptr<float>()); }
int64_t ndim_of_array(torch::Tensor t) { return t.array().ndim(); }
torch::Tensor twice_plus(torch::Tensor a, torch::Tensor b) { return a * 2 + b; }
"""


def test_cpp_extensions_see_cuda_tensors(fake_cuda):
    """A C++ function given CUDA tensors reads their sizes, strides and dtype from the Python
    tensor and gets the device address from data_ptr() (here the stand-in's host memory);
    the ops it calls stay on the device; array() (a NumPy array) refuses them."""
    from ember.utils.cpp_extension import load_inline
    m = load_inline("fake_cuda_tensor_probe", cpp_sources=_CPP_PROBE,
                    functions=["layout", "address", "ndim_of_array", "twice_plus"])
    x = ember.arange(12.0, device="cuda").reshape(3, 4)
    assert m.layout(x) == [3, 4, 4, 1, 12, 4, 1, 1, 4, 4]
    t = x.t()
    assert m.layout(t) == [4, 3, 1, 4, 12, 4, 1, 0, 3, 1]
    assert m.address(x[1]) == x[1].data_ptr() == x.data_ptr() + 16
    with pytest.raises(RuntimeError, match="expected a CUDA tensor"):
        m.layout(x.cpu())
    with pytest.raises(RuntimeError, match="its data is device memory, not a NumPy array"):
        m.ndim_of_array(x)
    y = m.twice_plus(x, ember.ones(3, 4, device="cuda"))
    assert y.is_cuda and y.tolist() == (x * 2 + 1).tolist()


def test_device_properties(fake_cuda):
    p = ember.cuda.get_device_properties(0)
    assert (p.name, p.major, p.minor, p.total_memory, p.multi_processor_count) == \
        ("Fake CUDA device", 9, 0, 80 << 30, 132)
    assert repr(p) == ("_CudaDeviceProperties(name='Fake CUDA device', major=9, minor=0, "
                       "total_memory=81920MB, multi_processor_count=132, L2_cache_size=50MB)")
    assert ember.cuda.get_device_properties("cuda:0").name == p.name


def test_streams_and_events(fake_cuda):
    default = ember.cuda.default_stream()
    assert default.cuda_stream == 0 and ember.cuda.current_stream() == default
    s = ember.cuda.Stream()
    assert s.cuda_stream != 0 and s != default and s.device == ember.device("cuda", 0)
    assert repr(s) == f"<torch.cuda.Stream device=cuda:0 cuda_stream={s.cuda_stream:#x}>"
    with ember.cuda.stream(s) as inside:
        assert inside is s and ember.cuda.current_stream() == s
        with ember.cuda.stream(None):
            assert ember.cuda.current_stream() == s
    assert ember.cuda.current_stream() == default
    start, end = ember.cuda.Event(enable_timing=True), ember.cuda.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="Both events must be recorded"):
        start.elapsed_time(end)
    start.record()
    x = ember.ones(100, device="cuda").sum()
    end.record(s)
    end.synchronize()
    assert end._native.stream is s._native and start._native.stream is default._native
    assert start.query() and s.query() and start.elapsed_time(end) >= 0.0
    assert x.item() == 100.0
    with pytest.raises(RuntimeError, match="Both events must be created with argument "
                                           "'enable_timing=True'"):
        ember.cuda.Event().elapsed_time(end)
    s.wait_stream(default)  # records an event on default, s waits for it
    assert len(s._native.waited) == 1
    e = s.record_event()
    e.wait()  # the current stream (default) waits for it
    ember.cuda.set_stream(s)
    assert ember.cuda.current_stream() == s
    ember.cuda.set_stream(default)
    with pytest.raises(NotImplementedError, match="priority"):
        ember.cuda.Stream(priority=-1)
    assert ember.cuda.current_stream("cuda:0") == ember.cuda.current_stream(0)
    with pytest.raises(NotImplementedError, match="current device, not cuda:1"):
        ember.cuda.Stream("cuda:1")
    with pytest.raises(NotImplementedError, match="interprocess"):
        ember.cuda.Event(interprocess=True)
