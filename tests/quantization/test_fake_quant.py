"""Fake quantization and the quantization library without PyTorch: values worked out by
hand, the straight-through and LSQ gradients, observers, FakeQuantize, errors.

Fake quantization is a step function, so finite differences see a zero derivative almost
everywhere; its gradients are the straight-through estimator's by definition, checked here
against their formulas instead of with gradcheck."""
import math

import pytest

import ember
from ember.ao.quantization import (FakeQuantize, MinMaxObserver, PerChannelMinMaxObserver,
                                   QConfig, default_fake_quant, get_default_qat_qconfig)


def test_per_tensor_values_round_half_even():
    x = ember.tensor([0.25, 0.35, -0.25, 30.0, -30.0], dtype=ember.float64)
    y = ember.fake_quantize_per_tensor_affine(x, 0.1, 3, 0, 255)
    # 2.5 -> 2, 3.5 -> 4, -2.5 -> -2 (half to even), 300 + 3 -> 255, -300 + 3 -> 0
    expected = [(2 + 3 - 3) * 0.1, 4 * 0.1, -2 * 0.1, (255 - 3) * 0.1, (0 - 3) * 0.1]
    got = y.tolist()
    assert all(math.isclose(g, e, rel_tol=1e-6) for g, e in zip(got, expected))
    assert y.dtype == ember.float64


def test_per_tensor_nan_and_inf_land_on_the_bounds():
    x = ember.tensor([float("nan"), float("inf"), -float("inf")])
    y = ember.fake_quantize_per_tensor_affine(x, 0.5, 0, -4, 3)
    assert y.tolist() == [-2.0, 1.5, -2.0]


def test_straight_through_gradient():
    x = ember.tensor([0.1, 0.2, 5.0, -5.0], requires_grad=True)
    y = ember.fake_quantize_per_tensor_affine(x, 0.1, 0, -10, 10)
    y.backward(ember.tensor([1.0, 2.0, 3.0, 4.0]))
    assert x.grad.tolist() == [1.0, 2.0, 0.0, 0.0]
    assert type(y.grad_fn).__name__ == "FakeQuantizePerTensorAffineCachemaskBackward0"


def test_per_channel_values_and_gradient():
    x = ember.tensor([[0.25, 0.25, 9.0]], requires_grad=True)
    scale = ember.tensor([0.1, 0.2, 0.1])
    zero_point = ember.tensor([0, 1, 0], dtype=ember.int32)
    y = ember.fake_quantize_per_channel_affine(x, scale, zero_point, 1, 0, 20)
    assert [round(v, 6) for v in y.tolist()[0]] == [0.2, 0.2, 2.0]
    y.sum().backward()
    assert x.grad.tolist() == [[1.0, 1.0, 0.0]]


def test_learnable_per_tensor_gradients():
    x = ember.tensor([0.26, 5.0], requires_grad=True)
    s = ember.tensor([0.1], requires_grad=True)
    z = ember.tensor([0.0], requires_grad=True)
    y = ember._fake_quantize_learnable_per_tensor_affine(x, s, z, 0, 9, 0.5)
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 0.0]
    # in range: (round(x/s) - x/s) = (3 - 2.6); clamped above: quant_max - zero_point = 9
    assert math.isclose(s.grad.item(), (0.4 + 9.0) * 0.5, rel_tol=1e-5)
    assert math.isclose(z.grad.item(), -0.1 * 0.5, rel_tol=1e-5)


def test_learnable_backward_wants_float32():
    x = ember.tensor([0.26], dtype=ember.float64, requires_grad=True)
    y = ember._fake_quantize_learnable_per_tensor_affine(
        x, ember.tensor([0.1]), ember.tensor([0.0]), 0, 9)
    with pytest.raises(RuntimeError, match="Expected dY_.scalar_type"):
        y.sum().backward()


@pytest.mark.parametrize("call,error,match", [
    (lambda x: ember.fake_quantize_per_tensor_affine(x, 0.1, 0, 5, 3), RuntimeError,
     "`quant_min` should be less than"),
    (lambda x: ember.fake_quantize_per_tensor_affine(x, 0.1, 300, 0, 255), RuntimeError,
     "`zero_point` must be between"),
    (lambda x: ember.fake_quantize_per_tensor_affine(x.int(), 0.1, 0, 0, 255),
     NotImplementedError, "not implemented for 'Int'"),
    (lambda x: ember.fake_quantize_per_tensor_affine(x, 0.1, 3.0, 0, 255), TypeError,
     "invalid combination of arguments"),
    (lambda x: ember.fake_quantize_per_channel_affine(
        x, ember.tensor([0.1]), ember.tensor([0]), 0, 0, 255), RuntimeError,
     "Zero-point must be Int32, Float or Half, found Long"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call(ember.ones(3))


def test_dtypes_and_qschemes():
    assert ember.quint8.itemsize == 1 and ember.qint32.itemsize == 4
    assert not ember.qint8.is_floating_point
    with pytest.raises(RuntimeError, match="isSignedType not supported"):
        ember.quint8.is_signed
    assert repr(ember.per_channel_symmetric) == "ember.per_channel_symmetric"


def test_min_max_observer_qparams():
    obs = MinMaxObserver()
    obs(ember.tensor([-1.0, 3.0]))
    scale, zero_point = obs.calculate_qparams()
    assert math.isclose(scale.item(), 4.0 / 255, rel_tol=1e-6)
    assert zero_point.tolist() == [round(1.0 / (4.0 / 255))]


def test_per_channel_observer_state_dict():
    obs = PerChannelMinMaxObserver(ch_axis=1)
    obs(ember.tensor([[1.0, -2.0], [3.0, 4.0]]))
    assert obs.min_val.tolist() == [1.0, -2.0] and obs.max_val.tolist() == [3.0, 4.0]
    fresh = PerChannelMinMaxObserver(ch_axis=1)
    fresh.load_state_dict(obs.state_dict())
    assert fresh.max_val.tolist() == [3.0, 4.0]


def test_fake_quantize_switches():
    fq = default_fake_quant()
    x = ember.tensor([0.0, 0.3, 1.0])
    y = fq(x)
    assert fq.scale.tolist() != [1.0]
    fq.disable_fake_quant()
    assert fq(x).tolist() == x.tolist()
    assert list(fq.state_dict())[:4] == ["fake_quant_enabled", "observer_enabled", "scale",
                                         "zero_point"]
    assert y.shape == x.shape


def test_qconfig():
    qconfig = get_default_qat_qconfig("fbgemm")
    assert qconfig.weight().qscheme is ember.per_channel_symmetric
    with pytest.raises(ValueError, match="observer instance"):
        QConfig(MinMaxObserver(), MinMaxObserver)
    assert isinstance(FakeQuantize.with_args(quant_min=0, quant_max=15)(), FakeQuantize)


def test_histogram_observer_range():
    from ember.ao.quantization import HistogramObserver
    obs = HistogramObserver(bins=128)
    obs(ember.cat([ember.linspace(-1.0, 1.0, 1000), ember.tensor([50.0])]))
    obs(ember.tensor([-2.0]))  # widens the range: the old histogram is re-binned
    assert obs.histogram.sum().item() == 1002
    assert (obs.min_val.item(), obs.max_val.item()) == (-2.0, 50.0)
    scale, zero_point = obs.calculate_qparams()
    # the range searched lies inside [-2, 50] and keeps zero
    assert 0 < scale.item() <= 52.0 / 255 + 1e-6
    assert 0 <= zero_point.item() <= 255
