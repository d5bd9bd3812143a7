"""ember.utils.checkpoint's helpers and selective activation checkpointing: which ops
the recomputation runs again (counted by a dispatch mode), gradients (gradcheck),
errors, the global switches and GraphExecGroup."""
import functools
from collections import Counter

import pytest

import ember
import ember.utils.checkpoint as cp
from ember.utils._python_dispatch import TorchDispatchMode

aten = ember.ops.aten


class Count(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.calls = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls[str(func)] += 1
        return func(*args, **(kwargs or {}))


def _sac(policy, **kwargs):
    return functools.partial(cp.create_selective_checkpoint_contexts, policy, **kwargs)


def _double_exp(t):
    # exp's backward multiplies by its saved output: no exp runs in backward
    return t.exp().exp().sum()


@pytest.mark.parametrize("policy, exps", [
    (None, 4),                                   # plain checkpoint: both rerun
    ([], 4),                                     # nothing saved
    ([aten.exp.default], 2),                     # both stored, none rerun
    (lambda ctx, op, *a, **k: cp.CheckpointPolicy.PREFER_SAVE, 2),
    (lambda ctx, op, *a, **k: cp.CheckpointPolicy.MUST_RECOMPUTE, 4),
    (lambda ctx, op, *a, **k: cp.CheckpointPolicy.MUST_CPU_OFFLOAD, 4),  # eager: recompute
    (lambda ctx, op, *a, **k: True, 2),          # a bool: True saves
])
def test_recomputation_counts(policy, exps):
    x = ember.randn(5, dtype=ember.float64, requires_grad=True)
    kwargs = {} if policy is None else {"context_fn": _sac(policy)}
    with Count() as count:
        out = cp.checkpoint(_double_exp, x, use_reentrant=False, **kwargs)
        out.backward()
    assert count.calls["aten.exp.default"] == exps
    assert ember.allclose(x.grad, x.exp().exp() * x.exp())


def test_saving_only_the_first_call():
    seen = []

    def first_exp(ctx, op, *args, **kwargs):
        if op is aten.exp.default:
            seen.append(ctx.op_output)
            return len(seen) == 1
        return False
    x = ember.randn(5, dtype=ember.float64, requires_grad=True)
    with Count() as count:
        cp.checkpoint(_double_exp, x, use_reentrant=False,
                      context_fn=_sac(first_exp)).backward()
    assert count.calls["aten.exp.default"] == 3 and len(seen) == 2
    assert ember.allclose(seen[0], x.exp())


def test_gradients_through_selective_checkpoint():
    def region(a, b):
        return (a @ b).sin().mul(a.sum())

    def fn(x, w):  # a region backpropagates once: the gradient of one scalar
        return cp.checkpoint(region, x, w, use_reentrant=False,
                             context_fn=_sac([aten.sin.default, aten.matmul.default])).sum()
    x = ember.randn(3, 4, dtype=ember.float64, requires_grad=True)
    w = ember.randn(4, 2, dtype=ember.float64, requires_grad=True)
    got = ember.autograd.grad(fn(x, w), (x, w))
    want = ember.autograd.grad(region(x, w).sum(), (x, w))
    assert all(ember.allclose(g, h) for g, h in zip(got, want))
    # gradcheck backpropagates a graph more than once: that needs nothing stored
    assert ember.autograd.gradcheck(
        lambda a, b: cp.checkpoint(region, a, b, use_reentrant=False, context_fn=_sac([])),
        (x, w))
    # central differences against the one backward a saving region allows
    eps = 1e-6
    with ember.no_grad():
        for tensor, grad in ((x, got[0]), (w, got[1])):
            flat, grad_flat = tensor.view(-1), grad.reshape(-1)
            for i in range(flat.numel()):
                flat[i] += eps
                up = fn(x, w).item()
                flat[i] -= 2 * eps
                down = fn(x, w).item()
                flat[i] += eps
                assert abs((up - down) / (2 * eps) - grad_flat[i].item()) < 1e-6


def test_sac_errors():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(ValueError, match="Please update the OpOverloadPacket"):
        cp.create_selective_checkpoint_contexts([aten.sin])
    with pytest.raises(TypeError, match="must be either a function or a list of ops"):
        cp.create_selective_checkpoint_contexts(3)
    out = cp.checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False,
                        context_fn=_sac([aten.sin.default]))
    out.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="Trying to backward an extra time"):
        out.backward()

    def mutates(t):
        y = t.sin()
        y.mul_(2)
        return (y * t).sum()
    out = cp.checkpoint(mutates, x, use_reentrant=False, context_fn=_sac([aten.sin.default]))
    with pytest.raises(RuntimeError, match="cached during selective activation checkpoint "
                                           "has been mutated"):
        out.backward()
    x.grad = None
    out = cp.checkpoint(mutates, x, use_reentrant=False,
                        context_fn=_sac([aten.sin.default], allow_cache_entry_mutation=True))
    out.backward()  # the stored (mutated) sin is used, as in PyTorch
    assert ember.allclose(x.grad, 2 * x.sin() * 2 + 2 * x * x.cos())


