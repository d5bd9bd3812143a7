"""The losses keep PyTorch's graph: ``loss.grad_fn`` has torch's node name (and, for
cross_entropy, torch's NllLoss-on-LogSoftmax chain) for every reduction, while values, first
derivatives and second derivatives (through ``create_graph``) stay torch's."""
import numpy as np
import pytest
import torch

import ember

REDUCTIONS = ["mean", "sum", "none"]
RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 3))
Y = RNG.standard_normal((4, 3)) * 2  # some |x - y| above 1, some below
P = RNG.uniform(0.05, 0.95, (4, 3))
T = RNG.uniform(0, 1, (4, 3))
W = RNG.uniform(0.5, 1.5, (3,))
LOGITS = RNG.standard_normal((4, 5))
LOGITS_4D = RNG.standard_normal((2, 5, 3, 2))
IDX = np.array([0, 4, 2, 2])
IDX_4D = RNG.integers(0, 5, (2, 3, 2))


def _log_probs(lib, a):
    return a.log_softmax(1)


# name -> (loss(lib, F, tensors, reduction), arrays, which arrays get gradients)
CASES = {
    "mse": (lambda lib, F, a, r: F.mse_loss(a[0], a[1], reduction=r), (X, Y), (True, True)),
    "l1": (lambda lib, F, a, r: F.l1_loss(a[0], a[1], reduction=r), (X, Y), (True, True)),
    "smooth_l1": (lambda lib, F, a, r: F.smooth_l1_loss(a[0], a[1], reduction=r, beta=0.7),
                  (X, Y), (True, True)),
    "smooth_l1_beta0": (lambda lib, F, a, r: F.smooth_l1_loss(a[0], a[1], reduction=r, beta=0.),
                        (X, Y), (True, True)),
    "huber": (lambda lib, F, a, r: F.huber_loss(a[0], a[1], reduction=r, delta=1.3),
              (X, Y), (True, True)),
    "bce": (lambda lib, F, a, r: F.binary_cross_entropy(a[0], a[1], reduction=r), (P, T),
            (True, True)),
    "bce_weight": (lambda lib, F, a, r: F.binary_cross_entropy(
        a[0], a[1], weight=lib.tensor(W, dtype=a[0].dtype), reduction=r), (P, T), (True, False)),
    "bce_logits": (lambda lib, F, a, r: F.binary_cross_entropy_with_logits(
        a[0], a[1], reduction=r), (X, T), (True, True)),
    "bce_logits_weights": (lambda lib, F, a, r: F.binary_cross_entropy_with_logits(
        a[0], a[1], weight=lib.tensor(W, dtype=a[0].dtype),
        pos_weight=lib.tensor(W[::-1].copy(), dtype=a[0].dtype), reduction=r),
        (X, T), (True, True)),
    "kl_div": (lambda lib, F, a, r: F.kl_div(a[0], a[1], reduction=r), (X, T), (True, True)),
    "kl_div_log_target": (lambda lib, F, a, r: F.kl_div(a[0], a[1], reduction=r,
                                                         log_target=True), (X, Y), (True, True)),
    "nll": (lambda lib, F, a, r: F.nll_loss(_log_probs(lib, a[0]), lib.tensor(IDX),
                                            reduction=r), (LOGITS,), (True,)),
    "nll_weight_ignore": (lambda lib, F, a, r: F.nll_loss(
        _log_probs(lib, a[0]), lib.tensor(IDX),
        weight=lib.tensor(np.arange(1., 6.), dtype=a[0].dtype),
        ignore_index=2, reduction=r), (LOGITS,), (True,)),
    "cross_entropy": (lambda lib, F, a, r: F.cross_entropy(a[0], lib.tensor(IDX), reduction=r),
                      (LOGITS,), (True,)),
    "cross_entropy_4d": (lambda lib, F, a, r: F.cross_entropy(
        a[0], lib.tensor(IDX_4D), weight=lib.tensor(np.arange(1., 6.), dtype=a[0].dtype),
        reduction=r),
        (LOGITS_4D,), (True,)),
    "cross_entropy_smoothing": (lambda lib, F, a, r: F.cross_entropy(
        a[0], lib.tensor(IDX), reduction=r, label_smoothing=0.2), (LOGITS,), (True,)),
}


def _names(node, depth):
    out = []
    while node is not None and len(out) < depth:
        out.append(node.name().replace("torch::autograd::", ""))
        nexts = [n for n, _ in node.next_functions if n is not None]
        node = nexts[0] if nexts else None
    return out


def _run(lib, case, reduction, dtype):
    fn, arrays, needs = CASES[case]
    ts = [lib.tensor(a.astype(dtype), requires_grad=n) for a, n in zip(arrays, needs)]
    return fn(lib, lib.nn.functional, ts, reduction), ts


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_node_names_match_torch(case, reduction):
    t_loss, _ = _run(torch, case, reduction, np.float64)
    e_loss, _ = _run(ember, case, reduction, np.float64)
    assert type(e_loss.grad_fn).__name__ == type(t_loss.grad_fn).__name__
    assert e_loss.grad_fn.name() == t_loss.grad_fn.name()
    # the loss node's inputs too: NllLoss on LogSoftmax for cross_entropy, leaves for mse ...
    depth = 3
    if case == "kl_div":  # torch's next node is xlogy, which ember computes with masked_fill
        depth = 1 if reduction == "none" else 2
    if case == "cross_entropy_smoothing":  # tensor * number: torch's MulBackward1, ember's 0
        depth = 1
    assert _names(e_loss.grad_fn, depth) == _names(t_loss.grad_fn, depth)


def _derivatives(lib, case, reduction, dtype):
    """loss, d loss / d inputs with create_graph, and d sum(g**3) / d inputs."""
    loss, ts = _run(lib, case, reduction, dtype)
    req = [t for t in ts if t.requires_grad]
    cot = lib.tensor(COTANGENT[:loss.numel()].reshape(loss.shape).astype(dtype))
    gs = lib.autograd.grad(loss, req, grad_outputs=cot, create_graph=True)
    out = [loss.detach().numpy()] + [g.detach().numpy() for g in gs]
    live = [g for g in gs if g.requires_grad]
    if live:
        second = lib.autograd.grad(sum((g ** 3).sum() for g in live), req, allow_unused=True)
        # force: torch may answer with a ZeroTensor, which plain .numpy() refuses
        out += [np.zeros(t.shape, dtype) if s is None else s.numpy(force=True)
                for s, t in zip(second, req)]
    return out


COTANGENT = RNG.uniform(0.5, 2.0, 64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", list(CASES))
def test_values_and_derivatives_match_torch(case, reduction, dtype):
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-11)
    ours = _derivatives(ember, case, reduction, dtype)
    ref = _derivatives(torch, case, reduction, dtype)
    assert len(ours) == len(ref)
    for k, (a, b) in enumerate(zip(ours, ref)):
        assert a.dtype == b.dtype, k
        np.testing.assert_allclose(a, b, err_msg=f"item {k}", **tol)
