"""ember.utils.checkpoint: checkpointed gradients equal the plain ones exactly (dropout
included), the random state is preserved, and the documented errors and warnings."""
import gc
import warnings
import weakref

import numpy as np
import pytest

import ember
from ember import nn
from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

MODES = [True, False]


def _mlp(seed=0, width=8, depth=4, p=0.3):
    ember.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.ReLU(), nn.Dropout(p)]
    return nn.Sequential(*layers, nn.Linear(width, 1))


def _run(run, seed=1):
    """Gradients (parameters, input) and output of ``run(model, x)`` on a fresh model."""
    model = _mlp()
    x = ember.tensor(np.linspace(-1, 1, 40).reshape(5, 8), requires_grad=True,
                     dtype=ember.float32)
    ember.manual_seed(seed)
    out = run(model, x)
    out.sum().backward()
    return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()], out


def _assert_same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)


@pytest.mark.parametrize("use_reentrant", MODES)
def test_checkpoint_sequential_with_dropout_is_exact(use_reentrant):
    plain, out = _run(lambda m, x: m(x))
    got, out_ckpt = _run(lambda m, x: checkpoint_sequential(m, 3, x,
                                                            use_reentrant=use_reentrant))
    np.testing.assert_array_equal(out.detach().numpy(), out_ckpt.detach().numpy())
    _assert_same(got, plain)


@pytest.mark.parametrize("use_reentrant", MODES)
def test_checkpoint_of_a_module_is_exact(use_reentrant):
    def run(m, x):
        h = checkpoint(m[:6], x, use_reentrant=use_reentrant)
        return m[6:](h)
    _assert_same(_run(run)[0], _run(lambda m, x: m(x))[0])


@pytest.mark.parametrize("use_reentrant", MODES)
def test_checkpoint_sequential_of_a_list(use_reentrant):
    def run(m, x):
        return checkpoint_sequential(list(m.children()), 2, x, use_reentrant=use_reentrant)
    _assert_same(_run(run)[0], _run(lambda m, x: m(x))[0])


@pytest.mark.parametrize("use_reentrant", MODES)
def test_random_state_after_backward_is_as_without_checkpoint(use_reentrant):
    _run(lambda m, x: m(x))
    after_plain = ember.rand(4).numpy()
    _run(lambda m, x: checkpoint_sequential(m, 3, x, use_reentrant=use_reentrant))
    after_ckpt = ember.rand(4).numpy()
    np.testing.assert_array_equal(after_plain, after_ckpt)


@pytest.mark.parametrize("use_reentrant", MODES)
def test_without_preserve_rng_state_dropout_differs(use_reentrant):
    plain = _run(lambda m, x: m(x))[0]
    got = _run(lambda m, x: checkpoint_sequential(m, 3, x, use_reentrant=use_reentrant,
                                                  preserve_rng_state=False))[0]
    assert any(not np.array_equal(u, v) for u, v in zip(got, plain))


def test_non_reentrant_keeps_no_activation():
    x = ember.ones(4, requires_grad=True)
    kept = []

    def fn(t):
        h = t.exp()
        kept.append(weakref.ref(h))
        return h.sin()
    y_plain = fn(x)
    y = checkpoint(fn, x, use_reentrant=False)
    gc.collect()
    assert kept[0]() is not None  # the plain graph keeps exp's result for sin's backward
    assert kept[1]() is None      # the checkpointed one recomputes it
    y.sum().backward()
    y_plain.sum().backward()  # both gradients summed into x.grad
    xs = np.ones(4)
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(np.exp(xs)) * np.exp(xs), rtol=1e-6)


def test_non_reentrant_with_grad_and_double_backward():
    x = ember.tensor([0.5, -1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = checkpoint(lambda t: (t.exp() * t).sum(), x, use_reentrant=False)
    g, = ember.autograd.grad(y, x, create_graph=True)
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), np.exp(xs) * (xs + 1), rtol=1e-12)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xs) * (xs + 2), rtol=1e-12)


def test_non_reentrant_kwargs_and_retain_graph():
    x = ember.tensor([1.0, 2.0], dtype=ember.float64, requires_grad=True)
    y = checkpoint(lambda t, scale: (t * t * scale).sum(), x, scale=3.0, use_reentrant=False)
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [12.0, 24.0])


