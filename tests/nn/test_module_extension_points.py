"""Module extension points: extra state (with ember.save/load), forward hooks with
prepend/with_kwargs/always_call, global module hooks, state_dict hooks, to_empty, skip_init."""
import io
import pickle
import warnings

import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.modules import module as module_api


class Counter(nn.Module):
    """Keeps a dict (with a tensor inside) as extra state."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(ember.ones(2))
        self.meta = {"step": 0, "names": ["a", "b"], "scale": ember.zeros(1)}

    def get_extra_state(self):
        return self.meta

    def set_extra_state(self, state):
        self.meta = state


def test_extra_state_in_state_dict_and_through_save_load():
    net = nn.Sequential(Counter(), nn.Linear(1, 1))
    net[0].meta = {"step": 5, "names": ["x"], "scale": ember.full((1,), 2.0)}
    sd = net.state_dict()
    assert list(sd) == ["0.weight", "0._extra_state", "1.weight", "1.bias"]
    buffer = io.BytesIO()
    ember.save(sd, buffer)
    buffer.seek(0)
    loaded = ember.load(buffer)
    fresh = nn.Sequential(Counter(), nn.Linear(1, 1))
    assert str(fresh.load_state_dict(loaded)) == "<All keys matched successfully>"
    assert fresh[0].meta["step"] == 5 and fresh[0].meta["names"] == ["x"]
    np.testing.assert_array_equal(fresh[0].meta["scale"].numpy(), [2.0])


def test_extra_state_missing_and_unexpected_keys():
    fresh = Counter()
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        fresh.load_state_dict({"weight": ember.ones(2)})
    keys = fresh.load_state_dict({"weight": ember.ones(2)}, strict=False)
    assert keys.missing_keys == ["_extra_state"] and keys.unexpected_keys == []

    class SaveOnly(nn.Module):
        def get_extra_state(self):
            return 1

    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        SaveOnly().load_state_dict(SaveOnly().state_dict())
    with pytest.raises(RuntimeError, match="Module.set_extra_state\\(\\) that should never"):
        nn.Module().set_extra_state(1)
    assert "_extra_state" not in nn.Linear(1, 1).state_dict()


def test_forward_hooks_prepend_kwargs_and_always_call():
    calls = []

    class Fails(nn.Module):
        def forward(self, x, fail=False):
            calls.append("forward")
            if fail:
                raise ValueError("boom")
            return x + 1

    m = Fails()
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre"))
    m.register_forward_pre_hook(lambda mod, args: calls.append("pre first"), prepend=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(("kw", kwargs)),
                            with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: calls.append(("always", out is None)),
                            always_call=True)
    m(ember.zeros(1))
    assert calls == ["pre first", "pre", "forward", ("kw", {}), ("always", False)]
    calls.clear()
    with pytest.raises(ValueError, match="boom"):
        m(ember.zeros(1), fail=True)
    assert calls == ["pre first", "pre", "forward", ("always", True)]


def test_always_call_hook_error_becomes_warning():
    class Fails(nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    def bad(mod, args, out):
        raise RuntimeError("hook broke too")

    m = Fails()
    m.register_forward_hook(bad, always_call=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="boom"):
            m(ember.zeros(1))
    assert any("hook broke too" in str(w.message) for w in caught)


def test_global_hooks_run_before_the_modules_and_are_removable():
    calls = []
    m = nn.Identity()
    m.register_forward_pre_hook(lambda mod, args: calls.append("own pre"))
    m.register_forward_hook(lambda mod, args, out: calls.append("own fwd"))
    m.register_full_backward_hook(lambda mod, gin, gout: calls.append("own bwd"))
    m.register_full_backward_pre_hook(lambda mod, gout: calls.append("own bpre"))
    handles = [
        module_api.register_module_forward_pre_hook(lambda mod, args: calls.append("pre")),
        module_api.register_module_forward_hook(lambda mod, args, out: calls.append("fwd")),
        module_api.register_module_full_backward_pre_hook(lambda mod, g: calls.append("bpre")),
        module_api.register_module_full_backward_hook(lambda mod, gi, go: calls.append("bwd")),
    ]
    try:
        m(ember.ones(2, requires_grad=True)).sum().backward()
    finally:
        for h in handles:
            h.remove()
    assert calls == ["pre", "own pre", "fwd", "own fwd", "bpre", "own bpre", "bwd", "own bwd"]
    calls.clear()
    nn.ReLU()(ember.ones(1))
    assert calls == []


def test_global_registration_hooks_may_replace_values():
    seen = []
    handles = [
        module_api.register_module_parameter_registration_hook(
            lambda mod, name, p: seen.append(("param", name))),
        module_api.register_module_buffer_registration_hook(
            lambda mod, name, b: None if b is None else b * 0 + 7),
        module_api.register_module_module_registration_hook(
            lambda mod, name, sub: nn.Tanh() if name == "act" else None),
    ]
    try:
        m = nn.Module()
        m.w = nn.Parameter(ember.ones(1))
        m.register_buffer("b", ember.ones(2))
        m.act = nn.ReLU()
    finally:
        for h in handles:
            h.remove()
    assert seen == [("param", "w")]
    assert m.b.tolist() == [7.0, 7.0]
    assert isinstance(m.act, nn.Tanh)
    m.register_buffer("c", ember.ones(1))
    assert m.c.tolist() == [1.0]


def test_state_dict_hooks_order_and_return_rules():
    calls = []
    net = nn.Sequential(nn.Linear(1, 1))
    net.register_state_dict_pre_hook(lambda m, prefix, kv: calls.append(("pre", prefix)))
    net[0].register_state_dict_pre_hook(lambda m, prefix, kv: calls.append(("pre", prefix)))
    net.register_state_dict_post_hook(lambda m, sd, prefix, meta: calls.append(("post", len(sd))))
    net[0].register_state_dict_post_hook(
        lambda m, sd, prefix, meta: calls.append(("post", len(sd))))
    net.state_dict()
    assert calls == [("pre", ""), ("pre", "0."), ("post", 2), ("post", 2)]

    layer = nn.Linear(1, 1)
    layer._register_state_dict_hook(lambda m, sd, prefix, meta: {"only": 1})
    assert layer.state_dict() == {"only": 1}
    layer = nn.Linear(1, 1)
    handle = layer.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        layer.state_dict()
    handle.remove()
    assert list(layer.state_dict()) == ["weight", "bias"]


def test_load_state_dict_hooks():
    layer = nn.Linear(1, 1)
    seen = []
    layer.register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, strict, missing, unexpected, errors: seen.append(sorted(sd)))
    layer.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.remove("bias"))
    assert str(layer.load_state_dict({"weight": ember.ones(1, 1)})) == \
        "<All keys matched successfully>"
    assert seen == [["weight"]]
    returns = nn.Linear(1, 1)
    returns.register_load_state_dict_post_hook(lambda m, keys: keys)
    with pytest.raises(AssertionError, match="not expected to return new values"):
        returns.load_state_dict(returns.state_dict())


def test_to_empty_keeps_shapes_dtypes_and_parameters():
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)).double()
    weight = net[0].weight
    assert net.to_empty(device="cpu") is net
    assert net[0].weight is weight and weight.dtype == ember.float64
    assert tuple(weight.shape) == (3, 2)
    assert net[1].num_batches_tracked.dtype == ember.int64
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        net.to_empty(device="cuda")
    with pytest.raises(TypeError):
        net.to_empty("cpu")


def test_skip_init():
    layer = nn.utils.skip_init(nn.Linear, 3, 2, dtype=ember.float64)
    assert tuple(layer.weight.shape) == (2, 3) and layer.weight.dtype == ember.float64
    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        nn.utils.skip_init(nn.ReLU)
    with pytest.raises(RuntimeError, match="Expected a Module; got"):
        nn.utils.skip_init(dict)


def test_unpickled_old_module_gets_the_new_hook_registries():
    layer = nn.Linear(1, 1)
    state = dict(layer.__dict__)
    for name in ("_state_dict_pre_hooks", "_load_state_dict_post_hooks",
                 "_forward_hooks_always_called"):
        del state[name]
    old = nn.Linear.__new__(nn.Linear)
    old.__setstate__(state)
    assert list(old.state_dict()) == ["weight", "bias"]
    copy = pickle.loads(pickle.dumps(old))
    assert str(copy.load_state_dict(layer.state_dict())) == "<All keys matched successfully>"
