"""Saved-tensor hooks, gradient hooks, Function extras and checkpointing: ember vs PyTorch
(gradients, the order hooks run in, and error messages with 'torch' read as 'ember')."""
import warnings

import numpy as np
import pytest
import torch

import ember
from tests.parity.autograd.function_builders import assert_same_error, on_both

LIBS = [torch, ember]
DTYPES = ["float32", "float64"]


def _graph(lib):
    return lib.autograd.graph


def _ckpt(lib):
    return lib.utils.checkpoint


def _leaf(lib, values, dtype="float64"):
    return lib.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def _mul_function(lib):
    class Mul(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            return a * b

        @staticmethod
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            return g * b, g * a
    return Mul


def _assert_close(t, e, rtol=1e-12):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=1e-7)


# ---- saved_tensors_hooks ---------------------------------------------------------------------
def test_hooks_on_save_for_backward_called_as_torch():
    def run(lib):
        calls = []

        def pack(t):
            calls.append(("pack", tuple(t.shape)))
            return t.detach()

        def unpack(t):
            calls.append(("unpack", tuple(t.shape)))
            return t
        a, b = _leaf(lib, [1.0, 2.0]), _leaf(lib, [3.0, 4.0])
        with _graph(lib).saved_tensors_hooks(pack, unpack):
            y = _mul_function(lib).apply(a, b)
        calls.append("backward")
        y.sum().backward()
        return calls, a.grad, b.grad
    t, e = on_both(run)
    assert t[0] == e[0]
    _assert_close(t[1], e[1])
    _assert_close(t[2], e[2])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("hooks", ["identity", "clone", "save_on_cpu", "pinned"])
def test_gradients_under_hooks_equal_torch(dtype, hooks):
    rng = np.random.default_rng(0)
    xs, ws = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))

    def run(lib):
        x, w = _leaf(lib, xs, dtype), _leaf(lib, ws, dtype)
        graph = _graph(lib)
        ctx = {"identity": lambda: graph.saved_tensors_hooks(lambda t: t, lambda t: t),
               "clone": lambda: graph.saved_tensors_hooks(lambda t: t.detach().clone(),
                                                         lambda t: t),
               "save_on_cpu": lambda: graph.save_on_cpu(),
               "pinned": lambda: graph.save_on_cpu(pin_memory=True)}[hooks]
        with ctx():
            y = (x @ w).tanh().exp().mul(x.sum(1, keepdim=True)).sum()
        y.backward()
        return x.grad, w.grad
    t, e = on_both(run)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    _assert_close(t[0], e[0], rtol)
    _assert_close(t[1], e[1], rtol)


def test_double_backward_under_hooks_equals_torch():
    def run(lib):
        x = _leaf(lib, [0.5, -1.0, 2.0])
        with _graph(lib).saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = (x.exp() * x.sin()).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    t, e = on_both(run)
    _assert_close(t[0], e[0])
    _assert_close(t[1], e[1])


def test_error_unpack_returns_non_tensor():
    def fn(lib):
        with _graph(lib).saved_tensors_hooks(lambda t: t.detach(), lambda t: 3):
            y = _mul_function(lib).apply(_leaf(lib, [1.0]), _leaf(lib, [2.0]))
        y.sum().backward()
    assert_same_error(fn)


def test_error_pack_modifies_input():
    def fn(lib):
        a = _leaf(lib, [1.0]) * 1
        with _graph(lib).saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            _mul_function(lib).apply(a, _leaf(lib, [2.0]))
    assert_same_error(fn)


def test_error_hooks_inside_disable():
    def fn(lib):
        graph = _graph(lib)
        with graph.disable_saved_tensors_hooks("hooks are off here"):
            with graph.save_on_cpu():
                pass
    assert_same_error(fn)


def test_error_disable_inside_hooks():
    def fn(lib):
        graph = _graph(lib)
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with graph.disable_saved_tensors_hooks("hooks are off here"):
                pass
    assert_same_error(fn)


