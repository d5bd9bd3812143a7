"""uint16 / uint32 / uint64: PyTorch's "limited support" unsigned dtypes (creation, casts,
equality, promotion only with floats and themselves, kernels it lacks refused by name)."""
import io
import warnings

import numpy as np
import pytest

import ember
from ember.backend import dtypes
from ember.backend.dtypes import uint16, uint32, uint64

UINTS = [(uint16, np.uint16, "UInt16"), (uint32, np.uint32, "UInt32"),
         (uint64, np.uint64, "UInt64")]


@pytest.mark.parametrize("dt, np_dt, scalar", UINTS)
def test_dtype_names_and_metadata(dt, np_dt, scalar):
    assert repr(dt) == f"ember.{dt.name}"
    assert dt.np == np.dtype(np_dt) and dt.itemsize == np.dtype(np_dt).itemsize
    assert not dt.is_signed and not dt.is_floating_point and not dt.is_complex
    assert dt.scalar_name == scalar
    info = ember.iinfo(dt)
    assert (info.min, info.max, info.bits) == (0, 2 ** (8 * dt.itemsize) - 1, 8 * dt.itemsize)
    with pytest.raises(RuntimeError, match=f"Unknown Complex ScalarType for {scalar}"):
        dt.to_complex()


@pytest.mark.parametrize("dt, np_dt, scalar", UINTS)
def test_creation_and_casts(dt, np_dt, scalar):
    top = 2 ** (8 * dt.itemsize) - 1
    t = ember.tensor([1, top, top], dtype=dt)
    assert t.dtype is dt and t.tolist() == [1, top, top]
    if dt is not uint64:  # -1 wraps, as in PyTorch (which reads uint64 as unsigned)
        assert ember.tensor([-1], dtype=dt).tolist() == [top]
    assert ember.zeros(2, dtype=dt).tolist() == [0, 0]
    assert ember.ones(2, dtype=dt).dtype is dt
    assert ember.full((2,), 7, dtype=dt).tolist() == [7, 7]
    assert ember.empty(3, dtype=dt).shape == (3,)
    assert ember.zeros_like(t).dtype is dt and ember.full_like(t, 2).tolist() == [2, 2, 2]
    assert ember.tensor([1.5, 2.0]).to(dt).tolist() == [1, 2]
    assert t.to(ember.float64).tolist() == [1.0, float(top), float(top)]
    assert t.type() == f"torch.{scalar}Tensor"
    assert not t.is_floating_point() and t.element_size() == dt.itemsize
    assert isinstance(t[1].item(), int) and t[1].item() == top


def test_uint64_reads_python_ints_past_int64():
    t = ember.tensor([2 ** 64 - 1, 3], dtype=uint64)
    assert t.tolist() == [2 ** 64 - 1, 3]
    with pytest.raises(OverflowError, match="int too big to convert"):
        ember.tensor([2 ** 64], dtype=uint64)
    with pytest.raises(OverflowError, match="can't convert negative int to unsigned"):
        ember.tensor([-1], dtype=uint64)


def test_numpy_interop():
    a = np.array([1, 2], dtype=np.uint32)
    t = ember.from_numpy(a)
    assert t.dtype is uint32
    a[0] = 9  # from_numpy shares memory
    assert t.tolist() == [9, 2]
    assert t.numpy().dtype == np.uint32
    assert ember.tensor(np.array([5], dtype=np.uint64)).dtype is uint64
    with pytest.raises(TypeError, match="uint64, uint32, uint16, uint8, and bool"):
        ember.from_numpy(np.array([1], dtype=object))


def test_promotion():
    # only floats and the dtype itself promote with them
    assert ember.promote_types(uint32, ember.float32) is ember.float32
    assert ember.promote_types(uint16, uint16) is uint16
    for other, name in [(ember.int64, "Long"), (ember.uint8, "Byte"), (ember.bool, "Bool"),
                        (uint32, "UInt32")]:
        with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types is "
                                               f"not supported, attempted to promote UInt16 "
                                               f"and {name}"):
            ember.promote_types(uint16, other)
    u = ember.tensor([1, 2, 3], dtype=uint32)
    assert ember.result_type(u, 1) is uint32
    assert ember.result_type(u, 1.0) is ember.float32
    assert ember.result_type(u, ember.tensor(1)) is uint32  # a 0-d int does not count
    with pytest.raises(RuntimeError, match="attempted to promote UInt32 and Int"):
        u + ember.tensor([1], dtype=ember.int32)
    assert (u * 1.5).tolist() == [1.5, 3.0, 4.5]


