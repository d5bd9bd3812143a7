"""Forward-mode tangents under vmap: jvp inside vmap runs forward AD on the batch, jacfwd
is one vmapped jvp over the identity, and forward-over-reverse composes with both."""
import warnings

import numpy as np
import pytest

import ember
import ember.autograd.forward_ad as fwAD
from ember._functorch import batch_rules, eager_transforms
from ember.func import grad, hessian, jacfwd, jacrev, jvp, vmap

RNG = np.random.default_rng(11)
W = ember.tensor(RNG.standard_normal((5, 4)))


def t64(a):
    return ember.tensor(np.asarray(a, dtype=np.float64))


def f(x):
    return ember.tanh(W @ x) * x.sum()


def numeric_jacobian(fn, x, eps=1e-6):
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = eps
        cols.append((fn(t64(x + e)).numpy() - fn(t64(x - e)).numpy()).reshape(-1) / (2 * eps))
    return np.stack(cols, axis=-1)


def _close(a, b, tol=1e-8):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.fixture
def no_double_vjp(monkeypatch):
    """Fail if a jvp takes the reverse-mode (double-vjp) path."""
    def refuse(*args, **kwargs):
        raise AssertionError("jvp took the double-vjp path")
    monkeypatch.setattr(eager_transforms, "_jvp_by_double_vjp", refuse)


def test_jvp_inside_vmap_uses_forward_ad(no_double_vjp):
    x = t64(RNG.standard_normal((3, 4)))
    t = t64(RNG.standard_normal((3, 4)))
    out, products = vmap(lambda xi, ti: jvp(f, (xi,), (ti,)))(x, t)
    for i in range(3):
        _close(products[i].numpy(), numeric_jacobian(f, x[i].numpy()) @ t[i].numpy(), 1e-7)
        _close(out[i].numpy(), f(x[i]).numpy())
    shared = vmap(lambda xi: jvp(f, (xi,), (t[0],))[1])(x)  # an unbatched tangent
    _close(shared[1].numpy(), numeric_jacobian(f, x[1].numpy()) @ t[0].numpy(), 1e-7)


def test_jacfwd_is_one_vmapped_jvp(no_double_vjp):
    x = RNG.standard_normal(4)
    calls = []

    def counted(v):
        calls.append(1)
        return f(v)
    _close(jacfwd(counted)(t64(x)).numpy(), numeric_jacobian(f, x), 1e-7)
    assert len(calls) == 1
    _close(vmap(jacfwd(f))(t64(np.stack([x, 2 * x]))).numpy()[1],
           numeric_jacobian(f, 2 * x), 1e-7)


def test_forward_over_reverse_compositions():
    x = RNG.standard_normal(4)
    h = hessian(lambda v: f(v).sum())(t64(x))
    _close(h.numpy(), jacrev(jacrev(lambda v: f(v).sum()))(t64(x)).numpy(), 1e-10)
    assert not h.requires_grad
    full = jacfwd(jacrev(f))(t64(x))  # a vector function: its vjps are vmapped inside
    _close(full.numpy(), jacrev(jacrev(f))(t64(x)).numpy(), 1e-10)
    xs = t64(np.stack([x, -x, 0.5 * x]))
    per_sample = vmap(hessian(lambda v: f(v).sum()))(xs)
    _close(per_sample[2].numpy(), hessian(lambda v: f(v).sum())(xs[2]).numpy(), 1e-10)
    t = t64(RNG.standard_normal(4))
    hvp = vmap(lambda v: jvp(grad(lambda u: f(u).sum()), (v,), (t,))[1])(xs)
    _close(hvp[0].numpy(), (h @ t).numpy(), 1e-10)


def test_nested_jvp_keeps_the_double_vjp_path():
    x = RNG.standard_normal(4)
    _close(jacfwd(jacfwd(f))(t64(x)).numpy(), jacrev(jacrev(f))(t64(x)).numpy(), 1e-10)


def test_batched_tensor_tangent_lives_on_its_physical_tensor():
    x = t64(RNG.standard_normal((3, 2)))
    t = t64(RNG.standard_normal((3, 2)))

    def inside(xi, ti):
        dual = fwAD.make_dual(xi, ti)
        y = (dual * dual).sum()
        return fwAD.unpack_dual(y).tangent
    with fwAD.dual_level():
        got = vmap(inside)(x, t)
    _close(got.numpy(), (2 * x * t).sum(1).numpy())


def test_hessian_runs_no_op_per_sample():
    x = t64(RNG.standard_normal(4))
    batch_rules._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        hessian(lambda v: (ember.tanh(W @ v) ** 2).sum())(x)
        jacfwd(jacrev(f))(x)
    assert not [str(w.message) for w in caught if "batching rule" in str(w.message)]


def test_jvp_of_an_unbatched_primal_meeting_the_batch():
    # the primal is plain, its tangent batched at the vmap that also batches y
    x = RNG.standard_normal(4)
    t, y = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
    got = vmap(lambda ti, yi: jvp(lambda a: (a * yi).sin(), (t64(x),), (ti,))[1])(t64(t),
                                                                                t64(y))
    _close(got.numpy(), np.cos(x * y) * y * t, 1e-12)
    cols = vmap(lambda yi: jacfwd(lambda a: (a * yi).exp())(t64(x)))(t64(y))
    _close(cols.numpy()[1], np.diag(np.exp(x * y[1]) * y[1]), 1e-12)


def test_jacrev_under_vmap_runs_its_vjps_at_once():
    xs = t64(RNG.standard_normal((3, 4)))
    batch_rules._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        per_sample = vmap(jacrev(f))(xs)
        second = vmap(jacrev(jacrev(f)))(xs)
    assert not [str(w.message) for w in caught if "batching rule" in str(w.message)]
    for i in range(3):
        _close(per_sample[i].numpy(), numeric_jacobian(f, xs[i].numpy()), 1e-7)
        _close(second[i].numpy(), jacrev(jacrev(f))(xs[i]).numpy(), 1e-10)


def test_jacrev_under_vmap_of_an_unbatched_input_loops_correctly():
    # w reaches the batch through an expansion and through w.sum() (a plain graph):
    # one vjp per vector, both paths summed
    xs = t64(RNG.standard_normal((3, 4)))

    def g(x, w):
        return ember.tanh(w @ x) * (w * 2).sum()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = vmap(jacrev(g, argnums=1), in_dims=(0, None))(xs, W)
    for i in range(3):
        _close(got[i].numpy(), jacrev(g, argnums=1)(xs[i], W).numpy(), 1e-10)


def test_in_place_ops_under_jacfwd_write_every_column():
    # the primal's tangent is batched (the identity's columns): an in-place op writes the
    # whole batch of tangents, not the array of its first sample
    x = RNG.standard_normal(3)

    def scaled(v):
        return v.clone().mul_(2).sin()

    def overwritten(v):
        y = v.clone()
        y[0] = v[1] * 5
        return y
    _close(jacfwd(scaled)(t64(x)).numpy(), numeric_jacobian(scaled, x), 1e-7)
    _close(jacfwd(overwritten)(t64(x)).numpy(), numeric_jacobian(overwritten, x), 1e-7)
    added = jacfwd(lambda v: ember.ones(3, dtype=ember.float64).add_(v))(t64(x))
    _close(added.numpy(), np.eye(3))
    in_vmap = vmap(lambda v: jvp(lambda a: a.clone().mul_(a), (v,), (t64(np.ones(3)),))[1])(
        t64(np.stack([x, 2 * x])))
    _close(in_vmap.numpy(), 2 * np.stack([x, 2 * x]))
