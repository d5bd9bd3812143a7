"""DataParallel and the module paths vs a CPU-only PyTorch: the same attributes, state_dict
keys, repr and results; torch's checkpoint of a wrapped model loads into ember's."""
import numpy as np
import torch

import ember
import ember.nn as enn
from tests.parity.compare import error_of


def test_data_parallel_matches_cpu_torch():
    torch.manual_seed(0)
    t_model = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU()))
    e_model = enn.DataParallel(enn.Sequential(enn.Linear(3, 4), enn.ReLU()))
    assert repr(e_model) == repr(t_model)
    assert list(e_model.state_dict()) == list(t_model.state_dict())
    assert e_model.device_ids == t_model.device_ids == []
    e_model.load_state_dict({k: ember.tensor(v.numpy()) for k, v in
                             t_model.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_allclose(e_model(ember.tensor(x)).detach().numpy(),
                               t_model(torch.tensor(x)).detach().numpy(), rtol=1e-6)
    assert error_of(lambda: enn.parallel.data_parallel(enn.Linear(2, 2), ember.ones(1, 2))) == \
        error_of(lambda: torch.nn.parallel.data_parallel(torch.nn.Linear(2, 2), torch.ones(1, 2)))


def test_module_paths_name_the_same_classes():
    import importlib
    paths = {"activation": ["MultiheadAttention", "PReLU", "GLU"],
             "linear": ["NonDynamicallyQuantizableLinear"],
             "transformer": ["Transformer", "TransformerDecoderLayer", "_get_clones"],
             "distance": ["CosineSimilarity", "PairwiseDistance"],
             "batchnorm": ["_BatchNorm", "BatchNorm1d"],
             "utils": ["_pair", "consume_prefix_in_state_dict_if_present"],
             "sparse": ["EmbeddingBag"]}
    for module, names in paths.items():
        t_mod = importlib.import_module(f"torch.nn.modules.{module}")
        e_mod = importlib.import_module(f"ember.nn.modules.{module}")
        for name in names:
            assert hasattr(t_mod, name) and hasattr(e_mod, name), (module, name)
    assert repr(enn.MultiheadAttention(4, 2).out_proj) == \
        repr(torch.nn.MultiheadAttention(4, 2).out_proj)
