"""The float8 dtypes (PyTorch's limited support): metadata, casts whose rounding is worked out
by hand, creation, views, copies, save/load, printing, autograd through casts, and the
kernels PyTorch lacks refused by name."""
import io
import math

import numpy as np
import pytest

import ember
from ember.backend import dtypes

F8 = [ember.float8_e4m3fn, ember.float8_e5m2, ember.float8_e4m3fnuz, ember.float8_e5m2fnuz,
      ember.float8_e8m0fnu]
SCALAR = {"float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
          "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
          "float8_e8m0fnu": "Float8_e8m0fnu"}


def bits(values, dt):
    return ember.tensor(values, dtype=ember.float32).to(dt).view(ember.uint8).tolist()


@pytest.mark.parametrize("dt", F8)
def test_metadata(dt):
    assert repr(dt) == f"ember.{dt.name}" and dt.scalar_name == SCALAR[dt.name]
    assert dt.is_floating_point and not dt.is_complex and dt.itemsize == 1
    assert dt.is_signed == (dt is not ember.float8_e8m0fnu)
    assert dt.to_real() is dt
    with pytest.raises(RuntimeError, match=f"Unknown Complex ScalarType for {dt.scalar_name}"):
        dt.to_complex()
    t = ember.zeros(2, dtype=dt)
    assert t.type() == f"torch.{dt.scalar_name}Tensor" and t.element_size() == 1


@pytest.mark.parametrize("dt, top, eps, tiny", [
    (ember.float8_e4m3fn, 448.0, 2 ** -3, 2 ** -6),   # 1.110 * 2^8; 3 mantissa bits
    (ember.float8_e5m2, 57344.0, 2 ** -2, 2 ** -14),  # 1.11 * 2^15; 2 mantissa bits
    (ember.float8_e4m3fnuz, 240.0, 2 ** -3, 2 ** -7),
    (ember.float8_e5m2fnuz, 57344.0, 2 ** -3, 2 ** -15),
    (ember.float8_e8m0fnu, 2.0 ** 127, 1.0, 2.0 ** -127),
])
def test_finfo(dt, top, eps, tiny):
    info = ember.finfo(dt)
    assert (info.bits, info.max, info.eps, info.tiny, info.smallest_normal, info.resolution) \
        == (8, top, eps, tiny, tiny, 1.0)
    assert info.min == (tiny if dt is ember.float8_e8m0fnu else -top)
    with pytest.raises(TypeError, match="requires an integer input type"):
        ember.iinfo(dt)


def test_e4m3fn_rounding_saturation_and_nan():
    # 1 = 0x38; 1.0625 lies halfway between 1 and 1.125 (0x39): even wins; 1.1875 between
    # 0x39 and 1.25 (0x3a): even again; 2^-9 the smallest subnormal (0x01)
    assert bits([1.0, 1.0625, 1.1875, 2 ** -9, -2.0], ember.float8_e4m3fn) == \
        [0x38, 0x38, 0x3A, 0x01, 0xC0]
    # out of range and infinities saturate to +-448 (0x7e); NaN is 0x7f with its sign
    assert bits([448, 500, 1e9, math.inf, -math.inf, math.nan, -math.nan],
                ember.float8_e4m3fn) == [0x7E, 0x7E, 0x7E, 0x7E, 0xFE, 0x7F, 0xFF]


def test_e5m2_and_fnuz_specials():
    assert bits([1.0, 57344, math.inf, math.nan], ember.float8_e5m2) == [0x3C, 0x7B, 0x7C, 0x7F]
    # fnuz: no infinity, no negative zero; 0x80 is their NaN
    assert bits([math.inf, math.nan, -0.0], ember.float8_e4m3fnuz) == [0x80, 0x80, 0x00]
    assert bits([1.0], ember.float8_e4m3fnuz) == [0x40]


