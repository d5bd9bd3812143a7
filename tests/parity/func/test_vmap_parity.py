"""ember.func.vmap against torch.func.vmap: values, per-sample gradients, error texts."""
import warnings

import numpy as np
import pytest
import torch
import torch.func

import ember
from ember.func import vmap
from tests.parity.compare import error_of


def _pair(shape, seed=0, dtype=np.float32):
    a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.tensor(a), torch.tensor(a)


def _close(e, t, tol=1e-5):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)


CASES = {
    "softmax_sum": (lambda lib: lambda a: a.softmax(-1).sum(0), 0, 0),
    "matmul_in_dims_1": (lambda lib: lambda a: a @ a.t(), 1, 0),
    "out_dims_1": (lambda lib: lambda a: (a * 2).exp(), 0, 1),
    "cat_index": (lambda lib: lambda a: lib.cat([a[:, 1:], a], 1), 0, 0),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(CASES))
def test_values(name, dtype):
    make, in_dims, out_dims = CASES[name]
    e, t = _pair((4, 3, 5), dtype=dtype)
    _close(vmap(make(ember), in_dims, out_dims)(e),
           torch.func.vmap(make(torch), in_dims, out_dims)(t))


def test_nested_and_tree_in_dims():
    (e1, t1), (e2, t2) = _pair((3, 4), 1), _pair((2, 4), 2)

    def f(lib):
        return lambda a, b: lib.dot(a, b) if hasattr(lib, "dot") else (a * b).sum()
    got = vmap(vmap(f(ember), in_dims=(None, 0)), in_dims=(0, None))(e1, e2)
    want = torch.func.vmap(torch.func.vmap(f(torch), in_dims=(None, 0)),
                           in_dims=(0, None))(t1, t2)
    _close(got, want)


def _mlp_loss(lib, F, x, t, w1, w2):
    h = lib.tanh(x @ w1)
    return F.cross_entropy((h @ w2).unsqueeze(0), t.unsqueeze(0))


def test_per_sample_gradients_of_an_mlp():
    (ex, tx), (ew1, tw1), (ew2, tw2) = _pair((6, 4), 3), _pair((4, 5), 4), _pair((5, 3), 5)
    target = np.array([0, 2, 1, 1, 0, 2])
    et, tt = ember.tensor(target), torch.tensor(target)
    ew1.requires_grad_()
    ew2.requires_grad_()

    def ember_grads(x, t):
        loss = _mlp_loss(ember, ember.nn.functional, x, t, ew1, ew2)
        return ember.autograd.grad(loss, (ew1, ew2))

    def torch_loss(w1, w2, x, t):
        return _mlp_loss(torch, torch.nn.functional, x, t, w1, w2)
    got = vmap(ember_grads)(ex, et)
    want = torch.func.vmap(torch.func.grad(torch_loss, argnums=(0, 1)),
                           in_dims=(None, None, 0, 0))(tw1, tw2, tx, tt)
    for g, w in zip(got, want):
        _close(g, w)


def test_per_sample_gradients_of_a_cnn():
    (ex, tx) = _pair((5, 1, 8, 8), 6)
    (ek1, tk1), (ek2, tk2) = _pair((4, 1, 3, 3), 7), _pair((6, 4, 3, 3), 8)
    (ew, tw) = _pair((6 * 4 * 4, 3), 9)
    target = np.array([0, 2, 1, 1, 0])
    et, tt = ember.tensor(target), torch.tensor(target)
    params = [ek1, ek2, ew]
    for p in params:
        p.requires_grad_()

    def net(lib, F, x, k1, k2, w):
        h = F.relu(F.conv2d(x.unsqueeze(0), k1, padding=1))
        h = F.relu(F.conv2d(h, k2, stride=2, padding=1))
        return h.flatten(1) @ w

    def ember_grads(x, t):
        loss = ember.nn.functional.cross_entropy(net(ember, ember.nn.functional, x, *params),
                                                 t.unsqueeze(0))
        return ember.autograd.grad(loss, params)

    def torch_loss(k1, k2, w, x, t):
        return torch.nn.functional.cross_entropy(
            net(torch, torch.nn.functional, x, k1, k2, w), t.unsqueeze(0))
    got = vmap(ember_grads)(ex, et)
    want = torch.func.vmap(torch.func.grad(torch_loss, argnums=(0, 1, 2)),
                           in_dims=(None, None, None, 0, 0))(tk1, tk2, tw, tx, tt)
    for g, w in zip(got, want):
        _close(g, w, 1e-4)


