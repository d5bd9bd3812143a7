"""Behaviour tests (no torch) of ember.nn.utils.prune: the reparametrization (``_orig``
parameter, ``_mask`` buffer, forward pre-hook), masks chosen by magnitude and norm, random
methods' counts, iterative pruning composing masks, global pruning, removal, errors."""
import numpy as np
import pytest

import ember
from ember import nn
from ember.nn.utils import prune

W = np.array([[0.5, -3.0, 0.2, 1.5],
              [-0.1, 2.0, -0.7, 0.05],
              [4.0, -0.3, 0.9, -2.5]], dtype=np.float32)


def linear(weight=W):
    layer = nn.Linear(weight.shape[1], weight.shape[0])
    with ember.no_grad():
        layer.weight.copy_(ember.tensor(weight))
    return layer


def mask_of(layer, name="weight"):
    return getattr(layer, name + "_mask").numpy()


def test_reparametrization_and_forward_hook():
    layer = linear()
    prune.l1_unstructured(layer, "weight", amount=4)
    expected = (np.abs(W) > 0.3).astype(np.float32)  # the 4 smallest |w| go
    np.testing.assert_array_equal(mask_of(layer), expected)
    assert [n for n, _ in layer.named_parameters()] == ["bias", "weight_orig"]
    assert [n for n, _ in layer.named_buffers()] == ["weight_mask"]
    assert "weight" not in layer._parameters
    np.testing.assert_array_equal(layer.weight.detach().numpy(), W * expected)
    # the hook recomputes weight from weight_orig before every forward
    with ember.no_grad():
        layer.weight_orig.fill_(1.0)
    out = layer(ember.ones(1, 4))
    np.testing.assert_allclose(out.detach().numpy()[0],
                               expected.sum(1) + layer.bias.detach().numpy(), rtol=1e-6)
    out.sum().backward()
    np.testing.assert_array_equal(layer.weight_orig.grad.numpy(), expected)  # pruned: 0


def test_fraction_is_rounded_and_iterative_pruning_composes():
    layer = linear()
    prune.l1_unstructured(layer, "weight", amount=0.25)  # round(3.0) = 3 of 12
    assert mask_of(layer).sum() == 9
    prune.l1_unstructured(layer, "weight", amount=0.5)  # round(4.5) = 4 of the 9 left
    assert mask_of(layer).sum() == 5
    kept = np.sort(np.abs(W[mask_of(layer) == 1]))
    np.testing.assert_array_equal(kept, np.sort(np.abs(W).ravel())[-5:])
    hooks = list(layer._forward_pre_hooks.values())
    assert len(hooks) == 1 and isinstance(hooks[0], prune.PruningContainer)
    assert [type(m).__name__ for m in hooks[0]] == ["L1Unstructured", "L1Unstructured"]
    prune.ln_structured(layer, "weight", amount=1, n=1, dim=0)
    # row 1 (|w| sum 2.85) goes; the unstructured zeros of the other rows stay
    assert mask_of(layer)[1].sum() == 0 and mask_of(layer).sum() == 4


def test_ln_structured_by_norm_and_dim():
    layer = linear()
    prune.ln_structured(layer, "weight", amount=2, n=2, dim=1)
    norms = np.linalg.norm(W, axis=0)
    keep = np.argsort(norms)[2:]
    expected = np.zeros_like(W)
    expected[:, keep] = 1
    np.testing.assert_array_equal(mask_of(layer), expected)
    layer = linear()
    prune.ln_structured(layer, "weight", amount=0.34, n=float("inf"), dim=-2)  # 1 row
    np.testing.assert_array_equal(mask_of(layer).sum(1), [4, 0, 4])


def test_random_methods_prune_the_right_counts_reproducibly():
    masks = []
    for _ in range(2):
        ember.manual_seed(7)
        layer = prune.random_unstructured(linear(), "weight", amount=5)
        masks.append(mask_of(layer))
    np.testing.assert_array_equal(masks[0], masks[1])
    assert masks[0].sum() == 7
    layer = prune.random_structured(linear(), "weight", amount=2, dim=1)
    col_sums = mask_of(layer).sum(0)
    assert sorted(col_sums.tolist()) == [0, 0, 3, 3]
    prune.random_structured(layer, "weight", amount=1, dim=1)  # one of the 2 left
    assert sorted(mask_of(layer).sum(0).tolist()) == [0, 0, 0, 3]


