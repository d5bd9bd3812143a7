"""Saved-tensor hooks, post-accumulate-grad and multi-grad hooks, and the Function extras
(vjp, clear_saved_tensors_on_access, boxed_grads_call, numpy() inside forward)."""
import numpy as np
import pytest

import ember
from ember.autograd.graph import (disable_saved_tensors_hooks, register_multi_grad_hook,
                                  save_on_cpu, saved_tensors_hooks)
from ember.autograd.graph import FREED_MESSAGE
from tests.helpers import run_in_thread


def _leaf(values=(0.5, -1.0, 2.0)):
    return ember.tensor(np.array(values, dtype=np.float64), requires_grad=True)


def _model(x, w):
    return ((x * w).exp() * x).tanh().sum()


def _grads(fn, *leaves):
    for t in leaves:
        t.grad = None
    fn(*leaves).backward()
    return [t.grad.numpy().copy() for t in leaves]


class _Recorder:
    """Pack/unpack hooks that count their calls; pack keeps a detached copy."""

    def __init__(self):
        self.packed, self.unpacked = 0, 0

    def pack(self, t):
        self.packed += 1
        return ("box", t.detach().clone())

    def unpack(self, box):
        self.unpacked += 1
        return box[1]


class Mul(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, g):
        a, b = ctx.saved_tensors
        return g * b, g * a


# ---- saved_tensors_hooks ---------------------------------------------------------------------
def test_hooks_see_built_in_saves_and_give_the_same_gradients():
    x, w = _leaf(), _leaf((1.5, 0.25, -0.5))
    plain = _grads(_model, x, w)
    rec = _Recorder()
    x.grad = w.grad = None
    with saved_tensors_hooks(rec.pack, rec.unpack):
        y = _model(x, w)
    assert rec.packed > 0 and rec.unpacked == 0
    y.backward()
    assert rec.unpacked == rec.packed
    for got, want in zip((x.grad.numpy(), w.grad.numpy()), plain):
        np.testing.assert_array_equal(got, want)


def test_hooks_see_save_for_backward():
    rec = _Recorder()
    a, b = _leaf(), _leaf((2.0, 3.0, 4.0))
    with saved_tensors_hooks(rec.pack, rec.unpack):
        y = Mul.apply(a, b)
    assert rec.packed == 2
    y.sum().backward()
    assert rec.unpacked == 2
    np.testing.assert_array_equal(a.grad.numpy(), [2.0, 3.0, 4.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, -1.0, 2.0])


def test_pack_hook_receives_the_saved_tensor_itself():
    a, b = _leaf(), _leaf()
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(t) or t.detach(), lambda t: t):
        Mul.apply(a, b)
    assert seen[0] is a and seen[1] is b


def test_innermost_hooks_win_and_outer_ones_come_back():
    outer, inner = _Recorder(), _Recorder()
    a, b = _leaf(), _leaf()
    with saved_tensors_hooks(outer.pack, outer.unpack):
        with saved_tensors_hooks(inner.pack, inner.unpack):
            Mul.apply(a, b)
        assert (outer.packed, inner.packed) == (0, 2)
        Mul.apply(a, b)
    assert (outer.packed, inner.packed) == (2, 2)
    Mul.apply(a, b)  # no hooks any more
    assert (outer.packed, inner.packed) == (2, 2)


def test_hooks_are_not_called_without_a_graph():
    rec = _Recorder()
    with saved_tensors_hooks(rec.pack, rec.unpack):
        _model(_leaf().detach(), _leaf().detach())
        with ember.no_grad():
            _model(_leaf(), _leaf())
    assert rec.packed == 0


def test_hooks_are_per_thread():
    rec = _Recorder()
    with saved_tensors_hooks(rec.pack, rec.unpack):
        run_in_thread(lambda: _model(_leaf(), _leaf()))
    assert rec.packed == 0


def test_unpacked_tensor_keeps_its_place_in_the_graph():
    a = _leaf()
    box = []

    class Keep(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            box.append(x)
            return g * 2
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        Keep.apply(a).sum().backward()
    x = box[0]
    assert x is not a and x.requires_grad and x.grad_fn is None
    np.testing.assert_array_equal(x.detach().numpy(), a.detach().numpy())


def test_saved_output_is_rebuilt_with_its_node():
    x = _leaf()
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = x.exp()
    saved = y.grad_fn.saved_tensors
    assert saved[-1].grad_fn is y.grad_fn


def test_double_backward_through_unpacked_tensors():
    x = _leaf()
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        y = (x.exp() * x).sum()
    g, = ember.autograd.grad(y, x, create_graph=True)
    g.sum().backward()
    xs = x.detach().numpy()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(xs) * (xs + 2), rtol=1e-12)


