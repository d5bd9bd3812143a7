"""vmap at its edges: empty batches, what transforms under vmap return, reductions of
0-dim samples, ops that read their inputs' arrays, batched probabilities."""
import warnings

import numpy as np
import pytest

import ember
from ember._functorch import batch_rules
from ember.func import grad, jacfwd, jacrev, vmap

RNG = np.random.default_rng(7)


def t64(a):
    return ember.tensor(np.asarray(a, dtype=np.float64))


def _no_fallback(fn, *args):
    """``vmap(fn)(*args)``, failing if any op ran sample by sample."""
    batch_rules._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = vmap(fn)(*args)
    fallbacks = [str(w.message) for w in caught if "batching rule" in str(w.message)]
    assert not fallbacks, fallbacks
    return out


def test_empty_batch_gives_empty_results():
    x = ember.empty(0, 3)
    assert vmap(lambda r: r.sin().sum())(x).shape == (0,)
    assert vmap(lambda r: r * 2)(x).shape == (0, 3)
    total, doubled = vmap(lambda r: (r.sum(), r * 2))(x)
    assert total.shape == (0,) and doubled.shape == (0, 3)
    assert vmap(lambda r: ember.stack([r, r]))(x).shape == (0, 2, 3)
    assert vmap(lambda r: r.new_zeros(2))(x).shape == (0, 2)
    assert vmap(lambda r: r.sort().values)(x).shape == (0, 3)  # a per-sample function
    assert vmap(lambda r: r.topk(2).values)(x).shape == (0, 2)  # an op without a rule


def test_empty_batch_under_transforms():
    x = ember.empty(0, 3, dtype=ember.float64)
    g = vmap(grad(lambda r: r.sin().sum()))(x)
    assert g.shape == (0, 3) and not g.requires_grad
    assert vmap(jacrev(lambda r: r.sin()))(x).shape == (0, 3, 3)
    assert vmap(jacfwd(lambda r: r.sin()))(x).shape == (0, 3, 3)


def test_empty_batch_in_place_and_chunks():
    x = ember.zeros(0, 4)
    assert vmap(lambda r: r.add_(1))(x).shape == (0, 4)
    assert vmap(lambda r: r * 3, chunk_size=2)(x).shape == (0, 4)


def test_transforms_under_vmap_return_no_graph():
    x = t64(RNG.standard_normal((2, 3)))
    assert not vmap(jacrev(ember.sin))(x).requires_grad
    assert not vmap(grad(lambda r: r.sin().sum()))(x).requires_grad
    assert not vmap(jacfwd(ember.sin))(x).requires_grad
    # inputs requiring grad: the results stay attached to them, as in torch
    xr = x.clone().requires_grad_()
    assert vmap(jacrev(ember.sin))(xr).requires_grad
    assert vmap(grad(lambda r: r.sin().sum()))(xr).requires_grad


@pytest.mark.parametrize("name,fn,expected", [
    ("sum", lambda r: r[0].sum(), lambda x: x[:, 0]),
    ("sum_dim_empty", lambda r: r.sum(dim=()), lambda x: x.sum(1)),
    ("mean", lambda r: r[1].mean(), lambda x: x[:, 1]),
    ("prod_keepdim", lambda r: r[0].prod(0, keepdim=True), lambda x: x[:, 0]),
    ("amax", lambda r: r[2].amax(), lambda x: x[:, 2]),
    ("argmax", lambda r: r[0].argmax(), lambda x: np.zeros(len(x))),
    ("max_dim", lambda r: r[0].max(0).values, lambda x: x[:, 0]),
    ("logsumexp", lambda r: r[0].logsumexp(0), lambda x: x[:, 0]),
    ("cumsum", lambda r: r[0].cumsum(0), lambda x: x[:, 0]),
    ("softmax", lambda r: r[0].softmax(0), lambda x: np.ones(len(x))),
    ("norm", lambda r: r[0].norm(), lambda x: np.abs(x[:, 0])),
])
def test_reductions_of_scalar_samples_have_rules(name, fn, expected):
    x = RNG.standard_normal((4, 3))
    out = _no_fallback(fn, t64(x))
    assert out.shape == (4,)
    np.testing.assert_allclose(out.numpy(), expected(x), rtol=1e-12)


def test_forward_mode_hessian_runs_no_op_per_sample():
    import ember.autograd.functional as AF
    x = t64(RNG.standard_normal(3))

    def f(v):
        return (v.sin() * v).sum() + (v ** 2).prod()
    batch_rules._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        h = AF.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")
    assert not [w for w in caught if "batching rule" in str(w.message)]
    np.testing.assert_allclose(h.detach().numpy(), AF.hessian(f, x).numpy(), rtol=1e-10)


def _per_sample_grads(f, *args):
    batched = vmap(grad(f, argnums=tuple(range(len(args)))))(*args)
    looped = [grad(f, argnums=tuple(range(len(args))))(*sample) for sample in zip(*args)]
    return batched, [ember.stack([g[k] for g in looped]) for k in range(len(args))]


@pytest.mark.parametrize("op", ["inv", "det", "solve", "solve_vector", "cholesky_solve", "svd",
                                "eigh", "pinv", "slogdet", "lstsq"])