def test_policy_not_asked_without_grad():
    asked = []
    with ember.no_grad():
        cp.checkpoint(lambda t: t.sin(), ember.ones(2), use_reentrant=False,
                      context_fn=_sac(lambda ctx, op, *a, **k: asked.append(op) or True))
    assert asked == []


def test_early_stop_switch():
    reached = []

    def fn(t):
        y = t.exp()
        reached.append(1)
        return y.sum()
    x = ember.ones(2, requires_grad=True)
    cp.checkpoint(fn, x, use_reentrant=False).backward()
    assert len(reached) == 1  # the recomputation stopped at exp's saved output
    with cp.set_checkpoint_early_stop(False):
        out = cp.checkpoint(fn, x, use_reentrant=False)
    out.backward()
    assert len(reached) == 3
    with cp.set_checkpoint_early_stop(True):
        out = cp.checkpoint(fn, x, use_reentrant=False, early_stop=False)
    out.backward()
    assert len(reached) == 4


def test_debug_switch():
    x = ember.ones(2, requires_grad=True)
    with cp.set_checkpoint_debug_enabled(True):
        with pytest.raises(NotImplementedError, match="debug=True"):
            cp.checkpoint(lambda t: t.sin(), x, use_reentrant=False)
        with pytest.raises(ValueError, match="incompatible with non-default context_fn"):
            cp.checkpoint(lambda t: t.sin(), x, use_reentrant=False,
                          context_fn=_sac([]))
    with cp.set_checkpoint_debug_enabled(False):
        cp.checkpoint(lambda t: t.sin(), x, use_reentrant=False, debug=True)


def test_forward_context_swallowing_an_exception():
    class Swallow:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return True
    with pytest.raises(RuntimeError, match="suppressed an exception raised during the "
                                           "checkpointed forward"):
        cp.checkpoint(lambda t: 1 / 0, ember.ones(1, requires_grad=True), use_reentrant=False,
                      context_fn=lambda: (Swallow(), Swallow()))


def test_graph_exec_group_recomputes_once():
    x = ember.randn(3, requires_grad=True)
    a, b = cp.checkpoint(lambda t: (t.exp(), t.exp() * 2), x, use_reentrant=False)
    with Count() as count, cp.GraphExecGroup():
        a.sum().backward()
        b.sum().backward()
    assert count.calls["aten.exp.default"] == 2  # one recomputation of the two exps
    with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
        with cp.GraphExecGroup(), cp.GraphExecGroup():
            pass


def test_helpers():
    x = ember.ones(2, requires_grad=True)
    a, b = cp.detach_variable((x * 2, "s"))
    assert a.requires_grad and a.is_leaf and b == "s"
    with pytest.raises(RuntimeError, match="Only tuple of tensors is supported. Got "
                                           "Unsupported input type: list"):
        cp.detach_variable([x])
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        cp.check_backward_validity((ember.ones(1), 2))
    assert cp.get_device_states(x, {"k": [x]}) == ([], [])
    cp.set_device_states([], [])
    assert cp.DefaultDeviceType.get_device_type() == "cpu"
    cp.DefaultDeviceType.set_device_type("meta")
    try:
        assert cp.DefaultDeviceType.get_device_type() == "meta"
    finally:
        cp.DefaultDeviceType.set_device_type(None)
    assert aten.detach.default in cp.SAC_IGNORED_OPS
    ctx = cp.SelectiveCheckpointContext(is_recompute=False, op_output=1)
    assert not ctx.is_recompute and ctx.op_output == 1
