"""vmap's edges against torch.func: empty batches, what transforms under vmap return,
0-dim samples, batched probabilities, linalg per-sample gradients."""
import warnings

import numpy as np
import pytest
import torch
import torch.func

import ember
import ember.func
from tests.parity.compare import error_of

LIBS = {ember: ember.func, torch: torch.func}


def _both(build, *arrays):
    """``build(lib, func)(*tensors)`` for each library, on tensors of the same arrays."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return [build(lib, fn)(*[lib.tensor(a) for a in arrays]) for lib, fn in LIBS.items()]


EMPTY = {
    "sum": lambda lib, fn: fn.vmap(lambda r: r.sin().sum()),
    "tuple": lambda lib, fn: fn.vmap(lambda r: (r.sum(), r * 2)),
    "stack": lambda lib, fn: fn.vmap(lambda r: lib.stack([r, r])),
    "new_zeros": lambda lib, fn: fn.vmap(lambda r: r.new_zeros(2)),
    "sort": lambda lib, fn: fn.vmap(lambda r: r.sort().values),
    "grad": lambda lib, fn: fn.vmap(fn.grad(lambda r: r.sin().sum())),
    "jacrev": lambda lib, fn: fn.vmap(fn.jacrev(lambda r: r.sin())),
    "jacfwd": lambda lib, fn: fn.vmap(fn.jacfwd(lambda r: r.sin())),
}


@pytest.mark.parametrize("name", sorted(EMPTY))
def test_empty_batch(name):
    e, t = _both(EMPTY[name], np.zeros((0, 3)))
    e, t = (e, t) if isinstance(e, tuple) else ((e,), (t,))
    for a, b in zip(e, t):
        assert tuple(a.shape) == tuple(b.shape)
        assert a.requires_grad == b.requires_grad


@pytest.mark.parametrize("transform", ["grad", "jacrev", "jacfwd"])
@pytest.mark.parametrize("requires_grad", [False, True])
def test_requires_grad_of_transforms_under_vmap(transform, requires_grad):
    x = np.random.default_rng(0).standard_normal((2, 3))
    flags = []
    for lib, fn in LIBS.items():
        inner = (lambda r: r.sin().sum()) if transform == "grad" else (lambda r: r.sin())
        out = fn.vmap(getattr(fn, transform)(inner))(lib.tensor(x, requires_grad=requires_grad))
        flags.append(out.requires_grad)
    assert flags[0] == flags[1]


SCALAR_SAMPLES = {
    "sum": lambda r: r[0].sum(),
    "sum_dims": lambda r: r.sum(dim=()),
    "mean_keepdim": lambda r: r[1].mean(0, keepdim=True),
    "prod": lambda r: r[0].prod(),
    "argmax": lambda r: r[0].argmax(),
    "max_dim": lambda r: r[2].max(0),
    "logsumexp": lambda r: r[0].logsumexp(0),
    "cumprod": lambda r: r[0].cumprod(-1),
    "log_softmax": lambda r: r[0].log_softmax(0),
    "norm": lambda r: r[0].norm(),
}


@pytest.mark.parametrize("name", sorted(SCALAR_SAMPLES))
def test_reductions_of_scalar_samples(name):
    x = np.random.default_rng(1).standard_normal((4, 3))
    e, t = _both(lambda lib, fn: fn.vmap(SCALAR_SAMPLES[name]), x)
    e, t = (e, t) if isinstance(e, tuple) else ((e,), (t,))
    for a, b in zip(e, t):
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


@pytest.mark.parametrize("op", ["inv", "det", "solve", "cholesky_solve", "eigh", "pinv",
                                "lstsq"])
def test_linalg_per_sample_gradients(op):
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 3, 3)) + 3 * np.eye(3)
    b = rng.standard_normal((3, 3, 2))

    def build(lib, fn):
        ops = {
            "inv": lambda m, r: lib.linalg.inv(m),
            "det": lambda m, r: lib.linalg.det(m),
            "solve": lambda m, r: lib.linalg.solve(m, r),
            "cholesky_solve": lambda m, r: lib.cholesky_solve(r, lib.linalg.cholesky(m @ m.mT)),
            "eigh": lambda m, r: lib.linalg.eigh(m + m.mT)[0],
            "pinv": lambda m, r: lib.linalg.pinv(m),
            "lstsq": lambda m, r: lib.linalg.lstsq(m, r).solution,
        }
        return fn.vmap(fn.grad(lambda m, r: ops[op](m, r).sin().sum(), argnums=(0, 1)))
    for e, t in zip(*_both(build, a, b)):
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-9, atol=1e-10)


def test_bernoulli_with_batched_probability():
    p = np.concatenate([np.zeros((50, 3)), np.ones((50, 3))])
    for lib, fn in LIBS.items():
        out = fn.vmap(lambda x, q: x.bernoulli_(q), randomness="different")(
            lib.zeros(100, 3, dtype=lib.float64), lib.tensor(p))
        np.testing.assert_array_equal(out.numpy(), p)

    def same(lib, fn):
        return lambda: fn.vmap(lambda x, q: x.bernoulli_(q), randomness="same")(
            lib.zeros(100, 3, dtype=lib.float64), lib.tensor(p))

    def unbatched_self(lib, fn):
        return lambda: fn.vmap(lambda q: lib.zeros(3, dtype=lib.float64).bernoulli_(q),
                               randomness="different")(lib.tensor(p))
    for case in (same, unbatched_self):
        assert error_of(case(ember, ember.func)) == error_of(case(torch, torch.func))


ON_ARRAYS = {
    "svdvals": lambda lib: lib.linalg.svdvals,
    "eigvalsh": lambda lib: lambda a: lib.linalg.eigvalsh(a[:, :3] + a[:, :3].mT),
    "matrix_norm_nuc": lambda lib: lambda a: lib.linalg.matrix_norm(a, "nuc"),
    "matrix_rank": lambda lib: lib.linalg.matrix_rank,
    "real_of_complex": lambda lib: lambda a: lib.complex(a, a * 2).imag,
    "sort": lambda lib: lambda a: a.sort(1, descending=True).values,
    "argsort": lambda lib: lambda a: a.argsort(-1),
    "topk": lambda lib: lambda a: lib.topk(a, 2, dim=0).indices,
}


@pytest.mark.parametrize("name", sorted(ON_ARRAYS))
def test_functions_on_arrays(name):
    x = np.random.default_rng(3).standard_normal((4, 3, 5))
    x[1, 2] = x[1, 1]
    e, t = _both(lambda lib, fn: fn.vmap(ON_ARRAYS[name](lib)), x)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
