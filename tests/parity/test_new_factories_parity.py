"""Tensor.new_zeros/new_ones/new_empty/new_full honour device=, layout= and pin_memory= as
PyTorch's do."""
import torch

import ember
from tests.parity.compare import error_of


def test_new_factories_take_device_and_layout():
    for name, args in [("new_zeros", (2, 3)), ("new_ones", ((2, 3),)), ("new_empty", (2, 3)),
                       ("new_full", ((2, 3), 1.5))]:
        results = []
        for lib in (torch, ember):
            x = lib.ones(1, dtype=lib.float64)
            made = getattr(x, name)(*args, device="meta", layout=lib.strided)
            results.append((made.device.type, tuple(made.shape), str(made.dtype).split(".")[1]))
            assert error_of(lambda: getattr(x, name)(*args, pin_memory=True)) is not None
        assert results[1] == results[0]
        assert getattr(ember.ones(1), name)(*args, requires_grad=True).requires_grad


def test_layouts_are_layout_objects():
    import pickle
    for name in ["strided", "sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr",
                 "sparse_bsc", "jagged", "_mkldnn"]:
        e, t = getattr(ember, name), getattr(torch, name)
        assert isinstance(e, ember.layout) and isinstance(t, torch.layout)
        assert repr(e) == repr(t).replace("torch.", "ember.")
        assert pickle.loads(pickle.dumps(e)) is e
    assert ember.ones(2).layout is ember.strided
    assert ember.ones(2, 2).to_sparse().layout is ember.sparse_coo
