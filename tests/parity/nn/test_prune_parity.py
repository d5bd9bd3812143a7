"""ember.nn.utils.prune vs torch.nn.utils.prune on the same random weights (no ties): the
masks of magnitude and norm pruning, alone and composed, global pruning with importance
scores, custom masks; the pruned forward and its gradients; state_dict layouts; remove;
errors with torch's types and wording. ember's modules live on EMBER_PARITY_DEVICE."""
import numpy as np
import pytest
import torch
import torch.nn.utils.prune as tprune

import ember
import ember.nn.utils.prune as eprune
from tests.parity.compare import DEVICE

PRUNE = {torch: tprune, ember: eprune}
R = np.random.default_rng(11)
CONV_W = R.standard_normal((4, 3, 2, 2)).astype(np.float32)
CONV_B = R.standard_normal(4).astype(np.float32)
LIN_W = R.standard_normal((5, 6)).astype(np.float32)
LIN_B = R.standard_normal(5).astype(np.float32)
X_CONV = R.standard_normal((2, 3, 4, 4)).astype(np.float32)


def _to(lib, module):
    return module.to(DEVICE) if lib is ember and DEVICE is not None else module


def dev(lib, array):
    """A tensor of ``array`` where ``lib``'s modules live."""
    return lib.tensor(array, device=DEVICE if lib is ember else None)


def make(lib):
    """A conv and a linear layer holding the fixed random weights."""
    conv, lin = lib.nn.Conv2d(3, 4, 2), lib.nn.Linear(6, 5)
    with lib.no_grad():
        for p, v in ((conv.weight, CONV_W), (conv.bias, CONV_B), (lin.weight, LIN_W),
                     (lin.bias, LIN_B)):
            p.copy_(lib.tensor(v))
    return _to(lib, conv), _to(lib, lin)


def host(t):
    return t.detach().cpu().numpy() if isinstance(t, ember.Tensor) else t.detach().numpy()


def both(steps):
    """``steps(lib, prune, conv, lin)`` on each library; returns the modules."""
    out = {}
    for lib in (torch, ember):
        conv, lin = make(lib)
        steps(lib, PRUNE[lib], conv, lin)
        out[lib] = (conv, lin)
    return out


def assert_same_modules(out):
    for t, e in zip(out[torch], out[ember]):
        tsd, esd = t.state_dict(), e.state_dict()
        assert list(esd) == list(tsd)
        for k in tsd:
            np.testing.assert_allclose(host(esd[k]), host(tsd[k]), rtol=1e-6, atol=1e-7,
                                       err_msg=k)
        assert [type(h).__name__ for h in e._forward_pre_hooks.values()] == \
            [type(h).__name__ for h in t._forward_pre_hooks.values()]
        assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]


STEPS = {
    "l1-int": lambda lib, P, c, li: P.l1_unstructured(c, "weight", amount=17),
    "l1-float": lambda lib, P, c, li: P.l1_unstructured(li, "weight", amount=0.45),
    "l1-zero": lambda lib, P, c, li: P.l1_unstructured(li, "bias", amount=0),
    "l1-all": lambda lib, P, c, li: P.l1_unstructured(li, "bias", amount=1.0),
    "ln2-dim0": lambda lib, P, c, li: P.ln_structured(c, "weight", amount=2, n=2, dim=0),
    "ln1-dim1": lambda lib, P, c, li: P.ln_structured(c, "weight", amount=0.34, n=1, dim=1),
    "lninf-last": lambda lib, P, c, li: P.ln_structured(li, "weight", amount=3, n=float("inf"),
                                                       dim=-1),
    "ln-neginf": lambda lib, P, c, li: P.ln_structured(c, "weight", amount=1,
                                                      n=float("-inf"), dim=-3),
    "lnfro": lambda lib, P, c, li: P.ln_structured(li, "weight", amount=2, n="fro", dim=0),
    "identity": lambda lib, P, c, li: P.identity(c, "bias"),
    "custom": lambda lib, P, c, li: P.custom_from_mask(
        li, "weight", dev(lib, (LIN_W > 0).astype(np.float32))),
    "scores": lambda lib, P, c, li: P.l1_unstructured(
        c, "weight", amount=10, importance_scores=dev(lib, -CONV_W ** 3)),
    "ln-scores": lambda lib, P, c, li: P.ln_structured(
        li, "weight", amount=2, n=2, dim=0, importance_scores=dev(lib, LIN_W[::-1].copy())),
    "class-apply": lambda lib, P, c, li: P.L1Unstructured.apply(c, "weight", 5),
}


@pytest.mark.parametrize("name", list(STEPS))
def test_single_pruning_matches_torch(name):
    assert_same_modules(both(STEPS[name]))


def iterative(lib, P, conv, lin):
    P.l1_unstructured(conv, "weight", amount=0.3)
    P.ln_structured(conv, "weight", amount=1, n=2, dim=0)
    P.l1_unstructured(conv, "weight", amount=5)
    P.ln_structured(conv, "weight", amount=0.5, n=1, dim=1)
    P.custom_from_mask(conv, "weight", dev(lib, (CONV_W > -1).astype(np.float32)))
    P.ln_structured(lin, "weight", amount=2, n=1, dim=1)
    P.l1_unstructured(lin, "weight", amount=0.4)
    P.identity(lin, "weight")