def test_unpack_must_return_a_tensor():
    x = _leaf()
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: 3):
        y = x.exp()
    with pytest.raises(TypeError, match="^Output of saved tensor unpack_hook expected to be a "
                                        "Tensor but got result of type int$"):
        y.sum().backward()


def test_pack_hook_may_not_modify_its_input():
    a = _leaf() * 1
    with saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
        with pytest.raises(RuntimeError, match="pack hook is modifying its input in place"):
            Mul.apply(a, _leaf())


def test_no_version_check_with_hooks():
    x = _leaf()
    with saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
        a = x * 1
        y = a.exp()
    a.add_(1)  # without hooks this raises in backward; with them PyTorch checks nothing
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp(x.detach().numpy()), rtol=1e-12)


def test_freed_after_backward():
    x = _leaf()
    with saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
        y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="^" + FREED_MESSAGE[:40]):
        y.backward()


def test_retain_graph_unpacks_each_time():
    rec = _Recorder()
    x = _leaf()
    with saved_tensors_hooks(rec.pack, rec.unpack):
        y = x.exp().sum()
    y.backward(retain_graph=True)
    y.backward()
    assert rec.unpacked == 2 * rec.packed
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()), rtol=1e-12)


@pytest.mark.parametrize("pin_memory", [False, True])
def test_save_on_cpu(pin_memory):
    x, w = _leaf(), _leaf((1.5, 0.25, -0.5))
    plain = _grads(_model, x, w)
    x.grad = w.grad = None
    with save_on_cpu(pin_memory=pin_memory):
        y = _model(x, w)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), plain[0])
    np.testing.assert_array_equal(w.grad.numpy(), plain[1])


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("not here"):
        with pytest.raises(RuntimeError, match="^not here$"):
            with save_on_cpu():
                pass
        with disable_saved_tensors_hooks("nested"):
            with pytest.raises(RuntimeError, match="^nested$"):
                saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
        with pytest.raises(RuntimeError, match="^not here$"):
            saved_tensors_hooks(lambda t: t, lambda t: t).__enter__()
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # allowed again
        with pytest.raises(RuntimeError, match="^hooks are active$"):
            with disable_saved_tensors_hooks("hooks are active"):
                pass


# ---- post-accumulate-grad hooks ----------------------------------------------------------------
def test_post_accumulate_grad_hook_runs_after_accumulation():
    x = _leaf()
    order = []
    x.register_hook(lambda g: order.append(("pre", x.grad)))
    h = x.register_post_accumulate_grad_hook(lambda t: order.append(("post", t.grad.clone())))
    (x * 3).sum().backward()
    assert order[0] == ("pre", None)
    assert order[1][0] == "post"
    np.testing.assert_array_equal(order[1][1].numpy(), [3.0, 3.0, 3.0])
    h.remove()
    (x * 3).sum().backward()
    assert len(order) == 3


def test_optimizer_step_in_the_hook():
    torch = ember
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))
    reference.load_state_dict(model.state_dict())
    optimizers = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}

    def step(p):
        optimizers[p].step()
        optimizers[p].zero_grad()
    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step)
    opt = torch.optim.SGD(reference.parameters(), lr=0.1)
    x = torch.randn(5, 3, dtype=torch.float32)
    for _ in range(3):
        model(x).pow(2).sum().backward()
        opt.zero_grad()
        reference(x).pow(2).sum().backward()
        opt.step()
    for p, q in zip(model.parameters(), reference.parameters()):
        assert p.grad is None
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-6)


def test_post_accumulate_grad_hook_errors():
    x = _leaf()
    with pytest.raises(RuntimeError, match="^post accumulate grad hooks cannot be registered on "
                                           "non-leaf tensors$"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="^cannot register a hook on a tensor that doesn't "
                                           "require gradient$"):
        ember.ones(2).register_post_accumulate_grad_hook(lambda t: None)
    h = x.register_post_accumulate_grad_hook(lambda t: 5)
    with pytest.raises(TypeError, match="^expected Variable, but hook returned 'int'$"):
        (x * 2).sum().backward()
    h.remove()
    x.register_post_accumulate_grad_hook(lambda t: t * 2)
    with pytest.raises(RuntimeError, match="^Tensor post accumulate grad hooks should return "
                                           "None.$"):
        (x * 2).sum().backward()


def test_post_accumulate_grad_hook_with_inputs_but_not_grad():
    x = _leaf()
    calls = []
    x.register_post_accumulate_grad_hook(lambda t: calls.append(t.grad.clone()))
    ember.autograd.grad((x * 3).sum(), x)
    assert calls == []
    (x * 3).sum().backward(inputs=[x])
    assert len(calls) == 1
    np.testing.assert_array_equal(calls[0].numpy(), [3.0, 3.0, 3.0])


