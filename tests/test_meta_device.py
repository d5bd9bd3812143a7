"""'meta' tensors: shape and dtype, no data; ops give meta results without computing."""
import pickle
import copy
import tracemalloc

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.backend.meta import MetaArray, meta_empty


def _peak_bytes(fn):
    """Peak traced allocation while ``fn`` runs (NumPy's buffers are traced)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = fn()
        return tracemalloc.get_traced_memory()[1], out
    finally:
        tracemalloc.stop()


# ---- creation and identity ---------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: ember.empty(3, 4, device="meta"),
    lambda: ember.zeros(3, 4, device="meta"),
    lambda: ember.ones((3, 4), device=ember.device("meta")),
    lambda: ember.full((3, 4), 2.0, device="meta"),
    lambda: ember.randn(3, 4, device="meta"),
    lambda: ember.rand(3, 4, device="meta"),
])
def test_factories_make_meta_tensors(make):
    t = make()
    assert t.is_meta and t.device == ember.device("meta") and t.device.type == "meta"
    assert t.shape == (3, 4) and t.dtype is ember.float32
    assert isinstance(t._data, MetaArray) and not ember.ones(1).is_meta


def test_factory_dtypes_and_sizes():
    assert ember.arange(10**12, device="meta").shape == (10**12,)
    assert ember.arange(5, device="meta").dtype is ember.int64
    assert ember.randint(0, 3, (2, 5), device="meta").dtype is ember.int64
    assert ember.tensor([[1, 2, 3]], device="meta").shape == (1, 3)
    assert ember.eye(3, 2, device="meta").shape == (3, 2)
    assert ember.linspace(0, 1, 7, device="meta", dtype=ember.float64).dtype is ember.float64


def test_like_functions_keep_or_change_device():
    m = ember.empty(2, 3, device="meta", dtype=ember.float64)
    for like in (ember.empty_like, ember.zeros_like, ember.ones_like, ember.randn_like):
        out = like(m)
        assert out.is_meta and out.shape == (2, 3) and out.dtype is ember.float64
    cpu = ember.empty_like(m, device="cpu")
    assert not cpu.is_meta and cpu.shape == (2, 3)
    assert ember.zeros_like(ember.ones(2), device="meta").is_meta
    assert m.new_zeros(4).is_meta and m.new_empty(2).is_meta


def test_random_factories_do_not_advance_the_generator():
    ember.manual_seed(3)
    expected = ember.rand(3)
    ember.manual_seed(3)
    ember.randn(1000, device="meta")
    ember.empty(5, device="meta").uniform_()
    assert np.array_equal(ember.rand(3).numpy(), expected.numpy())


def test_default_device_and_context_manager():
    with ember.device("meta"):
        assert ember.ones(2).is_meta and nn.Linear(2, 3).weight.is_meta
    assert not ember.ones(2).is_meta
    ember.set_default_device("meta")
    try:
        assert ember.zeros(2).is_meta
    finally:
        ember.set_default_device(None)
    assert not ember.zeros(2).is_meta


def test_to_meta_and_back():
    x = ember.ones(2, 3, requires_grad=True)
    m = x.to("meta")
    assert m.is_meta and m.grad_fn.name() == "ToCopyBackward0"
    assert x.to("meta", ember.float64).dtype is ember.float64
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        m.sum().backward()
    for move in (lambda: m.to("cpu"), lambda: m.cpu()):
        with pytest.raises(NotImplementedError, match="no data"):
            move()
    assert m.to("meta") is m


# ---- data access --------------------------------------------------------------------------
def test_data_access_raises():
    m = ember.ones(3, 4, device="meta")
    with pytest.raises(RuntimeError, match="a Tensor with 12 elements cannot be converted"):
        m.item()
    one = ember.ones(1, device="meta")
    for read in (one.item, lambda: bool(one), lambda: float(one), lambda: int(one)):
        with pytest.raises(RuntimeError, match=r"Tensor.item\(\) cannot be called on meta"):
            read()
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
        m.tolist()
    for to_numpy in (m.numpy, lambda: np.asarray(m)):
        with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
            to_numpy()


def test_data_dependent_ops_raise():
    m = ember.ones(3, 4, device="meta")
    for op in (lambda: m[m > 0], m.nonzero, lambda: m.masked_select(m > 0)):
        with pytest.raises(NotImplementedError, match="depends on the values"):
            op()


def test_metadata():
    m = ember.empty(2, 3, 4, device="meta", dtype=ember.float64)
    assert m.stride() == (12, 4, 1) and m.is_contiguous() and m.data_ptr() == 0
    assert m.numel() == 24 and m.element_size() == 8 and m.dim() == 3
    assert len(m) == 2 and all(row.is_meta and row.shape == (3, 4) for row in m)


def test_repr():
    assert repr(ember.empty(3, 4, device="meta")) == "tensor(..., device='meta', size=(3, 4))"
    assert repr(ember.empty(2, device="meta", dtype=ember.int64)) == \
        "tensor(..., device='meta', size=(2,), dtype=ember.int64)"
    x = ember.empty(2, device="meta", requires_grad=True)
    assert repr(x) == "tensor(..., device='meta', size=(2,), requires_grad=True)"
    assert repr(x * 2) == "tensor(..., device='meta', size=(2,), grad_fn=<MulBackward0>)"


def test_copies_stay_meta():
    m = ember.empty(2, 3, device="meta", requires_grad=True)
    for c in (copy.deepcopy(m), pickle.loads(pickle.dumps(m)), m.clone(), m.detach()):
        assert c.is_meta and c.shape == (2, 3)


# ---- mixing devices -----------------------------------------------------------------------
def test_mixing_meta_and_cpu_raises():
    m, c = ember.ones(3, 4, device="meta"), ember.ones(3, 4)
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device "
                                           "meta!"):
        m + c
    with pytest.raises(RuntimeError, match="Tensor on device meta is not on the expected device "
                                           "cpu!"):
        c * m
    with pytest.raises(RuntimeError, match="expected device meta"):
        ember.cat([m, c])
    assert (m * ember.tensor(2.0)).is_meta  # a CPU scalar tensor may join


# ---- ops: meta results, nothing computed ---------------------------------------------------
def test_elementwise_reduction_and_views_shapes():
    a = ember.empty(4, 1, 3, device="meta")
    b = ember.empty(5, 3, device="meta", dtype=ember.float64)
    s = a + b
    assert s.is_meta and s.shape == (4, 5, 3) and s.dtype is ember.float64
    assert (a > 0).dtype is ember.bool
    assert s.sum((0, 2)).shape == (5,) and s.mean(1, keepdim=True).shape == (4, 1, 3)
    v, i = s.max(0)
    assert v.shape == (5, 3) and i.dtype is ember.int64 and i.is_meta
    assert s.permute(2, 0, 1).reshape(3, -1).shape == (3, 20)
    assert ember.cat([b, b], 1).shape == (5, 6) and ember.stack([b, b]).shape == (2, 5, 3)
    idx = ember.zeros(7, dtype=ember.int64, device="meta")
    assert b[idx].shape == (7, 3) and b[1:4, ::2].shape == (3, 2)


def test_inplace_ops_on_meta():
    m = ember.zeros(2, 3, device="meta")
    m.add_(1).mul_(ember.ones(3, device="meta"))
    m[0] = 5.0
    m.fill_(2).zero_()
    assert m.is_meta and m.shape == (2, 3) and m._version > 0


def test_matmul_10000_squared_allocates_nothing():
    a = ember.empty(10000, 10000, device="meta")
    peak, out = _peak_bytes(lambda: a @ a)
    assert out.is_meta and out.shape == (10000, 10000)
    assert peak < 1 << 20  # the result alone would be 400 MB


def test_large_forward_and_backward_allocate_nothing():
    def step():
        model = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1, device="meta"), nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(),
                              nn.Linear(32 * 256 * 256, 10, device="meta"))
        x = ember.empty(64, 16, 512, 512, device="meta")
        loss = nn.functional.cross_entropy(model(x),
                                           ember.zeros(64, dtype=ember.int64, device="meta"))
        loss.backward()
        return model, loss
    peak, (model, loss) = _peak_bytes(step)
    assert loss.is_meta and loss.shape == ()
    assert model[0].weight.grad.is_meta and model[0].weight.grad.shape == (32, 16, 3, 3)
    assert model[4].weight.grad.shape == (10, 32 * 256 * 256)
    assert peak < 8 << 20  # the activations alone would take gigabytes


def test_meta_array_rules():
    a = meta_empty((3, 4), np.float32)
    assert (a @ meta_empty((4,), np.float64)).dtype == np.float64
    assert np.einsum("ij,jk->ik", a, meta_empty((4, 5), np.float32)).shape == (3, 5)
    assert np.tensordot(a, meta_empty((4, 2), np.float32), axes=1).shape == (3, 2)
    assert np.concatenate([a, a], axis=None).shape == (24,)
    assert np.add.reduce(a, axis=None).shape == () and a.cumsum(1).shape == (3, 4)
    with pytest.raises(ValueError):
        a @ meta_empty((3, 4), np.float32)
    with pytest.raises(ValueError, match="zero-size array"):
        np.maximum.reduce(meta_empty((0, 2), np.float32), axis=0)


# ---- modules ------------------------------------------------------------------------------
def test_layers_built_on_meta():
    layers = [nn.Linear(3, 4, device="meta"), nn.Conv1d(2, 3, 3, device="meta"),
              nn.BatchNorm2d(3, device="meta"), nn.LayerNorm(4, device="meta"),
              nn.GroupNorm(2, 4, device="meta"), nn.Embedding(5, 2, device="meta"),
              nn.LSTM(3, 4, device="meta"), nn.GRUCell(3, 4, device="meta"),
              nn.MultiheadAttention(4, 2, device="meta"), nn.PReLU(device="meta"),
              nn.TransformerEncoderLayer(4, 2, 8, device="meta")]
    for layer in layers:
        tensors = list(layer.parameters()) + list(layer.buffers())
        assert tensors and all(t.is_meta for t in tensors), type(layer).__name__


def test_model_forward_on_meta_inputs():
    model = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.1, batch_first=True, device="meta")
    out = model(ember.empty(2, 5, 8, device="meta"))
    assert out.is_meta and out.shape == (2, 5, 8)
    lstm = nn.LSTM(4, 6, num_layers=2, batch_first=True, device="meta")
    y, (h, c) = lstm(ember.empty(3, 7, 4, device="meta"))
    assert y.shape == (3, 7, 6) and h.shape == (2, 3, 6) and c.is_meta


def test_to_empty_from_meta_gives_memory():
    layer = nn.Linear(3, 4, device="meta")
    assert layer.to_empty(device="cpu") is layer
    assert not layer.weight.is_meta and layer.weight.shape == (4, 3)
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
    layer(ember.ones(2, 3)).sum().backward()  # real memory: trains
    assert layer.weight.grad.shape == (4, 3)


def test_module_to_meta_and_back():
    layer = nn.Linear(3, 4).to("meta")
    assert layer.weight.is_meta and isinstance(layer.weight, nn.Parameter)
    with pytest.raises(NotImplementedError, match="use torch.nn.Module.to_empty"):
        layer.to("cpu")


def test_skip_init_runs_no_initialization(monkeypatch):
    drawn = []
    monkeypatch.setattr(nn.Linear, "reset_parameters",
                        lambda self: drawn.append(self.weight.is_meta))
    layer = nn.utils.skip_init(nn.Linear, 3, 4)
    assert drawn == [True]  # it ran on meta tensors only: nothing was written
    assert not layer.weight.is_meta and layer.weight.shape == (4, 3)
    assert nn.utils.skip_init(nn.Linear, 3, 4, device="meta").weight.is_meta


def test_init_functions_are_no_ops_on_meta():
    w = ember.empty(2000, 3000, device="meta")
    peak, _ = _peak_bytes(lambda: [f(w) for f in (
        nn.init.kaiming_uniform_, nn.init.xavier_normal_, nn.init.trunc_normal_,
        nn.init.orthogonal_, nn.init.zeros_)])
    assert peak < 1 << 20 and w.is_meta