def test_non_reentrant_second_backward_without_retain_graph_raises():
    x = ember.ones(2, requires_grad=True)
    y = checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False)
    y.backward()
    with pytest.raises(RuntimeError, match="^Trying to backward through the graph a second "
                                           "time"):
        y.backward()


def test_nested_checkpoints():
    x = ember.tensor([0.5, 1.5], dtype=ember.float64, requires_grad=True)

    def inner(t):
        return t.sin() * t

    def outer(t):
        return checkpoint(inner, t.exp(), use_reentrant=False).cos()
    checkpoint(outer, x, use_reentrant=False).sum().backward()
    got = x.grad.numpy().copy()
    x.grad = None
    outer_plain = inner(x.exp()).cos()
    outer_plain.sum().backward()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-12)


def test_context_fn_wraps_forward_and_recomputation():
    events = []

    class Mark:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            events.append(self.name)

        def __exit__(self, *exc):
            return False
    x = ember.ones(2, requires_grad=True)
    y = checkpoint(lambda t: (t.exp()).sum(), x, use_reentrant=False,
                   context_fn=lambda: (Mark("forward"), Mark("recompute")))
    assert events == ["forward"]
    y.backward()
    assert events == ["forward", "recompute"]


def test_determinism_check():
    calls = []

    def changing(t):
        calls.append(1)
        return (t[:3] if len(calls) > 1 else t).exp().sum()
    x = ember.ones(4, requires_grad=True)
    y = checkpoint(changing, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="Recomputed values for the following tensors have "
                                              "different metadata"):
        y.backward()
    y = checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False, determinism_check="none")
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(np.ones(4)), rtol=1e-6)
    with pytest.raises(ValueError, match=r"^determinism_check should be one of \['default', "
                                         r"'none'\], but got nope$"):
        checkpoint(changing, x, use_reentrant=False, determinism_check="nope")


def test_recomputation_saving_fewer_tensors():
    calls = []

    def fewer(t):
        calls.append(1)
        return t.exp().sum() if len(calls) == 1 else t.sum()
    x = ember.ones(2, requires_grad=True)
    y = checkpoint(fewer, x, use_reentrant=False)
    with pytest.raises(CheckpointError, match="A different number of tensors was saved"):
        y.backward()


def test_reentrant_refuses_grad_and_inputs():
    x = ember.ones(3, requires_grad=True)
    msg = "^When use_reentrant=True, ember.utils.checkpoint is incompatible with .grad()"
    with pytest.raises(RuntimeError, match=msg):
        ember.autograd.grad(checkpoint(lambda t: t.exp().sum(), x, use_reentrant=True), x)
    with pytest.raises(RuntimeError, match=msg):
        checkpoint(lambda t: t.exp().sum(), x, use_reentrant=True).backward(inputs=[x])


def test_reentrant_argument_errors():
    x = ember.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: a,b$"):
        checkpoint(lambda t: t, x, use_reentrant=True, a=1, b=2)
    with pytest.raises(ValueError, match="^Passing `context_fn` or `debug` is only supported "
                                         "when use_reentrant=False.$"):
        checkpoint(lambda t: t, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="^Unexpected keyword arguments: a$"):
        checkpoint_sequential([lambda t: t], 1, x, use_reentrant=True, a=1)


def test_reentrant_warns_when_no_input_requires_grad():
    with pytest.warns(UserWarning, match="^None of the inputs have requires_grad=True. "
                                         "Gradients will be None$"):
        checkpoint(lambda t: t * 2, ember.ones(2), use_reentrant=True)


def test_use_reentrant_not_passed_warns_and_is_reentrant():
    x = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="^ember.utils.checkpoint: the use_reentrant "
                                         "parameter should be passed explicitly"):
        y = checkpoint(lambda t: t.exp().sum(), x)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
    with pytest.warns(UserWarning, match="^ember.utils.checkpoint.checkpoint_sequential: the "
                                         "use_reentrant parameter should be passed"):
        checkpoint_sequential([lambda t: t * 2], 1, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(lambda t: t.exp().sum(), x, use_reentrant=False)


def test_debug_is_not_supported():
    with pytest.raises(NotImplementedError, match="debug=True"):
        checkpoint(lambda t: t, ember.ones(2, requires_grad=True), use_reentrant=False,
                   debug=True)


def test_checkpoint_is_reachable_from_ember_utils():
    assert ember.utils.checkpoint.checkpoint is checkpoint