def test_no_version_check_with_hooks_as_torch():
    def run(lib):
        x = _leaf(lib, [1.0, 2.0])
        with _graph(lib).saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            a = x * 1
            y = a.exp()
        a.add_(1)
        y.sum().backward()
        return x.grad
    t, e = on_both(run)
    _assert_close(t, e)


# ---- post-accumulate-grad hooks ----------------------------------------------------------------
def test_post_accumulate_grad_hook_order_as_torch():
    def run(lib):
        x = _leaf(lib, [1.0, 2.0])
        events = []
        x.register_hook(lambda g: events.append(("pre", g.tolist(), x.grad is None)))
        x.register_post_accumulate_grad_hook(lambda t: events.append(("post", t.grad.tolist())))
        (x * 3).sum().backward()
        (x * x).sum().backward()
        lib.autograd.grad((x * 3).sum(), x)
        (x * 3).sum().backward(inputs=[x])
        return events
    t, e = on_both(run)
    assert t == e


def test_optimizer_step_in_post_accumulate_hook_as_torch():
    rng = np.random.default_rng(1)
    w0, xs = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))

    def run(lib):
        w = _leaf(lib, w0)
        opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)

        def step(p):
            opt.step()
            opt.zero_grad()
        w.register_post_accumulate_grad_hook(step)
        x = lib.tensor(xs)
        for _ in range(3):
            (x @ w).tanh().pow(2).sum().backward()
        return w
    t, e = on_both(run)
    _assert_close(t, e)


@pytest.mark.parametrize("case", ["non_leaf", "no_grad", "returns_int", "returns_tensor"])
def test_post_accumulate_grad_hook_errors(case):
    def fn(lib):
        x = _leaf(lib, [1.0])
        if case == "non_leaf":
            (x * 2).register_post_accumulate_grad_hook(lambda t: None)
        elif case == "no_grad":
            lib.ones(1).register_post_accumulate_grad_hook(lambda t: None)
        else:
            x.register_post_accumulate_grad_hook(
                (lambda t: 5) if case == "returns_int" else (lambda t: t * 2))
            (x * 2).sum().backward()
    assert_same_error(fn)


# ---- multi-grad hooks ------------------------------------------------------------------------
def test_multi_grad_hook_all_as_torch():
    def run(lib):
        a, b = _leaf(lib, [1.0, 2.0]), _leaf(lib, [3.0, 4.0])
        c, d = a * b, a * b
        seen = []
        h = _graph(lib).register_multi_grad_hook(
            (a, b, c, d), lambda gs: seen.append([None if g is None else g.tolist()
                                                  for g in gs]))
        c.sum().backward(retain_graph=True)
        c.sum().backward(inputs=(a,), retain_graph=True)
        (c + d).sum().backward(retain_graph=True)
        h.remove()
        c.sum().backward()
        return seen
    t, e = on_both(run)
    assert t == e


def test_multi_grad_hook_any_as_torch():
    def run(lib):
        a, b = _leaf(lib, [1.0, 2.0]), _leaf(lib, [3.0, 4.0])
        seen = []
        _graph(lib).register_multi_grad_hook((a, b), lambda g: seen.append(g.tolist()),
                                             mode="any")
        (a * 2 + b * 5).sum().backward()
        (b * 7).sum().backward()
        return seen
    t, e = on_both(run)
    assert t == e


@pytest.mark.parametrize("case", ["mode", "no_grad"])
def test_multi_grad_hook_errors(case):
    def fn(lib):
        a = _leaf(lib, [1.0])
        if case == "mode":
            _graph(lib).register_multi_grad_hook((a,), print, mode="every")
        else:
            _graph(lib).register_multi_grad_hook((a, lib.ones(1)), print)
    assert_same_error(fn)


# ---- Function extras -------------------------------------------------------------------------
def _vjp_function(lib, also_backward=False):
    body = {"forward": staticmethod(lambda ctx, x: x * 3),
            "vjp": staticmethod(lambda ctx, g: g * 3)}
    if also_backward:
        body["backward"] = staticmethod(lambda ctx, g: g)
    return type("Triple", (lib.autograd.Function,), body)


