"""Selective activation checkpointing and checkpoint's helpers against torch: how often
the recomputation runs each op (counted by a dispatch mode), values and gradients,
errors and warnings."""
import contextlib
import functools
from collections import Counter

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as tcp
from torch.utils._python_dispatch import TorchDispatchMode as TorchMode

import ember
import ember.utils.checkpoint as ecp
from ember.utils._python_dispatch import TorchDispatchMode as EmberMode

SIDES = {"torch": (torch, tcp, TorchMode), "ember": (ember, ecp, EmberMode)}
# ops whose counts are comparable: the ember and PyTorch backward formulas use them alike
COUNTED = ("aten.sin.default", "aten.exp.default", "aten.tanh.default")


def _counter(base):
    class Count(base):
        def __init__(self):
            super().__init__()
            self.calls = Counter()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.calls[str(func)] += 1
            return func(*args, **(kwargs or {}))
    return Count()


def _region(x, y):
    return (x.sin() * y).exp().tanh().exp()


def _policies(lib, cp):
    aten = lib.ops.aten
    return [
        [aten.sin.default],
        [aten.exp.default],
        [aten.sin.default, aten.tanh.default],
        [],
        lambda ctx, op, *a, **k: (cp.CheckpointPolicy.PREFER_SAVE if op == aten.exp.default
                                  else cp.CheckpointPolicy.MUST_RECOMPUTE),
        lambda ctx, op, *a, **k: op == aten.tanh.default,
        lambda ctx, op, *a, **k: cp.CheckpointPolicy.PREFER_CPU_OFFLOAD,
    ]


def _run(side, index, dtype, xs, early_stop=True):
    lib, cp, base = SIDES[side]
    x, y = (lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in xs)
    context_fn = functools.partial(cp.create_selective_checkpoint_contexts,
                                   _policies(lib, cp)[index])
    with _counter(base) as count:
        out = cp.checkpoint(_region, x, y, use_reentrant=False, context_fn=context_fn,
                            early_stop=early_stop)
        out.sum().backward()
    calls = {k: count.calls[k] for k in COUNTED}
    return calls, out.detach().numpy(), x.grad.numpy(), y.grad.numpy()


@pytest.mark.parametrize("early_stop", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("index", range(7))
def test_counts_values_and_gradients(index, dtype, early_stop):
    rng = np.random.default_rng(index)
    xs = [rng.standard_normal((3, 4)) * 0.5 for _ in range(2)]
    t_calls, *t_arrays = _run("torch", index, dtype, xs, early_stop)
    e_calls, *e_arrays = _run("ember", index, dtype, xs, early_stop)
    assert e_calls == t_calls
    tol = 1e-5 if dtype == "float32" else 1e-12
    for e, t in zip(e_arrays, t_arrays):
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol)


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return type(e).__name__, str(e).replace("torch.", "").replace("ember.", "")


def _sac_errors(side):
    lib, cp, _ = SIDES[side]
    aten = lib.ops.aten
    results = [_outcome(lambda: cp.create_selective_checkpoint_contexts([aten.sin])),
               _outcome(lambda: cp.create_selective_checkpoint_contexts(3)),
               _outcome(lambda: cp.create_selective_checkpoint_contexts([1]))]
    x = lib.ones(3, requires_grad=True)
    ctx = functools.partial(cp.create_selective_checkpoint_contexts, [aten.sin.default])
    out = cp.checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False, context_fn=ctx)
    out.backward(retain_graph=True)
    results.append(_outcome(out.backward))

    def mutates(t):
        y = t.sin()
        y.mul_(2)
        return (y * t).sum()
    out = cp.checkpoint(mutates, x, use_reentrant=False, context_fn=ctx)
    results.append(_outcome(out.backward))
    with cp.set_checkpoint_debug_enabled(True):
        results.append(_outcome(lambda: cp.checkpoint(lambda t: t.sin(), x,
                                                      use_reentrant=False, context_fn=ctx)))
    results.append(_outcome(lambda: cp.detach_variable([x])))
    with lib.no_grad():
        asked = []
        cp.checkpoint(lambda t: t.sin(), x, use_reentrant=False,
                      context_fn=functools.partial(cp.create_selective_checkpoint_contexts,
                                                   lambda c, op, *a, **k: asked.append(op)))
    results.append(asked)
    return results


def test_errors_alike():
    e, t = _sac_errors("ember"), _sac_errors("torch")
    # the op reprs differ by module only (ember.ops.aten's OpOverloadPacket)
    assert e[0][0] == t[0][0] and e[0][1].split("of type")[0] == t[0][1].split("of type")[0]
    assert e[1:] == t[1:]


def _early_stop_reaches(side, switch, early_stop):
    lib, cp, _ = SIDES[side]
    reached = []

    def fn(t):
        y = t.exp()
        reached.append(1)
        return y.sum()
    x = lib.ones(2, requires_grad=True)
    with cp.set_checkpoint_early_stop(switch):
        out = cp.checkpoint(fn, x, use_reentrant=False, early_stop=early_stop)
    out.backward()
    return len(reached)


@pytest.mark.parametrize("switch, early_stop", [(None, True), (None, False), (True, False),
                                                (False, True)])
def test_early_stop_switch(switch, early_stop):
    assert _early_stop_reaches("ember", switch, early_stop) == \
        _early_stop_reaches("torch", switch, early_stop)


def _group_counts(side):
    lib, cp, base = SIDES[side]
    x = lib.ones(3, requires_grad=True)
    counts = []
    for grouped in (False, True):
        a, b = cp.checkpoint(lambda t: (t.exp(), t.exp().tanh()), x, use_reentrant=False)
        with _counter(base) as count:
            with cp.GraphExecGroup() if grouped else contextlib.nullcontext():
                a.sum().backward()
                b.sum().backward()
        counts.append(count.calls["aten.exp.default"])
    return counts


def test_graph_exec_group():
    assert _group_counts("ember") == _group_counts("torch")


def test_helpers_alike():
    for side in ("ember", "torch"):
        lib, cp, _ = SIDES[side]
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True. "
                                             "Gradients will be None"):
            cp.check_backward_validity((lib.ones(1), 2))
        assert cp.get_device_states(lib.ones(2), [lib.ones(1)]) == ([], [])
        assert cp.DefaultDeviceType.get_device_type() == "cpu"
        a, b = cp.detach_variable((lib.ones(2, requires_grad=True) * 2, 5))
        assert (a.requires_grad, a.is_leaf, b) == (True, True, 5)
    assert set(ecp.__all__) == set(tcp.__all__)
