"""Module extension points on torch and ember: extra state, forward/backward hooks (per module
and global), registration hooks, state_dict hooks, ``to_empty`` and ``skip_init``. Each
scenario runs the same code on both libraries and records what happened (hook calls in order,
state_dict keys, error texts); the records must be equal."""
import warnings

import pytest
import torch

import ember

from ..compare import error_of


def _module_api(lib):
    return ember.nn.modules.module if lib is ember else torch.nn.modules.module


def _extra_state(lib):
    nn = lib.nn
    log = []

    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(lib.ones(2))
            self.calls = 0

        def get_extra_state(self):
            return {"calls": self.calls, "name": "counter"}

        def set_extra_state(self, state):
            log.append(("set", dict(state)))
            self.calls = state["calls"]

    class SaveOnly(nn.Module):
        def get_extra_state(self):
            return 7

    net = nn.Sequential(Counter(), nn.Linear(1, 1))
    net[0].calls = 3
    sd = net.state_dict()
    log.append(list(sd))
    log.append(sd["0._extra_state"])
    other = nn.Sequential(Counter(), nn.Linear(1, 1))
    log.append(str(other.load_state_dict(sd)))
    log.append(other[0].calls)
    del sd["0._extra_state"]
    log.append(error_of(lambda: other.load_state_dict(sd)))
    log.append(tuple(map(list, other.load_state_dict(sd, strict=False))))
    log.append(error_of(lambda: SaveOnly().load_state_dict(SaveOnly().state_dict())))
    log.append(error_of(lambda: nn.Linear(1, 1).load_state_dict(
        {"weight": lib.ones(1, 1), "bias": lib.ones(1), "_extra_state": 1})))
    log.append(error_of(lambda: nn.Module().get_extra_state()))
    log.append(error_of(lambda: nn.Module().set_extra_state(1)))
    return log


def _forward_hooks(lib):
    nn = lib.nn
    api = _module_api(lib)
    log = []

    class Boom(nn.Module):
        def forward(self, x, scale=1.0):
            log.append(("forward", scale))
            if scale < 0:
                raise ValueError("negative scale")
            return x * scale

    m = Boom()
    handles = [
        api.register_module_forward_pre_hook(lambda mod, args: log.append("global pre")),
        api.register_module_forward_hook(lambda mod, args, out: log.append("global fwd"),
                                         always_call=True),
        api.register_module_forward_hook(
            lambda mod, args, kwargs, out: log.append(("global fwd kw", sorted(kwargs))),
            with_kwargs=True),
        m.register_forward_pre_hook(lambda mod, args: log.append("pre a")),
        m.register_forward_pre_hook(lambda mod, args: log.append("pre first"), prepend=True),
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: (log.append(("pre kw", sorted(kwargs))),
                                       (args, {"scale": kwargs.get("scale", 1.0) * 2}))[1],
            with_kwargs=True),
        m.register_forward_hook(lambda mod, args, out: log.append("fwd a")),
        m.register_forward_hook(lambda mod, args, kwargs, out: log.append(("fwd kw", out is None)),
                                with_kwargs=True, always_call=True),
        m.register_forward_hook(lambda mod, args, out: log.append("fwd first"), prepend=True),
        m.register_forward_hook(lambda mod, args, out: log.append(("always", out is None)),
                                always_call=True),
    ]
    try:
        out = m(lib.ones(2), scale=1.5)
        log.append(out.tolist())
        log.append(error_of(lambda: m(lib.ones(2), scale=-1.0)))
        for h in handles[:3]:
            h.remove()
        log.append("globals removed")
        log.append(error_of(lambda: m(lib.ones(2), scale=-1.0)))
    finally:
        for h in handles:
            h.remove()
    log.append("all removed")
    m(lib.ones(2))
    return log