def test_vjp_as_torch():
    def run(lib):
        x = _leaf(lib, [1.0, 2.0])
        y = _vjp_function(lib).apply(x)
        y.sum().backward()
        return x.grad, y.grad_fn.apply(lib.ones(2))
    t, e = on_both(run)
    _assert_close(t[0], e[0])
    _assert_close(t[1], e[1])


def test_error_vjp_and_backward():
    assert_same_error(lambda lib: _vjp_function(lib, True).apply(_leaf(lib, [1.0])).sum()
                      .backward())


def _clearing_function(lib):
    class Square(lib.autograd.Function):
        clear_saved_tensors_on_access = True

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    return Square


@pytest.mark.parametrize("case", ["second_backward", "second_read"])
def test_error_clear_saved_tensors_on_access(case):
    def fn(lib):
        y = _clearing_function(lib).apply(_leaf(lib, [1.0, 2.0]))
        if case == "second_backward":
            y.sum().backward(retain_graph=True)
            y.sum().backward()
        else:
            y.grad_fn.saved_tensors
            y.grad_fn.saved_tensors
    assert_same_error(fn)


def test_boxed_grads_call_as_torch():
    def run(lib):
        class Pair(lib.autograd.Function):
            boxed_grads_call = True

            @staticmethod
            def forward(ctx, x):
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, grads):
                kind = type(grads).__name__
                first = grads.pop(0)
                return first * 2 + grads[0] * 3 + (0 if kind == "list" else float("nan"))
        x = _leaf(lib, [1.0, 2.0])
        a, b = Pair.apply(x)
        (a + b * 2).sum().backward()
        return x.grad
    t, e = on_both(run)
    _assert_close(t, e)


