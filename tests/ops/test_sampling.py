"""normal (its four overloads), poisson, binomial, exponential_/geometric_/cauchy_/log_normal_,
logspace and the window functions with ember and the standard library only: moments of
many draws with fixed seeds, reproducibility, generators, dtypes and shapes, gradients,
values of the sequences from their formulas, meta tensors and error paths in PyTorch's
words (texts taken from PyTorch 2.x)."""
import math

import numpy as np
import pytest

import ember

N = 20000


def moments(t):
    x = t.detach().numpy().astype(np.float64)
    return x.mean(), x.std()


def test_normal_overloads():
    ember.manual_seed(0)
    for out in (ember.normal(ember.full((N,), 2.0), ember.full((N,), 3.0)),
                ember.normal(ember.full((N,), 2.0), 3.0),
                ember.normal(2.0, ember.full((N,), 3.0)),
                ember.normal(2.0, 3.0, (N,))):
        mean, std = moments(out)
        assert abs(mean - 2.0) < 0.1 and abs(std - 3.0) < 0.1
        assert out.dtype is ember.float32 and out.shape == (N,)
    assert ember.normal(ember.zeros(2, 1), ember.ones(3)).shape == (2, 3)
    assert ember.normal(ember.zeros(2, dtype=ember.float64), ember.ones(2)).dtype is ember.float64
    assert ember.normal(ember.zeros(2), ember.ones(2, dtype=ember.float64)).dtype is ember.float32
    x = ember.normal(0.0, 1.0, (2, 3), dtype=ember.float64, requires_grad=True)
    assert x.dtype is ember.float64 and x.requires_grad and x.is_leaf
    assert ember.equal(ember.normal(ember.tensor([1.0, 2.0]), 0.0), ember.tensor([1.0, 2.0]))


def test_normal_gradients_are_zero():
    m, s = ember.zeros(3, requires_grad=True), ember.ones(3, requires_grad=True)
    out = ember.normal(m, s)
    assert out.grad_fn.name() == "NormalBackward3"
    gm, gs = ember.autograd.grad(out.sum(), (m, s))
    assert gm.tolist() == [0.0] * 3 and gs.tolist() == [0.0] * 3
    assert ember.normal(m, 1.0).grad_fn.name() == "NormalBackward1"
    assert ember.normal(0.0, s).grad_fn.name() == "NormalBackward2"


def test_reproducibility_and_generators():
    def draws(gen=None):
        return [ember.normal(0.0, 1.0, (4,), generator=gen),
                ember.normal(ember.zeros(4), 1.0, generator=gen),
                ember.poisson(ember.full((4,), 3.0), gen),
                ember.binomial(ember.full((4,), 9.0), ember.full((4,), 0.4), gen),
                ember.empty(4).exponential_(generator=gen),
                ember.empty(4).geometric_(0.3, generator=gen),
                ember.empty(4).cauchy_(generator=gen), ember.empty(4).log_normal_(generator=gen)]
    ember.manual_seed(3)
    first = draws()
    ember.manual_seed(3)
    for a, b in zip(first, draws()):
        assert ember.equal(a, b)
    g = ember.Generator().manual_seed(11)
    first = draws(g)
    g.manual_seed(11)
    for a, b in zip(first, draws(g)):
        assert ember.equal(a, b)


def test_poisson_and_binomial():
    ember.manual_seed(1)
    x = ember.poisson(ember.full((N,), 4.0, dtype=ember.float64))
    mean, std = moments(x)
    assert x.dtype is ember.float64 and abs(mean - 4.0) < 0.1 and abs(std ** 2 - 4.0) < 0.25
    assert ember.poisson(ember.zeros(3)).tolist() == [0.0] * 3
    r = ember.tensor([1.0, 5.0], requires_grad=True)
    assert ember.autograd.grad(ember.poisson(r).sum(), r)[0].tolist() == [0.0, 0.0]
    b = ember.binomial(ember.full((N,), 10.0), ember.full((N,), 0.3))
    mean, std = moments(b)
    assert abs(mean - 3.0) < 0.06 and abs(std ** 2 - 2.1) < 0.15
    assert ember.binomial(ember.tensor([10.0, 3.0]), ember.tensor([1.5, -0.2])).tolist() == \
        [10.0, 0.0]
    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        ember.binomial(ember.tensor([4.0], requires_grad=True), ember.tensor([0.5])).sum() \
            .backward()


