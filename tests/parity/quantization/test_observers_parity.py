"""ember.ao.quantization's observers, FakeQuantize and qconfigs against PyTorch's:
qparams bit-identical (values and dtypes), state_dict keys, fake-quant outputs, errors."""
import numpy as np
import pytest
import torch
import torch.ao.quantization as tq

import ember
import ember.ao.quantization as eq

CONFIGS = [
    ("MinMaxObserver", {}),
    ("MinMaxObserver", {"dtype": "qint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"dtype": "quint8", "qscheme": "per_tensor_symmetric"}),
    ("MinMaxObserver", {"reduce_range": True}),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 15}),
    ("MinMaxObserver", {"dtype": "qint32"}),
    ("MovingAverageMinMaxObserver", {}),
    ("MovingAverageMinMaxObserver", {"averaging_constant": 0.3, "dtype": "qint8",
                                     "qscheme": "per_tensor_symmetric"}),
    ("PerChannelMinMaxObserver", {"ch_axis": 1}),
    ("PerChannelMinMaxObserver", {"ch_axis": 2, "dtype": "qint8",
                                  "qscheme": "per_channel_symmetric"}),
    ("PerChannelMinMaxObserver", {"qscheme": "per_channel_affine_float_qparams"}),
    ("MovingAveragePerChannelMinMaxObserver", {"averaging_constant": 0.5, "ch_axis": 1}),
    ("MovingAveragePerChannelMinMaxObserver", {"qscheme": "per_channel_symmetric"}),
]


def _kwargs(mod, kw):
    return {k: getattr(mod, v) if isinstance(v, str) else v for k, v in kw.items()}


def _inputs():
    rng = np.random.default_rng(0)
    return [(rng.standard_normal((8, 4, 3)) * s + o).astype("float32")
            for s, o in [(1, 0), (2, 1), (0.5, -3)]]


def _same(e, t):
    np.testing.assert_array_equal(e.numpy(), t.numpy())
    assert str(e.dtype).split(".")[1] == str(t.dtype).split(".")[1]


@pytest.mark.parametrize("name,kw", CONFIGS)
def test_observer_qparams(name, kw):
    t_obs = getattr(tq, name)(**_kwargs(torch, kw))
    e_obs = getattr(eq, name)(**_kwargs(ember, kw))
    assert (e_obs.quant_min, e_obs.quant_max) == (t_obs.quant_min, t_obs.quant_max)
    for x in _inputs():
        t_obs(torch.from_numpy(x))
        e_obs(ember.from_numpy(x))
        for e, t in zip(e_obs.calculate_qparams(), t_obs.calculate_qparams()):
            _same(e, t)
    assert list(e_obs.state_dict()) == list(t_obs.state_dict())
    _same(e_obs.min_val, t_obs.min_val)
    _same(e_obs.max_val, t_obs.max_val)


def test_unobserved_defaults():
    with pytest.warns(UserWarning, match="must run observer"):
        scale, zp = eq.MinMaxObserver().calculate_qparams()
    _same(scale, torch.tensor([1.0]))
    _same(zp, torch.tensor([0]))


@pytest.mark.parametrize("factory", ["default_fake_quant", "default_weight_fake_quant",
                                     "default_per_channel_weight_fake_quant",
                                     "default_fused_act_fake_quant",
                                     "default_fused_wt_fake_quant",
                                     "default_fused_per_channel_wt_fake_quant"])
def test_fake_quantize_module(factory):
    t_fq, e_fq = getattr(tq, factory)(), getattr(eq, factory)()
    for i, x in enumerate(_inputs()):
        if i == 2:
            t_fq.disable_observer()
            e_fq.disable_observer()
        tx, ex = torch.from_numpy(x).requires_grad_(), ember.from_numpy(x).requires_grad_()
        ty, ey = t_fq(tx), e_fq(ex)
        np.testing.assert_array_equal(ey.detach().numpy(), ty.detach().numpy())
        ty.sum().backward()
        ey.sum().backward()
        np.testing.assert_array_equal(ex.grad.numpy(), tx.grad.numpy())
    t_sd, e_sd = t_fq.state_dict(), e_fq.state_dict()
    assert list(e_sd) == list(t_sd)
    for key in t_sd:
        _same(e_sd[key], t_sd[key])
    t_fq.disable_fake_quant()
    e_fq.disable_fake_quant()
    x = _inputs()[0]
    np.testing.assert_array_equal(e_fq(ember.from_numpy(x)).numpy(), x)