# ---- multi-grad hooks ------------------------------------------------------------------------
def test_multi_grad_hook_all():
    a, b = _leaf(), _leaf((1.0, 2.0, 3.0))
    c, d = a * b, a * b
    seen = []
    h = register_multi_grad_hook((a, b, c, d), lambda gs: seen.append([g is not None
                                                                       for g in gs]))
    c.sum().backward(retain_graph=True)
    c.sum().backward(inputs=(a,), retain_graph=True)
    assert seen == [[True, True, True, False], [True, False, True, False]]
    h.remove()
    c.sum().backward()
    assert len(seen) == 2


def test_multi_grad_hook_all_gets_the_gradients():
    a, b = _leaf(), _leaf((1.0, 2.0, 3.0))
    got = []
    register_multi_grad_hook((a, b), got.append)
    (a * 2 + b * 3).sum().backward()
    np.testing.assert_array_equal(got[0][0].numpy(), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(got[0][1].numpy(), [3.0, 3.0, 3.0])


def test_multi_grad_hook_any_fires_once_per_pass():
    a, b = _leaf(), _leaf()
    got = []
    register_multi_grad_hook((a, b, ember.ones(2)), got.append, mode="any")
    (a * b).sum().backward()
    (a * b).sum().backward()
    assert len(got) == 2


def test_multi_grad_hook_errors():
    a = _leaf()
    with pytest.raises(ValueError, match=r"^Expects mode to be one of \('all', 'any'\) but got "
                                         "x$"):
        register_multi_grad_hook((a,), print, mode="x")
    with pytest.raises(AssertionError, match="^Expected gradient function to be set$"):
        register_multi_grad_hook((a, ember.ones(2)), print)


def test_unneeded_nodes_run_no_hooks_with_inputs():
    a, b = _leaf(), _leaf()
    calls = []
    b.register_hook(lambda g: calls.append("b"))
    (a * b).sum().backward(inputs=[a])
    assert calls == []


# ---- Function extras -------------------------------------------------------------------------
class Triple(ember.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 3

    @staticmethod
    def vjp(ctx, g):
        return g * 3


def test_vjp_is_backward():
    x = _leaf()
    y = Triple.apply(x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0, 3.0])
    np.testing.assert_array_equal(y.grad_fn.apply(ember.ones(3)).numpy(), [3.0, 3.0, 3.0])


def test_vjp_and_backward_together_raise():
    class Both(Triple):
        @staticmethod
        def backward(ctx, g):
            return g
    with pytest.raises(RuntimeError, match="^Implementing both 'backward' and 'vjp' for a "
                                           "custom Function is not allowed"):
        Both.apply(_leaf()).sum().backward()


class ClearOnAccess(ember.autograd.Function):
    clear_saved_tensors_on_access = True

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        x, = ctx.saved_tensors
        return 2 * x * g


_CLEARED = "^saved_tensors can only be accessed once when clear_saved_tensors_on_access=True"


def test_clear_saved_tensors_on_access():
    x = _leaf()
    y = ClearOnAccess.apply(x)
    y.sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), 2 * x.detach().numpy())
    with pytest.raises(RuntimeError, match=_CLEARED):
        y.sum().backward()
    z = ClearOnAccess.apply(x)
    assert z.grad_fn.saved_tensors[0] is x
    with pytest.raises(RuntimeError, match=_CLEARED):
        z.grad_fn.saved_tensors


def test_boxed_grads_call():
    class Pair(ember.autograd.Function):
        boxed_grads_call = True

        @staticmethod
        def forward(ctx, x):
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, grads):
            assert type(grads) is list and len(grads) == 2
            first = grads.pop(0)
            return first * 2 + grads[0] * 3
    x = _leaf()
    a, b = Pair.apply(x)
    (a + b).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [5.0, 5.0, 5.0])


def test_numpy_inside_forward_and_under_no_grad():
    class ViaNumpy(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return ember.tensor(np.sin(x.numpy()))

        @staticmethod
        def backward(ctx, g):
            return g
    x = _leaf()
    y = ViaNumpy.apply(x)
    assert y.requires_grad
    np.testing.assert_array_equal(y.detach().numpy(), np.sin(x.detach().numpy()))
    with ember.no_grad():
        assert x.numpy() is x.detach().numpy() or np.shares_memory(x.numpy(), x.detach().numpy())
    with pytest.raises(RuntimeError, match="^Can't call numpy\\(\\) on Tensor that requires "
                                           "grad"):
        x.numpy()


def test_pack_runs_with_grad_mode_off_and_unpack_in_backward_mode():
    modes = []

    def pack(t):
        modes.append(("pack", ember.is_grad_enabled()))
        return t.detach()

    def unpack(t):
        modes.append(("unpack", ember.is_grad_enabled()))
        return t
    x = _leaf()
    with saved_tensors_hooks(pack, unpack):
        y = x.exp().sum()
    ember.autograd.grad(y, x, create_graph=True)
    assert modes == [("pack", False), ("unpack", True)]