def test_linalg_per_sample_gradients_match_a_loop(op):
    # ops that keep their outputs for backward must keep the physical batch's
    a = t64(RNG.standard_normal((3, 3, 3)) + 3 * np.eye(3))
    b = t64(RNG.standard_normal((3, 3, 2)))
    ops = {
        "inv": lambda m, r: ember.linalg.inv(m),
        "det": lambda m, r: ember.linalg.det(m),
        "solve": lambda m, r: ember.linalg.solve(m, r),
        "solve_vector": lambda m, r: ember.linalg.solve(m, r[:, 0]),
        "cholesky_solve": lambda m, r: ember.cholesky_solve(r, ember.linalg.cholesky(m @ m.mT)),
        "svd": lambda m, r: ember.linalg.svd(m)[1],
        "eigh": lambda m, r: ember.linalg.eigh(m + m.mT)[0],
        "pinv": lambda m, r: ember.linalg.pinv(m),
        "slogdet": lambda m, r: ember.linalg.slogdet(m)[1],
        "lstsq": lambda m, r: ember.linalg.lstsq(m, r).solution,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        batched, looped = _per_sample_grads(lambda m, r: ops[op](m, r).sin().sum(), a, b)
    for got, want in zip(batched, looped):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)


def test_solve_has_a_rule():
    a = t64(RNG.standard_normal((4, 3, 3)) + 3 * np.eye(3))
    b = t64(RNG.standard_normal((4, 3)))
    out = _no_fallback(lambda m, r: ember.linalg.solve(m, r), a, b)
    np.testing.assert_allclose(np.einsum("bij,bj->bi", a.numpy(), out.numpy()), b.numpy(),
                               atol=1e-12)
    shared = _no_fallback(lambda r: ember.linalg.solve(a[0], r), b)  # one matrix, batched rhs
    np.testing.assert_allclose(shared.numpy(), np.linalg.solve(a[0].numpy(), b.numpy().T).T,
                               atol=1e-12)


def test_bernoulli_with_a_batched_probability_draws_per_sample():
    p = ember.cat([ember.zeros(200, 3), ember.ones(200, 3)])
    out = vmap(lambda x, q: x.bernoulli_(q), randomness="different")(ember.zeros(400, 3), p)
    assert out[:200].sum().item() == 0 and out[200:].sum().item() == 600
    with pytest.raises(RuntimeError, match="same randomness with a batched tensor input"):
        vmap(lambda x, q: x.bernoulli_(q), randomness="same")(ember.zeros(400, 3), p)
    with pytest.raises(RuntimeError, match="inplace bernoulli"):
        vmap(lambda q: ember.zeros(3).bernoulli_(q), randomness="different")(p)


@pytest.mark.parametrize("name", ["svdvals", "eigvalsh", "matrix_norm_nuc", "matrix_rank",
                                  "svd_no_uv", "complex", "real", "imag", "view_as_real"])
def test_functions_computed_on_arrays_see_every_sample(name):
    # these compute on their inputs' arrays outside a Primitive when no gradient is wanted
    x = t64(RNG.standard_normal((4, 3, 5)))
    x[1, 2] = x[1, 1]  # a rank-deficient sample
    z = ember.complex(x, 2 * x)
    fns = {
        "svdvals": (x, ember.linalg.svdvals),
        "eigvalsh": (x, lambda a: ember.linalg.eigvalsh(a[:, :3] + a[:, :3].mT)),
        "matrix_norm_nuc": (x, lambda a: ember.linalg.matrix_norm(a, "nuc")),
        "matrix_rank": (x, lambda a: ember.linalg.matrix_rank(a)),
        "svd_no_uv": (x, lambda a: ember.svd(a, compute_uv=False).S),
        "complex": (x, lambda a: ember.view_as_real(ember.complex(a, a * 2))),
        "real": (z, lambda a: a.real),
        "imag": (z, lambda a: a.imag),
        "view_as_real": (z, ember.view_as_real),
    }
    inputs, fn = fns[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        got = vmap(fn)(inputs)
    want = ember.stack([fn(sample) for sample in inputs])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name,fn", [
    ("sort", lambda a: a.sort().values),
    ("sort_dim0_descending", lambda a: a.sort(0, descending=True).values),
    ("sort_indices_kw", lambda a: a.sort(dim=-2).indices),
    ("argsort", lambda a: a.argsort(1, descending=True)),
    ("topk", lambda a: a.topk(2).values),
    ("topk_dim_smallest", lambda a: ember.topk(a, 2, dim=0, largest=False).indices),
])
def test_sort_and_topk_have_rules(name, fn):
    x = t64(RNG.standard_normal((4, 3, 5)))
    out = _no_fallback(fn, x)
    np.testing.assert_array_equal(out.numpy(), ember.stack([fn(s) for s in x]).numpy())


def test_sort_rule_gradients_and_errors():
    x = t64(RNG.standard_normal((4, 3, 5)))

    def f(a):
        return (a.sort(1).values * ember.arange(5.0, dtype=ember.float64)).sum() + \
            a.topk(2).values.sin().sum()
    batched = vmap(grad(f))(x)
    np.testing.assert_allclose(batched.numpy(), ember.stack([grad(f)(s) for s in x]).numpy(),
                               rtol=1e-12)
    with pytest.raises(IndexError, match="Dimension out of range"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            vmap(lambda a: a.sort(5))(x)