def test_e8m0_takes_the_exponent():
    # the sign is ignored, the mantissa rounds at its top bit (ties to even with the implied
    # bit): 1.5 -> 2, 3 -> 4, 2.9 -> 2; zero and float32 subnormals are 0x00 (2^-127)
    assert bits([1.0, 1.5, -3.0, 2.9, 0.0, 2.0 ** -130, math.inf, math.nan],
                ember.float8_e8m0fnu) == [127, 128, 129, 128, 0, 0, 255, 255]
    assert ember.zeros(2, dtype=ember.float8_e8m0fnu).view(ember.uint8).tolist() == [0, 0]
    assert ember.tensor([0, 1], dtype=ember.uint8).view(ember.float8_e8m0fnu).tolist() == \
        [2.0 ** -127, 2.0 ** -126]


def test_float64_is_rounded_through_float32():
    # 1.0625 + 2^-40 is above the tie in float64, but is the tie itself in float32
    x = ember.tensor([1.0625 + 2 ** -40], dtype=ember.float64)
    assert x.to(ember.float8_e4m3fn).view(ember.uint8).tolist() == [0x38]


@pytest.mark.parametrize("dt", F8)
def test_round_trips_and_views(dt):
    pats = ember.tensor(list(range(256)), dtype=ember.uint8)
    x = pats.view(dt)
    back = x.to(ember.float32).to(dt).view(ember.uint8).tolist()
    finite = [i for i, v in enumerate(x.to(ember.float32).tolist()) if not math.isnan(v)]
    assert [back[i] for i in finite] == finite  # every finite value survives float32
    assert x[3:7].view(ember.int8).dtype is ember.int8
    assert ember.cat([x[:2], x[5:6]]).view(ember.uint8).tolist() == [0, 1, 5]
    assert x.reshape(16, 16).t().contiguous().view(ember.uint8)[1, 0].item() == 1


@pytest.mark.parametrize("dt", F8)
def test_creation_copies_and_writes(dt):
    x = ember.ones(3, dtype=dt)
    assert x.dtype is dt and x.to(ember.float32).tolist() == [1.0, 1.0, 1.0]
    x[1] = 4.0
    x.copy_(ember.tensor([2.0, 4.0, 8.0]))
    assert x.tolist() == [2.0, 4.0, 8.0] and x.clone().tolist() == [2.0, 4.0, 8.0]
    assert ember.full((2,), 2.0, dtype=dt).tolist() == [2.0, 2.0]
    assert ember.empty(2, 3, dtype=dt).shape == (2, 3)
    assert x.zero_().to(ember.float32).tolist() == [0.0 if dt is not ember.float8_e8m0fnu
                                                    else 2.0 ** -127] * 3
    with pytest.raises(RuntimeError, match=f"converted to type c10::{dt.scalar_name} without"):
        ember.full((2,), 1e39, dtype=dt)
    with pytest.raises(TypeError, match=f"Got unsupported ScalarType {dt.scalar_name}"):
        x.numpy()


@pytest.mark.parametrize("dt", F8)
def test_save_load_round_trip(dt):
    x = ember.tensor([1.0, 2.0, 0.5, 4.0]).to(dt)
    buf = io.BytesIO()
    ember.save({"x": x, "tail": x[2:]}, buf)
    buf.seek(0)
    out = ember.load(buf)
    assert out["x"].dtype is dt and out["x"].tolist() == [1.0, 2.0, 0.5, 4.0]
    assert out["tail"].tolist() == [0.5, 4.0]


def test_printing():
    assert repr(ember.tensor([1.0, 2.5, -3.0]).to(ember.float8_e4m3fn)) == \
        "tensor([ 1.0000,  2.5000, -3.0000], dtype=ember.float8_e4m3fn)"
    assert repr(ember.tensor([0.0, 1.0, 2.0]).to(ember.float8_e8m0fnu)) == \
        "tensor([0., 1., 2.], dtype=ember.float8_e8m0fnu)"


