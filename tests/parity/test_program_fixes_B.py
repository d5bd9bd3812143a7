"""Parity tests for what the set-B programs (tests/parity/programs/vision_recipe.py, cgan.py,
gat_pointnet.py, realnvp.py) found in ember: the zero gradient that double backward through
relu / leaky_relu / hardtanh gives the op's input (an R1 penalty's biases get zeros, not None,
so Adam steps them), autograd.grad's and backward()'s argument handling (dict inputs, the order
and wording of their errors), ConvTranspose's output_size checks, and torch.jit's deprecation
warnings (attributed to the library, so the default filters keep them quiet)."""
import warnings

import numpy as np
import pytest
import torch

import ember

LIBS = (torch, ember)

ACTIVATIONS = {
    "relu": lambda F, z: F.relu(z),
    "relu_inplace": lambda F, z: F.relu(z.clone(), inplace=True),
    "leaky_relu": lambda F, z: F.leaky_relu(z, 0.2),
    "leaky_relu_inplace": lambda F, z: F.leaky_relu(z.clone(), 0.2, inplace=True),
    "hardtanh": lambda F, z: F.hardtanh(z, -0.5, 0.5),
    "relu6": lambda F, z: F.relu6(z * 4),
    "rrelu_eval": lambda F, z: F.rrelu(z, training=False),
}


def _arrays(seed, *shapes, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _double_backward(lib, act, dtype):
    """x -> act(x * w + b); g = d/dx of its sum (create_graph); then (g ** 2).sum() backward."""
    xa, wa, ba = _arrays(0, (4, 5), (5,), (5,), dtype=dtype)
    x = lib.tensor(xa, requires_grad=True)
    w = lib.tensor(wa, requires_grad=True)
    b = lib.tensor(ba, requires_grad=True)
    y = ACTIVATIONS[act](lib.nn.functional, x * w + b)
    g, = lib.autograd.grad(y.sum(), x, create_graph=True)
    g.pow(2).sum().backward()
    return g, x, w, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("act", sorted(ACTIVATIONS))
def test_double_backward_gives_the_input_a_zero_gradient(act, dtype):
    (tg, tx, tw, tb), (eg, ex, ew, eb) = (_double_backward(lib, act, dtype) for lib in LIBS)
    np.testing.assert_allclose(eg.detach().numpy(), tg.detach().numpy(), rtol=1e-6)
    assert eg.requires_grad == tg.requires_grad
    for t, e in ((tx, ex), (tw, ew), (tb, eb)):
        assert (e.grad is None) == (t.grad is None)
        np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
        assert e.grad.dtype == getattr(ember, str(t.grad.dtype).split(".")[1])
    assert not eb.grad.any()  # the bias only reaches g through the activation's mask


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "hardtanh"])
def test_gradient_node_names_match(act):
    names = []
    for lib in LIBS:
        x = lib.tensor(_arrays(1, (6,))[0], requires_grad=True)
        g, = lib.autograd.grad(ACTIVATIONS[act](lib.nn.functional, x).sum(), x,
                               create_graph=True)
        names.append(g.grad_fn.name())
    assert names[0] == names[1]


def test_gradient_of_the_gradient_alone_requires_grad():
    # the activation straight on the input: the gradient is all mask, yet PyTorch records it
    for act in ("relu", "leaky_relu", "hardtanh"):
        out = []
        for lib in LIBS:
            x = lib.tensor(_arrays(2, (5,))[0], requires_grad=True)
            g, = lib.autograd.grad(ACTIVATIONS[act](lib.nn.functional, x).sum(), x,
                                   create_graph=True)
            g.sum().backward()
            out.append((g.requires_grad, x.grad.tolist()))
        assert out[0] == out[1], act


def test_plain_backward_is_unchanged():
    for lib in LIBS:
        x = lib.tensor(_arrays(3, (5,))[0], requires_grad=True)
        g, = lib.autograd.grad(lib.nn.functional.leaky_relu(x, 0.1).sum(), x)
        assert not g.requires_grad and g.grad_fn is None


