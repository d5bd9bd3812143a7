"""ember's quantized tensors against PyTorch's: integer representations bit-identical,
dequantized values, accessors, reprs (names aside), errors."""
import re
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")


def _dtype(mod, name):
    return getattr(mod, name)


def _name(text):
    return text.replace("torch.", "").replace("ember.", "")


DTYPES = [("quint8", [(0.0317, 5), (0.1, 3), (0.001, 100), (0.013, 0)]),
          ("qint8", [(0.0317, 5), (0.1, 3), (0.05, -7)]),
          ("qint32", [(0.0317, 5), (0.001, 100), (0.05, -7)])]


@pytest.mark.parametrize("dtype,qparams", DTYPES)
def test_quantize_per_tensor(dtype, qparams):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((300, 50)) * 3).astype("float32")
    for scale, zero_point in qparams:
        tq = torch.quantize_per_tensor(torch.from_numpy(x), scale, zero_point,
                                       _dtype(torch, dtype))
        eq = ember.quantize_per_tensor(ember.from_numpy(x), scale, zero_point,
                                       _dtype(ember, dtype))
        np.testing.assert_array_equal(eq.int_repr().numpy(), tq.int_repr().numpy())
        assert str(eq.int_repr().dtype)[6:] == str(tq.int_repr().dtype)[6:]
        np.testing.assert_array_equal(eq.dequantize().numpy(), tq.dequantize().numpy())
        assert (eq.q_scale(), eq.q_zero_point()) == (tq.q_scale(), tq.q_zero_point())
        assert _name(repr(eq.qscheme())) == _name(repr(tq.qscheme()))
        assert eq.is_quantized and tq.is_quantized
        assert tuple(eq.shape) == tuple(tq.shape) and eq.element_size() == tq.element_size()


def test_quantize_per_tensor_tensor_qparams():
    x = torch.tensor([1.0, -0.5, 2.26])
    tq = torch.quantize_per_tensor(x, torch.tensor(0.1), torch.tensor(3), torch.quint8)
    eq = ember.quantize_per_tensor(ember.tensor([1.0, -0.5, 2.26]), ember.tensor(0.1),
                                   ember.tensor(3), ember.quint8)
    np.testing.assert_array_equal(eq.int_repr().numpy(), tq.int_repr().numpy())


@pytest.mark.parametrize("dtype", ["quint8", "qint8", "qint32"])
@pytest.mark.parametrize("axis", [0, 1])
def test_quantize_per_channel(dtype, axis):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((300, 64)) * 3).astype("float32")
    n = x.shape[axis]
    scales = rng.random(n) * 0.1 + 0.005
    zero_points = rng.integers(0, 20, n)
    tq = torch.quantize_per_channel(torch.from_numpy(x), torch.from_numpy(scales),
                                    torch.from_numpy(zero_points), axis, _dtype(torch, dtype))
    eq = ember.quantize_per_channel(ember.from_numpy(x), ember.from_numpy(scales),
                                    ember.from_numpy(zero_points), axis, _dtype(ember, dtype))
    np.testing.assert_array_equal(eq.int_repr().numpy(), tq.int_repr().numpy())
    np.testing.assert_array_equal(eq.dequantize().numpy(), tq.dequantize().numpy())
    np.testing.assert_array_equal(eq.q_per_channel_scales().numpy(),
                                  tq.q_per_channel_scales().numpy())
    np.testing.assert_array_equal(eq.q_per_channel_zero_points().numpy(),
                                  tq.q_per_channel_zero_points().numpy())
    assert eq.q_per_channel_axis() == tq.q_per_channel_axis()
    assert _name(repr(eq.qscheme())) == _name(repr(tq.qscheme()))


