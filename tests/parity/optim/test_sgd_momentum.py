"""SGD with momentum vs PyTorch over several steps: parameters of several shapes and dtypes,
contiguous and transposed (non-contiguous) gradients, weight decay / Nesterov / dampening.

Both libraries start from the same parameters and get the same gradient arrays (``.grad``
set directly) at every step; parameters and momentum buffers must match PyTorch's
single-tensor SGD (the one it runs on CPU). (A piecewise, threaded momentum step was tried
and dropped: slower than the whole-array update, see benchmarks/RESULTS.md.)"""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember  # noqa: E402
import ember.optim  # noqa: E402

STEPS = 5
SHAPES = {  # name -> (shape, dtype)
    "big": ((700, 600), np.float32),
    "bias": ((600,), np.float32),
    "scalar": ((), np.float32),
    "double": ((37, 29), np.float64),
}


def _data(seed, shapes):
    rng = np.random.default_rng(seed)
    init = {k: rng.standard_normal(s).astype(dt) for k, (s, dt) in shapes.items()}
    grads = [{k: (rng.standard_normal(s) * 0.5).astype(dt) for k, (s, dt) in shapes.items()}
             for _ in range(STEPS)]
    return init, grads


def _run_pair(kw, shapes, seed=0, transpose_grads=()):
    """(ember params, torch params, ember optimizer, torch optimizer) after STEPS steps.
    Names in ``transpose_grads`` get their gradient as a transposed (non-contiguous) view
    of a C-ordered array of the transposed shape."""
    init, grads = _data(seed, shapes)
    ep = {k: ember.nn.Parameter(ember.tensor(v.copy())) for k, v in init.items()}
    tp = {k: torch.nn.Parameter(torch.tensor(v.copy())) for k, v in init.items()}
    eo = ember.optim.SGD(list(ep.values()), **kw)
    to = torch.optim.SGD(list(tp.values()), **kw)
    for g in grads:
        for k in init:
            if k in transpose_grads:
                gt = np.ascontiguousarray(g[k].T)  # same values, stored transposed
                ep[k].grad = ember.tensor(gt).t()
                assert not ep[k].grad.numpy().flags.c_contiguous
                tp[k].grad = torch.tensor(gt).t()
            else:
                ep[k].grad = ember.tensor(g[k].copy())
                tp[k].grad = torch.tensor(g[k].copy())
        eo.step()
        to.step()
    return ep, tp, eo, to


def _compare(ep, tp, eo, to):
    """Parameters and momentum buffers match torch's; returns, per name, how many elements
    of (parameter, buffer) differ in any bit.

    Not bitwise for the parameters: torch's CPU ``p.add_(buf, alpha=-lr)`` is one fused
    multiply-add (one rounding), ember's ``p -= lr * buf`` rounds twice, so ~1 ulp of the
    operands (|p| ~ 1 here) apart per step; hence atol = rtol (the parameters' scale is 1)
    next to rtol for the elements near zero that the update cancels."""
    mismatches = {}
    for k in ep:
        e = ep[k].detach().numpy()
        t = tp[k].detach().numpy()
        assert e.dtype == t.dtype and e.shape == t.shape
        tol = 1e-6 if e.dtype == np.float32 else 1e-12
        np.testing.assert_allclose(e, t, rtol=tol, atol=tol, err_msg=f"param {k}")
        eb = eo.state[ep[k]]["momentum_buffer"].numpy()
        tb = to.state[tp[k]]["momentum_buffer"].numpy()
        assert eb.dtype == tb.dtype and eb.shape == tb.shape
        np.testing.assert_allclose(eb, tb, rtol=tol, atol=tol, err_msg=f"buffer {k}")
        mismatches[k] = (int((e != t).sum()), int((eb != tb).sum()))
    return mismatches


def _numpy_reference(kw, shapes, seed):
    """PyTorch's documented SGD momentum update (dampening 0, no Nesterov, no weight decay)
    in whole-array NumPy: buf = g (step 1), then buf = momentum * buf + g; p -= lr * buf."""
    init, grads = _data(seed, shapes)
    p = {k: v.copy() for k, v in init.items()}
    buf = {}
    for g in grads:
        for k in init:
            if k not in buf:
                buf[k] = g[k].copy()
            else:
                buf[k] *= kw["momentum"]
                buf[k] += g[k]
            p[k] -= kw["lr"] * buf[k]
    return p, buf


def test_momentum_matches_torch(pool2):
    kw = dict(lr=0.05, momentum=0.9, dampening=0, nesterov=False)
    ep, tp, eo, to = _run_pair(kw, SHAPES)
    mismatches = _compare(ep, tp, eo, to)
    # the buffers are bitwise torch's (m * buf + 1 * g rounds the same in both)
    assert all(b == 0 for _, b in mismatches.values()), mismatches


def test_momentum_equals_documented_update(pool2):
    """Bitwise the documented update done on whole NumPy arrays."""
    kw = dict(lr=0.05, momentum=0.9)
    ep, _, eo, _ = _run_pair(kw, SHAPES, seed=4)
    p, buf = _numpy_reference(kw, SHAPES, seed=4)
    for k in SHAPES:
        assert np.array_equal(ep[k].detach().numpy(), p[k]), k
        assert np.array_equal(eo.state[ep[k]]["momentum_buffer"].numpy(), buf[k]), k


def test_noncontiguous_grad_matches_torch(pool2):
    kw = dict(lr=0.05, momentum=0.9)
    shapes = {"big": ((600, 700), np.float32), "double": ((29, 37), np.float64),
              "bias": ((600,), np.float32)}
    ep, tp, eo, to = _run_pair(kw, shapes, seed=1, transpose_grads=("big", "double"))
    mismatches = _compare(ep, tp, eo, to)
    assert all(b == 0 for _, b in mismatches.values()), mismatches
    p, buf = _numpy_reference(kw, shapes, seed=1)
    for k in shapes:
        assert np.array_equal(ep[k].detach().numpy(), p[k]), k
        assert np.array_equal(eo.state[ep[k]]["momentum_buffer"].numpy(), buf[k]), k


@pytest.mark.parametrize("kw", [
    dict(lr=0.05, momentum=0.9, weight_decay=0.01, nesterov=True),
    dict(lr=0.05, momentum=0.9, weight_decay=0.01),
    dict(lr=0.05, momentum=0.9, dampening=0.2),
])
def test_momentum_variants_match_torch(pool2, kw):
    ep, tp, eo, to = _run_pair(kw, SHAPES, seed=2)
    mismatches = _compare(ep, tp, eo, to)
    assert set(mismatches) == set(SHAPES)