def _r1_step(lib):
    """A lazy R1 phase (StyleGAN2): only the gradient penalty is backpropagated, then Adam
    steps; the conv biases get zero gradients, which Adam counts as a step."""
    nn = lib.nn
    rng = np.random.default_rng(4)
    D = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.LeakyReLU(0.2),
                      nn.Conv2d(4, 4, 3, stride=2, padding=1), nn.ReLU(),
                      nn.Flatten(), nn.Linear(16, 1))
    with lib.no_grad():
        for p in D.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    opt = lib.optim.Adam(D.parameters(), lr=1e-2, betas=(0.0, 0.99))
    real = lib.tensor(rng.standard_normal((3, 1, 4, 4)).astype(np.float32), requires_grad=True)
    grad, = lib.autograd.grad(D(real).sum(), real, create_graph=True)
    penalty = grad.pow(2).reshape(3, -1).sum(1).mean()
    opt.zero_grad(set_to_none=True)
    penalty.backward()
    missing = [n for n, p in D.named_parameters() if p.grad is None]
    opt.step()
    steps = {n: int(opt.state[p]["step"]) for n, p in D.named_parameters() if p in opt.state}
    return penalty.item(), missing, steps, [p.detach().numpy().copy() for p in D.parameters()]


def test_r1_penalty_phase_steps_the_biases_like_torch():
    (tp, tmiss, tsteps, tparams), (ep, emiss, esteps, eparams) = map(_r1_step, LIBS)
    assert ep == pytest.approx(tp, rel=1e-5)
    assert emiss == tmiss == ["5.bias"]
    assert esteps == tsteps
    for e, t in zip(eparams, tparams):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("act", ["relu", "leaky_relu", "hardtanh"])
def test_higher_order_transforms_through_the_link(act):
    wa, xa, va = _arrays(5, (3, 3), (3,), (3,))
    results = []
    for lib in LIBS:
        F, W = lib.nn.functional, lib.tensor(wa)

        def f(x):
            return (ACTIVATIONS[act](F, W @ x) ** 2).sum() + ACTIVATIONS[act](F, x).sum()
        x, v = lib.tensor(xa), lib.tensor(va)
        results.append([lib.autograd.functional.hessian(f, x),
                        lib.func.hessian(f)(x),
                        lib.func.jvp(lib.func.grad(f), (x,), (v,))[1],
                        lib.func.vmap(lib.func.grad(f))(lib.stack([x, x * 2])),
                        lib.autograd.functional.hvp(f, x, v)[1]])
    for t, e in zip(*results):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)


def test_gradgradcheck_through_the_activations():
    for act in ("leaky_relu", "hardtanh", "relu"):
        x = ember.tensor(_arrays(6, (6,))[0] + 0.05, requires_grad=True)
        assert ember.autograd.gradgradcheck(lambda v: ACTIVATIONS[act](ember.nn.functional,
                                                                       v * 1.3), (x,))


# ---- autograd.grad / backward arguments ----------------------------------------------------
def _error(fn):
    try:
        fn()
    except Exception as error:  # noqa: BLE001 - the type and message are what we compare
        return type(error).__name__, str(error).replace("ember.", "torch.")
    return None