def test_iterative_pruning_composes_as_torch():
    out = both(iterative)
    assert_same_modules(out)
    for lib in (torch, ember):
        container = next(iter(out[lib][0]._forward_pre_hooks.values()))
        assert len(container) == 5
    assert [type(m).__name__ for m in next(iter(out[ember][0]._forward_pre_hooks.values()))] \
        == [type(m).__name__ for m in next(iter(out[torch][0]._forward_pre_hooks.values()))]


def test_pruned_forward_and_gradients_match_torch():
    grads = {}
    for lib in (torch, ember):
        conv, lin = make(lib)
        iterative(lib, PRUNE[lib], conv, lin)
        x = dev(lib, X_CONV)
        y = conv(x)
        z = lin(y.reshape(2, -1)[:, :6])
        (z ** 2).sum().backward()
        grads[lib] = [host(t) for t in (z, conv.weight_orig.grad, conv.bias.grad,
                                        lin.weight_orig.grad)]
    for e, t in zip(grads[ember], grads[torch]):
        np.testing.assert_allclose(e, t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scores", [False, True])
def test_global_unstructured_matches_torch(scores):
    def steps(lib, P, conv, lin):
        P.l1_unstructured(lin, "weight", amount=4)  # an existing mask is respected
        params = [(conv, "weight"), (lin, "weight"), (lin, "bias")]
        imp = {(conv, "weight"): dev(lib, np.abs(CONV_W) * 0.5)} if scores else None
        P.global_unstructured(params, pruning_method=P.L1Unstructured, importance_scores=imp,
                              amount=0.3)
    out = both(steps)
    assert_same_modules(out)


def test_remove_matches_torch():
    def steps(lib, P, conv, lin):
        iterative(lib, P, conv, lin)
        P.remove(conv, "weight")
        P.remove(lin, "weight")
    out = both(steps)
    assert_same_modules(out)
    for lib in (torch, ember):
        assert not PRUNE[lib].is_pruned(lib.nn.Sequential(*out[lib]))
        assert isinstance(out[lib][0].weight, lib.nn.Parameter)


def test_prune_method_matches_torch():
    t = tprune.LnStructured(amount=1, n=2, dim=0).prune(torch.tensor(LIN_W))
    e = eprune.LnStructured(amount=1, n=2, dim=0).prune(ember.tensor(LIN_W))
    np.testing.assert_array_equal(host(e), host(t))


ERRORS = [
    lambda lib, P, c, li: P.l1_unstructured(c, "weight", amount=1.5),
    lambda lib, P, c, li: P.l1_unstructured(c, "weight", amount=-3),
    lambda lib, P, c, li: P.random_unstructured(c, "weight", amount=None),
    lambda lib, P, c, li: P.l1_unstructured(li, "bias", amount=6),
    lambda lib, P, c, li: P.ln_structured(li, "weight", amount=0.2, n=2, dim=2),
    lambda lib, P, c, li: P.ln_structured(li, "bias", amount=1, n=2, dim=0),
    lambda lib, P, c, li: P.random_structured(c, "weight", amount=5, dim=0),
    lambda lib, P, c, li: P.remove(li, "weight"),
    lambda lib, P, c, li: P.global_unstructured([(li, "weight")], P.RandomStructured, amount=1),
    lambda lib, P, c, li: P.global_unstructured(7, P.L1Unstructured, amount=1),
    lambda lib, P, c, li: P.global_unstructured([(li, "weight")], P.L1Unstructured,
                                               importance_scores=[1], amount=1),
    lambda lib, P, c, li: P.l1_unstructured(li, "weight", amount=1,
                                           importance_scores=lib.ones(2, 2)),
    lambda lib, P, c, li: P.PruningContainer(P.Identity(), 3),
    lambda lib, P, c, li: P.PruningContainer().add_pruning_method(3),
]


@pytest.mark.parametrize("make_error", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_torch(make_error):
    out = []
    for lib in (torch, ember):
        conv, lin = make(lib)
        with pytest.raises(Exception) as info:
            make_error(lib, PRUNE[lib], conv, lin)
        message = str(info.value).replace("torch.nn.utils.prune", "P").replace(
            "ember.nn.utils.prune", "P").replace("torch.", "ember.")
        # a failed first pruning puts the parameter back (at the end of the registry)
        out.append((type(info.value).__name__, message,
                    [n for n, _ in lin.named_parameters()], list(lin._buffers)))
    assert out[1] == out[0]


def test_random_methods_on_the_parity_device():
    """Random draws cannot match PyTorch's; counts can, with the masks where the module is."""
    counts = {}
    for lib in (torch, ember):
        conv, lin = make(lib)
        P = PRUNE[lib]
        P.random_unstructured(lin, "weight", amount=0.4)
        P.random_structured(conv, "weight", amount=2, dim=0)
        P.random_structured(conv, "weight", amount=1, dim=1)
        P.random_unstructured(conv, "weight", amount=7)
        if lib is ember:
            assert conv.weight_mask.device.type == (DEVICE or "cpu")
        conv_mask = host(conv.weight_mask)
        counts[lib] = (int(host(lin.weight_mask).sum()),
                       int((conv_mask.sum((1, 2, 3)) == 0).sum()),
                       int((conv_mask.sum((0, 2, 3)) == 0).sum()), int(conv_mask.sum()))
    assert counts[ember] == counts[torch]