def test_fills():
    ember.manual_seed(2)
    e = ember.empty(N).exponential_(2.0)
    assert abs(moments(e)[0] - 0.5) < 0.02 and bool((e > 0).all())
    g = ember.empty(N, dtype=ember.int64).geometric_(0.25)
    assert g.dtype is ember.int64 and g.min().item() >= 1 and abs(moments(g)[0] - 4.0) < 0.15
    c = ember.empty(N, dtype=ember.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.1
    ln = ember.empty(N).log_normal_(0.5, 0.25).log()
    assert abs(moments(ln)[0] - 0.5) < 0.01 and abs(moments(ln)[1] - 0.25) < 0.01
    z = ember.zeros(3, requires_grad=True) * 1
    out = z.exponential_()
    assert out is z and z.grad_fn.name() == "ExponentialBackward0"
    m = ember.empty(3, device="meta")
    assert m.exponential_().is_meta and m.cauchy_().is_meta


def test_sampler_errors():
    cases = [
        (lambda: ember.normal(ember.zeros(2), -1.0), RuntimeError,
         "normal expects std >= 0.0, but found std -1"),
        (lambda: ember.normal(ember.zeros(2), -ember.ones(2)), RuntimeError,
         "normal expects all elements of std >= 0.0"),
        (lambda: ember.normal(ember.tensor([1, 2]), 1.0), NotImplementedError,
         "\"normal_kernel_cpu\" not implemented for 'Long'"),
        (lambda: ember.normal(0.0, 1.0), TypeError, "normal() received an invalid combination"),
        (lambda: ember.poisson(ember.tensor([-1.0])), RuntimeError,
         "invalid Poisson rate, expected rate to be non-negative"),
        (lambda: ember.binomial(ember.tensor([10]), ember.tensor([0.5])), ValueError,
         "binomial only supports floating-point dtypes for count, got: Long"),
        (lambda: ember.empty(3).exponential_(0.0), RuntimeError,
         "exponential_ expects lambda > 0.0, but found lambda=0"),
        (lambda: ember.empty(3).geometric_(1.5), RuntimeError,
         "geometric_ expects p to be in (0, 1), but got p=1.5"),
        (lambda: ember.empty(3).cauchy_(0.0, -1.0), RuntimeError,
         "cauchy_ expects sigma > 0.0, but found sigma=-1"),
        (lambda: ember.empty(3, dtype=ember.int64).log_normal_(), NotImplementedError,
         "\"log_normal_cpu\" not implemented for 'Long'"),
    ]
    for fn, kind, text in cases:
        with pytest.raises(kind) as info:
            fn()
        assert str(info.value).startswith(text)
    assert ember.empty(0, dtype=ember.int64).exponential_().shape == (0,)


# ---- logspace and windows ---------------------------------------------------------------------
def test_logspace():
    assert ember.logspace(0, 2, 3).tolist() == [1.0, 10.0, 100.0]
    assert ember.logspace(0, 2, 3, base=2).tolist() == [1.0, 2.0, 4.0]
    assert ember.logspace(0, 1, 4, dtype=ember.int64).tolist() == [1, 2, 4, 10]
    assert ember.logspace(3, 5, 1).tolist() == [1000.0] and ember.logspace(3, 5, 0).shape == (0,)
    out = ember.empty(3, dtype=ember.float64)
    assert ember.logspace(0, 2, 3, out=out) is out and out.tolist() == [1.0, 10.0, 100.0]
    x = ember.logspace(0, 1, 3, requires_grad=True)
    assert x.requires_grad and x.is_leaf
    assert ember.logspace(0, 1, 3, device="meta").is_meta
    with pytest.raises(RuntimeError, match="number of steps must be non-negative"):
        ember.logspace(0, 1, -1)
    with pytest.raises(NotImplementedError, match="\"logspace_cpu\" not implemented for 'Bool'"):
        ember.logspace(0, 1, 3, dtype=ember.bool)


def _formula(name, n, periodic, **kw):
    period = n if periodic else n - 1
    k = range(n)
    if name == "hann":
        return [0.5 - 0.5 * math.cos(2 * math.pi * i / period) for i in k]
    if name == "hamming":
        a, b = kw.get("alpha", 0.54), kw.get("beta", 0.46)
        return [a - b * math.cos(2 * math.pi * i / period) for i in k]
    if name == "blackman":
        return [0.42 - 0.5 * math.cos(2 * math.pi * i / period)
                + 0.08 * math.cos(4 * math.pi * i / period) for i in k]
    if name == "bartlett":
        return [1 - abs(2 * i / period - 1) for i in k]
    beta = kw.get("beta", 12.0)
    i0 = lambda v: sum((v / 2) ** (2 * j) / math.factorial(j) ** 2 for j in range(60))  # noqa: E731
    return [i0(beta * math.sqrt(max(0.0, 1 - (2 * i / period - 1) ** 2))) / i0(beta) for i in k]


@pytest.mark.parametrize("name", ["hann", "hamming", "blackman", "bartlett", "kaiser"])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_from_formulas(name, periodic):
    fn = getattr(ember, name + "_window")
    got = fn(7, periodic, dtype=ember.float64).tolist()
    assert np.allclose(got, _formula(name, 7, periodic), rtol=1e-12, atol=1e-15)
    assert fn(0).shape == (0,) and fn(1).tolist() == [1.0]
    assert fn(4).dtype is ember.float32
    w = fn(4, requires_grad=True)
    assert w.requires_grad and w.is_leaf
    assert fn(4, device="meta").is_meta
    with pytest.raises(RuntimeError, match=f"{name}_window requires non-negative window_length, "
                                           f"got window_length=-1"):
        fn(-1)
    with pytest.raises(RuntimeError, match=f"{name}_window expects floating point dtypes"):
        fn(4, dtype=ember.int64)
    with pytest.raises(TypeError, match="argument 'window_length' \\(position 1\\) must be int"):
        fn(4.0)


def test_window_parameters():
    got = ember.hamming_window(5, True, 0.5, 0.5, dtype=ember.float64).tolist()
    assert np.allclose(got, _formula("hamming", 5, True, alpha=0.5, beta=0.5))
    got = ember.kaiser_window(5, False, 3.0, dtype=ember.float64).tolist()
    assert np.allclose(got, _formula("kaiser", 5, False, beta=3.0), rtol=1e-12)