GRAD_CALLS = {
    "unused_second": lambda lib, a, b, c: lib.autograd.grad((a * 2).sum(), [a, b]),
    "unused_first": lambda lib, a, b, c: lib.autograd.grad((a * 2).sum(), [b, a]),
    "unused_single": lambda lib, a, b, c: lib.autograd.grad((a * 2).sum(), b),
    "no_requires_grad": lambda lib, a, b, c: lib.autograd.grad((a * 2).sum(), [a, c]),
    "nonscalar_before_requires_grad": lambda lib, a, b, c: lib.autograd.grad(a * 2, [a, c]),
    "fewer_grad_outputs": lambda lib, a, b, c: lib.autograd.grad(
        [(a * 2).sum(), (a * 3).sum()], [a], [lib.ones(())]),
    "no_grad_outputs": lambda lib, a, b, c: lib.autograd.grad(
        [(a * 2).sum(), (a * 3).sum()], [a], []),
    "empty_inputs": lambda lib, a, b, c: lib.autograd.grad((a * 2).sum(), []),
    "materialize_without_unused": lambda lib, a, b, c: lib.autograd.grad(
        (a * 2).sum(), [a, b], allow_unused=False, materialize_grads=True),
    "other_mapping": lambda lib, a, b, c: lib.autograd.grad(
        (a * 2).sum(), __import__("types").MappingProxyType({"a": a})),
    "backward_fewer_grads": lambda lib, a, b, c: lib.autograd.backward(
        [(a * 2).sum(), (a * 3).sum()], [lib.ones(())]),
    "backward_empty_inputs": lambda lib, a, b, c: (a * 2).sum().backward(inputs=[]),
}


def _leaves(lib):
    a, b, c = _arrays(7, (3,), (3,), (3,))
    return (lib.tensor(a, requires_grad=True), lib.tensor(b, requires_grad=True),
            lib.tensor(c))


@pytest.mark.parametrize("name", sorted(GRAD_CALLS))
def test_grad_argument_errors_match(name):
    theirs, ours = (_error(lambda lib=lib: GRAD_CALLS[name](lib, *_leaves(lib)))
                    for lib in LIBS)
    assert theirs is not None
    assert ours == theirs


def test_grad_with_dict_inputs_returns_a_dict():
    out = []
    for lib in LIBS:
        a, b, _ = _leaves(lib)
        grads = lib.autograd.grad((a * b).sum(), {"a": a, "b": b})
        assert type(grads) is dict and list(grads) == ["a", "b"]
        out.append({k: v.numpy() for k, v in grads.items()})
    for k in ("a", "b"):
        np.testing.assert_allclose(out[1][k], out[0][k])


def test_extra_grad_outputs_are_ignored_as_in_torch():
    for lib in LIBS:
        a, _, _ = _leaves(lib)
        g, = lib.autograd.grad((a * 2).sum(), [a], [lib.ones(()), lib.ones(())])
        np.testing.assert_allclose(g.numpy(), [2.0, 2.0, 2.0])
        a.grad = None
        lib.autograd.backward([(a * 3).sum()], [lib.ones(()), lib.ones(())])
        np.testing.assert_allclose(a.grad.numpy(), [3.0, 3.0, 3.0])


def test_only_inputs_false_warns():
    for lib in LIBS:
        a, _, _ = _leaves(lib)
        with pytest.warns(FutureWarning, match="only_inputs argument is deprecated"):
            lib.autograd.grad((a * 2).sum(), a, only_inputs=False)


# ---- ConvTranspose output_size -------------------------------------------------------------
OUTPUT_SIZES = [[1, 4, 5, 5], (9,), [20, 20], [1, 1, 9, 7], [10, 14], (1, 2, 10, 15),
                "size"]


@pytest.mark.parametrize("output_size", OUTPUT_SIZES, ids=str)
@pytest.mark.parametrize("batched", [True, False])
def test_conv_transpose_output_size_matches(output_size, batched):
    got = []
    for lib in LIBS:
        m = lib.nn.ConvTranspose2d(4, 2, 3, stride=(2, 3), padding=1)
        x = lib.zeros((1, 4, 5, 5) if batched else (4, 5, 5))
        size = lib.Size([1, 1, 9, 20]) if output_size == "size" else output_size
        try:
            got.append(tuple(m(x, output_size=size).shape))
        except ValueError as error:
            got.append(str(error).replace("ember.", "torch."))
    assert got[0] == got[1]