def test_randomness_same_and_different_shapes():
    e, t = _pair((3, 4))
    for mode in ("same", "different"):
        got = vmap(lambda a: a + ember.rand(4), randomness=mode)(e)
        want = torch.func.vmap(lambda a: a + torch.rand(4), randomness=mode)(t)
        assert tuple(got.shape) == tuple(want.shape)


ERRORS = [
    ("sizes", lambda lib, x, y: vmap_of(lib)(lib.add)(x, y)),
    ("in_dims_structure", lambda lib, x, y: vmap_of(lib)(lib.add, in_dims=(0,))(x, y)),
    ("in_dims_list", lambda lib, x, y: vmap_of(lib)(lib.add, in_dims=[0, 0])(x, y)),
    ("in_dim_type", lambda lib, x, y: vmap_of(lib)(lib.add, in_dims=(0, "a"))(x, y)),
    ("in_dim_range", lambda lib, x, y: vmap_of(lib)(lib.add, in_dims=(0, 5))(x, y)),
    ("nothing_mapped", lambda lib, x, y: vmap_of(lib)(lib.add, in_dims=(None, None))(x, y)),
    ("non_tensor", lambda lib, x, y: vmap_of(lib)(lambda a: a)(3.0)),
    ("no_inputs", lambda lib, x, y: vmap_of(lib)(lambda a: a)()),
    ("item", lambda lib, x, y: vmap_of(lib)(lambda a: a.sum().item())(x)),
    ("bool", lambda lib, x, y: vmap_of(lib)(lambda a: bool(a.sum()))(x)),
    ("returns_int", lambda lib, x, y: vmap_of(lib)(lambda a: 3)(x)),
    ("out_dims_structure", lambda lib, x, y: vmap_of(lib)(lambda a: a, out_dims=(0, 0))(x)),
    ("out_dims_none", lambda lib, x, y: vmap_of(lib)(lambda a: a, out_dims=None)(x)),
    ("out_dims_type", lambda lib, x, y: vmap_of(lib)(lambda a: a, out_dims="a")(x)),
    ("random", lambda lib, x, y: vmap_of(lib)(lambda a: a + lib.randn(3))(x)),
    ("randomness_value", lambda lib, x, y: vmap_of(lib)(lambda a: a, randomness="foo")(x)),
    ("chunk_size", lambda lib, x, y: vmap_of(lib)(lambda a: a, chunk_size=0)(x)),
]


def vmap_of(lib):
    return vmap if lib is ember else torch.func.vmap


@pytest.mark.parametrize("name,fn", ERRORS, ids=[n for n, _ in ERRORS])
def test_error_texts(name, fn):
    (ex, tx), (ey, ty) = _pair((2, 3), 1), _pair((3, 3), 2)
    assert error_of(lambda: fn(ember, ex, ey)) == error_of(lambda: fn(torch, tx, ty))


