"""EmbeddingBag and the distances: values from NumPy, gradients by finite differences."""
import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from tests.helpers import check_grad

W = np.random.default_rng(0).standard_normal((6, 3))
IDX = np.array([0, 2, 2, 5, 1, 3])
OFFSETS = np.array([0, 3, 3])  # bags [0, 2, 2], [], [5, 1, 3]


def _bags_reference(reduce, padding_idx=None):
    out = []
    for start, end in [(0, 3), (3, 3), (3, 6)]:
        rows = [W[i] for i in IDX[start:end] if i != padding_idx]
        out.append(reduce(np.array(rows), 0) if rows else np.zeros(3))
    return np.array(out)


@pytest.mark.parametrize("mode,reduce", [("sum", np.sum), ("mean", np.mean), ("max", np.max)])
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding_bag_values_and_gradients(mode, reduce, padding_idx):
    def fn(w):
        return F.embedding_bag(ember.tensor(IDX), w, ember.tensor(OFFSETS), mode=mode,
                               padding_idx=padding_idx)
    np.testing.assert_allclose(fn(ember.tensor(W)).numpy(), _bags_reference(reduce, padding_idx),
                               rtol=1e-12)
    check_grad(fn, W)


def test_embedding_bag_per_sample_weights_gradient():
    def fn(w, psw):
        return F.embedding_bag(ember.tensor(IDX.reshape(2, 3)), w, mode="sum",
                               per_sample_weights=psw)
    psw = np.linspace(0.5, 2.0, 6).reshape(2, 3)
    expected = (W[IDX.reshape(2, 3)] * psw[..., None]).sum(1)
    np.testing.assert_allclose(fn(ember.tensor(W), ember.tensor(psw)).numpy(), expected)
    check_grad(fn, W, psw)


def test_embedding_bag_module_init_and_padding_row():
    ember.manual_seed(0)
    bag = nn.EmbeddingBag(6, 3, mode="max", padding_idx=-1)
    assert bag.padding_idx == 5 and not np.any(bag.weight[5].detach().numpy())
    assert repr(bag) == "EmbeddingBag(6, 3, mode='max', padding_idx=5)"
    out = bag(ember.tensor([[5, 5], [0, 5]]))
    np.testing.assert_allclose(out.detach().numpy(), [[0, 0, 0], bag.weight[0].tolist()])


def test_embedding_bag_errors():
    w = ember.zeros(4, 2)
    with pytest.raises(ValueError, match="offsets has to be a 1D Tensor but got None"):
        F.embedding_bag(ember.tensor([1]), w)
    with pytest.raises(NotImplementedError, match="per_sample_weights is only supported"):
        F.embedding_bag(ember.tensor([[1]]), w, per_sample_weights=ember.ones(1, 1))
    with pytest.raises(RuntimeError, match=r"not in the valid range \[0, 4\)"):
        F.embedding_bag(ember.tensor([[4]]), w)


def test_cosine_similarity_and_gradients():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    expected = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    got = nn.CosineSimilarity()(ember.tensor(a), ember.tensor(b))
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12)
    check_grad(lambda x, y: F.cosine_similarity(x, y, dim=0), a, b[:1])


def test_cosine_similarity_of_zero_vector_is_zero():
    out = F.cosine_similarity(ember.zeros(1, 3), ember.ones(1, 3))
    assert out.tolist() == [0.0]


def test_pairwise_distance_and_pdist():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    got = nn.PairwiseDistance(p=3.0)(ember.tensor(a), ember.tensor(b))
    np.testing.assert_allclose(got.numpy(), (np.abs(a - b + 1e-6) ** 3).sum(1) ** (1 / 3))
    check_grad(lambda x, y: F.pairwise_distance(x, y, keepdim=True), a, b)
    expected = [np.linalg.norm(a[i] - a[j]) for i in range(4) for j in range(i + 1, 4)]
    np.testing.assert_allclose(F.pdist(ember.tensor(a)).numpy(), expected, rtol=1e-12)
    check_grad(lambda x: F.pdist(x, 1.5), a)
    assert tuple(F.pdist(ember.zeros(1, 3)).shape) == (0,)


def test_cdist_values_and_gradients():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 3))
    expected = np.linalg.norm(a[:, :, None] - b[:, None], axis=-1)
    np.testing.assert_allclose(ember.cdist(ember.tensor(a), ember.tensor(b)).numpy(), expected,
                               rtol=1e-12)
    check_grad(lambda x, y: ember.cdist(x, y, p=1.5), a, b)
    with pytest.raises(RuntimeError, match="same number of columns"):
        ember.cdist(ember.zeros(2, 3), ember.zeros(2, 4))
