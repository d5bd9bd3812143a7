"""Quantized tensors and quantize_dynamic without PyTorch: integers and values worked out
by hand, the accessors, the refusals."""
import pytest

import ember
from ember.ao.quantization import quantize_dynamic


def test_per_tensor_round_trip():
    q = ember.quantize_per_tensor(ember.tensor([0.05, 0.15, -1.0, 100.0]), 0.1, 2,
                                  ember.quint8)
    # 0.5 -> 0 and 1.5 -> 2 (half to even) plus 2; -10 + 2 -> 0 (clamped); 1000 -> 255
    assert q.int_repr().tolist() == [2, 4, 0, 255]
    assert q.int_repr().dtype is ember.uint8
    assert [round(v, 5) for v in q.dequantize().tolist()] == [0.0, 0.2, -0.2, 25.3]
    assert (q.q_scale(), q.q_zero_point(), q.dtype) == (0.1, 2, ember.quint8)
    assert q.is_quantized and q.qscheme() is ember.per_tensor_affine


def test_per_channel_accessors():
    q = ember.quantize_per_channel(ember.tensor([[1.0, 1.0], [2.0, 2.0]]),
                                   ember.tensor([0.5, 0.25]), ember.tensor([0, 1]), 1,
                                   ember.qint8)
    assert q.int_repr().tolist() == [[2, 5], [4, 9]]
    assert q.q_per_channel_axis() == 1
    assert q.q_per_channel_scales().dtype is ember.float64
    assert q.q_per_channel_zero_points().tolist() == [0, 1]
    assert ember.dequantize(q).tolist() == [[1.0, 1.0], [2.0, 2.0]]
    with pytest.raises(RuntimeError, match="kPerTensorAffine"):
        q.q_scale()


def test_ops_without_a_quantized_kernel_refuse():
    q = ember.quantize_per_tensor(ember.ones(2), 0.1, 0, ember.qint8)
    with pytest.raises(NotImplementedError, match="'aten::add' with arguments from the "
                                                  "'QuantizedCPU' backend"):
        q + q
    with pytest.raises(NotImplementedError, match="'aten::int_repr' with arguments from "
                                                  "the 'CPU' backend"):
        ember.ones(2).int_repr()
    assert ember.ones(2).dequantize().tolist() == [1.0, 1.0]


def test_quantize_errors():
    with pytest.raises(RuntimeError, match="Quantize only works on Float Tensor, got Double"):
        ember.quantize_per_tensor(ember.ones(2, dtype=ember.float64), 0.1, 0, ember.quint8)
    with pytest.raises(RuntimeError, match="zero_point 300 is above upper bound"):
        ember.quantize_per_tensor(ember.ones(2), 0.1, 300, ember.quint8)
    with pytest.raises(RuntimeError, match="ScalarType Float is not supported"):
        ember.quantize_per_tensor(ember.ones(2), 0.1, 0, ember.float32)


def test_quantize_dynamic_close_to_float():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(16, 8), ember.nn.ReLU(),
                                ember.nn.Linear(8, 4))
    quantized = quantize_dynamic(model, {ember.nn.Linear})
    x = ember.randn(10, 16)
    with ember.no_grad():
        error = (quantized(x) - model(x)).abs().max().item()
    assert error < 0.05  # 8-bit weights and 7-bit activations
    with pytest.raises(NotImplementedError, match="LSTM"):
        quantize_dynamic(ember.nn.Sequential(ember.nn.LSTM(2, 2)))


def test_no_dense_tensor_of_a_quantized_dtype():
    for make in (lambda: ember.zeros(2, dtype=ember.quint8),
                 lambda: ember.tensor([1], dtype=ember.qint8),
                 lambda: ember.ones(2).to(ember.qint32)):
        with pytest.raises(RuntimeError, match="not supported on quantized tensors"):
            make()
