"""quantize_dynamic against PyTorch's (x86/fbgemm): the quantized weights bit-identical,
the outputs equal up to the last bits of the final float32 scaling (the integer products
are exact on both sides; PyTorch's kernel may fuse the scale-and-bias step)."""
import warnings

import numpy as np
import pytest
import torch

import ember

warnings.filterwarnings("ignore")


def _models(sizes, seed):
    torch.manual_seed(seed)
    layers_t, layers_e = [], []
    for i, (fan_in, fan_out) in enumerate(zip(sizes, sizes[1:])):
        layers_t.append(torch.nn.Linear(fan_in, fan_out, bias=i % 2 == 0))
        layers_e.append(ember.nn.Linear(fan_in, fan_out, bias=i % 2 == 0))
        layers_t.append(torch.nn.ReLU())
        layers_e.append(ember.nn.ReLU())
    t_model, e_model = torch.nn.Sequential(*layers_t), ember.nn.Sequential(*layers_e)
    e_model.load_state_dict({k: ember.from_numpy(v.numpy().copy())
                             for k, v in t_model.state_dict().items()})
    return t_model, e_model


@pytest.mark.parametrize("sizes,batch", [((8, 4, 3), (5,)), ((32, 64, 16, 10), (7, 3)),
                                         ((16, 16), (1,))])
def test_quantize_dynamic_linear(sizes, batch):
    t_model, e_model = _models(sizes, 0)
    t_q = torch.ao.quantization.quantize_dynamic(t_model, {torch.nn.Linear},
                                                 dtype=torch.qint8)
    e_q = ember.ao.quantization.quantize_dynamic(e_model, {ember.nn.Linear})
    assert repr(e_q).replace("ember.", "") == repr(t_q).replace("torch.", "")
    for t_layer, e_layer in zip(t_q, e_q):
        if hasattr(t_layer, "weight") and callable(t_layer.weight):
            np.testing.assert_array_equal(e_layer.weight().int_repr().numpy(),
                                          t_layer.weight().int_repr().numpy())
            assert e_layer.weight().q_scale() == t_layer.weight().q_scale()
    rng = np.random.default_rng(1)
    for scale in (1.0, 5.0, 0.01):
        x = (rng.standard_normal(batch + (sizes[0],)) * scale).astype("float32")
        t_y = t_q(torch.from_numpy(x)).detach().numpy()
        e_y = e_q(ember.from_numpy(x)).numpy()
        np.testing.assert_allclose(e_y, t_y, rtol=1e-6, atol=1e-6 * np.abs(t_y).max())
    # the float model is left as it was (inplace=False)
    assert type(e_model[0]).__name__ == "Linear" and hasattr(e_model[0], "in_features")


def test_default_spec_and_eval_mode():
    t_model, e_model = _models((6, 3), 2)
    e_model.train()
    e_q = ember.ao.quantization.quantize_dynamic(e_model)
    assert not e_q.training
    assert repr(e_q[0]).startswith("DynamicQuantizedLinear(in_features=6")