def test_importance_scores_custom_mask_and_identity():
    layer = linear()
    scores = ember.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    prune.l1_unstructured(layer, "weight", amount=3, importance_scores=scores)
    np.testing.assert_array_equal(mask_of(layer).ravel(), [0] * 3 + [1] * 9)
    prune.custom_from_mask(layer, "bias", ember.tensor([1.0, 0.0, 1.0]))
    assert layer.bias.detach().numpy()[1] == 0
    prune.identity(layer, "bias")
    np.testing.assert_array_equal(mask_of(layer, "bias"), [1, 0, 1])
    assert prune.is_pruned(nn.Sequential(layer))


def test_global_unstructured_ranks_all_tensors_together():
    a, b = linear(), linear(W * 0.1)
    prune.global_unstructured([(a, "weight"), (b, "weight")], prune.L1Unstructured, amount=12)
    # b's entries are ten times smaller: its 12 go... except where a is smaller still
    everything = np.sort(np.abs(np.concatenate([W.ravel(), 0.1 * W.ravel()])))
    threshold = everything[11]
    np.testing.assert_array_equal(mask_of(a), (np.abs(W) > threshold).astype(np.float32))
    np.testing.assert_array_equal(mask_of(b), (np.abs(0.1 * W) > threshold).astype(np.float32))
    assert mask_of(a).sum() + mask_of(b).sum() == 12
    hook = next(iter(a._forward_pre_hooks.values()))
    assert isinstance(hook, prune.CustomFromMask)


def test_remove_makes_the_pruning_permanent_and_state_dict_round_trips():
    layer = prune.l1_unstructured(linear(), "weight", amount=6)
    sd = layer.state_dict()
    assert list(sd) == ["bias", "weight_orig", "weight_mask"]
    other = prune.identity(linear(np.zeros_like(W)), "weight")
    other.load_state_dict(sd)
    np.testing.assert_array_equal(other(ember.ones(1, 4)).detach().numpy(),
                                  layer(ember.ones(1, 4)).detach().numpy())
    prune.remove(layer, "weight")
    assert isinstance(layer.weight, nn.Parameter) and layer.weight.requires_grad
    assert (layer.weight.detach().numpy() == 0).sum() == 6
    assert list(layer.state_dict()) == ["bias", "weight"]
    assert not prune.is_pruned(layer)


def test_prune_method_on_a_plain_tensor():
    t = ember.tensor([3.0, -1.0, 2.0, 0.5])
    np.testing.assert_array_equal(prune.L1Unstructured(amount=2).prune(t).numpy(),
                                  [3.0, 0.0, 2.0, 0.0])


@pytest.mark.parametrize("call,error,match", [
    (lambda m: prune.l1_unstructured(m, "weight", amount=1.2), ValueError,
     r"amount=1.2 should either be a float in the range \[0, 1\] or a non-negative integer"),
    (lambda m: prune.l1_unstructured(m, "weight", amount=-2), ValueError, "amount=-2"),
    (lambda m: prune.l1_unstructured(m, "weight", amount="1"), TypeError,
     "Invalid type for amount: 1. Must be int or float."),
    (lambda m: prune.l1_unstructured(m, "weight", amount=13), ValueError,
     "amount=13 should be smaller than the number of parameters to prune=12"),
    (lambda m: prune.ln_structured(m, "bias", amount=1, n=2, dim=0), ValueError,
     "Structured pruning can only be applied to multidimensional tensors"),
    (lambda m: prune.random_structured(m, "weight", amount=1, dim=2), IndexError,
     "Invalid index 2 for tensor of size"),
    (lambda m: prune.remove(m, "weight"), ValueError,
     "Parameter 'weight' of module .* has to be pruned before pruning can be removed"),
    (lambda m: prune.global_unstructured([(m, "weight")], prune.LnStructured, amount=1, n=1),
     TypeError, 'Only "unstructured" PRUNING_TYPE supported'),
    (lambda m: prune.global_unstructured(3, prune.L1Unstructured, amount=1), TypeError,
     "parameters is not an Iterable"),
])
def test_errors(call, error, match):
    layer = linear()
    with pytest.raises(error, match=match):
        call(layer)
    assert "weight" in layer._parameters and "weight_orig" not in layer._parameters  # rolled back