def test_supported_ops():
    u = ember.tensor([3, 1, 2], dtype=uint16)
    assert (u == 2).tolist() == [False, False, True]
    assert (u * 2).dtype is uint16 and (u * 2).tolist() == [6, 2, 4]
    assert u.sum().dtype is ember.int64 and u.sum().item() == 6
    assert u.sort().values.tolist() == [1, 2, 3] and u.sort().indices.tolist() == [1, 2, 0]
    assert (u & 1).tolist() == [1, 1, 0]
    assert ember.cat([u, u]).dtype is uint16
    assert u.view(ember.int16).dtype is ember.int16
    assert (u > 1.5).tolist() == [True, False, True]  # compared as floats
    assert not u.is_signed() and ember.zeros(1).is_signed()
    assert ember.tensor([3, 1], dtype=uint32).repeat_interleave(2).tolist() == [3, 3, 1, 1]


@pytest.mark.parametrize("make, kernel", [
    (lambda dt: ember.arange(5, dtype=dt), "arange_cpu"),
    (lambda dt: ember.linspace(0, 5, 3, dtype=dt), "linspace_cpu"),
    (lambda dt: ember.eye(2, dtype=dt), "eye"),
    (lambda dt: ember.randperm(3, dtype=dt), "randperm"),
    (lambda dt: ember.rand(2, dtype=dt), "check_uniform_bounds"),
    (lambda dt: ember.empty(2, dtype=dt).random_(), "random_kernel_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).bitwise_not(), "bitwise_not_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).logical_not(), "logical_not_cpu"),
    (lambda dt: ember.ones(2, dtype=dt) < 2, "lt_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).ge(ember.ones(2, dtype=dt)), "ge_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).max(), "max_all"),
    (lambda dt: ember.ones(2, dtype=dt).min(0), "min_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).amax(), "max_values_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).argmin(), "argmin_cpu"),
    (lambda dt: ember.aminmax(ember.ones(2, dtype=dt)), "aminmax_cpu"),
    (lambda dt: ember.max(ember.ones(2, dtype=dt), ember.ones(2, dtype=dt)), "maximum_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).clamp(0, 1), "clamp_scalar_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).clamp_max(1), "clamp_max_scalar_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).topk(1), "topk_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).flip(0), "flip_cpu"),
    (lambda dt: ember.ones(2, dtype=dt).nonzero(), "nonzero_count_cpu"),
])
@pytest.mark.parametrize("dt, np_dt, scalar", UINTS)
def test_kernels_pytorch_lacks_are_refused(make, kernel, dt, np_dt, scalar):
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for '
                                                  f"'{scalar}'"):
        make(dt)


def test_bounded_random_draws_work():
    t = ember.empty(50, dtype=uint32).random_(0, 5)
    assert t.dtype is uint32 and 0 <= min(t.tolist()) and max(t.tolist()) < 5
    with pytest.raises(RuntimeError, match="from is out of bounds for unsigned int"):
        ember.empty(2, dtype=uint32).random_(-1, 5)


def test_save_load_round_trip():
    state = {"a": ember.tensor([1, 2 ** 32 - 1], dtype=uint32),
             "b": ember.tensor([2 ** 64 - 1], dtype=uint64),
             "c": ember.tensor([7, 8, 9], dtype=uint16)[1:]}
    buffer = io.BytesIO()
    ember.save(state, buffer)
    buffer.seek(0)
    loaded = ember.load(buffer)
    for key, t in state.items():
        assert loaded[key].dtype is t.dtype and loaded[key].tolist() == t.tolist()


def test_no_legacy_tensor_types():
    # PyTorch has no UInt32Tensor & co.
    assert "UInt32Tensor" not in dtypes.LEGACY_TENSOR_TYPES
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ember.tensor([1], dtype=uint32).type() == "torch.UInt32Tensor"