def test_autograd_function_without_vmap_support_error():
    def make(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(x):
                return x * 2

            @staticmethod
            def setup_context(ctx, inputs, output):
                pass

            @staticmethod
            def backward(ctx, g):
                return g * 2
        return F
    (ex, tx) = _pair((2, 3))
    assert error_of(lambda: vmap(make(ember).apply)(ex)) == \
        error_of(lambda: torch.func.vmap(make(torch).apply)(tx))


def _func_grad(loss_fn):
    """A stand-in for ember.func.grad (argnums=0 over a dict of tensors): detached copies
    that require grad, ``autograd.grad`` with create_graph=True."""
    def grads(params, *args):
        params = {k: v.detach().requires_grad_() for k, v in params.items()}
        loss = loss_fn(params, *args)
        return dict(zip(params, ember.autograd.grad(loss, list(params.values()),
                                                    create_graph=True)))
    return grads


def test_per_sample_gradients_of_the_tutorial_cnn():
    """torch's per-sample-gradients recipe: conv, relu, conv, relu, max_pool, linear,
    log_softmax, nll_loss; vmap(grad(loss), in_dims=(None, 0, 0))."""
    shapes = {"c1.w": (4, 1, 3, 3), "c1.b": (4,), "c2.w": (6, 4, 3, 3), "c2.b": (6,),
              "fc.w": (3, 6 * 3 * 3), "fc.b": (3,)}
    arrays = {k: np.random.default_rng(i).standard_normal(s).astype(np.float32) * 0.3
              for i, (k, s) in enumerate(shapes.items())}
    (ex, tx) = _pair((5, 1, 10, 10), 11)
    target = np.array([0, 2, 1, 1, 0])

    def loss(lib, p, x, t):
        F = lib.nn.functional
        h = F.relu(F.conv2d(x.unsqueeze(0), p["c1.w"], p["c1.b"]))
        h = F.max_pool2d(F.relu(F.conv2d(h, p["c2.w"], p["c2.b"])), 2)
        out = F.log_softmax(F.linear(h.flatten(1), p["fc.w"], p["fc.b"]), dim=1)
        return F.nll_loss(out, t.unsqueeze(0))
    eparams = {k: ember.tensor(a) for k, a in arrays.items()}
    tparams = {k: torch.tensor(a) for k, a in arrays.items()}
    got = vmap(_func_grad(lambda p, x, t: loss(ember, p, x, t)), in_dims=(None, 0, 0))(
        eparams, ex, ember.tensor(target))
    want = torch.func.vmap(torch.func.grad(lambda p, x, t: loss(torch, p, x, t)),
                           in_dims=(None, 0, 0))(tparams, tx, torch.tensor(target))
    for k in shapes:
        _close(got[k], want[k], 1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_through_vmap(dtype):
    (ex, tx), (ew, tw) = _pair((4, 3, 5), 12, dtype), _pair((5, 2), 13, dtype)
    for x, w in ((ex, ew), (tx, tw)):
        x.requires_grad_()
        w.requires_grad_()
    ember_out = vmap(lambda a: (a @ ew).tanh().softmax(-1).sum(0), in_dims=1)(ex)
    torch_out = torch.func.vmap(lambda a: (a @ tw).tanh().softmax(-1).sum(0), in_dims=1)(tx)
    _close(ember_out, torch_out)
    (ember_out * ember_out).sum().backward()
    (torch_out * torch_out).sum().backward()
    _close(ex.grad, tx.grad)
    _close(ew.grad, tw.grad)


def test_per_sample_jacobians_by_a_vmap_over_vjps():
    """jacrev written with vmap over autograd.grad's vector-Jacobian products, inside a vmap
    over samples: nested levels on the outputs and on the vectors."""
    (ex, tx) = _pair((3, 4), 14)

    def jacobian(x):
        x = x.detach().requires_grad_()
        y = x.sin() * x.sum()
        basis = ember.eye(4)
        return vmap(lambda v: ember.autograd.grad(y, x, v, retain_graph=True)[0])(basis)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # this vjp runs vector by vector
        got = vmap(jacobian)(ex)
    want = torch.func.vmap(torch.func.jacrev(lambda x: x.sin() * x.sum()))(tx)
    _close(got, want)
