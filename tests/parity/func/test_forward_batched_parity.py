"""Forward-mode transforms composed with vmap, against torch.func: values and shapes."""
import warnings

import numpy as np
import pytest
import torch
import torch.func

import ember
import ember.func

RNG = np.random.default_rng(5)
W1 = RNG.standard_normal((5, 4))
X, XB, T = RNG.standard_normal(4), RNG.standard_normal((3, 4)), RNG.standard_normal(4)


def _cases(lib, F):
    w = lib.tensor(W1)

    def f(x):
        return lib.tanh(w @ x) * x.sum()

    def scalar(x):
        return f(x).sum()
    x, xb, t = lib.tensor(X), lib.tensor(XB), lib.tensor(T)
    return {
        "jacfwd": lambda: F.jacfwd(f)(x),
        "jacfwd_argnums": lambda: F.jacfwd(lambda a, b: a * b.sin(), argnums=(0, 1))(x, x * 2),
        "jacfwd(jacrev)": lambda: F.jacfwd(F.jacrev(f))(x),
        "jacfwd(jacfwd)": lambda: F.jacfwd(F.jacfwd(f))(x),
        "jacrev(jacfwd)": lambda: F.jacrev(F.jacfwd(f))(x),
        "hessian": lambda: F.hessian(scalar)(x),
        "vmap(jvp)": lambda: F.vmap(lambda xi: F.jvp(f, (xi,), (t,)))(xb),
        "vmap(jvp)_batched_tangents": lambda: F.vmap(
            lambda xi, ti: F.jvp(f, (xi,), (ti,))[1])(xb, xb * 2),
        "vmap(jacfwd)": lambda: F.vmap(F.jacfwd(f))(xb),
        "vmap(hessian)": lambda: F.vmap(F.hessian(scalar))(xb),
        "jvp(vmap)": lambda: F.jvp(F.vmap(f), (xb,), (xb * 3,))[1],
        "vmap(jvp(grad))": lambda: F.vmap(
            lambda xi: F.jvp(F.grad(scalar), (xi,), (t,))[1])(xb),
        "jacfwd(vmap)": lambda: F.jacfwd(F.vmap(f))(xb),
        "vmap(vmap(jvp))": lambda: F.vmap(F.vmap(lambda xi: F.jvp(f, (xi,), (t,))[1]))(
            xb.reshape(3, 1, 4).expand(3, 2, 4)),
        "vmap(jacrev)": lambda: F.vmap(F.jacrev(f))(xb),
        "vmap(jacrev(jacrev))": lambda: F.vmap(F.jacrev(F.jacrev(f)))(xb),
        "vmap(jacfwd(jacrev))": lambda: F.vmap(F.jacfwd(F.jacrev(f)))(xb),
        "vmap(vmap(jacrev))": lambda: F.vmap(F.vmap(F.jacrev(f)))(
            xb.reshape(3, 1, 4).expand(3, 2, 4)),
        "vmap(jacrev_unbatched_arg)": lambda: F.vmap(
            F.jacrev(lambda a, b: lib.tanh(b @ a) * (b * 2).sum(), argnums=1),
            in_dims=(0, None))(xb, w),
        "vmap(jvp)_unbatched_primal": lambda: F.vmap(
            lambda ti, yi: F.jvp(lambda a: (a * yi).sin(), (x,), (ti,))[1])(xb, xb.cos()),
        "vmap(jacfwd)_unbatched_primal": lambda: F.vmap(
            lambda yi: F.jacfwd(lambda a: (a * yi).exp())(x))(xb),
        "jacfwd_in_place": lambda: F.jacfwd(lambda v: v.clone().mul_(2).sin())(x),
        "jacfwd_setitem": lambda: F.jacfwd(
            lambda v: (lambda y: (y.__setitem__(0, v[1] * 5), y)[1])(v.clone()))(x),
    }


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [leaf for item in out for leaf in _flat(item)]
    return [out]


@pytest.mark.parametrize("name", sorted(_cases(torch, torch.func)))
def test_matches_torch(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = _flat(_cases(ember, ember.func)[name]())
        want = _flat(_cases(torch, torch.func)[name]())
    assert len(got) == len(want)
    for e, t in zip(got, want):
        assert tuple(e.shape) == tuple(t.shape)
        assert e.requires_grad == t.requires_grad
        np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)


def test_gradcheck_batched_forward_grad_agrees():
    x = RNG.standard_normal((3, 4))
    results = []
    for lib in (ember, torch):
        a = lib.tensor(x, requires_grad=True)
        results.append(lib.autograd.gradcheck(lambda v: (v.sin() * v.sum(0)).softmax(-1), (a,),
                                              check_forward_ad=True,
                                              check_batched_forward_grad=True))
    assert results == [True, True]