def _always_call_hook_error(lib):
    nn = lib.nn
    log = []
    m = nn.ReLU()

    def bad_hook(mod, args, out):
        raise RuntimeError("hook failed")

    m.register_forward_hook(bad_hook)
    m.register_forward_hook(lambda mod, args, out: log.append(("always", out is None)),
                            always_call=True)
    log.append(error_of(lambda: m(lib.ones(1))))

    class Fails(nn.Module):
        def forward(self, x):
            raise ValueError("forward failed")

    m2 = Fails()
    m2.register_forward_hook(bad_hook, always_call=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        log.append(error_of(lambda: m2(lib.ones(1))))
    log.append([str(w.message).split(":")[0] for w in caught])
    return log


def _backward_hooks(lib):
    nn = lib.nn
    api = _module_api(lib)
    log = []
    m = nn.Linear(2, 1)
    handles = [
        api.register_module_full_backward_pre_hook(
            lambda mod, gout: log.append(("global bpre", type(mod).__name__))),
        api.register_module_full_backward_hook(
            lambda mod, gin, gout: log.append(("global bwd", type(mod).__name__))),
        m.register_full_backward_pre_hook(lambda mod, gout: log.append("bpre")),
        m.register_full_backward_hook(lambda mod, gin, gout: log.append("bwd")),
    ]
    try:
        x = lib.ones(3, 2, requires_grad=True)
        m(x).sum().backward()
    finally:
        for h in handles:
            h.remove()
    m(x).sum().backward()
    log.append("removed")
    return log


def _registration_hooks(lib):
    nn = lib.nn
    api = _module_api(lib)
    log = []

    def on_buffer(mod, name, buf):
        log.append(("buffer", type(mod).__name__, name, buf is None))
        return None if buf is None else buf + 1

    handles = [
        api.register_module_buffer_registration_hook(on_buffer),
        api.register_module_module_registration_hook(
            lambda mod, name, sub: log.append(("module", type(mod).__name__, name))),
        api.register_module_parameter_registration_hook(
            lambda mod, name, p: log.append(("param", type(mod).__name__, name))),
    ]
    try:
        net = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
        net.extra = nn.ReLU()
        net.add_module("more", nn.Tanh())
        net[1].running_mean = lib.zeros(2)
        net[1].register_buffer("empty", None)
        net[0].bias = nn.Parameter(lib.zeros(2))
        net[0].register_parameter("none", None)
        log.append(net[1].running_mean.tolist())
    finally:
        for h in handles:
            h.remove()
    nn.Linear(1, 1)
    return log


def _state_dict_hooks(lib):
    nn = lib.nn
    log = []
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.Linear(1, 1)))
    for name, mod in net.named_modules():
        mod.register_state_dict_pre_hook(
            lambda m, prefix, keep_vars, name=name: log.append(("pre", name, prefix, keep_vars)))
        mod.register_state_dict_post_hook(
            lambda m, sd, prefix, meta, name=name: log.append(("post", name, prefix, list(sd))))
        mod.register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, missing, unexpected, errors, name=name:
            log.append(("load pre", name, prefix, sorted(sd), strict)))
        mod.register_load_state_dict_post_hook(
            lambda m, keys, name=name: log.append(("load post", name, list(keys.missing_keys))))
    sd = net.state_dict(prefix="top.", keep_vars=True)
    log.append(list(sd))
    sd = net.state_dict()
    del sd["1.0.bias"]
    log.append(error_of(lambda: net.load_state_dict(sd)))

    private = nn.Linear(1, 1)
    private._register_state_dict_hook(lambda m, sd, prefix, meta: {"replaced": 1})
    log.append(private.state_dict())
    public = nn.Linear(1, 1)
    public.register_state_dict_post_hook(lambda m, sd, prefix, meta: sd)
    log.append(error_of(public.state_dict))

    lenient = nn.Linear(1, 1)
    lenient.register_load_state_dict_post_hook(lambda m, keys: keys.missing_keys.clear())
    log.append(str(lenient.load_state_dict({"weight": lib.ones(1, 1)})))
    strict_again = nn.Linear(1, 1)
    strict_again.register_load_state_dict_post_hook(
        lambda m, keys: keys.unexpected_keys.append("ghost"))
    log.append(error_of(lambda: strict_again.load_state_dict(strict_again.state_dict())))
    returns = nn.Linear(1, 1)
    returns.register_load_state_dict_post_hook(lambda m, keys: keys)
    log.append(error_of(lambda: returns.load_state_dict(returns.state_dict())))

    renamed = nn.Linear(1, 1)

    def rename(m, sd, prefix, *rest):
        if prefix + "w" in sd:
            sd[prefix + "weight"] = sd.pop(prefix + "w")

    renamed.register_load_state_dict_pre_hook(rename)
    log.append(str(renamed.load_state_dict({"w": lib.full((1, 1), 4.0), "bias": lib.zeros(1)})))
    log.append(renamed.weight.tolist())
    return log


def _to_empty_and_skip_init(lib):
    nn = lib.nn
    log = []
    net = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)).double()
    weight = net[0].weight
    out = net.to_empty(device="cpu")
    log.append(out is net)
    log.append([(n, tuple(t.shape), str(t.dtype).split(".")[-1], isinstance(t, nn.Parameter),
                 t.requires_grad) for n, t in net.state_dict(keep_vars=True).items()])
    log.append(net[0].weight is weight)
    shallow = nn.Sequential(nn.Linear(1, 1))
    child_weight = shallow[0].weight
    shallow.to_empty(device="cpu", recurse=False)
    log.append(shallow[0].weight is child_weight)
    log.append(error_of(lambda: nn.Linear(1, 1).to_empty(device="cuda")))
    layer = nn.utils.skip_init(nn.Linear, 4, 5, bias=False, dtype=lib.float64)
    log.append((type(layer).__name__, tuple(layer.weight.shape), str(layer.weight.dtype)[-7:],
                layer.bias is None))
    log.append(error_of(lambda: nn.utils.skip_init(nn.ReLU)))
    log.append(error_of(lambda: nn.utils.skip_init(int)))
    return log


def _metadata_versions(lib):
    nn = lib.nn
    log = []
    net = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.BatchNorm1d(2)))
    sd = net.state_dict(prefix="p.")
    log.append(dict(sd._metadata))
    seen = []
    net[1][0].register_load_state_dict_pre_hook(
        lambda m, sd, prefix, meta, *rest: seen.append(dict(meta)))
    net.load_state_dict(net.state_dict(), assign=True)
    log.append(seen)
    # a plain dict has no versions: batch norm takes a missing num_batches_tracked as old
    plain = {k: v for k, v in net.state_dict().items() if not k.endswith("num_batches_tracked")}
    log.append(str(net.load_state_dict(plain)))
    versioned = net.state_dict()
    del versioned["1.0.num_batches_tracked"]
    log.append(error_of(lambda: net.load_state_dict(versioned)))
    return log


def _normalize(record):
    """Library names in the records (types, error texts) are the only expected difference."""
    return repr(record).replace("torch", "LIB").replace("ember", "LIB")


SCENARIOS = [_extra_state, _forward_hooks, _always_call_hook_error, _backward_hooks,
             _registration_hooks, _state_dict_hooks, _to_empty_and_skip_init,
             _metadata_versions]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__.strip("_"))
def test_same_record_as_torch(scenario):
    torch_record, ember_record = scenario(torch), scenario(ember)
    assert _normalize(ember_record) == _normalize(torch_record)
