"""DataParallel on a machine without accelerators, and the module paths PyTorch programs
import layers from."""
from collections import OrderedDict

import numpy as np
import pytest

import ember
import ember.nn as nn


def test_data_parallel_runs_the_module_and_prefixes_state_dict():
    ember.manual_seed(0)
    inner = nn.Linear(3, 2)
    model = nn.DataParallel(inner, device_ids=[0], output_device=0)
    assert model.module is inner and model.device_ids == []
    assert list(model.state_dict()) == ["module.weight", "module.bias"]
    x = ember.randn(4, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), inner(x).detach().numpy())
    model(x).sum().backward()
    assert inner.weight.grad is not None
    assert repr(model).startswith("DataParallel(\n  (module): Linear(")


def test_data_parallel_checkpoint_loads_into_bare_module():
    from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present
    wrapped = nn.DataParallel(nn.Linear(3, 2))
    sd = wrapped.state_dict()
    bare = nn.Linear(3, 2)
    consume_prefix_in_state_dict_if_present(sd, "module.")
    bare.load_state_dict(sd)
    np.testing.assert_array_equal(bare.weight.detach().numpy(),
                                  wrapped.module.weight.detach().numpy())


def test_data_parallel_function_needs_a_device():
    with pytest.raises(RuntimeError, match="device type could not be determined"):
        nn.parallel.data_parallel(nn.Linear(2, 2), ember.ones(1, 2))


def test_module_paths():
    from ember.nn.modules.activation import MultiheadAttention
    from ember.nn.modules.batchnorm import _BatchNorm, BatchNorm2d
    from ember.nn.modules.distance import CosineSimilarity, PairwiseDistance
    from ember.nn.modules.linear import NonDynamicallyQuantizableLinear
    from ember.nn.modules.transformer import (Transformer, TransformerDecoder,
                                              TransformerDecoderLayer, _get_clones)
    from ember.nn.modules.utils import _pair, _single, _triple
    from ember.nn.parallel import DataParallel
    from ember.nn.utils.rnn import PackedSequence
    assert MultiheadAttention is nn.MultiheadAttention and DataParallel is nn.DataParallel
    assert isinstance(nn.MultiheadAttention(4, 2).out_proj, NonDynamicallyQuantizableLinear)
    assert issubclass(BatchNorm2d, _BatchNorm) and Transformer is nn.Transformer
    assert TransformerDecoder is nn.TransformerDecoder
    assert TransformerDecoderLayer is nn.TransformerDecoderLayer
    assert CosineSimilarity is nn.CosineSimilarity and PairwiseDistance is nn.PairwiseDistance
    assert PackedSequence is nn.utils.rnn.PackedSequence
    assert (_single(2), _pair(2), _triple((1, 2, 3))) == ((2,), (2, 2), (1, 2, 3))
    clones = _get_clones(nn.Linear(2, 2), 3)
    assert len(clones) == 3 and clones[0].weight is not clones[1].weight


def test_consume_prefix_keeps_other_keys():
    from ember.nn.modules.utils import consume_prefix_in_state_dict_if_present
    sd = OrderedDict([("module.a", 1), ("b", 2), ("module.c.d", 3)])
    consume_prefix_in_state_dict_if_present(sd, "module.")
    assert dict(sd) == {"a": 1, "b": 2, "c.d": 3}