def test_numpy_inside_forward_as_torch():
    def run(lib):
        class ViaNumpy(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return lib.tensor(np.sin(x.numpy()))

            @staticmethod
            def backward(ctx, g):
                return g
        x = _leaf(lib, [0.5, 1.0])
        with lib.no_grad():
            plain = x.numpy().copy()
        return ViaNumpy.apply(x), plain
    t, e = on_both(run)
    _assert_close(t[0], e[0])
    np.testing.assert_array_equal(t[1], e[1])
    assert t[0].requires_grad and e[0].requires_grad


def test_error_numpy_with_grad_mode_on():
    assert_same_error(lambda lib: _leaf(lib, [1.0]).numpy())


# ---- checkpoint ------------------------------------------------------------------------------
def _weights(depth, width, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((width, width)) / np.sqrt(width) for _ in range(depth)]


def _layers(lib, ws):
    return [(lambda t, w=w: (t @ w).tanh()) for w in ws]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("how", ["checkpoint", "sequential"])
def test_checkpoint_gradients_equal_torch(dtype, use_reentrant, how):
    w0 = _weights(6, 5)
    xs = np.random.default_rng(3).standard_normal((4, 5))

    def run(lib):
        ws = [_leaf(lib, w, dtype) for w in w0]
        x = _leaf(lib, xs, dtype)
        layers = _layers(lib, ws)
        ckpt = _ckpt(lib)
        if how == "sequential":
            out = ckpt.checkpoint_sequential(layers, 3, x, use_reentrant=use_reentrant)
        else:
            def first_half(t):
                for f in layers[:4]:
                    t = f(t)
                return t
            out = ckpt.checkpoint(first_half, x, use_reentrant=use_reentrant)
            for f in layers[4:]:
                out = f(out)
        out.pow(2).sum().backward()
        return [out, x.grad] + [w.grad for w in ws]
    t, e = on_both(run)
    rtol = 1e-5 if dtype == "float32" else 1e-12
    for a, b in zip(t, e):
        _assert_close(a, b, rtol)


def test_checkpoint_with_grad_and_double_backward_equals_torch():
    def run(lib):
        x = _leaf(lib, [0.5, -1.0, 2.0])
        y = _ckpt(lib).checkpoint(lambda t: (t.exp() * t.sin()).sum(), x, use_reentrant=False)
        g, = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    t, e = on_both(run)
    _assert_close(t[0], e[0])
    _assert_close(t[1], e[1])


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_dropout_mlp_checkpointed_equals_plain_in_both(use_reentrant):
    """Dropout masks differ between the libraries (different generators), so each library's
    checkpointed gradients are compared with its own plain ones, and the structure with
    torch's."""
    def run(lib, checkpointed):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(*[m for _ in range(3) for m in (nn.Linear(6, 6), nn.ReLU(),
                                                               nn.Dropout(0.5))])
        x = lib.ones(4, 6, requires_grad=True)
        lib.manual_seed(7)
        out = (_ckpt(lib).checkpoint_sequential(model, 3, x, use_reentrant=use_reentrant)
               if checkpointed else model(x))
        out.sum().backward()
        return [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy().copy()]
    for lib in LIBS:
        for a, b in zip(run(lib, True), run(lib, False)):
            np.testing.assert_array_equal(a, b)
    assert [g.shape for g in run(torch, True)] == [g.shape for g in run(ember, True)]


def test_use_reentrant_warning_as_torch():
    def messages(lib):
        x = lib.ones(2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            y = _ckpt(lib).checkpoint(lambda t: t.exp().sum(), x)
            _ckpt(lib).checkpoint_sequential([lambda t: t * 2], 1, x)
        y.backward()
        return [str(w.message).replace("torch", "ember") for w in caught], x.grad.tolist()
    t, e = on_both(messages)
    # "PyTorch 2.9" is a version of PyTorch in ember's message too
    assert [m.replace("Pyember", "PyTorch") for m in t[0]] == e[0]
    np.testing.assert_allclose(e[1], t[1], rtol=1e-6)


def test_none_of_the_inputs_warning_as_torch():
    def messages(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _ckpt(lib).checkpoint(lambda t: t * 2, lib.ones(2), use_reentrant=True)
        return [str(w.message) for w in caught]
    t, e = on_both(messages)
    assert t == e


@pytest.mark.parametrize("case", ["grad", "inputs", "kwargs", "context_fn", "determinism",
                                  "sequential_kwargs", "no_output_grad"])
def test_checkpoint_errors(case):
    def fn(lib):
        ckpt = _ckpt(lib)
        x = _leaf(lib, [1.0, 2.0])
        f = (lambda t: t.exp().sum())
        if case == "grad":
            lib.autograd.grad(ckpt.checkpoint(f, x, use_reentrant=True), x)
        elif case == "inputs":
            ckpt.checkpoint(f, x, use_reentrant=True).backward(inputs=[x])
        elif case == "kwargs":
            ckpt.checkpoint(f, x, use_reentrant=True, scale=1, shift=2)
        elif case == "context_fn":
            ckpt.checkpoint(f, x, use_reentrant=True, context_fn=lambda: None)
        elif case == "determinism":
            ckpt.checkpoint(f, x, use_reentrant=False, determinism_check="strict")
        elif case == "sequential_kwargs":
            ckpt.checkpoint_sequential([f], 1, x, use_reentrant=False, extra=1)
        else:
            ckpt.checkpoint(lambda t: t.detach() * 2, x, use_reentrant=True).sum().backward()
    assert_same_error(fn)


@pytest.mark.parametrize("case", ["fewer", "metadata"])
def test_checkpoint_recomputation_errors(case):
    def fn(lib):
        calls = []

        def changing(t):
            calls.append(1)
            if case == "fewer":
                return t.exp().sum() if len(calls) == 1 else t.sum()
            return (t if len(calls) == 1 else t[:1]).exp().sum()
        x = _leaf(lib, [1.0, 2.0])
        _ckpt(lib).checkpoint(changing, x, use_reentrant=False).backward()

    def without_tip(msg):  # PyTorch ends with a tip about its debug mode and torch.compile
        return msg.split("\nTip:")[0].rstrip()
    t, e = assert_same_error(fn, normalize=without_tip)
    assert t[0] == "CheckpointError"