def test_fake_quantize_state_dict_round_trip():
    src = eq.default_per_channel_weight_fake_quant()
    src(ember.from_numpy(_inputs()[0]))
    dst = eq.default_per_channel_weight_fake_quant()
    dst.load_state_dict(src.state_dict())
    for key, value in src.state_dict().items():
        np.testing.assert_array_equal(dst.state_dict()[key].numpy(), value.numpy())


@pytest.mark.parametrize("backend", ["fbgemm", "x86", "qnnpack", "onednn"])
@pytest.mark.parametrize("version", [0, 1])
def test_default_qat_qconfig(backend, version):
    t_cfg = tq.get_default_qat_qconfig(backend, version)
    e_cfg = eq.get_default_qat_qconfig(backend, version)
    for part in ("activation", "weight"):
        t_mod, e_mod = getattr(t_cfg, part)(), getattr(e_cfg, part)()
        assert type(e_mod).__name__ == type(t_mod).__name__
        t_obs, e_obs = t_mod.activation_post_process, e_mod.activation_post_process
        assert type(e_obs).__name__ == type(t_obs).__name__
        assert (e_obs.quant_min, e_obs.quant_max, e_obs.reduce_range) == \
            (t_obs.quant_min, t_obs.quant_max, t_obs.reduce_range)
        assert str(e_mod.qscheme).split(".")[1] == str(t_mod.qscheme).split(".")[1]
        assert str(e_mod.dtype).split(".")[1] == str(t_mod.dtype).split(".")[1]


def test_quantization_alias():
    assert ember.quantization.FakeQuantize is eq.FakeQuantize
    assert hasattr(torch.quantization, "FakeQuantize")


@pytest.mark.parametrize("call", [
    lambda q, m: q.MinMaxObserver(qscheme=m.per_channel_affine),
    lambda q, m: q.PerChannelMinMaxObserver(qscheme=m.per_tensor_affine),
    lambda q, m: q.MinMaxObserver(quant_min=1, quant_max=10),
    lambda q, m: q.MinMaxObserver(quant_min=0, quant_max=0),
    lambda q, m: q.MinMaxObserver(dtype=m.float32),
    lambda q, m: q.MinMaxObserver(dtype=m.qint8, quant_min=-200, quant_max=200),
    lambda q, m: q.FakeQuantize(quant_min=0, quant_max=300),
    lambda q, m: q.FakeQuantize(quant_min=5, quant_max=3),
    lambda q, m: q.QConfig(q.MinMaxObserver(), q.MinMaxObserver),
    lambda q, m: q.get_default_qat_qconfig("cuda"),
    lambda q, m: q.get_default_qat_qconfig("x86", 2),
])
def test_errors(call):
    with pytest.raises(Exception) as t_err:
        call(tq, torch)
    with pytest.raises(type(t_err.value)) as e_err:
        call(eq, ember)
    assert str(e_err.value).split()[:4] == str(t_err.value).split()[:4]


@pytest.mark.parametrize("kw", [{}, {"bins": 256},
                                {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
                                {"reduce_range": True}, {"quant_min": 0, "quant_max": 15}])
def test_histogram_observer(kw):
    t_obs = tq.HistogramObserver(**_kwargs(torch, kw))
    e_obs = eq.HistogramObserver(**_kwargs(ember, kw))
    rng = np.random.default_rng(3)
    batches = [np.full(10, 0.5, "float32")]  # one point first: the widening from a point
    batches += [(rng.standard_normal(500) * s + o).astype("float32")
                for s, o in [(1, 0), (2, 1), (0.5, -3), (0.1, 0)]]
    batches.append(np.array([1.0, np.inf, -2.0], "float32"))  # inf ignored, with a warning
    for x in batches:
        with pytest.warns(UserWarning) if np.isinf(x).any() else _no_warning():
            t_obs(torch.from_numpy(x))
        with pytest.warns(UserWarning, match="inf detected") if np.isinf(x).any() else \
                _no_warning():
            e_obs(ember.from_numpy(x))
        np.testing.assert_array_equal(e_obs.histogram.numpy(), t_obs.histogram.numpy())
        for e, t in zip(e_obs.calculate_qparams(), t_obs.calculate_qparams()):
            _same(e, t)
    assert list(e_obs.state_dict()) == list(t_obs.state_dict())


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
