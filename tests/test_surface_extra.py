"""Behaviour of ormqr/orgqr (finite differences), linear_cross_entropy's reference path,
linearize and empty_permuted, without PyTorch."""
import array

import pytest

import ember
from ember.autograd import gradcheck


def test_ormqr_and_orgqr_gradcheck():
    gen = ember.Generator().manual_seed(0)
    a, tau = ember.geqrf(ember.randn(4, 3, dtype=ember.float64, generator=gen))
    c = ember.randn(4, 2, dtype=ember.float64, generator=gen)
    a.requires_grad_(), tau.requires_grad_(), c.requires_grad_()
    assert gradcheck(lambda a, t, c: ember.ormqr(a, t, c, transpose=True), (a, tau, c))
    assert gradcheck(lambda a, t: ember.orgqr(a, t), (a, tau))
    q = ember.ormqr(a, tau, ember.eye(4, dtype=ember.float64))
    assert ember.allclose(q.mT @ q, ember.eye(4, dtype=ember.float64))


def test_linear_cross_entropy_is_linear_then_cross_entropy():
    gen = ember.Generator().manual_seed(1)
    x = ember.randn(5, 3, dtype=ember.float64, generator=gen, requires_grad=True)
    w = ember.randn(4, 3, dtype=ember.float64, generator=gen, requires_grad=True)
    t = ember.tensor([0, 3, 1, 2, 3])
    F = ember.nn.functional
    assert gradcheck(lambda x, w: F.linear_cross_entropy(x, w, t, label_smoothing=0.1), (x, w))
    assert ember.allclose(F.linear_cross_entropy(x, w, t), F.cross_entropy(x @ w.T, t))
    with pytest.raises(NotImplementedError, match="chunked path"):
        F.linear_cross_entropy(x, w, t, options=ember.nn.LinearCrossEntropyOptions())


def test_linearize_equals_jvp():
    x = ember.tensor([0.5, -1.0], dtype=ember.float64)
    f = lambda x: (x.exp() * x).sum()  # noqa: E731
    out, jvp_fn = ember.func.linearize(f, x)
    v = ember.tensor([1.0, 2.0], dtype=ember.float64)
    assert ember.allclose(jvp_fn(v), ember.func.jvp(f, (x,), (v,))[1])
    x.add_(1)  # the primals were saved when linearize ran
    assert ember.allclose(jvp_fn(v), ember.func.jvp(f, (x - 1,), (v,))[1])


def test_empty_permuted_and_frombuffer():
    assert ember.empty_permuted((2, 3, 4), (2, 0, 1)).stride() == (3, 1, 6)
    buf = array.array("d", [1.0, 2.0])
    t = ember.frombuffer(buf, dtype=ember.float64)
    t.mul_(3)
    assert list(buf) == [3.0, 6.0]
    with pytest.raises(ValueError, match="buffer protocol"):
        ember.frombuffer(3, dtype=ember.float32)
