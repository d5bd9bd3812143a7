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


def _u(dt):
    return ember.tensor([3, 1, 2, 0], dtype=dt)


def _m(dt):
    return ember.tensor([[3, 1, 2], [0, 5, 4]], dtype=dt)


def _i(*values):
    return ember.tensor(list(values))


def _put(t, index, value):
    t[index] = value
    return t


@pytest.mark.parametrize("make, kernel", [
    (lambda dt: _u(dt) + _u(dt), "add_stub"),
    (lambda dt: 1 + _u(dt), "add_stub"),
    (lambda dt: _u(dt).add_(1), "add_stub"),
    (lambda dt: ember.add(_u(dt), _u(dt), alpha=2), "add_stub"),
    (lambda dt: _u(dt) - ember.tensor(1), "add_stub"),
    (lambda dt: 5 - _u(dt), "add_stub"),
    (lambda dt: _u(dt).diff(), "add_stub"),
    (lambda dt: -_u(dt), "neg_cpu"),
    (lambda dt: ember.ones(0, dtype=dt).neg_(), "neg_cpu"),
    (lambda dt: _u(dt).abs(), "abs_cpu"),
    (lambda dt: _u(dt).sign(), "sign_cpu"),
    (lambda dt: _u(dt).sgn(), "sign_cpu"),
    (lambda dt: ember.relu(_u(dt)), "clamp_min_scalar_cpu"),
    (lambda dt: _u(dt) // 2, "div_floor_cpu"),
    (lambda dt: _u(dt).div(2, rounding_mode="trunc"), "div_trunc_cpu"),
    (lambda dt: _u(dt) % 2, "remainder_cpu"),
    (lambda dt: ember.fmod(_u(dt), 2), "fmod_cpu"),
    (lambda dt: _u(dt) ** 2, "pow"),
    (lambda dt: _u(dt).square(), "pow"),
    (lambda dt: _u(dt) << 1, "lshift_cpu"),
    (lambda dt: _u(dt) >> _u(dt), "rshift_cpu"),
    (lambda dt: ember.gcd(_u(dt), _u(dt)), "gcd_cpu"),
    (lambda dt: ember.logical_and(_u(dt), _u(dt)), "logical_and_cpu"),
    (lambda dt: ember.maximum(_u(dt), _u(dt)), "maximum_cpu"),
    (lambda dt: ember.minimum(_u(dt), ember.tensor(1)), "minimum_cpu"),
    (lambda dt: ember.fmax(_u(dt), _u(dt)), "maximum_cpu"),
    (lambda dt: ember.lerp(_u(dt), _u(dt), 0.5), "lerp_kernel_scalar"),
    (lambda dt: ember.addcmul(_u(dt), _u(dt), _u(dt)), "addcmul_cpu_out"),
    (lambda dt: _m(dt).sum(dtype=dt), "sum_cpu"),
    (lambda dt: ember.ones(2).cumsum(0, dtype=dt), "cumsum_out_cpu"),
    (lambda dt: _m(dt).cummax(1), "cummax_cpu"),
    (lambda dt: _m(dt).kthvalue(1), "kthvalue_cpu"),
    (lambda dt: _u(dt).median(), "median_cpu"),
    (lambda dt: _u(dt).median(0), "median_out"),
    (lambda dt: _m(dt).mode(), "mode_cpu"),
    (lambda dt: _m(dt).count_nonzero(), "nonzero_count_cpu"),
    (lambda dt: ember.bincount(_u(dt)), "bincount_cpu"),
    (lambda dt: ember.histc(_u(dt), 4), "aminmax_cpu"),
    (lambda dt: ember.searchsorted(_u(dt).sort().values, _u(dt)), "searchsorted_out_cpu"),
    (lambda dt: ember.isin(_u(dt), _u(dt)), "isin_default_cpu"),
    (lambda dt: ember.dot(_u(dt), _u(dt)), "dot"),
    (lambda dt: _m(dt) @ _m(dt).t(), "addmm_impl_cpu_"),
    (lambda dt: ember.einsum("i,i->", _u(dt), _u(dt)), "bmm"),
    (lambda dt: _m(dt)[:, :2].trace(), "trace"),
    (lambda dt: _u(dt).index_select(0, _i(0)), "index_select"),
    (lambda dt: _u(dt).repeat_interleave(_i(1, 2, 0, 1)), "index_select"),
    (lambda dt: _m(dt).gather(1, _i(0, 2).reshape(2, 1)), "scatter_gather_tensor_cpu"),
    (lambda dt: _u(dt).scatter(0, _i(1), 7), "scatter_gather_scalar_cpu"),
    (lambda dt: _u(dt).take(_i(0)), "take_cpu"),
    (lambda dt: _u(dt).masked_fill(_u(dt) == 1, 7), "masked_fill"),
    (lambda dt: _put(_u(dt), _u(dt) == 1, 7), "masked_fill"),
    (lambda dt: _put(_u(dt), [0, 2], 7), "index_put"),
    (lambda dt: _u(dt).masked_select(_u(dt) == 1), "masked_select"),
    (lambda dt: _u(dt).index_fill(0, _i(1), 7), "index_fill_cpu"),
    (lambda dt: _u(dt).index_copy(0, _i(1), _u(dt)[:1]), "index_copy_cpu"),
    (lambda dt: _u(dt).index_add(0, _i(1), _u(dt)[:1]), "index_add_"),
    (lambda dt: _u(dt).put_(_i(1), _u(dt)[:1]), "take_put_cpu"),
    (lambda dt: _m(dt).tril(), "tril"),
    (lambda dt: ember.triu(_m(dt)), "triu"),
    (lambda dt: ember.nn.functional.pad(_m(dt)[None], (1, 1), mode="reflect"),
     "reflection_pad1d"),
    (lambda dt: ember.nn.functional.hardtanh(_u(dt)), "clamp_scalar_cpu"),
    (lambda dt: ember.nn.functional.threshold(_u(dt), 1, 0), "threshold_cpu"),
    (lambda dt: ember.nn.functional.max_pool2d(_m(dt)[None], 2), "max_pool2d"),
    (lambda dt: ember.nn.functional.avg_pool1d(_m(dt), 2), "avg_pool2d"),
    (lambda dt: ember.nn.functional.adaptive_max_pool1d(_m(dt), 2), "adaptive_max_pool2d"),
])
@pytest.mark.parametrize("dt, np_dt, scalar", UINTS)
def test_arithmetic_and_indexing_kernels_pytorch_lacks(make, kernel, dt, np_dt, scalar):
    with pytest.raises(NotImplementedError, match=f'"{kernel}" not implemented for '
                                                  f"'{scalar}'"):
        make(dt)


@pytest.mark.parametrize("dt, np_dt, scalar", UINTS)
def test_what_computes(dt, np_dt, scalar):
    top = 2 ** (8 * dt.itemsize) - 1
    u = _u(dt)
    # scalars out of the dtype's range wrap into it before the op (as a C cast)
    assert (u * -1).tolist() == [top - 2, top, top - 1, 0] and (u * -1).dtype is dt
    assert (u & -1).tolist() == [3, 1, 2, 0]
    assert (u ** 0).tolist() == [1, 1, 1, 1] and (u ** 1).dtype is dt
    assert (u / 2).tolist() == [1.5, 0.5, 1.0, 0.0] and (u // 2.5).dtype is ember.float32
    assert (u + 1.5).dtype is ember.float32 and (u - ember.ones(4)).tolist() == [2, 0, 1, -1]
    assert _m(dt).count_nonzero(1).tolist() == [3, 2]
    assert u.cumsum(0).tolist() == [3, 4, 6, 6] and u.cumsum(0).dtype is ember.int64
    assert u[1].cummax(0).values.item() == 1 and u[1].kthvalue(1).values.item() == 1
    assert ember.searchsorted(ember.tensor([0.5, 2.5]), u).tolist() == [2, 1, 1, 0]
    assert ember.isin(u, ember.zeros(40, dtype=dt)).tolist() == [False, False, False, True]
    assert ember.outer(u, u)[0].tolist() == [9, 3, 6, 0]
    assert ember.einsum("i,j->ij", u, u).dtype is dt
    assert u[ember.tensor([0, 2])].tolist() == [3, 2] and u[u == 1].tolist() == [1]
    assert _put(u.clone(), slice(0, 2), 9).tolist() == [9, 9, 2, 0]
    assert ember.combinations(u, 0).shape == (0,)
    assert ember.triu(ember.ones(2, 0, dtype=dt)).shape == (2, 0)
    circular = ember.nn.functional.pad(_m(dt)[None], (1, 1), mode="circular")
    assert circular.dtype is dt and circular[0, 0].tolist() == [2, 3, 1, 2, 3]


def test_out_of_range_scalars_wrap_for_every_integer_dtype():
    assert (ember.tensor([1, 2], dtype=ember.int8) * 300).tolist() == [44, 88]
    assert (ember.tensor([1], dtype=ember.int8) * -300).tolist() == [-44]
    assert (ember.tensor([1, 2], dtype=ember.uint8) * -1).tolist() == [255, 254]
    with pytest.raises(OverflowError):  # past any 64-bit integer: no wrapping
        ember.tensor([1]) * 2 ** 64


@pytest.mark.parametrize("dt", [ember.uint8, ember.int8, uint16, uint32, uint64])
def test_float_results_take_scalars_as_given(dt):
    # a true division computes in float: -1 and 300 are not wrapped into the integer dtype
    t = ember.tensor([3, 0], dtype=dt)
    assert (t / -1).tolist() == [-3.0, -0.0] and (t / ember.tensor(-1)).tolist() == [-3.0, -0.0]
    assert (t / 300).tolist() == pytest.approx([0.01, 0.0])
    assert ember.copysign(t, -1).tolist() == [-3.0, -0.0]


def test_integer_powers_check_the_exponent_as_given():
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        ember.tensor([3], dtype=ember.uint8) ** -1
    with pytest.raises(RuntimeError, match="Integers to negative integer powers"):
        ember.tensor([3], dtype=uint32) ** -1
    with pytest.raises(RuntimeError, match="value cannot be converted to type int8_t without "
                                           "overflow"):
        ember.tensor([3], dtype=ember.int8) ** 300


def test_integer_addcdiv_is_refused():
    with pytest.raises(RuntimeError, match="Integer division with addcdiv is no longer"):
        ember.addcdiv(ember.ones(1), ember.tensor([1]), ember.tensor([1]))
    assert ember.addcdiv(ember.ones(1), ember.tensor([1]), ember.tensor([2.0])).tolist() == [1.5]