def test_conv_transpose1d_output_size_matches():
    for output_size in ([12], [1, 2, 12], [13], [1, 12]):
        for shape in ((1, 4, 5), (4, 5)):
            got = []
            for lib in LIBS:
                m = lib.nn.ConvTranspose1d(4, 2, 3, stride=2)
                try:
                    got.append(tuple(m(lib.zeros(shape), output_size=output_size).shape))
                except ValueError as error:
                    got.append(str(error).replace("ember.", "torch."))
            assert got[0] == got[1], (output_size, shape)


# ---- torch.jit ------------------------------------------------------------------------------
def test_jit_deprecation_warnings_point_into_the_library():
    def double(x):
        return x * 2
    for lib in LIBS:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            scripted = lib.jit.script(double)
            lib.jit.trace(double, lib.ones(1))
        messages = [w for w in caught if issubclass(w.category, DeprecationWarning)
                    and "torch.jit." in str(w.message)]
        # (PyTorch's trace warns twice: through trace and again in its trace_module)
        assert {str(w.message).split("`")[1] for w in messages} == {"torch.jit.script",
                                                                    "torch.jit.trace"}
        assert all(w.filename != __file__ for w in messages)  # not the caller's line
        assert scripted.__name__ == "ScriptFunction" and scripted.name == "double"


def test_grad_with_dict_inputs_under_batched_grads():
    out = []
    for lib in LIBS:
        a, b, _ = _leaves(lib)
        y = a * b * 2
        grads = lib.autograd.grad(y, {"a": a, "b": b}, grad_outputs=lib.eye(3),
                                  is_grads_batched=True)
        assert type(grads) is dict and list(grads) == ["a", "b"]
        out.append({k: v.numpy() for k, v in grads.items()})
    for k in ("a", "b"):
        np.testing.assert_allclose(out[1][k], out[0][k])


POOLS = {
    "max_pool2d_tiled": lambda F, z: F.max_pool2d(z, 2),
    "max_pool2d": lambda F, z: F.max_pool2d(z, 3, 1, 1),
    "max_pool1d": lambda F, z: F.max_pool1d(z.flatten(2), 3, 2),
    "max_pool3d": lambda F, z: F.max_pool3d(z.unsqueeze(2).repeat(1, 1, 3, 1, 1), 2, 1),
    "adaptive_max_pool2d": lambda F, z: F.adaptive_max_pool2d(z, 3),
    "unbatched": lambda F, z: F.max_pool2d(z[0], 3, 2),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pool", sorted(POOLS))
def test_max_pool_double_backward_reaches_the_input(pool, dtype):
    """conv bias -> max pool, no activation between: torch's max-pool backward op gives its
    input a zero gradient, so the bias's gradient is zeros, not None."""
    got = []
    for lib in LIBS:
        xa, ba = _arrays(8, (1, 2, 4, 4), (2, 1, 1), dtype=dtype)
        x, b = lib.tensor(xa, requires_grad=True), lib.tensor(ba, requires_grad=True)
        g, = lib.autograd.grad((POOLS[pool](lib.nn.functional, x * 2 + b) ** 2).sum(), x,
                               create_graph=True)
        g.pow(2).sum().backward()
        got.append((g.detach().numpy(), g.grad_fn.name() if "max_pool2d" in pool else "",
                    b.grad.numpy(), x.grad.numpy()))
    for t, e in zip(*got):
        if isinstance(t, str):
            assert e == t
        else:
            np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("pool", ["max_pool2d_tiled", "max_pool2d", "adaptive_max_pool2d"])
def test_max_pool_higher_order_transforms(pool):
    xa, va = _arrays(9, (32,), (32,))
    results = []
    for lib in LIBS:
        F = lib.nn.functional

        def f(x):
            return (POOLS[pool](F, x.view(1, 2, 4, 4)) ** 3).sum()
        x, v = lib.tensor(xa), lib.tensor(va)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ember's per-sample fallback for some gathers
            results.append([lib.autograd.functional.hessian(f, x), lib.func.hessian(f)(x),
                            lib.func.jvp(lib.func.grad(f), (x,), (v,))[1]])
    for t, e in zip(*results):
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10)
