"""DLPack between ember, PyTorch and NumPy: round trips share memory (a write through one
is seen by the other), dtypes and strides survive, errors are PyTorch's."""
import numpy as np
import pytest
import torch
import torch.utils.dlpack

import ember
import ember.utils.dlpack
from tests.parity.compare import error_of

RNG = np.random.default_rng(0)

DTYPES = ["float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool",
          "complex64", "complex128"]


def _values(dtype, shape=(3, 4)):
    if dtype == "bool":
        return RNG.random(shape) > 0.5
    return (RNG.standard_normal(shape) * 10).astype(dtype)


def _views(lib, base):
    """The same views of ``base`` in either library: whole, transposed, strided slice, 0-d."""
    return {"contiguous": base, "transposed": base.t(), "sliced": base[:, 1::2],
            "row": base[1], "scalar": base[1, 2]}


VIEWS = ["contiguous", "transposed", "sliced", "row", "scalar"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", VIEWS)
def test_torch_reads_ember_memory(dtype, view):
    values = _values(dtype)
    e = _views(ember, ember.tensor(values))[view]
    t_expected = _views(torch, torch.tensor(values))[view]
    t = torch.from_dlpack(e)
    assert t.dtype == t_expected.dtype and tuple(t.shape) == tuple(t_expected.shape)
    assert t.stride() == t_expected.stride()
    np.testing.assert_array_equal(t.numpy(), t_expected.numpy())
    assert t.data_ptr() == e.data_ptr()  # no copy


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", VIEWS)
def test_ember_reads_torch_memory(dtype, view):
    values = _values(dtype)
    t = _views(torch, torch.tensor(values))[view]
    e = ember.from_dlpack(t)
    assert e.dtype.name == str(t.dtype).split(".")[-1]
    assert tuple(e.shape) == tuple(t.shape) and e.stride() == t.stride()
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert e.data_ptr() == t.data_ptr()


def test_writes_go_through_both_ways():
    e = ember.zeros(2, 3)
    t = torch.from_dlpack(e)
    t[0, 1] = 5.0
    assert e[0, 1].item() == 5.0
    e[1, 2] = -3.0
    assert t[1, 2].item() == -3.0
    t2 = torch.arange(6.0).reshape(2, 3).t()
    e2 = ember.from_dlpack(t2)
    e2[2, 0] = 100.0  # through the transposed view
    assert t2[2, 0].item() == 100.0
    e2.mul_(2)
    np.testing.assert_array_equal(t2.numpy(), e2.numpy())


def test_numpy_round_trip_shares_memory():
    e = ember.arange(6.0).reshape(2, 3)
    a = np.from_dlpack(e)
    a[1, 1] = 42.0
    assert e[1, 1].item() == 42.0
    back = ember.from_dlpack(a)
    back[0, 0] = -1.0
    assert e[0, 0].item() == -1.0
    assert np.from_dlpack(e.t()).strides == np.from_dlpack(torch.arange(6.0).reshape(2, 3).t()) \
        .strides


@pytest.mark.parametrize("view", VIEWS)
def test_capsules_like_torch(view):
    values = _values("float32")
    t = _views(torch, torch.tensor(values))[view]
    e = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    assert e.stride() == t.stride() and e.data_ptr() == t.data_ptr()
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    t_round = torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(
        _views(ember, ember.tensor(values))[view]))
    np.testing.assert_array_equal(t_round.numpy(), _views(torch, torch.tensor(values))[view])


def test_capsule_memory_is_shared_and_writable():
    t = torch.zeros(4)
    e = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(t))
    e[2] = 8.0
    assert t[2].item() == 8.0
    t_from_ember = torch.utils.dlpack.from_dlpack(ember.utils.dlpack.to_dlpack(e))
    t_from_ember[0] = 1.5
    assert e[0].item() == 1.5 and t[0].item() == 1.5


def test_capsule_keeps_memory_alive():
    e = ember.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(torch.arange(5.0)))
    import gc
    gc.collect()
    assert e.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    del e
    gc.collect()  # the producer's deleter runs here (no crash, no leak to check)


def test_dlpack_device():
    e, t = ember.zeros(2), torch.zeros(2)
    assert e.__dlpack_device__() == t.__dlpack_device__()
    assert tuple(map(int, e.__dlpack_device__())) == (1, 0)
    assert ember.utils.dlpack.DLDeviceType.kDLCUDA == torch.utils.dlpack.DLDeviceType.kDLCUDA


@pytest.mark.parametrize("case", [
    "requires_grad", "requires_grad_capsule", "consumed_capsule", "not_a_capsule",
    "stream_on_cpu", "to_dlpack_not_tensor", "meta"])
def test_errors_like_torch(case):
    def run(lib):
        dl = lib.utils.dlpack
        if case == "requires_grad":
            return lambda: np.from_dlpack(lib.ones(2, requires_grad=True))
        if case == "requires_grad_capsule":
            return lambda: dl.to_dlpack(lib.ones(2, requires_grad=True))
        if case == "consumed_capsule":
            capsule = dl.to_dlpack(lib.ones(2))
            lib.from_dlpack(capsule)
            return lambda: lib.from_dlpack(capsule)
        if case == "not_a_capsule":
            return lambda: lib.from_dlpack([1, 2])
        if case == "stream_on_cpu":
            return lambda: lib.ones(2).__dlpack__(stream=1)
        if case == "to_dlpack_not_tensor":
            return lambda: dl.to_dlpack([1.0])
        return lambda: lib.empty(2, device="meta").__dlpack__()
    assert error_of(run(ember)) == error_of(run(torch))


def test_ember_tensor_into_torch_capsule_consumed_once():
    capsule = ember.utils.dlpack.to_dlpack(ember.ones(2))
    torch.utils.dlpack.from_dlpack(capsule)
    assert error_of(lambda: ember.from_dlpack(capsule)) == \
        error_of(lambda: torch.from_dlpack(capsule))


def test_copy_and_device_arguments():
    t = torch.arange(3.0)
    e = ember.from_dlpack(t, copy=True)
    e[0] = 9.0
    assert t[0].item() == 0.0
    same = ember.from_dlpack(t, device="cpu")
    same[1] = 7.0
    assert t[1].item() == 7.0
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        ember.from_dlpack(t, device="cuda")


def test_detached_tensor_exports_and_grad_flows_separately():
    w = ember.ones(3, requires_grad=True)
    t = torch.from_dlpack(w.detach())
    (w * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]
    np.testing.assert_array_equal(t.numpy(), np.ones(3, np.float32))


def test_expanded_tensor_exports_its_strides():
    e = ember.arange(3.0).expand(2, 3)
    t = torch.from_dlpack(e)
    assert t.stride() == torch.arange(3.0).expand(2, 3).stride()
    np.testing.assert_array_equal(t.numpy(), e.numpy())