@pytest.mark.parametrize("dt", F8)
def test_promotion_refused(dt):
    x = ember.ones(2, dtype=dt)
    with pytest.raises(RuntimeError, match=f"Promotion for Float8 Types is not supported, "
                                           f"attempted to promote {dt.scalar_name} and Float"):
        ember.promote_types(dt, ember.float32)
    with pytest.raises(RuntimeError, match="Promotion for Float8 Types"):
        x + ember.ones(2)
    assert ember.promote_types(dt, dt) is dt
    assert ember.result_type(x, 2.5) is dt  # a number does not promote


@pytest.mark.parametrize("dt", F8)
@pytest.mark.parametrize("call, kernel", [
    (lambda x: x + x, "add_stub"), (lambda x: x * 2, "mul_cpu_reduced_float"),
    (lambda x: x / x, "div_cpu"), (lambda x: -x, "neg_cpu"), (lambda x: x.exp(), "exp_vml_cpu"),
    (lambda x: x.sum(), "sum_cpu"), (lambda x: x.max(), "max_all"),
    (lambda x: x < x, "lt_cpu"), (lambda x: x.sort(), "sorting_kernel_method_name"),
    (lambda x: x.relu(), "clamp_min_scalar_cpu"), (lambda x: x.flip(0), "flip_cpu"),
    (lambda x: x.softmax(0), "softmax_lastdim_kernel_impl"), (lambda x: x.dot(x), "dot"),
    (lambda x: ember.randn(2, dtype=x.dtype), "normal_kernel_cpu"),
    (lambda x: ember.arange(2, dtype=x.dtype), "arange_cpu"),
    (lambda x: x.masked_fill(ember.tensor([True, False]), 1.0), "masked_fill"),
])
def test_missing_kernels_refused_by_name(dt, call, kernel):
    x = ember.ones(2, dtype=dt)
    with pytest.raises(NotImplementedError,
                       match=f'"{kernel}" not implemented for \'{dt.scalar_name}\''):
        call(x)


@pytest.mark.parametrize("dt", F8[:4])
def test_kernels_that_compute(dt):
    a = ember.tensor([[1.0, 2.0], [0.5, 1.0]]).to(dt)  # products exact in every type
    assert (a * a).tolist() == [[1.0, 4.0], [0.25, 1.0]]
    assert (a @ a).tolist() == [[2.0, 4.0], [1.0, 2.0]]
    big = ember.tensor([[16.0, 16.0]]).to(dt)  # 512 > every max: rounded once, as a cast
    assert (big @ big.t()).view(ember.uint8).tolist() == \
        ember.tensor([[512.0]]).to(dt).view(ember.uint8).tolist()
    assert (a == a).all().item() and not (a != a).any().item()
    assert a.abs().tolist() == a.tolist() and a.isnan().tolist() == [[False] * 2] * 2
    assert a.sum(dtype=ember.float32).item() == 4.5
    assert ember.where(ember.tensor([True, False]), a[0], a[1]).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("dt", F8)
def test_gradient_through_casts(dt):
    # a quantize-dequantize step: the cast's gradient is the incoming one, cast back
    x = ember.tensor([1.0, 3.0, -0.5], dtype=ember.float64, requires_grad=True)
    y = x.to(dt)
    assert y.requires_grad and y.grad_fn is not None
    (y.to(ember.float64) * ember.tensor([2.0, 4.0, 8.0], dtype=ember.float64)).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0, 8.0]


def test_refuse_helpers_leave_other_dtypes():
    dtypes.refuse_float8(np.dtype("int8"), "add_stub")  # no error: not a float8 type
    dtypes.refuse_limited_unsigned(ember.float8_e4m3fn.np, "index_select")  # float8 has it
    with pytest.raises(NotImplementedError, match="'Float8_e8m0fnu'"):
        dtypes.refuse_limited_unsigned(ember.float8_e8m0fnu.np, "index_put")