@pytest.mark.parametrize("make", [
    lambda m: m.quantize_per_tensor(m.tensor([[1.0, -0.5, 2.26], [0.3, 0.2, 0.1]]), 0.1, 3,
                                    m.quint8),
    lambda m: m.quantize_per_tensor(m.tensor(1.5), 0.1, 3, m.qint32),
    lambda m: m.quantize_per_tensor(m.zeros(0), 0.1, 3, m.qint32),
    lambda m: m.quantize_per_tensor(m.tensor([1.0, -0.5, 2.26]), 0.1, 3, m.quint4x2),
    lambda m: m.quantize_per_channel(m.tensor([[1.0, -0.5], [2.26, 0.0]]),
                                     m.tensor([0.1, 0.2]), m.tensor([0, 1]), 0, m.qint8),
    lambda m: m.quantize_per_tensor(m.arange(24.0).reshape(2, 3, 4), 0.1, 3,
                                    m.quint8).transpose(0, 2),
])
def test_repr(make):
    assert _name(repr(make(ember))) == _name(repr(make(torch)))


def _same_error(call):
    with pytest.raises(Exception) as t_err:
        call(torch)
    with pytest.raises(type(t_err.value)) as e_err:
        call(ember)
    # PyTorch names the overload it reached ('aten::sum.IntList_out'), ember the op
    expected = re.sub(r"(aten::\w+)\.\w+", r"\1", str(t_err.value).split(" This could")[0])
    assert str(e_err.value).split(" This could")[0] == expected


def _q(m):
    return m.quantize_per_tensor(m.tensor([[1.0, 2.0], [3.0, 4.0]]), 0.1, 0, m.quint8)


def _qc(m):
    return m.quantize_per_channel(m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([0.1, 0.2]),
                                  m.tensor([0, 1]), 0, m.qint8)


@pytest.mark.parametrize("call", [
    lambda m: m.quantize_per_tensor(m.ones(2), 0.1, 3, m.float32),
    lambda m: m.quantize_per_tensor(m.ones(2), 0.1, 300, m.quint8),
    lambda m: m.quantize_per_tensor(m.ones(2), 0.1, -129, m.qint8),
    lambda m: m.quantize_per_tensor(m.ones(2, dtype=m.float64), 0.1, 3, m.quint8),
    lambda m: m.quantize_per_channel(m.ones(2, 3), m.tensor([0.1, 0.2]), m.tensor([0, 1]),
                                     1, m.qint8),
    lambda m: m.quantize_per_channel(m.ones(2, 3), m.tensor([0.1, 0.2]), m.tensor([0, 1]),
                                     2, m.qint8),
    lambda m: m.quantize_per_channel(m.ones(2, 3), m.tensor([0.1, 0.2]), m.tensor([0, 300]),
                                     0, m.qint8),
    lambda m: m.quantize_per_channel(m.ones(2, 3), m.tensor([0.1, 0.2]), m.tensor([0, 1]),
                                     0, m.quint4x2),
    lambda m: _q(m).sum(),
    lambda m: _q(m).abs(),
    lambda m: _q(m).q_per_channel_scales(),
    lambda m: _qc(m).q_scale(),
    lambda m: _qc(m).q_zero_point(),
    lambda m: m.ones(2).int_repr(),
    lambda m: m.ones(2).q_scale(),
    lambda m: m.ones(2).qscheme(),
])
def test_errors(call):
    _same_error(call)


@pytest.mark.parametrize("dtype,values", [("quint4x2", [0.3, 0.6, 0.9, 1.2, 1.5]),
                                          ("quint2x4", [0.3, 0.6, 0.9, 0.0, 0.3])])
def test_packed_int_repr(dtype, values):
    tq = torch.quantize_per_tensor(torch.tensor(values), 0.3, 0, _dtype(torch, dtype))
    eq = ember.quantize_per_tensor(ember.tensor(values), 0.3, 0, _dtype(ember, dtype))
    assert eq.int_repr().tolist() == tq.int_repr().tolist()
    assert eq.dequantize().tolist() == tq.dequantize().tolist()


def test_views_and_copies():
    for m in (torch, ember):
        q = _q(m)
        assert q.reshape(4).int_repr().tolist() == [10, 20, 30, 40]
        assert q.t().int_repr().tolist() == [[10, 30], [20, 40]]
        assert q.clone().equal(q) and q.detach().q_scale() == 0.1
        assert not q.requires_grad and q.grad_fn is None
        assert m.dequantize(m.ones(2)).tolist() == [1.0, 1.0]
