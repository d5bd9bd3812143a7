"""Device queries of a CPU-only build: ember.cuda, ember.accelerator, ember.backends,
the default device, and Tensor/Module .cuda()."""
import pytest

import ember
from ember import nn

pytestmark = pytest.mark.skipif(ember.cuda.is_available(),
                                reason="CPU-only answers: CUDA (CuPy) is available here")


def test_cuda_answers_nothing_available():
    assert ember.cuda.is_available() is False
    assert ember.cuda.device_count() == 0
    assert ember.cuda.is_initialized() is False
    assert ember.cuda.memory_allocated() == 0
    # seeding and cache calls are harmless no-ops, as scripts call them unconditionally
    assert ember.cuda.manual_seed(0) is None
    assert ember.cuda.manual_seed_all(0) is None
    assert ember.cuda.empty_cache() is None


@pytest.mark.parametrize("call", [lambda: ember.cuda.synchronize(),
                                  lambda: ember.cuda.current_device(),
                                  lambda: ember.cuda.get_device_name(),
                                  lambda: ember.zeros(2).cuda(),
                                  lambda: ember.zeros(2).to("cuda"),
                                  lambda: ember.zeros(2, device="cuda"),
                                  lambda: nn.Linear(2, 2).cuda(),
                                  lambda: nn.Linear(2, 2).to("cuda:0")])
def test_gpu_work_raises_not_compiled(call):
    with pytest.raises(AssertionError, match="^Torch not compiled with CUDA enabled$"):
        call()


def test_accelerator():
    assert ember.accelerator.is_available() is False
    assert ember.accelerator.current_accelerator() is None
    assert ember.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
        ember.accelerator.current_device_index()
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
        ember.zeros(2).to(0)
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
        ember.zeros(2).pin_memory()
    assert ember.zeros(2).is_pinned() is False


def test_backends_flags_are_settable():
    assert ember.backends.mps.is_available() is False
    assert ember.backends.cudnn.is_available() is False
    old = ember.backends.cudnn.benchmark, ember.backends.cudnn.deterministic
    try:
        ember.backends.cudnn.benchmark = True
        ember.backends.cudnn.deterministic = True
        assert ember.backends.cudnn.benchmark and ember.backends.cudnn.deterministic
    finally:
        ember.backends.cudnn.benchmark, ember.backends.cudnn.deterministic = old
    ember.backends.cuda.matmul.allow_tf32 = False


def test_default_device():
    assert ember.get_default_device() == ember.device("cpu")
    try:
        ember.set_default_device("cuda")  # allowed, as in PyTorch; creating then fails
        assert ember.get_default_device() == ember.device("cuda")
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            ember.zeros(2)
        ember.set_default_device("cpu")
        assert ember.ones(2).device == ember.device("cpu")
    finally:
        ember.set_default_device(None)
    assert ember.get_default_device() == ember.device("cpu")
    assert ember.zeros(1).tolist() == [0.0]


def test_device_parsing_errors():
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda, .* device type at "
                                           "start of device string: foo"):
        ember.device("foo")
    with pytest.raises(RuntimeError, match="Invalid device string: 'cuda:x'"):
        ember.device("cuda:x")
    assert ember.device("cuda", 1).index == 1
    assert str(ember.device("mps")) == "mps"
    with pytest.raises(RuntimeError, match="no 'mps' backend"):
        ember.zeros(2, device="mps")


def test_pin_memory_loader_warns_and_loads():
    loader = ember.utils.data.DataLoader(list(range(4)), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="no accelerator is found"):
        batches = list(loader)
    assert [b.tolist() for b in batches] == [[0, 1], [2, 3]]
